// keel tests: randomized soak of the character mover on the built-in level and
// the two shared real maps. MIT licence, see LICENSE.
//
// 48 characters in one sim_scene (so they also collide with each other) walk,
// turn, crouch and jump at random (keel-sim's random walk,
// tools/keel-sim/ks_common.h) for 2,500 ticks: 120,000 character-ticks per
// level. After every tick, every character is checked against the static
// geometry: it may not overlap it by more than the skin plus
// SOAK_DEPTH_TOLERANCE (sim_world_contacts), its feet may not drop more than
// 1 m below the level's bounds, it may not leave the world's bounds (x, z
// within 0.9 m of them, feet at most 2 m above the top), and its centre may
// not cross a triangle between two ticks (a free shape's centre stays at
// least its half width from geometry). Stuck flags and characters hanging in
// the air (falling faster than after a second of free fall, yet not moving)
// are counted and logged, not failed. Each run's final state hash is pinned,
// so a change in movement shows here too.
//
// Before each command a character looks ahead for open edges and turns back
// from them (ks_guard_edges): the built-in floor ends in open edges and the
// real maps are open wherever the game relied on sky or clip brushes, so a
// random walk would otherwise walk off into nothing, which is not what this
// test is about. Falling to a lower floor is still allowed.
//
// Spawn points: seeded vertical rays through the whole level list every
// surface on the way down; a floor counts only when the space above it is
// open, i.e. when the surface above it is a ceiling seen from below (by the
// faces' winding) or there is nothing above it at all. On the real maps
// (octree meshes, wound counter-clockwise seen from the playable side) that
// keeps spawns inside the rooms, under their ceilings, and off roofs and out
// of the gaps between stacked faces. The standing shape must fit there, and
// characters start at least 1.2 m apart (ks_spawn_find).
//
// Regenerating the pinned hashes: when a change alters movement on purpose,
// run this test (build/test_soak --verbose); each failing run prints the new
// value in its message. Check that the change is meant, then paste the values
// into the SOAK_HASH_* constants below. keel-sim runs the same scenarios and
// prints the same hashes (docs/keel-sim.md, "Reproducing the soak test"):
//   keel-sim --random-spawns --edge-guard --characters 48 --seed 20261122
//            --ticks 2500 --quiet                                   (built-in)
//   keel-sim --level ../shared/levels/sauerbraten_zdm2.obj --edge-guard
//            --characters 48 --seed 20261122 --ticks 2500 --quiet   (zdm2; the
//            same with sauerbraten_pandora.obj)
// and without --quiet shows every character's every tick.
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/sim_hash.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "../tools/keel-sim/ks_common.h"
#include "test_support.h"

// Pinned final state hashes (see "Regenerating" above).
#define SOAK_HASH_BUILTIN UINT64_C(0x717ad5e9fa4f9550)
#define SOAK_HASH_ZDM2 UINT64_C(0xb965ff757fe07430)
#define SOAK_HASH_PANDORA UINT64_C(0x0226b46a4f4e567e)

#define SOAK_CHARACTERS 48
#define SOAK_TICKS 2500 // 48 x 2500 = 120,000 character-ticks per level
#define SOAK_SEED UINT64_C(20261122)
/// Depth beyond the skin that still counts as resting: none. The issue asks
/// for "never more than the skin" (5 mm); the deepest seen is about 1.5 mm.
#define SOAK_DEPTH_TOLERANCE 0
/// Characters start at least this far apart (capsule diameter 0.8 m).
#define SOAK_SPACING SIM_FX_MM(1200)

typedef struct soak_stats {
    uint64_t character_ticks;
    sim_fx max_depth;
    uint32_t max_depth_tick, max_depth_id;
    sim_vec3 max_depth_at;
    uint64_t over_depth; ///< character-ticks deeper than skin + tolerance
    uint64_t stuck_ticks; ///< character-ticks with SIM_CHAR_STUCK
    uint32_t stuck_characters;
    uint32_t max_stuck_run;
    uint64_t falls;   ///< character-ticks with the feet below the level
    uint64_t escapes; ///< character-ticks outside the world's bounds
    uint64_t tunnelled; ///< character-ticks whose centre crossed a triangle
    /// Character-ticks airborne, falling faster than a second of free fall
    /// would make it, yet not moving: hung on something it does not stand on.
    uint64_t hung;
    uint32_t hung_characters;
    char first_hang[256];
    uint64_t grounded_ticks, jumps, steps;
    uint64_t move_type_ticks[SIM_MOVE_TYPE_COUNT];
    char first_failure[512];
    double seconds;
    uint64_t hash;
} soak_stats;

