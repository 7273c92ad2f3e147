// keel tests: hostile traffic at a real keel-server's port (docs/hostile.md).
// MIT licence, see LICENSE.
//
// A real keel-server process (next to this test in the build folder, found
// through /proc/self/exe) listens on 127.0.0.1 with --port 0 and stops by
// itself after --duration; a real keel-client process plays two bots on it;
// meanwhile this process attacks the server's port, one case after another:
// raw random datagrams, ENet peers that send garbage, inputs before their
// hello, hellos the server must refuse, a joined peer that says hello twice,
// sends commands for far-future ticks, floods commands and sends broken
// inputs, then garbage ENet CONNECT datagrams and a flood of connection
// attempts from 200 source ports.
//
// Every case runs between two of the server's JSON stats lines (--stats-json
// --stats-interval 1: each line holds the counts of its interval), so the
// counters each case moved are known exactly; they are printed as
// "hostile: <case>: ..." on stderr.
//
// Everything is sent to 127.0.0.1 only, every loop is bounded in count and in
// time, and the server and the client end by themselves (--duration,
// --ticks); a guard kills them should they hang, and says so.
//
// The legitimate clients share the server's address quota with the attacker
// (every peer here comes from 127.0.0.1, and the server lets at most 4 peers
// in from one address): two bots leave two slots for the attacker's peers.
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <keel/net_host.h>
#include <keel/net_proto.h>
#include <keel/sim_level.h>
#include <keel/sim_move.h>

#include "../net/src/host_impl.h" // NET_HOST_MAX_MESSAGE
#include "../net/src/proto_internal.h"
#include "test_support.h"

#define RATE 64u
#define DURATION_S 22u // the server's --duration
#define BOTS "2"
#define CLIENT_TICKS (RATE * 16u)             // each bot plays 16 s
#define MAX_MALFORMED 64u                     // sv_default_config().max_malformed_per_second
#define MAX_PER_ADDRESS 4u                    // net_host_default_config().max_peers_per_address
#define ATTACKER_SLOTS (MAX_PER_ADDRESS - 2u) // the two bots hold the rest

// ---- time and randomness -------------------------------------------------------------

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_us(unsigned us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    nanosleep(&ts, NULL);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

// ---- the programs --------------------------------------------------------------------------

// The programs this test started and has not reaped yet: killed when the
// test ends early (a failed assertion), so that nothing outlives it.
static pid_t children[2];

static void kill_children(void)
{
    for (int i = 0; i < 2; i++) {
        if (children[i] > 0) {
            kill(children[i], SIGKILL);
            waitpid(children[i], NULL, 0);
            children[i] = 0;
        }
    }
}

static void forget_child(pid_t pid)
{
    for (int i = 0; i < 2; i++)
        if (children[i] == pid)
            children[i] = 0;
}

// Starts a program with stdout and stderr on the given descriptors.
static pid_t spawn(const char *const *argv, int out_fd, int err_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 2; i++) {
        if (children[i] == 0) {
            children[i] = pid;
            break;
        }
    }
    return pid;
}

