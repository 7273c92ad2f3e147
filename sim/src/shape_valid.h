// keel: the check of a character shape (sim_shape_valid, sim_shape.h),
// inline for the queries that make it on every call. MIT licence, see
// LICENSE.
//
// A shape is valid when every half extent lies in [SIM_SHAPE_MIN_SIZE / 2,
// SIM_SHAPE_MAX_SIZE] and its radius matches its type: a capsule's radius is
// its horizontal half extents and at most its vertical one, a cylinder's is
// its horizontal half extents, and a box has none.
#ifndef KEEL_SHAPE_VALID_H
#define KEEL_SHAPE_VALID_H

#include <keel/sim_shape.h>

static inline bool sim_shape_valid_inline(const sim_shape *s)
{
    const sim_fx lo = SIM_SHAPE_MIN_SIZE / 2, hi = SIM_SHAPE_MAX_SIZE;
    if (s->half.x < lo || s->half.x > hi || s->half.y < lo || s->half.y > hi || s->half.z < lo || s->half.z > hi)
        return false;
    if (s->type == SIM_SHAPE_CAPSULE)
        return s->radius == s->half.x && s->radius == s->half.z && s->half.y >= s->radius;
    if (s->type == SIM_SHAPE_CYLINDER)
        return s->radius == s->half.x && s->radius == s->half.z;
    return s->type == SIM_SHAPE_BOX && s->radius == 0;
}

#endif
