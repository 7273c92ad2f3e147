// keel: the snapshot the moves see: every character's shape before any
// character's own move, sorted along a horizontal axis for the broad phase
// (scene_bodies.h walks it). MIT licence, see LICENSE.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "world_near.h"
#include "scene_bodies.h"

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

void scene_bodies_fill(sim_scene *sc)
{
    for (uint32_t i = 0; i < sc->count; i++)
        scene_body_fill(sc, i, &sc->bodies[i]);
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
        scene_body_fill(sc, i, &sc->bodies[i]);
        if (sc->sep_flag[i] & SEP_FLAG_GHOST)
            sc->bodies[i].solid = false;
    }
}

// The snapshot and the broad phase over it; `parallel`: the bodies filled
// on the executor (in a step only).
void scene_build_bodies(sim_scene *sc, bool parallel)
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
