// keel tests: the handshake's decoders (handshake.h) against random bytes,
// mutations and truncations of genuine datagrams, with a fixed seed and a
// bounded count. Runs in both test trees (the ASan+UBSan one reports any
// read outside a buffer). MIT licence, see LICENSE.
//
// What must hold for every input: no crash; a reply only for a datagram of
// the right type and size, never larger than that datagram; a changed
// request is challenged only when the change is in the client's nonce (which
// is free); a changed response is never admitted; a client takes only the
// exact replies to its nonce.
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../net/src/handshake.h"
#include "test_support.h"
#include "token_fixture.h"

enum { ROUNDS = 4000, CAP = NET_HS_REQUEST_BYTES + 64, NOW_S = KEEL_TEST_CREATE + 10, NOW_MS = 1000000 };

static net_token_key key;
static hs_server *server;
static uint8_t token[NET_TOKEN_BYTES];
static const hs_addr FROM = {0x0100007f, 5000};
static const uint8_t NONCE[HS_NONCE_BYTES] = {9, 8, 7, 6, 5, 4, 3, 2};

static void setup(void)
{
    cr_assert(net_token_key_generate(&key));
    net_token_params p;
    keel_test_token_params(&p);
    cr_assert(net_token_issue(&p, &key, token, NULL));
    net_token_address self = keel_test_token_server();
    server = hs_server_create(&key, KEEL_TEST_PROTOCOL, &self, 8);
    cr_assert_not_null(server);
}

static void teardown(void)
{
    hs_server_destroy(server);
    net_token_key_wipe(&key);
}

TestSuite(handshake_fuzz, .init = setup, .fini = teardown, .timeout = 300);

// A genuine request at now_ms and its response.
static void genuine_at(uint8_t *request, uint8_t *response, uint64_t now_ms)
{
    hs_request_write(token, NONCE, request);
    uint8_t challenge[HS_MAX_DATAGRAM], reason = 0;
    hs_outcome o;
    size_t n = hs_server_receive(server, request, NET_HS_REQUEST_BYTES, FROM, NOW_S, now_ms, challenge, &o);
    cr_assert_eq(n, NET_HS_CHALLENGE_BYTES, "refused: %s", net_hs_refusal_name(o.refusal));
    cr_assert_eq(hs_client_receive(challenge, n, NONCE, response, &reason), HS_REPLY_CHALLENGE);
}

static void genuine(uint8_t *request, uint8_t *response) { genuine_at(request, response, NOW_MS); }

// Changes d (size *n) in one of several ways; returns the first byte that
// differs from before, or *n when only the size changed.
static size_t mutate(keel_rng *rng, uint8_t *d, size_t *n)
{
    size_t size = *n;
    switch (keel_rng_range(rng, 0, 3)) {
    case 0: { // flip a bit
        size_t at = (size_t)keel_rng_range(rng, 0, (int64_t)size - 1);
        d[at] ^= (uint8_t)(1u << keel_rng_range(rng, 0, 7));
        return at;
    }
    case 1: { // a random byte that differs
        size_t at = (size_t)keel_rng_range(rng, 0, (int64_t)size - 1);
        d[at] = (uint8_t)(d[at] + keel_rng_range(rng, 1, 255));
        return at;
    }
    case 2: // truncate
        *n = (size_t)keel_rng_range(rng, 0, (int64_t)size - 1);
        return *n;
    default: // extend
        *n = size + (size_t)keel_rng_range(rng, 1, CAP - (int64_t)size);
        for (size_t i = size; i < *n; i++)
            d[i] = (uint8_t)keel_rng_range(rng, 0, 255);
        return size;
    }
}

Test(handshake_fuzz, random_bytes)
{
    keel_rng rng = {0x6b68667a};
    uint8_t d[CAP], out[HS_MAX_DATAGRAM], response[NET_HS_RESPONSE_BYTES], reason;
    for (int round = 0; round < ROUNDS; round++) {
        size_t n = (size_t)keel_rng_range(&rng, 0, CAP);
        for (size_t i = 0; i < n; i++)
            d[i] = (uint8_t)keel_rng_range(&rng, 0, 255);
        if (n >= 6 && keel_rng_range(&rng, 0, 1)) { // often a handshake header, to get past the magic
            memcpy(d, (uint8_t[]){0x7F, 0xFF, 'k', 'h', NET_HS_VERSION}, 5);
            d[5] = (uint8_t)keel_rng_range(&rng, 0, 6);
        }
        hs_outcome o;
        size_t r = hs_server_receive(server, d, n, FROM, NOW_S, NOW_MS, out, &o);
        cr_assert_leq(r, n);
        cr_assert(!o.admitted && !o.challenged, "round %d", round);
        cr_assert_neq(o.refusal, NET_HS_OK, "round %d", round);
        cr_assert_eq(hs_client_receive(d, n, NONCE, response, &reason), HS_REPLY_IGNORED, "round %d", round);
    }
}

