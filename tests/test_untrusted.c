// keel tests: state from outside is validated, and no value the public API
// accepts makes a check fire. MIT licence, see LICENSE.
//
// The rule (docs/ranges.md, "Refused or clamped"):
// with KEEL_CHECKS on, no SIM_CHECK fires for any value a public function of
// sim_move.h, sim_scene.h, sim_query.h, sim_shape.h or sim_world.h accepts;
// what a function refuses, it refuses with its return value. These tests run
// in the checked builds (both trees of scripts/test.sh), so an abort fails
// them. The restore fuzzer lives in test_restore_fuzz.c.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_scene.h>

#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)

static sim_level level;
static sim_world *world;
static sim_move_settings S;

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    S = sim_move_default_settings();
}

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(untrusted, .init = setup, .fini = teardown, .timeout = 300);

static sim_vec3 marker(const char *name)
{
    const sim_marker *m = sim_level_find_marker(&level, name);
    cr_assert_not_null(m, "marker %s", name);
    return m->position;
}

// Little-endian field access in a saved scene (docs/scene.md: a 16-byte
// header, then 76 bytes per character).
enum { HEADER = 16, RECORD = 76 };
enum {
    F_ID = 0,
    F_FLAGS = 4,
    F_MOVE = 8,
    F_GROUND = 12,
    F_POS = 16,
    F_VEL = 28,
    F_NORMAL = 40,
    F_GVEL = 52,
    F_GOBJ = 64,
    F_STUCK = 68,
    F_YAW = 72,
};

static void put32(uint8_t *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *b, size_t at)
{
    return (uint32_t)b[at] | (uint32_t)b[at + 1] << 8 | (uint32_t)b[at + 2] << 16 | (uint32_t)b[at + 3] << 24;
}

// A scene of walkers standing on the floor, saved.
static sim_scene *walkers(uint32_t n, uint8_t **buf, size_t *size)
{
    sim_scene *sc = sim_scene_create(world, &S, n);
    cr_assert_not_null(sc);
    sim_vec3 c = marker("floor_center");
    for (uint32_t i = 0; i < n; i++) {
        sim_char_state st = sim_char_spawn(i + 1, sim_v3_add(c, sim_v3(M(1.5 * i), 0, 0)), 0);
        cr_assert_eq(sim_scene_add_character(sc, &st), 0);
    }
    for (int t = 0; t < 16; t++)
        sim_scene_step(sc);
    *size = sim_scene_state_size(sc);
    *buf = malloc(*size);
    sim_scene_save(sc, *buf);
    return sc;
}

Test(untrusted, restore_refuses_a_ground_normal_of_0x7fffffff_on_a_grounded_walker)
{
    uint8_t *buf;
    size_t size;
    sim_scene *sc = walkers(3, &buf, &size);
    const sim_char_state *c = sim_scene_find(sc, 2);
    cr_assert(c->flags & SIM_CHAR_GROUNDED);
    cr_assert_eq(c->move_type, SIM_MOVE_WALK);
    uint64_t before = sim_scene_hash(sc);
    put32(buf, HEADER + RECORD + F_NORMAL + 4, 0x7FFFFFFFu); // character 2, normal.y
    sim_scene_error e;
    cr_assert_not(sim_scene_restore(sc, buf, size, &e));
    cr_expect_str_eq(e.reason, "ground normal not unit");
    cr_expect_eq(e.record, 1);
    cr_expect_eq(e.offset, (size_t)(HEADER + RECORD));
    cr_expect_eq(sim_scene_hash(sc), before, "a refused restore changed the scene");
    // and the scene still steps (in a checked build this used to abort)
    sim_scene_step(sc);
    sim_scene_destroy(sc);
    free(buf);
}

