// keel: the scene: characters, moving platforms and water on a static world,
// one tick at a time. MIT licence, see LICENSE.
//
// Everything a tick depends on is the tick number and the characters' states
// (kept in id order), plus the fixed platform paths and water boxes; every
// loop below runs in id order or over a list sorted under a strict total
// order, so nothing depends on the order of adds or on memory layout. All
// memory is taken in create and the add functions; a step allocates nothing.
//
// The collider a character sees during its step is a "view": the world, the
// platforms' triangles at the tick being computed and a snapshot of every
// character's shape taken before any character's own move. The same view
// (with the platforms at the current tick) backs sim_scene_collider.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "world_near.h"

// ---- platform paths -----------------------------------------------------------

sim_vec3 sim_platform_position(const sim_platform_def *p, uint32_t tick)
{
    uint32_t n = p->point_count;
    if (n == 0)
        return sim_v3_zero();
    if (n > SIM_PLATFORM_MAX_POINTS)
        n = SIM_PLATFORM_MAX_POINTS;
    uint64_t move = p->ticks_per_leg ? p->ticks_per_leg : 1;
    uint64_t leg = move + p->pause_ticks;
    uint64_t phase = (uint64_t)tick % (leg * n);
    uint32_t i = (uint32_t)(phase / leg);
    uint64_t r = phase % leg;
    sim_vec3 a = p->points[i];
    if (r < p->pause_ticks)
        return a;
    // k in [0, move): k = 0 is exactly point i, and the next leg starts
    // exactly at point i + 1, so waypoints are hit without rounding.
    int64_t k = (int64_t)(r - p->pause_ticks);
    sim_vec3 b = p->points[(i + 1) % n];
    int64_t m = (int64_t)move;
    return sim_v3((sim_fx)(a.x + sim_div_round_s64(((int64_t)b.x - a.x) * k, m)),
                  (sim_fx)(a.y + sim_div_round_s64(((int64_t)b.y - a.y) * k, m)),
                  (sim_fx)(a.z + sim_div_round_s64(((int64_t)b.z - a.z) * k, m)));
}

// Faces as corner bit patterns (x, y, z bits 2, 1, 0), counter-clockwise seen
// from outside; each face is split along corners 0-2 of its row.
static const unsigned char box_face[6][4] = {
    {4, 6, 7, 5}, {0, 1, 3, 2}, {2, 3, 7, 6}, {0, 4, 5, 1}, {1, 5, 7, 3}, {0, 2, 6, 4},
};

static void platform_build(scene_platform *p, sim_vec3 c)
{
    sim_vec3 h = p->def.half;
    uint32_t id = SIM_FEATURE_OBJECT_BIT | p->def.id;
    for (int f = 0; f < 6; f++) {
        sim_vec3 q[4];
        for (int k = 0; k < 4; k++) {
            int b = box_face[f][k];
            q[k] = sim_v3((b & 4) ? c.x + h.x : c.x - h.x, (b & 2) ? c.y + h.y : c.y - h.y,
                          (b & 1) ? c.z + h.z : c.z - h.z);
        }
        sim_tri *t = &p->tris[2 * f];
        // Half extents of at least SIM_SHAPE_MIN_SIZE keep every face sound.
        sim_tri_init(&t[0], q[0], q[1], q[2], id, 1);
        sim_tri_init(&t[1], q[0], q[2], q[3], id, 1);
        // The diagonal is inside a flat face: sliding across it must not
        // bump. Its end vertices are real box corners and stay active.
        t[0].flags |= SIM_TRI_EDGE0_INACTIVE << 2;
        t[1].flags |= SIM_TRI_EDGE0_INACTIVE << 0;
    }
    p->bounds = (sim_aabb){sim_v3_sub(c, h), sim_v3_add(c, h)};
}

static bool fits_world(sim_vec3 c, sim_vec3 h)
{
    return sim_v3_in_world(c) && sim_v3_in_world(sim_v3_add(c, h)) && sim_v3_in_world(sim_v3_sub(c, h));
}

static bool platform_valid(const sim_platform_def *p)
{
    if (p->id == 0 || (p->id & SIM_FEATURE_OBJECT_BIT))
        return false;
    if (p->point_count < 1 || p->point_count > SIM_PLATFORM_MAX_POINTS || p->ticks_per_leg < 1)
        return false;
    const sim_fx lo = SIM_SHAPE_MIN_SIZE, hi = SIM_FX_INT(1024);
    sim_vec3 h = p->half;
    if (h.x < lo || h.y < lo || h.z < lo || h.x > hi || h.y > hi || h.z > hi)
        return false;
    for (uint32_t i = 0; i < p->point_count; i++)
        if (!sim_v3_in_world(p->points[i]) || !fits_world(p->points[i], h))
            return false;
    // At most 16 m per tick on each axis: a tick's motion must fit one sweep.
    int64_t limit = (int64_t)p->ticks_per_leg * SIM_FX_INT(16);
    for (uint32_t i = 0; i < p->point_count; i++) {
        sim_vec3 a = p->points[i], b = p->points[(i + 1) % p->point_count];
        int64_t d[3] = {(int64_t)b.x - a.x, (int64_t)b.y - a.y, (int64_t)b.z - a.z};
        for (int k = 0; k < 3; k++)
            if (d[k] > limit || d[k] < -limit)
                return false;
    }
    return true;
}

// ---- lookups ------------------------------------------------------------------

