// keel tests: the sweep's shortcuts answer exactly what the general code
// they stand in for answers. sim_sweep_ray_make (sim/src/world_near.h) makes
// the ray of a straight vertical motion without sim_dir_from_v3 and
// sim_v3_length: the same direction and length for every such motion; the
// capsule sweep decides a crossing from unrounded distances (below).
// MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <stdint.h>

#include "world_near.h"

static uint64_t rng_state = 0x6A09E667F3BCC909u;
static uint32_t rnd32(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 32);
}

static void same_ray(sim_vec3 d)
{
    sim_sweep_ray r = sim_sweep_ray_make(sim_shape_capsule(SIM_FX_MM(300), SIM_FX_MM(1800)), sim_v3(1, 2, 3), d);
    sim_dir want = sim_dir_from_v3(d);
    cr_assert(r.dir.x == want.x && r.dir.y == want.y && r.dir.z == want.z, "direction of (%d, %d, %d)", d.x, d.y, d.z);
    cr_assert_eq(r.length, sim_v3_length(d), "length of (%d, %d, %d)", d.x, d.y, d.z);
    cr_assert_eq(r.inflate, SIM_QUERY_TOLERANCE + (sim_v3_length(d) >> 12));
}

Test(sweep_fast, vertical_ray_as_the_general_one)
{
    int32_t edges[] = {1, 2, 3, 65535, 65536, 65537, (1 << 29) - 1, 1 << 29, (1 << 30) + 1, INT32_MAX - 1, INT32_MAX};
    for (unsigned i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        same_ray(sim_v3(0, edges[i], 0));
        same_ray(sim_v3(0, -edges[i], 0));
    }
    for (int n = 0; n < 200000; n++) {
        int32_t y = (int32_t)((rnd32() >> 1) >> (rnd32() % 31));
        same_ray(sim_v3(0, (n & 1) ? y : -y, 0));
        // and the general path beside it: one horizontal component
        same_ray(sim_v3(n & 2 ? 1 : 0, y >> 1, n & 2 ? 0 : -1));
    }
}

// The capsule's floor-tile early-out (sim/src/collide_capsule.c) decides
// whether the segment crosses a plane from the ends' unrounded distances:
// sim_shr_round_s64(v, 30) is above zero exactly when v >= 2^29 and below
// it exactly when v <= -2^29. Checked at and around both thresholds and at
// random values of every magnitude.
static void sign_as_thresholds(int64_t v)
{
    const int64_t half = (int64_t)1 << 29;
    int64_t r = sim_shr_round_s64(v, 30);
    cr_assert_eq(r > 0, v >= half, "v = %lld", (long long)v);
    cr_assert_eq(r < 0, v <= -half, "v = %lld", (long long)v);
}

Test(sweep_fast, rounded_sign_from_the_unrounded_value)
{
    const int64_t half = (int64_t)1 << 29;
    for (int64_t k = -3; k <= 3; k++) {
        int64_t points[] = {half, -half, 3 * half, -3 * half, 0};
        for (unsigned i = 0; i < sizeof points / sizeof points[0]; i++)
            sign_as_thresholds(points[i] + k);
    }
    for (int n = 0; n < 200000; n++) {
        int64_t v = (int64_t)(((uint64_t)rnd32() << 32 | rnd32()) >> (2 + rnd32() % 60));
        sign_as_thresholds(v);
        sign_as_thresholds(-v);
    }
}
