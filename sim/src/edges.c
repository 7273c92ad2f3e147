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
// - Buried: E is covered on BOTH sides by a flat surface of other triangles
//   not coplanar with T (T's side face where two boxes touch: its top edge lies
//   inside the boxes' joint top). That surface reports any contact itself, so
//   hits on E are ignored.
// A vertex is inactive (buried) when both of T's edges meeting there are. A
// triangle whose edges are all inactive or buried, at least one buried, and
// whose area is covered by coplanar triangles facing the other way (the face
// of the box it touches) lies between two solids and is dropped from the world.
#include <stdlib.h>

#include "world_internal.h"

#define MAX_MATCHES 64

typedef struct match {
    sim_dir n;    // the neighbour's normal
    sim_vec3 opp; // its vertex off the edge
    sim_fx a, b;  // the span of E it covers, in metres from E's start
} match;

typedef struct edge_ctx {
    const sim_world *w;
    const sim_tri *t;
    int edge;
    match m[MAX_MATCHES];
    int count;
} edge_ctx;

#define MAX_TWINS 16

// One query per triangle gathers the matches of all three edges, and the
// coplanar opposite-facing triangles ("twins": where two solids touch).
typedef struct tri_ctx {
    const sim_world *w;
    const sim_tri *t;
    edge_ctx e[3];
    const sim_tri *twin[MAX_TWINS];
    int twins;
} tri_ctx;

static bool on_line(const edge_ctx *c, sim_vec3 p, sim_fx *along)
{
    const sim_tri *t = c->t;
    sim_vec3 w = sim_v3_sub(p, t->v[c->edge]);
    *along = sim_dir_dot_v3(t->edir[c->edge], w);
    sim_vec3 perp = sim_v3_sub(w, sim_dir_scale(t->edir[c->edge], *along));
    int64_t tol = c->w->def.weld_distance;
    return sim_v3_len_sq64(perp) <= tol * tol;
}

static void match_edge(edge_ctx *c, const sim_tri *n)
{
    const sim_tri *t = c->t;
    sim_fx tol = c->w->def.weld_distance;
    sim_aabb eb = sim_aabb_union(sim_aabb_of_point(t->v[c->edge]),
                                 sim_aabb_of_point(t->v[(c->edge + 1) % 3]));
    eb = sim_aabb_expand(eb, sim_v3(tol, tol, tol));
    sim_vec3 ea = t->v[c->edge], ee = t->v[(c->edge + 1) % 3];
    for (int j = 0; j < 3; j++) {
        sim_fx a, b;
        sim_vec3 na = n->v[j], ne = n->v[(j + 1) % 3];
        // Meshes with shared vertices: the same edge, either way round.
        if ((sim_v3_eq(na, ea) && sim_v3_eq(ne, ee)) || (sim_v3_eq(na, ee) && sim_v3_eq(ne, ea))) {
            if (c->count < MAX_MATCHES)
                c->m[c->count++] = (match){n->n, n->v[(j + 2) % 3], 0, t->elen[c->edge]};
            continue;
        }
        sim_aabb nb = sim_aabb_union(sim_aabb_of_point(na), sim_aabb_of_point(ne));
        if (!sim_aabb_overlaps(eb, nb))
            continue;
        if (!on_line(c, na, &a) || !on_line(c, ne, &b))
            continue;
        if (a > b) {
            sim_fx x = a;
            a = b;
            b = x;
        }
        if (b <= 0 || a >= t->elen[c->edge])
            continue;
        if (c->count < MAX_MATCHES)
            c->m[c->count++] = (match){n->n, n->v[(j + 2) % 3], a, b};
    }
}

