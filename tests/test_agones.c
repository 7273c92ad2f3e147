// keel tests: keel-server --agones against Agones' own SDK sidecar,
// sdk-server (../shared/tools/agones/sdk-server, or $KEEL_AGONES_SDK_SERVER;
// every test is skipped with a message when it is absent). MIT licence, see
// LICENSE.
//
// Real processes on loopback: keel-server, keel-client bots and sdk-server
// in its conformance mode (--test: it checks the set of SDK calls made) or
// its local mode (--local: it answers every call and logs each as a JSON
// line). Judged by the programs' own output: keel-server's JSON events and
// counts, sdk-server's log lines and exit code; the times compared are the
// ones the two programs print. Every wait is bounded (a hang guard) and
// every process is killed at the end. HTTP from the test (POST /allocate,
// GET /healthz) goes through libcurl.
#define _DEFAULT_SOURCE // timegm
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
#include <time.h>
#include <unistd.h>

#ifdef KEEL_TEST_CURL
#include <curl/curl.h>
#endif

#include "test_support.h"

// keel-server under Agones on loopback, any port (the first arguments of every run here)
#define KEEL_SERVER_ON_LOOPBACK "--agones", "--insecure", "--bind", "127.0.0.1", "--port", "0"

static char dir[256];
static void setup(void) { keel_test_dir_make(dir, sizeof dir, "agones"); }
static void teardown(void) { keel_test_dir_remove(dir); }
TestSuite(agones, .init = setup, .fini = teardown, .timeout = 240);

static const char *sdk_server(void)
{
    static char path[512];
    const char *env = getenv("KEEL_AGONES_SDK_SERVER");
    snprintf(path, sizeof path, "%s", env && env[0] ? env : KEEL_SHARED_LEVELS_DIR "/../tools/agones/sdk-server");
    return access(path, X_OK) == 0 ? path : NULL;
}

// Skips the test (with the reason) when sdk-server, libcurl or keel-server's
// --agones is missing.
static void need_agones(void)
{
#ifndef KEEL_TEST_CURL
    cr_skip_test("this test was built without libcurl (Debian libcurl4-openssl-dev)");
#endif
    if (!sdk_server())
        cr_skip_test("Agones' sdk-server is not at %s (set KEEL_AGONES_SDK_SERVER)",
                     KEEL_SHARED_LEVELS_DIR "/../tools/agones/sdk-server");
    const char *args[] = {"--help", NULL};
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-server"), args, NULL);
    bool has = strstr(r.out, "built without libcurl") == NULL;
    keel_test_run_free(&r);
    if (!has)
        cr_skip_test("keel-server was built without libcurl: no --agones");
}

// A free TCP port on loopback (the kernel's choice; closed again for
// sdk-server to take, which takes no port 0).
static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t len = sizeof sa;
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

typedef struct sidecar {
    keel_test_proc p;
    unsigned http;
    char http_s[16], grpc_s[16];
} sidecar;

// Picks the sidecar's ports and points keel-server at them
// (AGONES_SDK_HTTP_PORT, inherited); sidecar_start then starts it.
static void sidecar_ports(sidecar *s)
{
    memset(s, 0, sizeof *s);
    s->http = free_port();
    unsigned grpc = free_port();
    while (grpc == s->http)
        grpc = free_port();
    snprintf(s->http_s, sizeof s->http_s, "%u", s->http);
    snprintf(s->grpc_s, sizeof s->grpc_s, "%u", grpc);
    setenv("AGONES_SDK_HTTP_PORT", s->http_s, 1);
}

// tests: NULL for local mode, else conformance mode expecting those calls.
// The --timeout is a hang guard: a test ends it with SIGTERM (conformance
// mode judges the calls then, as at its timeout).
static void sidecar_start(sidecar *s, const char *tests)
{
    const char *local[] = {"--local", "--http-port", s->http_s, "--grpc-port", s->grpc_s, "--timeout", "180", NULL};
    const char *conf[] = {"--test",  tests,       "--http-port", s->http_s, "--grpc-port",
                          s->grpc_s, "--timeout", "180",         NULL};
    keel_test_proc_start_path(&s->p, sdk_server(), tests ? conf : local);
}

