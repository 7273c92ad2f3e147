// keel-sim: declarations shared by the scenario runner's files. MIT licence, see LICENSE.
//
// The program is split so that a kind of simulated entity is one ks_mode
// (characters, the default, and probes); options, level loading, spawn points
// and number formatting are shared around it.
#ifndef KEEL_SIM_TOOL_H
#define KEEL_SIM_TOOL_H

#include <stdio.h>

#include <keel/sim_hash.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "ks_common.h"

#define KS_EXIT_OK 0
#define KS_EXIT_FAILURE 1
#define KS_EXIT_USAGE 2

/// Most --spawn points accepted.
#define KS_MAX_SPAWNS 1024
/// Largest spawn coordinate (feet, each axis): the character range, where
/// sim_char_spawn and the mover clamp feet (SIM_MOVE_POSITION_LIMIT, 4016 m).
/// Every spawn point keel-sim uses (--spawn, markers, seeded) is inside it.
#define KS_SPAWN_LIMIT SIM_MOVE_POSITION_LIMIT
/// Most characters (and probes). Platform ids start above it, so the two
/// never share an id (the scene requires that).
#define KS_MAX_CHARACTERS 100000u
/// Most --threads (KEEL_JOBS_MAX_THREADS).
#define KS_MAX_THREADS 64u

// ---- options (options.c) -------------------------------------------------------

typedef enum ks_level_kind {
    KS_LEVEL_BUILTIN,
    KS_LEVEL_GENERATED,
    KS_LEVEL_OBJ,
} ks_level_kind;

typedef enum ks_format {
    KS_FORMAT_JSONL,
    KS_FORMAT_CSV,
} ks_format;

typedef enum ks_mode_kind {
    KS_MODE_CHARACTERS,
    KS_MODE_PROBES,
} ks_mode_kind;

/// Most --set options.
#define KS_MAX_SETTING_CHANGES 16

/// One --set NAME=VALUE: a Q16.16 movement setting (ks_settings_apply).
typedef struct ks_setting_change {
    uint32_t index; ///< into the table of settings --set knows
    sim_fx value;
} ks_setting_change;

typedef struct ks_options {
    ks_mode_kind mode;
    ks_level_kind level_kind;
    const char *level_name; ///< "builtin", "generated" or the OBJ path
    const char *scale;      ///< OBJ metres per file unit, decimal text
    char up_axis;           ///< 'y' or 'z'
    uint32_t generate_triangles;
    uint32_t ticks;
    uint32_t characters;
    uint64_t seed;
    int32_t shape_type;             ///< sim_shape_type
    sim_vec3 spawns[KS_MAX_SPAWNS]; ///< feet points from --spawn, in order given
    uint32_t spawn_count;
    bool random_spawns; ///< ignore the level's spawn markers
    ks_format format;
    uint32_t rate; ///< ticks per second
    bool quiet;
    const char *input_path; ///< --input, NULL for random inputs
    bool platforms;
    bool edge_guard;
    // --record: the scene recording (docs/keel-replay.md).
    const char *record_path;    ///< NULL: no recording
    uint32_t keyframe_interval; ///< ticks between keyframes (1 with --record-full)
    bool record_compress;       ///< false with --no-compress
    // --sync-test [K]: the rollback check (synctest.c).
    uint32_t sync_depth; ///< K, the deepest rollback; 0: no sync test
    // --set NAME=VALUE: movement settings changed from their defaults.
    ks_setting_change settings_changes[KS_MAX_SETTING_CHANGES];
    uint32_t settings_change_count;
    // --threads N: the scene's moves on N threads (keel_jobs); the output
    // is the same for every N.
    uint32_t threads;
    // --game NAME|PATH (app/keel_game.h): the game the characters play;
    // main loads it into `game` before the mode starts (NULL: no game).
    const char *game_spec;
    const struct sim_game *game;
} ks_options;

typedef enum ks_parse_status {
    KS_PARSE_RUN,   ///< options are valid: run
    KS_PARSE_HELP,  ///< --help was printed: exit 0
    KS_PARSE_ERROR, ///< a message (naming the option, pointing to --help) went to stderr: exit 2
} ks_parse_status;

ks_parse_status ks_parse_options(int argc, char **argv, ks_options *out);
void ks_print_usage(FILE *f);

/// The movement settings of a characters run: the defaults, the --rate and
/// --shape, then every --set in the order given.
sim_move_settings ks_settings_make(const ks_options *opt);

