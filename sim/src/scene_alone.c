// keel: the view of a move that has no other character and no platform near
// it: the world's own queries. MIT licence, see LICENSE.
//
// Most characters of a crowd have nobody within their step box (the box its
// queries are expected in, sim_near_step_box). For such a move the view's
// answer to a query whose box lies inside the step box is the world's
// answer alone: a body or a platform the view would add has bounds that
// overlap the query's box, so they would overlap the step box too. Those
// queries go straight to the neighbourhood's world queries (world_near.h),
// the code a move against the world alone runs, so the move runs through no
// more code than that one; any other query (rare: the step box is made to
// hold a step's queries) goes to the full view (scene_query.c), which answers it
// right wherever it is. Same answers, to the bit, either way.
//
// Whether a character is alone is decided from the snapshot and the
// platforms of the tick, which no move writes, and its own state, which only
// its own move writes (after the decision): scene_move.c decides it for a run of
// characters before their moves.
#include "scene_internal.h"

static bool alone_sweep(void *ctx, const sim_sweep_input *in, sim_sweep_result *out)
{
    const scene_view *v = ctx;
    const sim_near *near = v->near;
    sim_vec3 d = sim_query_clamp_displacement(in->displacement);
    // A refused query, or one without motion, is answered the same way by
    // the world's own sweep (which makes no ray then).
    if (!sim_query_accepts_shape_at(in->shape, in->start) || !sim_v3_in_world(sim_v3_add(in->start, d)) ||
        sim_v3_is_zero(d))
        return sim_near_sweep(near->world, near, in, out);
    sim_sweep_ray ray = sim_sweep_ray_make(in->shape, in->start, d);
    // The box the view tests other bodies and platforms against.
    sim_fx g = ray.inflate + 2;
    sim_aabb box =
        sim_aabb_union(sim_shape_bounds(in->shape, in->start), sim_shape_bounds(in->shape, sim_v3_add(in->start, d)));
    if (ray.length == 0 || !scene_box_inside(sim_aabb_expand(box, sim_v3(g, g, g)), near->box))
        return scene_view_sweep(ctx, in, out);
    return sim_near_sweep_ray(near->world, near, &ray, out);
}

static int alone_contacts(void *ctx, const sim_overlap_input *in, sim_contact *out, int capacity)
{
    const scene_view *v = ctx;
    const sim_near *near = v->near;
    if (!sim_query_accepts_shape_at(in->shape, in->position))
        return 0; // refused, by both
    sim_fx g = sim_query_clamp_margin(in->margin) + SIM_QUERY_TOLERANCE;
    sim_aabb box = sim_aabb_expand(sim_shape_bounds(in->shape, in->position), sim_v3(g, g, g));
    if (scene_box_inside(box, near->box))
        return sim_near_contacts(near->world, near, in, out, capacity);
    return scene_view_contacts(ctx, in, out, capacity);
}

// The view's ray sees the world and the platforms, never the characters.
static bool alone_raycast(void *ctx, const sim_ray_input *in, sim_ray_result *out)
{
    const scene_view *v = ctx;
    const sim_near *near = v->near;
    if (v->scene->platform_count) {
        sim_vec3 d = sim_query_clamp_displacement(in->displacement);
        if (sim_v3_in_world(in->origin) && sim_v3_in_world(sim_v3_add(in->origin, d))) {
            sim_aabb box = sim_aabb_expand(
                sim_aabb_union(sim_aabb_of_point(in->origin), sim_aabb_of_point(sim_v3_add(in->origin, d))),
                sim_v3(2, 2, 2));
            if (!scene_box_inside(box, near->box))
                return scene_view_raycast(ctx, in, out);
        }
    }
    return sim_near_raycast(near->world, near, in, out);
}

sim_collider scene_alone_collider(scene_view *v)
{
    sim_collider c = scene_view_collider(v);
    c.sweep = alone_sweep;
    c.contacts = alone_contacts;
    c.raycast = alone_raycast;
    return c;
}
