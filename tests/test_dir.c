// keel tests: unit directions (sim/src/dir.c) and the leading-zero count
// behind them (sim/src/clz.h). MIT licence, see LICENSE.
//
// sim_dir_from_s64 finds its normalising shifts with a count of leading
// zeros; it must give exactly what the bit-by-bit loops it replaced gave
// (kept below as the reference) for every input: zero, one, every power of
// two and its neighbours, the int64 extremes and pseudo-random values of
// every magnitude and sign. The portable leading-zero count (used where the
// compiler has no builtin) is compared with a bit-by-bit count.
#define KEEL_PORTABLE_CLZ // this file's keel_clz64 is the portable one
#include <criterion/criterion.h>

#include <keel/sim_math.h>

#include "clz.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Du;
static uint64_t rnd64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

// The reference: the shifts found bit by bit, as sim_dir_from_s64 did before
// it counted leading zeros. The shifted components (largest magnitude in
// [2^29, 2^30), where the shifts are zero) then go through the rest of
// sim_dir_from_s64, which did not change; a shifted component that became 0
// gives 0 whatever its sign, as it did.
static uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }
static int64_t shifted(int64_t v, int shift, int lshift)
{
    int64_t m = (int64_t)((magnitude(v) >> shift) << lshift);
    return v < 0 ? -m : m;
}
static sim_dir dir_reference(int64_t x, int64_t y, int64_t z)
{
    uint64_t m = magnitude(x) > magnitude(y) ? magnitude(x) : magnitude(y);
    m = m > magnitude(z) ? m : magnitude(z);
    if (m == 0)
        return (sim_dir){0, 0, 0};
    int shift = 0;
    while ((m >> shift) >= ((uint64_t)1 << 30))
        shift++;
    int lshift = 0;
    while ((m << lshift) < ((uint64_t)1 << 29))
        lshift++;
    return sim_dir_from_s64(shifted(x, shift, lshift), shifted(y, shift, lshift), shifted(z, shift, lshift));
}

static void same(int64_t x, int64_t y, int64_t z)
{
    sim_dir got = sim_dir_from_s64(x, y, z), want = dir_reference(x, y, z);
    cr_assert(got.x == want.x && got.y == want.y && got.z == want.z,
              "(%lld, %lld, %lld): got (%d, %d, %d), want (%d, %d, %d)", (long long)x, (long long)y, (long long)z,
              got.x, got.y, got.z, want.x, want.y, want.z);
}

// Zero, +-1, +-2^k and their neighbours, the int64 extremes.
#define N_EDGE 400
static int edge_values(int64_t *v)
{
    int n = 0;
    v[n++] = 0;
    v[n++] = INT64_MAX;
    v[n++] = INT64_MIN;
    v[n++] = INT64_MIN + 1;
    v[n++] = INT64_MAX - 1;
    for (int k = 0; k < 63; k++) {
        int64_t p = (int64_t)((uint64_t)1 << k);
        int64_t near[3] = {p - 1, p, p + 1};
        for (int i = 0; i < 3; i++) {
            v[n++] = near[i];
            v[n++] = -near[i];
        }
    }
    return n;
}

Test(dir, from_s64_equals_bit_loops)
{
    static int64_t v[N_EDGE];
    int n = edge_values(v);
    cr_assert_leq(n, N_EDGE);
    // Every edge value as the largest component, with small, equal and
    // random others.
    for (int i = 0; i < n; i++) {
        same(v[i], 0, 0);
        same(0, v[i], 0);
        same(0, 0, v[i]);
        same(v[i], v[i], v[i]);
        for (int j = 0; j < n; j += 7)
            same(v[i], v[j], v[(i + j) % n]);
    }
    // Random values of every magnitude and sign.
    for (long i = 0; i < 2000000; i++) {
        int64_t c[3];
        for (int a = 0; a < 3; a++)
            c[a] = (int64_t)(rnd64() >> (rnd64() % 64)) * ((rnd64() & 1) ? -1 : 1);
        same(c[0], c[1], c[2]);
    }
}

Test(dir, portable_clz_counts_leading_zeros)
{
    for (int k = 0; k < 64; k++) {
        uint64_t p = (uint64_t)1 << k;
        cr_assert_eq(keel_clz64(p), 63 - k);
        cr_assert_eq(keel_clz64(p | (p - 1)), 63 - k);
        if (k > 0)
            cr_assert_eq(keel_clz64(p + 1), 63 - k);
    }
    for (long i = 0; i < 1000000; i++) {
        uint64_t x = rnd64() >> (rnd64() % 64);
        if (x == 0)
            continue;
        int want = 0;
        while (!(x & ((uint64_t)1 << (63 - want))))
            want++;
        cr_assert_eq(keel_clz64(x), want, "%llx", (unsigned long long)x);
    }
}