Test(untrusted, restore_names_every_kind_of_bad_field)
{
    static const struct {
        size_t field;
        uint32_t value;
        const char *reason;
    } cases[] = {
        {F_ID, 0, "character id 0 or not below 2^31"},
        {F_ID, 0x80000001u, "character id 0 or not below 2^31"},
        {F_ID, 1, "character ids not increasing"},
        {F_FLAGS, SIM_CHAR_KNOWN_FLAGS + 1u, "unknown flag bits"},
        {F_MOVE, 5, "unknown move type"},
        {F_MOVE, 0xFFFFFFFFu, "unknown move type"},
        {F_GROUND, 3, "unknown ground kind"},
        {F_POS, (uint32_t)SIM_FX_INT(4020), "position outside the character range (4016 m per axis)"},
        {F_POS + 4, 0x80000000u, "position outside the character range (4016 m per axis)"},
        {F_VEL + 8, (uint32_t)SIM_FX_INT(101), "velocity above 100 m/s on an axis"},
        {F_GVEL, (uint32_t)-SIM_FX_INT(101), "ground velocity above 100 m/s on an axis"},
        {F_NORMAL + 4, (uint32_t)SIM_FX_RATIO(1, 2), "ground normal not unit"},
        {F_NORMAL, 0x80000000u, "ground normal not unit"},
        {F_GOBJ, 0x80000000u, "ground object id out of range"},
    };
    uint8_t *buf;
    size_t size;
    sim_scene *sc = walkers(3, &buf, &size);
    uint64_t before = sim_scene_hash(sc);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t at = HEADER + 2 * RECORD + cases[k].field; // the third record
        uint32_t keep = get32(buf, at);
        put32(buf, at, cases[k].value);
        sim_scene_error e;
        cr_expect_not(sim_scene_restore(sc, buf, size, &e), "case %zu accepted", k);
        cr_expect_str_eq(e.reason, cases[k].reason, "case %zu", k);
        cr_expect_eq(e.record, 2, "case %zu", k);
        put32(buf, at, keep);
    }
    // header faults
    sim_scene_error e;
    cr_expect_not(sim_scene_restore(sc, buf, size - 1, &e));
    cr_expect_str_eq(e.reason, "size does not match the character count");
    put32(buf, 12, 1000);
    cr_expect_not(sim_scene_restore(sc, buf, size, &e));
    cr_expect_str_eq(e.reason, "more characters than the scene holds");
    put32(buf, 12, 3);
    put32(buf, 4, 2);
    cr_expect_not(sim_scene_restore(sc, buf, size, &e));
    cr_expect_str_eq(e.reason, "unknown version");
    put32(buf, 4, 1);
    cr_expect_eq(sim_scene_hash(sc), before);
    // every tick is valid
    put32(buf, 8, 0xFFFFFFFFu);
    cr_expect(sim_scene_restore(sc, buf, size, &e), "%s", e.reason);
    cr_expect_eq(sim_scene_tick(sc), 0xFFFFFFFFu);
    sim_scene_step(sc);
    cr_expect_eq(sim_scene_tick(sc), 0u);
    sim_scene_destroy(sc);
    free(buf);
}

Test(untrusted, add_character_refuses_what_restore_refuses)
{
    sim_scene *sc = sim_scene_create(world, &S, 4);
    sim_char_state c = sim_char_spawn(1, marker("spawn"), 0);
    c.ground_normal = sim_v3(0, 0x7FFFFFFF, 0);
    cr_expect_eq(sim_scene_add_character(sc, &c), -1);
    c = sim_char_spawn(1, marker("spawn"), 0);
    c.position.x = SIM_MOVE_POSITION_LIMIT + 1; // sim_char_spawn would clamp; a state by hand is refused
    cr_expect_eq(sim_scene_add_character(sc, &c), -1);
    c = sim_char_spawn(1, marker("spawn"), 0);
    cr_expect_eq(sim_scene_add_character(sc, &c), 0);
    sim_scene_destroy(sc);
}

// ---- tick rates -----------------------------------------------------------------------

