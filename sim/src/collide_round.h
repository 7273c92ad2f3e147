// keel: pieces shared by the two round character shapes (capsule and
// cylinder) against a triangle. MIT licence, see LICENSE.
//
// Both shapes are a vertical segment grown by a radius: a ball for the
// capsule, a horizontal disc for the cylinder. Their sides are the same (the
// segment grown horizontally), so the primitives for the side against an edge
// and against a corner are shared; only the ends differ (collide_capsule.c,
// collide_cylinder.c). Conventions are those of collide.h.
#ifndef KEEL_COLLIDE_ROUND_H
#define KEEL_COLLIDE_ROUND_H

#include "collide.h"

/// One sweep of a round shape against one triangle: the earliest hit so far.
typedef struct round_ctx {
    const sim_sweep_ray *ray;
    const sim_tri *t;
    sim_fx R;      ///< radius grown by the inflation
    bool touching; ///< the start lies inside some primitive: ask the contact
    bool has;
    sim_tri_hit best;
    /// The start lies in a face slab with its foot on the triangle, and the
    /// motion goes toward the plane (the capsule: see capsule_sweep).
    bool face_in;
    sim_tri_hit face_hit; ///< that touch as a hit at 0, with the face normal
} round_ctx;

/// The entry distance of a ray into a quadric given b (< 0) and its
/// discriminant disc = b^2 - a c, by the stable root c / (-b + sqrt(disc));
/// -1 when it misses (disc < 0) or enters beyond the ray's length.
static inline int64_t round_stable_root(const round_ctx *c, int64_t b, int64_t disc, int64_t cc)
{
    if (disc < 0)
        return -1;
    int64_t den = -b + sim_sqrt_ceil_q32(disc);
    int64_t s = cc / den;
    return s > c->ray->length ? -1 : s;
}

/// Offer a hit at distance s on a feature of c->t (buried features are
/// ignored; inactive ones report the face normal, or nothing when the motion
/// leaves the face).
void round_consider(round_ctx *c, sim_fx s, sim_vec3 normal, uint8_t type, int index, sim_vec3 point);

/// Ray from o against the cylinder of radius c->R around the segment
/// a + e*[0, len]; the ends are left to other primitives.
void round_prim_cylinder(round_ctx *c, sim_vec3 o, sim_vec3 a, sim_dir e, sim_fx len, uint8_t type, int index);

/// round_prim_cylinder with e = up (0, 1, 0): the same result, less work.
void round_prim_vertical(round_ctx *c, sim_vec3 o, sim_vec3 a, sim_fx len, uint8_t type, int index);

/// Distance travelled until a point at signed distance dist0 from a plane with
/// unit normal n comes within `half` of it; -1 when never, -2 when already
/// within. *sign: the side of the plane the point starts on.
int64_t round_slab_entry(const round_ctx *c, sim_fx dist0, sim_dir n, int64_t half, int *sign);

/// Whether q projects into the triangle (within `slack` of every edge).
bool round_in_triangle(const sim_tri *t, sim_vec3 q, sim_fx slack);
/// The same with a slack (>= 0) for each edge i (against inward[i]).
bool round_in_triangle_each(const sim_tri *t, sim_vec3 q, const sim_fx slack[3]);

/// Position along edge i (metres from v[i]) of the point whose horizontal
/// position matches p's; false for an (almost) vertical edge.
bool round_edge_param_horizontal(const sim_tri *t, int i, sim_vec3 p, int64_t *lambda);

/// Whether the vertical segment centre +- h reaches through the triangle's
/// plane (touching it counts): a penetration that no primitive sees.
bool round_segment_crosses(const sim_tri *t, sim_vec3 centre, sim_fx h);

/// The shape's side against edge i: the vertical parallelogram edge (+) [-h, h]
/// grown by c->R along the edge's horizontal perpendicular.
void round_prim_side(round_ctx *c, sim_vec3 o, sim_fx h, int i);

#endif
