// keel: the connection handshake of secure mode: a connect token and a
// challenge before ENet spends a connection slot. MIT licence, see LICENSE.
// docs/security.md ("The handshake") describes it for users.
//
// A host is in secure mode when its configuration asks for it
// (net_host_config: token_key on a server, connect_token on a client;
// keel-server asks unless started with --insecure); otherwise the hosts
// neither run the handshake nor seal. A
// secure server's ENet host lets an ENet CONNECT through only from an
// address that first went through this exchange:
//
//   client                                   server
//   REQUEST   (token's sent part, nonce) -->  opens the token (net_token_open
//                                             with its own address and clock)
//             <-- CHALLENGE                   sealed with the server's random
//                                             key: client address, client id,
//                                             token tag and expiry, its own
//                                             expiry (NET_HS_CHALLENGE_MS)
//   RESPONSE  (the challenge, echoed)    -->  opens it, checks the address
//             <-- ADMITTED                    admits the address for
//                                             NET_HS_ADMIT_MS
//   ENet CONNECT                         -->  let through (one connect id
//                                             per admission); every other
//                                             CONNECT is dropped, uncounted by
//                                             ENet and before it allocates
//                                             a peer
// Any step may instead be answered with DENIED and a reason
// (net_hs_refusal); the client's connect then fails at once with
// NET_DISCONNECT_REFUSED_TOKEN. The client sends its REQUEST, then its
// RESPONSE, again until answered, paced by the round trip seen so far
// (NET_HS_RESEND_MS, doubling; a response after twice the request's round
// trip), all within the host's timeout_ms (then NET_DISCONNECT_UNANSWERED).
//
// Invariants:
//   - every handshake datagram starts with 0x7F 0xFF: to ENet, a header from
//     no peer (peer id 4095) with the "compressed" flag, which a keel host
//     never sets and an ENet host without a compressor drops; so a handshake
//     datagram cannot be taken for an ENet command, and the hosts' intercept
//     tells them apart by their first two bytes. Then 'k' 'h', the version
//     (NET_HS_VERSION) and the type;
//   - every datagram has one fixed size per type; anything else is dropped
//     and counted (NET_HS_MALFORMED), never read past its end;
//   - no reply is larger than the datagram it answers (request 1046 bytes ->
//     challenge 166 or denial 15; response 166 -> admitted 14 or denial 15):
//     the server cannot be used to amplify a spoofed flood;
//   - the server keeps no state per request: a challenge is sealed
//     (XChaCha20-Poly1305 IETF) with a key drawn at random when the host is
//     created, so it is only good with this host, for this address, until its
//     expiry; replies to the client echo the client's random 8-byte nonce,
//     so a denial or admission forged by someone who did not see the request
//     is ignored;
//   - the session keys: the challenge carries the token's two keys (sealed:
//     only this server reads them back); at the response the server, and at
//     the challenge the client, derive each direction's key from the token's
//     key and the challenge's random seal nonce (seal.h), so every admission
//     has keys of its own. A challenge admits once: a response to an older
//     or the same challenge of a token, once that challenge led to a
//     CONNECT, is refused (NET_HS_CHALLENGE_USED), so a captured handshake
//     cannot start the captured session again;
//   - opening a token costs the most (an AEAD open of 976 bytes). A request
//     is first checked by its token's clear header (magic, version, protocol
//     id, expiry): one that fails it costs no budget, and such denials are
//     answered at most NET_HS_REQUESTS_PER_S a second (the rest silently).
//     Then at most NET_HS_PREFIX_REQUESTS_PER_S a second are opened per
//     source prefix (IPv4 /24) and NET_HS_REQUESTS_PER_S over all sources,
//     the rest dropped unanswered (NET_HS_RATE_LIMITED): a flood from a few
//     prefixes spends its own share; one spoofed from many prefixes with
//     well-formed headers can still spend the whole cap;
//   - state is bounded: the admitted addresses (max_peers + 16 entries, each
//     for NET_HS_ADMIT_MS) and the tokens in use (2 x max_peers + 16, each
//     until its token expires; when full, the entry that expires first is
//     replaced). A token admitted from one address (IPv4 and port) is refused
//     from any other while it is valid and remembered.
#ifndef KEEL_NET_HANDSHAKE_H
#define KEEL_NET_HANDSHAKE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    /// 2: every datagram after the admission is authenticated; 3: and
    /// encrypted after ENet's header, messages no longer sealed one by one
    /// (docs/security.md, "Sealed datagrams")
    NET_HS_VERSION = 3,
    NET_HS_REQUEST_BYTES = 1046,  ///< header 6, client nonce 8, the token's sent part 1032
    NET_HS_CHALLENGE_BYTES = 166, ///< header 6, client nonce 8, seal nonce 24, sealed 112 + tag 16
    NET_HS_RESPONSE_BYTES = 166,  ///< the challenge, type changed
    NET_HS_ADMITTED_BYTES = 14,   ///< header 6, client nonce 8
    NET_HS_DENIED_BYTES = 15,     ///< header 6, client nonce 8, reason 1
    NET_HS_CHALLENGE_MS = 5000,   ///< a challenge's lifetime
    NET_HS_ADMIT_MS = 5000,       ///< how long an admitted address may CONNECT
    /// Client: a request unanswered is sent again after this; each later
    /// resend waits twice as long as the one before, up to
    /// NET_HS_RESEND_MAX_MS (the round trip is at least the time waited).
    /// A response is sent again after twice the round trip the challenge
    /// showed (at least NET_HS_RESEND_MIN_MS), doubling the same way.
    NET_HS_RESEND_MS = 250,
    NET_HS_RESEND_MIN_MS = 20,
    NET_HS_RESEND_MAX_MS = 1000,
    /// A server opens at most this many requests a second (a token bucket
    /// as deep); the rest are dropped unanswered (NET_HS_RATE_LIMITED) and
    /// their clients send again NET_HS_RESEND_MS later.
    NET_HS_REQUESTS_PER_S = 8192,
    /// One source prefix's share of it (IPv4 /24; a bucket as deep), so that
    /// a flood from a few prefixes spends its own share, not the players'.
    /// Prefixes share NET_HS_PREFIX_BUCKETS buckets by a keyed hash.
    NET_HS_PREFIX_REQUESTS_PER_S = 1024,
    NET_HS_PREFIX_BUCKETS = 256,
};

