// keel: Quake .map loader, brushes into collision triangles. MIT licence, see LICENSE.
//
// A brush is the intersection of the half-spaces behind its planes. Each
// face's polygon is a square far larger than the level, on the face's plane,
// clipped by every other plane of the brush (Sutherland-Hodgman). Then the
// CSG union of the solid brushes: each face polygon is cut by every solid
// brush whose bounds touch it, and the pieces inside that brush go. A piece
// lying on another brush's face is inside when the faces look opposite ways
// (two brushes touching) and, when they look the same way, is kept by the
// brush that comes first in the file (one copy of a shared surface).
//
// Everything is integer: points in Q8 units, normals in Q30, distances in
// Q38 (level_map.h). Points within MAP_EPS of a plane count as on it; a cut
// puts its new point on the segment, rounded to the Q8 grid. Work is
// bounded: at most MAP_MAX_FACES planes per brush, POLY_MAX points per
// polygon, and the CSG's point classifications capped by the work limit.
#include <keel/sim_level.h>

#include <stdlib.h>
#include <string.h>

#include "clz.h"
#include "level_map.h"
#include "level_text.h"

#define Q30 ((int64_t)1 << 30)
/// Half the side of the starting square: 2^18 units (Q8), four times the
/// coordinate limit, so it covers any face of a brush within the limit.
#define BASE_HALF ((int64_t)1 << 26)
/// Distance (Q38) within which a point is on a plane: 1/64 unit.
#define MAP_EPS ((int64_t)1 << 32)
/// A brush vertex beyond twice the coordinate limit means the planes leave
/// it open (or reach far out of the level).
#define VERTEX_LIMIT (2 * MAP_COORD_LIMIT)
#define POLY_MAX 128
_Static_assert(MAP_MAX_FACES + 6 <= POLY_MAX, "a face polygon (4 + one point per other plane) is never cut short");

typedef struct poly {
    int n;
    int64_t p[POLY_MAX][3];
} poly;

static int64_t dist(const map_plane *pl, const int64_t p[3])
{
    return pl->n[0] * p[0] + pl->n[1] * p[1] + pl->n[2] * p[2] - pl->d;
}

static void base_winding(const map_plane *pl, poly *w)
{
    const int64_t *n = pl->n;
    int64_t ax[3] = {n[0] < 0 ? -n[0] : n[0], n[1] < 0 ? -n[1] : n[1], n[2] < 0 ? -n[2] : n[2]};
    int64_t up[3] = {0, 0, Q30};
    if (ax[2] >= ax[0] && ax[2] >= ax[1]) {
        up[0] = Q30;
        up[2] = 0;
    }
    int64_t dot = up[0] ? n[0] : n[2]; // up . n in Q30
    for (int i = 0; i < 3; i++)
        up[i] -= sim_div_round_s64(n[i] * dot, Q30);
    uint64_t sq = (uint64_t)(up[0] * up[0]) + (uint64_t)(up[1] * up[1]) + (uint64_t)(up[2] * up[2]);
    int64_t len = (int64_t)sim_isqrt_u64(sq);
    for (int i = 0; i < 3; i++)
        up[i] = sim_div_round_s64(up[i] * Q30, len > 0 ? len : 1);
    // right = up x n: (right, up, n) is right-handed, so the square below
    // runs counter-clockwise seen from the front.
    int64_t right[3] = {sim_div_round_s64(up[1] * n[2] - up[2] * n[1], Q30),
                        sim_div_round_s64(up[2] * n[0] - up[0] * n[2], Q30),
                        sim_div_round_s64(up[0] * n[1] - up[1] * n[0], Q30)};
    int64_t dq8 = sim_div_round_s64(pl->d, Q30);
    static const int su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
    w->n = 4;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++)
            w->p[k][i] = sim_div_round_s64(n[i] * dq8, Q30) + su[k] * (right[i] / (Q30 / BASE_HALF)) +
                         sv[k] * (up[i] / (Q30 / BASE_HALF));
}

