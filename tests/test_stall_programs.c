// keel tests: a client process stopped (SIGSTOP) and woken (SIGCONT) in a
// session of 32 characters, with the real programs over ENet on loopback:
// keel-server, 31 light clients in one keel-client process, and the full
// client under test in another. MIT licence, see LICENSE.
//
// Judged by what the programs report: keel-client's own stall lines (how long
// it was stopped, when it confirmed again, the full states and bytes of its
// recovery, as it measured them) and its summary (hash mismatches,
// unexplained mispredictions). The test's sleeps only decide when to send the
// signals; every wait ends when what it waits for is reported or when the
// client (which plays a fixed number of ticks) has exited, and every process
// is killed at the end.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

TestSuite(stall_programs, .timeout = 300);

// Waits until the file holds `needle` or the process has ended (it plays a
// fixed number of ticks, so the wait is bounded by its own run, and the
// suite's timeout guards against a hang).
static bool wait_for_text(keel_test_proc *p, const char *file, const char *needle)
{
    for (;;) {
        bool ended = keel_test_proc_wait(p, 0);
        char *s = keel_test_read_file(file);
        bool found = s && strstr(s, needle);
        free(s);
        if (found || ended)
            return found;
        keel_test_sleep_ms(50);
    }
}

// The report of a stop of `stop_ms`: the first stall line from `from` on
// that is as long as the stop (a busy machine may starve the process for
// shorter moments too, and it reports those as well), or NULL. Only whole
// lines count.
static const char *find_report(const char *from, long stop_ms)
{
    for (const char *line = strstr(from, "{\"stall\":1"); line; line = strstr(line + 1, "{\"stall\":1")) {
        if (!strchr(line, '\n'))
            return NULL; // still being written
        if (keel_test_json_num(line, "stopped_s") * 1000.0 + 50.0 >= (double)stop_ms)
            return line;
    }
    return NULL;
}

Test(stall_programs, a_stopped_client_wakes_confirms_and_needs_at_most_two_full_states)
{
    keel_test_proc sv, crowd, cl;
    const char *sargs[] = {
        "--bind", "127.0.0.1",    "--port",           "0", "--insecure", "--duration", "120", "--max-per-address",
        "64",     "--stats-json", "--stats-interval", "0", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.err));
    const char *largs[] = {"--port", port, "--bots", "0", "--light", "31", "--ticks", "0", NULL};
    keel_test_proc_start(&crowd, "keel-client", largs);
    const char *cargs[] = {"--port", port, "--ticks", "1600", "--seed", "5", "--trace", NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    cr_assert(wait_for_text(&cl, cl.err, "\"trace\":1"), "the client under test never played");
    keel_test_sleep_ms(1000);
    // The longest stop stays 1.5 s under the server's 5-s silence timeout:
    // on a starved machine the server may notice the silence late.
    static const long stops_ms[] = {500, 2000, 3500};
    size_t before_stop[3]; // how much it had written to stderr before each stop
    for (int k = 0; k < 3; k++) {
        char *e = keel_test_read_file(cl.err);
        before_stop[k] = e ? strlen(e) : 0;
        free(e);
        kill(cl.pid, SIGSTOP);
        keel_test_sleep_ms(stops_ms[k]);
        kill(cl.pid, SIGCONT);
        // Its report comes 2 s after it woke (by its clock): wait for it
        // before the next stop, for as long as the client runs.
        bool reported = false;
        for (bool ended = false; !reported && !ended;) {
            ended = keel_test_proc_wait(&cl, 0);
            keel_test_sleep_ms(50);
            char *now = keel_test_read_file(cl.err);
            reported = now && strlen(now) > before_stop[k] && find_report(now + before_stop[k], stops_ms[k]);
            free(now);
        }
        cr_assert(reported, "no report of the stop of %ld ms", stops_ms[k]);
    }
    // It plays 1,600 ticks and exits; the suite's timeout is the hang guard.
    cr_assert(keel_test_proc_wait(&cl, 280000), "the client under test did not finish");
    char *out = keel_test_read_file(cl.out), *err = keel_test_read_file(cl.err);
    cr_log_info("client summary: %s", out);
    cr_expect_eq(cl.status, 0, "keel-client exit %d", cl.status);
    cr_expect_eq(keel_test_json_num(out, "hash_mismatches"), 0);
    const char *un = strstr(out, "\"own_mispredictions\":{");
    cr_assert_not_null(un);
    cr_expect_eq(keel_test_json_num(un, "unexplained"), 0);
    // Each stop's report: the first one written after the stop began.
    for (int k = 0; k < 3; k++) {
        const char *line = find_report(err + before_stop[k], stops_ms[k]);
        cr_assert_not_null(line, "no stall report for the stop of %ld ms: %s", stops_ms[k], err);
        const char *nl = strchr(line, '\n');
        cr_log_info("stopped %ld ms: %.*s\n", stops_ms[k], nl ? (int)(nl - line) : 200, line);
        double confirmed = keel_test_json_num(line, "confirmed_after_s");
        cr_expect(confirmed >= 0.0 && confirmed <= 2.0, "stop %d: confirmed again after %.3f s", k, confirmed);
        cr_expect_leq(keel_test_json_num(line, "full_states"), 2.0, "stop %d", k);
        cr_expect_eq(keel_test_json_num(line, "hash_mismatches"), 0.0, "stop %d", k);
        cr_expect_gt(keel_test_json_num(line, "recovery_payload_bytes"), 0.0, "stop %d", k);
    }
    free(out);
    free(err);
    keel_test_proc_kill(&crowd, SIGTERM);
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&crowd);
    keel_test_proc_cleanup(&sv);
}

