// keel benchmarks: what bench_move and bench_parallel share (see
// bench_crowd.h). MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L

#include "bench_crowd.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef KEEL_SHARED_LEVELS_DIR
#define KEEL_SHARED_LEVELS_DIR "../shared/levels"
#endif

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *bench_levels_dir(void)
{
    const char *env = getenv("KEEL_LEVELS_DIR");
    return env && env[0] ? env : KEEL_SHARED_LEVELS_DIR;
}

int bench_load_zdm2(const char *prog, sim_level *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sauerbraten_zdm2.obj", bench_levels_dir());
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("note: %s is absent; the real map is skipped (set KEEL_LEVELS_DIR)\n", path);
        return 0;
    }
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_error err;
    memset(&err, 0, sizeof err);
    if (sim_level_load_obj(path, &o, out, &err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        return -1;
    }
    return 1;
}

bool bench_spawn_crowd(const char *prog, const sim_level *level, const sim_world *w, bool rooms,
                       const sim_move_settings *s, uint32_t count, sim_char_state *chars, ks_walker *walkers,
                       uint32_t *in_rooms)
{
    sim_vec3 *feet = calloc(count ? count : 1, sizeof *feet);
    if (!feet) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return false;
    }
    ks_spawn_area area = {level, w, sim_world_get_stats(w).bounds, s->stand_shape, s->max_slope_cos, SIM_FX_ONE, rooms};
    uint32_t rooms_found = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = i + 1;
        // Inside rooms when asked and there is room; else anywhere walkable.
        area.require_ceiling = rooms;
        bool ok = ks_spawn_find(&area, BENCH_SEED, id, feet, i, BENCH_SPACING, &feet[i]);
        if (ok && rooms)
            rooms_found++;
        if (!ok && rooms) {
            area.require_ceiling = false;
            ok = ks_spawn_find(&area, BENCH_SEED, id, feet, i, BENCH_SPACING, &feet[i]);
        }
        if (!ok) {
            fprintf(stderr, "%s: no spawn point for character %u\n", prog, (unsigned)id);
            free(feet);
            return false;
        }
        ks_rng facing = ks_rng_for(BENCH_SEED, id, KS_STREAM_FACING);
        chars[i] = sim_char_spawn(id, feet[i], (sim_angle)ks_rng_range(&facing, 0, 65535));
        walkers[i] = ks_walker_init(BENCH_SEED, id);
    }
    free(feet);
    if (in_rooms)
        *in_rooms = rooms_found;
    return true;
}

void bench_scene_commands(sim_scene *const *scenes, int nscenes, const sim_world *w, ks_walker *walkers, uint32_t tick)
{
    sim_aabb bounds = sim_world_get_stats(w).bounds;
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(scenes[0], &n);
    for (uint32_t i = 0; i < n; i++) {
        sim_input in = ks_walker_next(&walkers[chars[i].id - 1], tick);
        ks_guard_edges(w, bounds, &chars[i], &in);
        for (int k = 0; k < nscenes; k++)
            sim_scene_set_input(scenes[k], chars[i].id, &in);
    }
}

// ---- cores ----------------------------------------------------------------------

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

double bench_available_cores(keel_jobs *jobs)
{
    uint32_t n = keel_jobs_threads(jobs);
    double t0 = bench_now_s();
    probe_item(NULL, 0, n);
    double one = bench_now_s() - t0;
    t0 = bench_now_s();
    keel_jobs_parallel_for(jobs, n, probe_item, NULL);
    double all = bench_now_s() - t0;
    return one / all;
}

// ---- one thread against N ----------------------------------------------------------

// An executor that times the move phase: the pool's when there is one,
// else the plain loop on this thread.
typedef struct timed_exec {
    keel_jobs *jobs;          // NULL: one range on this thread
    double seconds;           // in the executor (the move phase)
    _Atomic uint64_t work_ns; // summed over the ranges, whichever thread ran them
    sim_task_fn fn;           // the call in flight
    void *task;
} timed_exec;

static void timed_range(void *user, uint32_t begin, uint32_t end)
{
    timed_exec *e = user;
    uint64_t t0 = bench_now_ns();
    e->fn(e->task, begin, end);
    atomic_fetch_add_explicit(&e->work_ns, bench_now_ns() - t0, memory_order_relaxed);
}

static void timed_run(void *user, uint32_t count, sim_task_fn fn, void *task)
{
    timed_exec *e = user;
    e->fn = fn;
    e->task = task;
    double t0 = bench_now_s();
    if (e->jobs)
        keel_jobs_parallel_for(e->jobs, count, timed_range, e);
    else
        timed_range(e, 0, count);
    e->seconds += bench_now_s() - t0;
}

typedef struct side {
    sim_scene *scene;
    timed_exec exec;
    double seconds; // whole steps
} side;

bool bench_scene_speedup(const char *prog, const sim_level *level, const sim_world *w, bool rooms, uint32_t count,
                         keel_jobs *jobs, uint32_t batch, double min_seconds, bench_speedup *out)
{
    memset(out, 0, sizeof *out);
    sim_move_settings s = sim_move_default_settings();
    side sd[2];
    memset(sd, 0, sizeof sd);
    ks_walker *walkers = calloc(count, sizeof *walkers);
    sim_char_state *chars = calloc(count, sizeof *chars);
    sd[0].scene = sim_scene_create(w, &s, count);
    sd[1].scene = sim_scene_create(w, &s, count);
    bool ok = walkers && chars && sd[0].scene && sd[1].scene &&
              bench_spawn_crowd(prog, level, w, rooms, &s, count, chars, walkers, NULL);
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
    for (int k = 0; k < 2; k++)
        sim_scene_set_parallel(sd[k].scene, timed_run, &sd[k].exec, batch);

    uint64_t ticks = 0, timed = 0;
    out->same = true;
    for (;;) {
        bench_scene_commands(both, 2, w, walkers, (uint32_t)ticks);
        bool measure = ticks >= BENCH_WARMUP_TICKS;
        if (ticks == BENCH_WARMUP_TICKS)
            for (int k = 0; k < 2; k++) {
                sd[k].exec.seconds = 0;
                atomic_store(&sd[k].exec.work_ns, 0);
            }
        for (int k = 0; k < 2; k++) {
            side *x = &sd[(ticks + (uint64_t)k) % 2]; // alternate which goes first
            double t0 = bench_now_s();
            sim_scene_step(x->scene);
            if (measure)
                x->seconds += bench_now_s() - t0;
        }
        ticks++;
        timed += measure;
        if (sim_scene_hash(sd[0].scene) != sim_scene_hash(sd[1].scene)) {
            out->same = false;
            out->mismatch_tick = ticks;
            break;
        }
        if (timed >= BENCH_MIN_TICKS && sd[0].seconds >= min_seconds)
            break;
    }
    out->cores_after = bench_available_cores(jobs);
    out->ticks = timed;
    out->no_executor = sd[0].exec.seconds == 0;
    out->seconds1 = sd[0].seconds;
    out->secondsN = sd[1].seconds;
    out->moves1 = sd[0].exec.seconds;
    out->movesN = sd[1].exec.seconds;
    out->work1 = (double)atomic_load(&sd[0].exec.work_ns) * 1e-9;
    out->workN = (double)atomic_load(&sd[1].exec.work_ns) * 1e-9;
done:
    sim_scene_destroy(sd[0].scene);
    sim_scene_destroy(sd[1].scene);
    free(walkers);
    free(chars);
    return ok;
}
