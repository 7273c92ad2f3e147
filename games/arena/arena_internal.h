// keel-arena: what its sources share (not installed). MIT licence, see LICENSE.
#ifndef KEEL_GAME_ARENA_INTERNAL_H
#define KEEL_GAME_ARENA_INTERNAL_H

#include "arena.h"

/// Speeds the game sets are capped per axis under keel's 100 m/s.
#define ARENA_SPEED_CAP SIM_FX_INT(99)

/// A velocity capped to ARENA_SPEED_CAP per axis.
sim_vec3 arena_capped(sim_vec3 v);

/// The level hook (arena_level.c) and the rules (arena_rules.c).
void arena_level(const sim_game_level *level, void *state, void *user);
void arena_before_char(sim_game_tick *t, uint32_t index);
void arena_after(sim_game_tick *t);
/// The rail shot against the shooter's view (arena_judge.c; sim_game_judge_fn).
bool arena_judge(const sim_scene *scene, uint32_t id, const sim_input *input, void *command, bool view, void *user);
/// Where shots start: the eyes of a character in state `c`.
sim_vec3 arena_eye(const arena_settings *st, const sim_char_state *c);

#endif
