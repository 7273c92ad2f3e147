// keel: the handshake's datagrams and the server's bounded state
// (handshake.c); the protocol and its invariants are in
// <keel/net_handshake.h>. No sockets and no clocks here: host_enet.c sends
// what these functions write and passes the times. Private to net/ and tests/.
// MIT licence, see LICENSE.
#ifndef KEEL_NET_HANDSHAKE_IMPL_H
#define KEEL_NET_HANDSHAKE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/net_handshake.h>
#include <keel/net_token.h>

enum {
    HS_REQUEST = 1,
    HS_CHALLENGE = 2,
    HS_RESPONSE = 3,
    HS_ADMITTED = 4,
    HS_DENIED = 5,
    HS_NONCE_BYTES = 8, ///< the client's nonce, echoed in every reply
    HS_MAX_DATAGRAM = NET_HS_REQUEST_BYTES,
};

/// An IPv4 address and port as ENet keeps them (host in network order).
typedef struct hs_addr {
    uint32_t host;
    uint16_t port;
} hs_addr;

/// True when the datagram starts like a handshake datagram (0x7F 0xFF 'k'
/// 'h'), whatever follows: the hosts' intercept keeps it from ENet.
bool hs_is_handshake(const uint8_t *d, size_t n);

// ---- client ----------------------------------------------------------------------

/// Writes a REQUEST (NET_HS_REQUEST_BYTES) for the token's sent part.
size_t hs_request_write(const uint8_t token_sent[NET_TOKEN_SEALED_BYTES], const uint8_t nonce[HS_NONCE_BYTES],
                        uint8_t *out);

/// What a datagram from the server means to a client waiting with `nonce`.
typedef enum hs_reply {
    HS_REPLY_IGNORED = 0, ///< not for us (another nonce, malformed)
    HS_REPLY_CHALLENGE,   ///< *response holds the RESPONSE to send (NET_HS_RESPONSE_BYTES)
    HS_REPLY_ADMITTED,
    HS_REPLY_DENIED, ///< *reason holds the server's net_hs_refusal
} hs_reply;
hs_reply hs_client_receive(const uint8_t *d, size_t n, const uint8_t nonce[HS_NONCE_BYTES], uint8_t *response,
                           uint8_t *reason);

/// A client's side of the exchange: the datagrams it sends again until
/// answered, and where it stands.
typedef enum hs_phase {
    HS_PHASE_OFF = 0,  ///< insecure mode
    HS_PHASE_REQUEST,  ///< sending the request, waiting for a challenge
    HS_PHASE_RESPONSE, ///< sending the response, waiting for the admission
    HS_PHASE_ADMITTED, ///< admitted: ENet's connect may start
    HS_PHASE_CONNECT,  ///< ENet's connect started (the handshake is over)
    HS_PHASE_DENIED,   ///< refused: `refusal` says why
} hs_phase;

typedef struct hs_client {
    uint8_t phase;   ///< hs_phase
    uint8_t refusal; ///< net_hs_refusal of a DENIED
    uint8_t nonce[HS_NONCE_BYTES];
    uint64_t due_ms; ///< when the next datagram goes (0: now)
    /// Pacing (hs_client_due): when this phase's datagram first went, how
    /// often it went, the wait before the next resend, and the request's
    /// round trip (0: not measured).
    uint64_t sent_ms;
    uint32_t sends, interval_ms, rtt_ms;
    uint8_t request[NET_HS_REQUEST_BYTES];
    uint8_t response[NET_HS_RESPONSE_BYTES];
    /// The token's session keys; from the challenge on, this session's
    /// (seal_derive with the challenge's seal nonce).
    uint8_t c2s[32], s2c[32];
    uint32_t timeout_s; ///< the token's timeout
} hs_client;

