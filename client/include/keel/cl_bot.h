// keel: headless bots that drive a client's character. MIT licence.
//
// A bot looks at the predicted scene (its own character and the others) and
// makes the command for the next tick. Client code, not simulation: it may
// use floating point to aim, since only the integer command it produces
// reaches the simulation.
#ifndef KEEL_CL_BOT_H
#define KEEL_CL_BOT_H

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
    CL_BOT_MODE_COUNT = 5,
} cl_bot_mode;

/// "random", "circuit", "pusher", "idle", "platforms"; -1 for an unknown name.
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
/// has no command.
bool cl_bot_game_command(const cl_bot *bot, const struct sim_game *game, uint32_t tick, void *command, size_t size);

#ifdef __cplusplus
}
#endif

#endif
