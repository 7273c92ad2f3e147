// keel: upright capsule against a triangle. MIT licence, see LICENSE.
//
// Sweep. A capsule is a vertical segment S (centre +- h) grown by radius R. It
// touches triangle T when its centre enters T (+) (-S) (+) Ball(R). T (+) S is a
// convex polytope whose faces are T+h, T-h and the three vertical
// parallelograms edge_i (+) S, so the grown polytope is the union of:
//   - the two triangle slabs (T+-h grown by R),
//   - six edge cylinders and six vertex spheres (the edges and corners of
//     T+-h), i.e. the top and bottom spheres of the capsule against T,
//   - three parallelogram slabs (the capsule's side against an edge),
//   - three vertical cylinders (the capsule's side against a corner).
// The earliest entry over these primitives is the time of impact. Each
// primitive is solved in closed form in "distance along the unit direction",
// with the quadratic's stable root c / (-b + sqrt(b^2 - ac)) so that nothing is
// divided by a small leading coefficient.
//
// Contact. Closest points between the segment and the triangle (endpoints
// against the triangle, edges against the segment, and the segment crossing the
// face); the depth is R minus their distance.
#include "collide_round.h"

// How far beyond an inactive edge at a fold (SIM_TRI_EDGE0_FOLD) a face
// slab still counts, for an end of radius R: R / 32 >= R tan(theta / 2) for
// every fold theta up to SIM_FOLD_MAX_ANGLE (2.5 degrees). On the convex side
// of a ridge the end's centre lies over neither face while it is nearest the
// ridge (within theta of both normals); its foot on the nearer face is then
// at most R tan(theta / 2) beyond the edge. The slab grown that far is met
// no later than the ridge (the ridge lies in the face's plane), and at most
// R (1 / cos(theta) - 1), under 0.2 mm for R = 1 m, sooner. On the concave
// side an end that touches neither face can enter a face's slab while its
// foot still lies over the other face, and only later come over its own
// triangle, inside the slab by then: an end whose foot lies beyond the
// triangle when it enters the slab (or starts in it) solves the fold's edges
// and corners too (prim_face).
static sim_fx fold_slack(sim_fx R) { return (sim_fx)(((int64_t)R + 31) / 32); }

static bool in_face(const sim_tri *t, sim_vec3 q, sim_fx R)
{
    sim_fx slack[3];
    for (int i = 0; i < 3; i++)
        slack[i] = SIM_QUERY_TOLERANCE + (((t->flags >> (14 + i)) & 1u) ? fold_slack(R) : 0);
    return round_in_triangle_each(t, q, slack);
}

// The fold edges (bit i: edge i, with its corners) that a foot q outside the
// face slab's reach (in_face) lies beyond: the ones the end may still come
// over the triangle across.
static uint32_t beyond_fold(const sim_tri *t, sim_vec3 q, sim_fx R)
{
    uint32_t m = 0;
    for (int i = 0; i < 3; i++) {
        if (!((t->flags >> (14 + i)) & 1u))
            continue;
        const int64_t lim = -(2 * (int64_t)(SIM_QUERY_TOLERANCE + fold_slack(R)) + 1) * ((int64_t)1 << 29);
        if (sim_dir_dot_v3_raw(t->inward[i], q) - t->in_at[i] <= lim)
            m |= 1u << i;
    }
    return m;
}

// Ray from o against a sphere of radius c->R around `centre`.
static void prim_sphere(round_ctx *c, sim_vec3 o, sim_vec3 centre, int vertex)
{
    sim_vec3 w = sim_v3_sub(o, centre);
    int64_t reach = (int64_t)c->R + c->ray->length + 1;
    int64_t cc = sim_v3_len_sq64(w) - (int64_t)c->R * c->R;
    if (cc <= 0) {
        c->touching = true;
        return;
    }
    if (sim_v3_len_sq64(w) > reach * reach)
        return;
    int64_t b = sim_shr_round_s64(sim_dir_dot_v3_raw(c->ray->dir, w), 30); // Q16.16
    if (b >= 0)
        return;
    int64_t s = round_stable_root(c, b, b * b - cc, cc);
    if (s < 0)
        return;
    sim_vec3 at = sim_v3_add(w, sim_dir_scale(c->ray->dir, (sim_fx)s));
    round_consider(c, (sim_fx)s, sim_v3_normalize(at), SIM_FEATURE_VERTEX, vertex, centre);
}