// Each test's start: skipped without what it needs; the sidecar's ports
// picked, and the sidecar started in local mode when asked.
static void begin(sidecar *s, bool start_local)
{
    need_agones();
    sidecar_ports(s);
    if (start_local)
        sidecar_start(s, NULL);
}

static char *sidecar_stop(sidecar *s)
{
    keel_test_proc_kill(&s->p, SIGTERM);
    cr_assert(s->p.done, "sdk-server did not stop on SIGTERM");
    char *log = keel_test_read_file(s->p.out);
    char *err = keel_test_read_file(s->p.err);
    size_t n = strlen(log);
    log = realloc(log, n + strlen(err) + 1);
    strcpy(log + n, err); // the log is on stdout; stderr holds anything else
    free(err);
    return log;
}

static unsigned count(const char *text, const char *needle)
{
    unsigned n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

// The line of `text` holding `needle` (a pointer into text), or NULL.
static const char *line_with(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    if (!at)
        return NULL;
    while (at > text && at[-1] != '\n')
        at--;
    return at;
}

#ifdef KEEL_TEST_CURL
typedef struct http_answer {
    char text[32768];
    size_t len;
} http_answer;

static size_t keep(char *d, size_t size, size_t n, void *ctx)
{
    http_answer *a = ctx;
    size_t len = size * n, take = len < sizeof a->text - 1 - a->len ? len : sizeof a->text - 1 - a->len;
    memcpy(a->text + a->len, d, take);
    a->len += take;
    a->text[a->len] = 0;
    return len;
}
#endif

// One HTTP call to 127.0.0.1:port: its status (0: no answer within 5 s);
// the answer's body (cut at 32 KiB) in *out when given (free it).
static long http_body(const char *method, unsigned port, const char *path, const char *body, char **out)
{
    long status = 0;
#ifdef KEEL_TEST_CURL
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
    CURL *c = curl_easy_init();
    cr_assert_not_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    http_answer *a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    if (out)
        *out = strdup(a->text);
    free(a);
#else
    (void)method;
    (void)port;
    (void)path;
    (void)body;
    if (out)
        *out = strdup("");
#endif
    return status;
}

static long http(const char *method, unsigned port, const char *path, const char *body)
{
    return http_body(method, port, path, body, NULL);
}

// keel-server's stdout once it has ended (bounded), checked for exit 0.
static char *server_end(keel_test_proc *sv)
{
    cr_assert(keel_test_proc_wait(sv, 90000), "keel-server did not end");
    char *out = keel_test_read_file(sv->out);
    char *err = keel_test_read_file(sv->err);
    cr_log_info("keel-server's text:\n%s", err);
    cr_expect_eq(sv->status, 0, "keel-server exited %d: %s", sv->status, err);
    free(err);
    return out;
}

Test(agones, conformance_the_sidecar_gets_exactly_the_calls_keel_makes)
{
    sidecar sd;
    begin(&sd, false);
    // sdk-server's conformance mode records setlabel only when its value is
    // the GameServer's creation timestamp (the convention of Agones' own SDK
    // conformance tests); keel's labels carry the player count and the
    // simulation, so they are checked in the log below instead.
    sidecar_start(&sd, "ready,health,gameserver,shutdown");
    keel_test_proc sv;
    const char *args[] = {KEEL_SERVER_ON_LOOPBACK, "--ticks", "192", "--stats-json", "--stats-interval", "0", NULL};
    keel_test_proc_start(&sv, "keel-server", args);
    char *out = server_end(&sv);
    char *log = sidecar_stop(&sd);
    const char *tail = strstr(log, "\"message\":\"shutting down sdk server\"");
    cr_log_info("sdk-server's last lines:\n%s", tail ? line_with(log, "shutting down sdk server") : log);
    cr_expect_eq(sd.p.status, 0, "sdk-server --test failed: %s", log);
    cr_expect(strstr(log, "Test run was successful") != NULL, "%s", log);
    const char *ag = strstr(out, "{\"agones\":1");
    cr_assert_not_null(ag, "%s", out);
    cr_expect_geq(keel_test_json_num(ag, "health_sent"), 1);
    cr_expect(strstr(ag, "\"shutdown_sent\":true") != NULL, "%s", ag);
    // the only failed calls: Ready tried before the sidecar was up
    cr_expect_eq(keel_test_json_num(ag, "errors"), keel_test_json_num(ag, "ready_tries") - 1, "%s", ag);
    // both labels were set, and the sidecar's only complaints are about
    // their values not being its creation timestamp
    cr_expect(strstr(log, "\"values\":{\"key\":\"keel-sim\",\"value\":\"p") != NULL, "%s", log);
    cr_expect(strstr(log, "\"values\":{\"key\":\"keel-players\",\"value\":\"0\"}") != NULL, "%s", log);
    cr_expect_eq(count(log, "\"severity\":\"error\""), count(log, "as value for 'setlabel' request"), "%s", log);
    free(out);
    free(log);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&sd.p);
}

