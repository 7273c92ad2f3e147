// keel benchmark: character movement throughput. MIT licence, see LICENSE.
//
// By default, the speed summary in one run: microseconds per
// character-tick on one thread (min and median over several interleaved
// rounds) for 64 and 1000 characters on a generated arena of about 7,000
// triangles and on the real map sauerbraten_zdm2.obj (when the shared levels
// folder is present), each world-only (sim_move_step against the static world
// alone, characters pass through each other) and in a scene (sim_scene_step:
// characters also collide with each other); the growth of the cost per
// character from 64 to 1000; the speed-up of the scene step on 2 threads (a
// keel_jobs pool whose workers sleep between steps, and one whose workers
// stay awake) for 1000 characters on the built-in level and zdm2; and a
// pile: 1000 characters added at one point of the built-in level, standing
// idle for 300 ticks (worst and mean tick, longest run of ticks any of them
// stayed stuck). The scene/world-only ratio at 1000 characters and the
// 2-thread speed-up are printed beside their targets (TARGET_SCENE_RATIO,
// TARGET_SPEEDUP). At 1000 characters a third case, the scene with a game of
// empty rules (keel/sim_game.h: a 16-byte command, 64 bytes per character,
// 1 KiB game-wide), is timed in the same rounds and printed against the scene
// alone beside TARGET_GAME_COST. At 64 characters (a server's match) the scene
// with the example game's rules (tests/games/tag: shots as rays, hits, marks
// in the entity table, respawns, the dash move type), every character's game
// command drawn anew every 16 ticks, is printed against the scene alone: what
// a game's rules add to the server's tick.
//
// With --table (or --independent or --shape), the older table instead:
// character-ticks per second of sim_scene_step (or, with --independent,
// sim_move_step against the world alone) on the built-in level, zdm2 and a
// generated 200,000-triangle level, for 1, 64 and 1000 characters, for the
// capsule, the box and the cylinder in turn (keel-sim's --shape sizes, all
// 0.8 m wide and 1.8 m tall) or the one --shape names.
//
// Characters walk, turn, crouch and jump with keel-sim's seeded random walk
// (tools/keel-sim/ks_common.h). They start on seeded spots of walkable floor
// (inside rooms on the real map) at least 1.2 m apart, and turn back at open
// edges, so they stay on the level for the whole run. Only the step is timed;
// making commands (and the edge guard's rays) is not. The state hash after a
// fixed number of ticks, printed with each figure, shows that the work done
// is the same on every run and machine. Doubles appear only to print times
// and rates.
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <keel/sim_game.h>
#include <keel/sim_hash.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "common/bench_ceiling.h"
#include "common/bench_speedup.h"
#include "common/bench_crowd.h"
#include "arena.h"
#include "tag.h"

#define SEED BENCH_SEED
#define GENERATED_TRIANGLES 200000u
#define ARENA_TRIANGLES 7000u
#define WARMUP_TICKS BENCH_WARMUP_TICKS
#define MIN_TICKS BENCH_MIN_TICKS
#define MAX_FIGURES 32
#define PILE_CHARACTERS 1000u
#define PILE_TICKS 300u
#define PAR_CHARACTERS 1000u
#define PAR_THREADS 2u
#define TARGET_SCENE_RATIO 1.2 // scene step over world-only moves, 1000 characters
#define TARGET_SPEEDUP 1.8     // the scene step on PAR_THREADS threads over one, 1000 characters
#define TARGET_GAME_COST 0.02  // a game with empty rules over the scene step alone, 1000 characters
#define TARGET_ARENA_COST 0.15 // keel-arena's rules over the scene step alone, 64 characters (server and client)

static const uint32_t counts[] = {1, 64, 1000};
#define COUNT_KINDS (sizeof counts / sizeof counts[0])

static double min_seconds = 1.0;
static bool independent = false;
static bool table = false;       // --table, --independent, --shape: the older table
static int rounds = 5;           // --rounds: of the summary
static uint32_t round_ticks = 0; // --ticks: ticks a round (0: by time)
static int only_mode = -1;       // --collision: 0 world-only, 1 scene, -1 both
static bool do_parallel = true, do_pile = true;
static const char *only_level = NULL; // --level: one level of the summary
static uint32_t only_count = 0;       // --characters: one count of the summary

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

static bool cpu_time = false; // --cpu-time: the summary's steps timed by the thread's CPU time

static double now_s(void) { return bench_now_s(); }

// The clock of the summary's steps: elapsed time, or with --cpu-time the
// CPU time of this thread (time other processes had the core on a busy
// machine does not count).
static double step_clock_s(void)
{
    if (!cpu_time)
        return now_s();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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
    uint64_t hash;      ///< state hash after WARMUP_TICKS + MIN_TICKS ticks
} figure;

// A game with the smallest sizes keel/sim_game.h promises (a 16-byte
// command, 64 bytes per character, 1 KiB game-wide) and no rules: what the
// mechanism costs a step by itself. crowd_init puts the scenes it makes
// into it while crowd_game is set.
static const sim_game *crowd_game;
// The rules a scene runs, which decide the commands it is given.
typedef enum rules_kind { RULES_NONE = 0, RULES_TAG = 1, RULES_ARENA = 2 } rules_kind;
static rules_kind crowd_rules; // crowd_init: the game's commands (tag's, arena's)
static bool crowd_predict;     // crowd_init: each step is a client's prediction step

