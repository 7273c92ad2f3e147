// keel: connect tokens, issued and opened. MIT licence, see LICENSE.
//
// The layout (docs/security.md, "Connect tokens"), all little-endian:
//   header    0..32     magic "KTOK", version, protocol id, create, expire
//                       (the AEAD's associated data)
//   nonce     32..56    random, per token
//   sealed    56..1032  the 960-byte private part encrypted, then its tag
//   public    1032..1712 timeout, server count, 32 address slots, two keys
// The private part before sealing:
//   0 client id u64, 8 expire u64, 16 timeout u32, 20 user data size u32,
//   24 client-to-server key, 56 server-to-client key, 88 server count u32,
//   92 32 address slots, 700 user data (256, zero after its size),
//   956 4 reserved zero bytes
// An address slot is 19 bytes: family u8 (0 unused, 1 IPv4, 2 IPv6), 16
// address bytes (IPv4 in the first 4, the rest zero), port u16. Slots from
// the count on are all zero. Every unused byte is zero and checked, so one
// token has exactly one encoding.
//
// Every decoder checks a field's bounds before it reads it; plaintext copies
// of the private part on the stack are wiped before returning.
#define _POSIX_C_SOURCE 200809L

#include <keel/net_token.h>

#include <arpa/inet.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "token_internal.h"

enum {
    H_MAGIC = 0,
    H_VERSION = 4,
    H_PROTOCOL = 8,
    H_CREATE = 16,
    H_EXPIRE = 24,
    T_NONCE = NET_TOKEN_HEADER_BYTES,
    T_SEALED = T_NONCE + NET_TOKEN_NONCE_BYTES,
    T_PUBLIC = NET_TOKEN_SEALED_BYTES,
    ADDRESS_BYTES = 19,
    ADDRESS_LIST_BYTES = ADDRESS_BYTES * NET_TOKEN_MAX_SERVERS,
    // the public part, from T_PUBLIC
    P_TIMEOUT = 0,
    P_COUNT = 4,
    P_SERVERS = 8,
    P_C2S = P_SERVERS + ADDRESS_LIST_BYTES,
    P_S2C = P_C2S + NET_TOKEN_KEY_BYTES,
    P_END = P_S2C + NET_TOKEN_KEY_BYTES,
    // the private part
    S_CLIENT = 0,
    S_EXPIRE = 8,
    S_TIMEOUT = 16,
    S_USER_SIZE = 20,
    S_C2S = 24,
    S_S2C = 56,
    S_COUNT = 88,
    S_SERVERS = 92,
    S_USER = S_SERVERS + ADDRESS_LIST_BYTES,
    S_RESERVED = S_USER + NET_TOKEN_MAX_USER_DATA,
    S_END = S_RESERVED + 4,
};
_Static_assert((int)P_END == (int)NET_TOKEN_PUBLIC_BYTES, "public part size");
_Static_assert((int)S_END == (int)NET_TOKEN_PRIVATE_BYTES, "private part size");
_Static_assert((int)T_PUBLIC + (int)P_END == (int)NET_TOKEN_BYTES, "token size");

static const uint8_t MAGIC[4] = {'K', 'T', 'O', 'K'};

const char *net_token_result_name(net_token_result r)
{
    static const char *const names[NET_TOKEN_RESULT_COUNT] = {
        "ok",
        "no crypto",
        "truncated",
        "bad size",
        "bad magic",
        "bad version",
        "wrong protocol",
        "expired",
        "authentication failed",
        "malformed",
        "wrong server",
    };
    return (unsigned)r < NET_TOKEN_RESULT_COUNT ? names[r] : "unknown";
}

bool net_token_crypto_ready(void)
{
    return sodium_init() >= 0; // 1: already initialised
}

// ---- little-endian fields ----------------------------------------------------------

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }

static bool all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

// ---- addresses ---------------------------------------------------------------------

static bool address_valid(const net_token_address *a)
{
    if (a->port == 0)
        return false;
    if (a->family == NET_TOKEN_IPV4)
        return all_zero(a->ip + 4, 12);
    return a->family == NET_TOKEN_IPV6;
}

bool net_token_address_equal(const net_token_address *a, const net_token_address *b)
{
    return a->family == b->family && a->port == b->port && memcmp(a->ip, b->ip, sizeof a->ip) == 0;
}

