// keel-sim: declarations shared by the scenario runner's files. MIT licence, see LICENSE.
//
// The program is split so that a new kind of simulated entity (the character
// mover of the next issue) is one more ks_mode: options, level loading,
// spawning, output and the state hash around it stay as they are.
#ifndef KEEL_SIM_TOOL_H
#define KEEL_SIM_TOOL_H

#include <stdio.h>

#include <keel/sim_hash.h>
#include <keel/sim_world.h>

#define KS_EXIT_OK 0
#define KS_EXIT_FAILURE 1
#define KS_EXIT_USAGE 2

/// Most --spawn points accepted.
#define KS_MAX_SPAWNS 1024
/// Largest --spawn coordinate: far enough inside SIM_WORLD_LIMIT that a shape
/// standing there, and its motion, stay inside it too.
#define KS_SPAWN_LIMIT SIM_FX_INT(3900)

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

typedef struct ks_options {
    ks_level_kind level_kind;
    const char *level_name; ///< "builtin", "generated" or the OBJ path
    const char *scale;      ///< OBJ metres per file unit, decimal text
    char up_axis;           ///< 'y' or 'z'
    uint32_t generate_triangles;
    uint32_t ticks;
    uint32_t characters;
    uint64_t seed;
    int32_t shape_type; ///< sim_shape_type
    sim_vec3 spawns[KS_MAX_SPAWNS]; ///< feet points from --spawn, in order given
    uint32_t spawn_count;
    ks_format format;
    uint32_t rate; ///< ticks per second
    bool quiet;
} ks_options;

typedef enum ks_parse_status {
    KS_PARSE_RUN,   ///< options are valid: run
    KS_PARSE_HELP,  ///< --help was printed: exit 0
    KS_PARSE_ERROR, ///< a message and the usage went to stderr: exit 2
} ks_parse_status;

ks_parse_status ks_parse_options(int argc, char **argv, ks_options *out);
void ks_print_usage(FILE *f);

/// Exact decimal text ("-1.25", "3", "0.000015") to the nearest sim_fx (ties
/// away from zero), without floating point. Stops at the first character that
/// cannot continue the number and stores it in *end. False when there are no
/// digits, more than 18 fraction digits, or |value| >= 32768.
bool ks_parse_fx(const char *s, const char **end, sim_fx *out);

// ---- random numbers (tool-side; never inside sim/) ---------------------------

/// splitmix64: one 64-bit state, full period, good enough mixing for test
/// motion, and trivially the same on every machine.
typedef struct ks_rng {
    uint64_t state;
} ks_rng;

static inline uint64_t ks_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static inline uint64_t ks_rng_next(ks_rng *r)
{
    r->state += UINT64_C(0x9E3779B97F4A7C15);
    return ks_mix64(r->state);
}
/// The stream of entity `id` for purpose `stream`: a function of (seed, id,
/// stream) only, so an entity's random numbers do not depend on how many other
/// entities exist or in which order they were created.
static inline ks_rng ks_rng_for(uint64_t seed, uint32_t id, uint32_t stream)
{
    ks_rng r = {ks_mix64(seed ^ ks_mix64(((uint64_t)stream << 32 | id) + 1))};
    return r;
}
/// Uniform integer in [lo, hi] (lo <= hi, hi - lo < 2^32; the modulo bias is
/// below 2^-32).
static inline int64_t ks_rng_range(ks_rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1u;
    return lo + (int64_t)(ks_rng_next(r) % span);
}

/// Random streams; new purposes get new numbers, existing ones never change.
enum {
    KS_STREAM_SPAWN = 1,
    KS_STREAM_MOTION = 2,
};

// ---- the scene: level, world and spawn points (scene.c) ----------------------

typedef struct ks_scene {
    sim_level level;
    sim_world *world;
    sim_world_stats stats;
    sim_shape shape;
    sim_fx dt;     ///< one tick in seconds
    uint64_t seed;
    /// Feet points from --spawn or the level's spawn* markers; empty when
    /// spawns are found by raycasting.
    sim_vec3 *fixed_spawns;
    uint32_t fixed_spawn_count;
    /// Outside this box an entity is lost and respawns (keeps coordinates
    /// far inside SIM_WORLD_LIMIT however long a run is).
    sim_aabb keep_bounds;
} ks_scene;

/// Clearance between a spawned shape and the floor it stands on, and the
/// skin the probes keep from geometry.
#define KS_SKIN SIM_FX_MM(5)

/// Loads the level and builds the world. On failure prints the error to
/// stderr and returns KS_EXIT_FAILURE; KS_EXIT_OK on success.
int ks_scene_load(ks_scene *scene, const ks_options *opt);
void ks_scene_free(ks_scene *scene);
/// Centre of entity `id`'s spawn: the feet point raised by half the shape's
/// height plus the skin. Deterministic in (scene, seed, id).
sim_vec3 ks_scene_spawn_center(const ks_scene *scene, uint32_t id);

// ---- modes (mode_*.c) -----------------------------------------------------------

/// One output row: an entity's state after a tick.
typedef struct ks_row {
    uint32_t id;
    sim_vec3 position; ///< shape centre
    sim_vec3 velocity;
    uint32_t flags; ///< bit i is the mode's flag_names[i]
} ks_row;

/// A kind of simulated entity. The runner owns the loop, the output and the
/// hash framing; a mode owns its entities' state and how one tick moves them.
typedef struct ks_mode {
    const char *name;
    const char *const *flag_names;
    int flag_count;
    /// NULL when memory runs out.
    void *(*create)(const ks_scene *scene, uint32_t count);
    void (*step)(void *state, const ks_scene *scene);
    uint32_t (*count)(const void *state);
    void (*row)(const void *state, uint32_t index, ks_row *out);
    /// Hash every field of every entity, in id order.
    uint64_t (*hash)(const void *state, uint64_t h);
    /// Counters of the whole run (one line, for stderr).
    void (*summary)(const void *state, FILE *f);
    void (*destroy)(void *state);
} ks_mode;

extern const ks_mode ks_mode_probes;

// ---- output (output.c) ----------------------------------------------------------

/// Decimal metres with six fraction digits, rounded to nearest (ties away
/// from zero) by integer arithmetic: "1.250000", "-0.000015".
void ks_format_fx(char *buf, size_t size, sim_fx v);

typedef struct ks_writer {
    FILE *f;
    ks_format format;
    const ks_mode *mode;
} ks_writer;

void ks_write_header(const ks_writer *w);
void ks_write_row(const ks_writer *w, uint64_t tick, const ks_row *row, uint64_t state_hash);
void ks_write_final(const ks_writer *w, uint64_t state_hash);

#endif
