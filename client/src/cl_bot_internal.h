// keel client: what the bots' sources share (not installed). MIT licence, see LICENSE.
#ifndef KEEL_CL_BOT_INTERNAL_H
#define KEEL_CL_BOT_INTERNAL_H

#include <keel/cl_bot.h>

struct sim_game;

/// The arena mode's command for `me` (alive or not) in `scene` (cl_bot_arena.c).
sim_input cl_bot_arena_command(cl_bot *bot, const sim_scene *scene, const sim_char_state *me, uint32_t tick);
/// The arena mode's game command: the buttons its command for `tick` pressed.
bool cl_bot_arena_game_command(const cl_bot *bot, const struct sim_game *game, uint32_t tick, void *command,
                               size_t size);

#endif
