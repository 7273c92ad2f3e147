// keel tests: the hosts (net_host.h): ENet on loopback and the in-memory
// network. MIT licence, see LICENSE.
//
// The ENet tests bind 127.0.0.1 port 0 only and poll in bounded loops (each
// at most a few seconds of wall time); nothing asserts how fast anything is.
// The memory tests run on virtual time and check exact figures.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include <keel/net_host.h>
#include <keel/net_proto.h>

#include "../net/src/host_impl.h"

// ---- event logs ----------------------------------------------------------------------

typedef struct rec {
    net_event_type type;
    uint32_t peer;
    uint8_t channel;
    size_t length;
    uint8_t *data;
    uint64_t at; ///< virtual ms (memory) or wall ms since the test began (ENet)
} rec;

typedef struct evlog {
    rec *r;
    size_t n, cap;
} evlog;

static void log_add(evlog *l, const net_event *ev, uint64_t at)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->r = realloc(l->r, l->cap * sizeof *l->r);
        cr_assert_not_null(l->r);
    }
    rec *r = &l->r[l->n++];
    memset(r, 0, sizeof *r);
    r->type = ev->type;
    r->peer = ev->peer;
    r->channel = ev->channel;
    r->length = ev->length;
    r->at = at;
    if (ev->type == NET_EVENT_RECEIVE && ev->length > 0) {
        r->data = malloc(ev->length);
        cr_assert_not_null(r->data);
        memcpy(r->data, ev->data, ev->length);
    }
}

static void log_free(evlog *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->r[i].data);
    free(l->r);
    memset(l, 0, sizeof *l);
}

static size_t log_count(const evlog *l, net_event_type type)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->r[i].type == type;
    return n;
}

// The first RECEIVE on `channel` (from `peer`, or any peer when peer is
// UINT32_MAX) whose data starts with `prefix`.
static const rec *log_find(const evlog *l, uint32_t peer, uint8_t channel, const char *prefix)
{
    size_t k = strlen(prefix);
    for (size_t i = 0; i < l->n; i++) {
        const rec *r = &l->r[i];
        if (r->type == NET_EVENT_RECEIVE && r->channel == channel && (peer == UINT32_MAX || r->peer == peer) &&
            r->length >= k && memcmp(r->data, prefix, k) == 0)
            return r;
    }
    return NULL;
}

static const rec *log_find_type(const evlog *l, net_event_type type, uint32_t peer)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->r[i].type == type && (peer == UINT32_MAX || l->r[i].peer == peer))
            return &l->r[i];
    return NULL;
}

static bool send_text(net_host *h, uint32_t peer, net_channel ch, const char *text)
{
    return net_host_send(h, peer, ch, (const uint8_t *)text, strlen(text));
}

static void fill_pattern(uint8_t *buf, size_t n, uint32_t salt)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)((i * 131u + salt * 7u + (i >> 8)) & 0xFF);
}

// ---- ENet helpers --------------------------------------------------------------------

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

typedef bool (*until_fn)(evlog *logs, void *ctx);

// Services every host (NULL entries skipped) until `until` holds or max_ms
// of wall time pass; true when it held.
static bool pump(net_host **hosts, evlog *logs, size_t n, until_fn until, void *ctx, uint64_t t0, unsigned max_ms)
{
    uint64_t start = wall_ms();
    for (;;) {
        for (size_t i = 0; i < n; i++) {
            if (!hosts[i])
                continue;
            net_event ev;
            while (net_host_service(hosts[i], &ev, 0) != NET_EVENT_NONE)
                log_add(&logs[i], &ev, wall_ms() - t0);
        }
        if (until && until(logs, ctx))
            return true;
        if (wall_ms() - start >= max_ms)
            return until == NULL;
        sleep_ms(1);
    }
}

typedef struct want {
    size_t host;
    net_event_type type;
    size_t count;
} want;

typedef struct wants {
    const want *w;
    size_t n;
} wants;

static bool until_wants(evlog *logs, void *ctx)
{
    const wants *ws = ctx;
    for (size_t i = 0; i < ws->n; i++)
        if (log_count(&logs[ws->w[i].host], ws->w[i].type) < ws->w[i].count)
            return false;
    return true;
}

typedef struct want_msg {
    size_t host;
    uint8_t channel;
    const char *prefix;
} want_msg;

typedef struct want_msgs {
    const want_msg *w;
    size_t n;
} want_msgs;

static bool until_msgs(evlog *logs, void *ctx)
{
    const want_msgs *ws = ctx;
    for (size_t i = 0; i < ws->n; i++)
        if (!log_find(&logs[ws->w[i].host], UINT32_MAX, ws->w[i].channel, ws->w[i].prefix))
            return false;
    return true;
}

static net_host *listen_local(const net_host_config *cfg)
{
    const char *err = NULL;
    net_host *s = net_host_listen("127.0.0.1", 0, cfg, &err);
    cr_assert_not_null(s, "listen on 127.0.0.1:0: %s", err ? err : "?");
    cr_assert_neq(net_host_port(s), 0);
    return s;
}

static net_host *connect_local(net_host *server, const net_host_config *cfg)
{
    const char *err = NULL;
    net_host *c = net_host_connect("127.0.0.1", net_host_port(server), cfg, &err);
    cr_assert_not_null(c, "connect: %s", err ? err : "?");
    return c;
}

// ---- ENet ----------------------------------------------------------------------------

