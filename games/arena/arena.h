// keel-arena: a small deathmatch written against keel's installed headers
// only (keel/sim_game.h). MIT licence, see LICENSE.
//
// Two weapons (a hitscan rail and a rocket with splash damage and rocket
// jumps), health and armour, death and respawn at the level's spawn points
// with a short protection, frags and suicides, a match clock and the match's
// end with a score table, health and armour pickups that respawn, jump pads
// and teleporters from the level's entities. All in Q16.16 fixed point,
// inside keel's deterministic tick. docs/arena.md has the rules, the
// figures and the tick order.
#ifndef KEEL_GAME_ARENA_H
#define KEEL_GAME_ARENA_H

#include <stdint.h>

#include <keel/sim_game.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The game's settings: its figures. Times are in ticks of the scene (the
/// defaults assume keel's 64 ticks per second), distances in metres and
/// speeds in metres per second (Q16.16). They go into the game's digest.
typedef struct arena_settings {
    int32_t health_start;       ///< health at spawn (100)
    int32_t health_max;         ///< a health pickup fills up to this (100)
    int32_t armour_max;         ///< (100)
    int32_t armour_absorb_pct;  ///< the share of damage armour takes while it lasts (66)
    int32_t respawn_ticks;      ///< dead for this long (128: 2 s)
    int32_t protect_ticks;      ///< no damage taken after a respawn, until then or the first shot (96: 1.5 s)
    int32_t match_ticks;        ///< the match's length (19200: 5 min)
    int32_t frag_limit;         ///< the match ends when a player reaches it (20; 0: none)
    int32_t rail_damage;        ///< (80)
    int32_t rail_interval;      ///< ticks between rail shots (96: 1.5 s)
    sim_fx rail_range;          ///< (80 m)
    int32_t rocket_direct;      ///< damage of a direct hit (100)
    int32_t rocket_splash;      ///< splash damage at the centre, falling linearly to 0 at the radius (100)
    sim_fx rocket_radius;       ///< (3 m)
    sim_fx rocket_speed;        ///< (20 m/s)
    int32_t rocket_interval;    ///< ticks between rockets (51: 0.8 s)
    int32_t rocket_ttl;         ///< ticks a rocket flies before it explodes (320: 5 s)
    int32_t self_damage_pct;    ///< the share of its own splash a shooter takes (50)
    sim_fx knockback;           ///< m/s of push per point of splash damage (0.125: 100 points give 12.5 m/s)
    int32_t health_pickup;      ///< health an item_health gives (25)
    int32_t armour_pickup;      ///< armour an item_armor* gives (50)
    int32_t pickup_respawn;     ///< ticks before a taken item is back (1280: 20 s)
    sim_fx eye_height;          ///< above the feet, where shots start (1.6 m standing)
    sim_fx eye_height_crouched; ///< (0.9 m)
} arena_settings;

/// The defaults above.
arena_settings arena_default_settings(void);

/// The command: two fire buttons beside the movement, and the rail shot's
/// judgement against the shooter's view (docs/arena.md, "Lag
/// compensation"): 41 bits on the wire, 2 while the rail is not fired.
typedef struct arena_command {
    uint8_t fire_rail;
    uint8_t fire_rocket;
    /// Ticks the shooter's view was predicted past its client's confirmed
    /// tick (0..63; set by keel's client on a rail shot, 0 otherwise).
    uint8_t view_lag;
    /// 1: the rail shot was judged against the shooter's view, and hits
    /// `rail_hit` (a character id; 0: nothing). 0: the rules judge it
    /// against the characters as they are at the tick.
    uint8_t judged;
    uint32_t rail_hit;
} arena_command;

/// Weapons, as the kill feed names them.
enum { ARENA_WEAPON_NONE = 0, ARENA_WEAPON_RAIL = 1, ARENA_WEAPON_ROCKET = 2 };

