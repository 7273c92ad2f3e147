// keel tests: the sweep's shortcuts answer exactly what the general code
// they stand in for answers. sim_sweep_ray_make (sim/src/world_near.h) makes
// the ray of a straight vertical motion without sim_dir_from_v3 and
// sim_v3_length: the same direction and length for every such motion; the
// capsule sweep decides a crossing from unrounded distances, and
// round_in_triangle tests a point against the edges without rounding (below).
// MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <stdint.h>

#include "collide_round.h"
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

// round_in_triangle (sim/src/collide_round.c) against the rounded test it
// stands in for, kept here as the reference: random triangles of every size
// and slope, points around them (many within a few units of an edge line)
// and slacks of either sign.
static bool in_triangle_rounded(const sim_tri *t, sim_vec3 q, sim_fx slack)
{
    for (int i = 0; i < 3; i++)
        if (sim_dir_dot_v3(t->inward[i], sim_v3_sub(q, t->v[i])) < -slack)
            return false;
    return true;
}

static sim_fx rnd_coord(sim_fx span) { return (sim_fx)((int64_t)(rnd32() % (2u * (uint32_t)span + 1)) - span); }

Test(sweep_fast, in_triangle_as_the_rounded_test)
{
    const sim_fx slacks[] = {0, 1, SIM_QUERY_TOLERANCE, 1000, SIM_FX_INT(2), -1, -SIM_QUERY_TOLERANCE};
    int tested = 0, near_edge = 0;
    for (int n = 0; n < 20000; n++) {
        sim_fx span = (sim_fx)(SIM_FX_MM(5) << (rnd32() % 14)); // 5 mm .. 40 m
        sim_vec3 o = sim_v3(rnd_coord(SIM_FX_INT(4000)), rnd_coord(SIM_FX_INT(4000)), rnd_coord(SIM_FX_INT(4000)));
        sim_vec3 a = sim_v3_add(o, sim_v3(rnd_coord(span), rnd_coord(span), rnd_coord(span)));
        sim_vec3 b = sim_v3_add(o, sim_v3(rnd_coord(span), rnd_coord(span), rnd_coord(span)));
        sim_vec3 c = sim_v3_add(o, sim_v3(rnd_coord(span), rnd_coord(span), rnd_coord(span)));
        sim_tri t;
        if (!sim_tri_init(&t, a, b, c, 1, 1))
            continue;
        for (int k = 0; k < 40; k++) {
            sim_vec3 q = sim_v3_add(o, sim_v3(rnd_coord(span), rnd_coord(span), rnd_coord(span)));
            if (k & 1) {
                // onto an edge line, then a few units either way along inward
                int i = (int)(rnd32() % 3);
                sim_fx along = sim_dir_dot_v3(t.inward[i], sim_v3_sub(q, t.v[i]));
                sim_fx off = (sim_fx)(rnd32() % 41) - 20 - (k & 2 ? SIM_QUERY_TOLERANCE : 0);
                q = sim_v3_add(q, sim_dir_scale(t.inward[i], (sim_fx)(off - along)));
                near_edge++;
            }
            sim_fx slack = slacks[rnd32() % (sizeof slacks / sizeof slacks[0])];
            cr_assert_eq(round_in_triangle(&t, q, slack), in_triangle_rounded(&t, q, slack), "triangle %d point %d", n,
                         k);
            tested++;
        }
    }
    cr_assert_gt(tested, 100000);
    cr_assert_gt(near_edge, 50000);
}
