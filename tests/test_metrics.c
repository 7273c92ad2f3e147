// keel tests: keel-server --metrics, scraped over HTTP on loopback while
// real keel-client bots play. MIT licence, see LICENSE.
//
// The scrape must be the Prometheus text format (promtool check metrics, when
// the Debian package prometheus is installed; skipped with a message
// otherwise), its counts must agree with the server's own JSON summary at the
// end, /healthz and /readyz answer 200 while it serves, and /readyz never
// goes back to 200 once the drain began. Judged by counts and HTTP codes,
// never by how long anything took; every wait is bounded (a hang guard) and
// every process is killed at the end. The HTTP GET is a few lines over a
// socket (HTTP/1.0, the whole answer read until the server closes).
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <keel/net_proto.h>
#include <keel/sim_version.h>

#include "test_support.h"

static char dir[256];

static void setup(void) { keel_test_dir_make(dir, sizeof dir, "metrics"); }

static void teardown(void) { keel_test_dir_remove(dir); }

TestSuite(metrics, .init = setup, .fini = teardown, .timeout = 240);

#define ANSWER_MAX (256u * 1024u)

// GET http://127.0.0.1:port/path: the status code (0 when nothing answered:
// no server there, or no answer within 5 s), the body in *body (free it)
// when body is given.
static int http_get(unsigned port, const char *path, char **body)
{
    if (body)
        *body = NULL;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fd >= 0);
    struct timeval tv = {5, 0}; // a hang guard
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return 0;
    }
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return 0;
    }
    char *buf = malloc(ANSWER_MAX + 1);
    cr_assert_not_null(buf);
    size_t len = 0;
    ssize_t r;
    while (len < ANSWER_MAX && (r = read(fd, buf + len, ANSWER_MAX - len)) > 0)
        len += (size_t)r;
    close(fd);
    buf[len] = 0;
    int code = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
        code = 0;
    const char *start = strstr(buf, "\r\n\r\n");
    if (body)
        *body = strdup(start ? start + 4 : "");
    free(buf);
    return code;
}

// The value of an unlabelled sample `name` in a scrape (-1 when absent).
static double sample(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, name, n) == 0 && l[n] == ' ')
            return strtod(l + n + 1, NULL);
    return -1;
}

static unsigned metrics_port(const char *err_file)
{
    for (int i = 0; i < 200; i++) { // a hang guard
        char *s = keel_test_read_file(err_file);
        const char *at = strstr(s, "metrics on http://127.0.0.1:");
        unsigned port = at ? (unsigned)strtoul(at + strlen("metrics on http://127.0.0.1:"), NULL, 10) : 0;
        free(s);
        if (port)
            return port;
        keel_test_sleep_ms(50);
    }
    cr_assert_fail("keel-server printed no metrics address");
    return 0;
}

// promtool check metrics < file: its exit code, or -1 when promtool is absent.
static int promtool(const char *file, char *out, size_t size)
{
    if (system("command -v promtool >/dev/null 2>&1") != 0)
        return -1;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "promtool check metrics < '%s' 2>&1", file);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t len = fread(out, 1, size - 1, p);
    out[len] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// Whether this keel-server has --metrics (it is built without when
// libmicrohttpd is absent, and its --help says so).
static bool server_has_metrics(void)
{
    const char *args[] = {"--help", NULL};
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-server"), args, NULL);
    bool has = strstr(r.out, "built without libmicrohttpd") == NULL;
    keel_test_run_free(&r);
    return has;
}

