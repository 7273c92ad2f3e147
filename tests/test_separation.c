// keel tests: characters never overlap each other, crowds piled on one point
// spread out, and placing a character finds the nearest free spot.
// MIT licence, see LICENSE.
//
// Before the separation pass (sim/src/scene_separate.c), each character
// collided with the others' start-of-tick shapes only, so two walking into
// the same gap both advanced into it: on 200 characters with random input
// around one spawn point, 865 pair-ticks overlapped by more than 1 mm (99th
// percentile 81 mm), and 1,000 characters started at one point ran at about
// 108 ms a tick with 766 of them stuck. Here every tick is checked: no two
// characters overlap by more than 1 mm, measured in double by an independent
// reference (ref_shape_pair_gap: exact for two capsules, a searched
// separating direction for the other pairs), and no centre path crosses the
// level.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_scene.h>

#include "../tools/keel-sim/ks_common.h"
#include "ref_geom.h"
#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)
#define PI_4 0.78539816339744830962

static sim_level level;
static sim_world *world;

static void setup(void) { world = keel_test_builtin_world(&level); }
static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(separation, .init = setup, .fini = teardown, .timeout = 900);

static sim_vec3 marker(const char *name)
{
    const sim_marker *m = sim_level_find_marker(&level, name);
    cr_assert_not_null(m, "marker %s", name);
    return m->position;
}

// ---- measuring ------------------------------------------------------------------------

typedef struct overlap_stats {
    double worst;     // deepest overlap of any pair after any tick (m)
    double unflagged; // deepest overlap of a pair not both marked SIM_CHAR_CROWDED (m)
    uint32_t unflagged_tick;
    uint64_t crowded;      // character-ticks marked SIM_CHAR_CROWDED
    uint64_t miscounted;   // ticks whose sim_scene_separation.crowded is not the count marked
    uint64_t over_1mm;     // pair-ticks deeper than 1 mm
    uint64_t over_quarter; // pair-ticks deeper than 0.25 mm
    uint32_t worst_tick;
    uint32_t worst_a, worst_b;
} overlap_stats;

// The deepest overlap among the scene's solid characters now (every pair whose
// bounds come within 1 cm; the reference decides).
static void measure(const sim_scene *sc, const sim_move_settings *s, overlap_stats *st)
{
    uint32_t n, marked = 0;
    const sim_char_state *c = sim_scene_characters(sc, &n);
    for (uint32_t i = 0; i < n; i++)
        marked += (c[i].flags & SIM_CHAR_CROWDED) != 0;
    st->crowded += marked;
    st->miscounted += sim_scene_tick(sc) > 0 && sim_scene_last_separation(sc).crowded != marked;
    for (uint32_t i = 0; i < n; i++) {
        if (c[i].move_type == SIM_MOVE_FLY)
            continue;
        sim_shape si = sim_char_shape(s, &c[i]);
        sim_vec3 pi = sim_char_center(s, &c[i]);
        sim_aabb bi = sim_aabb_expand(sim_shape_bounds(si, pi), sim_v3(M(0.01), M(0.01), M(0.01)));
        for (uint32_t j = i + 1; j < n; j++) {
            if (c[j].move_type == SIM_MOVE_FLY)
                continue;
            sim_shape sj = sim_char_shape(s, &c[j]);
            sim_vec3 pj = sim_char_center(s, &c[j]);
            if (!sim_aabb_overlaps(bi, sim_shape_bounds(sj, pj)))
                continue;
            double depth = -ref_shape_pair_gap(si, rv3_from(pi), sj, rv3_from(pj));
            if (depth > 0.00025)
                st->over_quarter++;
            if (depth > 0.001)
                st->over_1mm++;
            bool both = (c[i].flags & c[j].flags & SIM_CHAR_CROWDED) != 0;
            if (!both && depth > st->unflagged) {
                st->unflagged = depth;
                st->unflagged_tick = sim_scene_tick(sc);
            }
            if (depth > st->worst) {
                st->worst = depth;
                st->worst_tick = sim_scene_tick(sc);
                st->worst_a = c[i].id;
                st->worst_b = c[j].id;
            }
        }
    }
}

