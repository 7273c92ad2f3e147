// keel: authenticated, encrypted datagrams (frame.h explains the layout and
// the invariants). MIT licence, see LICENSE.
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

size_t frame_clear_bytes(const uint8_t *d, size_t n)
{
    if (n < 2)
        return 0;
    size_t clear = (d[0] & 0x80u) ? 4u : 2u; // ENet's ENET_PROTOCOL_HEADER_FLAG_SENT_TIME (host_enet_frame.c checks)
    return n < clear ? 0 : clear;
}

size_t frame_seal(frame_peer *f, uint8_t *d, size_t n)
{
    uint64_t counter = f->send_counter++;
    uint8_t nonce[12];
    make_nonce(nonce, counter);
    size_t clear = frame_clear_bytes(d, n);
    d[n] = (uint8_t)counter;
    d[n + 1] = (uint8_t)(counter >> 8);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(d + clear, d + n + FRAME_COUNTER_BYTES, NULL, d + clear,
                                                       n - clear, d, clear, NULL, nonce, f->send_key);
    return n + NET_FRAME_BYTES;
}

// Decrypts d[0 .. n) (trailer included) for `counter` under `key` into
// plain (the bytes after the header, *body of them, after *clear bytes of
// header): true when it authenticates. d is not written (libsodium zeroes
// its output when the tag fails, so it never decrypts in place).
static bool decrypt(const uint8_t key[SEAL_KEY_BYTES], uint64_t counter, const uint8_t *d, size_t n,
                    uint8_t plain[FRAME_MAX_DATAGRAM], size_t *clear, size_t *body)
{
    if (n <= NET_FRAME_BYTES || n - NET_FRAME_BYTES > FRAME_MAX_DATAGRAM)
        return false;
    size_t end = n - NET_FRAME_BYTES;
    *clear = frame_clear_bytes(d, end);
    if (*clear == 0)
        return false;
    *body = end - *clear;
    uint8_t nonce[12];
    make_nonce(nonce, counter);
    return crypto_aead_chacha20poly1305_ietf_decrypt_detached(
               plain, NULL, d + *clear, *body, d + end + FRAME_COUNTER_BYTES, d, *clear, nonce, key) == 0;
}

static uint16_t low_counter(const uint8_t *d, size_t n)
{
    const uint8_t *t = d + n - NET_FRAME_BYTES;
    return (uint16_t)(t[0] | (t[1] << 8));
}

seal_result frame_open(frame_peer *f, uint8_t *d, size_t n)
{
    if (!f->on || n <= NET_FRAME_BYTES)
        return SEAL_FORGED;
    uint64_t counter = seal_window_rebuild(&f->recv, low_counter(d, n));
    uint8_t plain[FRAME_MAX_DATAGRAM];
    size_t clear, body;
    // the tag first, so that only a datagram of this session counts as replayed
    if (!decrypt(f->recv_key, counter, d, n, plain, &clear, &body))
        return SEAL_FORGED;
    if (seal_window_seen(&f->recv, counter))
        return SEAL_REPLAYED;
    seal_window_accept(&f->recv, counter);
    memcpy(d + clear, plain, body);
    return SEAL_OK;
}

bool frame_open_with(const uint8_t recv_key[SEAL_KEY_BYTES], uint8_t *d, size_t n)
{
    uint8_t plain[FRAME_MAX_DATAGRAM];
    size_t clear, body;
    if (n <= NET_FRAME_BYTES || !decrypt(recv_key, low_counter(d, n), d, n, plain, &clear, &body))
        return false;
    memcpy(d + clear, plain, body);
    return true;
}
