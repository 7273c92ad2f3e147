// keel tests: the real programs over real ENet sockets on loopback:
// keel-server, keel-client bots and, for bad links, keel-relay between them;
// and their recordings, checked with keel-replay and the client replay.
// MIT licence, see LICENSE.
//
// Each test starts the processes with their output in temporary files, reads
// the ports they print, waits for them with a bound, and judges their JSON
// summaries. Everything talks to 127.0.0.1 only, every run has a --duration
// or --ticks, and a process still running at the end is killed.
//
// "Every acknowledged state equals the server's": a client acknowledges a
// tick only after re-simulating it and matching the server's state hash of
// that tick (sim_scene_hash covers every field); hash_mismatches counts the
// ticks where it did not match.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <keel/cl_replay.h>
#include <keel/rec.h>
#include <keel/sim_world.h>

#include "test_support.h"

#define MAX_ARGS 48

// The totals object of keel-client's summary starts after the bots array.
static const char *totals_of(const char *json)
{
    const char *at = strstr(json, "],\"seconds\"");
    cr_assert_not_null(at, "no summary: %s", json);
    return at;
}

typedef struct own_counts {
    double substituted, remote, interaction, unexplained, hash_mismatches, status;
} own_counts;

static own_counts client_totals(const char *json)
{
    const char *t = totals_of(json);
    own_counts c;
    c.substituted = keel_test_json_num(t, "substituted");
    c.remote = keel_test_json_num(t, "remote_command");
    c.interaction = keel_test_json_num(t, "interaction");
    c.unexplained = keel_test_json_num(t, "unexplained");
    c.hash_mismatches = keel_test_json_num(t, "hash_mismatches");
    c.status = keel_test_json_num(t, "status");
    return c;
}

// "late N" and "commands N" from keel-server's closing line.
static void server_counts(const char *text, double *commands, double *late)
{
    const char *at = strstr(text, "commands ");
    cr_assert_not_null(at, "no closing line: %s", text);
    *commands = strtod(at + strlen("commands "), NULL);
    const char *l = strstr(at, "late ");
    cr_assert_not_null(l);
    *late = strtod(l + strlen("late "), NULL);
}

// What depends on timing -- own-character mispredictions by substitution,
// late commands, how fast the margin settles -- is exact in the in-memory
// tests (test_netplay.c). Over real sockets it depends on how busy the
// machine is (two test trees and a sanitizer build share two cores in CI),
// so here it is logged, and fails the test only with KEEL_NET_STRICT=1 (a
// quiet machine: scripts/test.sh documents it). What never depends on
// timing -- hash mismatches, unexplained mispredictions, disconnects --
// always fails the test. (Logged as info: Criterion 2.4 fails a run that
// logged a warning.)
static bool strict(void)
{
    const char *e = getenv("KEEL_NET_STRICT");
    return e && strcmp(e, "1") == 0;
}
#define timing_expect(cond, ...)                                                               \
    do {                                                                                       \
        if (strict())                                                                          \
            cr_expect(cond, __VA_ARGS__);                                                      \
        else if (!(cond))                                                                      \
            cr_log_info("timing (not failed; KEEL_NET_STRICT=1 makes it fail): " __VA_ARGS__); \
    } while (0)

// In the sanitizer tree the programs run several times slower on the same
// two cores: the sessions use 4 bots instead of 8, and a connection lost to a
// stalled process counts as timing there (it never happened in the normal
// tree).
#ifdef KEEL_SANITIZED_BUILD
static const char *const session_bots = "4";
#define sanitized_timing_expect(cond, ...) timing_expect(cond, __VA_ARGS__)
#else
static const char *const session_bots = "8";
#define sanitized_timing_expect(cond, ...) cr_expect(cond, __VA_ARGS__)
#endif

TestSuite(netplay_enet, .timeout = 180);

