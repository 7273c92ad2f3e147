// keel tests: a scene's moves on several threads give the one-thread result.
// MIT licence, see LICENSE.
//
// Parallel ticks. sim_scene_set_parallel hands the characters'
// moves to an executor; every character collides with the others'
// start-of-tick shapes, so the moves are independent and the result must be
// bit-identical to the plain loop whatever the executor does. Each case runs
// one scene on the built-in level -- a crowd pushing into one spot, riders
// and bystanders on the moving platforms, swimmers in a pool, characters
// walking, jumping and crouching at random, the crouched shape of another
// type than the standing one -- first with no executor, then with keel_jobs
// pools of 2, 3 and 8 threads and with hostile executors (items in reverse,
// ranges of odd sizes in a scrambled order, a pool whose items are
// reversed), comparing the scene hash after every tick. keel-sim --threads
// 1, 2, 3 and 8 must print the same bytes.
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_scene.h>

#include "keel_jobs.h"
#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLOW_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLOW_BUILD 1
#endif
#endif
#ifdef SLOW_BUILD
#define TICK_DIVISOR 4 // the same cases, shorter: the sanitizers are several times slower
#else
#define TICK_DIVISOR 1
#endif

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)
#define PI 3.14159265358979323846
#define ELEVATOR 100001u
#define SHUTTLE 100002u

static sim_level level;
static sim_world *world;

static void setup(void) { world = keel_test_builtin_world(&level); }
static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(parallel, .init = setup, .fini = teardown, .timeout = 600);

static sim_vec3 marker(const char *name)
{
    const sim_marker *m = sim_level_find_marker(&level, name);
    cr_assert_not_null(m, "marker %s", name);
    return m->position;
}

// ---- the scene ------------------------------------------------------------------

// Where the characters start and what they head for.
typedef struct group {
    const char *spawn;      // marker
    uint32_t count;         // on a square grid 1 m apart around the marker
    const char *targets[3]; // markers they walk toward in turn (NULL ends)
} group;

static const group groups[] = {
    // A crowd all pressing into the spawn point from around it.
    {"spawn", 25, {"spawn", "floor_center", NULL}},
    // Riders, bystanders and characters the platforms drive into.
    {"platform_area", 16, {"platform_area", "spawn", NULL}},
    // Into the pit, where the pool is, and out again if they can.
    {"pit_edge", 9, {"pit_bottom", "pit_edge", NULL}},
    // A jam in the low tunnel, where standing up is blocked.
    {"tunnel_entry", 6, {"tunnel_inside", "tunnel_entry", NULL}},
};
#define GROUP_COUNT (sizeof groups / sizeof groups[0])

typedef struct target_list {
    sim_vec3 points[3];
    uint32_t n;
} target_list;

typedef struct run_config {
    sim_shape stand, crouch;
    uint32_t ticks;
} run_config;

// The character's command at `tick`: from (id, tick) and where it stands, so
// equal states get equal commands.
static sim_input command_for(const sim_char_state *c, const target_list *t, uint32_t tick)
{
    keel_rng r = {((uint64_t)c->id << 32) ^ (tick / 16u) * 0x9E3779B97F4A7C15ull};
    sim_input in = {0};
    in.tick = tick;
    sim_vec3 goal = t->points[(tick / 256u + c->id) % t->n];
    double dx = D(goal.x - c->position.x), dz = D(goal.z - c->position.z);
    // Forward is (-sin yaw, 0, -cos yaw), yaw a 16-bit turn.
    double a = atan2(-dx, -dz);
    long v = lround(a / (2 * PI) * 65536.0) + (long)keel_rng_range(&r, -3000, 3000);
    in.yaw = (sim_angle)(((v % 65536) + 65536) % 65536);
    in.forward = (int8_t)keel_rng_range(&r, 40, 127);
    in.right = (int8_t)keel_rng_range(&r, -60, 60);
    in.up = (int8_t)keel_rng_range(&r, -127, 127); // swimmers go up and down
    int64_t b = keel_rng_range(&r, 0, 9);
    if (b == 0)
        in.buttons |= SIM_BUTTON_JUMP;
    if (b >= 7)
        in.buttons |= SIM_BUTTON_CROUCH;
    return in;
}

