// keel tests: joins over the ENet host with one datagram lost, on a virtual
// clock. This executable defines enet_time_get, which libenet calls through
// its PLT as keel_net's enet_socket_send is (host_enet_frame.c), so ENet's
// timers and keel's watchdog run on the test's clock; the datagrams go over
// loopback through a relay in the test that delays them by a virtual
// latency and drops the one chosen. Every service call waits for nothing,
// so a run is the same every time: times are asserted exactly.
//
// A join here is what keel's is: at its CONNECT the client sends a hello
// (control) and a ping (input); the server answers the hello with a welcome
// (control); the join is over when the welcome arrives. A lost datagram may
// cost its retransmission, paced from the measured round trip (ENet's
// timeout from one sample: three round trips), and a millisecond of
// servicing -- never a failed join, nor seconds (docs/transport.md,
// "Joining"). MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <keel/net_host.h>
#include <keel/net_token.h>

#include "test_support.h"
#include "token_fixture.h"

static uint32_t virtual_ms = 1000;

// ENet's clock (libenet's own is gettimeofday's): the test's.
uint32_t enet_time_get(void);
uint32_t enet_time_get(void) { return virtual_ms; }

TestSuite(net_join, .timeout = 300);

enum { QUEUE = 256, MAX_DATAGRAM = 1600 };

typedef struct datagram {
    uint32_t at;
    bool to_server;
    size_t n;
    uint8_t d[MAX_DATAGRAM];
} datagram;

// The relay: the client talks to `front`, the server hears `back`.
typedef struct relay {
    int front, back;
    struct sockaddr_in server, client;
    bool has_client;
    uint32_t latency_ms; ///< each way
    datagram q[QUEUE];
    size_t count;
    const char *drop; ///< drop the first datagram holding these bytes
    bool drop_to_server;
    bool dropped;
    unsigned drop_after; ///< ... and only one that comes after this many of its direction
    unsigned seen[2];
    unsigned loss_every;     ///< also drop every loss_every-th datagram of each direction (0: none)
    uint32_t last_to_server; ///< when a datagram was last delivered to the server
    bool drop_to_client_now; ///< drop every datagram to the client taken by the next step
    unsigned dropped_to_client_now;
} relay;

static int udp_socket(uint16_t *port)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    cr_assert_geq(s, 0);
    struct sockaddr_in a;
    keel_test_loopback(&a, 0);
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &len);
    fcntl(s, F_SETFL, O_NONBLOCK);
    if (port)
        *port = ntohs(a.sin_port);
    return s;
}

static bool holds(const uint8_t *d, size_t n, const char *text)
{
    size_t k = strlen(text);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(d + i, text, k) == 0)
            return true;
    return false;
}

static void relay_take(relay *r, int s, bool to_server)
{
    for (;;) {
        datagram g;
        struct sockaddr_in from;
        socklen_t len = sizeof from;
        ssize_t n = recvfrom(s, g.d, sizeof g.d, 0, (struct sockaddr *)&from, &len);
        if (n <= 0)
            return;
        if (to_server && !r->has_client) {
            r->client = from;
            r->has_client = true;
        }
        unsigned k = r->seen[to_server]++;
        if (!to_server && r->drop_to_client_now) {
            r->dropped_to_client_now++;
            continue;
        }
        if (r->loss_every && k % r->loss_every == r->loss_every - 1u)
            continue;
        if (!r->dropped && r->drop && r->drop_to_server == to_server && k >= r->drop_after &&
            holds(g.d, (size_t)n, r->drop)) {
            r->dropped = true;
            continue;
        }
        cr_assert_lt(r->count, (size_t)QUEUE);
        g.at = virtual_ms + r->latency_ms;
        g.to_server = to_server;
        g.n = (size_t)n;
        r->q[r->count++] = g;
    }
}

// Takes what the hosts sent; sends what is due (in the order taken).
static void relay_step(relay *r)
{
    relay_take(r, r->front, true);
    relay_take(r, r->back, false);
    r->drop_to_client_now = false;
    size_t keep = 0;
    for (size_t i = 0; i < r->count; i++) {
        datagram *g = &r->q[i];
        if (g->at > virtual_ms) {
            r->q[keep++] = *g;
            continue;
        }
        if (g->to_server) {
            sendto(r->back, g->d, g->n, 0, (struct sockaddr *)&r->server, sizeof r->server);
            r->last_to_server = virtual_ms;
        } else
            sendto(r->front, g->d, g->n, 0, (struct sockaddr *)&r->client, sizeof r->client);
    }
    r->count = keep;
}

