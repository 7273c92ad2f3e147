// keel: keel-arena's bots fight (cl_bot.h's CL_BOT_ARENA). A part of
// test_arena, built when the client library is (tests/CMakeLists.txt). MIT
// licence, see LICENSE.
//
// In process: one scene with the game, every character driven by its own
// arena bot reading that scene, as keel-server's virtual bots read their
// predictions. Within a minute of game time 12 bots must have kills by at
// least two different killers, on the built-in level, on keel's
// levels/arena.map and on zdm2 (skipped with a warning when absent). Each
// run prints its score table.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/sim_game.h>
#include <keel/sim_level.h>
#include <keel/sim_scene.h>
#include <keel/sim_spawn.h>
#include <keel/sim_world.h>

#include "arena.h"
#include "test_support.h"

#define BOTS 12u

typedef struct fight_result {
    uint32_t kills, killers, rails, rockets, hits;
    uint64_t hash;
} fight_result;

// The bots' commands for the scene's next tick, then the tick. Counts the
// presses of each fire button (a press while the weapon reloads or after the
// match's end fires nothing).
static void bots_step(sim_scene *sc, cl_bot *bots, const sim_level *level, const sim_game *g, fight_result *r)
{
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(sc, &n);
    uint32_t tick = sim_scene_tick(sc);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = cs[i].id;
        sim_input in = cl_bot_command(&bots[id - 1], sc, id, level, tick);
        arena_command c;
        cr_assert(cl_bot_game_command(&bots[id - 1], g, tick, &c, sizeof c));
        r->rails += c.fire_rail;
        r->rockets += c.fire_rocket;
        sim_game_error e;
        cr_assert(sim_scene_set_command(sc, id, &in, &c, &e), "%s (%s)", e.reason, e.field);
    }
    sim_scene_step(sc);
}

// BOTS arena bots on `w` (the entities of `map` handed to the game when
// given) for `ticks`, starting at keel's spawn spots; the score table is
// printed.
static fight_result fight(const char *name, const sim_world *w, const sim_level *level, const sim_map *map,
                          uint32_t ticks)
{
    sim_move_settings S = sim_move_default_settings();
    sim_game *g = sim_game_create(arena_game(), NULL);
    cr_assert_not_null(g);
    sim_scene *sc = sim_scene_create_game(w, &S, BOTS, g);
    cr_assert_not_null(sc);
    if (map)
        cr_assert_eq(sim_map_add_to_scene(map, sc, S.tick_rate, map->unit_m, SIM_MAP_FIRST_PLATFORM_ID, NULL, NULL), 0);
    sim_spawn_settings ss = sim_spawn_default_settings(&S);
    sim_vec3 spots[BOTS];
    cr_assert_eq(sim_spawn_spots(w, &ss, spots, BOTS), BOTS, "%s: spawn spots", name);
    cl_bot bots[BOTS];
    for (uint32_t i = 0; i < BOTS; i++) {
        sim_char_state c = sim_char_spawn(i + 1, spots[i], (sim_angle)(i * 0x1555u));
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
        cl_bot_init(&bots[i], CL_BOT_ARENA, 1000u + i);
    }
    fight_result r = {0};
    for (uint32_t t = 0; t < ticks; t++)
        bots_step(sc, bots, level, g, &r);

    const arena_state *st = sim_scene_game_state(sc);
    r.kills = st->kills;
    char table[2048];
    char ended[64] = "";
    if (st->ended)
        snprintf(ended, sizeof ended, " (the match ended at the frag limit at %.1f s)", st->end_tick / 64.0);
    int at =
        snprintf(table, sizeof table, "%s, %u bots, %u ticks (%.0f s): %u kills%s\n  id frags deaths suicides hits\n",
                 name, BOTS, ticks, ticks / 64.0, r.kills, ended);
    for (uint32_t id = 1; id <= BOTS; id++) {
        const arena_player *p = sim_scene_game_char(sc, id);
        r.killers += p->frags + p->suicides > 0; // kills of others (a suicide took one frag)
        r.hits += p->hits;
        at += snprintf(table + at, sizeof table - (size_t)at, "  %2u %5d %6u %8u %4u\n", id, p->frags, p->deaths,
                       p->suicides, p->hits);
    }
    r.hash = sim_scene_hash(sc);
    cr_log_info("%s  fire_rail pressed %u times, fire_rocket %u, hash %016llx", table, r.rails, r.rockets,
                (unsigned long long)r.hash);
    cr_expect_eq(sim_scene_game_faults(sc), 0u, "%s", name);
    sim_scene_destroy(sc);
    sim_game_destroy(g);
    return r;
}

static void expect_frags_on_both_sides(const char *name, fight_result r)
{
    cr_expect_gt(r.rails, 0u, "%s: the rail was fired", name);
    cr_expect_gt(r.rockets, 0u, "%s: rockets were fired", name);
    cr_expect_geq(r.killers, 2u, "%s: kills by %u bots, not by two at least", name, r.killers);
}

// A minute of game time (the sanitizer tree: 40 s).
#define FIGHT_TICKS KEEL_TEST_SIZE(3840u, 2560u)

Test(arena_bots, twelve_bots_frag_each_other_within_a_minute_on_the_builtin_level)
{
    sim_level l;
    sim_world *w = keel_test_builtin_world(&l);
    fight_result a = fight("built-in level", w, &l, NULL, FIGHT_TICKS);
    expect_frags_on_both_sides("built-in level", a);
    // The same session again: the same bits (the bots are integer only).
    fight_result b = fight("built-in level again", w, &l, NULL, 640);
    fight_result c = fight("built-in level again", w, &l, NULL, 640);
    cr_expect_eq(b.hash, c.hash);
    cr_expect_eq(b.rails, c.rails);
    keel_test_builtin_free(&l, w);
}

// A minute of fighting on a level file: a .map with its entities, or an
// .obj at unit_scale 0.12 (NULL path: absent, skipped with a warning).
static void fight_on_file(const char *name, const char *path)
{
    if (!path) {
        keel_test_warn("%s is absent: its fight is skipped", name);
        return;
    }
    sim_level l;
    sim_map m;
    sim_error e;
    bool is_map = strstr(path, ".map") != NULL;
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    int loaded = is_map ? sim_level_load_map(path, NULL, &l, &m, &e) : sim_level_load_obj(path, &o, &l, &e);
    cr_assert_eq(loaded, 0, "%s", e.message);
    sim_world *w = sim_world_create(&l, NULL, &e);
    cr_assert_not_null(w, "%s", e.message);
    expect_frags_on_both_sides(name, fight(name, w, &l, is_map ? &m : NULL, FIGHT_TICKS));
    sim_world_destroy(w);
    if (is_map)
        sim_map_free(&m);
    sim_level_free(&l);
}

Test(arena_bots, twelve_bots_frag_each_other_within_a_minute_on_arena_map)
{
    fight_on_file("levels/arena.map", KEEL_SOURCE_DIR "/levels/arena.map");
}

Test(arena_bots, twelve_bots_frag_each_other_within_a_minute_on_zdm2)
{
    fight_on_file("sauerbraten_zdm2.obj", keel_test_level_path("sauerbraten_zdm2.obj"));
}