typedef struct scene_run {
    sim_scene *scene;
    target_list *targets; // index id - 1
    uint32_t count;
} scene_run;

static void scene_begin(scene_run *r, const run_config *cfg)
{
    sim_move_settings s = sim_move_default_settings();
    s.stand_shape = cfg->stand;
    s.crouch_shape = cfg->crouch;
    cr_assert(sim_move_settings_check(&s, NULL));
    uint32_t n = 0;
    for (size_t g = 0; g < GROUP_COUNT; g++)
        n += groups[g].count;
    r->count = n;
    r->scene = sim_scene_create(world, &s, n);
    cr_assert_not_null(r->scene);
    r->targets = calloc(n, sizeof *r->targets);
    cr_assert_not_null(r->targets);
    cr_assert_eq(sim_scene_add_area_platforms(r->scene, &level, ELEVATOR, SHUTTLE), 0);
    // The pool: the pit (x -20..-17, z -24..-21, floor at -2) filled to 0.3 m
    // below the rim.
    sim_aabb pool = {{M(-20), M(-2), M(-24)}, {M(-17), M(-0.3), M(-21)}};
    cr_assert_eq(sim_scene_add_water(r->scene, pool), 0);
    uint32_t id = 1;
    for (size_t g = 0; g < GROUP_COUNT; g++) {
        const group *gr = &groups[g];
        sim_vec3 at = marker(gr->spawn);
        uint32_t side = (uint32_t)ceil(sqrt((double)gr->count));
        for (uint32_t k = 0; k < gr->count; k++, id++) {
            // A grid 1 m apart (0.8 m wide shapes: close, not overlapping),
            // centred on the marker.
            double fx = (double)(k % side) - (side - 1) / 2.0, fz = (double)(k / side) - (side - 1) / 2.0;
            sim_vec3 feet = sim_v3(at.x + M(fx), at.y, at.z + M(fz));
            sim_char_state c = sim_char_spawn(id, feet, (sim_angle)(id * 2654435761u >> 16));
            cr_assert_eq(sim_scene_add_character(r->scene, &c), 0, "character %u", id);
            target_list *t = &r->targets[id - 1];
            for (t->n = 0; t->n < 3 && gr->targets[t->n]; t->n++)
                t->points[t->n] = marker(gr->targets[t->n]);
        }
    }
}

static void scene_end(scene_run *r)
{
    sim_scene_destroy(r->scene);
    free(r->targets);
}

// Character-ticks spent doing what the cases are for.
typedef struct coverage {
    uint64_t swimming, riding, crouched, airborne, jumps;
} coverage;

// Step `ticks` times, writing the hash after each tick into hashes[] (and
// what the characters did into *cov when given).
static void scene_play(scene_run *r, uint32_t ticks, uint64_t *hashes, coverage *cov)
{
    for (uint32_t t = 0; t < ticks; t++) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(r->scene, &n);
        for (uint32_t i = 0; i < n; i++) {
            sim_input in = command_for(&chars[i], &r->targets[chars[i].id - 1], sim_scene_tick(r->scene));
            sim_scene_set_input(r->scene, chars[i].id, &in);
        }
        sim_scene_step(r->scene);
        hashes[t] = sim_scene_hash(r->scene);
        if (!cov)
            continue;
        chars = sim_scene_characters(r->scene, &n);
        for (uint32_t i = 0; i < n; i++) {
            const sim_char_state *c = &chars[i];
            cov->swimming += c->move_type == SIM_MOVE_SWIM;
            cov->riding += c->ground_object == ELEVATOR || c->ground_object == SHUTTLE;
            cov->crouched += (c->flags & SIM_CHAR_CROUCHED) != 0;
            cov->airborne += c->move_type == SIM_MOVE_AIR;
            cov->jumps += c->move_type == SIM_MOVE_AIR && c->velocity.y > M(4.0);
        }
    }
}

// ---- executors --------------------------------------------------------------------