typedef struct soak {
    const char *name;
    sim_level level;
    sim_world *world;
    sim_aabb bounds;
    sim_move_settings s;
    sim_scene *scene;
    uint32_t count;
    // Per character, indexed by id - 1 (scene ids start at 1).
    ks_walker walkers[SOAK_CHARACTERS];
    sim_vec3 centers[SOAK_CHARACTERS]; ///< before the tick, for the tunnelling check
    bool stuck_seen[SOAK_CHARACTERS];
    bool hung_seen[SOAK_CHARACTERS];
} soak;

// Keeps the first failure's reproduction: level, tick, character, feet.
static void fail_once(soak_stats *st, const char *name, uint32_t tick, const sim_char_state *c,
                      const char *what, sim_fx depth)
{
    if (st->first_failure[0])
        return;
    snprintf(st->first_failure, sizeof st->first_failure,
             "%s (seed %" PRIu64 "): tick %u character %u feet (%.6f, %.6f, %.6f) %s (depth %.6f m)",
             name, SOAK_SEED, tick, c->id, keel_fx_to_d(c->position.x),
             keel_fx_to_d(c->position.y), keel_fx_to_d(c->position.z), what, keel_fx_to_d(depth));
}

static void check_character(soak *k, soak_stats *st, const sim_char_state *c, uint32_t tick)
{
    sim_shape shape = sim_char_shape(&k->s, c);
    sim_vec3 center = sim_char_center(&k->s, c);
    // Margin 0 finds every overlap; asking a skin further also reports how
    // close the nearest character came (a negative depth is a gap).
    sim_overlap_input oi = {shape, center, k->s.skin};
    sim_contact ct;
    sim_fx depth = sim_world_contacts(k->world, &oi, &ct, 1) > 0 ? ct.depth : -k->s.skin;
    if (depth > st->max_depth) {
        st->max_depth = depth;
        st->max_depth_tick = tick;
        st->max_depth_id = c->id;
        st->max_depth_at = c->position;
    }
    if (depth > k->s.skin + SOAK_DEPTH_TOLERANCE) {
        st->over_depth++;
        fail_once(st, k->name, tick, c, "overlaps the level beyond the skin", depth);
    }
    // A free shape's centre keeps at least its half width from geometry, so
    // a centre path crossing a triangle means the shape went through it.
    sim_vec3 from = k->centers[c->id - 1];
    if (!sim_v3_eq(from, center)) {
        sim_ray_input ray = {from, sim_v3_sub(center, from)};
        sim_ray_result rr;
        if (sim_world_raycast(k->world, &ray, &rr)) {
            st->tunnelled++;
            fail_once(st, k->name, tick, c, "crossed a surface with its centre", depth);
        }
    }
    if (c->move_type == SIM_MOVE_AIR && c->velocity.y < -k->s.gravity &&
        sim_v3_len_sq64(sim_v3_sub(center, from)) < (int64_t)SIM_FX_MM(1) * SIM_FX_MM(1)) {
        st->hung++;
        if (!k->hung_seen[c->id - 1]) {
            k->hung_seen[c->id - 1] = true;
            st->hung_characters++;
            if (!st->first_hang[0])
                snprintf(st->first_hang, sizeof st->first_hang,
                         "tick %u character %u feet (%.6f, %.6f, %.6f) velocity y %.3f m/s", tick,
                         c->id, keel_fx_to_d(c->position.x), keel_fx_to_d(c->position.y),
                         keel_fx_to_d(c->position.z), keel_fx_to_d(c->velocity.y));
        }
    }
    k->centers[c->id - 1] = center;
    if (c->position.y < k->bounds.min.y - SIM_FX_ONE) {
        st->falls++;
        fail_once(st, k->name, tick, c, "fell out of the level", depth);
    }
    sim_fx r = shape.half.x + SIM_FX_MM(500);
    if (c->position.x < k->bounds.min.x - r || c->position.x > k->bounds.max.x + r ||
        c->position.z < k->bounds.min.z - r || c->position.z > k->bounds.max.z + r ||
        c->position.y > k->bounds.max.y + SIM_FX_INT(2)) {
        st->escapes++;
        fail_once(st, k->name, tick, c, "left the world's bounds", depth);
    }
    if (c->flags & SIM_CHAR_STUCK) {
        st->stuck_ticks++;
        if (!k->stuck_seen[c->id - 1]) {
            k->stuck_seen[c->id - 1] = true;
            st->stuck_characters++;
            cr_log_info("%s: character %u first stuck at tick %u, feet (%.6f, %.6f, %.6f)\n", k->name,
                        c->id, tick, keel_fx_to_d(c->position.x), keel_fx_to_d(c->position.y),
                        keel_fx_to_d(c->position.z));
        }
        if (c->stuck_ticks > st->max_stuck_run)
            st->max_stuck_run = c->stuck_ticks;
    }
    if (c->flags & SIM_CHAR_GROUNDED)
        st->grounded_ticks++;
    if (c->flags & SIM_CHAR_STEPPED)
        st->steps++;
    if (c->move_type >= 0 && c->move_type < SIM_MOVE_TYPE_COUNT)
        st->move_type_ticks[c->move_type]++;
}

