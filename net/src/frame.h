// keel: authenticated, encrypted datagrams: secure mode's protection of
// everything a secure client and server send each other after the handshake
// (frame.c). Private to net/ and tests/. MIT licence, see LICENSE.
//
// Every datagram a secure host sends to a peer once the handshake admitted
// it, ENet's CONNECT included, is sealed as a whole: ENet's header stays in
// clear, everything after it (ENet's commands and keel's messages in them)
// is encrypted, and a trailer is added (NET_FRAME_BYTES = 18):
//
//   ENet's header (2 bytes, 4 with a sent time: clear) | ENet's commands
//   (encrypted) | counter (2 bytes, little-endian: the low 16 bits) | tag 16
//
// The cipher is ChaCha20-Poly1305 (IETF, libsodium) under the direction's
// session key (seal_derive, seal.h), the header as the additional data (the
// receiver reads its peer id before it can choose the key), the nonce
// (0xFF, 0, 0, 0, counter as 8 bytes little-endian). The header's length is
// told by its first byte alone, as ENet 1.3 writes it (frame_clear_bytes).
// Invariants:
//   - each direction counts its own 64-bit datagram counter from 0 (the
//     client's first CONNECT is 0), one per datagram; each direction has its
//     own key, so no (key, nonce) pair is used twice;
//   - the receiver rebuilds the counter from its low 16 bits and keeps a
//     window of the SEAL_WINDOW latest (seal_window): a datagram that
//     authenticates but was accepted before, or is SEAL_WINDOW or more
//     behind the highest, is dropped as replayed (the tag is checked first,
//     so a forged datagram is never counted as replayed); the window moves
//     only for a datagram that authenticated;
//   - a datagram is decrypted in place only once it authenticated: one
//     that does not is left as it came (a CONNECT may be tried with the keys
//     of several admissions);
//   - a CONNECT is opened with an admission's key alone (no peer exists yet,
//     so no window): its replays are ENet's retransmissions of it;
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
    FRAME_MAX_DATAGRAM = 4096, ///< the longest datagram opened (ENet's ENET_PROTOCOL_MAXIMUM_MTU), trailer excluded
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

/// ENet's header at the start of datagram d[0 .. n): 2 bytes (peer id and
/// flags, big-endian), 4 when the first byte's top bit (ENet's "sent time"
/// flag) is set; 0 when n is shorter than that.
size_t frame_clear_bytes(const uint8_t *d, size_t n);
/// Seals datagram d[0 .. n) in place: encrypts what follows the header,
/// writes the trailer at d + n (the caller leaves room for NET_FRAME_BYTES)
/// and returns n + NET_FRAME_BYTES.
size_t frame_seal(frame_peer *f, uint8_t *d, size_t n);
/// Opens a received datagram of `n` bytes, trailer included, and moves the
/// window. SEAL_OK: d[0 .. n - NET_FRAME_BYTES) is ENet's datagram in
/// clear; otherwise d is unchanged.
seal_result frame_open(frame_peer *f, uint8_t *d, size_t n);
/// Opens a datagram with a receiving key alone, its counter taken as the
/// low 16 bits (a CONNECT: the connection's first datagrams). True when it
/// authenticates: then decrypted in place as frame_open does; otherwise d is
/// unchanged.
bool frame_open_with(const uint8_t recv_key[SEAL_KEY_BYTES], uint8_t *d, size_t n);

#endif
