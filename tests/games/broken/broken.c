// Game libraries the loader must refuse without crashing (test_game_load):
// built with -DBROKEN_ABI, an entry point that returns a definition of
// another ABI version; without it, no entry point at all. MIT licence.
#include <keel/sim_game.h>

#if defined(_WIN32)
#define BROKEN_EXPORT __declspec(dllexport)
#else
#define BROKEN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef BROKEN_ABI
static const sim_game_def definition = {.abi_version = SIM_GAME_ABI_VERSION + 1u, .name = "broken", .version = 1};

BROKEN_EXPORT const sim_game_def *keel_game_v1(void);
const sim_game_def *keel_game_v1(void) { return &definition; }
#else
BROKEN_EXPORT int keel_not_a_game(void);
int keel_not_a_game(void) { return 1; }
#endif