typedef struct join_result {
    bool joined;
    uint32_t ms;           ///< from the client's CONNECT to the welcome
    uint32_t connect_ms;   ///< from the start to the client's CONNECT
    bool dropped;          ///< the datagram chosen was seen and dropped
    net_leave_state leave; ///< leaving: how the leave ended
    uint32_t leave_ms;     ///< leaving: how long it took
    uint8_t ended;         ///< a connection ended (either side's reason)
    uint8_t server_saw;    ///< leaving: the reason of the server's DISCONNECT (0: none)
    uint64_t acked_again;  ///< the server's leaves_acknowledged_again
} join_result;

// What a join (and a leave) goes through.
typedef struct join_spec {
    uint32_t latency_ms; ///< each way
    /// Drop the first datagram towards the server (to_server) or the client
    /// holding `drop` (NULL: none) after `drop_after` others of that direction.
    const char *drop;
    bool to_server;
    unsigned drop_after;
    bool leave;             ///< then the client leaves with net_host_leave
    bool leave_loses_first; ///< ... its first datagram from then on lost
    /// ... the server's datagrams of the millisecond in which it counted
    /// the leave lost (the acknowledgement of the DISCONNECT)
    bool leave_loses_ack;
    bool secure; ///< a secure server and client (a token, authenticated datagrams)
} join_spec;

static join_result join_run(const join_spec *spec);

static join_result join(uint32_t latency_ms, const char *drop, bool to_server, unsigned drop_after)
{
    return join_run(
        &(join_spec){.latency_ms = latency_ms, .drop = drop, .to_server = to_server, .drop_after = drop_after});
}

static join_result join_leave(uint32_t latency_ms, bool leave_loses_first)
{
    return join_run(&(join_spec){.latency_ms = latency_ms, .leave = true, .leave_loses_first = leave_loses_first});
}

static net_token_key key;

// Secure hosts behind the relay: the server's public address is the
// relay's front, which the client's token lists.
static void secure_configs(net_host_config *sc, net_host_config *cc, uint8_t token[NET_TOKEN_BYTES],
                           uint16_t front_port, char *public_address, size_t size)
{
    static bool have_key;
    if (!have_key)
        cr_assert(net_token_key_generate(&key));
    have_key = true;
    snprintf(public_address, size, "127.0.0.1:%u", (unsigned)front_port);
    *sc = net_host_default_config();
    sc->token_key = &key;
    sc->protocol_id = KEEL_TEST_PROTOCOL;
    sc->public_address = public_address;
    net_token_params tp;
    keel_test_token_params(&tp);
    uint64_t now = (uint64_t)time(NULL);
    tp.create_time = now;
    tp.expire_time = now + 300;
    tp.server_count = 1;
    memset(tp.servers, 0, sizeof tp.servers);
    cr_assert(net_token_address_parse(public_address, &tp.servers[0]));
    const char *err = NULL;
    cr_assert(net_token_issue(&tp, &key, token, &err), "%s", err ? err : "?");
    *cc = net_host_default_config();
    cc->connect_token = token;
}

