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

typedef fix16_t sim_fx;

#define SIM_FX_ONE ((sim_fx)0x10000)
#define SIM_FX_HALF ((sim_fx)0x8000)
#define SIM_FX_MAX ((sim_fx)0x7FFFFFFF)
#define SIM_FX_MIN ((sim_fx)(-0x7FFFFFFF - 1))

/// Integer n as sim_fx (n must be within +-32767).
#define SIM_FX_INT(n) ((sim_fx)((n) * 65536))
/// The rational num/den (num >= 0, den > 0) rounded to nearest, usable in
/// constant expressions: SIM_FX_RATIO(35, 100) is 0.35. No floating point.
#define SIM_FX_RATIO(num, den) \
    ((sim_fx)((((int64_t)(num) * 131072) + (int64_t)(den)) / (2 * (int64_t)(den))))
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

/// fix16_div, inline (see sim/src/fx.c for the rounding rule). Division by
/// zero and overflow return SIM_FX_MIN and fail SIM_CHECK.
sim_fx sim_fx_div(sim_fx a, sim_fx b);

/// fix16_sqrt for a >= 0; for a < 0 it returns 0 (the library would return a
/// negative number) and fails SIM_CHECK.
sim_fx sim_fx_sqrt(sim_fx a);

/// Add and subtract with overflow detection (the library's fix16_add returns
/// the sentinel silently).
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

static inline sim_fx sim_fx_abs(sim_fx a) { return a < 0 ? -a : a; }
static inline sim_fx sim_fx_min(sim_fx a, sim_fx b) { return a < b ? a : b; }
static inline sim_fx sim_fx_max(sim_fx a, sim_fx b) { return a > b ? a : b; }
static inline sim_fx sim_fx_clamp(sim_fx a, sim_fx lo, sim_fx hi)
{
    return a < lo ? lo : (a > hi ? hi : a);
}

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
/// away from zero); keeps negative shifts well defined.
static inline int64_t sim_shr_round_s64(int64_t v, int s)
{
    if (s <= 0)
        return v;
    int64_t half = (int64_t)1 << (s - 1);
    if (v >= 0)
        return (v + half) >> s;
    return -((-v + half) >> s);
}

#endif
