// keel benchmark: sim_scene_step on several threads. MIT licence, see LICENSE.
//
// The speed-up of a scene whose moves run on a keel_jobs pool
// (sim_scene_set_parallel) over the same scene on one thread, for 1000
// characters (and 64) on the built-in level and on sauerbraten_zdm2.obj (when
// the shared levels folder is present), with bench_move's crowd: keel-sim's
// seeded random walk with the edge guard, spawns 1.2 m apart (inside rooms
// on the real map).
//
// Two scenes start alike and get the same commands; every tick steps both,
// one after the other (which goes first alternates), so a machine whose load
// changes during the run slows both alike. Their hashes are compared every
// tick: a difference is reported and fails the run. Each executor is wrapped
// in a timer, so the move phase (what runs in parallel) is timed apart from
// the rest of the step (platforms, carrying, the snapshot and its sort),
// which stays on the calling thread and bounds the speed-up (Amdahl). Each
// figure comes with the cores the machine gave the process just before and
// after it (see available_cores).
// Doubles appear only to print times and rates.
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <keel/sim_hash.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "../tools/common/keel_jobs.h"
#include "../tools/keel-sim/ks_common.h"

#ifndef KEEL_SHARED_LEVELS_DIR
#define KEEL_SHARED_LEVELS_DIR "../shared/levels"
#endif

#define SEED UINT64_C(1)
#define WARMUP_TICKS 32
#define MIN_TICKS 16
#define SPACING SIM_FX_MM(1200)

static const uint32_t counts[] = {64, 1000};
#define COUNT_KINDS (sizeof counts / sizeof counts[0])

static double min_seconds = 2.0;
static uint32_t only_count = 0;      // --characters: 0 for both counts
static const char *only_level = NULL; // --level: NULL for both levels
static uint32_t threads = 2;
static uint32_t batch = 0;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// An executor that times the move phase: the pool's when there is one,
// else the plain loop on this thread.
typedef struct timed_exec {
    keel_jobs *jobs; // NULL: one range on this thread
    double seconds;  // in the executor (the move phase)
    _Atomic uint64_t work_ns; // summed over the ranges, whichever thread ran them
    sim_task_fn fn;           // the call in flight
    void *task;
} timed_exec;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void timed_range(void *user, uint32_t begin, uint32_t end)
{
    timed_exec *e = user;
    uint64_t t0 = now_ns();
    e->fn(e->task, begin, end);
    atomic_fetch_add_explicit(&e->work_ns, now_ns() - t0, memory_order_relaxed);
}

static void timed_run(void *user, uint32_t count, sim_task_fn fn, void *task)
{
    timed_exec *e = user;
    e->fn = fn;
    e->task = task;
    double t0 = now_s();
    if (e->jobs)
        keel_jobs_parallel_for(e->jobs, count, timed_range, e);
    else
        timed_range(e, 0, count);
    e->seconds += now_s() - t0;
}

// How many cores this process gets now: pure arithmetic items run on the
// pool against the same on this thread alone. On a machine shared with other
// work the figures below mean little unless this is close to the thread count.
static _Atomic uint64_t probe_sink; // keeps the arithmetic from being optimised away

static void probe_item(void *task, uint32_t begin, uint32_t end)
{
    (void)task;
    for (uint32_t i = begin; i < end; i++) {
        uint64_t x = i;
        for (uint32_t k = 0; k < 20000000u; k++)
            x = x * 6364136223846793005u + 1442695040888963407u;
        atomic_fetch_add_explicit(&probe_sink, x, memory_order_relaxed);
    }
}

static double available_cores(keel_jobs *jobs)
{
    uint32_t n = keel_jobs_threads(jobs);
    double t0 = now_s();
    probe_item(NULL, 0, n);
    double one = now_s() - t0;
    t0 = now_s();
    keel_jobs_parallel_for(jobs, n, probe_item, NULL);
    double all = now_s() - t0;
    return one / all;
}

typedef struct side {
    sim_scene *scene;
    timed_exec exec;
    double seconds; // whole steps
} side;

static bool add_crowd(sim_scene *const *scenes, int nscenes, const sim_level *level, const sim_world *w,
                      bool rooms, const sim_move_settings *s, uint32_t count, ks_walker *walkers)
{
    sim_vec3 *feet = calloc(count, sizeof *feet);
    if (!feet)
        return false;
    ks_spawn_area area = {level, w, sim_world_get_stats(w).bounds, s->stand_shape, s->max_slope_cos,
                          SIM_FX_ONE, rooms};
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = i + 1;
        // Inside rooms when asked and there is room; else anywhere walkable.
        area.require_ceiling = rooms;
        bool ok = ks_spawn_find(&area, SEED, id, feet, i, SPACING, &feet[i]);
        if (!ok && rooms) {
            area.require_ceiling = false;
            ok = ks_spawn_find(&area, SEED, id, feet, i, SPACING, &feet[i]);
        }
        if (!ok) {
            fprintf(stderr, "bench_parallel: no spawn point for character %u\n", (unsigned)id);
            free(feet);
            return false;
        }
        ks_rng facing = ks_rng_for(SEED, id, KS_STREAM_FACING);
        sim_char_state ch = sim_char_spawn(id, feet[i], (sim_angle)ks_rng_range(&facing, 0, 65535));
        for (int k = 0; k < nscenes; k++)
            sim_scene_add_character(scenes[k], &ch);
        walkers[i] = ks_walker_init(SEED, id);
    }
    free(feet);
    return true;
}

