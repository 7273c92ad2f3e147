// keel: unit directions in Q2.30. MIT licence, see LICENSE.
#include <keel/sim_math.h>

#include "clz.h"

sim_dir sim_dir_from_s64(int64_t x, int64_t y, int64_t z)
{
    sim_dir r = {0, 0, 0};
    uint64_t ax = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    uint64_t ay = y < 0 ? (uint64_t)0 - (uint64_t)y : (uint64_t)y;
    uint64_t az = z < 0 ? (uint64_t)0 - (uint64_t)z : (uint64_t)z;
    uint64_t m = ax > ay ? ax : ay;
    m = m > az ? m : az;
    if (m == 0)
        return r;
    // Bring the largest magnitude into [2^29, 2^30): enough bits for the
    // result, and the sum of squares stays below 2^62.
    // m has bits = 64 - clz bits (m != 0): shift right by what is above 30,
    // left by what is missing below 30 (at most one of the two is nonzero).
    int bits = 64 - keel_clz64(m);
    int shift = bits > 30 ? bits - 30 : 0;
    int lshift = bits < 30 ? 30 - bits : 0;
    ax = (ax >> shift) << lshift;
    ay = (ay >> shift) << lshift;
    az = (az >> shift) << lshift;
    uint64_t sq = ax * ax + ay * ay + az * az;
    uint64_t len = sim_isqrt_u64(sq);
    if (sq - len * len > len)
        len += 1;
    if (len == 0)
        return r;
    // component / len in Q2.30, rounded to nearest
    uint64_t qx = ((ax << 30) + len / 2) / len;
    uint64_t qy = ((ay << 30) + len / 2) / len;
    uint64_t qz = ((az << 30) + len / 2) / len;
    r.x = x < 0 ? -(int32_t)qx : (int32_t)qx;
    r.y = y < 0 ? -(int32_t)qy : (int32_t)qy;
    r.z = z < 0 ? -(int32_t)qz : (int32_t)qz;
    return r;
}