Test(agones, ready_comes_before_any_player_joins_and_an_empty_server_shuts_down)
{
    sidecar sd;
    begin(&sd, false);
    keel_test_proc sv, cl;
    const char *args[] = {
        KEEL_SERVER_ON_LOOPBACK, "--duration", "120", "--empty-seconds", "1", "--max-per-address", "16", "--stats-json",
        "--stats-interval",      "1",          NULL};
    keel_test_proc_start(&sv, "keel-server", args);
    char port[16];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.err));
    cr_assert(keel_test_wait_text(sv.err, "waiting for the SDK sidecar", 20000));
    // The bots knock while no sidecar exists; the sidecar starts after them.
    const char *cargs[] = {"--port", port, "--bots", "3", "--ticks", "192", NULL};
    keel_test_proc_start(&cl, "keel-client", cargs);
    keel_test_sleep_ms(300);
    sidecar_start(&sd, NULL);
    char *out = server_end(&sv);
    cr_assert(keel_test_proc_wait(&cl, 60000), "keel-client did not end");
    cr_expect_eq(cl.status, 0, "keel-client exited %d", cl.status);
    char *log = sidecar_stop(&sd);
    // keel-server's own account: Ready took more than one try (the sidecar
    // was not up when the bots were), no player had joined when it was
    // accepted, all three joined after it, and the run ended on its own.
    const char *ready = strstr(out, "{\"event\":\"agones_ready\"");
    cr_assert_not_null(ready, "%s", out);
    cr_expect_gt(keel_test_json_num(ready, "tries"), 1, "%s", ready);
    cr_expect_eq(keel_test_json_num(ready, "clients"), 0, "%s", ready);
    const char *first_stats = strstr(out, "{\"t\":");
    cr_expect(first_stats == NULL || first_stats > ready, "a stats line came before Ready: %s", out);
    const char *sum = strstr(out, "{\"summary\":1");
    cr_assert_not_null(sum, "%s", out);
    cr_expect_eq(keel_test_json_num(sum, "joined"), 3, "%s", sum);
    const char *ag = strstr(out, "{\"agones\":1");
    cr_assert_not_null(ag, "%s", out);
    cr_expect(strstr(ag, "\"shutdown_sent\":true") != NULL, "%s", ag);
    char *err = keel_test_read_file(sv.err);
    cr_expect(strstr(err, "every player left") != NULL, "%s", err);
    free(err);
    // the sidecar's account: Ready, the player count label, the shutdown, in that order
    const char *r = strstr(log, "Ready request has been received!");
    const char *l = strstr(log, "\"values\":{\"key\":\"keel-players\",\"value\":\"3\"}");
    const char *s = strstr(log, "Shutdown request has been received!");
    cr_expect(r && l && s && r < l && l < s, "sdk-server's log:\n%s", log);
    free(out);
    free(log);
    keel_test_proc_cleanup(&cl);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&sd.p);
}

// The time of a sdk-server log line ("time":"2026-01-02T03:04:05.123456789Z"), ms since the epoch.
static uint64_t log_time_ms(const char *line)
{
    const char *t = strstr(line, "\"time\":\"");
    cr_assert_not_null(t, "%.200s", line);
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    char frac[16] = "0";
    cr_assert_geq(sscanf(t + 8, "%d-%d-%dT%d:%d:%d.%9[0-9]", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                         &tm.tm_min, &tm.tm_sec, frac),
                  6, "%.80s", t);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    char ms[4] = "000";
    memcpy(ms, frac, strlen(frac) < 3 ? strlen(frac) : 3);
    return (uint64_t)timegm(&tm) * 1000u + (uint64_t)strtoul(ms, NULL, 10);
}

