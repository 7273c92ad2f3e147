// keel tests: secure mode's sealed datagrams (docs/security.md,
// "Sealed datagrams"): an off-path attacker who knows a player's address and port
// forges ENet's own framing from it, and from the server's address, through
// a raw socket on loopback; none of it may change a connection. MIT licence,
// see LICENSE.
//
// A secure server and a secure client (real ENet hosts on 127.0.0.1) trade
// one input message (client to server) and one snapshot message (server to
// client) per step; every loop is bounded by a count of steps (each waits at
// most a few ms) and the checks are on counts of messages, never on times.
// The attacks (the datagram layouts are ENet 1.3's, written here):
//   - unsequenced sweep: SEND_UNSEQUENCED commands from the player's address
//     to every peer id (64) and session (4), their groups walking the 16-bit
//     group space in steps of ENet's window (1024) in two bursts that leave
//     ENet's window half the space ahead of the player's real groups, so
//     that ENet drops every real input after it;
//   - bandwidth limit: BANDWIDTH_LIMIT (1 byte/s) from the player's address:
//     ENet's throttle then drops most unreliable messages to the player;
//   - disconnect: DISCONNECT from the server's address to the client's peer
//     0 in each of the 4 sessions: ENet ends the connection.
// Without raw sockets (not root, no CAP_NET_RAW) the tests are skipped.
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sodium.h>

#include <keel/net_host.h>
#include <keel/net_token.h>

#include "../net/src/frame.h"
#include "../net/src/handshake.h"
#include "../net/src/host_impl.h"
#include "test_support.h"
#include "token_fixture.h"

enum {
    STEPS = 300,  ///< steps of one phase
    SETTLE = 250, ///< steps after an attack before its phase is counted (ENet's 1 s throttle epoch)
    CONNECT_STEPS = 500,
    PEER_IDS = 64,     ///< the peer ids an attacker tries (keel's default max_peers)
    SESSIONS = 4,      ///< ENet's 2-bit session ids
    GROUP_STEP = 1024, ///< ENet's unsequenced window
};

static net_token_key key;
static int raw = -1;

static void setup(void)
{
    cr_assert(net_token_key_generate(&key));
    raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
}

static void teardown(void)
{
    net_token_key_wipe(&key);
    if (raw >= 0)
        close(raw);
}

TestSuite(frame, .init = setup, .fini = teardown, .timeout = 120);

typedef struct pair {
    net_host *server, *client;
    uint32_t peer; ///< the client's peer on the server
    uint16_t server_port, client_port;
} pair;

static net_host *secure_server(void)
{
    net_host_config sc = net_host_default_config();
    sc.token_key = &key;
    sc.protocol_id = KEEL_TEST_PROTOCOL;
    const char *err = NULL;
    net_host *h = net_host_listen("127.0.0.1", 0, &sc, &err);
    cr_assert_not_null(h, "%s", err ? err : "?");
    return h;
}

// A token for 127.0.0.1:port, valid from now for 300 s, for client id 77.
static void issue_id(uint8_t token[NET_TOKEN_BYTES], uint16_t port, uint64_t client_id)
{
    net_token_params tp;
    keel_test_token_params(&tp);
    uint64_t now = (uint64_t)time(NULL);
    tp.create_time = now;
    tp.expire_time = now + 300;
    tp.client_id = client_id;
    tp.server_count = 1;
    memset(tp.servers, 0, sizeof tp.servers);
    char text[32];
    snprintf(text, sizeof text, "127.0.0.1:%u", (unsigned)port);
    cr_assert(net_token_address_parse(text, &tp.servers[0]));
    const char *err = NULL;
    cr_assert(net_token_issue(&tp, &key, token, &err), "%s", err ? err : "?");
}

static void issue(uint8_t token[NET_TOKEN_BYTES], uint16_t port) { issue_id(token, port, 77); }

