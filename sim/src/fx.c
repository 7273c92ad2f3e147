// keel: fixed-point helpers that are not inline. MIT licence, see LICENSE.
#include <keel/sim_math.h>

#include "clz.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef KEEL_CHECKS
void sim_check_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: keel check failed: %s\n", file, line, expr);
    abort();
}
#endif

// ---- square roots ------------------------------------------------------------

// Seeds for the reciprocal square root: entry i is round(2^16 / sqrt((i + 64.5) / 64)),
// 1/sqrt of the middle of [(i + 64) / 64, (i + 65) / 64), good to about 8 bits.
// Only speed depends on these values: the root is corrected exactly below.
static const uint16_t rsqrt_seed[192] = {
    65281, 64781, 64292, 63814, 63347, 62889, 62442, 62004, 61575, 61154, 60742, 60339, 59943, 59555, 59175, 58801,
    58435, 58075, 57722, 57376, 57035, 56700, 56372, 56049, 55731, 55419, 55112, 54810, 54513, 54221, 53933, 53650,
    53371, 53097, 52826, 52560, 52298, 52040, 51785, 51535, 51288, 51044, 50804, 50567, 50333, 50103, 49876, 49652,
    49430, 49212, 48997, 48784, 48574, 48367, 48163, 47961, 47761, 47564, 47370, 47178, 46988, 46800, 46615, 46432,
    46251, 46072, 45895, 45720, 45547, 45376, 45207, 45040, 44875, 44711, 44550, 44390, 44232, 44075, 43920, 43767,
    43615, 43465, 43316, 43169, 43024, 42879, 42737, 42595, 42456, 42317, 42180, 42044, 41910, 41776, 41644, 41514,
    41384, 41256, 41129, 41003, 40878, 40754, 40631, 40510, 40390, 40270, 40152, 40035, 39919, 39803, 39689, 39576,
    39464, 39352, 39242, 39133, 39024, 38916, 38810, 38704, 38599, 38494, 38391, 38289, 38187, 38086, 37986, 37887,
    37788, 37690, 37593, 37497, 37401, 37307, 37213, 37119, 37027, 36935, 36843, 36753, 36663, 36573, 36485, 36397,
    36309, 36222, 36136, 36051, 35966, 35882, 35798, 35715, 35632, 35550, 35469, 35388, 35307, 35228, 35148, 35070,
    34991, 34914, 34837, 34760, 34684, 34608, 34533, 34458, 34384, 34310, 34237, 34164, 34092, 34020, 33949, 33878,
    33807, 33737, 33668, 33599, 33530, 33461, 33393, 33326, 33259, 33192, 33126, 33060, 32994, 32929, 32864, 32800,
};

uint32_t sim_isqrt_u64(uint64_t x)
{
    if (x == 0)
        return 0;
    // Normalise by an even shift so that the top 32 bits z hold a value
    // Z = z / 2^30 in [1, 4); sqrt(x << s) is then sqrt(Z) * 2^31.
    // The "| 1" changes nothing for x != 0 but lets gcc write x86's bsr over
    // its own input: bsr otherwise waits for the old value of its destination,
    // which in a loop chains one call to the previous (25 ns instead of 13).
    int s = keel_clz64(x | 1) & ~1;
    uint64_t z = (x << s) >> 32;
    // Newton's iteration for y = 1/sqrt(Z) needs only multiplications (a 64-bit
    // division is a library call on 32-bit targets). y is Q1.31 and stays
    // below 1/sqrt(Z) after the first step, so no product can overflow 64 bits.
    // Two steps take the 8-bit seed to about 29 bits.
    uint64_t y = (uint64_t)rsqrt_seed[(z >> 24) - 64] << 15;
    for (int i = 0; i < 2; i++) {
        uint64_t zy2 = (z * ((y * y) >> 31)) >> 30;
        y = (y * ((uint64_t)3 << 31) - y * zy2) >> 32;
    }
    uint64_t r = ((z * y) >> 30) >> (s >> 1);
    // The estimate is within a few units; settle the exact floor. r <= 2^32 - 1
    // keeps r * r in range, and (r + 1)^2 <= x is tested as x - r^2 > 2r.
    if (r > 0xFFFFFFFFu)
        r = 0xFFFFFFFFu;
    while (r * r > x)
        r--;
    while (x - r * r > 2 * r)
        r++;
    return (uint32_t)r;
}

