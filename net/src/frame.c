// keel: authenticated datagrams (frame.h explains the layout and the
// invariants). MIT licence, see LICENSE.
#include <string.h>

#include <sodium.h>

#include "frame.h"

void frame_start(frame_peer *f, const uint8_t send_key[SEAL_KEY_BYTES], const uint8_t recv_key[SEAL_KEY_BYTES],
                 uint32_t connect_id, uint32_t host, uint16_t port)
{
    memset(f, 0, sizeof *f);
    memcpy(f->send_key, send_key, SEAL_KEY_BYTES);
    memcpy(f->recv_key, recv_key, SEAL_KEY_BYTES);
    f->connect_id = connect_id;
    f->host = host;
    f->port = port;
    f->on = true;
}

void frame_stop(frame_peer *f) { sodium_memzero(f, sizeof *f); }

static void make_nonce(uint8_t nonce[12], uint64_t counter)
{
    memset(nonce, 0, 12);
    nonce[0] = FRAME_NONCE_DOMAIN;
    for (int i = 0; i < 8; i++)
        nonce[4 + i] = (uint8_t)(counter >> (8 * i));
}

size_t frame_seal(frame_peer *f, uint8_t *d, size_t n)
{
    uint64_t counter = f->send_counter++;
    uint8_t nonce[12], none = 0;
    make_nonce(nonce, counter);
    d[n] = (uint8_t)counter;
    d[n + 1] = (uint8_t)(counter >> 8);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(&none, d + n + FRAME_COUNTER_BYTES, NULL, &none, 0, d, n, NULL,
                                                       nonce, f->send_key);
    return n + NET_FRAME_BYTES;
}

// True when the tag of d[0 .. n) (trailer included, n >= NET_FRAME_BYTES)
// is right for `counter` under `key`.
static bool verify(const uint8_t key[SEAL_KEY_BYTES], uint64_t counter, const uint8_t *d, size_t n)
{
    uint8_t nonce[12], none = 0;
    make_nonce(nonce, counter);
    size_t body = n - NET_FRAME_BYTES;
    return crypto_aead_chacha20poly1305_ietf_decrypt_detached(&none, NULL, &none, 0, d + body + FRAME_COUNTER_BYTES, d,
                                                              body, nonce, key) == 0;
}

static uint16_t low_counter(const uint8_t *d, size_t n)
{
    const uint8_t *t = d + n - NET_FRAME_BYTES;
    return (uint16_t)(t[0] | (t[1] << 8));
}

seal_result frame_open(frame_peer *f, const uint8_t *d, size_t n)
{
    if (!f->on || n <= NET_FRAME_BYTES)
        return SEAL_FORGED;
    uint64_t counter = seal_window_rebuild(&f->recv, low_counter(d, n));
    // the tag first, so that only a datagram of this session counts as replayed
    if (!verify(f->recv_key, counter, d, n))
        return SEAL_FORGED;
    if (seal_window_seen(&f->recv, counter))
        return SEAL_REPLAYED;
    seal_window_accept(&f->recv, counter);
    return SEAL_OK;
}

bool frame_check(const uint8_t recv_key[SEAL_KEY_BYTES], const uint8_t *d, size_t n)
{
    return n > NET_FRAME_BYTES && verify(recv_key, low_counter(d, n), d, n);
}