Test(net_host_enet, three_clients_exchange_on_every_channel)
{
    uint64_t t0 = wall_ms();
    net_host *h[4];
    evlog logs[4];
    memset(logs, 0, sizeof logs);
    h[0] = listen_local(NULL);
    for (int i = 1; i <= 3; i++)
        h[i] = connect_local(h[0], NULL);

    want w[] = {
        {0, NET_EVENT_CONNECT, 3}, {1, NET_EVENT_CONNECT, 1}, {2, NET_EVENT_CONNECT, 1}, {3, NET_EVENT_CONNECT, 1}};
    wants ws = {w, 4};
    cr_assert(pump(h, logs, 4, until_wants, &ws, t0, 5000), "every client connects");

    // Handles: small, distinct; the MTU is ENet's NET_HOST_ENET_MTU both ways.
    uint32_t handle[4];
    for (int i = 0; i < 3; i++) {
        handle[i + 1] = logs[0].r[i].peer;
        cr_assert_lt(handle[i + 1], 64u);
        cr_assert_eq(net_host_enet_peer_mtu(h[0], handle[i + 1]), NET_HOST_ENET_MTU);
        cr_assert_eq(logs[i + 1].r[0].peer, 0u, "a client's server is peer 0");
        cr_assert_eq(net_host_enet_peer_mtu(h[i + 1], 0), NET_HOST_ENET_MTU);
    }
    cr_assert_neq(handle[1], handle[2]);
    cr_assert_neq(handle[1], handle[3]);
    cr_assert_neq(handle[2], handle[3]);

    // Which handle is which client: each client says its number on control
    // first; then messages on all three channels both ways.
    char text[64];
    for (int i = 1; i <= 3; i++) {
        snprintf(text, sizeof text, "ctl from %d", i);
        cr_assert(send_text(h[i], 0, NET_CHANNEL_CONTROL, text));
        snprintf(text, sizeof text, "in from %d", i);
        cr_assert(send_text(h[i], 0, NET_CHANNEL_INPUT, text));
        snprintf(text, sizeof text, "snap from %d", i);
        cr_assert(send_text(h[i], 0, NET_CHANNEL_SNAPSHOT, text));
        net_host_flush(h[i]);
    }
    want_msg wm[] = {{0, NET_CHANNEL_CONTROL, "ctl from 1"},   {0, NET_CHANNEL_CONTROL, "ctl from 2"},
                     {0, NET_CHANNEL_CONTROL, "ctl from 3"},   {0, NET_CHANNEL_INPUT, "in from 1"},
                     {0, NET_CHANNEL_INPUT, "in from 2"},      {0, NET_CHANNEL_INPUT, "in from 3"},
                     {0, NET_CHANNEL_SNAPSHOT, "snap from 1"}, {0, NET_CHANNEL_SNAPSHOT, "snap from 2"},
                     {0, NET_CHANNEL_SNAPSHOT, "snap from 3"}};
    want_msgs wms = {wm, 9};
    cr_assert(pump(h, logs, 4, until_msgs, &wms, t0, 5000), "the server hears every client on every channel");
    for (int i = 1; i <= 3; i++) {
        snprintf(text, sizeof text, "ctl from %d", i);
        const rec *r = log_find(&logs[0], UINT32_MAX, NET_CHANNEL_CONTROL, text);
        cr_assert_eq(r->peer, handle[i], "handles follow the connect events");
        cr_assert_eq(r->length, strlen(text));
    }

    for (int i = 1; i <= 3; i++) {
        snprintf(text, sizeof text, "ctl to %d", i);
        cr_assert(send_text(h[0], handle[i], NET_CHANNEL_CONTROL, text));
        snprintf(text, sizeof text, "in to %d", i);
        cr_assert(send_text(h[0], handle[i], NET_CHANNEL_INPUT, text));
        snprintf(text, sizeof text, "snap to %d", i);
        cr_assert(send_text(h[0], handle[i], NET_CHANNEL_SNAPSHOT, text));
    }
    // The largest unreliable message and a reliable one in four fragments.
    static uint8_t big[4000];
    fill_pattern(big, sizeof big, 1);
    memcpy(big, "BIG1200", 7);
    cr_assert(net_host_send(h[0], handle[1], NET_CHANNEL_SNAPSHOT, big, NET_MTU));
    cr_assert_not(net_host_send(h[0], handle[1], NET_CHANNEL_SNAPSHOT, big, NET_MTU + 1));
    cr_assert_not(net_host_send(h[0], handle[1], NET_CHANNEL_INPUT, big, NET_MTU + 1));
    memcpy(big, "BIG4000", 7);
    cr_assert(net_host_send(h[2], 0, NET_CHANNEL_CONTROL, big, sizeof big));
    net_host_flush(h[0]);
    want_msg wm2[] = {{1, NET_CHANNEL_CONTROL, "ctl to 1"},   {2, NET_CHANNEL_CONTROL, "ctl to 2"},
                      {3, NET_CHANNEL_CONTROL, "ctl to 3"},   {1, NET_CHANNEL_INPUT, "in to 1"},
                      {2, NET_CHANNEL_INPUT, "in to 2"},      {3, NET_CHANNEL_INPUT, "in to 3"},
                      {1, NET_CHANNEL_SNAPSHOT, "snap to 1"}, {2, NET_CHANNEL_SNAPSHOT, "snap to 2"},
                      {3, NET_CHANNEL_SNAPSHOT, "snap to 3"}, {1, NET_CHANNEL_SNAPSHOT, "BIG1200"},
                      {0, NET_CHANNEL_CONTROL, "BIG4000"}};
    want_msgs wms2 = {wm2, 11};
    cr_assert(pump(h, logs, 4, until_msgs, &wms2, t0, 5000), "every message arrives");

    const rec *r = log_find(&logs[1], 0, NET_CHANNEL_SNAPSHOT, "BIG1200");
    cr_assert_eq(r->length, NET_MTU);
    fill_pattern(big, sizeof big, 1);
    memcpy(big, "BIG1200", 7);
    cr_assert(memcmp(r->data, big, NET_MTU) == 0);
    r = log_find(&logs[0], handle[2], NET_CHANNEL_CONTROL, "BIG4000");
    cr_assert_not_null(r);
    cr_assert_eq(r->length, sizeof big);
    memcpy(big, "BIG4000", 7);
    cr_assert(memcmp(r->data, big, sizeof big) == 0, "the reliable message arrives whole");

    // Statistics: payload exact; wire adds at least ENet's command headers and
    // UDP/IP per datagram.
    net_host_stats s;
    net_host_stats_get(h[0], &s);
    cr_assert_eq(s.refused_oversize, 2u);
    cr_assert_eq(s.messages_sent, 10u);
    uint64_t payload = 0;
    for (int i = 1; i <= 3; i++)
        payload += strlen("ctl to 1") + strlen("in to 1") + strlen("snap to 1");
    cr_assert_eq(s.payload_sent, payload + NET_MTU);
    cr_assert_eq(s.messages_received, log_count(&logs[0], NET_EVENT_RECEIVE));
    uint64_t received = 0;
    for (size_t i = 0; i < logs[0].n; i++)
        received += logs[0].r[i].length * (logs[0].r[i].type == NET_EVENT_RECEIVE);
    cr_assert_eq(s.payload_received, received);
    cr_assert_geq(s.wire_sent, s.payload_sent + 6 * s.messages_sent + NET_WIRE_UDP_IP);
    cr_assert_geq(s.wire_received, s.payload_received + 6 * s.messages_received + NET_WIRE_UDP_IP);
    cr_log_info("server: payload %llu/%llu bytes sent/received, wire %llu/%llu", (unsigned long long)s.payload_sent,
                (unsigned long long)s.payload_received, (unsigned long long)s.wire_sent,
                (unsigned long long)s.wire_received);
    net_host_stats cs;
    net_host_stats_get(h[2], &cs);
    cr_assert_eq(cs.payload_sent, strlen("ctl from 2") + strlen("in from 2") + strlen("snap from 2") + sizeof big);
    cr_assert_geq(cs.wire_sent, cs.payload_sent + 4 * (NET_WIRE_FRAGMENT + NET_WIRE_UDP_IP));
    net_host_stats_get(h[1], &cs);
    cr_assert_eq(cs.refused_oversize, 0u);

    // A disconnect: the server sees it; the client reports nothing more.
    size_t before = logs[3].n;
    net_host_disconnect(h[3], 0);
    cr_assert_not(send_text(h[3], 0, NET_CHANNEL_CONTROL, "late"));
    want w2[] = {{0, NET_EVENT_DISCONNECT, 1}};
    wants ws2 = {w2, 1};
    cr_assert(pump(h, logs, 4, until_wants, &ws2, t0, 5000), "the server sees the disconnect");
    cr_assert_eq(log_find_type(&logs[0], NET_EVENT_DISCONNECT, UINT32_MAX)->peer, handle[3]);
    cr_assert_eq(logs[3].n, before);
    cr_assert_not(send_text(h[0], handle[3], NET_CHANNEL_CONTROL, "gone"));

    for (int i = 0; i < 4; i++) {
        net_host_destroy(h[i]);
        log_free(&logs[i]);
    }
}