static join_result join_run(const join_spec *spec)
{
    static relay r; // (large: not on the stack)
    uint32_t latency_ms = spec->latency_ms;
    bool leave = spec->leave;
    r = (relay){.latency_ms = latency_ms,
                .drop = spec->drop,
                .drop_to_server = spec->to_server,
                .drop_after = spec->drop_after};
    uint16_t front_port;
    r.front = udp_socket(&front_port);
    r.back = udp_socket(NULL);
    net_host_config sc, cc;
    uint8_t token[NET_TOKEN_BYTES];
    char public_address[32];
    if (spec->secure)
        secure_configs(&sc, &cc, token, front_port, public_address, sizeof public_address);
    const char *err = NULL;
    net_host *sv = net_host_listen("127.0.0.1", 0, spec->secure ? &sc : NULL, &err);
    cr_assert_not_null(sv, "%s", err ? err : "?");
    keel_test_loopback(&r.server, net_host_port(sv));
    net_host *cl = net_host_connect("127.0.0.1", front_port, spec->secure ? &cc : NULL, &err);
    cr_assert_not_null(cl, "%s", err ? err : "?");
    join_result res = {.leave = NET_LEAVE_NOT_CONNECTED};
    uint32_t start = virtual_ms, connected = 0, joined_at = 0, peer = UINT32_MAX;
    bool up = false;
    // Until the welcome, and (not leaving) 3 s more of play: an input every
    // 16 ms from the client's CONNECT on, a snapshot every 16 ms from the
    // server once it has the hello.
    uint32_t tail_ms = leave ? 0 : 3000;
    for (uint32_t step = 0; step < 20000 && (!res.joined || virtual_ms < joined_at + tail_ms) && !res.ended; step++) {
        net_event ev;
        while (net_host_service(cl, &ev, 0) != NET_EVENT_NONE) {
            if (ev.type == NET_EVENT_CONNECT) {
                up = true;
                connected = virtual_ms;
                cr_assert(net_host_send(cl, 0, NET_CHANNEL_CONTROL, (const uint8_t *)"hello-keel", 10));
                cr_assert(net_host_send(cl, 0, NET_CHANNEL_INPUT, (const uint8_t *)"ping-keel", 9));
            } else if (ev.type == NET_EVENT_RECEIVE && ev.channel == NET_CHANNEL_CONTROL && !res.joined) {
                res.joined = ev.length == 12 && memcmp(ev.data, "welcome-keel", 12) == 0;
                joined_at = virtual_ms;
            } else if (ev.type == NET_EVENT_DISCONNECT) {
                res.ended = ev.reason;
                cr_log_info("the client's connection ended (%s) at %u ms", net_disconnect_reason_name(ev.reason),
                            virtual_ms - start);
                break;
            }
        }
        if (up && !res.ended && virtual_ms % 16 == 0)
            net_host_send(cl, 0, NET_CHANNEL_INPUT, (const uint8_t *)"input", 5);
        net_host_flush(cl);
        while (net_host_service(sv, &ev, 0) != NET_EVENT_NONE) {
            if (ev.type == NET_EVENT_RECEIVE && ev.channel == NET_CHANNEL_CONTROL && ev.length == 10 &&
                memcmp(ev.data, "hello-keel", 10) == 0) {
                peer = ev.peer;
                net_host_send(sv, ev.peer, NET_CHANNEL_CONTROL, (const uint8_t *)"welcome-keel", 12);
            } else if (ev.type == NET_EVENT_DISCONNECT) {
                res.ended = ev.reason;
            }
        }
        if (peer != UINT32_MAX && virtual_ms % 16 == 8)
            net_host_send(sv, peer, NET_CHANNEL_SNAPSHOT, (const uint8_t *)"snapshot", 8);
        net_host_flush(sv);
        relay_step(&r);
        if (!res.joined || virtual_ms < joined_at + tail_ms)
            virtual_ms++;
    }
    res.ms = up && res.joined ? joined_at - connected : 0;
    res.connect_ms = up ? connected - start : 0;
    res.dropped = r.dropped;
    uint32_t leave_start = virtual_ms;
    if (leave && res.joined) {
        r.drop = spec->leave_loses_first ? "" : NULL;
        r.drop_to_server = true;
        r.drop_after = r.seen[1];
        r.dropped = false;
        res.leave = NET_LEAVE_PENDING;
        // until the leave is over and the server counted it (or 2 s)
        for (uint32_t step = 0; step < 2000 && (res.leave == NET_LEAVE_PENDING || !res.server_saw); step++) {
            if (res.leave == NET_LEAVE_PENDING)
                res.leave = net_host_leave(cl, 0);
            net_event ev;
            while (net_host_service(sv, &ev, 0) != NET_EVENT_NONE) {
                if (ev.type == NET_EVENT_DISCONNECT && !res.server_saw) {
                    res.server_saw = ev.reason;
                    r.drop_to_client_now = spec->leave_loses_ack;
                }
            }
            net_host_flush(sv);
            relay_step(&r);
            if (res.leave == NET_LEAVE_PENDING)
                res.leave_ms = virtual_ms + 1u - leave_start;
            virtual_ms++;
        }
        res.dropped = spec->leave_loses_ack ? r.dropped_to_client_now > 0 : r.dropped;
    }
    net_host_stats st;
    net_host_stats_get(sv, &st);
    res.acked_again = st.leaves_acknowledged_again;
    net_host_destroy(cl);
    net_host_destroy(sv);
    close(r.front);
    close(r.back);
    virtual_ms += 60000; // nothing of this join is left in the next one's time
    return res;
}

