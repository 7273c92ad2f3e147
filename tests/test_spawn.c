// keel tests: the spawn search (sim_spawn.h) and respawning below the level
// (sim_move_settings.respawn_depth). MIT licence, see LICENSE.
//
// 64 characters start the way keel-server places joining players (its spawn
// spots, sim_spawn_spots with sim_spawn_default_settings, the first one no
// character stands on, then sim_scene_place_character) on the built-in level
// and, when ../shared/levels holds them, on zdm2 and pandora. Each must stand
// on ground, clear of the level, and still stand there after 3 s of empty
// commands. The old search (a 4 m grid around the spawn marker, or the
// origin, with a floor within 1 m below) is run beside it for the log.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_level.h>
#include <keel/sim_scene.h>
#include <keel/sim_spawn.h>

#include "test_support.h"

#define PLAYERS 64u
#define SETTLE_TICKS 192u // 3 s at 64 Hz

#define D(v) keel_fx_to_d(v)
#define M(x) ((sim_fx)llround((x)*65536.0))

typedef struct map {
    const char *name;
    sim_level level;
    sim_world *world;
} map;

static bool load(const char *name, map *m)
{
    memset(m, 0, sizeof *m);
    m->name = name;
    if (strcmp(name, "builtin") == 0) {
        m->world = keel_test_builtin_world(&m->level);
        return true;
    }
    const char *path = keel_test_level_path(name);
    if (!path)
        return false;
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &m->level, &err), 0, "%s", err.message);
    m->world = sim_world_create(&m->level, NULL, &err);
    cr_assert_not_null(m->world, "%s", err.message);
    return true;
}

static void unload(map *m)
{
    sim_world_destroy(m->world);
    sim_level_free(&m->level);
}

// Ground within 0.4 m under the feet, and the standing shape clear of the
// level (1 mm tolerance).
static bool on_ground(const sim_world *w, sim_vec3 feet)
{
    sim_ray_input in = {sim_v3(feet.x, feet.y + M(0.1), feet.z), sim_v3(0, -M(0.5), 0)};
    sim_ray_result r;
    return sim_world_raycast(w, &in, &r) && r.normal.y > 0;
}

static double deepest(const sim_world *w, const sim_move_settings *s, sim_vec3 feet)
{
    sim_overlap_input oi = {s->stand_shape, sim_v3_add(feet, sim_v3(0, s->stand_shape.half.y, 0)), 0};
    sim_contact c;
    return sim_world_contacts(w, &oi, &c, 1) > 0 ? D(c.depth) : 0.0;
}

// The search keel-server used before sim_spawn: the nearest free point of a
// 4 m grid around the spawn marker (or the origin) with a floor within 1 m.
static sim_vec3 old_spawn(const map *m, const sim_scene *sc, const sim_move_settings *s)
{
    const sim_marker *mk = sim_level_find_marker(&m->level, "spawn");
    sim_vec3 o = mk ? mk->position : sim_v3_zero();
    uint32_t n;
    const sim_char_state *ch = sim_scene_characters(sc, &n);
    for (int ring = 0; ring < 16; ring++)
        for (int gx = -ring; gx <= ring; gx++)
            for (int gz = -ring; gz <= ring; gz++) {
                if (abs(gx) != ring && abs(gz) != ring)
                    continue;
                sim_vec3 p = sim_v3_add(o, sim_v3(gx * M(4), 0, gz * M(4)));
                bool taken = false;
                for (uint32_t i = 0; i < n && !taken; i++)
                    taken = hypot(D(ch[i].position.x - p.x), D(ch[i].position.z - p.z)) < 2.0;
                if (taken || deepest(m->world, s, sim_v3_add(p, sim_v3(0, M(0.01), 0))) > 0)
                    continue;
                sim_ray_input in = {sim_v3_add(p, sim_v3(0, M(0.1), 0)), sim_v3(0, -M(1), 0)};
                sim_ray_result r;
                if (sim_world_raycast(m->world, &in, &r))
                    return p;
            }
    return o;
}

