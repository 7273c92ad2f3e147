// keel: 3-vectors and boxes on sim_fx. MIT licence, see LICENSE.
//
// Value types passed by value. Products use 64-bit intermediates: a dot
// product of two vectors is formed exactly in Q32.32 (int64) and rounded once.
// With coordinates within +-SIM_WORLD_LIMIT (2^12 m, raw 2^28) every product
// of two coordinates or coordinate differences is below 2^58, and a sum of
// three such products below 2^60: no int64 overflow is possible.
//
// The engine is Y-up: +Y points up, gravity is along -Y.
#ifndef KEEL_SIM_MATH_H
#define KEEL_SIM_MATH_H

#include <keel/sim_fx.h>

#ifdef __cplusplus
extern "C" {
#endif

/// On the structs of 12 bytes that keel returns by value (sim_vec3, sim_dir,
/// sim_input, sim_scene_separation). tcc 0.9.27 for x86-64 stores such a
/// struct, returned in two registers, as 16 bytes into a 12-byte temporary,
/// overwriting 4 bytes of the caller's next local variable; under that
/// compiler the members it marks are aligned to 8 bytes (C11 _Alignas),
/// which makes them longer (sim_vec3: 24 bytes). Their fields, and so every hash and every
/// encoding (all field by field), stay the same.
#if defined(__TINYC__) && defined(__x86_64__)
#define SIM_RETURNED_STRUCT _Alignas(8)
#else
#define SIM_RETURNED_STRUCT
#endif

/// Largest coordinate magnitude anywhere in a world, in metres (4096 m).
#define SIM_WORLD_LIMIT SIM_FX_INT(4096)

typedef struct sim_vec3 {
    SIM_RETURNED_STRUCT sim_fx x, y, z;
} sim_vec3;

typedef struct sim_aabb {
    sim_vec3 min, max;
} sim_aabb;

static inline sim_vec3 sim_v3(sim_fx x, sim_fx y, sim_fx z)
{
    sim_vec3 r = {x, y, z};
    return r;
}
static inline sim_vec3 sim_v3_zero(void) { return sim_v3(0, 0, 0); }
static inline sim_vec3 sim_v3_up(void) { return sim_v3(0, SIM_FX_ONE, 0); }

static inline bool sim_v3_eq(sim_vec3 a, sim_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
static inline bool sim_v3_is_zero(sim_vec3 a) { return a.x == 0 && a.y == 0 && a.z == 0; }

static inline sim_vec3 sim_v3_add(sim_vec3 a, sim_vec3 b)
{
    return sim_v3(sim_fx_add(a.x, b.x), sim_fx_add(a.y, b.y), sim_fx_add(a.z, b.z));
}
static inline sim_vec3 sim_v3_sub(sim_vec3 a, sim_vec3 b)
{
    return sim_v3(sim_fx_sub(a.x, b.x), sim_fx_sub(a.y, b.y), sim_fx_sub(a.z, b.z));
}
static inline sim_vec3 sim_v3_neg(sim_vec3 a) { return sim_v3(-a.x, -a.y, -a.z); }

/// a * s (s in Q16.16), each component rounded like fix16_mul.
static inline sim_vec3 sim_v3_scale(sim_vec3 a, sim_fx s)
{
    return sim_v3(sim_fx_mul(a.x, s), sim_fx_mul(a.y, s), sim_fx_mul(a.z, s));
}
/// a + b * s
static inline sim_vec3 sim_v3_madd(sim_vec3 a, sim_vec3 b, sim_fx s) { return sim_v3_add(a, sim_v3_scale(b, s)); }

/// Exact dot product in Q32.32.
static inline int64_t sim_v3_dot64(sim_vec3 a, sim_vec3 b)
{
    return (int64_t)a.x * b.x + (int64_t)a.y * b.y + (int64_t)a.z * b.z;
}
/// Dot product rounded to Q16.16 (fails SIM_CHECK if it does not fit).
static inline sim_fx sim_v3_dot(sim_vec3 a, sim_vec3 b)
{
    return sim_fx_from_s64_checked(sim_shr_round_s64(sim_v3_dot64(a, b), 16));
}
static inline int64_t sim_v3_len_sq64(sim_vec3 a) { return sim_v3_dot64(a, a); }

/// Cross product, each component formed exactly in Q32.32 and rounded once.
static inline sim_vec3 sim_v3_cross(sim_vec3 a, sim_vec3 b)
{
    int64_t x = (int64_t)a.y * b.z - (int64_t)a.z * b.y;
    int64_t y = (int64_t)a.z * b.x - (int64_t)a.x * b.z;
    int64_t z = (int64_t)a.x * b.y - (int64_t)a.y * b.x;
    return sim_v3(sim_fx_from_s64_checked(sim_shr_round_s64(x, 16)), sim_fx_from_s64_checked(sim_shr_round_s64(y, 16)),
                  sim_fx_from_s64_checked(sim_shr_round_s64(z, 16)));
}

/// Length, rounded to nearest from the exact Q32.32 square.
sim_fx sim_v3_length(sim_vec3 a);
/// Unit vector along a (each component rounded to nearest); the zero vector
/// for a zero input. The result's length is 1 within 2^-15.
sim_vec3 sim_v3_normalize(sim_vec3 a);
/// Like sim_v3_normalize, also returning the input length.
sim_vec3 sim_v3_normalize_len(sim_vec3 a, sim_fx *length);

static inline sim_vec3 sim_v3_min(sim_vec3 a, sim_vec3 b)
{
    return sim_v3(sim_fx_min(a.x, b.x), sim_fx_min(a.y, b.y), sim_fx_min(a.z, b.z));
}
static inline sim_vec3 sim_v3_max(sim_vec3 a, sim_vec3 b)
{
    return sim_v3(sim_fx_max(a.x, b.x), sim_fx_max(a.y, b.y), sim_fx_max(a.z, b.z));
}
static inline sim_fx sim_v3_comp(sim_vec3 a, int axis) { return axis == 0 ? a.x : (axis == 1 ? a.y : a.z); }

/// True when every coordinate is within +-SIM_WORLD_LIMIT.
static inline bool sim_v3_in_world(sim_vec3 a)
{
    return a.x >= -SIM_WORLD_LIMIT && a.x <= SIM_WORLD_LIMIT && a.y >= -SIM_WORLD_LIMIT && a.y <= SIM_WORLD_LIMIT &&
           a.z >= -SIM_WORLD_LIMIT && a.z <= SIM_WORLD_LIMIT;
}

// ---- unit directions in Q2.30 ---------------------------------------------
// Normals and directions that are dotted with long vectors keep 30 fraction
// bits: a Q16.16 unit vector is off by up to 2^-17 per component, which over a
// 100 m triangle edge is a millimetre; Q2.30 keeps that below a micrometre.

typedef struct sim_dir {
    SIM_RETURNED_STRUCT int32_t x, y, z; ///< Q2.30; unit length within 2^-29
} sim_dir;

#define SIM_DIR_ONE ((int32_t)1 << 30)

/// Unit direction of the exact integer vector (x, y, z) (any common scale);
/// the zero direction for a zero vector.
sim_dir sim_dir_from_s64(int64_t x, int64_t y, int64_t z);
static inline sim_dir sim_dir_from_v3(sim_vec3 v) { return sim_dir_from_s64(v.x, v.y, v.z); }

/// d . v in Q16.16 (v in Q16.16), formed exactly and rounded once.
static inline int64_t sim_dir_dot_v3_raw(sim_dir d, sim_vec3 v)
{
    return (int64_t)d.x * v.x + (int64_t)d.y * v.y + (int64_t)d.z * v.z; // Q18.46
}
static inline sim_fx sim_dir_dot_v3(sim_dir d, sim_vec3 v)
{
    return sim_fx_from_s64_checked(sim_shr_round_s64(sim_dir_dot_v3_raw(d, v), 30));
}
/// a . b of two directions in Q16.16.
static inline sim_fx sim_dir_dot(sim_dir a, sim_dir b)
{
    int64_t s = (int64_t)a.x * b.x + (int64_t)a.y * b.y + (int64_t)a.z * b.z; // Q4.60
    return (sim_fx)sim_shr_round_s64(s, 44);
}
/// d * s as a Q16.16 vector.
static inline sim_vec3 sim_dir_scale(sim_dir d, sim_fx s)
{
    return sim_v3((sim_fx)sim_shr_round_s64((int64_t)d.x * s, 30), (sim_fx)sim_shr_round_s64((int64_t)d.y * s, 30),
                  (sim_fx)sim_shr_round_s64((int64_t)d.z * s, 30));
}
static inline sim_vec3 sim_dir_to_v3(sim_dir d)
{
    return sim_v3((sim_fx)sim_shr_round_s64(d.x, 14), (sim_fx)sim_shr_round_s64(d.y, 14),
                  (sim_fx)sim_shr_round_s64(d.z, 14));
}
static inline sim_dir sim_dir_neg(sim_dir d)
{
    sim_dir r = {-d.x, -d.y, -d.z};
    return r;
}
static inline bool sim_dir_is_zero(sim_dir d) { return d.x == 0 && d.y == 0 && d.z == 0; }

static inline sim_aabb sim_aabb_of_point(sim_vec3 p)
{
    sim_aabb b = {p, p};
    return b;
}
static inline sim_aabb sim_aabb_union(sim_aabb a, sim_aabb b)
{
    sim_aabb r = {sim_v3_min(a.min, b.min), sim_v3_max(a.max, b.max)};
    return r;
}
static inline sim_aabb sim_aabb_expand(sim_aabb a, sim_vec3 e)
{
    sim_aabb r = {sim_v3_sub(a.min, e), sim_v3_add(a.max, e)};
    return r;
}
static inline bool sim_aabb_overlaps(sim_aabb a, sim_aabb b)
{
    return a.min.x <= b.max.x && a.max.x >= b.min.x && a.min.y <= b.max.y && a.max.y >= b.min.y && a.min.z <= b.max.z &&
           a.max.z >= b.min.z;
}

#ifdef __cplusplus
}
#endif

#endif
