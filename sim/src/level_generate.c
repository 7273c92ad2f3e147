// keel: generated benchmark levels (rolling terrain, pillars, crates). MIT licence, see LICENSE.
//
// Everything is integer arithmetic on the seed, so a (triangle_count, seed)
// pair names the same level bytes on every platform. The terrain is value
// noise: random heights on coarse lattices, blended with a smoothstep and
// summed over three octaves. Each octave's amplitude is small against its
// lattice spacing (steepest slope of one octave 1.5 * 2 * amp / spacing =
// 0.375, about 20 degrees), so most of the ground is walkable and only rare
// spots where all octaves slope the same way get steeper than 45 degrees.
#include <keel/sim_level.h>

#define GEN_MAX_TRIANGLES ((uint32_t)15000000)
#define GEN_MAX_EXTENT_MM 900000 // terrain spans at most +-900 m

// 32-bit avalanche mix: every input bit flips about half the output bits, so
// neighbouring lattice points get unrelated heights.
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x21F0AAADu;
    x ^= x >> 15;
    x *= 0xD35A2D97u;
    x ^= x >> 15;
    return x;
}

static uint32_t hash4(uint32_t seed, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = mix32(seed ^ 0x9E3779B9u);
    h = mix32(h ^ a);
    h = mix32(h + b);
    return mix32(h ^ (c * 0x85EBCA6Bu));
}

static sim_fx mm(int64_t v) { return (sim_fx)sim_div_round_s64(v * 65536, 1000); }

typedef struct gen_octave {
    int64_t spacing; // lattice spacing, raw Q16.16 metres
    int64_t amp;     // height range +-amp, raw
} gen_octave;

static const int64_t octave_spacing_m[3] = {128, 32, 8};
static const int64_t octave_amp_mm[3] = {16000, 4000, 1000};

static int64_t lattice(uint32_t seed, uint32_t octave, int64_t i, int64_t j, int64_t amp)
{
    // Lattice coordinates are taken modulo 2^32; only their identity matters.
    uint32_t r = hash4(seed, octave, (uint32_t)(uint64_t)i, (uint32_t)(uint64_t)j) >> 16;
    return amp * ((int64_t)r - 32768) / 32768;
}

// Smoothstep t^2 (3 - 2t) with t in Q16 [0, 65536].
static int64_t smooth16(int64_t t) { return (t * t >> 16) * (3 * 65536 - 2 * t) >> 16; }

static int64_t lerp16(int64_t a, int64_t b, int64_t t) { return a + sim_shr_round_s64((b - a) * t, 16); }

/// Terrain height at (x, z), raw.
static sim_fx terrain_height(uint32_t seed, sim_fx x, sim_fx z)
{
    int64_t h = 0;
    for (uint32_t o = 0; o < 3; o++) {
        int64_t s = SIM_FX_INT(octave_spacing_m[o]);
        int64_t amp = mm(octave_amp_mm[o]);
        int64_t i = sim_div_floor_s64(x, s), j = sim_div_floor_s64(z, s);
        int64_t tx = smooth16(((int64_t)x - i * s) * 65536 / s);
        int64_t tz = smooth16(((int64_t)z - j * s) * 65536 / s);
        int64_t a = lerp16(lattice(seed, o, i, j, amp), lattice(seed, o, i + 1, j, amp), tx);
        int64_t c = lerp16(lattice(seed, o, i, j + 1, amp), lattice(seed, o, i + 1, j + 1, amp), tx);
        h += lerp16(a, c, tz);
    }
    return (sim_fx)h;
}

/// Uniform-ish integer in [lo, hi] from a hash (the modulo bias is irrelevant here).
static int64_t pick(uint32_t h, int64_t lo, int64_t hi) { return lo + (int64_t)(h % (uint32_t)(hi - lo + 1)); }

static sim_fx min4(sim_fx a, sim_fx b, sim_fx c, sim_fx d) { return sim_fx_min(sim_fx_min(a, b), sim_fx_min(c, d)); }

// A closed-topped square pillar (4 sides + top, 10 triangles) whose base sinks
// below the lowest terrain corner so no gap shows under it.
static void pillar(sim_level_builder *b, uint32_t seed, sim_fx cx, sim_fx cz, sim_fx half, sim_fx height)
{
    sim_fx x0 = cx - half, x1 = cx + half, z0 = cz - half, z1 = cz + half;
    sim_fx ground = min4(terrain_height(seed, x0, z0), terrain_height(seed, x0, z1), terrain_height(seed, x1, z0),
                         terrain_height(seed, x1, z1));
    sim_fx y0 = ground - SIM_FX_INT(1), y1 = ground + height;
    uint32_t v[8];
    for (int k = 0; k < 8; k++) {
        sim_fx x = (k & 1) ? x1 : x0, z = (k & 2) ? z1 : z0, y = (k & 4) ? y1 : y0;
        v[k] = sim_level_builder_vertex(b, sim_v3(x, y, z));
    }
    // Counter-clockwise seen from outside.
    sim_level_builder_triangle(b, v[4], v[6], v[7]); // top
    sim_level_builder_triangle(b, v[4], v[7], v[5]);
    sim_level_builder_triangle(b, v[0], v[4], v[5]); // -z
    sim_level_builder_triangle(b, v[0], v[5], v[1]);
    sim_level_builder_triangle(b, v[2], v[3], v[7]); // +z
    sim_level_builder_triangle(b, v[2], v[7], v[6]);
    sim_level_builder_triangle(b, v[0], v[2], v[6]); // -x
    sim_level_builder_triangle(b, v[0], v[6], v[4]);
    sim_level_builder_triangle(b, v[1], v[5], v[7]); // +x
    sim_level_builder_triangle(b, v[1], v[7], v[3]);
}