static void run_session(const char *name, const char *const *relay_args, const char *bot, uint32_t ticks,
                        const char *leash_mm, own_counts *out, double *late_fraction, char **client_json)
{
    keel_test_proc sv, relay, cl;
    char dur[16], tick_text[16], port_text[16], server_at[64];
    // The server and the relay outlive the client by far (they are stopped
    // once it has finished): on a loaded machine the client may take much
    // longer than its ticks to connect and play them, and a server that ended
    // on its own would cost the bots their connection.
    snprintf(dur, sizeof dur, "%u", ticks / 64 + 90);
    const char *sargs[] = {"--bind", "127.0.0.1",         "--port", "0",       "--insecure", "--duration",
                           dur,      "--max-per-address", "64",     "--quiet", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    unsigned port = keel_test_wait_port(sv.out);
    unsigned client_port = port;
    if (relay_args) {
        snprintf(server_at, sizeof server_at, "127.0.0.1:%u", port);
        const char *rargs[MAX_ARGS] = {"--server", server_at, "--duration", dur};
        int n = 4;
        for (int i = 0; relay_args[i] && n < MAX_ARGS - 1; i++)
            rargs[n++] = relay_args[i];
        rargs[n] = NULL;
        keel_test_proc_start(&relay, "keel-relay", rargs);
        client_port = keel_test_wait_port(relay.out);
    }
    snprintf(tick_text, sizeof tick_text, "%u", ticks);
    snprintf(port_text, sizeof port_text, "%u", client_port);
    // --connect-timeout 60: a bot that is not playing after 10 s (the
    // default) is given up; a loaded machine may be that slow to connect
    // eight bots, while one that never gets to play still fails here.
    const char *cargs[] = {"--port",  port_text,    "--bots", session_bots,        "--bot", bot, "--ticks",
                           tick_text, "--leash-mm", leash_mm, "--connect-timeout", "60",    NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    bool ended = keel_test_proc_wait(&cl, (long)(ticks / 64 + 80) * 1000);
    char *json = keel_test_read_file(cl.out), *err = keel_test_read_file(cl.err);
    cr_assert(ended, "%s: keel-client did not finish", name);
    cr_log_info("%s: %s\n", name, json);
    sanitized_timing_expect(cl.status == 0, "%s: keel-client exit %d: %s", name, cl.status, err);
    *out = client_totals(json);
    keel_test_proc_kill(&sv, SIGTERM);
    char *stext = keel_test_read_file(sv.out);
    double commands, late;
    server_counts(stext, &commands, &late);
    *late_fraction = commands > 0 ? late / commands : 1;
    cr_log_info("%s: server: %s\n", name, stext);
    free(stext);
    free(err);
    *client_json = json;
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&sv);
    if (relay_args)
        keel_test_proc_cleanup(&relay);
}

Test(netplay_enet, eight_bots_apart_never_mispredict_over_real_sockets)
{
    own_counts c;
    double late;
    char *json;
    run_session("apart", NULL, "random", 1280, "1000", &c, &late, &json); // 20 s
    cr_expect_eq(c.unexplained, 0, "unexplained own mispredictions");
    timing_expect(c.substituted + c.remote + c.interaction == 0, "own mispredictions %.0f/%.0f/%.0f", c.substituted,
                  c.remote, c.interaction);
    cr_expect_eq(c.hash_mismatches, 0);
    free(json);
}

Test(netplay_enet, through_the_conditioner_150ms_jitter_loss_duplication_reordering)
{
    static const char *const link[] = {"--latency", "75",        "--jitter", "20",     "--loss", "5", "--dup",
                                       "1",         "--reorder", "1",        "--seed", "7",      NULL};
    own_counts c;
    double late;
    char *json;
    run_session("conditioned", link, "random", 1280, "1000", &c, &late, &json);
    cr_expect_eq(c.unexplained, 0, "unexplained own mispredictions");
    timing_expect(c.substituted + c.remote + c.interaction == 0, "own mispredictions %.0f/%.0f/%.0f", c.substituted,
                  c.remote, c.interaction);
    cr_expect_eq(c.hash_mismatches, 0);
    timing_expect(late <= 0.001, "late commands: %.4f%%", late * 100);
    free(json);
}

// During a gap the server repeats each bot's last command, so a bot walks on
// past its leash: a short leash keeps neighbours 4 m apart from touching
// (a touch would be a genuine "interaction").
Test(netplay_enet, burst_gaps_mispredict_only_by_substitution_and_recover)
{
    static const char *const link[] = {"--latency", "30", "--burst-every", "2500", "--burst-length", "250", "--seed",
                                       "11",        NULL};
    own_counts c;
    double late;
    char *json;
    run_session("bursts", link, "random", 960, "400", &c, &late, &json);
    cr_expect_eq(c.unexplained, 0, "unexplained own mispredictions");
    timing_expect(c.remote + c.interaction == 0, "own mispredictions other than substituted: %.0f/%.0f", c.remote,
                  c.interaction);
    cr_expect_eq(c.hash_mismatches, 0);
    sanitized_timing_expect(c.status == 0, "a bot lost its connection");
    free(json);
}

Test(netplay_enet, a_client_of_another_simulation_is_refused_with_the_reason)
{
    keel_test_proc sv, cl;
    const char *sargs[] = {"--bind", "127.0.0.1", "--port", "0", "--insecure", "--duration", "20", "--quiet", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.out));
    const char *cargs[] = {"--port", port, "--rate", "60", "--ticks", "64", NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    cr_assert(keel_test_proc_wait(&cl, 20000));
    char *err = keel_test_read_file(cl.err);
    cr_expect_eq(cl.status, 1);
    cr_expect(strstr(err, "refused by the server: simulation differs from the server's: tick rate differs") != NULL,
              "stderr: %s", err);
    free(err);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&sv);
}

