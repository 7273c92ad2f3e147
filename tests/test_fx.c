// keel tests: fixed-point scalars and vectors against libfixmath and double references. MIT licence.
//
// sim_fx_mul, sim_fx_div and sim_fx_sqrt must equal fix16_mul, fix16_div and
// fix16_sqrt bit for bit wherever the library does not overflow: each is run
// on at least 10^7 inputs mixing uniform raw bits, every magnitude, values
// next to the overflow and rounding boundaries and powers of two +-1 ulp,
// plus an explicit edge list. (sim_fx_sqrt was also compared on all 2^31
// non-negative inputs once, outside this test: no difference.) Vector helpers
// are compared with double-precision references, each with its error bound.
#include <criterion/criterion.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "clz.h"
#include "test_support.h"

#define N_LIB_COMPARE 10000000L

static const double ULP = 1.0 / 65536.0;

// Any magnitude from 0 to 2^32 - 1 bits long, with a random sign: every
// binary order of magnitude is as likely as any other.
static int32_t rnd_mixed(keel_rng *r)
{
    uint64_t u = keel_rng_next(r);
    int bits = (int)(u % 33);
    uint32_t v = bits == 0 ? 0 : (uint32_t)(keel_rng_next(r) >> (64 - bits));
    return (u >> 40) & 1 ? (int32_t)(0u - v) : (int32_t)v;
}

// +-2^k, optionally one ulp either side.
static int32_t rnd_pow2(keel_rng *r)
{
    uint64_t u = keel_rng_next(r);
    int k = (int)(u % 31);
    int32_t v = (int32_t)(1u << k) + (int32_t)((u >> 8) % 3) - 1;
    return (u >> 16) & 1 ? -v : v;
}

static const int32_t EDGES[] = {0,          1,          -1,         2,           -2,         3,           -3,
                                0x7FFF,     0x8000,     -0x8000,    0x8001,      0xFFFF,     0x10000,     -0x10000,
                                0x10001,    -0x10001,   0x18000,    -0x18000,    0x20000,    0xFFFFF,     0x100000,
                                -0x100000,  0x100001,   0x1FFFFF,   0x3FFFFFFF,  0x40000000, -0x40000000, 0x40000001,
                                0x7FFF0000, 0x7FFFFFFE, 0x7FFFFFFF, -0x7FFFFFFF, INT32_MIN,  0x00B504F3,  0x05A82799,
                                12345678,   -87654321,  0x12345,    0x3243F};
#define N_EDGES ((int)(sizeof EDGES / sizeof EDGES[0]))

// ---- multiplication --------------------------------------------------------

// The library's overflow rule: the Q32.32 product needs bits 47..63 all equal
// to the sign (a product of -2^47 is the legitimate -32768.0).
static bool mul_overflows(int32_t a, int32_t b)
{
    int64_t p = (int64_t)a * b;
    return p < -((int64_t)1 << 47) || p >= ((int64_t)1 << 47);
}

static void mul_inputs(keel_rng *r, long i, int32_t *a, int32_t *b)
{
    switch (i % 8) {
    case 0: // uniform raw bits
        *a = (int32_t)keel_rng_next(r);
        *b = (int32_t)keel_rng_next(r);
        break;
    case 1:
        *a = rnd_mixed(r);
        *b = rnd_mixed(r);
        break;
    case 2: { // next to the overflow boundary |a * b| = 2^47
        *a = rnd_mixed(r);
        if (*a == 0 || *a == INT32_MIN)
            *a = 3;
        int64_t m = ((int64_t)1 << 47) / llabs((int64_t)*a) + keel_rng_range(r, -2, 2);
        if (m > INT32_MAX)
            m = INT32_MAX;
        *b = (int32_t)((keel_rng_next(r) & 1) ? -m : m);
        break;
    }
    case 3: // small values, within +-16
        *a = (int32_t)keel_rng_range(r, -0x100000, 0x100000);
        *b = (int32_t)keel_rng_range(r, -0x100000, 0x100000);
        break;
    case 4:
        *a = rnd_pow2(r);
        *b = rnd_pow2(r);
        break;
    case 5:
        *a = rnd_pow2(r);
        *b = rnd_mixed(r);
        break;
    case 6: // exact ties: an odd multiple of 2^15 in the product
        *a = rnd_mixed(r) | 1;
        *b = (int32_t)(((int32_t)keel_rng_range(r, -0x7FFF, 0x7FFF) | 1) * 0x8000);
        break;
    default: // world-sized coordinates times factors
        *a = (int32_t)keel_rng_range(r, -SIM_WORLD_LIMIT, SIM_WORLD_LIMIT);
        *b = (int32_t)keel_rng_range(r, -SIM_FX_INT(8), SIM_FX_INT(8));
        break;
    }
}