// Index of the first character with id >= id.
static uint32_t char_lower_bound(const sim_scene *sc, uint32_t id)
{
    uint32_t lo = 0, hi = sc->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sc->chars[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int64_t char_index(const sim_scene *sc, uint32_t id)
{
    uint32_t i = char_lower_bound(sc, id);
    return i < sc->count && sc->chars[i].id == id ? (int64_t)i : -1;
}

static uint32_t platform_lower_bound(const sim_scene *sc, uint32_t id)
{
    uint32_t lo = 0, hi = sc->platform_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sc->platforms[mid].def.id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static scene_platform *find_platform(sim_scene *sc, uint32_t id)
{
    if (id == 0)
        return NULL;
    uint32_t i = platform_lower_bound(sc, id);
    return i < sc->platform_count && sc->platforms[i].def.id == id ? &sc->platforms[i] : NULL;
}

// ---- the view: platforms and the character snapshot -----------------------------

static sim_fx clamp_speed(int64_t v)
{
    return v > SIM_MOVE_MAX_SPEED ? SIM_MOVE_MAX_SPEED : (v < -SIM_MOVE_MAX_SPEED ? -SIM_MOVE_MAX_SPEED : (sim_fx)v);
}

// Platforms at `tick`; with `motion`, at tick + 1 with the motion in between.
void scene_build_platforms(sim_scene *sc, uint32_t tick, bool motion)
{
    int64_t rate = sc->settings.tick_rate < 1 ? 1 : sc->settings.tick_rate;
    for (uint32_t i = 0; i < sc->platform_count; i++) {
        scene_platform *p = &sc->platforms[i];
        sim_vec3 at = sim_platform_position(&p->def, tick);
        p->delta = sim_v3_zero();
        if (motion) {
            sim_vec3 next = sim_platform_position(&p->def, tick + 1u);
            // tick + 1 wraps to 0 after 2^32 - 1, where the path restarts at
            // phase 0: the platform jumps there. A jump is not a motion: it
            // carries nobody and has no velocity; characters it lands on are
            // pushed out by their depenetration like any overlap.
            if (tick != UINT32_MAX)
                p->delta = sim_v3_sub(next, at);
            at = next;
        }
        p->velocity =
            sim_v3(clamp_speed(p->delta.x * rate), clamp_speed(p->delta.y * rate), clamp_speed(p->delta.z * rate));
        platform_build(p, at);
    }
}

static bool body_before(const sim_scene *sc, uint32_t a, uint32_t b)
{
    sim_fx ka = sim_v3_comp(sc->bodies[a].bounds.min, sc->sort_axis);
    sim_fx kb = sim_v3_comp(sc->bodies[b].bounds.min, sc->sort_axis);
    if (ka != kb)
        return ka < kb;
    return a < b; // body index order is id order
}

// Insertion sort of sc->order (a permutation of the bodies) with at most
// `budget` moves: false when it ran out (sc->order is then some permutation).
static bool insertion_sort_bodies(sim_scene *sc, uint64_t budget)
{
    uint32_t *o = sc->order;
    for (uint32_t i = 1; i < sc->count; i++) {
        uint32_t x = o[i], j = i;
        while (j > 0 && body_before(sc, x, o[j - 1])) {
            if (budget-- == 0)
                return false;
            o[j] = o[j - 1];
            j--;
        }
        o[j] = x;
    }
    return true;
}

// The bodies in body_before order into sc->order. That order is unique
// (body_before is strict), so any correct sort gives it: the last sort's
// order (a permutation of as many bodies) is nearly sorted from one tick to
// the next and an insertion sort finishes it in about n steps; when it is
// not (another count, much motion, the axis changed), a bottom-up merge sort
// from scratch: O(n log n) in every case. No allocation.
static void sort_bodies(sim_scene *sc)
{
    uint32_t n = sc->count;
    if (sc->order_count == n && insertion_sort_bodies(sc, 4 * (uint64_t)n))
        return;
    sc->order_count = n;
    uint32_t *src = sc->order, *dst = sc->scratch;
    for (uint32_t i = 0; i < n; i++)
        src[i] = i;
    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = body_before(sc, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != sc->order)
        memcpy(sc->order, src, (size_t)n * sizeof *src);
}

// Character i's body from its current state.
static void body_fill(const sim_scene *sc, uint32_t i, scene_body *b)
{
    const sim_move_settings *s = &sc->settings;
    b->id = sc->chars[i].id;
    b->shape = sim_char_shape(s, &sc->chars[i]);
    b->center = sim_char_center(s, &sc->chars[i]);
    b->bounds = sim_shape_bounds(b->shape, b->center);
    b->solid = sc->chars[i].move_type != SIM_MOVE_FLY;
}

void scene_bodies_fill(sim_scene *sc)
{
    for (uint32_t i = 0; i < sc->count; i++)
        body_fill(sc, i, &sc->bodies[i]);
}

// The snapshot bodies of work items [begin, end) (sc->batch characters
// each). Ghosts (characters the separation could not place this tick) and
// the others pass through each other (scene_separate.c). Each item writes
// only its own characters' bodies: the items may run on several threads.
static void snapshot_items(void *task, uint32_t begin, uint32_t end)
{
    sim_scene *sc = task;
    uint32_t from, to;
    scene_item_range(sc, begin, end, &from, &to);
    for (uint32_t i = from; i < to; i++) {
        body_fill(sc, i, &sc->bodies[i]);
        if (sc->sep_flag[i] & SEP_FLAG_GHOST)
            sc->bodies[i].solid = false;
    }
}

// The snapshot and the broad phase over it; `parallel`: the bodies filled
// on the executor (in a step only).
static void build_bodies(sim_scene *sc, bool parallel)
{
    sim_fx min_x = 0, max_x = 0, min_z = 0, max_z = 0;
    if (parallel)
        scene_run_items(sc, snapshot_items);
    else
        snapshot_items(sc, 0, scene_item_count(sc));
    for (uint32_t i = 0; i < sc->count; i++) {
        const scene_body *b = &sc->bodies[i];
        if (i == 0 || b->center.x < min_x)
            min_x = b->center.x;
        if (i == 0 || b->center.x > max_x)
            max_x = b->center.x;
        if (i == 0 || b->center.z < min_z)
            min_z = b->center.z;
        if (i == 0 || b->center.z > max_z)
            max_z = b->center.z;
    }
    // Sort along the horizontal axis the crowd spreads over most, so a line
    // of characters along z does not put them all in one x interval.
    sc->sort_axis = ((int64_t)max_z - min_z) > ((int64_t)max_x - min_x) ? 2 : 0;
    sc->max_width = 0;
    for (uint32_t i = 0; i < sc->count; i++) {
        sim_aabb bb = sc->bodies[i].bounds;
        sim_fx w = sim_v3_comp(bb.max, sc->sort_axis) - sim_v3_comp(bb.min, sc->sort_axis);
        if (w > sc->max_width)
            sc->max_width = w;
    }
    sort_bodies(sc);
    for (uint32_t i = 0; i < sc->count; i++) {
        const scene_body *b = &sc->bodies[sc->order[i]];
        sc->keys[i] = sim_v3_comp(b->bounds.min, sc->sort_axis);
        sc->span[2 * i] = sim_v3_comp(b->bounds.min, 2 - sc->sort_axis);
        sc->span[2 * i + 1] = sim_v3_comp(b->bounds.max, 2 - sc->sort_axis);
    }
}

// The first sorted slot whose body can reach `lo` along the sort axis.
static uint32_t bodies_from(const sim_scene *sc, int64_t lo)
{
    int64_t key = lo - sc->max_width;
    // A lower bound without a branch on the keys (a conditional move in
    // each halving: the keys met are in no order a predictor could learn).
    uint32_t base = 0, n = sc->count;
    if (n == 0)
        return 0;
    while (n > 1) {
        uint32_t half = n / 2;
        base = sc->keys[base + half] < key ? base + half : base;
        n -= half;
    }
    return base + (sc->keys[base] < key);
}

// The other character j as an obstacle for the view's owner. `shrink`, when
// not NULL, keeps the shrink of the pair for the rest of the move (-1: not
// known yet): it depends only on the two snapshot bodies.
static sim_obstacle obstacle(const scene_view *v, uint32_t j, sim_fx *shrink)
{
    const sim_scene *sc = v->scene;
    const scene_body *o = &sc->bodies[j];
    sim_obstacle ob;
    ob.shape = o->shape;
    ob.center = o->center;
    ob.feature = SIM_FEATURE_OBJECT_BIT | o->id;
    ob.shrink = 0;
    ob.side = -1;
    if (v->self >= 0) {
        const scene_body *me = &sc->bodies[v->self];
        ob.side = me->id < o->id ? -1 : 1;
        if (shrink && *shrink >= 0) {
            ob.shrink = *shrink;
            return ob;
        }
        // Each of a pair overlapping at the start of the tick sees the other
        // smaller by half the overlap: each resolves its half, and asking
        // again after moving does not hand it the other half as well.
        sim_fx d = sim_shape_pair_depth(me->shape, me->center, o->shape, o->center);
        ob.shrink = d > 0 ? d / 2 : 0;
        if (shrink)
            *shrink = ob.shrink;
    }
    return ob;
}

// The other solid characters whose bounds touch `box`, from the sorted broad
// phase: start with bodies_in, then take them one by one with next_body.
typedef struct body_cursor {
    uint32_t slot;
    int64_t hi;
    body_near *list; // non-NULL: take the bodies from this list
} body_cursor;

// Where the shrink of the body next_body just took is kept (NULL: nowhere).
static sim_fx *cursor_shrink(const body_cursor *c) { return c->list ? &c->list->shrink[c->slot - 1] : NULL; }

static body_cursor bodies_in(const scene_view *v, sim_aabb box)
{
    const sim_scene *sc = v->scene;
    body_near *bn = v->bodies_near;
    if (bn && bn->usable && scene_box_inside(box, bn->box))
        return (body_cursor){0, 0, bn};
    body_cursor c = {bodies_from(sc, sim_v3_comp(box.min, sc->sort_axis)), sim_v3_comp(box.max, sc->sort_axis), NULL};
    return c;
}

static bool body_wanted(const scene_view *v, sim_aabb box, uint32_t j)
{
    const sim_scene *sc = v->scene;
    return (int64_t)j != v->self && sc->bodies[j].solid && sim_aabb_overlaps(box, sc->bodies[j].bounds);
}

static bool next_body(const scene_view *v, sim_aabb box, body_cursor *c, uint32_t *body)
{
    const sim_scene *sc = v->scene;
    if (c->list) {
        // Every body that touches box touches the list's larger box: the
        // same test over the list finds the same bodies, in the same order.
        for (; c->slot < c->list->count; c->slot++) {
            uint32_t j = c->list->body[c->slot];
            if (!body_wanted(v, box, j))
                continue;
            c->slot++;
            *body = j;
            return true;
        }
        return false;
    }
    // The other horizontal axis first, from the sorted copy: a body whose
    // bounds miss the box there is not wanted (sim_aabb_overlaps), and the
    // test reads no body.
    int other = 2 - sc->sort_axis;
    sim_fx olo = sim_v3_comp(box.min, other), ohi = sim_v3_comp(box.max, other);
    for (; c->slot < sc->count && sc->keys[c->slot] <= c->hi; c->slot++) {
        // One branch, mostly taken (most bodies along the sort axis miss
        // on the other), rather than two at random.
        if ((sc->span[2 * c->slot] > ohi) | (sc->span[2 * c->slot + 1] < olo))
            continue;
        uint32_t j = sc->order[c->slot];
        if (!body_wanted(v, box, j))
            continue;
        c->slot++;
        *body = j;
        return true;
    }
    return false;
}

// ---- queries -----------------------------------------------------------------

typedef struct sweep_best {
    bool has;
    sim_sweep_result r;
    uint32_t sub; // which triangle of a platform: ties inside one object id
} sweep_best;

// Strict order of sweep results: earlier (fraction, then the exact progress
// along the motion, which the fraction may round away), a real overlap before
// a touch, then face, edge, vertex, then feature id and index, then the
// triangle within an object.
static bool result_before(const sim_sweep_result *a, uint32_t asub, const sim_sweep_result *b, uint32_t bsub,
                          sim_vec3 start, sim_vec3 d)
{
    if (a->fraction != b->fraction)
        return a->fraction < b->fraction;
    int64_t pa = sim_v3_dot64(sim_v3_sub(a->position, start), d);
    int64_t pb = sim_v3_dot64(sim_v3_sub(b->position, start), d);
    if (pa != pb)
        return pa < pb;
    if (a->start_overlap != b->start_overlap)
        return a->start_overlap;
    if (a->feature.type != b->feature.type)
        return a->feature.type < b->feature.type;
    if (a->feature.triangle != b->feature.triangle)
        return a->feature.triangle < b->feature.triangle;
    if (a->feature.index != b->feature.index)
        return a->feature.index < b->feature.index;
    return asub < bsub;
}

static void offer(sweep_best *best, const sim_sweep_ray *ray, const sim_tri_hit *h, uint32_t sub)
{
    sim_sweep_result r = {0};
    sim_fx s = h->s < 0 ? 0 : (h->s > ray->length ? ray->length : h->s);
    r.hit = true;
    r.start_overlap = h->start_overlap;
    r.fraction = (sim_fx)(((int64_t)s << 16) / ray->length);
    r.position = sim_v3_add(ray->start, sim_dir_scale(ray->dir, s));
    r.normal = h->normal;
    r.point = h->point;
    r.feature = h->feature;
    if (!best->has || result_before(&r, sub, &best->r, best->sub, ray->start, ray->displacement)) {
        best->r = r;
        best->sub = sub;
        best->has = true;
    }
}

// A sweep without motion: only a real overlap counts, as for the world alone.
SCENE_COLD static bool sweep_still(scene_view *v, const sim_sweep_input *in, sim_sweep_result *out)
{
    *out = (sim_sweep_result){0};
    out->fraction = SIM_FX_ONE;
    out->position = in->start;
    sim_overlap_input oi = {in->shape, in->start, 0};
    sim_contact ct;
    scene_view level = *v;
    if (in->flags & SIM_SWEEP_LEVEL_ONLY)
        level.characters = false;
    if (scene_view_contacts(&level, &oi, &ct, 1) > 0 && ct.depth > SIM_QUERY_TOLERANCE) {
        out->hit = true;
        out->start_overlap = true;
        out->fraction = 0;
        out->normal = ct.normal;
        out->point = ct.point;
        out->feature = ct.feature;
    }
    return out->hit;
}

// The next platform from *at on (and *at past it) whose bounds touch box,
// the one the view skips left out; NULL when there is none.
static const scene_platform *next_platform(const scene_view *v, sim_aabb box, uint32_t *at)
{
    const sim_scene *sc = v->scene;
    while (*at < sc->platform_count) {
        const scene_platform *p = &sc->platforms[(*at)++];
        if (p->def.id != v->skip_platform && sim_aabb_overlaps(box, p->bounds))
            return p;
    }
    return NULL;
}

// The platforms' part of a sweep (out of line: most scenes have none).
SCENE_COLD static void sweep_platforms(const scene_view *v, const sim_sweep_ray *ray, sim_aabb box, sweep_best *best)
{
    uint32_t at = 0;
    const scene_platform *p;
    while ((p = next_platform(v, box, &at)) != NULL) {
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (sim_sweep_shape_tri(ray, &p->tris[k], &h))
                offer(best, ray, &h, k + 1);
        }
    }
}

bool scene_view_sweep(void *ctx, const sim_sweep_input *in, sim_sweep_result *out)
{
    scene_view *v = ctx;
    sim_scene *sc = v->scene;
    sim_vec3 d = sim_query_clamp_displacement(in->displacement);
    if (!sim_query_accepts_shape_at(in->shape, in->start) || !sim_v3_in_world(sim_v3_add(in->start, d)))
        return sim_world_sweep(sc->world, in, out); // refused the same way
    sim_sweep_ray ray = sim_sweep_ray_make(in->shape, in->start, d);
    if (ray.length == 0)
        return sweep_still(v, in, out);
    sweep_best best = {0};
    sim_sweep_result wr;
    if (sim_near_sweep_ray(sc->world, v->near, &ray, &wr)) { // the world's sweep, the same ray
        best.has = true;
        best.r = wr;
    }
    sim_fx g = ray.inflate + 2;
    sim_aabb box =
        sim_aabb_union(sim_shape_bounds(in->shape, in->start), sim_shape_bounds(in->shape, sim_v3_add(in->start, d)));
    box = sim_aabb_expand(box, sim_v3(g, g, g));
    if (sc->platform_count)
        sweep_platforms(v, &ray, box, &best);
    if (v->characters && !(in->flags & SIM_SWEEP_LEVEL_ONLY)) {
        body_cursor cur = bodies_in(v, box);
        uint32_t j;
        while (next_body(v, box, &cur, &j)) {
            sim_obstacle ob = obstacle(v, j, cursor_shrink(&cur));
            sim_tri_hit h;
            if (sim_sweep_shape_obstacle(&ray, &ob, &h))
                offer(&best, &ray, &h, 0);
        }
    }
    if (!best.has) {
        *out = (sim_sweep_result){0};
        out->fraction = SIM_FX_ONE;
        out->position = sim_v3_add(in->start, d);
        return false;
    }
    *out = best.r;
    return true;
}

typedef struct contact_list {
    sim_contact *out;
    int capacity;
    int stored;
    int count;
} contact_list;

// Sorted insertion into the bounded array: the best `capacity` of everything
// offered, whatever order it comes in. Equal keys keep their arrival order,
// which is fixed (platforms by id, their triangles in order).
static void add_contact(contact_list *l, const sim_tri_hit *h)
{
    sim_contact ct = {h->normal, h->s, h->point, h->feature};
    l->count++;
    if (l->capacity <= 0)
        return;
    int n = l->stored;
    if (n == l->capacity && !sim_contact_before(&ct, &l->out[n - 1]))
        return;
    int i = n == l->capacity ? n - 1 : n;
    while (i > 0 && sim_contact_before(&ct, &l->out[i - 1])) {
        l->out[i] = l->out[i - 1];
        i--;
    }
    l->out[i] = ct;
    if (n < l->capacity)
        l->stored = n + 1;
}

// The platforms' part of a contact query (out of line: most scenes have none).
SCENE_COLD static void contacts_platforms(const scene_view *v, const sim_overlap_input *in, sim_fx margin, sim_aabb box,
                                          contact_list *l)
{
    uint32_t at = 0;
    const scene_platform *p;
    while ((p = next_platform(v, box, &at)) != NULL) {
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (sim_contact_shape_tri(in->shape, in->position, &p->tris[k], margin, &h))
                add_contact(l, &h);
        }
    }
}

int scene_view_contacts(void *ctx, const sim_overlap_input *in, sim_contact *out, int capacity)
{
    scene_view *v = ctx;
    sim_scene *sc = v->scene;
    if (!sim_query_accepts_shape_at(in->shape, in->position))
        return 0; // refused, as by the world
    int nw = sim_near_contacts(sc->world, v->near, in, out, capacity);
    contact_list l = {out, capacity, nw < capacity ? nw : (capacity > 0 ? capacity : 0), nw};
    sim_fx margin = sim_query_clamp_margin(in->margin);
    sim_fx g = margin + SIM_QUERY_TOLERANCE;
    sim_aabb box = sim_aabb_expand(sim_shape_bounds(in->shape, in->position), sim_v3(g, g, g));
    if (sc->platform_count)
        contacts_platforms(v, in, margin, box, &l);
    if (v->characters) {
        body_cursor cur = bodies_in(v, box);
        uint32_t j;
        while (next_body(v, box, &cur, &j)) {
            sim_obstacle ob = obstacle(v, j, cursor_shrink(&cur));
            sim_tri_hit h;
            if (sim_contact_shape_obstacle(in->shape, in->position, &ob, margin, &h))
                add_contact(&l, &h);
        }
    }
    return l.count;
}

bool scene_view_raycast(void *ctx, const sim_ray_input *in, sim_ray_result *out)
{
    scene_view *v = ctx;
    sim_scene *sc = v->scene;
    bool has = sim_near_raycast(sc->world, v->near, in, out);
    uint32_t best_sub = 0;
    sim_vec3 d = sim_query_clamp_displacement(in->displacement);
    if (!sim_v3_in_world(in->origin) || !sim_v3_in_world(sim_v3_add(in->origin, d)))
        return false; // refused, as by the world
    sim_dir dir = sim_dir_from_v3(d);
    sim_fx length = sim_v3_length(d);
    if (length == 0)
        return has;
    sim_aabb box = sim_aabb_expand(
        sim_aabb_union(sim_aabb_of_point(in->origin), sim_aabb_of_point(sim_v3_add(in->origin, d))), sim_v3(2, 2, 2));
    for (uint32_t i = 0; i < sc->platform_count; i++) {
        const scene_platform *p = &sc->platforms[i];
        if (p->def.id == v->skip_platform || !sim_aabb_overlaps(box, p->bounds))
            continue;
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (!sim_ray_tri(in->origin, dir, length, &p->tris[k], &h))
                continue;
            sim_ray_result r = {0};
            r.hit = true;
            r.fraction = (sim_fx)(((int64_t)h.s << 16) / length);
            r.point = h.point;
            r.normal = h.normal;
            r.feature = h.feature;
            bool better = !has;
            if (has) {
                // The sweep order, with the hit point standing for the position.
                sim_sweep_result a = {true, false, r.fraction, r.point, r.normal, r.point, r.feature};
                sim_sweep_result b = {true, false, out->fraction, out->point, out->normal, out->point, out->feature};
                better = result_before(&a, k + 1, &b, best_sub, in->origin, d);
            }
            if (better) {
                *out = r;
                best_sub = k + 1;
                has = true;
            }
        }
    }
    return has;
}

