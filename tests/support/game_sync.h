// keel tests: the sync test of a game, shared by the games' tests
// (test_game.c, test_arena.c). MIT licence, see LICENSE.
#ifndef KEEL_TEST_GAME_SYNC_H
#define KEEL_TEST_GAME_SYNC_H

#include <stdint.h>

#include <keel/sim_game.h>

/// A game's sync case: how to make its scene and its commands.
typedef struct keel_game_sync {
    /// A scene at tick 0 with its characters (and whatever level the game was given).
    sim_scene *(*make)(void *user);
    /// An empty scene of the same world, settings, capacity and game: a restore's target.
    sim_scene *(*fresh)(void *user);
    /// Sets every character's input and game command of `tick` (a function
    /// of the tick and the ids only).
    void (*commands)(sim_scene *scene, uint32_t tick, void *user);
    void *user;
    uint32_t ticks;
} keel_game_sync;

/// Checks, against `ref` (the hash after each tick of a plain run), that
/// rolling back 1 to 7 ticks to saved states every 5 ticks and simulating
/// forward again, and saving and restoring into a fresh scene every tick with
/// the per-character rules run backwards in items of 3, give the same hash
/// after every tick. Fails the test at the first difference.
void keel_test_game_sync(const keel_game_sync *sync, const uint64_t *ref);

/// The test's mixer for commands: a well-spread function of x.
uint32_t keel_test_mix(uint32_t x);

/// The movement of character `id` at `tick` from r = keel_test_mix(...):
/// forward a quarter of the time, left a quarter, the yaw of its row (ids
/// 1..8 look along -Z, the others along +Z) within about 11 degrees.
sim_input keel_test_sync_input(uint32_t tick, uint32_t id, uint32_t r);

#endif