bool net_token_address_parse(const char *text, net_token_address *out)
{
    memset(out, 0, sizeof *out);
    char host[64];
    const char *port_s;
    uint8_t family;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof host)
            return false;
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = '\0';
        port_s = close + 2;
        family = NET_TOKEN_IPV6;
    } else {
        const char *colon = strchr(text, ':');
        if (!colon || strchr(colon + 1, ':') || (size_t)(colon - text) >= sizeof host)
            return false;
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = '\0';
        port_s = colon + 1;
        family = NET_TOKEN_IPV4;
    }
    uint32_t port = 0;
    if (!port_s[0] || strlen(port_s) > 5)
        return false;
    for (const char *c = port_s; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        port = port * 10 + (uint32_t)(*c - '0');
    }
    if (port == 0 || port > 65535)
        return false;
    if (inet_pton(family == NET_TOKEN_IPV4 ? AF_INET : AF_INET6, host, out->ip) != 1) {
        memset(out, 0, sizeof *out);
        return false;
    }
    out->family = family;
    out->port = (uint16_t)port;
    return true;
}

void net_token_address_format(const net_token_address *a, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (a->family == NET_TOKEN_IPV4 || a->family == NET_TOKEN_IPV6)
        inet_ntop(a->family == NET_TOKEN_IPV4 ? AF_INET : AF_INET6, a->ip, host, sizeof host);
    if (size)
        snprintf(buf, size, a->family == NET_TOKEN_IPV6 ? "[%s]:%u" : "%s:%u", host, (unsigned)a->port);
}

// Writes `count` addresses and zeroes the rest of the slots.
static void put_addresses(uint8_t *p, const net_token_address *list, uint32_t count)
{
    memset(p, 0, ADDRESS_LIST_BYTES);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *s = p + (size_t)i * ADDRESS_BYTES;
        s[0] = list[i].family;
        memcpy(s + 1, list[i].ip, 16);
        put_u16(s + 17, list[i].port);
    }
}

// Reads `count` (already known to be 1..32) slots and checks that the rest
// are zero; false with the offset of the bad slot (from p) in *bad.
static bool get_addresses(const uint8_t *p, uint32_t count, net_token_address *list, size_t *bad)
{
    for (uint32_t i = 0; i < NET_TOKEN_MAX_SERVERS; i++) {
        const uint8_t *s = p + (size_t)i * ADDRESS_BYTES;
        if (i >= count) {
            if (!all_zero(s, ADDRESS_BYTES)) {
                *bad = (size_t)i * ADDRESS_BYTES;
                return false;
            }
            continue;
        }
        net_token_address *a = &list[i];
        a->family = s[0];
        memcpy(a->ip, s + 1, 16);
        a->port = get_u16(s + 17);
        if (!address_valid(a)) {
            *bad = (size_t)i * ADDRESS_BYTES;
            return false;
        }
    }
    return true;
}

// ---- issue -------------------------------------------------------------------------

static const char *check_params(const net_token_params *p)
{
    if (p->expire_time < p->create_time)
        return "expire_time is before create_time";
    if (p->timeout_s < 1 || p->timeout_s > NET_TOKEN_MAX_TIMEOUT)
        return "timeout_s is not 1..3600 seconds";
    if (p->server_count < 1 || p->server_count > NET_TOKEN_MAX_SERVERS)
        return "server_count is not 1..32";
    for (uint32_t i = 0; i < p->server_count; i++)
        if (!address_valid(&p->servers[i]))
            return "a server address is not IPv4 or IPv6 with a port 1..65535";
    if (p->user_data_size > NET_TOKEN_MAX_USER_DATA)
        return "user_data_size is over 256 bytes";
    return NULL;
}

