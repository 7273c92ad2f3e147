// keel tests: a recorded scene run shared by the recording tests: characters
// on the built-in level with platforms, random or bot-like commands, joins
// and leaves, written through rec_writer while everything written is kept
// in memory to compare the file with. MIT licence.
#ifndef KEEL_TEST_REC_SCENE_H
#define KEEL_TEST_REC_SCENE_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/rec.h>
#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "test_support.h"

/// What one recorded tick was (deep copies).
typedef struct trs_tick {
    uint32_t tick;
    uint32_t leave_count, join_count, command_count, char_count;
    uint32_t *leaves;
    sim_char_state *joins;
    rec_command *commands;
    uint64_t world_hash;
    uint32_t *ids;
    uint16_t *hashes;
    sim_char_state *after; ///< the scene's characters after the tick
} trs_tick;

typedef struct trs_config {
    uint32_t ticks;
    uint32_t characters; ///< at the start
    uint32_t capacity;
    uint32_t keyframe_interval;
    bool compress, threaded;
    bool no_thread; ///< the writer's test_no_thread: a threaded writer that cannot start its thread
    bool bot;       ///< bot-like input (heading changes every second) instead of random
    bool churn;     ///< joins and leaves
    bool platforms;
    bool water; ///< a water box around the spawn point
    bool light; ///< keep nothing per tick (size and speed runs)
    uint64_t seed;
    uint32_t first_tick;     ///< the scene's tick when recording starts
    const char *build_id;    ///< NULL: this build's (a golden file fixes it)
    uint32_t format_version; ///< the writer's test_format_version (0: REC_FORMAT_VERSION)
    bool substitutes;        ///< mark about one command in 20 substituted (rec_command.substituted)
} trs_config;

typedef struct trs_run {
    trs_config cfg;
    uint32_t first_tick;
    sim_char_state *initial;
    uint32_t initial_count;
    trs_tick *ticks;
    uint32_t tick_count;
    uint64_t writer_ns;       ///< wall time spent in rec_writer_tick (a figure, never asserted)
    uint64_t character_ticks; ///< characters recorded, summed over ticks
} trs_run;

/// A recording suite's fixture: the built-in level, its world and a folder
/// for the suite's files.
typedef struct trs_fixture {
    sim_level level;
    sim_world *world;
    char dir[256];
} trs_fixture;

static inline void trs_fixture_make(trs_fixture *fx, const char *what)
{
    fx->world = keel_test_builtin_world(&fx->level);
    keel_test_dir_make(fx->dir, sizeof fx->dir, what);
}

static inline void trs_fixture_free(trs_fixture *fx)
{
    keel_test_dir_remove(fx->dir);
    keel_test_builtin_free(&fx->level, fx->world);
}

static inline trs_config trs_default_config(void)
{
    trs_config c;
    memset(&c, 0, sizeof c);
    c.ticks = 300;
    c.characters = 16;
    c.capacity = 32;
    c.keyframe_interval = 64;
    c.compress = true;
    c.churn = true;
    c.platforms = true;
    c.seed = 1;
    return c;
}

static inline void *trs_copy(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (n)
        memcpy(q, p, n);
    return q;
}

static inline void trs_free(trs_run *r)
{
    for (uint32_t i = 0; i < r->tick_count && !r->cfg.light; i++) {
        trs_tick *t = &r->ticks[i];
        free(t->leaves);
        free(t->joins);
        free(t->commands);
        free(t->ids);
        free(t->hashes);
        free(t->after);
    }
    free(r->ticks);
    free(r->initial);
    memset(r, 0, sizeof *r);
}