// A walking policy like keel-sim's: a heading per character that changes
// every second, full speed, a jump now and then, crouching for a while.
static void walk_inputs(sim_scene *sc, keel_rng *rng, bool crouch)
{
    uint32_t n, t = sim_scene_tick(sc);
    const sim_char_state *c = sim_scene_characters(sc, &n);
    for (uint32_t i = 0; i < n; i++) {
        keel_rng r = {(uint64_t)c[i].id * 0x9E3779B97F4A7C15ull ^ (uint64_t)(t / 64) * 0xBF58476D1CE4E5B9ull};
        sim_input in = {0};
        in.tick = t;
        in.yaw = (sim_angle)keel_rng_range(&r, 0, 65535);
        in.forward = (int8_t)keel_rng_range(&r, 64, 127);
        in.right = (int8_t)keel_rng_range(&r, -40, 40);
        bool crouching = crouch && keel_rng_range(&r, 0, 3) == 0;
        in.buttons =
            (uint8_t)((keel_rng_range(rng, 0, 40) == 0 ? SIM_BUTTON_JUMP : 0) | (crouching ? SIM_BUTTON_CROUCH : 0));
        sim_scene_set_input(sc, c[i].id, &in);
    }
}

// Steps the scene `ticks` times with `inputs`, measuring after every tick and
// checking that no centre path crossed the level.
typedef void (*input_fn)(sim_scene *sc, keel_rng *rng, void *ctx);

typedef struct run_result {
    overlap_stats ov;
    uint32_t crossings;
    uint32_t longest_stuck;
    uint32_t relocated, pushed, unresolved_ticks;
    uint32_t last_unresolved_tick;
    overlap_stats settled; // only after the first second (64 ticks)
} run_result;

static run_result run(sim_scene *sc, const sim_move_settings *s, uint32_t ticks, input_fn inputs, void *ctx,
                      uint64_t seed)
{
    run_result r;
    memset(&r, 0, sizeof r);
    keel_rng rng = {seed};
    uint32_t cap = sim_scene_capacity(sc);
    sim_char_state *before = calloc(cap ? cap : 1, sizeof *before);
    cr_assert_not_null(before);
    for (uint32_t t = 0; t < ticks; t++) {
        uint32_t n;
        const sim_char_state *c = sim_scene_characters(sc, &n);
        memcpy(before, c, n * sizeof *c);
        if (inputs)
            inputs(sc, &rng, ctx);
        sim_scene_step(sc);
        c = sim_scene_characters(sc, &n);
        r.crossings += keel_test_crossings(world, s, before, c, n, NULL);
        for (uint32_t i = 0; i < n; i++)
            if (c[i].stuck_ticks > r.longest_stuck)
                r.longest_stuck = c[i].stuck_ticks;
        sim_scene_separation sp = sim_scene_last_separation(sc);
        if (getenv("SEP_DEBUG") && (sp.unresolved || sp.relocated))
            cr_log_info("tick %u: pushed %u relocated %u unresolved %u\n", t + 1, sp.pushed, sp.relocated,
                        sp.unresolved);
        r.relocated += sp.relocated;
        r.pushed += sp.pushed;
        if (sp.unresolved) {
            r.unresolved_ticks++;
            r.last_unresolved_tick = t + 1;
        }
        measure(sc, s, &r.ov);
        if (t + 1 > 64)
            measure(sc, s, &r.settled);
    }
    free(before);
    return r;
}

static void log_run(const char *name, uint32_t n, uint32_t ticks, const run_result *r)
{
    cr_log_info("%s: %u characters x %u ticks: deepest pair overlap %.4f mm (tick %u, ids %u/%u), pair-ticks "
                "over 0.25 mm %llu, over 1 mm %llu; pushed %u, relocated %u, ticks with unplaced characters "
                "%u; crossings %u, longest stuck %u ticks\n",
                name, n, ticks, r->ov.worst * 1000, r->ov.worst_tick, r->ov.worst_a, r->ov.worst_b,
                (unsigned long long)r->ov.over_quarter, (unsigned long long)r->ov.over_1mm, r->pushed, r->relocated,
                r->unresolved_ticks, r->crossings, r->longest_stuck);
}