static sim_game *empty_game(void)
{
    static const sim_game_field command[] = {{"word", SIM_GAME_INT, 0, 4, 32, 0, 0, 4, 4}};
    static const sim_game_field character[] = {{"word", SIM_GAME_INT, 0, 4, 32, 0, 0, 16, 4}};
    static const sim_game_field state[] = {{"word", SIM_GAME_UINT, 0, 4, 32, 0, 0, 256, 4}};
    sim_game_def d = sim_game_default_def();
    d.name = "empty";
    d.command = (sim_game_schema){16, command, 1};
    d.character = (sim_game_schema){64, character, 1};
    d.state = (sim_game_schema){1024, state, 1};
    return sim_game_create(&d, NULL);
}

// The characters, stepped either in a scene or one by one.
typedef struct crowd {
    const sim_world *world;
    sim_aabb bounds;
    sim_move_settings s;
    uint32_t count;
    sim_scene *scene;      // scene mode
    sim_char_state *chars; // independent mode, index id - 1
    sim_collider col;      // independent mode
    ks_walker *walkers;    // index id - 1
    sim_input *inputs;     // independent mode, index id - 1
    uint32_t tick;
    rules_kind rules; // the scene runs tests/games/tag or keel-arena: each command comes with the game's
    /// Each step is what cl_client's prediction does for a tick: keep the
    /// state before it (the characters, and with a game the scene's saved
    /// state: sim_scene_save), then step.
    bool predict;
    void *saved; // that state (predict)
    size_t saved_cap;
} crowd;

static const sim_char_state *crowd_chars(const crowd *c, uint32_t *n)
{
    if (c->scene)
        return sim_scene_characters(c->scene, n);
    *n = c->count;
    return c->chars;
}

// The example game's command of character `id` at `tick`: drawn from the
// seed anew every 16 ticks (as keel-client's bots draw theirs): firing 1 in
// 2, a dash 1 in 8, any weapon, an aim offset and a throw speed.
static tag_command tag_draw(uint32_t id, uint32_t tick)
{
    uint64_t h = sim_hash_u32(sim_hash_u32(SEED, id), tick / 16u);
    tag_command tc = {.fire = (uint8_t)(h & 1u),
                      .dash = (uint8_t)((h >> 1 & 7u) == 0),
                      .weapon = (uint8_t)((h >> 4) % 3u),
                      .aim = (sim_angle)((h >> 8) & 0xFFF0u),
                      .throw_speed = (sim_fx)((h >> 24) % (uint64_t)SIM_FX_INT(20))};
    return tc;
}

static void crowd_commands(crowd *c)
{
    uint32_t n;
    const sim_char_state *chars = crowd_chars(c, &n);
    for (uint32_t i = 0; i < n; i++) {
        sim_input in = ks_walker_next(&c->walkers[chars[i].id - 1], c->tick);
        ks_guard_edges(c->world, c->bounds, &chars[i], &in);
        tag_command tc = c->rules == RULES_TAG ? tag_draw(chars[i].id, c->tick) : (tag_command){0};
        // Arena: both fire buttons held, each weapon fired as often as its
        // interval allows (the rules' heaviest load: rays, rockets in flight).
        arena_command ac = {.fire_rail = 1, .fire_rocket = 1};
        if (c->rules == RULES_TAG)
            sim_scene_set_command(c->scene, chars[i].id, &in, &tc, NULL);
        else if (c->rules == RULES_ARENA)
            sim_scene_set_command(c->scene, chars[i].id, &in, &ac, NULL);
        else if (c->scene)
            sim_scene_set_input(c->scene, chars[i].id, &in);
        else
            c->inputs[chars[i].id - 1] = in;
    }
}

// A prediction step's keeping of the state before it (cl_client.c's
// cl_predict_one: the characters, and with a game sim_scene_save). The
// buffer grows once, never per tick after the first.
static void crowd_keep(crowd *c)
{
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(c->scene, &n);
    size_t size = sim_scene_game(c->scene) ? sim_scene_state_size(c->scene) : n * sizeof *chars;
    if (size > c->saved_cap) {
        void *b = realloc(c->saved, size);
        if (!b)
            return;
        c->saved = b;
        c->saved_cap = size;
    }
    if (sim_scene_game(c->scene))
        sim_scene_save(c->scene, c->saved);
    else
        memcpy(c->saved, chars, size);
}

