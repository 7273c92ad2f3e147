// keel: bounding-volume hierarchy over the static triangles. MIT licence.
//
// Built top-down by splitting at the median centroid along the longest axis of
// the centroid bounds. The order is total (centroid, then stable triangle id),
// so the tree is the same on every machine and whatever order the triangles
// came in. Our own selection, not qsort: no reliance on a library's sort.
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

typedef struct build_ctx {
    sim_world *w;
    uint32_t *order;    // indices into w->tris
    sim_vec3 *centroid; // per triangle, x3 (sum of vertices) to stay exact
    sim_aabb *box;      // per triangle, its bounds
    /// per triangle and axis, key[3 i + axis] = centroid * 2^32 + id (its
    /// stable id, the tie-break): ordered as (centroid, id), since
    /// 0 <= id < 2^32 and |centroid| < 2^31
    int64_t *key;
    int axis;
    uint32_t max_depth;
} build_ctx;

static bool key_less(const build_ctx *c, uint32_t a, uint32_t b)
{
    return c->key[3 * (size_t)a + c->axis] < c->key[3 * (size_t)b + c->axis];
}

// Rearrange a[0..n) so that a[k] holds the element of rank k and everything
// before it ranks lower (quickselect). key_less is a strict total order, so
// the result is the same on every machine.
static void select_kth(const build_ctx *c, uint32_t *a, uint32_t n, uint32_t k)
{
    uint32_t lo = 0, hi = n - 1;
    while (hi > lo) {
        // median of three as pivot, moved to a[hi]
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_less(c, a[mid], a[lo])) {
            uint32_t x = a[mid];
            a[mid] = a[lo];
            a[lo] = x;
        }
        if (key_less(c, a[hi], a[lo])) {
            uint32_t x = a[hi];
            a[hi] = a[lo];
            a[lo] = x;
        }
        if (key_less(c, a[mid], a[hi])) {
            uint32_t x = a[mid];
            a[mid] = a[hi];
            a[hi] = x;
        }
        uint32_t pivot = a[hi];
        uint32_t store = lo;
        for (uint32_t i = lo; i < hi; i++) {
            if (key_less(c, a[i], pivot)) {
                uint32_t x = a[i];
                a[i] = a[store];
                a[store] = x;
                store++;
            }
        }
        uint32_t x = a[hi];
        a[hi] = a[store];
        a[store] = x;
        if (store == k)
            return;
        if (store < k)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

static sim_aabb range_bounds(const build_ctx *c, uint32_t first, uint32_t count)
{
    sim_aabb b = c->box[c->order[first]];
    for (uint32_t i = 1; i < count; i++)
        b = sim_aabb_union(b, c->box[c->order[first + i]]);
    return b;
}

static void build_node(build_ctx *c, uint32_t node, uint32_t first, uint32_t count, uint32_t depth)
{
    sim_world *w = c->w;
    if (depth > c->max_depth)
        c->max_depth = depth;
    if (count <= SIM_BVH_LEAF_SIZE || depth + 1 >= SIM_BVH_MAX_DEPTH) {
        w->nodes[node].box = range_bounds(c, first, count);
        w->nodes[node].first = first;
        w->nodes[node].count = count;
        return;
    }
    sim_aabb cb = sim_aabb_of_point(c->centroid[c->order[first]]);
    for (uint32_t i = 1; i < count; i++)
        cb = sim_aabb_union(cb, sim_aabb_of_point(c->centroid[c->order[first + i]]));
    int64_t ex = (int64_t)cb.max.x - cb.min.x;
    int64_t ey = (int64_t)cb.max.y - cb.min.y;
    int64_t ez = (int64_t)cb.max.z - cb.min.z;
    c->axis = (ex >= ey && ex >= ez) ? 0 : (ey >= ez ? 1 : 2);
    uint32_t half = count / 2;
    select_kth(c, c->order + first, count, half);
    uint32_t left = w->node_count;
    w->node_count += 2;
    w->nodes[node].first = left;
    w->nodes[node].count = 0;
    build_node(c, left, first, half, depth + 1);
    build_node(c, left + 1, first + half, count - half, depth + 1);
    // the bounds of the whole range, from its two halves'
    w->nodes[node].box = sim_aabb_union(w->nodes[left].box, w->nodes[left + 1].box);
}

// tris[i] = the old tris[order[i]] for every i, in place (no second copy of
// the triangles to allocate and fault in): each cycle of the permutation is
// rotated once. Leaves order[] as the identity.
static void permute(sim_tri *tris, uint32_t *order, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (order[i] == i)
            continue;
        sim_tri first = tris[i];
        uint32_t j = i;
        while (order[j] != i) {
            uint32_t k = order[j];
            tris[j] = tris[k];
            order[j] = j;
            j = k;
        }
        tris[j] = first;
        order[j] = j;
    }
}