Test(agones, health_pings_and_healthz_stop_while_the_tick_loop_is_stalled)
{
    sidecar sd;
    begin(&sd, true);
    keel_test_proc sv;
    // 2 s of ticks, a 5 s stall, then the rest (the missed deadlines run at once, then 3 s)
    const char *args[] = {KEEL_SERVER_ON_LOOPBACK,
                          "--metrics",
                          "127.0.0.1:0",
                          "--ticks",
                          "640",
                          "--test-stall-after-ticks",
                          "128",
                          "--test-stall-seconds",
                          "5",
                          "--stats-json",
                          "--stats-interval",
                          "0",
                          NULL};
    keel_test_proc_start(&sv, "keel-server", args);
    cr_assert(keel_test_wait_text(sv.out, "\"metrics_port\":", 20000));
    char *o = keel_test_read_file(sv.out);
    unsigned mport = (unsigned)keel_test_json_num(o, "metrics_port");
    free(o);
    cr_assert(keel_test_wait_text(sv.out, "{\"event\":\"stall_begin\"", 60000), "no stall");
    int seen_503 = 0, back_200 = 0;
    for (int i = 0; i < 400 && !seen_503; i++) { // a hang guard: the stall is 5 s, /healthz fails after 1 s
        seen_503 = http("GET", mport, "/healthz", NULL) == 503;
        keel_test_sleep_ms(25);
    }
    cr_assert(keel_test_wait_text(sv.out, "{\"event\":\"stall_end\"", 60000), "the stall never ended");
    for (int i = 0; i < 400 && !back_200; i++) {
        back_200 = http("GET", mport, "/healthz", NULL) == 200;
        keel_test_sleep_ms(25);
    }
    cr_expect(seen_503, "/healthz never answered 503 during the stall");
    cr_expect(back_200, "/healthz did not answer 200 again after the stall");
    char *out = server_end(&sv);
    char *log = sidecar_stop(&sd);
    const char *b = strstr(out, "{\"event\":\"stall_begin\""), *e = strstr(out, "{\"event\":\"stall_end\"");
    const char *ag = strstr(out, "{\"agones\":1");
    cr_assert(b && e && ag, "%s", out);
    double sent_b = keel_test_json_num(b, "health_sent"), sent_e = keel_test_json_num(e, "health_sent");
    double skip_b = keel_test_json_num(b, "health_skipped"), skip_e = keel_test_json_num(e, "health_skipped");
    cr_log_info("health pings: %.0f before the stall, %.0f during it (skipped %.0f), %.0f in all\n", sent_b,
                sent_e - sent_b, skip_e - skip_b, keel_test_json_num(ag, "health_sent"));
    // At most one ping decided in the stall's first second (before the loop
    // counts as stalled), at least one period skipped, and pings again after.
    cr_expect_leq(sent_e - sent_b, 1, "%s%s", b, e);
    cr_expect_geq(skip_e - skip_b, 1, "%s%s", b, e);
    cr_expect_gt(keel_test_json_num(ag, "health_sent"), sent_e, "%s", ag);
    // The sidecar received every ping keel-server counted (a ping whose
    // answer came too late is received but not counted). Once the loop
    // counts as stalled (one second into the stall, by keel-server's clock)
    // until the stall's end, the sidecar receives no ping but the one
    // keel-server may have decided before that second was up (it counted
    // it above): a count, whatever the HTTP round trip took on a busy
    // machine.
    cr_expect_geq(count(log, "Health Ping Received!"), keel_test_json_num(ag, "health_sent"), "%s", log);
    uint64_t from = (uint64_t)keel_test_json_num(b, "wall_ms") + 1000u, to = (uint64_t)keel_test_json_num(e, "wall_ms");
    unsigned during = 0;
    for (const char *p = strstr(log, "Health Ping Received!"); p; p = strstr(p + 1, "Health Ping Received!")) {
        uint64_t t = log_time_ms(line_with(p, "\"message\""));
        during += t > from && t < to;
    }
    cr_expect_leq(during, sent_e - sent_b, "the sidecar got %u pings during the stall, keel-server sent %.0f", during,
                  sent_e - sent_b);
    free(out);
    free(log);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&sd.p);
}

