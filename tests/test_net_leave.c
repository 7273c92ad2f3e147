// keel tests: how connections end (net_host.h): a client's leave
// (net_host_leave), a close, a timeout, a refused connect, and the reason
// each DISCONNECT event carries, on the in-memory network (exact virtual
// times) and over ENet on loopback (counts and reasons only; the loops are
// bounded but nothing asserts how fast anything is). MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include <keel/net_host.h>

typedef struct seen {
    net_event_type type;
    uint8_t reason;
    uint32_t peer;
    uint64_t at;
} seen;

// The first CONNECT or DISCONNECT of each host (RECEIVEs are drained).
typedef struct watch {
    seen connect, disconnect;
    unsigned disconnects;
    uint32_t peers[8]; ///< the peers connected, in order (a server's clients)
    unsigned connects;
} watch;

static void drain(net_host *h, watch *w, uint64_t now)
{
    net_event ev;
    while (net_host_service(h, &ev, 0) != NET_EVENT_NONE) {
        seen s = {ev.type, ev.reason, ev.peer, now};
        if (ev.type == NET_EVENT_CONNECT && w->connect.type == NET_EVENT_NONE)
            w->connect = s;
        if (ev.type == NET_EVENT_CONNECT && w->connects < 8)
            w->peers[w->connects++] = ev.peer;
        if (ev.type == NET_EVENT_DISCONNECT && w->disconnects++ == 0)
            w->disconnect = s;
        if (ev.type != NET_EVENT_DISCONNECT)
            cr_assert_eq(ev.reason, NET_DISCONNECT_NONE);
    }
}

// ---- memory ----------------------------------------------------------------------------

static void mem_step(net_memory *mem, net_host **h, watch *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (h[i])
            drain(h[i], &w[i], net_memory_now(mem));
    net_memory_advance(mem, 1);
}

// A server "s" (h[0]) and one client (h[1]), connected after `steps` ms.
static net_memory *pair_up(const net_memory_link *up, const net_memory_link *down, net_host **h, watch *w, int steps)
{
    net_memory *mem = net_memory_create(7);
    memset(w, 0, 2 * sizeof *w);
    h[0] = net_memory_listen(mem, "s", NULL);
    h[1] = net_memory_connect(mem, "s", up, down, NULL);
    for (int i = 0; i < steps; i++)
        mem_step(mem, h, w, 2);
    cr_assert_eq(w[1].connect.type, NET_EVENT_CONNECT);
    return mem;
}

// Calls net_host_leave on h[1] each virtual ms (draining h[0], when there is
// one) until the leave is over; *at is the virtual time it was.
static net_leave_state leave_over(net_memory *mem, net_host **h, watch *w, uint64_t *at)
{
    net_leave_state st = NET_LEAVE_PENDING;
    for (int i = 0; i < 3000 && st == NET_LEAVE_PENDING; i++) {
        if (h[0])
            drain(h[0], &w[0], net_memory_now(mem));
        st = net_host_leave(h[1], 0);
        *at = net_memory_now(mem);
        net_memory_advance(mem, 1);
    }
    return st;
}

Test(net_leave_memory, a_leave_is_seen_as_a_leave_and_acknowledged_one_round_trip_later)
{
    net_memory_link up = {40, 0, 0, 0}, down = {35, 0, 0, 0};
    net_host *h[2];
    watch w[2];
    net_memory *mem = pair_up(&up, &down, h, w, 100);
    uint64_t t0 = net_memory_now(mem);
    cr_assert_eq(net_host_leave(h[1], 0), NET_LEAVE_PENDING);
    uint64_t done_at = 0;
    cr_assert_eq(leave_over(mem, h, w, &done_at), NET_LEAVE_DONE);
    cr_assert_eq(done_at - t0, 75u, "acknowledged after one round trip (40 + 35 ms)");
    cr_assert_eq(w[0].disconnect.type, NET_EVENT_DISCONNECT);
    cr_assert_eq(w[0].disconnect.reason, NET_DISCONNECT_LEFT);
    cr_assert_eq(w[0].disconnect.at - t0, 40u);
    cr_assert_eq(w[1].disconnects, 0u, "the leaving side reports nothing");
    cr_assert_eq(net_host_leave(h[1], 0), NET_LEAVE_DONE, "asked again, the same answer");
    net_host_destroy(h[1]);
    h[1] = NULL;
    for (int i = 0; i < 6000; i++)
        mem_step(mem, h, w, 2);
    cr_assert_eq(w[0].disconnects, 1u, "no timeout follows a leave");
    net_host_destroy(h[0]);
    net_memory_destroy(mem);
}

