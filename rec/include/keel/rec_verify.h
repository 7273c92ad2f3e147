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

#include <keel/rec.h>
#include <keel/sim_world.h>

/// Where two runs part.
typedef struct rec_divergence {
    bool found;
    uint32_t tick;       ///< the tick whose result differs (states after it)
    uint32_t character;  ///< id of the first differing character; 0 when only the world hash differs
    uint32_t characters_differing;
    bool field_known;    ///< field, recorded and other hold values
    char field[48];      ///< first differing field ("velocity.x")
    int64_t recorded;    ///< its value in the (first) recording
    int64_t other;       ///< its value re-simulated here (verify) or in the second recording (diff)
    char detail[512];    ///< one line of text for people: all of the above, and what else differs
} rec_divergence;

typedef struct rec_verify_config {
    uint32_t threads; ///< 1 or more; > 1 verifies keyframe-to-keyframe spans in parallel
    /// Called from the calling thread now and then (may be NULL).
    void (*progress)(void *ctx, uint64_t ticks_done, uint64_t ticks_total);
    void *progress_ctx;
} rec_verify_config;

rec_verify_config rec_default_verify_config(void);

typedef struct rec_verify_stats {
    uint64_t ticks;
    uint64_t character_ticks;
    uint64_t elapsed_ns; ///< wall time of the re-simulation (for benchmarks; never asserted)
} rec_verify_stats;

/// Verify a scene recording on `world` (built from the level the header
/// names; the caller checked its digest). Returns REC_EXIT_MATCH,
/// REC_EXIT_DIVERGED (with *div filled) or REC_EXIT_BAD_FILE (with *err).
int rec_verify(rec_file *f, const sim_world *world, const rec_verify_config *config, rec_divergence *div,
               rec_verify_stats *stats, rec_error *err);

#endif
