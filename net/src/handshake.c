// keel: the handshake's datagrams and a secure server's bounded state. The
// protocol, its sizes and its invariants: <keel/net_handshake.h>; the
// functions: handshake.h. MIT licence, see LICENSE.
//
// Layouts (integers little-endian; header = 0x7F 0xFF 'k' 'h' version type):
//   REQUEST   header 6 | client nonce 8 | token's sent part 1032
//   CHALLENGE header 6 | client nonce 8 | seal nonce 24 | sealed 112 | tag 16
//   RESPONSE  the CHALLENGE's bytes with the type changed
//   ADMITTED  header 6 | client nonce 8
//   DENIED    header 6 | client nonce 8 | reason 1
// The challenge's plaintext: client IPv4 4 (network order) | port 2 | the
// token's timeout 2 (s, 1..3600) | client id 8 | token expiry 8 (s) | challenge expiry 8 (ms, the server's
// monotonic clock) | token tag 16 (the token's last 16 sent bytes, unique
// per token) | client-to-server key 32 | server-to-client key 32 (the
// token's). Its associated data: 'k' 'h' version and the client nonce. The
// seal nonce is the salt of the session keys (seal_derive).
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "handshake.h"
#include "seal.h"
#include "token_internal.h"

enum {
    HEADER = 6,
    NONCE_AT = HEADER,
    BODY_AT = HEADER + HS_NONCE_BYTES, // 14
    SEAL_NONCE = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
    PLAIN = 112,
    TAG = crypto_aead_xchacha20poly1305_ietf_ABYTES,
    TOKEN_TAG = 16,
};

_Static_assert(SEAL_NONCE == 24 && TAG == 16, "XChaCha20-Poly1305 sizes");
_Static_assert(BODY_AT + NET_TOKEN_SEALED_BYTES == NET_HS_REQUEST_BYTES, "request size");
_Static_assert(BODY_AT + SEAL_NONCE + PLAIN + TAG == NET_HS_CHALLENGE_BYTES, "challenge size");
_Static_assert(NET_HS_CHALLENGE_BYTES <= NET_HS_REQUEST_BYTES && NET_HS_DENIED_BYTES <= NET_HS_REQUEST_BYTES,
               "no reply to a request is larger than the request");
_Static_assert(NET_HS_ADMITTED_BYTES <= NET_HS_RESPONSE_BYTES && NET_HS_DENIED_BYTES <= NET_HS_RESPONSE_BYTES,
               "no reply to a response is larger than the response");

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void put_header(uint8_t *out, uint8_t type, const uint8_t nonce[HS_NONCE_BYTES])
{
    out[0] = 0x7F;
    out[1] = 0xFF;
    out[2] = 'k';
    out[3] = 'h';
    out[4] = NET_HS_VERSION;
    out[5] = type;
    memcpy(out + NONCE_AT, nonce, HS_NONCE_BYTES);
}

bool hs_is_handshake(const uint8_t *d, size_t n)
{
    return n >= 4 && d[0] == 0x7F && d[1] == 0xFF && d[2] == 'k' && d[3] == 'h';
}

// The size a type has (0: no such type).
static size_t type_size(uint8_t type)
{
    switch (type) {
    case HS_REQUEST: return NET_HS_REQUEST_BYTES;
    case HS_CHALLENGE: return NET_HS_CHALLENGE_BYTES;
    case HS_RESPONSE: return NET_HS_RESPONSE_BYTES;
    case HS_ADMITTED: return NET_HS_ADMITTED_BYTES;
    case HS_DENIED: return NET_HS_DENIED_BYTES;
    default: return 0;
    }
}

// The type of a well-formed handshake datagram of this version, or 0 with
// *why set.
static uint8_t check(const uint8_t *d, size_t n, net_hs_refusal *why)
{
    *why = NET_HS_MALFORMED;
    if (n < HEADER || !hs_is_handshake(d, n))
        return 0;
    if (d[4] != NET_HS_VERSION) {
        *why = NET_HS_BAD_VERSION;
        return 0;
    }
    size_t want = type_size(d[5]);
    if (want == 0 || n != want)
        return 0;
    *why = NET_HS_OK;
    return d[5];
}