// Waits up to timeout_ms for the process; kills it after that. Returns the
// exit status (-1: killed by a signal, -2: it hung and was killed here).
static int wait_exit(pid_t pid, uint64_t timeout_ms)
{
    uint64_t t0 = now_ms();
    for (;;) {
        int status = 0;
        pid_t got = waitpid(pid, &status, WNOHANG);
        cr_assert(got >= 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (got == pid) {
            forget_child(pid);
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        if (now_ms() - t0 > timeout_ms) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            forget_child(pid);
            return -2;
        }
        sleep_us(10000);
    }
}

// ---- the server and its stats lines ---------------------------------------------------------

typedef struct counters {
    uint64_t commands, duplicates, late, out_of_window, rate_limited, malformed, unexpected;
    uint64_t joined, left, dropped_clients, refused, peers_refused;
    double in_wire_bytes; // from the rate and the interval: an estimate
    double seconds;
} counters;

typedef struct server_run {
    pid_t pid;
    int out, err; // read ends of its stdout and stderr (non-blocking)
    char *out_buf;
    size_t out_len, out_cap, out_pos;
    char err_buf[1 << 14];
    size_t err_len;
    uint16_t port;
    counters sum; // over every stats line taken
    double last_t;
    uint32_t lines, clients, tick;
    bool exited;
} server_run;

static void read_some(int fd, char **buf, size_t *len, size_t *cap)
{
    for (;;) {
        if (*cap - *len < 4096) {
            *cap = *cap ? *cap * 2 : 1 << 16;
            *buf = realloc(*buf, *cap + 1);
            cr_assert(*buf != NULL);
        }
        ssize_t k = read(fd, *buf + *len, *cap - *len);
        if (k <= 0)
            break;
        *len += (size_t)k;
    }
    (*buf)[*len] = '\0';
}

static void server_read(server_run *s)
{
    read_some(s->out, &s->out_buf, &s->out_len, &s->out_cap);
    if (s->err_len < sizeof s->err_buf - 1) {
        ssize_t k = read(s->err, s->err_buf + s->err_len, sizeof s->err_buf - 1 - s->err_len);
        if (k > 0)
            s->err_len += (size_t)k;
        s->err_buf[s->err_len] = '\0';
    }
}

static uint64_t json_u64(const char *line, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(line, k);
    cr_assert(p != NULL, "the stats line has no %s: %s", k, line);
    return strtoull(p + strlen(k), NULL, 10);
}

static double json_f(const char *line, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(line, k);
    cr_assert(p != NULL, "the stats line has no %s: %s", k, line);
    return strtod(p + strlen(k), NULL);
}

// Takes every complete stats line that arrived; returns how many.
static uint32_t server_take_lines(server_run *s)
{
    server_read(s);
    uint32_t n = 0;
    for (;;) {
        char *start = s->out_buf ? s->out_buf + s->out_pos : NULL;
        char *nl = start ? strchr(start, '\n') : NULL;
        if (!nl)
            break;
        *nl = '\0';
        cr_assert(start[0] == '{', "not a JSON stats line on the server's stdout: %s", start);
        // the totals at exit, and the ports at start: not intervals
        if (strncmp(start, "{\"summary\":", 11) == 0 || strncmp(start, "{\"listening\":", 13) == 0) {
            s->out_pos = (size_t)(nl + 1 - s->out_buf);
            continue;
        }
        counters *c = &s->sum;
        c->commands += json_u64(start, "commands");
        c->duplicates += json_u64(start, "duplicates");
        c->late += json_u64(start, "late");
        c->out_of_window += json_u64(start, "out_of_window");
        c->rate_limited += json_u64(start, "rate_limited") + json_u64(start, "packets_rate_limited");
        c->malformed += json_u64(start, "malformed");
        c->unexpected += json_u64(start, "unexpected");
        c->joined += json_u64(start, "joined");
        c->left += json_u64(start, "left");
        c->dropped_clients += json_u64(start, "dropped_clients");
        c->refused += json_u64(start, "refused");
        c->peers_refused += json_u64(start, "peers_refused");
        double t = json_f(start, "t");
        c->in_wire_bytes += json_f(start, "in_wire_Bps") * (t - s->last_t);
        c->seconds += t - s->last_t;
        s->last_t = t;
        s->clients = (uint32_t)json_u64(start, "clients");
        s->tick = (uint32_t)json_u64(start, "tick");
        s->lines++;
        s->out_pos = (size_t)(nl + 1 - s->out_buf);
        n++;
    }
    return n;
}

static void server_start(server_run *s)
{
    memset(s, 0, sizeof *s);
    int po[2], pe[2];
    cr_assert(pipe(po) == 0 && pipe(pe) == 0, "pipe: %s", strerror(errno));
    char duration[16];
    snprintf(duration, sizeof duration, "%u", DURATION_S);
    const char *argv[] = {keel_test_program_path("keel-server"),
                          "--bind",
                          "127.0.0.1",
                          "--port",
                          "0",
                          "--insecure",
                          "--rate",
                          "64",
                          "--stats-json",
                          "--stats-interval",
                          "1",
                          "--duration",
                          duration,
                          NULL};
    s->pid = spawn(argv, po[1], pe[1]);
    close(po[1]);
    close(pe[1]);
    s->out = po[0];
    s->err = pe[0];
    fcntl(s->out, F_SETFL, O_NONBLOCK);
    fcntl(s->err, F_SETFL, O_NONBLOCK);
    // With --stats-json the text (the listening line) goes to stderr.
    uint64_t t0 = now_ms();
    const char *at = NULL;
    while (!(at = strstr(s->err_buf, "listening on 127.0.0.1:")) || !strchr(at, '\n')) {
        cr_assert(now_ms() - t0 < 30000, "keel-server did not say where it listens: %s", s->err_buf);
        int status;
        cr_assert(waitpid(s->pid, &status, WNOHANG) == 0, "keel-server exited at start: %s", s->err_buf);
        sleep_us(10000);
        server_read(s);
    }
    unsigned long port = strtoul(at + strlen("listening on 127.0.0.1:"), NULL, 10);
    cr_assert(port > 0 && port < 65536);
    s->port = (uint16_t)port;
}

// ---- attacker peers (net_host_connect) ---------------------------------------------------------

typedef struct peer {
    net_host *h;
    bool connected, disconnected, welcomed, refused;
    net_welcome welcome;
    uint64_t welcome_at_ms;
    net_refuse refuse;
    uint32_t other_control; // control messages that were neither
} peer;

static void peer_poll(peer *p, uint32_t ms)
{
    uint64_t t0 = now_ms();
    do {
        net_event ev;
        while (net_host_service(p->h, &ev, 0) != NET_EVENT_NONE) {
            if (ev.type == NET_EVENT_CONNECT) {
                p->connected = true;
            } else if (ev.type == NET_EVENT_DISCONNECT) {
                p->disconnected = true;
            } else if (ev.type == NET_EVENT_RECEIVE && ev.channel == NET_CHANNEL_CONTROL) {
                if (net_welcome_decode(ev.data, ev.length, &p->welcome)) {
                    p->welcomed = true;
                    p->welcome_at_ms = now_ms();
                } else if (net_refuse_decode(ev.data, ev.length, &p->refuse)) {
                    p->refused = true;
                } else {
                    p->other_control++;
                }
            }
        }
        if (ms)
            sleep_us(1000);
    } while (now_ms() - t0 < ms);
}

static void peer_open(peer *p, uint16_t port)
{
    memset(p, 0, sizeof *p);
    net_host_config cfg = net_host_default_config();
    const char *why = NULL;
    p->h = net_host_connect("127.0.0.1", port, &cfg, &why);
    cr_assert(p->h != NULL, "net_host_connect: %s", why ? why : "?");
    uint64_t t0 = now_ms();
    while (!p->connected && !p->disconnected && now_ms() - t0 < 3000)
        peer_poll(p, 5);
    cr_assert(p->connected, "an attacker peer could not connect (the address quota held by someone?)");
}

static void peer_send(peer *p, net_channel ch, const uint8_t *data, size_t n)
{
    cr_assert(net_host_send(p->h, 0, ch, data, n), "net_host_send refused %zu bytes on channel %d", n, (int)ch);
    net_host_flush(p->h);
}

// Waits (bounded) until the condition holds.
#define PEER_WAIT(p, cond, ms)                   \
    do {                                         \
        uint64_t t0_ = now_ms();                 \
        while (!(cond) && now_ms() - t0_ < (ms)) \
            peer_poll((p), 5);                   \
    } while (0)

// Leaves politely, so that the server frees the slot at once.
static void peer_close(peer *p)
{
    if (!p->h)
        return;
    if (p->connected && !p->disconnected) {
        net_host_disconnect(p->h, 0);
        peer_poll(p, 150);
    }
    net_host_destroy(p->h);
    p->h = NULL;
}

// The tick the server is simulating now, from the welcome (a guess within a
// tick or two on loopback).
static uint32_t server_tick_guess(const peer *p)
{
    return p->welcome.server_tick + 1u + (uint32_t)((now_ms() - p->welcome_at_ms) * RATE / 1000u);
}

// ---- messages -----------------------------------------------------------------------------------

static net_sim_identity the_identity(void)
{
    sim_level level;
    cr_assert(sim_level_builtin(&level) == 0);
    sim_move_settings s = sim_move_default_settings();
    s.tick_rate = (int32_t)RATE;
    s.respawn_depth = SIM_FX_INT(16); // keel-server's default --respawn-depth (KEEL_APP_RESPAWN_DEPTH_M)
    net_sim_identity id = net_identity_make(&s, &level, NULL); // keel-server runs without --platforms
    sim_level_free(&level);
    return id;
}

static size_t hello_bytes(uint8_t *out, size_t cap, uint16_t version, net_sim_identity id)
{
    net_hello h = {version, id, (uint32_t)now_ms()};
    size_t n = net_hello_encode(&h, out, cap);
    cr_assert(n > 0);
    return n;
}

static sim_input random_command(uint32_t tick)
{
    sim_input c;
    memset(&c, 0, sizeof c);
    c.tick = tick;
    c.forward = (int8_t)((int)(rnd() % 255u) - 127);
    c.right = (int8_t)((int)(rnd() % 255u) - 127);
    c.yaw = (sim_angle)rnd();
    c.pitch = (sim_angle)(rnd() % 8000u);
    return c;
}

// A valid input with `count` random commands ending at `newest`.
static size_t input_bytes(uint8_t *out, size_t cap, uint32_t newest, uint32_t count, uint16_t seq)
{
    net_input in;
    memset(&in, 0, sizeof in);
    in.sequence = seq;
    in.client_time_ms = (uint16_t)now_ms();
    in.ack_tick = NET_TICK_NONE;
    in.newest_tick = newest;
    in.count = (uint8_t)count;
    for (uint32_t i = 0; i < count; i++)
        in.commands[i] = random_command(newest - (count - 1u - i));
    size_t n = net_input_encode(&in, out, cap);
    cr_assert(n > 0);
    return n;
}

static bool input_decodes(const uint8_t *d, size_t n)
{
    net_input in;
    return net_input_decode(d, n, &in);
}

// ---- phases: each case between two stats lines ---------------------------------------------------

static counters counters_sub(const counters *a, const counters *b)
{
    counters d;
    d.commands = a->commands - b->commands;
    d.duplicates = a->duplicates - b->duplicates;
    d.late = a->late - b->late;
    d.out_of_window = a->out_of_window - b->out_of_window;
    d.rate_limited = a->rate_limited - b->rate_limited;
    d.malformed = a->malformed - b->malformed;
    d.unexpected = a->unexpected - b->unexpected;
    d.joined = a->joined - b->joined;
    d.left = a->left - b->left;
    d.dropped_clients = a->dropped_clients - b->dropped_clients;
    d.refused = a->refused - b->refused;
    d.peers_refused = a->peers_refused - b->peers_refused;
    d.in_wire_bytes = a->in_wire_bytes - b->in_wire_bytes;
    d.seconds = a->seconds - b->seconds;
    return d;
}

static counters phase_begin(server_run *s)
{
    server_take_lines(s);
    return s->sum;
}

// Ends a case: the server has handled everything the case sent within a few
// milliseconds (loopback); 100 ms later, the next stats line to come covers
// it all, and the next case starts only after that line. `keep` (or NULL) is
// a peer serviced meanwhile.
static counters phase_end(server_run *s, const counters *mark, const char *name, peer *keep)
{
    uint64_t t0 = now_ms();
    while (now_ms() - t0 < 100) {
        if (keep)
            peer_poll(keep, 5);
        else
            sleep_us(5000);
    }
    server_take_lines(s);
    t0 = now_ms();
    while (server_take_lines(s) == 0) {
        cr_assert(now_ms() - t0 < 5000, "no stats line from keel-server for 5 s after case %s: %s", name, s->err_buf);
        if (keep)
            peer_poll(keep, 5);
        else
            sleep_us(5000);
    }
    counters d = counters_sub(&s->sum, mark);
    fprintf(stderr,
            "hostile: %-34s malformed %llu, unexpected %llu, out_of_window %llu, rate_limited %llu, refused %llu, "
            "dropped %llu, peers_refused %llu; commands %llu, duplicates %llu, late %llu; joined %llu, left %llu; "
            "~%.0f wire bytes in over %.1f s\n",
            name, (unsigned long long)d.malformed, (unsigned long long)d.unexpected,
            (unsigned long long)d.out_of_window, (unsigned long long)d.rate_limited, (unsigned long long)d.refused,
            (unsigned long long)d.dropped_clients, (unsigned long long)d.peers_refused, (unsigned long long)d.commands,
            (unsigned long long)d.duplicates, (unsigned long long)d.late, (unsigned long long)d.joined,
            (unsigned long long)d.left, d.in_wire_bytes, d.seconds);
    return d;
}

// Nothing a legitimate client causes, in one case.
static void assert_no_hostile_counts(const counters *d, const char *name)
{
    cr_expect_eq(d->malformed + d->unexpected + d->out_of_window + d->rate_limited + d->refused + d->dropped_clients +
                     d->peers_refused,
                 0, "%s: counters moved", name);
}

// ---- raw UDP ----------------------------------------------------------------------------------------

static int udp_socket(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    cr_assert(fd >= 0, "socket: %s", strerror(errno));
    return fd;
}

static void udp_send(int fd, uint16_t port, const uint8_t *data, size_t n)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); // 127.0.0.1, nothing else
    ssize_t k = sendto(fd, data, n, 0, (const struct sockaddr *)&a, sizeof a);
    cr_assert(k == (ssize_t)n || errno == ENOBUFS || errno == EAGAIN, "sendto: %s", strerror(errno));
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