// The capsule's bottom or top sphere (centre o, at dist0 from the plane:
// sim_dir_dot_v3(t->n, o - t->v[0])) against the face. Returns the fold
// edges (bit i: edge i and its corners) the caller must solve exactly too,
// for a sphere that enters the slab or starts within it with its foot
// beyond the triangle: over a fold's slack only (fold_slack), it may lie
// just outside the ridge or peak the slab stands in for (between the slab
// and the true surface, a shell up to R (1 / cos - 1) thick), where the
// contact finds nothing and the slab no entry (every fold edge then);
// further out, it may come over the triangle later across a fold edge it
// lies beyond, inside the slab by then (a concave fold). A start in the
// slab over the triangle with the motion toward the plane is noted in
// c->face_in.
static uint32_t prim_face(round_ctx *c, sim_vec3 o, sim_fx dist0)
{
    const sim_tri *t = c->t;
    int sg;
    int64_t s = round_slab_entry(c, dist0, t->n, c->R, &sg);
    bool fold = (t->flags & (7u << 14)) != 0;
    if (s == -2) {
        sim_vec3 q = sim_v3_sub(o, sim_dir_scale(t->n, dist0));
        if (!in_face(t, q, c->R))
            return fold ? beyond_fold(t, q, c->R) : 0;
        c->touching = true;
        // Only a touch (within the tolerance): deeper, the contact's
        // features are far enough apart to judge the motion.
        int64_t dn = sim_dir_dot(t->n, c->ray->dir);
        int64_t depth = (int64_t)c->R - (dist0 < 0 ? -(int64_t)dist0 : dist0) - c->ray->inflate;
        if (!c->face_in && depth <= SIM_QUERY_TOLERANCE && (sg > 0 ? dn < 0 : dn > 0)) {
            c->face_in = true;
            sim_dir n = sg > 0 ? t->n : sim_dir_neg(t->n);
            c->face_hit = (sim_tri_hit){0, sim_dir_to_v3(n), q, {t->id, SIM_FEATURE_FACE, 0}, false, (sim_fx)depth};
        }
        return fold && !round_in_triangle(t, q, SIM_QUERY_TOLERANCE) ? 7u : 0;
    }
    if (s < 0)
        return 0;
    sim_vec3 at = sim_v3_add(o, sim_dir_scale(c->ray->dir, (sim_fx)s));
    sim_vec3 q = sim_v3_sub(at, sim_dir_scale(t->n, sim_dir_dot_v3(t->n, sim_v3_sub(at, t->v[0]))));
    if (!in_face(t, q, c->R))
        return fold ? beyond_fold(t, q, c->R) : 0;
    sim_dir n = sg > 0 ? t->n : sim_dir_neg(t->n);
    round_consider(c, (sim_fx)s, sim_dir_to_v3(n), SIM_FEATURE_FACE, 0, q);
    return 0;
}

// How far the capsule reaches along the unit normal n: radius plus the
// segment's projection.
static int64_t reach_along(const sim_tri *t, sim_fx radius, sim_fx h)
{
    int64_t ny = t->n.y < 0 ? -(int64_t)t->n.y : t->n.y;
    return radius + ((h * ny) >> 30) + 1;
}

#define END_CLEARANCE ((int64_t)SIM_FX_ONE / 256)

// Every edge and corner of t is internal to a flat surface or buried: the
// sweep meets only its face slabs (and asks the contact only when the
// segment crosses its plane).
// (flags, collide.h: bits 0-5 the inactive edges and corners, bits 6-11
// the buried ones, in the same order.) An inactive edge at a fold is dead
// too: the face slabs reach over it instead (fold_slack).
static bool features_all_dead(const sim_tri *t)
{
    uint32_t f = t->flags;
    return ((f | (f >> 6)) & 0x3fu) == 0x3fu;
}

// The ends' distances to the plane, sim_dir_dot_v3(t->n, end - t->v[0]) for
// the bottom (0) and the top (1), unrounded (Q18.46), from the centre's:
// they are it -+ h n.y, exactly (coordinates within the world's range:
// every difference is exact). end_dists rounds them as sim_dir_dot_v3 does
// (every distance fits sim_fx).
static void end_dists_raw(int64_t dist0_raw, sim_dir n, sim_fx h, int64_t raw[2])
{
    int64_t hy = (int64_t)h * n.y;
    raw[0] = dist0_raw - hy;
    raw[1] = dist0_raw + hy;
}

