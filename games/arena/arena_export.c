// keel-arena as a shared library: the one function a game library exports
// (docs/game.md, "Loading a game"): keel-server --game ./libarena.so.
// MIT licence, see LICENSE.
#include "arena.h"

#if defined(_WIN32)
#define ARENA_EXPORT __declspec(dllexport)
#else
#define ARENA_EXPORT __attribute__((visibility("default")))
#endif

ARENA_EXPORT const sim_game_def *keel_game_v1(void);

const sim_game_def *keel_game_v1(void) { return arena_game(); }
