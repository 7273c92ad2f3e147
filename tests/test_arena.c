// keel tests: keel-arena (games/arena), a deathmatch on keel's game API.
// MIT licence, see LICENSE.
//
// - the level's entities reach the game: levels/arena.map's spawn points,
//   jump pad, teleporter and items become its tables (sim_map_add_to_scene),
//   and a level rule that leaves a field out of range is refused by name;
// - the rail: damage, armour, spawn protection, the fire interval, death
//   (out of collisions), the frag, the kill feed, the respawn;
// - the rocket: against a wall (splash falling off with distance), a direct
//   hit on a character, a rocket jump (self-damage and the push up), a
//   suicide;
// - pickups that respawn, the jump pad and the teleporter of arena.map;
// - the match's end: by the clock and by the frag limit, with its score
//   table, and no damage after it;
// - the sync test: rollbacks, a save and restore into a fresh scene every
//   tick, and the per-character rule run backwards give the same hash every
//   tick while characters shoot, die and respawn.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_game.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "arena.h"
#include "game_sync.h"
#include "test_support.h"

#define N 8
#define ROOM SIM_FX_INT(10)

static sim_move_settings S;
static sim_angle yaw[N + 1], pitch[N + 1];
static arena_command press[N + 1];

static void setup(void) { S = sim_move_default_settings(); }

TestSuite(arena, .init = setup, .timeout = 600);

// A game with the default settings changed by the test; `d` keeps them.
static sim_game *game_with(arena_def *d, const arena_settings *st)
{
    arena_def_init(d, st);
    sim_game_error e;
    sim_game *g = sim_game_create(&d->def, &e);
    cr_assert_not_null(g, "%s (%s)", e.reason, e.field);
    return g;
}

// Characters 1..count at the feet points given, looking along their yaws.
static sim_scene *scene_of(const sim_world *w, const sim_game *g, const sim_vec3 *feet, const sim_angle *yaws,
                           uint32_t count)
{
    sim_scene *sc = sim_scene_create_game(w, &S, N, g);
    cr_assert_not_null(sc);
    memset(press, 0, sizeof press);
    for (uint32_t i = 0; i < count; i++) {
        sim_char_state c = sim_char_spawn(i + 1, feet[i], yaws[i]);
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
        yaw[i + 1] = yaws[i];
        pitch[i + 1] = 0;
    }
    return sc;
}

// One tick: every character keeps its view and presses what press[] says
// (held until the test changes it).
static void step(sim_scene *sc)
{
    uint32_t count;
    const sim_char_state *cs = sim_scene_characters(sc, &count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = cs[i].id;
        sim_input in = {0};
        in.tick = sim_scene_tick(sc);
        in.yaw = yaw[id];
        in.pitch = pitch[id];
        cr_assert(sim_scene_set_command(sc, id, &in, &press[id], NULL));
    }
    sim_scene_step(sc);
}

static void steps(sim_scene *sc, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        step(sc);
}

static const arena_player *player(const sim_scene *sc, uint32_t id) { return sim_scene_game_char(sc, id); }
static const arena_state *state(const sim_scene *sc) { return sim_scene_game_state(sc); }

static void set_player(sim_scene *sc, uint32_t id, int16_t health, int16_t armour)
{
    arena_player p = *player(sc, id);
    p.health = health;
    p.armour = armour;
    sim_game_error e;
    cr_assert(sim_scene_set_game_char(sc, id, &p, &e), "%s (%s)", e.reason, e.field);
}

static arena_settings unprotected(void)
{
    arena_settings st = arena_default_settings();
    st.protect_ticks = 0;
    return st;
}

// A closed 20 m square room, 6 m high, floor at y 0.
static sim_world *room(sim_level *level)
{
    return keel_test_room_world(level, -ROOM, -ROOM, ROOM, ROOM, SIM_FX_INT(6), NULL, NULL);
}

// The room, the game and the scene of a test (one at a time).
static sim_level room_level;
static sim_world *room_world;
static arena_def room_def;
static sim_game *room_game;

// The room with the game of settings `st` (NULL: the defaults) and
// characters 1..count at `feet` looking along `yaws`.
static sim_scene *in_room(const arena_settings *st, const sim_vec3 *feet, const sim_angle *yaws, uint32_t count)
{
    room_world = room(&room_level);
    room_game = game_with(&room_def, st);
    return scene_of(room_world, room_game, feet, yaws, count);
}