// An ENet CONNECT datagram (ENet 1.3.17 protocol.h, big-endian, packed):
// header peerID (0x0FFF: no peer yet, plus the flags 0x8000 "a sentTime
// follows" and 0x4000 "compressed") [sentTime], then the command: command
// (2 = CONNECT, 0x80 = acknowledge), channelID, reliableSequenceNumber,
// outgoingPeerID u16, incomingSessionID u8, outgoingSessionID u8, mtu,
// windowSize, channelCount, incomingBandwidth, outgoingBandwidth,
// packetThrottleInterval, packetThrottleAcceleration,
// packetThrottleDeceleration, connectID, data (u32 each): 48 bytes. Every
// field is random except those given; `cut` (when not 0) truncates it.
#define ENET_FLAG_COMPRESSED 0x4000u
#define ENET_FLAG_SENT_TIME 0x8000u
static size_t enet_connect_bytes(uint8_t *out, uint32_t flags, uint32_t channel_count, size_t cut)
{
    size_t n = 0;
    put16(out, 0x0FFFu | flags);
    n = 2;
    if (flags & ENET_FLAG_SENT_TIME) {
        put16(out + n, rnd());
        n += 2;
    }
    out[n++] = 0x80 | 2;
    out[n++] = 0xFF;
    put16(out + n, rnd());
    n += 2;
    put16(out + n, rnd());
    n += 2;
    out[n++] = (uint8_t)rnd();
    out[n++] = (uint8_t)rnd();
    for (int i = 0; i < 10; i++, n += 4)
        put32(out + n, i == 2 ? channel_count : rnd());
    return cut && cut < n ? cut : n;
}

// ---- the legitimate client's summary ------------------------------------------------------------------