static void connect_pair(pair *p)
{
    p->server = secure_server();
    p->server_port = net_host_port(p->server);
    uint8_t token[NET_TOKEN_BYTES];
    issue(token, p->server_port);
    const char *err = NULL;
    net_host_config cc = net_host_default_config();
    cc.connect_token = token;
    p->client = net_host_connect("127.0.0.1", p->server_port, &cc, &err);
    cr_assert_not_null(p->client, "%s", err ? err : "?");
    bool server_up = false, client_up = false;
    for (int i = 0; i < CONNECT_STEPS && !(server_up && client_up); i++) {
        net_event ev;
        while (net_host_service(p->server, &ev, 0) != NET_EVENT_NONE)
            if (ev.type == NET_EVENT_CONNECT) {
                server_up = true;
                p->peer = ev.peer;
            }
        if (net_host_service(p->client, &ev, 5) == NET_EVENT_CONNECT)
            client_up = true;
    }
    cr_assert(server_up && client_up, "the secure connection did not come up");
    p->client_port = net_host_port(p->client); // bound by its first datagram
    cr_assert_neq(p->client_port, 0);
}

static void close_pair(pair *p)
{
    net_host_destroy(p->client);
    net_host_destroy(p->server);
}

/// What one phase delivered.
typedef struct phase {
    uint32_t inputs_sent, inputs_received;       ///< client to server
    uint32_t snapshots_sent, snapshots_received; ///< server to client
    uint32_t client_disconnects, server_disconnects;
} phase;

// `steps` steps: one input and one snapshot each, then both hosts serviced.
static phase run(pair *p, int steps)
{
    phase f;
    memset(&f, 0, sizeof f);
    uint8_t input[16], snapshot[200];
    memset(input, 0x11, sizeof input);
    memset(snapshot, 0x22, sizeof snapshot);
    for (int i = 0; i < steps; i++) {
        f.inputs_sent += net_host_send(p->client, 0, NET_CHANNEL_INPUT, input, sizeof input);
        f.snapshots_sent += net_host_send(p->server, p->peer, NET_CHANNEL_SNAPSHOT, snapshot, sizeof snapshot);
        net_host_flush(p->client);
        net_host_flush(p->server);
        net_event ev;
        for (int k = 0; k < 2; k++) {
            while (net_host_service(p->server, &ev, k ? 2 : 0) != NET_EVENT_NONE) {
                f.inputs_received += ev.type == NET_EVENT_RECEIVE && ev.channel == NET_CHANNEL_INPUT;
                f.server_disconnects += ev.type == NET_EVENT_DISCONNECT;
            }
            while (net_host_service(p->client, &ev, k ? 2 : 0) != NET_EVENT_NONE) {
                f.snapshots_received += ev.type == NET_EVENT_RECEIVE && ev.channel == NET_CHANNEL_SNAPSHOT;
                f.client_disconnects += ev.type == NET_EVENT_DISCONNECT;
            }
        }
    }
    return f;
}

// One datagram from 127.0.0.1:from_port to 127.0.0.1:to_port through the raw
// socket (the kernel fills the IPv4 checksum; UDP checksum 0: none).
static void forge(uint16_t from_port, uint16_t to_port, const uint8_t *payload, size_t n)
{
    uint8_t packet[20 + 8 + 1024];
    cr_assert_leq(n, 1024u);
    struct iphdr ip;
    memset(&ip, 0, sizeof ip);
    ip.version = 4;
    ip.ihl = 5;
    ip.tot_len = htons((uint16_t)(20 + 8 + n));
    ip.ttl = 64;
    ip.protocol = IPPROTO_UDP;
    ip.saddr = htonl(INADDR_LOOPBACK);
    ip.daddr = htonl(INADDR_LOOPBACK);
    struct udphdr udp;
    memset(&udp, 0, sizeof udp);
    udp.source = htons(from_port);
    udp.dest = htons(to_port);
    udp.len = htons((uint16_t)(8 + n));
    memcpy(packet, &ip, 20);
    memcpy(packet + 20, &udp, 8);
    memcpy(packet + 28, payload, n);
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(to_port);
    cr_assert_eq(sendto(raw, packet, 28 + n, 0, (const struct sockaddr *)&to, sizeof to), (ssize_t)(28 + n), "%s",
                 strerror(errno));
}

