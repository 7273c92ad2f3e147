// keel tests: keel-server's recording flags and its virtual-bot session, run
// as real processes, and their recordings checked with the real keel-replay.
// MIT licence, see LICENSE.
//
// The programs are found beside this test executable (the same build folder).
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_support.h"

static char dir[256];

static void setup(void) { keel_test_dir_make(dir, sizeof dir, "record_programs"); }

static void teardown(void) { keel_test_dir_remove(dir); }

TestSuite(record_programs, .init = setup, .fini = teardown, .timeout = 300);

typedef keel_test_run_result run_result;

// Run build/<program> args... to the end; `file_limit` > 0 caps the size of
// the files it writes (RLIMIT_FSIZE, with SIGXFSZ ignored: writes beyond the
// cap fail as on a full disk).
static run_result run(const char *program, const char *const *args, long file_limit)
{
    keel_test_run_options o = keel_test_run_default_options();
    o.file_limit = file_limit;
    return keel_test_run(keel_test_program_path(program), args, &o);
}

static void run_free(run_result *r) { keel_test_run_free(r); }

// The 16 hex digits after `key` in `text`.
static void hash_after(const char *text, const char *key, char out[17])
{
    const char *at = strstr(text, key);
    cr_assert_not_null(at, "no '%s' in: %s", key, text);
    memcpy(out, at + strlen(key), 16);
    out[16] = 0;
}

static const char *file_in_dir(const char *name) { return keel_test_dir_file(dir, name); }

Test(record_programs, a_virtual_session_records_what_keel_replay_verifies)
{
    const char *file = file_in_dir("virtual.krec");
    // 3,000 ticks; 1,000 under the sanitizers
    const char *ticks = KEEL_TEST_SIZE("3000", "1000");
    const char *args[] = {"--virtual-bots", "8", "--ticks", ticks, "--churn", "--seed", "4", "--record", file, NULL};
    run_result r = run("keel-server", args, 0);
    cr_log_info("%s%s", r.out, r.err);
    cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
    char recorded[17], final[17], want_rec[64], want_end[64];
    snprintf(want_rec, sizeof want_rec, "recorded %s ticks to ", ticks);
    snprintf(want_end, sizeof want_end, "\nkeel-server: final tick %s, final hash ", ticks);
    const char *rec_line = strstr(r.out, want_rec);
    const char *end_line = strstr(r.out, want_end);
    cr_assert(rec_line && end_line, "%s", r.out);
    hash_after(rec_line, "final hash ", recorded);
    hash_after(end_line, "final hash ", final);
    cr_expect_str_eq(recorded, final);
    cr_expect(strstr(r.out, "differing 0;") != NULL, "a client disagreed with the server: %s", r.out);
    const char *vargs[] = {"verify", file, NULL};
    run_result v = run("keel-replay", vargs, 0);
    cr_expect_eq(v.exit_code, 0, "keel-replay: %s%s", v.out, v.err);
    char last[17];
    hash_after(v.out, "last hash ", last);
    cr_expect_str_eq(last, final, "keel-replay's last hash and keel-server's final hash");
    // The same session again: the same final hash.
    const char *again[] = {"--virtual-bots", "8", "--ticks", ticks, "--churn", "--seed", "4", NULL};
    run_result r2 = run("keel-server", again, 0);
    char final2[17];
    hash_after(r2.out, "final hash ", final2);
    cr_expect_str_eq(final2, final, "the same virtual session twice");
    run_free(&r);
    run_free(&v);
    run_free(&r2);
}

