// keel-server: Prometheus metrics and health endpoints (--metrics). MIT
// licence, see LICENSE.
//
// libmicrohttpd serves GET /metrics, /healthz and /readyz from its own
// internal thread; the tick loop never waits for it. The tick thread
// publishes a snapshot of its counters (metrics_snapshot) after every tick
// with pthread_mutex_trylock: when the HTTP thread holds the lock (only for
// a memcpy of the snapshot), that tick's publication is skipped and the next
// one publishes. The HTTP thread formats its own copy. Everything is sized at
// start: no allocation on the tick thread.
//
// Built only with KEEL_HAVE_MICROHTTPD (CMake sets it when pkg-config finds
// libmicrohttpd); without it, --metrics is an error that says so, and the
// rest of the program is unchanged (the cross-architecture check compiles it
// this way).
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "keel_server.h"

// The upper bounds of the tick time histogram's buckets, microseconds, and
// as the le label writes them (seconds). From 10 us: an ordinary server's
// tick takes tens of microseconds, so a first bound of 0.5 ms held every
// tick and its quantiles said nothing; up to 64 ms, four ticks at 64 Hz.
static const uint32_t bucket_us[METRICS_TICK_BUCKETS] = {10,   20,   50,   100,   200,   500,  1000,
                                                         2000, 4000, 8000, 16000, 32000, 64000};
static const char *const bucket_le[METRICS_TICK_BUCKETS] = {"0.00001", "0.00002", "0.00005", "0.0001", "0.0002",
                                                            "0.0005",  "0.001",   "0.002",   "0.004",  "0.008",
                                                            "0.016",   "0.032",   "0.064"};

uint32_t metrics_tick_bucket(uint64_t tick_us)
{
    uint32_t b = 0;
    while (b < METRICS_TICK_BUCKETS && tick_us > bucket_us[b])
        b++;
    return b; // METRICS_TICK_BUCKETS: above the last bound (+Inf only)
}

#ifndef KEEL_HAVE_MICROHTTPD

bool metrics_available(void) { return false; }

metrics *metrics_start(const char *address, uint32_t *port)
{
    (void)address;
    (void)port;
    fputs("keel-server: --metrics: this keel-server was built without libmicrohttpd (install the Debian "
          "package libmicrohttpd-dev and build again)\n",
          stderr);
    return NULL;
}

void metrics_publish(metrics *m, const metrics_snapshot *s)
{
    (void)m;
    (void)s;
}

void metrics_stop(metrics *m) { (void)m; }

#else

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <keel/net_handshake.h>
#include <keel/net_proto.h>
#include <keel/sim_version.h>

#include "keel_app.h"

struct metrics {
    struct MHD_Daemon *daemon;
    pthread_mutex_t lock;
    metrics_snapshot snap; ///< under lock
    bool published;        ///< under lock: a tick has published
};

bool metrics_available(void) { return true; }

void metrics_publish(metrics *m, const metrics_snapshot *s)
{
    if (!m || pthread_mutex_trylock(&m->lock) != 0)
        return; // the HTTP thread is copying: the next tick publishes
    m->snap = *s;
    m->published = true;
    pthread_mutex_unlock(&m->lock);
}

// The text being built: a fixed buffer (large enough for every metric; a
// response that would not fit is cut short and the scrape fails visibly).
typedef struct text {
    char *buf;
    size_t len, cap;
    bool overflow;
} text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
put(text *t, const char *fmt, ...)
{
    if (t->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= t->cap - t->len)
        t->overflow = true;
    else
        t->len += (size_t)n;
}

static void counter(text *t, const char *name, const char *help, uint64_t v)
{
    put(t, "# HELP keel_server_%s %s\n# TYPE keel_server_%s counter\nkeel_server_%s %llu\n", name, help, name, name,
        (unsigned long long)v);
}

static void gauge(text *t, const char *name, const char *help, double v)
{
    put(t, "# HELP keel_server_%s %s\n# TYPE keel_server_%s gauge\nkeel_server_%s %.17g\n", name, help, name, name, v);
}

// --agones: the GameServer's state as keel-server knows it (one series per
// state, 1 for the current one) and the SDK calls that failed, by call.
static void format_agones(text *t, const metrics_snapshot *s)
{
    static const char *const states[] = {"Starting", "Ready", "Allocated", "Shutdown"};
    put(t, "# HELP keel_server_agones_state The GameServer's state as keel-server knows it (1: the current one).\n"
           "# TYPE keel_server_agones_state gauge\n");
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        put(t, "keel_server_agones_state{state=\"%s\"} %d\n", states[i],
            s->agones_state && strcmp(s->agones_state, states[i]) == 0);
    const agones_counts *c = &s->agones_counts;
    const struct {
        const char *call;
        uint64_t n;
    } failures[] = {{"ready", c->ready_failures},
                    {"health", c->health_failures},
                    {"label", c->label_failures},
                    {"gameserver", c->poll_failures},
                    {"shutdown", c->shutdown_failures}};
    put(t, "# HELP keel_server_agones_call_failures_total Agones SDK calls that failed (no sidecar, a non-2xx "
           "answer), by call.\n# TYPE keel_server_agones_call_failures_total counter\n");
    for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++)
        put(t, "keel_server_agones_call_failures_total{call=\"%s\"} %llu\n", failures[i].call,
            (unsigned long long)failures[i].n);
}