Test(metrics, a_scrape_during_a_session_agrees_with_the_summary_and_passes_promtool)
{
    if (!server_has_metrics())
        cr_skip_test("keel-server was built without libmicrohttpd (Debian libmicrohttpd-dev): no --metrics");
    keel_test_proc sv, cl;
    const char *sargs[] = {"--bind",
                           "127.0.0.1",
                           "--port",
                           "0",
                           "--insecure",
                           "--duration",
                           "120",
                           "--metrics",
                           "127.0.0.1:0",
                           "--max-per-address",
                           "16",
                           "--record",
                           keel_test_dir_file(dir, "m.krec"),
                           "--stats-json",
                           "--quiet",
                           NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.err));
    unsigned mport = metrics_port(sv.err);
    // --ticks 0: they play until the server shuts down
    const char *cargs[] = {"--port", port, "--bots", "3", "--ticks", "0", NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    char *text = NULL;
    for (int i = 0; i < 600; i++) { // a hang guard, not a speed check
        free(text);
        cr_assert_eq(http_get(mport, "/metrics", &text), 200, "GET /metrics");
        if (sample(text, "keel_server_clients") == 3 && sample(text, "keel_server_tick_seconds_count") >= 64)
            break;
        keel_test_sleep_ms(50);
    }
    cr_log_info("scrape:\n%s", text);
    cr_assert_eq(sample(text, "keel_server_clients"), 3, "the bots did not all join: %s", text);
    cr_expect_eq(sample(text, "keel_server_joins_total"), 3);
    cr_expect_eq(sample(text, "keel_server_draining"), 0);
    cr_expect_eq(sample(text, "keel_server_secure"), 0);
    cr_expect_geq(sample(text, "keel_server_crowded_characters"), 0); // present (-1: absent)
    cr_expect_eq(sample(text, "keel_server_recording"), 1);
    cr_expect_gt(sample(text, "keel_server_recording_ticks_total"), 0);
    cr_expect_geq(sample(text, "keel_server_recording_queue_bytes"), 0); // present (-1: absent)
    cr_expect_gt(sample(text, "keel_server_received_bytes_total"), 0);
    cr_expect_gt(sample(text, "keel_server_sent_messages_total"), 0);
    cr_expect_eq(sample(text, "keel_server_tick_seconds_count"),
                 sample(text, "keel_server_tick_seconds_bucket{le=\"+Inf\"}"));
    cr_expect(strstr(text, "# TYPE keel_server_tick_seconds histogram\n") != NULL);
    // Buckets from 10 us (an ordinary tick takes tens of microseconds; a first
    // bound of 0.5 ms held them all) to 64 ms.
    cr_expect_geq(sample(text, "keel_server_tick_seconds_bucket{le=\"0.00001\"}"), 0, "%s", text);
    cr_expect_geq(sample(text, "keel_server_tick_seconds_bucket{le=\"0.0005\"}"), 0, "%s", text);
    cr_expect_geq(sample(text, "keel_server_tick_seconds_bucket{le=\"0.064\"}"), 0, "%s", text);
    char build[160];
    snprintf(build, sizeof build, "keel_server_build_info{version=\"%s\",protocol=\"%u\",behaviour=\"%u\"}",
             KEEL_VERSION_STRING, (unsigned)NET_PROTOCOL_VERSION, (unsigned)NET_BEHAVIOUR_VERSION);
    cr_expect_eq(sample(text, build), 1, "no %s in the scrape", build);
    cr_expect_eq(sample(text, "keel_server_ready"), 1);
    cr_expect(strstr(text, "keel_server_agones_state") == NULL, "Agones metrics without --agones");
    cr_expect(strstr(text, "keel_server_handshake_refused_total{reason=\"") != NULL);
    // promtool, on the scrape as it came
    const char *file = keel_test_dir_file(dir, "scrape.txt");
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    char out[4096];
    int pt = promtool(file, out, sizeof out);
    if (pt < 0)
        keel_test_warn("promtool not installed (Debian package prometheus): the format check is skipped\n");
    else
        cr_expect_eq(pt, 0, "promtool check metrics: %s", out);
    // health
    cr_expect_eq(http_get(mport, "/healthz", NULL), 200);
    cr_expect_eq(http_get(mport, "/readyz", NULL), 200);
    cr_expect_eq(http_get(mport, "/nothing", NULL), 404);
    // Shut down: /readyz goes from 200 to 503 (once the loop notices the
    // signal) and stays there until the server closes; how many answers
    // come in that window is the machine's business, their order is not.
    kill(sv.pid, SIGTERM);
    int prev = 200, seen_503 = 0;
    for (int i = 0; i < 400; i++) { // a hang guard: the server is gone within the drain's bound
        int code = http_get(mport, "/readyz", NULL);
        if (code == 0)
            break;
        cr_expect(code == 200 || code == 503, "/readyz answered %d", code);
        cr_expect(!(prev == 503 && code == 200), "/readyz went back to 200 while draining");
        seen_503 += code == 503;
        prev = code;
        keel_test_sleep_ms(5);
    }
    cr_log_info("/readyz answered 503 %d times while the server drained\n", seen_503);
    cr_assert(keel_test_proc_wait(&sv, 30000), "keel-server did not stop on SIGTERM");
    cr_assert(keel_test_proc_wait(&cl, 30000), "keel-client did not end");
    cr_expect_eq(sv.status, 0);
    cr_expect_eq(cl.status, 0);
    char *sout = keel_test_read_file(sv.out);
    const char *sum = strstr(sout, "{\"summary\":1");
    cr_assert_not_null(sum, "%s", sout);
    // The scrape was taken mid-session: its counts equal the summary's where
    // nothing changed since (joins) and are at most the summary's elsewhere.
    cr_expect_eq(keel_test_json_num(sum, "joined"), sample(text, "keel_server_joins_total"), "%s", sum);
    cr_expect_eq(keel_test_json_num(sum, "drained"), 3, "%s", sum);
    cr_expect_geq(keel_test_json_num(sum, "ticks"), sample(text, "keel_server_tick_seconds_count"));
    cr_expect_geq(keel_test_json_num(sum, "in_wire_bytes"), sample(text, "keel_server_received_bytes_total"));
    cr_expect_geq(keel_test_json_num(sum, "out_wire_bytes"), sample(text, "keel_server_sent_bytes_total"));
    cr_expect_geq(keel_test_json_num(sum, "substituted"), sample(text, "keel_server_commands_substituted_total"));
    cr_expect_geq(keel_test_json_num(sum, "commands"), sample(text, "keel_server_commands_total"));
    free(sout);
    free(text);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&sv);
}

