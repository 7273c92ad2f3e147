// keel: connect tokens, the key to a server on the open internet. MIT licence,
// see LICENSE. Byte layout and key file format: docs/security.md.
//
// The model. A game's web backend (which knows who the player is) issues a
// token for one client: which servers it may join, until when, and two fresh
// random session keys (client to server, server to client) for sealing the
// messages of that connection. The token has two parts:
//   - the sealed part, which the client cannot read or change: the client
//     id, both keys, the servers, the expiry, the timeout and up to 256 bytes
//     of user data (a player name, say), encrypted and authenticated with
//     XChaCha20-Poly1305 (IETF) under the backend's 32-byte key, which only
//     the backend and the game's servers hold. Its header (magic, version,
//     protocol id, create and expiry times) is sent in clear but
//     authenticated as the cipher's associated data;
//   - the public part, for the client: the same servers, timeout and keys in
//     clear, so that it knows where to connect and how to seal its messages.
//     The backend hands the whole token to the client over a channel that
//     keeps it secret (HTTPS); the token is as good as a password until it
//     expires.
// A client sends the first NET_TOKEN_SEALED_BYTES of its token (the header,
// the nonce and the sealed part) to a server; the server opens it with the
// key (net_token_open), and only then spends anything on the client. Every
// token is issued with a fresh random nonce (randombytes_buf: 192 random
// bits never repeat in practice), so a backend needs no nonce counter.
//
// Invariants and ranges:
//   - one token is exactly NET_TOKEN_BYTES bytes, little-endian fields at
//     fixed offsets; a version field lets the layout change later (a reader
//     refuses a version it does not know);
//   - times are uint64 seconds of the caller's clock (Unix time is the
//     intent); nothing here reads a clock: "now" is always an argument. A
//     token is expired when now >= expire_time; create_time <= expire_time;
//     the timeout is 1..NET_TOKEN_MAX_TIMEOUT seconds;
//   - 1..NET_TOKEN_MAX_SERVERS addresses, IPv4 or IPv6, ports 1..65535;
//   - user data 0..NET_TOKEN_MAX_USER_DATA bytes (any bytes; not a string);
//   - every decoder takes any bytes of any size: it refuses with a
//     net_token_result naming the first check that failed and never reads
//     outside the buffer; on a refusal, its output struct is zeroed.
//
// Secrets (keys, opened private parts) live in caller-owned structs: wipe
// them with net_token_key_wipe / net_token_private_wipe when done (the
// library wipes its own copies). The cryptography is libsodium's; every call
// that needs it initialises it (sodium_init) and refuses with
// NET_TOKEN_NO_CRYPTO if that fails.
#ifndef KEEL_NET_TOKEN_H
#define KEEL_NET_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    NET_TOKEN_VERSION = 1,      ///< the layout written and read
    NET_TOKEN_KEY_BYTES = 32,   ///< backend key and each session key
    NET_TOKEN_NONCE_BYTES = 24, ///< XChaCha20-Poly1305 nonce
    NET_TOKEN_MAX_SERVERS = 32,
    NET_TOKEN_MAX_USER_DATA = 256,
    NET_TOKEN_MAX_TIMEOUT = 3600,  ///< seconds
    NET_TOKEN_HEADER_BYTES = 32,   ///< magic, version, protocol id, create, expire
    NET_TOKEN_PRIVATE_BYTES = 960, ///< the private part before sealing
    NET_TOKEN_TAG_BYTES = 16,      ///< Poly1305 tag after the ciphertext
    /// header + nonce + sealed private part: what a client sends a server
    NET_TOKEN_SEALED_BYTES =
        NET_TOKEN_HEADER_BYTES + NET_TOKEN_NONCE_BYTES + NET_TOKEN_PRIVATE_BYTES + NET_TOKEN_TAG_BYTES, // 1032
    NET_TOKEN_PUBLIC_BYTES = 680,                                      ///< timeout, servers and keys in clear
    NET_TOKEN_BYTES = NET_TOKEN_SEALED_BYTES + NET_TOKEN_PUBLIC_BYTES, // 1712
};

