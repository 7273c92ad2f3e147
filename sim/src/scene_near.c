// keel: each character's neighbourhood of the static world, kept across
// ticks. MIT licence, see LICENSE.
//
// A move's queries are answered from a sim_near gathered around the step box
// (world_near.h). Gathering walks the hierarchy every tick; here each
// character slot keeps a wider list (the step box grown by KEEP_GROW), with
// each triangle's bounds packed relative to the kept box's minimum
// (pbox.h), and the tick's sim_near is cut out of it while the step box
// stays inside: the triangles of the kept list whose bounds overlap the step
// box, in the kept list's order (the packed test is exact for the step box,
// which lies inside the kept box). That is exactly what sim_near_gather of
// the step box returns: a triangle's bounds lie inside every node above it
// and the walk's tests are monotone in the box, so the walk of the step box
// visits the triangles overlapping it, in the order the walk of any larger
// box visits them. The same list, the same overflow (more than
// SIM_NEAR_CAPACITY: the hierarchy answers), so every answer is the same to
// the bit. (The packed bounds stay relative to the kept box, the sim_near's
// base: the step box lies within its span too.)
//
// The kept lists are derived state only: a list is a function of its box
// and the (unchanging) world, whichever character it was gathered for, so
// adds, removes, restores and rollbacks never need to touch them; a slot
// whose list does not cover its character's step box gathers again. A kept
// list with more than KEEP_CAPACITY triangles, or a kept box wider than
// SIM_PBOX_REL_SPAN, is marked full: while the step box stays inside it, the
// step box is gathered directly, as without the cache. The lists are taken
// in sim_scene_create; a step allocates nothing, and each move writes only
// its own slot (the moves may run on threads).
#include "scene_internal.h"
#include "world_internal.h"

#define KEEP_GROW SIM_FX_MM(400)

void scene_near_step(scene_near_keep *k, const sim_world *world, sim_aabb step, sim_near *near)
{
    if (k->world != world || !scene_box_inside(step, k->box)) {
        // Positions stay within SIM_MOVE_POSITION_LIMIT (2^12 m), far from
        // the edge of the number range: the grown box does not overflow.
        const sim_fx g = KEEP_GROW;
        k->world = world;
        k->box = sim_aabb_expand(step, sim_v3(g, g, g));
        k->count = 0;
        k->full = !sim_pbox_rel_fits(k->box);
        if (!k->full) {
            uint32_t n = sim_bvh_collect(world, k->box, k->tri, SCENE_NEAR_KEEP_CAPACITY);
            k->full = n > SCENE_NEAR_KEEP_CAPACITY;
            k->count = k->full ? 0 : n;
            for (uint32_t i = 0; i < k->count; i++)
                k->pbox[i] = sim_pbox_rel(world->tri_box[k->tri[i]], k->box.min);
        }
    }
    if (k->full) {
        sim_near_gather(near, world, step);
        return;
    }
    near->world = world;
    near->box = step;
    near->base = k->box.min;
    near->usable = true;
    sim_pbox sp = sim_pbox_rel(step, k->box.min);
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->count; i++) {
        if (!sim_pbox_overlaps(k->pbox[i], sp))
            continue;
        if (n == SIM_NEAR_CAPACITY) {
            near->usable = false; // as the gather: too many, the hierarchy answers
            break;
        }
        near->tri[n] = k->tri[i];
        near->pbox[n] = k->pbox[i];
        n++;
    }
    near->count = n;
}