// Keep r in *best when it comes before it in the sweep order (the hit point
// standing for the position); true when taken.
static bool ray_offer(sim_ray_result *best, bool *has, uint32_t *best_sub, const sim_ray_result *r, uint32_t sub,
                      sim_vec3 origin, sim_vec3 d)
{
    if (*has) {
        sim_sweep_result a = {true, false, r->fraction, r->point, r->normal, r->point, r->feature};
        sim_sweep_result b = {true, false, best->fraction, best->point, best->normal, best->point, best->feature};
        if (!result_before(&a, sub, &b, *best_sub, origin, d))
            return false;
    }
    *best = *r;
    *best_sub = sub;
    *has = true;
    return true;
}

static sim_ray_result ray_result(const sim_tri_hit *h, sim_fx length, sim_feature feature)
{
    sim_ray_result r = {0};
    r.hit = true;
    r.fraction = (sim_fx)(((int64_t)h->s << 16) / length);
    r.point = h->point;
    r.normal = h->normal;
    r.feature = feature;
    return r;
}

bool sim_scene_raycast(const sim_scene *sc, const sim_ray_input *in, uint32_t ignore_id, sim_ray_result *out,
                       uint32_t *hit_character_id)
{
    uint32_t hit_id = 0;
    if (hit_character_id)
        *hit_character_id = 0;
    bool has = sim_world_raycast(sc->world, in, out);
    sim_vec3 d = sim_query_clamp_displacement(in->displacement);
    if (!sim_v3_in_world(in->origin) || !sim_v3_in_world(sim_v3_add(in->origin, d)))
        return false; // refused, as by the world
    sim_dir dir = sim_dir_from_v3(d);
    sim_fx length = sim_v3_length(d);
    if (length == 0)
        return has;
    sim_aabb box = sim_aabb_expand(
        sim_aabb_union(sim_aabb_of_point(in->origin), sim_aabb_of_point(sim_v3_add(in->origin, d))), sim_v3(2, 2, 2));
    uint32_t best_sub = 0;
    // Platforms where they are at the scene's tick, built here: the query
    // changes nothing (the step's copies may be a tick ahead).
    for (uint32_t i = 0; i < sc->platform_count; i++) {
        scene_platform p;
        p.def = sc->platforms[i].def;
        sim_vec3 c = sim_platform_position(&p.def, sc->tick);
        if (!sim_aabb_overlaps(box, (sim_aabb){sim_v3_sub(c, p.def.half), sim_v3_add(c, p.def.half)}))
            continue;
        platform_build(&p, c);
        for (uint32_t k = 0; k < PLATFORM_TRIS; k++) {
            sim_tri_hit h;
            if (!sim_ray_tri(in->origin, dir, length, &p.tris[k], &h))
                continue;
            sim_ray_result r = ray_result(&h, length, h.feature);
            ray_offer(out, &has, &best_sub, &r, k + 1, in->origin, d);
        }
    }
    // The characters as they are now (not a step's snapshot), in id order.
    const sim_move_settings *s = &sc->settings;
    const sim_fx g = SIM_QUERY_TOLERANCE;
    for (uint32_t i = 0; i < sc->count; i++) {
        const sim_char_state *c = &sc->chars[i];
        if (c->id == ignore_id || c->move_type == SIM_MOVE_FLY)
            continue;
        sim_shape shape = sim_char_shape(s, c);
        sim_vec3 center = sim_char_center(s, c);
        if (!sim_aabb_overlaps(box, sim_aabb_expand(sim_shape_bounds(shape, center), sim_v3(g, g, g))))
            continue;
        sim_tri_hit h;
        if (!sim_ray_shape(in->origin, dir, length, shape, center, g, &h))
            continue;
        sim_ray_result r = ray_result(&h, length, (sim_feature){SIM_FEATURE_OBJECT_BIT | c->id, SIM_FEATURE_FACE, 0});
        if (ray_offer(out, &has, &best_sub, &r, 0, in->origin, d))
            hit_id = c->id;
    }
    if (hit_character_id)
        *hit_character_id = hit_id;
    return has;
}

