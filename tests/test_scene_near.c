// keel tests: a character slot's kept neighbourhood of the world
// (sim/src/scene_near.c) hands a move exactly the list sim_near_gather would:
// the same triangles, order and overflow, whether the step box is cut out of
// the kept list, leaves it (gathered again) or the kept list is full; and
// queries answered from either list (whose bounds are packed relative to
// different bases) visit the triangles the hierarchy visits.
// MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_level.h>
#include <keel/sim_world.h>

#include "scene_internal.h"
#include "test_support.h"
#include "world_internal.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33) % n;
}

typedef struct visited {
    const sim_world *world;
    uint32_t count;
    uint32_t tri[4096];
} visited;

static bool visit_note(void *ctx, const sim_tri *t)
{
    visited *v = ctx;
    if (v->count < 4096)
        v->tri[v->count] = (uint32_t)(t - v->world->tris);
    v->count++;
    return true;
}

// A query answered from the list hands out the triangles the hierarchy
// hands out, in the same order: boxes inside the step box (the packed
// bounds decide) and, for comparison, one that leaves it.
static void same_queries(const sim_near *got, const sim_world *world, sim_aabb box, uint32_t step)
{
    static visited a, b;
    for (int q = 0; q < 4; q++) {
        sim_aabb qb = box;
        if (q > 0 && q < 3) {
            int64_t sx = (int64_t)box.max.x - box.min.x, sy = (int64_t)box.max.y - box.min.y,
                    sz = (int64_t)box.max.z - box.min.z;
            sim_vec3 lo = sim_v3((sim_fx)(box.min.x + (int64_t)rnd(1000) * sx / 1000),
                                 (sim_fx)(box.min.y + (int64_t)rnd(1000) * sy / 1000),
                                 (sim_fx)(box.min.z + (int64_t)rnd(1000) * sz / 1000));
            sim_vec3 hi = sim_v3((sim_fx)(lo.x + (int64_t)rnd(1001) * (box.max.x - lo.x) / 1000),
                                 (sim_fx)(lo.y + (int64_t)rnd(1001) * (box.max.y - lo.y) / 1000),
                                 (sim_fx)(lo.z + (int64_t)rnd(1001) * (box.max.z - lo.z) / 1000));
            qb = (sim_aabb){lo, hi};
        } else if (q == 3) {
            qb.max.x += SIM_FX_MM(1);
        }
        a = (visited){world, 0, {0}};
        b = (visited){world, 0, {0}};
        sim_near_query_box(world, got, qb, visit_note, &a);
        sim_bvh_query(world, qb, visit_note, &b);
        cr_assert_eq(a.count, b.count, "step %u query %d: count", step, q);
        uint32_t n = a.count < 4096 ? a.count : 4096;
        cr_assert(memcmp(a.tri, b.tri, n * sizeof a.tri[0]) == 0, "step %u query %d: triangles", step, q);
    }
}

static void same_as_gather(const sim_near *got, const sim_world *world, sim_aabb box, uint32_t step)
{
    static sim_near want;
    sim_near_gather(&want, world, box);
    cr_assert_eq(got->usable, want.usable, "step %u: usable", step);
    cr_assert_eq(got->count, want.count, "step %u: count", step);
    cr_assert(got->world == want.world && memcmp(&got->box, &want.box, sizeof box) == 0, "step %u: box", step);
    same_queries(got, world, box, step);
    same_queries(&want, world, box, step);
    if (!want.usable)
        return; // the hierarchy answers: the list is not read
    cr_assert(memcmp(got->tri, want.tri, want.count * sizeof want.tri[0]) == 0, "step %u: triangles", step);
}