static size_t put16(uint8_t *d, uint16_t v)
{
    d[0] = (uint8_t)(v >> 8);
    d[1] = (uint8_t)v;
    return 2;
}

static size_t put32(uint8_t *d, uint32_t v)
{
    put16(d, (uint16_t)(v >> 16));
    put16(d + 2, (uint16_t)v);
    return 4;
}

// ENet's protocol header without sent time: peer id, session in bits 12-13.
static size_t header(uint8_t *d, unsigned peer_id, unsigned session)
{
    return put16(d, (uint16_t)(peer_id | (session << 12)));
}

// Attack 1: `groups` SEND_UNSEQUENCED commands (9, flag unsequenced 0x40;
// channel 1, no data) with groups 0, 1024, ... to every peer id and session.
static uint32_t unsequenced_burst(pair *p, unsigned groups)
{
    uint32_t sent = 0;
    for (unsigned id = 0; id < PEER_IDS; id++)
        for (unsigned s = 0; s < SESSIONS; s++) {
            uint8_t d[2 + 64 * 8];
            size_t n = header(d, id, s);
            for (unsigned g = 0; g < groups; g++) {
                d[n++] = 9 | 0x40;
                d[n++] = 1;
                n += put16(d + n, 0);
                n += put16(d + n, (uint16_t)(g * GROUP_STEP));
                n += put16(d + n, 0);
            }
            forge(p->client_port, p->server_port, d, n);
            if (++sent % 32 == 0)
                run(p, 1); // the server reads them before its socket's buffer fills
        }
    return sent;
}

// Attack 2: BANDWIDTH_LIMIT (10): incoming 1 byte/s, outgoing 0.
static uint32_t bandwidth_burst(pair *p)
{
    uint32_t sent = 0;
    for (unsigned id = 0; id < PEER_IDS; id++)
        for (unsigned s = 0; s < SESSIONS; s++) {
            uint8_t d[2 + 12];
            size_t n = header(d, id, s);
            d[n++] = 10;
            d[n++] = 0xFF;
            n += put16(d + n, 0);
            n += put32(d + n, 1);
            n += put32(d + n, 0);
            forge(p->client_port, p->server_port, d, n);
            if (++sent % 32 == 0)
                run(p, 1); // the server reads them before its socket's buffer fills
        }
    return sent;
}

// Attack 2 too: DISCONNECT (4) from the server to the client's peer 0.
static uint32_t disconnect_burst(const pair *p)
{
    for (unsigned s = 0; s < SESSIONS; s++) {
        uint8_t d[2 + 8];
        size_t n = header(d, 0, s);
        d[n++] = 4;
        d[n++] = 0xFF;
        n += put16(d + n, 0);
        n += put32(d + n, 0);
        forge(p->server_port, p->client_port, d, n);
    }
    return SESSIONS;
}

// A CONNECT (2, acknowledge) from no peer, 52 bytes: header with sent time,
// the command with its fields as ENet 1.3 writes them.
static void enet_connect(uint8_t *d, uint32_t connect_id)
{
    memset(d, 0, 52);
    put16(d, 0x8000u | 0x0FFFu);
    d[4] = 2 | 0x80;
    d[5] = 0xFF;
    put16(d + 6, 1);
    d[10] = 0xFF; // incoming session
    d[11] = 0xFF; // outgoing session
    const uint32_t fields[10] = {1246, 32768, 3, 0, 0, 5000, 2, 2, connect_id, 0};
    for (int i = 0; i < 10; i++)
        put32(d + 12 + 4 * i, fields[i]);
}

static void need_raw(void)
{
    if (raw < 0)
        cr_skip("no raw socket here (run as root or with CAP_NET_RAW): %s", strerror(errno));
}

static void print_phase(const char *name, const phase *f)
{
    cr_log_info("%-28s inputs %u/%u, snapshots %u/%u, disconnects client %u server %u", name, f->inputs_received,
                f->inputs_sent, f->snapshots_received, f->snapshots_sent, f->client_disconnects, f->server_disconnects);
}

