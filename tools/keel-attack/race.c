// keel-attack: `race`: the CONNECT race. A player with its token completes
// the handshake from its socket; between its admission and its own CONNECT,
// plain ENet CONNECTs are forged from its address and port through a raw
// socket (one without a trailer, one with a made-up trailer), each with its
// own connect id; then the player sends its CONNECT, authenticated with the
// session's key, and waits for the server's VERIFY_CONNECT. Closed when the
// answer authenticates under the session's server-to-client key and echoes
// the player's own connect id. See attack.h and docs/attacks.md. MIT
// licence, see LICENSE.
//
// Written from docs/security.md and net/src/frame.h's layouts, with
// libsodium: the session keys are BLAKE2b-256 keyed with the token's key of
// that direction over "keel c2s" (or "keel s2c") and the challenge's 24-byte
// seal nonce (bytes 14..38 of the CHALLENGE); a datagram is sealed with
// ChaCha20-Poly1305 (IETF): ENet's header (2 bytes, 4 with a sent time) in
// clear as the additional data, the rest encrypted, then a trailer of the
// counter's low 16 bits (little-endian) and the tag; nonce FF 00 00 00 and
// the 64-bit counter little-endian.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "attack.h"

enum { TRAILER = 18, SALT_AT = AT_HS_BODY, SALT = 24 };

static void derive(const uint8_t token_key[32], const char label[8], const uint8_t *salt, uint8_t out[32])
{
    uint8_t msg[8 + SALT];
    memcpy(msg, label, 8);
    memcpy(msg + 8, salt, SALT);
    crypto_generichash(out, 32, msg, sizeof msg, token_key, 32);
}

static void frame_nonce(uint8_t nonce[12], uint64_t counter)
{
    memset(nonce, 0, 12);
    nonce[0] = 0xFF;
    for (int i = 0; i < 8; i++)
        nonce[4 + i] = (uint8_t)(counter >> (8 * i));
}

// ENet's header at the start of d: 4 bytes with a sent time (top bit of
// the first byte), else 2; it stays in clear as the additional data.
static size_t clear_bytes(const uint8_t *d) { return (d[0] & 0x80) ? 4 : 2; }

// Seals d[0 .. n) in place: encrypts what follows ENet's header and appends
// the trailer for `counter`; returns the new size.
static size_t seal(uint8_t *d, size_t n, const uint8_t key[32], uint64_t counter)
{
    uint8_t nonce[12];
    frame_nonce(nonce, counter);
    size_t clear = clear_bytes(d);
    d[n] = (uint8_t)counter;
    d[n + 1] = (uint8_t)(counter >> 8);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(d + clear, d + n + 2, NULL, d + clear, n - clear, d, clear, NULL,
                                                       nonce, key);
    return n + TRAILER;
}

