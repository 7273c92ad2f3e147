// keel benchmark: world build time and query throughput. MIT licence, see LICENSE.
//
// For the built-in level, the real map sauerbraten_zdm2.obj (when the shared
// levels folder is present) and a generated 200,000-triangle level, measures
// how long sim_world_create takes and how many sweeps, contact queries and
// raycasts one thread runs per second with inputs like a game's: a 0.4 m x
// 1.8 m capsule near the ground, moving 0.05 to 1.6 m per query. The inputs
// are seeded, so every run (and every machine) times the same queries; the
// result hashes printed with them show that the answers are the same too.
// Doubles appear only to print times and rates.
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <keel/sim_hash.h>
#include <keel/sim_world.h>

#include "map_city.h"

#ifndef KEEL_SHARED_LEVELS_DIR
#define KEEL_SHARED_LEVELS_DIR "../shared/levels"
#endif

#define QUERY_COUNT 4096
#define BUILD_REPEATS 3
#define MAP_REPEATS 5
#define GENERATED_TRIANGLES 200000u
#define CONTACT_CAPACITY 16

// ---- timing and random numbers --------------------------------------------------

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// The process's CPU time: on a busy machine, apart from the waits.
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static sim_fx rng_fx(rng *r, sim_fx lo, sim_fx hi)
{
    uint64_t span = (uint64_t)((int64_t)hi - lo) + 1u;
    return (sim_fx)((int64_t)lo + (int64_t)(rng_next(r) % span));
}

// A direction uniform on the sphere (rejection sampling in the unit ball),
// scaled to `length`.
static sim_vec3 rng_dir(rng *r, sim_fx length)
{
    for (;;) {
        sim_vec3 v = sim_v3(rng_fx(r, -SIM_FX_ONE, SIM_FX_ONE), rng_fx(r, -SIM_FX_ONE, SIM_FX_ONE),
                            rng_fx(r, -SIM_FX_ONE, SIM_FX_ONE));
        int64_t l2 = sim_v3_len_sq64(v);
        if (l2 > ((int64_t)1 << 28) && l2 <= ((int64_t)1 << 32))
            return sim_dir_scale(sim_dir_from_v3(v), length);
    }
}

// ---- inputs -------------------------------------------------------------------------

typedef struct inputs {
    sim_sweep_input sweep[QUERY_COUNT];
    sim_overlap_input overlap[QUERY_COUNT];
    sim_ray_input ray[QUERY_COUNT];
} inputs;

// Ground height under (x, z), searched from above the level in pieces the
// ray query accepts; false when there is nothing below.
static bool ground_at(const sim_world *w, sim_aabb b, sim_fx x, sim_fx z, sim_fx *y)
{
    sim_vec3 at = sim_v3(x, sim_fx_add(b.max.y, SIM_FX_ONE), z);
    sim_fx bottom = sim_fx_sub(b.min.y, SIM_FX_ONE);
    while (at.y > bottom) {
        sim_fx piece = sim_fx_min(SIM_FX_INT(60), sim_fx_sub(at.y, bottom));
        sim_ray_input in = {at, sim_v3(0, -piece, 0)};
        sim_ray_result r;
        if (sim_world_raycast(w, &in, &r)) {
            *y = r.point.y;
            return true;
        }
        at.y = sim_fx_sub(at.y, piece);
    }
    return false;
}

// --shape: the character measured (the same sizes as keel-sim's shapes).
static const char *shape_name = "capsule";

static sim_shape bench_shape(void)
{
    if (strcmp(shape_name, "box") == 0)
        return sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
    if (strcmp(shape_name, "cylinder") == 0)
        return sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
    return sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1800));
}

