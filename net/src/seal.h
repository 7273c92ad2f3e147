// keel: what secure mode's sealed datagrams (frame.h) rest on: the replay
// window and the session keys (seal.c). Private to net/ and tests/. MIT
// licence, see LICENSE.
//
// Invariants:
//   - the receiver rebuilds a full 64-bit counter from its 16 low bits as
//     the value nearest the highest one it accepted; a wrong guess (more
//     than 32768 datagrams lost or reordered in a row, which the timeout
//     rules out at keel's rates) fails authentication and the datagram is
//     dropped, never accepted under another number;
//   - a window of the SEAL_WINDOW latest counters: one accepted before, or
//     SEAL_WINDOW or more behind the highest accepted, is taken as replayed;
//     the caller moves the window only for what authenticated;
//   - the keys come from the connect token and differ for every admission:
//     seal_derive mixes the challenge's random 24-byte nonce into each
//     direction's token key (BLAKE2b), so a session captured once cannot be
//     replayed into a later session of the same token;
//   - nothing is allocated.
// Until protocol version 5 each keel message was also sealed on its own
// (its channel's sequence in the nonce, a window per channel); since
// version 6 only the datagram is.
#ifndef KEEL_NET_SEAL_H
#define KEEL_NET_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/net_host.h>

enum {
    SEAL_KEY_BYTES = 32,
    SEAL_SALT_BYTES = 24, ///< the challenge's seal nonce
    SEAL_TAG_BYTES = 16,
    SEAL_WINDOW = 256, ///< counters remembered
};

/// One direction's replay window, receiving.
typedef struct seal_window {
    uint64_t highest;                ///< highest counter accepted (valid when `any`)
    uint64_t bits[SEAL_WINDOW / 64]; ///< bit k: highest - k was accepted
    bool any;
} seal_window;

typedef enum seal_result {
    SEAL_OK = 0,
    SEAL_FORGED,   ///< too short, or does not authenticate (damaged, forged, another key)
    SEAL_REPLAYED, ///< authenticated before, or too old for the window
} seal_result;

/// The full counter whose low 16 bits are `low`: the value nearest the
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
