// keel tests: keel-arena built with another rail damage (70 instead of 80)
// but the default identity, as a shared library (libkeel_game_arena_rail.so):
// its rules read the changed figure while its digest names the default
// settings' bytes, so it passes for keel-arena and differs in one weapon's
// damage, as two builds of a game that differ in one rule's code do
// (test_game_programs: keel-replay diff names the first game field that
// differs). MIT licence, see LICENSE.
#include <string.h>

#include "arena.h"

#define ARENA_RAIL_TEST_DAMAGE 70

__attribute__((visibility("default"))) const sim_game_def *keel_game_v1(void);

const sim_game_def *keel_game_v1(void)
{
    static arena_def rail, plain;
    arena_settings s = arena_default_settings();
    s.rail_damage = ARENA_RAIL_TEST_DAMAGE;
    arena_def_init(&rail, &s);
    arena_def_init(&plain, NULL);
    memcpy(rail.settings_bytes, plain.settings_bytes, sizeof rail.settings_bytes); // the default identity
    return &rail.def;
}