Test(untrusted, a_tick_rate_of_1_is_refused_with_a_reason)
{
    sim_move_settings s = S;
    const char *why = NULL;
    s.tick_rate = 1;
    cr_expect_not(sim_move_settings_check(&s, &why));
    cr_expect_str_eq(why, "tick_rate outside 2..1000 Hz");
    cr_expect_null(sim_scene_create(world, &s, 4), "a scene was made with a tick rate of 1");
    sim_collider col = sim_collider_world(world);
    sim_char_state c = sim_char_spawn(1, sim_v3(0, M(3000), 0), 0), keep = c;
    sim_input in = {0};
    cr_expect_not(sim_move_step(&col, &s, &c, &in));
    cr_expect_eq(memcmp(&c, &keep, sizeof c), 0, "a refused step changed the state");
    s.tick_rate = 1001;
    cr_expect_not(sim_move_settings_check(&s, NULL));
    s.tick_rate = 0;
    cr_expect_not(sim_move_settings_check(&s, NULL));
}

// The slowest and the fastest supported rates with a fall from high above
// at the speed cap: no check fires, the fall lands on the floor.
Test(untrusted, the_supported_tick_rates_hold_a_fall_at_the_speed_cap)
{
    static const int32_t rates[] = {SIM_MOVE_MIN_TICK_RATE, 3, 7, SIM_MOVE_MAX_TICK_RATE};
    for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
        sim_move_settings s = S;
        s.tick_rate = rates[k];
        cr_assert(sim_move_settings_check(&s, NULL));
        sim_scene *sc = sim_scene_create(world, &s, 2);
        cr_assert_not_null(sc);
        sim_vec3 at = marker("floor_center");
        sim_char_state c = sim_char_spawn(1, sim_v3(at.x, M(3500), at.z), 0);
        c.velocity = sim_v3(0, -SIM_MOVE_MAX_SPEED, 0);
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
        uint32_t ticks = (uint32_t)rates[k] * 60; // a minute
        for (uint32_t t = 0; t < ticks; t++) {
            sim_char_state before = *sim_scene_find(sc, 1);
            sim_scene_step(sc);
            cr_assert_eq(keel_test_crossings(world, &s, &before, sim_scene_find(sc, 1), 1, NULL), 0,
                         "%d Hz, tick %u: through the level", rates[k], t);
        }
        const sim_char_state *e = sim_scene_find(sc, 1);
        cr_log_info("%d Hz: after a minute feet (%.3f, %.3f, %.3f), %s\n", rates[k], D(e->position.x), D(e->position.y),
                    D(e->position.z), sim_move_type_name(e->move_type));
        cr_expect_eq(e->move_type, SIM_MOVE_WALK, "%d Hz: did not land", rates[k]);
        cr_expect(e->position.y >= 0 && e->position.y < SIM_FX_MM(10), "%d Hz: feet at %.4f m", rates[k],
                  D(e->position.y));
        sim_scene_destroy(sc);
    }
}

// ---- the tick counter wrapping with a long platform path -----------------------------------