/// Why a token was refused (NET_TOKEN_OK: it was not). The checks run in
/// this order, cheapest first, and the first failure is the answer.
typedef enum net_token_result {
    NET_TOKEN_OK = 0,
    NET_TOKEN_NO_CRYPTO,      ///< libsodium could not be initialised
    NET_TOKEN_TRUNCATED,      ///< fewer bytes than the call reads (1032 to open, 1712 to read the public part)
    NET_TOKEN_BAD_SIZE,       ///< more, but not a size the call takes (1032 or 1712 to open, 1712 to read)
    NET_TOKEN_BAD_MAGIC,      ///< not a keel token
    NET_TOKEN_BAD_VERSION,    ///< a layout version this keel does not read
    NET_TOKEN_WRONG_PROTOCOL, ///< issued for another game or protocol (net_token_open)
    NET_TOKEN_EXPIRED,        ///< now >= expire_time (net_token_open)
    NET_TOKEN_TAG,            ///< authentication failed: damaged, forged or another key
    NET_TOKEN_MALFORMED,      ///< a field out of its range (create after expiry, 0 or > 32 servers, ...)
    NET_TOKEN_WRONG_SERVER,   ///< this server's address is not in the token (net_token_open)
    NET_TOKEN_RESULT_COUNT
} net_token_result;

/// A short name ("expired", "wrong server"; "unknown" outside the enum).
const char *net_token_result_name(net_token_result r);

typedef enum net_token_family {
    NET_TOKEN_NONE = 0, ///< an unused slot
    NET_TOKEN_IPV4 = 1,
    NET_TOKEN_IPV6 = 2,
} net_token_family;

/// A server address. IPv4 uses ip[0..3] (network order, as inet_pton writes
/// it) and keeps ip[4..15] zero; IPv6 uses all 16 bytes.
typedef struct net_token_address {
    uint8_t family; ///< net_token_family
    uint8_t ip[16];
    uint16_t port; ///< 1..65535
} net_token_address;

/// Parses "A.B.C.D:PORT" or "[IPv6]:PORT" (numeric addresses only, port
/// 1..65535). False, with *out zeroed, on anything else.
bool net_token_address_parse(const char *text, net_token_address *out);
/// Writes the address in the form net_token_address_parse reads ("?" for a
/// family it does not know), NUL-terminated, truncated to `size`.
void net_token_address_format(const net_token_address *a, char *buf, size_t size);
/// Same family, ip and port.
bool net_token_address_equal(const net_token_address *a, const net_token_address *b);

/// The backend's key (keep it secret; wipe it when done).
typedef struct net_token_key {
    uint8_t bytes[NET_TOKEN_KEY_BYTES];
} net_token_key;

/// A fresh random key (randombytes_buf). False only when libsodium cannot be
/// initialised (then *key is zeroed).
bool net_token_key_generate(net_token_key *key);
/// Zeroes the key in a way the compiler keeps (sodium_memzero).
void net_token_key_wipe(net_token_key *key);
/// Constant-time comparison (sodium_memcmp).
bool net_token_key_equal(const net_token_key *a, const net_token_key *b);

/// The key file: text, one key line "keel-token-key 1 " followed by 64 hex
/// digits (either case), then a newline (optional at the end of the file;
/// "\r\n" too); blank lines and lines starting with '#' are skipped
/// anywhere; nothing else may be in it (a second key line neither).
/// net_token_key_parse reads it from a buffer; on an error it zeroes
/// *key and writes a message naming the line and column ("line 2, column
/// 18: 'x' is not a hex digit") into err (if given).
bool net_token_key_parse(const char *text, size_t size, net_token_key *key, char *err, size_t err_size);
/// Reads a key file (at most 4096 bytes); errors name the file too.
bool net_token_key_read(const char *path, net_token_key *key, char *err, size_t err_size);
/// Writes a key file with permissions 0600, refusing to replace an existing
/// file (a lost backend key invalidates every token issued with it).
bool net_token_key_write(const char *path, const net_token_key *key, char *err, size_t err_size);