static void make_inputs(const sim_world *w, uint64_t seed, inputs *in)
{
    sim_world_stats st = sim_world_get_stats(w);
    sim_aabb b = st.bounds;
    sim_shape shape = bench_shape();
    rng r = {seed};
    for (int i = 0; i < QUERY_COUNT; i++) {
        sim_fx x = 0, z = 0, ground = b.min.y;
        for (int attempt = 0; attempt < 64; attempt++) {
            x = rng_fx(&r, b.min.x, b.max.x);
            z = rng_fx(&r, b.min.z, b.max.z);
            if (ground_at(w, b, x, z, &ground))
                break;
        }
        // Standing on the ground up to 2 m above it (jumping, falling).
        sim_fx lift = sim_fx_add(shape.half.y, rng_fx(&r, SIM_FX_MM(5), SIM_FX_INT(2)));
        sim_vec3 start = sim_v3(x, sim_fx_add(ground, lift), z);
        sim_fx len = rng_fx(&r, SIM_FX_MM(50), SIM_FX_MM(1600));
        in->sweep[i] = (sim_sweep_input){shape, start, rng_dir(&r, len), 0};
        // Contacts: from resting on the ground (or slightly in it) to 0.3 m
        // above, where a mover asks what it is about to touch.
        sim_fx h = sim_fx_add(shape.half.y, rng_fx(&r, -SIM_FX_MM(20), SIM_FX_MM(300)));
        in->overlap[i] = (sim_overlap_input){shape, sim_v3(x, sim_fx_add(ground, h), z), SIM_FX_MM(20)};
        // Rays: eye height, 0.5 to 20 m in any direction (line of sight, aim).
        sim_vec3 eye = sim_v3(x, sim_fx_add(ground, SIM_FX_MM(1600)), z);
        in->ray[i] = (sim_ray_input){eye, rng_dir(&r, rng_fx(&r, SIM_FX_MM(500), SIM_FX_INT(20)))};
    }
}

// ---- measurements ---------------------------------------------------------------------

typedef struct figures {
    const char *level;
    uint32_t triangles;
    double load_ms, build_ms;
    double sweeps_per_s, contacts_per_s, rays_per_s;
    double sweep_hit_pct, sweep_overlap_pct, contacts_avg, ray_hit_pct;
    uint64_t sweep_hash, contact_hash, ray_hash;
} figures;

static double min_seconds = 1.0;

static void bench_sweeps(const sim_world *w, const inputs *in, figures *f)
{
    uint64_t n = 0, hits = 0, overlaps = 0, h = SIM_HASH_SEED;
    double t0 = now_s(), t;
    do {
        for (int i = 0; i < QUERY_COUNT; i++) {
            sim_sweep_result r;
            if (sim_world_sweep(w, &in->sweep[i], &r)) {
                hits++;
                overlaps += r.start_overlap;
            }
            if (n < QUERY_COUNT)
                h = sim_hash_sweep_result(h, &r);
            n++;
        }
        t = now_s() - t0;
    } while (t < min_seconds);
    f->sweeps_per_s = (double)n / t;
    f->sweep_hit_pct = 100.0 * (double)hits / (double)n;
    f->sweep_overlap_pct = 100.0 * (double)overlaps / (double)n;
    f->sweep_hash = h;
}

static void bench_contacts(const sim_world *w, const inputs *in, figures *f)
{
    uint64_t n = 0, found = 0, h = SIM_HASH_SEED;
    double t0 = now_s(), t;
    do {
        for (int i = 0; i < QUERY_COUNT; i++) {
            sim_contact c[CONTACT_CAPACITY];
            int k = sim_world_contacts(w, &in->overlap[i], c, CONTACT_CAPACITY);
            found += (uint64_t)k;
            if (n < QUERY_COUNT) {
                h = sim_hash_u32(h, (uint32_t)k);
                for (int j = 0; j < k && j < CONTACT_CAPACITY; j++)
                    h = sim_hash_contact(h, &c[j]);
            }
            n++;
        }
        t = now_s() - t0;
    } while (t < min_seconds);
    f->contacts_per_s = (double)n / t;
    f->contacts_avg = (double)found / (double)n;
    f->contact_hash = h;
}

static void bench_rays(const sim_world *w, const inputs *in, figures *f)
{
    uint64_t n = 0, hits = 0, h = SIM_HASH_SEED;
    double t0 = now_s(), t;
    do {
        for (int i = 0; i < QUERY_COUNT; i++) {
            sim_ray_result r;
            hits += sim_world_raycast(w, &in->ray[i], &r);
            if (n < QUERY_COUNT)
                h = sim_hash_ray_result(h, &r);
            n++;
        }
        t = now_s() - t0;
    } while (t < min_seconds);
    f->rays_per_s = (double)n / t;
    f->ray_hit_pct = 100.0 * (double)hits / (double)n;
    f->ray_hash = h;
}