/// Record a run into `path`. Returns false (with *err) when the writer
/// refused something; the run is kept either way.
static inline bool trs_record(const sim_level *level, const sim_world *world, const trs_config *cfg, const char *path,
                              trs_run *run, rec_error *err)
{
    memset(run, 0, sizeof *run);
    run->cfg = *cfg;
    keel_rng rng = {cfg->seed * 0x9E3779B97F4A7C15ull + 7};
    sim_move_settings S = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(world, &S, cfg->capacity);
    if (cfg->platforms)
        sim_scene_add_area_platforms(scene, level, 100001, 100002);
    const sim_marker *spawn = sim_level_find_marker(level, "spawn");
    sim_vec3 base = spawn ? spawn->position : sim_v3(0, SIM_FX_INT(1), 0);
    uint32_t next_id = 1;
    for (uint32_t i = 0; i < cfg->characters; i++) {
        sim_vec3 p = sim_v3(base.x + SIM_FX_INT((int32_t)(i % 6)) - SIM_FX_INT(3), base.y,
                            base.z + SIM_FX_INT((int32_t)(i / 6)) - SIM_FX_INT(2));
        sim_char_state c = sim_char_spawn(next_id++, p, (sim_angle)keel_rng_range(&rng, 0, 65535));
        sim_scene_add_character(scene, &c);
    }
    // Start at a tick that is not 0 when asked: restore the same states at it.
    if (cfg->first_tick) {
        uint32_t n = 0;
        const sim_char_state *cs = sim_scene_characters(scene, &n);
        sim_char_state *copy = trs_copy(cs, n * sizeof *cs);
        sim_scene_restore_states(scene, cfg->first_tick, copy, n, NULL);
        free(copy);
    }
    rec_header h = rec_default_header();
    if (cfg->water)
        sim_scene_add_water(
            scene, (sim_aabb){sim_v3(base.x - SIM_FX_INT(2), base.y - SIM_FX_INT(1), base.z - SIM_FX_INT(2)),
                              sim_v3(base.x + SIM_FX_INT(1), base.y + SIM_FX_ONE / 2, base.z + SIM_FX_INT(1))});
    rec_header_set_scene(&h, scene);
    cr_assert_eq(h.max_characters, cfg->capacity);
    h.keyframe_interval = cfg->keyframe_interval;
    h.compress = cfg->compress;
    snprintf(h.source, sizeof h.source, "test_rec");
    if (cfg->build_id)
        snprintf(h.build_id, sizeof h.build_id, "%s", cfg->build_id);
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = cfg->threaded;
    wc.test_no_thread = cfg->no_thread;
    wc.test_format_version = cfg->format_version;
    rec_writer *w = rec_writer_open(path, &h, &wc, scene, err);
    if (!w) {
        sim_scene_destroy(scene);
        return false;
    }
    uint32_t n0 = 0;
    const sim_char_state *c0 = sim_scene_characters(scene, &n0);
    run->first_tick = sim_scene_tick(scene);
    run->initial = trs_copy(c0, n0 * sizeof *c0);
    run->initial_count = n0;
    run->ticks = calloc(cfg->ticks && !cfg->light ? cfg->ticks : 1, sizeof *run->ticks);

    uint32_t cap = cfg->capacity;
    uint32_t *leaves = calloc(cap, sizeof *leaves);
    sim_char_state *joins = calloc(cap, sizeof *joins);
    rec_command *cmds = calloc(cap, sizeof *cmds);
    // per id bot state: heading, forward (ids stay below 1 << 16 here)
    sim_angle *heading = calloc(1u << 16, sizeof *heading);
    bool ok = true;
    for (uint32_t k = 0; k < cfg->ticks && ok; k++) {
        uint32_t tick = sim_scene_tick(scene);
        uint32_t n = 0;
        const sim_char_state *cs = sim_scene_characters(scene, &n);
        rec_tick t;
        memset(&t, 0, sizeof t);
        t.tick = tick;
        if (cfg->churn && n > 4 && keel_rng_range(&rng, 0, 39) == 0) {
            uint32_t lc = (uint32_t)keel_rng_range(&rng, 1, 2);
            for (uint32_t i = 0; i < lc; i++) {
                uint32_t id = cs[keel_rng_range(&rng, 0, n - 1)].id;
                bool dup = false;
                for (uint32_t j = 0; j < t.leave_count; j++)
                    dup = dup || leaves[j] == id;
                if (!dup)
                    leaves[t.leave_count++] = id;
            }
        }
        for (uint32_t i = 0; i < t.leave_count; i++)
            sim_scene_remove_character(scene, leaves[i]);
        cs = sim_scene_characters(scene, &n);
        if (cfg->churn && n < cap && keel_rng_range(&rng, 0, 29) == 0) {
            uint32_t jc = (uint32_t)keel_rng_range(&rng, 1, 2);
            for (uint32_t i = 0; i < jc && n + t.join_count < cap; i++) {
                sim_vec3 p = sim_v3(base.x + keel_rng_fx(&rng, SIM_FX_INT(-3), SIM_FX_INT(3)), base.y,
                                    base.z + keel_rng_fx(&rng, SIM_FX_INT(-3), SIM_FX_INT(3)));
                joins[t.join_count++] = sim_char_spawn(next_id++, p, (sim_angle)keel_rng_range(&rng, 0, 65535));
            }
        }
        for (uint32_t i = 0; i < t.join_count; i++)
            sim_scene_add_character(scene, &joins[i]);
        cs = sim_scene_characters(scene, &n);
        bool sparse = !cfg->bot && keel_rng_range(&rng, 0, 9) == 0;
        for (uint32_t i = 0; i < n; i++) {
            if (sparse && keel_rng_range(&rng, 0, 2) == 0)
                continue;
            uint32_t id = cs[i].id;
            sim_input in;
            memset(&in, 0, sizeof in);
            in.tick = tick;
            if (cfg->bot) {
                // heading changes about once a second, jumps now and then
                if (keel_rng_range(&rng, 0, 63) == 0)
                    heading[id & 0xFFFF] = (sim_angle)keel_rng_range(&rng, 0, 65535);
                in.forward = 127;
                in.yaw = heading[id & 0xFFFF];
                in.buttons = keel_rng_range(&rng, 0, 199) == 0 ? SIM_BUTTON_JUMP : 0;
            } else {
                in.forward = (int8_t)keel_rng_range(&rng, -127, 127);
                in.right = (int8_t)keel_rng_range(&rng, -127, 127);
                in.up = keel_rng_range(&rng, 0, 3) == 0 ? (int8_t)keel_rng_range(&rng, -127, 127) : 0;
                in.buttons = (uint8_t)keel_rng_range(&rng, 0, 3);
                in.yaw = (sim_angle)keel_rng_range(&rng, 0, 65535);
                in.pitch = (sim_angle)keel_rng_range(&rng, 0, 65535);
                if (keel_rng_range(&rng, 0, 99) == 0)
                    in.tick = tick - 1u;
            }
            cmds[t.command_count].id = id;
            cmds[t.command_count].input = in;
            cmds[t.command_count].substituted = cfg->substitutes && keel_rng_range(&rng, 0, 19) == 0;
            t.command_count++;
            sim_scene_set_input(scene, id, &in);
        }
        t.leaves = leaves;
        t.joins = joins;
        t.commands = cmds;
        sim_scene_step(scene);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ok = rec_writer_tick(w, &t, scene);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        run->writer_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
        run->character_ticks += n;
        if (cfg->light) {
            run->tick_count++;
            continue;
        }

        trs_tick *rt = &run->ticks[run->tick_count++];
        rt->tick = tick;
        rt->leave_count = t.leave_count;
        rt->join_count = t.join_count;
        rt->command_count = t.command_count;
        rt->leaves = trs_copy(leaves, t.leave_count * sizeof *leaves);
        rt->joins = trs_copy(joins, t.join_count * sizeof *joins);
        rt->commands = trs_copy(cmds, t.command_count * sizeof *cmds);
        rt->world_hash = sim_scene_hash(scene);
        cs = sim_scene_characters(scene, &n);
        rt->char_count = n;
        rt->after = trs_copy(cs, n * sizeof *cs);
        rt->ids = malloc((n ? n : 1) * sizeof *rt->ids);
        rt->hashes = malloc((n ? n : 1) * sizeof *rt->hashes);
        for (uint32_t i = 0; i < n; i++) {
            rt->ids[i] = cs[i].id;
            rt->hashes[i] = rec_char_hash16(&cs[i]);
        }
    }
    rec_error cerr;
    bool closed = rec_writer_close(w, &cerr);
    if (ok && !closed && err)
        *err = cerr;
    free(leaves);
    free(joins);
    free(cmds);
    free(heading);
    sim_scene_destroy(scene);
    return ok && closed;
}

static inline uint8_t *trs_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
    size_t got = fread(p, 1, (size_t)n, f);
    fclose(f);
    *size = got;
    return p;
}

#endif
