// keel tests: sealed messages (net/src/seal.c): what a sealed message looks
// like, that it opens only with its key, channel and sequence, the replay
// window at its edges, the 16-bit sequence rebuilt across wraps, and the
// session keys' derivation. No sockets. MIT licence, see LICENSE.
#include <string.h>

#include <criterion/criterion.h>
#include <sodium.h>

#include "../net/src/seal.h"

static seal_peer tx, rx;
static const uint8_t K1[32] = {1, 2, 3}, K2[32] = {9, 8, 7};

static void setup(void)
{
    cr_assert(sodium_init() >= 0);
    seal_start(&tx, K1, K2);
    seal_start(&rx, K2, K1);
}

TestSuite(seal, .init = setup, .timeout = 60);

static uint8_t wire[64][64];
static size_t wire_n[64];

// Seals message i ("msg" + i) on `channel` into wire[i].
static void send_msg(int i, net_channel channel)
{
    uint8_t m[8] = {'m', 's', 'g', (uint8_t)i};
    wire_n[i] = seal_message(&tx, channel, m, sizeof m, wire[i]);
    cr_assert_eq(wire_n[i], sizeof m + NET_SEAL_BYTES);
}

static seal_result open_msg(int i, net_channel channel)
{
    uint8_t out[64];
    size_t n = 99;
    seal_result r = seal_open(&rx, channel, wire[i], wire_n[i], out, &n);
    if (r == SEAL_OK) {
        cr_assert_eq(n, 8);
        cr_assert_eq(out[3], (uint8_t)i);
    } else {
        cr_assert_eq(n, 0);
    }
    return r;
}

Test(seal, a_message_opens_once_and_only_unchanged)
{
    send_msg(0, NET_CHANNEL_INPUT);
    cr_assert_eq(wire[0][0], 0, "sequence 0, little-endian");
    cr_assert_neq(memcmp(wire[0] + 2, "msg", 3), 0, "the payload is not in clear");
    for (size_t byte = 0; byte < wire_n[0]; byte++) {
        for (int bit = 0; bit < 8; bit++) {
            wire[0][byte] ^= (uint8_t)(1u << bit);
            seal_result r = open_msg(0, NET_CHANNEL_INPUT);
            cr_assert_neq(r, SEAL_OK, "byte %zu bit %d flipped", byte, bit);
            wire[0][byte] ^= (uint8_t)(1u << bit);
        }
    }
    cr_assert_eq(open_msg(0, NET_CHANNEL_SNAPSHOT), SEAL_FORGED, "another channel's nonce");
    cr_assert_eq(open_msg(0, NET_CHANNEL_INPUT), SEAL_OK);
    cr_assert_eq(open_msg(0, NET_CHANNEL_INPUT), SEAL_REPLAYED);
    wire_n[0] = NET_SEAL_BYTES - 1;
    cr_assert_eq(open_msg(0, NET_CHANNEL_INPUT), SEAL_FORGED, "too short");
}

Test(seal, the_other_directions_key_does_not_open)
{
    send_msg(0, NET_CHANNEL_CONTROL);
    seal_peer wrong;
    seal_start(&wrong, K2, K2);
    uint8_t out[64];
    size_t n;
    cr_assert_eq(seal_open(&wrong, NET_CHANNEL_CONTROL, wire[0], wire_n[0], out, &n), SEAL_FORGED);
    seal_stop(&wrong);
    cr_assert(!wrong.on);
}

Test(seal, reordered_messages_open_within_the_window)
{
    for (int i = 0; i < 40; i++)
        send_msg(i, NET_CHANNEL_SNAPSHOT);
    int order[] = {3, 0, 1, 39, 2, 20, 4, 38};
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        cr_assert_eq(open_msg(order[k], NET_CHANNEL_SNAPSHOT), SEAL_OK, "message %d", order[k]);
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        cr_assert_eq(open_msg(order[k], NET_CHANNEL_SNAPSHOT), SEAL_REPLAYED, "message %d again", order[k]);
    cr_assert_eq(open_msg(5, NET_CHANNEL_SNAPSHOT), SEAL_OK, "never seen, in the window");
}

