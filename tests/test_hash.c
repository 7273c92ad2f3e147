// keel tests: state hashing (sim_hash.h). MIT licence, see LICENSE.
//
// The pinned values are what keel produced when the encoding was fixed; a
// change to any of them changes every state hash pinned elsewhere, so it must
// be deliberate. The byte-layout tests restate each encoding by hand, so a
// pinned value can be traced to the exact bytes behind it.
#include <string.h>

#include <criterion/criterion.h>
#include <xxhash.h>

#include <keel/sim_hash.h>

#include "test_support.h"

static sim_sweep_result sample_sweep(void)
{
    sim_sweep_result r;
    memset(&r, 0, sizeof r);
    r.hit = true;
    r.start_overlap = false;
    r.fraction = SIM_FX_RATIO(3, 8);
    r.position = sim_v3(SIM_FX_INT(1), SIM_FX_INT(-2), SIM_FX_RATIO(1, 4));
    r.normal = sim_v3(0, SIM_FX_ONE, 0);
    r.point = sim_v3(-5, 6, -7);
    r.feature.triangle = 123456;
    r.feature.type = SIM_FEATURE_EDGE;
    r.feature.index = 2;
    return r;
}

Test(hash, seed_spells_keelhash)
{
    const char *s = "keelhash";
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | (uint8_t)s[i];
    cr_assert_eq(v, SIM_HASH_SEED);
}

Test(hash, bytes_is_plain_xxh64)
{
    // The reference value of XXH64 of the empty input with seed 0.
    cr_assert_eq(sim_hash_bytes(0, NULL, 0), UINT64_C(0xEF46DB3751D8E999));
    cr_assert_eq(sim_hash_bytes(SIM_HASH_SEED, "abc", 3), UINT64_C(0x07CD5C1447447DCD));
}

Test(hash, pinned_scalars)
{
    cr_assert_eq(sim_hash_u8(SIM_HASH_SEED, 0x5A), UINT64_C(0x240D4206AE50ECCD));
    cr_assert_eq(sim_hash_u32(SIM_HASH_SEED, 0x01020304u), UINT64_C(0x85C412FACDF42D3F));
    cr_assert_eq(sim_hash_u64(SIM_HASH_SEED, UINT64_C(0x0102030405060708)), UINT64_C(0xAC8B92A793280F0C));
    cr_assert_eq(sim_hash_fx(SIM_HASH_SEED, -SIM_FX_RATIO(5, 4)), UINT64_C(0xD9F6902679E2C091));
    cr_assert_eq(sim_hash_vec3(SIM_HASH_SEED, sim_v3(SIM_FX_INT(1), SIM_FX_INT(-2), SIM_FX_RATIO(1, 4))),
                 UINT64_C(0x39E14A1ED81B63BC));
}

Test(hash, pinned_sweep_result)
{
    sim_sweep_result r = sample_sweep();
    cr_assert_eq(sim_hash_sweep_result(SIM_HASH_SEED, &r), UINT64_C(0xF236CF01E9C58832));
}

