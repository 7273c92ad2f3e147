// keel tests: double-precision reference geometry (tests only). MIT licence.
//
// Straightforward textbook closest-point code in double, used to judge the
// fixed-point queries: it is slow and simple on purpose.
#ifndef KEEL_REF_GEOM_H
#define KEEL_REF_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/sim_math.h>
#include <keel/sim_shape.h>

typedef struct rv3 {
    double x, y, z;
} rv3;

rv3 rv3_from(sim_vec3 v);
rv3 rv3_add(rv3 a, rv3 b);
rv3 rv3_sub(rv3 a, rv3 b);
rv3 rv3_scale(rv3 a, double s);
double rv3_dot(rv3 a, rv3 b);
rv3 rv3_cross(rv3 a, rv3 b);
double rv3_len(rv3 a);

/// Closest point on triangle abc to p.
rv3 ref_closest_on_tri(rv3 p, rv3 a, rv3 b, rv3 c);
/// Squared distance between segments p0p1 and q0q1.
double ref_seg_seg_dist2(rv3 p0, rv3 p1, rv3 q0, rv3 q1);
/// Distance between segment p0p1 and triangle abc (0 when they intersect).
double ref_seg_tri_dist(rv3 p0, rv3 p1, rv3 a, rv3 b, rv3 c);

/// Signed gap between a character shape at `pos` and triangle abc: for a
/// capsule, distance minus radius; for a box, the largest separation over the
/// 13 SAT axes (negative when overlapping: then minus the smallest penetration);
/// for a cylinder, the same exactly (ref_cylinder_tri_gap).
double ref_shape_tri_gap(sim_shape s, rv3 pos, rv3 a, rv3 b, rv3 c);

/// ref_shape_tri_gap when it is at most `stop`; otherwise some value above
/// `stop` (the cylinder's slow searches end as soon as one shows that).
double ref_shape_tri_gap_stop(sim_shape s, rv3 pos, rv3 a, rv3 b, rv3 c, double stop);

/// The box's gap (ref_shape_tri_gap of a box of half extents `half`). A
/// shape inside that box has a gap at least this: the bounding box's is a
/// cheap lower bound.
double ref_box_tri_gap(rv3 half, rv3 pos, rv3 a, rv3 b, rv3 c);

/// Signed gap between the upright cylinder of radius R and half height H
/// centred at `pos` and triangle abc: the distance when apart, else minus the
/// penetration depth (the shortest translation that frees it).
double ref_cylinder_tri_gap(double R, double H, rv3 pos, rv3 a, rv3 b, rv3 c);

/// First fraction in [0, 1] where the gap becomes <= 0 moving pos by d, or a
/// value > 1 when it never does (sampled in `steps` then bisected).
double ref_shape_tri_toi(sim_shape s, rv3 pos, rv3 d, rv3 a, rv3 b, rv3 c, int steps);

/// The smallest ref_shape_tri_toi over `count` triangles (3 points each), or a
/// value > 1 when none is met.
double ref_shape_tris_toi(sim_shape s, rv3 pos, rv3 d, const rv3 *tri, uint32_t count);

/// Signed gap between two upright character shapes centred at pa and pb:
/// the largest separation along any direction (the distance when apart,
/// minus the penetration depth when overlapping). Proven apart along an
/// axis or the horizontal offset, that lower bound is returned; otherwise a
/// grid over the sphere and a pattern search: an inexact search can only
/// overstate a depth, never hide one.
double ref_shape_pair_gap(sim_shape a, rv3 pa, sim_shape b, rv3 pb);

#endif