// Runs every measurement on a loaded level; frees the level. False when the
// world cannot be built.
static bool bench_level(const char *name, sim_level *level, double load_ms, figures *f)
{
    memset(f, 0, sizeof *f);
    f->level = name;
    f->load_ms = load_ms;
    sim_world_def def = sim_world_default_def();
    sim_world *w = NULL;
    double best = 0;
    for (int k = 0; k < BUILD_REPEATS; k++) {
        sim_error err;
        memset(&err, 0, sizeof err);
        if (w)
            sim_world_destroy(w);
        double t0 = now_s();
        w = sim_world_create(level, &def, &err);
        double t = now_s() - t0;
        if (!w) {
            fprintf(stderr, "bench_query: %s: cannot build the world: %s\n", name, err.message);
            sim_level_free(level);
            return false;
        }
        if (k == 0 || t < best)
            best = t;
    }
    f->build_ms = best * 1000.0;
    f->triangles = sim_world_get_stats(w).triangle_count;

    inputs *in = malloc(sizeof *in);
    if (!in) {
        fputs("bench_query: out of memory\n", stderr);
        sim_world_destroy(w);
        sim_level_free(level);
        return false;
    }
    make_inputs(w, 1, in);
    bench_sweeps(w, in, f);
    bench_contacts(w, in, f);
    bench_rays(w, in, f);
    free(in);
    sim_world_destroy(w);
    sim_level_free(level);
    return true;
}

// ---- pathological world builds -----------------------------------------------------------
//
// Levels that a file could use to stall world building: many triangles piled
// into a 2 cm cube, a 10,000-corner polygon (as an explicit fan around a centre
// and as one OBJ face, which the loader fans from its first corner) and zdm2
// shrunk to 1/120 of its size. Only the build is timed (once each).

#define POLYGON_CORNERS 10000
#define CUBE_EDGE SIM_FX_MM(20)

static int build_case_cube(sim_level *out, uint32_t triangles, uint64_t seed)
{
    sim_level_builder b;
    sim_level_builder_init(&b);
    rng r = {seed};
    for (uint32_t i = 0; i < triangles; i++) {
        sim_vec3 p[3];
        for (int k = 0; k < 3; k++) {
            sim_fx x = rng_fx(&r, 0, CUBE_EDGE);
            sim_fx y = rng_fx(&r, 0, CUBE_EDGE);
            sim_fx z = rng_fx(&r, 0, CUBE_EDGE);
            p[k] = sim_v3(x, y, z);
        }
        sim_level_builder_tri(&b, p[0], p[1], p[2]);
    }
    return sim_level_builder_finish(&b, out);
}

// A convex polygon of `corners` corners on a 10 m circle in the floor plane,
// as OBJ text: with a centre vertex and one triangle per side (fan), or as a
// single face listing every corner. Doubles only write the text.
static char *polygon_obj(int corners, bool fan, size_t *length)
{
    size_t cap = (size_t)corners * 48 + 64;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    size_t n = 0;
    if (fan)
        n += (size_t)snprintf(text + n, cap - n, "v 0 0 0\n");
    for (int i = 0; i < corners; i++) {
        double a = 6.283185307179586 * (double)i / (double)corners;
        n += (size_t)snprintf(text + n, cap - n, "v %.6f 0 %.6f\n", 10.0 * cos(a), -10.0 * sin(a));
    }
    if (fan) {
        for (int i = 0; i < corners; i++)
            n += (size_t)snprintf(text + n, cap - n, "f 1 %d %d\n", 2 + i, 2 + (i + 1) % corners);
    } else {
        n += (size_t)snprintf(text + n, cap - n, "f");
        for (int i = 0; i < corners; i++)
            n += (size_t)snprintf(text + n, cap - n, " %d", 1 + i);
        n += (size_t)snprintf(text + n, cap - n, "\n");
    }
    *length = n;
    return text;
}

static int build_case_polygon(sim_level *out, bool fan, sim_error *err)
{
    size_t length = 0;
    char *text = polygon_obj(POLYGON_CORNERS, fan, &length);
    if (!text) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return -1;
    }
    sim_obj_options o = sim_obj_default_options();
    int rc = sim_level_parse_obj(fan ? "fan.obj" : "polygon.obj", text, length, &o, out, err);
    free(text);
    return rc;
}

static const char *const build_case_names[] = {
    "cube2cm_5k", "cube2cm_10k", "cube2cm_20k", "cube2cm_100k", "fan_10k", "polygon_10k", "zdm2_scale0.001",
};
#define BUILD_CASE_COUNT (int)(sizeof build_case_names / sizeof build_case_names[0])

static const char *levels_dir(void);