// No pair deeper than 1 mm after any tick unless both are marked
// SIM_CHAR_CROWDED (and the scene counts them), nobody through the level.
static void expect_flagged(const overlap_stats *ov)
{
    cr_expect_leq(ov->unflagged, 0.001, "deepest overlap of a pair not marked crowded %.4f mm at tick %u",
                  ov->unflagged * 1000, ov->unflagged_tick);
    cr_expect_eq(ov->miscounted, 0, "ticks whose crowded count differs from the characters marked");
}

// As expect_flagged, and nobody marked crowded: these crowds fit.
static void expect_apart(const run_result *r)
{
    expect_flagged(&r->ov);
    cr_expect_leq(r->ov.worst, 0.001, "deepest overlap %.4f mm at tick %u (ids %u, %u)", r->ov.worst * 1000,
                  r->ov.worst_tick, r->ov.worst_a, r->ov.worst_b);
    cr_expect_eq(r->ov.crowded, 0, "character-ticks marked crowded");
    cr_expect_eq(r->crossings, 0);
}

static void walkers(sim_scene *sc, keel_rng *rng, void *ctx) { walk_inputs(sc, rng, ctx != NULL); }

static void add_at(sim_scene *sc, uint32_t id, sim_vec3 feet, sim_angle yaw)
{
    sim_char_state c = sim_char_spawn(id, feet, yaw);
    cr_assert_eq(sim_scene_add_character(sc, &c), 0, "add %u", id);
}

// ---- crowds ---------------------------------------------------------------------------

Test(separation, two_hundred_walkers_from_one_spawn_point_never_overlap_by_more_than_1mm)
{
    enum { N = 200, TICKS = KEEL_TEST_SIZE(640, 256) };
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, N);
    sim_vec3 spawn = marker("spawn");
    for (uint32_t i = 0; i < N; i++)
        add_at(sc, i + 1, spawn, (sim_angle)(i * 331u));
    run_result r = run(sc, &s, TICKS, walkers, (void *)1, 7);
    log_run("200 walkers from one point", N, TICKS, &r);
    expect_apart(&r);
    sim_scene_destroy(sc);
}

// Every pair of shapes: standing cylinders, crouching into boxes, walking
// into each other.
Test(separation, mixed_shapes_never_overlap_by_more_than_1mm)
{
    enum { N = 120, TICKS = KEEL_TEST_SIZE(400, 200) };
    sim_move_settings s = sim_move_default_settings();
    s.stand_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
    s.crouch_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(500), SIM_FX_MM(400));
    cr_assert(sim_move_settings_check(&s, NULL));
    sim_scene *sc = sim_scene_create(world, &s, N);
    sim_vec3 spawn = marker("floor_center");
    for (uint32_t i = 0; i < N; i++)
        add_at(sc, i + 1, sim_v3(spawn.x + M(0.85 * (i % 11)), 0, spawn.z - M(0.85 * (i / 11))), (sim_angle)(i * 977u));
    run_result r = run(sc, &s, TICKS, walkers, (void *)1, 11);
    log_run("cylinders and crouched boxes", N, TICKS, &r);
    expect_apart(&r);
    sim_scene_destroy(sc);
}

// Everybody walks at full speed toward one point in the corner: the crowd
// presses itself against the walls and each other.
typedef struct goal_ctx {
    sim_vec3 goal;
} goal_ctx;

static void toward_goal(sim_scene *sc, keel_rng *rng, void *ctx)
{
    const goal_ctx *g = ctx;
    uint32_t n, t = sim_scene_tick(sc);
    const sim_char_state *c = sim_scene_characters(sc, &n);
    for (uint32_t i = 0; i < n; i++) {
        double dx = D(g->goal.x - c[i].position.x), dz = D(g->goal.z - c[i].position.z);
        long v = lround(atan2(-dx, -dz) / (2 * 3.14159265358979323846) * 65536.0);
        sim_input in = {0};
        in.tick = t;
        in.yaw = (sim_angle)(((v % 65536) + 65536) % 65536);
        in.forward = 127;
        in.buttons = keel_rng_range(rng, 0, 60) == 0 ? SIM_BUTTON_JUMP : 0;
        sim_scene_set_input(sc, c[i].id, &in);
    }
}

