// keel: a game in the programs: --game NAME|PATH in keel-sim, keel-replay,
// keel-server and keel-client (app/keel_game.h), recordings made with a game
// (format 5) verified, diffed and refused with another game, a game session
// over ENet on loopback with the server's and a client's recordings. MIT licence, see LICENSE.
//
// Judged by what the programs report (exit codes, the clients' hash
// mismatches, keel-replay's verdict), never by how long anything took;
// every wait is bounded (a guard against hangs).
//
// The game libraries are the example game built as shared libraries
// (tests/CMakeLists.txt): tag as it is, tag_hard (a hit takes 34 health, not
// 25: one rule changed, the same identity), tag_v2 (version 2), tag_leak (a
// rule that keeps state in a global: a rollback reaches another state) and
// two that the loader must refuse; and keel-arena's library beside a build
// of it whose rail takes 70 health, not 80, under the same identity.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_support.h"

#ifndef KEEL_GAME_TAG_SO
#define KEEL_GAME_TAG_SO "libkeel_game_tag.so"
#define KEEL_GAME_TAG_HARD_SO "libkeel_game_tag_hard.so"
#define KEEL_GAME_TAG_V2_SO "libkeel_game_tag_v2.so"
#define KEEL_GAME_TAG_LEAK_SO "libkeel_game_tag_leak.so"
#define KEEL_GAME_NOENTRY_SO "libkeel_game_noentry.so"
#define KEEL_GAME_BADABI_SO "libkeel_game_badabi.so"
#define KEEL_GAME_ARENA_SO "libarena.so"
#define KEEL_GAME_ARENA_RAIL_SO "libkeel_game_arena_rail.so"
#endif

// keel-replay's and the loader's exit codes (keel_game.h, rec.h).
enum { EXIT_MATCH = 0, EXIT_DIVERGED = 1, EXIT_USAGE = 2, EXIT_GAME = 6, EXIT_GAME_MISMATCH = 7 };

TestSuite(game_programs, .timeout = 240);

typedef keel_test_run_result run_result;

static run_result expect(const char *name, const char *const *args, int code)
{
    run_result r = keel_test_run(keel_test_program_path(name), args, NULL);
    cr_assert_eq(r.exit_code, code, "%s %s %s ...: exit %d, expected %d\nstdout: %s\nstderr: %s", name,
                 args[0] ? args[0] : "", args[1] ? args[1] : "", r.exit_code, code, r.out, r.err);
    return r;
}

static void temp_path(char *name, size_t size, const char *what) { close(keel_test_temp_fd(name, size, what)); }

// The final hash keel-sim prints with --quiet (16 hex digits).
static void final_hash(const run_result *r, char out[17])
{
    const char *p = strstr(r->out, "final_hash ");
    cr_assert_not_null(p, "no final_hash in: %s", r->out);
    memcpy(out, p + 11, 16);
    out[16] = 0;
}

// A debug-mode recording (a keyframe and the game's state every tick) of 8
// characters for 96 ticks with `game`.
static void record(const char *game, const char *path)
{
    const char *args[] = {"--quiet", "--ticks",  "96", "--characters",  "8", "--game",
                          game,      "--record", path, "--record-full", NULL};
    run_result r = expect("keel-sim", args, 0);
    keel_test_run_free(&r);
}

