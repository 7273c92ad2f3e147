// keel tests: keel-server shuts down gracefully on SIGTERM and SIGINT, with
// the real programs over ENet on loopback. MIT licence, see LICENSE.
//
// A server recording a session with bots is sent the signal mid-session: it
// must tell every client why (each bot says "the server shut down" with the
// reason, its summary's "end" is "server_shutdown", and keel-client exits 0),
// finish its recording (keel-replay info: complete; verify: a match up to the
// hash the server printed) and exit 0. The same core on the in-memory network
// (sv_server_drain): joined clients, a connection that has not said hello
// and a hello that comes after the drain are all refused with
// NET_REFUSE_SHUTDOWN and the reason, at exact virtual times. Judged by what the programs report,
// never by how long anything took; every wait is bounded (a guard against
// hangs) and every process is killed at the end.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "play.h"
#include "test_support.h"

static char dir[256];

static void setup(void) { keel_test_dir_make(dir, sizeof dir, "drain"); }

static void teardown(void) { keel_test_dir_remove(dir); }

TestSuite(drain, .init = setup, .fini = teardown, .timeout = 240);

// The "clients" of keel-server's newest JSON stats line (0 before any).
static double server_clients(const char *file)
{
    char *s = keel_test_read_file(file);
    double n = 0;
    for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, "{\"t\":", 5) == 0)
            n = keel_test_json_num(l, "clients");
    free(s);
    return n;
}

// The 16 hex digits after `key` in `text`.
static void hash_after(const char *text, const char *key, char out[17])
{
    const char *at = strstr(text, key);
    cr_assert_not_null(at, "no '%s' in: %s", key, text);
    memcpy(out, at + strlen(key), 16);
    out[16] = 0;
}

static unsigned count(const char *text, const char *what)
{
    unsigned n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

// Three bots and two light clients play until `sig` stops the server.
static void drain_with(int sig, const char *name)
{
    const char *rec = keel_test_dir_file(dir, "drain.krec");
    char reason[64];
    snprintf(reason, sizeof reason, "server shutting down (%s)", name);
    keel_test_proc sv, cl;
    const char *sargs[] = {"--bind",
                           "127.0.0.1",
                           "--port",
                           "0",
                           "--insecure",
                           "--duration",
                           "120",
                           "--max-per-address",
                           "16",
                           "--record",
                           rec,
                           "--stats-json",
                           "--stats-interval",
                           "1",
                           NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.err));
    // --ticks 0: they play until told; 19200 would end them (5 min) in a test gone wrong
    const char *cargs[] = {"--port", port, "--bots", "3", "--light", "2", "--ticks", "0", NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    for (int i = 0; i < 600 && server_clients(sv.out) < 5; i++)
        keel_test_sleep_ms(50); // a hang guard, not a speed check
    cr_assert_eq(server_clients(sv.out), 5, "the clients did not all join");
    keel_test_proc_kill(&sv, sig);
    cr_assert(sv.done, "keel-server did not stop on %s", name);
    cr_assert(keel_test_proc_wait(&cl, 30000), "keel-client did not end after the server's shutdown");
    char *sout = keel_test_read_file(sv.out), *serr = keel_test_read_file(sv.err);
    char *cout = keel_test_read_file(cl.out), *cerr = keel_test_read_file(cl.err);
    cr_log_info("server: %s\n%s\nclient: %s\n%s", serr, strstr(sout, "{\"summary\""), cout, cerr);
    cr_expect_eq(sv.status, 0, "keel-server exit %d: %s", sv.status, serr);
    const char *sum = strstr(sout, "{\"summary\":1");
    cr_assert_not_null(sum, "no summary: %s", sout);
    cr_expect_eq(keel_test_json_num(sum, "joined"), 5, "%s", sum);
    cr_expect_eq(keel_test_json_num(sum, "drained"), 5, "every joined client told: %s", sum);
    cr_expect_eq(keel_test_json_num(sum, "timed_out"), 0, "%s", sum);
    cr_expect_eq(keel_test_json_num(sum, "dropped_clients"), 0, "%s", sum);
    cr_expect(strstr(serr, "keel-server: drained: told 5 connections") != NULL, "%s", serr);
    // The clients: told why, and no failure of theirs.
    cr_expect_eq(cl.status, 0, "keel-client exit %d: %s", cl.status, cerr);
    char line[128];
    for (unsigned b = 1; b <= 3; b++) {
        snprintf(line, sizeof line, "keel-client: bot %u: the server shut down: %s\n", b, reason);
        cr_expect(strstr(cerr, line) != NULL, "no '%s' in %s", line, cerr);
    }
    snprintf(line, sizeof line, "keel-client: light clients: the server shut down: %s\n", reason);
    cr_expect(strstr(cerr, line) != NULL, "no '%s' in %s", line, cerr);
    cr_expect_eq(count(cout, "\"end\":\"server_shutdown\""), 3, "%s", cout);
    const char *light = strstr(cout, "\"light\":");
    cr_assert_not_null(light, "no light clients in %s", cout);
    cr_expect_eq(keel_test_json_num(light, "server_shutdown"), 2, "light clients: %s", light);
    cr_expect_eq(keel_test_json_num(light, "failed"), 0, "light clients: %s", light);
    // ... and each was serviced until its connection was closed, as a bot
    // is: the server's drain waits for that side's acknowledgement (a light
    // client left alone after the word kept the drain waiting about a
    // second, until the transport gave up on it).
    cr_expect_eq(keel_test_json_num(light, "closed"), 2, "light clients: %s", light);
    // The recording: complete, and it verifies up to the server's final hash.
    const char *iargs[] = {"info", rec, NULL};
    keel_test_run_result info = keel_test_run(keel_test_program_path("keel-replay"), iargs, NULL);
    cr_log_info("keel-replay info: %s", info.out);
    cr_expect_eq(info.exit_code, 0, "%s%s", info.out, info.err);
    cr_expect(strstr(info.out, "bytes, complete\n") != NULL, "not complete: %s", info.out);
    cr_expect(strstr(info.out, "truncated") == NULL, "%s", info.out);
    const char *vargs[] = {"verify", rec, NULL};
    keel_test_run_result v = keel_test_run(keel_test_program_path("keel-replay"), vargs, NULL);
    cr_expect_eq(v.exit_code, 0, "keel-replay verify: %s%s", v.out, v.err);
    char last[17], final[17];
    hash_after(v.out, "last hash ", last);
    hash_after(serr, "final hash ", final);
    cr_expect_str_eq(last, final, "keel-replay's last hash and keel-server's final hash");
    keel_test_run_free(&info);
    keel_test_run_free(&v);
    free(sout);
    free(serr);
    free(cout);
    free(cerr);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&sv);
}