static void leave_room(sim_scene *sc)
{
    cr_expect_eq(sim_scene_game_faults(sc), 0u);
    sim_scene_destroy(sc);
    sim_game_destroy(room_game);
    keel_test_builtin_free(&room_level, room_world);
}

// 1 and 2 face each other 6 m apart (1 looks along -Z).
static const sim_vec3 facing[] = {{0, 0, SIM_FX_INT(3)}, {0, 0, -SIM_FX_INT(3)}};
static const sim_angle facing_yaws[] = {0, 0x8000};

// ---- the definition ----------------------------------------------------------------

Test(arena, settings_are_clamped_and_the_static_definition_is_the_default_one)
{
    arena_def d;
    arena_def_init(&d, NULL);
    const sim_game_def *st = arena_game();
    cr_assert_eq(st->settings_size, d.def.settings_size);
    cr_expect_eq(memcmp(st->settings, d.def.settings, st->settings_size), 0, "the same bytes, built two ways");
    sim_game *a = sim_game_create(st, NULL), *b = sim_game_create(&d.def, NULL);
    cr_assert(a && b);
    cr_expect_eq(sim_game_digest(a), sim_game_digest(b));
    cr_expect_eq(sim_game_command_bits(a), 41u, "two fire buttons, the view lag (6 bits), judged, the rail's hit (32)");
    arena_settings odd = arena_default_settings();
    odd.rocket_radius = 0;       // would divide by zero
    odd.respawn_ticks = 1000000; // beyond a uint16_t
    odd.rail_damage = 80 + 1;
    arena_def o;
    arena_def_init(&o, &odd);
    cr_expect_eq(o.settings.rocket_radius, SIM_FX_MM(10));
    cr_expect_eq(o.settings.respawn_ticks, 65535);
    sim_game *c = sim_game_create(&o.def, NULL);
    cr_assert_not_null(c);
    cr_expect_neq(sim_game_digest(c), sim_game_digest(a), "other figures, another identity");
    sim_game_destroy(a);
    sim_game_destroy(b);
    sim_game_destroy(c);
}

// ---- the level's entities ------------------------------------------------------------

static sim_world *arena_map(sim_level *l, sim_map *m)
{
    sim_error e;
    cr_assert_eq(sim_level_load_map(KEEL_SOURCE_DIR "/levels/arena.map", NULL, l, m, &e), 0, "%s", e.message);
    sim_world *w = sim_world_create(l, NULL, &e);
    cr_assert_not_null(w, "%s", e.message);
    return w;
}