size_t hs_request_write(const uint8_t token_sent[NET_TOKEN_SEALED_BYTES], const uint8_t nonce[HS_NONCE_BYTES],
                        uint8_t *out)
{
    put_header(out, HS_REQUEST, nonce);
    memcpy(out + BODY_AT, token_sent, NET_TOKEN_SEALED_BYTES);
    return NET_HS_REQUEST_BYTES;
}

hs_reply hs_client_receive(const uint8_t *d, size_t n, const uint8_t nonce[HS_NONCE_BYTES], uint8_t *response,
                           uint8_t *reason)
{
    net_hs_refusal why;
    uint8_t type = check(d, n, &why);
    if (type == 0 || sodium_memcmp(d + NONCE_AT, nonce, HS_NONCE_BYTES) != 0)
        return HS_REPLY_IGNORED;
    switch (type) {
    case HS_CHALLENGE:
        memcpy(response, d, NET_HS_CHALLENGE_BYTES);
        response[5] = HS_RESPONSE;
        return HS_REPLY_CHALLENGE;
    case HS_ADMITTED: return HS_REPLY_ADMITTED;
    case HS_DENIED:
        if (d[BODY_AT] == NET_HS_OK || d[BODY_AT] >= NET_HS_REFUSAL_COUNT)
            return HS_REPLY_IGNORED;
        *reason = d[BODY_AT];
        return HS_REPLY_DENIED;
    default: return HS_REPLY_IGNORED; // a request or response: the server's datagrams only
    }
}

bool hs_client_start(hs_client *c, const uint8_t *token)
{
    memset(c, 0, sizeof *c);
    if (sodium_init() < 0)
        return false;
    net_token_public pub;
    if (net_token_read_public(token, NET_TOKEN_BYTES, &pub, NULL) != NET_TOKEN_OK)
        return false;
    memcpy(c->c2s, pub.client_to_server_key, sizeof c->c2s);
    memcpy(c->s2c, pub.server_to_client_key, sizeof c->s2c);
    c->timeout_s = pub.timeout_s;
    sodium_memzero(&pub, sizeof pub);
    randombytes_buf(c->nonce, sizeof c->nonce);
    hs_request_write(token, c->nonce, c->request);
    c->phase = HS_PHASE_REQUEST;
    return true;
}

void hs_client_wipe(hs_client *c) { sodium_memzero(c, sizeof *c); }

const uint8_t *hs_client_due(hs_client *c, uint64_t now_ms, size_t *n)
{
    if ((c->phase != HS_PHASE_REQUEST && c->phase != HS_PHASE_RESPONSE) || now_ms < c->due_ms)
        return NULL;
    // The first resend after NET_HS_RESEND_MS, or after twice the round
    // trip measured; then doubling: the wait so far bounds the round trip.
    uint32_t first = c->phase == HS_PHASE_RESPONSE && c->rtt_ms ? 2u * c->rtt_ms : NET_HS_RESEND_MS;
    if (first < NET_HS_RESEND_MIN_MS)
        first = NET_HS_RESEND_MIN_MS;
    c->interval_ms = c->sends == 0 ? first : 2u * c->interval_ms;
    if (c->interval_ms > NET_HS_RESEND_MAX_MS)
        c->interval_ms = NET_HS_RESEND_MAX_MS;
    if (c->sends++ == 0)
        c->sent_ms = now_ms;
    c->due_ms = now_ms + c->interval_ms;
    *n = c->phase == HS_PHASE_REQUEST ? sizeof c->request : sizeof c->response;
    return c->phase == HS_PHASE_REQUEST ? c->request : c->response;
}

hs_reply hs_client_take(hs_client *c, const uint8_t *d, size_t n) { return hs_client_take_at(c, d, n, hs_clock_ms()); }