Test(untrusted, the_tick_wrapping_under_a_rider_of_a_long_platform_path_is_no_carry)
{
    // A platform shuttling 200 m at 2 m per tick, high above the level.
    sim_platform_def p = {0};
    p.id = 9001;
    p.half = sim_v3(M(2), M(0.25), M(2));
    p.points[0] = sim_v3(M(-100), M(60), 0);
    p.points[1] = sim_v3(M(100), M(60), 0);
    p.point_count = 2;
    p.ticks_per_leg = 100;
    sim_scene *sc = sim_scene_create(world, &S, 2);
    cr_assert_eq(sim_scene_add_platform(sc, &p), 0);
    const uint32_t start = UINT32_MAX - 40u;
    sim_vec3 top = sim_v3_add(sim_platform_position(&p, start), sim_v3(0, p.half.y + SIM_FX_MM(5), 0));
    sim_char_state c = sim_char_spawn(1, top, 0);
    cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    // jump the scene's tick to just before the wrap (as a restored snapshot would)
    size_t size = sim_scene_state_size(sc);
    uint8_t *buf = malloc(size);
    sim_scene_save(sc, buf);
    put32(buf, 8, start);
    sim_scene_error e;
    cr_assert(sim_scene_restore(sc, buf, size, &e), "%s", e.reason);
    bool rode = false;
    for (int t = 0; t < 60; t++) {
        uint32_t tick = sim_scene_tick(sc);
        sim_char_state before = *sim_scene_find(sc, 1);
        sim_scene_step(sc);
        const sim_char_state *now = sim_scene_find(sc, 1);
        if (before.ground_object == p.id && tick != UINT32_MAX)
            rode = true;
        int64_t dx = (int64_t)now->position.x - before.position.x;
        if (tick == UINT32_MAX) {
            // The platform jumps back to its first point: the rider stays.
            cr_expect(dx > -SIM_FX_MM(200) && dx < SIM_FX_MM(200), "the wrap carried the rider %.3f m", D((sim_fx)dx));
            cr_expect(sim_v3_is_zero(now->ground_velocity) || now->ground_object != p.id);
        }
    }
    cr_expect(rode, "the character never rode the platform before the wrap");
    sim_scene_destroy(sc);
    free(buf);
}

// ---- every state the simulation makes is one it accepts --------------------------------

Test(untrusted, every_state_the_simulation_makes_passes_the_state_check)
{
    enum { N = 32, TICKS = 800 };
    sim_scene *sc = sim_scene_create(world, &S, N);
    sim_vec3 a = marker("platform_area");
    sim_platform_def e = {0};
    e.id = 5000;
    e.half = sim_v3(M(1.5), M(0.25), M(1.5));
    e.points[0] = sim_v3_add(a, sim_v3(0, M(-0.25), 0));
    e.points[1] = sim_v3_add(a, sim_v3(0, M(1.75), 0));
    e.point_count = 2;
    e.ticks_per_leg = 128;
    e.pause_ticks = 32;
    cr_assert_eq(sim_scene_add_platform(sc, &e), 0);
    cr_assert_eq(sim_scene_add_water(sc, (sim_aabb){sim_v3_add(a, sim_v3(M(1.5), M(-1), M(-3))),
                                                    sim_v3_add(a, sim_v3(M(3), M(1.5), M(3)))}),
                 0);
    for (uint32_t i = 0; i < N; i++) {
        sim_char_state c = sim_char_spawn(
            i + 1, sim_v3_add(a, sim_v3(M(-2.7 + 0.9 * (i % 7)), 0, M(-2.7 + 0.9 * (i / 7)))), (sim_angle)(i * 2000u));
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    }
    keel_rng rng = {77};
    size_t cap = sim_scene_state_size(sc);
    uint8_t *buf = malloc(cap);
    uint64_t checked = 0;
    for (int t = 0; t < TICKS; t++) {
        for (uint32_t id = 1; id <= N; id++) {
            sim_input in = {0};
            in.tick = sim_scene_tick(sc);
            in.forward = (int8_t)keel_rng_range(&rng, -127, 127);
            in.right = (int8_t)keel_rng_range(&rng, -127, 127);
            in.up = (int8_t)keel_rng_range(&rng, -127, 127);
            in.yaw = (sim_angle)keel_rng_range(&rng, 0, 65535);
            in.pitch = (sim_angle)keel_rng_range(&rng, 0, 65535);
            uint64_t b = keel_rng_next(&rng);
            in.buttons =
                (uint8_t)(((b & 7) == 0 ? SIM_BUTTON_JUMP : 0) | (((b >> 3) & 15) == 0 ? SIM_BUTTON_CROUCH : 0) |
                          (((b >> 7) & 255) == 0 ? SIM_BUTTON_FLY : 0));
            sim_scene_set_input(sc, id, &in);
        }
        sim_scene_step(sc);
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(sc, &n);
        for (uint32_t i = 0; i < n; i++, checked++) {
            const char *why;
            cr_assert(sim_char_state_check(&chars[i], &why), "tick %d, character %u: %s", t, chars[i].id, why);
        }
        sim_scene_save(sc, buf);
        sim_scene_error err;
        cr_assert(sim_scene_restore(sc, buf, cap, &err), "tick %d: own save refused: %s", t, err.reason);
    }
    cr_log_info("%llu states checked\n", (unsigned long long)checked);
    sim_scene_destroy(sc);
    free(buf);
}