static void crowd_step(crowd *c)
{
    if (c->scene) {
        if (c->predict)
            crowd_keep(c);
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
    free(c->saved);
    memset(c, 0, sizeof *c);
}

static bool crowd_init(crowd *c, const sim_level *level, const sim_world *w, bool rooms, int shape, uint32_t count,
                       bool in_scene, uint32_t *in_rooms)
{
    memset(c, 0, sizeof *c);
    c->world = w;
    c->bounds = sim_world_get_stats(w).bounds;
    c->s = shape_settings(shape);
    c->count = count;
    c->walkers = calloc(count, sizeof *c->walkers);
    c->inputs = calloc(count, sizeof *c->inputs);
    c->chars = calloc(count, sizeof *c->chars);
    if (in_scene)
        c->scene = sim_scene_create_game(w, &c->s, count, crowd_game);
    c->rules = in_scene ? crowd_rules : RULES_NONE;
    c->predict = in_scene && crowd_predict;
    if (!c->walkers || !c->inputs || !c->chars || (in_scene && !c->scene)) {
        crowd_free(c);
        fputs("bench_move: out of memory\n", stderr);
        return false;
    }
    if (!bench_spawn_crowd("bench_move", level, w, rooms, &c->s, count, c->chars, c->walkers, in_rooms)) {
        crowd_free(c);
        return false;
    }
    if (in_scene) {
        for (uint32_t i = 0; i < count; i++)
            sim_scene_add_character(c->scene, &c->chars[i]);
        free(c->chars);
        c->chars = NULL;
    } else {
        c->col = sim_collider_world(w);
    }
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
    if (!crowd_init(&c, level, w, rooms, shape, count, !independent, &f->spawned_in_rooms))
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

// ---- the summary: the speed figures -------------------------------------------------

#define MAX_ROUNDS 51

typedef struct scase {
    const char *level;
    uint32_t triangles, count;
    bool scene;
    bool game;        // a scene with a game: empty_game, tag or keel-arena (below)
    rules_kind rules; // the example game's or keel-arena's rules (64 characters)
    bool predict;     // each step a client's prediction step (64 characters)
    crowd c;
    double us[MAX_ROUNDS]; // per character-tick, one a round
    uint64_t ticks;        // timed
    uint64_t hash;         // after WARMUP_TICKS + MIN_TICKS ticks
    double max_tick_ms;
} scase;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// Min and median of v[0..n) (n >= 1).
static void min_median(const double *v, int n, double *min, double *median)
{
    double t[MAX_ROUNDS];
    memcpy(t, v, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *min = t[0];
    *median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

// One round of a case: steps until round_s seconds of them (4 ticks at least).
static void scase_round(scase *k, int round, double round_s)
{
    double total = 0;
    uint64_t n = 0;
    do {
        crowd_commands(&k->c);
        double t0 = step_clock_s();
        crowd_step(&k->c);
        double dt = step_clock_s() - t0;
        total += dt;
        if (dt * 1000.0 > k->max_tick_ms)
            k->max_tick_ms = dt * 1000.0;
        n++;
        if (k->c.tick == WARMUP_TICKS + MIN_TICKS)
            k->hash = crowd_hash(&k->c);
    } while (round_ticks ? n < round_ticks : (total < round_s || n < 4 || k->c.tick < WARMUP_TICKS + MIN_TICKS));
    k->ticks += n;
    k->us[round] = total * 1e6 / (double)(n * k->count);
}

typedef struct slevel {
    const char *name;
    sim_level level;
    sim_world *world;
    bool rooms;
} slevel;

static bool slevel_make(slevel *l, const char *name, bool rooms)
{
    sim_error err;
    memset(&err, 0, sizeof err);
    sim_world_def def = sim_world_default_def();
    l->name = name;
    l->rooms = rooms;
    l->world = sim_world_create(&l->level, &def, &err);
    if (!l->world) {
        fprintf(stderr, "bench_move: %s: cannot build the world: %s\n", name, err.message);
        return false;
    }
    return true;
}

static void slevel_free(slevel *l)
{
    if (l->world)
        sim_world_destroy(l->world);
    l->world = NULL;
    sim_level_free(&l->level);
}

// A scene or world-only case without a game and without prediction.
static bool bare(const scase *k) { return !k->game && !k->predict; }

// What a game's rules add: the case `g` (with a game) against `ref`, the
// same without one.
static void print_game_cost(const scase *g, const scase *ref)
{
    double gmin, gmed, smin, smed;
    min_median(g->us, rounds, &gmin, &gmed);
    min_median(ref->us, rounds, &smin, &smed);
    double cost = gmed / smed - 1, cost_min = gmin / smin - 1;
    if (g->rules == RULES_TAG) {
        const tag_state *ts = sim_scene_game_state(g->c.scene);
        printf("scene with the example game's rules (tag) / scene, %s, %" PRIu32
               " characters (medians): %+.1f%% (min %+.1f%%), %.1f vs %.1f us per tick; %" PRIu32 " hits in %" PRIu32
               " ticks, hash %016" PRIx64 "\n",
               g->level, g->count, 100.0 * cost, 100.0 * cost_min, gmed * g->count, smed * g->count, ts->hits,
               ts->clock, g->hash);
    } else if (g->rules == RULES_ARENA) {
        const arena_state *as = sim_scene_game_state(g->c.scene);
        uint32_t live = 0;
        for (uint32_t k = 0; k < ARENA_ROCKETS; k++)
            live += as->rocket[k].live;
        printf("%s with keel-arena's rules / without a game, %s, %" PRIu32
               " characters (medians): %+.1f%% (min %+.1f%%), %.1f vs %.1f us per tick, target <= %+.0f%%: %s; "
               "%" PRIu32 " kills in %" PRIu32 " ticks, %u rockets in flight at the end, hash %016" PRIx64 "\n",
               g->predict ? "client prediction step (state kept, then the step)" : "server tick (scene step)", g->level,
               g->count, 100.0 * cost, 100.0 * cost_min, gmed * g->count, smed * g->count, 100.0 * TARGET_ARENA_COST,
               cost <= TARGET_ARENA_COST ? "met" : "not met", as->kills, as->clock, live, g->hash);
    } else {
        printf("scene with a game of empty rules / scene, %s, %" PRIu32
               " characters (medians): %+.1f%% (min %+.1f%%), target <= %+.0f%%: %s, hash %016" PRIx64 "\n",
               g->level, g->count, 100.0 * cost, 100.0 * cost_min, 100.0 * TARGET_GAME_COST,
               cost <= TARGET_GAME_COST ? "met" : "not met", g->hash);
    }
}

static void print_summary_table(scase *cases, int ncases, double round_s)
{
    printf("us per character-tick on one thread%s, min / median of %d rounds (>= %.2f s of steps each,\n"
           "all cases interleaved round by round); world-only: sim_move_step against the static\n"
           "world (characters pass through each other); scene: sim_scene_step (they also collide);\n"
           "random walk at up to 8 m/s with jumps (seed %" PRIu64 "), edge guard on, %d warm-up ticks\n\n",
           cpu_time ? " (CPU time of the thread)" : "", rounds, round_s, SEED, WARMUP_TICKS);
    printf("%-9s %9s %6s %16s %16s %8s   %-16s %-16s\n", "level", "triangles", "chars", "world-only", "scene",
           "scene/w", "hash@48 world", "hash@48 scene");
    for (int i = 0; i < ncases; i++) {
        // One row per level and count: world-only and scene side by side.
        scase *w = NULL, *sc = NULL;
        for (int j = 0; j < ncases; j++)
            if (bare(&cases[j]) && strcmp(cases[j].level, cases[i].level) == 0 && cases[j].count == cases[i].count)
                *(cases[j].scene ? &sc : &w) = &cases[j];
        if (&cases[i] != (w ? w : sc))
            continue;
        double wmin = 0, wmed = 0, smin = 0, smed = 0;
        if (w)
            min_median(w->us, rounds, &wmin, &wmed);
        if (sc)
            min_median(sc->us, rounds, &smin, &smed);
        printf("%-9s %9" PRIu32 " %6" PRIu32 "    %5.2f / %5.2f    %5.2f / %5.2f %+7.0f%%   %016" PRIx64 " %016" PRIx64
               "\n",
               cases[i].level, cases[i].triangles, cases[i].count, wmin, wmed, smin, smed,
               w && sc ? 100.0 * (smed / wmed - 1) : 0.0, w ? w->hash : 0, sc ? sc->hash : 0);
    }
    // A game's cost: the scene step with a game of empty rules against the
    // same scene without one. The example game's and keel-arena's rules at
    // 64 characters against the same scene without a game: the server's
    // tick with and without them; and a client's prediction step with and
    // without keel-arena.
    for (int i = 0; i < ncases; i++) {
        if (!cases[i].game)
            continue;
        for (int j = 0; j < ncases; j++)
            if (cases[j].scene && !cases[j].game && cases[j].predict == cases[i].predict &&
                cases[j].count == cases[i].count && strcmp(cases[j].level, cases[i].level) == 0)
                print_game_cost(&cases[i], &cases[j]);
    }
    // The target for a crowd: the scene step at most TARGET_SCENE_RATIO times
    // the same moves against the world alone.
    for (int i = 0; i < ncases; i++) {
        if (cases[i].scene || cases[i].count != PAR_CHARACTERS)
            continue;
        for (int j = 0; j < ncases; j++) {
            if (!cases[j].scene || !bare(&cases[j]) || cases[j].count != cases[i].count ||
                strcmp(cases[j].level, cases[i].level) != 0)
                continue;
            double wmin, wmed, smin, smed;
            min_median(cases[i].us, rounds, &wmin, &wmed);
            min_median(cases[j].us, rounds, &smin, &smed);
            printf("scene / world-only, %s, %" PRIu32 " characters (medians): x%.2f, target <= x%.2f: %s\n",
                   cases[i].level, cases[i].count, smed / wmed, TARGET_SCENE_RATIO,
                   smed / wmed <= TARGET_SCENE_RATIO ? "met" : "not met");
        }
    }
    printf("\ncost per character, 1000 characters over 64 (medians):");
    bool first = true;
    for (int i = 0; i < ncases; i++) {
        if (cases[i].count != 64 || !bare(&cases[i]))
            continue;
        for (int j = 0; j < ncases; j++) {
            if (cases[j].count != 1000 || cases[j].scene != cases[i].scene || !bare(&cases[j]) ||
                strcmp(cases[j].level, cases[i].level) != 0)
                continue;
            double a, am, b, bm;
            min_median(cases[i].us, rounds, &a, &am);
            min_median(cases[j].us, rounds, &b, &bm);
            printf("%s %s %s x%.2f", first ? "" : ",", cases[i].level, cases[i].scene ? "scene" : "world-only",
                   bm / am);
            first = false;
        }
    }
    printf("\n\n");
}

static void print_summary_bench(scase *cases, int ncases)
{
    for (int i = 0; i < ncases; i++) {
        const scase *k = &cases[i];
        double mn, md;
        min_median(k->us, rounds, &mn, &md);
        printf("BENCH bench_move level=%s characters=%" PRIu32 " collision=%s metric=us_per_character_tick "
               "min=%.3f median=%.3f rounds=%d max_tick_ms=%.3f hash=%016" PRIx64 "\n",
               k->level, k->count,
               k->rules == RULES_TAG                   ? "scene_tag"
               : k->rules == RULES_ARENA && k->predict ? "predict_arena"
               : k->rules == RULES_ARENA               ? "scene_arena"
               : k->predict                            ? "predict"
               : k->game                               ? "scene_game"
               : k->scene                              ? "scene"
                                                       : "independent",
               mn, md, rounds, k->max_tick_ms, k->hash);
    }
}

// The 2-thread speed-up of the scene step (see bench_parallel for more),
// with the pool's workers sleeping between steps (the default watch) and
// watching through the gap (BENCH_WATCH_AWAKE_NS).
static void summary_parallel(slevel *const *levels, int nlevels)
{
    static const uint64_t watch_ns[2] = {KEEL_JOBS_SPIN_NS, BENCH_WATCH_AWAKE_NS};
    static const char *const watch_what[2] = {"sleep between steps", "stay awake"};
    keel_jobs *pools[2];
    for (int p = 0; p < 2; p++) {
        keel_jobs_settings js = keel_jobs_default_settings();
        js.threads = PAR_THREADS;
        js.watch_ns = watch_ns[p];
        pools[p] = keel_jobs_create_with(&js);
    }
    if (!pools[0] || !pools[1]) {
        fputs("bench_move: cannot start the threads; no speed-up figures\n", stderr);
        keel_jobs_destroy(pools[0]);
        keel_jobs_destroy(pools[1]);
        return;
    }
    printf("sim_scene_step on %u threads (keel_jobs, sim_scene_set_parallel) against one, %u characters,\n"
           ">= %.0f s of the one-thread scene; watch: how long the pool's workers watch for the next loop\n"
           "before they sleep; cores: what pure arithmetic got on the pool before/after; ceiling: what %u\n"
           "independent scenes, one per thread, got over one alone (median of %u rounds of %u ticks): no\n"
           "scheduling of one scene's work can beat it on this machine now\n",
           PAR_THREADS, PAR_CHARACTERS, min_seconds, PAR_THREADS, BENCH_CEILING_ROUNDS, BENCH_CEILING_TICKS);
    printf("%-9s %6s %9s %6s %10s %10s %9s %8s %11s\n", "level", "chars", "watch", "ticks", "1 thr ms", "2 thr ms",
           "speed-up", "moves", "cores");
    bench_speedup_options opt = bench_speedup_default_options();
    opt.min_seconds = min_seconds;
    for (int i = 0; i < nlevels; i++) {
        const slevel *l = levels[i];
        double best = 0;
        for (int p = 0; p < 2; p++) {
            bench_speedup f;
            keel_jobs_stats s0 = keel_jobs_get_stats(pools[p]);
            if (!bench_scene_speedup("bench_move", &l->level, l->world, l->rooms, PAR_CHARACTERS, pools[p], &opt, &f))
                continue;
            keel_jobs_stats s1 = keel_jobs_get_stats(pools[p]);
            if (!f.same) {
                printf("MISMATCH %s: the hashes differ after tick %" PRIu64 "\n", l->name, f.mismatch_tick);
                continue;
            }
            if (f.no_executor || f.ticks == 0) {
                printf("%-9s: no executor call\n", l->name);
                continue;
            }
            double up = f.seconds1 / f.secondsN;
            printf("%-9s %6u %6.1f ms %6" PRIu64 " %10.3f %10.3f %8.2fx %7.2fx %5.2f/%.2f\n", l->name, PAR_CHARACTERS,
                   (double)watch_ns[p] * 1e-6, f.ticks, f.seconds1 * 1e3 / (double)f.ticks,
                   f.secondsN * 1e3 / (double)f.ticks, up, f.moves1 / f.movesN, f.cores_before, f.cores_after);
            printf("  workers %s: speed-up x%.2f, target >= x%.2f on a quiet machine: %s; a worker slept %" PRIu64
                   " times, the caller %" PRIu64 " times (%.2f loops a tick)\n",
                   watch_what[p], up, TARGET_SPEEDUP, up >= TARGET_SPEEDUP ? "met" : "not met", s1.sleeps - s0.sleeps,
                   s1.caller_sleeps - s0.caller_sleeps,
                   (double)(s1.loops - s0.loops) / (double)(f.ticks + BENCH_WARMUP_TICKS));
            printf("BENCH bench_move level=%s characters=%u threads=%u watch_us=%.0f metric=scene_speedup value=%.3f "
                   "moves=%.3f cores=%.2f/%.2f\n",
                   l->name, PAR_CHARACTERS, PAR_THREADS, (double)watch_ns[p] * 1e-3, up, f.moves1 / f.movesN,
                   f.cores_before, f.cores_after);
            best = up > best ? up : best;
        }
        bench_ceiling c;
        if (bench_scene_ceiling("bench_move", &l->level, l->world, l->rooms, PAR_CHARACTERS, PAR_THREADS,
                                BENCH_CEILING_TICKS, BENCH_CEILING_ROUNDS, &c)) {
            printf("  ceiling x%.2f (rounds x%.2f to x%.2f); the better speed-up is %.0f%% of it\n", c.median, c.min,
                   c.max, 100.0 * best / c.median);
            printf("BENCH bench_move level=%s characters=%u threads=%u metric=ceiling value=%.3f min=%.3f max=%.3f\n",
                   l->name, PAR_CHARACTERS, PAR_THREADS, c.median, c.min, c.max);
        }
    }
    printf("\n");
    keel_jobs_destroy(pools[0]);
    keel_jobs_destroy(pools[1]);
}

// A pile: every character added at the same feet point, idle.
static void summary_pile(const slevel *l)
{
    const sim_marker *m = NULL;
    for (uint32_t i = 0; i < l->level.marker_count && !m; i++)
        if (strcmp(l->level.markers[i].name, "spawn") == 0)
            m = &l->level.markers[i];
    if (!m) {
        printf("pile: the %s level has no spawn marker; skipped\n\n", l->name);
        return;
    }
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(l->world, &s, PILE_CHARACTERS);
    uint32_t *run = calloc(PILE_CHARACTERS + 1, sizeof *run);
    if (!sc || !run) {
        fputs("bench_move: out of memory\n", stderr);
        sim_scene_destroy(sc);
        free(run);
        return;
    }
    for (uint32_t id = 1; id <= PILE_CHARACTERS; id++) {
        sim_char_state ch = sim_char_spawn(id, m->position, 0);
        sim_scene_add_character(sc, &ch);
    }
    double total = 0, worst = 0;
    uint32_t longest = 0, stuck_end = 0;
    for (uint32_t t = 0; t < PILE_TICKS; t++) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(sc, &n);
        for (uint32_t i = 0; i < n; i++) {
            sim_input in = {0};
            in.tick = t;
            sim_scene_set_input(sc, chars[i].id, &in);
        }
        double t0 = now_s();
        sim_scene_step(sc);
        double dt = now_s() - t0;
        total += dt;
        if (dt > worst)
            worst = dt;
        chars = sim_scene_characters(sc, &n);
        stuck_end = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id = chars[i].id;
            if (chars[i].flags & SIM_CHAR_STUCK) {
                run[id]++;
                stuck_end++;
                if (run[id] > longest)
                    longest = run[id];
            } else {
                run[id] = 0;
            }
        }
    }
    printf("pile: %u characters added at the %s level's spawn marker (%.2f, %.2f, %.2f), idle,\n"
           "%u ticks of sim_scene_step on one thread\n",
           PILE_CHARACTERS, l->name, m->position.x / 65536.0, m->position.y / 65536.0, m->position.z / 65536.0,
           PILE_TICKS);
    printf("  worst tick %.3f ms, mean tick %.3f ms; longest run of ticks with SIM_CHAR_STUCK: %u; "
           "stuck after the last tick: %u; hash %016" PRIx64 "\n\n",
           worst * 1e3, total * 1e3 / PILE_TICKS, longest, stuck_end, sim_scene_hash(sc));
    printf("BENCH bench_move level=%s characters=%u metric=pile worst_tick_ms=%.3f mean_tick_ms=%.3f "
           "longest_stuck_ticks=%u stuck_end=%u hash=%016" PRIx64 "\n\n",
           l->name, PILE_CHARACTERS, worst * 1e3, total * 1e3 / PILE_TICKS, longest, stuck_end, sim_scene_hash(sc));
    sim_scene_destroy(sc);
    free(run);
}

static int run_summary(void)
{
    slevel arena = {0}, zdm2 = {0}, builtin = {0};
    bool have_arena = false, have_zdm2 = false, have_builtin = false;
    if (sim_level_generate(&arena.level, ARENA_TRIANGLES, 1) == 0)
        have_arena = slevel_make(&arena, "arena_7k", false);
    else
        fputs("bench_move: cannot generate the arena\n", stderr);
    if (bench_load_zdm2("bench_move", &zdm2.level) > 0)
        have_zdm2 = slevel_make(&zdm2, "zdm2", true);
    if (sim_level_builtin(&builtin.level) == 0)
        have_builtin = slevel_make(&builtin, "builtin", false);
    else
        fputs("bench_move: cannot build the built-in level\n", stderr);

    slevel *levels[2];
    int nlevels = 0;
    if (have_arena && (!only_level || strcmp(only_level, "arena") == 0))
        levels[nlevels++] = &arena;
    if (have_zdm2 && (!only_level || strcmp(only_level, "zdm2") == 0))
        levels[nlevels++] = &zdm2;
    static const uint32_t sizes[2] = {64, 1000};
    scase cases[20];
    int ncases = 0;
    // keel-arena with no end: no frag limit, no clock (the match goes on
    // through every round).
    static arena_def arena_no_end;
    arena_settings as = arena_default_settings();
    as.frag_limit = 0;
    as.match_ticks = 0;
    arena_def_init(&arena_no_end, &as);
    sim_game *game = empty_game(), *tag = sim_game_create(tag_game(), NULL);
    sim_game *arena_rules = sim_game_create(&arena_no_end.def, NULL);
    bool ok = nlevels > 0 && game && tag && arena_rules;
    // Modes: world-only, scene, and a scene with a game: of empty rules at
    // 1000 characters, the example game at 64; at 64 also keel-arena, and a
    // client's prediction step without a game and with keel-arena.
    for (int li = 0; li < nlevels && ok; li++)
        for (int ci = 0; ci < 2 && ok; ci++)
            for (int mode = 0; mode < 6 && ok; mode++) {
                if ((only_count && sizes[ci] != only_count) || (only_mode >= 0 && (mode > 0) != only_mode) ||
                    (mode >= 3 && sizes[ci] == PAR_CHARACTERS))
                    continue;
                scase *k = &cases[ncases];
                memset(k, 0, sizeof *k);
                k->level = levels[li]->name;
                k->triangles = sim_world_get_stats(levels[li]->world).triangle_count;
                k->count = sizes[ci];
                k->scene = mode >= 1;
                k->game = mode == 2 || mode == 3 || mode == 5;
                k->rules = mode == 3 || mode == 5                    ? RULES_ARENA
                           : mode == 2 && k->count != PAR_CHARACTERS ? RULES_TAG
                                                                     : RULES_NONE;
                k->predict = mode >= 4;
                uint32_t in_rooms;
                crowd_game = k->rules == RULES_ARENA ? arena_rules
                             : k->rules == RULES_TAG ? tag
                             : k->game               ? game
                                                     : NULL;
                crowd_rules = k->rules;
                crowd_predict = k->predict;
                ok = crowd_init(&k->c, &levels[li]->level, levels[li]->world, levels[li]->rooms, SIM_SHAPE_CAPSULE,
                                k->count, k->scene, &in_rooms);
                crowd_game = NULL;
                crowd_rules = RULES_NONE;
                crowd_predict = false;
                if (!ok)
                    break;
                ncases++;
                for (int t = 0; t < WARMUP_TICKS; t++) {
                    crowd_commands(&k->c);
                    crowd_step(&k->c);
                }
            }
    double round_s = min_seconds / rounds;
    if (ok) {
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < ncases; i++)
                scase_round(&cases[(i + r) % ncases], r, round_s); // rotate who goes first
        print_summary_table(cases, ncases, round_s);
    }
    for (int i = 0; i < ncases; i++)
        crowd_free(&cases[i].c);
    sim_game_destroy(game);
    sim_game_destroy(tag);
    sim_game_destroy(arena_rules);

    slevel *par[2];
    int npar = 0;
    if (have_builtin)
        par[npar++] = &builtin;
    if (have_zdm2)
        par[npar++] = &zdm2;
    if (do_parallel && npar > 0)
        summary_parallel(par, npar);
    if (do_pile && have_builtin)
        summary_pile(&builtin);
    if (ok)
        print_summary_bench(cases, ncases);
    slevel_free(&arena);
    slevel_free(&zdm2);
    slevel_free(&builtin);
    return ok ? 0 : 1;
}

static void print_usage(FILE *f)
{
    fputs("usage: bench_move [--seconds N] [--rounds R] [--ticks T] [--level arena|zdm2]\n"
          "                  [--characters 64|1000] [--collision world|scene] [--no-parallel]\n"
          "                  [--no-pile] [--cpu-time]\n"
          "       bench_move --table [--seconds N] [--shape capsule|box|cylinder|all] [--independent]\n"
          "By default, the speed summary, one thread unless said (zdm2 is sauerbraten_zdm2.obj\n"
          "at scale 0.12 from $KEEL_LEVELS_DIR or the shared levels folder, skipped when absent):\n"
          "  - us per character-tick, min / median over R interleaved rounds, 64 and 1000\n"
          "    capsules (r 0.4 h 1.8) on a generated arena of ~7,000 triangles and on zdm2,\n"
          "    world-only (sim_move_step against the static world: characters pass through\n"
          "    each other) and in a scene (sim_scene_step: they also collide), the scene's\n"
          "    extra cost over world-only, and the cost per character at 1000 over 64;\n"
          "  - the speed-up of the scene step on 2 threads (keel_jobs) over one, 1000\n"
          "    characters, on the built-in level and zdm2;\n"
          "  - at 1000 characters, the scene with a game of empty rules (keel/sim_game.h)\n"
          "    against the scene alone, beside its target (at most +2%);\n"
          "  - at 64 characters, the scene with keel-arena's rules (games/arena; every\n"
          "    character holds both fire buttons) against the scene alone: the server's tick;\n"
          "    and a client's prediction step (the state kept, as cl_client keeps it, then\n"
          "    the step) with and without keel-arena: both beside their target (at most +15%)\n"
          "  - at 64 characters, the scene with the example game's rules (tests/games/tag:\n"
          "    shots as rays, hits, respawns, the dash move type) against the scene alone;\n"
          "  - a pile: 1000 characters added at the built-in level's spawn marker, idle,\n"
          "    300 ticks: worst and mean tick, and the longest run of consecutive ticks\n"
          "    any character had SIM_CHAR_STUCK.\n"
          "Characters walk at random (keel-sim's walker: up to 8 m/s, new intent every\n"
          "second or so, jumps) and turn back at open edges; only the step is timed.\n"
          "  --seconds N     timed seconds per figure, 1 to 60 (default 1): split over the\n"
          "                  rounds in the summary; the minimum per figure with --table\n"
          "  --rounds R      rounds of the summary, 1 to 51 (default 5)\n"
          "  --ticks T       each round runs T ticks, 1 to 100000, instead of a time: the\n"
          "                  same work on every run (for a profiler: only sim_move_step\n"
          "                  and sim_scene_step are the step)\n"
          "  --level L       only the arena or only zdm2 in the per-character table\n"
          "  --characters C  only 64 or only 1000 characters in that table\n"
          "  --collision M   only world(-only) or only scene in that table\n"
          "  --no-parallel   leave out the 2-thread speed-up\n"
          "  --no-pile       leave out the pile\n"
          "  --cpu-time      time the summary's steps by the CPU time of the thread, not the\n"
          "                  elapsed time (a busy machine: others' time on the core left out)\n"
          "  --table         the older table instead: character-ticks per second on the\n"
          "                  built-in level, zdm2 and a generated 200,000-triangle level, for\n"
          "                  1, 64 and 1000 characters of each shape\n"
          "  --shape S       (implies --table) the characters: capsule r 0.4 h 1.8, box\n"
          "                  0.8 x 1.8 x 0.8, cylinder r 0.4 h 1.8 (crouched 1.0 m tall), or all\n"
          "                  three one after the other (default all)\n"
          "  --independent   (implies --table) step characters one by one against the\n"
          "                  static world only (no character-vs-character collisions)\n"
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
            table = true;
            continue;
        }
        if (strcmp(argv[i], "--table") == 0) {
            table = true;
            continue;
        }
        if (strcmp(argv[i], "--no-parallel") == 0) {
            do_parallel = false;
            continue;
        }
        if (strcmp(argv[i], "--cpu-time") == 0) {
            cpu_time = true;
            continue;
        }
        if (strcmp(argv[i], "--no-pile") == 0) {
            do_pile = false;
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
                table = true;
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
        } else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "arena") == 0 || strcmp(argv[i + 1], "zdm2") == 0)) {
            only_level = argv[++i];
            continue;
        } else if (strcmp(argv[i], "--characters") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "64") == 0 || strcmp(argv[i + 1], "1000") == 0)) {
            only_count = (uint32_t)atoi(argv[++i]);
            continue;
        } else if (strcmp(argv[i], "--collision") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "world") == 0 || strcmp(argv[i + 1], "scene") == 0)) {
            only_mode = strcmp(argv[++i], "scene") == 0;
            continue;
        } else if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            char *end = NULL;
            long r = strtol(v, &end, 10);
            if (v[0] >= '0' && v[0] <= '9' && *end == '\0' && r >= 1 && r <= 100000) {
                round_ticks = (uint32_t)r;
                continue;
            }
            fprintf(stderr, "bench_move: bad --ticks '%s'\n", v);
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            char *end = NULL;
            long r = strtol(v, &end, 10);
            if (v[0] >= '0' && v[0] <= '9' && *end == '\0' && r >= 1 && r <= MAX_ROUNDS) {
                rounds = (int)r;
                continue;
            }
            fprintf(stderr, "bench_move: bad --rounds '%s'\n", v);
        } else {
            fprintf(stderr, "bench_move: unknown option '%s'\n", argv[i]);
        }
        print_usage(stderr);
        return 2;
    }

    if (!table)
        return run_summary();

    figure all[MAX_FIGURES];
    int count = 0;
    sim_level level;

    if (sim_level_builtin(&level) == 0)
        count += bench_level("builtin", &level, false, &all[count]);
    else
        fputs("bench_move: cannot build the built-in level\n", stderr);

    if (bench_load_zdm2("bench_move", &level) > 0)
        count += bench_level("zdm2", &level, true, &all[count]);

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
    printf("%-15s %-8s %9s %6s %7s %14s %12s %10s %11s %7s  %s\n", "level", "shape", "triangles", "chars", "ticks",
           "char-ticks/s", "us/char-tick", "ms/tick", "max ms/tick", "stuck", "hash@48");
    for (int i = 0; i < count; i++) {
        const figure *f = &all[i];
        printf("%-15s %-8s %9" PRIu32 " %6" PRIu32 " %7" PRIu64 " %14.0f %12.2f %10.3f %11.3f %7" PRIu64 "  %016" PRIx64
               "\n",
               f->level, shape_names[f->shape], f->triangles, f->characters, f->ticks, f->per_s, 1e6 / f->per_s,
               f->tick_ms, f->max_tick_ms, f->stuck, f->hash);
    }
    // Side by side: microseconds per character-tick of each shape, and the
    // cylinder's cost relative to the capsule's.
    if (only_shape < 0) {
        printf("\n%-15s %6s %12s %12s %12s %10s\n", "us/char-tick", "chars", "capsule", "box", "cylinder", "cyl/caps");
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
        printf("%s %" PRIu32 " of %" PRIu32,
               any_rooms ? "," : "\nzdm2 spawns inside rooms (under a ceiling):", all[i].spawned_in_rooms,
               all[i].characters);
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
