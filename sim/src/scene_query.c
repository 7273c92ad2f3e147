// keel: the scene's queries: sweeps, contacts and rays against the world,
// the platforms and the character snapshot (the collider of a view), and
// sim_scene_raycast against the characters as they are now. MIT licence.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "world_near.h"
#include "scene_bodies.h"

typedef struct sweep_best {
    bool has;
    sim_sweep_result r;
    uint32_t sub; // which triangle of a platform: ties inside one object id
} sweep_best;

// Strict order of sweep results: earlier (fraction, then the exact progress
// along the motion, which the fraction may round away), a real overlap before
// a touch, then face, edge, vertex, then feature id and index, then the
// triangle within an object.
static bool result_before(const sim_sweep_result *a, uint32_t asub, const sim_sweep_result *b, uint32_t bsub,
                          sim_vec3 start, sim_vec3 d)
{
    if (a->fraction != b->fraction)
        return a->fraction < b->fraction;
    int64_t pa = sim_v3_dot64(sim_v3_sub(a->position, start), d);
    int64_t pb = sim_v3_dot64(sim_v3_sub(b->position, start), d);
    if (pa != pb)
        return pa < pb;
    if (a->start_overlap != b->start_overlap)
        return a->start_overlap;
    if (a->feature.type != b->feature.type)
        return a->feature.type < b->feature.type;
    if (a->feature.triangle != b->feature.triangle)
        return a->feature.triangle < b->feature.triangle;
    if (a->feature.index != b->feature.index)
        return a->feature.index < b->feature.index;
    return asub < bsub;
}

static void offer(sweep_best *best, const sim_sweep_ray *ray, const sim_tri_hit *h, uint32_t sub)
{
    sim_sweep_result r = {0};
    sim_fx s = h->s < 0 ? 0 : (h->s > ray->length ? ray->length : h->s);
    r.hit = true;
    r.start_overlap = h->start_overlap;
    r.fraction = (sim_fx)(((int64_t)s << 16) / ray->length);
    r.position = sim_v3_add(ray->start, sim_dir_scale(ray->dir, s));
    r.normal = h->normal;
    r.point = h->point;
    r.feature = h->feature;
    if (!best->has || result_before(&r, sub, &best->r, best->sub, ray->start, ray->displacement)) {
        best->r = r;
        best->sub = sub;
        best->has = true;
    }
}

// A sweep without motion: only a real overlap counts, as for the world alone.
SCENE_COLD static bool sweep_still(scene_view *v, const sim_sweep_input *in, sim_sweep_result *out)
{
    *out = (sim_sweep_result){0};
    out->fraction = SIM_FX_ONE;
    out->position = in->start;
    sim_overlap_input oi = {in->shape, in->start, 0};
    sim_contact ct;
    scene_view level = *v;
    if (in->flags & SIM_SWEEP_LEVEL_ONLY)
        level.characters = false;
    if (scene_view_contacts(&level, &oi, &ct, 1) > 0 && ct.depth > SIM_QUERY_TOLERANCE) {
        out->hit = true;
        out->start_overlap = true;
        out->fraction = 0;
        out->normal = ct.normal;
        out->point = ct.point;
        out->feature = ct.feature;
    }
    return out->hit;
}

// The next platform from *at on (and *at past it) whose bounds touch box,
// the one the view skips left out; NULL when there is none.
static const scene_platform *next_platform(const scene_view *v, sim_aabb box, uint32_t *at)
{
    const sim_scene *sc = v->scene;
    while (*at < sc->platform_count) {
        const scene_platform *p = &sc->platforms[(*at)++];
        if (p->def.id != v->skip_platform && sim_aabb_overlaps(box, p->bounds))
            return p;
    }
    return NULL;
}

// The platforms' part of a sweep (out of line: most scenes have none).
SCENE_COLD static void sweep_platforms(const scene_view *v, const sim_sweep_ray *ray, sim_aabb box, sweep_best *best)
{
    uint32_t at = 0;
    const scene_platform *p;
    while ((p = next_platform(v, box, &at)) != NULL) {
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (sim_sweep_shape_tri(ray, &p->tris[k], &h))
                offer(best, ray, &h, k + 1);
        }
    }
}

