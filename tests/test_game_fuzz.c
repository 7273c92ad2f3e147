// keel tests: a game's schema-driven decoders fed random and mutated bytes.
// MIT licence, see LICENSE.
//
// Game commands come from the network and game state from saves, so
// sim_game_unpack_command and sim_scene_restore of a scene with a game must
// refuse anything out of range with a reason and accept only what packs
// back to the same bytes and steps without a check firing. Random commands
// (every field anywhere in its raw range) are packed or refused by name.
// KEEL_FUZZ_ROUNDS sets the number of rounds (default 20,000).
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_game.h>

#include "tag.h"
#include "test_support.h"

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t rounds(void)
{
    const char *r = getenv("KEEL_FUZZ_ROUNDS");
    long v = r ? strtol(r, NULL, 10) : 20000;
    return v > 0 ? (uint32_t)v : 20000u;
}

Test(game_fuzz, commands_unpack_to_what_packs_back_or_are_refused_with_a_reason, .timeout = 600)
{
    sim_game_def d = tag_game_def();
    sim_game *g = sim_game_create(&d, NULL);
    cr_assert_not_null(g);
    size_t n = (sim_game_command_bits(g) + 7) / 8;
    uint64_t s = 35;
    uint32_t accepted = 0, refused = 0;
    for (uint32_t r = 0; r < rounds(); r++) {
        uint8_t in[16], out[16];
        for (size_t k = 0; k < sizeof in; k++)
            in[k] = (uint8_t)next(&s);
        size_t size = (next(&s) & 7) == 0 ? (size_t)(next(&s) % 9) : n; // sometimes a wrong size
        tag_command c;
        sim_game_error e;
        if (!sim_game_unpack_command(g, in, size, &c, &e)) {
            cr_assert_neq(e.reason[0], '\0');
            refused++;
            continue;
        }
        accepted++;
        cr_assert(sim_game_check(g, SIM_GAME_PART_COMMAND, &c, NULL));
        cr_assert_eq(sim_game_pack_command(g, &c, out, sizeof out, &e), n);
        cr_assert_eq(memcmp(in, out, n), 0, "round %u", r);
        // Raw structs: each field anywhere in its storage.
        uint8_t raw[sizeof(tag_command)];
        for (size_t k = 0; k < sizeof raw; k++)
            raw[k] = (uint8_t)next(&s);
        if (sim_game_pack_command(g, raw, out, sizeof out, &e) == 0)
            cr_assert_neq(e.field[0], '\0', "%s", e.reason);
    }
    cr_expect_gt(accepted, 0u);
    cr_expect_gt(refused, 0u);
    sim_game_destroy(g);
}

Test(game_fuzz, damaged_saves_of_a_scene_with_a_game_are_refused_or_step_cleanly, .timeout = 600)
{
    sim_level level;
    sim_world *world = keel_test_builtin_world(&level);
    sim_move_settings S = sim_move_default_settings();
    sim_game_def d = tag_game_def();
    sim_game *g = sim_game_create(&d, NULL);
    sim_scene *sc = sim_scene_create_game(world, &S, 8, g);
    const sim_marker *m = sim_level_find_marker(&level, "platform_area");
    cr_assert_not_null(m);
    for (uint32_t i = 0; i < 8; i++) {
        sim_char_state c =
            sim_char_spawn(i + 1, sim_v3_add(m->position, sim_v3(SIM_FX_INT((int32_t)i) - SIM_FX_INT(4), 0, 0)),
                           (sim_angle)(i * 9000u));
        cr_assert_eq(sim_scene_add_character(sc, &c), 0);
    }
    for (uint32_t t = 0; t < 20; t++)
        sim_scene_step(sc);
    size_t size = sim_scene_state_size(sc);
    uint8_t *good = malloc(size), *buf = malloc(size);
    sim_scene_save(sc, good);
    uint64_t s = 3535;
    uint32_t limit = rounds() / 10 + 1, accepted = 0;
    for (uint32_t r = 0; r < limit; r++) {
        memcpy(buf, good, size);
        uint32_t flips = 1 + (uint32_t)(next(&s) % 4);
        for (uint32_t k = 0; k < flips; k++) {
            size_t at = 16 + 8 * 76 + (size_t)(next(&s) % (size - 16 - 8 * 76)); // the game's block
            buf[at] = (uint8_t)(next(&s) & 1 ? next(&s) : buf[at] ^ (1u << (next(&s) & 7)));
        }
        sim_scene_error e;
        if (!sim_scene_restore(sc, buf, size, &e)) {
            cr_assert_neq(e.reason[0], '\0');
            continue;
        }
        accepted++;
        sim_scene_step(sc);
        uint32_t count;
        const sim_char_state *cs = sim_scene_characters(sc, &count);
        for (uint32_t i = 0; i < count; i++)
            cr_assert(sim_game_check(g, SIM_GAME_PART_CHARACTER, sim_scene_game_char(sc, cs[i].id), NULL));
        cr_assert(sim_game_check(g, SIM_GAME_PART_STATE, sim_scene_game_state(sc), NULL));
    }
    cr_expect_gt(accepted, 0u);
    free(good);
    free(buf);
    sim_scene_destroy(sc);
    sim_game_destroy(g);
    keel_test_builtin_free(&level, world);
}