// Places PLAYERS characters (keel-server's way, or the old search), lets them
// stand for SETTLE_TICKS and counts those that stand where they started.
static uint32_t start_players(const map *m, bool old, uint32_t *placed_on_ground, double *worst_overlap)
{
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(m->world, &s, PLAYERS);
    cr_assert_not_null(sc);
    sim_spawn_settings ss = sim_spawn_default_settings(&s);
    sim_vec3 spots[PLAYERS];
    uint32_t count = sim_spawn_spots(m->world, &ss, spots, PLAYERS);
    if (!old)
        cr_assert(count > 0, "%s: no spawn spot", m->name);
    sim_vec3 start[PLAYERS + 1];
    *placed_on_ground = 0;
    *worst_overlap = 0;
    for (uint32_t id = 1; id <= PLAYERS; id++) {
        sim_vec3 feet;
        if (old) {
            feet = old_spawn(m, sc, &s);
        } else {
            uint32_t k = sim_scene_free_spot(sc, spots, count, 0, 0);
            feet = spots[k < count ? k : id % count];
        }
        sim_char_state c = sim_char_spawn(id, feet, 0);
        cr_assert_geq(sim_scene_place_character(sc, &c, &start[id]), 0);
        *placed_on_ground += on_ground(m->world, start[id]);
        *worst_overlap = fmax(*worst_overlap, deepest(m->world, &s, start[id]));
    }
    if (!old) {
        double far = 0, lo = 1e9, hi = -1e9;
        for (uint32_t id = 1; id <= PLAYERS; id++) {
            far = fmax(far, hypot(D(start[id].x - start[1].x), D(start[id].z - start[1].z)));
            lo = fmin(lo, D(start[id].y)), hi = fmax(hi, D(start[id].y));
        }
        cr_log_info("%s: %u spawn spots; player 1 at (%.2f, %.2f, %.2f), the farthest %.1f m from it, feet heights "
                    "%.2f..%.2f m\n",
                    m->name, count, D(start[1].x), D(start[1].y), D(start[1].z), far, lo, hi);
        // Where every player starts (docs/spawns.md lists them): id x y z.
        for (uint32_t id = 1; id <= PLAYERS; id++)
            cr_log_info("%s: spawn %u %.2f %.2f %.2f\n", m->name, id, D(start[id].x), D(start[id].y), D(start[id].z));
    }
    for (uint32_t t = 0; t < SETTLE_TICKS; t++)
        sim_scene_step(sc);
    uint32_t standing = 0;
    for (uint32_t id = 1; id <= PLAYERS; id++) {
        const sim_char_state *c = sim_scene_find(sc, id);
        bool ok = fabs(D(c->position.y - start[id].y)) < 0.5 && (c->flags & SIM_CHAR_GROUNDED) &&
                  on_ground(m->world, c->position);
        if (!ok && !old)
            cr_log_error("%s: character %u started at (%.2f, %.2f, %.2f), after 3 s at (%.2f, %.2f, %.2f), vy %.2f",
                         m->name, id, D(start[id].x), D(start[id].y), D(start[id].z), D(c->position.x),
                         D(c->position.y), D(c->position.z), D(c->velocity.y));
        standing += ok;
    }
    sim_scene_destroy(sc);
    return standing;
}

static void players_stand(const char *name)
{
    map m;
    if (!load(name, &m))
        cr_skip_test("%s is not in ../shared/levels", name);
    uint32_t old_ground, new_ground;
    double old_worst, new_worst;
    uint32_t old_standing = start_players(&m, true, &old_ground, &old_worst);
    uint32_t standing = start_players(&m, false, &new_ground, &new_worst);
    cr_log_info("%s, %u players: the old search put %u on ground (deepest overlap %.1f mm), %u standing after 3 s; "
                "the spawn spots put %u on ground (deepest overlap %.1f mm), %u standing after 3 s\n",
                name, PLAYERS, old_ground, old_worst * 1000, old_standing, new_ground, new_worst * 1000, standing);
    cr_assert_eq(new_ground, PLAYERS, "%s: %u of %u placed on ground", name, new_ground, PLAYERS);
    cr_assert(new_worst <= 0.001, "%s: a player overlaps the level by %.2f mm", name, new_worst * 1000);
    cr_assert_eq(standing, PLAYERS, "%s: %u of %u still standing after 3 s", name, standing, PLAYERS);
    unload(&m);
}

