// keel: a character's neighbourhood of the static world, gathered once per
// step so that the step's queries scan a short list instead of walking the
// hierarchy each time. MIT licence, see LICENSE.
//
// A sim_near holds every triangle whose bounds overlap its box, in the
// hierarchy's visiting order (increasing index in world->tris), with each
// triangle's bounds packed relative to `base` (pbox.h, sim_pbox_rel). A query
// whose own box (the grown segment of a sweep or a ray, the grown shape of a
// contact query) lies inside that box is answered from the list: the packed
// test is exact for such a box (the box lies within base +
// SIM_PBOX_REL_SPAN), so it tests exactly the triangles the hierarchy would
// have handed it (a node's box holds its triangles' boxes, and the node and
// triangle tests are monotone in the box, so the triangle test alone
// decides), in the same order, so the answer is the same to the bit. Any
// other query, or every query when the neighbourhood did not fit (more than
// SIM_NEAR_CAPACITY triangles, or a box wider than SIM_PBOX_REL_SPAN), walks
// the hierarchy. Lives on the caller's stack: nothing is allocated.
#ifndef KEEL_WORLD_NEAR_H
#define KEEL_WORLD_NEAR_H

#include <keel/sim_move.h>
#include <keel/sim_query.h>
#include <keel/sim_world.h>

#include "collide.h"
#include "pbox.h"

#define SIM_NEAR_CAPACITY 128u

typedef struct sim_near {
    const sim_world *world;
    sim_aabb box;  ///< queries inside it are answered from the list
    sim_vec3 base; ///< the bounds are packed relative to it; box lies within base + SIM_PBOX_REL_SPAN
    bool usable;   ///< false: too many triangles (or none gathered): queries walk the hierarchy
    uint32_t count;
    uint32_t tri[SIM_NEAR_CAPACITY];  ///< indices into the world's triangles, increasing
    sim_pbox pbox[SIM_NEAR_CAPACITY]; ///< their bounds, packed relative to base
} sim_near;

/// Gather the triangles of `world` whose bounds overlap `box`.
void sim_near_gather(sim_near *near, const sim_world *world, sim_aabb box);

/// The box one step of character `c` is expected to query: its standing
/// shape around it, grown by a tick of its motion, a step up and down, and a
/// margin. Queries that leave it are still answered right (by the hierarchy).
sim_aabb sim_near_step_box(const sim_move_settings *s, const sim_char_state *c);

/// sim_world_sweep, sim_world_contacts and sim_world_raycast of near->world,
/// answered from the neighbourhood when they fit in it. `near` may be NULL.
bool sim_near_sweep(const sim_world *world, const sim_near *near, const sim_sweep_input *in, sim_sweep_result *out);
/// The ray of a sweep of `shape` from `start` by the (accepted and clamped)
/// displacement d, as every sweep makes it: the direction and length of d,
/// inflated by SIM_QUERY_TOLERANCE + length / 4096 (rounding grows with the
/// distance travelled; so does the inflation).
static inline sim_sweep_ray sim_sweep_ray_make(sim_shape shape, sim_vec3 start, sim_vec3 d)
{
    sim_sweep_ray ray;
    ray.shape = shape;
    ray.start = start;
    ray.displacement = d;
    if (d.x == 0 && d.z == 0 && d.y != 0 && d.y != INT32_MIN) {
        // Straight up or down (a ground probe): what sim_dir_from_v3 and
        // sim_v3_length return for it (the root of y^2 is |y|, exactly), at
        // no cost.
        ray.dir = (sim_dir){0, d.y < 0 ? -SIM_DIR_ONE : SIM_DIR_ONE, 0};
        ray.length = d.y < 0 ? -d.y : d.y;
    } else {
        ray.dir = sim_dir_from_v3(d);
        ray.length = sim_v3_length(d);
    }
    ray.inflate = SIM_QUERY_TOLERANCE + (ray.length >> 12);
    return ray;
}

/// The sweep of sim_near_sweep for a motion already accepted, clamped and not
/// zero, with its ray from sim_sweep_ray_make: the same result without making
/// the ray twice.
bool sim_near_sweep_ray(const sim_world *world, const sim_near *near, const sim_sweep_ray *ray, sim_sweep_result *out);
int sim_near_contacts(const sim_world *world, const sim_near *near, const sim_overlap_input *in, sim_contact *contacts,
                      int capacity);
bool sim_near_raycast(const sim_world *world, const sim_near *near, const sim_ray_input *in, sim_ray_result *out);

#endif