// Counts what an executor was asked: the scene must use it when given one.
typedef struct exec_log {
    uint64_t calls;
    uint64_t items;
} exec_log;

// Every item alone, last first.
typedef struct reverse_exec {
    exec_log log;
} reverse_exec;

static void run_reverse(void *user, uint32_t count, sim_task_fn fn, void *task)
{
    reverse_exec *e = user;
    e->log.calls++;
    e->log.items += count;
    for (uint32_t i = count; i-- > 0;)
        fn(task, i, i + 1);
}

// Ranges of sizes 1, 2, 3, 5, 8, ... cut from the whole and run in an order
// scrambled by a seed that changes every call.
typedef struct scramble_exec {
    exec_log log;
    keel_rng rng;
    uint32_t begin[4096], end[4096];
} scramble_exec;

static void run_scramble(void *user, uint32_t count, sim_task_fn fn, void *task)
{
    scramble_exec *e = user;
    e->log.calls++;
    e->log.items += count;
    uint32_t n = 0, at = 0, a = 1, b = 2;
    while (at < count) {
        cr_assert_lt(n, 4096u);
        uint32_t len = a;
        if (len > count - at)
            len = count - at;
        e->begin[n] = at;
        e->end[n] = at + len;
        n++;
        at += len;
        uint32_t next = a + b;
        a = b;
        b = next > 13 ? 1 : next; // 1, 2, 3, 5, 8, 13, 1, ...
    }
    for (uint32_t i = n; i > 1; i--) { // Fisher-Yates
        uint32_t j = (uint32_t)keel_rng_range(&e->rng, 0, i - 1);
        uint32_t tb = e->begin[i - 1], te = e->end[i - 1];
        e->begin[i - 1] = e->begin[j];
        e->end[i - 1] = e->end[j];
        e->begin[j] = tb;
        e->end[j] = te;
    }
    for (uint32_t i = 0; i < n; i++)
        fn(task, e->begin[i], e->end[i]);
}

// A keel_jobs pool, with or without the items reversed on their way through.
typedef struct pool_exec {
    exec_log log;
    keel_jobs *jobs;
    bool reversed;
    // the call in flight, for the reversing trampoline
    sim_task_fn fn;
    void *task;
    uint32_t count;
} pool_exec;

static void reversed_items(void *user, uint32_t begin, uint32_t end)
{
    const pool_exec *e = user;
    for (uint32_t i = end; i-- > begin;)
        e->fn(e->task, e->count - 1 - i, e->count - i);
}

static void run_pool(void *user, uint32_t count, sim_task_fn fn, void *task)
{
    pool_exec *e = user;
    e->log.calls++;
    e->log.items += count;
    if (!e->reversed) {
        keel_jobs_parallel_for(e->jobs, count, fn, task);
        return;
    }
    e->fn = fn;
    e->task = task;
    e->count = count;
    keel_jobs_parallel_for(e->jobs, count, reversed_items, e);
}

// ---- the comparison ------------------------------------------------------------------

// One run with `run`/`user` (NULL: none) and `batch`, compared tick by tick
// with `want`.
static void expect_same(const run_config *cfg, const uint64_t *want, const char *what, sim_parallel_for_fn run,
                        void *user, uint32_t batch, exec_log *log)
{
    scene_run r;
    scene_begin(&r, cfg);
    sim_scene_set_parallel(r.scene, run, user, batch);
    uint64_t *got = calloc(cfg->ticks, sizeof *got);
    cr_assert_not_null(got);
    scene_play(&r, cfg->ticks, got, NULL);
    for (uint32_t t = 0; t < cfg->ticks; t++)
        cr_assert_eq(got[t], want[t], "%s, batch %u: the hash differs from one thread's after tick %u", what,
                     (unsigned)batch, (unsigned)t + 1);
    if (run && log) {
        // Every tick has more characters than a batch: the executor ran them
        // all, once for the snapshot, once for the moves and once for each
        // pair scan of the separation passes (at least one a tick, after the
        // moves).
        uint32_t b = batch ? batch : SIM_SCENE_DEFAULT_BATCH;
        uint64_t per_call = (r.count + b - 1) / b;
        cr_assert_geq(log->calls, 3u * cfg->ticks, "%s: the executor was called %llu times in %u ticks", what,
                      (unsigned long long)log->calls, (unsigned)cfg->ticks);
        cr_assert_eq(log->items, per_call * log->calls, "%s: items", what);
        memset(log, 0, sizeof *log);
    }
    free(got);
    scene_end(&r);
}

