// keel tests: a golden recording. MIT licence.
//
// A fixed scene run (24 characters pushing around the built-in level's spawn
// point, joins and leaves, both platforms, a water box; 640 ticks) is
// recorded without compression and with a fixed build id, and two values are
// pinned:
// - the world hash after the last tick: the behaviour;
// - an XXH64 of the whole file's bytes: the behaviour and the byte layout
//   (header, schema, blocks, keyframes). A change to either that was not
//   meant to happen fails here, on every build.
// The file must also verify (rec_verify) on this build.
//
// When a change is meant (docs/golden.md has the procedure): the failure
// prints the new values; paste them here, bump NET_BEHAVIOUR_VERSION for a
// behaviour change or REC_FORMAT_VERSION for an incompatible layout change,
// and say why in the commit message.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include <keel/rec_verify.h>

#include "test_rec_scene.h"

#define GOLDEN_RECORDING_LAST_HASH UINT64_C(0xb78ac9f7c096b2eb)
// Format 3 (REC_FORMAT_VERSION 3): each keyframe inside the tick block that
// starts at its tick, its records as varints behind a mask; blocks with
// varint prefixes.
#define GOLDEN_RECORDING_FILE_HASH UINT64_C(0xebda6a904561f8ae)
// The same run written in format 2 (the writer's test_format_version): no
// world hash per tick; each tick block ends with the world hash after its
// last tick and a 64-bit check over its ticks, with its 16-bit hashes after
// its commands; keyframes in chunks of their own.
#define GOLDEN_RECORDING_FILE_HASH_FORMAT_2 UINT64_C(0x657b8d8a9442f642)
// The same run written in format 1: the bytes every build wrote before
// format 2, so the oldest layout stays pinned too.
#define GOLDEN_RECORDING_FILE_HASH_FORMAT_1 UINT64_C(0xf1a4d151ed93d456)

static sim_level level;
static sim_world *world;

static void setup(void) { world = keel_test_builtin_world(&level); }

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(golden_recording, .init = setup, .fini = teardown, .timeout = 300);

static void golden_run(uint32_t format_version, uint64_t want_file_hash)
{
    char path[] = "/tmp/keel_golden_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);

    trs_config cfg = trs_default_config();
    cfg.ticks = 640;
    cfg.characters = 24;
    cfg.capacity = 48;
    cfg.keyframe_interval = 64;
    cfg.compress = false; // zstd's output may change between its versions
    cfg.threaded = true;
    cfg.churn = true;
    cfg.platforms = true;
    cfg.water = true;
    cfg.light = true;
    cfg.seed = 20261123;
    cfg.build_id = "golden";
    cfg.format_version = format_version;
    trs_run run;
    rec_error err;
    cr_assert(trs_record(&level, world, &cfg, path, &run, &err), "%s", err.message);
    trs_free(&run);

    size_t size = 0;
    uint8_t *bytes = trs_read_file(path, &size);
    cr_assert_not_null(bytes);
    uint64_t file_hash = sim_hash_bytes(SIM_HASH_SEED, bytes, size);
    free(bytes);

    rec_file *f = rec_file_open(path, &err);
    cr_assert_not_null(f, "%s", err.message);
    rec_info in;
    rec_file_info(f, &in);
    cr_assert(in.complete);
    cr_assert_eq(in.tick_count, 640);

    rec_verify_config vc = rec_default_verify_config();
    rec_divergence div;
    rec_verify_stats st;
    int rc = rec_verify(f, world, &vc, &div, &st, &err);
    cr_assert_eq(rc, REC_EXIT_MATCH, "verify: %d: %s %s", rc, div.detail, err.message);
    rec_file_close(f);
    remove(path);

    cr_log_info("golden recording: %zu bytes, last hash %016" PRIx64 ", file hash %016" PRIx64 "\n", size, in.last_hash,
                file_hash);
    cr_expect_eq(in.last_hash, GOLDEN_RECORDING_LAST_HASH,
                 "the behaviour changed: last hash is now UINT64_C(0x%016" PRIx64 ") (docs/golden.md)", in.last_hash);
    cr_expect_eq(file_hash, want_file_hash,
                 "the recording's bytes (format %u) changed: file hash is now UINT64_C(0x%016" PRIx64 "), %zu bytes "
                 "(docs/golden.md)",
                 (unsigned)format_version, file_hash, size);
}

Test(golden_recording, a_fixed_run_records_to_the_pinned_bytes_and_hash)
{
    golden_run(REC_FORMAT_VERSION, GOLDEN_RECORDING_FILE_HASH);
}

Test(golden_recording, the_same_run_in_format_2_records_to_its_pinned_bytes)
{
    golden_run(2, GOLDEN_RECORDING_FILE_HASH_FORMAT_2);
}

Test(golden_recording, the_same_run_in_format_1_records_to_its_pinned_bytes)
{
    golden_run(1, GOLDEN_RECORDING_FILE_HASH_FORMAT_1);
}
