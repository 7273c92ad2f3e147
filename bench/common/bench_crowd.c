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