static void check_mul(int32_t a, int32_t b, long *compared, long *bad)
{
    fix16_t lib = fix16_mul(a, b);
    if (mul_overflows(a, b)) {
        cr_assert_eq(lib, (fix16_t)0x80000000, "library overflow sentinel for %d * %d", a, b);
        return;
    }
    sim_fx mine = sim_fx_mul(a, b);
    (*compared)++;
    if (mine != lib && (*bad)++ < 5)
        cr_log_error("mul %d * %d: library %d, inline %d", a, b, lib, mine);
}

Test(fx, mul_matches_library)
{
    keel_rng r = {1};
    long compared = 0, bad = 0;
    for (int i = 0; i < N_EDGES; i++)
        for (int j = 0; j < N_EDGES; j++)
            check_mul(EDGES[i], EDGES[j], &compared, &bad);
    for (long i = 0; compared < N_LIB_COMPARE + N_EDGES * N_EDGES; i++) {
        int32_t a, b;
        mul_inputs(&r, i, &a, &b);
        check_mul(a, b, &compared, &bad);
    }
    cr_assert_eq(bad, 0, "%ld of %ld products differ from fix16_mul", bad, compared);
}

// ---- division --------------------------------------------------------------

// Exactly rounded magnitude (half away from zero) and whether the result is
// out of range: the library returns the sentinel exactly then, since below
// |b| = 2^20, where overflow is possible, its quotient is the exact one.
static uint32_t div_exact(int32_t a, int32_t b, bool *overflow)
{
    uint64_t ua = a < 0 ? 0u - (uint32_t)a : (uint32_t)a;
    uint64_t ub = b < 0 ? 0u - (uint32_t)b : (uint32_t)b;
    uint64_t q2 = (ua << 17) / ub; // floor(2 |a/b|) in raw units
    uint64_t mag = (q2 + 1) >> 1;
    bool neg = (a < 0) != (b < 0);
    *overflow = mag > (uint64_t)INT32_MAX + (neg ? 1 : 0);
    return (uint32_t)mag;
}

static void div_inputs(keel_rng *r, long i, int32_t *a, int32_t *b)
{
    switch (i % 8) {
    case 0:
        *a = (int32_t)keel_rng_next(r);
        *b = (int32_t)keel_rng_next(r);
        break;
    case 1:
        *a = rnd_mixed(r);
        *b = rnd_mixed(r);
        break;
    case 2: { // |a / b| next to 32768
        *a = rnd_mixed(r);
        int64_t m = llabs((int64_t)*a) / 32768 + keel_rng_range(r, -2, 2);
        if (m < 1)
            m = 1;
        *b = (int32_t)((keel_rng_next(r) & 1) ? -m : m);
        break;
    }
    case 3:
        *a = (int32_t)keel_rng_range(r, -0x100000, 0x100000);
        *b = (int32_t)keel_rng_range(r, -0x100000, 0x100000);
        break;
    case 4:
        *a = rnd_pow2(r);
        *b = rnd_pow2(r);
        break;
    case 5: // divisors of 16.0 and more: the library's inexact path
        *a = (keel_rng_next(r) & 1) ? (int32_t)keel_rng_next(r) : rnd_mixed(r);
        *b = (int32_t)keel_rng_range(r, 0x100000, INT32_MAX);
        if (keel_rng_next(r) & 1)
            *b = -*b;
        break;
    case 6: // divisors next to 2^20, where the path changes
        *a = (int32_t)keel_rng_next(r);
        *b = (int32_t)keel_rng_range(r, 0x100000 - 64, 0x100000 + 64);
        break;
    default: // world-sized values over lengths and speeds
        *a = (int32_t)keel_rng_range(r, -SIM_WORLD_LIMIT, SIM_WORLD_LIMIT);
        *b = (int32_t)keel_rng_range(r, -SIM_FX_INT(100), SIM_FX_INT(100));
        break;
    }
    if (*b == 0)
        *b = 1;
}