static sim_input command(soak *k, const sim_char_state *c, uint32_t tick)
{
    sim_input in = ks_walker_next(&k->walkers[c->id - 1], tick);
    ks_guard_edges(k->world, k->bounds, c, &in);
    return in;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run(soak *k, soak_stats *st, bool require_ceiling)
{
    memset(st, 0, sizeof *st);
    st->max_depth = SIM_FX_MIN;
    k->world = sim_world_create(&k->level, NULL, NULL);
    cr_assert_not_null(k->world, "%s: cannot build the world", k->name);
    k->bounds = sim_world_get_stats(k->world).bounds;
    k->s = sim_move_default_settings();
    k->count = SOAK_CHARACTERS;
    k->scene = sim_scene_create(k->world, &k->s, k->count);
    cr_assert_not_null(k->scene);

    ks_spawn_area area = {&k->level, k->world, k->bounds, k->s.stand_shape, k->s.max_slope_cos,
                          SIM_FX_ONE, require_ceiling};
    sim_vec3 feet[SOAK_CHARACTERS];
    for (uint32_t i = 0; i < k->count; i++) {
        uint32_t id = i + 1;
        cr_assert(ks_spawn_find(&area, SOAK_SEED, id, feet, i, SOAK_SPACING, &feet[i]),
                  "%s: no spawn point found for character %u", k->name, id);
        ks_rng yaw = ks_rng_for(SOAK_SEED, id, KS_STREAM_FACING);
        sim_char_state c = sim_char_spawn(id, feet[i], (sim_angle)ks_rng_range(&yaw, 0, 65535));
        cr_assert_eq(sim_scene_add_character(k->scene, &c), 0);
        k->walkers[i] = ks_walker_init(SOAK_SEED, id);
        k->centers[i] = sim_char_center(&k->s, &c);
        k->stuck_seen[i] = false;
        k->hung_seen[i] = false;
    }

    double t0 = now_s();
    for (uint32_t tick = 0; tick < SOAK_TICKS; tick++) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(k->scene, &n);
        for (uint32_t i = 0; i < n; i++) {
            sim_input in = command(k, &chars[i], tick);
            if ((in.buttons & SIM_BUTTON_JUMP) && (chars[i].flags & SIM_CHAR_GROUNDED) &&
                !(chars[i].flags & SIM_CHAR_JUMP_HELD))
                st->jumps++;
            sim_scene_set_input(k->scene, chars[i].id, &in);
        }
        sim_scene_step(k->scene);
        chars = sim_scene_characters(k->scene, &n);
        for (uint32_t i = 0; i < n; i++)
            check_character(k, st, &chars[i], tick + 1);
        st->character_ticks += n;
    }
    st->seconds = now_s() - t0;
    st->hash = sim_scene_hash(k->scene);
    sim_scene_destroy(k->scene);
    sim_world_destroy(k->world);
    sim_level_free(&k->level);
}

