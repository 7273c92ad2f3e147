// keel: each character's neighbourhood of the static world, kept across
// ticks. MIT licence, see LICENSE.
//
// A move's queries are answered from a sim_near gathered around the step box
// (world_near.h). Gathering walks the hierarchy every tick; here each
// character slot keeps a wider list (the step box grown by KEEP_GROW, and
// KEEP_AHEAD_TICKS of the character's motion further ahead), with
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
// list with more than SCENE_NEAR_KEEP_CAPACITY triangles, or a kept box wider than
// SIM_PBOX_REL_SPAN, is marked full: while the step box stays inside it, the
// step box is gathered directly, as without the cache. The lists are taken
// in sim_scene_create; a step allocates nothing, and each move writes only
// its own slot (the moves may run on threads).
#include <stddef.h>

#include "scene_internal.h"
#include "world_internal.h"

#define KEEP_GROW SIM_FX_MM(400)
// Ticks of the present motion the kept box also reaches ahead (on the side
// each axis moves to): a runner's step box leaves a box grown evenly after
// a few ticks, and each new gather walks cold nodes of the hierarchy.
#define KEEP_AHEAD_TICKS 8

// The box grown by `ahead` on the side its sign points to.
static void reach(sim_fx *lo, sim_fx *hi, sim_fx ahead)
{
    if (ahead > 0)
        *hi += ahead;
    else
        *lo += ahead;
}

void scene_near_step(scene_near_keep *k, const sim_world *world, sim_aabb step, sim_vec3 velocity, sim_fx dt,
                     sim_near *near)
{
    if (k->world != world || !scene_box_inside(step, k->box)) {
        // Positions stay within SIM_MOVE_POSITION_LIMIT (2^12 m) and a tick's
        // motion within SIM_MAX_DISPLACEMENT (64 m), so the box reaches at
        // most 512 m further: far from the edge of the number range (2^15 m),
        // it does not overflow.
        const sim_fx g = KEEP_GROW;
        k->world = world;
        k->box = sim_aabb_expand(step, sim_v3(g, g, g));
        reach(&k->box.min.x, &k->box.max.x, sim_fx_mul(velocity.x, dt) * KEEP_AHEAD_TICKS);
        reach(&k->box.min.y, &k->box.max.y, sim_fx_mul(velocity.y, dt) * KEEP_AHEAD_TICKS);
        reach(&k->box.min.z, &k->box.max.z, sim_fx_mul(velocity.z, dt) * KEEP_AHEAD_TICKS);
        k->count = 0;
        k->full = !sim_pbox_rel_fits(k->box);
        if (!k->full) {
            uint32_t tri[SCENE_NEAR_KEEP_CAPACITY];
            uint32_t n = sim_bvh_collect(world, k->box, tri, SCENE_NEAR_KEEP_CAPACITY);
            k->full = n > SCENE_NEAR_KEEP_CAPACITY;
            k->count = k->full ? 0 : n;
            for (uint32_t i = 0; i < k->count; i++) {
                k->e[i].pbox = sim_pbox_rel(world->tri_box[tri[i]], k->box.min);
                k->e[i].tri = tri[i];
            }
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
        if (!sim_pbox_overlaps(k->e[i].pbox, sp))
            continue;
        if (n == SIM_NEAR_CAPACITY) {
            near->usable = false; // as the gather: too many, the hierarchy answers
            break;
        }
        near->tri[n] = k->e[i].tri;
        near->pbox[n] = k->e[i].pbox;
        n++;
    }
    near->count = n;
}

// The header and the first PREFETCH_ENTRIES entries: the lines every move
// reads, and all of most lists (on the built-in level and on zdm2 nearly
// every kept list holds at most 32 triangles). The hardware follows on for
// longer ones. The slot's count is not read here: that read would wait.
#define PREFETCH_ENTRIES 32u

void scene_near_prefetch(const scene_near_keep *k)
{
    const char *p = (const char *)k;
    const size_t bytes = offsetof(scene_near_keep, e) + PREFETCH_ENTRIES * sizeof(scene_near_entry);
    for (size_t at = 0; at < bytes; at += 64)
        SCENE_PREFETCH(p + at);
}
