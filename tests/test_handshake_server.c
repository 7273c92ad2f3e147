// keel tests: a secure server's handshake state (handshake.c) on virtual
// clocks: challenge expiry, the admission window and its connect id, the
// bounded tables, the client's side. No sockets; every time is an argument.
// MIT licence, see LICENSE.
#include <string.h>

#include <criterion/criterion.h>

#include "../net/src/handshake.h"
#include "test_support.h"
#include "token_fixture.h"

enum { NOW_S = KEEL_TEST_CREATE + 10, T0 = 1000000, PEERS = 4 };

static net_token_key key;
static hs_server *server;
static const uint8_t NONCE[HS_NONCE_BYTES] = {1, 1, 2, 3, 5, 8, 13, 21};

static void setup(void)
{
    cr_assert(net_token_key_generate(&key));
    net_token_address self = keel_test_token_server();
    server = hs_server_create(&key, KEEL_TEST_PROTOCOL, &self, PEERS);
    cr_assert_not_null(server);
}

static void teardown(void)
{
    hs_server_destroy(server);
    net_token_key_wipe(&key);
}

TestSuite(handshake_server, .init = setup, .fini = teardown, .timeout = 60);

static void issue(uint8_t *token, uint64_t client_id)
{
    net_token_params p;
    keel_test_token_params(&p);
    p.client_id = client_id;
    cr_assert(net_token_issue(&p, &key, token, NULL));
}

static hs_addr addr(uint16_t port) { return (hs_addr){0x0100007f, port}; }

// Request from `from` at T0; the response it would echo.
static void challenge(const uint8_t *token, hs_addr from, uint64_t now_ms, uint8_t *response)
{
    uint8_t request[NET_HS_REQUEST_BYTES], reply[HS_MAX_DATAGRAM], reason = 0;
    hs_request_write(token, NONCE, request);
    hs_outcome o;
    size_t n = hs_server_receive(server, request, sizeof request, from, NOW_S, now_ms, reply, &o);
    cr_assert_eq(n, NET_HS_CHALLENGE_BYTES, "%s", net_hs_refusal_name(o.refusal));
    cr_assert_eq(hs_client_receive(reply, n, NONCE, response, &reason), HS_REPLY_CHALLENGE);
}

static net_hs_refusal respond(const uint8_t *response, hs_addr from, uint64_t now_s, uint64_t now_ms)
{
    uint8_t reply[HS_MAX_DATAGRAM];
    hs_outcome o;
    size_t n = hs_server_receive(server, response, NET_HS_RESPONSE_BYTES, from, now_s, now_ms, reply, &o);
    cr_assert_eq(n, o.refusal == NET_HS_OK ? NET_HS_ADMITTED_BYTES : NET_HS_DENIED_BYTES);
    cr_assert_eq(o.admitted, o.refusal == NET_HS_OK);
    return o.refusal;
}

Test(handshake_server, a_challenge_expires_after_five_seconds)
{
    uint8_t token[NET_TOKEN_BYTES], response[NET_HS_RESPONSE_BYTES];
    issue(token, 1);
    challenge(token, addr(100), T0, response);
    cr_assert_eq(respond(response, addr(100), NOW_S, T0 + NET_HS_CHALLENGE_MS), NET_HS_CHALLENGE_EXPIRED);
    cr_assert_eq(respond(response, addr(100), NOW_S, T0 + NET_HS_CHALLENGE_MS - 1), NET_HS_OK);
}

Test(handshake_server, a_token_expiring_between_request_and_response_is_refused)
{
    uint8_t token[NET_TOKEN_BYTES], response[NET_HS_RESPONSE_BYTES];
    issue(token, 1);
    challenge(token, addr(100), T0, response);
    cr_assert_eq(respond(response, addr(100), KEEL_TEST_EXPIRE, T0 + 1), NET_HS_EXPIRED);
}

