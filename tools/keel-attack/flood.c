// keel-attack: `flood` (handshake REQUESTs at a paced rate from one socket)
// and `request` (one token's REQUEST, and its RESPONSE when challenged, from
// a fresh socket each time). See attack.h and docs/attacks.md. MIT licence,
// see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "attack.h"

// The token's sent part with the byte at --damage flipped, or NULL without
// --token; false on a file error (printed).
static bool load_sent(const at_options *o, uint8_t token[NET_TOKEN_BYTES], const uint8_t **sent)
{
    *sent = NULL;
    if (!o->token_file)
        return true;
    char err[512];
    if (!at_read_token(o->token_file, token, err, sizeof err)) {
        fprintf(stderr, "keel-attack: --token %s\n", err);
        return false;
    }
    if (o->damage >= 0)
        token[o->damage] ^= 0xFF;
    *sent = token;
    return true;
}

int at_flood(const at_options *o)
{
    static uint8_t token[NET_TOKEN_BYTES];
    const uint8_t *sent;
    if (!load_sent(o, token, &sent))
        return 1;
    uint32_t from = o->source.sin_family ? ntohl(o->source.sin_addr.s_addr) : 0x7F000001u;
    int fd = at_udp_socket(from, 0, &o->server);
    if (fd < 0)
        return 1;
    uint64_t rng = at_seed(o->seed);
    at_tally t = {0};
    const uint64_t total = (uint64_t)o->rate * o->seconds;
    uint8_t req[NET_HS_REQUEST_BYTES], nonce[AT_HS_NONCE];
    const uint64_t start = at_now_us();
    uint64_t i = 0, behind_max = 0;
    while (i < total) {
        uint64_t now = at_now_us();
        // every request that is due (at most 256 before reading replies)
        for (int burst = 0; burst < 256 && i < total; burst++) {
            uint64_t due = start + i * 1000000u / o->rate;
            if (due > now)
                break;
            if (now - due > behind_max)
                behind_max = now - due;
            at_rand_fill(&rng, nonce, sizeof nonce);
            size_t n = at_hs_request(req, nonce, sent, &rng);
            at_tally_sent(&t, n, send(fd, req, n, 0) == (ssize_t)n);
            i++;
        }
        at_drain(fd, &t, NET_HS_REQUEST_BYTES);
        if (i < total) {
            uint64_t due = start + i * 1000000u / o->rate;
            at_sleep_until_us(due < now + 1000 ? due : now + 1000);
        }
    }
    const uint64_t send_us = at_now_us() - start;
    for (uint64_t until = at_now_us() + (uint64_t)o->wait_ms * 1000u, now = at_now_us(); now < until;
         now = at_now_us()) {
        at_wait_readable(fd, until - now);
        at_drain(fd, &t, NET_HS_REQUEST_BYTES);
    }
    close(fd);
    at_json_begin("flood", o, &t);
    at_json_str("token", o->token_file ? (o->damage >= 0 ? "damaged" : "real") : "random");
    at_json_u64("rate", o->rate);
    at_json_u64("seconds", o->seconds);
    at_json_f("send_seconds", (double)send_us / 1e6);
    at_json_f("behind_ms_max", (double)behind_max / 1000.0);
    at_json_end();
    return 0;
}

uint8_t at_exchange(int fd, const uint8_t *d, size_t n, const uint8_t nonce[AT_HS_NONCE], uint32_t wait_ms, at_tally *t,
                    uint8_t *reply, uint8_t *reason)
{
    static uint8_t buf[AT_DATAGRAM_MAX];
    const uint64_t end = at_now_us() + (uint64_t)wait_ms * 1000u;
    uint64_t next = 0;
    for (uint64_t now = at_now_us(); now < end; now = at_now_us()) {
        if (now >= next) {
            at_tally_sent(t, n, send(fd, d, n, 0) == (ssize_t)n);
            next = now + NET_HS_RESEND_MS * 1000u;
        }
        at_wait_readable(fd, (next < end ? next : end) - now);
        ssize_t got;
        while ((got = recv(fd, buf, sizeof buf, 0)) >= 0) {
            uint8_t type = at_tally_reply(t, buf, (size_t)got, n);
            if (type && memcmp(buf + AT_HS_HEADER, nonce, AT_HS_NONCE) == 0) {
                at_hs_type(buf, (size_t)got, reason);
                memcpy(reply, buf, (size_t)got);
                return type;
            }
        }
    }
    return 0;
}

int at_request(const at_options *o)
{
    static uint8_t token[NET_TOKEN_BYTES];
    const uint8_t *sent;
    if (!load_sent(o, token, &sent))
        return 1;
    uint64_t rng = at_seed(o->seed);
    at_tally t = {0};
    uint64_t results[4] = {0}; // none, challenged only, admitted, denied
    const char *last = "none";
    uint8_t last_reason = 0;
    for (uint32_t k = 0; k < o->count; k++) {
        int fd = at_udp_socket(0x7F000001u, 0, &o->server);
        if (fd < 0)
            return 1;
        uint8_t req[NET_HS_REQUEST_BYTES], nonce[AT_HS_NONCE], reply[AT_DATAGRAM_MAX], reason = 0;
        at_rand_fill(&rng, nonce, sizeof nonce);
        size_t n = at_hs_request(req, nonce, sent, &rng);
        uint8_t type = at_exchange(fd, req, n, nonce, o->wait_ms, &t, reply, &reason);
        if (type == AT_HS_CHALLENGE) {
            _Static_assert(NET_HS_RESPONSE_BYTES == NET_HS_CHALLENGE_BYTES, "a response is its challenge echoed");
            reply[5] = AT_HS_RESPONSE;
            uint8_t second = at_exchange(fd, reply, NET_HS_RESPONSE_BYTES, nonce, o->wait_ms, &t, reply, &reason);
            type = second ? second : AT_HS_CHALLENGE;
        }
        close(fd);
        int r = type == AT_HS_ADMITTED ? 2 : type == AT_HS_DENIED ? 3 : type == AT_HS_CHALLENGE ? 1 : 0;
        results[r]++;
        last = r == 2 ? "admitted" : r == 3 ? "denied" : r == 1 ? "challenge" : "none";
        last_reason = r == 3 ? reason : 0;
    }
    at_json_begin("request", o, &t);
    at_json_str("token_file", o->token_file);
    if (o->damage >= 0)
        at_json_u64("damage", (uint64_t)o->damage);
    at_json_str("result", last);
    at_json_str("reason", last_reason ? net_hs_refusal_name((net_hs_refusal)last_reason) : "");
    at_json_u64("rounds", o->count);
    at_json_u64("rounds_admitted", results[2]);
    at_json_u64("rounds_denied", results[3]);
    at_json_u64("rounds_challenged_only", results[1]);
    at_json_u64("rounds_unanswered", results[0]);
    at_json_end();
    return 0;
}