// ---- no check fires for anything the API accepts -------------------------------------------

// A value from a mix of the ordinary, the edges and the absurd.
static sim_fx wild(keel_rng *r, sim_fx typical)
{
    static const sim_fx edges[] = {0,
                                   1,
                                   -1,
                                   0x7FFFFFFF,
                                   INT32_MIN,
                                   SIM_FX_INT(4096),
                                   -SIM_FX_INT(4096),
                                   SIM_FX_INT(4016),
                                   SIM_FX_INT(100),
                                   -SIM_FX_INT(100),
                                   SIM_FX_INT(64),
                                   SIM_FX_INT(65),
                                   SIM_FX_ONE,
                                   SIM_FX_MM(5),
                                   SIM_FX_INT(16),
                                   SIM_FX_INT(17)};
    switch (keel_rng_range(r, 0, 3)) {
    case 0: return edges[keel_rng_range(r, 0, (int64_t)(sizeof edges / sizeof edges[0]) - 1)];
    case 1: return (sim_fx)(uint32_t)keel_rng_next(r);
    default: return (sim_fx)keel_rng_range(r, -(int64_t)typical * 2, (int64_t)typical * 2);
    }
}

static sim_vec3 wild3(keel_rng *r, sim_fx typical)
{
    sim_fx x = wild(r, typical), y = wild(r, typical), z = wild(r, typical);
    return sim_v3(x, y, z);
}

static sim_shape wild_shape(keel_rng *r)
{
    sim_shape s;
    switch (keel_rng_range(r, 0, 2)) {
    case 0: return sim_shape_capsule(wild(r, SIM_FX_ONE), wild(r, SIM_FX_INT(2)));
    case 1: return sim_shape_box(wild(r, SIM_FX_ONE), wild(r, SIM_FX_ONE), wild(r, SIM_FX_ONE));
    default:
        memset(&s, 0, sizeof s);
        s.type = (int32_t)keel_rng_range(r, -1, 2);
        s.radius = wild(r, SIM_FX_ONE);
        s.half = wild3(r, SIM_FX_ONE);
        return s;
    }
}