// Loads case `k`; 1 when skipped (the real map is absent), -1 on failure.
static int load_build_case(int k, sim_level *out)
{
    static const uint32_t cube_tris[4] = {5000, 10000, 20000, 100000};
    sim_error err;
    memset(&err, 0, sizeof err);
    int rc;
    if (k < 4) {
        rc = build_case_cube(out, cube_tris[k], 7);
    } else if (k < 6) {
        rc = build_case_polygon(out, k == 4, &err);
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/sauerbraten_zdm2.obj", levels_dir());
        struct stat stbuf;
        if (stat(path, &stbuf) != 0) {
            printf("note: %s is absent; %s is skipped\n", path, build_case_names[k]);
            return 1;
        }
        sim_obj_options o = sim_obj_default_options();
        o.unit_scale = "0.001";
        rc = sim_level_load_obj(path, &o, out, &err);
    }
    if (rc != 0)
        fprintf(stderr, "bench_query: %s: %s\n", build_case_names[k], err.message);
    return rc;
}

// Builds the pathological cases (only `only` when not NULL) and prints the
// time each takes. Returns false when one cannot be built.
static bool bench_build_cases(const char *only)
{
    bool ok = true, any = false;
    printf("%-16s %10s %10s %9s %10s %12s %9s\n", "build case", "level tris", "triangles", "build ms", "inactive",
           "tests/tri", "capped");
    for (int k = 0; k < BUILD_CASE_COUNT; k++) {
        if (only && strcmp(only, build_case_names[k]) != 0)
            continue;
        any = true;
        sim_level level;
        int rc = load_build_case(k, &level);
        if (rc != 0) {
            ok = ok && rc > 0;
            continue;
        }
        sim_world_def def = sim_world_default_def();
        sim_error err;
        memset(&err, 0, sizeof err);
        double t0 = now_s();
        sim_world *w = sim_world_create(&level, &def, &err);
        double ms = (now_s() - t0) * 1000.0;
        if (!w) {
            fprintf(stderr, "bench_query: %s: cannot build the world: %s\n", build_case_names[k], err.message);
            sim_level_free(&level);
            ok = false;
            continue;
        }
        sim_world_stats st = sim_world_get_stats(w);
        printf("%-16s %10" PRIu32 " %10" PRIu32 " %9.1f %10" PRIu32 " %12.1f %9" PRIu32 "\n", build_case_names[k],
               level.triangle_count, st.triangle_count, ms, st.inactive_edges,
               (double)st.classify_tests / (double)(st.triangle_count ? st.triangle_count : 1), st.classify_capped);
        printf("BENCH bench_query build_case=%s metric=build_ms value=%.3f\n", build_case_names[k], ms);
        fflush(stdout);
        sim_world_destroy(w);
        sim_level_free(&level);
    }
    if (!any) {
        fprintf(stderr, "bench_query: unknown build case '%s'\n", only);
        return false;
    }
    return ok;
}

// ---- the shared real map ---------------------------------------------------------------

static const char *levels_dir(void)
{
    const char *env = getenv("KEEL_LEVELS_DIR");
    return env && env[0] ? env : KEEL_SHARED_LEVELS_DIR;
}

// ---- Quake .map levels -------------------------------------------------------------------

// Loading (parsing and the CSG union) and the world build of a .map, best of
// MAP_REPEATS: from `path`, or from `text` (len bytes) when path is NULL.
// Prints its line and BENCH figures under `name`; false when it fails.
static bool bench_map(const char *name, const char *path, const char *text, size_t len)
{
    double load = 0, build = 0, cpu = 0;
    uint32_t brushes = 0, tris = 0;
    for (int k = 0; k < MAP_REPEATS; k++) {
        sim_level l;
        sim_map m;
        sim_error err;
        memset(&err, 0, sizeof err);
        double c0 = cpu_s(), t0 = now_s();
        int rc = path ? sim_level_load_map(path, NULL, &l, &m, &err)
                      : sim_level_parse_map(name, text, len, NULL, &l, &m, &err);
        if (rc != 0) {
            fprintf(stderr, "bench_query: %s\n", err.message);
            return false;
        }
        double t1 = now_s();
        sim_world *w = sim_world_create(&l, NULL, &err);
        double t2 = now_s(), c = cpu_s() - c0;
        brushes = m.brush_count;
        tris = l.triangle_count;
        sim_world_destroy(w);
        sim_level_free(&l);
        sim_map_free(&m);
        if (!w) {
            fprintf(stderr, "bench_query: %s: cannot build the world: %s\n", name, err.message);
            return false;
        }
        load = k == 0 || t1 - t0 < load ? t1 - t0 : load;
        build = k == 0 || t2 - t1 < build ? t2 - t1 : build;
        cpu = k == 0 || c < cpu ? c : cpu;
    }
    double total = (load + build) * 1000.0;
    printf("%-16s %8" PRIu32 " %10" PRIu32 " %9.1f %9.1f %9.1f %11.1f %9.1f\n", name, brushes, tris, load * 1000.0,
           build * 1000.0, total, brushes ? total * 1000.0 / brushes : 0.0, cpu * 1000.0);
    printf("BENCH bench_query map=%s metric=map_load_ms value=%.3f\n", name, load * 1000.0);
    printf("BENCH bench_query map=%s metric=map_build_ms value=%.3f\n", name, build * 1000.0);
    printf("BENCH bench_query map=%s metric=map_cpu_ms value=%.3f\n", name, cpu * 1000.0);
    printf("BENCH bench_query map=%s metric=map_brushes value=%" PRIu32 "\n", name, brushes);
    fflush(stdout);
    return true;
}

