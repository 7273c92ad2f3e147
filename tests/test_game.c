// keel tests: a game inside the scene's tick (keel/sim_game.h), with the
// example game "tag" (tests/games/tag). MIT licence, see LICENSE.
//
// - a definition the core cannot honour is refused with a reason;
// - the command payload packs to its bits and back, and a field out of its
//   range is refused by name (also game state from outside, and a restore);
// - the sync test with a game: rolling back to saved states and
//   re-simulating, saving and restoring into a fresh scene every tick, and
//   running the per-character parts in another order on an executor all
//   give the same hash every tick, while the game shoots, scores, dashes,
//   takes characters out of collisions and fills its entity table;
// - no game, no change: a scene created with a NULL game, and a game with
//   no rules, move exactly as a scene without one.
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_game.h>
#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "game_sync.h"
#include "tag.h"
#include "test_support.h"

#define N 16
#define TICKS 400

static sim_level level;
static sim_world *world;
static sim_move_settings S;
static sim_game *tag;

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    S = sim_move_default_settings();
    sim_game_def d = tag_game_def();
    sim_game_error e;
    tag = sim_game_create(&d, &e);
    cr_assert_not_null(tag, "%s (%s)", e.reason, e.field);
}

static void teardown(void)
{
    sim_game_destroy(tag);
    keel_test_builtin_free(&level, world);
}

TestSuite(game, .init = setup, .fini = teardown, .timeout = 600);

// ---- definitions -------------------------------------------------------------

typedef struct two {
    int32_t a;
    int32_t b;
} two;

static const char *refusal(const sim_game_field *fields, uint32_t count, uint32_t size, const char **field)
{
    sim_game_def d = sim_game_default_def();
    d.name = "bad";
    d.state = (sim_game_schema){size, fields, count};
    sim_game_error e;
    sim_game *g = sim_game_create(&d, &e);
    cr_assert_null(g);
    *field = e.field;
    return e.reason;
}

Test(game, definitions_the_core_cannot_honour_are_refused_with_a_reason)
{
    const char *field;
    sim_game_field overlap[] = {{"a", SIM_GAME_INT, 0, 4, 32, 0, 0, 0, 0}, {"b", SIM_GAME_INT, 2, 2, 16, 0, 0, 0, 0}};
    cr_expect_str_eq(refusal(overlap, 2, sizeof(two), &field), "field overlaps another (or itself)");
    cr_expect_str_eq(field, "b");
    sim_game_field narrow[] = {{"hp", SIM_GAME_INT, 0, 4, 7, 0, 200, 0, 0}};
    cr_expect_str_eq(refusal(narrow, 1, sizeof(two), &field), "range does not fit the field's bits");
    cr_expect_str_eq(field, "hp");
    sim_game_field past[] = {{"t", SIM_GAME_UINT, 0, 4, 32, 0, 0, 3, 4}};
    cr_expect_str_eq(refusal(past, 1, sizeof(two), &field), "field reaches past the end of its struct");
    sim_game_field ok[] = {{"a", SIM_GAME_INT, 0, 4, 32, 0, 0, 0, 0}};
    cr_expect_str_eq(refusal(ok, 1, SIM_GAME_STATE_MAX_BYTES + 1, &field),
                     "struct larger than the core holds for this part");
    sim_game_field fx[] = {{"v", SIM_GAME_FX, 0, 4, 8, -SIM_FX_ONE, SIM_FX_ONE, 0, 0}};
    cr_expect_str_eq(refusal(fx, 1, sizeof(two), &field), "range does not fit the field's bits");

    sim_game_def d = tag_game_def();
    d.abi_version = SIM_GAME_ABI_VERSION + 1;
    sim_game_error e;
    cr_expect_null(sim_game_create(&d, &e));
    cr_expect_str_eq(e.reason, "game built against another keel game ABI version");
    d = tag_game_def();
    tag_player bad = {101, 0, 0, 0, 0, {0, 0, 0}};
    d.character_initial = &bad;
    cr_expect_null(sim_game_create(&d, &e));
    cr_expect_str_eq(e.field, "health");
}

Test(game, identity_names_the_game_and_its_digest_follows_the_schemas)
{
    cr_expect_str_eq(sim_game_name(tag), "tag");
    cr_expect_eq(sim_game_version(tag), 1u);
    sim_game_def d = tag_game_def();
    sim_game *same = sim_game_create(&d, NULL);
    cr_expect_eq(sim_game_digest(same), sim_game_digest(tag));
    d.version = 2;
    sim_game *other = sim_game_create(&d, NULL);
    cr_expect_neq(sim_game_digest(other), sim_game_digest(tag));
    sim_game_destroy(same);
    sim_game_destroy(other);
}

