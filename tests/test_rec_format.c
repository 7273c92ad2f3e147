// keel tests: the recording format: a real scene run written and read back
// tick for tick (keyframes every 64 ticks and every tick, compressed or not,
// threaded or not), cursors from every keyframe, truncated and corrupted
// copies, newer format versions, by-name schema decoding, client records
// and the size of a recording per player-hour. MIT licence.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <keel/net_proto.h>
#include <keel/rec.h>
#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "test_rec_scene.h"
#include "test_support.h"

// Internal pieces the hand-made files need (CRC, schema and header encoders).
#include "../rec/src/rec_internal.h"

static sim_level level;
static sim_world *world;
static char dir[256];

static void setup(void)
{
    cr_assert_eq(sim_level_builtin(&level), 0);
    world = sim_world_create(&level, NULL, NULL);
    cr_assert_not_null(world);
    snprintf(dir, sizeof dir, "/tmp/keel_test_rec_format_%ld", (long)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        cr_log_info("could not remove %s", dir);
    sim_world_destroy(world);
    sim_level_free(&level);
}

TestSuite(rec_format, .init = setup, .fini = teardown, .timeout = 240);

static const char *path_of(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void states_equal(const sim_char_state *a, const sim_char_state *b, uint32_t n, const char *what)
{
    uint32_t nf = 0;
    rec_state_fields(&nf);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < nf; k++)
            cr_assert_eq(rec_state_field_value(&a[i], k), rec_state_field_value(&b[i], k),
                         "%s: character %u field %s", what, i, rec_state_fields(NULL)[k].name);
}

static void tick_equal(const trs_tick *want, const rec_tick *got)
{
    cr_assert_eq(got->tick, want->tick);
    cr_assert_eq(got->leave_count, want->leave_count, "tick %u leaves", want->tick);
    for (uint32_t i = 0; i < want->leave_count; i++)
        cr_assert_eq(got->leaves[i], want->leaves[i]);
    cr_assert_eq(got->join_count, want->join_count, "tick %u joins", want->tick);
    states_equal(want->joins, got->joins, want->join_count, "join");
    cr_assert_eq(got->command_count, want->command_count, "tick %u commands", want->tick);
    for (uint32_t i = 0; i < want->command_count; i++) {
        const rec_command *a = &want->commands[i], *b = &got->commands[i];
        cr_assert_eq(b->id, a->id, "tick %u command %u id", want->tick, i);
        cr_assert(b->input.tick == a->input.tick && b->input.forward == a->input.forward &&
                      b->input.right == a->input.right && b->input.up == a->input.up &&
                      b->input.buttons == a->input.buttons && b->input.yaw == a->input.yaw &&
                      b->input.pitch == a->input.pitch,
                  "tick %u command %u differs", want->tick, i);
    }
    cr_assert_eq(got->world_hash, want->world_hash, "tick %u world hash", want->tick);
    cr_assert_eq(got->char_count, want->char_count, "tick %u characters", want->tick);
    for (uint32_t i = 0; i < want->char_count; i++) {
        cr_assert_eq(got->char_ids[i], want->ids[i]);
        cr_assert_eq(got->char_hashes[i], want->hashes[i], "tick %u character %u hash", want->tick, want->ids[i]);
    }
}

// Everything a file holds against the run that wrote it.
static void check_file(rec_file *f, const trs_run *run, bool complete)
{
    rec_info info;
    rec_file_info(f, &info);
    cr_assert_eq(info.complete, complete);
    cr_assert_eq(info.first_tick, run->first_tick);
    cr_assert_eq(info.tick_count, run->tick_count);
    uint32_t t0, n0;
    const sim_char_state *init;
    cr_assert(rec_file_initial(f, &t0, &init, &n0));
    cr_assert_eq(t0, run->first_tick);
    cr_assert_eq(n0, run->initial_count);
    states_equal(run->initial, init, n0, "initial");

    rec_error err;
    rec_cursor *c = rec_cursor_create(f, run->first_tick, &err);
    cr_assert_not_null(c, "%s", err.message);
    rec_tick t;
    uint32_t i = 0;
    while (rec_cursor_next(c, &t, &err)) {
        cr_assert_lt(i, run->tick_count);
        tick_equal(&run->ticks[i], &t);
        i++;
    }
    cr_assert_str_empty(err.message, "%s", err.message);
    cr_assert_eq(i, run->tick_count);
    rec_cursor_destroy(c);
    if (run->tick_count)
        cr_assert_eq(info.last_hash, run->ticks[run->tick_count - 1].world_hash);

    // every keyframe: the state at the start of its tick, and a cursor from it
    uint32_t interval = run->cfg.keyframe_interval;
    uint32_t expect_keys = 0;
    for (uint32_t k = 0; k < run->tick_count; k++)
        if (interval && (run->ticks[k].tick + 1u) % interval == 0)
            expect_keys++;
    cr_assert_eq(rec_file_keyframe_count(f), expect_keys);
    for (uint32_t k = 0; k < rec_file_keyframe_count(f); k++) {
        uint32_t kt, kn;
        const sim_char_state *ks;
        cr_assert(rec_file_keyframe(f, k, &kt, &ks, &kn, &err), "%s", err.message);
        cr_assert_eq(rec_file_keyframe_at(f, kt), (int64_t)k);
        uint32_t idx = kt - run->first_tick; // the tick after which this is the state
        cr_assert_gt(idx, 0);
        const trs_tick *before = &run->ticks[idx - 1];
        cr_assert_eq(kn, before->char_count);
        states_equal(before->after, ks, kn, "keyframe");
        // keyframes in debug mode make this quadratic: sample them
        if (interval == 1 && k % 37 != 0 && k + 1 != rec_file_keyframe_count(f))
            continue;
        c = rec_cursor_create(f, kt, &err);
        cr_assert_not_null(c, "%s", err.message);
        uint32_t j = idx;
        while (rec_cursor_next(c, &t, &err))
            tick_equal(&run->ticks[j++], &t);
        cr_assert_str_empty(err.message, "%s", err.message);
        cr_assert_eq(j, run->tick_count);
        rec_cursor_destroy(c);
    }
}

static void round_trip(uint32_t interval, bool compress, bool threaded, uint32_t first_tick)
{
    trs_config cfg = trs_default_config();
    cfg.ticks = interval == 1 ? 200 : 400;
    cfg.characters = 16;
    cfg.capacity = 24;
    cfg.keyframe_interval = interval;
    cfg.compress = compress;
    cfg.threaded = threaded;
    cfg.first_tick = first_tick;
    cfg.seed = interval * 4u + compress * 2u + threaded + first_tick;
    trs_run run;
    rec_error err;
    const char *p = path_of("round.rec");
    cr_assert(trs_record(&level, world, &cfg, p, &run, &err), "%s", err.message);
    rec_file *f = rec_file_open(p, &err);
    cr_assert_not_null(f, "%s (offset %llu, chunk %s)", err.message, (unsigned long long)err.offset, err.chunk);
    const rec_header *h = rec_file_header(f);
    cr_assert_eq(h->keyframe_interval, interval);
    cr_assert_eq(h->platform_count, 2u);
    cr_assert_str_eq(h->source, "test_rec");
    cr_assert_eq(h->settings_digest, net_settings_digest(&h->settings));
    check_file(f, &run, true);
    rec_info info;
    rec_file_info(f, &info);
    cr_assert_eq(info.bytes_header + info.bytes_schema + info.bytes_initial + info.bytes_ticks +
                     info.bytes_keyframes + info.bytes_end + REC_MAGIC_SIZE,
                 info.file_bytes);
    if (compress)
        cr_assert_gt(info.compressed_blocks, 0u);
    else
        cr_assert_eq(info.compressed_blocks, 0u);
    uint64_t joins = 0, leaves = 0;
    for (uint32_t i = 0; i < run.tick_count; i++)
        joins += run.ticks[i].join_count, leaves += run.ticks[i].leave_count;
    cr_assert_eq(info.joins, joins);
    cr_assert_eq(info.leaves, leaves);
    cr_assert_gt(joins, 0u);
    cr_assert_gt(leaves, 0u);
    rec_file_close(f);
    trs_free(&run);
}

Test(rec_format, round_trip_keyframes_64_compressed_threaded) { round_trip(64, true, true, 0); }
Test(rec_format, round_trip_keyframes_64_plain_unthreaded) { round_trip(64, false, false, 0); }
Test(rec_format, round_trip_debug_mode_every_tick_compressed) { round_trip(1, true, false, 0); }
Test(rec_format, round_trip_debug_mode_every_tick_plain_threaded) { round_trip(1, false, true, 0); }
Test(rec_format, round_trip_without_keyframes_from_tick_1000) { round_trip(0, true, true, 1000); }
Test(rec_format, round_trip_keyframes_17_from_an_odd_tick) { round_trip(17, true, false, 5); }