bool sim_bvh_build(sim_world *w)
{
    w->node_count = 0;
    if (w->tri_count == 0)
        return true;
    uint32_t n = w->tri_count;
    build_ctx c = {w, NULL, NULL, NULL, NULL, 0, 0};
    c.order = malloc(n * sizeof *c.order);
    c.centroid = malloc(n * sizeof *c.centroid);
    c.box = malloc(n * sizeof *c.box);
    c.key = malloc(3 * (size_t)n * sizeof *c.key);
    w->nodes = calloc(2 * (size_t)n, sizeof *w->nodes);
    bool ok = c.order && c.centroid && c.box && c.key && w->nodes;
    if (ok) {
        for (uint32_t i = 0; i < n; i++) {
            const sim_tri *t = &w->tris[i];
            c.order[i] = i;
            // The sum of three coordinates (<= 3 * 4096 m) still fits in sim_fx.
            c.centroid[i] = sim_v3_add(sim_v3_add(t->v[0], t->v[1]), t->v[2]);
            c.box[i] = sim_tri_bounds(t);
            for (int a = 0; a < 3; a++)
                c.key[3 * (size_t)i + a] = (int64_t)sim_v3_comp(c.centroid[i], a) * ((int64_t)1 << 32) + t->id;
        }
        w->node_count = 1;
        build_node(&c, 0, 0, n, 0);
        // The triangles' bounds side by side: a walk tests many of them and
        // opens a triangle only when its box passes.
        free(w->tri_box);
        w->tri_box = malloc(n * sizeof *w->tri_box);
        ok = w->tri_box != NULL;
        for (uint32_t i = 0; ok && i < n; i++)
            w->tri_box[i] = c.box[c.order[i]];
        permute(w->tris, c.order, n);
        w->stats.bvh_nodes = w->node_count;
        w->stats.bvh_depth = c.max_depth + 1;
    }
    free(c.order);
    free(c.centroid);
    free(c.box);
    free(c.key);
    return ok;
}

// The walk of a box: the next leaf whose box overlaps `box`, depth first
// with the left child first (the stack holds the nodes still to open); NULL
// when none is left.
typedef struct box_walk {
    uint32_t stack[SIM_BVH_MAX_DEPTH * 2];
    int top;
} box_walk;

// A walk of the whole hierarchy (nothing to walk in an empty one).
static inline void box_walk_begin(box_walk *k, const sim_world *w)
{
    k->top = 0;
    if (w->node_count > 0)
        k->stack[k->top++] = 0;
}

static inline const sim_bvh_node *next_leaf(const sim_world *w, sim_aabb box, box_walk *k)
{
    while (k->top > 0) {
        const sim_bvh_node *nd = &w->nodes[k->stack[--k->top]];
        if (!sim_aabb_overlaps(nd->box, box))
            continue;
        if (nd->count > 0)
            return nd;
        // Right first so the left child is visited first.
        k->stack[k->top++] = nd->first + 1;
        k->stack[k->top++] = nd->first;
    }
    return NULL;
}

void sim_bvh_query(const sim_world *w, sim_aabb box, sim_bvh_visit_fn visit, void *ctx)
{
    box_walk k;
    box_walk_begin(&k, w);
    const sim_bvh_node *nd;
    while ((nd = next_leaf(w, box, &k)) != NULL)
        for (uint32_t i = nd->first; i < nd->first + nd->count; i++)
            if (sim_aabb_overlaps(w->tri_box[i], box) && !visit(ctx, &w->tris[i]))
                return;
}

uint32_t sim_bvh_collect(const sim_world *w, sim_aabb box, uint32_t *out, uint32_t cap)
{
    box_walk k;
    box_walk_begin(&k, w);
    uint32_t n = 0;
    const sim_bvh_node *nd;
    while ((nd = next_leaf(w, box, &k)) != NULL) {
        for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
            if (!sim_aabb_overlaps(w->tri_box[i], box))
                continue;
            if (n == cap)
                return cap + 1;
            out[n++] = i;
        }
    }
    return n;
}

// Slab test of a segment against a box, with fractions as Q16.16 rounded
// outward (entries down, exits up) so that rounding never drops a box.
static bool segment_hits_box(sim_vec3 o, sim_vec3 d, sim_aabb b)
{
    int64_t enter = 0, exit = (int64_t)1 << 16;
    for (int a = 0; a < 3; a++) {
        int64_t oa = sim_v3_comp(o, a), da = sim_v3_comp(d, a);
        int64_t lo = sim_v3_comp(b.min, a), hi = sim_v3_comp(b.max, a);
        if (da == 0) {
            if (oa < lo || oa > hi)
                return false;
            continue;
        }
        int64_t n1 = (lo - oa) * 65536, n2 = (hi - oa) * 65536;
        if (da < 0) {
            int64_t x = n1;
            n1 = -n2;
            n2 = -x;
            da = -da;
        }
        int64_t t1 = sim_div_floor_s64(n1, da);
        int64_t t2 = -sim_div_floor_s64(-n2, da); // ceiling
        if (t1 > enter)
            enter = t1;
        if (t2 < exit)
            exit = t2;
        if (enter > exit)
            return false;
    }
    return true;
}