Test(spawn, sixty_four_players_stand_on_the_builtin_level) { players_stand("builtin"); }
Test(spawn, sixty_four_players_stand_on_zdm2, .timeout = 120) { players_stand("sauerbraten_zdm2.obj"); }
Test(spawn, sixty_four_players_stand_on_pandora, .timeout = 120) { players_stand("sauerbraten_pandora.obj"); }

// Every spot of a list is valid and the lists are the same twice over.
Test(spawn, spots_are_valid_and_deterministic)
{
    map m;
    load("builtin", &m);
    sim_move_settings s = sim_move_default_settings();
    sim_spawn_settings ss = sim_spawn_default_settings(&s);
    sim_vec3 a[48], b[48];
    uint32_t na = sim_spawn_spots(m.world, &ss, a, 48), nb = sim_spawn_spots(m.world, &ss, b, 48);
    cr_assert_eq(na, 48);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(a, b, sizeof(sim_vec3) * na), 0);
    const sim_marker *mk = sim_level_find_marker(&m.level, "spawn");
    cr_assert_not_null(mk);
    for (uint32_t i = 0; i < na; i++) {
        cr_assert(sim_spawn_valid(m.world, &ss, a[i]), "spot %u", i);
        cr_assert(hypot(D(a[i].x - mk->position.x), D(a[i].z - mk->position.z)) <= 24 * sqrt(2.0) + 0.01);
    }
    // A point over the floor's edge is no spot: the footprint hangs in the air.
    cr_assert(sim_spawn_valid(m.world, &ss, sim_v3(M(31.0), M(0.005), 0)));
    cr_assert_not(sim_spawn_valid(m.world, &ss, sim_v3(M(31.9), M(0.005), 0)));
    unload(&m);
}

// ---- respawning -----------------------------------------------------------------

// The yaw that looks along +X (yaw 0 looks along -Z, a quarter turn along -X).
#define YAW_PLUS_X ((sim_angle)49152)

static sim_input walk(uint32_t tick, sim_angle yaw)
{
    sim_input in = {0};
    in.tick = tick;
    in.forward = 127;
    in.yaw = yaw;
    return in;
}

// A character walked off the built-in level's edge falls, is respawned on a
// spawn spot within 3 s (about 2 m of walking, then 18 m of falling: 2 m to
// the level's lowest point and the 16 m depth) with zero velocity and its
// id, and stands on the floor there.
Test(spawn, a_character_that_walks_off_the_edge_is_respawned_on_the_floor)
{
    map m;
    load("builtin", &m);
    sim_move_settings s = sim_move_default_settings();
    s.respawn_depth = SIM_FX_INT(16);
    sim_scene *sc = sim_scene_create(m.world, &s, 4);
    cr_assert_not_null(sc);
    cr_assert_gt(sim_scene_spawn_count(sc), 0);
    sim_char_state c = sim_char_spawn(7, sim_v3(M(30), 0, M(3)), YAW_PLUS_X);
    cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    double low = D(sim_world_get_stats(m.world).bounds.min.y) - 16;
    uint32_t respawn_tick = 0;
    for (uint32_t t = 0; t < 192 && !respawn_tick; t++) {
        sim_input in = walk(t, YAW_PLUS_X);
        sim_scene_set_input(sc, 7, &in);
        sim_scene_step(sc);
        const sim_char_state *now = sim_scene_find(sc, 7);
        cr_assert_not_null(now, "the character keeps its id");
        if (sim_scene_last_respawns(sc) == 1) {
            respawn_tick = t + 1;
            cr_assert(sim_v3_is_zero(now->velocity), "velocity zero at the respawn");
            bool on_spot = false;
            for (uint32_t k = 0; k < sim_scene_spawn_count(sc); k++)
                on_spot |= sim_v3_eq(now->position, sim_scene_spawn_spot(sc, k));
            cr_assert(on_spot, "respawned at (%.3f, %.3f, %.3f), not a spawn spot", D(now->position.x),
                      D(now->position.y), D(now->position.z));
        } else {
            cr_assert(D(now->position.y) >= low - 1.0, "tick %u: at y %.2f, below %.2f", t, D(now->position.y), low);
        }
    }
    cr_assert_gt(respawn_tick, 0, "no respawn within 3 s");
    for (uint32_t t = 0; t < 64; t++)
        sim_scene_step(sc);
    const sim_char_state *now = sim_scene_find(sc, 7);
    cr_assert(now->flags & SIM_CHAR_GROUNDED, "standing 1 s after the respawn");
    cr_assert(on_ground(m.world, now->position));
    cr_log_info("respawned after %u ticks (%.2f s) at (%.2f, %.2f, %.2f)\n", respawn_tick, respawn_tick / 64.0,
                D(now->position.x), D(now->position.y), D(now->position.z));
    sim_scene_destroy(sc);
    unload(&m);
}