// LibreQuake's two deathmatch maps (skipped when absent) and the generated
// zdm2-sized map of the tests (MAP_CITY_BRUSHES brushes: a floor of tiles,
// walls, pillars and columns), beside the target: a map of about 3,000
// brushes loads and builds in at most 300 ms (Release).
static bool bench_maps(void)
{
    static const char *const names[] = {"lqdm1", "lqdm2_a6"};
    bool ok = true;
    printf("%-16s %8s %10s %9s %9s %9s %11s %9s\n", "map", "brushes", "triangles", "load ms", "build ms", "total ms",
           "ms/1000 br", "cpu ms");
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/librequake/%s.map", levels_dir(), names[i]);
        struct stat stbuf;
        if (stat(path, &stbuf) != 0)
            printf("note: %s is absent; it is skipped\n", path);
        else
            ok = bench_map(names[i], path, NULL, 0) && ok;
    }
    size_t len;
    char *text = map_city_text(&len);
    if (!text) {
        fputs("bench_query: out of memory\n", stderr);
        return false;
    }
    ok = bench_map("generated_3000", NULL, text, len) && ok;
    free(text);
    printf("target: a map of about 3,000 brushes (generated_3000) loads and builds in <= 300 ms (Release):\n"
           "100 ms per 1000 brushes; best of %d; cpu ms: the process's CPU time for both, apart from the waits\n"
           "of a busy machine\n\n",
           MAP_REPEATS);
    return ok;
}

static void print_usage(FILE *f)
{
    fputs("usage: bench_query [--seconds N] [--shape capsule|box|cylinder] [--build-cases] [--case NAME] [--help]\n"
          "Times world building and sweeps, contact queries and raycasts on the built-in\n"
          "level, sauerbraten_zdm2.obj (from $KEEL_LEVELS_DIR or the shared levels folder)\n"
          "and a generated 200,000-triangle level, then loading and building LibreQuake's\n"
          "lqdm1.map and lqdm2_a6.map (from <levels>/librequake) and a generated .map of\n"
          "3,000 brushes, then world building alone on pathological levels (triangles piled\n"
          "in a 2 cm cube, a 10,000-corner polygon, zdm2 at scale 0.001).\n"
          "  --seconds N    minimum seconds per query figure, 1 to 60 (default 1)\n"
          "  --shape S      the character: capsule r 0.4 h 1.8 (default), box 0.8 x 1.8 x 0.8,\n"
          "                 cylinder r 0.4 h 1.8\n"
          "  --build-cases  only the pathological builds\n"
          "  --maps         only the .map levels' load and build times (exit 1 when one fails)\n"
          "  --case NAME    only this pathological build (cube2cm_5k, cube2cm_10k,\n"
          "                 cube2cm_20k, cube2cm_100k, fan_10k, polygon_10k, zdm2_scale0.001)\n"
          "  --help         print this help\n",
          f);
}