Test(separation, a_crowd_pushing_into_a_corner_never_overlaps_by_more_than_1mm)
{
    enum { N = 100, TICKS = KEEL_TEST_SIZE(600, 250) };
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, N);
    sim_vec3 start = marker("corner_start");
    goal_ctx g = {marker("corner")};
    for (uint32_t i = 0; i < N; i++)
        add_at(sc, i + 1, sim_v3(start.x + M(0.9 * (i % 10)), 0, start.z + M(0.9 * (i / 10))), 0);
    run_result r = run(sc, &s, TICKS, toward_goal, &g, 3);
    log_run("pushing into the corner", N, TICKS, &r);
    expect_apart(&r);
    sim_scene_destroy(sc);
}

// The elevator and the shuttle: riders carried into bystanders, bystanders
// walking into the platforms' paths. A character the elevator crushes
// against the floor among others has no route out (its shape cannot be swept
// up or across from under the platform): it stays, marked crowded, until the
// platform rises or the others make room.
Test(separation, riders_and_bystanders_on_platforms_overlap_by_more_than_1mm_only_when_marked_crowded)
{
    enum { N = 60, TICKS = KEEL_TEST_SIZE(900, 300) };
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, N);
    cr_assert_eq(sim_scene_add_area_platforms(sc, &level, 1000, 1001), 0);
    sim_vec3 area = marker("platform_area");
    for (uint32_t i = 0; i < N; i++)
        add_at(sc, i + 1, sim_v3(area.x + M(-5 + 0.85 * (i % 12)), area.y + M(2.5), area.z + M(-2 + 0.85 * (i / 12))),
               (sim_angle)(i * 4099u));
    goal_ctx g = {area};
    run_result r = run(sc, &s, TICKS / 3, toward_goal, &g, 5);
    run_result r2 = run(sc, &s, TICKS - TICKS / 3, walkers, NULL, 9);
    expect_flagged(&r.ov);
    expect_flagged(&r2.ov);
    cr_log_info("platforms: character-ticks marked crowded %llu (toward the platforms), %llu (walking)\n",
                (unsigned long long)r.ov.crowded, (unsigned long long)r2.ov.crowded);
    if (r2.ov.worst > r.ov.worst)
        r.ov = r2.ov;
    r.crossings += r2.crossings;
    log_run("platforms", N, TICKS, &r);
    cr_expect_eq(r.crossings, 0);
    sim_scene_destroy(sc);
}

// ---- piles ------------------------------------------------------------------------------