static void end_dists(const int64_t raw[2], sim_fx e[2])
{
    e[0] = (sim_fx)sim_shr_round_s64(raw[0], 30);
    e[1] = (sim_fx)sim_shr_round_s64(raw[1], 30);
}

// round_segment_crosses, from the ends' unrounded distances, without
// rounding them: it is (e0 <= 0 && e1 >= 0) || (e0 >= 0 && e1 <= 0) for
// the rounded e0, e1, which fails exactly when both are above zero or both
// below. sim_shr_round_s64(v, 30) (to nearest, ties away from zero) is
// above zero exactly when v >= 2^29 and below exactly when v <= -2^29.
static bool segment_crosses_raw(const int64_t raw[2])
{
    const int64_t half = (int64_t)1 << 29;
    return !((raw[0] >= half && raw[1] >= half) || (raw[0] <= -half && raw[1] <= -half));
}

// Whether the vertical segment centre +- h, swept from start by d, stays
// beyond one of the triangle's edge lines (against inward[i]) by more than
// SIM_QUERY_TOLERANCE and the clearance all along the motion. A face slab's
// contact point is the projection of an end's centre on the plane; inward[i]
// lies in that plane (to within 2^-16, times a distance of at most R), so
// that point's position along inward[i] is the centre's, give or take a few
// units of the last place: round_in_triangle cannot take it.
static bool beyond_an_edge(const sim_tri *t, const int64_t start[3], const int64_t d[3], sim_fx h, sim_fx R)
{
    const int64_t one46 = (int64_t)1 << 30;
    for (int i = 0; i < 3; i++) {
        // a fold's edge: the face slab reaches fold_slack further
        int64_t fold = ((t->flags >> (14 + i)) & 1u) ? fold_slack(R) : 0;
        const int64_t margin = ((int64_t)SIM_QUERY_TOLERANCE + END_CLEARANCE + fold) * one46;
        sim_dir a = t->inward[i];
        int64_t p0 = a.x * start[0] + a.y * start[1] + a.z * start[2] - t->in_at[i];
        if (p0 >= -margin) // then p0 >= lo too: most edges, found without lo
            continue;
        int64_t ay = a.y < 0 ? -(int64_t)a.y : a.y;
        int64_t lo = -(margin + (int64_t)h * ay);
        if (p0 >= lo)
            continue;
        if (p0 + a.x * d[0] + a.y * d[1] + a.z * d[2] < lo)
            return true;
    }
    return false;
}

// What the sweep of one ray computes once for all its triangles.
typedef struct capsule_ray {
    const sim_sweep_ray *ray;
    sim_fx R;         // radius, inflated
    sim_fx h;         // the segment's half length
    int64_t start[3]; // ray->start, widened
    int64_t d[3];     // ray->displacement, widened
} capsule_ray;

static capsule_ray capsule_ray_of(const sim_sweep_ray *ray)
{
    return (capsule_ray){ray,
                         ray->shape.radius + ray->inflate,
                         sim_shape_segment_half(ray->shape),
                         {ray->start.x, ray->start.y, ray->start.z},
                         {ray->displacement.x, ray->displacement.y, ray->displacement.z}};
}

// What the sweep of t computes first: the centre's distance to the plane,
// the ends' unrounded (end_dists_raw), whether the segment crosses it,
// whether every feature is dead.
typedef struct capsule_tri {
    int64_t dist0_raw;
    int64_t e_raw[2];
    bool crosses;
    bool dead;
} capsule_tri;

// Fills *ct; true when t is a piece of a flat surface (a floor tile) that
// the segment does not cross and whose inside no end's centre passes over:
// it cannot be touched.
static inline bool capsule_tile_out(const capsule_ray *cr, const sim_tri *t, capsule_tri *ct)
{
    // The centre's distance to the plane in Q18.46, exact (n_at, collide.h).
    ct->dist0_raw = sim_dir_dot_v3_raw(t->n, cr->ray->start) - t->n_at;
    // A piece of a flat surface (a floor tile) that the segment does not
    // cross: only an end's centre passing over its inside can touch it.
    // (First: the tiles around the one a character stands on are most of
    // what its probes are handed.)
    end_dists_raw(ct->dist0_raw, t->n, cr->h, ct->e_raw);
    ct->crosses = cr->h > 0 && segment_crosses_raw(ct->e_raw);
    ct->dead = features_all_dead(t);
    return ct->dead && !ct->crosses && beyond_an_edge(t, cr->start, cr->d, cr->h, cr->R);
}