Test(net_leave_memory, a_vanished_client_times_out_and_a_closed_one_is_closed)
{
    net_memory *mem = net_memory_create(7);
    net_memory_link l = {20, 0, 0, 0};
    net_host_config quick = net_host_default_config();
    quick.timeout_ms = 700;
    net_host *h[3];
    watch w[3];
    memset(w, 0, sizeof w);
    h[0] = net_memory_listen(mem, "s", &quick);
    h[1] = net_memory_connect(mem, "s", &l, &l, NULL);
    h[2] = net_memory_connect(mem, "s", &l, &l, NULL);
    for (int i = 0; i < 50; i++)
        mem_step(mem, h, w, 3);
    uint64_t t0 = net_memory_now(mem);
    net_host_destroy(h[1]); // killed: not a word
    h[1] = NULL;
    net_host_disconnect(h[0], w[0].peers[1]); // the server closes the second client
    for (int i = 0; i < 1000; i++)
        mem_step(mem, h, w, 3);
    cr_assert_eq(w[0].disconnects, 1u);
    cr_assert_eq(w[0].disconnect.reason, NET_DISCONNECT_TIMEOUT);
    cr_assert_eq(w[0].disconnect.at - t0, 700u);
    cr_assert_eq(w[2].disconnect.reason, NET_DISCONNECT_CLOSED);
    cr_assert_eq(w[2].disconnect.at - t0, 20u);
    cr_assert_eq(net_host_leave(h[2], 0), NET_LEAVE_NOT_CONNECTED, "closed already");
    cr_assert_eq(net_host_leave(h[0], 0), NET_LEAVE_NOT_CONNECTED, "a server does not leave");
    net_host_destroy(h[2]);
    net_host_destroy(h[0]);
    net_memory_destroy(mem);
}

Test(net_leave_memory, a_leave_towards_a_server_that_is_gone_gives_up_after_the_bound)
{
    net_memory_link l = {10, 0, 0, 0};
    net_host *h[2];
    watch w[2];
    net_memory *mem = pair_up(&l, &l, h, w, 30);
    net_host_destroy(h[0]);
    h[0] = NULL;
    uint64_t t0 = net_memory_now(mem);
    uint64_t at = 0;
    cr_assert_eq(leave_over(mem, h, w, &at), NET_LEAVE_GAVE_UP);
    cr_assert_eq(at - t0, NET_LEAVE_MAX_MS);
    net_host_destroy(h[1]);
    net_memory_destroy(mem);
}

Test(net_leave_memory, a_full_server_refuses_at_once_with_the_reason)
{
    net_memory *mem = net_memory_create(7);
    net_host_config one = net_host_default_config();
    one.max_peers = 1;
    net_memory_link l = {15, 0, 0, 0};
    net_host *h[4];
    watch w[4];
    memset(w, 0, sizeof w);
    h[0] = net_memory_listen(mem, "s", &one);
    h[1] = net_memory_connect(mem, "s", &l, &l, NULL);
    h[2] = net_memory_connect(mem, "s", &l, &l, NULL);
    h[3] = net_memory_connect(mem, "nobody", &l, &l, NULL);
    for (uint32_t i = 0; i < NET_HOST_DEFAULT_TIMEOUT_MS + 1000u; i++)
        mem_step(mem, h, w, 4);
    cr_assert_eq(w[1].connect.type, NET_EVENT_CONNECT);
    cr_assert_eq(w[2].disconnect.reason, NET_DISCONNECT_REFUSED_FULL);
    cr_assert_eq(w[2].disconnect.at, 30u, "one round trip");
    cr_assert_eq(w[2].disconnects, 1u);
    cr_assert_eq(w[3].disconnect.reason, NET_DISCONNECT_UNANSWERED);
    cr_assert_eq(w[3].disconnect.at, NET_HOST_DEFAULT_TIMEOUT_MS);
    for (int i = 0; i < 4; i++)
        net_host_destroy(h[i]);
    net_memory_destroy(mem);
}

Test(net_leave_memory, the_null_host_has_nothing_to_leave)
{
    net_host *n = net_host_null();
    cr_assert_eq(net_host_leave(n, 0), NET_LEAVE_NOT_CONNECTED);
    cr_assert_eq(net_host_leave(NULL, 0), NET_LEAVE_NOT_CONNECTED);
    cr_assert_str_eq(net_disconnect_reason_name(NET_DISCONNECT_LEFT), "left");
    net_host_destroy(n);
}