// An allocated run: keel-server with `args` against the local sidecar,
// allocated `wait_ms` after Ready, run to its end, which must be `reason`
// with a shutdown call `min_ticks` or more after the allocation. The JSON
// summary in *sum (a pointer into the returned text, freed by the caller).
static char *allocated_run(const char **args, unsigned wait_ms, double min_ticks, const char *reason, const char **sum)
{
    sidecar sd;
    begin(&sd, true);
    keel_test_proc sv;
    keel_test_proc_start(&sv, "keel-server", args);
    cr_assert(keel_test_wait_text(sv.out, "{\"event\":\"agones_ready\"", 60000), "never Ready");
    keel_test_sleep_ms(wait_ms); // ticks before the allocation (only to show the clock starts there)
    cr_assert_eq(http("POST", sd.http, "/allocate", "{}"), 200, "POST /allocate");
    char *out = server_end(&sv);
    char *log = sidecar_stop(&sd);
    const char *al = strstr(out, "{\"event\":\"agones_allocated\"");
    const char *ag = strstr(out, "{\"agones\":1");
    *sum = strstr(out, "{\"summary\":1");
    cr_assert(al && *sum && ag, "%s", out);
    cr_expect_geq(keel_test_json_num(*sum, "ticks"), keel_test_json_num(al, "tick") + min_ticks, "%s%s", al, *sum);
    cr_expect(strstr(ag, "\"allocated\":true") && strstr(ag, "\"shutdown_sent\":true"), "%s", ag);
    char *err = keel_test_read_file(sv.err);
    cr_expect(strstr(err, reason) != NULL, "%s", err);
    free(err);
    const char *a = strstr(log, "Allocate request has been received!");
    const char *s = strstr(log, "Shutdown request has been received!");
    cr_expect(a && s && a < s, "sdk-server's log:\n%s", log);
    free(log);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&sd.p);
    return out;
}

Test(agones, the_match_starts_at_allocation_and_ends_with_a_shutdown)
{
    const char *args[] = {KEEL_SERVER_ON_LOOPBACK, "--duration", "120", "--match-seconds", "2", "--stats-json",
                          "--stats-interval",      "0",          NULL};
    const char *sum;
    // 2 s at 64 Hz after the tick that saw the allocation
    free(allocated_run(args, 500, 128, "server shutting down (its match is over)", &sum));
}

// No player ever joins the allocated server: --join-seconds ends it (and
// --empty-seconds, which counts only once there were players, does not).
Test(agones, an_allocated_server_nobody_joins_ends_with_a_shutdown)
{
    const char *args[] = {
        KEEL_SERVER_ON_LOOPBACK, "--duration", "120", "--join-seconds", "1", "--empty-seconds", "1", "--stats-json",
        "--stats-interval",      "0",          NULL};
    const char *sum;
    char *out = allocated_run(args, 0, 64, "server shutting down (no player joined)", &sum);
    cr_expect_eq(keel_test_json_num(sum, "joined"), 0, "%s", sum);
    free(out);
}