// The scene's platforms are part of the identity: a client without them would
// mispredict every snapshot, so it is refused; one with them plays.
Test(netplay_enet, a_client_without_the_servers_platforms_is_refused_and_one_with_them_plays)
{
    keel_test_proc sv, bad, good;
    const char *sargs[] = {"--bind",      "127.0.0.1",  "--port", "0",       "--insecure",
                           "--platforms", "--duration", "20",     "--quiet", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.out));
    const char *bargs[] = {"--port", port, "--ticks", "64", NULL};
    keel_test_proc_start(&bad, "keel-client", bargs);
    cr_assert(keel_test_proc_wait(&bad, 20000));
    char *err = keel_test_read_file(bad.err);
    cr_expect_eq(bad.status, 1);
    cr_expect(strstr(err, "refused by the server: simulation differs from the server's: platforms or water differ "
                          "(server and client must both use --platforms or neither)") != NULL,
              "stderr: %s", err);
    free(err);
    const char *gargs[] = {"--port", port, "--ticks", "128", "--platforms", NULL};
    keel_test_proc_start(&good, "keel-client", gargs);
    cr_assert(keel_test_proc_wait(&good, 20000));
    char *json = keel_test_read_file(good.out);
    sanitized_timing_expect(good.status == 0, "the client with platforms: exit %d", good.status);
    own_counts c = client_totals(json);
    cr_expect_eq(c.hash_mismatches, 0);
    cr_expect_eq(c.unexplained, 0);
    free(json);
    keel_test_proc_cleanup(&good);
    keel_test_proc_cleanup(&bad);
    keel_test_proc_cleanup(&sv);
}

