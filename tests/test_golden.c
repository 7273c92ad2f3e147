// keel tests: golden hashes. A fixed scenario's results, hashed field by field,
// must equal a constant pinned here, on every machine and compiler and in every
// build (normal, sanitizer). MIT licence.
//
// When a change alters results on purpose, the failure message prints the new
// value: check that the change is meant, then paste it here and say why in the
// commit message.
#include <criterion/criterion.h>

#include <keel/sim_hash.h>
#include <keel/sim_move.h>
#include <keel/sim_world.h>

#include "test_support.h"

#define GOLDEN_QUERIES UINT64_C(0xee2913167cabfdf3)
#define GOLDEN_MOVEMENT UINT64_C(0x0ab45b7e410a9ede)
#define GOLDEN_CYLINDER_QUERIES UINT64_C(0x2b51e9c8807470d0)
#define GOLDEN_CYLINDER_MOVEMENT UINT64_C(0x5f7c27a5bf650b84)

static sim_level level;
static sim_world *world;

static void setup(void) { world = keel_test_builtin_world(&level); }

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(golden, .init = setup, .fini = teardown);

// Three draws in a fixed order. Never draw random numbers inside one call's
// argument list: C leaves the order of argument evaluation open, and gcc and
// clang do pick different orders.
static sim_vec3 draw3(keel_rng *r, sim_fx lo_xz, sim_fx hi_xz, sim_fx lo_y, sim_fx hi_y)
{
    sim_fx x = keel_rng_fx(r, lo_xz, hi_xz);
    sim_fx y = keel_rng_fx(r, lo_y, hi_y);
    sim_fx z = keel_rng_fx(r, lo_xz, hi_xz);
    return sim_v3(x, y, z);
}

// 3,000 sweeps, 1,000 contact queries and 1,000 rays at seeded places of the
// built-in level.
Test(golden, collision_queries_on_the_builtin_level)
{
    keel_rng rng = {20261122};
    uint64_t h = SIM_HASH_SEED;
    const sim_fx span = SIM_FX_INT(30);
    for (int i = 0; i < 3000; i++) {
        sim_shape s = (i & 1) ? sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400))
                              : sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1800));
        sim_sweep_input in = {0};
        in.shape = s;
        in.start = draw3(&rng, -span, span, 0, SIM_FX_INT(3));
        in.displacement = draw3(&rng, -SIM_FX_MM(1600), SIM_FX_MM(1600), -SIM_FX_MM(1600), SIM_FX_MM(1600));
        sim_sweep_result r;
        sim_world_sweep(world, &in, &r);
        h = sim_hash_sweep_result(h, &r);
    }
    for (int i = 0; i < 1000; i++) {
        sim_overlap_input in;
        in.shape = sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1800));
        in.position = draw3(&rng, -span, span, 0, SIM_FX_INT(2));
        in.margin = SIM_FX_MM(10);
        sim_contact c[4];
        int n = sim_world_contacts(world, &in, c, 4);
        h = sim_hash_u32(h, (uint32_t)n);
        for (int k = 0; k < (n < 4 ? n : 4); k++)
            h = sim_hash_contact(h, &c[k]);
    }
    for (int i = 0; i < 1000; i++) {
        sim_ray_input in;
        in.origin = draw3(&rng, -span, span, SIM_FX_INT(5), SIM_FX_INT(5));
        in.displacement = draw3(&rng, -SIM_FX_INT(4), SIM_FX_INT(4), -SIM_FX_INT(10), -SIM_FX_INT(10));
        sim_ray_result r;
        sim_world_raycast(world, &in, &r);
        h = sim_hash_ray_result(h, &r);
    }
    cr_assert_eq(h, GOLDEN_QUERIES, "query hash is 0x%016llx", (unsigned long long)h);
}

