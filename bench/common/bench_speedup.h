// keel benchmarks: one scene on the calling thread against the same scene
// with its loops on a keel_jobs pool (see bench_speedup.c). MIT licence, see
// LICENSE.
#ifndef KEEL_BENCH_SPEEDUP_H
#define KEEL_BENCH_SPEEDUP_H

#include "bench_crowd.h"

/// A watch (keel_jobs_settings.watch_ns) longer than the gap between steps
/// at 64 Hz: the pool's workers stay awake between steps.
#define BENCH_WATCH_AWAKE_NS UINT64_C(20000000)

/// How the two scenes are run.
typedef struct bench_speedup_options {
    uint32_t batch;     ///< characters per work item; 0: the scene's default
    double min_seconds; ///< of the one-thread scene's steps, at least (default 2)
    /// Call the executor's task one item at a time in both scenes and time
    /// each, to split the work by the thread that ran it (by_thread1/N).
    /// Off by default: a call per item also changes what is timed a little
    /// (a range of items runs each phase over all its characters in turn).
    bool by_thread;
} bench_speedup_options;

bench_speedup_options bench_speedup_default_options(void);

/// What the two scenes showed.
typedef struct bench_speedup {
    bool same;                 ///< the two scenes' hashes agreed on every tick
    bool no_executor;          ///< one work item a tick: the scene never called the executor
    uint64_t ticks;            ///< timed ticks
    uint64_t mismatch_tick;    ///< when !same: the tick after which they differed
    double seconds1, secondsN; ///< whole steps
    double moves1, movesN;     ///< inside the executor (the moves, the snapshot, the separation's scans)
    double work1, workN;       ///< summed over the work items
    /// With by_thread: the N-thread scene's work items by the thread that ran
    /// them ([0] the caller, [1] the workers), summed in the N-thread scene
    /// (by_threadN) and, for the same items, in the one-thread scene
    /// (by_thread1). The scenes do the same work item for item, so
    /// by_threadN[k] / by_thread1[k] is how much slower thread k ran it.
    double by_thread1[2], by_threadN[2];
    double cores_before, cores_after;
} bench_speedup;

/// Run the two scenes side by side (which steps first alternates every tick)
/// for opt->min_seconds of the one-thread scene and BENCH_MIN_TICKS ticks at
/// least, after BENCH_WARMUP_TICKS. False when setting up failed (out->same
/// then says nothing).
bool bench_scene_speedup(const char *prog, const sim_level *level, const sim_world *w, bool rooms, uint32_t count,
                         keel_jobs *jobs, const bench_speedup_options *opt, bench_speedup *out);

#endif