// The sweep of t past capsule_tile_out.
static bool capsule_sweep(const capsule_ray *cr, const sim_tri *t, const capsule_tri *pre, sim_tri_hit *hit)
{
    const sim_sweep_ray *ray = cr->ray;
    sim_fx R = cr->R, h = cr->h;
    int64_t dist0_raw = pre->dist0_raw;
    sim_fx e[2];
    end_dists(pre->e_raw, e);
    bool crosses = pre->crosses, dead = pre->dead;
    // The whole swept capsule on one side of the triangle's plane, beyond its
    // reach: no contact. This drops the floor under a walking character (a
    // skin away) before any of the work below.
    {
        int64_t reach = reach_along(t, R, h);
        int64_t d0 = sim_fx_from_s64_checked(sim_shr_round_s64(dist0_raw, 30));
        int64_t d1 = d0 + sim_dir_dot_v3(t->n, ray->displacement);
        if ((d0 > reach && d1 > reach) || (d0 < -reach && d1 < -reach))
            return false;
    }
    // Beyond one of its edges (or past the opposite corner) by more than the
    // clearance all along the motion: every primitive below lies within R of
    // the triangle, and the contact asked when touching measures distances
    // between points of the two, so none of it could hit. This drops the
    // triangles whose bounds, but not themselves, come near the capsule. (A
    // flat tile that got here is mostly one under the capsule: skipping the
    // test costs less than it saves there, and changes no answer.)
    if (!dead && sim_tri_apart(t, ray->start, ray->displacement, h, R))
        return false;
    round_ctx c = {ray, t, R, false, false, {0}, false, {0}};
    sim_vec3 bottom = sim_v3_sub(ray->start, sim_v3(0, h, 0));
    sim_vec3 top = sim_v3_add(ray->start, sim_v3(0, h, 0));

    // An internal (inactive or buried) edge or corner lies inside a surface
    // that other triangles' faces continue: the grown union of those faces
    // has no boundary there, so its pieces can never be entered first. On a
    // tessellated floor that leaves only the two face slabs to solve. At a
    // fold the slabs reach over the edge (fold_slack).
    bool edge_live[3], vert_live[3];
    for (int i = 0; i < 3; i++) {
        edge_live[i] =
            !sim_tri_feature_inactive(t, SIM_FEATURE_EDGE, i) && !sim_tri_feature_buried(t, SIM_FEATURE_EDGE, i);
        vert_live[i] =
            !sim_tri_feature_inactive(t, SIM_FEATURE_VERTEX, i) && !sim_tri_feature_buried(t, SIM_FEATURE_VERTEX, i);
    }
    int ends = h > 0 ? 2 : 1;
    sim_fx dn = sim_dir_dot_v3(t->n, ray->displacement);
    for (int k = 0; k < ends; k++) {
        sim_vec3 o = k == 0 ? bottom : top;
        // Everything this end's sphere can meet (the face slab, the edges'
        // cylinders, the corners' spheres) lies within R of the plane. A
        // sphere that stays further than that on one side over the whole
        // motion meets none of it: skip them (the head of a character probing
        // the floor). END_CLEARANCE, 4 mm beyond R, is hundreds of times the
        // rounding of the primitives, so what is skipped would have missed.
        {
            int64_t e0 = e[k], e1 = e0 + dn;
            int64_t clear = (int64_t)c.R + END_CLEARANCE;
            if ((e0 > clear && e1 > clear) || (e0 < -clear && e1 < -clear))
                continue;
        }
        // In a fold's shell (prim_face) its dead edges and corners are
        // solved too: they report the face normal (round_consider).
        uint32_t solve = prim_face(&c, o, e[k]);
        for (int i = 0; i < 3; i++) {
            if (edge_live[i] || ((solve >> i) & (t->flags >> (14 + i)) & 1u))
                round_prim_cylinder(&c, o, t->v[i], t->edir[i], t->elen[i], SIM_FEATURE_EDGE, i);
            // corner i ends edges i and i - 1
            uint32_t near = (solve >> i) | (solve >> ((i + 2) % 3));
            if (vert_live[i] || (near & (t->flags >> (17 + i)) & 1u))
                prim_sphere(&c, o, t->v[i], i);
        }
    }
    if (h > 0) {
        for (int i = 0; i < 3; i++) {
            if (edge_live[i])
                round_prim_side(&c, ray->start, h, i);
            if (vert_live[i]) {
                sim_vec3 base = sim_v3_sub(t->v[i], sim_v3(0, h, 0));
                round_prim_vertical(&c, ray->start, base, 2 * h, SIM_FEATURE_VERTEX, i);
            }
        }
        if (crosses)
            c.touching = true;
    }
    if (c.touching) {
        sim_tri_hit ct;
        // A primitive can take the start as inside it, within its rounding,
        // while the contact finds the capsule a few units further than the
        // inflation: that primitive's entry, a moment later, is never
        // solved, so the contact looks half as far again before giving up.
        bool touch = sim_contact_capsule_tri(ray->shape, ray->start, t, ray->inflate, &ct) ||
                     sim_contact_capsule_tri(ray->shape, ray->start, t, ray->inflate + (ray->inflate + 1) / 2, &ct);
        if (touch) {
            if (sim_tri_hit_from_touch(ray, &ct, hit))
                return true;
            // The contact's normal is that of the nearest feature it found,
            // and points within rounding of each other can lie on features
            // whose normals differ by more than a grazing motion's angle to
            // the face (a capsule touching a face near a corner, sliding up
            // its slope): a motion toward a face whose slab holds the start
            // over the triangle goes in.
            if (c.face_in) {
                *hit = c.face_hit; // a touch: never deeper than the tolerance
                return true;
            }
            return false;
        }
    }
    if (c.has)
        *hit = c.best;
    return c.has;
}

