// keel: the replay window and the session keys of secure mode's sealed
// datagrams (seal.h; frame.c seals the datagrams). MIT licence, see LICENSE.
#include <string.h>

#include <sodium.h>

#include "seal.h"

_Static_assert(crypto_aead_chacha20poly1305_ietf_NPUBBYTES == 12, "IETF nonce");
_Static_assert(crypto_aead_chacha20poly1305_ietf_ABYTES == SEAL_TAG_BYTES, "tag size");
_Static_assert(crypto_aead_chacha20poly1305_ietf_KEYBYTES == SEAL_KEY_BYTES, "key size");

uint64_t seal_window_rebuild(const seal_window *w, uint16_t low)
{
    if (!w->any)
        return low; // the first datagram: the sender started at 0
    uint64_t base = w->highest & ~(uint64_t)0xFFFF;
    uint64_t s = base | low;
    if (s > w->highest && s - w->highest > 0x8000u && s >= 0x10000u)
        s -= 0x10000u;
    else if (s < w->highest && w->highest - s > 0x8000u && s <= UINT64_MAX - 0x10000u)
        s += 0x10000u;
    return s;
}

bool seal_window_seen(const seal_window *w, uint64_t s)
{
    if (!w->any || s > w->highest)
        return false;
    uint64_t back = w->highest - s;
    if (back >= SEAL_WINDOW)
        return true; // too old to tell: treated as replayed
    return (w->bits[back / 64] >> (back % 64)) & 1u;
}

void seal_window_accept(seal_window *w, uint64_t s)
{
    if (!w->any || s > w->highest) {
        uint64_t shift = w->any ? s - w->highest : SEAL_WINDOW;
        if (shift >= SEAL_WINDOW) {
            memset(w->bits, 0, sizeof w->bits);
        } else {
            // move every bit `shift` places up (towards older)
            unsigned words = (unsigned)(shift / 64), bits = (unsigned)(shift % 64);
            for (int i = SEAL_WINDOW / 64 - 1; i >= 0; i--) {
                uint64_t v = 0;
                if (i - (int)words >= 0) {
                    v = w->bits[i - (int)words] << bits;
                    if (bits && i - (int)words - 1 >= 0)
                        v |= w->bits[i - (int)words - 1] >> (64 - bits);
                }
                w->bits[i] = v;
            }
        }
        w->highest = s;
        w->any = true;
        w->bits[0] |= 1u;
        return;
    }
    uint64_t back = w->highest - s;
    w->bits[back / 64] |= (uint64_t)1 << (back % 64);
}

void seal_derive(const uint8_t token_key[SEAL_KEY_BYTES], const char label[8], const uint8_t salt[SEAL_SALT_BYTES],
                 uint8_t out[SEAL_KEY_BYTES])
{
    uint8_t msg[8 + SEAL_SALT_BYTES];
    memcpy(msg, label, 8);
    memcpy(msg + 8, salt, SEAL_SALT_BYTES);
    crypto_generichash(out, SEAL_KEY_BYTES, msg, sizeof msg, token_key, SEAL_KEY_BYTES);
}