Test(record_programs, debug_mode_and_no_compression_verify_too)
{
    const char *file = file_in_dir("full.krec");
    const char *args[] = {
        "--virtual-bots", "4", "--full-clients", "0", "--ticks", "1000", "--record", file, "--record-full",
        "--no-compress",  NULL};
    run_result r = run("keel-server", args, 0);
    cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
    const char *vargs[] = {"verify", file, NULL};
    run_result v = run("keel-replay", vargs, 0);
    cr_expect_eq(v.exit_code, 0, "keel-replay: %s%s", v.out, v.err);
    const char *iargs[] = {"info", file, NULL};
    run_result i = run("keel-replay", iargs, 0);
    cr_expect(strstr(i.out, "every 1 ticks") != NULL || strstr(i.out, "every tick") != NULL, "%s", i.out);
    cr_expect(strstr(i.out, "(0 compressed)") != NULL, "%s", i.out);
    run_free(&r);
    run_free(&v);
    run_free(&i);
}

// A writer that fails mid-run (here: a file-size limit, as a full disk) is
// reported; the session runs to its end; the exit status says so; what was
// written is a readable prefix.
Test(record_programs, a_recording_that_fails_midway_is_reported_and_the_server_runs_on)
{
    const char *file = file_in_dir("limited.krec");
    const char *args[] = {"--virtual-bots", "4", "--full-clients", "0", "--ticks", "6000", "--record", file, NULL};
    run_result r = run("keel-server", args, 20000);
    cr_expect_eq(r.exit_code, 1, "%s%s", r.out, r.err);
    cr_expect(strstr(r.err, "failed at tick") != NULL && strstr(r.err, "serving on without it") != NULL, "%s", r.err);
    cr_expect(strstr(r.out, "final tick 6000") != NULL, "the session did not run to its end: %s", r.out);
    const char *vargs[] = {"verify", file, "--partial", NULL};
    run_result v = run("keel-replay", vargs, 0);
    cr_expect_eq(v.exit_code, 0, "the prefix: %s%s", v.out, v.err);
    cr_expect(strstr(v.out, "truncated") != NULL || strstr(v.err, "truncated") != NULL, "%s%s", v.out, v.err);
    run_free(&r);
    run_free(&v);
}

// A whole file's bytes (free them), its length in *len.
static char *read_whole(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    cr_assert(fd >= 0, "cannot open %s", path);
    char *bytes = keel_test_read_fd(fd, len);
    close(fd);
    return bytes;
}

// A restarted server (the same --record path, as a container's fixed
// command line) never truncates the earlier recording: the new one goes to
// STEM-1.EXT, then STEM-2.EXT; every file verifies, the first unchanged.
Test(record_programs, a_second_run_keeps_the_first_recording)
{
    char file[512]; // file_in_dir's buffers are reused
    snprintf(file, sizeof file, "%s", file_in_dir("match.krec"));
    const char *args[] = {"--virtual-bots", "1", "--full-clients", "0", "--ticks", "64", "--record", file, NULL};
    run_result first = run("keel-server", args, 0);
    cr_assert_eq(first.exit_code, 0, "%s%s", first.out, first.err);
    size_t before_len, after_len;
    char *before = read_whole(file, &before_len);
    static const char *const names[] = {"match-1.krec", "match-2.krec"};
    for (int i = 0; i < 2; i++) {
        run_result again = run("keel-server", args, 0);
        cr_expect_eq(again.exit_code, 0, "%s%s", again.out, again.err);
        char want[600];
        snprintf(want, sizeof want, "recorded 64 ticks to %s", file_in_dir(names[i]));
        cr_expect(strstr(again.out, want) != NULL, "run %d: %s%s", i + 2, again.out, again.err);
        cr_expect(strstr(again.err, "exists (an earlier run's recording, kept)") != NULL, "%s", again.err);
        const char *vargs[] = {"verify", file_in_dir(names[i]), NULL};
        run_result v = run("keel-replay", vargs, 0);
        cr_expect_eq(v.exit_code, 0, "%s: %s%s", names[i], v.out, v.err);
        run_free(&v);
        run_free(&again);
    }
    char *after = read_whole(file, &after_len);
    cr_expect(before_len > 0 && before_len == after_len && memcmp(before, after, before_len) == 0,
              "the first recording changed (%zu bytes, then %zu)", before_len, after_len);
    const char *vargs[] = {"verify", file, NULL};
    run_result v = run("keel-replay", vargs, 0);
    cr_expect_eq(v.exit_code, 0, "%s%s", v.out, v.err);
    run_free(&v);
    free(before);
    free(after);
    run_free(&first);
}