// ---- commands and state from outside ------------------------------------------

Test(game, a_command_packs_to_its_bits_and_a_field_out_of_range_is_named)
{
    cr_expect_eq(sim_game_command_bits(tag), 1u + 1u + 2u + 12u + 21u);
    tag_command c = {1, 0, 2, (sim_angle)(0xABC << 4), SIM_FX_MM(12345)};
    uint8_t wire[8];
    sim_game_error e;
    size_t n = sim_game_pack_command(tag, &c, wire, sizeof wire, &e);
    cr_assert_eq(n, 5u, "%s", e.reason);
    tag_command back;
    cr_assert(sim_game_unpack_command(tag, wire, n, &back, &e), "%s %s", e.reason, e.field);
    cr_expect_eq(back.fire, 1);
    cr_expect_eq(back.weapon, 2);
    cr_expect_eq(back.aim, c.aim);
    cr_expect_eq(back.throw_speed, c.throw_speed);
    c.weapon = 3;
    cr_expect_eq(sim_game_pack_command(tag, &c, wire, sizeof wire, &e), 0u);
    cr_expect_str_eq(e.field, "weapon");
    wire[0] |= 0x0C; // weapon's two bits: 3
    cr_expect_not(sim_game_unpack_command(tag, wire, n, &back, &e));
    cr_expect_str_eq(e.field, "weapon");
    c.weapon = 0;
    c.aim = 1; // finer than 12 bits
    cr_expect_not(sim_game_check(tag, SIM_GAME_PART_COMMAND, &c, &e));
    cr_expect_str_eq(e.field, "aim");
}

static void add_players(sim_scene *sc)
{
    const sim_marker *m = sim_level_find_marker(&level, "platform_area");
    cr_assert_not_null(m);
    for (uint32_t i = 0; i < N; i++) {
        // Two rows of eight, 2.5 m apart, facing each other.
        sim_vec3 p = sim_v3_add(m->position, sim_v3(SIM_FX_MM(-3000 + 850 * (int32_t)(i % 8)), 0,
                                                    i < 8 ? -SIM_FX_MM(1250) : SIM_FX_MM(1250)));
        sim_char_state c = sim_char_spawn(i + 1, p, (sim_angle)(i < 8 ? 0 : 0x8000));
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    }
}

Test(game, state_from_outside_out_of_range_is_refused_naming_the_field)
{
    sim_scene *sc = sim_scene_create_game(world, &S, N, tag);
    cr_assert_not_null(sc);
    add_players(sc);
    tag_player p = *(const tag_player *)sim_scene_game_char(sc, 3);
    cr_expect_eq(p.health, 100);
    p.health = 200;
    sim_game_error e;
    cr_expect_not(sim_scene_set_game_char(sc, 3, &p, &e));
    cr_expect_str_eq(e.field, "health");
    tag_state s = *(const tag_state *)sim_scene_game_state(sc);
    s.entity[5].kind = 2;
    cr_expect_not(sim_scene_set_game_state(sc, &s, &e));
    cr_expect_str_eq(e.field, "entity.kind");
    cr_expect_eq(e.element, 5);

    // A saved state whose first character's health says 200.
    size_t size = sim_scene_state_size(sc);
    uint8_t *buf = malloc(size);
    sim_scene_save(sc, buf);
    uint64_t before = sim_scene_hash(sc);
    size_t at = 16 + N * 76 + 8 + 4 * (3 + 6 * TAG_ENTITIES) + 4; // past the digest, the state, the out mark
    buf[at] = 200;
    sim_scene_error se;
    cr_expect_not(sim_scene_restore(sc, buf, size, &se));
    cr_expect_str_eq(sim_scene_refused_field(sc), "health");
    cr_expect_eq(se.record, 0);
    cr_expect_eq(se.offset, at);
    cr_expect_eq(sim_scene_hash(sc), before);
    buf[at] = 100;
    cr_expect(sim_scene_restore(sc, buf, size, &se), "%s", se.reason);
    // A scene without the game refuses the game's save as it always refused
    // an unknown version, and the game's scene refuses a save without it.
    sim_scene *plain = sim_scene_create(world, &S, N);
    cr_expect_not(sim_scene_restore(plain, buf, size, &se));
    cr_expect_str_eq(se.reason, "unknown version");
    add_players(plain);
    size_t plain_size = sim_scene_state_size(plain);
    uint8_t *plain_buf = malloc(plain_size);
    sim_scene_save(plain, plain_buf);
    cr_expect_not(sim_scene_restore(sc, plain_buf, plain_size, &se));
    cr_expect_str_eq(se.reason, "saved without a game, and this scene has one");
    free(plain_buf);
    free(buf);
    sim_scene_destroy(plain);
    sim_scene_destroy(sc);
}