static void copy_poly(poly *dst, const poly *src)
{
    dst->n = src->n;
    memcpy(dst->p, src->p, (size_t)src->n * sizeof src->p[0]);
}

/// Splits `in` by the plane: the part in front into `front` and the part
/// behind into `back` (either may be NULL). Points on the plane go to both.
/// Returns 0 when the polygon crosses the plane, 1 when it is all in front
/// (or on), -1 all behind (or on), 2 all on the plane, 3 when a part would
/// have more than POLY_MAX points (nothing is split then).
static int split(const poly *in, const map_plane *pl, poly *front, poly *back)
{
    int64_t d[POLY_MAX];
    bool any_front = false, any_back = false;
    for (int i = 0; i < in->n; i++) {
        d[i] = dist(pl, in->p[i]);
        any_front |= d[i] > MAP_EPS;
        any_back |= d[i] < -MAP_EPS;
    }
    if (!any_front && !any_back)
        return 2;
    if (!any_back)
        return 1;
    if (!any_front)
        return -1;
    if (in->n + 2 > POLY_MAX)
        return 3; // each part has at most two points more than the whole
    if (front)
        front->n = 0;
    if (back)
        back->n = 0;
    for (int i = 0; i < in->n; i++) {
        int j = i + 1 == in->n ? 0 : i + 1;
        const int64_t *a = in->p[i], *b = in->p[j];
        int64_t da = d[i], db = d[j];
        int sa = da > MAP_EPS ? 1 : (da < -MAP_EPS ? -1 : 0);
        int sb = db > MAP_EPS ? 1 : (db < -MAP_EPS ? -1 : 0);
        if (sa >= 0 && front)
            memcpy(front->p[front->n++], a, sizeof front->p[0]);
        if (sa <= 0 && back)
            memcpy(back->p[back->n++], a, sizeof back->p[0]);
        if (sa * sb >= 0)
            continue;
        // From the front point f towards the back point k: t = df / (df - dk),
        // both scaled down to 31 bits so (k - f) * t's numerator fits. Both
        // are positive (df > MAP_EPS, dk < -MAP_EPS): s halvings are a shift.
        const int64_t *f = sa > 0 ? a : b, *k = sa > 0 ? b : a;
        int64_t df = sa > 0 ? da : db, den = df - (sa > 0 ? db : da);
        if (den >= ((int64_t)1 << 31)) {
            int s = 33 - keel_clz64((uint64_t)den); // den's bits beyond 31
            den >>= s;
            df >>= s;
        }
        int64_t m[3];
        for (int c = 0; c < 3; c++)
            m[c] = f[c] + sim_div_round_s64((k[c] - f[c]) * df, den > 0 ? den : 1);
        if (front)
            memcpy(front->p[front->n++], m, sizeof m);
        if (back)
            memcpy(back->p[back->n++], m, sizeof m);
    }
    return 0;
}

/// Drops repeated points (the rounding can make neighbours equal).
static void tidy(poly *w)
{
    int m = 0;
    for (int i = 0; i < w->n; i++) {
        const int64_t *prev = m > 0 ? w->p[m - 1] : NULL;
        if (prev && memcmp(prev, w->p[i], sizeof w->p[0]) == 0)
            continue;
        if (m != i)
            memcpy(w->p[m], w->p[i], sizeof w->p[0]);
        m++;
    }
    while (m > 1 && memcmp(w->p[m - 1], w->p[0], sizeof w->p[0]) == 0)
        m--;
    w->n = m < 3 ? 0 : m;
}

// ---- brushes -----------------------------------------------------------------------

/// A brush's face polygons, in one array of points.
typedef struct brush_geom {
    uint32_t first_poly, poly_count;
    int64_t min[3], max[3]; ///< Q8 bounds
} brush_geom;