// Nine in ten messages of a phase arrive (loopback loses none; the margin is
// for the kernel's buffers, never for the attack: it took nearly all), and
// neither side disconnected. Expectations, so that every phase is reported.
static void expect_delivered(const phase *f, const char *what)
{
    cr_expect_geq(f->inputs_received * 10u, f->inputs_sent * 9u, "%s: the server got %u of %u inputs", what,
                  f->inputs_received, f->inputs_sent);
    cr_expect_geq(f->snapshots_received * 10u, f->snapshots_sent * 9u, "%s: the client got %u of %u snapshots", what,
                  f->snapshots_received, f->snapshots_sent);
    cr_expect_eq(f->client_disconnects + f->server_disconnects, 0, "%s: a side disconnected", what);
}

// A phase of STEPS steps, printed and judged.
static void judged_phase(pair *p, const char *name)
{
    phase f = run(p, STEPS);
    print_phase(name, &f);
    expect_delivered(&f, name);
}

Test(frame, forged_unsequenced_groups_do_not_stop_the_players_inputs)
{
    need_raw();
    pair p;
    connect_pair(&p);
    judged_phase(&p, "control");
    uint32_t forged = unsequenced_burst(&p, 64);
    run(&p, 5);
    forged += unsequenced_burst(&p, 33); // ends 32768 ahead of where the first burst began
    run(&p, 5);
    judged_phase(&p, "after the unsequenced sweep");
    net_host_stats s, c;
    net_host_stats_get(p.server, &s);
    net_host_stats_get(p.client, &c);
    cr_expect_leq(s.messages_received, c.messages_sent, "forged commands reached keel as messages: %llu of %llu",
                  (unsigned long long)s.messages_received, (unsigned long long)c.messages_sent);
    cr_assert_geq(s.frames_forged, forged, "%llu of %u forged datagrams counted", (unsigned long long)s.frames_forged,
                  forged);
    close_pair(&p);
}

Test(frame, forged_bandwidth_limit_and_disconnect_change_nothing)
{
    need_raw();
    pair p;
    connect_pair(&p);
    judged_phase(&p, "control");
    uint32_t to_server = bandwidth_burst(&p);
    run(&p, SETTLE);
    judged_phase(&p, "after the bandwidth limit");
    uint32_t to_client = disconnect_burst(&p);
    judged_phase(&p, "after the forged disconnect");
    net_host_stats s, c;
    net_host_stats_get(p.server, &s);
    net_host_stats_get(p.client, &c);
    cr_assert_geq(s.frames_forged, to_server, "server: %llu of %u", (unsigned long long)s.frames_forged, to_server);
    cr_assert_geq(c.frames_forged, to_client, "client: %llu of %u", (unsigned long long)c.frames_forged, to_client);
    cr_expect_leq(s.messages_received, c.messages_sent, "forged commands reached keel as messages");
    cr_expect_leq(c.messages_received, s.messages_sent, "forged commands reached keel as messages");
    close_pair(&p);
}

// A copy of datagram `d` opened with `f` (the original stays sealed, to be
// sent again).
static seal_result open_copy(frame_peer *f, const uint8_t *d, size_t n)
{
    uint8_t copy[256];
    cr_assert_leq(n, sizeof copy);
    memcpy(copy, d, n);
    return frame_open(f, copy, n);
}

