// keel benchmarks: what bench_move and bench_parallel share. MIT licence, see
// LICENSE.
//
// The crowd both benchmarks walk (keel-sim's seeded random walk, spawns 1.2 m
// apart, inside rooms on the real map), the shared levels folder and the real
// map, and the probe of the cores a pool gets (the speed-up of a scene on a
// pool is in bench_speedup.h). Doubles appear only for times.
#ifndef KEEL_BENCH_CROWD_H
#define KEEL_BENCH_CROWD_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "keel_jobs.h"
#include "../../tools/keel-sim/ks_common.h"

#define BENCH_SEED UINT64_C(1)
#define BENCH_WARMUP_TICKS 32
#define BENCH_MIN_TICKS 16
#define BENCH_SPACING SIM_FX_MM(1200)

/// Seconds of CLOCK_MONOTONIC.
double bench_now_s(void);
uint64_t bench_now_ns(void);

/// $KEEL_LEVELS_DIR, else the folder the build was configured with.
const char *bench_levels_dir(void);

/// Load sauerbraten_zdm2.obj (scale 0.12) from bench_levels_dir(). 1: loaded;
/// 0: absent (a note is printed on stdout); -1: it would not load (the message
/// goes to stderr, prefixed with `prog`).
int bench_load_zdm2(const char *prog, sim_level *out);

/// `count` characters (ids 1..count) spawned on walkable floor of the level
/// at least BENCH_SPACING apart, inside rooms when `rooms` and there is room
/// (then counted in *in_rooms), each with its keel-sim walker. False (with a
/// message on stderr) when a spawn point cannot be found.
bool bench_spawn_crowd(const char *prog, const sim_level *level, const sim_world *w, bool rooms,
                       const sim_move_settings *s, uint32_t count, sim_char_state *chars, ks_walker *walkers,
                       uint32_t *in_rooms);

/// The next command of every character of the scene (in id order) with the
/// edge guard, given to each of `scenes` (which hold the same characters).
void bench_scene_commands(sim_scene *const *scenes, int nscenes, const sim_world *w, ks_walker *walkers, uint32_t tick);

/// How many cores the pool gets now: pure arithmetic on the pool against the
/// same on this thread alone.
double bench_available_cores(keel_jobs *jobs);

#endif