// Liveness by traffic (docs/transport.md, "Liveness"): 8 bots through
// keel-relay at 75 +- 20 ms each way with 5% loss, their process stopped for
// 3 s and, later, for 8 s, both shorter than the 10-s silence that ends a
// connection: no bot loses its connection (before, ENet's retransmission
// timeout ended some after 3 s and every one after 8 s), and --trace prints
// one line per bot at most every 100 ms however long the process stopped.
// Judged by keel-client's summary and messages (bench/stall.sh repeats it).
Test(stall_programs, stops_shorter_than_the_silence_lose_no_bot_on_a_lossy_link)
{
    keel_test_proc sv, relay, cl;
    const char *sargs[] = {"--bind",     "127.0.0.1",        "--port", "0",
                           "--insecure", "--duration",       "120",    "--max-per-address",
                           "64",         "--stats-interval", "0",      NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char server_at[64], port[16];
    snprintf(server_at, sizeof server_at, "127.0.0.1:%u", keel_test_wait_port(sv.out)); // (text on stdout)
    const char *rargs[] = {"--server", server_at, "--seed", "3", "--latency", "75", "--jitter", "20",
                           "--loss",   "5",       "--dup",  "1", "--reorder", "1",  NULL};
    keel_test_proc_start(&relay, "keel-relay", rargs);
    snprintf(port, sizeof port, "%u", keel_test_wait_port(relay.out));
    // 8 bots, 1,920 ticks (30 s of play): longer than the two stops and
    // their recoveries.
    const char *cargs[] = {
        "--port", port, "--bots", "8", "--ticks", "1920", "--seed", "3", "--trace", "--connect-timeout", "30", NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    cr_assert(wait_for_text(&cl, cl.err, "\"trace\":1,\"t\":"), "no bot played");
    keel_test_sleep_ms(2000);
    static const long stops_ms[] = {3000, 8000};
    for (int k = 0; k < 2; k++) {
        kill(cl.pid, SIGSTOP);
        keel_test_sleep_ms(stops_ms[k]);
        kill(cl.pid, SIGCONT);
        keel_test_sleep_ms(4000);
    }
    cr_assert(keel_test_proc_wait(&cl, 200000), "keel-client did not finish");
    char *out = keel_test_read_file(cl.out), *err = keel_test_read_file(cl.err);
    cr_assert_not_null(out);
    cr_assert_not_null(err);
    unsigned lost = 0, played = 0, traces = 0, bursts = 0;
    double last_t = -1.0;
    for (const char *p = strstr(err, "lost the connection"); p; p = strstr(p + 1, "lost the connection"))
        lost++;
    for (const char *p = strstr(out, "\"end\":\"left"); p; p = strstr(p + 1, "\"end\":\"left"))
        played++;
    for (const char *p = strstr(err, "{\"trace\":1,"); p; p = strstr(p + 1, "{\"trace\":1,")) {
        if (strncmp(strstr(p, "\"bot\":"), "\"bot\":1,", 8) != 0)
            continue;
        double t = keel_test_json_num(p, "t"); // a burst: two lines of bot 1 under 50 ms apart
        bursts += last_t >= 0.0 && t - last_t < 0.05;
        last_t = t;
        traces++;
    }
    double seconds = keel_test_json_num(strstr(out, "\"seconds\":"), "seconds");
    cr_log_info("8 bots, stops of 3 s and 8 s: %u lost the connection, %u left at the end; bot 1 traced %u lines in "
                "%.1f s, %u of them less than 50 ms after the one before\n",
                lost, played, traces, seconds, bursts);
    cr_expect_eq(lost, 0u, "%s", err);
    cr_expect_eq(played, 8u, "%s", out);
    cr_expect_eq(cl.status, 0, "keel-client exit %d", cl.status);
    cr_expect_leq(traces, (unsigned)(seconds * 10.0) + 2u, "--trace printed %u lines for bot 1 in %.1f s", traces,
                  seconds);
    cr_expect_eq(bursts, 0u, "--trace printed bot 1's state %u times less than 50 ms after the one before", bursts);
    free(out);
    free(err);
    keel_test_proc_kill(&relay, SIGTERM);
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&relay);
    keel_test_proc_cleanup(&sv);
}