sim_fx sim_fx_sqrt(sim_fx a)
{
    if (a <= 0) {
        SIM_CHECK(a >= 0);
        return 0;
    }
    uint64_t m = (uint64_t)(uint32_t)a << 16;
    uint64_t q = sim_isqrt_u64(m);
    if (a >= 0x40000000) {
        // The library's second stage (see sim_fx.h) behaves as if m were 2^14
        // smaller when the integer root of a leaves a remainder above 65535.
        // floor(sqrt(a)) is floor(q / 256) since q = floor(sqrt(a * 2^16)).
        uint64_t ra = q >> 8;
        if ((uint64_t)(uint32_t)a - ra * ra > 0xFFFFu) {
            m -= 0x4000;
            if (q * q > m)
                q--;
        }
    }
    // Nearest: r or r + 1, whichever square is closer (ties cannot occur).
    if (m - q * q > q)
        q++;
    return (sim_fx)q;
}

// ---- inverse trigonometry (CORDIC) --------------------------------------------

// round(atan(2^-i) * 2^32): the rotation angles, in Q32 radians.
static const int64_t cordic_atan_q32[31] = {
    3373259426, 1991351318, 1052175346, 534100635, 268086748, 134174063, 67103403, 33553749, 16777131, 8388597, 4194303,
    2097152,    1048576,    524288,     262144,    131072,    65536,     32768,    16384,    8192,     4096,    2048,
    1024,       512,        256,        128,       64,        32,        16,       8,        4,
};
#define PI_Q32 INT64_C(13493037705) // round(pi * 2^32)

// Angle of (x, y) with x, y >= 0, not both 0, in Q32 radians, within about 2^-27
// of the truth: the residual after the last rotation is below 2^-30 and the 31
// rounded table entries add at most 2^-28.
static int64_t atan_quadrant_q32(uint64_t x, uint64_t y)
{
    // Scale the larger input into [2^59, 2^60): enough bits that the shifted-out
    // ones do not matter, and the CORDIC gain (1.65) times sqrt(2) stays below 2^62.
    uint64_t m = x > y ? x : y;
    int sh = keel_clz64(m) - 4;
    if (sh > 0) {
        x <<= sh;
        y <<= sh;
    } else if (sh < 0) {
        x >>= -sh;
        y >>= -sh;
    }
    int64_t vx = (int64_t)x, vy = (int64_t)y, z = 0;
    // Vectoring mode: rotate toward the x axis and add up the rotations. vy
    // changes sign along the way; >> on it is an arithmetic shift (see sim_fx.h).
    for (int i = 0; i < 31; i++) {
        int64_t dx = vy >> i, dy = vx >> i;
        if (vy >= 0) {
            vx += dx;
            vy -= dy;
            z += cordic_atan_q32[i];
        } else {
            vx -= dx;
            vy += dy;
            z -= cordic_atan_q32[i];
        }
    }
    return z;
}

static sim_fx q32_to_fx(int64_t z) { return (sim_fx)sim_shr_round_s64(z, 16); }

sim_fx sim_fx_atan2(sim_fx y, sim_fx x)
{
    if (x == 0 && y == 0)
        return 0;
    uint64_t ax = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
    uint64_t ay = y < 0 ? 0u - (uint32_t)y : (uint32_t)y;
    int64_t z = atan_quadrant_q32(ax, ay);
    if (x < 0)
        z = PI_Q32 - z;
    // Negating before rounding keeps atan2(-y, x) == -atan2(y, x) exactly.
    return q32_to_fx(y < 0 ? -z : z);
}

// For a in [-1, 1] (Q16.16): |a| and sqrt(1 - a^2), both Q2.30. 1 - a^2 is
// exact in Q32; the root is taken at Q60 so that it keeps 30 fraction bits
// where it matters most, next to +-1.
static void asin_legs(sim_fx a, uint64_t *sin_leg, uint64_t *cos_leg)
{
    uint64_t u = a < 0 ? (uint64_t)(0 - (int64_t)a) : (uint64_t)a;
    uint64_t w = ((uint64_t)1 << 32) - u * u;
    *sin_leg = u << 14;
    *cos_leg = sim_isqrt_u64(w << 28);
}

sim_fx sim_fx_asin(sim_fx a)
{
    a = sim_fx_clamp(a, -SIM_FX_ONE, SIM_FX_ONE);
    uint64_t s, c;
    asin_legs(a, &s, &c);
    int64_t z = atan_quadrant_q32(c, s);
    return q32_to_fx(a < 0 ? -z : z);
}

