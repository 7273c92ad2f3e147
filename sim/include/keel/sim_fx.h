// keel: fixed-point scalars (Q16.16, metres and seconds). MIT licence, see LICENSE.
//
// Every number in the simulation is a `sim_fx` (libfixmath's fix16_t): 16 integer
// bits, 16 fraction bits, one unit = 1/65536 (about 0.015 mm or 15 microseconds).
// Debian's libfixmath is built without optimisation, so the hot operations are
// re-implemented inline here. Each inline version returns exactly what the
// library returns for every input it accepts (tests/test_fx.c checks over
// 10^7 random and edge-case inputs); where the library has a trap (overflow
// sentinel, sqrt of a negative number) the inline version is documented below.
//
// Ranges (docs/ranges.md has the whole table): a sim_fx spans +-32768; world
// coordinates are kept within +-SIM_WORLD_LIMIT so that differences of two
// positions and products in 64-bit intermediates never overflow.
#ifndef KEEL_SIM_FX_H
#define KEEL_SIM_FX_H

#include <stdbool.h>
#include <stdint.h>

#include <libfixmath/fix16.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef fix16_t sim_fx;

#define SIM_FX_ONE ((sim_fx)0x10000)
#define SIM_FX_HALF ((sim_fx)0x8000)
#define SIM_FX_MAX ((sim_fx)0x7FFFFFFF)
#define SIM_FX_MIN ((sim_fx)(-0x7FFFFFFF - 1))

/// Integer n as sim_fx (n must be within +-32767).
#define SIM_FX_INT(n) ((sim_fx)((n)*65536))
/// The rational num/den (num >= 0, den > 0) rounded to nearest, usable in
/// constant expressions: SIM_FX_RATIO(35, 100) is 0.35. No floating point.
#define SIM_FX_RATIO(num, den) ((sim_fx)((((int64_t)(num)*131072) + (int64_t)(den)) / (2 * (int64_t)(den))))
/// Millimetres as sim_fx metres, e.g. SIM_FX_MM(350) is 0.35 m.
#define SIM_FX_MM(mm) SIM_FX_RATIO((mm), 1000)

// ---- checks ----------------------------------------------------------------
// With KEEL_CHECKS defined (test and sanitizer builds), range violations abort
// with file and line; without it they cost nothing. Overflow is never silent
// in a test build.
#ifdef KEEL_CHECKS
void sim_check_fail(const char *file, int line, const char *expr);
#define SIM_CHECK(cond) ((cond) ? (void)0 : sim_check_fail(__FILE__, __LINE__, #cond))
#else
#define SIM_CHECK(cond) ((void)0)
#endif

// ---- inline versions of libfixmath ----------------------------------------

/// fix16_mul, inline: round to nearest, ties away from zero. On overflow
/// returns the library's sentinel (SIM_FX_MIN) and fails SIM_CHECK.
static inline sim_fx sim_fx_mul(sim_fx a, sim_fx b)
{
    int64_t p = (int64_t)a * (int64_t)b;
    // Bits 47..63 must all equal the sign for the result to fit.
    int64_t hi = p >> 47; // arithmetic shift of a negative value is implementation
                          // defined in C11 but arithmetic on every target gcc/clang support
    if (hi != 0 && hi != -1) {
        SIM_CHECK(!"sim_fx_mul overflow");
        return SIM_FX_MIN;
    }
    if (p < 0)
        p -= 1; // the library biases negative products by one before rounding
    int64_t r = (p >> 16) + ((p >> 15) & 1);
    return (sim_fx)r;
}

