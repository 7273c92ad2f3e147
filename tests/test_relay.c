// keel tests: keel-relay, the link conditioner. MIT licence, see LICENSE.
//
// Two parts:
//  - the shaping module (tools/keel-relay/shape.c, compiled into this test)
//    on virtual time: rates, determinism per seed, burst gaps, the bandwidth
//    cap;
//  - the real program, found beside this test executable (as test_keelsim
//    finds keel-sim), in front of a small UDP echo server run by the test on
//    127.0.0.1 with ephemeral ports. Only lower bounds on time are checked
//    (a packet cannot arrive before its latency); never upper bounds.
#define _POSIX_C_SOURCE 200809L // fork, kill, pipe, nanosleep under -std=c11

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "test_support.h"

// The module under test, compiled in (the test links only the test support
// library, and shape.c needs nothing else).
#include "../tools/keel-relay/shape.c"

// ---- the shaping module on virtual time -----------------------------------------

#define MS 1000 // microseconds

typedef struct run_counts {
    uint64_t delivered, random, burst, bandwidth, dup, reorder;
    uint64_t hash; ///< of every verdict field, in order
} run_counts;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

// n packets of `size` bytes every `gap_us`, from time 0.
static run_counts run_virtual(uint64_t seed, const shape_params *p, uint32_t n, int64_t gap_us, uint32_t size)
{
    shape_state s;
    shape_init(&s, seed);
    run_counts c = {0};
    for (uint32_t i = 0; i < n; i++) {
        shape_verdict v;
        shape_decide(&s, p, (int64_t)i * gap_us, size, &v);
        c.delivered += v.fate == SHAPE_DELIVER;
        c.random += v.fate == SHAPE_DROP_RANDOM;
        c.burst += v.fate == SHAPE_DROP_BURST;
        c.bandwidth += v.fate == SHAPE_DROP_BANDWIDTH;
        c.dup += v.duplicated;
        c.reorder += v.reordered;
        c.hash = mix(c.hash, (uint64_t)v.fate);
        c.hash = mix(c.hash, (uint64_t)v.copies);
        c.hash = mix(c.hash, (uint64_t)v.at_us[0]);
        c.hash = mix(c.hash, (uint64_t)v.at_us[1]);
    }
    return c;
}

// |count - n p| within 5 standard deviations of a binomial.
static void expect_binomial(uint64_t count, uint64_t n, double p, const char *what)
{
    double mean = (double)n * p;
    double sd = sqrt((double)n * p * (1.0 - p));
    cr_expect(fabs((double)count - mean) <= 5.0 * sd + 1.0, "%s: %llu of %llu, expected %.1f +- %.1f", what,
              (unsigned long long)count, (unsigned long long)n, mean, 5.0 * sd);
}

Test(relay_shape, rates_match_and_repeat_per_seed)
{
    shape_params p = shape_params_default();
    p.latency_us = 75 * MS;
    p.jitter_us = 20 * MS;
    p.loss_ppm = 50000;    // 5%
    p.dup_ppm = 10000;     // 1%
    p.reorder_ppm = 10000; // 1%
    const uint32_t n = 200000;
    run_counts a = run_virtual(42, &p, n, 16 * MS, 100);
    run_counts b = run_virtual(42, &p, n, 16 * MS, 100);
    run_counts c = run_virtual(43, &p, n, 16 * MS, 100);
    cr_assert_eq(a.hash, b.hash, "the same seed gave different verdicts");
    cr_assert_eq(a.random, b.random);
    cr_assert_eq(a.dup, b.dup);
    cr_assert_neq(a.hash, c.hash, "another seed gave the same verdicts");
    cr_expect_eq(a.burst + a.bandwidth, 0);
    cr_expect_eq(a.delivered + a.random, n);
    expect_binomial(a.random, n, 0.05, "loss");
    // duplication and reordering apply to the delivered packets
    expect_binomial(a.dup, a.delivered, 0.01, "duplication");
    expect_binomial(a.reorder, a.delivered, 0.01, "reordering");
    expect_binomial(c.random, n, 0.05, "loss, seed 43");
}