Test(hash, scalars_are_little_endian)
{
    static const uint8_t u32[4] = {0x04, 0x03, 0x02, 0x01};
    cr_assert_eq(sim_hash_u32(SIM_HASH_SEED, 0x01020304u), XXH64(u32, 4, SIM_HASH_SEED));
    static const uint8_t u64[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    cr_assert_eq(sim_hash_u64(SIM_HASH_SEED, UINT64_C(0x0102030405060708)), XXH64(u64, 8, SIM_HASH_SEED));
    // -1.25 is raw -81920 = 0xFFFEC000 in two's complement.
    static const uint8_t fx[4] = {0x00, 0xC0, 0xFE, 0xFF};
    cr_assert_eq(sim_hash_fx(SIM_HASH_SEED, -SIM_FX_RATIO(5, 4)), XXH64(fx, 4, SIM_HASH_SEED));
    static const uint8_t t[1] = {1}, f[1] = {0};
    cr_assert_eq(sim_hash_bool(7, true), XXH64(t, 1, 7));
    cr_assert_eq(sim_hash_bool(7, false), XXH64(f, 1, 7));
}

Test(hash, sweep_result_byte_layout)
{
    static const uint8_t expect[48] = {
        1,
        0, // hit, start_overlap
        0x00,
        0x60,
        0x00,
        0x00, // fraction 0.375 = 0x6000
        0x00,
        0x00,
        0x01,
        0x00, // position.x 1.0
        0x00,
        0x00,
        0xFE,
        0xFF, // position.y -2.0
        0x00,
        0x40,
        0x00,
        0x00, // position.z 0.25
        0x00,
        0x00,
        0x00,
        0x00, // normal.x
        0x00,
        0x00,
        0x01,
        0x00, // normal.y 1.0
        0x00,
        0x00,
        0x00,
        0x00, // normal.z
        0xFB,
        0xFF,
        0xFF,
        0xFF, // point.x raw -5
        0x06,
        0x00,
        0x00,
        0x00, // point.y raw 6
        0xF9,
        0xFF,
        0xFF,
        0xFF, // point.z raw -7
        0x40,
        0xE2,
        0x01,
        0x00, // feature.triangle 123456
        SIM_FEATURE_EDGE,
        2, // feature.type, feature.index
    };
    sim_sweep_result r = sample_sweep();
    cr_assert_eq(sim_hash_sweep_result(SIM_HASH_SEED, &r), XXH64(expect, 48, SIM_HASH_SEED));
}

Test(hash, padding_does_not_matter)
{
    // Same field values in memory that differs only in the padding bytes
    // (after the two bools, after the feature's two bytes).
    static const uint8_t fills[3] = {0x00, 0xA5, 0xFF};
    uint64_t sweep_ref = 0, contact_ref = 0, ray_ref = 0, feature_ref = 0;
    for (int i = 0; i < 3; i++) {
        sim_sweep_result r;
        memset(&r, fills[i], sizeof r);
        sim_sweep_result s = sample_sweep();
        r.hit = s.hit;
        r.start_overlap = s.start_overlap;
        r.fraction = s.fraction;
        r.position = s.position;
        r.normal = s.normal;
        r.point = s.point;
        r.feature.triangle = s.feature.triangle;
        r.feature.type = s.feature.type;
        r.feature.index = s.feature.index;

        sim_contact c;
        memset(&c, fills[i], sizeof c);
        c.normal = s.normal;
        c.depth = -SIM_FX_MM(3);
        c.point = s.point;
        c.feature.triangle = 9;
        c.feature.type = SIM_FEATURE_FACE;
        c.feature.index = 0;

        sim_ray_result y;
        memset(&y, fills[i], sizeof y);
        y.hit = true;
        y.fraction = SIM_FX_HALF;
        y.point = s.position;
        y.normal = s.normal;
        y.feature.triangle = 77;
        y.feature.type = SIM_FEATURE_VERTEX;
        y.feature.index = 1;

        uint64_t hs = sim_hash_sweep_result(SIM_HASH_SEED, &r);
        uint64_t hc = sim_hash_contact(SIM_HASH_SEED, &c);
        uint64_t hy = sim_hash_ray_result(SIM_HASH_SEED, &y);
        uint64_t hf = sim_hash_feature(SIM_HASH_SEED, &r.feature);
        if (i == 0) {
            sweep_ref = hs;
            contact_ref = hc;
            ray_ref = hy;
            feature_ref = hf;
            // The structs really do have padding, or this test proves nothing.
            cr_assert_gt(sizeof r, 48u);
            cr_assert_gt(sizeof r.feature, 6u);
        } else {
            cr_assert_eq(hs, sweep_ref, "fill 0x%02x", fills[i]);
            cr_assert_eq(hc, contact_ref, "fill 0x%02x", fills[i]);
            cr_assert_eq(hy, ray_ref, "fill 0x%02x", fills[i]);
            cr_assert_eq(hf, feature_ref, "fill 0x%02x", fills[i]);
        }
    }
}

Test(hash, every_field_and_the_order_matter)
{
    sim_sweep_result base = sample_sweep();
    uint64_t h0 = sim_hash_sweep_result(SIM_HASH_SEED, &base);
    sim_sweep_result r;

    r = base;
    r.hit = false;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.start_overlap = true;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.fraction += 1;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.position.z += 1;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.normal.x += 1;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.point.y += 1;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.feature.triangle += 1;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.feature.type = SIM_FEATURE_VERTEX;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    r = base;
    r.feature.index = 0;
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED, &r), h0);
    // A different running hash gives a different result.
    cr_assert_neq(sim_hash_sweep_result(SIM_HASH_SEED + 1, &base), h0);

    uint64_t ab = sim_hash_u32(sim_hash_u32(SIM_HASH_SEED, 1), 2);
    uint64_t ba = sim_hash_u32(sim_hash_u32(SIM_HASH_SEED, 2), 1);
    cr_assert_neq(ab, ba);
}

Test(hash, vec3_is_three_fx)
{
    sim_vec3 v = sim_v3(SIM_FX_INT(3), -SIM_FX_MM(1), SIM_FX_MIN);
    uint8_t b[12];
    const sim_fx c[3] = {v.x, v.y, v.z};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++)
            b[4 * i + k] = (uint8_t)((uint32_t)c[i] >> (8 * k));
    cr_assert_eq(sim_hash_vec3(SIM_HASH_SEED, v), XXH64(b, 12, SIM_HASH_SEED));
}