// The reference run, then every executor against it.
static void check_config(const run_config *cfg, bool all_executors)
{
    uint64_t *want = calloc(cfg->ticks, sizeof *want);
    cr_assert_not_null(want);
    scene_run r;
    scene_begin(&r, cfg);
    coverage cov = {0};
    scene_play(&r, cfg->ticks, want, &cov);
    // The run must have done what the cases are for.
    cr_log_info("parallel: %u characters, %u ticks; character-ticks swimming %llu, on a platform %llu, "
                "crouched %llu, in the air %llu (rising fast %llu)",
                (unsigned)r.count, (unsigned)cfg->ticks, (unsigned long long)cov.swimming,
                (unsigned long long)cov.riding, (unsigned long long)cov.crouched, (unsigned long long)cov.airborne,
                (unsigned long long)cov.jumps);
    cr_assert(cov.swimming > 0 && cov.riding > 0 && cov.crouched > 0 && cov.jumps > 0,
              "the run lacks swimming, riding, crouching or jumping");
    scene_end(&r);

    // Pools of 2, 3 and 8 threads with the default batch; in the long case
    // also single characters and batches of 7, items reversed through a
    // pool, and the hostile executors on this thread.
    static const uint32_t pool_threads[] = {2, 3, 8};
    for (size_t k = 0; k < sizeof pool_threads / sizeof pool_threads[0]; k++) {
        pool_exec e = {0};
        e.jobs = keel_jobs_create(pool_threads[k]);
        cr_assert_not_null(e.jobs);
        char what[64];
        snprintf(what, sizeof what, "keel_jobs, %u threads", (unsigned)pool_threads[k]);
        if (!all_executors || pool_threads[k] == 2)
            expect_same(cfg, want, what, run_pool, &e, 0, &e.log);
        if (all_executors && pool_threads[k] == 3) {
            expect_same(cfg, want, what, run_pool, &e, 1, &e.log);
            expect_same(cfg, want, what, run_pool, &e, 7, &e.log);
        }
        if (all_executors && pool_threads[k] == 8) {
            e.reversed = true;
            expect_same(cfg, want, "keel_jobs, 8 threads, items reversed", run_pool, &e, 2, &e.log);
        }
        keel_jobs_destroy(e.jobs);
    }
    if (all_executors) {
        reverse_exec rev = {0};
        expect_same(cfg, want, "every item alone, in reverse", run_reverse, &rev, 1, &rev.log);
        scramble_exec *sc = calloc(1, sizeof *sc);
        cr_assert_not_null(sc);
        sc->rng.state = 12345;
        expect_same(cfg, want, "odd ranges, scrambled", run_scramble, sc, 1, &sc->log);
        free(sc);
    }
    free(want);
}

Test(parallel, capsules_crouching_to_cylinders_long_run)
{
    run_config cfg = {sim_shape_capsule(M(0.4), M(1.8)), sim_shape_cylinder(M(0.4), M(1.0)), 2500 / TICK_DIVISOR};
    check_config(&cfg, true);
}

Test(parallel, boxes_crouching_to_capsules)
{
    run_config cfg = {sim_shape_box(M(0.4), M(0.9), M(0.4)), sim_shape_capsule(M(0.4), M(1.0)), 600 / TICK_DIVISOR};
    check_config(&cfg, false);
}

Test(parallel, cylinders_crouching_to_boxes)
{
    run_config cfg = {sim_shape_cylinder(M(0.4), M(1.8)), sim_shape_box(M(0.4), M(0.5), M(0.4)), 200 / TICK_DIVISOR};
    check_config(&cfg, false);
}