// ---- the sync test with a game -------------------------------------------------

// Commands of character `id` at `tick`: a function of the two only.
static void commands(sim_scene *sc, uint32_t tick)
{
    uint32_t count;
    const sim_char_state *cs = sim_scene_characters(sc, &count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = cs[i].id, r = keel_test_mix(tick * 977u + id);
        sim_input in = keel_test_sync_input(tick, id, r);
        in.buttons = (uint8_t)((r >> 20 & 31) == 0 ? SIM_BUTTON_JUMP : 0);
        tag_command c = {(uint8_t)((r >> 4 & 3) == 0), (uint8_t)((r >> 6 & 63) == 0), (uint8_t)(r >> 12 & 1),
                         (sim_angle)(((r >> 16) & 0x3F) << 4), 0};
        cr_assert(sim_scene_set_command(sc, id, &in, &c, NULL));
    }
}

typedef struct seen {
    uint32_t dashes, outs, entities, hits, score;
} seen;

static void look(const sim_scene *sc, seen *s)
{
    uint32_t count;
    const sim_char_state *cs = sim_scene_characters(sc, &count);
    for (uint32_t i = 0; i < count; i++) {
        s->dashes += cs[i].move_type == TAG_MOVE_DASH;
        s->outs += sim_scene_game_out(sc, cs[i].id);
        s->score += ((const tag_player *)sim_scene_game_char(sc, cs[i].id))->score;
    }
    const tag_state *st = sim_scene_game_state(sc);
    for (uint32_t k = 0; k < TAG_ENTITIES; k++)
        s->entities += st->entity[k].kind != 0;
    s->hits = st->hits;
}

static sim_scene *tag_scene(void)
{
    sim_scene *sc = sim_scene_create_game(world, &S, N, tag);
    cr_assert_not_null(sc);
    add_players(sc);
    return sc;
}

// The sync case's callbacks (game_sync.h).
static sim_scene *tag_scene_of(void *user)
{
    (void)user;
    return tag_scene();
}

static sim_scene *fresh_scene_of(void *user)
{
    (void)user;
    return sim_scene_create_game(world, &S, N, tag);
}

static void commands_of(sim_scene *sc, uint32_t tick, void *user)
{
    (void)user;
    commands(sc, tick);
}

Test(game, rollback_restore_and_order_give_the_same_hash_every_tick)
{
    uint64_t *ref = calloc(TICKS, sizeof *ref);
    seen s = {0};
    sim_scene *a = tag_scene();
    for (uint32_t t = 0; t < TICKS; t++) {
        commands(a, t);
        sim_scene_step(a);
        ref[t] = sim_scene_hash(a);
        look(a, &s);
    }
    cr_log_info("tag over %d ticks: %u hits, score %u, %u dash ticks, %u out ticks, %u entity ticks, hash %016llx",
                TICKS, s.hits, s.score, s.dashes, s.outs, s.entities, (unsigned long long)ref[TICKS - 1]);
    cr_expect_gt(s.hits, 0u, "no shot hit");
    cr_expect_gt(s.score, 0u, "nobody scored");
    cr_expect_gt(s.dashes, 0u, "nobody dashed");
    cr_expect_gt(s.outs, 0u, "nobody was out of collisions");
    cr_expect_gt(s.entities, 0u, "the entity table stayed empty");
    cr_expect_eq(sim_scene_game_faults(a), 0u);

    keel_game_sync sync = {tag_scene_of, fresh_scene_of, commands_of, NULL, TICKS};
    keel_test_game_sync(&sync, ref);
    free(ref);
    sim_scene_destroy(a);
}

// ---- no game, no change ------------------------------------------------------------

Test(game, no_game_and_a_game_without_rules_move_as_before)
{
    sim_game_def d = tag_game_def();
    d.rules = (sim_game_rules){0};
    sim_game *quiet = sim_game_create(&d, NULL);
    cr_assert_not_null(quiet);
    sim_scene *plain = sim_scene_create(world, &S, N);
    sim_scene *null_game = sim_scene_create_game(world, &S, N, NULL);
    sim_scene *ruleless = sim_scene_create_game(world, &S, N, quiet);
    add_players(plain);
    add_players(null_game);
    add_players(ruleless);
    cr_expect_eq(sim_scene_state_size(null_game), sim_scene_state_size(plain));
    for (uint32_t t = 0; t < 200; t++) {
        uint32_t count;
        const sim_char_state *cs = sim_scene_characters(plain, &count);
        for (uint32_t i = 0; i < count; i++) {
            sim_input in = {0};
            in.tick = t;
            in.forward = (int8_t)(keel_test_mix(t + cs[i].id) & 63);
            in.yaw = (sim_angle)(cs[i].id * 4000u);
            sim_scene_set_input(plain, cs[i].id, &in);
            sim_scene_set_input(null_game, cs[i].id, &in);
            sim_scene_set_command(ruleless, cs[i].id, &in, NULL, NULL);
        }
        sim_scene_step(plain);
        sim_scene_step(null_game);
        sim_scene_step(ruleless);
        cr_assert_eq(sim_scene_hash(null_game), sim_scene_hash(plain), "tick %u", t);
        const sim_char_state *rs = sim_scene_characters(ruleless, &count);
        for (uint32_t i = 0; i < count; i++)
            cr_assert_eq(sim_hash_char(0, &rs[i]), sim_hash_char(0, &cs[i]), "tick %u, character %u", t, cs[i].id);
    }
    sim_scene_destroy(plain);
    sim_scene_destroy(null_game);
    sim_scene_destroy(ruleless);
    sim_game_destroy(quiet);
}

