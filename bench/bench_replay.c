// keel benchmark: recordings. MIT licence, see LICENSE.
//
// Prints, for the built-in level and the real map sauerbraten_zdm2.obj (when
// the shared levels folder is present):
//   - the size of a recording per player-hour at 64 Hz, for 1, 8 and 32
//     players walking keel-sim's seeded random walk, compressed and not, with
//     keyframes every 64 ticks and without any;
//   - what recording costs the tick loop (encoding on the caller's thread,
//     nanoseconds per character-tick);
//   - keel-replay verify's speed: character-ticks per second re-simulated and
//     hashed, on one thread and on every thread (--threads), from the same file.
// Doubles appear only to print times and rates. Files go to $TMPDIR (or /tmp)
// and are removed.
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <keel/net_proto.h>
#include <keel/rec.h>
#include <keel/rec_verify.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "../tools/keel-sim/ks_common.h"

#ifndef KEEL_SHARED_LEVELS_DIR
#define KEEL_SHARED_LEVELS_DIR "../shared/levels"
#endif

#define SEED UINT64_C(7)
#define SPACING SIM_FX_MM(1200)
#define TICKS_PER_HOUR (64.0 * 3600.0)

static uint32_t record_ticks = 3840; // one minute at 64 Hz
static uint32_t verify_characters = 64;
static bool sizes_only = false;
static bool verify_only = false;
static const char *keep_dir = NULL; // --keep: leave the verify recordings here

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct bench_level {
    const char *name;
    sim_level level;
    sim_world *world;
    rec_level_ref ref;
    bool rooms;           // spawn under ceilings (the real map's open areas have edges)
    double verify_target; // M character-ticks per second per core
} bench_level;

// Record `count` walkers for record_ticks ticks; returns the seconds spent
// in rec_writer_tick (the cost on the tick loop), or a negative value.
static double record(const bench_level *bl, uint32_t count, uint32_t keyframes, bool compress, const char *path)
{
    sim_move_settings s = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(bl->world, &s, count);
    ks_walker *walkers = calloc(count, sizeof *walkers);
    sim_vec3 *feet = calloc(count, sizeof *feet);
    rec_command *cmds = calloc(count, sizeof *cmds);
    if (!scene || !walkers || !feet || !cmds) {
        fputs("bench_replay: out of memory\n", stderr);
        exit(1);
    }
    sim_aabb bounds = sim_world_get_stats(bl->world).bounds;
    ks_spawn_area area = {&bl->level, bl->world, bounds, s.stand_shape, s.max_slope_cos, SIM_FX_ONE, bl->rooms};
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = i + 1;
        area.require_ceiling = bl->rooms;
        bool ok = ks_spawn_find(&area, SEED, id, feet, i, SPACING, &feet[i]);
        if (!ok) {
            area.require_ceiling = false;
            ok = ks_spawn_find(&area, SEED, id, feet, i, SPACING, &feet[i]);
        }
        if (!ok) {
            fprintf(stderr, "bench_replay: no spawn point for character %u\n", (unsigned)id);
            exit(1);
        }
        ks_rng facing = ks_rng_for(SEED, id, KS_STREAM_FACING);
        sim_char_state ch = sim_char_spawn(id, feet[i], (sim_angle)ks_rng_range(&facing, 0, 65535));
        sim_scene_add_character(scene, &ch);
        walkers[i] = ks_walker_init(SEED, id);
    }
    rec_header h = rec_default_header();
    h.settings = s;
    h.settings_digest = net_settings_digest(&s);
    h.level = bl->ref;
    h.max_characters = count;
    h.keyframe_interval = keyframes;
    h.compress = compress;
    snprintf(h.source, sizeof h.source, "bench_replay");
    rec_writer_config wc = rec_default_writer_config();
    rec_error err;
    rec_writer *w = rec_writer_open(path, &h, &wc, scene, &err);
    if (!w) {
        fprintf(stderr, "bench_replay: %s: %s\n", path, err.message);
        exit(1);
    }
    double in_writer = 0;
    for (uint32_t t = 0; t < record_ticks; t++) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(scene, &n);
        uint32_t tick = sim_scene_tick(scene);
        for (uint32_t i = 0; i < n; i++) {
            sim_input in = ks_walker_next(&walkers[chars[i].id - 1], tick);
            ks_guard_edges(bl->world, bounds, &chars[i], &in);
            in.tick = tick;
            sim_scene_set_input(scene, chars[i].id, &in);
            cmds[i].id = chars[i].id;
            cmds[i].input = in;
        }
        sim_scene_step(scene);
        rec_tick rt;
        memset(&rt, 0, sizeof rt);
        rt.tick = tick;
        rt.commands = cmds;
        rt.command_count = n;
        double t0 = now_s();
        bool ok = rec_writer_tick(w, &rt, scene);
        in_writer += now_s() - t0;
        if (!ok) {
            fputs("bench_replay: the recording failed\n", stderr);
            exit(1);
        }
    }
    if (!rec_writer_close(w, &err)) {
        fprintf(stderr, "bench_replay: %s: %s\n", path, err.message);
        exit(1);
    }
    sim_scene_destroy(scene);
    free(walkers);
    free(feet);
    free(cmds);
    return in_writer;
}

