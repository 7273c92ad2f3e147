// keel: a small pthread pool that runs parallel-for loops. MIT licence, see LICENSE.
//
// Made for sim_scene_set_parallel (keel_jobs_parallel_for has the shape of
// sim_parallel_for_fn, so it is passed as it is), but it knows nothing of the
// simulation. Each thread owns an equal contiguous share of [0, count) and
// runs it from the front in shrinking chunks; a thread whose share is done
// steals single items from the back of the others'. Which thread runs which
// item varies from run to run; callers whose results must not depend on that
// (the scene's moves) make each item independent of the others.
//
// The threads are made once in keel_jobs_create; a loop allocates nothing,
// wakes the workers, takes part itself and returns when every item is done.
// Between loops a worker watches for the next one (burning its core) for the
// pool's watch time, KEEL_JOBS_SPIN_NS unless set, before it sleeps on a
// condition variable, and the caller watches for up to KEEL_JOBS_SPIN_NS for
// the last items before it sleeps: loops that follow each other closely start
// without a wake-up (unless the pool has more threads than the machine has
// processors online: then nobody spins). One loop at a time: calls from
// several threads at once, or from inside an item, are not supported.
//
// The watch time is a trade. A worker that sleeps between a server's ticks
// leaves its core to others, and on a virtual machine it pays for that when
// it wakes: the same work items ran 12 to 24% slower on a worker that had
// slept between steps than on one thread, and 0 to 6% slower on one that
// stayed awake (bench_parallel --by-thread). A watch longer than
// the gap between steps (20 ms covers 64 Hz) keeps the workers awake, and
// their cores busy, for as long as the steps keep coming.
#ifndef KEEL_JOBS_H
#define KEEL_JOBS_H

#include <stdint.h>

/// Most threads a pool runs, the caller's included.
#define KEEL_JOBS_MAX_THREADS 64u
/// How long a thread watches (spins) for the next loop, or for the last
/// items of a loop, before it sleeps: 100 microseconds. The workers' watch
/// for the next loop can be set (keel_jobs_settings.watch_ns).
#define KEEL_JOBS_SPIN_NS 100000u
/// The longest watch a pool takes: 10 seconds.
#define KEEL_JOBS_WATCH_MAX_NS UINT64_C(10000000000)

typedef struct keel_jobs keel_jobs;

/// The work of one loop: items [begin, end) of `task` (the same type as
/// sim_task_fn).
typedef void (*keel_jobs_task_fn)(void *task, uint32_t begin, uint32_t end);

/// What a pool is made with.
typedef struct keel_jobs_settings {
    /// Threads that run each loop, the caller's included:
    /// 1..KEEL_JOBS_MAX_THREADS. Default 1.
    uint32_t threads;
    /// After a loop, how long a worker watches for the next one before it
    /// sleeps, in nanoseconds: 0 (sleep at once) to KEEL_JOBS_WATCH_MAX_NS.
    /// Default KEEL_JOBS_SPIN_NS. Ignored when the pool has more threads than
    /// the machine has processors online (nobody watches then).
    uint64_t watch_ns;
} keel_jobs_settings;

/// The defaults above.
keel_jobs_settings keel_jobs_default_settings(void);

/// A pool made with `settings`: the caller and threads - 1 workers run each
/// loop. NULL when a setting is out of range or a thread or memory cannot be
/// had (always for threads > 1 with a compiler that has no <stdatomic.h>,
/// such as tcc).
keel_jobs *keel_jobs_create_with(const keel_jobs_settings *settings);
/// keel_jobs_create_with the default settings but `threads`.
keel_jobs *keel_jobs_create(uint32_t threads);
/// Stops and joins the workers (between loops). NULL is ignored.
void keel_jobs_destroy(keel_jobs *jobs);
uint32_t keel_jobs_threads(const keel_jobs *jobs);

/// fn(task, begin, end) over disjoint ranges that cover [0, count) once each,
/// on the pool's threads, the caller's included; returns when all are done. `jobs` is a keel_jobs *
/// (void * so that the function is a sim_parallel_for_fn).
void keel_jobs_parallel_for(void *jobs, uint32_t count, keel_jobs_task_fn fn, void *task);

/// What the pool did since it was made (counts; all 0 with one thread or
/// without <stdatomic.h>).
typedef struct keel_jobs_stats {
    uint64_t loops;         // parallel_for calls shared with the workers
    uint64_t quick_joins;   // a worker saw a new loop while watching for it
    uint64_t sleeps;        // a worker slept waiting for a loop (woken by the caller or at the start)
    uint64_t quick_returns; // the caller saw the last worker leave while watching
    uint64_t caller_sleeps; // the caller slept waiting for a worker's last items
} keel_jobs_stats;
keel_jobs_stats keel_jobs_get_stats(const keel_jobs *jobs);

#endif
