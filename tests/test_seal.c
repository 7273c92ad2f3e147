// keel tests: sealed datagrams (net/src/frame.c) and what they rest on
// (net/src/seal.c): what a sealed datagram looks like, that it opens only
// unchanged and with its key, the replay window at its edges, the 16-bit
// counter rebuilt across wraps, and the session keys' derivation. No
// sockets (tests/test_frame.c has them). MIT licence, see LICENSE.
#include <string.h>

#include <criterion/criterion.h>
#include <sodium.h>

#include "../net/src/frame.h"

static frame_peer tx, rx;
static const uint8_t K1[32] = {1, 2, 3}, K2[32] = {9, 8, 7};

static void setup(void)
{
    cr_assert(sodium_init() >= 0);
    frame_start(&tx, K1, K2, 1, 0, 0);
    frame_start(&rx, K2, K1, 1, 0, 0);
}

TestSuite(seal, .init = setup, .timeout = 60);

enum { MSG = 10 }; // ENet's 2-byte header (peer 1, no sent time), then "msg", i and 4 more
static uint8_t wire[64][64];
static size_t wire_n[64];

static void datagram(uint8_t d[MSG], int i)
{
    memset(d, 0, MSG);
    d[1] = 1;
    memcpy(d + 2, "msg", 3);
    d[5] = (uint8_t)i;
}

// Seals datagram i into wire[i].
static void send_msg(int i)
{
    datagram(wire[i], i);
    wire_n[i] = frame_seal(&tx, wire[i], MSG);
    cr_assert_eq(wire_n[i], MSG + NET_FRAME_BYTES);
}

// Opens a copy of wire[i] (the original stays sealed, to be sent again).
static seal_result open_msg(int i)
{
    uint8_t d[64], want[MSG];
    memcpy(d, wire[i], wire_n[i]);
    seal_result r = frame_open(&rx, d, wire_n[i]);
    datagram(want, i);
    if (r == SEAL_OK)
        cr_assert_eq(memcmp(d, want, MSG), 0, "datagram %d opened", i);
    else
        cr_assert_eq(memcmp(d, wire[i], wire_n[i]), 0, "datagram %d not opened, but changed", i);
    return r;
}

Test(seal, a_datagram_opens_once_and_only_unchanged)
{
    send_msg(0);
    cr_assert_eq(wire[0][0], 0, "ENet's header in clear");
    cr_assert_eq(wire[0][1], 1, "ENet's header in clear");
    cr_assert_neq(memcmp(wire[0] + 2, "msg", 3), 0, "the rest is not in clear");
    cr_assert_eq(wire[0][MSG], 0, "counter 0, little-endian");
    for (size_t byte = 0; byte < wire_n[0]; byte++) {
        for (int bit = 0; bit < 8; bit++) {
            wire[0][byte] ^= (uint8_t)(1u << bit);
            seal_result r = open_msg(0);
            cr_assert_neq(r, SEAL_OK, "byte %zu bit %d flipped", byte, bit);
            wire[0][byte] ^= (uint8_t)(1u << bit);
        }
    }
    cr_assert_eq(open_msg(0), SEAL_OK);
    cr_assert_eq(open_msg(0), SEAL_REPLAYED);
    wire_n[0] = NET_FRAME_BYTES;
    cr_assert_eq(open_msg(0), SEAL_FORGED, "too short");
}

Test(seal, the_other_directions_key_does_not_open)
{
    send_msg(0);
    frame_peer wrong;
    frame_start(&wrong, K2, K2, 1, 0, 0);
    uint8_t d[64];
    memcpy(d, wire[0], wire_n[0]);
    cr_assert_eq(frame_open(&wrong, d, wire_n[0]), SEAL_FORGED);
    frame_stop(&wrong);
    cr_assert(!wrong.on);
}

Test(seal, reordered_datagrams_open_within_the_window)
{
    for (int i = 0; i < 40; i++)
        send_msg(i);
    int order[] = {3, 0, 1, 39, 2, 20, 4, 38};
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        cr_assert_eq(open_msg(order[k]), SEAL_OK, "datagram %d", order[k]);
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        cr_assert_eq(open_msg(order[k]), SEAL_REPLAYED, "datagram %d again", order[k]);
    cr_assert_eq(open_msg(5), SEAL_OK, "never seen, in the window");
}