/// A player's game state (per character).
typedef struct arena_player {
    int16_t health;         ///< 0..200 (0: dead)
    int16_t armour;         ///< 0..200
    int16_t frags;          ///< kills less suicides, -1000..1000
    uint16_t deaths;        ///< 0..65535
    uint16_t suicides;      ///< (counted in deaths too)
    uint16_t hits;          ///< hits given, wrapping at 65536 (a HUD's hit marker)
    uint8_t dead;           ///< 1 while dead (out of collisions)
    uint8_t spawned;        ///< 1 once the game has seen it (home set)
    uint16_t respawn_ticks; ///< ticks left dead
    uint16_t protect_ticks; ///< ticks of spawn protection left
    uint16_t rail_ticks;    ///< ticks before the rail fires again
    uint16_t rocket_ticks;  ///< ticks before the next rocket
    uint32_t last_attacker; ///< the id of the last character that hurt it (0: none)
    sim_vec3 home;          ///< where it first stood: its respawn point on a level without spawn points
} arena_player;

/// Capacities of the game-wide tables.
#define ARENA_SPAWNS 32
#define ARENA_PADS 8
#define ARENA_TELEPORTS 8
#define ARENA_ITEMS 32
#define ARENA_ROCKETS 32
#define ARENA_SCORES 64
#define ARENA_FEED 8

enum { ARENA_ITEM_NONE = 0, ARENA_ITEM_HEALTH = 1, ARENA_ITEM_ARMOUR = 2 };

typedef struct arena_spawn {
    sim_vec3 feet;
    sim_angle yaw;
} arena_spawn;

/// A jump pad: a character whose feet enter the box gets the velocity.
typedef struct arena_pad {
    sim_aabb box;
    sim_vec3 velocity;
} arena_pad;

/// A teleporter: a character whose feet enter the box goes to `feet`, moving
/// along `yaw` at the teleport's exit speed.
typedef struct arena_teleport {
    sim_aabb box;
    sim_vec3 feet;
    sim_angle yaw;
} arena_teleport;

typedef struct arena_item {
    uint8_t kind;     ///< ARENA_ITEM_*
    uint16_t respawn; ///< ticks until it is back (0: there)
    sim_vec3 at;
} arena_item;

typedef struct arena_rocket {
    uint8_t live;
    uint16_t ttl;
    uint32_t owner; ///< the shooter's id
    sim_vec3 at;
    sim_vec3 velocity;
} arena_rocket;

/// A line of the score table (filled when the match ends: frags down, then
/// deaths up, then id up).
typedef struct arena_score {
    uint32_t id; ///< 0: an empty line
    int16_t frags;
    uint16_t deaths;
} arena_score;

/// A kill: who, whom, with what, when (a ring of the last ARENA_FEED).
typedef struct arena_kill {
    uint32_t tick;
    uint32_t killer; ///< 0 or the victim's own id: a suicide
    uint32_t victim;
    uint8_t weapon;
} arena_kill;

/// The game-wide state.
typedef struct arena_state {
    uint32_t clock;    ///< ticks of the match
    uint8_t ended;     ///< 1 once the match is over
    uint32_t end_tick; ///< the clock when it ended
    uint32_t kills;    ///< kills so far (the feed's next line is kills % ARENA_FEED)
    uint16_t spawn_count, pad_count, teleport_count, item_count;
    arena_spawn spawn[ARENA_SPAWNS];
    arena_pad pad[ARENA_PADS];
    arena_teleport teleport[ARENA_TELEPORTS];
    arena_item item[ARENA_ITEMS];
    arena_rocket rocket[ARENA_ROCKETS];
    arena_score score[ARENA_SCORES];
    arena_kill feed[ARENA_FEED];
} arena_state;

/// A definition with its own settings: the settings and their bytes (the
/// digest's, little-endian) live here, so it must outlive the sim_game made
/// from `def`.
typedef struct arena_def {
    sim_game_def def;
    arena_settings settings;
    uint8_t settings_bytes[sizeof(arena_settings)];
} arena_def;

/// Fills `a` for `settings` (NULL: the defaults), each clamped into the
/// range the rules are written for: health 1..200, armour 0..200, shares
/// 0..100 %, damages 0..1000, frag limit 0..1000 (0: none), intervals,
/// respawn and rocket times 1..65535 ticks (protection and pickup respawn
/// 0..65535), match 0..2^31-1 ticks (0: no clock limit), rail range
/// 0..1000 m, rocket radius 1 cm..100 m, rocket speed 1 cm/s..99 m/s,
/// knockback 0..1 m/s per point, eye heights 0..3 m.
void arena_def_init(arena_def *a, const arena_settings *settings);

/// The definition with the default settings (static: what keel_game_v1
/// returns, and the programs' linked game "arena").
const sim_game_def *arena_game(void);

#ifdef __cplusplus
}
#endif

#endif
