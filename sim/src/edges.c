// keel: internal-edge classification. MIT licence, see LICENSE.
//
// A shape sliding over a flat floor made of many triangles must never touch an
// edge between two of them ("ghost bumps"). Shared vertices cannot be relied
// upon: real levels are triangle soup with T-junctions, and boxes laid side by
// side share no vertices at all. So edges are judged by geometry alone: for
// edge E of triangle T, every edge of another triangle that lies on E's line
// and overlaps it contributes a span of E.
//
// - Inactive: E is covered along its whole length by triangles coplanar with T
//   (either facing) that continue the surface beyond E. Hits there report T's
//   face normal.
//   When one of those triangles is not flat with T (a fold of up to
//   coplanar_cos, more than SIM_FOLD_FLAT_ANGLE) the edge is also a fold:
//   on its convex side a shape meets the ridge before either face, so the
//   sweeps still solve it (and its two corners), with the face normal.
// - Buried: E is covered on BOTH sides by a flat surface of other triangles
//   not coplanar with T (T's side face where two boxes touch: its top edge lies
//   inside the boxes' joint top). That surface reports any contact itself, so
//   hits on E are ignored.
// A vertex is inactive (buried) when both of T's edges meeting there are and
// no other triangle has an active (unburied) edge through it
// (world_vertices.c). A triangle whose edges are all inactive or buried, at
// least one buried, and whose area is covered by coplanar triangles facing
// the other way (the face of the box it touches) lies between two solids and
// is dropped from the world.
//
// Work is bounded whatever the level holds. Each query (around an edge, a
// vertex, or over a face that may be buried) lists its triangles before any is
// judged and gives up in a crowd: more than SIM_EDGES_MAX_TESTS box tests, or
// more triangles than SIM_EDGES_MAX_HITS (SIM_EDGES_MAX_HITS_NEAR around a
// short edge or a vertex). It then falls back to the safe answer: the
// triangle keeps all three edges active, the vertex stays active, the
// triangle is kept. Active is never a pass-through, at worst a ghost bump, and
// the real maps stay several times below every limit, so their classification
// is the exhaustive one.
#include <stdlib.h>

#include "world_classify.h"

#define MAX_MATCHES 64

typedef struct match {
    sim_dir n;    // the neighbour's normal
    sim_vec3 opp; // its vertex off the edge
    sim_fx a, b;  // the span of E it covers, in metres from E's start
} match;

// One query per edge gathers the triangles with an edge on its line.
typedef struct edge_ctx {
    const sim_world *w;
    const classifier *k;
    const sim_tri *t;
    int edge;
    sim_vec3 ea, ee; // the edge's ends, t->v[edge] and t->v[edge + 1]
    sim_dir edir;    // t->edir[edge]
    sim_fx elen;     // t->elen[edge]
    sim_aabb eb;     // edge_box(t, edge, weld distance)
    int64_t tol_sq;  // the weld distance squared
    uint32_t self;   // t's index in w->tris
    bool quick;      // the weld distance is in [0, 2^20]: on_line's bounds hold
    int axis;        // with quick, the axis edir lies along (+-2^30 there, 0 elsewhere), else -1
    int64_t far;     // on_line: (tol + 16) 2^30
    int64_t near_sq; // on_line: (tol - 16)^2, or -1 when tol < 16
    int64_t flat;    // in_plane: (4 tol + 1) 2^29, or -1 when tol < 0
    match m[MAX_MATCHES];
    int count;
} edge_ctx;

#define MAX_TWINS 16

// The coplanar opposite-facing triangles ("twins": where two solids touch),
// gathered only for a triangle whose edges could make it buried.
typedef struct twin_ctx {
    const sim_world *w;
    const classifier *k;
    const sim_tri *t;
    const sim_tri *twin[MAX_TWINS];
    int twins;
} twin_ctx;

// The reference test: p's offset from the edge's line, w - edir (edir . w)
// with w = p - ea, rounded as written, within the weld distance. *along is
// edir . w.
static bool on_line_exact(const edge_ctx *c, sim_vec3 p, sim_fx *along)
{
    sim_vec3 w = sim_v3_sub(p, c->ea);
    *along = sim_dir_dot_v3(c->edir, w);
    sim_vec3 perp = sim_v3_sub(w, sim_dir_scale(c->edir, *along));
    return sim_v3_len_sq64(perp) <= c->tol_sq;
}

