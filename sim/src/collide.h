// keel: narrow-phase collision of character shapes against single triangles.
// MIT licence, see LICENSE.
//
// This layer knows triangles and shapes only, never the world or the broad
// phase. All distances are metres in Q16.16. Triangles are double-sided.
//
// Sweeps work in "distance along a unit direction": the motion is split into a
// unit direction u and a length L, every primitive returns the travelled
// distance s at first contact, and the caller turns s into a fraction. The
// shape is inflated by `inflate` so that rounding can only make contact earlier
// (a convex region grown by e is entered at least e earlier along any ray).
#ifndef KEEL_COLLIDE_H
#define KEEL_COLLIDE_H

#include <keel/sim_query.h>

#include "shape_valid.h"

/// Flags of a collision triangle: an inactive edge or vertex is internal to a
/// flat surface (see edges.c) and reports the face normal instead of its own.
///
/// A buried edge or vertex lies inside a flat surface made of other
/// triangles (the top edge of a box's side face where two boxes touch): the
/// surface reports any contact there, so hits on it are ignored. A buried
/// triangle (every edge buried or inactive, one at least buried) is inside
/// solid material and is dropped from the world.
enum {
    SIM_TRI_EDGE0_INACTIVE = 1u << 0,
    SIM_TRI_VERT0_INACTIVE = 1u << 3,
    SIM_TRI_EDGE0_BURIED = 1u << 6,
    SIM_TRI_VERT0_BURIED = 1u << 9,
    SIM_TRI_BURIED = 1u << 12,
    SIM_TRI_RECHECK = 1u << 13, ///< world building only: judge the edges again
    /// An inactive edge (vertex) at a fold: its neighbours are within
    /// coplanar_cos but not flat with it (SIM_FOLD_FLAT_ANGLE). Hits on it
    /// still report the face normal, but the sweeps solve it: on the convex
    /// side of a fold the ridge is met before either face.
    SIM_TRI_EDGE0_FOLD = 1u << 14,
    SIM_TRI_VERT0_FOLD = 1u << 17,
};

/// Folds flatter than this count as flat (SIM_FOLD_FLAT_ANGLE: 1 - |cos| of
/// the normals' angle at most 2^-26, Q4.60; about 0.01 degree). A sweep that
/// skips such a ridge meets a face instead once the face's contact point,
/// R * angle / 2 beyond the edge, is within SIM_QUERY_TOLERANCE of the
/// triangle: at once for every radius up to 2.7 m.
#define SIM_FOLD_FLAT_ANGLE ((int64_t)1 << 34)
/// The steepest fold an edge may be inactive at (1 - |cos| at most 2^-10,
/// Q4.60; about 2.5 degrees, above the default coplanar_cos of 2): the
/// capsule's face slabs reach R / 32 over such an edge, enough up to 3.5
/// degrees. A steeper fold within a wider coplanar_cos keeps its edge active.
#define SIM_FOLD_MAX_ANGLE ((int64_t)1 << 50)

/// A collision triangle with everything the queries need precomputed at world
/// build time (so no square roots are taken per query for these).
typedef struct sim_tri {
    sim_vec3 v[3];
    sim_dir n;         ///< unit normal of the counter-clockwise winding
    sim_dir inward[3]; ///< unit, in the plane, perpendicular to edge i, pointing inside
    sim_dir edir[3];   ///< unit direction of edge i (v[i] -> v[i+1])
    sim_dir side[3];   ///< unit, horizontal, perpendicular to edge i (zero for a vertical edge)
    sim_fx elen[3];    ///< length of edge i
    /// The triangle's extent from v[i] along inward[i] and along side[i]
    /// (min and max over its corners, rounded outward): the separating axes
    /// of sim_tri_apart.
    sim_fx in_lo[3], in_hi[3], side_lo[3], side_hi[3];
    /// n . v[0], inward[i] . v[i] and side[i] . v[i] (Q18.46, exact): a
    /// point p's distance to the plane is n . p - n_at, its position along
    /// inward[i] is inward[i] . p - in_at[i] (the same integers as
    /// n . (p - v[0]) and inward[i] . (p - v[i]); every term is below 2^62
    /// for any int32 coordinates, so nothing overflows). side[i].y is 0.
    int64_t n_at, in_at[3], side_at[3];
    sim_aabb box; ///< bounds (every broad-phase visit tests them)
    uint32_t id;  ///< stable feature id (see sim_feature)
    uint32_t flags;
} sim_tri;