/// fix16_div, inline and bit-identical. Division by zero and overflow return
/// SIM_FX_MIN and fail SIM_CHECK. A quotient that rounds to exactly -32768 is
/// also SIM_FX_MIN (the library cannot tell it from its sentinel) but is not a
/// check failure.
///
/// The library's rounding, found from its code and confirmed against it: with
/// q = floor(2^17 * |a| / |b|), the magnitude is (q + 1) >> 1 (round half away
/// from zero), the sign is applied afterwards. For |b| < 2^20 (below 16.0)
/// that is the exactly rounded quotient. For |b| >= 2^20 the library starts
/// with a coarse quotient q0 = |a| / ((|b| >> 17) + 1) and drops the low 17
/// bits of q0 * |b| from its remainder; the effect is as if
/// (q0 * |b|) mod 2^17 had been added to the dividend. That addend is below
/// |b| / 8, so the result is the exact rounding or one ulp larger in magnitude:
/// 0.13% of quotients of random magnitudes, 0.013% of uniform raw bit patterns,
/// none when |b| is a multiple of 2.0. The deviation is reproduced here.
static inline sim_fx sim_fx_div(sim_fx a, sim_fx b)
{
    if (b == 0) {
        SIM_CHECK(!"sim_fx_div by zero");
        return SIM_FX_MIN;
    }
    uint32_t ua = a < 0 ? 0u - (uint32_t)a : (uint32_t)a;
    uint32_t ub = b < 0 ? 0u - (uint32_t)b : (uint32_t)b;
    uint64_t num = (uint64_t)ua << 17;
    if (ub >= 0x100000u) {
        uint32_t q0 = ua / ((ub >> 17) + 1u);
        num += ((uint64_t)q0 * ub) & 0x1FFFFu;
    }
    uint64_t q = num / ub;
    // The library flags q >= 2^32 and a negative 2^31 as overflow, and a
    // positive 2^31 comes out as 0x80000000 by wrap-around: all give SIM_FX_MIN.
    if (q >= 0xFFFFFFFFu) {
        SIM_CHECK(((a ^ b) < 0 && q <= 0x100000000u) || !"sim_fx_div overflow");
        return SIM_FX_MIN;
    }
    uint32_t r = (uint32_t)((q + 1) >> 1);
    return (a ^ b) < 0 ? (sim_fx)(0u - r) : (sim_fx)r;
}

/// fix16_sqrt for a >= 0, bit-identical; for a < 0 it returns 0 (the library
/// would return a negative number) and fails SIM_CHECK.
///
/// The library's rounding: the result is round(sqrt(m)) with m = a * 2^16 (ties
/// cannot occur), except that for a >= 2^30 (16384.0) whose integer square
/// root leaves a remainder a - floor(sqrt(a))^2 above 65535, the library's
/// second stage starts from a slightly inconsistent state that amounts to
/// m = a * 2^16 - 2^14. That moves the root by under 2^-9 ulp, so the result is
/// within 0.502 ulp of the true square root.
sim_fx sim_fx_sqrt(sim_fx a);

/// Add and subtract with overflow detection (the library's fix16_add returns
/// the sentinel silently). The result is the 32-bit wrapped sum either way;
/// where the compiler has them, its overflow builtins give the check for one
/// instruction (vector differences are everywhere in the narrow phase).
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 5 && !defined(__TINYC__))
static inline sim_fx sim_fx_add(sim_fx a, sim_fx b)
{
    int32_t r;
    bool over = __builtin_add_overflow((int32_t)a, (int32_t)b, &r);
    SIM_CHECK(!over);
    (void)over; // without KEEL_CHECKS
    return (sim_fx)r;
}
static inline sim_fx sim_fx_sub(sim_fx a, sim_fx b)
{
    int32_t r;
    bool over = __builtin_sub_overflow((int32_t)a, (int32_t)b, &r);
    SIM_CHECK(!over);
    (void)over;
    return (sim_fx)r;
}
#else
static inline sim_fx sim_fx_add(sim_fx a, sim_fx b)
{
    int64_t s = (int64_t)a + (int64_t)b;
    SIM_CHECK(s >= INT32_MIN && s <= INT32_MAX);
    return (sim_fx)(uint32_t)s;
}
static inline sim_fx sim_fx_sub(sim_fx a, sim_fx b)
{
    int64_t s = (int64_t)a - (int64_t)b;
    SIM_CHECK(s >= INT32_MIN && s <= INT32_MAX);
    return (sim_fx)(uint32_t)s;
}
#endif