// Until Agones accepted Ready the server is alive (/healthz 200: liveness
// does not depend on the sidecar) but not ready (/readyz 503); SIGTERM then
// ends it with exit 0, and its closing line says Ready was never accepted.
// No sidecar at all: 20 probes of each, 100 ms apart (bounded).
Test(agones, while_waiting_for_ready_it_is_alive_not_ready_and_a_sigterm_says_ready_never_came)
{
    sidecar sd;
    begin(&sd, false);
    keel_test_proc sv;
    const char *args[] = {KEEL_SERVER_ON_LOOPBACK, "--metrics",        "127.0.0.1:0", "--duration", "120",
                          "--stats-json",          "--stats-interval", "0",           NULL};
    keel_test_proc_start(&sv, "keel-server", args);
    cr_assert(keel_test_wait_text(sv.out, "\"metrics_port\":", 20000));
    cr_assert(keel_test_wait_text(sv.err, "waiting for the SDK sidecar", 20000));
    char *o = keel_test_read_file(sv.out);
    unsigned mport = (unsigned)keel_test_json_num(o, "metrics_port");
    free(o);
    enum { PROBES = 20 };
    int healthz_200 = 0, readyz_503 = 0;
    for (int i = 0; i < PROBES; i++) {
        healthz_200 += http("GET", mport, "/healthz", NULL) == 200;
        readyz_503 += http("GET", mport, "/readyz", NULL) == 503;
        keel_test_sleep_ms(100);
    }
    cr_expect_eq(healthz_200, PROBES, "/healthz answered 200 to %d of %d probes", healthz_200, PROBES);
    cr_expect_eq(readyz_503, PROBES, "/readyz answered 503 to %d of %d probes", readyz_503, PROBES);
    // the metrics say why: Starting, not ready, Ready calls failing
    char *scrape = NULL;
    cr_expect_eq(http_body("GET", mport, "/metrics", NULL, &scrape), 200);
    cr_expect(strstr(scrape, "\nkeel_server_agones_state{state=\"Starting\"} 1\n") != NULL, "%s", scrape);
    cr_expect(strstr(scrape, "\nkeel_server_agones_state{state=\"Ready\"} 0\n") != NULL, "%s", scrape);
    cr_expect(strstr(scrape, "\nkeel_server_ready 0\n") != NULL, "%s", scrape);
    const char *rf = strstr(scrape, "keel_server_agones_call_failures_total{call=\"ready\"} ");
    cr_expect(rf && strtoul(rf + strlen("keel_server_agones_call_failures_total{call=\"ready\"} "), NULL, 10) > 0, "%s",
              scrape);
    free(scrape);
    kill(sv.pid, SIGTERM);
    char *out = server_end(&sv);
    char *err = keel_test_read_file(sv.err);
    const char *ag = strstr(out, "{\"agones\":1");
    cr_assert_not_null(ag, "%s", out);
    cr_expect(strstr(ag, "\"ready\":false") != NULL, "%s", ag);
    cr_expect(strstr(err, "Ready never accepted") != NULL, "%s", err);
    cr_expect(strstr(err, "Ready accepted") == NULL && strstr(err, "Ready after") == NULL, "%s", err);
    free(err);
    free(out);
    keel_test_proc_cleanup(&sv);
}

// SIGTERM while --public agones waits for the GameServer's address: exit 0,
// and it says so (no sidecar: the address never comes).
Test(agones, a_sigterm_while_waiting_for_the_address_is_said_and_exits_0)
{
    sidecar sd;
    begin(&sd, false);
    const char *key = keel_test_dir_file(dir, "backend.key");
    const char *kargs[] = {"keygen", key, NULL};
    keel_test_run_result kr = keel_test_run(keel_test_program_path("keel-token"), kargs, NULL);
    cr_assert_eq(kr.exit_code, 0, "keel-token keygen: %s", kr.err);
    keel_test_run_free(&kr);
    keel_test_proc sv;
    const char *args[] = {"--agones", "--key", key, "--public", "agones", "--bind", "127.0.0.1", "--port", "0", NULL};
    keel_test_proc_start(&sv, "keel-server", args);
    cr_assert(keel_test_wait_text(sv.err, "waiting for the GameServer's address", 20000), "no word of the wait");
    kill(sv.pid, SIGTERM);
    cr_assert(keel_test_proc_wait(&sv, 30000), "keel-server did not end");
    char *err = keel_test_read_file(sv.err);
    cr_expect_eq(sv.status, 0, "%s", err);
    cr_expect(strstr(err, "SIGTERM while waiting for the GameServer's address") != NULL, "%s", err);
    free(err);
    keel_test_proc_cleanup(&sv);
}

// The sidecar is gone when the match ends (here: stopped right after Ready,
// before the run's 192 ticks are over) and back after keel-server's first
// failed POST /shutdown: the shutdown is retried until the new sidecar
// accepts it.
Test(agones, a_shutdown_the_sidecar_missed_is_retried)
{
    sidecar sd;
    begin(&sd, true);
    keel_test_proc sv;
    const char *args[] = {KEEL_SERVER_ON_LOOPBACK, "--ticks", "192", "--stats-json", "--stats-interval", "0", NULL};
    keel_test_proc_start(&sv, "keel-server", args);
    cr_assert(keel_test_wait_text(sv.out, "{\"event\":\"agones_ready\"", 60000), "never Ready");
    free(sidecar_stop(&sd));
    keel_test_proc_cleanup(&sd.p);
    cr_assert(keel_test_wait_text(sv.err, "POST /shutdown failed; retrying", 60000), "no failed shutdown call");
    sidecar_start(&sd, NULL);
    char *out = server_end(&sv);
    char *log = sidecar_stop(&sd);
    const char *ag = strstr(out, "{\"agones\":1");
    cr_assert_not_null(ag, "%s", out);
    cr_expect(strstr(ag, "\"shutdown_sent\":true") != NULL, "%s", ag);
    cr_expect_gt(keel_test_json_num(ag, "shutdown_tries"), 1, "%s", ag);
    cr_expect(strstr(log, "Shutdown request has been received!") != NULL, "the second sidecar's log:\n%s", log);
    free(out);
    free(log);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&sd.p);
}