Test(frame, a_datagram_authenticates_once_unchanged_and_in_its_direction)
{
    uint8_t up[SEAL_KEY_BYTES], down[SEAL_KEY_BYTES];
    randombytes_buf(up, sizeof up);
    randombytes_buf(down, sizeof down);
    frame_peer client, server;
    frame_start(&client, up, down, 7, 1, 2);
    frame_start(&server, down, up, 7, 1, 2);
    enum { N = 40 };
    uint8_t d[3][N + NET_FRAME_BYTES];
    for (int k = 0; k < 3; k++) {
        memset(d[k], 0x30 + k, N);
        d[k][0] = 0x80 | (uint8_t)k; // ENet's header with a sent time: 4 bytes in clear
        cr_assert_eq(frame_clear_bytes(d[k], N), 4);
        cr_assert_eq(frame_seal(&client, d[k], N), N + NET_FRAME_BYTES);
        cr_assert_eq(d[k][0], 0x80 | k, "the header stays in clear");
        cr_assert_eq(d[k][3], 0x30 + k, "the header stays in clear");
        unsigned same = 0;
        for (int i = 4; i < N; i++)
            same += d[k][i] == 0x30 + k;
        cr_assert_lt(same, 8, "what follows the header is encrypted (%u of %d bytes unchanged)", same, N - 4);
    }
    uint8_t plain[N + NET_FRAME_BYTES];
    memcpy(plain, d[0], sizeof plain);
    cr_assert(frame_open_with(up, plain, sizeof plain), "the first datagram opens with the key alone (a CONNECT)");
    cr_assert_eq(plain[0], 0x80);
    for (int i = 1; i < N; i++)
        cr_assert_eq(plain[i], 0x30, "byte %d opened", i);
    memcpy(plain, d[0], sizeof plain);
    cr_assert(!frame_open_with(down, plain, sizeof plain), "the other direction's key");
    cr_assert_eq(memcmp(plain, d[0], sizeof plain), 0, "a datagram that does not open is left as it came");
    cr_assert_eq(open_copy(&client, d[0], sizeof d[0]), SEAL_FORGED, "the other direction's key");
    cr_assert_eq(open_copy(&server, d[2], sizeof d[2]), SEAL_OK);
    cr_assert_eq(open_copy(&server, d[0], sizeof d[0]), SEAL_OK, "reordered within the window");
    cr_assert_eq(open_copy(&server, d[0], sizeof d[0]), SEAL_REPLAYED);
    cr_assert_eq(open_copy(&server, d[2], sizeof d[2]), SEAL_REPLAYED);
    for (size_t i = 0; i < sizeof d[1]; i++) {
        uint8_t bad[sizeof d[1]];
        memcpy(bad, d[1], sizeof bad);
        bad[i] ^= 0x04;
        cr_assert_eq(open_copy(&server, bad, sizeof bad), SEAL_FORGED, "byte %zu changed", i);
    }
    cr_assert_eq(open_copy(&server, d[1], N), SEAL_FORGED, "the trailer cut off");
    cr_assert_eq(open_copy(&server, d[1], sizeof d[1]), SEAL_OK, "nothing forged moved the window");
    // far ahead: the oldest falls out of the window
    uint8_t last[N + NET_FRAME_BYTES];
    for (int k = 0; k < SEAL_WINDOW; k++) {
        memset(last, 0x55, N);
        frame_seal(&client, last, N);
    }
    cr_assert_eq(open_copy(&server, last, sizeof last), SEAL_OK);
    uint8_t old[N + NET_FRAME_BYTES];
    memset(old, 0x30, N);
    old[0] = 0x80;
    frame_peer again;
    frame_start(&again, up, down, 7, 1, 2);
    frame_seal(&again, old, N); // counter 0 again: the same datagram as d[0]
    cr_assert_eq(memcmp(old, d[0], sizeof old), 0);
    cr_assert_eq(open_copy(&server, old, sizeof old), SEAL_REPLAYED);
    frame_stop(&server);
    cr_assert_eq(open_copy(&server, d[1], sizeof d[1]), SEAL_FORGED, "stopped: no key");
}