Test(scene_near, cut_from_kept_list_equals_gather)
{
    sim_level level;
    sim_world *world = keel_test_generated_world(&level, 7000, 1);
    sim_aabb lb = sim_world_get_stats(world).bounds;
    static scene_near_keep keep; // zeroed: nothing kept yet
    static sim_near got;
    uint32_t cut = 0, full = 0, overflow = 0;
    int64_t sx = (int64_t)lb.max.x - lb.min.x, sy = (int64_t)lb.max.y - lb.min.y, sz = (int64_t)lb.max.z - lb.min.z;
    sim_vec3 p = lb.min, v = sim_v3_zero();
    const sim_fx dt = SIM_FX_ONE / 64;
    for (uint32_t step = 0; step < 6000; step++) {
        if (step % 40 == 0) { // a new walk somewhere else, at a new velocity (the kept box reaches ahead)
            p = sim_v3((sim_fx)(lb.min.x + (int64_t)rnd(1000) * sx / 1000),
                       (sim_fx)(lb.min.y + (int64_t)rnd(1000) * sy / 1000),
                       (sim_fx)(lb.min.z + (int64_t)rnd(1000) * sz / 1000));
            v = sim_v3((sim_fx)rnd(SIM_FX_INT(32)) - SIM_FX_INT(16), (sim_fx)rnd(SIM_FX_INT(32)) - SIM_FX_INT(16),
                       (sim_fx)rnd(SIM_FX_INT(32)) - SIM_FX_INT(16));
        }
        // Drift by up to 0.25 m a step; sizes from a character's step box to
        // 24 m (the kept list and the cut list both overflow).
        p = sim_v3(p.x + (sim_fx)rnd(SIM_FX_MM(500)) - SIM_FX_MM(250), p.y + (sim_fx)rnd(SIM_FX_MM(100)),
                   p.z + (sim_fx)rnd(SIM_FX_MM(500)) - SIM_FX_MM(250));
        bool big = step % 200 >= 150;
        sim_fx half = big ? (sim_fx)rnd(SIM_FX_INT(24)) : SIM_FX_MM(500) + (sim_fx)rnd(SIM_FX_MM(300));
        sim_fx up = big ? half : SIM_FX_INT(2);
        sim_aabb box = {sim_v3(p.x - half, p.y - SIM_FX_MM(500), p.z - half), sim_v3(p.x + half, p.y + up, p.z + half)};
        bool inside = keep.world == world && scene_box_inside(box, keep.box);
        scene_near_step(&keep, world, box, v, dt, &got);
        cut += inside;
        full += keep.full;
        overflow += !got.usable;
        same_as_gather(&got, world, box, step);
    }
    // Every path was taken.
    cr_assert_gt(cut, 1000u, "cut from the kept list %u times", cut);
    cr_assert_gt(full, 0u, "kept list full %u times", full);
    cr_assert_gt(overflow, 0u, "more than SIM_NEAR_CAPACITY %u times", overflow);
    keel_test_builtin_free(&level, world);
}

// The packed test (sim/src/pbox.h) is sim_aabb_overlaps for a query box
// within base + SIM_PBOX_REL_SPAN, whatever the other box, including
// coordinates equal to the query's, at the base, just below it and beyond
// the lane's range (clamped).
static sim_fx pick(sim_fx base, bool query)
{
    const int64_t span = SIM_PBOX_REL_SPAN;
    int64_t near_points[] = {0, 1, 2, span / 2, span - 1, span};
    int64_t far_points[] = {-3, -2, -1, span + 1, span + 2, span + 3, ((int64_t)1 << 20) + 5, -((int64_t)1 << 24)};
    if (query || rnd(2) == 0)
        return (sim_fx)(base + near_points[rnd(6)]);
    return (sim_fx)(base + far_points[rnd(8)]);
}

Test(scene_near, packed_bounds_exact_near_the_base)
{
    sim_vec3 bases[] = {sim_v3(0, 0, 0), sim_v3(-SIM_FX_INT(4096), SIM_FX_INT(1000), -SIM_FX_INT(7)),
                        sim_v3(SIM_FX_INT(4000), -SIM_FX_INT(4096), SIM_FX_INT(123))};
    for (int bi = 0; bi < 3; bi++) {
        sim_vec3 base = bases[bi];
        for (int n = 0; n < 200000; n++) {
            sim_aabb q, t;
            sim_fx c[4];
            for (int a = 0; a < 3; a++) {
                sim_fx bs = a == 0 ? base.x : (a == 1 ? base.y : base.z);
                c[0] = pick(bs, true);
                c[1] = pick(bs, true);
                c[2] = pick(bs, false);
                c[3] = pick(bs, false);
                sim_fx qlo = c[0] < c[1] ? c[0] : c[1], qhi = c[0] < c[1] ? c[1] : c[0];
                sim_fx tlo = c[2] < c[3] ? c[2] : c[3], thi = c[2] < c[3] ? c[3] : c[2];
                if (a == 0) {
                    q.min.x = qlo, q.max.x = qhi, t.min.x = tlo, t.max.x = thi;
                } else if (a == 1) {
                    q.min.y = qlo, q.max.y = qhi, t.min.y = tlo, t.max.y = thi;
                } else {
                    q.min.z = qlo, q.max.z = qhi, t.min.z = tlo, t.max.z = thi;
                }
            }
            bool want = sim_aabb_overlaps(t, q);
            cr_assert_eq(sim_pbox_overlaps(sim_pbox_rel(t, base), sim_pbox_rel(q, base)), want, "base %d case %d", bi,
                         n);
            cr_assert_eq(sim_pbox_overlaps(sim_pbox_rel(q, base), sim_pbox_rel(t, base)), want, "base %d case %d", bi,
                         n);
        }
    }
}
