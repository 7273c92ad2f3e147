// keel's example game, "tag": laser tag in a few rules, written against the
// installed headers only (keel/sim_game.h). MIT licence, see LICENSE.
//
// A player's command carries a fire button, a dash button, a weapon and a
// throw speed beside the movement. A shot is a ray from the eyes along the
// view: a hit takes 25 health; at 0 the target is out of collisions for two
// seconds, then respawns at its start with full health, and the shooter
// scores. Each hit leaves a mark in the game-wide entity table for half a
// second. The dash is the game's own move type: 0.25 s at 12 m/s along the
// view, through the same collide and slide as the built-in moves.
#ifndef KEEL_GAME_TAG_H
#define KEEL_GAME_TAG_H

#include <stdint.h>

#include <keel/sim_game.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tag_command {
    uint8_t fire;
    uint8_t dash;
    uint8_t weapon;     ///< 0..2
    sim_angle aim;      ///< an aim offset added to the view yaw, 12 bits
    sim_fx throw_speed; ///< 0..20 m/s
} tag_command;

typedef struct tag_player {
    int16_t health; ///< 0..100
    uint16_t score;
    uint8_t dash_ticks;  ///< 0..16: ticks of dash left
    uint8_t cooldown;    ///< 0..31: ticks before the next shot
    uint32_t respawn_at; ///< the match tick of the respawn (0: alive)
    sim_vec3 home;       ///< where it respawns
} tag_player;

#define TAG_ENTITIES 64
typedef struct tag_entity {
    uint8_t kind; ///< 0 free, 1 a hit mark
    uint16_t ttl; ///< ticks left
    uint32_t owner;
    sim_vec3 at;
} tag_entity;

typedef struct tag_state {
    uint32_t clock; ///< match ticks
    uint32_t hits;
    uint32_t last_hit; ///< the id of the last character hit
    tag_entity entity[TAG_ENTITIES];
} tag_state;

/// The game's move type ids.
#define TAG_MOVE_DASH SIM_GAME_MOVE_FIRST

/// The definition (static data; `version` as given, so two builds of the
/// rules can differ by version).
sim_game_def tag_game_def(void);
/// The same definition, static: what the game's entry point returns
/// (keel_game_v1 in its shared library; the programs' list of linked games).
const sim_game_def *tag_game(void);

#ifdef __cplusplus
}
#endif

#endif