// Mutates a genuine request (or response) `rounds` times and hands the
// server's outcome for each to `check`, with the first changed byte and the
// size. Each round 2 ms after the one before: the two requests it may open
// come from one source prefix, whose share refills 2.048 in that time.
static void fuzz_server(uint64_t seed, bool response, int rounds,
                        void (*check)(int round, size_t at, size_t n, const hs_outcome *o))
{
    keel_rng rng = {seed};
    uint8_t request[CAP], resp[CAP], out[HS_MAX_DATAGRAM];
    for (int round = 0; round < rounds; round++) {
        const uint64_t now_ms = NOW_MS + 2u * (uint64_t)round;
        genuine_at(request, resp, now_ms);
        uint8_t *d = response ? resp : request;
        size_t n = response ? NET_HS_RESPONSE_BYTES : NET_HS_REQUEST_BYTES;
        size_t at = mutate(&rng, d, &n);
        hs_outcome o;
        size_t r = hs_server_receive(server, d, n, FROM, NOW_S, now_ms, out, &o);
        cr_assert_leq(r, n);
        check(round, at, n, &o);
    }
}

static void check_request(int round, size_t at, size_t n, const hs_outcome *o)
{
    bool nonce_only = n == NET_HS_REQUEST_BYTES && at >= 6 && at < 6 + HS_NONCE_BYTES;
    cr_assert_eq(o->challenged, nonce_only, "round %d: byte %zu, size %zu: %s", round, at, n,
                 net_hs_refusal_name(o->refusal));
}

static void check_response(int round, size_t at, size_t n, const hs_outcome *o)
{
    cr_assert(!o->admitted, "round %d: byte %zu, size %zu", round, at, n);
    cr_assert_neq(o->refusal, NET_HS_OK);
}

Test(handshake_fuzz, mutated_requests) { fuzz_server(0x72657175, false, ROUNDS / 4, check_request); }

Test(handshake_fuzz, mutated_responses)
{
    fuzz_server(0x72657370, true, ROUNDS / 4, check_response);
    uint8_t request[NET_HS_REQUEST_BYTES], response[NET_HS_RESPONSE_BYTES], out[HS_MAX_DATAGRAM];
    // and unchanged, it is admitted
    genuine(request, response);
    hs_outcome o;
    cr_assert_eq(hs_server_receive(server, response, NET_HS_RESPONSE_BYTES, FROM, NOW_S, NOW_MS, out, &o),
                 NET_HS_ADMITTED_BYTES);
    cr_assert(o.admitted);
}

Test(handshake_fuzz, mutated_replies_to_a_client)
{
    keel_rng rng = {0x636c6e74};
    uint8_t request[NET_HS_REQUEST_BYTES], response[NET_HS_RESPONSE_BYTES];
    genuine(request, response);
    // the server's three kinds of reply, genuine
    uint8_t replies[3][HS_MAX_DATAGRAM];
    size_t sizes[3];
    hs_outcome o;
    sizes[0] = hs_server_receive(server, request, NET_HS_REQUEST_BYTES, FROM, NOW_S, NOW_MS, replies[0], &o);
    sizes[1] = hs_server_receive(server, response, NET_HS_RESPONSE_BYTES, FROM, NOW_S, NOW_MS, replies[1], &o);
    hs_addr other = {FROM.host, (uint16_t)(FROM.port + 1)};
    sizes[2] = hs_server_receive(server, response, NET_HS_RESPONSE_BYTES, other, NOW_S, NOW_MS, replies[2], &o);
    cr_assert_eq(sizes[0], NET_HS_CHALLENGE_BYTES);
    cr_assert_eq(sizes[1], NET_HS_ADMITTED_BYTES);
    cr_assert_eq(sizes[2], NET_HS_DENIED_BYTES);
    for (int round = 0; round < ROUNDS; round++) {
        int k = (int)keel_rng_range(&rng, 0, 2);
        uint8_t d[CAP], taken[NET_HS_RESPONSE_BYTES], reason = 0;
        memcpy(d, replies[k], sizes[k]);
        size_t n = sizes[k];
        size_t at = mutate(&rng, d, &n);
        hs_reply r = hs_client_receive(d, n, NONCE, taken, &reason);
        // a client never checks the sealed part of a challenge (the server
        // does): a change there still reads as a challenge; any other change
        // is ignored, except a denial's reason changed to another valid one
        bool sealed = k == 0 && n == sizes[k] && at >= 6 + HS_NONCE_BYTES;
        bool reason_byte = k == 2 && n == sizes[k] && at == 6 + HS_NONCE_BYTES;
        if (sealed)
            cr_assert_eq(r, HS_REPLY_CHALLENGE, "round %d", round);
        else if (reason_byte)
            cr_assert(r == HS_REPLY_IGNORED || (r == HS_REPLY_DENIED && reason > 0 && reason < NET_HS_REFUSAL_COUNT));
        else
            cr_assert_eq(r, HS_REPLY_IGNORED, "round %d: reply %d, byte %zu, size %zu", round, k, at, n);
    }
}
