// keel-attack: an attacker for keel's secure mode, on loopback only. Shared
// pieces of the subcommands (wire.c: datagram layouts, sockets, the clock;
// tally.c: what was sent and what came back, printed as one JSON line).
// MIT licence, see LICENSE. See docs/attacks.md.
//
// The handshake datagrams are written here from their documented layout
// (net/src/handshake.c, docs/security.md "The handshake"), as a backend in
// another language would, not with keel's own code: only the sizes
// (NET_HS_*_BYTES), the refusal names and the token file checks come from
// keel's net library. Invariants:
//   - every subcommand is bounded: at most AT_MAX_RATE datagrams a second, at
//     most AT_MAX_SECONDS seconds, at most AT_MAX_COUNT datagrams;
//   - it sends only to 127.0.0.0/8 (a --server elsewhere is a usage error),
//     and forged sources (spoof) are 127.x.y.z too;
//   - it prints exactly one JSON line on stdout (its counts), messages on
//     stderr. Exit status: 0 done, 1 a socket or file error, 2 bad usage,
//     77 spoof without the right to open a raw socket.
#ifndef KEEL_ATTACK_H
#define KEEL_ATTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include <keel/net_handshake.h>
#include <keel/net_token.h>

enum {
    AT_MAX_RATE = 200000,   ///< datagrams per second
    AT_MAX_SECONDS = 60,    ///< any duration
    AT_MAX_COUNT = 1000000, ///< datagrams in one run
    AT_EXIT_NO_RAW = 77,    ///< spoof: no permission for a raw socket
    // handshake layout: header 7F FF 'k' 'h' version type | client nonce 8 | body
    AT_HS_REQUEST = 1,
    AT_HS_CHALLENGE = 2,
    AT_HS_RESPONSE = 3,
    AT_HS_ADMITTED = 4,
    AT_HS_DENIED = 5,
    AT_HS_TYPES = 6, ///< types[0] counts datagrams that are not handshake replies
    AT_HS_HEADER = 6,
    AT_HS_NONCE = 8,
    AT_HS_BODY = AT_HS_HEADER + AT_HS_NONCE,
    AT_ENET_CONNECT_BYTES = 52, ///< ENet protocol header 4 + CONNECT command 48
    AT_DATAGRAM_MAX = 65536,
    AT_FORGED_HEADERS = 28, ///< IPv4 20 + UDP 8, written by at_forge
};

/// Every option any subcommand takes; each subcommand accepts its own few.
typedef struct at_options {
    const char *server_text;
    struct sockaddr_in server;
    struct sockaddr_in source; ///< flood: the address it sends from (default 127.0.0.1)
    struct sockaddr_in victim; ///< forge: the playing client's address
    const char *token_file, *in_file, *out_file;
    uint32_t rate, seconds, count, listen_port, ports, wait_ms, replay_after_s;
    int64_t damage; ///< -1: none; else the offset of the byte to flip in the token's sent part
    uint64_t seed;
} at_options;

// ---- wire.c ---------------------------------------------------------------------

/// Microseconds of CLOCK_MONOTONIC.
uint64_t at_now_us(void);
void at_sleep_until_us(uint64_t t);
/// A splitmix64 stream (nonces, random token bytes, forged addresses: none of
/// it needs to be secret).
uint64_t at_rand(uint64_t *state);
/// A seed from the system (getrandom), or `seed` when nonzero.
uint64_t at_seed(uint64_t seed);
void at_rand_fill(uint64_t *state, uint8_t *out, size_t n);

/// "A.B.C.D:PORT" in 127.0.0.0/8, port 1..65535.
bool at_parse_loopback(const char *text, struct sockaddr_in *out);
/// A whole token file (NET_TOKEN_BYTES) whose public part reads; false with a
/// message in err.
bool at_read_token(const char *path, uint8_t token[NET_TOKEN_BYTES], char *err, size_t err_size);

