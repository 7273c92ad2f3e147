// keel: re-simulating recordings: verify one against this build, diff two.
// MIT licence, see LICENSE.
//
// verify: rebuild the scene from the header and the initial state, apply each
// tick's recorded leaves, joins and commands, step, and compare the world hash
// and every character's hash with the recorded ones. The first tick that
// differs is reported with the character and, when the recording holds that
// tick's full state (a keyframe, or debug mode), the field with both values.
// With threads, every thread starts from a keyframe (restored exactly, so the
// result is the same as one thread's).
//
// diff: two recordings of the same inputs (two builds, a changed setting, a
// server and a client) compared tick by tick.
#ifndef KEEL_REC_VERIFY_H
#define KEEL_REC_VERIFY_H

#include <stdio.h>

#include <keel/rec.h>
#include <keel/sim_world.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Where two runs part.
typedef struct rec_divergence {
    bool found;
    uint32_t tick;      ///< the tick whose result differs (states after it)
    uint32_t character; ///< id of the first differing character; 0 when only the world hash differs
    uint32_t characters_differing;
    bool field_known; ///< field, recorded and other hold values
    char field[48];   ///< first differing field ("velocity.x")
    int64_t recorded; ///< its value in the (first) recording
    int64_t other;    ///< its value re-simulated here (verify) or in the second recording (diff)
    char detail[512]; ///< one line of text for people: all of the above, and what else differs
} rec_divergence;

typedef struct rec_verify_config {
    /// 1 or more; > 1 verifies keyframe-to-keyframe spans in parallel (at most
    /// 256; 1 with a compiler that has no <stdatomic.h>)
    uint32_t threads;
    /// Called from the calling thread now and then (may be NULL).
    void (*progress)(void *ctx, uint64_t ticks_done, uint64_t ticks_total);
    void *progress_ctx;
} rec_verify_config;

rec_verify_config rec_default_verify_config(void);

typedef struct rec_verify_stats {
    uint64_t ticks;
    uint64_t character_ticks;
    uint64_t elapsed_ns; ///< wall time of the re-simulation (for benchmarks; never asserted)
    uint32_t threads;    ///< threads it ran on: fewer than asked with fewer spans, or where no
                         ///< thread can be started (WebAssembly without threads, tcc): then 1
} rec_verify_stats;

/// Verify a scene recording on `world` (built from the level the header
/// names; the caller checked its digest). Returns REC_EXIT_MATCH,
/// REC_EXIT_DIVERGED (with *div filled) or REC_EXIT_BAD_FILE (with *err).
int rec_verify(rec_file *f, const sim_world *world, const rec_verify_config *config, rec_divergence *div,
               rec_verify_stats *stats, rec_error *err);

// ---- diff ------------------------------------------------------------------------

/// The fields of a command (sim_input), as diff names them ("input.forward").
const rec_field *rec_input_fields(uint32_t *count);
int64_t rec_input_field_value(const sim_input *in, uint32_t index);

/// What a differing value is a value of.
typedef enum rec_value_kind {
    REC_VALUE_STATE = 1,    ///< `field` indexes rec_state_fields
    REC_VALUE_INPUT = 2,    ///< `field` indexes rec_input_fields (the command of the tick)
    REC_VALUE_PRESENCE = 3, ///< the character exists (1) or not (0); `field` is 0
    REC_VALUE_JOIN = 4,     ///< the character joins at the start of the tick (1) or not (0)
    REC_VALUE_LEAVE = 5,    ///< the character leaves at the start of the tick (1) or not (0)
    REC_VALUE_COMMAND = 6,  ///< the character has a command this tick (1) or not (0)
    REC_VALUE_GAME = 7,     ///< a game field (`name`: "game.health"; character 0: the game-wide state)
} rec_value_kind;

typedef struct rec_diff_value {
    uint32_t character;
    rec_value_kind kind;
    uint32_t field; ///< REC_VALUE_GAME: the field's index in its schema
    int64_t a, b;   ///< in the first recording, in the second (or re-simulated here)
    /// REC_VALUE_GAME: the field's name as diff prints it, from the game's
    /// schema ("game.health", "game.entity.ttl[3]", "game.out" for out of
    /// collisions, "game.command.fire"), and how to print its values.
    char name[56];
    rec_field_type type;
} rec_diff_value;