typedef struct poly_ref {
    uint32_t first, count; ///< into the point array
    uint32_t face;         ///< index into the faces
} poly_ref;

typedef struct builder_state {
    const char *name;
    sim_error *err;
    const map_face *faces;
    int64_t (*pts)[3];
    uint32_t pt_count, pt_cap;
    poly_ref *polys;
    uint32_t poly_count, poly_cap;
} builder_state;

static bool store_poly(builder_state *st, const poly *w, uint32_t face)
{
    if (st->pt_count + (uint32_t)w->n > st->pt_cap) {
        uint32_t cap = st->pt_cap ? st->pt_cap : 4096;
        while (cap < st->pt_count + (uint32_t)w->n)
            cap *= 2;
        void *np = realloc(st->pts, (size_t)cap * sizeof st->pts[0]);
        if (!np)
            return false;
        st->pts = np;
        st->pt_cap = cap;
    }
    if (st->poly_count == st->poly_cap) {
        uint32_t cap = st->poly_cap ? st->poly_cap * 2 : 1024;
        void *np = realloc(st->polys, (size_t)cap * sizeof st->polys[0]);
        if (!np)
            return false;
        st->polys = np;
        st->poly_cap = cap;
    }
    poly_ref *r = &st->polys[st->poly_count++];
    r->first = st->pt_count;
    r->count = (uint32_t)w->n;
    r->face = face;
    memcpy(st->pts[st->pt_count], w->p, (size_t)w->n * sizeof w->p[0]);
    st->pt_count += (uint32_t)w->n;
    return true;
}

static int brush_error(builder_state *st, const map_brush_src *br, const char *what)
{
    level_set_error(st->name, st->err, br->line, "entity %u, brush %u: %s", (unsigned)br->entity, (unsigned)br->index,
                    what);
    return -1;
}

/// The face polygons of one brush, stored, and its bounds.
static int brush_polys(builder_state *st, const map_brush_src *br, brush_geom *g, poly *w, poly *tmp)
{
    g->first_poly = st->poly_count;
    for (int i = 0; i < 3; i++) {
        g->min[i] = INT64_MAX;
        g->max[i] = INT64_MIN;
    }
    for (uint32_t i = 0; i < br->face_count; i++) {
        const map_plane *pi = &st->faces[br->first_face + i].plane;
        base_winding(pi, w);
        for (uint32_t j = 0; j < br->face_count && w->n > 0; j++) {
            if (j == i)
                continue;
            const map_plane *pj = &st->faces[br->first_face + j].plane;
            int s = split(w, pj, NULL, tmp);
            if (s == 2) {
                bool same = pi->n[0] * pj->n[0] + pi->n[1] * pj->n[1] + pi->n[2] * pj->n[2] > 0;
                if (!same)
                    return brush_error(st, br, "no volume (two of its faces lie on one plane, facing apart)");
                if (j < i)
                    w->n = 0; // the same plane twice: the first one makes the face
            } else if (s == 1) {
                w->n = 0; // wholly in front of another plane: the face is not on the brush
            } else if (s == 0) {
                copy_poly(w, tmp);
                tidy(w);
            } // s == 3 cannot happen: a face has at most MAP_MAX_FACES + 4 points
        }
        if (w->n == 0)
            continue;
        for (int k = 0; k < w->n; k++)
            for (int c = 0; c < 3; c++) {
                int64_t v = w->p[k][c];
                if (v > VERTEX_LIMIT || v < -VERTEX_LIMIT)
                    return brush_error(st, br, "its planes do not close a finite solid");
                g->min[c] = v < g->min[c] ? v : g->min[c];
                g->max[c] = v > g->max[c] ? v : g->max[c];
            }
        if (!store_poly(st, w, br->first_face + i)) {
            level_set_error(st->name, st->err, 0, "out of memory");
            return -1;
        }
    }
    g->poly_count = st->poly_count - g->first_poly;
    if (g->poly_count < 4)
        return brush_error(st, br, "its planes do not close a solid (fewer than 4 faces remain)");
    return 0;
}