// A number after `key` in the totals (after "seconds", where keel-client puts them).
static uint64_t client_total(const char *summary, const char *key)
{
    const char *tot = strstr(summary, "\"seconds\":");
    cr_assert(tot != NULL, "keel-client printed no summary: %s", summary);
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(tot, k);
    cr_assert(p != NULL, "keel-client's totals have no %s: %s", k, summary);
    return strtoull(p + strlen(k), NULL, 10);
}

static char *slurp_file(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    cr_assert(n >= 0);
    char *buf = calloc(1, (size_t)n + 1);
    cr_assert(buf != NULL);
    rewind(f);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    return buf;
}

// ---- the test --------------------------------------------------------------------------------------------

Test(hostile, a_real_server_keeps_ticking_and_its_clients_undisturbed_under_hostile_traffic, .timeout = 120,
     .fini = kill_children)
{
    const uint64_t test_t0 = now_ms();
    signal(SIGPIPE, SIG_IGN);
    const net_sim_identity id = the_identity();
    static uint8_t buf[NET_HOST_MAX_MESSAGE];
    uint8_t msg[1500];

    server_run sv;
    server_start(&sv);
    fprintf(stderr, "hostile: keel-server on 127.0.0.1:%u (started in %llu ms)\n", sv.port,
            (unsigned long long)(now_ms() - test_t0));

    // The legitimate clients: two bots in a keel-client process.
    FILE *cl_out = tmpfile(), *cl_err = tmpfile();
    cr_assert(cl_out && cl_err);
    char port_s[16], ticks_s[16];
    snprintf(port_s, sizeof port_s, "%u", sv.port);
    snprintf(ticks_s, sizeof ticks_s, "%u", CLIENT_TICKS);
    const char *cl_argv[] = {keel_test_program_path("keel-client"),
                             "--server",
                             "127.0.0.1",
                             "--port",
                             port_s,
                             "--bots",
                             BOTS,
                             "--bot",
                             "random",
                             "--ticks",
                             ticks_s,
                             "--rate",
                             "64",
                             "--connect-timeout",
                             "20",
                             NULL};
    pid_t client = spawn(cl_argv, fileno(cl_out), fileno(cl_err));

    // Wait until both bots have joined (bounded).
    {
        uint64_t t0 = now_ms();
        while (sv.clients < 2) {
            cr_assert(now_ms() - t0 < 20000, "the two bots did not join within 20 s: %s", sv.err_buf);
            int status;
            cr_assert(waitpid(client, &status, WNOHANG) == 0, "keel-client exited before playing");
            sleep_us(20000);
            server_take_lines(&sv);
        }
    }
    const uint64_t attack_t0 = now_ms();
    counters mark;
    counters d;

    // 1. Raw random datagrams from four source ports: ENet drops them (no
    // peer matches their header). Datagrams whose header says "no peer yet"
    // (peer id 0x0FFF) are left to case 11, so that this case leaves nothing
    // behind.
    mark = phase_begin(&sv);
    {
        int fds[4];
        for (int i = 0; i < 4; i++)
            fds[i] = udp_socket();
        uint32_t sent = 0;
        uint64_t t0 = now_ms();
        for (uint32_t i = 0; i < 3000 && now_ms() - t0 < 3000; i++) {
            size_t n = i < 8 ? i : 1 + rnd() % 1400u;
            for (size_t k = 0; k < n; k++)
                msg[k] = (uint8_t)rnd();
            if (n >= 2 && (((uint32_t)msg[0] << 8 | msg[1]) & 0x0FFFu) == 0x0FFFu)
                msg[1] ^= 1;
            udp_send(fds[i % 4], sv.port, msg, n);
            sent++;
            if (i % 8 == 7)
                sleep_us(1000);
        }
        for (int i = 0; i < 4; i++)
            close(fds[i]);
        d = phase_end(&sv, &mark, "1 raw random datagrams", NULL);
        fprintf(stderr, "hostile:   (%u datagrams sent)\n", sent);
        assert_no_hostile_counts(&d, "raw random datagrams");
        cr_expect_gt(d.in_wire_bytes, 100000.0, "the server's socket saw the datagrams");
    }

    // 2. A connected peer that never says hello sends garbage, truncated and
    // oversized messages on every channel: each one malformed (counted; a peer
    // without a client is not dropped, it holds nothing but an ENet slot).
    // Input-typed messages from it are case 3.
    mark = phase_begin(&sv);
    {
        peer p;
        peer_open(&p, sv.port);
        uint32_t reliable = 0, unreliable = 0;
        for (uint32_t i = 0; i < 20; i++) { // control: random garbage, types other than hello and input
            size_t n = 1 + rnd() % 200u;
            for (size_t k = 0; k < n; k++)
                msg[k] = (uint8_t)rnd();
            uint8_t type = (uint8_t)(i % 16u);
            if (type == NET_MSG_HELLO || type == NET_MSG_INPUT)
                type = 0;
            msg[0] = (uint8_t)((msg[0] & 0xF0u) | type);
            peer_send(&p, NET_CHANNEL_CONTROL, msg, n);
            reliable++;
        }
        // truncated server messages sent back at it
        net_welcome w = {7, 1000, RATE, 2, 0};
        size_t wn = net_welcome_encode(&w, msg, sizeof msg);
        cr_assert(wn > 0);
        for (size_t cut = 1; cut < wn; cut += 3) {
            peer_send(&p, NET_CHANNEL_CONTROL, msg, cut);
            reliable++;
        }
        // oversized: the largest message a host takes, and one of 20000 bytes
        for (size_t k = 0; k < sizeof buf; k++)
            buf[k] = (uint8_t)rnd();
        buf[0] = (uint8_t)((buf[0] & 0xF0u) | NET_MSG_SNAPSHOT);
        peer_send(&p, NET_CHANNEL_CONTROL, buf, sizeof buf);
        peer_send(&p, NET_CHANNEL_CONTROL, buf, 20000);
        reliable += 2;
        // unreliable channels: garbage, full-size garbage, a snapshot-typed
        // message on the input channel, anything on the snapshot channel
        for (uint32_t i = 0; i < 30; i++) {
            size_t n = i % 3 == 0 ? NET_MTU : 1 + rnd() % 300u;
            for (size_t k = 0; k < n; k++)
                msg[k] = (uint8_t)rnd();
            uint8_t type = (uint8_t)(i % 2 ? NET_MSG_SNAPSHOT : NET_MSG_FULL);
            msg[0] = (uint8_t)((msg[0] & 0xF0u) | type);
            peer_send(&p, i % 2 ? NET_CHANNEL_INPUT : NET_CHANNEL_SNAPSHOT, msg, n);
            unreliable++;
            peer_poll(&p, 1);
        }
        peer_poll(&p, 100);
        cr_expect(!p.disconnected, "a peer without a client is not dropped for garbage");
        cr_expect(!p.welcomed && !p.refused);
        peer_close(&p);
        d = phase_end(&sv, &mark, "2 garbage from a peer, no hello", NULL);
        fprintf(stderr, "hostile:   (%u reliable and %u unreliable messages sent)\n", reliable, unreliable);
        cr_expect_geq(d.malformed, reliable, "every reliable garbage message is counted malformed");
        cr_expect_leq(d.malformed, reliable + unreliable);
        cr_expect_geq(d.malformed, reliable + unreliable * 9 / 10, "unreliable garbage counted too (loopback)");
        cr_expect_eq(d.unexpected + d.refused + d.dropped_clients + d.joined + d.out_of_window, 0);
    }

    // 3. Inputs before hello (valid ones, truncated ones): unexpected. The
    // server does not decode them; a peer without a client has no commands.
    mark = phase_begin(&sv);
    {
        peer p;
        peer_open(&p, sv.port);
        uint32_t sent = 0;
        for (uint32_t i = 0; i < 40; i++) {
            size_t n = input_bytes(msg, sizeof msg, 100u + i, 1u + i % 32u, (uint16_t)i);
            if (i % 4 == 3)
                n = n / 2 ? n / 2 : 1;
            peer_send(&p, NET_CHANNEL_INPUT, msg, n);
            sent++;
            peer_poll(&p, 1);
        }
        peer_poll(&p, 50);
        cr_expect(!p.disconnected && !p.welcomed && !p.refused);
        peer_close(&p);
        d = phase_end(&sv, &mark, "3 inputs before hello", NULL);
        cr_expect_leq(d.unexpected, sent);
        cr_expect_geq(d.unexpected, sent * 9 / 10, "inputs before hello are unexpected (%u sent)", sent);
        cr_expect_eq(d.malformed + d.refused + d.dropped_clients + d.joined + d.out_of_window, 0);
    }

    // 4. Hellos the server must refuse, each with a reason on the control
    // channel, then a disconnect: another protocol version, another level
    // digest, another tick rate, a truncated hello, another scene digest (a
    // client with --platforms: this server has none), and a version 1 hello
    // (no scene digest: it does not decode, but says its version).
    mark = phase_begin(&sv);
    {
        struct {
            const char *what;
            uint8_t code;
            const char *reason;
        } cases[] = {
            {"protocol version", NET_REFUSE_PROTOCOL, "protocol version differs"},
            {"level digest", NET_REFUSE_IDENTITY, "level differs"},
            {"tick rate", NET_REFUSE_IDENTITY, "tick rate differs"},
            {"truncated hello", NET_REFUSE_BAD_HELLO, "malformed hello"},
            {"scene digest", NET_REFUSE_IDENTITY,
             "platforms or water differ (server and client must both use "
             "--platforms or neither)"},
            {"version 1 hello", NET_REFUSE_PROTOCOL, "protocol version differs"},
        };
        for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            peer p;
            peer_open(&p, sv.port);
            net_sim_identity other = id;
            uint16_t version = NET_PROTOCOL_VERSION;
            if (i == 0)
                version = NET_PROTOCOL_VERSION + 1u;
            if (i == 1)
                other.level_digest ^= 1u;
            if (i == 2)
                other.tick_rate = (uint16_t)(RATE * 2u);
            if (i == 4)
                other.scene_digest ^= 1u;
            size_t n = hello_bytes(msg, sizeof msg, version, other);
            if (i == 3)
                n = 11;
            if (i == 5) { // version 1's layout: the identity without the scene digest
                net_bit_writer w;
                net_bw_init(&w, msg, sizeof msg);
                net_bw_u(&w, NET_MSG_HELLO, 4);
                net_bw_u(&w, 1, 16);
                net_bw_u(&w, id.behaviour_version, 32);
                net_bw_u64(&w, id.settings_digest);
                net_bw_u64(&w, id.level_digest);
                net_bw_u(&w, id.tick_rate, 10);
                net_bw_u(&w, (uint32_t)now_ms(), 32);
                n = net_bw_finish(&w);
                cr_assert_eq(n, 28u);
            }
            peer_send(&p, NET_CHANNEL_CONTROL, msg, n);
            PEER_WAIT(&p, p.disconnected, 3000);
            cr_expect(p.refused, "%s: no refusal", cases[i].what);
            cr_expect(p.disconnected, "%s: not disconnected after the refusal", cases[i].what);
            cr_expect(!p.welcomed);
            if (p.refused) {
                cr_expect_eq(p.refuse.code, cases[i].code, "%s: refusal code %u", cases[i].what, p.refuse.code);
                cr_expect(strstr(p.refuse.reason, cases[i].reason) != NULL, "%s: reason '%s'", cases[i].what,
                          p.refuse.reason);
                fprintf(stderr, "hostile:   %s: refused, code %u, \"%s\"\n", cases[i].what, p.refuse.code,
                        p.refuse.reason);
            }
            peer_close(&p);
        }
        d = phase_end(&sv, &mark, "4 hellos refused", NULL);
        cr_expect_eq(d.refused, 6);
        cr_expect_eq(d.malformed, 1, "the truncated hello is malformed too");
        cr_expect_eq(d.joined + d.dropped_clients + d.unexpected, 0);
    }

    // 5..8: one attacker that joins properly, then misbehaves.
    peer j;
    peer_open(&j, sv.port);
    mark = phase_begin(&sv);
    {
        // 5. An input right behind the hello (before the join: unexpected),
        // then, once welcomed, a second hello (unexpected; no refusal, no drop).
        // One flush, so one datagram, in this order: an input (no client
        // yet: unexpected), the hello, another input (the client exists but
        // joins at the next tick: unexpected, unless that tick ran between
        // the two, when it is an old command: a duplicate).
        uint8_t in1[NET_MTU], in2[NET_MTU];
        size_t n1 = input_bytes(in1, sizeof in1, 50, 4, 0);
        size_t n2 = input_bytes(in2, sizeof in2, 60, 4, 1);
        size_t n = hello_bytes(msg, sizeof msg, NET_PROTOCOL_VERSION, id);
        cr_assert(net_host_send(j.h, 0, NET_CHANNEL_INPUT, in1, n1));
        cr_assert(net_host_send(j.h, 0, NET_CHANNEL_CONTROL, msg, n));
        cr_assert(net_host_send(j.h, 0, NET_CHANNEL_INPUT, in2, n2));
        net_host_flush(j.h);
        PEER_WAIT(&j, j.welcomed || j.disconnected, 3000);
        cr_assert(j.welcomed, "the attacker's proper hello was not welcomed");
        n = hello_bytes(msg, sizeof msg, NET_PROTOCOL_VERSION, id);
        peer_send(&j, NET_CHANNEL_CONTROL, msg, n);
        peer_poll(&j, 100);
        cr_expect(!j.disconnected && !j.refused, "a second hello is ignored, not answered");
        d = phase_end(&sv, &mark, "5 input before join, second hello", &j);
        cr_expect_geq(d.unexpected, 2);
        cr_expect_leq(d.unexpected, 3);
        cr_expect_eq(d.joined, 1);
        cr_expect_eq(d.malformed + d.refused + d.dropped_clients, 0);
    }

    // 6. Commands for far-future ticks: beyond server tick + 32, each one
    // out of window (32 commands per packet; half of them end at the largest
    // tick there is).
    mark = phase_begin(&sv);
    {
        uint32_t packets = 0;
        for (uint32_t i = 0; i < 20; i++) {
            uint32_t newest = i % 2 ? NET_TICK_NONE - 1u : server_tick_guess(&j) + 200u + i;
            size_t n = input_bytes(msg, sizeof msg, newest, NET_MAX_INPUT_COMMANDS, (uint16_t)(1000u + i));
            peer_send(&j, NET_CHANNEL_INPUT, msg, n);
            packets++;
            peer_poll(&j, 2);
        }
        peer_poll(&j, 50);
        cr_expect(!j.disconnected);
        d = phase_end(&sv, &mark, "6 far-future commands", &j);
        uint64_t cmds = (uint64_t)packets * NET_MAX_INPUT_COMMANDS;
        cr_expect_leq(d.out_of_window, cmds);
        cr_expect_geq(d.out_of_window, cmds * 9 / 10, "far-future commands are out of window (%llu sent)",
                      (unsigned long long)cmds);
        cr_expect_eq(d.malformed + d.unexpected + d.refused + d.dropped_clients, 0);
    }

    // 7. A command flood: 32 commands per packet, about 4000 packets a
    // second for one second, each command new in content. The server keeps
    // one command per tick and only within its window (the next 33 ticks),
    // so whatever the flood, a client gets at most one tick's worth per tick
    // plus the window stored (about rate + 33 a second, which is below the
    // rate limit of 2 x rate + 32: the limit never fires and the flood shows
    // up as duplicates).
    mark = phase_begin(&sv);
    uint64_t flood_commands = 0;
    {
        uint64_t t0 = now_ms();
        for (uint32_t i = 0; i < 4000 && now_ms() - t0 < 1500; i++) {
            uint32_t newest = server_tick_guess(&j) + 28u;
            size_t n = input_bytes(msg, sizeof msg, newest, NET_MAX_INPUT_COMMANDS, (uint16_t)(2000u + i));
            peer_send(&j, NET_CHANNEL_INPUT, msg, n);
            flood_commands += NET_MAX_INPUT_COMMANDS;
            if (i % 4 == 3)
                peer_poll(&j, 1);
        }
        peer_poll(&j, 50);
        cr_expect(!j.disconnected, "the flooding attacker is not disconnected (its commands are simply not kept)");
        d = phase_end(&sv, &mark, "7 command flood", &j);
        fprintf(stderr, "hostile:   (%llu commands sent)\n", (unsigned long long)flood_commands);
        // Beyond 4 x the tick rate in packets a second the server drops the
        // packets unread (rate_limited); what it reads shows as duplicates.
        cr_expect_gt(d.rate_limited, 0, "the flood was not rate limited");
        // Three clients' worth at most: the two bots and the attacker, one
        // command per tick each, plus one window.
        double bound = 3.0 * (double)RATE * d.seconds + 3.0 * (NET_MAX_SNAPSHOT_TICKS + 1);
        cr_expect_leq((double)d.commands, bound, "kept commands %llu: above one per tick per client",
                      (unsigned long long)d.commands);
        cr_expect_eq(d.malformed + d.unexpected + d.refused + d.dropped_clients, 0);
    }

    // 8. Broken inputs from the joined attacker, fewer than the malformed
    // limit: single bit flips of a valid input that the decoder refuses,
    // truncations, a trailing byte, an input padded to NET_MTU with garbage,
    // bad field values written without the encoder's checks, and valid inputs
    // and hellos on the wrong channel. Each one malformed; the attacker stays.
    mark = phase_begin(&sv);
    {
        uint32_t reliable = 0, unreliable = 0;
        uint8_t good[NET_MTU];
        uint32_t newest = server_tick_guess(&j) + 5u;
        size_t gn = input_bytes(good, sizeof good, newest, 6, 3000);
        // bit flips the decoder refuses (the decoder is the judge: a flip can
        // also make another valid input)
        uint32_t flips = 0;
        for (size_t bit = 0; bit < gn * 8 && flips < 16; bit += 5) {
            memcpy(msg, good, gn);
            msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            if (input_decodes(msg, gn))
                continue;
            peer_send(&j, NET_CHANNEL_INPUT, msg, gn);
            flips++;
            unreliable++;
            peer_poll(&j, 1);
        }
        // truncations and a trailing byte
        size_t cuts[] = {1, 2, gn / 2, gn - 1};
        for (unsigned i = 0; i < 4; i++) {
            cr_assert(!input_decodes(good, cuts[i]));
            peer_send(&j, NET_CHANNEL_INPUT, good, cuts[i]);
            unreliable++;
        }
        memcpy(msg, good, gn);
        msg[gn] = 0;
        cr_assert(!input_decodes(msg, gn + 1));
        peer_send(&j, NET_CHANNEL_INPUT, msg, gn + 1);
        unreliable++;
        // a valid header and commands, then garbage up to NET_MTU
        memcpy(msg, good, gn);
        for (size_t k = gn; k < NET_MTU; k++)
            msg[k] = (uint8_t)rnd();
        cr_assert(!input_decodes(msg, NET_MTU));
        peer_send(&j, NET_CHANNEL_INPUT, msg, NET_MTU);
        unreliable++;
        // bad values through the unchecked writer
        for (int v = 0; v < 3; v++) {
            net_input in;
            memset(&in, 0, sizeof in);
            in.ack_tick = NET_TICK_NONE;
            in.newest_tick = newest;
            in.count = 4;
            for (uint32_t i = 0; i < 4; i++)
                in.commands[i] = random_command(newest - 3u + i);
            if (v == 0)
                in.newest_tick = NET_TICK_NONE; // "none" is never a tick
            if (v == 1)
                in.newest_tick = 1; // its oldest command would be at tick -2
            size_t n = net_input_write(&in, msg, sizeof msg);
            if (v == 2) {
                // one command moving forward at -128, outside -127..127 (the
                // command writer refuses it, so bit by bit, as in protocol.md)
                net_bit_writer w;
                net_bw_init(&w, msg, sizeof msg);
                net_bw_u(&w, NET_MSG_INPUT, NET_TYPE_BITS);
                net_bw_u(&w, 7, 16);                   // sequence
                net_bw_u(&w, 0, 16);                   // client_time_ms
                net_bw_u(&w, newest, 32);              // newest_tick
                net_bw_u(&w, 1, NET_INPUT_COUNT_BITS); // count
                net_bw_bool(&w, true);                 // ack: none
                net_bw_bool(&w, false);                // nothing held
                net_bw_bool(&w, true);                 // changed
                net_bw_bool(&w, true);                 // axes
                net_bw_u(&w, 1, 4);                    // mask: forward
                net_bw_s(&w, -128, 8);
                net_bw_bool(&w, false); // yaw
                net_bw_bool(&w, false); // pitch
                n = net_bw_finish(&w);
            }
            cr_assert(n > 0);
            cr_assert(!input_decodes(msg, n), "bad value %d decodes", v);
            peer_send(&j, NET_CHANNEL_INPUT, msg, n);
            unreliable++;
        }
        // valid messages on the wrong channel
        peer_send(&j, NET_CHANNEL_CONTROL, good, gn);
        peer_send(&j, NET_CHANNEL_SNAPSHOT, good, gn);
        size_t hn = hello_bytes(msg, sizeof msg, NET_PROTOCOL_VERSION, id);
        peer_send(&j, NET_CHANNEL_INPUT, msg, hn);
        reliable += 1;
        unreliable += 2;
        cr_assert_lt(reliable + unreliable, MAX_MALFORMED, "case 8 must stay below the malformed limit");
        peer_poll(&j, 100);
        cr_expect(!j.disconnected, "fewer malformed messages than the limit: not dropped");
        d = phase_end(&sv, &mark, "8 broken inputs, wrong channels", &j);
        fprintf(stderr, "hostile:   (%u reliable and %u unreliable messages sent)\n", reliable, unreliable);
        cr_expect_leq(d.malformed, reliable + unreliable);
        // The server's input-packet window is one second of its own clock:
        // on a starved machine this burst can share a window with the
        // packets before it, and the excess is cut off before it is decoded
        // (rate_limited) instead of being found malformed.
        cr_expect_gt(d.malformed, 0);
        cr_expect_geq(d.malformed + d.rate_limited, reliable + unreliable * 9 / 10);
        cr_expect_eq(d.dropped_clients + d.refused + d.unexpected, 0);
    }
    peer_close(&j);

    // 9. A joined attacker that keeps sending malformed messages (reliable,
    // so every one arrives): dropped at the limit's first excess, and nothing
    // it sends after counts.
    mark = phase_begin(&sv);
    {
        peer p;
        peer_open(&p, sv.port);
        size_t n = hello_bytes(msg, sizeof msg, NET_PROTOCOL_VERSION, id);
        peer_send(&p, NET_CHANNEL_CONTROL, msg, n);
        PEER_WAIT(&p, p.welcomed || p.disconnected, 3000);
        cr_assert(p.welcomed);
        for (uint32_t i = 0; i < 2u * MAX_MALFORMED && !p.disconnected; i++) {
            for (size_t k = 0; k < 40; k++)
                msg[k] = (uint8_t)rnd();
            msg[0] = (uint8_t)((msg[0] & 0xF0u) | 0x0Fu); // no such type
            peer_send(&p, NET_CHANNEL_CONTROL, msg, 40);
        }
        PEER_WAIT(&p, p.disconnected, 3000);
        cr_expect(p.disconnected, "a client sending malformed messages past the limit is disconnected");
        peer_close(&p);
        d = phase_end(&sv, &mark, "9 malformed flood (joined)", NULL);
        cr_expect_eq(d.malformed, MAX_MALFORMED + 1u);
        cr_expect_eq(d.dropped_clients, 1);
        cr_expect_eq(d.joined, 1);
    }

    // 10. A joined attacker sends a truncated hello: dropped at once.
    mark = phase_begin(&sv);
    {
        peer p;
        peer_open(&p, sv.port);
        size_t n = hello_bytes(msg, sizeof msg, NET_PROTOCOL_VERSION, id);
        peer_send(&p, NET_CHANNEL_CONTROL, msg, n);
        PEER_WAIT(&p, p.welcomed || p.disconnected, 3000);
        cr_assert(p.welcomed);
        peer_send(&p, NET_CHANNEL_CONTROL, msg, n - 3);
        PEER_WAIT(&p, p.disconnected, 3000);
        cr_expect(p.disconnected, "a malformed hello from a client drops it");
        peer_close(&p);
        d = phase_end(&sv, &mark, "10 malformed second hello", NULL);
        cr_expect_eq(d.malformed, 1);
        cr_expect_eq(d.dropped_clients, 1);
        cr_expect_eq(d.refused, 0);
    }

    // 11. Raw datagrams that look like ENet CONNECTs with garbage fields.
    // Too short, flagged compressed, or with a channel count ENet refuses:
    // ignored. With a channel count in range: ENet opens a half-open
    // connection for the first two (the attacker's share of the address
    // quota) and refuses the rest, which the host counts. The half-open ones
    // stay until the host's timeout drops them (5 s; ENet alone would keep
    // them about 30 s), so this case and the next come last.
    mark = phase_begin(&sv);
    {
        int fds[3];
        for (int i = 0; i < 3; i++)
            fds[i] = udp_socket();
        uint32_t in_range = 0;
        for (uint32_t i = 0; i < 140; i++) {
            uint32_t flags = i % 2 ? ENET_FLAG_SENT_TIME : 0;
            size_t n;
            if (i < 30) // truncated: shorter than a CONNECT command
                n = enet_connect_bytes(msg, flags, 3, 4 + rnd() % 40u);
            else if (i < 60) // channel count out of ENet's 1..255
                n = enet_connect_bytes(msg, flags, i % 4 < 2 ? 0 : 256u + rnd() % 100000u, 0);
            else if (i < 80) // "compressed", and this host has no compressor
                n = enet_connect_bytes(msg, flags | ENET_FLAG_COMPRESSED, 3, 0);
            else {
                n = enet_connect_bytes(msg, flags, 1 + rnd() % 255u, 0);
                in_range++;
            }
            udp_send(fds[i % 3], sv.port, msg, n);
            sleep_us(1000);
        }
        for (int i = 0; i < 3; i++)
            close(fds[i]);
        d = phase_end(&sv, &mark, "11 garbage ENet CONNECT datagrams", NULL);
        cr_expect_leq(d.peers_refused, in_range - ATTACKER_SLOTS);
        cr_expect_geq(d.peers_refused, (in_range - ATTACKER_SLOTS) * 9 / 10,
                      "CONNECTs past the address quota are counted refused (%u in range sent)", in_range);
        cr_expect_eq(d.joined + d.malformed + d.refused, 0);
    }

    // 12. A flood of connection attempts: 200 ENet hosts one after another,
    // each from its own socket (its own source port), each sending its
    // CONNECT and then vanishing. The address quota is full: every attempt
    // is refused and counted, and the bots keep their connections.
    mark = phase_begin(&sv);
    {
        net_host_config cfg = net_host_default_config();
        uint32_t attempts = 0;
        uint64_t t0 = now_ms();
        for (uint32_t i = 0; i < 200 && now_ms() - t0 < 5000; i++) {
            net_host *h = net_host_connect("127.0.0.1", sv.port, &cfg, NULL);
            cr_assert(h != NULL);
            net_host_flush(h);
            net_event ev;
            net_host_service(h, &ev, 0);
            net_host_destroy(h);
            attempts++;
            sleep_us(2000);
        }
        d = phase_end(&sv, &mark, "12 connection flood", NULL);
        fprintf(stderr, "hostile:   (%u connection attempts)\n", attempts);
        cr_expect_leq(d.peers_refused, attempts);
        cr_expect_geq(d.peers_refused, attempts * 9 / 10, "connection attempts past the quota are counted refused");
        cr_expect_eq(d.joined + d.malformed + d.refused, 0);
    }
    const uint64_t attack_ms = now_ms() - attack_t0;
    fprintf(stderr, "hostile: the attack took %.1f s\n", (double)attack_ms / 1000.0);
    {
        int status;
        cr_expect_eq(waitpid(client, &status, WNOHANG), 0,
                     "the bots finished before the attack did: make CLIENT_TICKS longer (attack %.1f s)",
                     (double)attack_ms / 1000.0);
    }

    // The legitimate clients: played to the end, never disturbed.
    int cl_rc = wait_exit(client, 60000);
    char *cl_summary = slurp_file(cl_out);
    char *cl_stderr = slurp_file(cl_err);
    fclose(cl_out);
    fclose(cl_err);
    cr_expect_eq(cl_rc, 0, "keel-client exit %d (-2: hung): %s", cl_rc, cl_stderr);
    fprintf(stderr, "hostile: keel-client: %s", cl_summary);
    cr_expect_eq(client_total(cl_summary, "unexplained"), 0, "own mispredictions of unknown cause");
    cr_expect_eq(client_total(cl_summary, "hash_mismatches"), 0);
    cr_expect_eq(client_total(cl_summary, "status"), 0);
    {
        const char *p = cl_summary;
        int bots = 0;
        char want[32];
        snprintf(want, sizeof want, "\"ticks\":%u,", CLIENT_TICKS);
        while ((p = strstr(p, "\"ticks\":")) != NULL) {
            cr_expect(strncmp(p, want, strlen(want)) == 0, "a bot did not play all its ticks: %s", cl_summary);
            bots++;
            p++;
        }
        cr_expect_eq(bots, 2);
    }

    // The server: still running until its --duration, then a clean exit.
    uint64_t wait_t0 = now_ms();
    int sv_rc = -2;
    for (;;) {
        server_take_lines(&sv);
        int status = 0;
        pid_t got = waitpid(sv.pid, &status, WNOHANG);
        if (got == sv.pid) {
            sv_rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            forget_child(sv.pid);
            break;
        }
        if (now_ms() - wait_t0 > 30000)
            break; // hung: killed by kill_children below
        sleep_us(20000);
    }
    kill_children();
    server_take_lines(&sv);
    cr_assert_eq(sv_rc, 0, "keel-server exit %d (-1: a signal, -2: hung and killed): %s", sv_rc, sv.err_buf);
    const char *sum = strstr(sv.err_buf, "keel-server: stopped at tick ");
    cr_assert(sum != NULL, "no summary line from keel-server: %s", sv.err_buf);
    unsigned tick = 0;
    unsigned long long ticks, joined, left, dropped, refused, commands, dup, late, oow, rl, subst, in_packets, in_lost,
        in_reordered, malformed, unexpected, peers_refused;
    int got =
        sscanf(sum,
               "keel-server: stopped at tick %u: %llu ticks, clients joined %llu, left %llu, dropped %llu, "
               "refused %llu; commands %llu (duplicates %llu, late %llu, out of window %llu, rate limited %llu, "
               "substituted %llu); input packets %llu (lost %llu, reordered %llu); malformed %llu, unexpected %llu; "
               "connection attempts refused by the host %llu",
               &tick, &ticks, &joined, &left, &dropped, &refused, &commands, &dup, &late, &oow, &rl, &subst,
               &in_packets, &in_lost, &in_reordered, &malformed, &unexpected, &peers_refused);
    cr_assert_eq(got, 18, "cannot read the summary: %s", sum);
    fprintf(stderr, "hostile: %s", sum);
    // It kept ticking: at least 90% of rate x duration ticks. This checks
    // that the loop never stalled under the attack, not how fast it is.
    cr_expect_geq(ticks, (unsigned long long)RATE * DURATION_S * 9u / 10u, "the server ran %llu ticks", ticks);
    // The totals hold every case's counts (nothing else produces these).
    cr_expect_geq(malformed, sv.sum.malformed);
    cr_expect_geq(unexpected, sv.sum.unexpected);
    cr_expect_geq(oow, sv.sum.out_of_window);
    cr_expect_eq(dropped, 2);
    cr_expect_eq(refused, 6);
    cr_expect_geq(peers_refused, sv.sum.peers_refused);
    cr_expect_eq(joined, 2u + 3u, "the two bots and three attackers joined");
    free(cl_summary);
    free(cl_stderr);
    free(sv.out_buf);
    close(sv.out);
    close(sv.err);
    fprintf(stderr, "hostile: the test took %.1f s\n", (double)(now_ms() - test_t0) / 1000.0);
}