Test(arena, the_levels_spawn_points_jump_pad_teleporter_and_items_reach_the_game)
{
    sim_level l;
    sim_map m;
    sim_world *w = arena_map(&l, &m);
    sim_game_error ge;
    sim_game *g = sim_game_create(arena_game(), &ge);
    cr_assert_not_null(g, "%s", ge.reason);
    sim_scene *sc = sim_scene_create_game(w, &S, N, g);
    cr_assert_eq(sim_map_add_to_scene(&m, sc, S.tick_rate, m.unit_m, SIM_MAP_FIRST_PLATFORM_ID, NULL, NULL), 0);
    const arena_state *s = state(sc);
    cr_expect_eq(s->spawn_count, 4, "the four info_player_deathmatch");
    sim_map_spawn sp[4];
    cr_assert_eq(sim_map_spawns(&m, &l, sp, 4), 4);
    for (uint32_t k = 0; k < 4; k++) {
        sim_fx above = s->spawn[k].feet.y - sp[k].feet.y; // 1 cm, less unit_m's rounding
        cr_expect(above > SIM_FX_MM(9) && above <= SIM_FX_MM(11), "spawn %u: %d", k, above);
        cr_expect_eq(s->spawn[k].feet.x, sp[k].feet.x);
        cr_expect_eq(s->spawn[k].yaw, sp[k].yaw);
    }
    cr_expect_eq(s->pad_count, 1);
    cr_expect_eq(s->pad[0].velocity.y, 600 * m.unit_m, "speed 600 units/s up");
    cr_expect_eq(s->pad[0].velocity.x, 0);
    cr_expect_eq(s->teleport_count, 1);
    cr_expect_eq(s->item_count, 2, "item_health and item_armor1 (the weapon and the shells are not items here)");
    cr_expect_eq(s->item[0].kind, ARENA_ITEM_HEALTH);
    cr_expect_eq(s->item[1].kind, ARENA_ITEM_ARMOUR);

    // The jump pad: standing on it, up more than 3 m within a second.
    sim_vec3 pad = sim_v3((s->pad[0].box.min.x + s->pad[0].box.max.x) / 2, s->pad[0].box.min.y,
                          (s->pad[0].box.min.z + s->pad[0].box.max.z) / 2);
    sim_char_state c = sim_char_spawn(1, pad, 0);
    cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    sim_fx top = pad.y;
    for (uint32_t t = 0; t < 64; t++) {
        step(sc);
        top = sim_fx_max(top, sim_scene_find(sc, 1)->position.y);
    }
    cr_expect_gt(top, pad.y + SIM_FX_INT(3), "the pad threw it %.2f m up", keel_fx_to_d(top - pad.y));

    // The teleporter: in its box, at its destination the next tick.
    sim_vec3 in_box = sim_v3((s->teleport[0].box.min.x + s->teleport[0].box.max.x) / 2, s->teleport[0].box.min.y,
                             (s->teleport[0].box.min.z + s->teleport[0].box.max.z) / 2);
    c = sim_char_spawn(2, in_box, 0);
    cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    steps(sc, 2);
    sim_vec3 d = sim_v3_sub(sim_scene_find(sc, 2)->position, s->teleport[0].feet);
    cr_expect_lt(sim_v3_length(d), SIM_FX_INT(1), "%.2f m from the destination", keel_fx_to_d(sim_v3_length(d)));
    cr_expect_eq(sim_scene_game_faults(sc), 0u);
    sim_scene_destroy(sc);
    sim_game_destroy(g);
    sim_world_destroy(w);
    sim_map_free(&m);
    sim_level_free(&l);
}

static void bad_level(const sim_game_level *level, void *state_, void *user)
{
    (void)user;
    (void)level;
    ((arena_state *)state_)->item[3].kind = 3; // out of its range 0..2
}

Test(arena, a_level_rule_that_leaves_a_field_out_of_range_is_refused_by_name)
{
    sim_level l;
    sim_world *w = room(&l);
    arena_def d;
    arena_def_init(&d, NULL);
    d.def.level = bad_level;
    sim_game *g = sim_game_create(&d.def, NULL);
    cr_assert_not_null(g);
    sim_scene *sc = sim_scene_create_game(w, &S, N, g);
    uint64_t before = sim_scene_hash(sc);
    sim_game_level level = {NULL, 0, SIM_FX_ONE, NULL};
    sim_game_error e;
    cr_expect_not(sim_scene_game_level(sc, &level, &e));
    cr_expect_str_eq(e.field, "item.kind");
    cr_expect_eq(e.element, 3);
    cr_expect_eq(sim_scene_hash(sc), before, "the state is unchanged");
    sim_scene *plain = sim_scene_create(w, &S, N); // no game: nothing to do
    cr_expect(sim_scene_game_level(plain, &level, NULL));
    sim_scene_destroy(plain);
    sim_scene_destroy(sc);
    sim_game_destroy(g);
    keel_test_builtin_free(&l, w);
}

// ---- the rail ----------------------------------------------------------------------