// ---- the CSG union -------------------------------------------------------------------

typedef struct poly_list {
    poly *items;
    uint32_t count, cap;
} poly_list;

typedef struct csg_state {
    builder_state *st;
    const brush_geom *geom;
    uint64_t work, limit;
    poly cur, front, back;
    uint32_t fragments;
    bool oom;
} csg_state;

static void list_push(csg_state *cs, poly_list *l, const poly *w)
{
    if (w->n < 3)
        return;
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        poly *np = realloc(l->items, (size_t)cap * sizeof *np);
        if (!np) {
            cs->oom = true;
            return;
        }
        l->items = np;
        l->cap = cap;
    }
    l->items[l->count].n = w->n;
    memcpy(l->items[l->count].p, w->p, (size_t)w->n * sizeof w->p[0]);
    l->count++;
}

static void poly_bounds(const poly *w, int64_t min[3], int64_t max[3])
{
    for (int c = 0; c < 3; c++) {
        min[c] = INT64_MAX;
        max[c] = INT64_MIN;
    }
    for (int k = 0; k < w->n; k++)
        for (int c = 0; c < 3; c++) {
            min[c] = w->p[k][c] < min[c] ? w->p[k][c] : min[c];
            max[c] = w->p[k][c] > max[c] ? w->p[k][c] : max[c];
        }
}

static bool boxes_touch(const int64_t amin[3], const int64_t amax[3], const int64_t bmin[3], const int64_t bmax[3])
{
    const int64_t m = 4; // a little more than MAP_EPS in Q8
    for (int c = 0; c < 3; c++)
        if (amin[c] > bmax[c] + m || bmin[c] > amax[c] + m)
            return false;
    return true;
}

/// The pieces of `f` (on plane `pf`, a face of brush a) outside brush b,
/// appended to `out`.
static void clip_outside(csg_state *cs, const poly *f, const map_plane *pf, uint32_t a, uint32_t b, poly_list *out)
{
    const brush_geom *g = &cs->geom[b];
    copy_poly(&cs->cur, f);
    for (uint32_t k = 0; k < g->poly_count; k++) {
        const map_plane *q = &cs->st->faces[cs->st->polys[g->first_poly + k].face].plane;
        cs->work += (uint64_t)cs->cur.n;
        int s = split(&cs->cur, q, &cs->front, &cs->back);
        if (s == 2) {
            // On b's face: facing the same way, the first brush keeps it;
            // facing the other way, a and b touch there and it is inside.
            bool same = pf->n[0] * q->n[0] + pf->n[1] * q->n[1] + pf->n[2] * q->n[2] > 0;
            if (same && b > a) {
                list_push(cs, out, &cs->cur);
                return;
            }
            continue;
        }
        if (s == 1 || s == 3) {
            list_push(cs, out, &cs->cur); // outside b (or too many points to cut: kept whole)
            return;
        }
        if (s == -1)
            continue;
        tidy(&cs->front);
        list_push(cs, out, &cs->front);
        copy_poly(&cs->cur, &cs->back);
        tidy(&cs->cur);
        if (cs->cur.n == 0)
            return;
    }
    // behind every plane of b: inside it, dropped
}

static bool emit(builder_state *st, sim_level_builder *b, const poly *w, uint64_t scale_m, int64_t scale_e)
{
    uint32_t first = 0, prev = 0;
    for (int k = 0; k < w->n; k++) {
        sim_vec3 v;
        if (!map_to_engine(w->p[k], scale_m, scale_e, &v))
            return false;
        uint32_t idx = sim_level_builder_vertex(b, v);
        if (k == 0)
            first = idx;
        else if (k >= 2)
            sim_level_builder_triangle(b, first, prev, idx);
        prev = idx;
    }
    (void)st;
    return true;
}

typedef struct sweep_item {
    int64_t min_x;
    uint32_t brush;
} sweep_item;

