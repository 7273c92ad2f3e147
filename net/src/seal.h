// keel: sealed messages, secure mode's per-message protection after the
// handshake (seal.c). Private to net/ and tests/. MIT licence, see LICENSE.
//
// Every keel message a secure host sends is sealed with ChaCha20-Poly1305
// (IETF, libsodium) under its direction's session key, and every message it
// receives is opened with the other direction's key and passed through a
// replay window. The layout (NET_SEAL_BYTES = 18 added to each message):
//
//   sequence (2 bytes, little-endian: the low 16 bits) | ciphertext | tag 16
//
// Invariants:
//   - each direction of each channel counts its own 64-bit sequence from 0,
//     one per message; the nonce is (channel, 0, 0, 0, sequence as 8 bytes
//     little-endian), so no (key, nonce) pair is ever used twice: a
//     direction has its own key, a channel its own nonces, and a sequence
//     never repeats (2^64 messages are not sent in the life of a process);
//   - the receiver rebuilds the full sequence from its 16 low bits as the
//     value nearest the highest one it accepted on that channel; a wrong
//     guess (more than 32768 messages lost or reordered in a row, which the
//     5 s timeout rules out at keel's rates) fails authentication and the
//     message is dropped, never accepted under another number;
//   - per channel a window of the SEAL_WINDOW latest sequences: a message
//     whose sequence was accepted before, or which is SEAL_WINDOW or more
//     behind the highest accepted, is dropped as replayed; the window moves
//     only for a message that authenticated. Channels have separate windows
//     because a reliable control message may arrive long after the
//     unreliable ones sent after it (a retransmission), and must not be
//     judged against their numbers;
//   - the keys come from the connect token and differ for every admission:
//     seal_derive mixes the challenge's random 24-byte nonce into each
//     direction's token key (BLAKE2b), so a session captured once cannot be
//     replayed into a later session of the same token;
//   - nothing is allocated; opening writes only to the caller's buffer.
#ifndef KEEL_NET_SEAL_H
#define KEEL_NET_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/net_host.h>

enum {
    SEAL_KEY_BYTES = 32,
    SEAL_SALT_BYTES = 24, ///< the challenge's seal nonce
    SEAL_SEQ_BYTES = 2,
    SEAL_TAG_BYTES = 16,
    SEAL_WINDOW = 256, ///< sequences remembered per channel
};

_Static_assert(SEAL_SEQ_BYTES + SEAL_TAG_BYTES == NET_SEAL_BYTES, "seal overhead");

/// One direction of one channel, receiving.
typedef struct seal_window {
    uint64_t highest;                ///< highest sequence accepted (valid when `any`)
    uint64_t bits[SEAL_WINDOW / 64]; ///< bit k: highest - k was accepted
    bool any;
} seal_window;

/// A peer's sealing state (both directions).
typedef struct seal_peer {
    bool on;
    uint8_t send_key[SEAL_KEY_BYTES], recv_key[SEAL_KEY_BYTES];
    uint64_t send_seq[NET_CHANNEL_COUNT];
    seal_window recv[NET_CHANNEL_COUNT];
} seal_peer;

typedef enum seal_result {
    SEAL_OK = 0,
    SEAL_FORGED,   ///< too short, or does not authenticate (damaged, forged, another key)
    SEAL_REPLAYED, ///< authenticated before, or too old for the window
} seal_result;

/// Starts sealing with the two keys (copied); counters and windows from 0.
void seal_start(seal_peer *p, const uint8_t send_key[SEAL_KEY_BYTES], const uint8_t recv_key[SEAL_KEY_BYTES]);
/// Wipes the keys (sodium_memzero) and turns it off.
void seal_stop(seal_peer *p);

/// Seals `n` bytes into out[0 .. n + NET_SEAL_BYTES) (out must not overlap
/// in) and returns that length.
size_t seal_message(seal_peer *p, net_channel channel, const uint8_t *in, size_t n, uint8_t *out);
/// Opens a sealed message of `n` bytes into out[0 .. n - NET_SEAL_BYTES)
/// (*out_n), checking and then moving the channel's window.
seal_result seal_open(seal_peer *p, net_channel channel, const uint8_t *in, size_t n, uint8_t *out, size_t *out_n);

/// The full sequence whose low 16 bits are `low`: the value nearest the
/// highest one the window accepted (`low` itself before the first).
uint64_t seal_window_rebuild(const seal_window *w, uint16_t low);
/// True when `s` was accepted before, or is SEAL_WINDOW or more behind the
/// highest accepted (too old to tell: treated as replayed).
bool seal_window_seen(const seal_window *w, uint64_t s);
/// Marks `s` accepted (it authenticated), moving the window when it is the
/// highest.
void seal_window_accept(seal_window *w, uint64_t s);

/// A session key for one direction: BLAKE2b-256 keyed with the token's key
/// for that direction, of a label ("keel c2s" or "keel s2c") and the salt.
void seal_derive(const uint8_t token_key[SEAL_KEY_BYTES], const char label[8], const uint8_t salt[SEAL_SALT_BYTES],
                 uint8_t out[SEAL_KEY_BYTES]);

#endif