Test(handshake_server, another_servers_challenge_does_not_authenticate)
{
    uint8_t token[NET_TOKEN_BYTES], response[NET_HS_RESPONSE_BYTES];
    issue(token, 1);
    challenge(token, addr(100), T0, response);
    net_token_address self = keel_test_token_server();
    hs_server *other = hs_server_create(&key, KEEL_TEST_PROTOCOL, &self, PEERS); // another random challenge key
    cr_assert_not_null(other);
    uint8_t reply[HS_MAX_DATAGRAM];
    hs_outcome o;
    hs_server_receive(other, response, NET_HS_RESPONSE_BYTES, addr(100), NOW_S, T0 + 1, reply, &o);
    cr_assert_eq(o.refusal, NET_HS_CHALLENGE_DAMAGED);
    hs_server_destroy(other);
}

Test(handshake_server, an_admission_binds_one_connect_id_for_five_seconds)
{
    uint8_t token[NET_TOKEN_BYTES], response[NET_HS_RESPONSE_BYTES];
    issue(token, 77);
    uint64_t id = 0;
    cr_assert(!hs_server_admits(server, addr(100), 0xabcd, T0, &id), "nothing admitted yet");
    challenge(token, addr(100), T0, response);
    cr_assert_eq(respond(response, addr(100), NOW_S, T0 + 10), NET_HS_OK);
    cr_assert(!hs_server_admits(server, addr(101), 0xabcd, T0 + 20, &id), "another port");
    cr_assert(hs_server_admits(server, addr(100), 0xabcd, T0 + 20, &id));
    cr_assert_eq(id, 77);
    cr_assert(hs_server_admits(server, addr(100), 0xabcd, T0 + 30, &id), "a retransmission");
    cr_assert(!hs_server_admits(server, addr(100), 0x1234, T0 + 30, &id), "another connect attempt");
    cr_assert(!hs_server_admits(server, addr(100), 0xabcd, T0 + 10 + NET_HS_ADMIT_MS, &id), "the window closed");
    id = 0;
    uint32_t timeout_s = 0;
    uint8_t c2s[32], s2c[32];
    cr_assert(hs_server_session(server, addr(100), 0xabcd, &id, &timeout_s, c2s, s2c),
              "the connect event's look-up ignores expiry");
    cr_assert_eq(id, 77);
}

Test(handshake_server, the_admission_table_is_bounded)
{
    // PEERS + 16 live admissions fit; one more is refused until one expires
    uint8_t token[NET_TOKEN_BYTES], response[NET_HS_RESPONSE_BYTES];
    for (uint16_t i = 0; i < PEERS + 16; i++) {
        issue(token, i);
        challenge(token, addr((uint16_t)(1000 + i)), T0, response);
        cr_assert_eq(respond(response, addr((uint16_t)(1000 + i)), NOW_S, T0), NET_HS_OK, "admission %u", i);
    }
    issue(token, 999);
    challenge(token, addr(2000), T0 + 1, response);
    cr_assert_eq(respond(response, addr(2000), NOW_S, T0 + 1), NET_HS_ADMIT_FULL);
    cr_assert_eq(respond(response, addr(2000), NOW_S, T0 + NET_HS_ADMIT_MS), NET_HS_OK, "expired entries reused");
}