/// Why two runs part at the divergent tick (the root cause when several
/// apply: events, then inputs, then results).
typedef enum rec_diff_kind {
    REC_DIFF_NONE = 0,   ///< equal as far as both go
    REC_DIFF_START = 1,  ///< different initial states (or first ticks)
    REC_DIFF_EVENTS = 2, ///< different joins or leaves at the start of the tick
    REC_DIFF_INPUTS = 3, ///< different commands at the start of the tick
    REC_DIFF_STATE = 4,  ///< same inputs, different results (hashes)
} rec_diff_kind;

#define REC_DIFF_MAX_CHARACTERS 64u
#define REC_DIFF_MAX_VALUES 128u

/// A diff's findings at the first divergent tick. `div` is the summary
/// (tick, first character, first field, one line of text); the lists say
/// which characters differ and which fields, with both values.
typedef struct rec_diff_report {
    rec_diff_kind kind;
    rec_divergence div;
    /// Characters whose results (hash or presence) differ after the tick,
    /// ascending: the first REC_DIFF_MAX_CHARACTERS of div.characters_differing.
    uint32_t characters[REC_DIFF_MAX_CHARACTERS];
    uint32_t character_count;
    /// Differing values in (character, kind, field) order; for REC_DIFF_STATE
    /// the states at the start of `values_tick`.
    rec_diff_value values[REC_DIFF_MAX_VALUES];
    uint32_t value_count;
    bool values_truncated;   ///< more differed than the list holds
    bool values_exact;       ///< the state right after the divergent tick (else a later keyframe's: a hint)
    uint32_t values_tick;    ///< the tick whose start state the values are of
    char values_source[160]; ///< where the states came from ("keyframes", "A re-simulated here", ...)
    uint64_t hash_a, hash_b; ///< world hashes after the divergent tick
    uint32_t ticks_compared; ///< ticks equal before the divergence (or in all, when none)
    uint32_t ticks_a, ticks_b;
    char notes[512]; ///< header differences, lengths: informational lines ('\n'-separated)
} rec_diff_report;

/// Compare two scene recordings of the same session tick by tick: the initial
/// states, then per tick the joins and leaves, the commands, the world hash
/// and every character's hash. At the first divergent tick, the states after
/// it come from keyframes when both recordings hold one at tick + 1, else
/// from re-simulating a side here on `world` (from its last keyframe or its
/// initial state, accepted only when every recorded hash of that side is
/// reproduced, so the values are the recording's own). `world` is the level
/// of `a` (may be NULL: no re-simulation); `b` is re-simulated on it only when
/// its level digest is the same. Returns REC_EXIT_MATCH, REC_EXIT_DIVERGED or
/// REC_EXIT_BAD_FILE (with *err; err->message names the file as "A" or "B").
int rec_diff(rec_file *a, rec_file *b, const sim_world *world, rec_diff_report *report, rec_error *err);

/// A recording against a fresh re-simulation here: rec_verify's comparison
/// with diff's report ("A" is the recording, "B" this build).
int rec_diff_resim(rec_file *a, const sim_world *world, const rec_verify_config *config, rec_diff_report *report,
                   rec_verify_stats *stats, rec_error *err);

/// Print a report: one line per differing value,
///   tick 1234 character 7 velocity.x: 3.250000 (0x00034000) vs 3.249985 (0x00033fff)
/// after a summary line. Names label the two sides in the summary.
void rec_diff_print_text(FILE *out, const rec_diff_report *r, const char *name_a, const char *name_b);
/// The same as one JSON object (and a newline).
void rec_diff_print_json(FILE *out, const rec_diff_report *r, const char *name_a, const char *name_b);

/// A value as diff prints it: Q16.16 as "3.250000 (0x00034000)", integers as
/// "7 (0x00000007)". Integer arithmetic only.
void rec_format_value(char *buf, size_t size, rec_field_type type, int64_t v);

/// Element `element` (0 for a field that is no array) of a game field
/// (keel/sim_game.h) in a struct of its schema at `data`, widened as diff
/// names it: BOOL 0 or 1, INT sign-extended, UINT, FX raw Q16.16, ANGLE
/// 0..65535. The caller keeps `element` below the field's count.
int64_t rec_game_field_value(const sim_game_field *field, const void *data, uint32_t element);

#ifdef __cplusplus
}
#endif

#endif