Test(net_join, a_lost_hello_welcome_or_acknowledgement_costs_at_most_its_retransmission)
{
    // The datagrams a join can lose after the connect: the client's with
    // the hello (it also acknowledges the server's VERIFY_CONNECT), the
    // server's welcome, and the server's first datagram after its
    // VERIFY_CONNECT (the acknowledgement of the hello, which ENet sends
    // in the welcome's datagram when keel answers at once). The client's
    // acknowledgement of the welcome comes after the join. 67 round trips
    // from 4 to 400 ms: 201 joins.
    static const struct {
        const char *name, *bytes;
        bool to_server;
        unsigned after;
    } losses[] = {
        {"hello (with the acknowledgement of VERIFY_CONNECT)", "hello-keel", true, 0},
        {"welcome", "welcome-keel", false, 0},
        {"server's first datagram after the hello (its acknowledgement)", "", false, 1},
    };
    unsigned joins = 0, failed = 0, over = 0;
    for (uint32_t latency = 2; latency <= 200; latency += 3) {
        join_result control = join(latency, NULL, false, 0);
        cr_assert(control.joined, "latency %u ms: the control join failed", latency);
        uint32_t rtt = 2u * latency;
        for (size_t k = 0; k < sizeof losses / sizeof losses[0]; k++) {
            join_result j = join(latency, losses[k].bytes, losses[k].to_server, losses[k].after);
            joins++;
            failed += !j.joined;
            // ENet's retransmission timeout from one sample is three round
            // trips (the sample a millisecond or two longer: servicing);
            // and one tick at 64 Hz.
            uint32_t bound = control.ms + 3u * rtt + 16u;
            bool in_bound = j.joined && j.ms <= bound;
            over += !in_bound;
            cr_log_info("latency %3u ms each way, %s lost: joined %s after %u ms (control %u ms; bound %u ms)\n",
                        latency, losses[k].name, j.joined ? "yes" : "NO", j.ms, control.ms, bound);
            cr_expect(j.dropped, "%s: no such datagram was seen", losses[k].name);
            cr_expect_eq(j.ended, 0, "latency %u ms, %s lost: a connection ended (%s) in the 3 s of play after",
                         latency, losses[k].name, net_disconnect_reason_name((net_disconnect_reason)j.ended));
            cr_expect(in_bound, "latency %u ms, %s lost: the join took %u ms against %u ms without the loss", latency,
                      losses[k].name, j.ms, control.ms);
        }
    }
    cr_log_info("%u joins with one datagram lost: %u failed, %u over the bound\n", joins, failed, over);
    cr_expect_eq(failed, 0u);
}

Test(net_join, a_lost_disconnect_costs_a_round_and_a_half)
{
    // A leave whose DISCONNECT is lost: it is sent again one and a half
    // round trips (+ 10 ms) after it went, not at ENet's doubling timeout,
    // so the server sees it and acknowledges it within NET_LEAVE_MAX_MS.
    unsigned done = 0, runs = 0;
    for (uint32_t latency = 5; latency <= 150; latency += 5) {
        join_result control = join_leave(latency, false);
        join_result j = join_leave(latency, true);
        cr_assert(control.joined && j.joined);
        uint32_t rtt = 2u * latency, bound = control.leave_ms + rtt + rtt / 2u + 10u + 4u; // (4 ms: servicing)
        cr_log_info("latency %3u ms each way: the leave %s after %u ms with its DISCONNECT lost (control: %s after %u "
                    "ms; bound %u ms)\n",
                    latency, j.leave == NET_LEAVE_DONE ? "acknowledged" : "NOT acknowledged", j.leave_ms,
                    control.leave == NET_LEAVE_DONE ? "acknowledged" : "NOT acknowledged", control.leave_ms, bound);
        cr_expect_eq(control.leave, NET_LEAVE_DONE);
        cr_expect(j.dropped, "latency %u ms: nothing was lost", latency);
        cr_expect(j.leave == NET_LEAVE_DONE && j.leave_ms <= bound, "latency %u ms: %u ms against %u", latency,
                  j.leave_ms, control.leave_ms);
        done += j.leave == NET_LEAVE_DONE;
        runs++;
    }
    cr_log_info("%u of %u leaves with the DISCONNECT lost were acknowledged\n", done, runs);
}