Test(handshake_server, the_tokens_in_use_table_is_bounded_and_forgets_expired_tokens)
{
    uint8_t first[NET_TOKEN_BYTES], token[NET_TOKEN_BYTES], response[NET_HS_RESPONSE_BYTES];
    issue(first, 1);
    challenge(first, addr(100), T0, response);
    cr_assert_eq(respond(response, addr(100), NOW_S, T0), NET_HS_OK);
    // from another address: in use, at the request and at the response
    uint8_t request[NET_HS_REQUEST_BYTES], reply[HS_MAX_DATAGRAM];
    hs_request_write(first, NONCE, request);
    hs_outcome o;
    hs_server_receive(server, request, sizeof request, addr(200), NOW_S, T0, reply, &o);
    cr_assert_eq(o.refusal, NET_HS_IN_USE);
    // 2 x PEERS + 16 other tokens admitted one after another (same expiry,
    // each when the admissions before it closed): the table is full at the
    // last, which replaces an entry
    uint64_t t = T0;
    for (uint16_t i = 0; i < 2 * PEERS + 16; i++) {
        t += NET_HS_ADMIT_MS;
        issue(token, 10u + i);
        challenge(token, addr((uint16_t)(3000 + i)), t, response);
        cr_assert_eq(respond(response, addr((uint16_t)(3000 + i)), NOW_S, t), NET_HS_OK, "token %u", i);
    }
    // the first token's entry was the one replaced (all expire alike; the
    // first found goes): it is forgotten, so another address gets a challenge
    hs_server_receive(server, request, sizeof request, addr(200), NOW_S, t, reply, &o);
    cr_assert_eq(o.refusal, NET_HS_OK, "%s", net_hs_refusal_name(o.refusal));
    cr_assert(o.challenged);
    // after the tokens' expiry nothing is in use: a new token (valid later
    // with another expiry) goes through from anywhere
    net_token_params p;
    keel_test_token_params(&p);
    p.expire_time = KEEL_TEST_EXPIRE + 1000;
    cr_assert(net_token_issue(&p, &key, token, NULL));
    t += NET_HS_ADMIT_MS;
    challenge(token, addr(4000), t, response);
    hs_server_receive(server, response, NET_HS_RESPONSE_BYTES, addr(4000), KEEL_TEST_EXPIRE + 1, t, reply, &o);
    cr_assert_eq(o.refusal, NET_HS_OK, "%s", net_hs_refusal_name(o.refusal));
}

Test(handshake_server, the_client_side_moves_on_only_with_its_own_replies)
{
    uint8_t token[NET_TOKEN_BYTES];
    issue(token, 5);
    hs_client c;
    cr_assert(hs_client_start(&c, token));
    size_t n = 0;
    const uint8_t *d = hs_client_due(&c, T0, &n);
    cr_assert_not_null(d);
    cr_assert_eq(n, NET_HS_REQUEST_BYTES);
    cr_assert_null(hs_client_due(&c, T0 + NET_HS_RESEND_MS - 1, &n), "not again before the resend time");
    cr_assert_not_null(hs_client_due(&c, T0 + NET_HS_RESEND_MS, &n));
    uint8_t reply[HS_MAX_DATAGRAM], request[NET_HS_REQUEST_BYTES];
    memcpy(request, d, sizeof request);
    hs_outcome o;
    size_t r = hs_server_receive(server, request, sizeof request, addr(100), NOW_S, T0, reply, &o);
    reply[6] ^= 1; // another nonce: not ours
    cr_assert_eq(hs_client_take(&c, reply, r), HS_REPLY_IGNORED);
    reply[6] ^= 1;
    cr_assert_eq(hs_client_take(&c, reply, r), HS_REPLY_CHALLENGE);
    cr_assert_eq(hs_client_take(&c, reply, r), HS_REPLY_IGNORED, "a second challenge is late");
    d = hs_client_due(&c, T0 + NET_HS_RESEND_MS + 1, &n);
    cr_assert_not_null(d, "the response goes at once");
    cr_assert_eq(n, NET_HS_RESPONSE_BYTES);
    r = hs_server_receive(server, d, n, addr(100), NOW_S, T0 + 2, reply, &o);
    cr_assert_eq(hs_client_take(&c, reply, r), HS_REPLY_ADMITTED);
    cr_assert_eq(c.phase, HS_PHASE_ADMITTED);
    cr_assert_null(hs_client_due(&c, T0 + 10 * NET_HS_RESEND_MS, &n), "nothing to send once admitted");
    hs_client_wipe(&c);
    cr_assert(keel_test_zeroed(&c, sizeof c));
}