static void check_div(int32_t a, int32_t b, long *compared, long *bad, long *off_by_one)
{
    fix16_t lib = fix16_div(a, b);
    bool overflow;
    uint32_t mag = div_exact(a, b, &overflow);
    if (overflow) {
        cr_assert_eq(lib, (fix16_t)0x80000000, "library overflow sentinel for %d / %d", a, b);
        return;
    }
    sim_fx mine = sim_fx_div(a, b);
    (*compared)++;
    if (mine != lib && (*bad)++ < 5)
        cr_log_error("div %d / %d: library %d, inline %d", a, b, lib, mine);
    sim_fx exact = (a < 0) != (b < 0) ? (sim_fx)(0u - mag) : (sim_fx)mag;
    if (lib != exact) {
        (*off_by_one)++;
        // The only deviation: one ulp larger in magnitude, for |b| >= 16.0.
        cr_assert(b >= 0x100000 || b <= -0x100000, "%d / %d inexact with a small divisor", a, b);
        cr_assert(lib == exact + (exact < 0 ? -1 : 1) || (exact == 0 && (lib == 1 || lib == -1)),
                  "%d / %d: library %d, exact %d", a, b, lib, exact);
    }
}

Test(fx, div_matches_library)
{
    keel_rng r = {2};
    long compared = 0, bad = 0, off = 0;
    for (int i = 0; i < N_EDGES; i++)
        for (int j = 0; j < N_EDGES; j++)
            if (EDGES[j] != 0)
                check_div(EDGES[i], EDGES[j], &compared, &bad, &off);
    for (long i = 0; compared < N_LIB_COMPARE + N_EDGES * N_EDGES; i++) {
        int32_t a, b;
        div_inputs(&r, i, &a, &b);
        check_div(a, b, &compared, &bad, &off);
    }
    fprintf(stderr, "fx: div: %ld quotients, %ld (%.3f%%) one ulp off the exact rounding, as in the library\n",
            compared, off, 100.0 * (double)off / (double)compared);
    cr_assert_eq(bad, 0, "%ld of %ld quotients differ from fix16_div", bad, compared);
}

Test(fx, div_library_deviation_rate)
{
    // How often the library (and so the inline version) is one ulp off the
    // exact rounding depends on the inputs: never below |b| = 16.0 nor when |b|
    // is a multiple of 2.0 (2^17 raw), otherwise on the order of 2^15 / |b| raw
    // (about 3% for 16.00002, 0.02% for 1000.0001). Report it for two
    // distributions; it must occur.
    keel_rng r = {3};
    for (int dist = 0; dist < 2; dist++) {
        long n = 0, off = 0;
        while (n < 2000000) {
            int32_t a = dist ? rnd_mixed(&r) : (int32_t)keel_rng_next(&r);
            int32_t b = dist ? rnd_mixed(&r) : (int32_t)keel_rng_next(&r);
            bool overflow;
            if (b == 0)
                continue;
            uint32_t mag = div_exact(a, b, &overflow);
            if (overflow)
                continue;
            sim_fx exact = (a < 0) != (b < 0) ? (sim_fx)(0u - mag) : (sim_fx)mag;
            n++;
            off += sim_fx_div(a, b) != exact;
        }
        fprintf(stderr, "fx: div: %s inputs: %.3f%% of quotients one ulp off the exact rounding\n",
                dist ? "mixed-magnitude" : "uniform raw", 100.0 * (double)off / (double)n);
        cr_assert(off > 0);
    }
}

Test(fx, div_exact_minus_32768_is_not_a_failure)
{
    cr_assert_eq(sim_fx_div(SIM_FX_MIN, SIM_FX_ONE), SIM_FX_MIN);
    cr_assert_eq(sim_fx_div(SIM_FX_INT(16384), -SIM_FX_HALF), SIM_FX_MIN);
    cr_assert_eq(sim_fx_div(SIM_FX_INT(-1), SIM_FX_INT(3)), fix16_div(SIM_FX_INT(-1), SIM_FX_INT(3)));
}

// ---- square root -----------------------------------------------------------