Test(relay_shape, delays_latency_plus_uniform_jitter)
{
    shape_params p = shape_params_default();
    p.latency_us = 75 * MS;
    p.jitter_us = 20 * MS;
    p.dup_ppm = 100000;
    p.reorder_ppm = 100000;
    p.reorder_delay_us = 30 * MS;
    shape_state s;
    shape_init(&s, 7);
    const uint32_t n = 100000;
    double sum = 0;
    uint64_t m = 0, low = 0, high = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t now = (int64_t)i * 10 * MS;
        shape_verdict v;
        shape_decide(&s, &p, now, 50, &v);
        cr_assert_eq(v.fate, SHAPE_DELIVER);
        for (int k = 0; k < v.copies; k++) {
            int64_t d = v.at_us[k] - now;
            if (k == 0 && v.reordered)
                d -= p.reorder_delay_us;
            cr_assert(d >= p.latency_us && d <= p.latency_us + p.jitter_us,
                      "delay %lld outside [latency, latency + jitter]", (long long)d);
            sum += (double)d;
            m++;
            low += d < p.latency_us + p.jitter_us / 10;
            high += d > p.latency_us + p.jitter_us * 9 / 10;
        }
    }
    double mean = sum / (double)m;
    // uniform in [75, 95] ms: mean 85 ms, sd 5.77 ms; a tenth at each end
    cr_expect(fabs(mean - 85000.0) < 5.0 * 5774.0 / sqrt((double)m), "mean delay %.1f us", mean);
    expect_binomial(low, m, 0.1, "lowest tenth of the jitter range");
    expect_binomial(high, m, 0.1, "highest tenth of the jitter range");
}

// A held-back packet is overtaken: the next packets (10 ms apart, no jitter)
// arrive before it.
Test(relay_shape, reordered_packets_are_overtaken)
{
    shape_params p = shape_params_default();
    p.latency_us = 20 * MS;
    p.reorder_ppm = 50000;
    p.reorder_delay_us = 25 * MS;
    shape_state s;
    shape_init(&s, 3);
    enum { N = 20000 };
    static int64_t at[N];
    static bool held[N];
    for (int i = 0; i < N; i++) {
        shape_verdict v;
        shape_decide(&s, &p, (int64_t)i * 10 * MS, 50, &v);
        at[i] = v.at_us[0];
        held[i] = v.reordered;
    }
    uint64_t held_count = 0;
    for (int i = 0; i + 1 < N; i++) {
        if (!held[i])
            continue;
        held_count++;
        cr_assert(at[i + 1] < at[i] || held[i + 1], "packet %d was held back but not overtaken", i);
    }
    expect_binomial(held_count, N - 1, 0.05, "held back");
}

// The decision for packet i does not depend on the other rates: loss stays
// the same packet for packet when duplication and reordering change.
Test(relay_shape, loss_per_packet_independent_of_other_rates)
{
    shape_params a = shape_params_default(), b;
    a.loss_ppm = 100000;
    b = a;
    b.dup_ppm = 500000;
    b.reorder_ppm = 300000;
    b.jitter_us = 40 * MS;
    shape_state sa, sb;
    shape_init(&sa, 99);
    shape_init(&sb, 99);
    for (uint32_t i = 0; i < 50000; i++) {
        shape_verdict va, vb;
        shape_decide(&sa, &a, (int64_t)i * MS, 40, &va);
        shape_decide(&sb, &b, (int64_t)i * MS, 40, &vb);
        cr_assert_eq(va.fate == SHAPE_DROP_RANDOM, vb.fate == SHAPE_DROP_RANDOM, "packet %u: loss decision changed", i);
    }
}