/// The handshake header of `type` with `nonce`.
void at_hs_header(uint8_t *out, uint8_t type, const uint8_t nonce[AT_HS_NONCE]);
/// A REQUEST: `sent` is a token's sent part (NET_TOKEN_SEALED_BYTES), or NULL
/// for random bytes from `rng`. Returns NET_HS_REQUEST_BYTES.
size_t at_hs_request(uint8_t out[NET_HS_REQUEST_BYTES], const uint8_t nonce[AT_HS_NONCE], const uint8_t *sent,
                     uint64_t *rng);
/// The type of a well-formed handshake datagram (its size is its type's), or
/// 0; *reason is a DENIED's reason (else 0).
uint8_t at_hs_type(const uint8_t *d, size_t n, uint8_t *reason);
/// A minimal ENet CONNECT from no peer (peer id 0xFFF), `connect_id` random.
size_t at_enet_connect(uint8_t out[AT_ENET_CONNECT_BYTES], uint32_t connect_id);

/// A non-blocking UDP socket bound to `bind_ip` (host order) port `port` (0:
/// any) and connected to `to` when given; -1 with a message on failure.
int at_udp_socket(uint32_t bind_ip, uint16_t port, const struct sockaddr_in *to);
/// The port a socket is bound to (host order).
uint16_t at_local_port(int fd);
/// Waits up to `us` for `fd` to be readable (false: timed out).
bool at_wait_readable(int fd, uint64_t us);

// ---- tally.c ----------------------------------------------------------------------

/// What went out and what came back.
typedef struct at_tally {
    uint64_t sent, sent_bytes, sent_min, sent_max, send_errors;
    uint64_t replies, reply_bytes, reply_max;
    uint64_t larger;             ///< replies larger than the datagram they answer
    uint64_t types[AT_HS_TYPES]; ///< by handshake type; [0]: anything else (ENet)
    uint64_t reasons[256];       ///< DENIED replies by reason
} at_tally;

void at_tally_sent(at_tally *t, size_t n, bool ok);
/// A reply `d` of `n` bytes to a datagram of `answered` bytes (0: unknown).
/// Returns its handshake type (0: not one).
uint8_t at_tally_reply(at_tally *t, const uint8_t *d, size_t n, size_t answered);
/// Reads every datagram waiting on `fd` into the tally; returns how many.
uint64_t at_drain(int fd, at_tally *t, size_t answered);

/// The JSON line's opening and its tally fields: {"attack":NAME,"server":...,
/// "sent":...,...; the caller adds its own fields with at_json_* and ends it
/// with at_json_end.
void at_json_begin(const char *attack, const at_options *o, const at_tally *t);
void at_json_u64(const char *key, uint64_t v);
void at_json_str(const char *key, const char *v);
void at_json_f(const char *key, double v);
void at_json_end(void);
/// The name of a handshake type ("challenge", ...; "other" for 0).
const char *at_type_name(uint8_t type);

// ---- spoof.c: forged sources --------------------------------------------------------

/// A raw socket (IP_HDRINCL), or minus the exit status with a message
/// (-AT_EXIT_NO_RAW without the right, -1 another error).
int at_raw_socket(void);
/// A datagram from src:sport (host order) to `dst` for a raw socket: the IPv4
/// and UDP headers (the kernel fills the IPv4 checksum; UDP checksum 0: none)
/// and the payload; returns the total size (AT_FORGED_HEADERS + n).
size_t at_forge(uint8_t *out, uint32_t src, uint16_t sport, const struct sockaddr_in *dst, const uint8_t *payload,
                size_t n);

// ---- flood.c -----------------------------------------------------------------------

/// One datagram, sent again every NET_HS_RESEND_MS until a reply with our
/// nonce comes (copied to `reply`) or `wait_ms` passes; the reply's type (0:
/// none) and *reason (a DENIED's).
uint8_t at_exchange(int fd, const uint8_t *d, size_t n, const uint8_t nonce[AT_HS_NONCE], uint32_t wait_ms, at_tally *t,
                    uint8_t *reply, uint8_t *reason);

// ---- the subcommands ------------------------------------------------------------

int at_flood(const at_options *o);
int at_request(const at_options *o);
int at_spoof(const at_options *o);
int at_forge_framing(const at_options *o);
int at_race(const at_options *o);
int at_capture(const at_options *o);
int at_replay(const at_options *o);

#endif