/// What the backend decides about one token.
typedef struct net_token_params {
    uint64_t protocol_id;  ///< the game and protocol the servers speak; servers refuse others
    uint64_t create_time;  ///< seconds
    uint64_t expire_time;  ///< seconds, >= create_time
    uint32_t timeout_s;    ///< 1..NET_TOKEN_MAX_TIMEOUT: silence after which a connection is dropped
    uint64_t client_id;    ///< the backend's name for the player (any value)
    uint32_t server_count; ///< 1..NET_TOKEN_MAX_SERVERS
    net_token_address servers[NET_TOKEN_MAX_SERVERS];
    uint32_t user_data_size; ///< 0..NET_TOKEN_MAX_USER_DATA
    uint8_t user_data[NET_TOKEN_MAX_USER_DATA];
} net_token_params;

/// Writes a token into out[0 .. NET_TOKEN_BYTES): two fresh random session
/// keys, a fresh nonce, the private part sealed with `key`. False (out
/// zeroed) when a parameter is out of its range, naming it in *error (if
/// given; a static string), or when libsodium cannot be initialised.
bool net_token_issue(const net_token_params *params, const net_token_key *key, uint8_t *out, const char **error);

/// What a client reads: the header and the public part.
typedef struct net_token_public {
    uint32_t version;
    uint64_t protocol_id;
    uint64_t create_time, expire_time;
    uint32_t timeout_s;
    uint32_t server_count;
    net_token_address servers[NET_TOKEN_MAX_SERVERS];
    uint8_t client_to_server_key[NET_TOKEN_KEY_BYTES];
    uint8_t server_to_client_key[NET_TOKEN_KEY_BYTES];
} net_token_public;

/// Reads a whole token's header and public part (no key needed, nothing
/// authenticated: the client trusts the channel it got the token through).
/// Checks size (exactly NET_TOKEN_BYTES), magic, version and the ranges of
/// the public fields. On a refusal *bad_offset (if given) receives the
/// offset of the offending field (the size for TRUNCATED / BAD_SIZE).
net_token_result net_token_read_public(const uint8_t *data, size_t size, net_token_public *out, size_t *bad_offset);

/// What a server learns from a token it opened.
typedef struct net_token_private {
    uint64_t protocol_id;
    uint64_t create_time, expire_time;
    uint64_t client_id;
    uint32_t timeout_s;
    uint32_t server_count;
    net_token_address servers[NET_TOKEN_MAX_SERVERS];
    uint8_t client_to_server_key[NET_TOKEN_KEY_BYTES];
    uint8_t server_to_client_key[NET_TOKEN_KEY_BYTES];
    uint32_t user_data_size;
    uint8_t user_data[NET_TOKEN_MAX_USER_DATA];
} net_token_private;

/// Opens a token on a server: `data` is either the sealed bytes a client
/// sent (NET_TOKEN_SEALED_BYTES) or a whole token (NET_TOKEN_BYTES; its
/// public part is ignored). Checks, in order: size, magic, version,
/// protocol id == `protocol_id`, now < expire_time, create_time <=
/// expire_time, the authentication tag under `key`, the ranges of the
/// private fields (and that its expiry equals the header's), and that
/// `server` (this server's address as clients reach it; NULL refuses) is one
/// of the token's servers. Only NET_TOKEN_OK fills *out; wipe it when done.
net_token_result net_token_open(const uint8_t *data, size_t size, const net_token_key *key, uint64_t protocol_id,
                                uint64_t now, const net_token_address *server, net_token_private *out);

/// Zeroes an opened private part (sodium_memzero).
void net_token_private_wipe(net_token_private *p);

#ifdef __cplusplus
}
#endif

#endif