Test(untrusted, no_check_fires_for_any_value_the_public_api_accepts)
{
    keel_rng r = {20261123};
    uint64_t settings_ok = 0, settings_refused = 0, steps_ok = 0, steps_refused = 0, queries = 0;
    uint64_t adds_ok = 0, adds_refused = 0, platforms_ok = 0, platforms_refused = 0;
    // KEEL_FUZZ_ROUNDS raises the count for a long run (docs/ranges.md).
    const char *env = getenv("KEEL_FUZZ_ROUNDS");
    int rounds = env && atoi(env) > 0 ? atoi(env) : 300;
    for (int round = 0; round < rounds; round++) {
        // settings: the defaults with one to three fields made wild
        sim_move_settings s = S;
        int fields = (int)keel_rng_range(&r, 0, 3);
        for (int f = 0; f < fields; f++) {
            switch (keel_rng_range(&r, 0, 19)) {
            case 0: s.tick_rate = (int32_t)keel_rng_range(&r, -5, 1100); break;
            case 1: s.stand_shape = wild_shape(&r); break;
            case 2: s.crouch_shape = wild_shape(&r); break;
            case 3: s.gravity = wild(&r, SIM_FX_INT(20)); break;
            case 4: s.max_speed = wild(&r, SIM_FX_INT(8)); break;
            case 5: s.crouch_speed_scale = wild(&r, SIM_FX_ONE); break;
            case 6: s.accelerate = wild(&r, SIM_FX_INT(10)); break;
            case 7: s.air_accelerate = wild(&r, SIM_FX_INT(1)); break;
            case 8: s.air_max_speed = wild(&r, SIM_FX_INT(8)); break;
            case 9: s.friction = wild(&r, SIM_FX_INT(6)); break;
            case 10: s.stop_speed = wild(&r, SIM_FX_INT(2)); break;
            case 11: s.jump_velocity = wild(&r, SIM_FX_INT(7)); break;
            case 12: s.step_height = wild(&r, SIM_FX_ONE); break;
            case 13: s.max_slope_cos = wild(&r, SIM_FX_ONE); break;
            case 14: s.skin = wild(&r, SIM_FX_MM(5)); break;
            case 15: s.max_slide_iterations = (int32_t)keel_rng_range(&r, -3, 40); break;
            case 16: s.depen_iterations = (int32_t)keel_rng_range(&r, -3, 100); break;
            case 17: s.fly_speed = wild(&r, SIM_FX_INT(10)); break;
            case 18: s.swim_speed = wild(&r, SIM_FX_INT(4)); break;
            default: s.water_gravity_scale = wild(&r, SIM_FX_ONE); break;
            }
        }
        sim_scene *sc = sim_scene_create(world, &s, 8);
        if (!sim_move_settings_check(&s, NULL)) {
            settings_refused++;
            cr_assert_null(sc);
            continue;
        }
        settings_ok++;
        cr_assert_not_null(sc);
        // platforms and water with wild paths
        for (int k = 0; k < 2; k++) {
            sim_platform_def p = {0};
            p.id = 100000u + (uint32_t)k;
            p.half = keel_rng_range(&r, 0, 3) ? sim_v3(M(1), M(0.25), M(1)) : wild3(&r, SIM_FX_ONE);
            p.point_count = (uint32_t)keel_rng_range(&r, 0, 9);
            for (int q = 0; q < SIM_PLATFORM_MAX_POINTS; q++)
                p.points[q] =
                    keel_rng_range(&r, 0, 2) ? sim_v3(wild(&r, SIM_FX_INT(10)), M(0.5), 0) : wild3(&r, SIM_FX_INT(20));
            p.ticks_per_leg = (uint32_t)keel_rng_range(&r, 0, 200);
            p.pause_ticks = (uint32_t)keel_rng_next(&r);
            if (sim_scene_add_platform(sc, &p) == 0)
                platforms_ok++;
            else
                platforms_refused++;
        }
        sim_scene_add_water(sc, (sim_aabb){wild3(&r, SIM_FX_INT(10)), wild3(&r, SIM_FX_INT(10))});
        // characters: spawned at wild points, some with wild fields
        for (uint32_t id = 1; id <= 8; id++) {
            sim_char_state c = sim_char_spawn(id, wild3(&r, SIM_FX_INT(10)), (sim_angle)keel_rng_next(&r));
            if (keel_rng_range(&r, 0, 3) == 0) {
                c.velocity = wild3(&r, SIM_FX_INT(10));
                c.ground_normal = keel_rng_range(&r, 0, 1) ? sim_v3(0, SIM_FX_ONE, 0) : wild3(&r, SIM_FX_ONE);
                c.ground = (int32_t)keel_rng_range(&r, -1, 3);
                c.move_type = (int32_t)keel_rng_range(&r, -1, SIM_MOVE_TYPE_COUNT);
                c.flags = (uint32_t)keel_rng_range(&r, 0, 0x3FF);
                c.ground_object = keel_rng_range(&r, 0, 1) ? 100000u : (uint32_t)keel_rng_next(&r);
                c.ground_velocity = wild3(&r, SIM_FX_INT(5));
            }
            if (sim_scene_add_character(sc, &c) == 0)
                adds_ok++;
            else
                adds_refused++;
        }
        // a scene tick near the wrap now and then
        if (keel_rng_range(&r, 0, 3) == 0) {
            size_t size = sim_scene_state_size(sc);
            uint8_t *buf = malloc(size);
            sim_scene_save(sc, buf);
            put32(buf, 8, UINT32_MAX - (uint32_t)keel_rng_range(&r, 0, 5));
            cr_assert(sim_scene_restore(sc, buf, size, NULL));
            free(buf);
        }
        for (int t = 0; t < 6; t++) {
            for (uint32_t id = 1; id <= 8; id++) {
                sim_input in;
                uint64_t b = keel_rng_next(&r);
                memcpy(&in, &b, sizeof in < sizeof b ? sizeof in : sizeof b);
                in.tick = (uint32_t)keel_rng_next(&r);
                sim_scene_set_input(sc, id, &in);
            }
            sim_scene_step(sc);
        }
        // a lone step with a wild state
        sim_collider col = sim_collider_world(world);
        sim_char_state c = sim_char_spawn(1, wild3(&r, SIM_FX_INT(10)), 0);
        bool w = keel_rng_range(&r, 0, 1) == 0; // half the time only in-range values
        c.velocity = w ? wild3(&r, SIM_FX_INT(50))
                       : sim_v3(keel_rng_fx(&r, -SIM_MOVE_MAX_SPEED, SIM_MOVE_MAX_SPEED),
                                keel_rng_fx(&r, -SIM_MOVE_MAX_SPEED, SIM_MOVE_MAX_SPEED),
                                keel_rng_fx(&r, -SIM_MOVE_MAX_SPEED, SIM_MOVE_MAX_SPEED));
        c.ground_normal = w ? wild3(&r, SIM_FX_ONE) : sim_v3(0, SIM_FX_ONE, 0);
        c.ground = (int32_t)keel_rng_range(&r, 0, 2);
        c.move_type = (int32_t)keel_rng_range(&r, 0, SIM_MOVE_TYPE_COUNT - 1);
        sim_input in = {0};
        in.forward = 127;
        if (sim_move_step(&col, &s, &c, &in))
            steps_ok++;
        else
            steps_refused++;
        // queries with wild inputs through the scene's collider and the world
        sim_collider sv = sim_scene_collider(sc, 1);
        for (int q = 0; q < 20; q++, queries++) {
            sim_sweep_input si = {wild_shape(&r), wild3(&r, SIM_FX_INT(10)), wild3(&r, SIM_FX_INT(2)),
                                  (uint32_t)keel_rng_range(&r, 0, 1)};
            sim_sweep_result sr;
            sim_world_sweep(world, &si, &sr);
            sv.sweep(sv.ctx, &si, &sr);
            sim_overlap_input oi = {wild_shape(&r), wild3(&r, SIM_FX_INT(10)), wild(&r, SIM_FX_MM(10))};
            sim_contact ct[4];
            sim_world_contacts(world, &oi, ct, 4);
            sv.contacts(sv.ctx, &oi, ct, 4);
            sim_ray_input ri = {wild3(&r, SIM_FX_INT(10)), wild3(&r, SIM_FX_INT(10))};
            sim_ray_result rr;
            sim_world_raycast(world, &ri, &rr);
            sv.raycast(sv.ctx, &ri, &rr);
        }
        sim_scene_destroy(sc);
    }
    cr_log_info("settings %llu accepted / %llu refused; platforms %llu / %llu; characters %llu / %llu; lone "
                "steps %llu / %llu; %llu query triples\n",
                (unsigned long long)settings_ok, (unsigned long long)settings_refused, (unsigned long long)platforms_ok,
                (unsigned long long)platforms_refused, (unsigned long long)adds_ok, (unsigned long long)adds_refused,
                (unsigned long long)steps_ok, (unsigned long long)steps_refused, (unsigned long long)queries);
    cr_expect_gt(settings_ok, 50);
    cr_expect_gt(adds_ok, 100);
}