Test(arena, the_rail_damages_through_armour_kills_scores_and_the_victim_respawns)
{
    arena_settings st = unprotected();
    sim_scene *sc = in_room(&st, facing, facing_yaws, 2);
    step(sc);
    set_player(sc, 2, 100, 50);
    press[1].fire_rail = 1;
    step(sc);
    // 80 damage, armour takes 66% of it as far as it goes (50): health 70.
    cr_expect_eq(player(sc, 2)->armour, 0);
    cr_expect_eq(player(sc, 2)->health, 70);
    cr_expect_eq(player(sc, 1)->hits, 1);
    cr_expect_eq(player(sc, 2)->last_attacker, 1);
    cr_expect_eq(player(sc, 1)->rail_ticks, st.rail_interval);
    // Held: the next shot comes after the interval, not before.
    steps(sc, (uint32_t)st.rail_interval - 1);
    cr_expect_eq(player(sc, 2)->health, 70);
    step(sc);
    cr_expect_eq(player(sc, 2)->health, 0);
    cr_expect_eq(player(sc, 2)->dead, 1);
    cr_expect(sim_scene_game_out(sc, 2), "a dead character is out of collisions");
    cr_expect_eq(player(sc, 1)->frags, 1);
    cr_expect_eq(player(sc, 2)->deaths, 1);
    const arena_kill *k = &state(sc)->feed[0];
    cr_expect(state(sc)->kills == 1 && k->killer == 1 && k->victim == 2 && k->weapon == ARENA_WEAPON_RAIL);
    // Shots pass a dead character (the wall behind is hit: no damage anywhere).
    steps(sc, (uint32_t)st.rail_interval);
    cr_expect_eq(player(sc, 1)->hits, 2);
    press[1].fire_rail = 0;
    steps(sc, (uint32_t)(st.respawn_ticks - st.rail_interval - 1));
    cr_expect_eq(player(sc, 2)->dead, 1);
    step(sc);
    cr_expect_eq(player(sc, 2)->dead, 0, "back after the respawn delay");
    cr_expect_eq(player(sc, 2)->health, st.health_start);
    cr_expect_not(sim_scene_game_out(sc, 2));
    sim_vec3 at = sim_scene_find(sc, 2)->position;
    cr_expect(at.x == facing[1].x && at.z == facing[1].z, "at its home: the room has no spawn points");
    cr_expect_eq(sim_scene_game_faults(sc), 0u);
    leave_room(sc);
}

Test(arena, spawn_protection_takes_no_damage_until_it_runs_out)
{
    sim_scene *sc = in_room(NULL, facing, facing_yaws, 2);
    arena_settings st = arena_default_settings();
    press[1].fire_rail = 1;
    step(sc);
    cr_expect_eq(player(sc, 2)->health, 100, "protected: %d", player(sc, 2)->health);
    steps(sc, (uint32_t)st.rail_interval);
    cr_expect_eq(player(sc, 2)->health, 100 - st.rail_damage, "the protection ran out after %d ticks",
                 st.protect_ticks);
    leave_room(sc);
}

// ---- the rocket ----------------------------------------------------------------------

static uint32_t live_rockets(const sim_scene *sc)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < ARENA_ROCKETS; k++)
        n += state(sc)->rocket[k].live;
    return n;
}

Test(arena, a_rocket_flies_explodes_at_a_wall_and_its_splash_falls_off_with_distance)
{
    arena_settings st = unprotected();
    // 1 faces the wall at z -10 from 4 m; 2 stands 1 m from the wall, 2 m
    // aside; 3 is 7 m aside, beyond the splash.
    const sim_vec3 feet[] = {
        {0, 0, -SIM_FX_INT(6)}, {SIM_FX_INT(2), 0, -SIM_FX_INT(9)}, {SIM_FX_INT(7), 0, -SIM_FX_INT(9)}};
    const sim_angle yaws[] = {0, 0, 0};
    sim_scene *sc = in_room(&st, feet, yaws, 3);
    step(sc);
    press[1].fire_rocket = 1;
    step(sc);
    press[1].fire_rocket = 0;
    cr_expect_eq(live_rockets(sc), 1);
    const arena_rocket *r = &state(sc)->rocket[0];
    cr_expect_eq(r->owner, 1);
    cr_expect_eq(r->velocity.z, -st.rocket_speed);
    uint32_t flew = 1;
    while (live_rockets(sc) && flew < 64) {
        step(sc);
        flew++;
    }
    cr_expect_eq(live_rockets(sc), 0, "exploded");
    cr_expect(flew >= 12 && flew <= 14, "4 m at 20 m/s: %u ticks", flew);
    int h2 = player(sc, 2)->health;
    cr_log_info("rocket at the wall: %u ticks of flight, splash leaves 2 with %d health", flew, h2);
    cr_expect(h2 > 60 && h2 < 100, "splash within the radius: health %d", h2);
    cr_expect_eq(player(sc, 3)->health, 100, "beyond the radius");
    cr_expect_eq(player(sc, 1)->health, 100, "the shooter 4 m away");
    cr_expect_eq(player(sc, 1)->hits, 1);
    leave_room(sc);
}

