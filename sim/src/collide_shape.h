// keel: narrow phase of a character shape against another character's shape.
// MIT licence, see LICENSE.
//
// Both shapes are upright, so the pair reduces to a single convex body around
// the other character's centre (the Minkowski sum):
//   - capsule vs capsule: an upright capsule of radius r1 + r2 whose segment
//     is h1 + h2 either side of the centre;
//   - any pair with a box: an axis-aligned box of half extents a + b, a
//     capsule taking part as its bounding box (radius, half height, radius).
//     That is an approximation: a capsule's rounded bottom meets a box
//     character's top corner a little early, never late.
// The moving shape's centre is then a point against that body: a ray for a
// sweep, a point-in-body depth for a contact.
//
// Conventions follow the triangle narrow phase (collide.h): sweeps grow the
// body by the ray's inflation so a hit is never late; a start overlap deeper
// than SIM_QUERY_TOLERANCE is a hit at 0 with start_overlap and depth set;
// touching (within the inflation) counts at 0 only when moving into the body.
// One difference: the body is convex, so a motion that does not go deeper
// is free even from a real overlap (see sim_sweep_shape_obstacle).
//
// `shrink` takes part of the overlap away: the scene passes half of the
// pair's penetration at the start of the tick, so each of two overlapping
// characters sees the other smaller by half that depth and resolves only its
// half, however many times the mover asks again (see docs/scene.md).
#ifndef KEEL_COLLIDE_SHAPE_H
#define KEEL_COLLIDE_SHAPE_H

#include "collide.h"

/// Another character as an obstacle.
typedef struct sim_obstacle {
    sim_shape shape;
    sim_vec3 center;
    sim_fx shrink;    ///< >= 0, taken off the Minkowski radius or each half extent
    int side;         ///< +1 or -1: push along +x or -x when the axes coincide
    uint32_t feature; ///< reported as feature.triangle
} sim_obstacle;

/// Penetration depth of two shapes (negative: separated; for boxes the
/// largest separation along one axis). Symmetric: swapping the two gives
/// exactly the same value.
sim_fx sim_shape_pair_depth(sim_shape a, sim_vec3 pa, sim_shape b, sim_vec3 pb);

/// Contact of `shape` at `pos` against the obstacle: hit->s is the depth
/// (negative when separated); false when separated by more than `margin`.
/// The normal points from the obstacle toward the shape; the feature is a
/// face of the obstacle (its normal is the truth).
bool sim_contact_shape_obstacle(sim_shape shape, sim_vec3 pos, const sim_obstacle *o,
                                sim_fx margin, sim_tri_hit *hit);

/// Earliest contact of the swept shape with the obstacle within [0, length].
bool sim_sweep_shape_obstacle(const sim_sweep_ray *ray, const sim_obstacle *o, sim_tri_hit *hit);

#endif
