// keel benchmarks: the most a machine gives one scene's work on N threads
// (see bench_ceiling.c). MIT licence, see LICENSE.
#ifndef KEEL_BENCH_CEILING_H
#define KEEL_BENCH_CEILING_H

#include "bench_crowd.h"

#define BENCH_CEILING_MAX_THREADS 8
#define BENCH_CEILING_MAX_ROUNDS 51
#define BENCH_CEILING_TICKS 32u ///< each side of a round, as bench_move and bench_parallel take it
#define BENCH_CEILING_ROUNDS 7u ///< the rounds they take the median of

/// N independent scenes, one per thread, against one alone.
typedef struct bench_ceiling {
    double median, min, max; ///< N x alone time / together time, over the rounds
    uint32_t rounds, ticks;  ///< rounds of `ticks` ticks each
} bench_ceiling;

/// The ceiling for `count` characters of bench_spawn_crowd's crowd on
/// `threads` threads (2..BENCH_CEILING_MAX_THREADS): `rounds` rounds
/// (1..BENCH_CEILING_MAX_ROUNDS) of `ticks` ticks, alone then together. False
/// (with a message on stderr) when setting up failed or the scenes differed.
bool bench_scene_ceiling(const char *prog, const sim_level *level, const sim_world *w, bool rooms, uint32_t count,
                         uint32_t threads, uint32_t ticks, uint32_t rounds, bench_ceiling *out);

#endif