// A CONNECT from the player's address between its admission and its own
// CONNECT (the attacker guesses the moment, not the connect id): it binds
// nothing, and the player's CONNECT, authenticated with the session's key,
// is answered with an authenticated VERIFY_CONNECT for its connect id.
Test(frame, a_spoofed_connect_cannot_take_an_admission)
{
    need_raw();
    net_host *server = secure_server();
    uint16_t server_port = net_host_port(server);
    uint8_t token[NET_TOKEN_BYTES];
    issue(token, server_port);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (const struct sockaddr *)&to, sizeof to), 0);
    socklen_t len = sizeof to;
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&to, &len), 0);
    uint16_t player_port = ntohs(to.sin_port);
    to.sin_port = htons(server_port);

    hs_client c;
    cr_assert(hs_client_start(&c, token));
    uint8_t buf[2048];
    net_event ev;
    for (int i = 0; i < CONNECT_STEPS && c.phase != HS_PHASE_ADMITTED; i++) {
        size_t n;
        const uint8_t *d = hs_client_due(&c, hs_clock_ms(), &n);
        if (d)
            cr_assert_eq(sendto(fd, d, n, 0, (const struct sockaddr *)&to, sizeof to), (ssize_t)n);
        net_host_service(server, &ev, 2);
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got > 0)
            hs_client_take(&c, buf, (size_t)got);
    }
    cr_assert_eq(c.phase, HS_PHASE_ADMITTED);

    // the attacker's: a plain CONNECT, and one with a made-up trailer
    uint8_t connect[52 + NET_FRAME_BYTES];
    enet_connect(connect, 0x11111111u);
    forge(player_port, server_port, connect, 52);
    enet_connect(connect, 0x22222222u);
    memset(connect + 52, 0xA5, NET_FRAME_BYTES);
    forge(player_port, server_port, connect, sizeof connect);
    for (int i = 0; i < 20; i++)
        net_host_service(server, &ev, 2);
    net_host_stats s;
    net_host_stats_get(server, &s);
    cr_assert_eq(s.frames_forged, 2, "the forged CONNECTs: %llu", (unsigned long long)s.frames_forged);
    cr_assert_eq(net_host_enet_peers_in_use(server), 0, "ENet spent a peer on a forged CONNECT");

    // the player's, authenticated with its session's key
    frame_peer f;
    frame_start(&f, c.c2s, c.s2c, 0x33333333u, 0, 0);
    enet_connect(connect, 0x33333333u);
    size_t n = frame_seal(&f, connect, 52);
    cr_assert_eq(sendto(fd, connect, n, 0, (const struct sockaddr *)&to, sizeof to), (ssize_t)n);
    ssize_t got = -1;
    for (int i = 0; i < CONNECT_STEPS && got <= 0; i++) {
        net_host_service(server, &ev, 2);
        got = recv(fd, buf, sizeof buf, 0);
    }
    cr_assert_gt(got, 0, "no answer to the player's CONNECT");
    cr_assert_eq(frame_open(&f, buf, (size_t)got), SEAL_OK, "the answer is not authenticated");
    // header with sent time (4), then VERIFY_CONNECT (3); its connect id at 40
    cr_assert_geq((size_t)got, 4 + 44 + NET_FRAME_BYTES);
    cr_assert_eq(buf[4] & 0x0F, 3, "not a VERIFY_CONNECT");
    enet_connect(connect, 0x33333333u); // (sealed in place above)
    cr_assert_eq(memcmp(buf + 4 + 40, connect + 12 + 32, 4), 0, "another connect id");
    cr_assert_eq(net_host_enet_peers_in_use(server), 1);
    hs_client_wipe(&c);
    frame_stop(&f);
    close(fd);
    net_host_destroy(server);
}

// ---- one connection per client id -------------------------------------------------

// A UDP socket on 127.0.0.1 (any port) and the server's address in *to.
static int player_socket(uint16_t server_port, struct sockaddr_in *to)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    cr_assert_geq(fd, 0);
    memset(to, 0, sizeof *to);
    to->sin_family = AF_INET;
    to->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (const struct sockaddr *)to, sizeof *to), 0);
    to->sin_port = htons(server_port);
    return fd;
}

