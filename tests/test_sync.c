// keel tests: the sync test. MIT licence, see LICENSE.
//
// What rollback netcode relies on, checked every tick of a long busy run
// (48 characters pushing each other, riding an elevator, swimming):
// - rolling back K ticks (K from 1 to 32, varied) to a saved state and
//   re-simulating with the same inputs gives the same state hash;
// - what sim_scene_save writes is enough: a run that serialises the scene
//   every tick, restores it into a fresh scene and continues from the copy
//   stays bit-identical to a run that never does.
// A test also shows that the check catches a save that leaves a field out.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "test_support.h"

#define N 48
#define RING 33u // K up to 32 needs the state 32 ticks back

static sim_level level;
static sim_world *world;
static sim_move_settings S;

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    S = sim_move_default_settings();
}

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(sync, .init = setup, .fini = teardown, .timeout = 600);

static sim_vec3 area(void)
{
    const sim_marker *m = sim_level_find_marker(&level, "platform_area");
    cr_assert_not_null(m);
    return m->position;
}

// A scene with the elevator and a pool but no characters (what a restore
// does not carry: the fixed platforms and water).
static sim_scene *empty_scene(void)
{
    sim_scene *sc = sim_scene_create(world, &S, N);
    cr_assert_not_null(sc);
    sim_vec3 a = area();
    sim_platform_def e = {0};
    e.id = 9000;
    e.half = sim_v3(SIM_FX_MM(1500), SIM_FX_MM(250), SIM_FX_MM(1500));
    e.points[0] = sim_v3_add(a, sim_v3(0, -SIM_FX_MM(250), 0));
    e.points[1] = sim_v3_add(a, sim_v3(0, SIM_FX_MM(1750), 0));
    e.point_count = 2;
    e.ticks_per_leg = 128;
    e.pause_ticks = 32;
    cr_assert_eq(sim_scene_add_platform(sc, &e), 0);
    cr_assert_eq(
        sim_scene_add_water(sc, (sim_aabb){sim_v3_add(a, sim_v3(SIM_FX_INT(2), -SIM_FX_INT(1), -SIM_FX_INT(3))),
                                           sim_v3_add(a, sim_v3(SIM_FX_INT(4), SIM_FX_MM(1500), SIM_FX_INT(3)))}),
        0);
    return sc;
}

static sim_scene *busy_scene(void)
{
    sim_scene *sc = empty_scene();
    sim_vec3 a = area();
    for (uint32_t i = 0; i < N; i++) {
        sim_vec3 p = sim_v3_add(
            a, sim_v3(SIM_FX_MM(-3000 + 850 * (int32_t)(i % 8)), 0, SIM_FX_MM(-3000 + 850 * (int32_t)(i / 8))));
        sim_char_state c = sim_char_spawn(i + 1, p, (sim_angle)(i * 1234u));
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    }
    return sc;
}

// The command of character `id` at `tick`: a pure function of both, so a
// re-simulation feeds exactly what the first run fed. Most walk toward the
// middle of the area (they push), some jump, crouch or wander.
static sim_input command_of(uint32_t id, uint32_t tick)
{
    keel_rng r = {((uint64_t)id << 32) ^ (tick / 16u) ^ 0x5eedu};
    sim_input in = {0};
    in.tick = tick;
    in.forward = (int8_t)keel_rng_range(&r, 40, 127);
    in.right = (int8_t)keel_rng_range(&r, -60, 60);
    in.yaw = (sim_angle)(id % 4 == 0 ? keel_rng_range(&r, 0, 65535) : (id * 16384u + tick * 37u) & 0xFFFFu);
    uint64_t b = keel_rng_next(&r) ^ tick;
    in.buttons = (uint8_t)(((b & 31) == 0 ? SIM_BUTTON_JUMP : 0) | (((b >> 5) & 63) == 0 ? SIM_BUTTON_CROUCH : 0));
    return in;
}

static void feed(sim_scene *sc)
{
    uint32_t n, t = sim_scene_tick(sc);
    const sim_char_state *cs = sim_scene_characters(sc, &n);
    for (uint32_t i = 0; i < n; i++) {
        sim_input in = command_of(cs[i].id, t);
        sim_scene_set_input(sc, cs[i].id, &in);
    }
}

typedef struct saved {
    uint32_t tick;
    size_t size;
    uint8_t buf[16 + 76 * N];
} saved;