Test(netplay_enet, a_killed_client_frees_its_slot_and_the_others_play_on)
{
    keel_test_proc sv, a, b;
    const char *sargs[] = {"--bind",
                           "127.0.0.1",
                           "--port",
                           "0",
                           "--insecure",
                           "--duration",
                           "40",
                           "--max-per-address",
                           "64",
                           "--timeout",
                           "5",
                           "--stats-json",
                           "--stats-interval",
                           "1",
                           NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.err));
    const char *aargs[] = {"--port", port, "--bots", "4", "--ticks", "1152", NULL}; // 18 s
    const char *bargs[] = {"--port", port, "--bots", "1", "--ticks", "0", "--seed", "99", NULL};
    keel_test_proc_start(&a, "keel-client", aargs);
    keel_test_proc_start(&b, "keel-client", bargs);
    // The kill comes once the server's stats count all five clients (on a
    // busy machine the joins can take seconds), and 2 s later, so that the
    // others are playing; the wait ends when the other client has finished.
    bool all_in = false;
    while (!all_in && !keel_test_proc_wait(&a, 0)) {
        keel_test_sleep_ms(100);
        char *st = keel_test_read_file(sv.out);
        all_in = st && strstr(st, "\"clients\":5");
        free(st);
    }
    cr_assert(all_in, "the server never counted five clients");
    keel_test_sleep_ms(2000);
    kill(b.pid, SIGKILL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double killed_at = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    keel_test_proc_wait(&b, 5000);
    cr_assert(keel_test_proc_wait(&a, 40000), "the other client did not finish");
    char *json = keel_test_read_file(a.out);
    own_counts c = client_totals(json);
    sanitized_timing_expect(a.status == 0, "%s", json);
    cr_expect_eq(c.unexplained, 0, "the others' unexplained own mispredictions");
    timing_expect(c.substituted + c.remote + c.interaction == 0, "the others' own mispredictions %.0f/%.0f/%.0f",
                  c.substituted, c.remote, c.interaction);
    cr_expect_eq(c.hash_mismatches, 0);
    // The server's per-second stats: 5 clients, then 4 within 5 s of the kill.
    keel_test_proc_kill(&sv, SIGTERM);
    char *stats = keel_test_read_file(sv.out);
    int five_at = -1, four_after = -1;
    int line = 0;
    for (char *l = stats; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL, line++) {
        if (strncmp(l, "{\"t\":", 5) != 0)
            continue;
        double t = strtod(l + 5, NULL);
        int clients = (int)keel_test_json_num(l, "clients");
        if (clients == 5)
            five_at = (int)t;
        if (clients == 4 && five_at >= 0 && four_after < 0)
            four_after = (int)t;
    }
    cr_log_info("killed client: killed at t=%.1f s; 5 clients until t=%d s, 4 from t=%d s\n", killed_at, five_at,
                four_after);
    cr_expect(five_at >= 0 && four_after >= 0, "stats: %s", stats);
    // Freed within the 5 s silence (--timeout 5), give or take the 1 s between
    // stats lines.
    timing_expect((double)four_after <= killed_at + 6.0, "slot freed at t=%d s, killed at %.1f s", four_after,
                  killed_at);
    cr_expect_leq((double)four_after, killed_at + 15.0, "slot not freed: t=%d s, killed at %.1f s", four_after,
                  killed_at);
    free(json);
    free(stats);
    keel_test_proc_cleanup(&a);
    keel_test_proc_cleanup(&b);
    keel_test_proc_cleanup(&sv);
}

Test(netplay_enet, a_round_trip_step_from_50_to_150_ms_settles_within_2_s)
{
    keel_test_proc sv, relay, cl;
    const char *sargs[] = {"--bind", "127.0.0.1",         "--port", "0",       "--insecure", "--duration",
                           "30",     "--max-per-address", "64",     "--quiet", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char server_at[64], port[16];
    snprintf(server_at, sizeof server_at, "127.0.0.1:%u", keel_test_wait_port(sv.out));
    const char *rargs[] = {"--server",  server_at, "--duration",     "30", "--latency", "25",
                           "--step-at", "8",       "--step-latency", "75", NULL};
    keel_test_proc_start(&relay, "keel-relay", rargs);
    snprintf(port, sizeof port, "%u", keel_test_wait_port(relay.out));
    const char *cargs[] = {"--port", port, "--bots", "2", "--ticks", "1024", "--trace", NULL}; // 16 s
    keel_test_proc_start(&cl, "keel-client", cargs);
    cr_assert(keel_test_proc_wait(&cl, 40000), "keel-client did not finish");
    char *trace = keel_test_read_file(cl.err);
    // Bot 1's trace: the step shows as the round trip passing 110 ms.
    double step_t = -1, last_t = 0;
    int negative_after = 0, settled_samples = 0, unsettled = 0;
    for (char *l = trace; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "{\"trace\":1,", 11) != 0 || !strstr(l, "\"bot\":1,"))
            continue;
        double t = keel_test_json_num(l, "t"), m = keel_test_json_num(l, "margin_ticks"),
               rtt = keel_test_json_num(l, "rtt_ms");
        last_t = t;
        if (step_t < 0 && rtt > 110)
            step_t = t;
        if (step_t < 0)
            continue;
        if (m < 0)
            negative_after++;
        if (t >= step_t + 2.0) {
            settled_samples++;
            if (m < 0 || m > 3.0)
                unsettled++;
        }
    }
    cr_log_info("rtt step: seen at t=%.1f s; %d trace samples (100 ms apart) with a negative margin after it; "
                "%d of %d samples from 2 s after it outside 0..3 ticks\n",
                step_t, negative_after, unsettled, settled_samples);
    cr_expect(step_t > 0 && last_t > step_t + 4, "no step seen (last sample t=%.1f)", last_t);
    timing_expect(negative_after <= 4, "the margin was negative for %d samples", negative_after);
    timing_expect(unsettled == 0, "%d samples unsettled", unsettled);
    sanitized_timing_expect(cl.status == 0, "keel-client exit %d", cl.status);
    free(trace);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&relay);
    keel_test_proc_cleanup(&sv);
}

