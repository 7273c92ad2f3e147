// keel: world queries: broad phase plus the narrow phase per triangle.
// MIT licence, see LICENSE.
//
// The answer never depends on the order in which the hierarchy hands out
// triangles: the sweep and the ray keep the earliest hit under a strict total
// order (sim_tri_hit_before), and contacts are kept sorted by depth, then by
// feature, in the caller's array.
#include "world_internal.h"

typedef struct sweep_ctx {
    const sim_sweep_ray *ray;
    bool has;
    sim_tri_hit best;
} sweep_ctx;

static inline void sweep_one(sweep_ctx *c, const sim_tri *t)
{
    sim_tri_hit h;
    bool hit = sim_sweep_shape_tri(c->ray, t, &h);
    if (hit && (!c->has || sim_tri_hit_before(&h, &c->best))) {
        c->best = h;
        c->has = true;
    }
}

static bool sweep_visit(void *ctx, const sim_tri *t)
{
    sweep_one(ctx, t);
    return true;
}

bool sim_world_sweep(const sim_world *world, const sim_sweep_input *in, sim_sweep_result *out)
{
    return sim_near_sweep(world, NULL, in, out);
}

bool sim_near_sweep(const sim_world *world, const sim_near *near, const sim_sweep_input *in, sim_sweep_result *out)
{
    *out = (sim_sweep_result){0};
    out->fraction = SIM_FX_ONE;
    if (!sim_query_accepts_shape_at(in->shape, in->start)) {
        out->fraction = 0; // refused: no hit and no motion
        out->position = in->start;
        return false;
    }
    sim_vec3 d = sim_query_clamp_displacement(in->displacement);
    if (!sim_v3_in_world(sim_v3_add(in->start, d))) {
        out->fraction = 0;
        out->position = in->start;
        return false;
    }
    out->position = sim_v3_add(in->start, d);
    sim_sweep_ray ray = sim_sweep_ray_make(in->shape, in->start, d);
    if (ray.length == 0) {
        // No motion: only a real overlap is worth reporting.
        sim_overlap_input oi = {in->shape, in->start, 0};
        sim_contact ct;
        if (sim_near_contacts(world, near, &oi, &ct, 1) > 0 && ct.depth > SIM_QUERY_TOLERANCE) {
            out->hit = true;
            out->start_overlap = true;
            out->fraction = 0;
            out->position = in->start;
            out->normal = ct.normal;
            out->point = ct.point;
            out->feature = ct.feature;
        }
        return out->hit;
    }
    return sim_near_sweep_ray(world, near, &ray, out);
}

bool sim_near_sweep_ray(const sim_world *world, const sim_near *near, const sim_sweep_ray *ray, sim_sweep_result *out)
{
    *out = (sim_sweep_result){0};
    out->fraction = SIM_FX_ONE;
    out->position = sim_v3_add(ray->start, ray->displacement);
    sweep_ctx c = {0};
    c.ray = ray;
    sim_fx g = ray->inflate + 2;
    sim_vec3 grow = sim_v3_add(ray->shape.half, sim_v3(g, g, g));
    uint32_t list[SIM_NEAR_CAPACITY], n;
    if (sim_near_segment_tris(world, near, ray->start, ray->displacement, grow, list, &n))
        c.has = sim_sweep_shape_tris(ray, world->tris, list, n, &c.best);
    else
        sim_bvh_query_segment(world, ray->start, ray->displacement, grow, sweep_visit, &c);
    if (!c.has)
        return false;
    out->hit = true;
    out->start_overlap = c.best.start_overlap;
    sim_fx s = c.best.s < 0 ? 0 : c.best.s;
    if (s > ray->length)
        s = ray->length;
    out->fraction = (sim_fx)(((int64_t)s << 16) / ray->length);
    out->position = sim_v3_add(ray->start, sim_dir_scale(ray->dir, s));
    out->normal = c.best.normal;
    out->point = c.best.point;
    out->feature = c.best.feature;
    return true;
}

