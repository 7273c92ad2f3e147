// keel: authenticated datagrams, secure mode's protection of ENet's own
// framing after the handshake (frame.c). Private to net/ and tests/. MIT
// licence, see LICENSE.
//
// Every datagram a secure host sends to a peer once the handshake admitted
// it, ENet's CONNECT included, carries a trailer (NET_FRAME_BYTES = 18):
//
//   ENet's datagram (unchanged) | counter (2 bytes, little-endian: the low
//   16 bits) | tag 16
//
// The tag is ChaCha20-Poly1305 (IETF, libsodium) with an empty message and
// ENet's whole datagram as the additional data, under the direction's
// session key (the same keys as the sealed messages, seal.h), with the nonce
// (0xFF, 0, 0, 0, counter as 8 bytes little-endian). Invariants:
//   - each direction counts its own 64-bit datagram counter from 0 (the
//     client's first CONNECT is 0), one per datagram; sealed messages'
//     nonces start with their channel (0..2), a datagram's with 0xFF, so no
//     (key, nonce) pair is used twice;
//   - the receiver rebuilds the counter from its low 16 bits and keeps a
//     window of the SEAL_WINDOW latest (seal_window, as the sealed messages
//     do per channel): a datagram that authenticates but was accepted
//     before, or is SEAL_WINDOW or more behind the highest, is dropped as
//     replayed (the tag is checked first, so a forged datagram is never
//     counted as replayed); the window moves only for a datagram that
//     authenticated;
//   - a CONNECT is checked with the admission's key alone (no peer exists
//     yet, so no window): its replays are ENet's retransmissions of it;
//   - nothing is allocated.
#ifndef KEEL_NET_FRAME_H
#define KEEL_NET_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seal.h"

enum {
    FRAME_COUNTER_BYTES = 2,
    FRAME_TAG_BYTES = 16,
    FRAME_NONCE_DOMAIN = 0xFF, ///< a datagram nonce's first byte (a sealed message's is its channel)
};

_Static_assert(FRAME_COUNTER_BYTES + FRAME_TAG_BYTES == NET_FRAME_BYTES, "frame overhead");

/// One connection's datagram state (both directions).
typedef struct frame_peer {
    bool on;
    uint32_t connect_id; ///< the ENet connection (connect id) the keys belong to
    uint32_t host;       ///< the other side's address (network order, as ENet keeps it)
    uint16_t port;
    uint8_t send_key[SEAL_KEY_BYTES], recv_key[SEAL_KEY_BYTES];
    uint64_t send_counter;
    seal_window recv;
} frame_peer;

/// Starts with the two keys (copied) for the connection `connect_id` with
/// host:port; the counter and the window from 0.
void frame_start(frame_peer *f, const uint8_t send_key[SEAL_KEY_BYTES], const uint8_t recv_key[SEAL_KEY_BYTES],
                 uint32_t connect_id, uint32_t host, uint16_t port);
/// Wipes the keys (sodium_memzero) and turns it off.
void frame_stop(frame_peer *f);

/// Writes the trailer of d[0 .. n) at d + n (the caller leaves room for
/// NET_FRAME_BYTES) and returns n + NET_FRAME_BYTES.
size_t frame_seal(frame_peer *f, uint8_t *d, size_t n);
/// Checks a received datagram of `n` bytes, trailer included, and moves the
/// window. SEAL_OK: ENet's datagram is d[0 .. n - NET_FRAME_BYTES).
seal_result frame_open(frame_peer *f, const uint8_t *d, size_t n);
/// Checks a datagram with a receiving key alone, its counter taken as the
/// low 16 bits (a CONNECT: the connection's first datagrams). True when it
/// authenticates.
bool frame_check(const uint8_t recv_key[SEAL_KEY_BYTES], const uint8_t *d, size_t n);

#endif