void sim_bvh_query_segment(const sim_world *w, sim_vec3 origin, sim_vec3 d, sim_vec3 grow, sim_bvh_visit_fn visit,
                           void *ctx)
{
    if (w->node_count == 0)
        return;
    // The box around the grown segment rejects most nodes with six compares;
    // the slab test (six divisions) only pays for itself on long motions,
    // where that box is mostly empty.
    sim_aabb sb = sim_aabb_union(sim_aabb_of_point(origin), sim_aabb_of_point(sim_v3_add(origin, d)));
    sb = sim_aabb_expand(sb, grow);
    sim_fx ax = sim_fx_abs(d.x), ay = sim_fx_abs(d.y), az = sim_fx_abs(d.z);
    bool slabs = sim_fx_max(ax, sim_fx_max(ay, az)) >= SIM_FX_INT(2);
    uint32_t stack[SIM_BVH_MAX_DEPTH * 2];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const sim_bvh_node *nd = &w->nodes[stack[--top]];
        if (!sim_aabb_overlaps(nd->box, sb) || (slabs && !segment_hits_box(origin, d, sim_aabb_expand(nd->box, grow))))
            continue;
        if (nd->count > 0) {
            for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
                sim_aabb tb = w->tri_box[i];
                if (!sim_aabb_overlaps(tb, sb) || (slabs && !segment_hits_box(origin, d, sim_aabb_expand(tb, grow))))
                    continue;
                if (!visit(ctx, &w->tris[i]))
                    return;
            }
        } else {
            stack[top++] = nd->first + 1;
            stack[top++] = nd->first;
        }
    }
}

// ---- a neighbourhood (world_near.h) ---------------------------------------------

static bool box_inside(sim_aabb in, sim_aabb out)
{
    return in.min.x >= out.min.x && in.max.x <= out.max.x && in.min.y >= out.min.y && in.max.y <= out.max.y &&
           in.min.z >= out.min.z && in.max.z <= out.max.z;
}

void sim_near_gather(sim_near *near, const sim_world *world, sim_aabb box)
{
    near->world = world;
    near->box = box;
    near->base = box.min;
    near->count = 0;
    near->usable = sim_pbox_rel_fits(box); // too wide: the hierarchy answers
    if (!near->usable)
        return;
    uint32_t n = sim_bvh_collect(world, box, near->tri, SIM_NEAR_CAPACITY);
    if (n > SIM_NEAR_CAPACITY) {
        near->usable = false; // too many: the hierarchy answers
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        near->pbox[i] = sim_pbox_rel(world->tri_box[near->tri[i]], box.min);
    near->count = n;
}

// The triangle tests of the hierarchy's walks alone: a node's box holds its
// triangles' boxes and both tests are monotone in the box (a larger box
// passes whenever a smaller one does; the slab test rounds outward), so a
// triangle that passes its own test has passed every node above it: the
// triangles visited, and their order, are the hierarchy's. The box test is
// the packed one, exact for a query box inside near->box (pbox.h).
bool sim_near_segment_tris(const sim_world *w, const sim_near *near, sim_vec3 origin, sim_vec3 d, sim_vec3 grow,
                           uint32_t *out, uint32_t *count)
{
    sim_aabb sb = sim_aabb_union(sim_aabb_of_point(origin), sim_aabb_of_point(sim_v3_add(origin, d)));
    sb = sim_aabb_expand(sb, grow);
    if (!near || !near->usable || near->world != w || !box_inside(sb, near->box))
        return false;
    sim_fx ax = sim_fx_abs(d.x), ay = sim_fx_abs(d.y), az = sim_fx_abs(d.z);
    bool slabs = sim_fx_max(ax, sim_fx_max(ay, az)) >= SIM_FX_INT(2);
    sim_pbox pb = sim_pbox_rel(sb, near->base);
    const sim_pbox *pbox = near->pbox;
    uint32_t k = 0;
    for (uint32_t i = 0, n = near->count; i < n; i++) {
        if (!sim_pbox_overlaps(pbox[i], pb))
            continue;
        uint32_t t = near->tri[i];
        if (slabs && !segment_hits_box(origin, d, sim_aabb_expand(w->tri_box[t], grow)))
            continue;
        out[k++] = t;
    }
    *count = k;
    return true;
}

void sim_near_query_segment(const sim_world *w, const sim_near *near, sim_vec3 origin, sim_vec3 d, sim_vec3 grow,
                            sim_bvh_visit_fn visit, void *ctx)
{
    uint32_t list[SIM_NEAR_CAPACITY], n;
    if (!sim_near_segment_tris(w, near, origin, d, grow, list, &n)) {
        sim_bvh_query_segment(w, origin, d, grow, visit, ctx);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!visit(ctx, &w->tris[list[i]]))
            return;
}

void sim_near_query_box(const sim_world *w, const sim_near *near, sim_aabb box, sim_bvh_visit_fn visit, void *ctx)
{
    if (!near || !near->usable || near->world != w || !box_inside(box, near->box)) {
        sim_bvh_query(w, box, visit, ctx);
        return;
    }
    sim_pbox pb = sim_pbox_rel(box, near->base);
    const sim_pbox *pbox = near->pbox;
    for (uint32_t i = 0, n = near->count; i < n; i++)
        if (sim_pbox_overlaps(pbox[i], pb) && !visit(ctx, &w->tris[near->tri[i]]))
            return;
}
