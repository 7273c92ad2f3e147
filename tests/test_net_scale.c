// keel tests: real processes at scale, small: one keel-server, light clients
// (keel-client --bots 0 --light N) in two processes and a full predicting
// bot in a third, over ENet on 127.0.0.1. MIT licence, see LICENSE.
//
// Judged by counts only (the figures of the big run are bench/net_scale.sh's
// to print): every light client joined and played all its ticks, the server
// counted every join, and the full bot's confirmed states all matched the
// server's (0 hash mismatches, 0 unexplained mispredictions) with the light
// clients' commands -- changing every tick -- in its snapshots. Every process
// has --ticks or --duration; the waits below only guard against a hang.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#define LIGHT_PER_PROCESS 8
#define TICKS "512" // 8 s at 64 Hz

TestSuite(net_scale, .timeout = 240);

// The "light" member of a keel-client summary.
static const char *light_of(const char *json)
{
    const char *at = strstr(json, "\"light\":{");
    cr_assert_not_null(at, "no light member: %s", json);
    return at;
}

Test(net_scale, light_clients_in_two_processes_and_a_full_bot_all_play)
{
    keel_test_proc sv, light[2], full;
    const char *sargs[] = {
        "--bind", "127.0.0.1",    "--port",           "0", "--insecure", "--duration", "120", "--max-per-address",
        "64",     "--stats-json", "--stats-interval", "0", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.err));
    char count[16];
    snprintf(count, sizeof count, "%d", LIGHT_PER_PROCESS);
    const char *largs0[] = {"--port", port, "--bots", "0", "--light", count, "--ticks", TICKS, "--seed", "100", NULL};
    const char *largs1[] = {"--port", port, "--bots", "0", "--light", count, "--ticks", TICKS, "--seed", "200", NULL};
    const char *fargs[] = {"--port", port, "--bots", "1", "--ticks", TICKS, NULL};
    keel_test_proc_start(&light[0], "keel-client", largs0);
    keel_test_proc_start(&light[1], "keel-client", largs1);
    keel_test_proc_start(&full, "keel-client", fargs);
    for (int i = 0; i < 2; i++)
        cr_assert(keel_test_proc_wait(&light[i], 120000), "light process %d did not finish", i);
    cr_assert(keel_test_proc_wait(&full, 120000), "the full bot did not finish");
    keel_test_proc_kill(&sv, SIGTERM);

    for (int i = 0; i < 2; i++) {
        char *json = keel_test_read_file(light[i].out), *err = keel_test_read_file(light[i].err);
        cr_log_info("light process %d: %s\n", i, json);
        const char *l = light_of(json);
        cr_expect_eq(keel_test_json_num(l, "clients"), LIGHT_PER_PROCESS);
        cr_expect_eq(keel_test_json_num(l, "played"), LIGHT_PER_PROCESS, "%s", err);
        cr_expect_eq(keel_test_json_num(l, "failed"), 0, "%s", err);
        cr_expect_eq(keel_test_json_num(l, "ticks_min"), atof(TICKS), "every light client played all its ticks");
        cr_expect_geq(keel_test_json_num(l, "full_states"), LIGHT_PER_PROCESS, "each had its first full state");
        cr_expect_gt(keel_test_json_num(l, "snapshots"), 0, "and deltas after it");
        cr_expect_eq(keel_test_json_num(l, "malformed"), 0);
        cr_expect_eq(light[i].status, 0, "%s", err);
        free(json);
        free(err);
    }
    char *json = keel_test_read_file(full.out);
    cr_log_info("full bot: %s\n", json);
    const char *totals = strstr(json, "],");
    cr_assert_not_null(totals, "no summary: %s", json);
    totals = strstr(totals, "\"seconds\"");
    cr_assert_not_null(totals, "no totals: %s", json);
    cr_expect_eq(keel_test_json_num(totals, "hash_mismatches"), 0);
    cr_expect_eq(keel_test_json_num(totals, "unexplained"), 0);
    cr_expect_eq(keel_test_json_num(json, "ticks"), atof(TICKS));
    free(json);

    char *stats = keel_test_read_file(sv.out);
    const char *summary = strstr(stats, "{\"summary\":1");
    cr_assert_not_null(summary, "no server summary: %s", stats);
    cr_log_info("server: %s\n", summary);
    cr_expect_eq(keel_test_json_num(summary, "joined"), 2 * LIGHT_PER_PROCESS + 1);
    cr_expect_gt(keel_test_json_num(summary, "ticks"), 0);
    free(stats);
    for (int i = 0; i < 2; i++)
        keel_test_proc_cleanup(&light[i]);
    keel_test_proc_cleanup(&full);
    keel_test_proc_cleanup(&sv);
}
