// keel benchmark: sim_scene_step on several threads. MIT licence, see LICENSE.
//
// The speed-up of a scene whose loops run on a keel_jobs pool
// (sim_scene_set_parallel) over the same scene on one thread, for 1000
// characters (and 64) on the built-in level and on sauerbraten_zdm2.obj (when
// the shared levels folder is present), with bench_move's crowd: keel-sim's
// seeded random walk with the edge guard, spawns 1.2 m apart (inside rooms
// on the real map).
//
// The two scenes take turns each tick and their hashes are compared every
// tick (bench/common/bench_speedup.c): a difference is reported and fails
// the run. What runs in the executor (the snapshot, the moves, the
// separation's scans) is timed apart from the rest of the step (platforms,
// carrying, the sort, the separation's sums), which stays on the calling
// thread and bounds the speed-up (Amdahl). Each figure comes with the cores
// the machine gave the process just before and after it (see
// bench_available_cores) and with the machine's ceiling (bench_ceiling.c).
//
// Every figure is taken twice, with two pools that differ only in how long
// a worker watches for the next loop before it sleeps (keel_jobs_settings):
// the default 100 us, so the workers sleep between steps (here, while the
// one-thread scene steps), and 20 ms, so they stay awake through the gap.
// Doubles appear only to print times and rates.
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "common/bench_ceiling.h"
#include "common/bench_speedup.h"

static const uint32_t counts[] = {64, 1000};
#define COUNT_KINDS (sizeof counts / sizeof counts[0])

static bench_speedup_options opt;     // --batch, --seconds, --by-thread
static uint32_t only_count = 0;       // --characters: 0 for both counts
static const char *only_level = NULL; // --level: NULL for both levels
static uint32_t threads = 2;

// The pools: one per watch time.
static keel_jobs *pools[2];
static uint32_t pool_watch_us[2];
static int pool_count;

// One figure on one pool. Returns false when the two scenes differed (or
// setting up failed); *speedup gets the figure.
static bool bench_pool(const char *name, const sim_level *level, const sim_world *w, bool rooms, uint32_t count,
                       int pool, double *speedup)
{
    keel_jobs *jobs = pools[pool];
    bench_speedup f;
    keel_jobs_stats s0 = keel_jobs_get_stats(jobs);
    *speedup = 0;
    if (!bench_scene_speedup("bench_parallel", level, w, rooms, count, jobs, &opt, &f))
        return false;
    keel_jobs_stats s1 = keel_jobs_get_stats(jobs);
    if (!f.same) {
        printf("MISMATCH %s %" PRIu32 " characters: the hashes differ after tick %" PRIu64 "\n", name, count,
               f.mismatch_tick);
        return false;
    }
    if (f.no_executor) {
        printf("%-8s %6" PRIu32 " %8" PRIu32 " %6" PRIu64
               "  one work item a tick (batch >= characters): no executor call\n",
               name, count, pool_watch_us[pool], f.ticks);
        return true;
    }
    double per1 = (double)(f.ticks * count) / f.seconds1;
    double perN = (double)(f.ticks * count) / f.secondsN;
    double serial1 = f.seconds1 - f.moves1;
    double bound = f.seconds1 / (serial1 + f.moves1 / threads);
    double idle = 1.0 - f.workN / (f.movesN * threads);
    *speedup = f.seconds1 / f.secondsN;
    printf("%-8s %6" PRIu32 " %8" PRIu32 " %6" PRIu64
           " %12.0f %12.0f %8.2fx %7.2fx %7.3f %6.1f%% %6.2fx %6.3f %5.1f%% %5.2f/%.2f\n",
           name, count, pool_watch_us[pool], f.ticks, per1, perN, *speedup, f.moves1 / f.movesN,
           f.seconds1 * 1e3 / (double)f.ticks, 100.0 * serial1 / f.seconds1, bound, f.workN / f.work1, 100.0 * idle,
           f.cores_before, f.cores_after);
    printf("BENCH bench_parallel level=%s characters=%" PRIu32 " threads=%" PRIu32 " watch_us=%" PRIu32
           " metric=speedup value=%.3f moves=%.3f serial_share=%.4f work=%.3f idle=%.4f cores=%.2f/%.2f\n",
           name, count, threads, pool_watch_us[pool], *speedup, f.moves1 / f.movesN, serial1 / f.seconds1,
           f.workN / f.work1, idle, f.cores_before, f.cores_after);
    if (opt.by_thread && f.by_thread1[0] > 0) {
        printf("         work by thread (items timed one at a time): the caller's items x%.3f",
               f.by_threadN[0] / f.by_thread1[0]);
        if (f.by_thread1[1] > 0)
            printf(", the workers' x%.3f (%.0f%% of the work)", f.by_threadN[1] / f.by_thread1[1],
                   100.0 * f.by_thread1[1] / (f.by_thread1[0] + f.by_thread1[1]));
        printf(" of their time on one thread\n");
        printf("BENCH bench_parallel level=%s characters=%" PRIu32 " threads=%" PRIu32 " watch_us=%" PRIu32
               " metric=work_by_thread caller=%.3f workers=%.3f\n",
               name, count, threads, pool_watch_us[pool], f.by_threadN[0] / f.by_thread1[0],
               f.by_thread1[1] > 0 ? f.by_threadN[1] / f.by_thread1[1] : 0.0);
    }
    // The pool's own counts over the run (warm-up and the core checks
    // included): how often a loop found the workers asleep.
    uint64_t loops = s1.loops - s0.loops;
    printf("         pool: %" PRIu64 " loops (%.2f a tick), workers joined while watching %" PRIu64 ", slept %" PRIu64
           "; caller saw the last items while watching %" PRIu64 ", slept %" PRIu64 "\n",
           loops, f.ticks ? (double)loops / (double)(f.ticks + BENCH_WARMUP_TICKS) : 0.0,
           s1.quick_joins - s0.quick_joins, s1.sleeps - s0.sleeps, s1.quick_returns - s0.quick_returns,
           s1.caller_sleeps - s0.caller_sleeps);
    return true;
}