// Returns false when the two scenes differed (or setting up failed).
static bool bench_count(const char *name, const sim_level *level, const sim_world *w, bool rooms,
                        uint32_t count, keel_jobs *jobs)
{
    sim_move_settings s = sim_move_default_settings();
    sim_aabb bounds = sim_world_get_stats(w).bounds;
    side sd[2];
    memset(sd, 0, sizeof sd);
    ks_walker *walkers = calloc(count, sizeof *walkers);
    sd[0].scene = sim_scene_create(w, &s, count);
    sd[1].scene = sim_scene_create(w, &s, count);
    bool ok = walkers && sd[0].scene && sd[1].scene;
    sim_scene *both[2] = {sd[0].scene, sd[1].scene};
    if (ok)
        ok = add_crowd(both, 2, level, w, rooms, &s, count, walkers);
    if (!ok) {
        fputs("bench_parallel: cannot set up the scenes\n", stderr);
        goto done;
    }
    double cores_before = available_cores(jobs);
    sd[1].exec.jobs = jobs;
    for (int k = 0; k < 2; k++)
        sim_scene_set_parallel(sd[k].scene, timed_run, &sd[k].exec, batch);

    uint64_t ticks = 0, timed = 0;
    bool same = true;
    for (;;) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(sd[0].scene, &n);
        for (uint32_t i = 0; i < n; i++) {
            sim_input in = ks_walker_next(&walkers[chars[i].id - 1], (uint32_t)ticks);
            ks_guard_edges(w, bounds, &chars[i], &in);
            sim_scene_set_input(sd[0].scene, chars[i].id, &in);
            sim_scene_set_input(sd[1].scene, chars[i].id, &in);
        }
        bool measure = ticks >= WARMUP_TICKS;
        if (ticks == WARMUP_TICKS)
            for (int k = 0; k < 2; k++) {
                sd[k].exec.seconds = 0;
                atomic_store(&sd[k].exec.work_ns, 0);
            }
        for (int k = 0; k < 2; k++) {
            side *x = &sd[(ticks + (uint64_t)k) % 2]; // alternate which goes first
            double t0 = now_s();
            sim_scene_step(x->scene);
            if (measure)
                x->seconds += now_s() - t0;
        }
        ticks++;
        timed += measure;
        if (sim_scene_hash(sd[0].scene) != sim_scene_hash(sd[1].scene)) {
            printf("MISMATCH %s %" PRIu32 " characters: the hashes differ after tick %" PRIu64 "\n", name,
                   count, ticks);
            same = false;
            break;
        }
        if (timed >= MIN_TICKS && sd[0].seconds >= min_seconds)
            break;
    }
    double cores_after = available_cores(jobs);
    if (same && sd[0].exec.seconds == 0) {
        // One work item a tick: the scene never called the executor.
        printf("%-8s %6" PRIu32 " %6" PRIu64 "  one work item a tick (batch >= characters): no executor call\n", name,
               count, timed);
    } else if (same) {
        double per1 = (double)(timed * count) / sd[0].seconds;
        double perN = (double)(timed * count) / sd[1].seconds;
        double serial1 = sd[0].seconds - sd[0].exec.seconds;
        double bound = sd[0].seconds / (serial1 + sd[0].exec.seconds / threads);
        double work1 = (double)atomic_load(&sd[0].exec.work_ns) * 1e-9;
        double workN = (double)atomic_load(&sd[1].exec.work_ns) * 1e-9;
        double idle = 1.0 - workN / (sd[1].exec.seconds * threads);
        printf("%-8s %6" PRIu32 " %6" PRIu64 " %12.0f %12.0f %8.2fx %7.2fx %7.3f %6.1f%% %6.2fx %6.3f %5.1f%% %5.2f/%.2f\n",
               name, count, timed, per1, perN, sd[0].seconds / sd[1].seconds,
               sd[0].exec.seconds / sd[1].exec.seconds, sd[0].seconds * 1e3 / (double)timed,
               100.0 * serial1 / sd[0].seconds, bound, workN / work1, 100.0 * idle, cores_before, cores_after);
        printf("BENCH bench_parallel level=%s characters=%" PRIu32 " threads=%" PRIu32
               " metric=speedup value=%.3f moves=%.3f serial_share=%.4f work=%.3f idle=%.4f cores=%.2f/%.2f\n",
               name, count, threads, sd[0].seconds / sd[1].seconds, sd[0].exec.seconds / sd[1].exec.seconds,
               serial1 / sd[0].seconds, workN / work1, idle, cores_before, cores_after);
    }
    ok = same;
