// keel tests: how clients end, with the real programs over ENet on loopback:
// keel-server, keel-client and keel-relay between them at 150 ms round trip.
// MIT licence, see LICENSE.
//
// Judged by counts the programs report -- keel-server's JSON stats and
// summary (left, timed_out, peers_refused), keel-client's summary ("end" of
// each bot) -- never by how long anything took. Every wait is bounded (a
// guard against hangs) and every process is killed at the end.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

TestSuite(leave_programs, .timeout = 240);

// The server's total of `key` so far: the sum of its JSON stats lines'
// per-interval counts (the summary line excluded).
static double server_total(const char *file, const char *key)
{
    char *s = keel_test_read_file(file);
    double sum = 0;
    for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "{\"t\":", 5) == 0)
            sum += keel_test_json_num(l, key);
    }
    free(s);
    return sum;
}

// keel-server's JSON summary line (its totals), read after it ended.
static char *server_summary(const keel_test_proc *sv)
{
    char *s = keel_test_read_file(sv->out);
    char *at = strstr(s, "{\"summary\":1");
    cr_assert_not_null(at, "no JSON summary from keel-server: %s", s);
    char *line = strdup(at);
    free(s);
    return line;
}

// The "end" of bot `bot` (1-based) in keel-client's summary.
static void expect_end(const char *json, unsigned bot, const char *want)
{
    const char *at = json;
    for (unsigned i = 0; i < bot; i++) {
        at = strstr(at, "{\"character\":");
        cr_assert_not_null(at, "no bot %u in %s", bot, json);
        at++;
    }
    const char *end = strstr(at, "\"end\":\"");
    cr_assert_not_null(end);
    cr_expect(strncmp(end + 7, want, strlen(want)) == 0 && end[7 + strlen(want)] == '"',
              "bot %u: expected end %s in %s", bot, want, json);
}

static unsigned start_server(keel_test_proc *sv, const char *per_address)
{
    const char *sargs[] = {
        "--bind",    "127.0.0.1",    "--port",           "0", "--insecure", "--duration", "120", "--max-per-address",
        per_address, "--stats-json", "--stats-interval", "1", NULL};
    keel_test_proc_start(sv, "keel-server", sargs);
    return keel_test_wait_port(sv->err);
}

// Three bots in one process finish one after another (2, 5 and 8 s of play)
// through a 150 ms round trip; a fourth client is killed (SIGKILL). The
// server counts three leaves -- the early bots' too, while their process
// plays on -- and one timeout.
Test(leave_programs, finished_bots_leave_and_a_killed_client_times_out)
{
    keel_test_proc sv, relay, a, b;
    unsigned port = start_server(&sv, "64");
    char server_at[64], relay_port[16];
    snprintf(server_at, sizeof server_at, "127.0.0.1:%u", port);
    const char *rargs[] = {"--server", server_at, "--latency", "75", "--duration", "120", NULL};
    keel_test_proc_start(&relay, "keel-relay", rargs);
    snprintf(relay_port, sizeof relay_port, "%u", keel_test_wait_port(relay.out));
    const char *bargs[] = {"--port", relay_port, "--ticks", "0", "--seed", "9", NULL};
    keel_test_proc_start(&b, "keel-client", bargs);
    const char *aargs[] = {"--port", relay_port, "--bots", "3", "--ticks", "128", "--stagger-ticks", "192", NULL};
    keel_test_proc_start(&a, "keel-client", aargs);
    cr_assert(keel_test_proc_wait(&a, 60000), "keel-client did not finish");
    char *aout = keel_test_read_file(a.out), *aerr = keel_test_read_file(a.err);
    cr_log_info("client: %s\n%s", aout, aerr);
    cr_expect_eq(a.status, 0, "keel-client exit %d: %s", a.status, aerr);
    for (unsigned i = 1; i <= 3; i++)
        expect_end(aout, i, "left");
    // The leaves are counted by the time the client has ended (the server
    // acknowledged each one); now the fourth client vanishes.
    keel_test_proc_kill(&b, SIGKILL);
    for (int i = 0; i < 600 && server_total(sv.out, "timed_out") < 1; i++)
        keel_test_sleep_ms(50); // the server's timeout is 5 s; this bound is a hang guard
    keel_test_proc_kill(&sv, SIGTERM);
    char *sum = server_summary(&sv);
    cr_log_info("server: %s", sum);
    cr_expect_eq(keel_test_json_num(sum, "joined"), 4);
    cr_expect_eq(keel_test_json_num(sum, "left"), 3, "the finished bots' leaves: %s", sum);
    cr_expect_eq(keel_test_json_num(sum, "timed_out"), 1, "the killed client: %s", sum);
    cr_expect_eq(keel_test_json_num(sum, "dropped_clients"), 0);
    free(sum);
    free(aout);
    free(aerr);
    keel_test_proc_cleanup(&a);
    keel_test_proc_cleanup(&b);
    keel_test_proc_cleanup(&relay);
    keel_test_proc_cleanup(&sv);
}