/// |a|; SIM_FX_MIN has no positive counterpart: it fails SIM_CHECK and comes
/// back unchanged (what fix16_abs and a wrapping negation give).
static inline sim_fx sim_fx_abs(sim_fx a)
{
    SIM_CHECK(a != SIM_FX_MIN);
    return a < 0 ? (sim_fx)(0u - (uint32_t)a) : a;
}
static inline sim_fx sim_fx_min(sim_fx a, sim_fx b) { return a < b ? a : b; }
static inline sim_fx sim_fx_max(sim_fx a, sim_fx b) { return a > b ? a : b; }
static inline sim_fx sim_fx_clamp(sim_fx a, sim_fx lo, sim_fx hi) { return a < lo ? lo : (a > hi ? hi : a); }

// ---- 64-bit helpers --------------------------------------------------------

/// floor(sqrt(x)) for any 64-bit unsigned x.
uint32_t sim_isqrt_u64(uint64_t x);

/// round(num / den) to nearest, ties away from zero; den != 0. The caller
/// guarantees the quotient fits; SIM_CHECK fails otherwise.
int64_t sim_div_round_s64(int64_t num, int64_t den);

/// floor(num / den) for den > 0 (C division truncates toward zero).
static inline int64_t sim_div_floor_s64(int64_t num, int64_t den)
{
    int64_t q = num / den;
    if ((num % den) != 0 && (num < 0))
        q -= 1;
    return q;
}

/// Clamp a 64-bit value into the sim_fx range, failing SIM_CHECK when it was out.
static inline sim_fx sim_fx_from_s64_checked(int64_t v)
{
    SIM_CHECK(v >= INT32_MIN && v <= INT32_MAX);
    return v < INT32_MIN ? SIM_FX_MIN : (v > INT32_MAX ? SIM_FX_MAX : (sim_fx)v);
}

/// Arithmetic shift right of a signed 64-bit value, rounding to nearest (ties
/// away from zero). Defined for every v and s: s <= 0 returns v unchanged.
static inline int64_t sim_shr_round_s64(int64_t v, int s)
{
    if (s <= 0)
        return v;
    // Work on the magnitude in unsigned arithmetic: no overflow at INT64_MIN
    // or INT64_MAX, and no shift by 64 or more.
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t r;
    if (s < 64)
        r = (m >> s) + ((m >> (s - 1)) & 1u);
    else
        r = (s == 64 && m == ((uint64_t)1 << 63)) ? 1u : 0u;
    return v < 0 ? -(int64_t)r : (int64_t)r;
}

// ---- inverse trigonometry ---------------------------------------------------
// Guarded replacements for the library's fix16_atan2/asin/acos, which keep a
// global cache (results depend on call history at the origin, and threads
// race on it), are wrong at asin(1) and are accurate only to about 0.01.
// These are computed by integer CORDIC with 64-bit state: results are in
// radians, within 0.51 ulp of the true value (tests/test_fx.c), pure functions
// of their arguments. Not for hot paths (about 30 iterations each); view
// directions use the binary angles of keel/sim_angle.h.

#define SIM_FX_PI ((sim_fx)205887)      ///< pi rounded to Q16.16
#define SIM_FX_HALF_PI ((sim_fx)102944) ///< pi/2 rounded to Q16.16

/// Angle of the vector (x, y) in (-pi, pi]; 0 at the origin. atan2(0, x<0) is +pi.
sim_fx sim_fx_atan2(sim_fx y, sim_fx x);
/// asin(a) in [-pi/2, pi/2]; a is clamped to [-1, 1] first (rounding often
/// puts a dot product of unit vectors a little outside), exact at the ends.
sim_fx sim_fx_asin(sim_fx a);
/// acos(a) in [0, pi]; a is clamped to [-1, 1] first, exact at the ends.
sim_fx sim_fx_acos(sim_fx a);

#ifdef __cplusplus
}
#endif

#endif