// Every pool's figure, then the ceiling.
static bool bench_count(const char *name, const sim_level *level, const sim_world *w, bool rooms, uint32_t count)
{
    double up[2] = {0, 0};
    bool ok = true;
    for (int p = 0; p < pool_count; p++)
        ok = bench_pool(name, level, w, rooms, count, p, &up[p]) && ok;
    bench_ceiling c;
    if (ok && threads <= BENCH_CEILING_MAX_THREADS &&
        bench_scene_ceiling("bench_parallel", level, w, rooms, count, threads, BENCH_CEILING_TICKS,
                            BENCH_CEILING_ROUNDS, &c)) {
        printf("         ceiling: %" PRIu32
               " independent scenes, one per thread, x%.2f over one alone (median of %" PRIu32 " rounds of %" PRIu32
               " ticks, x%.2f to x%.2f); the speed-up is",
               threads, c.median, c.rounds, c.ticks, c.min, c.max);
        for (int p = 0; p < pool_count; p++)
            printf("%s %.0f%% of it (watch %" PRIu32 " us)", p ? "," : "", 100.0 * up[p] / c.median, pool_watch_us[p]);
        printf("\n");
        printf("BENCH bench_parallel level=%s characters=%" PRIu32 " threads=%" PRIu32
               " metric=ceiling value=%.3f min=%.3f max=%.3f\n",
               name, count, threads, c.median, c.min, c.max);
    }
    return ok;
}

static bool bench_level(const char *name, sim_level *level, bool rooms)
{
    sim_error err;
    memset(&err, 0, sizeof err);
    sim_world_def def = sim_world_default_def();
    sim_world *w = sim_world_create(level, &def, &err);
    bool ok = true;
    if (!w) {
        fprintf(stderr, "bench_parallel: %s: cannot build the world: %s\n", name, err.message);
        ok = false;
    } else {
        for (size_t k = 0; k < COUNT_KINDS; k++)
            if (!only_count || only_count == counts[k])
                ok = bench_count(name, level, w, rooms, counts[k]) && ok;
        sim_world_destroy(w);
    }
    sim_level_free(level);
    return ok;
}

static void print_usage(FILE *f)
{
    fputs("usage: bench_parallel [--threads N] [--batch B] [--seconds S] [--level L] [--characters C]\n"
          "                      [--watch-us U] [--by-thread]\n"
          "The speed-up of sim_scene_step with its loops on N threads (a keel_jobs pool)\n"
          "over one thread, for 64 and 1000 characters on the built-in level and\n"
          "sauerbraten_zdm2.obj (from $KEEL_LEVELS_DIR or the shared levels folder).\n"
          "  --threads N   threads of the parallel scene, 2 to 64 (default 2)\n"
          "  --batch B     characters per work item, 0 to 4096 (default 0: the scene's)\n"
          "  --seconds S   minimum timed seconds of the one-thread scene per figure, 1 to\n"
          "                60 (default 2)\n"
          "  --level L     only builtin or zdm2\n"
          "  --characters C  only 64 or 1000\n"
          "  --watch-us U  only a pool whose workers watch U microseconds for the next loop\n"
          "                before they sleep, 0 to 10000000 (default: each figure twice,\n"
          "                with 100, the pool's default, and 20000)\n"
          "  --by-thread   also time every work item alone and split the work by the\n"
          "                thread that ran it (one call per item: slightly other figures)\n"
          "  --help        print this help\n",
          f);
}

