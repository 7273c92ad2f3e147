// keel benchmarks: the most a machine gives one scene's work on N threads.
// MIT licence, see LICENSE.
//
// A scene on N threads can go at most as fast as N independent scenes, one
// per thread, sharing nothing: no items to hand out, no waiting for the
// slowest thread, no serial phase. What those get over one scene alone is
// the machine's ceiling for keel's own code, and on a virtual machine it can
// be well under N: two virtual CPUs may be two hardware threads of one core,
// or share a power budget, so code that keeps a core's execution units busy
// (as the moves do) gets less from the second thread than a chain of
// dependent multiplies (bench_available_cores) does.
//
// The figure: N + 1 scenes start alike (the same crowd and walkers). Each
// round, scene 0 steps `ticks` ticks alone on the calling thread; then scenes
// 1..N step the same `ticks` ticks at once, one per thread. Every scene does
// the same work, so the round's ratio is N * (alone time) / (together time).
// Alone and together alternate round by round, and the median of the rounds'
// ratios is reported, so a load that comes and goes moves it little.
#define _POSIX_C_SOURCE 200809L

#include "bench_ceiling.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ceiling_scene {
    sim_scene *scene;
    ks_walker *walkers;
    const sim_world *world;
    uint32_t tick; // the next tick to step
    uint32_t ticks;
    double seconds; // of the last run
} ceiling_scene;

static void run_ticks(ceiling_scene *c)
{
    double t0 = bench_now_s();
    for (uint32_t k = 0; k < c->ticks; k++, c->tick++) {
        bench_scene_commands(&c->scene, 1, c->world, c->walkers, c->tick);
        sim_scene_step(c->scene);
    }
    c->seconds = bench_now_s() - t0;
}

static void *run_thread(void *arg)
{
    run_ticks(arg);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool bench_scene_ceiling(const char *prog, const sim_level *level, const sim_world *w, bool rooms, uint32_t count,
                         uint32_t threads, uint32_t ticks, uint32_t rounds, bench_ceiling *out)
{
    memset(out, 0, sizeof *out);
    if (threads < 2 || threads > BENCH_CEILING_MAX_THREADS || rounds < 1 || rounds > BENCH_CEILING_MAX_ROUNDS ||
        ticks < 1)
        return false;
    sim_move_settings s = sim_move_default_settings();
    ceiling_scene cs[BENCH_CEILING_MAX_THREADS + 1];
    memset(cs, 0, sizeof cs);
    sim_char_state *chars = calloc(count, sizeof *chars);
    ks_walker *walkers = calloc(count, sizeof *walkers);
    pthread_t th[BENCH_CEILING_MAX_THREADS];
    double ratio[BENCH_CEILING_MAX_ROUNDS];
    bool ok = chars && walkers && bench_spawn_crowd(prog, level, w, rooms, &s, count, chars, walkers, NULL);
    for (uint32_t k = 0; ok && k <= threads; k++) {
        cs[k].scene = sim_scene_create(w, &s, count);
        cs[k].walkers = malloc(count * sizeof *walkers);
        cs[k].world = w;
        cs[k].ticks = ticks;
        ok = cs[k].scene && cs[k].walkers;
        if (!ok)
            break;
        memcpy(cs[k].walkers, walkers, count * sizeof *walkers);
        for (uint32_t i = 0; i < count; i++)
            sim_scene_add_character(cs[k].scene, &chars[i]);
    }
    if (!ok)
        fprintf(stderr, "%s: cannot set up the scenes for the ceiling\n", prog);
    for (uint32_t r = 0; ok && r < rounds; r++) {
        run_ticks(&cs[0]);
        uint32_t started = 0;
        for (uint32_t k = 1; k <= threads; k++) {
            if (pthread_create(&th[k - 1], NULL, run_thread, &cs[k]) != 0)
                break;
            started++;
        }
        // The together time: the slowest thread's own time.
        for (uint32_t k = 0; k < started; k++)
            pthread_join(th[k], NULL);
        double together = 0;
        for (uint32_t k = 1; k <= started; k++)
            together = cs[k].seconds > together ? cs[k].seconds : together;
        if (started < threads) {
            fprintf(stderr, "%s: cannot start the threads for the ceiling\n", prog);
            ok = false;
            break;
        }
        ratio[r] = (double)threads * cs[0].seconds / together;
        for (uint32_t k = 1; k <= threads && ok; k++)
            if (sim_scene_hash(cs[k].scene) != sim_scene_hash(cs[0].scene)) {
                fprintf(stderr, "%s: the ceiling's scenes differ after tick %u\n", prog, (unsigned)cs[0].tick);
                ok = false;
            }
    }
    if (ok) {
        qsort(ratio, rounds, sizeof ratio[0], cmp_double);
        out->median = ratio[rounds / 2];
        out->min = ratio[0];
        out->max = ratio[rounds - 1];
        out->rounds = rounds;
        out->ticks = ticks;
    }
    for (uint32_t k = 0; k <= threads; k++) {
        if (cs[k].scene)
            sim_scene_destroy(cs[k].scene);
        free(cs[k].walkers);
    }
    free(chars);
    free(walkers);
    return ok;
}