// True when d[0 .. n) opens under `key` with its trailer's counter (the
// server's first datagrams: counters below 2^16); then decrypted in place.
static bool authentic(uint8_t *d, size_t n, const uint8_t key[32])
{
    if (n < TRAILER + 4)
        return false;
    size_t body = n - TRAILER, clear = clear_bytes(d);
    uint8_t nonce[12], plain[AT_DATAGRAM_MAX];
    frame_nonce(nonce, (uint64_t)(d[body] | (d[body + 1] << 8)));
    if (body - clear > sizeof plain ||
        crypto_aead_chacha20poly1305_ietf_decrypt_detached(plain, NULL, d + clear, body - clear, d + body + 2, d, clear,
                                                           nonce, key) != 0)
        return false;
    memcpy(d + clear, plain, body - clear);
    return true;
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int at_race(const at_options *o)
{
    static uint8_t token[NET_TOKEN_BYTES];
    char err[512];
    net_token_public pub;
    if (!at_read_token(o->token_file, token, err, sizeof err) ||
        net_token_read_public(token, NET_TOKEN_BYTES, &pub, NULL) != NET_TOKEN_OK || sodium_init() < 0) {
        fprintf(stderr, "keel-attack: --token %s\n", err);
        return 1;
    }
    int raw = at_raw_socket();
    if (raw < 0)
        return -raw;
    int fd = at_udp_socket(0x7F000001u, 0, &o->server);
    if (fd < 0) {
        close(raw);
        return 1;
    }
    uint16_t port = at_local_port(fd);
    uint64_t rng = at_seed(o->seed);
    at_tally t = {0};
    uint8_t req[NET_HS_REQUEST_BYTES], nonce[AT_HS_NONCE], reply[AT_DATAGRAM_MAX], reason = 0;
    at_rand_fill(&rng, nonce, sizeof nonce);
    size_t n = at_hs_request(req, nonce, token, &rng);
    uint8_t type = at_exchange(fd, req, n, nonce, o->wait_ms, &t, reply, &reason);
    uint8_t c2s[32], s2c[32];
    if (type == AT_HS_CHALLENGE) {
        derive(pub.client_to_server_key, "keel c2s", reply + SALT_AT, c2s);
        derive(pub.server_to_client_key, "keel s2c", reply + SALT_AT, s2c);
        reply[5] = AT_HS_RESPONSE;
        type = at_exchange(fd, reply, NET_HS_RESPONSE_BYTES, nonce, o->wait_ms, &t, reply, &reason);
    }
    const char *result = type == AT_HS_ADMITTED ? "none" : "not admitted";
    uint64_t spoofed = 0, answers = 0, authentic_answers = 0, own_id_answers = 0;
    if (type == AT_HS_ADMITTED) {
        // the attacker's CONNECTs from the player's address and port
        uint8_t d[AT_ENET_CONNECT_BYTES + TRAILER], packet[AT_FORGED_HEADERS + sizeof d];
        for (int k = 0; k < 2; k++) {
            size_t len = at_enet_connect(d, (uint32_t)at_rand(&rng));
            if (k == 1) {
                at_rand_fill(&rng, d + len, TRAILER); // a made-up trailer
                len += TRAILER;
            }
            len = at_forge(packet, 0x7F000001u, port, &o->server, d, len);
            at_tally_sent(&t, len - AT_FORGED_HEADERS,
                          sendto(raw, packet, len, 0, (const struct sockaddr *)&o->server, sizeof o->server) ==
                              (ssize_t)len);
            spoofed++;
        }
        at_sleep_until_us(at_now_us() + 200000u); // the server reads them first
        // the player's own CONNECT, authenticated (counter 0)
        uint32_t own_id = (uint32_t)at_rand(&rng);
        size_t len = seal(d, at_enet_connect(d, own_id), c2s, 0);
        at_tally_sent(&t, len, send(fd, d, len, 0) == (ssize_t)len);
        for (uint64_t end = at_now_us() + (uint64_t)o->wait_ms * 1000u, now = at_now_us(); now < end;
             now = at_now_us()) {
            at_wait_readable(fd, end - now);
            ssize_t got;
            while ((got = recv(fd, reply, sizeof reply, 0)) >= 0) {
                at_tally_reply(&t, reply, (size_t)got, len);
                answers++;
                // header with sent time 4 | VERIFY_CONNECT (3): its connect id at 40
                if (!authentic(reply, (size_t)got, s2c))
                    continue;
                authentic_answers++;
                if ((size_t)got >= 4 + 44 + TRAILER && (reply[4] & 0x0F) == 3 && be32(reply + 4 + 40) == own_id)
                    own_id_answers++;
            }
        }
        result = own_id_answers ? "verified" : answers ? "answered, not verified" : "none";
    }
    sodium_memzero(c2s, sizeof c2s);
    sodium_memzero(s2c, sizeof s2c);
    sodium_memzero(&pub, sizeof pub);
    close(fd);
    close(raw);
    at_json_begin("race", o, &t);
    at_json_str("result", result);
    at_json_str("reason", reason ? net_hs_refusal_name((net_hs_refusal)reason) : "");
    at_json_u64("spoofed_connects", spoofed);
    at_json_u64("answers", answers);
    at_json_u64("authentic_answers", authentic_answers);
    at_json_u64("own_connect_id_answers", own_id_answers);
    at_json_end();
    return 0;
}