static void report(const soak *k, const soak_stats *st)
{
    cr_log_info("%s: %" PRIu64 " character-ticks (%u characters x %u ticks) in %.2f s; "
                "max overlap %.6f m (tick %u, character %u, feet %.6f %.6f %.6f; skin %.3f m); "
                "over skin+tol %" PRIu64 "; stuck character-ticks %" PRIu64
                " (%u characters, longest %u ticks); falls %" PRIu64 "; escapes %" PRIu64
                "; centre crossed a surface %" PRIu64 "; grounded %.1f%%; jumps %" PRIu64 "; steps %" PRIu64 "; final hash %016" PRIx64 "\n",
                k->name, st->character_ticks, k->count, SOAK_TICKS, st->seconds,
                keel_fx_to_d(st->max_depth), st->max_depth_tick, st->max_depth_id,
                keel_fx_to_d(st->max_depth_at.x), keel_fx_to_d(st->max_depth_at.y),
                keel_fx_to_d(st->max_depth_at.z), keel_fx_to_d(k->s.skin), st->over_depth,
                st->stuck_ticks, st->stuck_characters, st->max_stuck_run, st->falls, st->escapes, st->tunnelled,
                100.0 * (double)st->grounded_ticks / (double)st->character_ticks, st->jumps, st->steps,
                st->hash);
    char types[256] = "";
    size_t used = 0;
    for (int t = 0; t < SIM_MOVE_TYPE_COUNT; t++)
        used += (size_t)snprintf(types + used, sizeof types - used, "%s%s %" PRIu64, t ? ", " : "",
                                 sim_move_type_name(t), st->move_type_ticks[t]);
    cr_log_info("%s: character-ticks per move type: %s\n", k->name, types);
    if (st->hung)
        cr_log_warn("%s: %" PRIu64 " character-ticks (%u characters) hung in the air, falling "
                    "without moving; first: %s\n",
                    k->name, st->hung, st->hung_characters, st->first_hang);
}

static void check(const soak *k, const soak_stats *st, uint64_t pinned)
{
    report(k, st);
    cr_expect(st->character_ticks >= 100000);
    cr_expect_eq(st->over_depth, 0, "%s", st->first_failure);
    cr_expect_eq(st->falls, 0, "%s", st->first_failure);
    cr_expect_eq(st->escapes, 0, "%s", st->first_failure);
    cr_expect_eq(st->tunnelled, 0, "%s", st->first_failure);
    cr_expect_eq(st->hash, pinned,
                 "%s: final hash %016" PRIx64 ", pinned %016" PRIx64
                 " (if movement changed on purpose, update the constant)",
                 k->name, st->hash, pinned);
}

static soak soak_state;

TestSuite(soak, .timeout = 900);

Test(soak, builtin_level)
{
    soak *k = &soak_state;
    memset(k, 0, sizeof *k);
    k->name = "builtin";
    cr_assert_eq(sim_level_builtin(&k->level), 0);
    soak_stats st;
    run(k, &st, false);
    check(k, &st, SOAK_HASH_BUILTIN);
}

static void map_run(const char *file, const char *name, uint64_t pinned)
{
    const char *path = keel_test_level_path(file);
    if (!path)
        cr_skip_test("shared map %s absent", file);
    soak *k = &soak_state;
    memset(k, 0, sizeof *k);
    k->name = name;
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &k->level, &err), 0, "%s", err.message);
    soak_stats st;
    run(k, &st, true);
    check(k, &st, pinned);
}

Test(soak, zdm2) { map_run("sauerbraten_zdm2.obj", "zdm2", SOAK_HASH_ZDM2); }

Test(soak, pandora) { map_run("sauerbraten_pandora.obj", "pandora", SOAK_HASH_PANDORA); }