bool sim_sweep_capsule_tris(const sim_sweep_ray *ray, const sim_tri *tris, const uint32_t *list, uint32_t n,
                            sim_tri_hit *best)
{
    capsule_ray cr = capsule_ray_of(ray);
    bool has = false;
    for (uint32_t i = 0; i < n; i++) {
        const sim_tri *t = &tris[list[i]];
        capsule_tri ct;
        sim_tri_hit h;
        if (capsule_tile_out(&cr, t, &ct) || !capsule_sweep(&cr, t, &ct, &h))
            continue;
        if (!has || sim_tri_hit_before(&h, best)) {
            *best = h;
            has = true;
        }
    }
    return has;
}

bool sim_sweep_capsule_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit)
{
    const uint32_t only = 0;
    return sim_sweep_capsule_tris(ray, t, &only, 1, hit);
}

// ---- contact -----------------------------------------------------------------

typedef struct closest {
    int64_t d2;
    sim_vec3 on_seg;
    sim_vec3 on_tri;
    sim_feature f;
} closest;

static void keep(closest *best, sim_vec3 on_seg, sim_vec3 on_tri, sim_feature f)
{
    int64_t d2 = sim_v3_len_sq64(sim_v3_sub(on_seg, on_tri));
    if (d2 < best->d2 || (d2 == best->d2 && f.type < best->f.type)) {
        best->d2 = d2;
        best->on_seg = on_seg;
        best->on_tri = on_tri;
        best->f = f;
    }
}

static sim_fx clamp64(int64_t v, int64_t lo, int64_t hi) { return (sim_fx)(v < lo ? lo : (v > hi ? hi : v)); }