// Burst gaps drop contiguous runs of exactly the gap length (packets every
// 1 ms, gaps of 250 ms every second on average); two gaps closer than one
// packet interval merge, so a run may be a multiple of 250.
Test(relay_shape, burst_gaps_drop_contiguous_runs)
{
    shape_params p = shape_params_default();
    p.burst_every_us = 1000 * MS;
    p.burst_length_us = 250 * MS;
    const uint32_t n = 120000; // 120 s
    for (uint64_t seed = 1; seed <= 3; seed++) {
        shape_state s;
        shape_init(&s, seed);
        uint32_t run = 0, runs = 0, exact = 0;
        uint64_t dropped = 0;
        for (uint32_t i = 0; i <= n; i++) {
            shape_verdict v;
            bool drop = false;
            if (i < n) {
                shape_decide(&s, &p, (int64_t)i * MS, 60, &v);
                cr_assert(v.fate == SHAPE_DELIVER || v.fate == SHAPE_DROP_BURST);
                drop = v.fate == SHAPE_DROP_BURST;
            }
            if (drop) {
                run++;
                dropped++;
                continue;
            }
            if (run > 0) {
                bool last = i == n; // cut by the end of the run
                if (!last)
                    cr_assert(run % 250 == 0, "seed %llu: a run of %u dropped packets", (unsigned long long)seed, run);
                runs++;
                exact += run == 250;
                run = 0;
            }
        }
        // about one gap per second: 120 expected
        cr_expect(runs >= 90 && runs <= 150, "seed %llu: %u gaps in 120 s", (unsigned long long)seed, runs);
        cr_expect(exact + 3 >= runs, "seed %llu: %u of %u runs are 250 long", (unsigned long long)seed, exact, runs);
        cr_expect(dropped >= n / 5 && dropped <= n * 3 / 10, "seed %llu: %llu of %u dropped", (unsigned long long)seed,
                  (unsigned long long)dropped, n);
    }
}

// Twice the allowed load for ten virtual minutes: the departures never beat
// the token bucket, the link stays busy, waits stay within the queue, the
// order is kept, and the excess is dropped.
Test(relay_shape, bandwidth_cap_holds)
{
    shape_params p = shape_params_default();
    p.latency_us = 10 * MS;
    p.rate_Bps = 10000;
    p.rate_burst = 1500;
    p.queue_bytes = 4000;
    const uint32_t size = 100;
    const uint32_t n = 120000; // one every 5 ms: 20000 bytes per second offered
    shape_state s;
    shape_init(&s, 5);
    int64_t last_depart = -1;
    uint64_t bytes = 0, delivered = 0, dropped = 0;
    int64_t max_wait = 0;
    // departures per whole second, to check every one-second window
    enum { SECONDS = 601 };
    static uint64_t per_second_bytes[SECONDS + 1];
    memset(per_second_bytes, 0, sizeof per_second_bytes);
    for (uint32_t i = 0; i < n; i++) {
        int64_t now = (int64_t)i * 5 * MS;
        shape_verdict v;
        shape_decide(&s, &p, now, size, &v);
        if (v.fate == SHAPE_DROP_BANDWIDTH) {
            dropped++;
            continue;
        }
        cr_assert_eq(v.fate, SHAPE_DELIVER);
        int64_t depart = v.at_us[0] - p.latency_us;
        cr_assert(depart >= last_depart, "packet %u left before the one ahead of it", i);
        last_depart = depart;
        delivered++;
        bytes += size;
        if (v.queued_us > max_wait)
            max_wait = v.queued_us;
        // token bucket: never more than burst + rate * t by time t
        cr_assert((double)bytes <= (double)p.rate_burst + (double)p.rate_Bps * (double)depart / 1e6 + size,
                  "%llu bytes out by %lld us", (unsigned long long)bytes, (long long)depart);
        int64_t sec = depart / 1000000;
        if (sec <= SECONDS)
            per_second_bytes[sec] += size;
    }
    for (int sec = 0; sec < SECONDS; sec++)
        cr_assert(per_second_bytes[sec] <= p.rate_Bps + p.rate_burst, "%llu bytes in second %d",
                  (unsigned long long)per_second_bytes[sec], sec);
    double seconds = (double)n * 5e-3;
    double throughput = (double)bytes / seconds;
    cr_expect(throughput >= 0.99 * (double)p.rate_Bps, "throughput %.1f B/s", throughput);
    cr_expect(dropped >= n * 45 / 100 && dropped <= n * 55 / 100, "%llu of %u dropped", (unsigned long long)dropped, n);
    // a packet that would wait longer than queue / rate is dropped
    cr_expect(max_wait <= (int64_t)p.queue_bytes * 1000000 / (int64_t)p.rate_Bps, "a packet waited %lld us",
              (long long)max_wait);
    cr_expect(max_wait > 0);

    // Below the cap nothing is dropped or delayed.
    run_counts under = run_virtual(5, &(shape_params){.rate_Bps = 10000, .rate_burst = 1500, .queue_bytes = 4000},
                                   20000, 20 * MS, 100);
    cr_expect_eq(under.bandwidth, 0);
    cr_expect_eq(under.delivered, 20000);
}

