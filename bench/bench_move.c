// keel benchmark: character movement throughput. MIT licence, see LICENSE.
//
// Character-ticks per second of sim_scene_step on the built-in level, the real
// map sauerbraten_zdm2.obj (when the shared levels folder is present) and a
// generated 200,000-triangle level, for 1, 64 and 1000 characters walking,
// turning, crouching and jumping with keel-sim's seeded random walk
// (tools/keel-sim/ks_common.h). In a scene every character also collides with
// the others, so 1000 characters include crowding; --independent runs each
// character alone against the static world (sim_move_step with
// sim_collider_world) instead, which shows what the crowd costs.
//
// Characters start on seeded spots of walkable floor (inside rooms on the
// real map) at least 1.2 m apart, and turn back at open edges, so they stay
// on the level for the whole run. Only the step is timed; making commands is
// not. Each figure is taken for the capsule, the box and the cylinder in
// turn (keel-sim's --shape sizes, all 0.8 m wide and 1.8 m tall), or for the
// one --shape names, on the same levels with the same seeds. The state hash
// after a fixed number of ticks, printed with each figure, shows that the
// work done is the same on every run and machine. Doubles appear only to
// print times and rates.
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <keel/sim_hash.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "../tools/keel-sim/ks_common.h"

#ifndef KEEL_SHARED_LEVELS_DIR
#define KEEL_SHARED_LEVELS_DIR "../shared/levels"
#endif

#define SEED UINT64_C(1)
#define GENERATED_TRIANGLES 200000u
#define WARMUP_TICKS 32
#define MIN_TICKS 16
#define SPACING SIM_FX_MM(1200)
#define MAX_FIGURES 32

static const uint32_t counts[] = {1, 64, 1000};
#define COUNT_KINDS (sizeof counts / sizeof counts[0])

static double min_seconds = 1.0;
static bool independent = false;

enum { SHAPE_KINDS = 3 };
static const char *const shape_names[SHAPE_KINDS] = {"capsule", "box", "cylinder"};
static int only_shape = -1; // --shape: one of them, or -1 for all three

// keel-sim's --shape sizes: 0.8 m wide, 1.8 m tall (1.0 m crouched).
static sim_move_settings shape_settings(int shape)
{
    sim_move_settings s = sim_move_default_settings();
    if (shape == SIM_SHAPE_BOX) {
        s.stand_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
        s.crouch_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(500), SIM_FX_MM(400));
    } else if (shape == SIM_SHAPE_CYLINDER) {
        s.stand_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
        s.crouch_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1000));
    }
    return s;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct figure {
    const char *level;
    int shape;
    uint32_t triangles;
    uint32_t characters;
    uint32_t spawned_in_rooms; ///< characters whose spawn is under a ceiling
    uint64_t ticks;
    double per_s;       ///< character-ticks per second
    double tick_ms;     ///< mean wall time of one tick
    double max_tick_ms; ///< slowest tick
    uint64_t stuck;     ///< character-ticks with SIM_CHAR_STUCK
    uint64_t hash; ///< state hash after WARMUP_TICKS + MIN_TICKS ticks
} figure;

// The characters, stepped either in a scene or one by one.
typedef struct crowd {
    const sim_world *world;
    sim_aabb bounds;
    sim_move_settings s;
    uint32_t count;
    sim_scene *scene;       // scene mode
    sim_char_state *chars;  // independent mode, index id - 1
    sim_collider col;       // independent mode
    ks_walker *walkers;     // index id - 1
    sim_input *inputs;      // independent mode, index id - 1
    uint32_t tick;
} crowd;

static const sim_char_state *crowd_chars(const crowd *c, uint32_t *n)
{
    if (c->scene)
        return sim_scene_characters(c->scene, n);
    *n = c->count;
    return c->chars;
}

static void crowd_commands(crowd *c)
{
    uint32_t n;
    const sim_char_state *chars = crowd_chars(c, &n);
    for (uint32_t i = 0; i < n; i++) {
        sim_input in = ks_walker_next(&c->walkers[chars[i].id - 1], c->tick);
        ks_guard_edges(c->world, c->bounds, &chars[i], &in);
        if (c->scene)
            sim_scene_set_input(c->scene, chars[i].id, &in);
        else
            c->inputs[chars[i].id - 1] = in;
    }
}