Test(sync, rolling_back_any_number_of_ticks_and_re_simulating_gives_the_same_state)
{
    enum { TICKS = 800 };
    sim_scene *sc = busy_scene(), *re = empty_scene();
    static saved ring[RING];
    static uint64_t hash[TICKS + 1];
    uint64_t resimulated = 0, rides = 0;
    hash[0] = sim_scene_hash(sc);
    for (uint32_t t = 0; t < TICKS; t++) {
        saved *s = &ring[t % RING];
        s->tick = t;
        s->size = sim_scene_state_size(sc);
        sim_scene_save(sc, s->buf);
        feed(sc);
        sim_scene_step(sc);
        hash[t + 1] = sim_scene_hash(sc);
        uint32_t n;
        const sim_char_state *cs = sim_scene_characters(sc, &n);
        for (uint32_t i = 0; i < n; i++)
            rides += cs[i].ground_object == 9000;
        // roll back K ticks and come forward again
        uint32_t k = 1u + (t * 7u + t / 32u) % 32u;
        if (k > t + 1u)
            k = t + 1u;
        const saved *from = &ring[(t + 1u - k) % RING];
        cr_assert_eq(from->tick, t + 1u - k);
        sim_scene_error err;
        cr_assert(sim_scene_restore(re, from->buf, from->size, &err), "%s", err.reason);
        for (uint32_t j = 0; j < k; j++) {
            feed(re);
            sim_scene_step(re);
            resimulated++;
        }
        cr_assert_eq(sim_scene_hash(re), hash[t + 1], "tick %u: rolled back %u ticks, re-simulated to another state",
                     t + 1, k);
    }
    cr_log_info("sync: %d ticks of %d characters, %llu ticks re-simulated after rollbacks of 1..32, %llu "
                "character-ticks riding\n",
                TICKS, N, (unsigned long long)resimulated, (unsigned long long)rides);
    cr_expect_gt(rides, 0);
    sim_scene_destroy(sc);
    sim_scene_destroy(re);
}

// Runs a reference scene and one that is saved, restored into a fresh scene
// and continued from the copy every tick; `damage` (when given) alters each
// saved buffer, standing for a save that loses something. Returns the first
// tick whose hashes differ (0 for none) and names the first differing field.
static uint32_t chain_run(uint32_t ticks, void (*damage)(uint8_t *buf, size_t size), char *field, size_t cap)
{
    sim_scene *ref = busy_scene(), *chain = busy_scene();
    uint8_t *buf = malloc(16 + 76 * N);
    uint32_t diverged = 0;
    for (uint32_t t = 0; t < ticks && !diverged; t++) {
        size_t size = sim_scene_state_size(chain);
        sim_scene_save(chain, buf);
        if (damage)
            damage(buf, size);
        sim_scene *copy = empty_scene();
        sim_scene_error err;
        cr_assert(sim_scene_restore(copy, buf, size, &err), "%s", err.reason);
        sim_scene_destroy(chain);
        chain = copy;
        feed(ref);
        sim_scene_step(ref);
        feed(chain);
        sim_scene_step(chain);
        if (sim_scene_hash(ref) != sim_scene_hash(chain)) {
            diverged = t + 1;
            uint32_t n, m;
            const sim_char_state *a = sim_scene_characters(ref, &n);
            const sim_char_state *b = sim_scene_characters(chain, &m);
            snprintf(field, cap, "?");
            for (uint32_t i = 0; i < n && i < m; i++) {
                const char *f = NULL;
                if (!sim_v3_eq(a[i].position, b[i].position))
                    f = "position";
                else if (!sim_v3_eq(a[i].velocity, b[i].velocity))
                    f = "velocity";
                else if (!sim_v3_eq(a[i].ground_velocity, b[i].ground_velocity))
                    f = "ground_velocity";
                else if (a[i].flags != b[i].flags)
                    f = "flags";
                else if (a[i].stuck_ticks != b[i].stuck_ticks)
                    f = "stuck_ticks";
                else if (a[i].ground_object != b[i].ground_object)
                    f = "ground_object";
                if (f) {
                    snprintf(field, cap, "character %u, %s", a[i].id, f);
                    break;
                }
            }
        }
    }
    free(buf);
    sim_scene_destroy(ref);
    sim_scene_destroy(chain);
    return diverged;
}

Test(sync, continuing_from_a_saved_and_restored_copy_every_tick_changes_nothing)
{
    char field[96] = "";
    uint32_t d = chain_run(600, NULL, field, sizeof field);
    cr_expect_eq(d, 0, "diverged at tick %u (%s)", d, field);
}

// A save that leaves out a character's velocity (the bytes of the velocity
// of every record zeroed), as a forgetful serialiser would.
static void forget_velocity(uint8_t *buf, size_t size)
{
    for (size_t at = 16; at + 76 <= size; at += 76)
        memset(buf + at + 28, 0, 12);
}

Test(sync, a_save_that_leaves_out_a_field_is_caught_at_once)
{
    char field[96] = "";
    uint32_t d = chain_run(600, forget_velocity, field, sizeof field);
    cr_log_info("sync: the forgetful save diverged at tick %u (%s)\n", d, field);
    cr_expect(d >= 1 && d <= 4, "caught at tick %u", d);
    cr_expect(strstr(field, "velocity") || strstr(field, "position"), "first differing field: %s", field);
}