// Bytes per player-hour of an hour-long recording: the tick and keyframe
// chunks scaled to an hour, and the fixed part (header, schema, initial
// state) once, not once a minute.
static double per_player_hour(const char *path, uint32_t players)
{
    rec_error err;
    rec_file *f = rec_file_open(path, &err);
    if (!f) {
        fprintf(stderr, "bench_replay: %s: %s\n", path, err.message);
        exit(1);
    }
    rec_info in;
    rec_file_info(f, &in);
    rec_file_close(f);
    double body = (double)(in.bytes_ticks + in.bytes_keyframes) * TICKS_PER_HOUR / (double)record_ticks;
    double fixed = (double)(in.file_bytes - in.bytes_ticks - in.bytes_keyframes);
    return (body + fixed) / (double)players / 1e6;
}

static void sizes(const bench_level *bl, const char *path)
{
    static const uint32_t counts[] = {1, 8, 32};
    printf("\n%s: recording size per player-hour at 64 Hz (%u-tick recordings scaled to an hour-long file)\n", bl->name,
           (unsigned)record_ticks);
    double one = 0;
    printf("  %-8s %-22s %-22s %-22s %s\n", "players", "no keyframes, zstd", "no keyframes, raw", "keyframes/64, zstd",
           "encode ns/char-tick");
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        uint32_t n = counts[k];
        double enc = record(bl, n, 0, true, path);
        double a = per_player_hour(path, n);
        record(bl, n, 0, false, path);
        double b = per_player_hour(path, n);
        record(bl, n, REC_DEFAULT_KEYFRAME_INTERVAL, true, path);
        double c = per_player_hour(path, n);
        printf("  %-8u %9.3f MB %-9s %9.3f MB %-9s %9.3f MB %-9s %.0f\n", (unsigned)n, a, "", b, "", c, "",
               enc * 1e9 / ((double)record_ticks * (double)n));
        if (n == 1)
            one = c;
    }
    printf("  one player, keyframes every 64, zstd: %.3f MB per player-hour (target: at most 1 MB) %s\n", one,
           one <= 1.0 ? "met" : "MISSED");
}