static void crowd_step(crowd *c)
{
    if (c->scene) {
        sim_scene_step(c->scene);
    } else {
        for (uint32_t i = 0; i < c->count; i++)
            sim_move_step(&c->col, &c->s, &c->chars[i], &c->inputs[i]);
    }
    c->tick++;
}

static uint64_t crowd_hash(const crowd *c)
{
    if (c->scene)
        return sim_scene_hash(c->scene);
    // The same construction as sim_scene_hash.
    uint64_t h = sim_hash_u32(SIM_HASH_SEED, c->tick);
    for (uint32_t i = 0; i < c->count; i++)
        h = sim_hash_char(h, &c->chars[i]);
    return h;
}

static void crowd_free(crowd *c)
{
    if (c->scene)
        sim_scene_destroy(c->scene);
    free(c->chars);
    free(c->walkers);
    free(c->inputs);
    memset(c, 0, sizeof *c);
}

static bool crowd_init(crowd *c, const sim_level *level, const sim_world *w, bool rooms, int shape,
                       uint32_t count, uint32_t *in_rooms)
{
    memset(c, 0, sizeof *c);
    c->world = w;
    c->bounds = sim_world_get_stats(w).bounds;
    c->s = shape_settings(shape);
    c->count = count;
    c->walkers = calloc(count, sizeof *c->walkers);
    c->inputs = calloc(count, sizeof *c->inputs);
    sim_vec3 *feet = calloc(count, sizeof *feet);
    if (independent) {
        c->chars = calloc(count, sizeof *c->chars);
        c->col = sim_collider_world(w);
    } else {
        c->scene = sim_scene_create(w, &c->s, count);
    }
    if (!c->walkers || !c->inputs || !feet || (independent ? !c->chars : !c->scene)) {
        free(feet);
        crowd_free(c);
        fputs("bench_move: out of memory\n", stderr);
        return false;
    }
    ks_spawn_area area = {level, w, c->bounds, c->s.stand_shape, c->s.max_slope_cos, SIM_FX_ONE,
                          rooms};
    *in_rooms = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = i + 1;
        // Inside rooms when asked and there is room; else anywhere walkable.
        area.require_ceiling = rooms;
        bool ok = ks_spawn_find(&area, SEED, id, feet, i, SPACING, &feet[i]);
        if (ok && rooms)
            (*in_rooms)++;
        if (!ok && rooms) {
            area.require_ceiling = false;
            ok = ks_spawn_find(&area, SEED, id, feet, i, SPACING, &feet[i]);
        }
        if (!ok) {
            fprintf(stderr, "bench_move: no spawn point for character %u\n", (unsigned)id);
            free(feet);
            crowd_free(c);
            return false;
        }
        ks_rng facing = ks_rng_for(SEED, id, KS_STREAM_FACING);
        sim_char_state ch = sim_char_spawn(id, feet[i], (sim_angle)ks_rng_range(&facing, 0, 65535));
        if (c->scene)
            sim_scene_add_character(c->scene, &ch);
        else
            c->chars[i] = ch;
        c->walkers[i] = ks_walker_init(SEED, id);
    }
    free(feet);
    return true;
}