bool sim_contact_capsule_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin, sim_tri_hit *hit)
{
    sim_fx R = shape.radius;
    sim_fx h = sim_shape_segment_half(shape);
    {
        int64_t reach = reach_along(t, R, h) + margin;
        int64_t d = sim_dir_dot_v3(t->n, sim_v3_sub(pos, t->v[0]));
        if (d > reach || d < -reach)
            return false;
    }
    // Further than R + margin (and the clearance) beyond an edge: the
    // distances below, between points of the segment and the triangle, are
    // at least that.
    if (sim_tri_apart(t, pos, sim_v3_zero(), h, (sim_fx)((int64_t)R + margin)))
        return false;
    sim_vec3 bottom = sim_v3_sub(pos, sim_v3(0, h, 0));
    sim_vec3 top = sim_v3_add(pos, sim_v3(0, h, 0));
    sim_dir nf = sim_tri_facing_normal(t, pos, (sim_dir){0, -SIM_DIR_ONE, 0});
    sim_fx db = sim_dir_dot_v3(nf, sim_v3_sub(bottom, t->v[0]));
    sim_fx dt = sim_dir_dot_v3(nf, sim_v3_sub(top, t->v[0]));
    sim_fx low = db < dt ? db : dt; // the segment's deepest point along the facing normal

    closest best = {INT64_MAX, pos, pos, {t->id, SIM_FEATURE_FACE, 0}};
    if (h > 0 && low <= 0 && db != dt) {
        // The segment reaches through the plane; where it crosses decides.
        int64_t num = (int64_t)db * (2 * (int64_t)h);
        sim_fx y = (sim_fx)((int64_t)bottom.y + num / ((int64_t)db - dt));
        sim_vec3 x = sim_v3(pos.x, y, pos.z);
        if (round_in_triangle(t, x, 0)) {
            hit->s = R - low;
            hit->normal = sim_dir_to_v3(nf);
            hit->point = x;
            hit->feature = best.f;
            hit->start_overlap = false;
            hit->depth = 0;
            return true;
        }
    }
    sim_feature f;
    sim_vec3 q = sim_tri_closest_point(t, bottom, &f);
    keep(&best, bottom, q, f);
    if (h > 0) {
        q = sim_tri_closest_point(t, top, &f);
        keep(&best, top, q, f);
        for (int i = 0; i < 3; i++) {
            sim_dir e = t->edir[i];
            sim_vec3 w = sim_v3_sub(t->v[i], pos);
            int64_t lam;
            if (!round_edge_param_horizontal(t, i, pos, &lam))
                lam = -(int64_t)sim_dir_dot_v3(e, w);
            sim_fx l1 = clamp64(lam, 0, t->elen[i]);
            sim_vec3 p1 = sim_v3_add(t->v[i], sim_dir_scale(e, l1));
            sim_fx s1 = clamp64((int64_t)p1.y - pos.y, -(int64_t)h, h);
            sim_vec3 segp = sim_v3(pos.x, pos.y + s1, pos.z);
            sim_fx l2 = clamp64(sim_dir_dot_v3(e, sim_v3_sub(segp, t->v[i])), 0, t->elen[i]);
            sim_vec3 p2 = sim_v3_add(t->v[i], sim_dir_scale(e, l2));
            sim_fx s2 = clamp64((int64_t)p2.y - pos.y, -(int64_t)h, h);
            segp = sim_v3(pos.x, pos.y + s2, pos.z);
            sim_feature fe = {t->id, SIM_FEATURE_EDGE, (uint8_t)i};
            if (l2 == 0) {
                fe.type = SIM_FEATURE_VERTEX;
            } else if (l2 == t->elen[i]) {
                fe.type = SIM_FEATURE_VERTEX;
                fe.index = (uint8_t)((i + 1) % 3);
            }
            keep(&best, segp, p2, fe);
        }
    }
    uint64_t dist = sim_isqrt_u64((uint64_t)best.d2);
    // A buried edge or corner is reported like any other: an overlap is
    // never dropped (only the sweeps skip it, where a surface covers it).
    if ((int64_t)dist > (int64_t)R + margin)
        return false;
    hit->s = (sim_fx)((int64_t)R - (int64_t)dist);
    hit->point = best.on_tri;
    hit->feature = best.f;
    hit->start_overlap = false;
    hit->depth = 0;
    bool inactive = sim_tri_feature_inactive(t, best.f.type, best.f.index);
    // On an internal edge or corner the surface's own normal is the truth,
    // but the depth stays the true distance: a neighbour only nearly coplanar
    // must not turn a near miss into a deep plane penetration.
    if (dist == 0) {
        hit->normal = sim_dir_to_v3(nf);
        hit->s = R - low;
    } else if (inactive || best.f.type == SIM_FEATURE_FACE) {
        hit->normal = sim_dir_to_v3(nf);
    } else {
        hit->normal = sim_v3_normalize(sim_v3_sub(best.on_seg, best.on_tri));
    }
    return true;
}
