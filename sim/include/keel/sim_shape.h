// keel: character shapes. MIT licence, see LICENSE.
//
// Characters are upright: a vertical capsule (the default), an axis-aligned
// box (Quake's hull: a flat bottom that does not roll off ledges) or a
// vertical cylinder (round sides that slide like a capsule's, a flat bottom
// like the box's). A shape's position is its centre; its feet are at
// centre.y - half_height. docs/shapes.md says when to pick which.
#ifndef KEEL_SIM_SHAPE_H
#define KEEL_SIM_SHAPE_H

#include <keel/sim_math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sim_shape_type {
    SIM_SHAPE_CAPSULE = 0,
    SIM_SHAPE_BOX = 1,
    SIM_SHAPE_CYLINDER = 2,
} sim_shape_type;

/// Shape sizes are clamped to [SIM_SHAPE_MIN_SIZE, SIM_SHAPE_MAX_SIZE].
#define SIM_SHAPE_MIN_SIZE SIM_FX_MM(10)
#define SIM_SHAPE_MAX_SIZE SIM_FX_INT(16)

typedef struct sim_shape {
    int32_t type; ///< sim_shape_type
    /// Capsule and cylinder: radius. Box: unused (0).
    sim_fx radius;
    /// Half extents. Capsule: x = z = radius, y = half of the total height
    /// (so the segment between the sphere centres is 2 * (half.y - radius)).
    /// Cylinder: x = z = radius, y = half of the height. Box: the half extents.
    sim_vec3 half;
} sim_shape;

/// An upright capsule of the given radius and total height (clamped so that
/// height >= 2 * radius and both lie in the documented range).
sim_shape sim_shape_capsule(sim_fx radius, sim_fx height);
/// An axis-aligned box with the given half extents (each clamped).
sim_shape sim_shape_box(sim_fx half_x, sim_fx half_y, sim_fx half_z);
/// An upright cylinder of the given radius and total height (each clamped
/// into the documented range; any height is allowed, flatter than wide too).
sim_shape sim_shape_cylinder(sim_fx radius, sim_fx height);
/// The default character: capsule, radius 0.4 m, height 1.8 m.
sim_shape sim_shape_default(void);

/// Whether a shape (perhaps filled in by hand) is one the constructors could
/// make: a known type, sizes within [SIM_SHAPE_MIN_SIZE / 2, SIM_SHAPE_MAX_SIZE],
/// a capsule's radius equal to its x and z half extents and at most its half
/// height, a cylinder's radius equal to its x and z half extents, a box's
/// radius 0. Queries and settings refuse other shapes.
bool sim_shape_valid(sim_shape s);

/// Half of the capsule's inner segment (half.y - radius); 0 for a box or a
/// cylinder (whose flat ends are not spheres).
static inline sim_fx sim_shape_segment_half(sim_shape s)
{
    return s.type == SIM_SHAPE_CAPSULE ? s.half.y - s.radius : 0;
}

/// Bounds of the shape at `position`.
static inline sim_aabb sim_shape_bounds(sim_shape s, sim_vec3 position)
{
    sim_aabb b = {sim_v3_sub(position, s.half), sim_v3_add(position, s.half)};
    return b;
}

#ifdef __cplusplus
}
#endif

#endif