Test(arena, a_direct_rocket_hit_kills_an_unarmoured_character)
{
    arena_settings st = unprotected();
    sim_scene *sc = in_room(&st, facing, facing_yaws, 2);
    step(sc);
    press[1].fire_rocket = 1;
    step(sc);
    press[1].fire_rocket = 0;
    steps(sc, 24);
    cr_expect_eq(live_rockets(sc), 0);
    cr_expect_eq(player(sc, 2)->dead, 1, "health %d", player(sc, 2)->health);
    cr_expect_eq(player(sc, 1)->frags, 1);
    cr_expect_eq(state(sc)->feed[0].weapon, ARENA_WEAPON_ROCKET);
    cr_expect_eq(player(sc, 1)->health, 100, "6 m away: no splash on the shooter");
    leave_room(sc);
}

Test(arena, a_rocket_at_the_feet_is_a_rocket_jump_and_can_be_a_suicide)
{
    arena_settings st = unprotected();
    const sim_vec3 feet[] = {{0, 0, 0}, {SIM_FX_INT(6), 0, 0}};
    const sim_angle yaws[] = {0, 0};
    sim_scene *sc = in_room(&st, feet, yaws, 2);
    steps(sc, 4);
    pitch[1] = (sim_angle)(0x10000 - SIM_ANGLE_QUARTER); // straight down
    press[1].fire_rocket = 1;
    step(sc);
    press[1].fire_rocket = 0;
    sim_fx top = 0;
    for (uint32_t t = 0; t < 64; t++) {
        step(sc);
        top = sim_fx_max(top, sim_scene_find(sc, 1)->position.y);
    }
    int h = player(sc, 1)->health;
    cr_log_info("rocket jump: health %d, %.2f m up", h, keel_fx_to_d(top));
    cr_expect(h > 50 && h < 80, "half of its own splash: health %d", h);
    cr_expect_gt(top, SIM_FX_INT(1), "the rocket jump reached %.2f m", keel_fx_to_d(top));
    cr_expect_eq(player(sc, 1)->frags, 0);
    cr_expect_eq(player(sc, 1)->hits, 0, "hurting oneself is no hit");

    // The same with 20 health: a suicide.
    steps(sc, (uint32_t)st.rocket_interval);
    set_player(sc, 1, 20, 0);
    press[1].fire_rocket = 1;
    step(sc);
    press[1].fire_rocket = 0;
    steps(sc, 16);
    cr_expect_eq(player(sc, 1)->dead, 1);
    cr_expect_eq(player(sc, 1)->frags, -1);
    cr_expect_eq(player(sc, 1)->suicides, 1);
    cr_expect_eq(state(sc)->feed[0].killer, 1);
    cr_expect_eq(state(sc)->feed[0].victim, 1);
    cr_expect_eq(sim_scene_game_faults(sc), 0u);
    leave_room(sc);
}

// ---- pickups and the match's end ------------------------------------------------------

Test(arena, a_health_pickup_heals_only_the_hurt_and_respawns)
{
    arena_settings st = unprotected();
    st.pickup_respawn = 10;
    const sim_vec3 feet[] = {{0, 0, 0}, {SIM_FX_INT(4), 0, 0}};
    const sim_angle yaws[] = {0, 0};
    sim_scene *sc = in_room(&st, feet, yaws, 2);
    step(sc);
    arena_state s = *state(sc);
    s.item_count = 2;
    s.item[0] = (arena_item){ARENA_ITEM_HEALTH, 0, {0, SIM_FX_MM(500), 0}};
    s.item[1] = (arena_item){ARENA_ITEM_ARMOUR, 0, {SIM_FX_INT(4), SIM_FX_MM(500), 0}};
    cr_assert(sim_scene_set_game_state(sc, &s, NULL));
    step(sc);
    cr_expect_eq(state(sc)->item[0].respawn, 0, "full health: not taken");
    cr_expect_eq(player(sc, 2)->armour, st.armour_pickup, "armour taken");
    cr_expect_eq(state(sc)->item[1].respawn, st.pickup_respawn);
    set_player(sc, 1, 60, 0);
    step(sc);
    cr_expect_eq(player(sc, 1)->health, 85);
    cr_expect_eq(state(sc)->item[0].respawn, st.pickup_respawn);
    steps(sc, (uint32_t)st.pickup_respawn);
    cr_expect_eq(player(sc, 1)->health, 85, "not back yet");
    step(sc);
    cr_expect_eq(player(sc, 1)->health, 100, "back and taken again, up to the maximum");
    leave_room(sc);
}