done:
    sim_scene_destroy(sd[0].scene);
    sim_scene_destroy(sd[1].scene);
    free(walkers);
    return ok;
}

static bool bench_level(const char *name, sim_level *level, bool rooms, keel_jobs *jobs)
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
            ok = bench_count(name, level, w, rooms, counts[k], jobs) && ok;
        sim_world_destroy(w);
    }
    sim_level_free(level);
    return ok;
}

static const char *levels_dir(void)
{
    const char *env = getenv("KEEL_LEVELS_DIR");
    return env && env[0] ? env : KEEL_SHARED_LEVELS_DIR;
}

static void print_usage(FILE *f)
{
    fputs("usage: bench_parallel [--threads N] [--batch B] [--seconds S] [--level L] [--characters C]\n"
          "The speed-up of sim_scene_step with its moves on N threads (a keel_jobs pool)\n"
          "over one thread, for 64 and 1000 characters on the built-in level and\n"
          "sauerbraten_zdm2.obj (from $KEEL_LEVELS_DIR or the shared levels folder).\n"
          "  --threads N   threads of the parallel scene, 2 to 64 (default 2)\n"
          "  --batch B     characters per work item, 0 to 4096 (default 0: the scene's)\n"
          "  --seconds S   minimum timed seconds of the one-thread scene per figure, 1 to\n"
          "                60 (default 2)\n"
          "  --level L     only builtin or zdm2\n"
          "  --characters C  only 64 or 1000\n"
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
            batch = (uint32_t)v;
            i++;
        } else if (strcmp(argv[i], "--characters") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "64") == 0 || strcmp(argv[i + 1], "1000") == 0)) {
            only_count = (uint32_t)atoi(argv[++i]);
        } else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "builtin") == 0 || strcmp(argv[i + 1], "zdm2") == 0)) {
            only_level = argv[++i];
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc && parse_arg(argv[i + 1], 1, 60, &v)) {
            min_seconds = (double)v;
            i++;
        } else {
            fprintf(stderr, "bench_parallel: bad option '%s'\n", argv[i]);
            print_usage(stderr);
            return 2;
        }
    }
    keel_jobs *jobs = keel_jobs_create(threads);
    if (!jobs) {
        fputs("bench_parallel: cannot start the threads\n", stderr);
        return 1;
    }
    printf("sim_scene_step, 1 thread against %" PRIu32 " (keel_jobs), batch %" PRIu32
           "; random walk with jumps (seed %" PRIu64 "), edge guard on; >= %.0f s per figure after %d "
           "warm-up ticks\n"
           "speed-up: whole step, and the move phase alone; ms/tick: one thread; serial: the share of\n"
           "the one-thread step outside the moves (platforms, carrying, snapshot and sort), and the\n"
           "speed-up it allows at most (bound); work: the time summed over the work items on N threads\n"
           "over the same on one (above 1: items run slower side by side: caches, memory, the machine);\n"
           "idle: the share of the N threads' time in the move phase spent outside items (waking,\n"
           "waiting for the last item); cores: the speed-up of pure arithmetic on the pool just before\n"
           "and after the figure (what the machine gave: a figure means little unless both are near\n"
           "%" PRIu32 ")\n\n",
           threads, batch ? batch : SIM_SCENE_DEFAULT_BATCH, SEED, min_seconds, WARMUP_TICKS, threads);
    printf("%-8s %6s %6s %12s %12s %9s %8s %7s %7s %7s %6s %6s %10s\n", "level", "chars", "ticks", "1 thr c-t/s",
           "N thr c-t/s", "speed-up", "moves", "ms/tick", "serial", "bound", "work", "idle", "cores");

    bool ok = true;
    sim_level level;
    if (only_level && strcmp(only_level, "builtin") != 0)
        ; // skipped
    else if (sim_level_builtin(&level) == 0)
        ok = bench_level("builtin", &level, false, jobs) && ok;
    else
        fputs("bench_parallel: cannot build the built-in level\n", stderr);

    char path[4096];
    snprintf(path, sizeof path, "%s/sauerbraten_zdm2.obj", levels_dir());
    struct stat stbuf;
    if (only_level && strcmp(only_level, "zdm2") != 0) {
        // skipped
    } else if (stat(path, &stbuf) != 0) {
        printf("note: %s is absent; the real map is skipped (set KEEL_LEVELS_DIR)\n", path);
    } else {
        sim_obj_options o = sim_obj_default_options();
        o.unit_scale = "0.12";
        sim_error err;
        memset(&err, 0, sizeof err);
        if (sim_level_load_obj(path, &o, &level, &err) == 0)
            ok = bench_level("zdm2", &level, true, jobs) && ok;
        else
            fprintf(stderr, "bench_parallel: %s\n", err.message);
    }
    keel_jobs_destroy(jobs);
    return ok ? 0 : 1;
}