// ---- the real program -------------------------------------------------------

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_us(int64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static const char *relay_path(void) { return keel_test_program_path("keel-relay"); }

typedef struct proc {
    pid_t pid;
    int out_fd, err_fd; // read ends
    int64_t started_us; // before fork
} proc;

static proc spawn_relay(const char *const *args)
{
    const char *exe = relay_path();
    const char *argv[64];
    int argc = 0;
    argv[argc++] = exe;
    for (int i = 0; args[i]; i++) {
        cr_assert(argc < 63);
        argv[argc++] = args[i];
    }
    argv[argc] = NULL;
    int out[2], err[2];
    cr_assert(pipe(out) == 0 && pipe(err) == 0, "pipe: %s", strerror(errno));
    fflush(NULL);
    proc p;
    p.started_us = mono_us();
    p.pid = fork();
    cr_assert(p.pid >= 0, "fork: %s", strerror(errno));
    if (p.pid == 0) {
        if (dup2(out[1], STDOUT_FILENO) < 0 || dup2(err[1], STDERR_FILENO) < 0)
            _exit(126);
        close(out[0]);
        close(err[0]);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    p.out_fd = out[0];
    p.err_fd = err[0];
    return p;
}

// Waits for the process (killing it after guard_s seconds: a guard against
// hangs, not a speed check); returns its exit code, -1 when killed.
static int wait_relay(proc *p, int guard_s, int64_t *exited_us)
{
    int status = 0;
    int64_t limit = mono_us() + (int64_t)guard_s * 1000000;
    for (;;) {
        pid_t got = waitpid(p->pid, &status, WNOHANG);
        cr_assert(got >= 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (got == p->pid)
            break;
        if (mono_us() > limit) {
            kill(p->pid, SIGKILL);
            while (waitpid(p->pid, &status, 0) < 0)
                cr_assert(errno == EINTR);
            return -1;
        }
        sleep_us(5000);
    }
    if (exited_us)
        *exited_us = mono_us();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Reads the first line of the relay's stdout ({"event":"listen",...}) and
// returns the port (waits at most 10 s).
static uint16_t read_listen_port(proc *p, int64_t *line_us)
{
    char line[512];
    size_t n = 0;
    int64_t limit = mono_us() + 10000000;
    while (n + 1 < sizeof line) {
        struct pollfd pf = {p->out_fd, POLLIN, 0};
        int left = (int)((limit - mono_us()) / 1000);
        cr_assert(left > 0, "keel-relay printed no listen line");
        if (poll(&pf, 1, left) <= 0)
            continue;
        char ch;
        ssize_t k = read(p->out_fd, &ch, 1);
        cr_assert(k == 1, "keel-relay closed stdout before its listen line");
        if (ch == '\n')
            break;
        line[n++] = ch;
    }
    line[n] = '\0';
    *line_us = mono_us();
    const char *port = strstr(line, "\"port\":");
    cr_assert(port != NULL, "no port in '%s'", line);
    return (uint16_t)atoi(port + 7);
}

static bool relay_is_loopback_test(const struct sockaddr_in *a)
{
    return a->sin_family == AF_INET && (ntohl(a->sin_addr.s_addr) >> 24) == 127;
}

static int udp_socket(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    cr_assert(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert(bind(fd, (struct sockaddr *)&a, sizeof a) == 0, "bind: %s", strerror(errno));
    cr_assert(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    if (port)
        *port = ntohs(a.sin_port);
    return fd;
}

// A JSON number field of the final stats line for a direction.
static long long final_stat(const char *out, const char *dir, const char *field)
{
    char want[64];
    snprintf(want, sizeof want, "\"final\":true,\"dir\":\"%s\"", dir);
    const char *line = strstr(out, want);
    cr_assert(line != NULL, "no final stats for %s in:\n%s", dir, out);
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", field);
    const char *f = strstr(line, key);
    const char *eol = strchr(line, '\n');
    cr_assert(f != NULL && (!eol || f < eol), "no %s in the final %s stats", field, dir);
    return atoll(f + strlen(key));
}

enum { MAX_PACKETS = 1000 };

typedef struct exchange {
    int count;
    int64_t sent_us[MAX_PACKETS];
    int64_t rtt_us[MAX_PACKETS]; ///< first echo; -1 when none came back
    int echoes;                  ///< datagrams back at the client (duplicates too)
    bool at_server[MAX_PACKETS]; ///< reached the echo server
    int server_seen;             ///< datagrams at the echo server
    // With step_fd (the relay's stdout, after its listen line): the exchange
    // reads the relay's step event as it comes, and stops sending once
    // after_step packets went after it; it then waits 500 ms for the echoes.
    int step_fd, after_step;
    int64_t step_mono_us; ///< the step's "mono_us"; 0 until seen
    char step_line[512];
    size_t step_len;
} exchange;

// Reads what the relay printed so far; notes the step event's time.
static void watch_step(exchange *x)
{
    struct pollfd pf = {x->step_fd, POLLIN, 0};
    while (x->step_mono_us == 0 && x->step_len + 1 < sizeof x->step_line && poll(&pf, 1, 0) > 0) {
        char ch;
        if (read(x->step_fd, &ch, 1) != 1)
            return;
        if (ch != '\n') {
            x->step_line[x->step_len++] = ch;
            x->step_line[x->step_len] = '\0';
            continue;
        }
        const char *m = strstr(x->step_line, "\"mono_us\":");
        if (strstr(x->step_line, "{\"event\":\"step\"") && m)
            x->step_mono_us = atoll(m + 10);
        else
            x->step_len = 0; // another line
    }
}

// Sends `count` numbered datagrams of 32 bytes through the relay, one every
// `every_us`, while echoing at the server; keeps reading until `end_us`
// (monotonic) has passed, or with x->step_fd as that field says.
static void run_exchange(exchange *x, uint16_t relay_port, int client_fd, int server_fd, int count, int64_t every_us,
                         int64_t end_us)
{
    cr_assert(count <= MAX_PACKETS);
    int step_fd = x->step_fd, after_step = x->after_step;
    memset(x, 0, sizeof *x);
    x->step_fd = step_fd;
    x->after_step = after_step;
    if (step_fd > 0)
        end_us = INT64_MAX;
    x->count = count;
    for (int i = 0; i < count; i++)
        x->rtt_us[i] = -1;
    struct sockaddr_in relay;
    memset(&relay, 0, sizeof relay);
    relay.sin_family = AF_INET;
    relay.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    relay.sin_port = htons(relay_port);
    int64_t t0 = mono_us();
    int next = 0;
    unsigned char buf[2048];
    while (mono_us() < end_us) {
        int64_t now = mono_us();
        while (next < count && now >= t0 + (int64_t)next * every_us) {
            memset(buf, 0, 32);
            memcpy(buf, &next, sizeof next);
            x->sent_us[next] = mono_us();
            ssize_t k = sendto(client_fd, buf, 32, 0, (struct sockaddr *)&relay, sizeof relay);
            cr_assert(k == 32, "send: %s", strerror(errno));
            next++;
            if (step_fd > 0) {
                watch_step(x);
                int after = 0;
                for (int i = 0; x->step_mono_us && i < next; i++)
                    after += x->sent_us[i] > x->step_mono_us;
                if (after >= after_step || next == count) {
                    x->count = count = next; // no more sends
                    end_us = mono_us() + 500000;
                }
            }
        }
        struct pollfd pf[2] = {{client_fd, POLLIN, 0}, {server_fd, POLLIN, 0}};
        poll(pf, 2, 1);
        for (;;) { // echo server
            struct sockaddr_in from;
            socklen_t fl = sizeof from;
            ssize_t k = recvfrom(server_fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
            if (k < 0)
                break;
            int seq;
            memcpy(&seq, buf, sizeof seq);
            if (k == 32 && seq >= 0 && seq < count) {
                x->at_server[seq] = true;
                x->server_seen++;
            }
            sendto(server_fd, buf, (size_t)k, 0, (struct sockaddr *)&from, fl);
        }
        for (;;) { // client
            ssize_t k = recv(client_fd, buf, sizeof buf, 0);
            if (k < 0)
                break;
            int64_t t = mono_us();
            int seq;
            memcpy(&seq, buf, sizeof seq);
            cr_assert(k == 32 && seq >= 0 && seq < next, "a datagram the client did not send");
            x->echoes++;
            if (x->rtt_us[seq] < 0)
                x->rtt_us[seq] = t - x->sent_us[seq];
        }
    }
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int run_simple(const char *const *args, char **out, char **err)
{
    proc p = spawn_relay(args);
    int code = wait_relay(&p, 10, NULL);
    *out = keel_test_read_fd(p.out_fd, NULL);
    *err = keel_test_read_fd(p.err_fd, NULL);
    close(p.out_fd);
    close(p.err_fd);
    return code;
}

Test(relay_program, help_and_bad_command_lines)
{
    char *out, *err;
    cr_assert_eq(run_simple(ARGS("--help"), &out, &err), 0);
    cr_expect(strstr(out, "usage: keel-relay") != NULL);
    cr_expect(strstr(out, "uniform in [0, MS]") != NULL, "--help states the jitter distribution");
    free(out);
    free(err);

    const char *const *bad[] = {
        ARGS("--server", "127.0.0.1:9", "--no-such-flag", "1"),
        ARGS("--latency", "20"), // no --server
        ARGS("--server", "127.0.0.1:9", "--loss", "101"),
        ARGS("--server", "127.0.0.1:9", "--latency", "-5"),
        ARGS("--server", "127.0.0.1"),
        ARGS("--server", "127.0.0.1:9", "--burst-every", "100", "--burst-length", "100"),
        ARGS("--server", "127.0.0.1:9", "--step-at", "1"),
        ARGS("--server", "127.0.0.1:9", "--duration"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(run_simple(bad[i], &out, &err), 2, "case %zu: %s", i, err);
        cr_expect(strstr(err, "keel-relay --help lists the options") != NULL, "case %zu points to --help: %s", i, err);
        free(out);
        free(err);
    }
}

Test(relay_program, refuses_non_loopback_server)
{
    const char *const *cases[] = {
        ARGS("--server", "192.168.1.1:7777"),
        ARGS("--server", "0.0.0.0:7777"),
        ARGS("--server", "8.8.8.8:53", "--duration", "1"),
        ARGS("--server", "127.0.0.1:7777", "--listen", "0.0.0.0:0"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        cr_expect_eq(run_simple(cases[i], &out, &err), 2, "case %zu", i);
        cr_expect(strstr(err, "not a loopback address") != NULL, "case %zu: %s", i, err);
        free(out);
        free(err);
    }
}

// 500 datagrams, 10% loss and 20 ms each way: about 81% come back, none
// faster than 40 ms, and the relay stops by itself at --duration.
Test(relay_program, loss_latency_and_duration)
{
    uint16_t server_port;
    int server_fd = udp_socket(&server_port);
    int client_fd = udp_socket(NULL);
    char server[32];
    snprintf(server, sizeof server, "127.0.0.1:%u", server_port);
    const double duration_s = 1.6;
    proc p = spawn_relay(ARGS("--server", server, "--latency", "20", "--loss", "10", "--seed", "11", "--duration",
                              "1.6", "--stats-json", "0"));
    int64_t line_us;
    uint16_t port = read_listen_port(&p, &line_us);
    exchange *x = calloc(1, sizeof *x);
    cr_assert(x != NULL);
    // 500 packets over 1 s, then wait for the last echoes (0.3 s after the last).
    run_exchange(x, port, client_fd, server_fd, 500, 2000, line_us + 1300000);
    int64_t exited_us;
    int code = wait_relay(&p, 10, &exited_us);
    cr_assert_eq(code, 0, "keel-relay did not exit by itself with status 0");
    cr_expect(exited_us - p.started_us >= (int64_t)(duration_s * 1e6),
              "keel-relay stopped after %lld us, before --duration", (long long)(exited_us - p.started_us));
    char *out = keel_test_read_fd(p.out_fd, NULL);
    char *err = keel_test_read_fd(p.err_fd, NULL);

    int back = 0;
    int64_t min_rtt = INT64_MAX;
    for (int i = 0; i < x->count; i++) {
        if (x->rtt_us[i] < 0)
            continue;
        back++;
        if (x->rtt_us[i] < min_rtt)
            min_rtt = x->rtt_us[i];
    }
    // binomial(500, 0.81): mean 405, sd 8.8
    cr_expect(back >= 360 && back <= 450, "%d of 500 came back", back);
    cr_expect(min_rtt >= 40000, "a round trip took %lld us, less than 2 x 20 ms", (long long)min_rtt);
    cr_expect_eq(x->echoes, back, "no duplication was asked for");
    // the relay's own counts
    cr_expect_eq(final_stat(out, "up", "in"), 500, "%s", out);
    cr_expect_eq(final_stat(out, "up", "in_bytes"), 500 * 32);
    cr_expect_eq(final_stat(out, "up", "out") + final_stat(out, "up", "drop_random"), 500);
    cr_expect_eq(final_stat(out, "up", "out"), x->server_seen);
    cr_expect_eq(final_stat(out, "down", "in"), x->server_seen);
    cr_expect_eq(final_stat(out, "down", "out"), back);
    cr_expect_eq(final_stat(out, "up", "drop_other"), 0, "stderr: %s", err);
    expect_binomial((uint64_t)final_stat(out, "up", "drop_random"), 500, 0.1, "upstream loss");
    free(out);
    free(err);
    free(x);
    close(p.out_fd);
    close(p.err_fd);
    close(server_fd);
    close(client_fd);
}

// The same seed and the same packets lose the same packets in the real
// program too (upstream loss only, so the echo server sees which). That
// another seed loses others is checked on the module alone.
Test(relay_program, same_seed_same_losses)
{
    bool seen[2][MAX_PACKETS];
    int dropped[2];
    const char *seeds[2] = {"21", "21"};
    exchange *x = calloc(1, sizeof *x);
    cr_assert(x != NULL);
    for (int run = 0; run < 2; run++) {
        uint16_t server_port;
        int server_fd = udp_socket(&server_port);
        int client_fd = udp_socket(NULL);
        char server[32];
        snprintf(server, sizeof server, "127.0.0.1:%u", server_port);
        proc p = spawn_relay(ARGS("--server", server, "--loss-up", "20", "--latency", "5", "--seed", seeds[run],
                                  "--duration", "1.3", "--stats-json", "0"));
        int64_t line_us;
        uint16_t port = read_listen_port(&p, &line_us);
        run_exchange(x, port, client_fd, server_fd, 300, 2000, line_us + 1000000);
        cr_assert_eq(wait_relay(&p, 10, NULL), 0);
        memcpy(seen[run], x->at_server, sizeof seen[run]);
        dropped[run] = 300 - x->server_seen;
        char *out = keel_test_read_fd(p.out_fd, NULL);
        cr_expect_eq(final_stat(out, "up", "drop_random"), dropped[run]);
        cr_expect_eq(final_stat(out, "down", "drop_random"), 0);
        free(out);
        close(p.out_fd);
        close(p.err_fd);
        close(server_fd);
        close(client_fd);
    }
    cr_expect(memcmp(seen[0], seen[1], 300 * sizeof(bool)) == 0, "seed 21 twice: different packets lost (%d and %d)",
              dropped[0], dropped[1]);
    expect_binomial((uint64_t)dropped[0], 300, 0.2, "upstream loss");
    free(x);
}

// A round-trip step from 50 to 150 ms: --latency 25, then
// --step-at 0.8 --step-latency 75. Packets sent after the step (by the
// relay's clock, which started after this test forked it and before it printed
// its first line) take at least 150 ms; every packet at least 50 ms.
// The step: every packet the client sends after the moment the relay reports
// it applied the step (its "mono_us", on the clock this test reads) takes
// 75 ms each way; every packet at least the 25 ms before. The client keeps
// sending until 30 packets went after the step, however late the relay
// applies it on a busy machine (bounded by MAX_PACKETS), then stops the relay.
Test(relay_program, latency_step)
{
    uint16_t server_port;
    int server_fd = udp_socket(&server_port);
    int client_fd = udp_socket(NULL);
    char server[32];
    snprintf(server, sizeof server, "127.0.0.1:%u", server_port);
    proc p = spawn_relay(ARGS("--server", server, "--latency", "25", "--step-at", "0.8", "--step-latency", "75",
                              "--duration", "60", "--stats-json", "0"));
    int64_t line_us;
    uint16_t port = read_listen_port(&p, &line_us);
    exchange *x = calloc(1, sizeof *x);
    cr_assert(x != NULL);
    x->step_fd = p.out_fd;
    x->after_step = 30;
    run_exchange(x, port, client_fd, server_fd, MAX_PACKETS, 10000, 0);
    cr_assert(x->step_mono_us > 0, "no step event from keel-relay among %d packets: %s", x->count, x->step_line);
    kill(p.pid, SIGTERM);
    cr_assert_eq(wait_relay(&p, 10, NULL), 0);
    char *out = keel_test_read_fd(p.out_fd, NULL);
    cr_expect(atof(strstr(x->step_line, "\"t\":") + 4) >= 0.8, "%s", x->step_line);
    int after = 0, back = 0;
    for (int i = 0; i < x->count; i++) {
        if (x->rtt_us[i] < 0)
            continue;
        back++;
        cr_expect(x->rtt_us[i] >= 50000, "packet %d: %lld us", i, (long long)x->rtt_us[i]);
        if (x->sent_us[i] > x->step_mono_us) {
            after++;
            cr_expect(x->rtt_us[i] >= 150000, "packet %d, sent %lld us after the step: %lld us", i,
                      (long long)(x->sent_us[i] - x->step_mono_us), (long long)x->rtt_us[i]);
        }
    }
    cr_expect_eq(back, final_stat(out, "down", "out"));
    cr_expect(after >= 1, "no echo of a packet sent after the step");
    free(out);
    free(x);
    close(p.out_fd);
    close(p.err_fd);
    close(server_fd);
    close(client_fd);
}

// --max-clients: a third client address gets nothing through; the first two
// get their own upstream addresses at the server.
Test(relay_program, client_cap)
{
    uint16_t server_port;
    int server_fd = udp_socket(&server_port);
    char server[32];
    snprintf(server, sizeof server, "127.0.0.1:%u", server_port);
    proc p = spawn_relay(ARGS("--server", server, "--max-clients", "2", "--duration", "0.8", "--stats-json", "0"));
    int64_t line_us;
    uint16_t port = read_listen_port(&p, &line_us);
    int clients[3];
    for (int c = 0; c < 3; c++)
        clients[c] = udp_socket(NULL);
    struct sockaddr_in relay;
    memset(&relay, 0, sizeof relay);
    relay.sin_family = AF_INET;
    relay.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    relay.sin_port = htons(port);
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 5; k++) {
            unsigned char b[4] = {(unsigned char)c, (unsigned char)k, 0, 0};
            cr_assert(sendto(clients[c], b, 4, 0, (struct sockaddr *)&relay, sizeof relay) == 4);
        }
        sleep_us(20000); // so the clients reach the relay in this order
    }
    uint16_t from_port[3] = {0};
    int got[3] = {0};
    int64_t end = line_us + 700000;
    while (mono_us() < end) {
        struct pollfd pf = {server_fd, POLLIN, 0};
        poll(&pf, 1, 5);
        unsigned char b[16];
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        while (recvfrom(server_fd, b, sizeof b, 0, (struct sockaddr *)&from, &fl) == 4) {
            cr_assert(b[0] < 3);
            cr_assert(relay_is_loopback_test(&from));
            got[b[0]]++;
            if (!from_port[b[0]])
                from_port[b[0]] = ntohs(from.sin_port);
            cr_expect_eq(from_port[b[0]], ntohs(from.sin_port), "client %d changed address", b[0]);
            fl = sizeof from;
        }
    }
    cr_assert_eq(wait_relay(&p, 10, NULL), 0);
    char *out = keel_test_read_fd(p.out_fd, NULL);
    cr_expect_eq(got[0], 5);
    cr_expect_eq(got[1], 5);
    cr_expect_eq(got[2], 0);
    cr_expect_neq(from_port[0], from_port[1], "two clients share an upstream socket");
    cr_expect_eq(final_stat(out, "up", "clients_refused"), 5);
    cr_expect_eq(final_stat(out, "up", "clients_seen"), 2);
    free(out);
    close(p.out_fd);
    close(p.err_fd);
    for (int c = 0; c < 3; c++)
        close(clients[c]);
    close(server_fd);
}
