// keel tests: secure mode with the real programs on loopback: keel-token
// keygen, keel-server --key, keel-client --token / --token-key. MIT licence,
// see LICENSE.
//
// Judged by exit codes and by the counts the programs report (keel-server's
// JSON summary, keel-client's summary and messages), never by how long
// anything took; every wait is bounded (a guard against hangs) and every
// process is killed at the end.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static char dir[256];
static char key1[300], key2[300];

static void keygen(const char *path)
{
    const char *args[] = {"keygen", path, NULL};
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-token"), args, NULL);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    keel_test_run_free(&r);
}

static void setup(void)
{
    keel_test_dir_make(dir, sizeof dir, "handshake");
    snprintf(key1, sizeof key1, "%s", keel_test_dir_file(dir, "k1"));
    snprintf(key2, sizeof key2, "%s", keel_test_dir_file(dir, "k2"));
    keygen(key1);
    keygen(key2);
}

static void teardown(void) { keel_test_dir_remove(dir); }

TestSuite(handshake_programs, .init = setup, .fini = teardown, .timeout = 240);

static keel_test_run_result run(const char *program, const char *const *args)
{
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 60; // a guard against hangs
    return keel_test_run(keel_test_program_path(program), args, &o);
}

Test(handshake_programs, bots_with_tokens_play_and_others_are_refused)
{
    keel_test_proc sv;
    const char *sargs[] = {"--bind", "127.0.0.1",    "--port",           "0", "--key", key1, "--duration",
                           "120",    "--stats-json", "--stats-interval", "0", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.err));

    const char *good[] = {"--port", port, "--token-key", key1, "--bots", "2", "--light", "1", "--ticks", "64", NULL};
    keel_test_run_result r = run("keel-client", good);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_eq(keel_test_json_num(r.out, "hash_mismatches"), 0);
    keel_test_run_free(&r);

    const char *other_key[] = {"--port", port, "--token-key", key2, "--ticks", "64", NULL};
    r = run("keel-client", other_key);
    cr_expect_eq(r.exit_code, 1);
    cr_expect_not_null(strstr(r.out, "\"end\":\"refused_token\""), "%s", r.out);
    cr_expect_not_null(strstr(r.err, "refused by the server's handshake: damaged token"), "%s", r.err);
    keel_test_run_free(&r);

    const char *insecure[] = {"--port", port, "--ticks", "64", "--connect-timeout", "1", NULL};
    r = run("keel-client", insecure);
    cr_expect_eq(r.exit_code, 1, "%s", r.err);
    keel_test_run_free(&r);

    keel_test_proc_kill(&sv, SIGTERM);
    char *out = keel_test_read_file(sv.out), *err = keel_test_read_file(sv.err);
    const char *sum = strstr(out, "{\"summary\":1");
    cr_assert_not_null(sum, "no summary: %s %s", out, err);
    cr_log_info("server: %s\n%s", sum, err);
    cr_expect_eq(strncmp(err, "keel-server: secure (connect tokens required, key ", 50), 0, "first line: %s", err);
    cr_expect_not_null(strstr(sum, "\"secure\":true"), "%s", sum);
    cr_expect_not_null(strstr(err, "; secure\n"), "the closing line says the mode: %s", err);
    cr_expect_eq(keel_test_json_num(sum, "joined"), 3, "two bots and a light client");
    // at least: a response sent again before the admission arrived renews it
    cr_expect_geq(keel_test_json_num(sum, "handshake_admitted"), 3);
    cr_expect_geq(keel_test_json_num(sum, "handshake_refused"), 2, "a damaged token, unadmitted CONNECTs");
    cr_expect_not_null(strstr(err, "damaged token "), "%s", err);
    cr_expect_not_null(strstr(err, "connect not admitted"), "%s", err);
    free(out);
    free(err);
    keel_test_proc_cleanup(&sv);
}