static bool view_in_water(void *ctx, sim_vec3 p)
{
    const scene_view *v = ctx;
    const sim_scene *sc = v->scene;
    for (uint32_t i = 0; i < sc->water_count; i++) {
        sim_aabb w = sc->water[i];
        if (p.x >= w.min.x && p.x <= w.max.x && p.y >= w.min.y && p.y <= w.max.y && p.z >= w.min.z && p.z <= w.max.z)
            return true;
    }
    return false;
}

sim_collider scene_view_collider(scene_view *v)
{
    sim_collider c = {v, scene_view_sweep, scene_view_contacts, scene_view_raycast, view_in_water};
    return c;
}

// ---- lifetime and contents ---------------------------------------------------------

sim_scene *sim_scene_create(const sim_world *world, const sim_move_settings *settings, uint32_t max_characters)
{
    if (!world || !sim_move_settings_check(settings, NULL) || max_characters > MAX_CHARACTERS)
        return NULL;
    sim_scene *sc = calloc(1, sizeof *sc);
    if (!sc)
        return NULL;
    size_t n = max_characters ? max_characters : 1;
    sc->world = world;
    sc->settings = *settings;
    sc->dt = sim_move_dt(settings);
    sc->max_chars = max_characters;
    sc->batch = SIM_SCENE_DEFAULT_BATCH;
    sc->chars = calloc(n, sizeof *sc->chars);
    sc->inputs = calloc(n, sizeof *sc->inputs);
    sc->has_input = calloc(n, sizeof *sc->has_input);
    sc->bodies = calloc(n, sizeof *sc->bodies);
    sc->bodies_next = calloc(n, sizeof *sc->bodies_next);
    sc->order = calloc(n, sizeof *sc->order);
    sc->scratch = calloc(n, sizeof *sc->scratch);
    sc->keys = calloc(n, sizeof *sc->keys);
    sc->span = calloc(2 * n, sizeof *sc->span);
    sc->views = calloc(n + 1, sizeof *sc->views);
    sc->near_keep = calloc(n, sizeof *sc->near_keep);
    sc->alone = calloc(n, sizeof *sc->alone);
    sc->near_count = calloc(n, sizeof *sc->near_count);
    sc->step_box = calloc(n, sizeof *sc->step_box);
    sc->near_body = calloc(n * BODY_NEAR_CAPACITY, sizeof *sc->near_body);
    size_t buckets = 2;
    while (buckets < 2 * n)
        buckets *= 2;
    sc->grid_mask = (uint32_t)(buckets - 1);
    sc->grid_head = calloc(buckets, sizeof *sc->grid_head);
    sc->grid_built = calloc(buckets, sizeof *sc->grid_built);
    sc->grid_next = calloc(n, sizeof *sc->grid_next);
    sc->grid_prev = calloc(n, sizeof *sc->grid_prev);
    sc->grid_cell = calloc(2 * n, sizeof *sc->grid_cell);
    sc->feet_offset = calloc(n, sizeof *sc->feet_offset);
    sc->push = calloc(3 * n, sizeof *sc->push);
    sc->sep_flag = calloc(n, sizeof *sc->sep_flag);
    sc->scan_other = calloc(SCAN_SLOTS * n, sizeof *sc->scan_other);
    sc->scan_push = calloc(SCAN_SLOTS * n, sizeof *sc->scan_push);
    sc->scan_count = calloc(n, sizeof *sc->scan_count);
    sc->scan_mark = calloc(n, sizeof *sc->scan_mark);
    sc->reloc_feet = calloc(4 * n, sizeof *sc->reloc_feet);
    sc->reloc_mark = calloc(n, sizeof *sc->reloc_mark);
    if (!sc->chars || !sc->inputs || !sc->has_input || !sc->bodies || !sc->bodies_next || !sc->order || !sc->scratch ||
        !sc->keys || !sc->span || !sc->views || !sc->near_keep || !sc->alone || !sc->near_count || !sc->step_box ||
        !sc->near_body || !sc->grid_head || !sc->grid_built || !sc->grid_next || !sc->grid_prev || !sc->grid_cell ||
        !sc->feet_offset || !sc->push || !sc->sep_flag || !sc->scan_other || !sc->scan_push || !sc->scan_count ||
        !sc->scan_mark || !sc->reloc_feet || !sc->reloc_mark || !scene_respawn_init(sc)) {
        sim_scene_destroy(sc);
        return NULL;
    }
    return sc;
}