static void format_metrics(text *t, const metrics_snapshot *s)
{
    const sv_stats *sv = &s->sv;
    const net_host_stats *n = &s->net;
    put(t, "# HELP keel_server_tick_seconds Wall time of each simulation tick (the tick and its snapshots).\n"
           "# TYPE keel_server_tick_seconds histogram\n");
    uint64_t cum = 0;
    for (uint32_t b = 0; b < METRICS_TICK_BUCKETS; b++) {
        cum += s->tick_buckets[b];
        put(t, "keel_server_tick_seconds_bucket{le=\"%s\"} %llu\n", bucket_le[b], (unsigned long long)cum);
    }
    put(t, "keel_server_tick_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)s->ticks);
    put(t, "keel_server_tick_seconds_sum %.6f\nkeel_server_tick_seconds_count %llu\n", (double)s->tick_us_sum / 1e6,
        (unsigned long long)s->ticks);
    put(t,
        "# HELP keel_server_build_info This keel-server: its version, network protocol and movement behaviour "
        "version (always 1).\n# TYPE keel_server_build_info gauge\n"
        "keel_server_build_info{version=\"%s\",protocol=\"%u\",behaviour=\"%u\"} 1\n",
        KEEL_VERSION_STRING, (unsigned)NET_PROTOCOL_VERSION, (unsigned)NET_BEHAVIOUR_VERSION);
    gauge(t, "ready", "1 while accepting players (with --agones: once Agones accepted Ready), else 0.",
          s->ready ? 1 : 0);
    if (s->agones)
        format_agones(t, s);
    gauge(t, "tick_rate_hertz", "Ticks per second the server runs.", (double)s->tick_rate);
    gauge(t, "clients", "Clients joined now.", (double)sv->clients);
    gauge(t, "draining", "1 while the server shuts down (no players accepted), else 0.", s->draining ? 1 : 0);
    gauge(t, "secure", "1 in secure mode (connect tokens), 0 when --insecure.", s->secure ? 1 : 0);
    gauge(t, "crowded_characters",
          "Characters the last tick left overlapping others because no free spot was found (SIM_CHAR_CROWDED).",
          (double)s->crowded);
    // Every counter since the start: name (after keel_server_), help, value.
    const struct {
        const char *name, *help;
        uint64_t value;
    } counters[] = {
        {"tick_overruns_total", "Ticks that ended after the next tick's deadline.", s->overruns},
        {"joins_total", "Clients that joined (got a character).", sv->clients_joined},
        {"leaves_total", "Joined clients that closed their connection themselves.", sv->clients_left},
        {"timeouts_total", "Joined clients not heard from for the host's timeout.", sv->clients_timed_out},
        {"drops_total", "Joined clients the server dropped for misbehaving.", sv->clients_dropped},
        {"drained_total", "Joined clients told to go because the server shut down.", sv->clients_drained},
        {"received_bytes_total", "Bytes received on the wire (UDP payloads, ENet headers included).", n->wire_received},
        {"sent_bytes_total", "Bytes sent on the wire.", n->wire_sent},
        {"received_payload_bytes_total", "Bytes of keel messages received.", n->payload_received},
        {"sent_payload_bytes_total", "Bytes of keel messages sent.", n->payload_sent},
        {"received_messages_total", "keel messages received.", n->messages_received},
        {"sent_messages_total", "keel messages sent.", n->messages_sent},
        {"commands_total", "New commands stored.", sv->commands_received},
        {"commands_substituted_total", "Commands that had not arrived in time: the previous one ran again.",
         sv->commands_substituted},
        {"commands_late_total", "Commands that arrived after their tick ran.", sv->commands_late},
        {"commands_rate_limited_total", "Commands beyond a client's commands per second, dropped.",
         sv->commands_rate_limited},
        {"input_packets_rate_limited_total", "Input packets beyond a client's packets per second, dropped.",
         sv->packets_rate_limited},
        {"messages_malformed_total", "Messages that did not decode, dropped.", sv->messages_malformed},
        {"messages_unexpected_total", "Well formed messages not valid at the time, dropped.", sv->messages_unexpected},
        {"hellos_refused_total", "Hellos answered with a refusal (version, simulation, full, shutting down).",
         sv->clients_refused},
        {"connections_refused_total", "Connections the host turned away (no free slot, too many per address).",
         n->peers_refused},
        {"handshake_challenges_total", "Secure mode: challenges sent.", n->handshake_challenges},
        {"handshake_admitted_total", "Secure mode: addresses admitted by the handshake.", n->handshake_admitted},
        {"sealed_forged_total", "Secure mode: received messages that did not authenticate, dropped.", n->sealed_forged},
        {"sealed_replayed_total", "Secure mode: received messages replayed or too old, dropped.", n->sealed_replayed},
        {"frames_forged_total", "Secure mode: received datagrams that did not authenticate, dropped before ENet.",
         n->frames_forged},
        {"frames_replayed_total", "Secure mode: received datagrams replayed or too old, dropped before ENet.",
         n->frames_replayed},
        {"recording_ticks_total", "Ticks handed to the recording's writer.", s->recording_ticks},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        counter(t, counters[i].name, counters[i].help, counters[i].value);
    put(t, "# HELP keel_server_handshake_refused_total Secure mode: handshake datagrams and connections turned away, "
           "by reason.\n# TYPE keel_server_handshake_refused_total counter\n");
    for (int r = 1; r < NET_HS_REFUSAL_COUNT; r++) { // the reason's name, spaces as underscores
        char label[64];
        snprintf(label, sizeof label, "%s", net_hs_refusal_name((net_hs_refusal)r));
        for (char *p = label; *p; p++)
            *p = *p == ' ' ? '_' : *p;
        put(t, "keel_server_handshake_refused_total{reason=\"%s\"} %llu\n", label,
            (unsigned long long)n->handshake_refused[r]);
    }
    gauge(t, "recording", "1 while a recording is written, 0 without one or after it failed.",
          s->recording && !s->recording_failed ? 1 : 0);
    if (s->recording) { // the file's size as the disk has it now (the writer's queue is not in it)
        struct stat st;
        gauge(t, "recording_file_bytes", "Size of the recording file on disk.",
              stat(s->recording_path, &st) == 0 ? (double)st.st_size : 0);
        gauge(t, "recording_queue_bytes",
              "Bytes of the recording queued for the disk (compressed and written by "
              "its own thread).",
              (double)s->recording_queue_bytes);
    }
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
                             bool owned)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

#define METRICS_TEXT_BYTES 16384u

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)state;
    metrics *m = cls;
    static char not_found[] = "not found: try /metrics, /healthz or /readyz\n";
    static char bad_method[] = "only GET\n";
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", bad_method, strlen(bad_method), false);
    metrics_snapshot s;
    pthread_mutex_lock(&m->lock);
    s = m->snap;
    bool published = m->published;
    pthread_mutex_unlock(&m->lock);
    if (strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0) {
        // healthz: the loop (or, before it, the wait for Agones' Ready)
        // published within METRICS_ALIVE_US; readyz: and it is accepting
        // players (Ready accepted, not draining).
        bool alive = published && keel_app_now_us() - s.alive_us < METRICS_ALIVE_US;
        bool ok = url[1] == 'h' ? alive : alive && s.ready && !s.draining;
        static char yes[] = "ok\n", stale[] = "the tick loop has not run for a second\n",
                    draining[] = "draining: the server is shutting down\n",
                    waiting[] = "waiting for Agones to accept Ready\n";
        char *body = ok ? yes : !alive ? stale : s.draining ? draining : waiting;
        return reply(c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", body, strlen(body), false);
    }
    if (strcmp(url, "/metrics") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, strlen(not_found), false);
    text t = {malloc(METRICS_TEXT_BYTES), 0, METRICS_TEXT_BYTES, false};
    if (!t.buf)
        return MHD_NO;
    format_metrics(&t, &s);
    if (t.overflow) {
        free(t.buf);
        static char full[] = "metrics text exceeded its buffer\n";
        return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", full, strlen(full), false);
    }
    return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", t.buf, t.len, true);
}

metrics *metrics_start(const char *address, uint32_t *port)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)*port);
    if (inet_pton(AF_INET, address, &sa.sin_addr) != 1) {
        fprintf(stderr, "keel-server: --metrics: '%s' is not an IPv4 address\n", address);
        return NULL;
    }
    metrics *m = calloc(1, sizeof *m);
    if (!m || pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        fputs("keel-server: --metrics: out of memory\n", stderr);
        return NULL;
    }
    // Slow or hostile clients must not lock the probes out. At most
    // METRICS_PER_ADDRESS connections from one address (libmicrohttpd
    // closes the next at once), METRICS_CONNECTIONS in all, and each
    // dropped after METRICS_IDLE_S without a byte. libmicrohttpd's timeout
    // restarts with every byte (it has no whole-request deadline), so a
    // client trickling bytes keeps its connections: the per-address limit is
    // what leaves room for the kubelet and Prometheus, which come from
    // addresses of their own. None of it touches the tick thread.
    m->daemon = MHD_start_daemon(MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)*port,
                                 NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONNECTIONS,
                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)METRICS_PER_ADDRESS,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_IDLE_S, MHD_OPTION_END);
    if (!m->daemon) {
        fprintf(stderr, "keel-server: --metrics: cannot serve HTTP on %s:%u (address in use?)\n", address, *port);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (info)
        *port = info->port;
    return m;
}

void metrics_stop(metrics *m)
{
    if (!m)
        return;
    MHD_stop_daemon(m->daemon);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

#endif