// Respawning is off by default: the same walk falls on past the depth.
Test(spawn, respawning_is_off_by_default)
{
    map m;
    load("builtin", &m);
    sim_move_settings s = sim_move_default_settings();
    cr_assert_eq(s.respawn_depth, 0);
    sim_scene *sc = sim_scene_create(m.world, &s, 1);
    cr_assert_eq(sim_scene_spawn_count(sc), 0);
    sim_char_state c = sim_char_spawn(1, sim_v3(M(30), 0, M(3)), YAW_PLUS_X);
    cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    for (uint32_t t = 0; t < 192; t++) {
        sim_input in = walk(t, YAW_PLUS_X);
        sim_scene_set_input(sc, 1, &in);
        sim_scene_step(sc);
        cr_assert_eq(sim_scene_last_respawns(sc), 0);
    }
    cr_assert_lt(D(sim_scene_find(sc, 1)->position.y), D(sim_world_get_stats(m.world).bounds.min.y) - 16);
    sim_scene_destroy(sc);
    unload(&m);
}

// Eight characters walking off every side, respawning onto spots the others
// may stand on: re-simulated from a saved state at tick 40 (a rollback) the
// scene is bit-identical, tick by tick.
Test(spawn, respawns_resimulate_bit_identically)
{
    map m;
    load("builtin", &m);
    sim_move_settings s = sim_move_default_settings();
    s.respawn_depth = SIM_FX_INT(16);
    enum { N = 8, TICKS = 600, SAVE_AT = 40 };
    sim_scene *a = sim_scene_create(m.world, &s, N), *b = sim_scene_create(m.world, &s, N);
    cr_assert(a && b);
    for (uint32_t i = 0; i < N; i++) {
        sim_angle yaw = (sim_angle)(i * 8192u);
        sim_vec3 f = sim_v3(-sim_fx_mul(sim_angle_sin(yaw), M(29)), 0, -sim_fx_mul(sim_angle_cos(yaw), M(29)));
        sim_char_state c = sim_char_spawn(i + 1, f, yaw);
        cr_assert_eq(sim_scene_add_character(a, &c), 0);
    }
    uint64_t hashes[TICKS];
    void *saved = malloc(sim_scene_state_size(a) + 64u * N);
    uint32_t respawns = 0;
    for (uint32_t t = 0; t < TICKS; t++) {
        if (t == SAVE_AT)
            sim_scene_save(a, saved);
        for (uint32_t i = 0; i < N; i++) {
            sim_input in = walk(t, (sim_angle)(i * 8192u + t * 16u));
            sim_scene_set_input(a, i + 1, &in);
        }
        sim_scene_step(a);
        respawns += sim_scene_last_respawns(a);
        hashes[t] = sim_scene_hash(a);
    }
    cr_assert_gt(respawns, N, "every character respawned at least once (%u respawns)", respawns);
    size_t size = sim_scene_state_size(a); // the same count of characters as at SAVE_AT
    cr_assert(sim_scene_restore(b, saved, size, NULL));
    for (uint32_t t = SAVE_AT; t < TICKS; t++) {
        for (uint32_t i = 0; i < N; i++) {
            sim_input in = walk(t, (sim_angle)(i * 8192u + t * 16u));
            sim_scene_set_input(b, i + 1, &in);
        }
        sim_scene_step(b);
        cr_assert_eq(sim_scene_hash(b), hashes[t], "tick %u differs after the rollback", t);
    }
    cr_log_info("%u respawns in %u ticks, re-simulated from tick %u bit-identically\n", respawns, TICKS, SAVE_AT);
    free(saved);
    sim_scene_destroy(a);
    sim_scene_destroy(b);
    unload(&m);
}
