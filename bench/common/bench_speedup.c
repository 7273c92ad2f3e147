// keel benchmarks: one scene on the calling thread against the same scene
// with its loops on a keel_jobs pool. MIT licence, see LICENSE.
//
// Two scenes start alike and get the same commands; every tick steps both,
// one after the other (which goes first alternates), so a machine whose
// load changes during the run slows both alike, and their hashes are
// compared after every tick. Each scene's executor is wrapped in a timer:
// the time inside it (the snapshot, the moves, the separation's scans: what
// runs on the pool) is apart from the rest of the step, which stays on the
// calling thread, and the time inside the work items is summed.
//
// With by_thread, every item is also timed alone, in both scenes, and kept
// for the step: loop L of a step and item k are the same work in both
// scenes (the same characters in the same state), so the N-thread scene's
// items can be summed by the thread that ran them against the same items'
// times in the one-thread scene. That tells a thread that runs the work
// slower than the caller does (a worker whose core went cold while it
// slept) from a loss shared by all (memory, the machine).
#define _POSIX_C_SOURCE 200809L

#include "bench_speedup.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bench_speedup_options bench_speedup_default_options(void)
{
    bench_speedup_options o = {0u, 2.0, false};
    return o;
}

#define LOG_LOOPS 16u   // loops of a step followed (a step runs 4 to 6)
#define LOG_ITEMS 1024u // items of a loop followed (1,000 characters make 250 of 4)

// One step's items, by loop.
typedef struct item_log {
    uint32_t loops;                    // executor calls in this step so far
    uint32_t count[LOG_LOOPS];         // items of each
    uint64_t ns[LOG_LOOPS][LOG_ITEMS]; // each item's time
    uint8_t on_worker[LOG_LOOPS][LOG_ITEMS];
} item_log;

// A counter on its own cache line, so that threads adding to different ones
// do not slow each other.
typedef struct padded_ns {
    _Atomic uint64_t ns;
    char pad[64 - sizeof(uint64_t)];
} padded_ns;

// An executor that times what runs in it: the pool's when there is one,
// else the plain loop on this thread.
typedef struct timed_exec {
    keel_jobs *jobs;  // NULL: one range on this thread
    pthread_t caller; // the thread that steps the scene
    item_log *log;    // with by_thread, else NULL
    double seconds;   // inside the executor
    sim_task_fn fn;   // the call in flight
    void *task;
    padded_ns work[2]; // summed over the items: [0] the caller's, [1] the workers'
} timed_exec;

static void timed_range(void *user, uint32_t begin, uint32_t end)
{
    timed_exec *e = user;
    sim_task_fn fn = e->fn;
    void *task = e->task;
    int worker = !pthread_equal(pthread_self(), e->caller);
    uint64_t sum = 0;
    if (!e->log) {
        uint64_t t0 = bench_now_ns();
        fn(task, begin, end);
        sum = bench_now_ns() - t0;
    } else {
        uint32_t loop = e->log->loops; // set before the loop began
        for (uint32_t k = begin; k < end; k++) {
            uint64_t t0 = bench_now_ns();
            fn(task, k, k + 1u);
            uint64_t d = bench_now_ns() - t0;
            sum += d;
            if (loop < LOG_LOOPS && k < LOG_ITEMS) {
                e->log->ns[loop][k] = d;
                e->log->on_worker[loop][k] = (uint8_t)worker;
            }
        }
    }
    atomic_fetch_add_explicit(&e->work[worker].ns, sum, memory_order_relaxed);
}

static void timed_run(void *user, uint32_t count, sim_task_fn fn, void *task)
{
    timed_exec *e = user;
    e->fn = fn;
    e->task = task;
    if (e->log && e->log->loops < LOG_LOOPS)
        e->log->count[e->log->loops] = count;
    double t0 = bench_now_s();
    if (e->jobs)
        keel_jobs_parallel_for(e->jobs, count, timed_range, e);
    else
        timed_range(e, 0, count);
    e->seconds += bench_now_s() - t0;
    if (e->log)
        e->log->loops++;
}

static uint64_t work_ns(timed_exec *e) { return atomic_load(&e->work[0].ns) + atomic_load(&e->work[1].ns); }

typedef struct side {
    sim_scene *scene;
    timed_exec exec;
    double seconds; // whole steps
} side;