Test(net_host_enet, killed_client_times_out)
{
    uint64_t t0 = wall_ms();
    net_host_config cfg = net_host_default_config();
    cfg.timeout_ms = 2500;
    net_host *h[2];
    evlog logs[2];
    memset(logs, 0, sizeof logs);
    h[0] = listen_local(&cfg);
    h[1] = connect_local(h[0], NULL);
    want w[] = {{0, NET_EVENT_CONNECT, 1}, {1, NET_EVENT_CONNECT, 1}};
    wants ws = {w, 2};
    cr_assert(pump(h, logs, 2, until_wants, &ws, t0, 5000));
    // Traffic both ways for a moment, then the client vanishes without notice.
    for (int i = 0; i < 20; i++) {
        cr_assert(send_text(h[1], 0, NET_CHANNEL_INPUT, "tick"));
        cr_assert(send_text(h[0], logs[0].r[0].peer, NET_CHANNEL_CONTROL, "hello"));
        pump(h, logs, 2, NULL, NULL, t0, 10);
    }
    net_host_destroy(h[1]);
    h[1] = NULL;
    uint64_t killed = wall_ms();
    want w2[] = {{0, NET_EVENT_DISCONNECT, 1}};
    wants ws2 = {w2, 1};
    cr_assert(pump(h, logs, 2, until_wants, &ws2, t0, 8000), "the server notices within 8 s");
    uint64_t took = wall_ms() - killed;
    cr_log_info("timeout %u ms: the server reported the disconnect after %llu ms", cfg.timeout_ms,
                (unsigned long long)took);
    // Not before the timeout (less the 500 ms ping interval that may have
    // passed since the client was last heard), and within it (plus slack
    // for polling on a loaded machine).
    cr_assert_geq(took, cfg.timeout_ms - 600);
    cr_assert_leq(took, cfg.timeout_ms + 1500);
    net_host_destroy(h[0]);
    for (int i = 0; i < 2; i++)
        log_free(&logs[i]);
}

Test(net_host_enet, refused_beyond_per_address_cap_and_max_peers)
{
    uint64_t t0 = wall_ms();
    // Server 0: at most 4 per address (the default); clients 1-5.
    // Server 6: at most 2 peers; clients 7-9.
    net_host_config full = net_host_default_config();
    full.max_peers = 2;
    net_host_config quick = net_host_default_config();
    quick.timeout_ms = 1500;
    net_host *h[10];
    evlog logs[10];
    memset(logs, 0, sizeof logs);
    h[0] = listen_local(NULL);
    h[6] = listen_local(&full);
    for (int i = 1; i <= 4; i++)
        h[i] = connect_local(h[0], NULL);
    for (int i = 7; i <= 8; i++)
        h[i] = connect_local(h[6], NULL);
    h[5] = h[9] = NULL;
    want w[] = {{0, NET_EVENT_CONNECT, 4}, {6, NET_EVENT_CONNECT, 2}};
    wants ws = {w, 2};
    cr_assert(pump(h, logs, 10, until_wants, &ws, t0, 5000));
    h[5] = connect_local(h[0], &quick);
    h[9] = connect_local(h[6], &quick);
    want w2[] = {{5, NET_EVENT_DISCONNECT, 1}, {9, NET_EVENT_DISCONNECT, 1}};
    wants ws2 = {w2, 2};
    cr_assert(pump(h, logs, 10, until_wants, &ws2, t0, 6000), "the refused connects fail");
    cr_assert_eq(log_count(&logs[5], NET_EVENT_CONNECT), 0u);
    cr_assert_eq(log_count(&logs[9], NET_EVENT_CONNECT), 0u);
    cr_assert_eq(log_count(&logs[0], NET_EVENT_CONNECT), 4u);
    cr_assert_eq(log_count(&logs[6], NET_EVENT_CONNECT), 2u);
    net_host_stats s;
    net_host_stats_get(h[0], &s);
    cr_assert_eq(s.peers_refused, 1u, "one refusal, however often the client retried");
    net_host_stats_get(h[6], &s);
    cr_assert_eq(s.peers_refused, 1u);
    for (int i = 0; i < 10; i++) {
        net_host_destroy(h[i]);
        log_free(&logs[i]);
    }
}

