// keel: internal-edge classification, the vertex pass. MIT licence, see
// LICENSE.
//
// A vertex is inactive when both of a triangle's edges through it are and no
// other triangle has an active edge through it; buried likewise with buried
// edges. The query around a vertex (bounded as every classification query is,
// see edges.c) and what the triangles found there say of it depend on the
// place alone: both are worked out once per place and shared by every corner
// there.
#include <stdlib.h>

#include "world_classify.h"

// A vertex is only as internal as every edge through it: the corner of a box
// top where two boxes meet has both of one triangle's edges internal (the seam
// and the face diagonal) yet lies on the box's outer edge, which is active in
// the other triangle of that face.
static bool point_on_edge_exact(const sim_tri *n, int j, sim_vec3 p, sim_fx tol)
{
    sim_vec3 w = sim_v3_sub(p, n->v[j]);
    sim_fx a = sim_dir_dot_v3(n->edir[j], w);
    if (a < -tol || a > n->elen[j] + tol)
        return false;
    sim_vec3 perp = sim_v3_sub(w, sim_dir_scale(n->edir[j], a));
    return sim_v3_len_sq64(perp) <= (int64_t)tol * tol;
}

// point_on_edge_exact, without its roundings along an axis (edir +-2^30
// there, 0 elsewhere), where they round nothing: `a` is w's component along
// the axis, signed as edir, and the offset is w with that component zeroed.
// Built with KEEL_VERIFY_EDGES, every such answer is checked.
static bool point_on_edge(const sim_tri *n, int j, sim_vec3 p, sim_fx tol)
{
    sim_dir d = n->edir[j];
    const int32_t one = (int32_t)1 << 30;
    int axis = (d.y == 0 && d.z == 0) ? 0 : ((d.x == 0 && d.z == 0) ? 1 : ((d.x == 0 && d.y == 0) ? 2 : -1));
    int32_t da = axis == 0 ? d.x : (axis == 1 ? d.y : d.z);
    if (axis < 0 || (da != one && da != -one))
        return point_on_edge_exact(n, j, p, tol);
    // |w| < 2^31 raw (corners within 4096 m): every square below 2^62
    int64_t wx = (int64_t)p.x - n->v[j].x, wy = (int64_t)p.y - n->v[j].y, wz = (int64_t)p.z - n->v[j].z;
    int64_t wa = axis == 0 ? wx : (axis == 1 ? wy : wz);
    int64_t a = da < 0 ? -wa : wa;
    int64_t u = axis == 0 ? wy : wx, v = axis == 2 ? wy : wz; // the other two
    bool on = a >= -tol && a <= (int64_t)n->elen[j] + tol && u * u + v * v <= (int64_t)tol * tol;
#ifdef KEEL_VERIFY_EDGES
    if (on != point_on_edge_exact(n, j, p, tol))
        abort();
#endif
    return on;
}

#define ON_ACTIVE 1u   // p lies on an active edge of the triangle
#define ON_UNBURIED 2u // p lies on an edge of it that is not buried

// What n's edges say of a vertex at p (ON_ACTIVE, ON_UNBURIED). Reads only
// n's edge flags, which the vertex pass does not change.
static unsigned vertex_marks(const sim_tri *n, sim_vec3 p, sim_fx tol)
{
    unsigned marks = 0;
    for (int j = 0; j < 3 && marks != (ON_ACTIVE | ON_UNBURIED); j++) {
        bool inactive = (n->flags >> j) & 1u, buried = (n->flags >> (6 + j)) & 1u;
        if ((inactive && buried) || !point_on_edge(n, j, p, tol))
            continue;
        if (!inactive && !buried)
            marks |= ON_ACTIVE;
        if (!buried)
            marks |= ON_UNBURIED;
    }
    return marks;
}

// The query around a vertex depends on its place alone, and so does what
// each triangle found there says of it: both are worked out once per place,
// for every corner of every triangle at that place (a corner of a mesh is
// shared by about six), in an open-addressing table keyed by the place.
typedef struct vertex_place {
    sim_vec3 p;
    uint32_t tests;    // the box tests its query made
    uint16_t active;   // the triangles found with ON_ACTIVE (the asking one too)
    uint16_t unburied; // the triangles found with ON_UNBURIED
    uint8_t state;     // 0 unused, 1 judged, 2 a crowd
} vertex_place;

typedef struct vertex_places {
    vertex_place *slot;
    uint32_t mask; // slots - 1 (a power of two minus one); no table when slot is NULL
} vertex_places;

// A table for `count` places, at most half full; none (slot NULL) when memory
// runs out, for more than 2^28 places, or when the weld distance is negative
// (then a triangle need not find itself around its own corner): then each
// corner is judged alone.
static vertex_places places_make(uint64_t count, sim_fx tol)
{
    vertex_places vp = {NULL, 0};
    if (tol < 0 || count > ((uint64_t)1 << 28))
        return vp;
    uint32_t slots = 16;
    while (slots < 2 * count)
        slots *= 2;
    vp.slot = calloc(slots, sizeof *vp.slot);
    vp.mask = slots - 1;
    return vp;
}