Test(arena, the_match_ends_by_the_clock_or_the_frag_limit_with_a_score_table)
{
    arena_settings st = unprotected();
    st.match_ticks = 40;
    const sim_vec3 feet[] = {{0, 0, SIM_FX_INT(3)}, {0, 0, -SIM_FX_INT(3)}, {SIM_FX_INT(5), 0, SIM_FX_INT(3)}};
    const sim_angle yaws[] = {0, 0x8000, 0};
    sim_scene *sc = in_room(&st, feet, yaws, 3);
    steps(sc, 39);
    cr_expect_eq(state(sc)->ended, 0);
    step(sc);
    cr_expect_eq(state(sc)->ended, 1);
    cr_expect_eq(state(sc)->end_tick, 40);
    cr_expect(state(sc)->score[0].id == 1 && state(sc)->score[1].id == 2 && state(sc)->score[2].id == 3 &&
              state(sc)->score[3].id == 0);
    steps(sc, 5);
    cr_expect_eq(state(sc)->clock, 40, "the clock stops");
    leave_room(sc);

    st.match_ticks = 0;
    st.frag_limit = 1;
    sc = in_room(&st, feet, yaws, 3);
    step(sc);
    set_player(sc, 2, 10, 0);
    press[1].fire_rail = 1;
    step(sc);
    const arena_state *s = state(sc);
    cr_expect_eq(s->ended, 1, "the frag limit");
    cr_expect(s->score[0].id == 1 && s->score[0].frags == 1, "the winner first");
    cr_expect(s->score[1].id == 3 && s->score[2].id == 2 && s->score[2].deaths == 1, "then by deaths");
    // After the end nobody is hurt.
    yaw[1] = (sim_angle)SIM_ANGLE_QUARTER * 3; // toward 3 (+X)
    steps(sc, (uint32_t)st.rail_interval + 2);
    cr_expect_eq(player(sc, 3)->health, 100);
    leave_room(sc);
}

// ---- the sync test ----------------------------------------------------------------------

#define SYNC_N 16

// Commands of character `id` at `tick`: a function of the two only.
static void commands(sim_scene *sc, uint32_t tick, void *user)
{
    (void)user;
    uint32_t count;
    const sim_char_state *cs = sim_scene_characters(sc, &count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = cs[i].id, r = keel_test_mix(tick * 977u + id);
        sim_input in = keel_test_sync_input(tick, id, r);
        in.yaw = (sim_angle)(in.yaw + 0x8000);                                        // the rows face each other
        in.pitch = (sim_angle)((r >> 24 & 7) == 0 ? 0x10000 - SIM_ANGLE_QUARTER : 0); // now and then at the feet
        in.buttons = (uint8_t)((r >> 20 & 31) == 0 ? SIM_BUTTON_JUMP : 0);
        arena_command c = {(uint8_t)((r >> 4 & 7) == 0), (uint8_t)((r >> 7 & 15) == 0), 0, 0, 0};
        cr_assert(sim_scene_set_command(sc, id, &in, &c, NULL));
    }
}

// The built-in level with two rows of eight facing each other 2.5 m apart,
// and a level given through sim_scene_game_level: two spawn points, a jump
// pad under the rows' west end and a health pickup between them.
static sim_level sync_level;
static sim_world *sync_world;