// A connection attempt whose handshake never completes (the client sends
// its CONNECT and vanishes) holds a slot and its address's quota on the
// server; the host drops it after the timeout, so the next attempt from the
// same address gets in. ENet alone keeps it about 30 s.
Test(net_host_enet, a_half_open_connection_frees_its_quota_after_the_timeout)
{
    uint64_t t0 = wall_ms();
    net_host_config one = net_host_default_config();
    one.max_peers_per_address = 1;
    one.timeout_ms = 1000;
    net_host *h[3] = {listen_local(&one), NULL, NULL};
    evlog logs[3];
    memset(logs, 0, sizeof logs);
    // the vanishing client: its CONNECT goes out, then it is gone
    net_host *ghost = connect_local(h[0], NULL);
    net_host_flush(ghost);
    net_event ev;
    net_host_service(ghost, &ev, 0);
    net_host_destroy(ghost);
    pump(h, logs, 3, NULL, NULL, t0, 200); // the server takes the CONNECT
    // at once: the quota is held, a real client is refused
    net_host_config quick = net_host_default_config();
    quick.timeout_ms = 800;
    h[1] = connect_local(h[0], &quick);
    want w1[] = {{1, NET_EVENT_DISCONNECT, 1}};
    wants ws1 = {w1, 1};
    cr_assert(pump(h, logs, 3, until_wants, &ws1, t0, 5000), "the second client was neither refused nor let in");
    cr_assert_eq(log_count(&logs[1], NET_EVENT_CONNECT), 0u, "let in while the half-open one held the quota");
    // after the timeout the half-open one is gone and a client gets in
    pump(h, logs, 3, NULL, NULL, t0, 1500);
    h[2] = connect_local(h[0], NULL);
    want w2[] = {{2, NET_EVENT_CONNECT, 1}, {0, NET_EVENT_CONNECT, 1}};
    wants ws2 = {w2, 2};
    cr_assert(pump(h, logs, 3, until_wants, &ws2, t0, 5000), "the quota was not freed");
    for (int i = 0; i < 3; i++) {
        net_host_destroy(h[i]);
        log_free(&logs[i]);
    }
}

Test(net_host_enet, server_clamps_a_bigger_mtu)
{
    uint64_t t0 = wall_ms();
    net_host *h[3];
    evlog logs[3];
    memset(logs, 0, sizeof logs);
    h[0] = listen_local(NULL);
    const char *err = NULL;
    h[1] = net_host_enet_connect("127.0.0.1", net_host_port(h[0]), NULL, 4096, &err);
    cr_assert_not_null(h[1], "%s", err ? err : "?");
    h[2] = net_host_enet_connect("127.0.0.1", net_host_port(h[0]), NULL, 576, &err);
    cr_assert_not_null(h[2], "%s", err ? err : "?");
    want w[] = {{0, NET_EVENT_CONNECT, 2}, {1, NET_EVENT_CONNECT, 1}, {2, NET_EVENT_CONNECT, 1}};
    wants ws = {w, 3};
    cr_assert(pump(h, logs, 3, until_wants, &ws, t0, 5000));
    cr_assert_eq(net_host_enet_peer_mtu(h[1], 0), NET_HOST_ENET_MTU, "the client adopts the server's answer");
    cr_assert_eq(net_host_enet_peer_mtu(h[2], 0), 576u, "a smaller MTU stays");
    uint32_t big_peer = UINT32_MAX, small_peer = UINT32_MAX;
    for (int i = 0; i < 2; i++) {
        uint32_t p = logs[0].r[i].peer;
        uint32_t mtu = net_host_enet_peer_mtu(h[0], p);
        cr_assert(mtu == NET_HOST_ENET_MTU || mtu == 576u, "server-side MTU %u", mtu);
        if (mtu == NET_HOST_ENET_MTU)
            big_peer = p;
        else
            small_peer = p;
    }
    cr_assert_neq(big_peer, UINT32_MAX, "4096 was clamped to %u", NET_HOST_ENET_MTU);
    cr_assert_neq(small_peer, UINT32_MAX);
    // Full-size unreliable messages both ways; towards the 576-byte peer they
    // go as unreliable fragments.
    static uint8_t msg[NET_MTU];
    fill_pattern(msg, sizeof msg, 5);
    memcpy(msg, "FULL", 4);
    cr_assert(net_host_send(h[1], 0, NET_CHANNEL_SNAPSHOT, msg, sizeof msg));
    cr_assert(net_host_send(h[0], big_peer, NET_CHANNEL_SNAPSHOT, msg, sizeof msg));
    cr_assert(net_host_send(h[0], small_peer, NET_CHANNEL_SNAPSHOT, msg, sizeof msg));
    want_msg wm[] = {
        {0, NET_CHANNEL_SNAPSHOT, "FULL"}, {1, NET_CHANNEL_SNAPSHOT, "FULL"}, {2, NET_CHANNEL_SNAPSHOT, "FULL"}};
    want_msgs wms = {wm, 3};
    cr_assert(pump(h, logs, 3, until_msgs, &wms, t0, 5000));
    cr_assert_eq(log_find(&logs[2], 0, NET_CHANNEL_SNAPSHOT, "FULL")->length, NET_MTU);

    // A full message is one datagram: 1200 + 10 + 28 = 1238 wire bytes; two
    // fragments would be at least 1200 + 2 * (2 + 24 + 28) = 1308 (measured
    // with an ENet MTU of 1200). A ping or an
    // acknowledgement may share the window (up to 40 bytes each), so the
    // bound is 1300, with a few tries in case both do.
    bool single = false;
    for (int attempt = 0; attempt < 5 && !single; attempt++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "ONE%d", attempt);
        memcpy(msg, prefix, strlen(prefix));
        net_host_stats before, after;
        net_host_stats_get(h[1], &before);
        cr_assert(net_host_send(h[0], big_peer, NET_CHANNEL_SNAPSHOT, msg, sizeof msg));
        net_host_flush(h[0]);
        want_msg wo[] = {{1, NET_CHANNEL_SNAPSHOT, prefix}};
        want_msgs wos = {wo, 1};
        cr_assert(pump(h, logs, 3, until_msgs, &wos, t0, 5000));
        net_host_stats_get(h[1], &after);
        uint64_t wire = after.wire_received - before.wire_received;
        cr_log_info("a %u-byte unreliable message: %llu wire bytes received", NET_MTU, (unsigned long long)wire);
        single = wire < 1300;
    }
    cr_assert(single, "a NET_MTU message travels unfragmented");
    for (int i = 0; i < 3; i++) {
        net_host_destroy(h[i]);
        log_free(&logs[i]);
    }
}