hs_reply hs_client_take_at(hs_client *c, const uint8_t *d, size_t n, uint64_t now_ms)
{
    uint8_t response[NET_HS_RESPONSE_BYTES];
    uint8_t reason = 0;
    hs_reply r = hs_client_receive(d, n, c->nonce, response, &reason);
    if (r == HS_REPLY_CHALLENGE && c->phase == HS_PHASE_REQUEST) {
        memcpy(c->response, response, sizeof response);
        const uint8_t *salt = c->response + BODY_AT;
        seal_derive(c->c2s, "keel c2s", salt, c->c2s); // the token's keys become this session's
        seal_derive(c->s2c, "keel s2c", salt, c->s2c);
        c->phase = HS_PHASE_RESPONSE;
        c->due_ms = 0;
        // The round trip from the request's first send: exact when it went
        // once, and never shorter than the real one when it went again
        // (the challenge may answer any of them), so that the response is
        // not sent again before its answer can be back.
        uint64_t rtt = now_ms - c->sent_ms;
        c->rtt_ms = c->sends && now_ms >= c->sent_ms && rtt <= 60000u ? (uint32_t)rtt + (rtt == 0) : 0;
        c->sends = 0;
    } else if (r == HS_REPLY_ADMITTED && c->phase == HS_PHASE_RESPONSE) {
        c->phase = HS_PHASE_ADMITTED;
    } else if (r == HS_REPLY_DENIED && (c->phase == HS_PHASE_REQUEST || c->phase == HS_PHASE_RESPONSE)) {
        c->phase = HS_PHASE_DENIED;
        c->refusal = reason;
    } else {
        r = HS_REPLY_IGNORED; // late, repeated, or out of turn
    }
    return r;
}

uint64_t hs_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// ---- server ----------------------------------------------------------------------

typedef struct admitted {
    hs_addr addr;
    bool used;  ///< the entry holds an admission
    bool bound; ///< a CONNECT bound connect_id
    uint32_t connect_id;
    uint64_t client_id;
    uint64_t until_ms;
    uint64_t challenge_ms;                            ///< the admitting challenge's expiry
    uint32_t timeout_s;                               ///< the token's
    uint8_t c2s[SEAL_KEY_BYTES], s2c[SEAL_KEY_BYTES]; ///< the session's keys
} admitted;

typedef struct in_use {
    uint8_t tag[TOKEN_TAG];
    hs_addr addr;
    uint64_t expire_s;     ///< the token's expiry; 0: a free entry
    uint64_t challenge_ms; ///< the expiry of the last challenge that admitted it
} in_use;

// A token bucket: `level` is what may be taken now, x 1000; it fills at a
// rate a second up to as deep (a full bucket on first use).
typedef struct bucket {
    uint64_t level;
    uint64_t ms; ///< when it was last filled
    bool set;
} bucket;

struct hs_server {
    net_token_key key;
    uint8_t challenge_key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
    uint8_t prefix_key[crypto_shorthash_KEYBYTES]; ///< hashes a source prefix to its bucket
    uint64_t protocol_id;
    net_token_address self;
    admitted *admitted;
    in_use *in_use;
    uint32_t admitted_cap, in_use_cap;
    bucket opens;                           ///< requests opened, all sources: NET_HS_REQUESTS_PER_S
    bucket denials;                         ///< denials of a clear header answered: NET_HS_REQUESTS_PER_S
    bucket prefixes[NET_HS_PREFIX_BUCKETS]; ///< requests opened per source prefix: NET_HS_PREFIX_REQUESTS_PER_S
    bool (*held)(void *context, uint64_t client_id, hs_addr from);
    void *held_context;
};

void hs_server_set_held(hs_server *s, bool (*held)(void *context, uint64_t client_id, hs_addr from), void *context)
{
    s->held = held;
    s->held_context = context;
}

hs_server *hs_server_create(const net_token_key *key, uint64_t protocol_id, const net_token_address *self,
                            uint32_t max_peers)
{
    if (sodium_init() < 0)
        return NULL;
    hs_server *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->admitted_cap = max_peers + 16u;
    s->in_use_cap = 2u * max_peers + 16u;
    s->admitted = calloc(s->admitted_cap, sizeof *s->admitted);
    s->in_use = calloc(s->in_use_cap, sizeof *s->in_use);
    if (!s->admitted || !s->in_use) {
        hs_server_destroy(s);
        return NULL;
    }
    s->key = *key;
    s->protocol_id = protocol_id;
    s->self = *self;
    crypto_aead_xchacha20poly1305_ietf_keygen(s->challenge_key);
    crypto_shorthash_keygen(s->prefix_key);
    return s;
}

void hs_server_destroy(hs_server *s)
{
    if (!s)
        return;
    net_token_key_wipe(&s->key);
    sodium_memzero(s->challenge_key, sizeof s->challenge_key);
    if (s->admitted)
        sodium_memzero(s->admitted, s->admitted_cap * sizeof *s->admitted);
    free(s->admitted);
    free(s->in_use);
    free(s);
}