// on_line_exact's answer, mostly without its roundings (when c->quick). The
// exact cross product X = w x edir (Q18.46: corners, boxes' included, lie
// within 6,000 m, so |w| < 2^31 raw; |edir| < 2^30 + 2^2; each term below
// 2^61) gives the distance |X| / |edir| from the line. on_line_exact's offset
// differs from the true one by under 10 raw units (half a unit from each
// rounding, and |w| times |edir|^2 - 1, below 2^-28 for a direction unit
// within 2^-29), so a component of X beyond (tol + 16) 2^30 means its offset
// exceeds tol, and |X| within (tol - 16) 2^30 (each component's magnitude
// rounded up to whole raw units) that it does not. Only between those does
// the reference decide. Built with KEEL_VERIFY_EDGES, every answer is checked
// against the reference.
static inline bool on_line(const edge_ctx *c, sim_vec3 p, sim_fx *along)
{
    if (!c->quick)
        return on_line_exact(c, p, along);
    int64_t wx = (int64_t)p.x - c->ea.x, wy = (int64_t)p.y - c->ea.y, wz = (int64_t)p.z - c->ea.z;
    int64_t ex = c->edir.x, ey = c->edir.y, ez = c->edir.z;
    int64_t x = wy * ez - wz * ey, y = wz * ex - wx * ez, z = wx * ey - wy * ex;
    uint64_t span = 2 * (uint64_t)c->far; // |v| > far exactly when v + far > 2 far (unsigned)
    bool on;
    if ((uint64_t)(x + c->far) > span || (uint64_t)(y + c->far) > span || (uint64_t)(z + c->far) > span) {
        on = false;
    } else {
        int64_t ux = ((x < 0 ? -x : x) >> 30) + 1, uy = ((y < 0 ? -y : y) >> 30) + 1, uz = ((z < 0 ? -z : z) >> 30) + 1;
        if (ux * ux + uy * uy + uz * uz > c->near_sq)
            return on_line_exact(c, p, along);
        // sim_dir_dot_v3 of w (|edir . w| < 2^31 raw: no clamp)
        *along = (sim_fx)sim_shr_round_s64(ex * wx + ey * wy + ez * wz, 30);
        on = true;
    }
#ifdef KEEL_VERIFY_EDGES
    sim_fx ref_along;
    if (on_line_exact(c, p, &ref_along) != on || (on && ref_along != *along))
        abort();
#endif
    return on;
}

// The box around edge e of t, grown by the weld distance: every triangle with
// an edge on e's line that overlaps e meets it.
static inline sim_aabb edge_box(const sim_tri *t, int e, sim_fx tol)
{
    sim_aabb eb = sim_aabb_union(sim_aabb_of_point(t->v[e]), sim_aabb_of_point(t->v[(e + 1) % 3]));
    return sim_aabb_expand(eb, sim_v3(tol, tol, tol));
}

// on_line of n's corner j, judged once for the two edges of n that meet there:
// on[j] is -1 until it is.
static inline bool corner_on_line(const edge_ctx *c, const cls_tri *n, int j, int8_t *on, sim_fx *along)
{
    if (on[j] < 0)
        on[j] = on_line(c, n->v[j], &along[j]);
    return on[j] > 0;
}

static int32_t dir_comp(sim_dir d, int axis) { return axis == 0 ? d.x : (axis == 1 ? d.y : d.z); }

// on_line of every corner of n for an edge along an axis (c->axis): there
// on_line_exact's offset is exact, w with its component along the axis
// zeroed (sim_dir_dot_v3 and sim_dir_scale of +-2^30 round nothing), and
// its `along` that component, signed as edir. False when no two corners are
// on the line: then no edge of n can match.
static bool axis_corners_on_line(const edge_ctx *c, const cls_tri *n, int8_t *on, sim_fx *along)
{
    int a = c->axis, b = a == 2 ? 0 : a + 1, d = b == 2 ? 0 : b + 1;
    int64_t ea = sim_v3_comp(c->ea, a), eb = sim_v3_comp(c->ea, b), ed = sim_v3_comp(c->ea, d);
    bool back = dir_comp(c->edir, a) < 0;
    int count = 0;
    for (int j = 0; j < 3; j++) {
        int64_t wa = sim_v3_comp(n->v[j], a) - ea, wb = sim_v3_comp(n->v[j], b) - eb, wd = sim_v3_comp(n->v[j], d) - ed;
        on[j] = wb * wb + wd * wd <= c->tol_sq;
        along[j] = (sim_fx)(back ? -wa : wa);
        count += on[j];
#ifdef KEEL_VERIFY_EDGES
        sim_fx ref_along;
        if (on_line_exact(c, n->v[j], &ref_along) != on[j] || (on[j] && ref_along != along[j]))
            abort();
#endif
    }
    return count >= 2;
}

