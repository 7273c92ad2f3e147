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
// triangle whose edges are all inactive or buried, at least one buried, lies
// inside solid material and is dropped from the world.
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

static bool on_line(const edge_ctx *c, sim_vec3 p, sim_fx *along)
{
    const sim_tri *t = c->t;
    sim_vec3 w = sim_v3_sub(p, t->v[c->edge]);
    *along = sim_dir_dot_v3(t->edir[c->edge], w);
    sim_vec3 perp = sim_v3_sub(w, sim_dir_scale(t->edir[c->edge], *along));
    int64_t tol = c->w->def.weld_distance;
    return sim_v3_len_sq64(perp) <= tol * tol;
}

static bool visit(void *ctx, const sim_tri *n)
{
    edge_ctx *c = ctx;
    const sim_tri *t = c->t;
    if (n == t)
        return true;
    for (int j = 0; j < 3; j++) {
        sim_fx a, b;
        if (!on_line(c, n->v[j], &a) || !on_line(c, n->v[(j + 1) % 3], &b))
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

void sim_edges_classify(sim_world *w)
{
    sim_fx tol = w->def.weld_distance;
    for (uint32_t i = 0; i < w->tri_count; i++) {
        sim_tri *t = &w->tris[i];
        uint32_t flags = 0;
        for (int e = 0; e < 3; e++) {
            edge_ctx c;
            c.w = w;
            c.t = t;
            c.edge = e;
            c.count = 0;
            sim_aabb box = sim_aabb_union(sim_aabb_of_point(t->v[e]), sim_aabb_of_point(t->v[(e + 1) % 3]));
            box = sim_aabb_expand(box, sim_v3(tol, tol, tol));
            sim_bvh_query(w, box, visit, &c);
            bool inactive, buried;
            classify_edge(&c, &inactive, &buried);
            if (inactive)
                flags |= SIM_TRI_EDGE0_INACTIVE << e;
            if (buried)
                flags |= SIM_TRI_EDGE0_BURIED << e;
        }
        bool all = true, any_buried = false;
        for (int v = 0; v < 3; v++) {
            int prev = (v + 2) % 3;
            if ((flags >> v & 1u) && (flags >> prev & 1u))
                flags |= SIM_TRI_VERT0_INACTIVE << v;
            if ((flags >> (6 + v) & 1u) && (flags >> (6 + prev) & 1u))
                flags |= SIM_TRI_VERT0_BURIED << v;
            bool done = (flags >> v & 1u) || (flags >> (6 + v) & 1u);
            all = all && done;
            any_buried = any_buried || (flags >> (6 + v) & 1u);
        }
        if (all && any_buried)
            flags |= SIM_TRI_BURIED;
        t->flags = flags;
    }
}