static bool addr_eq(hs_addr a, hs_addr b) { return a.host == b.host && a.port == b.port; }

static net_hs_refusal token_refusal(net_token_result r)
{
    switch (r) {
    case NET_TOKEN_OK: return NET_HS_OK;
    case NET_TOKEN_NO_CRYPTO: return NET_HS_NO_CRYPTO;
    case NET_TOKEN_BAD_VERSION: return NET_HS_TOKEN_VERSION;
    case NET_TOKEN_WRONG_PROTOCOL: return NET_HS_WRONG_PROTOCOL;
    case NET_TOKEN_EXPIRED: return NET_HS_EXPIRED;
    case NET_TOKEN_TAG: return NET_HS_DAMAGED;
    case NET_TOKEN_WRONG_SERVER: return NET_HS_WRONG_SERVER;
    default: return NET_HS_TOKEN_INVALID;
    }
}

// The live entry of the token (by its tag), or NULL.
static in_use *find_in_use(hs_server *s, const uint8_t *tag, uint64_t now_s)
{
    for (uint32_t i = 0; i < s->in_use_cap; i++) {
        in_use *u = &s->in_use[i];
        if (u->expire_s > now_s && memcmp(u->tag, tag, TOKEN_TAG) == 0)
            return u;
    }
    return NULL;
}

// True when the token is remembered as in use from another address while it
// is valid.
static bool used_elsewhere(hs_server *s, const uint8_t *tag, hs_addr from, uint64_t now_s)
{
    const in_use *u = find_in_use(s, tag, now_s);
    return u && !addr_eq(u->addr, from);
}

// Remembers the token as in use from `from`, admitted by the challenge that
// expires at challenge_ms: its own entry, else a free or expired one, else
// the one that expires first.
static void remember_in_use(hs_server *s, const uint8_t *tag, hs_addr from, uint64_t expire_s, uint64_t now_s,
                            uint64_t challenge_ms)
{
    in_use *pick = find_in_use(s, tag, now_s);
    if (!pick) {
        pick = &s->in_use[0];
        for (uint32_t i = 1; i < s->in_use_cap; i++)
            if (s->in_use[i].expire_s < pick->expire_s)
                pick = &s->in_use[i]; // free (0) and expired entries first
    }
    memcpy(pick->tag, tag, TOKEN_TAG);
    pick->addr = from;
    pick->expire_s = expire_s;
    pick->challenge_ms = challenge_ms;
}

// The unbound admission of `from`, or NULL.
static admitted *find_unbound(hs_server *s, hs_addr from)
{
    for (uint32_t i = 0; i < s->admitted_cap; i++) {
        admitted *a = &s->admitted[i];
        if (a->used && !a->bound && addr_eq(a->addr, from))
            return a;
    }
    return NULL;
}

// Admits `from` for NET_HS_ADMIT_MS with the session's keys: its own unbound
// entry renewed, else a free or expired one. False when every entry is live.
static bool admit(hs_server *s, hs_addr from, uint64_t client_id, uint32_t timeout_s, uint64_t now_ms,
                  uint64_t challenge_ms, const uint8_t c2s[SEAL_KEY_BYTES], const uint8_t s2c[SEAL_KEY_BYTES])
{
    admitted *pick = find_unbound(s, from);
    for (uint32_t i = 0; !pick && i < s->admitted_cap; i++) {
        admitted *a = &s->admitted[i];
        if (!a->used || a->until_ms <= now_ms)
            pick = a;
    }
    if (!pick)
        return false;
    sodium_memzero(pick, sizeof *pick);
    pick->used = true;
    pick->addr = from;
    pick->client_id = client_id;
    pick->until_ms = now_ms + NET_HS_ADMIT_MS;
    pick->challenge_ms = challenge_ms;
    pick->timeout_s = timeout_s;
    memcpy(pick->c2s, c2s, SEAL_KEY_BYTES);
    memcpy(pick->s2c, s2c, SEAL_KEY_BYTES);
    return true;
}

static size_t write_denied(uint8_t *out, const uint8_t *nonce, net_hs_refusal why)
{
    put_header(out, HS_DENIED, nonce);
    out[BODY_AT] = (uint8_t)why;
    return NET_HS_DENIED_BYTES;
}