static void speed(const bench_level *bl, const char *path)
{
    record(bl, verify_characters, REC_DEFAULT_KEYFRAME_INTERVAL, true, path);
    rec_error err;
    rec_file *f = rec_file_open(path, &err);
    if (!f) {
        fprintf(stderr, "bench_replay: %s: %s\n", path, err.message);
        exit(1);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    printf("\n%s: verify speed, %u characters, %u ticks, keyframes every %u\n", bl->name, (unsigned)verify_characters,
           (unsigned)record_ticks, REC_DEFAULT_KEYFRAME_INTERVAL);
    double one = 0;
    for (long threads = 1; threads <= cpus; threads = threads == 1 ? cpus : threads + 1) {
        rec_verify_config vc = rec_default_verify_config();
        vc.threads = (uint32_t)threads;
        double best = 0;
        for (int round = 0; round < 3; round++) {
            rec_divergence div;
            rec_verify_stats st;
            int rc = rec_verify(f, bl->world, &vc, &div, &st, &err);
            if (rc != REC_EXIT_MATCH) {
                fprintf(stderr, "bench_replay: verify failed (%d): %s %s\n", rc, div.detail, err.message);
                exit(1);
            }
            double rate = (double)st.character_ticks / ((double)st.elapsed_ns * 1e-9);
            if (rate > best)
                best = rate;
        }
        if (threads == 1)
            one = best;
        printf("  %ld thread%s: %.2f M character-ticks/s (%.2f M per thread)%s\n", threads, threads == 1 ? " " : "s",
               best / 1e6, best / 1e6 / (double)threads, threads == 1 ? "" : "");
        if (threads == 1)
            printf("  per core: %.2f M character-ticks/s (target: at least %.1f M) %s\n", best / 1e6, bl->verify_target,
                   best / 1e6 >= bl->verify_target ? "met" : "MISSED");
        if (threads > 1)
            printf("  speed-up on %ld threads: %.2fx (target: near-linear, %ldx)\n", threads, best / one, threads);
        if (cpus == 1)
            break;
    }
    rec_file_close(f);
}

static void usage(FILE *f)
{
    fputs("usage: bench_replay [--ticks N] [--characters N] [--sizes-only | --verify-only]\n"
          "                    [--keep DIR]\n"
          "Recording size per player-hour, the tick loop's cost of recording, and verify\n"
          "speed (one thread and all threads) on the built-in level and sauerbraten_zdm2.obj\n"
          "(from $KEEL_LEVELS_DIR or the shared levels folder, when present).\n"
          "--sizes-only: the sizes alone (no cost or verify timing).\n"
          "--verify-only: the verify speed alone (no sizes).\n"
          "--keep DIR: keep the recordings verify is timed on, as DIR/verify-builtin.krec\n"
          "and DIR/verify-zdm2.krec (for a profiler: keel-replay verify FILE).\n",
          f);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--ticks") == 0 || strcmp(argv[i], "--characters") == 0) && i + 1 < argc) {
            char *end;
            unsigned long v = strtoul(argv[i + 1], &end, 10);
            if (*end || v < 1 || v > 1000000) {
                usage(stderr);
                return 2;
            }
            if (argv[i][2] == 't')
                record_ticks = (uint32_t)v;
            else
                verify_characters = (uint32_t)(v > REC_MAX_CHARACTERS ? REC_MAX_CHARACTERS : v);
            i++;
        } else if (strcmp(argv[i], "--sizes-only") == 0 && !verify_only) {
            sizes_only = true;
        } else if (strcmp(argv[i], "--verify-only") == 0 && !sizes_only) {
            verify_only = true;
        } else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
            keep_dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/bench_replay_%ld.krec", tmp && *tmp ? tmp : "/tmp", (long)getpid());

    bench_level levels[2];
    memset(levels, 0, sizeof levels);
    int count = 0;
    levels[0].name = "built-in level";
    if (sim_level_builtin(&levels[0].level) != 0) {
        fputs("bench_replay: cannot build the built-in level\n", stderr);
        return 1;
    }
    levels[0].ref.kind = REC_LEVEL_BUILTIN;
    levels[0].verify_target = 0.7;
    count = 1;

    const char *dir = getenv("KEEL_LEVELS_DIR");
    char obj[512];
    snprintf(obj, sizeof obj, "%s/sauerbraten_zdm2.obj", dir && *dir ? dir : KEEL_SHARED_LEVELS_DIR);
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_error lerr;
    if (sim_level_load_obj(obj, &o, &levels[1].level, &lerr) == 0) {
        levels[1].name = "sauerbraten_zdm2";
        levels[1].ref.kind = REC_LEVEL_OBJ;
        snprintf(levels[1].ref.path, sizeof levels[1].ref.path, "%.255s", obj);
        snprintf(levels[1].ref.scale, sizeof levels[1].ref.scale, "0.12");
        levels[1].ref.up_axis = 'y';
        levels[1].rooms = true;
        levels[1].verify_target = 0.5;
        count = 2;
    } else {
        printf("note: %s not loaded (%s); only the built-in level is measured\n", obj, lerr.message);
    }
    for (int i = 0; i < count; i++) {
        levels[i].world = sim_world_create(&levels[i].level, NULL, NULL);
        if (!levels[i].world) {
            fprintf(stderr, "bench_replay: cannot build the world of %s\n", levels[i].name);
            return 1;
        }
        levels[i].ref.digest = net_level_digest(&levels[i].level);
        if (levels[i].ref.kind == REC_LEVEL_BUILTIN)
            levels[i].ref.up_axis = 'y';
    }
    printf("bench_replay: %s\n", rec_build_id());
    for (int i = 0; i < count; i++) {
        if (!verify_only)
            sizes(&levels[i], path);
        if (!sizes_only) {
            char kept[600];
            if (keep_dir)
                snprintf(kept, sizeof kept, "%s/verify-%s.krec", keep_dir, i == 0 ? "builtin" : "zdm2");
            speed(&levels[i], keep_dir ? kept : path);
        }
    }
    remove(path);
    for (int i = 0; i < count; i++) {
        sim_world_destroy(levels[i].world);
        sim_level_free(&levels[i].level);
    }
    return 0;
}