// Seals a fresh datagram into d; returns its length.
static size_t next(uint8_t d[64])
{
    datagram(d, 0);
    return frame_seal(&tx, d, MSG);
}

// frame_open on a copy of d.
static seal_result open_copy(const uint8_t *d, size_t n)
{
    uint8_t c[64];
    memcpy(c, d, n);
    return frame_open(&rx, c, n);
}

Test(seal, the_window_is_256_datagrams)
{
    uint8_t first[64], buf[64];
    size_t n0 = next(first);
    for (int i = 1; i < SEAL_WINDOW - 1; i++)
        next(buf);         // 1 .. 254 lost
    size_t nb = next(buf); // counter 255
    cr_assert_eq(open_copy(buf, nb), SEAL_OK);
    cr_assert_eq(open_copy(first, n0), SEAL_OK, "255 behind: in the window");
    cr_assert_eq(open_copy(first, n0), SEAL_REPLAYED);
    // one more: counter 0 is now 256 behind, too old even if never seen
    frame_start(&rx, K2, K1, 1, 0, 0);
    cr_assert_eq(open_copy(buf, nb), SEAL_OK);
    nb = next(buf); // counter 256
    cr_assert_eq(open_copy(buf, nb), SEAL_OK);
    cr_assert_eq(open_copy(first, n0), SEAL_REPLAYED);
}

Test(seal, counters_past_16_bits_are_rebuilt)
{
    uint8_t buf[64], old[64];
    size_t nold = 0;
    // 70000 datagrams, every 100th delivered (gaps of 99), then one 30000
    // datagrams after the last delivered
    for (uint32_t i = 0; i < 70000; i++) {
        size_t nb = next(buf);
        if (i == 60000) {
            memcpy(old, buf, nb);
            nold = nb;
        }
        if (i % 100 == 0)
            cr_assert_eq(open_copy(buf, nb), SEAL_OK, "datagram %u", i);
    }
    cr_assert_eq(rx.recv.highest, 69900);
    for (uint32_t i = 0; i < 30000; i++)
        next(buf);
    size_t nb = next(buf); // 100000
    cr_assert_eq(open_copy(buf, nb), SEAL_OK);
    cr_assert_eq(rx.recv.highest, 100000);
    cr_assert_neq(open_copy(old, nold), SEAL_OK, "40000 behind");
}

Test(seal, derived_keys_depend_on_key_label_and_salt)
{
    uint8_t salt[SEAL_SALT_BYTES] = {1}, salt2[SEAL_SALT_BYTES] = {2}, a[32], b[32], c[32], d[32];
    seal_derive(K1, "keel c2s", salt, a);
    seal_derive(K1, "keel s2c", salt, b);
    seal_derive(K1, "keel c2s", salt2, c);
    seal_derive(K2, "keel c2s", salt, d);
    cr_assert_arr_neq(a, b, 32);
    cr_assert_arr_neq(a, c, 32);
    cr_assert_arr_neq(a, d, 32);
    uint8_t again[32];
    seal_derive(K1, "keel c2s", salt, again);
    cr_assert_arr_eq(a, again, 32);
}

Test(seal, random_bytes_never_open_and_never_move_the_window)
{
    // 20,000 random buffers of 0..80 bytes (fixed seed), half of them with
    // a genuine counter where the trailer starts: none opens, none is
    // changed, the window stays empty
    uint64_t x = 0x9E3779B97F4A7C15u;
    uint8_t buf[80], copy[80];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = (size_t)(x % sizeof buf);
        for (size_t k = 0; k < n; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[k] = (uint8_t)x;
        }
        if (i % 2 && n >= NET_FRAME_BYTES)
            buf[n - NET_FRAME_BYTES] = (uint8_t)i, buf[n - NET_FRAME_BYTES + 1] = 0;
        memcpy(copy, buf, n);
        cr_assert_neq(frame_open(&rx, buf, n), SEAL_OK);
        cr_assert(n == 0 || memcmp(copy, buf, n) == 0, "buffer %d changed", i);
    }
    cr_assert(!rx.recv.any);
}