Test(seal, the_window_is_256_messages)
{
    uint8_t m[4] = {0}, first[64], out[64], buf[64];
    size_t n0 = seal_message(&tx, NET_CHANNEL_INPUT, m, sizeof m, first);
    size_t n;
    for (int i = 1; i < SEAL_WINDOW - 1; i++)
        seal_message(&tx, NET_CHANNEL_INPUT, m, sizeof m, buf);         // 1 .. 254 lost
    size_t nb = seal_message(&tx, NET_CHANNEL_INPUT, m, sizeof m, buf); // sequence 255
    cr_assert_eq(seal_open(&rx, NET_CHANNEL_INPUT, buf, nb, out, &n), SEAL_OK);
    cr_assert_eq(seal_open(&rx, NET_CHANNEL_INPUT, first, n0, out, &n), SEAL_OK, "255 behind: in the window");
    cr_assert_eq(seal_open(&rx, NET_CHANNEL_INPUT, first, n0, out, &n), SEAL_REPLAYED);
    // one more: sequence 0 is now 256 behind, too old even if never seen
    seal_start(&rx, K2, K1);
    cr_assert_eq(seal_open(&rx, NET_CHANNEL_INPUT, buf, nb, out, &n), SEAL_OK);
    nb = seal_message(&tx, NET_CHANNEL_INPUT, m, sizeof m, buf); // sequence 256
    cr_assert_eq(seal_open(&rx, NET_CHANNEL_INPUT, buf, nb, out, &n), SEAL_OK);
    cr_assert_eq(seal_open(&rx, NET_CHANNEL_INPUT, first, n0, out, &n), SEAL_REPLAYED);
}

Test(seal, sequences_past_16_bits_are_rebuilt)
{
    uint8_t m[4] = {7}, buf[64], out[64], old[64];
    size_t n, nold = 0;
    // 70000 messages on one channel, every 100th delivered (gaps of 99),
    // then one 30000 messages after the last delivered
    for (uint32_t i = 0; i < 70000; i++) {
        size_t nb = seal_message(&tx, NET_CHANNEL_SNAPSHOT, m, sizeof m, buf);
        if (i == 60000) {
            memcpy(old, buf, nb);
            nold = nb;
        }
        if (i % 100 == 0)
            cr_assert_eq(seal_open(&rx, NET_CHANNEL_SNAPSHOT, buf, nb, out, &n), SEAL_OK, "message %u", i);
    }
    cr_assert_eq(rx.recv[NET_CHANNEL_SNAPSHOT].highest, 69900);
    for (uint32_t i = 0; i < 30000; i++)
        seal_message(&tx, NET_CHANNEL_SNAPSHOT, m, sizeof m, buf);
    size_t nb = seal_message(&tx, NET_CHANNEL_SNAPSHOT, m, sizeof m, buf); // 100000
    cr_assert_eq(seal_open(&rx, NET_CHANNEL_SNAPSHOT, buf, nb, out, &n), SEAL_OK);
    cr_assert_eq(rx.recv[NET_CHANNEL_SNAPSHOT].highest, 100000);
    cr_assert_neq(seal_open(&rx, NET_CHANNEL_SNAPSHOT, old, nold, out, &n), SEAL_OK, "40000 behind");
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
    // 20,000 random buffers of 0..80 bytes (fixed seed), and the same with
    // a genuine sequence in front: none opens, the window stays empty
    uint64_t x = 0x9E3779B97F4A7C15u;
    uint8_t buf[80], out[80];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = (size_t)(x % sizeof buf);
        for (size_t k = 0; k < n; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[k] = (uint8_t)x;
        }
        if (i % 2 && n >= 2)
            buf[0] = (uint8_t)i, buf[1] = 0;
        size_t m = 1;
        cr_assert_neq(seal_open(&rx, (net_channel)(i % NET_CHANNEL_COUNT), buf, n, out, &m), SEAL_OK);
        cr_assert_eq(m, 0);
    }
    for (int c = 0; c < NET_CHANNEL_COUNT; c++)
        cr_assert(!rx.recv[c].any, "channel %d", c);
}