static bool visit(void *ctx, const sim_tri *n)
{
    tri_ctx *c = ctx;
    const sim_tri *t = c->t;
    if (n == t)
        return true;
    // An edge of n can only lie on an edge's line if that line lies in n's
    // plane: both of the edge's ends must be (nearly) in it.
    int64_t tol = 2 * (int64_t)c->w->def.weld_distance;
    bool in_plane[3];
    int count = 0;
    for (int k = 0; k < 3; k++) {
        sim_fx d = sim_dir_dot_v3(n->n, sim_v3_sub(t->v[k], n->v[0]));
        in_plane[k] = d <= tol && d >= -tol;
        count += in_plane[k];
    }
    if (count < 2)
        return true;
    if (count == 3 && c->twins < MAX_TWINS && sim_dir_dot(t->n, n->n) <= -c->w->def.coplanar_cos)
        c->twin[c->twins++] = n;
    for (int e = 0; e < 3; e++)
        if (in_plane[e] && in_plane[(e + 1) % 3])
            match_edge(&c->e[e], n);
    return true;
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

static void classify_edge(edge_ctx *c, bool *inactive, bool *buried)
{
    const sim_world *w = c->w;
    const sim_tri *t = c->t;
    int e = c->edge;
    sim_fx len = t->elen[e], tol = w->def.weld_distance;
    match sel[MAX_MATCHES];
    int k = 0;
    for (int i = 0; i < c->count; i++)
        if (coplanar(w, t->n, c->m[i].n) &&
            sim_dir_dot_v3(t->inward[e], sim_v3_sub(c->m[i].opp, t->v[e])) < 0)
            sel[k++] = c->m[i];
    *inactive = covered(sel, k, len, tol);
    *buried = false;
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
static bool covered_by_twins(const tri_ctx *c, sim_fx tol)
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

// A vertex is only as internal as every edge through it: the corner of a box
// top where two boxes meet has both of one triangle's edges internal (the seam
// and the face diagonal) yet lies on the box's outer edge, which is active in
// the other triangle of that face.
typedef struct vertex_ctx {
    const sim_world *w;
    const sim_tri *t;
    sim_vec3 p;
    bool on_active;
    bool on_unburied;
} vertex_ctx;

static bool point_on_edge(const sim_tri *n, int j, sim_vec3 p, sim_fx tol)
{
    sim_vec3 w = sim_v3_sub(p, n->v[j]);
    sim_fx a = sim_dir_dot_v3(n->edir[j], w);
    if (a < -tol || a > n->elen[j] + tol)
        return false;
    sim_vec3 perp = sim_v3_sub(w, sim_dir_scale(n->edir[j], a));
    return sim_v3_len_sq64(perp) <= (int64_t)tol * tol;
}

static bool visit_vertex(void *ctx, const sim_tri *n)
{
    vertex_ctx *c = ctx;
    if (n == c->t)
        return true;
    sim_fx tol = c->w->def.weld_distance;
    for (int j = 0; j < 3; j++) {
        bool inactive = (n->flags >> j) & 1u, buried = (n->flags >> (6 + j)) & 1u;
        if (inactive && buried)
            continue;
        if (!point_on_edge(n, j, c->p, tol))
            continue;
        if (!inactive && !buried)
            c->on_active = true;
        if (!buried)
            c->on_unburied = true;
    }
    return !(c->on_active && c->on_unburied);
}

void sim_edges_classify(sim_world *w, bool bury)
{
    sim_fx tol = w->def.weld_distance;
    tri_ctx *c = malloc(sizeof *c);
    if (!c)
        return; // every edge stays active: correct, only bumpier
    // Pass 1: edges (and buried triangles), from geometry alone. Without
    // `bury` only the triangles marked SIM_TRI_RECHECK are judged again.
    for (uint32_t i = 0; i < w->tri_count; i++) {
        sim_tri *t = &w->tris[i];
        if (!bury && !(t->flags & SIM_TRI_RECHECK))
            continue;
        c->w = w;
        c->t = t;
        c->twins = 0;
        for (int e = 0; e < 3; e++) {
            c->e[e].w = w;
            c->e[e].t = t;
            c->e[e].edge = e;
            c->e[e].count = 0;
        }
        sim_aabb box = sim_aabb_expand(sim_tri_bounds(t), sim_v3(tol, tol, tol));
        sim_bvh_query(w, box, visit, c);
        uint32_t flags = 0;
        for (int e = 0; e < 3; e++) {
            bool inactive, buried;
            classify_edge(&c->e[e], &inactive, &buried);
            if (inactive)
                flags |= SIM_TRI_EDGE0_INACTIVE << e;
            if (buried)
                flags |= SIM_TRI_EDGE0_BURIED << e;
        }
        bool all = true, any_buried = false;
        for (int e = 0; e < 3; e++) {
            all = all && (((flags >> e) & 1u) || ((flags >> (6 + e)) & 1u));
            any_buried = any_buried || ((flags >> (6 + e)) & 1u);
        }
        if (bury && all && any_buried && covered_by_twins(c, tol))
            flags |= SIM_TRI_BURIED;
        t->flags = flags | (t->flags & SIM_TRI_RECHECK);
    }
    free(c);
    // Pass 2: vertices, now that every edge is known.
    for (uint32_t i = 0; i < w->tri_count; i++) {
        sim_tri *t = &w->tris[i];
        if (!bury && !(t->flags & SIM_TRI_RECHECK))
            continue;
        t->flags &= ~(uint32_t)((7u << 3) | (7u << 9)); // vertex flags are judged anew
        for (int v = 0; v < 3; v++) {
            int prev = (v + 2) % 3;
            bool in_a = (t->flags >> v) & 1u, in_b = (t->flags >> prev) & 1u;
            bool bu_a = (t->flags >> (6 + v)) & 1u, bu_b = (t->flags >> (6 + prev)) & 1u;
            bool cand_inactive = in_a && in_b, cand_buried = bu_a && bu_b;
            if (!cand_inactive && !cand_buried)
                continue;
            vertex_ctx vc = {w, t, t->v[v], false, false};
            sim_aabb box = sim_aabb_expand(sim_aabb_of_point(t->v[v]), sim_v3(tol, tol, tol));
            sim_bvh_query(w, box, visit_vertex, &vc);
            if (cand_inactive && !vc.on_active)
                t->flags |= SIM_TRI_VERT0_INACTIVE << v;
            if (cand_buried && !vc.on_unburied)
                t->flags |= SIM_TRI_VERT0_BURIED << v;
        }
    }
}