static bool bench_count(const char *name, const sim_level *level, const sim_world *w, bool rooms, int shape,
                        uint32_t count, figure *f)
{
    memset(f, 0, sizeof *f);
    f->level = name;
    f->shape = shape;
    f->triangles = sim_world_get_stats(w).triangle_count;
    f->characters = count;
    crowd c;
    if (!crowd_init(&c, level, w, rooms, shape, count, &f->spawned_in_rooms))
        return false;
    for (int t = 0; t < WARMUP_TICKS; t++) {
        crowd_commands(&c);
        crowd_step(&c);
    }
    double total = 0;
    do {
        crowd_commands(&c);
        double t0 = now_s();
        crowd_step(&c);
        double dt = now_s() - t0;
        total += dt;
        if (dt * 1000.0 > f->max_tick_ms)
            f->max_tick_ms = dt * 1000.0;
        f->ticks++;
        // The hash at a fixed tick: the time-limited run's length varies.
        if (f->ticks == MIN_TICKS)
            f->hash = crowd_hash(&c);
        uint32_t n;
        const sim_char_state *chars = crowd_chars(&c, &n);
        for (uint32_t i = 0; i < n; i++)
            f->stuck += (chars[i].flags & SIM_CHAR_STUCK) != 0;
    } while (total < min_seconds || f->ticks < MIN_TICKS);
    f->per_s = (double)(f->ticks * count) / total;
    f->tick_ms = total * 1000.0 / (double)f->ticks;
    crowd_free(&c);
    return true;
}

static int bench_level(const char *name, sim_level *level, bool rooms, figure *out)
{
    sim_error err;
    memset(&err, 0, sizeof err);
    sim_world_def def = sim_world_default_def();
    sim_world *w = sim_world_create(level, &def, &err);
    int n = 0;
    if (!w) {
        fprintf(stderr, "bench_move: %s: cannot build the world: %s\n", name, err.message);
    } else {
        for (int shape = 0; shape < SHAPE_KINDS; shape++) {
            if (only_shape >= 0 && shape != only_shape)
                continue;
            for (size_t k = 0; k < COUNT_KINDS; k++)
                if (bench_count(name, level, w, rooms, shape, counts[k], &out[n]))
                    n++;
        }
        sim_world_destroy(w);
    }
    sim_level_free(level);
    return n;
}

static const char *levels_dir(void)
{
    const char *env = getenv("KEEL_LEVELS_DIR");
    return env && env[0] ? env : KEEL_SHARED_LEVELS_DIR;
}