bool scene_view_sweep(void *ctx, const sim_sweep_input *in, sim_sweep_result *out)
{
    scene_view *v = ctx;
    sim_scene *sc = v->scene;
    sim_vec3 d = sim_query_clamp_displacement(in->displacement);
    if (!sim_query_accepts_shape_at(in->shape, in->start) || !sim_v3_in_world(sim_v3_add(in->start, d)))
        return sim_world_sweep(sc->world, in, out); // refused the same way
    sim_sweep_ray ray = sim_sweep_ray_make(in->shape, in->start, d);
    if (ray.length == 0)
        return sweep_still(v, in, out);
    sweep_best best = {0};
    sim_sweep_result wr;
    if (sim_near_sweep_ray(sc->world, v->near, &ray, &wr)) { // the world's sweep, the same ray
        best.has = true;
        best.r = wr;
    }
    sim_fx g = ray.inflate + 2;
    sim_aabb box =
        sim_aabb_union(sim_shape_bounds(in->shape, in->start), sim_shape_bounds(in->shape, sim_v3_add(in->start, d)));
    box = sim_aabb_expand(box, sim_v3(g, g, g));
    if (sc->platform_count)
        sweep_platforms(v, &ray, box, &best);
    if (v->characters && !(in->flags & SIM_SWEEP_LEVEL_ONLY)) {
        body_cursor cur = bodies_in(v, box);
        uint32_t j;
        while (next_body(v, box, &cur, &j)) {
            sim_obstacle ob = obstacle(v, j, cursor_shrink(&cur));
            sim_tri_hit h;
            if (sim_sweep_shape_obstacle(&ray, &ob, &h))
                offer(&best, &ray, &h, 0);
        }
    }
    if (!best.has) {
        *out = (sim_sweep_result){0};
        out->fraction = SIM_FX_ONE;
        out->position = sim_v3_add(in->start, d);
        return false;
    }
    *out = best.r;
    return true;
}

typedef struct contact_list {
    sim_contact *out;
    int capacity;
    int stored;
    int count;
} contact_list;

// Sorted insertion into the bounded array: the best `capacity` of everything
// offered, whatever order it comes in. Equal keys keep their arrival order,
// which is fixed (platforms by id, their triangles in order).
static void add_contact(contact_list *l, const sim_tri_hit *h)
{
    sim_contact ct = {h->normal, h->s, h->point, h->feature};
    l->count++;
    if (l->capacity <= 0)
        return;
    int n = l->stored;
    if (n == l->capacity && !sim_contact_before(&ct, &l->out[n - 1]))
        return;
    int i = n == l->capacity ? n - 1 : n;
    while (i > 0 && sim_contact_before(&ct, &l->out[i - 1])) {
        l->out[i] = l->out[i - 1];
        i--;
    }
    l->out[i] = ct;
    if (n < l->capacity)
        l->stored = n + 1;
}

// The platforms' part of a contact query (out of line: most scenes have none).
SCENE_COLD static void contacts_platforms(const scene_view *v, const sim_overlap_input *in, sim_fx margin, sim_aabb box,
                                          contact_list *l)
{
    uint32_t at = 0;
    const scene_platform *p;
    while ((p = next_platform(v, box, &at)) != NULL) {
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (sim_contact_shape_tri(in->shape, in->position, &p->tris[k], margin, &h))
                add_contact(l, &h);
        }
    }
}

int scene_view_contacts(void *ctx, const sim_overlap_input *in, sim_contact *out, int capacity)
{
    scene_view *v = ctx;
    sim_scene *sc = v->scene;
    if (!sim_query_accepts_shape_at(in->shape, in->position))
        return 0; // refused, as by the world
    int nw = sim_near_contacts(sc->world, v->near, in, out, capacity);
    contact_list l = {out, capacity, nw < capacity ? nw : (capacity > 0 ? capacity : 0), nw};
    sim_fx margin = sim_query_clamp_margin(in->margin);
    sim_fx g = margin + SIM_QUERY_TOLERANCE;
    sim_aabb box = sim_aabb_expand(sim_shape_bounds(in->shape, in->position), sim_v3(g, g, g));
    if (sc->platform_count)
        contacts_platforms(v, in, margin, box, &l);
    if (v->characters) {
        body_cursor cur = bodies_in(v, box);
        uint32_t j;
        while (next_body(v, box, &cur, &j)) {
            sim_obstacle ob = obstacle(v, j, cursor_shrink(&cur));
            sim_tri_hit h;
            if (sim_contact_shape_obstacle(in->shape, in->position, &ob, margin, &h))
                add_contact(&l, &h);
        }
    }
    return l.count;
}

// A ray as the scene's queries take it: its displacement clamped, its unit
// direction and length, and the box around it grown by 2 units (what a
// platform or a character must overlap to be tested).
typedef struct ray_span {
    sim_vec3 d;
    sim_dir dir;
    sim_fx length;
    sim_aabb box;
} ray_span;

// False when the world refuses the ray (an end outside the world).
static bool ray_span_of(const sim_ray_input *in, ray_span *r)
{
    r->d = sim_query_clamp_displacement(in->displacement);
    if (!sim_v3_in_world(in->origin))
        return false; // first: the sum below is only in range from a point in the world
    sim_vec3 end = sim_v3_add(in->origin, r->d);
    if (!sim_v3_in_world(end))
        return false;
    r->dir = sim_dir_from_v3(r->d);
    r->length = sim_v3_length(r->d);
    r->box = sim_aabb_expand(sim_aabb_union(sim_aabb_of_point(in->origin), sim_aabb_of_point(end)), sim_v3(2, 2, 2));
    return true;
}