// ---- effects and queries ---------------------------------------------------------

typedef struct probe_state {
    int32_t cast_hit;   // 1 when the shape cast down from character 1 hit the floor
    int32_t cast_other; // the character the cast along the row hit
    sim_fx fraction;
} probe_state;

static const sim_game_field probe_fields[] = {
    {"cast_hit", SIM_GAME_INT, offsetof(probe_state, cast_hit), 4, 32, 0, 0, 0, 0},
    {"cast_other", SIM_GAME_INT, offsetof(probe_state, cast_other), 4, 32, 0, 0, 0, 0},
    {"fraction", SIM_GAME_FX, offsetof(probe_state, fraction), 4, 32, 0, 0, 0, 0},
};

static void probe_each(sim_game_tick *t, uint32_t i)
{
    sim_game_set_velocity(t, i + 1, sim_v3_zero()); // another's: refused
    cr_assert_null(sim_game_state(t));
    cr_assert_null(sim_game_character(t, i + 1));
}

static void probe_after(sim_game_tick *t)
{
    probe_state *s = sim_game_state(t);
    const sim_char_state *c = sim_game_character(t, 0);
    sim_game_teleport(t, 0, sim_v3(SIM_FX_INT(5000), 0, 0), sim_v3_zero()); // outside: refused
    sim_game_set_velocity(t, 0, sim_v3(SIM_FX_INT(200), 0, 0));             // too fast: refused
    sim_game_set_move_type(t, 0, 99);                                       // unknown: refused
    sim_shape shape = sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1000));
    sim_sweep_result r;
    uint32_t who = 0;
    sim_vec3 center = sim_v3_add(c->position, sim_v3(0, SIM_FX_INT(2), 0));
    s->cast_hit = sim_game_shape_cast(t, shape, center, sim_v3(0, -SIM_FX_INT(4), 0), c->id, &r, &who) && who == 0;
    s->fraction = r.fraction;
    // Along the row (+x): the neighbour 0.85 m away is hit.
    sim_vec3 side = sim_v3_add(c->position, sim_v3(0, SIM_FX_MM(900), 0));
    s->cast_other = sim_game_shape_cast(t, sim_shape_capsule(SIM_FX_MM(100), SIM_FX_MM(300)), side,
                                        sim_v3(SIM_FX_INT(3), 0, 0), c->id, &r, &who)
                        ? (int32_t)who
                        : -1;
}

Test(game, effects_are_checked_and_counted_and_shape_casts_find_the_floor_and_characters)
{
    sim_game_def d = sim_game_default_def();
    d.name = "probe";
    d.state = (sim_game_schema){sizeof(probe_state), probe_fields, 3};
    d.rules.after_move_char = probe_each;
    d.rules.after_move = probe_after;
    sim_game *g = sim_game_create(&d, NULL);
    cr_assert_not_null(g);
    sim_scene *sc = sim_scene_create_game(world, &S, N, g);
    add_players(sc);
    for (uint32_t t = 0; t < 30; t++)
        sim_scene_step(sc);
    const probe_state *s = sim_scene_game_state(sc);
    cr_expect_eq(s->cast_hit, 1);
    cr_expect_gt(s->fraction, 0);
    cr_expect_lt(s->fraction, SIM_FX_ONE);
    cr_expect_eq(s->cast_other, 2, "the cast along the row hit %d", s->cast_other);
    // Per tick: N refused per-character effects, three refused serial ones.
    cr_expect_eq(sim_scene_game_faults(sc), 30u * (N + 3));
    const sim_char_state *c = sim_scene_find(sc, 1);
    cr_expect_lt(c->position.x, SIM_FX_INT(1000));
    cr_expect_lt(c->move_type, SIM_MOVE_TYPE_COUNT);
    sim_scene_destroy(sc);
    sim_game_destroy(g);
}