bool net_token_issue(const net_token_params *params, const net_token_key *key, uint8_t *out, const char **error)
{
    memset(out, 0, NET_TOKEN_BYTES);
    const char *bad = check_params(params);
    if (!bad && !net_token_crypto_ready())
        bad = "libsodium could not be initialised";
    if (bad) {
        if (error)
            *error = bad;
        return false;
    }
    memcpy(out + H_MAGIC, MAGIC, 4);
    put_u32(out + H_VERSION, NET_TOKEN_VERSION);
    put_u64(out + H_PROTOCOL, params->protocol_id);
    put_u64(out + H_CREATE, params->create_time);
    put_u64(out + H_EXPIRE, params->expire_time);
    randombytes_buf(out + T_NONCE, NET_TOKEN_NONCE_BYTES);

    uint8_t *pub = out + T_PUBLIC;
    put_u32(pub + P_TIMEOUT, params->timeout_s);
    put_u32(pub + P_COUNT, params->server_count);
    put_addresses(pub + P_SERVERS, params->servers, params->server_count);
    randombytes_buf(pub + P_C2S, NET_TOKEN_KEY_BYTES);
    randombytes_buf(pub + P_S2C, NET_TOKEN_KEY_BYTES);

    uint8_t priv[NET_TOKEN_PRIVATE_BYTES];
    memset(priv, 0, sizeof priv);
    put_u64(priv + S_CLIENT, params->client_id);
    put_u64(priv + S_EXPIRE, params->expire_time);
    put_u32(priv + S_TIMEOUT, params->timeout_s);
    put_u32(priv + S_USER_SIZE, params->user_data_size);
    memcpy(priv + S_C2S, pub + P_C2S, NET_TOKEN_KEY_BYTES);
    memcpy(priv + S_S2C, pub + P_S2C, NET_TOKEN_KEY_BYTES);
    put_u32(priv + S_COUNT, params->server_count);
    put_addresses(priv + S_SERVERS, params->servers, params->server_count);
    memcpy(priv + S_USER, params->user_data, params->user_data_size);

    unsigned long long sealed_len = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(out + T_SEALED, &sealed_len, priv, sizeof priv, out,
                                               NET_TOKEN_HEADER_BYTES, NULL, out + T_NONCE, key->bytes);
    sodium_memzero(priv, sizeof priv);
    return true;
}

// ---- read --------------------------------------------------------------------------

typedef struct header {
    uint32_t version;
    uint64_t protocol_id, create_time, expire_time;
} header;

// Size (min..max bytes), magic and version; *where: the offending offset.
static net_token_result read_header(const uint8_t *d, size_t size, size_t min, size_t max, header *h, size_t *where)
{
    *where = size;
    if (size < min)
        return NET_TOKEN_TRUNCATED;
    if (size > max)
        return NET_TOKEN_BAD_SIZE;
    *where = H_MAGIC;
    if (memcmp(d + H_MAGIC, MAGIC, 4) != 0)
        return NET_TOKEN_BAD_MAGIC;
    *where = H_VERSION;
    h->version = get_u32(d + H_VERSION);
    if (h->version != NET_TOKEN_VERSION)
        return NET_TOKEN_BAD_VERSION;
    h->protocol_id = get_u64(d + H_PROTOCOL);
    h->create_time = get_u64(d + H_CREATE);
    h->expire_time = get_u64(d + H_EXPIRE);
    return NET_TOKEN_OK;
}

static bool count_valid(uint32_t n) { return n >= 1 && n <= NET_TOKEN_MAX_SERVERS; }

static bool timeout_valid(uint32_t t) { return t >= 1 && t <= NET_TOKEN_MAX_TIMEOUT; }

static net_token_result read_public(const uint8_t *d, size_t size, net_token_public *out, size_t *where)
{
    header h;
    net_token_result r = read_header(d, size, NET_TOKEN_BYTES, NET_TOKEN_BYTES, &h, where);
    if (r != NET_TOKEN_OK)
        return r;
    *where = H_CREATE;
    if (h.create_time > h.expire_time)
        return NET_TOKEN_MALFORMED;
    out->version = h.version;
    out->protocol_id = h.protocol_id;
    out->create_time = h.create_time;
    out->expire_time = h.expire_time;
    const uint8_t *pub = d + T_PUBLIC;
    *where = T_PUBLIC + P_TIMEOUT;
    out->timeout_s = get_u32(pub + P_TIMEOUT);
    if (!timeout_valid(out->timeout_s))
        return NET_TOKEN_MALFORMED;
    *where = T_PUBLIC + P_COUNT;
    out->server_count = get_u32(pub + P_COUNT);
    if (!count_valid(out->server_count))
        return NET_TOKEN_MALFORMED;
    size_t bad = 0;
    if (!get_addresses(pub + P_SERVERS, out->server_count, out->servers, &bad)) {
        *where = T_PUBLIC + P_SERVERS + bad;
        return NET_TOKEN_MALFORMED;
    }
    memcpy(out->client_to_server_key, pub + P_C2S, NET_TOKEN_KEY_BYTES);
    memcpy(out->server_to_client_key, pub + P_S2C, NET_TOKEN_KEY_BYTES);
    return NET_TOKEN_OK;
}

net_token_result net_token_read_public(const uint8_t *data, size_t size, net_token_public *out, size_t *bad_offset)
{
    size_t where = 0;
    memset(out, 0, sizeof *out);
    net_token_result r = read_public(data, size, out, &where);
    if (r != NET_TOKEN_OK) {
        sodium_memzero(out, sizeof *out);
        if (bad_offset)
            *bad_offset = where;
    }
    return r;
}