/// Exact decimal text ("-1.25", "3", "0.000015") to the nearest sim_fx (ties
/// away from zero), without floating point. Stops at the first character that
/// cannot continue the number and stores it in *end. False when there are no
/// digits, more than 18 fraction digits, or |value| >= 32768.
bool ks_parse_fx(const char *s, const char **end, sim_fx *out);

// ---- the stage: level, world and spawn points (stage.c) ----------------------
// (Named "stage" rather than "scene" so it is not confused with sim_scene,
// which the characters mode runs on it.)

typedef struct ks_stage {
    sim_level level;
    sim_map map; ///< a .map level's entities (empty for others): --platforms adds its movers and water
    sim_world *world;
    sim_world_stats stats;
    sim_shape shape; ///< the probes' shape
    sim_fx dt;       ///< one tick in seconds
    uint64_t seed;
    /// Feet points from --spawn or the level's spawn* markers; empty when
    /// spawns are found by raycasting.
    sim_vec3 *fixed_spawns;
    uint32_t fixed_spawn_count;
    /// Outside this box an entity is lost and respawns (keeps coordinates
    /// far inside SIM_WORLD_LIMIT however long a run is).
    sim_aabb keep_bounds;
} ks_stage;

/// Clearance between a spawned probe and the floor it stands on, and the
/// skin the probes keep from geometry.
#define KS_SKIN SIM_FX_MM(5)

/// Loads the level and builds the world. On failure prints the error to
/// stderr and returns KS_EXIT_FAILURE; KS_EXIT_OK on success.
int ks_stage_load(ks_stage *stage, const ks_options *opt);
void ks_stage_free(ks_stage *stage);
/// Centre of probe `id`'s spawn: the feet point raised by half the shape's
/// height plus the skin. Deterministic in (stage, seed, id).
sim_vec3 ks_stage_probe_spawn(const ks_stage *stage, uint32_t id);
/// How the seeded spawn search went (all zero when fixed points were used).
/// The counters are deterministic work measures, not times.
typedef struct ks_spawn_report {
    bool seeded;       ///< the seeded search ran
    bool full;         ///< it stopped searching: the level is full
    uint32_t on_floor; ///< characters placed on a floor
    uint32_t overflow; ///< characters placed above the level instead
    uint64_t lines;    ///< vertical lines cast
    uint64_t compared; ///< spawn points compared for the spacing
} ks_spawn_report;

/// Feet points for characters 1..count (out[i] is character i + 1's), for a
/// character whose standing shape is `shape`, all in the character range.
/// Deterministic in (stage, seed, and the ids), and character i's point
/// depends only on characters below it. False when memory runs out.
bool ks_stage_character_spawns(const ks_stage *stage, sim_shape shape, sim_fx walkable_ny, bool random_spawns,
                               uint32_t count, sim_vec3 *out, ks_spawn_report *report);

// ---- input files (input.c) ------------------------------------------------------

typedef struct ks_command {
    uint32_t id;
    sim_input input;
} ks_command;

/// Commands of an --input file sorted by (tick, character).
typedef struct ks_script {
    ks_command *commands;
    size_t count;
    size_t next; ///< first command not yet used
} ks_script;

/// Reads and validates an input file for characters 1..characters. On error
/// prints "keel-sim: FILE:LINE: what" (or "keel-sim: FILE: what") to stderr
/// and returns KS_EXIT_FAILURE, leaving *out empty.
int ks_script_load(const char *path, uint32_t characters, ks_script *out);
void ks_script_free(ks_script *script);

// ---- recording (record.c, on keel/rec.h) ----------------------------------------------

typedef struct ks_recorder ks_recorder;

/// Start the recording of `scene` (its initial state now) with the
/// settings it runs; NULL after printing why.
ks_recorder *ks_record_open(const ks_stage *stage, const ks_options *opt, const sim_scene *scene,
                            const sim_move_settings *settings);
/// A command given for the coming step (in id order), with its game command
/// packed (sim_game_pack_command; NULL without a game).
void ks_record_command(ks_recorder *r, uint32_t id, const sim_input *in, const uint8_t *game_command);
/// Tick `tick` has been stepped: record it with its commands and the
/// respawns of the tick before (as leaves and joins).
void ks_record_tick(ks_recorder *r, uint32_t tick, const sim_scene *after);
/// A character put back at its spawn point after the step just recorded.
void ks_record_respawn(ks_recorder *r, const sim_char_state *joined);
/// Finish and close; KS_EXIT_OK, or KS_EXIT_FAILURE after printing why.
int ks_record_close(ks_recorder *r);