static vertex_place *places_find(vertex_places *vp, sim_vec3 p)
{
    uint32_t h = (uint32_t)p.x * 0x9E3779B1u ^ (uint32_t)p.y * 0x85EBCA77u ^ (uint32_t)p.z * 0xC2B2AE3Du;
    h ^= h >> 15;
    for (uint32_t i = h & vp->mask;; i = (i + 1) & vp->mask) {
        vertex_place *s = &vp->slot[i];
        if (s->state == 0 || sim_v3_eq(s->p, p))
            return s;
    }
}

// Is t's corner v on an active edge of another triangle (*on_active), on an
// unburied one (*on_unburied)? False in a crowd (the vertex stays active).
static bool judge_vertex(classifier *k, vertex_places *vp, const sim_tri *t, int v, bool *on_active, bool *on_unburied)
{
    const sim_world *w = k->w;
    sim_fx tol = w->def.weld_distance;
    sim_vec3 p = t->v[v];
    sim_aabb box = sim_aabb_expand(sim_aabb_of_point(p), sim_v3(tol, tol, tol));
    const uint32_t *hit = k->hit[0];
    if (!vp->slot) {
        int hits = sim_classify_query_box(k, box, SIM_EDGES_MAX_HITS_NEAR);
        unsigned marks = 0;
        for (int h = 0; h < hits && marks != (ON_ACTIVE | ON_UNBURIED); h++)
            if (&w->tris[hit[h]] != t)
                marks |= vertex_marks(&w->tris[hit[h]], p, tol);
        *on_active = marks & ON_ACTIVE;
        *on_unburied = marks & ON_UNBURIED;
        return hits >= 0;
    }
    vertex_place *s = places_find(vp, p);
    if (s->state == 0) {
        uint64_t before = k->tests;
        int hits = sim_classify_query_box(k, box, SIM_EDGES_MAX_HITS_NEAR);
        *s = (vertex_place){p, (uint32_t)(k->tests - before), 0, 0, hits < 0 ? 2 : 1};
        for (int h = 0; h < hits; h++) {
            unsigned marks = vertex_marks(&w->tris[hit[h]], p, tol);
            s->active += (marks & ON_ACTIVE) != 0;
            s->unburied += (marks & ON_UNBURIED) != 0;
        }
    } else {
        k->tests += s->tests;
        k->capped += s->state == 2;
    }
    if (s->state == 2)
        return false;
    // t is among the triangles found (its bounds hold p): all but its own.
    unsigned own = vertex_marks(t, p, tol);
    *on_active = s->active > ((own & ON_ACTIVE) != 0);
    *on_unburied = s->unburied > ((own & ON_UNBURIED) != 0);
    return true;
}

// The vertices that may be inactive (bits 0-2: both edges through the vertex
// inactive) or buried (bits 3-5: both buried), from a triangle's edge flags.
static unsigned vertex_candidates(uint32_t flags)
{
    unsigned inactive = flags & 7u, buried = (flags >> 6) & 7u;
    // edge v and edge v + 2 (the one before) meet at vertex v
    unsigned prev_in = ((inactive << 1) | (inactive >> 2)) & 7u, prev_bu = ((buried << 1) | (buried >> 2)) & 7u;
    return (inactive & prev_in) | ((buried & prev_bu) << 3);
}

void sim_classify_vertices(classifier *k, sim_world *w, bool bury)
{
    sim_fx tol = w->def.weld_distance;
    uint32_t corners = 0;
    for (uint32_t i = 0; i < w->tri_count; i++)
        if (bury || (w->tris[i].flags & SIM_TRI_RECHECK))
            corners += vertex_candidates(w->tris[i].flags) != 0;
    vertex_places vp = places_make(3 * (uint64_t)corners, tol);
    for (uint32_t i = 0; i < w->tri_count; i++) {
        sim_tri *t = &w->tris[i];
        if (!bury && !(t->flags & SIM_TRI_RECHECK))
            continue;
        t->flags &= ~(uint32_t)((7u << 3) | (7u << 9)); // vertex flags are judged anew
        unsigned cand = vertex_candidates(t->flags);
        for (int v = 0; v < 3; v++) {
            bool cand_inactive = (cand >> v) & 1u, cand_buried = (cand >> (3 + v)) & 1u;
            bool on_active, on_unburied;
            if ((!cand_inactive && !cand_buried) || !judge_vertex(k, &vp, t, v, &on_active, &on_unburied))
                continue; // not a candidate, or a crowd: stays active
            if (cand_inactive && !on_active)
                t->flags |= SIM_TRI_VERT0_INACTIVE << v;
            if (cand_buried && !on_unburied)
                t->flags |= SIM_TRI_VERT0_BURIED << v;
        }
    }
    free(vp.slot);
}