// ---- ENet on loopback ------------------------------------------------------------------

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// Services the hosts until every watch in `need` has a CONNECT (or, with
// `disconnect`, a DISCONNECT), for at most max_ms of wall time.
static bool pump_until(net_host **h, watch *w, size_t n, const bool *need, bool disconnect, unsigned max_ms)
{
    uint64_t start = wall_ms();
    for (;;) {
        bool all = true;
        for (size_t i = 0; i < n; i++) {
            if (h[i])
                drain(h[i], &w[i], wall_ms());
            if (need[i] && (disconnect ? w[i].disconnects == 0 : w[i].connect.type == NET_EVENT_NONE))
                all = false;
        }
        if (all)
            return true;
        if (wall_ms() - start >= max_ms)
            return false;
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
}

static net_host *connect_to(net_host *server, const net_host_config *cfg)
{
    net_host *c = net_host_connect("127.0.0.1", net_host_port(server), cfg, NULL);
    cr_assert_not_null(c);
    return c;
}

Test(net_leave_enet, a_leave_reaches_the_server_as_a_leave)
{
    net_host *h[3] = {net_host_listen("127.0.0.1", 0, NULL, NULL), NULL, NULL};
    cr_assert_not_null(h[0]);
    h[1] = connect_to(h[0], NULL);
    h[2] = connect_to(h[0], NULL);
    watch w[3];
    memset(w, 0, sizeof w);
    bool up[3] = {true, true, true};
    cr_assert(pump_until(h, w, 3, up, false, 5000));
    // Client 1 leaves with a reliable message still unacknowledged: the
    // disconnect waits for it, and the leave keeps servicing until then.
    const uint8_t bye[] = "last words";
    cr_assert(net_host_send(h[1], 0, NET_CHANNEL_CONTROL, bye, sizeof bye));
    net_leave_state st;
    unsigned calls = 0;
    while ((st = net_host_leave(h[1], 10)) == NET_LEAVE_PENDING) {
        calls++;
        drain(h[0], &w[0], wall_ms());
    }
    cr_log_info("the leave took %u calls of at most 10 ms", calls);
    cr_assert_eq(st, NET_LEAVE_DONE);
    net_host_destroy(h[1]);
    h[1] = NULL;
    bool gone[3] = {true, false, false};
    cr_assert(pump_until(h, w, 3, gone, true, 3000));
    cr_assert_eq(w[0].disconnect.reason, NET_DISCONNECT_LEFT);
    // The server closes client 2: it sees a close, not a timeout.
    cr_assert_eq(w[0].connects, 2u);
    net_host_disconnect(h[0], w[0].peers[0] == w[0].disconnect.peer ? w[0].peers[1] : w[0].peers[0]);
    bool closed[3] = {false, false, true};
    cr_assert(pump_until(h, w, 3, closed, true, 5000));
    cr_assert_eq(w[2].disconnect.reason, NET_DISCONNECT_CLOSED);
    cr_assert_eq(w[0].disconnects, 1u);
    net_host_destroy(h[2]);
    net_host_destroy(h[0]);
}

Test(net_leave_enet, a_refused_connect_fails_at_once_and_says_why)
{
    net_host_config per1 = net_host_default_config();
    per1.max_peers_per_address = 1;
    net_host_config full = net_host_default_config();
    full.max_peers = 1;
    full.max_peers_per_address = 8;
    net_host *h[5] = {net_host_listen("127.0.0.1", 0, &per1, NULL), NULL, net_host_listen("127.0.0.1", 0, &full, NULL),
                      NULL, NULL};
    cr_assert_not_null(h[0]);
    cr_assert_not_null(h[2]);
    h[1] = connect_to(h[0], NULL);
    h[3] = connect_to(h[2], NULL);
    watch w[5];
    memset(w, 0, sizeof w);
    bool up[5] = {true, true, true, true, false};
    cr_assert(pump_until(h, w, 5, up, false, 5000));
    // A second connection from 127.0.0.1 to each: ENet would drop them
    // without a word (and they would fail after the timeout, 5 s).
    net_host *late[2] = {connect_to(h[0], NULL), connect_to(h[2], NULL)};
    net_host *all[7] = {h[0], h[1], h[2], h[3], late[0], late[1], NULL};
    watch aw[7];
    memset(aw, 0, sizeof aw);
    bool need[7] = {false, false, false, false, true, true, false};
    cr_assert(pump_until(all, aw, 7, need, true, 8000));
    cr_assert_eq(aw[4].connect.type, NET_EVENT_NONE);
    cr_assert_eq(aw[4].disconnect.reason, NET_DISCONNECT_REFUSED_ADDRESS, "got %s",
                 net_disconnect_reason_name(aw[4].disconnect.reason));
    cr_assert_eq(aw[5].disconnect.reason, NET_DISCONNECT_REFUSED_FULL, "got %s",
                 net_disconnect_reason_name(aw[5].disconnect.reason));
    net_host_stats s;
    net_host_stats_get(h[0], &s);
    cr_assert_eq(s.peers_refused, 1u);
    for (int i = 0; i < 2; i++)
        net_host_destroy(late[i]);
    for (int i = 0; i < 5; i++)
        net_host_destroy(h[i]);
}