Test(handshake_server, a_challenge_admits_once)
{
    uint8_t token[NET_TOKEN_BYTES], first[NET_HS_RESPONSE_BYTES], second[NET_HS_RESPONSE_BYTES];
    issue(token, 5);
    challenge(token, addr(100), T0, first);
    challenge(token, addr(100), T0 + 10, second);
    cr_assert_eq(respond(second, addr(100), NOW_S, T0 + 20), NET_HS_OK);
    cr_assert_eq(respond(second, addr(100), NOW_S, T0 + 30), NET_HS_OK, "the ADMITTED was lost: answered again");
    cr_assert_eq(respond(first, addr(100), NOW_S, T0 + 40), NET_HS_CHALLENGE_USED, "an older challenge");
    uint64_t id = 0;
    cr_assert(hs_server_admits(server, addr(100), 0xabcd, T0 + 50, &id), "the CONNECT binds the admission");
    cr_assert_eq(respond(second, addr(100), NOW_S, T0 + 60), NET_HS_CHALLENGE_USED,
                 "a captured response after the connection started");
    // a new challenge of the same token from the same address admits again
    uint8_t third[NET_HS_RESPONSE_BYTES];
    challenge(token, addr(100), T0 + 70, third);
    cr_assert_eq(respond(third, addr(100), NOW_S, T0 + 80), NET_HS_OK);
}

// The client's keys after the challenge (as hs_client derives them).
static void client_keys(const uint8_t *token, hs_addr from, uint64_t now_ms, uint8_t c2s[32], uint8_t s2c[32],
                        uint8_t *response)
{
    hs_client c;
    cr_assert(hs_client_start(&c, token));
    size_t n = 0;
    const uint8_t *request = hs_client_due(&c, now_ms, &n);
    cr_assert_not_null(request);
    uint8_t reply[HS_MAX_DATAGRAM];
    hs_outcome o;
    size_t m = hs_server_receive(server, request, n, from, NOW_S, now_ms, reply, &o);
    cr_assert_eq(hs_client_take(&c, reply, m), HS_REPLY_CHALLENGE);
    memcpy(c2s, c.c2s, 32);
    memcpy(s2c, c.s2c, 32);
    memcpy(response, c.response, NET_HS_RESPONSE_BYTES);
    hs_client_wipe(&c);
}

Test(handshake_server, both_sides_derive_the_same_keys_new_for_every_admission)
{
    uint8_t token[NET_TOKEN_BYTES], response[NET_HS_RESPONSE_BYTES];
    issue(token, 9);
    net_token_public pub;
    cr_assert_eq(net_token_read_public(token, sizeof token, &pub, NULL), NET_TOKEN_OK);
    uint8_t keys[2][4][32]; // per admission: client c2s, s2c; server c2s, s2c
    for (int k = 0; k < 2; k++) {
        uint64_t t = T0 + 1000u * (unsigned)k, id = 0;
        client_keys(token, addr(100), t, keys[k][0], keys[k][1], response);
        cr_assert_eq(respond(response, addr(100), NOW_S, t + 1), NET_HS_OK);
        cr_assert(hs_server_admits(server, addr(100), 0x100u + (unsigned)k, t + 2, &id));
        uint32_t timeout_s = 0;
        cr_assert(hs_server_session(server, addr(100), 0x100u + (unsigned)k, &id, &timeout_s, keys[k][2], keys[k][3]));
        cr_assert_eq(id, 9);
        cr_assert_eq(timeout_s, pub.timeout_s, "the token's timeout travels in the challenge");
        cr_assert_arr_eq(keys[k][0], keys[k][2], 32, "client to server");
        cr_assert_arr_eq(keys[k][1], keys[k][3], 32, "server to client");
        cr_assert_arr_neq(keys[k][0], pub.client_to_server_key, 32, "not the token's key itself");
        cr_assert_arr_neq(keys[k][0], keys[k][1], 32);
    }
    cr_assert_arr_neq(keys[0][0], keys[1][0], 32, "each admission has its own keys");
    cr_assert_arr_neq(keys[0][1], keys[1][1], 32);
}

// 10.(k / 256).(k % 256).1:5000, a source in prefix (/24) k.
static hs_addr prefix_addr(unsigned k)
{
    const uint8_t b[4] = {10, (uint8_t)(k >> 8), (uint8_t)k, 1};
    hs_addr a = {0, 5000};
    memcpy(&a.host, b, 4);
    return a;
}