Test(net_join, a_leave_whose_acknowledgement_is_lost_is_acknowledged_again)
{
    // The server counts the leave and acknowledges the DISCONNECT; that
    // datagram is lost. ENet has forgotten the connection, so the client's
    // DISCONNECT sent again (one and a half round trips on) would go
    // unanswered and the leave would end unacknowledged after
    // NET_LEAVE_MAX_MS; the server acknowledges it again instead (a leave's
    // echo, for NET_LEAVE_MAX_MS after it counted the leave): the leave is
    // acknowledged a round and a half later than without the loss. Plain
    // and secure (the echo authenticated with the connection's keys).
    unsigned done = 0, runs = 0;
    for (int secure = 0; secure <= 1; secure++) {
        for (uint32_t latency = 5; latency <= 150; latency += 29) {
            join_spec spec = {.latency_ms = latency, .leave = true, .secure = secure};
            join_result control = join_run(&spec);
            spec.leave_loses_ack = true;
            join_result j = join_run(&spec);
            cr_assert(control.joined && j.joined, "%s, latency %u ms: no join", secure ? "secure" : "plain", latency);
            uint32_t rtt = 2u * latency, bound = control.leave_ms + rtt + rtt / 2u + 10u + 4u; // (4 ms: servicing)
            cr_log_info("%s, latency %3u ms each way: the server counted the leave (%s); its acknowledgement lost, "
                        "the leave %s after %u ms (control: %s after %u ms; bound %u ms)\n",
                        secure ? "secure" : "plain", latency,
                        net_disconnect_reason_name((net_disconnect_reason)j.server_saw),
                        j.leave == NET_LEAVE_DONE ? "acknowledged" : "NOT acknowledged", j.leave_ms,
                        control.leave == NET_LEAVE_DONE ? "acknowledged" : "NOT acknowledged", control.leave_ms, bound);
            cr_expect_eq(control.leave, NET_LEAVE_DONE);
            cr_expect_eq(control.server_saw, (uint8_t)NET_DISCONNECT_LEFT);
            cr_expect_eq(j.server_saw, (uint8_t)NET_DISCONNECT_LEFT, "latency %u ms", latency);
            cr_expect(j.dropped, "latency %u ms: nothing was lost", latency);
            cr_expect_eq(control.acked_again, 0u);
            cr_expect_eq(j.acked_again, 1u, "latency %u ms", latency);
            cr_expect(j.leave == NET_LEAVE_DONE && j.leave_ms <= bound, "%s, latency %u ms: %s after %u ms against %u",
                      secure ? "secure" : "plain", latency, j.leave == NET_LEAVE_DONE ? "done" : "not done", j.leave_ms,
                      control.leave_ms);
            done += j.leave == NET_LEAVE_DONE;
            runs++;
        }
    }
    cr_log_info("%u of %u leaves whose acknowledgement was lost were acknowledged\n", done, runs);
}

// ---- liveness ------------------------------------------------------------------------

typedef struct stall_result {
    uint32_t client_end, server_end; ///< the DISCONNECT reasons (0: none)
    uint32_t server_end_ms;          ///< when the server's came, from the stall's start
    uint32_t server_silence_ms;      ///< when the server's came, from the last datagram it got
} stall_result;