Test(net_host_enet, refuses_bad_arguments)
{
    const char *err = NULL;
    cr_assert_null(net_host_listen("localhost", 0, NULL, &err));
    cr_assert_not_null(err);
    err = NULL;
    cr_assert_null(net_host_listen("127.0.0.1.5", 0, NULL, &err));
    cr_assert_not_null(err);

    net_host *s = listen_local(NULL);
    err = NULL;
    cr_assert_null(net_host_listen("127.0.0.1", net_host_port(s), NULL, &err), "port in use");
    cr_assert_not_null(err);

    net_host_config c;
    memset(&c, 0, sizeof c);
    c.max_peers = 8;
    c.max_peers_per_address = 2;
    c.timeout_ms = 1000;
    err = NULL;
    cr_assert_null(net_host_listen("127.0.0.1", 0, &c, &err), "no cookie");
    cr_assert_not_null(err);
    c = net_host_default_config();
    c.timeout_ms = NET_HOST_MAX_TIMEOUT_MS + 1;
    cr_assert_null(net_host_connect("127.0.0.1", net_host_port(s), &c, &err));
    c = net_host_default_config();
    c.max_peers = 0;
    cr_assert_null(net_host_listen("127.0.0.1", 0, &c, &err));

    net_host *cl = connect_local(s, NULL);
    cr_assert_not(send_text(cl, 0, NET_CHANNEL_CONTROL, "too early"), "not connected yet");
    cr_assert_not(send_text(s, 0, NET_CHANNEL_CONTROL, "nobody"));
    cr_assert_not(send_text(s, 4096, NET_CHANNEL_CONTROL, "nobody"));
    cr_assert_not(net_host_send(s, 0, (net_channel)3, (const uint8_t *)"x", 1));
    static uint8_t huge[NET_HOST_MAX_MESSAGE + 1];
    cr_assert_not(net_host_send(s, 0, NET_CHANNEL_CONTROL, huge, sizeof huge));
    net_host_destroy(cl);
    net_host_destroy(s);
    net_host_destroy(NULL);
}

// ---- memory --------------------------------------------------------------------------

// Drains every host at the current virtual time, then advances 1 ms; `ms`
// times.
static void mem_run(net_memory *mem, net_host **hosts, evlog *logs, size_t n, uint32_t ms)
{
    for (uint32_t t = 0;; t++) {
        for (size_t i = 0; i < n; i++) {
            if (!hosts[i])
                continue;
            net_event ev;
            while (net_host_service(hosts[i], &ev, 1000) != NET_EVENT_NONE)
                log_add(&logs[i], &ev, net_memory_now(mem));
        }
        if (t == ms)
            break;
        net_memory_advance(mem, 1);
    }
}

static net_memory_link link_of(uint32_t latency, uint32_t jitter, uint32_t loss, uint32_t dup)
{
    net_memory_link l = {latency, jitter, loss, dup};
    return l;
}