static void print_usage(FILE *f)
{
    fputs("usage: bench_move [--seconds N] [--shape capsule|box|cylinder|all] [--independent] [--help]\n"
          "Character-ticks per second on the built-in level, sauerbraten_zdm2.obj (from\n"
          "$KEEL_LEVELS_DIR or the shared levels folder) and a generated 200,000-triangle\n"
          "level, for 1, 64 and 1000 characters walking and jumping at random.\n"
          "  --seconds N     minimum timed seconds per figure, 1 to 60 (default 1)\n"
          "  --shape S       the characters: capsule r 0.4 h 1.8, box 0.8 x 1.8 x 0.8,\n"
          "                  cylinder r 0.4 h 1.8 (crouched 1.0 m tall), or all three\n"
          "                  one after the other (default all)\n"
          "  --independent   step characters one by one against the static world only\n"
          "                  (no character-vs-character collisions)\n"
          "  --help          print this help\n",
          f);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            print_usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--independent") == 0) {
            independent = true;
            continue;
        }
        if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            int found = strcmp(v, "all") == 0 ? -1 : -2;
            for (int k = 0; k < SHAPE_KINDS; k++)
                if (strcmp(v, shape_names[k]) == 0)
                    found = k;
            if (found != -2) {
                only_shape = found;
                continue;
            }
            fprintf(stderr, "bench_move: bad --shape '%s'\n", v);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            char *end = NULL;
            long s = strtol(v, &end, 10);
            if (v[0] >= '0' && v[0] <= '9' && *end == '\0' && s >= 1 && s <= 60) {
                min_seconds = (double)s;
                continue;
            }
            fprintf(stderr, "bench_move: bad --seconds '%s'\n", v);
        } else {
            fprintf(stderr, "bench_move: unknown option '%s'\n", argv[i]);
        }
        print_usage(stderr);
        return 2;
    }

    figure all[MAX_FIGURES];
    int count = 0;
    sim_level level;

    if (sim_level_builtin(&level) == 0)
        count += bench_level("builtin", &level, false, &all[count]);
    else
        fputs("bench_move: cannot build the built-in level\n", stderr);

    char path[4096];
    snprintf(path, sizeof path, "%s/sauerbraten_zdm2.obj", levels_dir());
    struct stat stbuf;
    if (stat(path, &stbuf) != 0) {
        printf("note: %s is absent; the real map is skipped (set KEEL_LEVELS_DIR)\n", path);
    } else {
        sim_obj_options o = sim_obj_default_options();
        o.unit_scale = "0.12";
        sim_error err;
        memset(&err, 0, sizeof err);
        if (sim_level_load_obj(path, &o, &level, &err) == 0)
            count += bench_level("zdm2", &level, true, &all[count]);
        else
            fprintf(stderr, "bench_move: %s\n", err.message);
    }

    if (sim_level_generate(&level, GENERATED_TRIANGLES, 1) == 0)
        count += bench_level("generated_200k", &level, false, &all[count]);
    else
        fputs("bench_move: cannot generate the level\n", stderr);

    printf("collision: %s; random walk with jumps (seed %" PRIu64 "), edge guard on; "
           ">= %.0f s and %d ticks per figure after %d warm-up ticks; one thread\n\n",
           independent ? "independent sim_move_step against the static world (characters pass "
                         "through each other)"
                       : "sim_scene (characters also collide with each other)",
           SEED, min_seconds, MIN_TICKS, WARMUP_TICKS);
    printf("%-15s %-8s %9s %6s %7s %14s %12s %10s %11s %7s  %s\n", "level", "shape", "triangles", "chars",
           "ticks", "char-ticks/s", "us/char-tick", "ms/tick", "max ms/tick", "stuck", "hash@48");
    for (int i = 0; i < count; i++) {
        const figure *f = &all[i];
        printf("%-15s %-8s %9" PRIu32 " %6" PRIu32 " %7" PRIu64 " %14.0f %12.2f %10.3f %11.3f %7" PRIu64
               "  %016" PRIx64 "\n",
               f->level, shape_names[f->shape], f->triangles, f->characters, f->ticks, f->per_s, 1e6 / f->per_s,
               f->tick_ms, f->max_tick_ms, f->stuck, f->hash);
    }
    // Side by side: microseconds per character-tick of each shape, and the
    // cylinder's cost relative to the capsule's.
    if (only_shape < 0) {
        printf("\n%-15s %6s %12s %12s %12s %10s\n", "us/char-tick", "chars", "capsule", "box", "cylinder",
               "cyl/caps");
        for (int i = 0; i < count; i++) {
            if (all[i].shape != SIM_SHAPE_CAPSULE)
                continue;
            const figure *by[SHAPE_KINDS] = {&all[i], NULL, NULL};
            for (int j = 0; j < count; j++)
                if (strcmp(all[j].level, all[i].level) == 0 && all[j].characters == all[i].characters)
                    by[all[j].shape] = &all[j];
            if (!by[1] || !by[2])
                continue;
            printf("%-15s %6" PRIu32 " %12.2f %12.2f %12.2f %10.2f\n", all[i].level, all[i].characters,
                   1e6 / by[0]->per_s, 1e6 / by[1]->per_s, 1e6 / by[2]->per_s, by[0]->per_s / by[2]->per_s);
        }
    }
    bool any_rooms = false;
    for (int i = 0; i < count; i++) {
        if (strcmp(all[i].level, "zdm2") != 0 || all[i].shape != SIM_SHAPE_CAPSULE)
            continue;
        printf("%s %" PRIu32 " of %" PRIu32, any_rooms ? "," : "\nzdm2 spawns inside rooms (under a ceiling):",
               all[i].spawned_in_rooms, all[i].characters);
        any_rooms = true;
    }
    printf(any_rooms ? "; the rest on open floor\n\n" : "\n");
    const char *mode = independent ? "independent" : "scene";
    for (int i = 0; i < count; i++) {
        const figure *f = &all[i];
        printf("BENCH bench_move shape=%s level=%s characters=%" PRIu32 " collision=%s "
               "metric=character_ticks_per_s value=%.0f max_tick_ms=%.3f hash=%016" PRIx64 "\n",
               shape_names[f->shape], f->level, f->characters, mode, f->per_s, f->max_tick_ms, f->hash);
    }
    return count > 0 ? 0 : 1;
}