// Two bots from one address to a server that takes one per address: the
// second is turned away by the server's host, says so and why, and its
// summary has no rates from a connection it never had.
Test(leave_programs, a_bot_over_the_per_address_limit_says_it_was_refused)
{
    keel_test_proc sv, cl;
    char port[16];
    snprintf(port, sizeof port, "%u", start_server(&sv, "1"));
    const char *cargs[] = {"--port", port, "--bots", "2", "--ticks", "64", NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    cr_assert(keel_test_proc_wait(&cl, 60000), "keel-client did not finish");
    char *out = keel_test_read_file(cl.out), *err = keel_test_read_file(cl.err);
    cr_log_info("client: %s\n%s", out, err);
    cr_expect_eq(cl.status, 1, "a refused bot makes the exit status 1");
    cr_expect(strstr(err, "keel-client: bot 2 refused by the server: it already has as many connections from "
                          "this address as it allows") != NULL,
              "%s", err);
    cr_expect(strstr(err, "lost the connection") == NULL, "%s", err);
    expect_end(out, 1, "left");
    expect_end(out, 2, "refused_address");
    const char *bot2 = strstr(strstr(out, "{\"character\":") + 1, "{\"character\":");
    cr_assert_not_null(bot2);
    cr_expect_eq(keel_test_json_num(bot2, "connected_seconds"), 0);
    cr_expect_eq(keel_test_json_num(bot2, "up_wire_Bps"), 0);
    cr_expect_eq(keel_test_json_num(bot2, "down_wire_Bps"), 0);
    cr_expect_gt(keel_test_json_num(out, "connected_seconds"), 0, "bot 1 played");
    keel_test_proc_kill(&sv, SIGTERM);
    char *sum = server_summary(&sv);
    // --insecure: said first, and in the summary
    char *first = keel_test_read_file(sv.err);
    cr_expect_eq(strncmp(first, "keel-server: INSECURE: any client may connect (--insecure)\n", 59), 0, "%s", first);
    free(first);
    cr_expect_not_null(strstr(sum, "\"secure\":false"), "%s", sum);
    cr_expect_geq(keel_test_json_num(sum, "peers_refused"), 1);
    cr_expect_eq(keel_test_json_num(sum, "left"), 1);
    cr_expect_eq(keel_test_json_num(sum, "timed_out"), 0);
    free(sum);
    free(out);
    free(err);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&sv);
}

// A bot the server refuses after its hello (another simulation: the server
// has no platforms) was connected for a few milliseconds: its summary has
// its bytes, and no rate made of them.
Test(leave_programs, a_bot_refused_after_its_hello_has_no_rates_from_milliseconds)
{
    keel_test_proc sv;
    char port[16];
    snprintf(port, sizeof port, "%u", start_server(&sv, "4"));
    const char *cargs[] = {"--port", port, "--ticks", "64", "--platforms", NULL};
    keel_test_run_result c = keel_test_run(keel_test_program_path("keel-client"), cargs, NULL);
    cr_log_info("client: %s\n%s", c.out, c.err);
    cr_expect_eq(c.exit_code, 1);
    cr_expect(strstr(c.err, "keel-client: refused by the server: ") != NULL, "%s", c.err);
    expect_end(c.out, 1, "refused");
    cr_expect_gt(keel_test_json_num(c.out, "up_wire_bytes"), 0, "the hello went out");
    // The connection lasts milliseconds on a quiet machine; on a busy one it
    // may last longer. Either way no rate is made of less than a second, and
    // a rate is the bytes over the seconds (the summary's own figures).
    double secs = keel_test_json_num(c.out, "connected_seconds");
    double up = keel_test_json_num(c.out, "up_wire_bytes"), down = keel_test_json_num(c.out, "down_wire_bytes");
    if (secs < 1.0) {
        cr_expect_eq(keel_test_json_num(c.out, "up_wire_Bps"), 0);
        cr_expect_eq(keel_test_json_num(c.out, "down_wire_Bps"), 0);
    } else {
        // (connected_seconds is printed to 0.01 s, rounded: the rate may be
        // over bytes / printed seconds by that much)
        cr_expect_leq(keel_test_json_num(c.out, "up_wire_Bps"), up / (secs - 0.005) + 1.0);
        cr_expect_leq(keel_test_json_num(c.out, "down_wire_Bps"), down / (secs - 0.005) + 1.0);
    }
    keel_test_run_free(&c);
    keel_test_proc_cleanup(&sv);
}
