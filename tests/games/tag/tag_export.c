// keel's example game as a shared library: the one function a game library
// exports (docs/game.md, "Loading a game"). MIT licence, see LICENSE.
#include "tag.h"

#if defined(_WIN32)
#define TAG_EXPORT __declspec(dllexport)
#else
#define TAG_EXPORT __attribute__((visibility("default")))
#endif

TAG_EXPORT const sim_game_def *keel_game_v1(void);

const sim_game_def *keel_game_v1(void) { return tag_game(); }