static inline bool sim_tri_edge_inactive(const sim_tri *t, int i) { return (t->flags >> i) & 1u; }
static inline bool sim_tri_vertex_inactive(const sim_tri *t, int i) { return (t->flags >> (3 + i)) & 1u; }
/// Hits on this feature report the face normal (see SIM_TRI_EDGE0_INACTIVE).
static inline bool sim_tri_feature_inactive(const sim_tri *t, int type, int i)
{
    return (type == SIM_FEATURE_EDGE && sim_tri_edge_inactive(t, i)) ||
           (type == SIM_FEATURE_VERTEX && sim_tri_vertex_inactive(t, i));
}
/// Hits on this feature are ignored (see SIM_TRI_EDGE0_BURIED).
static inline bool sim_tri_feature_buried(const sim_tri *t, int type, int i)
{
    if (type == SIM_FEATURE_EDGE)
        return (t->flags >> (6 + i)) & 1u;
    if (type == SIM_FEATURE_VERTEX)
        return (t->flags >> (9 + i)) & 1u;
    return false;
}

/// A feature the sweeps need not solve: buried, or inactive and not at a
/// fold (the faces around it are met first).
static inline bool sim_tri_feature_skipped(const sim_tri *t, int type, int i)
{
    int bit = type == SIM_FEATURE_EDGE ? i : (type == SIM_FEATURE_VERTEX ? 3 + i : -1);
    if (bit < 0)
        return false;
    uint32_t f = t->flags;
    return ((f >> (6 + bit)) & 1u) || (((f >> bit) & 1u) && !((f >> (14 + bit)) & 1u));
}

/// How far beyond a shape's reach sim_tri_apart asks the triangle to be:
/// 4 mm, hundreds of times the rounding of any primitive of the narrow phase
/// (the same margin the capsule's per-end skip keeps).
#define SIM_TRI_APART_CLEARANCE ((int64_t)SIM_FX_ONE / 256)

/// Whether one of the triangle's own edge axes (the in-plane normals
/// inward[i] and the horizontal normals side[i], both ways) separates it by
/// more than SIM_TRI_APART_CLEARANCE from a vertical segment centre +- h
/// (the y axis) grown by `radius` and swept from `start` by `d`: the swept
/// shape's extent along an axis a is its centre's over the motion widened by
/// h |a.y| + radius. Any shape that fits in that segment grown by radius
/// (a capsule; a cylinder of that radius and half height h) is then further
/// than the clearance from the triangle all along the motion. Exact 64-bit
/// arithmetic on Q18.46 projections; extents rounded outward.
static inline bool sim_tri_apart(const sim_tri *t, sim_vec3 start, sim_vec3 d, sim_fx h, sim_fx radius)
{
    const int64_t one46 = (int64_t)1 << 30; // multiplied, not shifted: extents may be negative
    const int64_t r46 = ((int64_t)radius + SIM_TRI_APART_CLEARANCE) * one46;
    for (int i = 0; i < 3; i++) {
        sim_dir a = t->inward[i];
        int64_t ay = a.y < 0 ? -(int64_t)a.y : a.y;
        int64_t reach = r46 + (int64_t)h * ay;
        int64_t lo = t->in_lo[i] * one46 - reach, hi = t->in_hi[i] * one46 + reach;
        int64_t p0 = sim_dir_dot_v3_raw(a, start) - t->in_at[i];
        if (p0 >= lo && p0 <= hi)
            continue; // the start is within reach along this axis
        int64_t p1 = p0 + (int64_t)a.x * d.x + (int64_t)a.y * d.y + (int64_t)a.z * d.z;
        if ((p0 < lo && p1 < lo) || (p0 > hi && p1 > hi))
            return true;
    }
    for (int i = 0; i < 3; i++) {
        // side[i] is horizontal (zero for a vertical edge: never separates)
        sim_dir a = t->side[i];
        int64_t lo = t->side_lo[i] * one46 - r46, hi = t->side_hi[i] * one46 + r46;
        int64_t p0 = (int64_t)a.x * start.x + (int64_t)a.z * start.z - t->side_at[i];
        if (p0 >= lo && p0 <= hi)
            continue;
        int64_t p1 = p0 + (int64_t)a.x * d.x + (int64_t)a.z * d.z;
        if ((p0 < lo && p1 < lo) || (p0 > hi && p1 > hi))
            return true;
    }
    return false;
}

