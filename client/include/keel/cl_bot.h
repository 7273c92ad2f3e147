// keel: headless bots that drive a client's character. MIT licence.
//
// A bot looks at the predicted scene (its own character and the others) and
// makes the command for the next tick. Client code, not simulation: the
// older modes aim with floating point, since only the integer command they
// produce reaches the simulation; the arena mode (cl_bot_arena.c) is integer
// and Q16.16 only, so that its commands are the same on every machine.
#ifndef KEEL_CL_BOT_H
#define KEEL_CL_BOT_H

#include <keel/sim_game.h>
#include <keel/sim_level.h>
#include <keel/sim_scene.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cl_bot_mode {
    CL_BOT_RANDOM = 0,  ///< seeded random walk, leashed to where it started
    CL_BOT_CIRCUIT = 1, ///< a loop over the built-in level's stairs and ramps
    CL_BOT_PUSHER = 2,  ///< walks into the nearest other character
    CL_BOT_IDLE = 3,    ///< stands still
    /// Rides the scene's platforms: walks onto one, stays a few seconds,
    /// then goes to the next (a random walk when the scene has none).
    CL_BOT_PLATFORMS = 4,
    /// Fights (docs/arena.md, "Bots"): hunts the nearest living enemy, turns
    /// toward the nearest visible one at CL_BOT_TURN_PER_TICK at most, fires
    /// the game's "fire_rail" when its aim is on it and "fire_rocket" at its
    /// feet at mid range, strafes, and walks around what blocks it. It reads
    /// the game's per-character fields "dead", "rail_ticks" and
    /// "rocket_ticks" by name (sim_game.h's schema); without a game, or
    /// without those fields, it hunts and never fires.
    CL_BOT_ARENA = 5,
    CL_BOT_MODE_COUNT = 6,
} cl_bot_mode;

/// The arena bot's bounded turn rate: 1024 binary-angle units (5.625
/// degrees) of yaw and of pitch per tick, 360 degrees per second at keel's
/// 64 ticks per second.
#define CL_BOT_TURN_PER_TICK 1024u

/// "random", "circuit", "pusher", "idle", "platforms", "arena"; -1 for an
/// unknown name.
int cl_bot_mode_parse(const char *name);
const char *cl_bot_mode_name(cl_bot_mode mode);

typedef struct cl_bot {
    cl_bot_mode mode;
    uint64_t rng;
    bool has_home;
    sim_vec3 home;
    sim_fx leash;      ///< random walk: how far from home it may wander (default 1 m)
    uint32_t waypoint; ///< circuit: the marker; platforms: the platform
    uint32_t next_change;
    bool riding; ///< platforms: on the target platform, waiting
    sim_input current;
    uint64_t game_seed; ///< cl_bot_game_command's draws
    // The arena mode's own (cl_bot_arena.c).
    uint32_t target;       ///< the enemy aimed at (0: none)
    uint32_t next_scan;    ///< the tick it looks for a visible enemy again
    uint32_t fire_tick;    ///< the tick `fire` was decided for
    uint8_t fire;          ///< bit 0: fire_rail, bit 1: fire_rocket at fire_tick
    int8_t strafe;         ///< -127 or 127 while fighting
    uint32_t strafe_until; ///< the tick it changes sides
    uint32_t slow_ticks;   ///< ticks it walked without getting anywhere
    uint32_t detour_until; ///< walking along detour_yaw until then
    sim_angle detour_yaw;
} cl_bot;

void cl_bot_init(cl_bot *bot, cl_bot_mode mode, uint64_t seed);
/// The command for tick `tick` of the character `self` in `scene` (the
/// predicted one); `level` gives the circuit's markers.
sim_input cl_bot_command(cl_bot *bot, const sim_scene *scene, uint32_t self, const sim_level *level, uint32_t tick);

struct sim_game;
/// A game command for tick `tick` (keel/sim_game.h): every field of the
/// game's command schema drawn in its range, anew every 16 ticks (a bot
/// presses a game's buttons as a player would, now and then), the same for
/// the same seed and tick. `command` holds `size` bytes (the schema's struct
/// size at least; padding is zeroed). False when it is too small or the game
/// has no command. An arena bot instead presses what its cl_bot_command for
/// the same tick decided ("fire_rail", "fire_rocket"; every other field 0):
/// call cl_bot_command first.
bool cl_bot_game_command(const cl_bot *bot, const struct sim_game *game, uint32_t tick, void *command, size_t size);

/// The value of the field `name` (element 0) in `data`, a struct of the
/// schema `schema` (a sim_game_def's command, character or state); `absent`
/// when there is no such field or `data` is NULL. How the arena bot reads a
/// game it knows only by its field names.
int64_t cl_bot_game_value(const sim_game_schema *schema, const void *data, const char *name, int64_t absent);

/// Whether the arena mode fights in `game`: its command has a BOOL field
/// "fire_rail" or "fire_rocket" (keel-arena's). False for NULL.
bool cl_bot_game_fights(const struct sim_game *game);

#ifdef __cplusplus
}
#endif

#endif