static int32_t sqrt_input(keel_rng *r, long i)
{
    switch (i % 6) {
    case 0: return (int32_t)(keel_rng_next(r) >> 33);
    case 1: {
        int32_t v = rnd_mixed(r);
        return v < 0 ? (v == INT32_MIN ? INT32_MAX : -v) : v;
    }
    case 2: { // a * 2^16 next to (q + 1/2)^2, where the rounding turns
        uint64_t q = (uint64_t)keel_rng_range(r, 1, 11863283);
        int64_t v = (int64_t)((q * q + q) >> 16) + keel_rng_range(r, -1, 1);
        return v < 0 ? 0 : (v > INT32_MAX ? INT32_MAX : (int32_t)v);
    }
    case 3: { // above 2^30, next to the library's remainder threshold
        uint64_t ra = (uint64_t)keel_rng_range(r, 32768, 46340);
        int64_t v = (int64_t)(ra * ra) + 65535 + keel_rng_range(r, -2, 2);
        return v > INT32_MAX ? INT32_MAX : (int32_t)v;
    }
    case 4: {
        int32_t v = rnd_pow2(r);
        return v < 0 ? -v : v;
    }
    default: // squares of world distances
        return (int32_t)keel_rng_range(r, 0, SIM_FX_INT(4096));
    }
}

static void check_sqrt(int32_t a, long *compared, long *bad)
{
    fix16_t lib = fix16_sqrt(a);
    sim_fx mine = sim_fx_sqrt(a);
    (*compared)++;
    if (mine != lib && (*bad)++ < 5)
        cr_log_error("sqrt %d: library %d, inline %d", a, lib, mine);
}

Test(fx, sqrt_matches_library)
{
    keel_rng r = {4};
    long compared = 0, bad = 0;
    for (int i = 0; i < N_EDGES; i++)
        if (EDGES[i] >= 0)
            check_sqrt(EDGES[i], &compared, &bad);
    for (int32_t a = 0; a < 65536; a++) { // the bottom and the top, every value
        check_sqrt(a, &compared, &bad);
        check_sqrt(INT32_MAX - a, &compared, &bad);
        check_sqrt(0x40000000 + a - 32768, &compared, &bad);
    }
    for (long i = 0; compared < N_LIB_COMPARE; i++)
        check_sqrt(sqrt_input(&r, i), &compared, &bad);
    cr_assert_eq(bad, 0, "%ld of %ld roots differ from fix16_sqrt", bad, compared);
}

Test(fx, sqrt_within_half_ulp)
{
    // The library's rule, stated in sim_fx.h: nearest, except a shift of under
    // 2^-9 ulp above 16384.0.
    keel_rng r = {5};
    double worst = 0;
    for (long i = 0; i < 1000000; i++) {
        int32_t a = sqrt_input(&r, i);
        double e = fabs(sim_fx_sqrt(a) - sqrt((double)a * 65536.0));
        worst = e > worst ? e : worst;
    }
    cr_assert(worst <= 0.5 + 1.0 / 512, "worst %.6f ulp", worst);
}

// ---- traps -------------------------------------------------------------------

#ifdef KEEL_CHECKS
static volatile sim_fx sink;

Test(fx_traps, mul_overflow_fails_check, .signal = SIGABRT)
{
    sink = sim_fx_mul(SIM_FX_INT(256), SIM_FX_INT(128)); // 32768 does not fit
}
Test(fx_traps, mul_negative_overflow_fails_check, .signal = SIGABRT)
{
    sink = sim_fx_mul(SIM_FX_INT(-200), SIM_FX_INT(200));
}
Test(fx_traps, div_by_zero_fails_check, .signal = SIGABRT) { sink = sim_fx_div(SIM_FX_ONE, 0); }
Test(fx_traps, div_overflow_fails_check, .signal = SIGABRT) { sink = sim_fx_div(SIM_FX_INT(20000), SIM_FX_HALF); }
Test(fx_traps, div_positive_32768_fails_check, .signal = SIGABRT) { sink = sim_fx_div(SIM_FX_MIN, -SIM_FX_ONE); }
Test(fx_traps, sqrt_negative_fails_check, .signal = SIGABRT) { sink = sim_fx_sqrt(-SIM_FX_ONE); }
Test(fx_traps, abs_min_fails_check, .signal = SIGABRT) { sink = sim_fx_abs(SIM_FX_MIN); }
#endif

// ---- inverse trigonometry --------------------------------------------------