Test(net_host_memory, three_clients_exchange_on_every_channel)
{
    net_memory *mem = net_memory_create(7);
    net_memory_link l = link_of(10, 0, 0, 0);
    net_host *h[4];
    evlog logs[4];
    memset(logs, 0, sizeof logs);
    h[0] = net_memory_listen(mem, "server", NULL);
    cr_assert_not_null(h[0]);
    cr_assert_null(net_memory_listen(mem, "server", NULL), "one listener per name");
    for (int i = 1; i <= 3; i++) {
        h[i] = net_memory_connect(mem, "server", &l, &l, NULL);
        cr_assert_not_null(h[i]);
    }
    mem_run(mem, h, logs, 4, 20);
    cr_assert_eq(log_count(&logs[0], NET_EVENT_CONNECT), 3u);
    uint32_t handle[4];
    for (int i = 1; i <= 3; i++) {
        cr_assert_eq(log_count(&logs[i], NET_EVENT_CONNECT), 1u);
        cr_assert_eq(logs[i].r[0].peer, 0u);
        handle[i] = logs[0].r[i - 1].peer;
    }
    cr_assert_eq(handle[1], 0u);
    cr_assert_eq(handle[2], 1u);
    cr_assert_eq(handle[3], 2u);

    char text[64];
    for (int i = 1; i <= 3; i++) {
        snprintf(text, sizeof text, "ctl from %d", i);
        cr_assert(send_text(h[i], 0, NET_CHANNEL_CONTROL, text));
        snprintf(text, sizeof text, "in from %d", i);
        cr_assert(send_text(h[i], 0, NET_CHANNEL_INPUT, text));
        snprintf(text, sizeof text, "snap from %d", i);
        cr_assert(send_text(h[i], 0, NET_CHANNEL_SNAPSHOT, text));
        snprintf(text, sizeof text, "ctl to %d", i);
        cr_assert(send_text(h[0], handle[i], NET_CHANNEL_CONTROL, text));
        snprintf(text, sizeof text, "in to %d", i);
        cr_assert(send_text(h[0], handle[i], NET_CHANNEL_INPUT, text));
        snprintf(text, sizeof text, "snap to %d", i);
        cr_assert(send_text(h[0], handle[i], NET_CHANNEL_SNAPSHOT, text));
    }
    static uint8_t big[4000];
    fill_pattern(big, sizeof big, 2);
    memcpy(big, "BIG1200", 7);
    cr_assert(net_host_send(h[0], handle[1], NET_CHANNEL_SNAPSHOT, big, NET_MTU));
    cr_assert_not(net_host_send(h[0], handle[1], NET_CHANNEL_SNAPSHOT, big, NET_MTU + 1));
    cr_assert_not(net_host_send(h[1], 0, NET_CHANNEL_INPUT, big, NET_MTU + 1));
    memcpy(big, "BIG4000", 7);
    cr_assert(net_host_send(h[2], 0, NET_CHANNEL_CONTROL, big, sizeof big));
    mem_run(mem, h, logs, 4, 10);

    for (int i = 1; i <= 3; i++) {
        const char *pre[3] = {"ctl", "in", "snap"};
        for (int ch = 0; ch < 3; ch++) {
            snprintf(text, sizeof text, "%s from %d", pre[ch], i);
            const rec *r = log_find(&logs[0], handle[i], (uint8_t)ch, text);
            cr_assert_not_null(r, "%s", text);
            cr_assert_eq(r->at, 30u, "sent at 20, 10 ms latency");
            snprintf(text, sizeof text, "%s to %d", pre[ch], i);
            cr_assert_not_null(log_find(&logs[i], 0, (uint8_t)ch, text), "%s", text);
        }
    }
    const rec *r = log_find(&logs[1], 0, NET_CHANNEL_SNAPSHOT, "BIG1200");
    cr_assert_not_null(r);
    cr_assert_eq(r->length, NET_MTU);
    r = log_find(&logs[0], handle[2], NET_CHANNEL_CONTROL, "BIG4000");
    cr_assert_not_null(r);
    cr_assert_eq(r->length, sizeof big);
    cr_assert(memcmp(r->data, big, sizeof big) == 0);

    // Statistics, exactly: the figures of host_impl.h per datagram.
    net_host_stats s;
    net_host_stats_get(h[2], &s);
    uint64_t small = strlen("ctl from 2") + strlen("in from 2") + strlen("snap from 2");
    cr_assert_eq(s.payload_sent, small + sizeof big);
    cr_assert_eq(s.messages_sent, 4u);
    // 3 single datagrams (38 bytes of headers each), 4 fragments (56 each)
    // and the acknowledgement of "ctl to 2" (40).
    cr_assert_eq(s.wire_sent, small + 3 * 38 + 4000 + 4 * 56 + 40);
    cr_assert_eq(s.wire_sent, 4408u);
    // Received: its 3 messages; the server acknowledged 1 + 4 reliable
    // datagrams (40 bytes each).
    uint64_t in = strlen("ctl to 2") + strlen("in to 2") + strlen("snap to 2");
    cr_assert_eq(s.payload_received, in);
    cr_assert_eq(s.messages_received, 3u);
    cr_assert_eq(s.wire_received, in + 3 * 38 + 5 * 40);
    net_host_stats_get(h[0], &s);
    cr_assert_eq(s.refused_oversize, 1u);
    net_host_stats_get(h[1], &s);
    cr_assert_eq(s.refused_oversize, 1u);

    // Disconnect by client 3: the server sees it one latency later.
    net_host_disconnect(h[3], 0);
    size_t before = logs[3].n;
    cr_assert_not(send_text(h[3], 0, NET_CHANNEL_CONTROL, "late"));
    uint64_t t_disc = net_memory_now(mem);
    mem_run(mem, h, logs, 4, 20);
    const rec *d = log_find_type(&logs[0], NET_EVENT_DISCONNECT, UINT32_MAX);
    cr_assert_not_null(d);
    cr_assert_eq(d->peer, handle[3]);
    cr_assert_eq(d->at, t_disc + 10);
    cr_assert_eq(logs[3].n, before, "the client reports nothing more");

    // Client 1 vanishes: the server sees a disconnect timeout_ms later.
    net_host_destroy(h[1]);
    h[1] = NULL;
    uint64_t t_kill = net_memory_now(mem);
    mem_run(mem, h, logs, 4, NET_HOST_DEFAULT_TIMEOUT_MS + 100);
    cr_assert_eq(log_count(&logs[0], NET_EVENT_DISCONNECT), 2u);
    d = &logs[0].r[logs[0].n - 1];
    cr_assert_eq(d->type, NET_EVENT_DISCONNECT);
    cr_assert_eq(d->peer, handle[1]);
    cr_assert_eq(d->at, t_kill + NET_HOST_DEFAULT_TIMEOUT_MS);

    for (int i = 0; i < 4; i++) {
        net_host_destroy(h[i]);
        log_free(&logs[i]);
    }
    net_memory_destroy(mem);
}