/// Fill the derived fields from v[0..2]. Returns false for a degenerate
/// triangle (doubled area below min_double_area, or an edge shorter than 2^-16 m).
bool sim_tri_init(sim_tri *t, sim_vec3 a, sim_vec3 b, sim_vec3 c, uint32_t id, sim_fx min_double_area);

static inline sim_aabb sim_tri_bounds(const sim_tri *t) { return t->box; }

/// Round-up square root of a non-negative Q32.32 value, as Q16.16: in the
/// stable root c / (-b + sqrt(disc)) a larger denominator only makes a
/// distance shorter, never late.
static inline int64_t sim_sqrt_ceil_q32(int64_t v)
{
    if (v <= 0)
        return 0;
    uint64_t r = sim_isqrt_u64((uint64_t)v);
    if ((uint64_t)r * r < (uint64_t)v)
        r += 1;
    return (int64_t)r;
}

/// A query's displacement clamped to +-SIM_MAX_DISPLACEMENT per axis. A
/// caller's value is clamped, not refused (documented in sim_query.h); the
/// mover checks its own motions against the limit (mover_sweep).
static inline sim_vec3 sim_query_clamp_displacement(sim_vec3 d)
{
    const sim_fx m = SIM_MAX_DISPLACEMENT;
    return sim_v3(sim_fx_clamp(d.x, -m, m), sim_fx_clamp(d.y, -m, m), sim_fx_clamp(d.z, -m, m));
}

/// What every query accepts (sim_query.h): a valid shape and positions
/// within the world's range, so no difference or product inside can
/// overflow. A margin is clamped to [0, SIM_SHAPE_MAX_SIZE].
static inline bool sim_query_accepts_shape_at(sim_shape s, sim_vec3 p)
{
    return sim_shape_valid_inline(&s) && sim_v3_in_world(p);
}

static inline sim_fx sim_query_clamp_margin(sim_fx margin)
{
    return margin < 0 ? 0 : (margin > SIM_SHAPE_MAX_SIZE ? SIM_SHAPE_MAX_SIZE : margin);
}

/// Result of one shape against one triangle.
typedef struct sim_tri_hit {
    sim_fx s;        ///< sweep: travelled distance at contact; contact: depth
    sim_vec3 normal; ///< unit, from the triangle toward the shape
    sim_vec3 point;  ///< on the triangle
    sim_feature feature;
    bool start_overlap;
    sim_fx depth; ///< sweep with start_overlap: the penetration depth
} sim_tri_hit;

/// A sweep of `shape` from `start` along unit `dir` for `length` metres.
typedef struct sim_sweep_ray {
    sim_shape shape;
    sim_vec3 start;
    sim_dir dir;   ///< unit
    sim_fx length; ///< > 0
    sim_vec3 displacement;
    sim_fx inflate;
} sim_sweep_ray;

/// Earliest contact of the swept shape with the triangle, if any within
/// [0, length]. Touching at the start (within the inflation) counts as a hit
/// at 0 only when the motion goes into the triangle; real penetration deeper
/// than SIM_QUERY_TOLERANCE is a hit at 0 with start_overlap set.
bool sim_sweep_capsule_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit);
/// The earliest hit (under sim_tri_hit_before) of a capsule's sweep against
/// tris[list[0..n)]: what sim_sweep_capsule_tri of each, kept the same way,
/// gives, with the ray's own work done once.
bool sim_sweep_capsule_tris(const sim_sweep_ray *ray, const sim_tri *tris, const uint32_t *list, uint32_t n,
                            sim_tri_hit *best);
bool sim_sweep_box_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit);
bool sim_sweep_cylinder_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit);