int main(int argc, char **argv)
{
    bool build_only = false;
    const char *only_case = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            print_usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--maps") == 0)
            return bench_maps() ? 0 : 1;
        if (strcmp(argv[i], "--build-cases") == 0) {
            build_only = true;
            continue;
        }
        if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            build_only = true;
            only_case = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "capsule") == 0 || strcmp(v, "box") == 0 || strcmp(v, "cylinder") == 0) {
                shape_name = v;
                continue;
            }
            fprintf(stderr, "bench_query: bad --shape '%s'\n", v);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            char *end = NULL;
            long s = strtol(v, &end, 10);
            if (v[0] >= '0' && v[0] <= '9' && *end == '\0' && s >= 1 && s <= 60) {
                min_seconds = (double)s;
                continue;
            }
            fprintf(stderr, "bench_query: bad --seconds '%s'\n", v);
        } else {
            fprintf(stderr, "bench_query: unknown option '%s'\n", argv[i]);
        }
        print_usage(stderr);
        return 2;
    }

    if (build_only)
        return bench_build_cases(only_case) ? 0 : 1;

    figures all[3];
    int count = 0;
    sim_level level;
    double t0;

    t0 = now_s();
    if (sim_level_builtin(&level) == 0) {
        if (bench_level("builtin", &level, (now_s() - t0) * 1000.0, &all[count]))
            count++;
    } else {
        fputs("bench_query: cannot build the built-in level\n", stderr);
    }

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
        t0 = now_s();
        if (sim_level_load_obj(path, &o, &level, &err) == 0) {
            if (bench_level("zdm2", &level, (now_s() - t0) * 1000.0, &all[count]))
                count++;
        } else {
            fprintf(stderr, "bench_query: %s\n", err.message);
        }
    }

    t0 = now_s();
    if (sim_level_generate(&level, GENERATED_TRIANGLES, 1) == 0) {
        if (bench_level("generated_200k", &level, (now_s() - t0) * 1000.0, &all[count]))
            count++;
    } else {
        fputs("bench_query: cannot generate the level\n", stderr);
    }

    printf("%s (r 0.4 or half width 0.4, h 1.8); sweeps 0.05-1.6 m; contacts margin 0.02 m; rays 0.5-20 m; "
           "%d seeded inputs per level, >= %.0f s per figure; build = best of %d\n\n",
           shape_name, QUERY_COUNT, min_seconds, BUILD_REPEATS);
    printf("%-16s %10s %9s %9s %11s %11s %11s %7s %8s %9s %7s\n", "level", "triangles", "load ms", "build ms",
           "sweeps/s", "contacts/s", "rays/s", "hit %", "overlap%", "contacts", "ray hit%");
    for (int i = 0; i < count; i++) {
        const figures *f = &all[i];
        printf("%-16s %10" PRIu32 " %9.1f %9.1f %11.0f %11.0f %11.0f %7.1f %8.2f %9.2f %7.1f\n", f->level, f->triangles,
               f->load_ms, f->build_ms, f->sweeps_per_s, f->contacts_per_s, f->rays_per_s, f->sweep_hit_pct,
               f->sweep_overlap_pct, f->contacts_avg, f->ray_hit_pct);
    }
    printf("\n");
    for (int i = 0; i < count; i++) {
        const figures *f = &all[i];
        const char *l = f->level;
        printf("BENCH bench_query shape=%s level=%s metric=triangles value=%" PRIu32 "\n", shape_name, l, f->triangles);
        printf("BENCH bench_query shape=%s level=%s metric=load_ms value=%.3f\n", shape_name, l, f->load_ms);
        printf("BENCH bench_query shape=%s level=%s metric=build_ms value=%.3f\n", shape_name, l, f->build_ms);
        printf("BENCH bench_query shape=%s level=%s metric=sweeps_per_s value=%.0f\n", shape_name, l, f->sweeps_per_s);
        printf("BENCH bench_query shape=%s level=%s metric=contacts_per_s value=%.0f\n", shape_name, l,
               f->contacts_per_s);
        printf("BENCH bench_query shape=%s level=%s metric=rays_per_s value=%.0f\n", shape_name, l, f->rays_per_s);
        printf("BENCH bench_query shape=%s level=%s metric=sweep_hit_pct value=%.2f\n", shape_name, l,
               f->sweep_hit_pct);
        printf("BENCH bench_query shape=%s level=%s metric=sweep_start_overlap_pct value=%.2f\n", shape_name, l,
               f->sweep_overlap_pct);
        printf("BENCH bench_query shape=%s level=%s metric=contacts_per_query value=%.3f\n", shape_name, l,
               f->contacts_avg);
        printf("BENCH bench_query shape=%s level=%s metric=ray_hit_pct value=%.2f\n", shape_name, l, f->ray_hit_pct);
        printf("BENCH bench_query shape=%s level=%s metric=result_hash sweeps=%016" PRIx64 " contacts=%016" PRIx64
               " rays=%016" PRIx64 "\n",
               shape_name, l, f->sweep_hash, f->contact_hash, f->ray_hash);
    }
    printf("\n");
    bool maps = bench_maps();
    bool built = bench_build_cases(NULL);
    return count > 0 && maps && built ? 0 : 1;
}