// A connection to 127.0.0.1:port from `from` (another loopback address)
// that sent the start of a request and no more: -1 when it could not connect.
static int slow_open(const char *from, unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    cr_assert_eq(inet_pton(AF_INET, from, &sa.sin_addr), 1);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0, "bind %s", from);
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    static const char start[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        send(fd, start, sizeof start - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof start - 1)) {
        close(fd);
        return -1;
    }
    return fd;
}

// 24 connections from one address (127.0.0.2) that each send a byte of
// header now and then and never finish their request, the way a slow or
// hostile client holds a server's connections: /healthz and /metrics must
// still answer a probe from another address (127.0.0.1) every time.
// Bounded: 24 connections, 8 rounds, 250 ms apart.
Test(metrics, slow_clients_from_one_address_do_not_lock_out_the_probes)
{
    if (!server_has_metrics())
        cr_skip_test("keel-server was built without libmicrohttpd (Debian libmicrohttpd-dev): no --metrics");
    keel_test_proc sv;
    const char *sargs[] = {"--bind", "127.0.0.1", "--port",      "0",       "--insecure",   "--duration",
                           "120",    "--metrics", "127.0.0.1:0", "--quiet", "--stats-json", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    unsigned mport = metrics_port(sv.err);
    int up = 0;
    for (int i = 0; i < 200 && up != 200; i++) { // a hang guard
        up = http_get(mport, "/healthz", NULL);
        keel_test_sleep_ms(25);
    }
    cr_assert_eq(up, 200, "/healthz never answered 200");
    enum { SLOW = 24, ROUNDS = 8 };
    int fd[SLOW];
    for (int i = 0; i < SLOW; i++)
        fd[i] = slow_open("127.0.0.2", mport);
    unsigned healthz_ok = 0, metrics_ok = 0, held = 0;
    for (int round = 0; round < ROUNDS; round++) {
        held = 0;
        for (int i = 0; i < SLOW; i++) { // one more byte of a header line: the connection is not idle
            if (fd[i] >= 0 && send(fd[i], "X", 1, MSG_NOSIGNAL) != 1) {
                close(fd[i]);
                fd[i] = -1;
            }
            held += fd[i] >= 0;
        }
        healthz_ok += http_get(mport, "/healthz", NULL) == 200;
        metrics_ok += http_get(mport, "/metrics", NULL) == 200;
        keel_test_sleep_ms(250);
    }
    cr_log_info("slow connections still open after %d rounds: %u of %d; probes answered 200: /healthz %u, "
                "/metrics %u of %d\n",
                ROUNDS, held, SLOW, healthz_ok, metrics_ok, ROUNDS);
    cr_expect_eq(healthz_ok, ROUNDS, "/healthz did not answer every probe");
    cr_expect_eq(metrics_ok, ROUNDS, "/metrics did not answer every probe");
    for (int i = 0; i < SLOW; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    kill(sv.pid, SIGTERM);
    cr_assert(keel_test_proc_wait(&sv, 30000), "keel-server did not stop on SIGTERM");
    cr_expect_eq(sv.status, 0);
    keel_test_proc_cleanup(&sv);
}

Test(metrics, a_bad_metrics_address_is_a_usage_error)
{
    static const char *const bad[][4] = {
        {"--insecure", "--metrics", "127.0.0.1", NULL},
        {"--insecure", "--metrics", ":9100", NULL},
        {"--insecure", "--metrics", "127.0.0.1:70000", NULL},
        {"--insecure", "--metrics", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        keel_test_run_result r = keel_test_run(keel_test_program_path("keel-server"), bad[i], NULL);
        cr_expect_eq(r.exit_code, 2, "case %zu: exit %d: %s", i, r.exit_code, r.err);
        cr_expect(strstr(r.err, "--help lists the options") != NULL, "case %zu: %s", i, r.err);
        keel_test_run_free(&r);
    }
}