// A stand-in sidecar that refuses every label (HTTP 500) and accepts every
// other call, in a child process on 127.0.0.1:port, for at most
// `seconds`: one line per label request in `count_file`. Returns the pid.
static pid_t refusing_sidecar(unsigned port, const char *count_file, int seconds)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(ls >= 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(ls, 16), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid > 0) {
        close(ls);
        return pid;
    }
    alarm((unsigned)seconds); // a hang guard: the child ends by itself
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0)
            continue;
        struct timeval tv = {2, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char req[4096];
        size_t len = 0;
        ssize_t r;
        char *end = NULL;
        while (len < sizeof req - 1 && (r = read(fd, req + len, sizeof req - 1 - len)) > 0) {
            len += (size_t)r;
            req[len] = 0;
            if ((end = strstr(req, "\r\n\r\n")) != NULL) {
                const char *cl = strstr(req, "Content-Length: ");
                size_t body = cl ? strtoul(cl + 16, NULL, 10) : 0;
                if (len >= (size_t)(end + 4 - req) + body)
                    break;
            }
        }
        req[len] = 0;
        bool label = strncmp(req, "PUT /metadata/label", 19) == 0;
        if (label) {
            FILE *f = fopen(count_file, "a");
            if (f) {
                fputs("label\n", f);
                fclose(f);
            }
        }
        const char *answer =
            label ? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                  : "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                    "Connection: close\r\n\r\n{}";
        if (write(fd, answer, strlen(answer)) < 0)
            (void)0;
        close(fd);
    }
}

// A sidecar that refuses the labels: keel-server tries them again after a
// backoff, not on every pass of its SDK thread's loop (about 50 a second).
// Judged by counts: the stand-in's label requests equal keel-server's
// failed label calls, and over 192 ticks (3 s of its clock) they are few.
Test(agones, a_refused_label_is_retried_with_a_backoff)
{
    need_agones();
    unsigned port = free_port();
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%u", port);
    setenv("AGONES_SDK_HTTP_PORT", port_s, 1);
    char count_file[512];
    snprintf(count_file, sizeof count_file, "%s", keel_test_dir_file(dir, "labels.txt"));
    pid_t fake = refusing_sidecar(port, count_file, 120);
    keel_test_proc sv;
    const char *args[] = {KEEL_SERVER_ON_LOOPBACK, "--ticks", "192", "--stats-json", "--stats-interval", "0", NULL};
    keel_test_proc_start(&sv, "keel-server", args);
    char *out = server_end(&sv);
    kill(fake, SIGKILL);
    waitpid(fake, NULL, 0);
    char *labels = keel_test_read_file(count_file);
    unsigned requests = count(labels, "label\n");
    const char *ag = strstr(out, "{\"agones\":1");
    cr_assert_not_null(ag, "%s", out);
    cr_log_info("label requests: %u over 192 ticks; %s", requests, ag);
    cr_expect_eq(keel_test_json_num(ag, "labels_set"), 0, "%s", ag);
    cr_expect_eq(keel_test_json_num(ag, "label_failures"), requests, "%s", ag);
    cr_expect_geq(requests, 2, "the label was not tried again");
    cr_expect_leq(requests, 12, "%u label requests over 192 ticks: no backoff", requests);
    free(labels);
    free(out);
    keel_test_proc_cleanup(&sv);
}