/// Starts the exchange for a whole token (NET_TOKEN_BYTES; its sent part is
/// what goes, its public part gives the keys) with a fresh random nonce.
/// False when libsodium fails or the token's public part does not read.
bool hs_client_start(hs_client *c, const uint8_t *token);
/// Zeroes it (sodium_memzero: it holds the token's sent part).
void hs_client_wipe(hs_client *c);
/// The datagram to send at `now_ms` (NULL: nothing due), its size in *n.
const uint8_t *hs_client_due(hs_client *c, uint64_t now_ms, size_t *n);
/// A datagram from the server: moves the phase on (a challenge: the
/// response is due at once). Returns what it was.
hs_reply hs_client_take(hs_client *c, const uint8_t *d, size_t n);
/// hs_client_take at `now_ms` (hs_client_take uses hs_clock_ms()): a
/// challenge's arrival measures the request's round trip, which paces the
/// response's resends.
hs_reply hs_client_take_at(hs_client *c, const uint8_t *d, size_t n, uint64_t now_ms);

/// A monotonic clock in milliseconds (CLOCK_MONOTONIC).
uint64_t hs_clock_ms(void);

// ---- server ----------------------------------------------------------------------

typedef struct hs_server hs_server;

/// A server's handshake state: a copy of the backend key, the protocol id,
/// its own address as clients reach it, a fresh random challenge key, the
/// tables sized for `max_peers`. NULL when out of memory or libsodium fails.
hs_server *hs_server_create(const net_token_key *key, uint64_t protocol_id, const net_token_address *self,
                            uint32_t max_peers);
/// Asks `held(context, client_id, from)` before each new admission: when it says
/// the client id has a connection already, the response is refused
/// (NET_HS_CLIENT_CONNECTED). NULL: not asked.
void hs_server_set_held(hs_server *s, bool (*held)(void *context, uint64_t client_id, hs_addr from), void *context);
/// Wipes the keys and frees it (NULL: nothing).
void hs_server_destroy(hs_server *s);

/// What the server did with one handshake datagram.
typedef struct hs_outcome {
    net_hs_refusal refusal; ///< NET_HS_OK, or why it was refused
    bool challenged;        ///< a CHALLENGE was written
    bool admitted;          ///< the address is now admitted
} hs_outcome;

/// Handles a handshake datagram from `from` at `now_s` (the token's clock,
/// Unix seconds) and `now_ms` (a monotonic clock): writes the reply into
/// out[0 .. HS_MAX_DATAGRAM) and returns its length (0: no reply). Any bytes
/// of any length.
size_t hs_server_receive(hs_server *s, const uint8_t *d, size_t n, hs_addr from, uint64_t now_s, uint64_t now_ms,
                         uint8_t *out, hs_outcome *outcome);

/// May an ENet CONNECT with `connect_id` from `from` go through? The first
/// CONNECT of an admission binds its connect id; its retransmissions pass,
/// other connect ids do not. *client_id receives the token's client id.
bool hs_server_admits(hs_server *s, hs_addr from, uint32_t connect_id, uint64_t now_ms, uint64_t *client_id);
/// hs_server_admits for an admission whose client-to-server key opens the
/// CONNECT (secure mode's encrypted CONNECT, frame.h): `open` is tried with
/// each admission of `from` and, when the key opens it, gives the connect
/// id it holds (*connect_id), which is then bound as hs_server_admits binds
/// it. An admission whose key does not open it is neither bound nor used.
/// *connect_id is the one bound when true.
bool hs_server_admits_open(hs_server *s, hs_addr from, uint64_t now_ms, uint64_t *client_id, uint32_t *connect_id,
                           bool (*open)(const uint8_t c2s[32], void *context, uint32_t *connect_id), void *context);

/// The session of the admission `from` used with `connect_id`, expired or
/// not (for the connect event, which comes a round trip after the CONNECT):
/// the token's client id and timeout, and the two session keys (client to
/// server, server to client).
bool hs_server_session(const hs_server *s, hs_addr from, uint32_t connect_id, uint64_t *client_id, uint32_t *timeout_s,
                       uint8_t c2s[32], uint8_t s2c[32]);

#endif
