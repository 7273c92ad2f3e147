// keel-attack: `spoof`: handshake REQUESTs and plain ENet CONNECTs from
// forged 127.x.y.z sources, through a raw socket (IP_HDRINCL: the IPv4 and
// UDP headers are written here). See attack.h and docs/attacks.md. MIT
// licence, see LICENSE.
//
// Seeing the replies: every 127.0.0.0/8 address is this machine's, so a
// reply to a forged 127.x.y.z:P is delivered to a UDP socket bound to
// 0.0.0.0:P. The forged sources use the ports of --ports such sockets, and
// every reply is counted there (what a victim at that address would get).
// Even datagrams are REQUESTs (random token bytes, or --token's sent part
// with a fresh nonce), odd ones CONNECTs; replies that are handshake
// datagrams answer a REQUEST, others (ENet's) a CONNECT.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attack.h"

enum { MAX_PORTS = 64, IP_BYTES = 20, UDP_BYTES = 8 };

size_t at_forge(uint8_t *out, uint32_t src, uint16_t sport, const struct sockaddr_in *dst, const uint8_t *payload,
                size_t n)
{
    struct iphdr ip;
    memset(&ip, 0, sizeof ip);
    ip.version = 4;
    ip.ihl = IP_BYTES / 4;
    ip.tot_len = htons((uint16_t)(IP_BYTES + UDP_BYTES + n));
    ip.ttl = 64;
    ip.protocol = IPPROTO_UDP;
    ip.saddr = htonl(src);
    ip.daddr = dst->sin_addr.s_addr;
    struct udphdr udp;
    memset(&udp, 0, sizeof udp);
    udp.source = htons(sport);
    udp.dest = dst->sin_port;
    udp.len = htons((uint16_t)(UDP_BYTES + n));
    memcpy(out, &ip, IP_BYTES);
    memcpy(out + IP_BYTES, &udp, UDP_BYTES);
    memcpy(out + IP_BYTES + UDP_BYTES, payload, n);
    return IP_BYTES + UDP_BYTES + n;
}

static void drain_all(const int *fds, uint32_t k, at_tally *req, at_tally *con)
{
    static uint8_t buf[AT_DATAGRAM_MAX];
    for (uint32_t i = 0; i < k; i++) {
        ssize_t n;
        while ((n = recv(fds[i], buf, sizeof buf, 0)) >= 0 || errno == EINTR) {
            if (n < 0)
                continue;
            uint8_t reason;
            if (at_hs_type(buf, (size_t)n, &reason))
                at_tally_reply(req, buf, (size_t)n, NET_HS_REQUEST_BYTES);
            else
                at_tally_reply(con, buf, (size_t)n, AT_ENET_CONNECT_BYTES);
        }
    }
}

int at_raw_socket(void)
{
    int raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW); // implies IP_HDRINCL
    if (raw < 0) {
        if (errno == EPERM || errno == EACCES) {
            fprintf(stderr, "keel-attack: forged sources need a raw socket (root or CAP_NET_RAW): %s\n",
                    strerror(errno));
            return -AT_EXIT_NO_RAW;
        }
        fprintf(stderr, "keel-attack: raw socket: %s\n", strerror(errno));
        return -1;
    }
    return raw;
}

int at_spoof(const at_options *o)
{
    int raw = at_raw_socket();
    if (raw < 0)
        return -raw;
    static uint8_t token[NET_TOKEN_BYTES];
    const uint8_t *sent = NULL;
    if (o->token_file) {
        char err[512];
        if (!at_read_token(o->token_file, token, err, sizeof err)) {
            fprintf(stderr, "keel-attack: --token %s\n", err);
            close(raw);
            return 1;
        }
        sent = token;
    }
    int fds[MAX_PORTS];
    uint16_t ports[MAX_PORTS];
    for (uint32_t i = 0; i < o->ports; i++) {
        fds[i] = at_udp_socket(0, 0, NULL); // 0.0.0.0: replies to any 127.x.y.z
        if (fds[i] < 0) {
            while (i--)
                close(fds[i]);
            close(raw);
            return 1;
        }
        ports[i] = at_local_port(fds[i]);
    }
    uint64_t rng = at_seed(o->seed);
    at_tally all = {0}, req = {0}, con = {0};
    static uint8_t packet[IP_BYTES + UDP_BYTES + NET_HS_REQUEST_BYTES];
    uint8_t payload[NET_HS_REQUEST_BYTES], nonce[AT_HS_NONCE];
    const uint64_t start = at_now_us();
    for (uint64_t i = 0; i < o->count;) {
        uint64_t now = at_now_us();
        for (int burst = 0; burst < 256 && i < o->count && start + i * 1000000u / o->rate <= now; burst++, i++) {
            // 127.1.0.1 .. 127.254.255.254: never 127.0.0.x (the real loopback users)
            uint64_t r = at_rand(&rng);
            uint32_t src = (127u << 24) | ((1u + (uint32_t)(r % 254u)) << 16) | ((uint32_t)(r >> 8) & 0xFF00u) |
                           (1u + (uint32_t)((r >> 24) % 254u));
            size_t n;
            if (i % 2 == 0) {
                at_rand_fill(&rng, nonce, sizeof nonce);
                n = at_hs_request(payload, nonce, sent, &rng);
            } else {
                n = at_enet_connect(payload, (uint32_t)at_rand(&rng));
            }
            size_t len = at_forge(packet, src, ports[i % o->ports], &o->server, payload, n);
            bool ok =
                sendto(raw, packet, len, 0, (const struct sockaddr *)&o->server, sizeof o->server) == (ssize_t)len;
            at_tally_sent(i % 2 == 0 ? &req : &con, n, ok);
            at_tally_sent(&all, n, ok);
        }
        drain_all(fds, o->ports, &req, &con);
        if (i < o->count)
            at_sleep_until_us(start + i * 1000000u / o->rate);
    }
    for (uint64_t until = at_now_us() + (uint64_t)o->wait_ms * 1000u; at_now_us() < until;) {
        at_sleep_until_us(at_now_us() + 10000);
        drain_all(fds, o->ports, &req, &con);
    }
    for (uint32_t i = 0; i < o->ports; i++)
        close(fds[i]);
    close(raw);
    // the whole run's tally: what went out, every reply (by kind below)
    all.replies = req.replies + con.replies;
    all.reply_bytes = req.reply_bytes + con.reply_bytes;
    all.reply_max = req.reply_max > con.reply_max ? req.reply_max : con.reply_max;
    all.larger = req.larger + con.larger;
    for (int k = 0; k < AT_HS_TYPES; k++)
        all.types[k] = req.types[k] + con.types[k];
    for (int k = 0; k < 256; k++)
        all.reasons[k] = req.reasons[k] + con.reasons[k];
    at_json_begin("spoof", o, &all);
    at_json_u64("requests_sent", req.sent);
    at_json_u64("request_bytes", NET_HS_REQUEST_BYTES);
    at_json_u64("request_replies", req.replies);
    at_json_u64("request_reply_max", req.reply_max);
    at_json_u64("connects_sent", con.sent);
    at_json_u64("connect_bytes", AT_ENET_CONNECT_BYTES);
    at_json_u64("connect_replies", con.replies);
    at_json_u64("connect_reply_max", con.reply_max);
    at_json_u64("source_ports", o->ports);
    at_json_end();
    return 0;
}