Test(net_host_memory, refused_beyond_max_peers)
{
    net_memory *mem = net_memory_create(1);
    net_host_config cfg = net_host_default_config();
    cfg.max_peers = 2;
    net_host_config quick = net_host_default_config();
    quick.timeout_ms = 300;
    net_memory_link l = link_of(5, 0, 0, 0);
    net_host *h[5];
    evlog logs[5];
    memset(logs, 0, sizeof logs);
    h[0] = net_memory_listen(mem, "s", &cfg);
    h[1] = net_memory_connect(mem, "s", &l, &l, NULL);
    h[2] = net_memory_connect(mem, "s", &l, &l, NULL);
    h[3] = net_memory_connect(mem, "s", &l, &l, &quick);
    h[4] = net_memory_connect(mem, "nobody", &l, &l, &quick);
    cr_assert_not_null(h[4], "like ENet, a connect to no one fails later");
    mem_run(mem, h, logs, 5, 400);
    cr_assert_eq(log_count(&logs[0], NET_EVENT_CONNECT), 2u);
    net_host_stats s;
    net_host_stats_get(h[0], &s);
    cr_assert_eq(s.peers_refused, 1u);
    for (int i = 3; i <= 4; i++) {
        cr_assert_eq(logs[i].n, 1u);
        cr_assert_eq(logs[i].r[0].type, NET_EVENT_DISCONNECT);
    }
    cr_assert_eq(logs[3].r[0].at, 10u, "the refusal comes back after one round trip");
    cr_assert_eq(logs[4].r[0].at, 300u, "a connect to no one times out");
    // A slot freed by a disconnect is taken again.
    net_host_disconnect(h[0], 1);
    mem_run(mem, h, logs, 5, 20);
    cr_assert_not_null(log_find_type(&logs[2], NET_EVENT_DISCONNECT, 0));
    net_host_destroy(h[3]);
    h[3] = net_memory_connect(mem, "s", &l, &l, NULL);
    mem_run(mem, h, logs, 5, 20);
    cr_assert_eq(log_count(&logs[0], NET_EVENT_CONNECT), 3u);
    cr_assert_eq(logs[0].r[logs[0].n - 1].peer, 1u);
    for (int i = 0; i < 5; i++) {
        net_host_destroy(h[i]);
        log_free(&logs[i]);
    }
    net_memory_destroy(mem);
}

Test(net_host_memory, latency_is_exact_in_virtual_time)
{
    net_memory *mem = net_memory_create(3);
    net_memory_link up = link_of(30, 0, 0, 0), down = link_of(70, 0, 0, 0);
    net_host *h[2];
    evlog logs[2];
    memset(logs, 0, sizeof logs);
    h[0] = net_memory_listen(mem, "s", NULL);
    mem_run(mem, h, logs, 1, 5); // start at t = 5
    h[1] = net_memory_connect(mem, "s", &up, &down, NULL);
    mem_run(mem, h, logs, 2, 29);
    cr_assert_eq(logs[0].n, 0u, "nothing at t = 34");
    mem_run(mem, h, logs, 2, 1);
    cr_assert_eq(logs[0].n, 1u);
    cr_assert_eq(logs[0].r[0].type, NET_EVENT_CONNECT);
    cr_assert_eq(logs[0].r[0].at, 35u, "one up latency");
    mem_run(mem, h, logs, 2, 100);
    cr_assert_eq(logs[1].n, 1u);
    cr_assert_eq(logs[1].r[0].at, 105u, "and one down latency");

    // Messages sent at t: up at t + 30, down at t + 70, on every channel.
    uint64_t t = net_memory_now(mem);
    for (int ch = 0; ch < 3; ch++) {
        cr_assert(send_text(h[1], 0, (net_channel)ch, "up"));
        cr_assert(send_text(h[0], 0, (net_channel)ch, "down"));
    }
    mem_run(mem, h, logs, 2, 100);
    for (int ch = 0; ch < 3; ch++) {
        cr_assert_eq(log_find(&logs[0], 0, (uint8_t)ch, "up")->at, t + 30);
        cr_assert_eq(log_find(&logs[1], 0, (uint8_t)ch, "down")->at, t + 70);
    }
    // The server disconnects: the client hears it one down latency later.
    t = net_memory_now(mem);
    net_host_disconnect(h[0], 0);
    mem_run(mem, h, logs, 2, 100);
    cr_assert_eq(log_find_type(&logs[1], NET_EVENT_DISCONNECT, 0)->at, t + 70);
    // The server destroyed without notice: nothing; a new client's connect
    // to the vanished name times out.
    net_host_destroy(h[0]);
    h[0] = NULL;
    net_host_destroy(h[1]);
    h[1] = NULL;

    // Service never blocks: a long timeout returns at once on virtual time.
    net_host *s = net_memory_listen(mem, "t", NULL);
    net_event ev;
    uint64_t w0 = wall_ms();
    cr_assert_eq(net_host_service(s, &ev, 60000), NET_EVENT_NONE);
    cr_assert_lt(wall_ms() - w0, 30000u);
    net_host_destroy(s);
    for (int i = 0; i < 2; i++)
        log_free(&logs[i]);
    net_memory_destroy(mem);
}

// One scripted session on a lossy, jittery, duplicating network; every event
// of both hosts, with its time, goes into the logs.
static void lossy_session(uint64_t seed, evlog logs[3])
{
    net_memory *mem = net_memory_create(seed);
    net_memory_link up = link_of(20, 15, 150, 80), down = link_of(35, 25, 100, 60);
    net_host *h[3];
    h[0] = net_memory_listen(mem, "s", NULL);
    h[1] = net_memory_connect(mem, "s", &up, &down, NULL);
    h[2] = net_memory_connect(mem, "s", &down, &up, NULL);
    mem_run(mem, h, logs, 3, 100);
    uint8_t buf[64];
    for (uint32_t tick = 0; tick < 300; tick++) {
        for (int c = 1; c <= 2; c++) {
            fill_pattern(buf, sizeof buf, tick * 3 + (uint32_t)c);
            buf[0] = (uint8_t)tick;
            cr_assert(net_host_send(h[c], 0, NET_CHANNEL_INPUT, buf, 8 + tick % 40));
            cr_assert(net_host_send(h[0], (uint32_t)c - 1, NET_CHANNEL_SNAPSHOT, buf, 20 + tick % 30));
            if (tick % 16 == 0)
                cr_assert(net_host_send(h[c], 0, NET_CHANNEL_CONTROL, buf, 5));
        }
        mem_run(mem, h, logs, 3, 16);
    }
    net_host_disconnect(h[2], 0);
    mem_run(mem, h, logs, 3, 200);
    for (int i = 0; i < 3; i++)
        net_host_destroy(h[i]);
    net_memory_destroy(mem);
}