Test(drain, sigterm_tells_every_client_finishes_the_recording_and_exits_0) { drain_with(SIGTERM, "SIGTERM"); }

Test(drain, sigint_does_the_same) { drain_with(SIGINT, "SIGINT"); }

// sv_server_drain on the in-memory network: three bots play; a fourth is
// connected but stopped (no hello yet) when the drain begins; a fifth
// connects after it. Every one is told the reason with NET_REFUSE_SHUTDOWN.
Test(drain, the_server_core_tells_joined_waiting_and_late_clients_why)
{
    net_memory_link link = {20, 0, 0, 0};
    play p;
    play_init(&p, 4, CL_BOT_RANDOM, &link, &link, 5);
    p.stall_until_ms[3] = 4000; // its hello waits until after the drain
    for (int ms = 0; ms < 3000; ms++)
        play_ms(&p, true);
    for (uint32_t i = 0; i < 3; i++)
        cr_assert_eq(cl_client_status(p.cls[i]), CL_STATUS_PLAYING, "bot %u", i);
    sv_server_drain(p.sv, "maintenance\tat 3 s"); // the tab is not printable: sent as '?'
    cr_assert(sv_server_draining(p.sv));
    sv_stats ss;
    sv_server_stats(p.sv, &ss);
    cr_expect_eq(ss.clients, 0);
    cr_expect_eq(ss.clients_drained, 3);
    // a late client
    net_host_config hc = net_host_default_config();
    p.hosts[4] = net_memory_connect(p.mem, "server", &link, &link, &hc);
    cr_assert_not_null(p.hosts[4]);
    cl_config cc = cl_default_config();
    p.cls[4] = cl_client_create(p.world, &p.level, &p.settings, &cc, p.hosts[4]);
    cr_assert_not_null(p.cls[4]);
    cl_bot_init(&p.bots[4], CL_BOT_RANDOM, 504);
    p.last_checked[4] = NET_TICK_NONE;
    p.nbots = 5;
    for (int ms = 0; ms < 2000; ms++)
        play_ms(&p, true);
    for (uint32_t i = 0; i < 5; i++) {
        cr_expect_eq(cl_client_status(p.cls[i]), CL_STATUS_REFUSED, "client %u", i);
        cr_expect_eq(cl_client_refusal_code(p.cls[i]), NET_REFUSE_SHUTDOWN, "client %u", i);
        cr_expect_str_eq(cl_client_refusal(p.cls[i]), "maintenance?at 3 s", "client %u", i);
    }
    sv_server_stats(p.sv, &ss);
    cr_expect_eq(ss.clients_joined, 3);
    cr_expect_eq(ss.clients_drained, 3);
    cr_expect_eq(ss.clients_refused, 1, "the late hello"); // the stopped one had not said hello: not counted
    cr_expect_eq(ss.clients_left + ss.clients_timed_out + ss.clients_dropped, 0);
    play_free(&p);
}