int sim_level_generate(sim_level *out, uint32_t triangle_count, uint32_t seed)
{
    // Rotations about +Y used for crates: (cos, sin) of 0..75 degrees in 15
    // degree steps, raw Q16.16.
    static const sim_fx rot[6][2] = {{65536, 0},     {63303, 16962}, {56756, 32768},
                                     {46341, 46341}, {32768, 56756}, {16962, 63303}};
    if (!out)
        return -1;
    if (triangle_count > GEN_MAX_TRIANGLES) {
        *out = (sim_level){0};
        return -1;
    }
    sim_level_builder b;
    sim_level_builder_init(&b);

    // About 90% of the triangles are terrain: g x g cells of two triangles.
    uint32_t g = sim_isqrt_u64((uint64_t)triangle_count * 9 / 20);
    if (g < 16)
        g = 16;
    int64_t cell = SIM_FX_INT(2);
    if ((int64_t)g * cell > 2 * (int64_t)mm(GEN_MAX_EXTENT_MM))
        cell = 2 * (int64_t)mm(GEN_MAX_EXTENT_MM) / g;
    int64_t half = (int64_t)g * cell / 2;

    for (uint32_t i = 0; i <= g; i++) {
        for (uint32_t j = 0; j <= g; j++) {
            sim_fx x = (sim_fx)(-half + (int64_t)i * cell), z = (sim_fx)(-half + (int64_t)j * cell);
            sim_level_builder_vertex(&b, sim_v3(x, terrain_height(seed, x, z), z));
        }
    }
    for (uint32_t i = 0; i < g; i++) {
        for (uint32_t j = 0; j < g; j++) {
            uint32_t v00 = i * (g + 1) + j, v01 = v00 + 1, v10 = v00 + g + 1, v11 = v10 + 1;
            // Alternate the diagonal so the terrain has no preferred direction.
            if ((i + j) & 1) {
                sim_level_builder_triangle(&b, v00, v01, v11);
                sim_level_builder_triangle(&b, v00, v11, v10);
            } else {
                sim_level_builder_triangle(&b, v00, v01, v10);
                sim_level_builder_triangle(&b, v01, v11, v10);
            }
        }
    }

    // Pillars make up the rest (10 triangles each), plus a few extra.
    uint64_t terrain = 2 * (uint64_t)g * g;
    uint64_t rest = triangle_count > terrain ? triangle_count - terrain : 0;
    uint32_t pillars = (uint32_t)((rest + 9) / 10) + 16 + triangle_count / 20000;
    // Keep objects 5 m inside the terrain edge.
    int64_t span = half - SIM_FX_INT(5);
    for (uint32_t p = 0; p < pillars; p++) {
        sim_fx cx = (sim_fx)pick(hash4(seed, 1000, p, 0), -span, span);
        sim_fx cz = (sim_fx)pick(hash4(seed, 1000, p, 1), -span, span);
        sim_fx ph = (sim_fx)pick(hash4(seed, 1000, p, 2), mm(250), mm(1000));
        sim_fx height = (sim_fx)pick(hash4(seed, 1000, p, 3), mm(2000), mm(10000));
        pillar(&b, seed, cx, cz, ph, height);
    }

    // Oriented crates resting on (and sunk 0.2 m into) the ground.
    uint32_t crates = 8 + triangle_count / 2000;
    for (uint32_t c = 0; c < crates; c++) {
        sim_box_def box;
        sim_fx cx = (sim_fx)pick(hash4(seed, 2000, c, 0), -span, span);
        sim_fx cz = (sim_fx)pick(hash4(seed, 2000, c, 1), -span, span);
        box.half = sim_v3((sim_fx)pick(hash4(seed, 2000, c, 2), mm(500), mm(1500)),
                          (sim_fx)pick(hash4(seed, 2000, c, 3), mm(500), mm(1500)),
                          (sim_fx)pick(hash4(seed, 2000, c, 4), mm(500), mm(1500)));
        box.center = sim_v3(cx, terrain_height(seed, cx, cz) + box.half.y - mm(200), cz);
        const sim_fx *r = rot[hash4(seed, 2000, c, 5) % 6];
        box.axis[0] = sim_v3(r[0], 0, -r[1]);
        box.axis[1] = sim_v3(0, SIM_FX_ONE, 0);
        box.axis[2] = sim_v3(r[1], 0, r[0]);
        sim_level_builder_box(&b, box);
    }

    sim_level_builder_marker(&b, "spawn", sim_v3(0, terrain_height(seed, 0, 0), 0));
    return sim_level_builder_finish(&b, out);
}
