// keel: internal-edge classification's bounded walks through the hierarchy
// (the queries of edges.c and world_vertices.c). MIT licence, see LICENSE.
#include <stdlib.h>

#include "world_classify.h"

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// The segment's terms (2a + d, d and |d|) for the segment from a to a + d.
static segment segment_of(sim_vec3 a, sim_vec3 d)
{
    segment sg;
    for (int k = 0; k < 3; k++) {
        sg.e[k] = sim_v3_comp(d, k);
        sg.s[k] = 2 * (int64_t)sim_v3_comp(a, k) + sg.e[k];
        sg.ae[k] = abs64(sg.e[k]);
    }
    return sg;
}

// Does the segment meet box b grown by g? Exact, in integers: no separating
// axis among the box's three and the cross products of d with them.
// Coordinates are doubled so that centres and half extents stay whole. Box
// corners stay within 8192 m (2^29 raw), so |c| < 2^31, |e| < 2^30 and
// h < 2^31: every product is below 2^61, every sum below 2^62.
//
// Only the cross-product axes are tested here: a region's box is its
// segment's bounds grown by the walk's `grow` (edge_box), and region_meets
// tests that first, which is the same as the three box axes here (the
// segment's extent along axis k against b's grown by g).
static inline bool segment_meets_box(const segment *sg, const sim_aabb *b, sim_fx g)
{
    int64_t c[3], h[3];
    const int64_t *e = sg->e, *ae = sg->ae;
    c[0] = (int64_t)b->min.x + b->max.x - sg->s[0];
    c[1] = (int64_t)b->min.y + b->max.y - sg->s[1];
    c[2] = (int64_t)b->min.z + b->max.z - sg->s[2];
    h[0] = (int64_t)b->max.x - b->min.x + 2 * (int64_t)g;
    h[1] = (int64_t)b->max.y - b->min.y + 2 * (int64_t)g;
    h[2] = (int64_t)b->max.z - b->min.z + 2 * (int64_t)g;
#ifdef KEEL_VERIFY_EDGES
    for (int k = 0; k < 3; k++)
        if (abs64(c[k]) > h[k] + ae[k])
            abort(); // region_meets's box test let through what this axis separates
#endif
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        if (abs64(c[i] * e[j] - c[j] * e[i]) > h[i] * ae[j] + h[j] * ae[i])
            return false;
    }
    return true;
}

// sim_aabb_overlaps through pointers: the walks below make millions of these.
static inline bool boxes_meet(const sim_aabb *a, const sim_aabb *b)
{
    return a->min.x <= b->max.x && a->max.x >= b->min.x && a->min.y <= b->max.y && a->max.y >= b->min.y &&
           a->min.z <= b->max.z && a->max.z >= b->min.z;
}

static inline bool region_meets(const region *r, const sim_aabb *b, sim_fx grow)
{
    return boxes_meet(b, &r->box) && (!r->seg || segment_meets_box(&r->sg, b, grow));
}

// A walk through the hierarchy, left child first, counting its box tests:
// every node taken and every triangle of a leaf opened.
typedef struct walk {
    uint32_t stack[SIM_BVH_MAX_DEPTH * 2];
    int top;
    uint32_t tests;
    bool complete; // false once it has given up (SIM_EDGES_MAX_TESTS)
} walk;

static inline void walk_start(walk *wk, const sim_world *w)
{
    wk->top = 0;
    wk->tests = 0;
    wk->complete = true;
    if (w->node_count > 0)
        wk->stack[wk->top++] = 0;
}

// One more box test: false (the walk given up) when it has made
// SIM_EDGES_MAX_TESTS already.
static inline bool walk_count(walk *wk)
{
    if (wk->tests == SIM_EDGES_MAX_TESTS) {
        wk->complete = false;
        return false;
    }
    wk->tests++;
    return true;
}

// The next node (its test counted), or NULL at the end or once given up.
static inline const sim_bvh_node *walk_next(walk *wk, const sim_world *w)
{
    if (wk->top == 0 || !wk->complete)
        return NULL;
    const sim_bvh_node *nd = &w->nodes[wk->stack[--wk->top]];
    return walk_count(wk) ? nd : NULL;
}

// Opens internal node nd: its children come next, the left one first.
static inline void walk_open(walk *wk, const sim_bvh_node *nd)
{
    wk->stack[wk->top++] = nd->first + 1;
    wk->stack[wk->top++] = nd->first;
}

static inline void walk_done(classifier *k, const walk *wk)
{
    k->tests += wk->tests;
    k->capped += !wk->complete;
}

static inline bool query(classifier *k, region *r, int count, sim_fx grow)
{
    const sim_world *w = k->w;
    const sim_aabb *tri_box = w->tri_box;
    sim_aabb all = r[0].box;
    int ord[3], n_ord = 0; // the places, those without a segment first
    for (int j = 0; j < count; j++) {
        r[j].hits = 0;
        if (r[j].seg)
            r[j].sg = segment_of(r[j].seg[0], sim_v3_sub(r[j].seg[1], r[j].seg[0]));
        else
            ord[n_ord++] = j;
        all = sim_aabb_union(all, r[j].box);
    }
    for (int j = 0; j < count; j++)
        if (r[j].seg)
            ord[n_ord++] = j;
    walk wk;
    walk_start(&wk, w);
    for (const sim_bvh_node *nd; (nd = walk_next(&wk, w)) != NULL;) {
        bool meets = false;
        for (int j = 0; j < count && !meets; j++)
            meets = region_meets(&r[ord[j]], &nd->box, grow);
        if (!meets)
            continue;
        if (nd->count == 0) {
            walk_open(&wk, nd);
            continue;
        }
        for (uint32_t i = nd->first; i < nd->first + nd->count && wk.complete && walk_count(&wk); i++) {
            const sim_aabb *tb = &tri_box[i];
            if (count > 1 && !boxes_meet(tb, &all))
                continue;
            for (int j = 0; j < count && wk.complete; j++) {
                if (!region_meets(&r[j], tb, grow))
                    continue;
                if (r[j].hits == r[j].max_hits)
                    wk.complete = false;
                else
                    r[j].hit[r[j].hits++] = i;
            }
        }
    }
    walk_done(k, &wk);
    return wk.complete;
}

bool sim_classify_query(classifier *k, region r[3], sim_fx grow) { return query(k, r, 3, grow); }

// sim_classify_query for one place without a segment, written out: the vertex pass makes
// tens of thousands of these.
int sim_classify_query_box(classifier *k, sim_aabb box, uint32_t max_hits)
{
    const sim_world *w = k->w;
    const sim_aabb *tri_box = w->tri_box;
    uint32_t *hit = k->hit[0], hits = 0;
    walk wk;
    walk_start(&wk, w);
    for (const sim_bvh_node *nd; (nd = walk_next(&wk, w)) != NULL;) {
        if (!boxes_meet(&nd->box, &box))
            continue;
        if (nd->count == 0) {
            walk_open(&wk, nd);
            continue;
        }
        for (uint32_t i = nd->first; i < nd->first + nd->count && wk.complete && walk_count(&wk); i++) {
            if (!boxes_meet(&tri_box[i], &box))
                continue;
            if (hits == max_hits)
                wk.complete = false;
            else
                hit[hits++] = i;
        }
    }
    walk_done(k, &wk);
    return wk.complete ? (int)hits : -1;
}
