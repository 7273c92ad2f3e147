// keel: narrow phase of a character shape against another character's shape.
// MIT licence, see LICENSE.
//
// Both shapes are upright, so the pair reduces to a single convex body around
// the other character's centre (the Minkowski sum):
//   - capsule vs capsule: an upright capsule of radius r1 + r2 whose segment
//     is h1 + h2 either side of the centre;
//   - any pair with a cylinder: a prism, a horizontal rounded rectangle
//     swept over the height |y| <= ha + hb. Two cylinders: a cylinder of
//     radius r1 + r2 (exact). A cylinder and a box: the box's footprint grown
//     by the cylinder's radius, with rounded vertical edges (exact). A
//     cylinder and a capsule: the capsule taking part as its bounding
//     cylinder (radius, half height), so a capsule's rounded end meets a
//     cylinder's rim a little early, never late;
//   - a box and a box or a capsule: an axis-aligned box of half extents
//     a + b, a capsule taking part as its bounding box (radius, half height,
//     radius). That is an approximation: a capsule's rounded bottom meets a
//     box character's top corner a little early, never late.
// Depths in a prism or a box are the shallowest escape along one direction
// (a prism's: horizontal, away from its core, or vertical), so the normal
// of a pair with a box or a cylinder is horizontal or vertical (at a
// prism's rounded vertical edges: horizontal, from the core's corner).
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
    sim_fx shrink;    ///< >= 0, taken off the Minkowski radius (a prism's too) or each half extent
    int side;         ///< +1 or -1: push along +x or -x when the axes coincide
    uint32_t feature; ///< reported as feature.triangle
} sim_obstacle;

/// Penetration depth of two shapes (negative: separated; for boxes the
/// largest separation along one axis, for prisms the larger of the
/// horizontal and the vertical separation). Symmetric: swapping the two gives
/// exactly the same value.
sim_fx sim_shape_pair_depth(sim_shape a, sim_vec3 pa, sim_shape b, sim_vec3 pb);

/// Contact of `shape` at `pos` against the obstacle: hit->s is the depth
/// (negative when separated); false when separated by more than `margin`.
/// The normal points from the obstacle toward the shape; the feature is a
/// face of the obstacle (its normal is the truth).
bool sim_contact_shape_obstacle(sim_shape shape, sim_vec3 pos, const sim_obstacle *o, sim_fx margin, sim_tri_hit *hit);

/// Earliest contact of the swept shape with the obstacle within [0, length].
bool sim_sweep_shape_obstacle(const sim_sweep_ray *ray, const sim_obstacle *o, sim_tri_hit *hit);

/// First point of the segment origin + dir s, s in [0, length], in `shape`
/// at `center` grown by `grow` (so that rounding only makes it early): hit->s
/// is s, the point is on the segment, the normal is the shape's outward one
/// there. A start inside is a hit at 0 with the normal against dir. The
/// feature is left for the caller (triangle 0, a face).
bool sim_ray_shape(sim_vec3 origin, sim_dir dir, sim_fx length, sim_shape shape, sim_vec3 center, sim_fx grow,
                   sim_tri_hit *hit);

#endif
