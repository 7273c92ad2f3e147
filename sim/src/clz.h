// keel: the count of leading zero bits of a 64-bit value, shared by the
// fixed-point helpers (fx.c) and the unit directions (dir.c). MIT licence,
// see LICENSE.
//
// keel_clz64(x) is the number of leading zero bits of a NONZERO x (0 to 63);
// x == 0 is not allowed (the builtin's result is undefined there). gcc and
// clang have a builtin (one instruction on most targets); any other C11
// compiler gets the same count by halving. KEEL_PORTABLE_CLZ forces the
// portable path, so a test can compare both.
#ifndef KEEL_CLZ_H
#define KEEL_CLZ_H

#include <stdint.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(KEEL_PORTABLE_CLZ)
static inline int keel_clz64(uint64_t x)
{
    return __builtin_clzll(x); // unsigned long long is 64 bits on every target keel builds for
}
#else
static inline int keel_clz64(uint64_t x)
{
    int n = 0;
    for (int half = 32; half > 0; half >>= 1) {
        if ((x >> (64 - half)) == 0) {
            n += half;
            x <<= half;
        }
    }
    return n;
}
#endif

#endif