// The sum of "unexplained" over every bot's remote_mispredictions.
static double remote_unexplained(const char *json)
{
    double sum = 0;
    for (const char *at = strstr(json, "\"remote_mispredictions\":"); at;
         at = strstr(at + 1, "\"remote_mispredictions\":"))
        sum += keel_test_json_num(at, "unexplained");
    return sum;
}

Test(netplay_enet, pushing_bots_mispredict_only_for_named_causes)
{
    static const char *const link[] = {"--latency", "40", "--jitter", "5", "--seed", "5", NULL};
    own_counts c;
    double late;
    char *json;
    run_session("pushers", link, "pusher", 960, "1000", &c, &late, &json);
    cr_log_info("pushers: own mispredictions: substituted %.0f, remote command %.0f, interaction %.0f, "
                "unexplained %.0f\n",
                c.substituted, c.remote, c.interaction, c.unexplained);
    cr_expect_eq(c.unexplained, 0);
    cr_expect_eq(remote_unexplained(json), 0);
    cr_expect_eq(c.hash_mismatches, 0);
    // (With 4 bots in the sanitizer tree the pushers may pair off without
    // ever disturbing each other's prediction.)
    sanitized_timing_expect(c.interaction + c.remote > 0, "the pushers never disturbed each other's prediction");
    free(json);
}

// ---- recordings of a real session ----------------------------------------------------------

// Whatever the timing, what was recorded must re-simulate: the server's file
// with the real keel-replay, the client's with the offline client replay,
// and the client's confirmed hashes must be the server's at the same ticks.
Test(netplay_enet, a_recorded_session_verifies_on_the_server_and_replays_on_the_client)
{
    char dir[256], server_file[300], client_file[300], cmd[600];
    snprintf(dir, sizeof dir, "/tmp/keel-netplay-%d-rec", (int)getpid());
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(server_file, sizeof server_file, "%s/server.krec", dir);
    snprintf(client_file, sizeof client_file, "%s/client.krec", dir);
    keel_test_proc sv, a, b, c, replay;
    const char *sargs[] = {
        "--bind", "127.0.0.1", "--port",      "0",        "--insecure", "--duration", "60", "--max-per-address",
        "64",     "--quiet",   "--platforms", "--record", server_file,  NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.out));
#ifdef KEEL_SANITIZED_BUILD
    const char *a_bots = "2", *b_bots = "1";
#else
    const char *a_bots = "3", *b_bots = "3";