// `n` characters added at the same feet point (the built-in level's spawn
// marker) in the order `order` picks: 0 ascending ids, 1 descending, 2 a
// shuffle.
static sim_scene *pile(const sim_move_settings *s, uint32_t n, int order)
{
    sim_scene *sc = sim_scene_create(world, s, n);
    sim_vec3 spawn = marker("spawn");
    uint32_t *ids = malloc(n * sizeof *ids);
    for (uint32_t i = 0; i < n; i++)
        ids[i] = order == 1 ? n - i : i + 1;
    if (order == 2) {
        keel_rng r = {99};
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t j = (uint32_t)keel_rng_range(&r, 0, i);
            uint32_t t = ids[i];
            ids[i] = ids[j];
            ids[j] = t;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        add_at(sc, ids[i], spawn, (sim_angle)(ids[i] * 331u));
    free(ids);
    return sc;
}

static void check_pile(uint32_t n, bool walking)
{
    const uint32_t ticks = 128;
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = pile(&s, n, 0);
    run_result r = run(sc, &s, ticks, walking ? walkers : NULL, NULL, 1);
    char name[64];
    snprintf(name, sizeof name, "pile of %u, %s", n, walking ? "walking" : "idle");
    log_run(name, n, ticks, &r);
    // Spread within one second (64 ticks), nobody stuck that long, and after
    // that nobody overlapping unless marked crowded. Idle, the thousand do
    // not all fit: the spots within the search's 40 rings (16 m) that the
    // shape reaches in a walk (up a step, across, down, never through the
    // thin wall or the closed room) hold 971; the other 29 stay piled,
    // marked, counted, and never found a spot later.
    uint32_t crowded = sim_scene_last_separation(sc).crowded;
    cr_expect_lt(r.longest_stuck, 64u);
    cr_expect_eq(r.crossings, 0);
    cr_log_info("%s: after the first second, deepest overlap %.4f mm, pair-ticks over 1 mm %llu, character-ticks "
                "marked crowded %llu; crowded at the end %u\n",
                name, r.settled.worst * 1000, (unsigned long long)r.settled.over_1mm,
                (unsigned long long)r.settled.crowded, crowded);
    expect_flagged(&r.settled);
    if (walking) {
        cr_expect_leq(r.last_unresolved_tick, 64u, "characters still unplaced at tick %u", r.last_unresolved_tick);
        cr_expect_leq(r.settled.worst, 0.001, "overlap %.4f mm at tick %u", r.settled.worst * 1000,
                      r.settled.worst_tick);
    } else {
        cr_expect_leq(crowded, n / 25, "%u of %u crowded", crowded, n);
    }
    sim_scene_destroy(sc);
}

// (Under the sanitizers, 300: the same paths, a third of the work.)
Test(separation, a_thousand_idle_characters_at_one_point_spread_out_as_far_as_there_is_room)
{
    check_pile(KEEL_TEST_SIZE(1000, 300), false);
}
Test(separation, a_thousand_walking_characters_at_one_point_spread_out) { check_pile(KEEL_TEST_SIZE(1000, 300), true); }

Test(separation, a_pile_separates_the_same_whatever_order_the_characters_were_added_in)
{
    enum { N = 300, TICKS = 96 };
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc[3];
    for (int o = 0; o < 3; o++)
        sc[o] = pile(&s, N, o);
    keel_rng rng[3] = {{4}, {4}, {4}};
    for (int t = 0; t < TICKS; t++) {
        for (int o = 0; o < 3; o++) {
            walk_inputs(sc[o], &rng[o], false);
            sim_scene_step(sc[o]);
        }
        uint64_t h = sim_scene_hash(sc[0]);
        cr_assert_eq(sim_scene_hash(sc[1]), h, "descending adds differ at tick %d", t + 1);
        cr_assert_eq(sim_scene_hash(sc[2]), h, "shuffled adds differ at tick %d", t + 1);
    }
    for (int o = 0; o < 3; o++)
        sim_scene_destroy(sc[o]);
}

// ---- placing ------------------------------------------------------------------------------

Test(separation, placing_characters_at_one_spawn_point_finds_the_nearest_free_spots)
{
    enum { N = 64 };
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, N);
    sim_vec3 spawn = marker("spawn");
    double farthest = 0;
    for (uint32_t i = 0; i < N; i++) {
        sim_char_state c = sim_char_spawn(i + 1, spawn, 0);
        sim_vec3 at;
        cr_assert_eq(sim_scene_place_character(sc, &c, &at), 0, "character %u found no spot", i + 1);
        if (i == 0)
            cr_assert(sim_v3_eq(at, spawn), "the first goes on the spawn point itself");
        farthest = fmax(farthest, hypot(D(at.x - spawn.x), D(at.z - spawn.z)));
    }
    overlap_stats st = {0};
    measure(sc, &s, &st);
    cr_log_info("64 placed at one spawn point: deepest overlap %.4f mm, farthest %.2f m from it\n", st.worst * 1000,
                farthest);
    cr_expect_leq(st.worst, 0.0, "placed characters overlap by %.4f mm", st.worst * 1000);
    // 64 shapes 0.8 m wide on rings 0.4 m apart fit within ten rings.
    cr_expect_leq(farthest, 4.1);
    // They stand there: a tick changes nothing about who overlaps whom.
    sim_scene_step(sc);
    sim_scene_separation sp = sim_scene_last_separation(sc);
    cr_expect_eq(sp.relocated + sp.pushed, 0);
    sim_scene_destroy(sc);
}

