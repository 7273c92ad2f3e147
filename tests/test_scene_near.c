// keel tests: a character slot's kept neighbourhood of the world
// (sim/src/scene_near.c) hands a move exactly the list sim_near_gather would:
// the same triangles, bounds, order and overflow, whether the step box is cut
// out of the kept list, leaves it (gathered again) or the kept list is full.
// MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_level.h>
#include <keel/sim_world.h>

#include "scene_internal.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33) % n;
}

static void same_as_gather(const sim_near *got, const sim_world *world, sim_aabb box, uint32_t step)
{
    static sim_near want;
    sim_near_gather(&want, world, box);
    cr_assert_eq(got->usable, want.usable, "step %u: usable", step);
    cr_assert_eq(got->count, want.count, "step %u: count", step);
    cr_assert(got->world == want.world && memcmp(&got->box, &want.box, sizeof box) == 0, "step %u: box", step);
    if (!want.usable)
        return; // the hierarchy answers: the list is not read
    cr_assert(memcmp(got->tri, want.tri, want.count * sizeof want.tri[0]) == 0, "step %u: triangles", step);
    cr_assert(memcmp(got->bounds, want.bounds, want.count * sizeof want.bounds[0]) == 0, "step %u: bounds", step);
}

Test(scene_near, cut_from_kept_list_equals_gather)
{
    sim_level level;
    cr_assert_eq(sim_level_generate(&level, 7000, 1), 0);
    sim_world_def def = sim_world_default_def();
    sim_error err;
    memset(&err, 0, sizeof err);
    sim_world *world = sim_world_create(&level, &def, &err);
    cr_assert_not_null(world, "%s", err.message);
    sim_aabb lb = sim_world_get_stats(world).bounds;
    static scene_near_keep keep; // zeroed: nothing kept yet
    static sim_near got;
    uint32_t cut = 0, full = 0, overflow = 0;
    int64_t sx = (int64_t)lb.max.x - lb.min.x, sy = (int64_t)lb.max.y - lb.min.y, sz = (int64_t)lb.max.z - lb.min.z;
    sim_vec3 p = lb.min;
    for (uint32_t step = 0; step < 6000; step++) {
        if (step % 40 == 0) // a new walk somewhere else
            p = sim_v3((sim_fx)(lb.min.x + (int64_t)rnd(1000) * sx / 1000),
                       (sim_fx)(lb.min.y + (int64_t)rnd(1000) * sy / 1000),
                       (sim_fx)(lb.min.z + (int64_t)rnd(1000) * sz / 1000));
        // Drift by up to 0.25 m a step; sizes from a character's step box to
        // 24 m (the kept list and the cut list both overflow).
        p = sim_v3(p.x + (sim_fx)rnd(SIM_FX_MM(500)) - SIM_FX_MM(250), p.y + (sim_fx)rnd(SIM_FX_MM(100)),
                   p.z + (sim_fx)rnd(SIM_FX_MM(500)) - SIM_FX_MM(250));
        bool big = step % 200 >= 150;
        sim_fx half = big ? (sim_fx)rnd(SIM_FX_INT(24)) : SIM_FX_MM(500) + (sim_fx)rnd(SIM_FX_MM(300));
        sim_fx up = big ? half : SIM_FX_INT(2);
        sim_aabb box = {sim_v3(p.x - half, p.y - SIM_FX_MM(500), p.z - half), sim_v3(p.x + half, p.y + up, p.z + half)};
        bool inside = keep.world == world && scene_box_inside(box, keep.box);
        scene_near_step(&keep, world, box, &got);
        cut += inside;
        full += keep.full;
        overflow += !got.usable;
        same_as_gather(&got, world, box, step);
    }
    // Every path was taken.
    cr_assert_gt(cut, 1000u, "cut from the kept list %u times", cut);
    cr_assert_gt(full, 0u, "kept list full %u times", full);
    cr_assert_gt(overflow, 0u, "more than SIM_NEAR_CAPACITY %u times", overflow);
    sim_world_destroy(world);
    sim_level_free(&level);
}