Test(game_programs, a_game_library_that_cannot_be_had_is_one_line_and_exit_6)
{
    static const struct {
        const char *spec, *says;
    } bad[] = {
        {"nosuch", "no game named \"nosuch\""},
        {"./no-such-library.so", "cannot load the game library"},
        {KEEL_GAME_NOENTRY_SO, "does not export keel_game_v1"},
        {KEEL_GAME_BADABI_SO, "ABI version is 4, this program takes 3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *sim[] = {"--quiet", "--ticks", "4", "--game", bad[i].spec, NULL};
        run_result r = expect("keel-sim", sim, EXIT_GAME);
        cr_expect_not_null(strstr(r.err, bad[i].says), "%s: %s", bad[i].spec, r.err);
        cr_expect_eq(strchr(r.err, '\n'), r.err + r.err_len - 1, "one line: %s", r.err);
        keel_test_run_free(&r);
        const char *replay[] = {"info", "--game", bad[i].spec, "nothing.rec", NULL};
        r = expect("keel-replay", replay, EXIT_GAME);
        cr_expect_not_null(strstr(r.err, bad[i].says), "%s: %s", bad[i].spec, r.err);
        keel_test_run_free(&r);
    }
}

Test(game_programs, the_linked_game_and_its_library_run_the_same)
{
    char linked[17], library[17], threads[17], none[17];
    const char *a[] = {"--quiet", "--ticks", "160", "--game", "tag", NULL};
    run_result r = expect("keel-sim", a, 0);
    final_hash(&r, linked);
    keel_test_run_free(&r);
    const char *b[] = {"--quiet", "--ticks", "160", "--game", KEEL_GAME_TAG_SO, NULL};
    r = expect("keel-sim", b, 0);
    final_hash(&r, library);
    keel_test_run_free(&r);
    const char *c[] = {"--quiet", "--ticks", "160", "--game", KEEL_GAME_TAG_SO, "--threads", "2", NULL};
    r = expect("keel-sim", c, 0);
    final_hash(&r, threads);
    keel_test_run_free(&r);
    const char *d[] = {"--quiet", "--ticks", "160", NULL};
    r = expect("keel-sim", d, 0);
    final_hash(&r, none);
    keel_test_run_free(&r);
    cr_expect_str_eq(linked, library);
    cr_expect_str_eq(linked, threads);
    cr_expect_str_neq(linked, none, "the game's state is in the hash");
}

// keel-sim --sync-test with a game: every tick saved and restored with the
// game's state, rolled back 1 to 8 ticks and re-simulated (every character,
// the game's commands again); the run itself is the same as without the
// check. A rule that keeps state in a global fails it, naming the field.
Test(game_programs, the_sync_test_runs_the_game_and_names_the_game_field_a_rollback_changes)
{
    char checked[17], plain[17];
    const char *sync[] = {"--quiet", "--ticks", "200", "--game", "tag", "--sync-test", "8", NULL};
    run_result r = expect("keel-sim", sync, 0);
    final_hash(&r, checked);
    cr_expect_not_null(strstr(r.err, "sync test passed: 200 ticks checked"), "%s", r.err);
    keel_test_run_free(&r);
    const char *run[] = {"--quiet", "--ticks", "200", "--game", "tag", NULL};
    r = expect("keel-sim", run, 0);
    final_hash(&r, plain);
    keel_test_run_free(&r);
    cr_expect_str_eq(checked, plain);

    const char *leak[] = {"--quiet", "--ticks", "200", "--game", KEEL_GAME_TAG_LEAK_SO, "--sync-test", NULL};
    r = expect("keel-sim", leak, 1);
    // "sync test failed at tick 1 (rollback depth 1, the save/restore copy)
    // ...  game.hits: run 1, copy 2 ... 1 game field differs"
    cr_expect_not_null(strstr(r.err, "sync test failed at tick 1 (rollback depth 1"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "  game.hits: run "), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "every character field is the same; 1 game field differs"), "%s", r.err);
    cr_log_info("%s", r.err);
    keel_test_run_free(&r);
}

Test(game_programs, a_recording_with_a_game_verifies_with_that_game_only)
{
    char path[256];
    temp_path(path, sizeof path, "game.rec");
    record(KEEL_GAME_TAG_SO, path);

    const char *ok[] = {"verify", path, "--game", "tag", NULL};
    run_result r = expect("keel-replay", ok, EXIT_MATCH);
    keel_test_run_free(&r);
    const char *lib[] = {"verify", path, "--game", KEEL_GAME_TAG_SO, "--threads", "3", NULL};
    r = expect("keel-replay", lib, EXIT_MATCH);
    keel_test_run_free(&r);

    const char *info[] = {"info", path, NULL};
    r = expect("keel-replay", info, 0);
    cr_expect_not_null(strstr(r.out, "versions:      format 5"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "game:          tag version 1"), "%s", r.out);
    keel_test_run_free(&r);

    // No game, another version: refused, naming the game.
    const char *none[] = {"verify", path, NULL};
    r = expect("keel-replay", none, EXIT_GAME_MISMATCH);
    cr_expect_not_null(strstr(r.err, "made with game \"tag\" version 1"), "%s", r.err);
    keel_test_run_free(&r);
    const char *v2[] = {"verify", path, "--game", KEEL_GAME_TAG_V2_SO, NULL};
    r = expect("keel-replay", v2, EXIT_GAME_MISMATCH);
    cr_expect_not_null(strstr(r.err, "is game \"tag\" version 2"), "%s", r.err);
    keel_test_run_free(&r);

    // The same identity, another rule: verify names the game field.
    const char *hard[] = {"verify", path, "--game", KEEL_GAME_TAG_HARD_SO, NULL};
    r = expect("keel-replay", hard, EXIT_DIVERGED);
    cr_expect_not_null(strstr(r.out, "game.health"), "%s", r.out);
    keel_test_run_free(&r);
    remove(path);
}