// `count` requests from `from` (prefix_addr(i) for the i-th when `from` is
// NULL) at now_ms: how many were opened (not rate limited).
static unsigned opened_of(const uint8_t *request, unsigned count, const hs_addr *from, uint64_t now_ms)
{
    uint8_t reply[HS_MAX_DATAGRAM];
    hs_outcome o;
    unsigned opened = 0;
    for (unsigned i = 0; i < count; i++) {
        size_t n = hs_server_receive(server, request, NET_HS_REQUEST_BYTES, from ? *from : prefix_addr(i), NOW_S,
                                     now_ms, reply, &o);
        if (o.refusal == NET_HS_RATE_LIMITED) {
            cr_assert_eq(n, 0, "no reply");
        } else {
            cr_assert_eq(o.refusal, NET_HS_DAMAGED);
            opened++;
        }
    }
    return opened;
}

Test(handshake_server, requests_above_the_budget_are_dropped_unanswered)
{
    uint8_t token[NET_TOKEN_BYTES], request[NET_HS_REQUEST_BYTES];
    issue(token, 3);
    hs_request_write(token, NONCE, request);
    request[6 + HS_NONCE_BYTES + 100] ^= 1; // damaged: opened, then refused (cheap to answer)
    // from as many prefixes (about 32 a bucket): the cap over all sources
    cr_assert_eq(opened_of(request, NET_HS_REQUESTS_PER_S + 10u, NULL, T0), NET_HS_REQUESTS_PER_S,
                 "the bucket starts full");
    cr_assert_eq(opened_of(request, 200, NULL, T0 + 10), NET_HS_REQUESTS_PER_S / 100u, "10 ms later: 1/100 more");
    // from one address, once every bucket is full again: its prefix's share
    const hs_addr one = addr(100);
    cr_assert_eq(opened_of(request, NET_HS_PREFIX_REQUESTS_PER_S + 10u, &one, T0 + 2000), NET_HS_PREFIX_REQUESTS_PER_S);
    cr_assert_eq(opened_of(request, 100, &one, T0 + 2010), NET_HS_PREFIX_REQUESTS_PER_S / 100u);
    // ... while other prefixes still get theirs (but those few whose hash
    // shares its bucket: 1 in 256 each, so 10 of 100 has a chance near 1e-13)
    cr_assert_geq(opened_of(request, 100, NULL, T0 + 2010), 90);
}

// A request whose token's clear header fails (random bytes: no magic) is
// refused before the budget: a flood of them costs the players nothing, and
// its denials are answered within a budget of their own.
Test(handshake_server, a_bad_clear_header_costs_no_budget)
{
    uint8_t token[NET_TOKEN_BYTES], request[NET_HS_REQUEST_BYTES], junk[NET_HS_REQUEST_BYTES];
    uint8_t reply[HS_MAX_DATAGRAM];
    issue(token, 3);
    hs_request_write(token, NONCE, request);
    request[6 + HS_NONCE_BYTES + 100] ^= 1;
    memset(junk, 0xA5, sizeof junk); // no magic
    hs_request_write(junk + 14, NONCE, junk);
    const hs_addr one = addr(100);
    unsigned answered = 0;
    hs_outcome o;
    for (unsigned i = 0; i < 4u * NET_HS_REQUESTS_PER_S; i++) {
        answered += hs_server_receive(server, junk, sizeof junk, one, NOW_S, T0, reply, &o) > 0;
        cr_assert_eq(o.refusal, NET_HS_TOKEN_INVALID);
    }
    cr_assert_eq(answered, NET_HS_REQUESTS_PER_S, "denials of a clear header: their own bucket");
    cr_assert_eq(opened_of(request, NET_HS_PREFIX_REQUESTS_PER_S, &one, T0), NET_HS_PREFIX_REQUESTS_PER_S,
                 "the prefix's share untouched");
}