// The decrypted private part's fields into *out (header fields set already).
static net_token_result read_private(const uint8_t *priv, net_token_private *out)
{
    if (get_u64(priv + S_EXPIRE) != out->expire_time)
        return NET_TOKEN_MALFORMED;
    out->client_id = get_u64(priv + S_CLIENT);
    out->timeout_s = get_u32(priv + S_TIMEOUT);
    out->user_data_size = get_u32(priv + S_USER_SIZE);
    out->server_count = get_u32(priv + S_COUNT);
    if (!timeout_valid(out->timeout_s) || out->user_data_size > NET_TOKEN_MAX_USER_DATA ||
        !count_valid(out->server_count))
        return NET_TOKEN_MALFORMED;
    size_t bad = 0;
    if (!get_addresses(priv + S_SERVERS, out->server_count, out->servers, &bad))
        return NET_TOKEN_MALFORMED;
    memcpy(out->user_data, priv + S_USER, out->user_data_size);
    if (!all_zero(priv + S_USER + out->user_data_size, NET_TOKEN_MAX_USER_DATA - out->user_data_size) ||
        !all_zero(priv + S_RESERVED, S_END - S_RESERVED))
        return NET_TOKEN_MALFORMED;
    memcpy(out->client_to_server_key, priv + S_C2S, NET_TOKEN_KEY_BYTES);
    memcpy(out->server_to_client_key, priv + S_S2C, NET_TOKEN_KEY_BYTES);
    return NET_TOKEN_OK;
}

static net_token_result check_clear(const uint8_t *d, size_t size, uint64_t protocol_id, uint64_t now, header *h)
{
    size_t where;
    if (size > NET_TOKEN_SEALED_BYTES && size != NET_TOKEN_BYTES)
        return NET_TOKEN_BAD_SIZE;
    net_token_result r = read_header(d, size, NET_TOKEN_SEALED_BYTES, NET_TOKEN_BYTES, h, &where);
    if (r != NET_TOKEN_OK)
        return r;
    if (h->protocol_id != protocol_id)
        return NET_TOKEN_WRONG_PROTOCOL;
    if (now >= h->expire_time)
        return NET_TOKEN_EXPIRED;
    if (h->create_time > h->expire_time)
        return NET_TOKEN_MALFORMED;
    return NET_TOKEN_OK;
}

net_token_result net_token_check_clear(const uint8_t *data, size_t size, uint64_t protocol_id, uint64_t now)
{
    header h;
    return check_clear(data, size, protocol_id, now, &h);
}

static net_token_result open_token(const uint8_t *d, size_t size, const net_token_key *key, uint64_t protocol_id,
                                   uint64_t now, const net_token_address *server, net_token_private *out)
{
    header h;
    net_token_result r = check_clear(d, size, protocol_id, now, &h);
    if (r != NET_TOKEN_OK)
        return r;
    if (!net_token_crypto_ready())
        return NET_TOKEN_NO_CRYPTO;
    uint8_t priv[NET_TOKEN_PRIVATE_BYTES];
    unsigned long long len = 0;
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(priv, &len, NULL, d + T_SEALED,
                                                   NET_TOKEN_PRIVATE_BYTES + NET_TOKEN_TAG_BYTES, d,
                                                   NET_TOKEN_HEADER_BYTES, d + T_NONCE, key->bytes) != 0)
        return NET_TOKEN_TAG; // (libsodium writes no plaintext then)
    out->protocol_id = h.protocol_id;
    out->create_time = h.create_time;
    out->expire_time = h.expire_time;
    r = read_private(priv, out);
    sodium_memzero(priv, sizeof priv);
    if (r != NET_TOKEN_OK)
        return r;
    if (!server)
        return NET_TOKEN_WRONG_SERVER;
    for (uint32_t i = 0; i < out->server_count; i++)
        if (net_token_address_equal(&out->servers[i], server))
            return NET_TOKEN_OK;
    return NET_TOKEN_WRONG_SERVER;
}

net_token_result net_token_open(const uint8_t *data, size_t size, const net_token_key *key, uint64_t protocol_id,
                                uint64_t now, const net_token_address *server, net_token_private *out)
{
    memset(out, 0, sizeof *out);
    net_token_result r = open_token(data, size, key, protocol_id, now, server, out);
    if (r != NET_TOKEN_OK)
        sodium_memzero(out, sizeof *out);
    return r;
}

void net_token_private_wipe(net_token_private *p) { sodium_memzero(p, sizeof *p); }
