// keel: sealed messages (seal.h explains the layout and the invariants).
// MIT licence, see LICENSE.
#include <string.h>

#include <sodium.h>

#include "seal.h"

_Static_assert(crypto_aead_chacha20poly1305_ietf_NPUBBYTES == 12, "IETF nonce");
_Static_assert(crypto_aead_chacha20poly1305_ietf_ABYTES == SEAL_TAG_BYTES, "tag size");
_Static_assert(crypto_aead_chacha20poly1305_ietf_KEYBYTES == SEAL_KEY_BYTES, "key size");

void seal_start(seal_peer *p, const uint8_t send_key[SEAL_KEY_BYTES], const uint8_t recv_key[SEAL_KEY_BYTES])
{
    memset(p, 0, sizeof *p);
    memcpy(p->send_key, send_key, SEAL_KEY_BYTES);
    memcpy(p->recv_key, recv_key, SEAL_KEY_BYTES);
    p->on = true;
}

void seal_stop(seal_peer *p) { sodium_memzero(p, sizeof *p); }

static void make_nonce(uint8_t nonce[12], net_channel channel, uint64_t seq)
{
    memset(nonce, 0, 12);
    nonce[0] = (uint8_t)channel;
    for (int i = 0; i < 8; i++)
        nonce[4 + i] = (uint8_t)(seq >> (8 * i));
}

size_t seal_message(seal_peer *p, net_channel channel, const uint8_t *in, size_t n, uint8_t *out)
{
    uint64_t seq = p->send_seq[channel]++;
    uint8_t nonce[12];
    make_nonce(nonce, channel, seq);
    out[0] = (uint8_t)seq;
    out[1] = (uint8_t)(seq >> 8);
    unsigned long long clen = 0;
    crypto_aead_chacha20poly1305_ietf_encrypt(out + SEAL_SEQ_BYTES, &clen, in, n, NULL, 0, NULL, nonce, p->send_key);
    return SEAL_SEQ_BYTES + (size_t)clen;
}

uint64_t seal_window_rebuild(const seal_window *w, uint16_t low)
{
    if (!w->any)
        return low; // the first message: the sender started at 0
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

seal_result seal_open(seal_peer *p, net_channel channel, const uint8_t *in, size_t n, uint8_t *out, size_t *out_n)
{
    *out_n = 0;
    if (n < NET_SEAL_BYTES)
        return SEAL_FORGED;
    seal_window *w = &p->recv[channel];
    uint64_t seq = seal_window_rebuild(w, (uint16_t)(in[0] | (in[1] << 8)));
    if (seal_window_seen(w, seq))
        return SEAL_REPLAYED;
    uint8_t nonce[12];
    make_nonce(nonce, channel, seq);
    unsigned long long mlen = 0;
    if (crypto_aead_chacha20poly1305_ietf_decrypt(out, &mlen, NULL, in + SEAL_SEQ_BYTES, n - SEAL_SEQ_BYTES, NULL, 0,
                                                  nonce, p->recv_key) != 0)
        return SEAL_FORGED;
    seal_window_accept(w, seq);
    *out_n = (size_t)mlen;
    return SEAL_OK;
}

void seal_derive(const uint8_t token_key[SEAL_KEY_BYTES], const char label[8], const uint8_t salt[SEAL_SALT_BYTES],
                 uint8_t out[SEAL_KEY_BYTES])
{
    uint8_t msg[8 + SEAL_SALT_BYTES];
    memcpy(msg, label, 8);
    memcpy(msg + 8, salt, SEAL_SALT_BYTES);
    crypto_generichash(out, SEAL_KEY_BYTES, msg, sizeof msg, token_key, SEAL_KEY_BYTES);
}