// The cylinder's own queries: 3,000 sweeps (standing and crouched sizes in
// turn) and 1,000 contact queries at seeded places of the built-in level.
Test(golden, cylinder_queries_on_the_builtin_level)
{
    keel_rng rng = {20261123};
    uint64_t h = SIM_HASH_SEED;
    const sim_fx span = SIM_FX_INT(30);
    for (int i = 0; i < 3000; i++) {
        sim_sweep_input in = {0};
        in.shape = sim_shape_cylinder(SIM_FX_MM(400), (i & 1) ? SIM_FX_MM(1000) : SIM_FX_MM(1800));
        in.start = draw3(&rng, -span, span, 0, SIM_FX_INT(3));
        in.displacement = draw3(&rng, -SIM_FX_MM(1600), SIM_FX_MM(1600), -SIM_FX_MM(1600), SIM_FX_MM(1600));
        sim_sweep_result r;
        sim_world_sweep(world, &in, &r);
        h = sim_hash_sweep_result(h, &r);
    }
    for (int i = 0; i < 1000; i++) {
        sim_overlap_input in;
        in.shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
        in.position = draw3(&rng, -span, span, 0, SIM_FX_INT(2));
        in.margin = SIM_FX_MM(10);
        sim_contact c[4];
        int n = sim_world_contacts(world, &in, c, 4);
        h = sim_hash_u32(h, (uint32_t)n);
        for (int k = 0; k < (n < 4 ? n : 4); k++)
            h = sim_hash_contact(h, &c[k]);
    }
    cr_assert_eq(h, GOLDEN_CYLINDER_QUERIES, "cylinder query hash is 0x%016llx", (unsigned long long)h);
}

// Eight characters from the spawn marker with seeded inputs for 10 s (640
// ticks), each stepped alone against the world; every state of every tick
// goes into the hash.
static uint64_t movement_hash(const sim_move_settings *s)
{
    sim_collider col = sim_collider_world(world);
    const sim_marker *spawn = sim_level_find_marker(&level, "spawn");
    cr_assert_not_null(spawn);
    sim_char_state c[8];
    keel_rng rng[8];
    sim_input in[8];
    for (uint32_t k = 0; k < 8; k++) {
        sim_vec3 p = sim_v3_add(spawn->position, sim_v3(SIM_FX_INT((int)k - 4), 0, 0));
        c[k] = sim_char_spawn(k + 1, p, 0);
        rng[k] = (keel_rng){1000 + k};
        in[k] = (sim_input){0};
    }
    uint64_t h = SIM_HASH_SEED;
    for (uint32_t t = 0; t < 640; t++) {
        for (int k = 0; k < 8; k++) {
            if (t % 32 == 0) {
                // a new intent every half second
                // one draw per statement: see draw3
                in[k].forward = (int8_t)keel_rng_range(&rng[k], -127, 127);
                in[k].right = (int8_t)keel_rng_range(&rng[k], -127, 127);
                in[k].yaw = (sim_angle)keel_rng_range(&rng[k], 0, 65535);
                uint64_t b = keel_rng_next(&rng[k]);
                in[k].buttons =
                    (uint8_t)(((b & 7) == 0 ? SIM_BUTTON_JUMP : 0) | ((b & 24) == 0 ? SIM_BUTTON_CROUCH : 0));
            } else {
                in[k].buttons &= (uint8_t)~SIM_BUTTON_JUMP;
            }
            in[k].tick = t;
            sim_move_step(&col, s, &c[k], &in[k]);
            h = sim_hash_char(h, &c[k]);
        }
    }
    return h;
}

Test(golden, movement_on_the_builtin_level)
{
    sim_move_settings s = sim_move_default_settings();
    uint64_t h = movement_hash(&s);
    cr_assert_eq(h, GOLDEN_MOVEMENT, "movement hash is 0x%016llx", (unsigned long long)h);
}

// The same run with keel-sim's --shape cylinder (radius 0.4 m, 1.8 m tall,
// 1.0 m crouched).
Test(golden, cylinder_movement_on_the_builtin_level)
{
    sim_move_settings s = sim_move_default_settings();
    s.stand_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
    s.crouch_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1000));
    uint64_t h = movement_hash(&s);
    cr_assert_eq(h, GOLDEN_CYLINDER_MOVEMENT, "cylinder movement hash is 0x%016llx", (unsigned long long)h);
}