// Fills `b` (per_s a second, as deep) to now_ms; true when one may be taken.
static bool bucket_fill(bucket *b, uint32_t per_s, uint64_t now_ms)
{
    const uint64_t full = (uint64_t)per_s * 1000u;
    if (!b->set) {
        b->level = full;
        b->ms = now_ms;
        b->set = true;
    } else if (now_ms > b->ms) {
        uint64_t gap = now_ms - b->ms;
        uint64_t add = gap >= 1000u ? full : gap * per_s;
        b->level = b->level + add >= full ? full : b->level + add;
        b->ms = now_ms;
    }
    return b->level >= 1000u;
}

static bool bucket_take(bucket *b, uint32_t per_s, uint64_t now_ms)
{
    if (!bucket_fill(b, per_s, now_ms))
        return false;
    b->level -= 1000u;
    return true;
}

// The bucket of the source's prefix (IPv4 /24, the first three bytes of the
// address): a keyed hash (SipHash, the server's random key), so that a
// sender cannot choose whose bucket it shares.
static bucket *prefix_bucket(hs_server *s, hs_addr from)
{
    uint8_t prefix[3], h[crypto_shorthash_BYTES];
    memcpy(prefix, &from.host, sizeof prefix); // network order: the first three bytes
    crypto_shorthash(h, prefix, sizeof prefix, s->prefix_key);
    _Static_assert(NET_HS_PREFIX_BUCKETS == 256, "one hash byte picks the bucket");
    return &s->prefixes[h[0]];
}

// The request budget, charged only for a request whose clear header passed:
// its prefix's share, and the cap over all sources. True when it may be
// opened (both charged); else neither is.
static bool take_budget(hs_server *s, hs_addr from, uint64_t now_ms)
{
    bucket *p = prefix_bucket(s, from);
    bool prefix_ok = bucket_fill(p, NET_HS_PREFIX_REQUESTS_PER_S, now_ms);
    if (!bucket_fill(&s->opens, NET_HS_REQUESTS_PER_S, now_ms) || !prefix_ok)
        return false;
    p->level -= 1000u;
    s->opens.level -= 1000u;
    return true;
}

static size_t on_request(hs_server *s, const uint8_t *d, hs_addr from, uint64_t now_s, uint64_t now_ms, uint8_t *out,
                         hs_outcome *o)
{
    const uint8_t *token = d + BODY_AT;
    const uint8_t *tag = token + NET_TOKEN_SEALED_BYTES - TOKEN_TAG;
    // the clear header first: what fails it costs no budget, and its denial
    // is answered only within a budget of its own
    o->refusal = token_refusal(net_token_check_clear(token, NET_TOKEN_SEALED_BYTES, s->protocol_id, now_s));
    if (o->refusal != NET_HS_OK)
        return bucket_take(&s->denials, NET_HS_REQUESTS_PER_S, now_ms) ? write_denied(out, d + NONCE_AT, o->refusal)
                                                                       : 0;
    if (!take_budget(s, from, now_ms)) {
        o->refusal = NET_HS_RATE_LIMITED;
        return 0;
    }
    net_token_private p;
    o->refusal =
        token_refusal(net_token_open(token, NET_TOKEN_SEALED_BYTES, &s->key, s->protocol_id, now_s, &s->self, &p));
    if (o->refusal == NET_HS_OK && used_elsewhere(s, tag, from, now_s))
        o->refusal = NET_HS_IN_USE;
    if (o->refusal != NET_HS_OK) {
        net_token_private_wipe(&p);
        return write_denied(out, d + NONCE_AT, o->refusal);
    }
    uint8_t plain[PLAIN];
    memset(plain, 0, sizeof plain);
    memcpy(plain, &from.host, 4);
    put_le(plain + 4, from.port, 2);
    put_le(plain + 6, p.timeout_s, 2);
    put_le(plain + 8, p.client_id, 8);
    put_le(plain + 16, p.expire_time, 8);
    put_le(plain + 24, now_ms + NET_HS_CHALLENGE_MS, 8);
    memcpy(plain + 32, tag, TOKEN_TAG);
    memcpy(plain + 48, p.client_to_server_key, SEAL_KEY_BYTES);
    memcpy(plain + 80, p.server_to_client_key, SEAL_KEY_BYTES);
    net_token_private_wipe(&p);

    put_header(out, HS_CHALLENGE, d + NONCE_AT);
    uint8_t *seal_nonce = out + BODY_AT;
    randombytes_buf(seal_nonce, SEAL_NONCE);
    uint8_t ad[3 + HS_NONCE_BYTES] = {'k', 'h', NET_HS_VERSION};
    memcpy(ad + 3, d + NONCE_AT, HS_NONCE_BYTES);
    crypto_aead_xchacha20poly1305_ietf_encrypt(seal_nonce + SEAL_NONCE, NULL, plain, PLAIN, ad, sizeof ad, NULL,
                                               seal_nonce, s->challenge_key);
    sodium_memzero(plain, sizeof plain);
    o->challenged = true;
    return NET_HS_CHALLENGE_BYTES;
}