Test(fx, atan2_accuracy_and_purity)
{
    keel_rng r = {6};
    double worst = 0;
    for (long i = 0; i < 1000000; i++) {
        int32_t y = (i & 1) ? rnd_mixed(&r) : (int32_t)keel_rng_next(&r);
        int32_t x = (i & 2) ? rnd_mixed(&r) : (int32_t)keel_rng_next(&r);
        if (x == 0 && y == 0)
            continue;
        sim_fx t = sim_fx_atan2(y, x);
        double e = fabs(t - atan2((double)y, (double)x) * 65536.0);
        worst = e > worst ? e : worst;
        if (y != INT32_MIN && y != 0) // atan2(0, x < 0) is +pi either way
            cr_assert_eq(sim_fx_atan2(-y, x), -t, "odd in y at (%d, %d)", y, x);
        if (i % 1000 == 0)
            cr_assert_eq(sim_fx_atan2(0, 0), 0, "origin after %ld calls", i);
    }
    cr_assert(worst <= 0.51, "atan2 off by %.4f ulp", worst);
    cr_assert_eq(sim_fx_atan2(0, 0), 0);
    cr_assert_eq(sim_fx_atan2(0, SIM_FX_ONE), 0);
    cr_assert_eq(sim_fx_atan2(0, -SIM_FX_ONE), SIM_FX_PI);
    cr_assert_eq(sim_fx_atan2(SIM_FX_ONE, 0), SIM_FX_HALF_PI);
    cr_assert_eq(sim_fx_atan2(-SIM_FX_ONE, 0), -SIM_FX_HALF_PI);
    cr_assert_eq(sim_fx_atan2(7, 7), 51472);                     // pi/4
    cr_assert_eq(sim_fx_atan2(SIM_FX_MIN, SIM_FX_MIN), -154416); // -3pi/4
}

Test(fx, asin_acos_every_input)
{
    double worst = 0;
    for (int32_t a = -SIM_FX_ONE; a <= SIM_FX_ONE; a++) {
        double x = a / 65536.0;
        double e1 = fabs(sim_fx_asin(a) - asin(x) * 65536.0);
        double e2 = fabs(sim_fx_acos(a) - acos(x) * 65536.0);
        worst = fmax(worst, fmax(e1, e2));
    }
    cr_assert(worst <= 0.51, "asin/acos off by %.4f ulp", worst);
    cr_assert_eq(sim_fx_asin(SIM_FX_ONE), SIM_FX_HALF_PI);
    cr_assert_eq(sim_fx_asin(-SIM_FX_ONE), -SIM_FX_HALF_PI);
    cr_assert_eq(sim_fx_asin(0), 0);
    cr_assert_eq(sim_fx_acos(SIM_FX_ONE), 0);
    cr_assert_eq(sim_fx_acos(-SIM_FX_ONE), SIM_FX_PI);
    cr_assert_eq(sim_fx_acos(0), SIM_FX_HALF_PI);
    // clamped outside [-1, 1]
    cr_assert_eq(sim_fx_asin(SIM_FX_ONE + 3), SIM_FX_HALF_PI);
    cr_assert_eq(sim_fx_asin(SIM_FX_MIN), -SIM_FX_HALF_PI);
    cr_assert_eq(sim_fx_acos(SIM_FX_INT(5)), 0);
    cr_assert_eq(sim_fx_acos(-SIM_FX_ONE - 1), SIM_FX_PI);
}

// ---- 64-bit helpers ----------------------------------------------------------

static uint64_t rnd_u64_mixed(keel_rng *r) { return keel_rng_next(r) >> (keel_rng_next(r) % 64); }

static void check_isqrt(uint64_t x)
{
    uint64_t s = sim_isqrt_u64(x);
    // floor: s^2 <= x < (s + 1)^2, the second written so nothing overflows
    cr_assert(s <= 0xFFFFFFFFu && s * s <= x && x - s * s <= 2 * s, "isqrt(%llu) = %llu", (unsigned long long)x,
              (unsigned long long)s);
}