// The image's command line (Dockerfile: ENTRYPOINT and CMD, read by
// tests/deploy_facts.py), its paths and ports made local: the key file, the
// recording, --metrics on loopback, --port 0.
Test(agones, the_images_command_line_runs_against_the_local_sdk_server)
{
    sidecar sd;
    begin(&sd, true);
    if (system("python3 -c 'import yaml' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 with yaml (Debian python3-yaml) is not installed: the Dockerfile is not read");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/deploy_facts.py' command '%s'", KEEL_SOURCE_DIR, KEEL_SOURCE_DIR);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    static char lines[64][256];
    const char *args[64];
    int n = 0;
    while (n < 63 && fgets(lines[n], sizeof lines[n], p)) {
        lines[n][strcspn(lines[n], "\n")] = 0;
        args[n] = lines[n];
        n++;
    }
    cr_assert_eq(pclose(p), 0, "deploy_facts.py command failed");
    cr_assert_gt(n, 1);
    cr_assert_str_eq(args[0], "keel-server");
    args[n] = NULL;
    const char *key = keel_test_dir_file(dir, "backend.key");
    const char *kargs[] = {"keygen", key, NULL};
    keel_test_run_result kr = keel_test_run(keel_test_program_path("keel-token"), kargs, NULL);
    cr_assert_eq(kr.exit_code, 0, "keel-token keygen: %s", kr.err);
    keel_test_run_free(&kr);
    static char record[256];
    snprintf(record, sizeof record, "%s", keel_test_dir_file(dir, "match.krec"));
    for (int i = 1; i + 1 < n; i++) {
        const char *f = args[i];
        if (strcmp(f, "--key") == 0)
            args[++i] = key;
        else if (strcmp(f, "--record") == 0)
            args[++i] = record;
        else if (strcmp(f, "--metrics") == 0)
            args[++i] = "127.0.0.1:0";
        else if (strcmp(f, "--port") == 0)
            args[++i] = "0";
    }
    cr_log_info("the image's command line, made local:");
    for (int i = 0; i < n; i++)
        cr_log_info("  %s", args[i]);
    keel_test_proc sv;
    keel_test_proc_start(&sv, "keel-server", args + 1);
    cr_assert(keel_test_wait_text(sv.out, "{\"event\":\"agones_ready\"", 60000), "never Ready");
    char *o = keel_test_read_file(sv.out);
    unsigned mport = (unsigned)keel_test_json_num(o, "metrics_port");
    free(o);
    cr_expect_eq(http("GET", mport, "/readyz", NULL), 200);
    kill(sv.pid, SIGTERM); // as Kubernetes stops a pod (STOPSIGNAL SIGTERM)
    char *out = server_end(&sv);
    char *log = sidecar_stop(&sd);
    char *err = keel_test_read_file(sv.err);
    // secure, its public address from the GameServer (sdk-server's local
    // one: 127.0.0.1, port 7777), drained, the recording finished
    cr_expect(strstr(err, "keel-server: secure (connect tokens required, key ") != NULL, "%s", err);
    cr_expect(strstr(err, "public address 127.0.0.1:7777") != NULL, "%s", err);
    cr_expect(strstr(err, "server shutting down (SIGTERM)") != NULL, "%s", err);
    cr_expect(strstr(err, "keel-server: recorded ") != NULL, "%s", err);
    const char *ag = strstr(out, "{\"agones\":1");
    cr_assert_not_null(ag, "%s", out);
    cr_expect(strstr(ag, "\"shutdown_sent\":false") != NULL, "a signal needs no shutdown call: %s", ag);
    cr_expect(strstr(log, "Ready request has been received!") != NULL, "%s", log);
    free(err);
    free(out);
    free(log);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&sd.p);
}

// Needs neither sdk-server nor libcurl: the flags are checked first.
Test(agones, bad_fleet_flags_are_usage_errors)
{
    static const char *const bad[][6] = {
        {"--insecure", "--match-seconds", "x", NULL},
        {"--insecure", "--empty-seconds", NULL},
        {"--insecure", "--join-seconds", "-1", NULL},
        {"--insecure", "--test-stall-seconds", "3", NULL},
        {"--insecure", "--test-stall-after-ticks", "10", NULL},
        {"--insecure", "--test-stall-after-ticks", "10", "--test-stall-seconds", "61", NULL},
        {"--key", "k", "--public", "agones", NULL},
        {"--virtual-bots", "2", "--agones", NULL},
        {"--virtual-bots", "2", "--join-seconds", "5", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        keel_test_run_result r = keel_test_run(keel_test_program_path("keel-server"), bad[i], NULL);
        cr_expect_eq(r.exit_code, 2, "case %zu: exit %d: %s", i, r.exit_code, r.err);
        cr_expect(strstr(r.err, "--help lists the options") != NULL, "case %zu: %s", i, r.err);
        keel_test_run_free(&r);
    }
}
