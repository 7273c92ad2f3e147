// keel: each character's neighbourhood of the static world, kept across
// ticks. MIT licence, see LICENSE.
//
// A move's queries are answered from a sim_near gathered around the step box
// (world_near.h). Gathering walks the hierarchy every tick; here each
// character slot keeps a wider list (the step box grown by KEEP_GROW), and
// the tick's sim_near is cut out of it while the step box stays inside:
// the triangles of the kept list whose bounds overlap the step box, in the
// kept list's order. That is exactly what sim_near_gather of the step box
// returns: a triangle's bounds lie inside every node above it and the walk's
// tests are monotone in the box, so the walk of the step box visits the
// triangles overlapping it, in the order the walk of any larger box visits
// them. The same list, the same overflow (more than SIM_NEAR_CAPACITY: the
// hierarchy answers), so every answer is the same to the bit.
//
// The kept lists are derived state only: a list is a function of its box
// and the (unchanging) world, whichever character it was gathered for, so
// adds, removes, restores and rollbacks never need to touch them; a slot
// whose list does not cover its character's step box gathers again. A kept
// list with more than KEEP_CAPACITY triangles is marked full: while the step
// box stays inside it, the step box is gathered directly, as without the
// cache. The lists are taken in sim_scene_create; a step allocates nothing,
// and each move writes only its own slot (the moves may run on threads).
#include "scene_internal.h"
#include "world_internal.h"

#define KEEP_GROW SIM_FX_MM(400)

static bool keep_visit(void *ctx, const sim_tri *t)
{
    scene_near_keep *k = ctx;
    if (k->count == SCENE_NEAR_KEEP_CAPACITY) {
        k->full = true;
        return false;
    }
    k->tri[k->count++] = (uint32_t)(t - k->world->tris);
    return true;
}

void scene_near_step(scene_near_keep *k, const sim_world *world, sim_aabb step, sim_near *near)
{
    if (k->world != world || !scene_box_inside(step, k->box)) {
        // Positions stay within SIM_MOVE_POSITION_LIMIT (2^12 m), far from
        // the edge of the number range: the grown box does not overflow.
        const sim_fx g = KEEP_GROW;
        k->world = world;
        k->box = sim_aabb_expand(step, sim_v3(g, g, g));
        k->count = 0;
        k->full = false;
        sim_bvh_query(world, k->box, keep_visit, k);
    }
    if (k->full) {
        sim_near_gather(near, world, step);
        return;
    }
    near->world = world;
    near->box = step;
    near->count = 0;
    near->usable = true;
    const sim_aabb *tri_box = world->tri_box;
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->count; i++) {
        uint32_t t = k->tri[i];
        sim_aabb b = tri_box[t];
        if (!sim_aabb_overlaps(b, step))
            continue;
        if (n == SIM_NEAR_CAPACITY) {
            near->usable = false; // as the gather: too many, the hierarchy answers
            break;
        }
        near->tri[n] = t;
        near->bounds[n] = b;
        n++;
    }
    near->count = n;
}