#endif
    // a: the recorded client (its first bot) and company, 15 s; b: pushers,
    // 15 s; c: rides the platforms and leaves after 5 s.
    const char *aargs[] = {"--port", port,          "--bots",   a_bots,      "--ticks",
                           "960",    "--platforms", "--record", client_file, NULL};
    const char *bargs[] = {"--port",  port,  "--bots",      b_bots,   "--bot", "pusher",
                           "--ticks", "960", "--platforms", "--seed", "20",    NULL};
    const char *cargs[] = {"--port",  port,  "--bots",      "1",      "--bot", "platforms",
                           "--ticks", "320", "--platforms", "--seed", "30",    NULL};
    keel_test_proc_start(&a, "keel-client", aargs);
    keel_test_proc_start(&b, "keel-client", bargs);
    keel_test_proc_start(&c, "keel-client", cargs);
    cr_assert(keel_test_proc_wait(&c, 40000), "the leaving client did not finish");
    cr_assert(keel_test_proc_wait(&a, 50000), "the recorded client did not finish");
    cr_assert(keel_test_proc_wait(&b, 50000), "the pushers did not finish");
    char *aerr = keel_test_read_file(a.err), *aout = keel_test_read_file(a.out);
    cr_log_info("recorded client: %s%s\n", aerr, aout);
    sanitized_timing_expect(a.status == 0 && b.status == 0 && c.status == 0, "client exits %d %d %d", a.status,
                            b.status, c.status);
    cr_expect(strstr(aerr, "keel-client: recorded bot 1 to ") != NULL, "%s", aerr);
    // The server closes its recording properly on SIGTERM.
    keel_test_proc_kill(&sv, SIGTERM);
    cr_assert(sv.done, "keel-server did not stop on SIGTERM");
    char *sout = keel_test_read_file(sv.out), *serr = keel_test_read_file(sv.err);
    cr_log_info("server: %s%s\n", sout, serr);
    cr_expect_eq(sv.status, 0, "keel-server exit %d: %s", sv.status, serr);
    cr_expect(strstr(sout, "keel-server: recorded ") != NULL && strstr(sout, "final hash ") != NULL, "%s", sout);

    // The real keel-replay verifies the server's recording.
    const char *rargs[] = {"verify", server_file, NULL};
    keel_test_proc_start(&replay, "keel-replay", rargs);
    cr_assert(keel_test_proc_wait(&replay, 60000), "keel-replay did not finish");
    char *rout = keel_test_read_file(replay.out), *rerr = keel_test_read_file(replay.err);
    cr_expect_eq(replay.status, 0, "keel-replay verify: exit %d: %s%s", replay.status, rout, rerr);
    cr_log_info("keel-replay: %s%s\n", rout, rerr);

    rec_error err;
    rec_file *sf = rec_file_open(server_file, &err);
    cr_assert_not_null(sf, "%s", err.message);
    rec_info si;
    rec_file_info(sf, &si);
    cr_expect(si.complete, "the server's recording has no end");
    cr_expect_gt(si.leaves, 0, "the leaving client's character left");
    double player_hours = 0;
    if (si.tick_count)
        player_hours = (double)si.max_characters_seen * si.tick_count / 64.0 / 3600.0;
    cr_log_info("server recording: %llu bytes, %u ticks, %u players (at most %u at once), %u keyframes; "
                "%.0f bytes per player-hour at the most players\n",
                (unsigned long long)si.file_bytes, si.tick_count, si.players, si.max_characters_seen, si.keyframes,
                player_hours > 0 ? (double)si.file_bytes / player_hours : 0.0);

    // The client's recording replays offline, and agrees with the server's.
    sim_level level;
    cr_assert_eq(sim_level_builtin(&level), 0);
    sim_world *world = sim_world_create(&level, NULL, NULL);
    cr_assert_not_null(world);
    rec_file *cf = rec_file_open(client_file, &err);
    cr_assert_not_null(cf, "%s", err.message);
    rec_divergence div;
    cl_replay_stats rs;
    int rc = cl_replay_verify_stats(cf, world, &level, &div, &rs, &err);
    cr_expect_eq(rc, REC_EXIT_MATCH, "client replay: %d: %s %s", rc, div.detail, err.message);
    cr_expect_gt(rs.confirmed, 100);
    uint64_t compared = 0;
    rc = cl_replay_compare_server(cf, sf, &compared, &div, &err);
    cr_expect_eq(rc, REC_EXIT_MATCH, "client against server: %d: %s %s", rc, div.detail, err.message);
    // The server's recording holds a world hash at the end of each tick block.
    cr_expect_gt(compared, 0);
    cr_log_info("client recording: %llu calls replayed, %llu confirmed ticks (%llu compared with the server's)\n",
                (unsigned long long)rs.records, (unsigned long long)rs.confirmed, (unsigned long long)compared);
    rec_file_close(cf);
    rec_file_close(sf);
    sim_world_destroy(world);
    sim_level_free(&level);
    free(aerr);
    free(aout);
    free(sout);
    free(serr);
    free(rout);
    free(rerr);
    keel_test_proc_cleanup(&a);
    keel_test_proc_cleanup(&b);
    keel_test_proc_cleanup(&c);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&replay);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        cr_log_info("could not remove %s\n", dir);
}