// A client that plays (an input every 16 ms; the server a snapshot every
// 32 ms and a control message every 500 ms) over a relay losing every 20th
// datagram each way, then stops for stall_ms (not serviced, sends nothing;
// the server goes on), then plays 3 s more.
static stall_result stall_run(uint32_t latency_ms, uint32_t stall_ms)
{
    static relay r;
    r = (relay){.latency_ms = latency_ms, .loss_every = 20};
    net_host *sv = net_host_listen("127.0.0.1", 0, NULL, NULL);
    cr_assert_not_null(sv);
    uint16_t front_port;
    r.front = udp_socket(&front_port);
    r.back = udp_socket(NULL);
    keel_test_loopback(&r.server, net_host_port(sv));
    net_host *cl = net_host_connect("127.0.0.1", front_port, NULL, NULL);
    cr_assert_not_null(cl);
    stall_result res = {0, 0, 0, 0};
    bool cl_up = false, sv_up = false;
    uint32_t peer = 0, t = 0, stall_at = 0;
    enum { PLAY_MS = 2000, AFTER_MS = 3000 };
    for (; t < 100000; t++, virtual_ms++) {
        bool stopped = cl_up && sv_up && t >= stall_at && t < stall_at + stall_ms && stall_at;
        net_event ev;
        if (!stopped && !res.client_end) {
            while (net_host_service(cl, &ev, 0) != NET_EVENT_NONE) {
                cl_up |= ev.type == NET_EVENT_CONNECT;
                if (ev.type == NET_EVENT_DISCONNECT)
                    res.client_end = ev.reason;
            }
            if (cl_up && !res.client_end && t % 16 == 0)
                net_host_send(cl, 0, NET_CHANNEL_INPUT, (const uint8_t *)"input", 5);
            net_host_flush(cl);
        }
        while (!res.server_end && net_host_service(sv, &ev, 0) != NET_EVENT_NONE) {
            if (ev.type == NET_EVENT_CONNECT) {
                sv_up = true;
                peer = ev.peer;
            } else if (ev.type == NET_EVENT_DISCONNECT) {
                res.server_end = ev.reason;
                res.server_end_ms = t - stall_at;
                res.server_silence_ms = virtual_ms - r.last_to_server;
            }
        }
        if (sv_up && !res.server_end) {
            if (t % 32 == 0)
                net_host_send(sv, peer, NET_CHANNEL_SNAPSHOT, (const uint8_t *)"snapshot", 8);
            if (t % 500 == 0)
                net_host_send(sv, peer, NET_CHANNEL_CONTROL, (const uint8_t *)"control", 7);
        }
        net_host_flush(sv);
        relay_step(&r);
        if (cl_up && sv_up && !stall_at)
            stall_at = t + PLAY_MS;
        if ((stall_at && t >= stall_at + stall_ms + AFTER_MS) || (res.client_end && res.server_end))
            break;
    }
    cr_assert(stall_at, "never connected");
    net_host_destroy(cl);
    net_host_destroy(sv);
    close(r.front);
    close(r.back);
    virtual_ms += 60000;
    return res;
}

Test(net_join, a_stall_shorter_than_the_silence_loses_nobody_and_a_longer_one_ends_at_it)
{
    // Stops of 3, 6 and 9.5 s on a link losing 5% each way: the client
    // reads what waited for it and nobody's connection ends (before, ENet
    // ended the client's after 5 s: its ping sent before the stop
    // unacknowledged). A stop of 12 s: the server ends the connection
    // NET_HOST_DEFAULT_TIMEOUT_MS after the client's last datagram arrived
    // (+ 1 ms: the relay delivers it at the end of a step, the server reads
    // it in the next).
    static const uint32_t stops[] = {3000, 6000, 9500};
    for (uint32_t latency = 10; latency <= 150; latency += 70) {
        for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
            stall_result s = stall_run(latency, stops[k]);
            cr_log_info("latency %u ms, stop %u ms: client %s, server %s\n", latency, stops[k],
                        s.client_end ? net_disconnect_reason_name((net_disconnect_reason)s.client_end) : "connected",
                        s.server_end ? net_disconnect_reason_name((net_disconnect_reason)s.server_end) : "connected");
            cr_expect_eq(s.client_end, 0u, "latency %u ms, stop %u ms: the client's connection ended", latency,
                         stops[k]);
            cr_expect_eq(s.server_end, 0u, "latency %u ms, stop %u ms: the server's connection ended", latency,
                         stops[k]);
        }
        stall_result s = stall_run(latency, 12000);
        cr_log_info("latency %u ms, stop 12000 ms: server %s %u ms into the stop, %u ms after the last datagram\n",
                    latency,
                    s.server_end ? net_disconnect_reason_name((net_disconnect_reason)s.server_end) : "connected",
                    s.server_end_ms, s.server_silence_ms);
        cr_expect_eq(s.server_end, (uint32_t)NET_DISCONNECT_TIMEOUT);
        cr_expect_eq(s.server_silence_ms, NET_HOST_DEFAULT_TIMEOUT_MS + 1u, "latency %u ms", latency);
    }
}