/// Penetration of the shape at `pos` against the triangle; hit->s is the
/// depth (negative when separated). Returns false when separated by more than
/// `margin`.
bool sim_contact_capsule_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin, sim_tri_hit *hit);
bool sim_contact_box_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin, sim_tri_hit *hit);
bool sim_contact_cylinder_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin, sim_tri_hit *hit);

/// The sweep or contact for whichever shape the input has.
static inline bool sim_sweep_shape_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit)
{
    switch (ray->shape.type) {
    case SIM_SHAPE_BOX: return sim_sweep_box_tri(ray, t, hit);
    case SIM_SHAPE_CYLINDER: return sim_sweep_cylinder_tri(ray, t, hit);
    default: return sim_sweep_capsule_tri(ray, t, hit);
    }
}
/// Strict order of hits for "earliest wins": smaller s, then a real overlap
/// before a touch (the deeper overlap first), then face before edge before
/// vertex, then smaller triangle id, then smaller feature index.
bool sim_tri_hit_before(const sim_tri_hit *a, const sim_tri_hit *b);

/// The earliest hit (under sim_tri_hit_before) of the ray's sweep against
/// tris[list[0..n)]: sim_sweep_shape_tri of each, kept the same way (a
/// capsule's ray does its own work once, sim_sweep_capsule_tris).
static inline bool sim_sweep_shape_tris(const sim_sweep_ray *ray, const sim_tri *tris, const uint32_t *list, uint32_t n,
                                        sim_tri_hit *best)
{
    if (ray->shape.type != SIM_SHAPE_BOX && ray->shape.type != SIM_SHAPE_CYLINDER)
        return sim_sweep_capsule_tris(ray, tris, list, n, best);
    bool has = false;
    for (uint32_t i = 0; i < n; i++) {
        sim_tri_hit h;
        if (sim_sweep_shape_tri(ray, &tris[list[i]], &h) && (!has || sim_tri_hit_before(&h, best))) {
            *best = h;
            has = true;
        }
    }
    return has;
}
static inline bool sim_contact_shape_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin,
                                         sim_tri_hit *hit)
{
    switch (shape.type) {
    case SIM_SHAPE_BOX: return sim_contact_box_tri(shape, pos, t, margin, hit);
    case SIM_SHAPE_CYLINDER: return sim_contact_cylinder_tri(shape, pos, t, margin, hit);
    default: return sim_contact_capsule_tri(shape, pos, t, margin, hit);
    }
}

/// The order of contact lists: deepest first, then by feature (triangle or
/// object id, type, index). Strict and total, so lists never depend on the
/// order contacts were found in.
static inline bool sim_contact_before(const sim_contact *a, const sim_contact *b)
{
    if (a->depth != b->depth)
        return a->depth > b->depth;
    if (a->feature.triangle != b->feature.triangle)
        return a->feature.triangle < b->feature.triangle;
    if (a->feature.type != b->feature.type)
        return a->feature.type < b->feature.type;
    return a->feature.index < b->feature.index;
}

/// A sweep that starts touching or overlapping (contact ct at the start):
/// only a motion going further in is a hit, at 0, with the contact's normal.
/// Shapes and triangles are convex, so a motion that does not go in only
/// separates them: no later contact with the same triangle exists either.
static inline bool sim_tri_hit_from_touch(const sim_sweep_ray *ray, const sim_tri_hit *ct, sim_tri_hit *hit)
{
    if (sim_v3_dot64(ct->normal, sim_dir_to_v3(ray->dir)) >= 0)
        return false;
    *hit = *ct;
    hit->start_overlap = ct->s > SIM_QUERY_TOLERANCE;
    hit->depth = ct->s;
    hit->s = 0;
    return true;
}

/// Ray against the triangle (both sides): distance along unit dir.
bool sim_ray_tri(sim_vec3 origin, sim_dir dir, sim_fx length, const sim_tri *t, sim_tri_hit *hit);

/// The face normal oriented toward point p (double-sided triangles); when p
/// lies in the plane, against `motion`.
sim_dir sim_tri_facing_normal(const sim_tri *t, sim_vec3 p, sim_dir motion);

/// Closest point on the triangle to p, with the feature it lies on.
sim_vec3 sim_tri_closest_point(const sim_tri *t, sim_vec3 p, sim_feature *feature);

#endif