Test(handshake_programs, a_token_file_joins_once_per_address)
{
    keel_test_proc sv;
    const char *sargs[] = {"--bind", "127.0.0.1",    "--port",           "0", "--key", key1, "--duration",
                           "120",    "--stats-json", "--stats-interval", "0", NULL}; // text on stderr
    keel_test_proc_start(&sv, "keel-server", sargs);
    unsigned p = keel_test_wait_port(sv.err);
    char port[16], server[64];
    snprintf(port, sizeof port, "%u", p);
    snprintf(server, sizeof server, "127.0.0.1:%u", p);
    const char *token = keel_test_dir_file(dir, "t1");
    const char *issue[] = {"issue", "--key", key1, "--client-id", "7", "--server", server, "--out", token, NULL};
    keel_test_run_result r = run("keel-token", issue);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    keel_test_run_free(&r);

    const char *join[] = {"--port", port, "--token", token, "--ticks", "64", NULL};
    r = run("keel-client", join);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    keel_test_run_free(&r);
    // the same token from another process (another port) while it is valid
    r = run("keel-client", join);
    cr_expect_eq(r.exit_code, 1);
    cr_expect_not_null(strstr(r.err, "token in use from another address"), "%s", r.err);
    keel_test_run_free(&r);
    keel_test_proc_cleanup(&sv);
}

Test(handshake_programs, bad_combinations_are_usage_errors)
{
    const char *s1[] = {"--key", key1, "--insecure", NULL};
    const char *s2[] = {"--key", key1, NULL}; // binds 0.0.0.0 without --public
    const char *s3[] = {"--public", "127.0.0.1:5000", NULL};
    const char *c1[] = {"--token", key1, "--bots", "2", NULL};
    const char *c2[] = {"--token", key1, "--token-key", key1, NULL};
    const char *c3[] = {"--protocol-id", "5", NULL};
    const char *const *server_args[] = {s1, s2, s3};
    const char *const *client_args[] = {c1, c2, c3};
    for (int i = 0; i < 3; i++) {
        keel_test_run_result r = run("keel-server", server_args[i]);
        cr_expect_eq(r.exit_code, 2, "keel-server case %d: %s", i, r.err);
        cr_expect_not_null(strstr(r.err, "--help lists the options"), "%s", r.err);
        keel_test_run_free(&r);
        r = run("keel-client", client_args[i]);
        cr_expect_eq(r.exit_code, 2, "keel-client case %d: %s", i, r.err);
        keel_test_run_free(&r);
    }
    // neither --key nor --insecure: it says what to pass and does not start
    const char *no_mode[] = {"--bind", "127.0.0.1", "--port", "0", "--duration", "1", NULL};
    keel_test_run_result nm = run("keel-server", no_mode);
    cr_expect_eq(nm.exit_code, 2, "%s", nm.err);
    cr_expect_not_null(strstr(nm.err, "keel-server: no mode chosen: pass --key FILE"), "%s", nm.err);
    cr_expect_not_null(strstr(nm.err, "keel-token keygen"), "%s", nm.err);
    cr_expect_not_null(strstr(nm.err, "or --insecure"), "%s", nm.err);
    cr_expect_not_null(strstr(nm.err, "--help lists the options"), "%s", nm.err);
    cr_expect_null(strstr(nm.out, "listening"), "it served: %s", nm.out);
    keel_test_run_free(&nm);
    // files that are not what they should be: a clear error, exit 1
    const char *missing[] = {"--bind", "127.0.0.1", "--key", keel_test_dir_file(dir, "none"), NULL};
    keel_test_run_result r = run("keel-server", missing);
    cr_expect_eq(r.exit_code, 1);
    cr_expect_not_null(strstr(r.err, "--key:"), "%s", r.err);
    keel_test_run_free(&r);
    const char *not_token[] = {"--token", key1, NULL};
    r = run("keel-client", not_token);
    cr_expect_eq(r.exit_code, 1);
    cr_expect_not_null(strstr(r.err, "not a connect token"), "%s", r.err);
    keel_test_run_free(&r);
}