static void match_edge(edge_ctx *c, const cls_tri *n)
{
    const sim_aabb *eb = &c->eb;
    sim_vec3 ea = c->ea, ee = c->ee;
    int8_t on[3] = {-1, -1, -1};
    sim_fx along[3] = {0, 0, 0};
    if (c->axis >= 0 && !axis_corners_on_line(c, n, on, along))
        return; // an edge of n matches only with both its corners on the line
    for (int j = 0; j < 3; j++) {
        int j1 = j == 2 ? 0 : j + 1;
        sim_vec3 na = n->v[j], ne = n->v[j1];
        // The box of n's edge against eb. A shared edge lies inside eb (when
        // the weld distance is not negative): only edges in it can be.
        bool meets = sim_fx_min(na.x, ne.x) <= eb->max.x && sim_fx_max(na.x, ne.x) >= eb->min.x &&
                     sim_fx_min(na.y, ne.y) <= eb->max.y && sim_fx_max(na.y, ne.y) >= eb->min.y &&
                     sim_fx_min(na.z, ne.z) <= eb->max.z && sim_fx_max(na.z, ne.z) >= eb->min.z;
        if (!meets && c->quick)
            continue;
        // Meshes with shared vertices: the same edge, either way round.
        if ((sim_v3_eq(na, ea) && sim_v3_eq(ne, ee)) || (sim_v3_eq(na, ee) && sim_v3_eq(ne, ea))) {
            if (c->count < MAX_MATCHES)
                c->m[c->count++] = (match){n->n, n->v[3 - j - j1], 0, c->elen};
            continue;
        }
        if (!meets || !corner_on_line(c, n, j, on, along) || !corner_on_line(c, n, j1, on, along))
            continue;
        sim_fx a = along[j], b = along[j1];
        if (a > b) {
            sim_fx x = a;
            a = b;
            b = x;
        }
        if (b <= 0 || a >= c->elen)
            continue;
        if (c->count < MAX_MATCHES)
            c->m[c->count++] = (match){n->n, n->v[3 - j - j1], a, b};
    }
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// Is t's vertex j (nearly) in n's plane?
static inline bool in_plane(const sim_world *w, const sim_tri *t, int j, const cls_tri *n)
{
    int64_t tol = 2 * (int64_t)w->def.weld_distance;
    sim_fx d = sim_dir_dot_v3(n->n, sim_v3_sub(t->v[j], n->v[0]));
    return d <= tol && d >= -tol;
}

// in_plane of t's corner j, in the edge's query: n . (t->v[j] - n->v[0])
// (Q18.46, exact: every term below 2^61) rounded to Q16.16 is within twice
// the weld distance when |raw| < (4 tol + 1) 2^29 (c->flat; half-way rounds
// away from zero).
static inline bool edge_in_plane(const edge_ctx *c, const cls_tri *n, int j)
{
    sim_vec3 p = c->t->v[j];
    int64_t d = (int64_t)n->n.x * ((int64_t)p.x - n->v[0].x) + (int64_t)n->n.y * ((int64_t)p.y - n->v[0].y) +
                (int64_t)n->n.z * ((int64_t)p.z - n->v[0].z);
    bool in = (d < 0 ? -d : d) < c->flat;
#ifdef KEEL_VERIFY_EDGES
    if (in != in_plane(c->w, c->t, j, n))
        abort();
#endif
    return in;
}

static void visit_edge(edge_ctx *c, uint32_t i)
{
    if (i == c->self)
        return;
    // An edge of n can only lie on the edge's line if that line lies in n's
    // plane: both of the edge's ends must be (nearly) in it.
    const cls_tri *cn = &c->k->ct[i];
    if (edge_in_plane(c, cn, c->edge) && edge_in_plane(c, cn, c->edge == 2 ? 0 : c->edge + 1))
        match_edge(c, cn);
}

static void visit_twin(twin_ctx *c, uint32_t i)
{
    const sim_tri *t = c->t, *n = &c->w->tris[i];
    if (n == t)
        return;
    const cls_tri *cn = &c->k->ct[i];
    if (c->twins < MAX_TWINS && in_plane(c->w, t, 0, cn) && in_plane(c->w, t, 1, cn) && in_plane(c->w, t, 2, cn) &&
        sim_dir_dot(t->n, cn->n) <= -c->w->def.coplanar_cos)
        c->twin[c->twins++] = n;
}

static bool coplanar(const sim_world *w, sim_dir a, sim_dir b)
{
    return sim_fx_abs(sim_dir_dot(a, b)) >= w->def.coplanar_cos;
}

// Do the selected spans cover [0, len] (within tol)? Sorted in place.
static bool covered(match *spans, int count, sim_fx len, sim_fx tol)
{
    for (int i = 1; i < count; i++) {
        match v = spans[i];
        int j = i;
        while (j > 0 && (spans[j - 1].a > v.a || (spans[j - 1].a == v.a && spans[j - 1].b > v.b))) {
            spans[j] = spans[j - 1];
            j--;
        }
        spans[j] = v;
    }
    int64_t reach = tol;
    for (int i = 0; i < count; i++) {
        if (spans[i].a > reach + tol)
            return false;
        if (spans[i].b > reach)
            reach = spans[i].b;
    }
    return count > 0 && reach >= (int64_t)len - tol;
}

// Side of the edge (in the plane with normal n) that point p lies on.
static int side_of(const sim_tri *t, int e, sim_dir n, sim_vec3 p)
{
    sim_vec3 nv = sim_dir_to_v3(n);
    sim_vec3 ev = sim_dir_to_v3(t->edir[e]);
    int64_t x = (int64_t)nv.y * ev.z - (int64_t)nv.z * ev.y;
    int64_t y = (int64_t)nv.z * ev.x - (int64_t)nv.x * ev.z;
    int64_t z = (int64_t)nv.x * ev.y - (int64_t)nv.y * ev.x;
    sim_dir m = sim_dir_from_s64(x, y, z);
    sim_fx d = sim_dir_dot_v3(m, sim_v3_sub(p, t->v[e]));
    return d > 0 ? 1 : (d < 0 ? -1 : 0);
}

// 1 - |a . b| of two unit normals (either facing), exact in Q4.60: each
// product is below 2^60, the sum below 2^62. Compared with
// SIM_FOLD_FLAT_ANGLE and SIM_FOLD_MAX_ANGLE (collide.h).
static int64_t fold_of(sim_dir a, sim_dir b)
{
    int64_t d = (int64_t)a.x * b.x + (int64_t)a.y * b.y + (int64_t)a.z * b.z;
    return ((int64_t)1 << 60) - abs64(d);
}

static void classify_edge(edge_ctx *c, bool *inactive, bool *buried, bool *fold)
{
    const sim_world *w = c->w;
    const sim_tri *t = c->t;
    int e = c->edge;
    sim_fx len = t->elen[e], tol = w->def.weld_distance;
    match sel[MAX_MATCHES];
    int k = 0;
    for (int i = 0; i < c->count; i++)
        if (coplanar(w, t->n, c->m[i].n) && sim_dir_dot_v3(t->inward[e], sim_v3_sub(c->m[i].opp, t->v[e])) < 0)
            sel[k++] = c->m[i];
    *inactive = covered(sel, k, len, tol);
    *buried = false;
    *fold = false;
    for (int i = 0; i < k && *inactive; i++) {
        int64_t f = fold_of(t->n, sel[i].n);
        *fold = *fold || f > SIM_FOLD_FLAT_ANGLE;
        if (f > SIM_FOLD_MAX_ANGLE)
            *inactive = *fold = false; // too steep for the slabs to reach over
    }
    if (*inactive)
        return;
    for (int p = 0; p < c->count && !*buried; p++) {
        sim_dir np = c->m[p].n;
        if (coplanar(w, t->n, np))
            continue;
        bool seen = false;
        for (int q = 0; q < p; q++)
            if (coplanar(w, np, c->m[q].n))
                seen = true;
        if (seen)
            continue; // this plane was judged already
        match left[MAX_MATCHES], right[MAX_MATCHES];
        int nl = 0, nr = 0;
        for (int i = 0; i < c->count; i++) {
            if (!coplanar(w, np, c->m[i].n))
                continue;
            int sd = side_of(t, e, np, c->m[i].opp);
            if (sd > 0)
                left[nl++] = c->m[i];
            else if (sd < 0)
                right[nr++] = c->m[i];
        }
        *buried = covered(left, nl, len, tol) && covered(right, nr, len, tol);
    }
}

static bool inside(const sim_tri *t, sim_vec3 q, sim_fx tol)
{
    if (sim_fx_abs(sim_dir_dot_v3(t->n, sim_v3_sub(q, t->v[0]))) > tol)
        return false;
    for (int i = 0; i < 3; i++)
        if (sim_dir_dot_v3(t->inward[i], sim_v3_sub(q, t->v[i])) < -tol)
            return false;
    return true;
}

// Is t's area covered by its twins? Judged at seven points: the centroid and,
// pulled a quarter of the way toward it, the corners and edge midpoints.
static bool covered_by_twins(const twin_ctx *c, sim_fx tol)
{
    const sim_tri *t = c->t;
    int64_t cx = ((int64_t)t->v[0].x + t->v[1].x + t->v[2].x) / 3;
    int64_t cy = ((int64_t)t->v[0].y + t->v[1].y + t->v[2].y) / 3;
    int64_t cz = ((int64_t)t->v[0].z + t->v[1].z + t->v[2].z) / 3;
    for (int k = 0; k < 7; k++) {
        int64_t px = cx, py = cy, pz = cz;
        if (k < 6) {
            sim_vec3 a = t->v[k % 3], b = t->v[k < 3 ? k % 3 : (k + 1) % 3];
            int64_t qx = ((int64_t)a.x + b.x) / 2, qy = ((int64_t)a.y + b.y) / 2, qz = ((int64_t)a.z + b.z) / 2;
            px = (3 * qx + cx) / 4;
            py = (3 * qy + cy) / 4;
            pz = (3 * qz + cz) / 4;
        }
        sim_vec3 q = sim_v3((sim_fx)px, (sim_fx)py, (sim_fx)pz);
        bool in = false;
        for (int i = 0; i < c->twins && !in; i++)
            in = inside(c->twin[i], q, tol);
        if (!in)
            return false;
    }
    return true;
}

// A long edge is one of at least this length; a pile of more than
// SIM_EDGES_MAX_HITS_NEAR triangles around a shorter one is a crowd. A long
// edge that is also diagonal (its box this long along two axes) holds many
// triangles nowhere near it in its box, so its query also tests the bounds of
// nodes and triangles against the edge itself (segment_meets_box).
#define SEGMENT_TEST_LENGTH SIM_FX_MM(250)

static bool diagonal(const sim_vec3 *seg)
{
    int wide = 0;
    for (int a = 0; a < 3; a++)
        wide += sim_fx_abs(sim_fx_sub(sim_v3_comp(seg[1], a), sim_v3_comp(seg[0], a))) >= SEGMENT_TEST_LENGTH;
    return wide >= 2;
}

static bool classifier_init(classifier *k, const sim_world *w)
{
    cls_tri *ct = malloc((w->tri_count ? w->tri_count : 1) * sizeof *ct);
    uint32_t *hit = malloc(3 * SIM_EDGES_MAX_HITS * sizeof *hit);
    *k = (classifier){w, ct, {hit, hit + SIM_EDGES_MAX_HITS, hit + 2 * SIM_EDGES_MAX_HITS}, 0, 0};
    if (!ct || !hit)
        return false;
    for (uint32_t i = 0; i < w->tri_count; i++)
        ct[i] = (cls_tri){{w->tris[i].v[0], w->tris[i].v[1], w->tris[i].v[2]}, w->tris[i].n};
    return true;
}

static void classifier_done(classifier *k, sim_world *w)
{
    free(k->ct);
    free(k->hit[0]);
    w->stats.classify_tests += k->tests;
    w->stats.classify_capped += k->capped;
}

void sim_edges_mark_recheck(sim_world *w, const sim_aabb *gone, uint32_t count)
{
    sim_fx g = w->def.weld_distance;
    classifier k;
    bool all = !classifier_init(&k, w);
    for (uint32_t j = 0; j < count && !all; j++) {
        int hits = sim_classify_query_box(&k, sim_aabb_expand(gone[j], sim_v3(g, g, g)), SIM_EDGES_MAX_HITS);
        all = hits < 0; // a crowd: judge every triangle again instead
        for (int h = 0; h < hits; h++)
            w->tris[k.hit[0][h]].flags |= SIM_TRI_RECHECK;
    }
    if (all)
        for (uint32_t i = 0; i < w->tri_count; i++)
            w->tris[i].flags |= SIM_TRI_RECHECK;
    classifier_done(&k, w);
}

void sim_edges_classify(sim_world *w, bool bury)
{
    sim_fx tol = w->def.weld_distance;
    classifier k;
    edge_ctx *c = malloc(sizeof *c);
    if (!classifier_init(&k, w) || !c) {
        free(c);
        classifier_done(&k, w);
        return; // every edge stays active: correct, only bumpier
    }
    uint32_t *hit = k.hit[0];
    // Pass 1: edges (and buried triangles), from geometry alone. Without
    // `bury` only the triangles marked SIM_TRI_RECHECK are judged again.
    for (uint32_t i = 0; i < w->tri_count; i++) {
        sim_tri *t = &w->tris[i];
        if (!bury && !(t->flags & SIM_TRI_RECHECK))
            continue;
        uint32_t flags = 0;
        // Around each edge its box, and along a long diagonal edge the edge
        // itself, grown by twice the weld distance: more than enough for every
        // triangle match_edge accepts, whatever its rounding.
        sim_vec3 seg[3][2];
        region r[3];
        for (int e = 0; e < 3; e++) {
            seg[e][0] = t->v[e];
            seg[e][1] = t->v[(e + 1) % 3];
            bool is_long = t->elen[e] >= SEGMENT_TEST_LENGTH;
            r[e] = (region){edge_box(t, e, 2 * tol),
                            is_long && diagonal(seg[e]) ? seg[e] : NULL,
                            is_long ? SIM_EDGES_MAX_HITS : SIM_EDGES_MAX_HITS_NEAR,
                            k.hit[e],
                            0,
                            {{0}, {0}, {0}}};
        }
        // In a crowd the triangle keeps all its edges active.
        bool judged = sim_classify_query(&k, r, 2 * tol);
        for (int e = 0; e < 3 && judged; e++) {
            c->w = w;
            c->k = &k;
            c->t = t;
            c->edge = e;
            c->ea = t->v[e];
            c->ee = t->v[(e + 1) % 3];
            c->edir = t->edir[e];
            c->elen = t->elen[e];
            c->eb = edge_box(t, e, tol);
            c->tol_sq = (int64_t)tol * tol;
            c->self = i;
            c->quick = tol >= 0 && tol <= ((sim_fx)1 << 20);
            c->axis = -1;
            for (int a = 0; a < 3 && c->quick; a++) {
                int32_t ca = dir_comp(c->edir, a), cb = dir_comp(c->edir, a == 2 ? 0 : a + 1),
                        cd = dir_comp(c->edir, a == 0 ? 2 : a - 1);
                if ((ca == (1 << 30) || ca == -(1 << 30)) && cb == 0 && cd == 0)
                    c->axis = a;
            }
            c->far = c->quick ? ((int64_t)tol + 16) << 30 : 0;
            c->near_sq = c->quick && tol >= 16 ? ((int64_t)tol - 16) * ((int64_t)tol - 16) : -1;
            c->flat = tol >= 0 ? (4 * (int64_t)tol + 1) << 29 : -1;
            c->count = 0;
            for (uint32_t h = 0; h < r[e].hits; h++)
                visit_edge(c, r[e].hit[h]);
            bool inactive, buried, fold;
            classify_edge(c, &inactive, &buried, &fold);
            if (inactive)
                flags |= SIM_TRI_EDGE0_INACTIVE << e;
            if (fold)
                flags |= (SIM_TRI_EDGE0_FOLD << e) | (SIM_TRI_VERT0_FOLD << e) | (SIM_TRI_VERT0_FOLD << ((e + 1) % 3));
            if (buried)
                flags |= SIM_TRI_EDGE0_BURIED << e;
        }
        bool all = true, any_buried = false;
        for (int e = 0; e < 3; e++) {
            all = all && (((flags >> e) & 1u) || ((flags >> (6 + e)) & 1u));
            any_buried = any_buried || ((flags >> (6 + e)) & 1u);
        }
        if (bury && all && any_buried) {
            twin_ctx tc = {w, &k, t, {NULL}, 0};
            sim_aabb box = sim_aabb_expand(sim_tri_bounds(t), sim_v3(tol, tol, tol));
            int hits = sim_classify_query_box(&k, box, SIM_EDGES_MAX_HITS);
            for (int h = 0; h < hits; h++)
                visit_twin(&tc, hit[h]);
            if (hits >= 0 && covered_by_twins(&tc, tol)) // kept in a crowd
                flags |= SIM_TRI_BURIED;
        }
        t->flags = flags | (t->flags & SIM_TRI_RECHECK);
    }
    free(c);
    // Pass 2: vertices, now that every edge is known.
    sim_classify_vertices(&k, w, bury);
    classifier_done(&k, w);
}