// A response whose challenge opened: the checks, then the admission.
static net_hs_refusal admit_response(hs_server *s, const uint8_t *plain, const uint8_t *salt, hs_addr from,
                                     uint64_t now_s, uint64_t now_ms)
{
    hs_addr was;
    memcpy(&was.host, plain, 4);
    was.port = (uint16_t)get_le(plain + 4, 2);
    uint64_t client_id = get_le(plain + 8, 8);
    uint64_t token_expire = get_le(plain + 16, 8);
    uint64_t challenge_ms = get_le(plain + 24, 8);
    const uint8_t *tag = plain + 32;
    if (now_ms >= challenge_ms)
        return NET_HS_CHALLENGE_EXPIRED;
    if (!addr_eq(was, from))
        return NET_HS_CHALLENGE_ADDRESS;
    if (now_s >= token_expire)
        return NET_HS_EXPIRED;
    const in_use *u = find_in_use(s, tag, now_s);
    if (u && !addr_eq(u->addr, from))
        return NET_HS_IN_USE;
    if (u && u->challenge_ms >= challenge_ms) {
        // This challenge (or a later one) admitted the token already: the
        // same response again is answered again while its admission waits
        // for a CONNECT (the ADMITTED was lost); anything else is a replay.
        const admitted *a = find_unbound(s, from);
        return a && a->challenge_ms == challenge_ms && a->until_ms > now_ms ? NET_HS_OK : NET_HS_CHALLENGE_USED;
    }
    if (s->held && s->held(s->held_context, client_id, from))
        return NET_HS_CLIENT_CONNECTED; // one connection per client id
    uint8_t c2s[SEAL_KEY_BYTES], s2c[SEAL_KEY_BYTES];
    seal_derive(plain + 48, "keel c2s", salt, c2s);
    seal_derive(plain + 80, "keel s2c", salt, s2c);
    bool ok = admit(s, from, client_id, (uint32_t)get_le(plain + 6, 2), now_ms, challenge_ms, c2s, s2c);
    sodium_memzero(c2s, sizeof c2s);
    sodium_memzero(s2c, sizeof s2c);
    if (!ok)
        return NET_HS_ADMIT_FULL;
    remember_in_use(s, tag, from, token_expire, now_s, challenge_ms);
    return NET_HS_OK;
}

static size_t on_response(hs_server *s, const uint8_t *d, hs_addr from, uint64_t now_s, uint64_t now_ms, uint8_t *out,
                          hs_outcome *o)
{
    const uint8_t *seal_nonce = d + BODY_AT;
    uint8_t ad[3 + HS_NONCE_BYTES] = {'k', 'h', NET_HS_VERSION};
    memcpy(ad + 3, d + NONCE_AT, HS_NONCE_BYTES);
    uint8_t plain[PLAIN];
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, NULL, NULL, seal_nonce + SEAL_NONCE, PLAIN + TAG, ad,
                                                   sizeof ad, seal_nonce, s->challenge_key) != 0)
        o->refusal = NET_HS_CHALLENGE_DAMAGED;
    else
        o->refusal = admit_response(s, plain, seal_nonce, from, now_s, now_ms);
    sodium_memzero(plain, sizeof plain);
    if (o->refusal != NET_HS_OK)
        return write_denied(out, d + NONCE_AT, o->refusal);
    put_header(out, HS_ADMITTED, d + NONCE_AT);
    o->admitted = true;
    return NET_HS_ADMITTED_BYTES;
}