// Records with `game_a` and with `game_b` (the same identity, `name`), and
// keel-replay diff of the two names the first divergent game field: the
// line after "first: character " holds each of `first`. A recording diffed
// with itself matches.
static void expect_first_divergent_field(void (*record_with)(const char *, const char *), const char *game_a,
                                         const char *game_b, const char *name, const char *const *first)
{
    char a[256], b[256];
    temp_path(a, sizeof a, "a.rec");
    temp_path(b, sizeof b, "b.rec");
    record_with(game_a, a);
    record_with(game_b, b);
    const char *args[] = {"diff", a, b, "--game", name, NULL};
    run_result r = expect("keel-replay", args, EXIT_DIVERGED);
    // "tick N: results differ; ...; first: character C game.health: 75 ... A vs 66 ... B"
    const char *at = strstr(r.out, "first: character ");
    cr_assert_not_null(at, "%s", r.out);
    for (; *first; first++)
        cr_expect_not_null(strstr(at, *first), "no '%s' in %s", *first, r.out);
    cr_log_info("%s", r.out);
    keel_test_run_free(&r);
    const char *same[] = {"diff", a, a, "--game", game_a, NULL};
    r = expect("keel-replay", same, EXIT_MATCH);
    keel_test_run_free(&r);
    remove(a);
    remove(b);
}

Test(game_programs, diff_of_two_builds_of_a_rule_names_the_first_divergent_game_field)
{
    const char *const first[] = {" game.health: 75 ", "66 (0x00000042) B", NULL};
    expect_first_divergent_field(record, KEEL_GAME_TAG_SO, KEEL_GAME_TAG_HARD_SO, "tag", first);
}

// keel-arena's own library and a build whose rail takes 70 health instead of
// 80 under the same identity (tests/games/arena_rail): a debug-mode
// recording of 4 virtual bots fighting (cl_bot's arena mode) for 200 ticks with each (the
// first hit is at tick 75).
static void record_fight(const char *game, const char *path)
{
    const char *args[] = {"--virtual-bots", "4",  "--game",        game, "--ticks", "200",
                          "--record",       path, "--record-full", NULL};
    remove(path); // keel-server keeps a file that exists and records beside it
    run_result r = expect("keel-server", args, 0);
    keel_test_run_free(&r);
}

Test(game_programs, diff_of_two_arena_builds_whose_rail_damage_differs_names_the_first_divergent_game_field)
{
    // a rail hit on an unarmoured player at full health
    const char *const first[] = {" game.health: 20 (0x00000014) A vs 30 (0x0000001e) B", NULL};
    expect_first_divergent_field(record_fight, KEEL_GAME_ARENA_SO, KEEL_GAME_ARENA_RAIL_SO, "arena", first);
}

// Every "hash_mismatches" in keel-client's JSON summary (each bot's and the
// total) is 0, and there is at least one.
static void expect_no_hash_mismatch(const char *json)
{
    int seen = 0;
    for (const char *p = strstr(json, "\"hash_mismatches\":"); p; p = strstr(p + 1, "\"hash_mismatches\":")) {
        seen++;
        cr_expect_eq(strtol(p + 18, NULL, 10), 0, "a hash mismatch: %s", json);
    }
    cr_expect_gt(seen, 0, "no hash_mismatches in %s", json);
}

Test(game_programs, a_game_that_cannot_be_had_stops_server_and_client_with_exit_6)
{
    const char *server[] = {"--insecure", "--game", "nosuch", NULL};
    run_result r = expect("keel-server", server, EXIT_GAME);
    cr_expect_not_null(strstr(r.err, "keel-server: --game nosuch: no game named \"nosuch\""), "%s", r.err);
    cr_expect_eq(strchr(r.err, '\n'), r.err + r.err_len - 1, "one line: %s", r.err);
    keel_test_run_free(&r);
    const char *client[] = {"--game", "./no-such-library.so", NULL};
    r = expect("keel-client", client, EXIT_GAME);
    cr_expect_not_null(strstr(r.err, "cannot load the game library"), "%s", r.err);
    cr_expect_eq(strchr(r.err, '\n'), r.err + r.err_len - 1, "one line: %s", r.err);
    keel_test_run_free(&r);
    // Light clients send no game payload: refused before anything starts.
    const char *light[] = {"--game", "tag", "--bots", "0", "--light", "2", NULL};
    r = expect("keel-client", light, EXIT_USAGE);
    cr_expect_not_null(strstr(r.err, "--game does not go with --light"), "%s", r.err);
    cr_expect_eq(strchr(r.err, '\n'), r.err + r.err_len - 1, "one line: %s", r.err);
    keel_test_run_free(&r);
}