// One join over a link with round trip `rtt_ms` (half each way) on a
// virtual clock in 1 ms steps, the datagrams in `lost` (bit k: the client's
// k-th) lost: how many requests and responses the server received, and how
// many of its answers refused something. Returns the time the client was
// admitted, from its first request.
static uint64_t paced_join(uint32_t rtt_ms, uint32_t lost, uint32_t *requests, uint32_t *responses, uint32_t *refused)
{
    net_token_address self = keel_test_token_server();
    hs_server *sv = hs_server_create(&key, KEEL_TEST_PROTOCOL, &self, PEERS);
    cr_assert_not_null(sv);
    uint8_t token[NET_TOKEN_BYTES];
    issue(token, 40 + rtt_ms);
    hs_client c;
    cr_assert(hs_client_start(&c, token));
    enum { FLIGHT = 64 };
    struct {
        uint64_t at;
        size_t n;
        uint8_t d[HS_MAX_DATAGRAM];
    } up[FLIGHT], down[FLIGHT];
    uint32_t nup = 0, ndown = 0, sent = 0;
    *requests = *responses = *refused = 0;
    uint64_t t = T0;
    for (; t < T0 + 20000; t++) { // each step: the client takes what arrived, sends, the server answers
        for (uint32_t i = 0; i < ndown;) {
            if (down[i].at > t) {
                i++;
                continue;
            }
            hs_client_take_at(&c, down[i].d, down[i].n, t);
            down[i] = down[--ndown];
        }
        if (c.phase == HS_PHASE_ADMITTED)
            break;
        size_t n = 0;
        const uint8_t *d = hs_client_due(&c, t, &n);
        if (d && !(lost >> sent++ & 1u) && nup < FLIGHT) {
            up[nup].at = t + rtt_ms / 2;
            up[nup].n = n;
            memcpy(up[nup++].d, d, n);
        }
        for (uint32_t i = 0; i < nup;) { // the server answers what arrived
            if (up[i].at > t) {
                i++;
                continue;
            }
            hs_outcome o;
            uint8_t reply[HS_MAX_DATAGRAM];
            *requests += up[i].n == NET_HS_REQUEST_BYTES;
            *responses += up[i].n == NET_HS_RESPONSE_BYTES;
            size_t r = hs_server_receive(sv, up[i].d, up[i].n, addr(7000), NOW_S, t, reply, &o);
            *refused += o.refusal != NET_HS_OK;
            if (r && ndown < FLIGHT) {
                down[ndown].at = t + (rtt_ms - rtt_ms / 2);
                down[ndown].n = r;
                memcpy(down[ndown++].d, reply, r);
            }
            up[i] = up[--nup];
        }
    }
    cr_assert_eq(c.phase, HS_PHASE_ADMITTED, "rtt %u ms: not admitted in 20 s", rtt_ms);
    hs_client_wipe(&c);
    hs_server_destroy(sv);
    return t - T0;
}

Test(handshake_server, resends_are_paced_by_the_round_trip_seen_so_far)
{
    // Without loss: one request and one response whatever the round trip up
    // to NET_HS_RESEND_MS; above it, at most one more request (the resends
    // double) and never a second response (it waits for twice the round
    // trip the challenge showed), so no "challenge already used".
    static const uint32_t rtts[] = {2, 20, 100, 150, 200, 240, 300, 400, 600};
    for (size_t k = 0; k < sizeof rtts / sizeof rtts[0]; k++) {
        uint32_t req, resp, refused;
        uint64_t took = paced_join(rtts[k], 0, &req, &resp, &refused);
        cr_log_info("rtt %u ms: %u requests, %u responses, %u refused, admitted after %llu ms\n", rtts[k], req, resp,
                    refused, (unsigned long long)took);
        cr_expect_eq(req, rtts[k] < NET_HS_RESEND_MS ? 1u : 2u, "rtt %u ms: %u requests", rtts[k], req);
        cr_expect_eq(resp, 1u, "rtt %u ms: %u responses", rtts[k], resp);
        cr_expect_eq(refused, 0u, "rtt %u ms", rtts[k]);
        cr_expect_eq(took, 2u * rtts[k], "rtt %u ms: two round trips", rtts[k]);
    }
    // A lost request costs NET_HS_RESEND_MS; a lost response twice the
    // round trip (exact on the virtual clock).
    uint32_t req, resp, refused;
    cr_expect_eq(paced_join(150, 1u, &req, &resp, &refused), NET_HS_RESEND_MS + 300u);
    cr_expect_eq(refused, 0u);
    cr_expect_eq(paced_join(150, 2u, &req, &resp, &refused), 300u + 300u);
    cr_expect_eq(resp, 1u);
    cr_expect_eq(refused, 0u);
}