static bool parse_arg(const char *v, long lo, long hi, long *out)
{
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (!(v[0] >= '0' && v[0] <= '9') || *end != '\0' || x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

int main(int argc, char **argv)
{
    opt = bench_speedup_default_options();
    long watch_only = -1;
    for (int i = 1; i < argc; i++) {
        long v;
        if (strcmp(argv[i], "--help") == 0) {
            print_usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && parse_arg(argv[i + 1], 2, 64, &v)) {
            threads = (uint32_t)v;
            i++;
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc && parse_arg(argv[i + 1], 0, 4096, &v)) {
            opt.batch = (uint32_t)v;
            i++;
        } else if (strcmp(argv[i], "--characters") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "64") == 0 || strcmp(argv[i + 1], "1000") == 0)) {
            only_count = (uint32_t)atoi(argv[++i]);
        } else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "builtin") == 0 || strcmp(argv[i + 1], "zdm2") == 0)) {
            only_level = argv[++i];
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc && parse_arg(argv[i + 1], 1, 60, &v)) {
            opt.min_seconds = (double)v;
            i++;
        } else if (strcmp(argv[i], "--watch-us") == 0 && i + 1 < argc &&
                   parse_arg(argv[i + 1], 0, (long)(KEEL_JOBS_WATCH_MAX_NS / 1000u), &v)) {
            watch_only = v;
            i++;
        } else if (strcmp(argv[i], "--by-thread") == 0) {
            opt.by_thread = true;
        } else {
            fprintf(stderr, "bench_parallel: bad option '%s'\n", argv[i]);
            print_usage(stderr);
            return 2;
        }
    }
    if (watch_only >= 0) {
        pool_watch_us[0] = (uint32_t)watch_only;
        pool_count = 1;
    } else {
        pool_watch_us[0] = (uint32_t)(KEEL_JOBS_SPIN_NS / 1000u);
        pool_watch_us[1] = (uint32_t)(BENCH_WATCH_AWAKE_NS / 1000u);
        pool_count = 2;
    }
    for (int p = 0; p < pool_count; p++) {
        keel_jobs_settings js = keel_jobs_default_settings();
        js.threads = threads;
        js.watch_ns = (uint64_t)pool_watch_us[p] * 1000u;
        pools[p] = keel_jobs_create_with(&js);
        if (!pools[p]) {
            fputs("bench_parallel: cannot start the threads\n", stderr);
            for (int q = 0; q < p; q++)
                keel_jobs_destroy(pools[q]);
            return 1;
        }
    }
    printf("sim_scene_step, 1 thread against %" PRIu32 " (keel_jobs), batch %" PRIu32
           "; random walk with jumps (seed %" PRIu64 "), edge guard on; >= %.0f s per figure after %d "
           "warm-up ticks\n"
           "watch: how long (us) the pool's workers watch for the next loop before they sleep (at\n"
           "100 they sleep between steps, at 20000 they stay awake); speed-up: whole step, and the\n"
           "executor's loops alone (snapshot, moves, the separation's scans); ms/tick: one thread;\n"
           "serial: the share of the one-thread step outside the executor (platforms, carrying, the\n"
           "sort, the separation's sums), and the speed-up it allows at most (bound); work: the time\n"
           "summed over the work items on N threads over the same on one (above 1: items run slower\n"
           "on the pool: caches, memory, the machine); idle: the share of the N threads' time in the\n"
           "executor spent outside items (waking, waiting for the last item); cores: the speed-up of\n"
           "pure arithmetic on the pool just before and after the figure (what the machine gave: a\n"
           "figure means little unless both are near %" PRIu32 "); ceiling: N independent scenes at once\n"
           "over one alone, the most any scheduling of one scene's work could get from this machine\n"
           "now (bench/common/bench_ceiling.c)\n\n",
           threads, opt.batch ? opt.batch : SIM_SCENE_DEFAULT_BATCH, BENCH_SEED, opt.min_seconds, BENCH_WARMUP_TICKS,
           threads);
    printf("%-8s %6s %8s %6s %12s %12s %9s %8s %7s %7s %7s %6s %6s %10s\n", "level", "chars", "watch", "ticks",
           "1 thr c-t/s", "N thr c-t/s", "speed-up", "moves", "ms/tick", "serial", "bound", "work", "idle", "cores");

    bool ok = true;
    sim_level level;
    if (only_level && strcmp(only_level, "builtin") != 0)
        ; // skipped
    else if (sim_level_builtin(&level) == 0)
        ok = bench_level("builtin", &level, false) && ok;
    else
        fputs("bench_parallel: cannot build the built-in level\n", stderr);

    if (!(only_level && strcmp(only_level, "zdm2") != 0)) {
        int got = bench_load_zdm2("bench_parallel", &level);
        if (got > 0)
            ok = bench_level("zdm2", &level, true) && ok;
    }
    for (int p = 0; p < pool_count; p++)
        keel_jobs_destroy(pools[p]);
    return ok ? 0 : 1;
}