/// Why a secure server turned a handshake datagram or a CONNECT away
/// (net_host_stats.handshake_refused counts each; a client learns the reason
/// of a DENIED from net_host_handshake_refusal).
typedef enum net_hs_refusal {
    NET_HS_OK = 0,
    NET_HS_MALFORMED,         ///< not a handshake datagram of a known type and size (silent)
    NET_HS_BAD_VERSION,       ///< another handshake version (silent)
    NET_HS_TOKEN_INVALID,     ///< the token's bytes are not a token (magic, sealed fields out of range)
    NET_HS_TOKEN_VERSION,     ///< a token layout this keel does not read
    NET_HS_WRONG_PROTOCOL,    ///< a token for another game or protocol
    NET_HS_EXPIRED,           ///< the token expired (the server's clock)
    NET_HS_DAMAGED,           ///< the token does not authenticate (damaged, forged, another key)
    NET_HS_WRONG_SERVER,      ///< the token does not list this server
    NET_HS_IN_USE,            ///< the token is in use from another address
    NET_HS_CHALLENGE_DAMAGED, ///< a response that does not authenticate (forged, another server)
    NET_HS_CHALLENGE_EXPIRED, ///< a response after its challenge expired
    NET_HS_CHALLENGE_ADDRESS, ///< a response from another address than the request's
    NET_HS_ADMIT_FULL,        ///< too many addresses admitted at once
    NET_HS_UNADMITTED,        ///< an ENet CONNECT from an address not admitted (silent)
    NET_HS_NO_CRYPTO,         ///< libsodium could not be initialised
    NET_HS_RATE_LIMITED,      ///< a request above the server's budget of NET_HS_REQUESTS_PER_S (silent)
    NET_HS_CHALLENGE_USED,    ///< a response to a challenge that already led to a connection
    /// The token's client id has a connection already (connected, or its
    /// CONNECT under way): one connection per client id. At a response, or
    /// silently at a second CONNECT when two admissions of one client id raced.
    NET_HS_CLIENT_CONNECTED,
    NET_HS_REFUSAL_COUNT
} net_hs_refusal;

/// A short name ("expired", "challenge from another address"; "unknown"
/// outside the enum).
const char *net_hs_refusal_name(net_hs_refusal r);

#ifdef __cplusplus
}
#endif

#endif
