// keel: fixed-point helpers that are not inline. MIT licence, see LICENSE.
#include <keel/sim_math.h>

#include <stdio.h>
#include <stdlib.h>

#ifdef KEEL_CHECKS
void sim_check_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: keel check failed: %s\n", file, line, expr);
    abort();
}
#endif

// Placeholders that call the library; replaced by bit-identical versions.
sim_fx sim_fx_div(sim_fx a, sim_fx b)
{
    SIM_CHECK(b != 0);
    return fix16_div(a, b);
}

sim_fx sim_fx_sqrt(sim_fx a)
{
    SIM_CHECK(a >= 0);
    if (a <= 0)
        return 0;
    return fix16_sqrt(a);
}

uint32_t sim_isqrt_u64(uint64_t x)
{
    // Bit-by-bit method: no division, no floating point, exact floor.
    uint64_t root = 0;
    uint64_t bit = (uint64_t)1 << 62;
    while (bit > x)
        bit >>= 2;
    while (bit != 0) {
        if (x >= root + bit) {
            x -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    return (uint32_t)root;
}

int64_t sim_div_round_s64(int64_t num, int64_t den)
{
    SIM_CHECK(den != 0);
    if (den == 0)
        return 0;
    bool neg = (num < 0) != (den < 0);
    uint64_t n = num < 0 ? (uint64_t)0 - (uint64_t)num : (uint64_t)num;
    uint64_t d = den < 0 ? (uint64_t)0 - (uint64_t)den : (uint64_t)den;
    uint64_t q = n / d;
    uint64_t r = n % d;
    if (r >= d - r)
        q += 1;
    SIM_CHECK(q <= (uint64_t)INT64_MAX);
    return neg ? -(int64_t)q : (int64_t)q;
}

sim_fx sim_v3_length(sim_vec3 a)
{
    uint64_t sq = (uint64_t)sim_v3_len_sq64(a);
    uint64_t r = sim_isqrt_u64(sq);
    // Round to nearest: r or r+1, whichever square is closer (r^2 <= sq < (r+1)^2).
    if (sq - r * r > r)
        r += 1;
    return sim_fx_from_s64_checked((int64_t)r);
}

sim_vec3 sim_v3_normalize_len(sim_vec3 a, sim_fx *length)
{
    sim_fx len = sim_v3_length(a);
    if (length)
        *length = len;
    if (len == 0)
        return sim_v3_zero();
    return sim_v3((sim_fx)sim_div_round_s64((int64_t)a.x * 65536, len),
                  (sim_fx)sim_div_round_s64((int64_t)a.y * 65536, len),
                  (sim_fx)sim_div_round_s64((int64_t)a.z * 65536, len));
}

sim_vec3 sim_v3_normalize(sim_vec3 a) { return sim_v3_normalize_len(a, NULL); }
