// keel: integer binary angles, their sines and view directions. MIT licence, see LICENSE.
//
// An angle is a uint16_t: 65536 units per turn (one unit is about 0.0055
// degrees). Sums and differences wrap around the turn by plain unsigned
// arithmetic, cast back to sim_angle: (sim_angle)(a + b). Read as int16_t, an
// angle is signed in [-32768, 32767], i.e. [-180, 180) degrees.
//
// Sine and cosine come from a quarter-wave table of keel's own
// (sim/src/angle_table.c, written by tools/gen_angle_table.py): every value is
// sin or cos of the exact angle 2*pi*a/65536 rounded to nearest in Q16.16, so
// the error is at most 1/2 raw unit (2^-17) for all 65536 angles
// (tests/test_angle.c checks each one). The results are exact at multiples of a
// quarter turn, and sin(-a) == -sin(a), cos(-a) == cos(a),
// sin(a + half turn) == -sin(a) hold exactly.
//
// View convention (the engine is Y-up, see sim_math.h):
// - yaw 0 looks along -Z;
// - yaw increases counter-clockwise seen from above (looking down -Y), so a
//   quarter turn of yaw looks along -X, a half turn along +Z, three quarters
//   along +X;
// - pitch 0 is horizontal, positive pitch looks up (+Y); a quarter turn looks
//   straight up. Cameras keep pitch in [-quarter, +quarter] read as int16_t;
//   other values are valid and continue over the pole.
// So the view direction is (-sin yaw cos pitch, sin pitch, -cos yaw cos pitch),
// and the right-hand side at yaw 0 is +X.
#ifndef KEEL_SIM_ANGLE_H
#define KEEL_SIM_ANGLE_H

#include <keel/sim_math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint16_t sim_angle;

#define SIM_ANGLE_QUARTER ((sim_angle)0x4000) ///< 90 degrees
#define SIM_ANGLE_HALF ((sim_angle)0x8000)    ///< 180 degrees
/// Integer degrees (within +-2^40) as the nearest binary angle, usable in
/// constant expressions: SIM_ANGLE_DEG(-45) is 0xE000. 65536/360 = 8192/45, and
/// 45 is odd, so n/45 is never half-way between two integers.
#define SIM_ANGLE_DEG(d) ((sim_angle)(((int64_t)(d)*8192 + ((d) < 0 ? -22 : 22)) / 45))

/// Entries stored in sim_angle_sin_table; from this index to the quarter turn
/// the sine rounds to exactly 1.0. Written by tools/gen_angle_table.py, which
/// also asserts it in the generated file.
#define SIM_ANGLE_SIN_TABLE_LEN 16344
/// round(sin(2 pi i / 65536) * 65536) for i < SIM_ANGLE_SIN_TABLE_LEN.
extern const uint16_t sim_angle_sin_table[SIM_ANGLE_SIN_TABLE_LEN];

/// sin(a) in Q16.16, within 2^-17 of the true value.
static inline sim_fx sim_angle_sin(sim_angle a)
{
    uint32_t i = a & 0x3FFFu;
    if (a & 0x4000u) // second and fourth quarters mirror the first
        i = 0x4000u - i;
    sim_fx v = i < SIM_ANGLE_SIN_TABLE_LEN ? (sim_fx)sim_angle_sin_table[i] : SIM_FX_ONE;
    return (a & 0x8000u) ? -v : v;
}

/// cos(a) in Q16.16, within 2^-17 of the true value.
static inline sim_fx sim_angle_cos(sim_angle a) { return sim_angle_sin((sim_angle)(a + SIM_ANGLE_QUARTER)); }

/// Unit view direction for a yaw and a pitch (convention above). Each
/// component is within 1.5 ulp (1.5 * 2^-16) of the true value; the length is
/// 1 within 2^-15.
sim_vec3 sim_angle_dir(sim_angle yaw, sim_angle pitch);

/// Horizontal unit forward (yaw only: (-sin yaw, 0, -cos yaw)) and right
/// ((cos yaw, 0, -sin yaw), forward x up) vectors. Each component is within
/// 2^-17 of the true value, and the two are exactly perpendicular in integer
/// arithmetic. Either pointer may be NULL.
void sim_angle_forward_right(sim_angle yaw, sim_vec3 *forward, sim_vec3 *right);

#ifdef __cplusplus
}
#endif

#endif