Test(record_programs, an_unwritable_recording_is_an_error_before_serving_and_bad_flags_are_usage)
{
    const char *args[] = {"--bind", "127.0.0.1", "--port", "0", "--insecure", "--record", "/nonexistent-dir/x.krec",
                          NULL};
    run_result r = run("keel-server", args, 0);
    cr_expect_eq(r.exit_code, 1);
    cr_expect(strstr(r.err, "cannot record to /nonexistent-dir/x.krec") != NULL, "%s", r.err);
    cr_expect(strstr(r.out, "listening") == NULL, "it served: %s", r.out);
    static const char *const bad[][4] = {
        {"--record", NULL},
        {"--keyframe-interval", "x", NULL},
        {"--virtual-bots", "0", NULL},
        {"--virtual-bots", "65", NULL},
        {"--full-clients", "-1", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result b = run("keel-server", bad[i], 0);
        cr_expect_eq(b.exit_code, 2, "%s %s: exit %d", bad[i][0], bad[i][1] ? bad[i][1] : "", b.exit_code);
        cr_expect(strstr(b.err, "--help lists the options") != NULL, "%s", b.err);
        run_free(&b);
    }
    const char *cargs[] = {"--record", "/nonexistent-dir/c.krec", "--connect-timeout", "1", NULL};
    run_result c = run("keel-client", cargs, 0);
    cr_expect_eq(c.exit_code, 1);
    cr_expect(strstr(c.err, "cannot record to /nonexistent-dir/c.krec") != NULL, "%s", c.err);
    run_free(&r);
    run_free(&c);
}

// A client recording: keel-replay info names the hash of the last state the
// client confirmed (the one keel-client printed), and keel-replay's help no
// longer calls client recordings unsupported.
Test(record_programs, info_on_a_client_recording_names_its_last_confirmed_hash)
{
    keel_test_proc sv;
    const char *sargs[] = {"--bind", "127.0.0.1", "--port", "0", "--insecure", "--duration", "60", "--quiet", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.out));
    const char *file = file_in_dir("client.krec");
    const char *cargs[] = {"--port", port, "--ticks", "192", "--record", file, NULL};
    run_result c = run("keel-client", cargs, 0);
    keel_test_proc_cleanup(&sv);
    cr_assert_eq(c.exit_code, 0, "%s", c.err);
    char recorded[17], info_hash[17], json_hash[17];
    hash_after(c.err, ", hash ", recorded);
    const char *at = strstr(c.err, "confirmed tick ");
    cr_assert_not_null(at);
    unsigned tick = (unsigned)strtoul(at + strlen("confirmed tick "), NULL, 10);
    cr_assert_gt(tick, 0u);
    const char *iargs[] = {"info", file, NULL};
    run_result i = run("keel-replay", iargs, 0);
    cr_expect_eq(i.exit_code, 0, "%s%s", i.out, i.err);
    hash_after(i.out, "last hash:     ", info_hash);
    cr_expect_str_eq(info_hash, recorded, "%s", i.out);
    char want[80];
    snprintf(want, sizeof want, "(the client's last confirmed state, tick %u)", tick);
    cr_expect(strstr(i.out, want) != NULL, "%s", i.out);
    const char *jargs[] = {"info", file, "--json", NULL};
    run_result j = run("keel-replay", jargs, 0);
    hash_after(j.out, "\"last_hash\":\"", json_hash);
    cr_expect_str_eq(json_hash, recorded, "%s", j.out);
    const char *hargs[] = {"--help", NULL};
    run_result h = run("keel-replay", hargs, 0);
    cr_expect(strstr(h.out, "or a client recording") == NULL && strstr(h.out, "A client recording") != NULL, "%s",
              h.out);
    run_free(&c);
    run_free(&i);
    run_free(&j);
    run_free(&h);
}