Test(separation, a_respawn_onto_an_occupied_spot_lands_next_to_whoever_stands_there)
{
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, 4);
    sim_vec3 spawn = marker("spawn");
    add_at(sc, 1, spawn, 0);
    for (int t = 0; t < 32; t++)
        sim_scene_step(sc);
    sim_char_state c = sim_char_spawn(2, spawn, 0);
    sim_vec3 at;
    cr_assert(sim_scene_find_spot(sc, &c, spawn, &at));
    double away = hypot(D(at.x - spawn.x), D(at.z - spawn.z));
    cr_assert(away > 0.79 && away < 1.3, "%.3f m from the spawn point", away);
    // The same character may be re-placed where it stands: it does not block itself.
    sim_vec3 self_at;
    const sim_char_state *one = sim_scene_find(sc, 1);
    cr_assert(sim_scene_find_spot(sc, one, one->position, &self_at));
    cr_assert(sim_v3_eq(self_at, one->position));
    sim_scene_destroy(sc);
}

Test(separation, a_free_spot_is_never_found_through_a_wall)
{
    // Characters fill the front of the 1 cm wall; the spot for one more must
    // not be just behind it (nearer, but through the wall).
    enum { N = 40 };
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, N + 1);
    sim_vec3 front = sim_v3(M(-4), 0, M(-9.55));
    for (uint32_t i = 0; i < N; i++) {
        sim_char_state c = sim_char_spawn(i + 1, front, 0);
        cr_assert_geq(sim_scene_place_character(sc, &c, NULL), 0);
    }
    uint32_t n;
    const sim_char_state *c = sim_scene_characters(sc, &n);
    for (uint32_t i = 0; i < n; i++) {
        bool behind = c[i].position.z < M(-10);
        bool round_the_end = c[i].position.x < M(-6.3) || c[i].position.x > M(-1.7);
        cr_expect(!behind || round_the_end, "character %u placed behind the wall at (%.3f, %.3f)", c[i].id,
                  D(c[i].position.x), D(c[i].position.z));
    }
    sim_scene_destroy(sc);
}

// ---- crowds larger than their room ----------------------------------------------------------
//
// A spot holds as many characters as the free, walkable, reachable floor
// within the search's rings holds (docs/scene.md, "How many characters a spot
// holds"). Beyond that the rest stay where they are, overlapping, marked
// SIM_CHAR_CROWDED and counted in sim_scene_separation.crowded: after a step
// no pair overlaps by more than 1 mm unless both are marked.

// A closed room, faces inward: floor at y 0, `w` x `d` m, `h` m high, with an
// optional solid block (x0, z0, x1, z1, top) standing on the floor.
static sim_world *room_world(sim_level *L, double w, double d, double h, const double *block)
{
    sim_vec3 lo = block ? sim_v3(M(block[0]), 0, M(block[1])) : sim_v3_zero();
    sim_vec3 hi = block ? sim_v3(M(block[2]), M(block[4]), M(block[3])) : sim_v3_zero();
    return keel_test_room_world(L, M(-w / 2), M(-d / 2), M(w / 2), M(d / 2), M(h), block ? &lo : NULL,
                                block ? &hi : NULL);
}