// An executor is not called for a tick with one work item, nor after it is
// taken away again; the results stay the plain loop's.
Test(parallel, executor_skipped_and_removed)
{
    run_config cfg = {sim_shape_capsule(M(0.4), M(1.8)), sim_shape_capsule(M(0.4), M(1.0)), 60};
    uint64_t want[60], got[60];
    scene_run r;
    scene_begin(&r, &cfg);
    scene_play(&r, cfg.ticks, want, NULL);
    scene_end(&r);

    reverse_exec rev = {0};
    scene_begin(&r, &cfg);
    sim_scene_set_parallel(r.scene, run_reverse, &rev, r.count); // one item a tick
    scene_play(&r, 20, got, NULL);
    cr_assert_eq(rev.log.calls, 0u, "called for a single item");
    sim_scene_set_parallel(r.scene, run_reverse, &rev, 1);
    scene_play(&r, 20, got + 20, NULL);
    uint64_t calls = rev.log.calls;
    cr_assert_geq(calls, 60u, "snapshot, moves and separation scans: three times a tick at least");
    sim_scene_set_parallel(r.scene, NULL, &rev, 1);
    scene_play(&r, 20, got + 40, NULL);
    cr_assert_eq(rev.log.calls, calls, "called after being taken away");
    scene_end(&r);
    for (uint32_t t = 0; t < cfg.ticks; t++)
        cr_assert_eq(got[t], want[t], "tick %u", (unsigned)t + 1);
}

// The pool itself: every item exactly once, for counts around the thread
// count, many loops in a row.
static void count_items(void *task, uint32_t begin, uint32_t end)
{
    uint32_t *hits = task;
    for (uint32_t i = begin; i < end; i++)
        __atomic_fetch_add(&hits[i], 1u, __ATOMIC_RELAXED);
}

Test(parallel, pool_runs_every_item_once)
{
    static uint32_t hits[300];
    for (uint32_t threads = 1; threads <= 8; threads++) {
        keel_jobs *j = keel_jobs_create(threads);
        cr_assert_not_null(j);
        cr_assert_eq(keel_jobs_threads(j), threads);
        uint64_t shared = 0;
        for (uint32_t loop = 0; loop < 400; loop++) {
            uint32_t count = loop % 300;
            memset(hits, 0, sizeof hits);
            keel_jobs_parallel_for(j, count, count_items, hits);
            shared += threads > 1 && count > 1;
            for (uint32_t i = 0; i < 300; i++)
                cr_assert_eq(hits[i], i < count ? 1u : 0u, "%u threads, count %u: item %u ran %u times",
                             (unsigned)threads, (unsigned)count, (unsigned)i, (unsigned)hits[i]);
        }
        // Every loop of more than one item on more than one thread is shared.
        keel_jobs_stats st = keel_jobs_get_stats(j);
        cr_assert_eq(st.loops, shared, "%u threads: %llu loops counted, %llu shared", (unsigned)threads,
                     (unsigned long long)st.loops, (unsigned long long)shared);
        keel_jobs_destroy(j);
    }
    cr_assert_null(keel_jobs_create(0));
    cr_assert_null(keel_jobs_create(KEEL_JOBS_MAX_THREADS + 1));
    keel_jobs_destroy(NULL);
}