size_t hs_server_receive(hs_server *s, const uint8_t *d, size_t n, hs_addr from, uint64_t now_s, uint64_t now_ms,
                         uint8_t *out, hs_outcome *outcome)
{
    memset(outcome, 0, sizeof *outcome);
    uint8_t type = check(d, n, &outcome->refusal);
    if (type == HS_REQUEST)
        return on_request(s, d, from, now_s, now_ms, out, outcome);
    if (type == HS_RESPONSE)
        return on_response(s, d, from, now_s, now_ms, out, outcome);
    if (type != 0)
        outcome->refusal = NET_HS_MALFORMED; // a server's datagram sent to a server
    return 0;
}

// The admission of `from` for `connect_id` (the first CONNECT of an
// admission binds its connect id; its retransmissions pass, other connect
// ids do not), its key tried with `open` first when given.
static bool admits(hs_server *s, hs_addr from, uint64_t now_ms, uint64_t *client_id, uint32_t *connect_id,
                   bool (*open)(const uint8_t c2s[32], void *context, uint32_t *connect_id), void *context)
{
    for (uint32_t i = 0; i < s->admitted_cap; i++) {
        admitted *a = &s->admitted[i];
        if (!a->used || a->until_ms <= now_ms || !addr_eq(a->addr, from))
            continue;
        if (open && !open(a->c2s, context, connect_id))
            continue;
        if (a->bound && a->connect_id != *connect_id)
            continue;
        a->bound = true;
        a->connect_id = *connect_id;
        *client_id = a->client_id;
        return true;
    }
    return false;
}

bool hs_server_admits(hs_server *s, hs_addr from, uint32_t connect_id, uint64_t now_ms, uint64_t *client_id)
{
    return admits(s, from, now_ms, client_id, &connect_id, NULL, NULL);
}

bool hs_server_admits_open(hs_server *s, hs_addr from, uint64_t now_ms, uint64_t *client_id, uint32_t *connect_id,
                           bool (*open)(const uint8_t c2s[32], void *context, uint32_t *connect_id), void *context)
{
    return admits(s, from, now_ms, client_id, connect_id, open, context);
}

bool hs_server_session(const hs_server *s, hs_addr from, uint32_t connect_id, uint64_t *client_id, uint32_t *timeout_s,
                       uint8_t c2s[SEAL_KEY_BYTES], uint8_t s2c[SEAL_KEY_BYTES])
{
    for (uint32_t i = 0; i < s->admitted_cap; i++) {
        const admitted *a = &s->admitted[i];
        if (a->used && a->bound && a->connect_id == connect_id && addr_eq(a->addr, from)) {
            *client_id = a->client_id;
            *timeout_s = a->timeout_s;
            memcpy(c2s, a->c2s, SEAL_KEY_BYTES);
            memcpy(s2c, a->s2c, SEAL_KEY_BYTES);
            return true;
        }
    }
    return false;
}

const char *net_hs_refusal_name(net_hs_refusal r)
{
    static const char *const names[NET_HS_REFUSAL_COUNT] = {
        [NET_HS_OK] = "ok",
        [NET_HS_MALFORMED] = "malformed",
        [NET_HS_BAD_VERSION] = "bad handshake version",
        [NET_HS_TOKEN_INVALID] = "invalid token",
        [NET_HS_TOKEN_VERSION] = "bad token version",
        [NET_HS_WRONG_PROTOCOL] = "wrong protocol",
        [NET_HS_EXPIRED] = "expired",
        [NET_HS_DAMAGED] = "damaged token",
        [NET_HS_WRONG_SERVER] = "wrong server",
        [NET_HS_IN_USE] = "token in use from another address",
        [NET_HS_CHALLENGE_DAMAGED] = "damaged challenge",
        [NET_HS_CHALLENGE_EXPIRED] = "challenge expired",
        [NET_HS_CHALLENGE_ADDRESS] = "challenge from another address",
        [NET_HS_ADMIT_FULL] = "too many admissions",
        [NET_HS_UNADMITTED] = "connect not admitted",
        [NET_HS_NO_CRYPTO] = "no crypto",
        [NET_HS_RATE_LIMITED] = "rate limited",
        [NET_HS_CHALLENGE_USED] = "challenge already used",
        [NET_HS_CLIENT_CONNECTED] = "client id already connected",
    };
    if ((unsigned)r >= NET_HS_REFUSAL_COUNT)
        return "unknown";
    return names[r];
}