// The number right after `key` in r's output is at least `least`.
static void expect_count_after(const run_result *r, const char *key, long least)
{
    const char *at = strstr(r->out, key);
    cr_assert_not_null(at, "no %s in: %s", key, r->out);
    cr_expect_geq(strtol(at + strlen(key), NULL, 10), least, "%s", r->out);
    cr_log_info("%s", r->out);
}

// keel-server --game tag recording; two clients refused (no game, tag
// version 2); two bots of keel-client --game (the library) play 300 ticks
// with no hash mismatch, the first one recorded; the server's recording
// verifies with the linked tag, the client's replays with it, and the
// client's confirmed hashes are the server's world hashes (diff).
Test(game_programs, a_game_session_over_enet_is_recorded_and_verified)
{
    char rec[256], client_rec[256];
    int fd = keel_test_temp_fd(rec, sizeof rec, "game_session.rec");
    close(fd);
    remove(rec); // keel-server claims the name itself (it never overwrites)
    temp_path(client_rec, sizeof client_rec, "game_client.rec");
    keel_test_proc sv;
    const char *sargs[] = {"--bind", "127.0.0.1",         "--port", "0",        "--insecure", "--game",
                           "tag",    "--max-per-address", "16",     "--record", rec,          "--duration",
                           "120",    "--quiet",           NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    unsigned port = keel_test_wait_port(sv.out);
    cr_assert_gt(port, 0u, "keel-server did not listen");
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%u", port);

    const char *none[] = {"--port", port_text, "--bots", "1", "--ticks", "20", NULL};
    run_result r = expect("keel-client", none, EXIT_GAME_MISMATCH);
    cr_expect_not_null(strstr(r.err, "game none differs from the server's tag"), "%s", r.err);
    keel_test_run_free(&r);
    const char *v2[] = {"--port", port_text, "--bots", "1", "--ticks", "20", "--game", KEEL_GAME_TAG_V2_SO, NULL};
    r = expect("keel-client", v2, EXIT_GAME_MISMATCH);
    cr_expect_not_null(strstr(r.err, "game tag 2 differs from the server's tag 1"), "%s", r.err);
    keel_test_run_free(&r);

    const char *bots[] = {"--port", port_text,        "--bots",   "2",        "--ticks", "300",
                          "--game", KEEL_GAME_TAG_SO, "--record", client_rec, NULL};
    r = expect("keel-client", bots, 0);
    expect_no_hash_mismatch(r.out);
    keel_test_run_free(&r);

    keel_test_proc_kill(&sv, SIGTERM); // drains, finishes the recording, exits 0
    cr_expect_eq(sv.status, 0, "keel-server exit %d", sv.status);
    char *out = keel_test_read_file(sv.out);
    cr_expect_not_null(strstr(out, "keel-server: recorded "), "%s", out);
    free(out);
    keel_test_proc_cleanup(&sv);

    const char *verify[] = {"verify", rec, "--game", "tag", NULL};
    r = expect("keel-replay", verify, 0);
    // "match: N ticks, M character-ticks reproduced": the bots' ticks are in it.
    expect_count_after(&r, " ticks, ", 400);
    keel_test_run_free(&r);
    const char *without[] = {"verify", rec, NULL};
    r = expect("keel-replay", without, EXIT_GAME_MISMATCH);
    keel_test_run_free(&r);

    // The client's recording: format 5 with the game's commands, replayed
    // call by call with the game, and its confirmed hashes (which cover the
    // game's state) the server's.
    const char *client_info[] = {"info", client_rec, NULL};
    r = expect("keel-replay", client_info, 0);
    cr_expect_not_null(strstr(r.out, "versions:      format 5"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "game:          tag version 1"), "%s", r.out);
    keel_test_run_free(&r);
    const char *client_verify[] = {"verify", client_rec, "--game", KEEL_GAME_TAG_SO, NULL};
    r = expect("keel-replay", client_verify, 0);
    cr_expect_not_null(strstr(r.out, "confirmed ticks reproduced by the client library"), "%s", r.out);
    keel_test_run_free(&r);
    const char *client_diff[] = {"diff", rec, client_rec, "--game", "tag", "--json", NULL};
    r = expect("keel-replay", client_diff, 0);
    // {"result":"match","kind":"client","compared":N}
    expect_count_after(&r, "\"compared\":", 100);
    keel_test_run_free(&r);
    const char *client_without[] = {"verify", client_rec, NULL};
    r = expect("keel-replay", client_without, EXIT_GAME_MISMATCH);
    cr_expect_not_null(strstr(r.err, "made with game \"tag\" version 1"), "%s", r.err);
    keel_test_run_free(&r);
    remove(rec);
    remove(client_rec);
}