// The workers' watch for the next loop: the settings' edges, and pools that
// sleep at once or watch for the longest time still run every item once. A
// pool whose workers watch for 10 s is destroyed while they watch: the
// destroy wakes them (it does not wait out the watch).
Test(parallel, pool_watch_settings)
{
    keel_jobs_settings d = keel_jobs_default_settings();
    cr_assert_eq(d.threads, 1u);
    cr_assert_eq(d.watch_ns, (uint64_t)KEEL_JOBS_SPIN_NS);
    keel_jobs_settings bad = d;
    bad.threads = 0;
    cr_assert_null(keel_jobs_create_with(&bad));
    bad.threads = KEEL_JOBS_MAX_THREADS + 1;
    cr_assert_null(keel_jobs_create_with(&bad));
    bad = d;
    bad.watch_ns = KEEL_JOBS_WATCH_MAX_NS + 1u;
    cr_assert_null(keel_jobs_create_with(&bad));
    static const uint64_t watch[] = {0u, KEEL_JOBS_SPIN_NS, KEEL_JOBS_WATCH_MAX_NS};
    static uint32_t hits[100];
    for (size_t w = 0; w < sizeof watch / sizeof watch[0]; w++) {
        keel_jobs_settings s = d;
        s.threads = 2;
        s.watch_ns = watch[w];
        keel_jobs *j = keel_jobs_create_with(&s);
        cr_assert_not_null(j);
        cr_assert_eq(keel_jobs_threads(j), 2u);
        for (uint32_t loop = 0; loop < 50; loop++) {
            memset(hits, 0, sizeof hits);
            keel_jobs_parallel_for(j, 100, count_items, hits);
            for (uint32_t i = 0; i < 100; i++)
                cr_assert_eq(hits[i], 1u, "watch %llu ns: item %u ran %u times", (unsigned long long)watch[w],
                             (unsigned)i, (unsigned)hits[i]);
        }
        keel_jobs_destroy(j);
    }
}

// ---- keel-sim --threads ----------------------------------------------------------------

static keel_test_run_result run_keelsim(const char *const *args)
{
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 300; // a guard against hangs only
    return keel_test_run(keel_test_program_path("keel-sim"), args, &o);
}

// keel-sim with `base` (nbase arguments) and each --threads of `threads`
// (NULL-terminated): the same standard output, byte for byte.
static void keelsim_same_output(const char *const *base, size_t nbase, const char *const *threads)
{
    char *first = NULL;
    size_t first_len = 0;
    for (size_t k = 0; threads[k]; k++) {
        const char *args[32];
        cr_assert_lt(nbase + 3, sizeof args / sizeof args[0]);
        memcpy(args, base, nbase * sizeof *args);
        args[nbase] = "--threads";
        args[nbase + 1] = threads[k];
        args[nbase + 2] = NULL;
        keel_test_run_result r = run_keelsim(args);
        cr_assert_eq(r.exit_code, 0, "keel-sim --threads %s failed: %s", threads[k], r.err);
        cr_assert(strstr(r.out, "final_hash ") != NULL);
        if (k == 0) {
            first = r.out;
            first_len = r.out_len;
            r.out = NULL;
        } else {
            cr_assert_eq(r.out_len, first_len, "--threads %s: %zu bytes of output, %zu with one thread", threads[k],
                         r.out_len, first_len);
            cr_assert(memcmp(r.out, first, first_len) == 0, "--threads %s: the output differs from one thread's",
                      threads[k]);
        }
        keel_test_run_free(&r);
    }
    free(first);
}

Test(parallel, keelsim_threads_same_output)
{
    const char *ticks = TICK_DIVISOR > 1 ? "150" : "600";
    const char *const counts[] = {"1", "2", "3", "8", NULL};
    const char *const platforms[] = {"--characters", "48", "--platforms", "--ticks", ticks};
    keelsim_same_output(platforms, 5, counts);
    // The sync test's rollback scenes run on one thread: a parallel run must
    // pass it too.
    const char *const one_three[] = {"1", "3", NULL};
    const char *const cylinders[] = {"--characters", "24",  "--shape", "cylinder", "--ticks",     "150",
                                     "--format",     "csv", "--seed",  "7",        "--sync-test", "4"};
    keelsim_same_output(cylinders, 12, one_three);
}

Test(parallel, keelsim_threads_usage)
{
    static const char *const bad[] = {"0", "65", "x", "-1", ""};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *args[] = {"--threads", bad[k], NULL};
        keel_test_run_result r = run_keelsim(args);
        cr_assert_eq(r.exit_code, 2, "--threads '%s'", bad[k]);
        cr_assert(strstr(r.err, "--threads") != NULL);
        keel_test_run_free(&r);
    }
    const char *probes[] = {"--mode", "probes", "--threads", "2", NULL};
    keel_test_run_result r = run_keelsim(probes);
    cr_assert_eq(r.exit_code, 2);
    cr_assert(strstr(r.err, "--threads needs --mode characters") != NULL);
    keel_test_run_free(&r);
}