// Keep r in *best when it comes before it in the sweep order (the hit point
// standing for the position); true when taken.
static bool ray_offer(sim_ray_result *best, bool *has, uint32_t *best_sub, const sim_ray_result *r, uint32_t sub,
                      sim_vec3 origin, sim_vec3 d)
{
    if (*has) {
        sim_sweep_result a = {true, false, r->fraction, r->point, r->normal, r->point, r->feature};
        sim_sweep_result b = {true, false, best->fraction, best->point, best->normal, best->point, best->feature};
        if (!result_before(&a, sub, &b, *best_sub, origin, d))
            return false;
    }
    *best = *r;
    *best_sub = sub;
    *has = true;
    return true;
}

static sim_ray_result ray_result(const sim_tri_hit *h, sim_fx length, sim_feature feature)
{
    sim_ray_result r = {0};
    r.hit = true;
    r.fraction = (sim_fx)(((int64_t)h->s << 16) / length);
    r.point = h->point;
    r.normal = h->normal;
    r.feature = feature;
    return r;
}

bool scene_view_raycast(void *ctx, const sim_ray_input *in, sim_ray_result *out)
{
    scene_view *v = ctx;
    sim_scene *sc = v->scene;
    bool has = sim_near_raycast(sc->world, v->near, in, out);
    uint32_t best_sub = 0;
    ray_span ray;
    if (!ray_span_of(in, &ray))
        return false; // refused, as by the world
    if (ray.length == 0)
        return has;
    for (uint32_t i = 0; i < sc->platform_count; i++) {
        const scene_platform *p = &sc->platforms[i];
        if (p->def.id == v->skip_platform || !sim_aabb_overlaps(ray.box, p->bounds))
            continue;
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (!sim_ray_tri(in->origin, ray.dir, ray.length, &p->tris[k], &h))
                continue;
            sim_ray_result r = ray_result(&h, ray.length, h.feature);
            ray_offer(out, &has, &best_sub, &r, k + 1, in->origin, ray.d);
        }
    }
    return has;
}

bool sim_scene_raycast(const sim_scene *sc, const sim_ray_input *in, uint32_t ignore_id, sim_ray_result *out,
                       uint32_t *hit_character_id)
{
    uint32_t hit_id = 0;
    if (hit_character_id)
        *hit_character_id = 0;
    bool has = sim_world_raycast(sc->world, in, out);
    ray_span ray;
    if (!ray_span_of(in, &ray))
        return false; // refused, as by the world
    if (ray.length == 0)
        return has;
    uint32_t best_sub = 0;
    // Platforms where they are at the scene's tick, built here: the query
    // changes nothing (the step's copies may be a tick ahead).
    for (uint32_t i = 0; i < sc->platform_count; i++) {
        scene_platform p;
        p.def = sc->platforms[i].def;
        sim_vec3 c = sim_platform_position(&p.def, sc->tick);
        if (!sim_aabb_overlaps(ray.box, (sim_aabb){sim_v3_sub(c, p.def.half), sim_v3_add(c, p.def.half)}))
            continue;
        scene_platform_build(&p, c);
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (!sim_ray_tri(in->origin, ray.dir, ray.length, &p.tris[k], &h))
                continue;
            sim_ray_result r = ray_result(&h, ray.length, h.feature);
            ray_offer(out, &has, &best_sub, &r, k + 1, in->origin, ray.d);
        }
    }
    // The characters as they are now (not a step's snapshot), in id order.
    const sim_move_settings *s = &sc->settings;
    const sim_fx g = SIM_QUERY_TOLERANCE;
    for (uint32_t i = 0; i < sc->count; i++) {
        const sim_char_state *c = &sc->chars[i];
        if (c->id == ignore_id || c->move_type == SIM_MOVE_FLY || scene_out(sc, i))
            continue;
        sim_shape shape = sim_char_shape(s, c);
        sim_vec3 center = sim_char_center(s, c);
        if (!sim_aabb_overlaps(ray.box, sim_aabb_expand(sim_shape_bounds(shape, center), sim_v3(g, g, g))))
            continue;
        sim_tri_hit h;
        if (!sim_ray_shape(in->origin, ray.dir, ray.length, shape, center, g, &h))
            continue;
        sim_ray_result r =
            ray_result(&h, ray.length, (sim_feature){SIM_FEATURE_OBJECT_BIT | c->id, SIM_FEATURE_FACE, 0});
        if (ray_offer(out, &has, &best_sub, &r, 0, in->origin, ray.d))
            hit_id = c->id;
    }
    if (hit_character_id)
        *hit_character_id = hit_id;
    return has;
}

static bool view_in_water(void *ctx, sim_vec3 p)
{
    const scene_view *v = ctx;
    const sim_scene *sc = v->scene;
    for (uint32_t i = 0; i < sc->water_count; i++) {
        sim_aabb w = sc->water[i];
        if (p.x >= w.min.x && p.x <= w.max.x && p.y >= w.min.y && p.y <= w.max.y && p.z >= w.min.z && p.z <= w.max.z)
            return true;
    }
    return false;
}

sim_collider scene_view_collider(scene_view *v)
{
    sim_collider c = {v, scene_view_sweep, scene_view_contacts, scene_view_raycast, view_in_water};
    return c;
}