// A player's handshake by hand with `token` until it is admitted or denied;
// the phase it ended in.
static uint8_t handshake_by_hand(int fd, const struct sockaddr_in *to, net_host *server, hs_client *c,
                                 const uint8_t *token)
{
    cr_assert(hs_client_start(c, token));
    uint8_t buf[2048];
    net_event ev;
    for (int i = 0; i < CONNECT_STEPS && (c->phase == HS_PHASE_REQUEST || c->phase == HS_PHASE_RESPONSE); i++) {
        size_t n;
        const uint8_t *d = hs_client_due(c, hs_clock_ms(), &n);
        if (d)
            cr_assert_eq(sendto(fd, d, n, 0, (const struct sockaddr *)to, sizeof *to), (ssize_t)n);
        net_host_service(server, &ev, 2);
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got > 0)
            hs_client_take(c, buf, (size_t)got);
    }
    return c->phase;
}

// The admitted player's CONNECT with `connect_id`, authenticated with its
// session's key; the server serviced a few times. True when the server
// answered (its VERIFY_CONNECT: ENet gave the CONNECT a peer); with `ack`,
// the VERIFY_CONNECT is acknowledged (authenticated too): the server's
// connection is then up.
static bool connect_by_hand(int fd, const struct sockaddr_in *to, net_host *server, const hs_client *c,
                            uint32_t connect_id, bool ack)
{
    frame_peer f;
    frame_start(&f, c->c2s, c->s2c, connect_id, 0, 0);
    uint8_t d[52 + NET_FRAME_BYTES], buf[2048];
    enet_connect(d, connect_id);
    size_t n = frame_seal(&f, d, 52);
    cr_assert_eq(sendto(fd, d, n, 0, (const struct sockaddr *)to, sizeof *to), (ssize_t)n);
    net_event ev;
    ssize_t got = -1;
    for (int i = 0; i < 50 && got <= 0; i++) {
        net_host_service(server, &ev, 2);
        got = recv(fd, buf, sizeof buf, 0);
    }
    if (got > 0 && frame_open(&f, buf, (size_t)got) != SEAL_OK)
        got = -1; // a refusal datagram (from no peer, not authenticated)
    if (got > 0 && ack) {
        // VERIFY_CONNECT: header peer id 2, sent time 2 | command 1, channel 1,
        // reliable sequence 2 | outgoing peer id 2, incoming session 1,
        // outgoing session 1, ...
        unsigned peer_id = ((unsigned)buf[8] << 8) | buf[9], session = buf[11] & 3;
        uint8_t a[2 + 8 + NET_FRAME_BYTES];
        size_t k = header(a, peer_id, session);
        a[k++] = 1; // ACKNOWLEDGE
        a[k++] = 0xFF;
        k += put16(a + k, 0);
        memcpy(a + k, buf + 6, 2);     // the sequence number acknowledged
        memcpy(a + k + 2, buf + 2, 2); // its sent time
        k = frame_seal(&f, a, k + 4);
        cr_assert_eq(sendto(fd, a, k, 0, (const struct sockaddr *)to, sizeof *to), (ssize_t)k);
        bool up = false;
        for (int i = 0; i < 50 && !up; i++)
            up = net_host_service(server, &ev, 2) == NET_EVENT_CONNECT;
        cr_assert(up, "the acknowledged connection did not come up");
    }
    frame_stop(&f);
    return got > 0;
}

// A secure server, a token for it (client id 77) and a player's socket on
// it, admitted, its CONNECT (connect id 0x1000) answered, and acknowledged
// when `ack`. Returns the server.
static net_host *first_connect(uint8_t token[NET_TOKEN_BYTES], int *fd, struct sockaddr_in *to, hs_client *c, bool ack)
{
    net_host *server = secure_server();
    issue(token, net_host_port(server));
    *fd = player_socket(net_host_port(server), to);
    cr_assert_eq(handshake_by_hand(*fd, to, server, c, token), HS_PHASE_ADMITTED);
    cr_assert(connect_by_hand(*fd, to, server, c, 0x1000u, ack));
    return server;
}