static bool logs_equal(const evlog *a, const evlog *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const rec *x = &a->r[i], *y = &b->r[i];
        if (x->type != y->type || x->peer != y->peer || x->channel != y->channel || x->length != y->length ||
            x->at != y->at || (x->length && memcmp(x->data, y->data, x->length) != 0))
            return false;
    }
    return true;
}

Test(net_host_memory, same_seed_same_events)
{
    evlog a[3], b[3], c[3];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    memset(c, 0, sizeof c);
    lossy_session(42, a);
    lossy_session(42, b);
    lossy_session(43, c);
    bool all_same_c = true;
    for (int i = 0; i < 3; i++) {
        cr_assert_gt(a[i].n, 100u);
        cr_assert(logs_equal(&a[i], &b[i]), "host %d: same seed, same events", i);
        all_same_c = all_same_c && logs_equal(&a[i], &c[i]);
    }
    cr_assert_not(all_same_c, "another seed gives other events");
    cr_assert_eq(log_count(&a[0], NET_EVENT_DISCONNECT), 1u);
    for (int i = 0; i < 3; i++) {
        log_free(&a[i]);
        log_free(&b[i]);
        log_free(&c[i]);
    }
}

Test(net_host_memory, loss_duplication_and_order_as_configured)
{
    net_memory *mem = net_memory_create(2024);
    net_memory_link up = link_of(40, 30, 100, 50), down = link_of(40, 0, 0, 0);
    net_host *h[2];
    evlog logs[2];
    memset(logs, 0, sizeof logs);
    h[0] = net_memory_listen(mem, "s", NULL);
    h[1] = net_memory_connect(mem, "s", &up, &down, NULL);
    mem_run(mem, h, logs, 2, 100);
    cr_assert_eq(log_count(&logs[1], NET_EVENT_CONNECT), 1u);
    enum { N = 10000, CONTROL = 500 };
    for (uint32_t i = 0; i < N; i++) {
        uint8_t m[4] = {(uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
        cr_assert(net_host_send(h[1], 0, NET_CHANNEL_INPUT, m, sizeof m));
        if (i % (N / CONTROL) == 0)
            cr_assert(net_host_send(h[1], 0, NET_CHANNEL_CONTROL, m, sizeof m));
        if (i % 10 == 9)
            mem_run(mem, h, logs, 2, 1);
    }
    mem_run(mem, h, logs, 2, 200);
    static uint8_t seen[N];
    memset(seen, 0, sizeof seen);
    uint32_t received = 0, unique = 0, duplicates = 0, reordered = 0, controls = 0;
    int64_t last = -1, last_control = -1;
    for (size_t k = 0; k < logs[0].n; k++) {
        const rec *r = &logs[0].r[k];
        if (r->type != NET_EVENT_RECEIVE)
            continue;
        cr_assert_eq(r->length, 4u);
        uint32_t i = (uint32_t)r->data[0] << 24 | (uint32_t)r->data[1] << 16 | (uint32_t)r->data[2] << 8 | r->data[3];
        cr_assert_lt(i, (uint32_t)N);
        if (r->channel == NET_CHANNEL_CONTROL) {
            cr_assert_gt((int64_t)i, last_control, "control arrives in order, once");
            last_control = i;
            controls++;
            continue;
        }
        received++;
        if (seen[i]++)
            duplicates++;
        else
            unique++;
        if ((int64_t)i < last)
            reordered++;
        else
            last = i;
    }
    double loss = 1.0 - (double)unique / N, dup = (double)duplicates / unique;
    cr_log_info("loss %.4f (configured 0.100), duplicates %.4f (0.050), %u reordered", loss, dup, reordered);
    cr_assert_eq(controls, (uint32_t)CONTROL, "control is never lost");
    cr_assert(loss > 0.085 && loss < 0.115, "loss %.4f", loss);
    cr_assert(dup > 0.038 && dup < 0.062, "duplication %.4f", dup);
    cr_assert_gt(reordered, 0u, "jitter reorders unreliable messages");
    net_host_stats s;
    net_host_stats_get(h[0], &s);
    cr_assert_eq(s.messages_received, received + controls);
    net_host_stats_get(h[1], &s);
    cr_assert_eq(s.messages_sent, (uint64_t)N + CONTROL);
    cr_assert_eq(s.wire_sent, (uint64_t)(N + CONTROL) * (4 + 38));
    for (int i = 0; i < 2; i++) {
        net_host_destroy(h[i]);
        log_free(&logs[i]);
    }
    net_memory_destroy(mem);
}

Test(net_host_memory, hosts_outlive_the_network_safely)
{
    net_memory *mem = net_memory_create(9);
    net_host *s = net_memory_listen(mem, "s", NULL);
    net_host *c = net_memory_connect(mem, "s", NULL, NULL, NULL);
    net_event ev;
    cr_assert_eq(net_host_service(s, &ev, 0), NET_EVENT_CONNECT);
    cr_assert_eq(net_host_service(c, &ev, 0), NET_EVENT_CONNECT, "zero latency: at once");
    net_memory_destroy(mem);
    cr_assert_eq(net_host_service(s, &ev, 0), NET_EVENT_NONE);
    cr_assert_not(send_text(c, 0, NET_CHANNEL_CONTROL, "x"));
    net_host_disconnect(c, 0);
    net_host_destroy(c);
    net_host_destroy(s);
    net_host_config bad = net_host_default_config();
    bad.cookie = 0;
    mem = net_memory_create(9);
    cr_assert_null(net_memory_listen(mem, "s", &bad));
    net_memory_link l = link_of(0, 0, 1001, 0);
    cr_assert_null(net_memory_connect(mem, "s", &l, NULL, NULL));
    net_memory_destroy(mem);
}