// ---- the sync test (synctest.c, --sync-test) -------------------------------------------

/// The deepest rollback --sync-test accepts, and its default: GGPO's
/// prediction window (8 ticks, 125 ms at 64 Hz) covers the usual netplay.
#define KS_SYNC_MAX_DEPTH 32
#define KS_SYNC_DEFAULT_DEPTH 8

typedef struct ks_sync ks_sync;

/// Start checking the run's scene `run` (its characters all added) with
/// rollbacks of up to `depth` ticks. Takes all its memory here: a ring of
/// `depth` saved states, commands and respawns, and two scenes. NULL after
/// printing why.
ks_sync *ks_sync_open(const sim_scene *run, const sim_world *world, const sim_move_settings *settings, uint32_t depth);
/// Before a tick's commands: save the run's state into the ring and check
/// that a scene restored from it equals the run. False after printing the
/// mismatch.
bool ks_sync_begin(ks_sync *y, const sim_scene *run);
/// A command given to the run for this tick, with the game command struct
/// the run was given with it (sim_scene_set_command; NULL: none, the run
/// took sim_scene_set_input). The struct is SIM_GAME_COMMAND_MAX_BYTES.
void ks_sync_command(ks_sync *y, uint32_t id, const sim_input *in, const void *game_command);
/// A respawn done after this tick's step (a remove, then an add of `joined`).
void ks_sync_respawn(ks_sync *y, const sim_char_state *joined);
/// After the tick (step and respawns): the copy restored at ks_sync_begin
/// takes the same tick, and a scene rolled back k ticks (1..depth, varied)
/// re-simulates them; both must equal the run. False after printing the
/// tick, the depth and the characters and fields that differ.
bool ks_sync_end(ks_sync *y, const sim_scene *run);
/// One line: ticks checked, rollbacks, re-simulated ticks.
void ks_sync_summary(const ks_sync *y, FILE *f);
void ks_sync_free(ks_sync *y);

// ---- output helpers (output.c) ------------------------------------------------------

/// Decimal metres with six fraction digits, rounded to nearest (ties away
/// from zero) by integer arithmetic: "1.250000", "-0.000015".
void ks_format_fx(char *buf, size_t size, sim_fx v);
/// The exact decimal value of a Q16.16 number (every one has a finite
/// decimal expansion of at most 16 fraction digits), trailing zeros dropped:
/// "1.25", "-4", "0.0000152587890625". Needs 24 bytes.
void ks_format_fx_exact(char *buf, size_t size, sim_fx v);

typedef struct ks_writer {
    FILE *f;
    ks_format format;
} ks_writer;

void ks_write_final(const ks_writer *w, uint64_t state_hash);

// ---- modes (mode_*.c) -----------------------------------------------------------

/// A kind of simulated entity. The runner owns the loop and the final hash;
/// a mode owns its entities, how one tick moves them, their rows and the
/// state hash.
typedef struct ks_mode {
    const char *name;
    /// NULL on failure, after printing why (exit 1). `script` is the --input
    /// file's commands (empty without one); the mode takes them over.
    void *(*create)(const ks_stage *stage, const ks_options *opt, ks_script *script);
    /// One tick; KS_EXIT_FAILURE (after printing why) stops the run.
    int (*step)(void *state, const ks_stage *stage);
    /// Hash of the whole state after `tick` ticks.
    uint64_t (*hash)(const void *state, uint64_t tick);
    void (*write_header)(const void *state, const ks_writer *w);
    /// The rows of one tick; `hash` is hash(state, tick).
    void (*write_tick)(const void *state, const ks_writer *w, uint64_t tick, uint64_t hash);
    /// Counters of the whole run (one line, for stderr).
    void (*summary)(const void *state, FILE *f);
    /// After the last tick, or after a step failed (`completed` false) (may
    /// be NULL): finish what the run writes besides stdout (the --record
    /// file, the --sync-test verdict). KS_EXIT_OK, or KS_EXIT_FAILURE after
    /// printing why.
    int (*finish)(void *state, bool completed);
    void (*destroy)(void *state);
} ks_mode;

extern const ks_mode ks_mode_probes;
extern const ks_mode ks_mode_characters;

#endif