// What a relocation reported by sim_scene_relocation must satisfy, checked
// here against the world alone (no platforms in these rooms): the spot is
// clear of the level, has ground under its rim within a step height, lies at
// most a step above and 2 m below where the character was, and the shape
// sweeps from there up a step, across and down onto it.
static void check_relocation(const sim_world *w, const sim_move_settings *s, const sim_char_state *c, sim_vec3 from,
                             sim_vec3 to, uint32_t *checked)
{
    sim_char_state a = *c, b = *c;
    a.position = from;
    b.position = to;
    sim_shape shape = sim_char_shape(s, &b);
    sim_vec3 ca = sim_char_center(s, &a), cb = sim_char_center(s, &b);
    cr_expect(to.y <= from.y + s->step_height + s->skin && to.y >= from.y - M(2) - s->skin,
              "character %u relocated from y %.3f to %.3f", c->id, D(from.y), D(to.y));
    sim_overlap_input oi = {shape, cb, 0};
    sim_contact ct;
    cr_expect(sim_world_contacts(w, &oi, &ct, 1) == 0 || ct.depth <= SIM_QUERY_TOLERANCE,
              "character %u relocated into the level", c->id);
    double r = D(shape.radius) * 0.98;
    for (int k = 0; k < 8; k++) {
        double ang = k * PI_4;
        sim_vec3 at = sim_v3_add(cb, sim_v3(M(r * sin(ang)), 0, M(r * cos(ang))));
        sim_ray_input down = {at, sim_v3(0, -(shape.half.y + s->step_height + s->skin), 0)};
        sim_ray_result rr;
        cr_expect(sim_world_raycast(w, &down, &rr), "character %u relocated to (%.3f, %.3f) with no ground at %d",
                  c->id, D(to.x), D(to.z), k);
    }
    double top = fmax(D(ca.y), D(cb.y)) + D(s->step_height);
    sim_sweep_input up = {shape, ca, sim_v3(0, M(top) - ca.y, 0), 0};
    sim_sweep_result sr;
    sim_vec3 high = ca;
    if (sim_world_sweep(w, &up, &sr))
        high = sr.position;
    else
        high = sim_v3_add(ca, up.displacement);
    sim_sweep_input across = {shape, high, sim_v3(cb.x - high.x, 0, cb.z - high.z), 0};
    cr_expect_not(sim_world_sweep(w, &across, &sr) && sr.fraction < SIM_FX_ONE - M(0.001),
                  "character %u: no sweep across to its spot", c->id);
    (*checked)++;
}

typedef struct room_figures {
    overlap_stats settled;
    uint32_t crowded_end, relocations_checked, outside;
} room_figures;

// `n` idle capsules started at `feet` in world `w`, 128 ticks.
static room_figures room_pile(const sim_world *w, uint32_t n, sim_vec3 feet, sim_aabb inside)
{
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(w, &s, n);
    for (uint32_t i = 0; i < n; i++) {
        sim_char_state c = sim_char_spawn(i + 1, feet, (sim_angle)(i * 331u));
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    }
    room_figures f;
    memset(&f, 0, sizeof f);
    for (uint32_t t = 0; t < 128; t++) {
        sim_scene_step(sc);
        uint32_t count;
        const sim_char_state *c = sim_scene_characters(sc, &count);
        for (uint32_t i = 0; i < count; i++) {
            for (int pass = SIM_SCENE_PASS_BEFORE_MOVES; pass <= SIM_SCENE_PASS_AFTER_MOVES; pass++) {
                sim_vec3 from, to;
                if (sim_scene_relocation(sc, c[i].id, pass, &from, &to))
                    check_relocation(w, &s, &c[i], from, to, &f.relocations_checked);
            }
            sim_vec3 ctr = sim_char_center(&s, &c[i]);
            f.outside += !(ctr.x > inside.min.x && ctr.x < inside.max.x && ctr.y > inside.min.y &&
                           ctr.y < inside.max.y && ctr.z > inside.min.z && ctr.z < inside.max.z);
        }
        if (t + 1 > 64)
            measure(sc, &s, &f.settled);
    }
    f.crowded_end = sim_scene_last_separation(sc).crowded;
    sim_scene_destroy(sc);
    return f;
}

Test(separation, a_crowd_larger_than_its_room_stays_marked_crowded_and_counted)
{
    // 4 m x 4 m holds about 16 capsules 0.8 m wide; 200 start at its centre.
    sim_level L;
    sim_world *w = room_world(&L, 4, 4, 3, NULL);
    sim_aabb inside = {sim_v3(M(-2), 0, M(-2)), sim_v3(M(2), M(3), M(2))};
    room_figures f = room_pile(w, 200, sim_v3(0, SIM_FX_MM(10), 0), inside);
    cr_log_info("200 in a 4 m room: crowded at the end %u, pair-ticks over 1 mm after a second %llu (deepest %.1f mm), "
                "deepest not both marked %.4f mm, relocations checked %u\n",
                f.crowded_end, (unsigned long long)f.settled.over_1mm, f.settled.worst * 1000,
                f.settled.unflagged * 1000, f.relocations_checked);
    expect_flagged(&f.settled);
    cr_expect_geq(f.crowded_end, 200 - 20, "only %u crowded: the room cannot hold the rest", f.crowded_end);
    cr_expect_gt(f.settled.over_1mm, 0);
    cr_expect_gt(f.relocations_checked, 0);
    cr_expect_eq(f.outside, 0, "character-ticks with the centre outside the room");
    sim_world_destroy(w);
    sim_level_free(&L);
}