// ---- contacts ---------------------------------------------------------------

typedef struct contact_ctx {
    sim_overlap_input in;
    sim_contact *out;
    int capacity;
    int count;
} contact_ctx;

static bool contact_visit(void *ctx, const sim_tri *t)
{
    contact_ctx *c = ctx;
    sim_tri_hit h;
    bool hit = sim_contact_shape_tri(c->in.shape, c->in.position, t, c->in.margin, &h);
    if (!hit)
        return true;
    sim_contact ct = {h.normal, h.s, h.point, h.feature};
    c->count++;
    if (c->capacity <= 0)
        return true;
    // Sorted insertion into the bounded array keeps the best `capacity`
    // contacts whatever order they arrive in.
    int n = c->count - 1 < c->capacity ? c->count - 1 : c->capacity;
    if (n == c->capacity && !sim_contact_before(&ct, &c->out[n - 1]))
        return true;
    int i = n == c->capacity ? n - 1 : n;
    while (i > 0 && sim_contact_before(&ct, &c->out[i - 1])) {
        c->out[i] = c->out[i - 1];
        i--;
    }
    c->out[i] = ct;
    return true;
}

int sim_world_contacts(const sim_world *world, const sim_overlap_input *in, sim_contact *contacts, int capacity)
{
    return sim_near_contacts(world, NULL, in, contacts, capacity);
}

int sim_near_contacts(const sim_world *world, const sim_near *near, const sim_overlap_input *in, sim_contact *contacts,
                      int capacity)
{
    contact_ctx c = {*in, contacts, capacity, 0};
    if (!sim_query_accepts_shape_at(in->shape, in->position))
        return 0; // refused
    c.in.margin = sim_query_clamp_margin(c.in.margin);
    sim_fx g = c.in.margin + SIM_QUERY_TOLERANCE;
    sim_aabb box = sim_aabb_expand(sim_shape_bounds(in->shape, in->position), sim_v3(g, g, g));
    sim_near_query_box(world, near, box, contact_visit, &c);
    return c.count;
}

// ---- ray ----------------------------------------------------------------------

typedef struct ray_ctx {
    sim_vec3 origin;
    sim_dir dir;
    sim_fx length;
    bool has;
    sim_tri_hit best;
} ray_ctx;

static bool ray_visit(void *ctx, const sim_tri *t)
{
    ray_ctx *c = ctx;
    sim_tri_hit h;
    if (sim_ray_tri(c->origin, c->dir, c->length, t, &h) && (!c->has || sim_tri_hit_before(&h, &c->best))) {
        c->best = h;
        c->has = true;
    }
    return true;
}

bool sim_world_raycast(const sim_world *world, const sim_ray_input *in, sim_ray_result *out)
{
    return sim_near_raycast(world, NULL, in, out);
}

bool sim_near_raycast(const sim_world *world, const sim_near *near, const sim_ray_input *in, sim_ray_result *out)
{
    *out = (sim_ray_result){0};
    out->fraction = SIM_FX_ONE;
    sim_vec3 d = sim_query_clamp_displacement(in->displacement);
    if (!sim_v3_in_world(in->origin) || !sim_v3_in_world(sim_v3_add(in->origin, d))) {
        out->fraction = 0; // refused
        return false;
    }
    ray_ctx c = {in->origin, sim_dir_from_v3(d), sim_v3_length(d), false, {0}};
    if (c.length == 0)
        return false;
    sim_near_query_segment(world, near, in->origin, d, sim_v3(2, 2, 2), ray_visit, &c);
    if (!c.has)
        return false;
    out->hit = true;
    out->fraction = (sim_fx)(((int64_t)c.best.s << 16) / c.length);
    out->point = c.best.point;
    out->normal = c.best.normal;
    out->feature = c.best.feature;
    return true;
}