// The step's items of the N-thread scene (log n) by the thread that ran
// them, against the same items of the one-thread scene (log one).
static void add_by_thread(const item_log *one, const item_log *n, bench_speedup *out)
{
    uint32_t loops = one->loops < n->loops ? one->loops : n->loops;
    for (uint32_t l = 0; l < loops && l < LOG_LOOPS; l++) {
        uint32_t items = one->count[l] < n->count[l] ? one->count[l] : n->count[l];
        for (uint32_t k = 0; k < items && k < LOG_ITEMS; k++) {
            int w = n->on_worker[l][k];
            out->by_thread1[w] += (double)one->ns[l][k] * 1e-9;
            out->by_threadN[w] += (double)n->ns[l][k] * 1e-9;
        }
    }
}

bool bench_scene_speedup(const char *prog, const sim_level *level, const sim_world *w, bool rooms, uint32_t count,
                         keel_jobs *jobs, const bench_speedup_options *opt, bench_speedup *out)
{
    memset(out, 0, sizeof *out);
    sim_move_settings s = sim_move_default_settings();
    side *sd = calloc(2, sizeof *sd);
    item_log *logs = opt->by_thread ? calloc(2, sizeof *logs) : NULL;
    ks_walker *walkers = calloc(count, sizeof *walkers);
    sim_char_state *chars = calloc(count, sizeof *chars);
    bool ok = sd && (logs || !opt->by_thread) && walkers && chars;
    if (ok) {
        sd[0].scene = sim_scene_create(w, &s, count);
        sd[1].scene = sim_scene_create(w, &s, count);
        ok = sd[0].scene && sd[1].scene && bench_spawn_crowd(prog, level, w, rooms, &s, count, chars, walkers, NULL);
    }
    if (!ok) {
        fprintf(stderr, "%s: cannot set up the scenes\n", prog);
        goto done;
    }
    for (uint32_t i = 0; i < count; i++)
        for (int k = 0; k < 2; k++)
            sim_scene_add_character(sd[k].scene, &chars[i]);
    sim_scene *both[2] = {sd[0].scene, sd[1].scene};
    out->cores_before = bench_available_cores(jobs);
    sd[1].exec.jobs = jobs;
    for (int k = 0; k < 2; k++) {
        sd[k].exec.caller = pthread_self();
        sd[k].exec.log = logs ? &logs[k] : NULL;
        sim_scene_set_parallel(sd[k].scene, timed_run, &sd[k].exec, opt->batch);
    }

    uint64_t ticks = 0, timed = 0;
    out->same = true;
    for (;;) {
        bench_scene_commands(both, 2, w, walkers, (uint32_t)ticks);
        bool measure = ticks >= BENCH_WARMUP_TICKS;
        if (ticks == BENCH_WARMUP_TICKS)
            for (int k = 0; k < 2; k++) {
                sd[k].exec.seconds = 0;
                atomic_store(&sd[k].exec.work[0].ns, 0);
                atomic_store(&sd[k].exec.work[1].ns, 0);
            }
        for (int k = 0; k < 2; k++) {
            side *x = &sd[(ticks + (uint64_t)k) % 2]; // alternate which goes first
            if (x->exec.log)
                x->exec.log->loops = 0;
            double t0 = bench_now_s();
            sim_scene_step(x->scene);
            if (measure)
                x->seconds += bench_now_s() - t0;
        }
        if (logs && measure)
            add_by_thread(&logs[0], &logs[1], out);
        ticks++;
        timed += measure;
        if (sim_scene_hash(sd[0].scene) != sim_scene_hash(sd[1].scene)) {
            out->same = false;
            out->mismatch_tick = ticks;
            break;
        }
        if (timed >= BENCH_MIN_TICKS && sd[0].seconds >= opt->min_seconds)
            break;
    }
    out->cores_after = bench_available_cores(jobs);
    out->ticks = timed;
    out->no_executor = sd[0].exec.seconds == 0;
    out->seconds1 = sd[0].seconds;
    out->secondsN = sd[1].seconds;
    out->moves1 = sd[0].exec.seconds;
    out->movesN = sd[1].exec.seconds;
    out->work1 = (double)work_ns(&sd[0].exec) * 1e-9;
    out->workN = (double)work_ns(&sd[1].exec) * 1e-9;
done:
    if (sd) {
        sim_scene_destroy(sd[0].scene);
        sim_scene_destroy(sd[1].scene);
    }
    free(sd);
    free(logs);
    free(walkers);
    free(chars);
    return ok;
}
