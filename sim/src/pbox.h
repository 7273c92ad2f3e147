// keel: boxes packed into two 64-bit words, for a quick exact overlap test
// near a base point. MIT licence, see LICENSE.
//
// Three 20-bit lanes: lane a (x, y, z) holds bits [21a, 21a + 20) and bit
// 21a + 20 is the lane's guard, set in `hi` and clear in `lo`. lo packs the
// box's minimum, hi its maximum, each coordinate as v - base + 1 clamped to
// [0, 2^20 - 1].
//
// Overlap: lane by lane, hi(a) - lo(b) is (max_a + 2^20) - min_b, which lies
// in [1, 2^21): no lane borrows from the next, and the guard survives exactly
// when max_a >= min_b. Both directions, all three lanes, one mask.
//
// Exact against a box q within [base, base + SIM_PBOX_REL_SPAN]: q's lanes
// are its coordinates (1 .. SIM_PBOX_REL_SPAN + 1, never clamped); another
// box's coordinates clamp only where they lie below base (lane 0, below
// every lane of q) or beyond base + 2^20 - 2 (lane 2^20 - 1, above every
// lane of q), which changes no comparison with q's. So sim_pbox_overlaps of
// the packed boxes is sim_aabb_overlaps of the boxes. Portable: plain
// 64-bit integer arithmetic, the same on every target.
#ifndef KEEL_PBOX_H
#define KEEL_PBOX_H

#include <keel/sim_math.h>

typedef struct sim_pbox {
    uint64_t lo; ///< the minimum, guards clear
    uint64_t hi; ///< the maximum, guards set
} sim_pbox;

#define SIM_PBOX_LANE_MAX (((uint64_t)1 << 20) - 1)
#define SIM_PBOX_GUARDS (((uint64_t)1 << 20) | ((uint64_t)1 << 41) | ((uint64_t)1 << 62))
#define SIM_PBOX_REL_SPAN (((int64_t)1 << 20) - 3) // 16 m

static inline uint64_t sim_pbox_lane(sim_fx v, sim_fx base)
{
    uint64_t x = (uint64_t)((int64_t)v - base + 1);
    if (x > SIM_PBOX_LANE_MAX) // below base (x wrapped) or beyond the lane: rare
        x = (int64_t)v < base ? 0 : SIM_PBOX_LANE_MAX;
    return x;
}

/// b packed relative to base.
static inline sim_pbox sim_pbox_rel(sim_aabb b, sim_vec3 base)
{
    sim_pbox p;
    p.lo = sim_pbox_lane(b.min.x, base.x) | sim_pbox_lane(b.min.y, base.y) << 21 | sim_pbox_lane(b.min.z, base.z) << 42;
    p.hi = sim_pbox_lane(b.max.x, base.x) | sim_pbox_lane(b.max.y, base.y) << 21 | sim_pbox_lane(b.max.z, base.z) << 42;
    p.hi |= SIM_PBOX_GUARDS;
    return p;
}

/// Whether box b spans at most SIM_PBOX_REL_SPAN on every axis (then every
/// box inside b lies within b.min + SIM_PBOX_REL_SPAN).
static inline bool sim_pbox_rel_fits(sim_aabb b)
{
    return (int64_t)b.max.x - b.min.x <= SIM_PBOX_REL_SPAN && (int64_t)b.max.y - b.min.y <= SIM_PBOX_REL_SPAN &&
           (int64_t)b.max.z - b.min.z <= SIM_PBOX_REL_SPAN;
}

/// Whether the packed boxes overlap (exact when one of them lies within
/// base + SIM_PBOX_REL_SPAN, see above).
static inline bool sim_pbox_overlaps(sim_pbox a, sim_pbox b)
{
    return ((a.hi - b.lo) & (b.hi - a.lo) & SIM_PBOX_GUARDS) == SIM_PBOX_GUARDS;
}

#endif