// One token from one address and port handshakes again and again and
// CONNECTs each time with a new connect id (ENet would give each its own
// peer, up to max_peers_per_address): the first holds the client id's one
// peer, every later handshake is denied. Then two tokens of another client
// id, from two addresses, both admitted before either CONNECTs: the first
// CONNECT takes the peer, the second is dropped.
Test(frame, one_connection_per_client_id)
{
    uint8_t token[NET_TOKEN_BYTES];
    struct sockaddr_in to;
    int fd;
    hs_client c;
    net_host *server = first_connect(token, &fd, &to, &c, true);
    uint16_t server_port = net_host_port(server);
    unsigned admitted = 1, peers_max = 1;
    for (uint32_t k = 1; k < 4; k++) {
        hs_client again;
        if (handshake_by_hand(fd, &to, server, &again, token) == HS_PHASE_ADMITTED) {
            admitted++;
            connect_by_hand(fd, &to, server, &again, 0x1000u + k, true);
        } else {
            cr_expect_eq(again.refusal, NET_HS_CLIENT_CONNECTED, "denied: %s",
                         net_hs_refusal_name((net_hs_refusal)again.refusal));
        }
        uint32_t peers = net_host_enet_peers_in_use(server);
        peers_max = peers > peers_max ? peers : peers_max;
        hs_client_wipe(&again);
    }
    cr_log_info("one token, one address and port, 4 handshakes: %u admitted, at most %u ENet peers", admitted,
                peers_max);
    cr_expect_eq(admitted, 1, "handshakes admitted again for a client id with a connection");
    cr_expect_eq(peers_max, 1, "ENet peers held by one token");

    uint8_t t2[NET_TOKEN_BYTES], t3[NET_TOKEN_BYTES];
    issue_id(t2, server_port, 88);
    issue_id(t3, server_port, 88);
    struct sockaddr_in to2, to3;
    int fd2 = player_socket(server_port, &to2), fd3 = player_socket(server_port, &to3);
    hs_client c2, c3;
    cr_assert_eq(handshake_by_hand(fd2, &to2, server, &c2, t2), HS_PHASE_ADMITTED);
    cr_assert_eq(handshake_by_hand(fd3, &to3, server, &c3, t3), HS_PHASE_ADMITTED);
    bool first = connect_by_hand(fd2, &to2, server, &c2, 0x2000u, false);
    bool second = connect_by_hand(fd3, &to3, server, &c3, 0x3000u, false);
    net_host_stats s;
    net_host_stats_get(server, &s);
    cr_log_info("two admissions of one client id raced: CONNECTs answered %d and %d, ENet peers %u, refused %llu",
                first, second, net_host_enet_peers_in_use(server),
                (unsigned long long)s.handshake_refused[NET_HS_CLIENT_CONNECTED]);
    cr_expect(first && !second, "the first CONNECT answered (%d), the second not (%d)", first, second);
    cr_expect_eq(net_host_enet_peers_in_use(server), 2, "client ids 77 and 88: one peer each");
    hs_client_wipe(&c);
    hs_client_wipe(&c2);
    hs_client_wipe(&c3);
    close(fd);
    close(fd2);
    close(fd3);
    net_host_destroy(server);
}

// A join started again from the same address and port while the server's
// side of its first CONNECT is still under way (its VERIFY_CONNECT was lost,
// so it was never acknowledged): that is the client's own abandoned
// attempt, not a second connection. The new handshake is admitted and its
// CONNECT replaces the old one: still one ENet peer.
Test(frame, a_join_started_again_replaces_its_own_connect_under_way)
{
    uint8_t token[NET_TOKEN_BYTES];
    struct sockaddr_in to;
    int fd;
    hs_client c, again;
    net_host *server = first_connect(token, &fd, &to, &c, false);
    cr_assert_eq(net_host_enet_peers_in_use(server), 1);
    cr_assert_eq(handshake_by_hand(fd, &to, server, &again, token), HS_PHASE_ADMITTED, "denied: %s",
                 net_hs_refusal_name((net_hs_refusal)again.refusal));
    cr_assert(connect_by_hand(fd, &to, server, &again, 0x2000u, true), "the new CONNECT was not answered");
    cr_assert_eq(net_host_enet_peers_in_use(server), 1, "the abandoned connect still holds a peer");
    hs_client_wipe(&c);
    hs_client_wipe(&again);
    close(fd);
    net_host_destroy(server);
}