static int cmp_sweep(const void *pa, const void *pb)
{
    const sweep_item *a = pa, *b = pb;
    if (a->min_x != b->min_x)
        return a->min_x < b->min_x ? -1 : 1;
    return a->brush < b->brush ? -1 : (a->brush > b->brush ? 1 : 0);
}

static int cmp_pair(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : (a[1] > b[1] ? 1 : 0);
}

/// Pairs of solid brushes whose bounds touch, both ways round, sorted. At
/// most max_pairs; false when some were left out.
static bool touching_pairs(const brush_geom *geom, const map_brush_src *brushes, uint32_t count, uint32_t max_pairs,
                           uint32_t (**pairs)[2], uint32_t *pair_count, bool *oom)
{
    sweep_item *items = malloc((count ? count : 1) * sizeof *items);
    uint32_t n = 0, cap = 1024, np = 0;
    uint32_t(*pr)[2] = malloc(cap * sizeof *pr);
    bool complete = true;
    *oom = !items || !pr;
    for (uint32_t i = 0; !*oom && i < count; i++)
        if (brushes[i].contents == SIM_MAP_SOLID)
            items[n++] = (sweep_item){geom[i].min[0], i};
    if (!*oom)
        qsort(items, n, sizeof *items, cmp_sweep);
    for (uint32_t i = 0; !*oom && complete && i < n; i++) {
        const brush_geom *a = &geom[items[i].brush];
        for (uint32_t j = i + 1; j < n && items[j].min_x <= a->max[0] + 4; j++) {
            const brush_geom *g = &geom[items[j].brush];
            if (!boxes_touch(a->min, a->max, g->min, g->max))
                continue;
            if (np + 2 > max_pairs) {
                complete = false;
                break;
            }
            if (np + 2 > cap) {
                cap *= 2;
                void *nr = realloc(pr, cap * sizeof *pr);
                if (!nr) {
                    *oom = true;
                    break;
                }
                pr = nr;
            }
            pr[np][0] = items[i].brush;
            pr[np++][1] = items[j].brush;
            pr[np][0] = items[j].brush;
            pr[np++][1] = items[i].brush;
        }
    }
    free(items);
    if (!*oom)
        qsort(pr, np, sizeof *pr, cmp_pair);
    *pairs = pr;
    *pair_count = np;
    return complete;
}

/// The faces of solid brush a cut by its neighbours pairs[from..to), the
/// pieces that remain emitted.
static bool union_brush(csg_state *cs, sim_level_builder *b, uint32_t a, uint32_t (*pairs)[2], uint32_t from,
                        uint32_t to, poly_list lists[2], uint64_t scale_m, int64_t scale_e)
{
    const brush_geom *ga = &cs->geom[a];
    for (uint32_t k = 0; k < ga->poly_count; k++) {
        const poly_ref *r = &cs->st->polys[ga->first_poly + k];
        const map_plane *pf = &cs->st->faces[r->face].plane;
        poly face;
        face.n = (int)r->count;
        memcpy(face.p, cs->st->pts[r->first], r->count * sizeof face.p[0]);
        int64_t fmin[3], fmax[3];
        poly_bounds(&face, fmin, fmax);
        lists[0].count = 0;
        list_push(cs, &lists[0], &face);
        int cur = 0;
        for (uint32_t i = from; i < to && lists[cur].count > 0 && cs->work <= cs->limit; i++) {
            uint32_t nb = pairs[i][1];
            const brush_geom *g = &cs->geom[nb];
            if (!boxes_touch(fmin, fmax, g->min, g->max))
                continue;
            poly_list *in = &lists[cur], *out = &lists[1 - cur];
            out->count = 0;
            for (uint32_t j = 0; j < in->count; j++) {
                int64_t pmin[3], pmax[3];
                poly_bounds(&in->items[j], pmin, pmax);
                if (cs->work > cs->limit || !boxes_touch(pmin, pmax, g->min, g->max))
                    // past the budget the pieces stay whole (the world's
                    // buried-face test still drops most hidden ones)
                    list_push(cs, out, &in->items[j]);
                else
                    clip_outside(cs, &in->items[j], pf, a, nb, out);
            }
            cur = 1 - cur;
        }
        if (cs->oom)
            return false;
        for (uint32_t j = 0; j < lists[cur].count; j++)
            if (!emit(cs->st, b, &lists[cur].items[j], scale_m, scale_e))
                return false;
        cs->fragments += lists[cur].count;
    }
    return true;
}

