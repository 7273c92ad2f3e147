// keel tests: keel-relay's bit flips (--flip, shape_flip in
// tools/keel-relay/shape.c) on virtual time: where the bit lands, which
// datagrams are spared, and that flipping changes no other decision. The
// relay's flips against real processes: tests/test_attack.c. MIT licence, see
// LICENSE.
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "../tools/keel-relay/shape.c"

static shape_params flips(uint32_t ppm, uint32_t tail, uint32_t min, uint32_t skip)
{
    shape_params p = shape_params_default();
    p.flip_ppm = ppm;
    p.flip_tail = tail;
    p.flip_min = min;
    p.flip_skip = skip;
    return p;
}

Test(attack_relay, flips_land_in_the_tail_of_large_enough_datagrams_after_the_skipped_ones)
{
    shape_params p = flips(SHAPE_PPM, 16, 40, 3);
    shape_state s;
    shape_init(&s, 7);
    uint32_t bit = 0;
    for (int i = 0; i < 3; i++)
        cr_expect_not(shape_flip(&s, &p, 100, &bit), "datagram %d is skipped", i);
    cr_expect_not(shape_flip(&s, &p, 39, &bit), "under --flip-min");
    for (uint32_t size = 40; size < 2000; size++) {
        cr_assert(shape_flip(&s, &p, size, &bit));
        cr_assert_geq(bit, (size - 16) * 8, "size %u: bit %u before the tail", size, bit);
        cr_assert_lt(bit, size * 8);
    }
    // a tail longer than the datagram, or 0: anywhere in it
    p = flips(SHAPE_PPM, 0, 0, 0);
    uint32_t lowest = UINT32_MAX;
    for (int i = 0; i < 4000; i++) {
        cr_assert(shape_flip(&s, &p, 8, &bit));
        cr_assert_lt(bit, 64);
        lowest = bit < lowest ? bit : lowest;
    }
    cr_expect_eq(lowest, 0, "the first bit is reachable");
    cr_expect_not(shape_flip(&s, &p, 0, &bit), "an empty datagram has no bit");
}

Test(attack_relay, the_rate_is_kept_and_off_draws_nothing)
{
    shape_params p = flips(200000, 16, 0, 0); // 20 %
    shape_state s;
    shape_init(&s, 1);
    uint32_t bit, n = 0;
    for (int i = 0; i < 100000; i++)
        n += shape_flip(&s, &p, 64, &bit);
    cr_log_info("flipped %u of 100000 at 20%%", n);
    cr_expect(n > 19000 && n < 21000, "flipped %u of 100000 at 20%%", n);
    shape_params off = flips(0, 16, 0, 0);
    shape_state before = s;
    cr_expect_not(shape_flip(&s, &off, 64, &bit));
    cr_expect_eq(memcmp(&before, &s, sizeof s), 0, "no draw while flipping is off");
}

Test(attack_relay, flipping_changes_no_other_decision)
{
    shape_params plain = shape_params_default();
    plain.loss_ppm = 100000;
    plain.dup_ppm = 50000;
    plain.reorder_ppm = 50000;
    plain.jitter_us = 5000;
    shape_params flipping = plain;
    flipping.flip_ppm = 500000;
    shape_state a, b;
    shape_init(&a, 99);
    shape_init(&b, 99);
    for (int i = 0; i < 20000; i++) {
        uint32_t bit, size = 20 + (uint32_t)(i % 1200);
        shape_verdict va, vb;
        shape_decide(&a, &plain, i * 1000, size, &va);
        shape_flip(&b, &flipping, size, &bit);
        shape_decide(&b, &flipping, i * 1000, size, &vb);
        cr_assert_eq(va.fate, vb.fate, "packet %d", i);
        cr_assert_eq(va.copies, vb.copies, "packet %d", i);
        for (int k = 0; k < va.copies; k++)
            cr_assert_eq(va.at_us[k], vb.at_us[k], "packet %d", i);
    }
}

Test(attack_relay, a_rate_above_100_percent_is_refused)
{
    shape_params p = flips(SHAPE_PPM + 1, 0, 0, 0);
    cr_expect_not_null(shape_params_check(&p));
    p.flip_ppm = SHAPE_PPM;
    cr_expect_null(shape_params_check(&p));
}