void sim_scene_destroy(sim_scene *sc)
{
    if (!sc)
        return;
    free(sc->chars);
    free(sc->inputs);
    free(sc->has_input);
    free(sc->bodies);
    free(sc->bodies_next);
    free(sc->order);
    free(sc->scratch);
    free(sc->keys);
    free(sc->span);
    free(sc->views);
    free(sc->near_keep);
    free(sc->alone);
    free(sc->near_count);
    free(sc->step_box);
    free(sc->near_body);
    free(sc->grid_head);
    free(sc->grid_built);
    free(sc->grid_next);
    free(sc->grid_prev);
    free(sc->grid_cell);
    free(sc->feet_offset);
    free(sc->push);
    free(sc->sep_flag);
    free(sc->reloc_feet);
    free(sc->reloc_mark);
    free(sc->scan_other);
    free(sc->scan_push);
    free(sc->scan_count);
    free(sc->scan_mark);
    free(sc->platforms);
    free(sc->water);
    free(sc->spawns);
    free(sc);
}

int sim_scene_add_platform(sim_scene *sc, const sim_platform_def *def)
{
    // Platform and character ids share the feature space of hits (and a
    // character's ground_object), so one id may not name both.
    if (!platform_valid(def) || find_platform(sc, def->id) || char_index(sc, def->id) >= 0)
        return -1;
    scene_platform *grown = realloc(sc->platforms, (sc->platform_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    sc->platforms = grown;
    uint32_t at = platform_lower_bound(sc, def->id);
    memmove(&grown[at + 1], &grown[at], (sc->platform_count - at) * sizeof *grown);
    memset(&grown[at], 0, sizeof *grown);
    grown[at].def = *def;
    sc->platform_count++;
    return 0;
}

int sim_scene_add_water(sim_scene *sc, sim_aabb volume)
{
    if (!sim_v3_in_world(volume.min) || !sim_v3_in_world(volume.max) || volume.min.x > volume.max.x ||
        volume.min.y > volume.max.y || volume.min.z > volume.max.z)
        return -1;
    sim_aabb *grown = realloc(sc->water, (sc->water_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    sc->water = grown;
    sc->water[sc->water_count++] = volume;
    return 0;
}

int sim_scene_add_character(sim_scene *sc, const sim_char_state *state)
{
    uint32_t id = state->id;
    if (sc->count >= sc->max_chars || id == 0 || (id & SIM_FEATURE_OBJECT_BIT) || char_index(sc, id) >= 0 ||
        find_platform(sc, id) || !sim_char_state_check(state, NULL))
        return -1;
    uint32_t at = char_lower_bound(sc, id);
    uint32_t tail = sc->count - at;
    memmove(&sc->chars[at + 1], &sc->chars[at], tail * sizeof *sc->chars);
    memmove(&sc->inputs[at + 1], &sc->inputs[at], tail * sizeof *sc->inputs);
    memmove(&sc->has_input[at + 1], &sc->has_input[at], tail * sizeof *sc->has_input);
    sc->chars[at] = *state;
    sc->has_input[at] = 0;
    sc->count++;
    sc->sep_clean = false;
    sc->reloc_valid = false; // indices shift: the last step's relocations are gone
    return 0;
}

bool sim_scene_remove_character(sim_scene *sc, uint32_t id)
{
    int64_t i = char_index(sc, id);
    if (i < 0)
        return false;
    uint32_t at = (uint32_t)i, tail = sc->count - at - 1;
    memmove(&sc->chars[at], &sc->chars[at + 1], tail * sizeof *sc->chars);
    memmove(&sc->inputs[at], &sc->inputs[at + 1], tail * sizeof *sc->inputs);
    memmove(&sc->has_input[at], &sc->has_input[at + 1], tail * sizeof *sc->has_input);
    sc->count--;
    sc->reloc_valid = false;
    return true;
}

bool sim_scene_set_input(sim_scene *sc, uint32_t id, const sim_input *input)
{
    int64_t i = char_index(sc, id);
    if (i < 0)
        return false;
    sc->inputs[i] = *input;
    sc->has_input[i] = 1;
    return true;
}

// ---- the tick ------------------------------------------------------------------

// Move a rider with its platform, stopped (a skin early) by the world and
// other platforms. Characters are left out: the snapshot is taken after
// carrying, and overlaps it makes are shared out by the characters' steps.
static void carry(sim_scene *sc, sim_char_state *c, const scene_platform *p);

// A carry may not take a rider past the character range (the step would
// refuse such a state): it stops at the edge, as the step's own clamp does.
static void carry_within_range(sim_scene *sc, sim_char_state *c, const scene_platform *p)
{
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    carry(sc, c, p);
    c->position = sim_v3(sim_fx_clamp(c->position.x, -lim, lim), sim_fx_clamp(c->position.y, -lim, lim),
                         sim_fx_clamp(c->position.z, -lim, lim));
}

static void carry(sim_scene *sc, sim_char_state *c, const scene_platform *p)
{
    const sim_move_settings *s = &sc->settings;
    scene_view v = {sc, -1, p->def.id, false, NULL, NULL};
    sim_sweep_input in = {sim_char_shape(s, c), sim_char_center(s, c), p->delta, 0};
    sim_sweep_result r;
    if (!scene_view_sweep(&v, &in, &r)) {
        c->position = sim_v3_add(c->position, p->delta); // exact: the rider keeps its gap
        return;
    }
    if (r.start_overlap)
        return; // jammed already: the step's depenetration decides
    sim_fx len;
    sim_vec3 u = sim_v3_normalize_len(p->delta, &len);
    sim_fx travelled = (sim_fx)(((int64_t)len * r.fraction) >> 16);
    // Back off along the motion until a skin from the plane met, as the
    // mover does (capped at 16 skins for grazing hits).
    sim_fx cosang = -sim_v3_dot(u, r.normal);
    if (cosang < SIM_FX_ONE / 16)
        cosang = SIM_FX_ONE / 16;
    sim_fx back = (sim_fx)(((int64_t)s->skin << 16) / cosang);
    if (travelled > back)
        c->position = sim_v3_add(c->position, sim_v3_scale(u, travelled - back));
}

// Character i's slots of sc->near_body (move_prepare fills them).
static uint32_t *near_list(const sim_scene *sc, uint32_t i) { return &sc->near_body[(size_t)i * BODY_NEAR_CAPACITY]; }

// How many of them hold bodies: 0 when move_prepare found too many (the
// queries then scan the broad phase).
static uint32_t near_listed(const sim_scene *sc, uint32_t i)
{
    return sc->near_count[i] <= BODY_NEAR_CAPACITY ? sc->near_count[i] : 0;
}

// Before the moves: the other solid bodies around character i's step box,
// in the broad phase's order, into its slots of sc->near_body (the move's
// body_near), and whether it is alone (scene_alone.c): no such body, or it
// passes through them as a ghost, and no platform touches the box.
static void move_prepare(sim_scene *sc, uint32_t i)
{
    const sim_char_state *c = &sc->chars[i];
    sc->alone[i] = 0;
    if (c->move_type == SIM_MOVE_FLY)
        return;
    sim_aabb box = sim_near_step_box(&sc->settings, c);
    sc->step_box[i] = box;
    uint32_t *list = near_list(sc, i);
    scene_view v = {sc, (int64_t)i, 0, true, NULL, NULL};
    body_cursor cur = bodies_in(&v, box);
    uint32_t j, n = 0;
    while (next_body(&v, box, &cur, &j)) {
        if (n == BODY_NEAR_CAPACITY) {
            n = BODY_NEAR_CAPACITY + 1; // too many: the queries scan the broad phase
            break;
        }
        list[n++] = j;
    }
    sc->near_count[i] = (uint8_t)n;
    for (uint32_t k = 0; k < sc->platform_count; k++)
        if (sim_aabb_overlaps(box, sc->platforms[k].bounds))
            return;
    sc->alone[i] = n == 0 || (sc->sep_flag[i] & SEP_FLAG_GHOST);
}

// Step character i against the snapshot. It writes only its own state, its
// own view and its own slots, and reads only what no move writes (the
// snapshot, the platforms, the world, inputs), so the moves may run in any
// order, on any threads, and compute the same states.
static void move_one(sim_scene *sc, uint32_t i)
{
    const sim_move_settings *s = &sc->settings;
    sim_char_state *c = &sc->chars[i];
    scene_view *v = &sc->views[i];
    // The world near the character, gathered once for the step's queries
    // (world_near.h: the same answers as the whole world's).
    sim_near near;
    body_near bodies;
    sim_collider col;
    // A ghost (a character the separation could not place yet) and the
    // others pass through each other this tick (scene_separate.c).
    *v = (scene_view){sc, (int64_t)i, 0, !(sc->sep_flag[i] & SEP_FLAG_GHOST), NULL, NULL};
    if (c->move_type == SIM_MOVE_FLY) {
        col = scene_view_collider(v);
    } else {
        sim_aabb box = sc->step_box[i]; // move_prepare's: the state has not changed since
        scene_near_step(&sc->near_keep[i], sc->world, box, c->velocity, sc->dt, &near);
        v->near = &near;
        if (sc->alone[i]) {
            col = scene_alone_collider(v);
        } else {
            const uint32_t *list = near_list(sc, i);
            bodies.box = box;
            bodies.usable = sc->near_count[i] <= BODY_NEAR_CAPACITY;
            bodies.count = near_listed(sc, i);
            for (uint32_t k = 0; k < bodies.count; k++) {
                bodies.body[k] = list[k];
                bodies.shrink[k] = -1;
            }
            v->bodies_near = &bodies;
            col = scene_view_collider(v);
        }
    }
    if (!sc->water_count)
        col.in_water = NULL; // nothing is ever in water: no call at all
    sim_input in;
    if (sc->has_input[i]) {
        in = sc->inputs[i];
    } else {
        // No command: stand still, looking where the character looked.
        in = (sim_input){0};
        in.tick = sc->tick; // the tick being computed
        in.yaw = c->yaw;
        in.pitch = c->pitch;
    }
    // The scene admits only valid settings and states and keeps them
    // valid, so the step never refuses here. (Its settings were checked
    // when it was created and never change.)
    bool stepped = move_step_checked_settings(&col, s, c, &in);
    SIM_CHECK(stepped);
    (void)stepped;
    v->near = NULL; // they lived on this stack
    v->bodies_near = NULL;
}

// Ask the memory for what move_one(sc, i) reads first and finds cold: its
// kept neighbourhood of the world and its list of nearby bodies (written by
// move_prepare, long before). Asked for while the move before runs.
static void move_prefetch(const sim_scene *sc, uint32_t i)
{
    scene_near_prefetch(&sc->near_keep[i]);
    if (sc->alone[i])
        return;
    const uint32_t *list = near_list(sc, i);
    for (uint32_t k = 0, n = near_listed(sc, i); k < n; k += 16)
        SCENE_PREFETCH(list + k);
}

// The moves of the characters in [begin, end) whose alone mark is `alone`,
// each next one's memory asked for while the one before runs.
static void moves_run(sim_scene *sc, uint32_t begin, uint32_t end, uint8_t alone)
{
    uint32_t next = begin;
    while (next < end && sc->alone[next] != alone)
        next++;
    while (next < end) {
        uint32_t i = next;
        for (next = i + 1; next < end && sc->alone[next] != alone; next++) {
        }
        if (next < end)
            move_prefetch(sc, next);
        move_one(sc, i);
    }
}

// Step characters [begin, end). In runs over the characters, each with less
// code than a whole move, so that a run's code stays in the instruction
// cache: who is alone; the moves of those alone (the code of a move against
// the world alone); the others' moves; the bodies after the moves.
static void move_range(sim_scene *sc, uint32_t begin, uint32_t end)
{
    for (uint32_t i = begin; i < end; i++)
        move_prepare(sc, i);
    moves_run(sc, begin, end, 1);
    moves_run(sc, begin, end, 0);
    for (uint32_t i = begin; i < end; i++) {
        // What the separation pass after the moves starts from (its
        // prepare, done here on the moves' threads): the body after the
        // move, kept apart from the snapshot the other moves still read.
        body_fill(sc, i, &sc->bodies_next[i]);
        sc->feet_offset[i] = sim_v3_sub(sc->bodies_next[i].center, sc->chars[i].position);
        sc->sep_flag[i] = 0;
    }
}

// The executor's task: work items [begin, end), each sc->batch characters.
static void move_items(void *task, uint32_t begin, uint32_t end)
{
    sim_scene *sc = task;
    uint32_t from, to;
    scene_item_range(sc, begin, end, &from, &to);
    if (from < to)
        move_range(sc, from, to);
}

uint32_t scene_item_count(const sim_scene *sc) { return sc->count / sc->batch + (sc->count % sc->batch != 0); }

void scene_run_items(sim_scene *sc, sim_task_fn fn)
{
    uint32_t items = scene_item_count(sc);
    if (sc->run && items > 1)
        sc->run(sc->run_user, items, fn, sc);
    else
        fn(sc, 0, items);
}

void sim_scene_set_parallel(sim_scene *sc, sim_parallel_for_fn run, void *user, uint32_t batch)
{
    sc->run = run;
    sc->run_user = run ? user : NULL;
    sc->batch = batch ? batch : SIM_SCENE_DEFAULT_BATCH;
}

void sim_scene_step(sim_scene *sc)
{
    uint32_t t = sc->tick;
    scene_build_platforms(sc, t, true);
    for (uint32_t i = 0; i < sc->count; i++) {
        sim_char_state *c = &sc->chars[i];
        const scene_platform *p = find_platform(sc, c->ground_object);
        c->ground_velocity = p ? p->velocity : sim_v3_zero();
        if (p && !sim_v3_is_zero(p->delta)) {
            carry_within_range(sc, c, p);
            sc->sep_clean = false;
        }
    }
    scene_separate_begin_step(sc);
    // Skipped only when it would change nothing: the last step's pass left
    // the scene clean and no add, restore or carry has moved anyone since.
    if (!sc->sep_clean)
        scene_separate(sc);
    build_bodies(sc, true);
    scene_run_items(sc, move_items);
    sc->bodies_ready = true;
    sc->sep_clean = scene_separate(sc);
    sc->bodies_ready = false; // (a pass over fewer than two characters does not look)
    // Ghost marks are for this tick's moves only (nothing outside a step sees
    // them, and adds and removes shift the indices).
    memset(sc->sep_flag, 0, sc->count ? sc->count : 1);
    memset(sc->has_input, 0, sc->count ? sc->count : 1);
    if (scene_respawn(sc))
        sc->sep_clean = false;
#ifdef KEEL_INJECT_DIVERGENCE
        // A deliberate nondeterminism, compiled only into keel-replay's test
        // programs (keel-sim-diverge, keel-replay-diverge): what a build that
        // differs in one rounding would do. After tick KEEL_DIVERGE_TICK's step,
        // the lowest bit of velocity.x of the character with the smallest id of
        // at least 3 flips (kept within the speed limit, so the state stays valid).
#ifndef KEEL_DIVERGE_TICK
#define KEEL_DIVERGE_TICK 200
#endif
    if (t == (uint32_t)KEEL_DIVERGE_TICK)
        for (uint32_t i = 0; i < sc->count; i++)
            if (sc->chars[i].id >= 3u) {
                sim_char_state *c = &sc->chars[i];
                c->velocity.x ^= 1;
                if (c->velocity.x > SIM_MOVE_MAX_SPEED)
                    c->velocity.x -= 2;
                break;
            }
#endif
    sc->tick = t + 1u;
}

uint32_t sim_scene_tick(const sim_scene *sc) { return sc->tick; }
uint32_t sim_scene_capacity(const sim_scene *sc) { return sc->max_chars; }
uint32_t sim_scene_platform_count(const sim_scene *sc) { return sc->platform_count; }
const sim_platform_def *sim_scene_platform(const sim_scene *sc, uint32_t index)
{
    return index < sc->platform_count ? &sc->platforms[index].def : NULL;
}
uint32_t sim_scene_water_count(const sim_scene *sc) { return sc->water_count; }
sim_aabb sim_scene_water(const sim_scene *sc, uint32_t index)
{
    sim_aabb none = {{0, 0, 0}, {0, 0, 0}};
    return index < sc->water_count ? sc->water[index] : none;
}

const sim_char_state *sim_scene_characters(const sim_scene *sc, uint32_t *count)
{
    if (count)
        *count = sc->count;
    return sc->chars;
}

const sim_char_state *sim_scene_find(const sim_scene *sc, uint32_t id)
{
    int64_t i = char_index(sc, id);
    return i < 0 ? NULL : &sc->chars[i];
}

uint64_t sim_scene_hash(const sim_scene *sc)
{
    uint64_t h = sim_hash_u32(SIM_HASH_SEED, sc->tick);
    for (uint32_t i = 0; i < sc->count; i++)
        h = sim_hash_char(h, &sc->chars[i]);
    return h;
}

sim_collider sim_scene_collider(sim_scene *sc, uint32_t self)
{
    scene_build_platforms(sc, sc->tick, false);
    build_bodies(sc, false);
    int64_t i = char_index(sc, self);
    scene_view *v = &sc->views[i < 0 ? sc->max_chars : (uint32_t)i];
    *v = (scene_view){sc, i, 0, true, NULL, NULL};
    return scene_view_collider(v);
}

// ---- save and restore ---------------------------------------------------------------
// Little-endian fields written one by one: the bytes are the same on every
// machine and never include struct padding.

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static uint8_t *put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *put_vec3(uint8_t *p, sim_vec3 v)
{
    p = put_u32(p, (uint32_t)v.x);
    p = put_u32(p, (uint32_t)v.y);
    return put_u32(p, (uint32_t)v.z);
}

static uint32_t get_u32(const uint8_t **p)
{
    const uint8_t *b = *p;
    *p += 4;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

static uint16_t get_u16(const uint8_t **p)
{
    const uint8_t *b = *p;
    *p += 2;
    return (uint16_t)(b[0] | (b[1] << 8));
}

// Two's complement read back without an out-of-range conversion.
static sim_fx get_fx(const uint8_t **p)
{
    uint32_t u = get_u32(p);
    return u <= 0x7FFFFFFFu ? (sim_fx)u : (sim_fx)(-(int64_t)(0xFFFFFFFFu - u) - 1);
}

static sim_vec3 get_vec3(const uint8_t **p)
{
    sim_fx x = get_fx(p);
    sim_fx y = get_fx(p);
    sim_fx z = get_fx(p);
    return sim_v3(x, y, z);
}

size_t sim_scene_state_size(const sim_scene *sc) { return HEADER_BYTES + (size_t)sc->count * CHAR_BYTES; }

void sim_scene_save(const sim_scene *sc, void *buffer)
{
    uint8_t *p = buffer;
    p = put_u32(p, SCENE_MAGIC);
    p = put_u32(p, SCENE_VERSION);
    p = put_u32(p, sc->tick);
    p = put_u32(p, sc->count);
    for (uint32_t i = 0; i < sc->count; i++) {
        const sim_char_state *c = &sc->chars[i];
        p = put_u32(p, c->id);
        p = put_u32(p, c->flags);
        p = put_u32(p, (uint32_t)c->move_type);
        p = put_u32(p, (uint32_t)c->ground);
        p = put_vec3(p, c->position);
        p = put_vec3(p, c->velocity);
        p = put_vec3(p, c->ground_normal);
#ifdef KEEL_INJECT_SAVE_FAULT
        // A deliberate fault, compiled only into a test program
        // (keel-sim-savefault): a save that leaves out the platform velocity,
        // as a serialiser that takes it for derived might. keel-sim
        // --sync-test must name it.
        p = put_vec3(p, sim_v3_zero());
#else
        p = put_vec3(p, c->ground_velocity);
#endif
        p = put_u32(p, c->ground_object);
        p = put_u32(p, c->stuck_ticks);
        p = put_u16(p, c->yaw);
        p = put_u16(p, c->pitch);
    }
}

static sim_char_state read_char(const uint8_t **p)
{
    sim_char_state c = {0};
    c.id = get_u32(p);
    c.flags = get_u32(p);
    c.move_type = (int32_t)get_fx(p);
    c.ground = (int32_t)get_fx(p);
    c.position = get_vec3(p);
    c.velocity = get_vec3(p);
    c.ground_normal = get_vec3(p);
    c.ground_velocity = get_vec3(p);
    c.ground_object = get_u32(p);
    c.stuck_ticks = get_u32(p);
    c.yaw = get_u16(p);
    c.pitch = get_u16(p);
    return c;
}

static bool refuse(sim_scene_error *e, const char *reason, int64_t record, size_t offset)
{
    if (e) {
        e->reason = reason;
        e->record = record;
        e->offset = offset;
    }
    return false;
}

// One character record of a restore: its id in order and its state valid.
static bool check_record(const sim_scene *sc, const sim_char_state *c, uint32_t *last, uint32_t i, size_t at,
                         sim_scene_error *error)
{
    const char *why = NULL;
    if (c->id == 0 || (c->id & SIM_FEATURE_OBJECT_BIT))
        return refuse(error, "character id 0 or not below 2^31", i, at);
    if (c->id <= *last)
        return refuse(error, "character ids not increasing", i, at);
    if (find_platform((sim_scene *)sc, c->id))
        return refuse(error, "character id is a platform's", i, at);
    if (!sim_char_state_check(c, &why))
        return refuse(error, why, i, at);
    *last = c->id;
    return true;
}

bool sim_scene_restore_states(sim_scene *sc, uint32_t tick, const sim_char_state *states, uint32_t count,
                              sim_scene_error *error)
{
    if (error)
        *error = (sim_scene_error){"", -1, 0};
    if (count > sc->max_chars)
        return refuse(error, "more characters than the scene holds", -1, 0);
    uint32_t last = 0;
    for (uint32_t i = 0; i < count; i++)
        if (!check_record(sc, &states[i], &last, i, 0, error))
            return false;
    for (uint32_t i = 0; i < count; i++) {
        sc->chars[i] = states[i];
        sc->has_input[i] = 0;
    }
    sc->count = count;
    sc->tick = tick;
    sc->sep_clean = false;
    sc->reloc_valid = false; // indices shift: the last step's relocations are gone
    return true;
}

bool sim_scene_restore(sim_scene *sc, const void *buffer, size_t size, sim_scene_error *error)
{
    if (error)
        *error = (sim_scene_error){"", -1, 0};
    if (!buffer || size < HEADER_BYTES)
        return refuse(error, "shorter than the 16-byte header", -1, 0);
    const uint8_t *p = buffer;
    if (get_u32(&p) != SCENE_MAGIC)
        return refuse(error, "not a saved scene (magic)", -1, 0);
    if (get_u32(&p) != SCENE_VERSION)
        return refuse(error, "unknown version", -1, 4);
    uint32_t tick = get_u32(&p);
    uint32_t count = get_u32(&p);
    if (count > sc->max_chars)
        return refuse(error, "more characters than the scene holds", -1, 12);
    if (size != HEADER_BYTES + (size_t)count * CHAR_BYTES)
        return refuse(error, "size does not match the character count", -1, 12);
    // Check every record before changing anything: a bad buffer leaves the
    // scene as it was.
    const uint8_t *q = p;
    uint32_t last = 0;
    for (uint32_t i = 0; i < count; i++) {
        sim_char_state c = read_char(&q);
        if (!check_record(sc, &c, &last, i, HEADER_BYTES + (size_t)i * CHAR_BYTES, error))
            return false;
    }
    for (uint32_t i = 0; i < count; i++) {
        sc->chars[i] = read_char(&p);
        sc->has_input[i] = 0;
    }
    sc->count = count;
    sc->tick = tick;
    sc->sep_clean = false;
    sc->reloc_valid = false; // indices shift: the last step's relocations are gone
    return true;
}