Test(separation, a_pile_that_fits_its_room_ends_with_no_pair_over_1mm)
{
    sim_level L;
    sim_world *w = room_world(&L, 6, 6, 3, NULL);
    sim_aabb inside = {sim_v3(M(-3), 0, M(-3)), sim_v3(M(3), M(3), M(3))};
    room_figures f = room_pile(w, 16, sim_v3(0, SIM_FX_MM(10), 0), inside);
    cr_log_info("16 in a 6 m room: crowded %u, deepest pair after a second %.4f mm, relocations checked %u\n",
                f.crowded_end, f.settled.worst * 1000, f.relocations_checked);
    expect_flagged(&f.settled);
    cr_expect_leq(f.settled.worst, 0.001);
    cr_expect_eq(f.settled.crowded, 0);
    cr_expect_gt(f.relocations_checked, 0);
    cr_expect_eq(f.outside, 0);
    sim_world_destroy(w);
    sim_level_free(&L);
}

Test(separation, a_pile_on_a_high_ledge_is_never_relocated_off_it)
{
    // A 3 m x 3 m block 3 m high in a 16 m room: the floor around lies more
    // than the 2 m a character may be dropped. 40 characters on top: the few
    // the top holds spread over it, the rest stay marked crowded.
    sim_level L;
    static const double block[5] = {-1.5, -1.5, 1.5, 1.5, 3};
    sim_world *w = room_world(&L, 16, 16, 6, block);
    sim_aabb inside = {sim_v3(M(-8), 0, M(-8)), sim_v3(M(8), M(6), M(8))};
    room_figures f = room_pile(w, 40, sim_v3(0, M(3.01), 0), inside);
    cr_log_info("40 on a 3 m ledge: crowded %u, relocations checked %u\n", f.crowded_end, f.relocations_checked);
    expect_flagged(&f.settled);
    cr_expect_gt(f.relocations_checked, 0);
    cr_expect_gt(f.crowded_end, 0);
    sim_world_destroy(w);
    sim_level_free(&L);
}

// 200 idle capsules at spawn points of zdm2 (keel-sim's spawn search, seeds
// 2, 4, 16 and 31): where the floor around does not hold them, the rest
// stay marked crowded; no pair over 1 mm is left unmarked.
Test(separation, piles_at_zdm2_spawn_points_overlap_only_when_marked_crowded)
{
    const char *path = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!path)
        cr_skip_test("shared map sauerbraten_zdm2.obj absent");
    sim_level L;
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &L, &err), 0, "%s", err.message);
    sim_world *w = sim_world_create(&L, NULL, NULL);
    cr_assert_not_null(w);
    sim_move_settings s = sim_move_default_settings();
    sim_aabb bounds = sim_world_get_stats(w).bounds;
    ks_spawn_area area = {&L, w, bounds, s.stand_shape, s.max_slope_cos, SIM_FX_ONE, true};
    static const uint64_t seeds[] = {2, 4, 16, 31};
    const size_t nseeds = KEEL_TEST_SIZE(sizeof seeds / sizeof seeds[0], 1); // one spawn point under the sanitizers
    for (size_t k = 0; k < nseeds; k++) {
        sim_vec3 feet;
        cr_assert(ks_spawn_find(&area, seeds[k], 1, NULL, 0, SIM_FX_MM(1200), &feet));
        room_figures f = room_pile(w, 200, feet, bounds);
        cr_log_info("zdm2, 200 at (%.2f, %.2f, %.2f): crowded at the end %u, pair-ticks over 1 mm after a second "
                    "%llu, deepest not both marked %.4f mm, relocations checked %u\n",
                    D(feet.x), D(feet.y), D(feet.z), f.crowded_end, (unsigned long long)f.settled.over_1mm,
                    f.settled.unflagged * 1000, f.relocations_checked);
        expect_flagged(&f.settled);
        cr_expect_eq(f.outside, 0);
    }
    sim_world_destroy(w);
    sim_level_free(&L);
}