static bool engine_bounds(const brush_geom *g, uint64_t scale_m, int64_t scale_e, sim_aabb *out)
{
    sim_vec3 a, c;
    if (!map_to_engine(g->min, scale_m, scale_e, &a) || !map_to_engine(g->max, scale_m, scale_e, &c))
        return false;
    out->min = sim_v3(sim_fx_min(a.x, c.x), sim_fx_min(a.y, c.y), sim_fx_min(a.z, c.z));
    out->max = sim_v3(sim_fx_max(a.x, c.x), sim_fx_max(a.y, c.y), sim_fx_max(a.z, c.z));
    return true;
}

int map_build_world(const char *name, const map_face *faces, map_brush_src *brushes, uint32_t brush_count,
                    uint64_t scale_m, int64_t scale_e, uint32_t work_limit, sim_level_builder *b, sim_map *map,
                    sim_error *err)
{
    builder_state st;
    memset(&st, 0, sizeof st);
    st.name = name;
    st.err = err;
    st.faces = faces;
    csg_state *cs = calloc(1, sizeof *cs);
    brush_geom *geom = calloc(brush_count ? brush_count : 1, sizeof *geom);
    poly *w = malloc(2 * sizeof *w);
    poly_list lists[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
    uint32_t(*pairs)[2] = NULL;
    uint32_t pair_count = 0;
    int rc = 0;
    if (!cs || !geom || !w) {
        level_set_error(name, err, 0, "out of memory");
        rc = -1;
    }
    for (uint32_t i = 0; rc == 0 && i < brush_count; i++) {
        rc = brush_polys(&st, &brushes[i], &geom[i], &w[0], &w[1]);
        if (rc == 0 && !engine_bounds(&geom[i], scale_m, scale_e, &map->brushes[i].bounds))
            rc = brush_error(&st, &brushes[i], "beyond 4096 m from the origin at this unit_scale");
        if (rc == 0 && brushes[i].contents == SIM_MAP_SOLID)
            map->solid_brush_count++;
    }
    if (rc == 0) {
        cs->st = &st;
        cs->geom = geom;
        cs->limit = work_limit;
        bool oom = false;
        bool complete = touching_pairs(geom, brushes, brush_count, (uint32_t)1 << 22, &pairs, &pair_count, &oom);
        uint32_t at = 0;
        for (uint32_t a = 0; !oom && a < brush_count; a++) {
            uint32_t from = at;
            while (at < pair_count && pairs[at][0] == a)
                at++;
            if (brushes[a].contents != SIM_MAP_SOLID)
                continue;
            if (!union_brush(cs, b, a, pairs, from, at, lists, scale_m, scale_e)) {
                oom = cs->oom;
                if (!oom) {
                    rc = brush_error(&st, &brushes[a], "beyond 4096 m from the origin at this unit_scale");
                    break;
                }
            }
        }
        if (oom && rc == 0) {
            level_set_error(name, err, 0, "out of memory");
            rc = -1;
        }
        map->csg_complete = complete && cs->work <= cs->limit;
        map->csg_fragments = cs->fragments;
        map->csg_work = cs->work;
    }
    free(pairs);
    free(lists[0].items);
    free(lists[1].items);
    free(w);
    free(geom);
    free(cs);
    free(st.pts);
    free(st.polys);
    return rc;
}