sim_fx sim_fx_acos(sim_fx a)
{
    a = sim_fx_clamp(a, -SIM_FX_ONE, SIM_FX_ONE);
    uint64_t s, c;
    asin_legs(a, &s, &c);
    int64_t z = atan_quadrant_q32(s, c);
    return q32_to_fx(a < 0 ? PI_Q32 - z : z);
}

// ---- 64-bit helpers and vectors ------------------------------------------------

// |n| / d rounded to nearest, ties up (d > 0).
static inline uint64_t udiv_round(uint64_t n, uint64_t d)
{
    uint64_t q = n / d;
    uint64_t r = n % d;
    return r >= d - r ? q + 1 : q;
}

int64_t sim_div_round_s64(int64_t num, int64_t den)
{
    SIM_CHECK(den != 0);
    if (den == 0)
        return 0;
    bool neg = (num < 0) != (den < 0);
    uint64_t n = num < 0 ? (uint64_t)0 - (uint64_t)num : (uint64_t)num;
    uint64_t d = den < 0 ? (uint64_t)0 - (uint64_t)den : (uint64_t)den;
    uint64_t q = udiv_round(n, d);
    SIM_CHECK(q <= (uint64_t)INT64_MAX + neg);
    return neg ? (int64_t)((uint64_t)0 - q) : (int64_t)q;
}

static uint32_t abs_u32(sim_fx v) { return v < 0 ? 0u - (uint32_t)v : (uint32_t)v; }

// Squares summed in unsigned 64 bits: below 3 * 2^62 for any components, so
// even vectors far outside the world cannot overflow it.
static uint64_t len_sq_u64(uint32_t x, uint32_t y, uint32_t z)
{
    return (uint64_t)x * x + (uint64_t)y * y + (uint64_t)z * z;
}

static uint64_t isqrt_round_u64(uint64_t sq)
{
    uint64_t r = sim_isqrt_u64(sq);
    return r + (sq - r * r > r);
}

sim_fx sim_v3_length(sim_vec3 a)
{
    uint64_t r = isqrt_round_u64(len_sq_u64(abs_u32(a.x), abs_u32(a.y), abs_u32(a.z)));
    return sim_fx_from_s64_checked((int64_t)r);
}

// sim_div_round_s64(v * 2^(16 + s), l) of a component, for the length l
// >= 1 of the vector scaled by 2^s (so |v| 2^s <= l and the quotient fits
// Q16.16): the same value inline, with no division for a zero component.
static inline sim_fx unit_component(sim_fx v, int s, uint64_t l)
{
    if (v == 0)
        return 0;
    uint64_t q = udiv_round((uint64_t)abs_u32(v) << (16 + s), l);
    return v < 0 ? (sim_fx)(0 - (int64_t)q) : (sim_fx)q;
}

sim_vec3 sim_v3_normalize_len(sim_vec3 a, sim_fx *length)
{
    uint32_t ax = abs_u32(a.x), ay = abs_u32(a.y), az = abs_u32(a.z);
    uint32_t m = ax > ay ? ax : ay;
    m = m > az ? m : az;
    if (m == 0) {
        if (length)
            *length = 0;
        return sim_v3_zero();
    }
    // Direction does not depend on scale, so scale short vectors up until the
    // largest component reaches 2^29: the length then has 29 significant bits
    // and each component is rounded to nearest within 2^-13 ulp (a length
    // rounded to whole raw units would be far too coarse for a 3-unit vector).
    int s = keel_clz64(m) - 34; // the leading zeros of m as a 32-bit value, minus 2
    if (s < 0)
        s = 0;
    uint64_t sq = len_sq_u64(ax << s, ay << s, az << s);
    uint64_t r = sim_isqrt_u64(sq);
    if (length) {
        // floor(x / 2^s + 1/2) = floor(floor(x + 2^(s-1)) / 2^s): the rounded
        // unscaled length, identical to sim_v3_length.
        uint64_t len = s > 0 ? (r + ((uint64_t)1 << (s - 1))) >> s : r + (sq - r * r > r);
        *length = sim_fx_from_s64_checked((int64_t)len);
    }
    uint64_t l = r + (sq - r * r > r);
    return sim_v3(unit_component(a.x, s, l), unit_component(a.y, s, l), unit_component(a.z, s, l));
}

sim_vec3 sim_v3_normalize(sim_vec3 a) { return sim_v3_normalize_len(a, NULL); }