static sim_scene *sync_scene(void *user)
{
    const sim_game *g = user;
    sim_scene *sc = sim_scene_create_game(sync_world, &S, SYNC_N, g);
    cr_assert_not_null(sc);
    const sim_marker *m = sim_level_find_marker(&sync_level, "platform_area");
    cr_assert_not_null(m);
    sim_vec3 o = m->position;
    sim_game_entity e[4];
    memset(e, 0, sizeof e);
    sim_fx u = SIM_FX_ONE / 40; // 2.5 cm units
    e[0] = (sim_game_entity){.classname = "info_player_deathmatch",
                             .role = SIM_MAP_ROLE_SPAWN,
                             .has_origin = true,
                             .origin = sim_v3_add(o, sim_v3(SIM_FX_INT(-4), 24 * u, SIM_FX_INT(-3)))};
    e[1] = e[0];
    e[1].origin = sim_v3_add(o, sim_v3(SIM_FX_INT(4), 24 * u, SIM_FX_INT(3)));
    e[1].angle = SIM_FX_INT(180);
    e[2] = (sim_game_entity){.classname = "trigger_push", .role = SIM_MAP_ROLE_PUSH, .angle = SIM_FX_INT(-1)};
    e[2].bounds = (sim_aabb){sim_v3_add(o, sim_v3(SIM_FX_INT(-4), 0, SIM_FX_INT(-2))),
                             sim_v3_add(o, sim_v3(SIM_FX_INT(-2), SIM_FX_MM(300), SIM_FX_INT(2)))};
    e[3] = (sim_game_entity){.classname = "item_health",
                             .role = SIM_MAP_ROLE_ITEM,
                             .has_origin = true,
                             .origin = sim_v3_add(o, sim_v3(0, SIM_FX_MM(500), 0))};
    sim_game_level level = {e, 4, u, NULL};
    sim_game_error err;
    cr_assert(sim_scene_game_level(sc, &level, &err), "%s (%s)", err.reason, err.field);
    cr_assert_eq(state(sc)->spawn_count, 2);
    cr_assert_eq(state(sc)->pad_count, 1);
    cr_assert_eq(state(sc)->item_count, 1);
    for (uint32_t i = 0; i < SYNC_N; i++) {
        sim_vec3 p = sim_v3_add(
            o, sim_v3(SIM_FX_MM(-3000 + 850 * (int32_t)(i % 8)), 0, i < 8 ? -SIM_FX_MM(1250) : SIM_FX_MM(1250)));
        sim_char_state c = sim_char_spawn(i + 1, p, (sim_angle)(i < 8 ? 0x8000 : 0));
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    }
    return sc;
}

static sim_scene *sync_fresh(void *user) { return sim_scene_create_game(sync_world, &S, SYNC_N, user); }

Test(arena, rollback_and_restore_give_the_same_hash_every_tick_while_they_fight)
{
    const uint32_t ticks = KEEL_TEST_SIZE(640, 200);
    sync_world = keel_test_builtin_world(&sync_level);
    sim_game *g = sim_game_create(arena_game(), NULL);
    cr_assert_not_null(g);
    uint64_t *ref = calloc(ticks, sizeof *ref);
    sim_scene *a = sync_scene(g);
    uint32_t outs = 0, rockets = 0;
    for (uint32_t t = 0; t < ticks; t++) {
        commands(a, t, NULL);
        sim_scene_step(a);
        ref[t] = sim_scene_hash(a);
        rockets += live_rockets(a);
        for (uint32_t id = 1; id <= SYNC_N; id++)
            outs += sim_scene_game_out(a, id);
    }
    uint32_t hits = 0, deaths = 0, suicides = 0;
    for (uint32_t id = 1; id <= SYNC_N; id++) {
        hits += player(a, id)->hits;
        deaths += player(a, id)->deaths;
        suicides += player(a, id)->suicides;
    }
    cr_log_info("arena over %u ticks: %u hits, %u kills, %u deaths (%u suicides), %u rocket ticks, %u out ticks, "
                "hash %016llx",
                ticks, hits, state(a)->kills, deaths, suicides, rockets, outs, (unsigned long long)ref[ticks - 1]);
    cr_expect_gt(hits, 0u);
    cr_expect_gt(deaths, 0u);
    cr_expect_gt(rockets, 0u);
    cr_expect_gt(outs, 0u);
    cr_expect_eq(sim_scene_game_faults(a), 0u);

    keel_game_sync sync = {sync_scene, sync_fresh, commands, g, ticks};
    keel_test_game_sync(&sync, ref);
    free(ref);
    sim_scene_destroy(a);
    sim_game_destroy(g);
    keel_test_builtin_free(&sync_level, sync_world);
}