Test(fx, isqrt_u64_is_floor)
{
    keel_rng r = {7};
    const uint64_t edges[] = {0,
                              1,
                              2,
                              3,
                              4,
                              5,
                              8,
                              9,
                              15,
                              16,
                              17,
                              UINT64_MAX,
                              UINT64_MAX - 1,
                              0xFFFFFFFE00000001ull,
                              0xFFFFFFFE00000000ull,
                              (uint64_t)1 << 62,
                              ((uint64_t)1 << 62) - 1,
                              (uint64_t)1 << 63,
                              ((uint64_t)1 << 32) - 1};
    for (unsigned i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_isqrt(edges[i]);
    for (long i = 0; i < 3000000; i++) {
        uint64_t x = rnd_u64_mixed(&r);
        check_isqrt(x);
        uint64_t s = x >> 32; // perfect squares and their neighbours
        check_isqrt(s * s);
        check_isqrt(s * s - 1);
        check_isqrt(s * s + 1);
    }
}

Test(fx, div_round_s64)
{
    // Exact: |num - q den| <= |den| / 2, ties away from zero; |num| < 2^62
    // so that q * den cannot overflow.
    keel_rng r = {8};
    for (long i = 0; i < 2000000; i++) {
        int64_t num = (int64_t)(rnd_u64_mixed(&r) >> 2), den = (int64_t)(rnd_u64_mixed(&r) >> 2);
        if (i % 4 == 1)
            den = keel_rng_range(&r, 1, 1000);
        if (i % 4 == 2) { // exact ties: num / den = m + 1/2
            int64_t k = (den >> 24) | 1;
            den = 2 * k;
            num = k * (2 * keel_rng_range(&r, -1000, 1000) + 1);
        }
        if (den == 0)
            den = 1;
        if (keel_rng_next(&r) & 1)
            num = -num;
        if (keel_rng_next(&r) & 1)
            den = -den;
        int64_t q = sim_div_round_s64(num, den);
        uint64_t an = num < 0 ? 0 - (uint64_t)num : (uint64_t)num;
        uint64_t ad = den < 0 ? 0 - (uint64_t)den : (uint64_t)den;
        uint64_t aq = q < 0 ? 0 - (uint64_t)q : (uint64_t)q;
        cr_assert(q == 0 || (q < 0) == ((num < 0) != (den < 0)), "sign of %lld / %lld", (long long)num, (long long)den);
        // 2 * |num - q den| <= |den|, and at a tie the magnitude was rounded up
        int64_t rem = (int64_t)an - (int64_t)(aq * ad);
        uint64_t twice = rem < 0 ? 2 * (0 - (uint64_t)rem) : 2 * (uint64_t)rem;
        cr_assert(twice < ad || (twice == ad && rem < 0), "%lld / %lld -> %lld", (long long)num, (long long)den,
                  (long long)q);
    }
    cr_assert_eq(sim_div_round_s64(7, 2), 4);
    cr_assert_eq(sim_div_round_s64(-7, 2), -4);
    cr_assert_eq(sim_div_round_s64(5, -3), -2);
    cr_assert_eq(sim_div_round_s64(INT64_MIN, 1), INT64_MIN);
    cr_assert_eq(sim_div_round_s64(INT64_MAX, -1), -INT64_MAX);
}

Test(fx, shr_round_s64)
{
    keel_rng r = {9};
    for (long i = 0; i < 2000000; i++) {
        // |v| < 2^53: v / 2^s is exact in double and round() rounds half away from zero
        int64_t v = (int64_t)(rnd_u64_mixed(&r) >> 11);
        if (keel_rng_next(&r) & 1)
            v = -v;
        int s = (int)keel_rng_range(&r, -3, 70);
        double ref = s <= 0 ? (double)v : round(ldexp((double)v, -s));
        cr_assert_eq(sim_shr_round_s64(v, s), (int64_t)ref, "%lld >> %d", (long long)v, s);
    }
    cr_assert_eq(sim_shr_round_s64(INT64_MAX, 1), (int64_t)1 << 62);
    cr_assert_eq(sim_shr_round_s64(INT64_MIN, 1), -((int64_t)1 << 62));
    cr_assert_eq(sim_shr_round_s64(INT64_MAX, 63), 1);
    cr_assert_eq(sim_shr_round_s64(INT64_MIN, 63), -1);
    cr_assert_eq(sim_shr_round_s64(INT64_MIN, 64), -1); // exactly -1/2
    cr_assert_eq(sim_shr_round_s64(INT64_MAX, 64), 0);
    cr_assert_eq(sim_shr_round_s64(INT64_MIN, 65), 0);
    cr_assert_eq(sim_shr_round_s64(-3, 1), -2);
    cr_assert_eq(sim_shr_round_s64(3, 1), 2);
    cr_assert_eq(sim_shr_round_s64(-5, -1), -5);
}

// ---- vectors -------------------------------------------------------------------

static sim_vec3 rnd_v3(keel_rng *r, sim_fx lim)
{
    return sim_v3(keel_rng_fx(r, -lim, lim), keel_rng_fx(r, -lim, lim), keel_rng_fx(r, -lim, lim));
}

static double dot_d(sim_vec3 a, sim_vec3 b)
{
    return keel_fx_to_d(a.x) * keel_fx_to_d(b.x) + keel_fx_to_d(a.y) * keel_fx_to_d(b.y) +
           keel_fx_to_d(a.z) * keel_fx_to_d(b.z);
}

Test(fx, dot_exact_then_rounded_once)
{
    keel_rng r = {10};
    for (long i = 0; i < 1000000; i++) {
        // dot64 is exact over the whole world: equal modulo 2^64 to the
        // wrapping sum, and within double rounding of the true value
        sim_vec3 a = rnd_v3(&r, SIM_WORLD_LIMIT), b = rnd_v3(&r, SIM_WORLD_LIMIT);
        int64_t d64 = sim_v3_dot64(a, b);
        uint64_t wrap = (uint64_t)(int64_t)a.x * (uint64_t)(int64_t)b.x +
                        (uint64_t)(int64_t)a.y * (uint64_t)(int64_t)b.y +
                        (uint64_t)(int64_t)a.z * (uint64_t)(int64_t)b.z;
        cr_assert_eq((uint64_t)d64, wrap);
        double ref = dot_d(a, b) * 4294967296.0;
        double mag = (fabs((double)a.x * b.x) + fabs((double)a.y * b.y) + fabs((double)a.z * b.z));
        cr_assert(fabs((double)d64 - ref) <= mag * 0x1p-50, "dot64 off by %g", (double)d64 - ref);
        // sim_v3_dot: within 1/2 ulp (the result must fit: a world vector
        // dotted with one of length below 2.6, or two of 100 m)
        sim_vec3 c = rnd_v3(&r, SIM_FX_RATIO(5, 2));
        double e1 = fabs(sim_v3_dot(a, c) - dot_d(a, c) * 65536.0);
        sim_vec3 p = rnd_v3(&r, SIM_FX_INT(100)), q = rnd_v3(&r, SIM_FX_INT(100));
        double e2 = fabs(sim_v3_dot(p, q) - dot_d(p, q) * 65536.0);
        cr_assert(e1 <= 0.5 + 1e-6 && e2 <= 0.5 + 1e-6, "dot off by %f / %f ulp", e1, e2);
    }
}

Test(fx, cross_rounded_once)
{
    keel_rng r = {11};
    for (long i = 0; i < 1000000; i++) {
        // components up to 100 m: every result component fits (2 * 100^2 < 32768)
        sim_vec3 a = rnd_v3(&r, SIM_FX_INT(100)), b = rnd_v3(&r, SIM_FX_INT(100));
        sim_vec3 c = sim_v3_cross(a, b);
        double ax = keel_fx_to_d(a.x), ay = keel_fx_to_d(a.y), az = keel_fx_to_d(a.z);
        double bx = keel_fx_to_d(b.x), by = keel_fx_to_d(b.y), bz = keel_fx_to_d(b.z);
        double ex = fabs(keel_fx_to_d(c.x) - (ay * bz - az * by));
        double ey = fabs(keel_fx_to_d(c.y) - (az * bx - ax * bz));
        double ez = fabs(keel_fx_to_d(c.z) - (ax * by - ay * bx));
        cr_assert(fmax(ex, fmax(ey, ez)) <= (0.5 + 1e-6) * ULP, "cross off");
    }
}

static double len_d(sim_vec3 a) { return sqrt(dot_d(a, a)); }

Test(fx, length_within_half_ulp)
{
    keel_rng r = {12};
    for (long i = 0; i < 2000000; i++) {
        // differences of world positions (up to 8192 m a component), and tiny vectors
        sim_vec3 a = (i & 1) ? rnd_v3(&r, 2 * SIM_WORLD_LIMIT) : rnd_v3(&r, (sim_fx)keel_rng_range(&r, 1, 4096));
        double e = fabs(keel_fx_to_d(sim_v3_length(a)) - len_d(a));
        cr_assert(e <= (0.5 + 1e-6) * ULP, "length off by %f ulp", e / ULP);
    }
    cr_assert_eq(sim_v3_length(sim_v3(SIM_FX_INT(3), SIM_FX_INT(4), 0)), SIM_FX_INT(5));
    cr_assert_eq(sim_v3_length(sim_v3_zero()), 0);
}

Test(fx, normalize_near_nearest)
{
    // Each component within 0.51 ulp of the true a_i / |a| (rounded to nearest
    // from a length with 29 significant bits), so |n| is 1 within 0.87 ulp,
    // inside the 2^-15 that sim_math.h promises; tiny vectors too.
    keel_rng r = {13};
    double worst_c = 0, worst_len = 0;
    for (long i = 0; i < 2000000; i++) {
        sim_fx lim = (i & 1) ? 2 * SIM_WORLD_LIMIT : (sim_fx)keel_rng_range(&r, 1, 1 << (int)keel_rng_range(&r, 1, 24));
        sim_vec3 a = rnd_v3(&r, lim);
        if (sim_v3_is_zero(a))
            continue;
        sim_fx len;
        sim_vec3 n = sim_v3_normalize_len(a, &len);
        cr_assert_eq(len, sim_v3_length(a));
        cr_assert(sim_v3_eq(n, sim_v3_normalize(a)));
        double l = len_d(a);
        double ex = fabs(keel_fx_to_d(n.x) - keel_fx_to_d(a.x) / l);
        double ey = fabs(keel_fx_to_d(n.y) - keel_fx_to_d(a.y) / l);
        double ez = fabs(keel_fx_to_d(n.z) - keel_fx_to_d(a.z) / l);
        worst_c = fmax(worst_c, fmax(ex, fmax(ey, ez)));
        worst_len = fmax(worst_len, fabs(len_d(n) - 1.0));
    }
    cr_assert(worst_c <= 0.51 * ULP, "component off by %f ulp", worst_c / ULP);
    cr_assert(worst_len <= 1.0 / 32768, "|n| off by %f ulp", worst_len / ULP);
    cr_assert(sim_v3_eq(sim_v3_normalize(sim_v3(1, 1, 1)), sim_v3(37837, 37837, 37837)));
    cr_assert(sim_v3_eq(sim_v3_normalize(sim_v3(0, -5, 0)), sim_v3(0, -SIM_FX_ONE, 0)));
    cr_assert(sim_v3_is_zero(sim_v3_normalize(sim_v3_zero())));
}

// sim_v3_normalize_len as it was written before its components were divided
// inline (each through sim_div_round_s64), kept as the reference: the
// inline division must give every component bit for bit.
static sim_vec3 normalize_by_div_round(sim_vec3 a)
{
    uint64_t ax = (uint64_t)llabs(a.x), ay = (uint64_t)llabs(a.y), az = (uint64_t)llabs(a.z);
    uint64_t m = ax > ay ? ax : ay;
    m = m > az ? m : az;
    if (m == 0)
        return sim_v3_zero();
    int s = keel_clz64(m) - 34;
    if (s < 0)
        s = 0;
    uint64_t sq = (ax << s) * (ax << s) + (ay << s) * (ay << s) + (az << s) * (az << s);
    uint64_t r = sim_isqrt_u64(sq);
    int64_t l = (int64_t)(r + (sq - r * r > r));
    return sim_v3((sim_fx)sim_div_round_s64((int64_t)a.x * ((int64_t)1 << (16 + s)), l),
                  (sim_fx)sim_div_round_s64((int64_t)a.y * ((int64_t)1 << (16 + s)), l),
                  (sim_fx)sim_div_round_s64((int64_t)a.z * ((int64_t)1 << (16 + s)), l));
}

Test(fx, normalize_as_divided_by_div_round)
{
    keel_rng r = {29};
    for (long i = 0; i < 1000000; i++) {
        sim_fx lim = (i & 1) ? 2 * SIM_WORLD_LIMIT : (sim_fx)keel_rng_range(&r, 1, 1 << (int)keel_rng_range(&r, 1, 24));
        sim_vec3 a = rnd_v3(&r, lim);
        if (i % 3 == 0)
            a.y = 0; // horizontal, as the moves normalize them
        if (i % 7 == 0)
            a.x = 0;
        sim_vec3 want = normalize_by_div_round(a);
        cr_assert(sim_v3_eq(sim_v3_normalize(a), want), "(%d, %d, %d)", a.x, a.y, a.z);
    }
    sim_vec3 edges[] = {sim_v3(SIM_FX_MIN, 0, 0), sim_v3(SIM_FX_MAX, SIM_FX_MIN, 1), sim_v3(0, 0, -1), sim_v3(1, -1, 0),
                        sim_v3(SIM_FX_MAX, SIM_FX_MAX, SIM_FX_MAX)};
    for (unsigned i = 0; i < sizeof edges / sizeof edges[0]; i++)
        cr_assert(sim_v3_eq(sim_v3_normalize(edges[i]), normalize_by_div_round(edges[i])), "edge case %u", i);
}
