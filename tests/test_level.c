// keel tests: OBJ loader, built-in and generated levels. MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L // mkstemp, unlink, clock_gettime under -std=c11

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <keel/sim_level.h>

#include "test_support.h"

#define PI 3.14159265358979323846

#if defined(__SANITIZE_ADDRESS__)
#define SLOW_BUILD 1
#else
#define SLOW_BUILD 0
#endif

// ---- helpers ------------------------------------------------------------------

static int parse_with(const char *text, const char *scale, char up, sim_level *lvl, sim_error *err)
{
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = scale;
    o.up_axis = up;
    return sim_level_parse_obj("t.obj", text, strlen(text), &o, lvl, err);
}

static bool level_is_empty(const sim_level *l)
{
    return l->vertices == NULL && l->indices == NULL && l->boxes == NULL && l->markers == NULL &&
           l->vertex_count == 0 && l->triangle_count == 0 && l->box_count == 0 && l->marker_count == 0;
}

/// Checks that `text` fails on `line` with a message "t.obj:<line>: ..." that
/// contains `what`.
static void expect_error_opts(const char *text, size_t len, const sim_obj_options *o, uint32_t line, const char *what)
{
    sim_level lvl;
    sim_error err;
    memset(&lvl, 0xAB, sizeof lvl);
    int rc = sim_level_parse_obj("t.obj", text, len, o, &lvl, &err);
    cr_assert_eq(rc, -1, "expected failure for [%.60s]", text ? text : "(null)");
    cr_assert(level_is_empty(&lvl));
    cr_assert_eq(err.line, line, "line %u, expected %u: %s", err.line, line, err.message);
    char prefix[64];
    if (line)
        snprintf(prefix, sizeof prefix, "t.obj:%u: ", line);
    else
        snprintf(prefix, sizeof prefix, "t.obj: ");
    cr_assert(strncmp(err.message, prefix, strlen(prefix)) == 0, "message '%s' lacks '%s'", err.message, prefix);
    cr_assert(strstr(err.message, what) != NULL, "message '%s' lacks '%s'", err.message, what);
}

static void expect_error(const char *text, uint32_t line, const char *what)
{
    sim_obj_options o = sim_obj_default_options();
    expect_error_opts(text, strlen(text), &o, line, what);
}

static void expect_error_scaled(const char *text, const char *scale, uint32_t line, const char *what)
{
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = scale;
    expect_error_opts(text, strlen(text), &o, line, what);
}

/// Raw Q16.16 value of the number `num` scaled by `scale`, through the loader.
static sim_fx raw_of(const char *num, const char *scale)
{
    char text[512];
    // The face is a 30-unit triangle of its own, large enough to survive every
    // scale used here (a level whose triangles are all degenerate is refused).
    snprintf(text, sizeof text, "v %s 0 0\nv 0 0 0\nv 30 0 0\nv 0 0 30\nf 2 3 4\n", num);
    sim_level lvl;
    sim_error err;
    int rc = parse_with(text, scale, 'y', &lvl, &err);
    cr_assert_eq(rc, 0, "%s * %s: %s", num, scale, err.message);
    sim_fx v = lvl.vertices[0].x;
    sim_level_free(&lvl);
    return v;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t fnv_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

static uint64_t fnv_u32(uint64_t h, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    return fnv_bytes(h, b, 4);
}

static uint64_t fnv_vec(uint64_t h, sim_vec3 v)
{
    h = fnv_u32(h, (uint32_t)v.x);
    h = fnv_u32(h, (uint32_t)v.y);
    return fnv_u32(h, (uint32_t)v.z);
}

/// A byte-order independent digest of a level's contents.
static uint64_t level_digest(const sim_level *l)
{
    uint64_t h = 0xCBF29CE484222325ull;
    h = fnv_u32(h, l->vertex_count);
    for (uint32_t i = 0; i < l->vertex_count; i++)
        h = fnv_vec(h, l->vertices[i]);
    h = fnv_u32(h, l->triangle_count);
    for (uint32_t i = 0; i < 3 * l->triangle_count; i++)
        h = fnv_u32(h, l->indices[i]);
    h = fnv_u32(h, l->box_count);
    for (uint32_t i = 0; i < l->box_count; i++) {
        h = fnv_vec(h, l->boxes[i].center);
        h = fnv_vec(h, l->boxes[i].half);
        for (int k = 0; k < 3; k++)
            h = fnv_vec(h, l->boxes[i].axis[k]);
    }
    h = fnv_u32(h, l->marker_count);
    for (uint32_t i = 0; i < l->marker_count; i++) {
        h = fnv_bytes(h, l->markers[i].name, strlen(l->markers[i].name));
        h = fnv_vec(h, l->markers[i].position);
    }
    return h;
}

static void check_level_sane(const sim_level *l)
{
    for (uint32_t i = 0; i < 3 * l->triangle_count; i++)
        cr_assert_lt(l->indices[i], l->vertex_count);
    for (uint32_t i = 0; i < l->vertex_count; i++)
        cr_assert(sim_v3_in_world(l->vertices[i]));
}

static double d(sim_fx v) { return keel_fx_to_d(v); }

// ---- numbers --------------------------------------------------------------------

Test(level_numbers, exact_scale)
{
    cr_assert_eq(raw_of("100", "0.12"), 786432); // exactly 12 m
    cr_assert_eq(raw_of("1", "0.12"), 7864);     // 7864.32
    cr_assert_eq(raw_of("-1", "0.12"), -7864);
    cr_assert_eq(raw_of("-12.500", "1"), -819200);
    cr_assert_eq(raw_of("3e2", "1"), 300 * 65536);
    cr_assert_eq(raw_of("1.5E-3", "1"), 98); // 98.304
    cr_assert_eq(raw_of("+1.5e+0", "1"), 98304);
    cr_assert_eq(raw_of("2.54e-2", "1"), 1665); // 1664.6144
    cr_assert_eq(raw_of("1", "2.54e-2"), 1665);
    cr_assert_eq(raw_of(".5", "1"), 32768);
    cr_assert_eq(raw_of("5.", "1"), 5 * 65536);
    cr_assert_eq(raw_of("-0", "1"), 0);
    cr_assert_eq(raw_of("0e999999999999", "1"), 0);
    cr_assert_eq(raw_of("1e-99999999999999999999", "1"), 0);
    cr_assert_eq(raw_of("000000000000000000000000000000000001", "1"), 65536);
    cr_assert_eq(raw_of("0.00000000000000000000000000000000000000000000000001", "1"), 0);
    // 433.99999999999999999999999 * 0.12 = 52.0799...: raw 3413114.879...
    cr_assert_eq(raw_of("433.99999999999999999999999", "0.12"), 3413115);
    cr_assert_eq(raw_of("1000", "4.096"), SIM_WORLD_LIMIT);
    cr_assert_eq(raw_of("-4096", "1"), -SIM_WORLD_LIMIT);
}

Test(level_numbers, thirds_and_ties)
{
    // 1/3 m is raw 21845.33 and 2/3 m raw 43690.67.
    cr_assert_eq(raw_of("0.333333", "1"), 21845);
    cr_assert_eq(raw_of("0.33333333333333333333333333333333333333", "1"), 21845);
    cr_assert_eq(raw_of("0.66666", "1"), 43690);
    cr_assert_eq(raw_of("0.66666666666666666666666666666666666667", "1"), 43691);
    cr_assert_eq(raw_of("-0.66666666666666666666666666666666666667", "1"), -43691);
    cr_assert_eq(raw_of("3", "0.333333333333"), 65536); // 65535.99999993
    cr_assert_eq(raw_of("1", "0.333333333333"), 21845);
    // 2^-17 m is exactly half a unit: ties go away from zero.
    cr_assert_eq(raw_of("0.00000762939453125", "1"), 1);
    cr_assert_eq(raw_of("-0.00000762939453125", "1"), -1);
    cr_assert_eq(raw_of("0.0000152587890625", "0.5"), 1);
    cr_assert_eq(raw_of("7.62939453125e-6", "1"), 1);
    cr_assert_eq(raw_of("0.00000762939453124999999999999999999", "1"), 0);
    cr_assert_eq(raw_of("0.00000762939453125000000000000000001", "1"), 1);
    cr_assert_eq(raw_of("-0.00000762939453124999999999999999999", "1"), 0);
    cr_assert_eq(raw_of("2.00000762939453125", "1"), 131073);
    cr_assert_eq(raw_of("2.00002288818359375", "1"), 131074); // 131073.5
}

/// Reference: round(m * 10^e * s_m * 10^s_e * 65536) with 128-bit integers.
static int64_t reference_raw(int64_t m, int e, int64_t sm, int se)
{
    __int128 num = (__int128)m * sm * 65536;
    int p = e + se;
    __int128 den = 1;
    for (; p > 0; p--)
        num *= 10;
    for (; p < 0; p++)
        den *= 10;
    bool neg = num < 0;
    if (neg)
        num = -num;
    __int128 q = num / den, r = num % den;
    if (2 * r >= den)
        q += 1;
    return (int64_t)(neg ? -q : q);
}

/// m * 10^e written as plain decimal (when plain) or with an exponent.
static void format_decimal(char *buf, size_t size, int64_t m, int e, bool plain, bool upper)
{
    char digits[32];
    bool neg = m < 0;
    snprintf(digits, sizeof digits, "%lld", (long long)(neg ? -m : m));
    if (!plain) {
        snprintf(buf, size, "%s%s%c%d", neg ? "-" : "", digits, upper ? 'E' : 'e', e);
        return;
    }
    size_t n = strlen(digits);
    if (e >= 0) {
        snprintf(buf, size, "%s%s%0*d", neg ? "-" : "", digits, e, 0);
        if (e == 0)
            snprintf(buf, size, "%s%s", neg ? "-" : "", digits);
    } else if ((size_t)-e < n) {
        snprintf(buf, size, "%s%.*s.%s", neg ? "-" : "", (int)(n - (size_t)-e), digits, digits + n - (size_t)-e);
    } else {
        snprintf(buf, size, "%s0.%0*d%s", neg ? "-" : "", (int)((size_t)-e - n), 0, digits);
        if ((size_t)-e == n)
            snprintf(buf, size, "%s0.%s", neg ? "-" : "", digits);
    }
}

Test(level_numbers, random_against_reference)
{
    static const char *scales[] = {"1", "0.12", "0.0254", "2.5", "0.001", "0.333333333333", "7e-1", "39.37"};
    static const int64_t scale_m[] = {1, 12, 254, 25, 1, 333333333333, 7, 3937};
    static const int scale_e[] = {0, -2, -4, -1, -3, -12, -1, -2};
    keel_rng rng = {12345};
    int checked = 0;
    for (int i = 0; i < 20000; i++) {
        int s = (int)keel_rng_range(&rng, 0, 7);
        int digits = (int)keel_rng_range(&rng, 1, 15);
        int64_t m = 0;
        for (int k = 0; k < digits; k++)
            m = m * 10 + keel_rng_range(&rng, 0, 9);
        if (keel_rng_range(&rng, 0, 1))
            m = -m;
        int e = (int)keel_rng_range(&rng, -16, 2);
        int64_t expect = reference_raw(m, e, scale_m[s], scale_e[s]);
        if (expect > SIM_WORLD_LIMIT || expect < -SIM_WORLD_LIMIT)
            continue;
        char num[64];
        format_decimal(num, sizeof num, m, e, keel_rng_range(&rng, 0, 3) != 0, keel_rng_range(&rng, 0, 1));
        cr_assert_eq(raw_of(num, scales[s]), expect, "%s * %s", num, scales[s]);
        checked++;
    }
    cr_assert_gt(checked, 10000);
}

Test(level_numbers, range_limit)
{
    expect_error("v 4096.00001 0 0\n", 1, "beyond 4096 m");
    expect_error("v 0 0 1e99999999999999999999\n", 1, "beyond 4096 m");
    expect_error("v 0 -5000 0\n", 1, "beyond 4096 m");
    expect_error_scaled("v 1 2 3\nv 40000 0 0\n", "0.12", 2, "beyond 4096 m");
    expect_error_scaled("v 1000 0 0\n", "4.0961", 1, "beyond 4096 m");
    // Just inside: 34133.33 * 0.12 = 4095.9996 m (raw 268435429.78); 4096 m itself is allowed.
    cr_assert_eq(raw_of("34133.33", "0.12"), 268435430);
    // The boundary is judged on the rounded value: 4096 m + 1/3 unit rounds to the limit.
    cr_assert_eq(raw_of("4096.000005", "1"), SIM_WORLD_LIMIT);
}

Test(level_numbers, bad_options)
{
    sim_obj_options o = sim_obj_default_options();
    const char *text = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    const char *bad_scales[] = {"", "abc", "0", "0.000", "-1", "1234567890123", "1e", "0x10", " 1"};
    for (size_t i = 0; i < sizeof bad_scales / sizeof *bad_scales; i++) {
        o.unit_scale = bad_scales[i];
        expect_error_opts(text, strlen(text), &o, 0, "unit_scale");
    }
    sim_level lvl;
    sim_error err;
    o.unit_scale = "0.123456789012000"; // 12 significant digits are fine
    cr_assert_eq(sim_level_parse_obj("t.obj", text, strlen(text), &o, &lvl, &err), 0);
    cr_assert_eq(lvl.vertices[1].x, 8091); // 8090.9...
    sim_level_free(&lvl);
    // A valid scale, but the triangle rounds to a point: refused like a file
    // without faces (not as a bad unit_scale).
    o.unit_scale = "0.000000000000000000000000000001";
    expect_error_opts(text, strlen(text), &o, 0, "no triangles left: the only triangle is degenerate");
    o = sim_obj_default_options();
    o.up_axis = 'x';
    expect_error_opts(text, strlen(text), &o, 0, "up_axis");
    // NULL options and zero fields mean the defaults.
    cr_assert_eq(sim_level_parse_obj("t.obj", text, strlen(text), NULL, &lvl, &err), 0);
    cr_assert_eq(lvl.vertices[1].x, SIM_FX_ONE);
    sim_level_free(&lvl);
    memset(&o, 0, sizeof o);
    cr_assert_eq(sim_level_parse_obj("t.obj", text, strlen(text), &o, &lvl, &err), 0);
    cr_assert_eq(lvl.triangle_count, 1);
    sim_level_free(&lvl);
}

// ---- syntax -------------------------------------------------------------------

Test(level_obj, faces_and_statements)
{
    const char *text = "# a comment\n"
                       "mtllib x.mtl\n"
                       "o thing\n"
                       "g group one\n"
                       "v 0 0 0\n"
                       "v 1 0 0 1.0\n"
                       "v 1 0 1   # trailing comment\n"
                       "\tv\t0 0 1\r\n"
                       "vt 0.5 0.5\n"
                       "vn 0 1 0\n"
                       "usemtl stone\n"
                       "s off\n"
                       "f 1/1/1 2/1/1 3/1/1\n"
                       "f 1//1 3//1 4//1\n"
                       "f 1/1 2/1 3/1 4/1\n"
                       "f -4 -3 -2 -1\n"
                       "v 2 0 0\n"
                       "f 1 2 3 4 5\n"
                       "l 1 2\n"
                       "\n"
                       "   \n"
                       "f 1 2 3"; // no final newline
    sim_level lvl;
    sim_error err;
    cr_assert_eq(parse_with(text, "1", 'y', &lvl, &err), 0, "%s", err.message);
    cr_assert_eq(lvl.vertex_count, 5);
    cr_assert_eq(lvl.triangle_count, 1 + 1 + 2 + 2 + 3 + 1);
    const uint32_t expect[] = {0, 1, 2, 0, 2, 3, 0, 1, 2, 0, 2, 3, 0, 1, 2,
                               0, 2, 3, 0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 1, 2};
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
        cr_assert_eq(lvl.indices[i], expect[i], "index %zu", i);
    cr_assert(sim_v3_eq(lvl.vertices[3], sim_v3(0, 0, SIM_FX_ONE)));
    cr_assert_eq(lvl.box_count, 0);
    cr_assert_eq(lvl.marker_count, 0);
    sim_level_free(&lvl);
    sim_level_free(&lvl); // freeing twice is harmless
}

Test(level_obj, relative_indices_follow_the_current_count)
{
    // -1 is the last vertex defined so far, not the last in the file.
    const char *text = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf -3 -2 -1\nv 5 0 0\nf -4 -1 -2\n";
    sim_level lvl;
    sim_error err;
    cr_assert_eq(parse_with(text, "1", 'y', &lvl, &err), 0, "%s", err.message);
    cr_assert_eq(lvl.triangle_count, 2);
    const uint32_t expect[] = {0, 1, 2, 0, 3, 2};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(lvl.indices[i], expect[i]);
    sim_level_free(&lvl);
}

Test(level_obj, z_up)
{
    const char *text = "v 1 2 3\nv 0 0 0\nv 0 0 1\nf 1 2 3\n";
    sim_level lvl;
    sim_error err;
    cr_assert_eq(parse_with(text, "0.5", 'z', &lvl, &err), 0, "%s", err.message);
    // file (x, y, z) -> engine (x, z, -y)
    cr_assert(sim_v3_eq(lvl.vertices[0], sim_v3(SIM_FX_HALF, SIM_FX_RATIO(3, 2), -SIM_FX_ONE)));
    cr_assert(sim_v3_eq(lvl.vertices[2], sim_v3(0, SIM_FX_HALF, 0)));
    sim_level_free(&lvl);
    cr_assert_eq(parse_with(text, "1", 'Y', &lvl, &err), 0, "%s", err.message);
    cr_assert(sim_v3_eq(lvl.vertices[0], sim_v3(SIM_FX_INT(1), SIM_FX_INT(2), SIM_FX_INT(3))));
    sim_level_free(&lvl);
}

// ---- errors, each with its line ------------------------------------------------

Test(level_errors, bad_numbers)
{
    expect_error("v 1 2 x\n", 1, "bad number 'x'");
    expect_error("# c\nv 1 2 3\nv 1 2 1..5\n", 3, "bad number '1..5'");
    expect_error("\n\nv 0x10 2 3\n", 3, "bad number");
    expect_error("v nan 2 3\n", 1, "bad number");
    expect_error("v inf 2 3\n", 1, "bad number");
    expect_error("v 1e 2 3\n", 1, "bad number");
    expect_error("v 1e+ 2 3\n", 1, "bad number");
    expect_error("v . 2 3\n", 1, "bad number");
    expect_error("v +-1 2 3\n", 1, "bad number");
    expect_error("v 1,5 2 3\n", 1, "bad number");
    expect_error("v 1 2 3 w\n", 1, "bad number 'w'");
    expect_error("v 1 2 3\r\nv 1 2 \xff\r\n", 2, "bad number '?'");
    expect_error("v - 2 3\n", 1, "bad number");
    expect_error("v 1 2 3e5.0\n", 1, "bad number");
}

Test(level_errors, coordinate_counts)
{
    expect_error("v 1 2\n", 1, "too few coordinates");
    expect_error("v 0 0 0\nv\n", 2, "too few coordinates");
    expect_error("v 0 0 0\nv 0 0 0\nv 1 2 3 4 5\n", 3, "too many coordinates");
    expect_error("v 1 2 3 4 5 6 # colours\n", 1, "too many coordinates");
}

Test(level_errors, faces)
{
    const char *v3 = "v 0 0 0\nv 1 0 0\nv 0 0 1\n";
    char text[256];
    snprintf(text, sizeof text, "%sf 1 2\n", v3);
    expect_error(text, 4, "fewer than 3 vertices");
    snprintf(text, sizeof text, "%sf\n", v3);
    expect_error(text, 4, "fewer than 3 vertices");
    snprintf(text, sizeof text, "%sf 0 1 2\n", v3);
    expect_error(text, 4, "index 0");
    snprintf(text, sizeof text, "%sf 1 2 4\n", v3);
    expect_error(text, 4, "out of range");
    snprintf(text, sizeof text, "%sf -4 1 2\n", v3);
    expect_error(text, 4, "out of range");
    snprintf(text, sizeof text, "%sf 1 2 99999999999999999999999\n", v3);
    expect_error(text, 4, "out of range");
    // A forward reference: vertex 4 only exists after the face.
    snprintf(text, sizeof text, "%sf 1 2 4\nv 1 1 1\n", v3);
    expect_error(text, 4, "out of range");
    expect_error("f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 0 1\n", 1, "out of range");
    snprintf(text, sizeof text, "%sf 1 2 3x\n", v3);
    expect_error(text, 4, "bad face index '3x'");
    snprintf(text, sizeof text, "%sf 1/ 2 3\n", v3);
    expect_error(text, 4, "bad face index");
    snprintf(text, sizeof text, "%sf 1/2/3/4 2 3\n", v3);
    expect_error(text, 4, "bad face index");
    snprintf(text, sizeof text, "%sf 1//x 2 3\n", v3);
    expect_error(text, 4, "bad face index");
    snprintf(text, sizeof text, "%sf 1/2/ 2 3\n", v3);
    expect_error(text, 4, "bad face index");
    snprintf(text, sizeof text, "%sf /1 2 3\n", v3);
    expect_error(text, 4, "bad face index");
    snprintf(text, sizeof text, "%sf 1.0 2 3\n", v3);
    expect_error(text, 4, "bad face index");
}

Test(level_errors, empty_and_no_triangles)
{
    sim_obj_options o = sim_obj_default_options();
    expect_error_opts("", 0, &o, 0, "empty file");
    expect_error_opts(NULL, 0, &o, 0, "empty file");
    expect_error(" \n\n# nothing\n", 0, "no triangles");
    expect_error("v 0 0 0\nv 1 0 0\nv 0 0 1\n", 0, "no triangles");
}

// A file whose triangles are all degenerate (collinear, repeated corners, or
// shrunk to nothing by the scale) would build an empty world: refused like a
// file without faces, saying why. One usable triangle is enough, and then the
// degenerate ones are kept (the world builder drops them).
Test(level_errors, all_triangles_degenerate)
{
    expect_error("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 1 2\n", 0,
                 "no triangles left: all 2 triangles are degenerate at unit_scale '1'");
    const char *small = "v 0 0 0\nv 100 0 0\nv 0 0 100\nf 1 2 3\n";
    // 100 units at 1e-6 m are 0.1 mm: a doubled area of 1e-8 m^2, below 2^-16 m^2.
    expect_error_scaled(small, "0.000001", 0, "the only triangle is degenerate at unit_scale '0.000001'");
    sim_level lvl;
    sim_error err;
    // At 1e-4 m (1 cm sides) it is a triangle.
    cr_assert_eq(parse_with(small, "0.0001", 'y', &lvl, &err), 0, "%s", err.message);
    cr_assert_eq(lvl.triangle_count, 1);
    sim_level_free(&lvl);
    const char *mixed = "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 0 1\nf 1 2 3\nf 1 1 2\nf 1 2 4\n";
    cr_assert_eq(parse_with(mixed, "1", 'y', &lvl, &err), 0, "%s", err.message);
    cr_assert_eq(lvl.triangle_count, 3);
    sim_level_free(&lvl);
}

Test(level_errors, all_triangles_degenerate_real_map)
{
    const char *path = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!path)
        cr_skip_test("sauerbraten_zdm2.obj is absent (shared levels folder not found)");
    char saved[1200];
    snprintf(saved, sizeof saved, "%s", path);
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.000001";
    sim_level lvl;
    sim_error err;
    cr_assert_eq(sim_level_load_obj(saved, &o, &lvl, &err), -1);
    cr_assert(level_is_empty(&lvl));
    cr_assert_eq(err.line, 0);
    char expect[1400];
    snprintf(expect, sizeof expect,
             "%s: no triangles left: all 70754 triangles are degenerate at unit_scale '0.000001'", saved);
    cr_assert(strncmp(err.message, expect, strlen(expect)) == 0, "%s", err.message);
}

// A UTF-8 byte-order mark before the first line is skipped, in a buffer and in
// a file; anywhere else it is text like any other (here: a bad number).
Test(level_obj, byte_order_mark_is_skipped)
{
    const char *text = "\xEF\xBB\xBFv 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    sim_level lvl;
    sim_error err;
    cr_assert_eq(parse_with(text, "1", 'y', &lvl, &err), 0, "%s", err.message);
    cr_assert_eq(lvl.vertex_count, 3);
    cr_assert_eq(lvl.triangle_count, 1);
    cr_assert(sim_v3_eq(lvl.vertices[1], sim_v3(SIM_FX_ONE, 0, 0)));
    sim_level_free(&lvl);
    expect_error("\xEF\xBB\xBF# only a comment\n", 0, "no triangles");
    expect_error("v 0 0 0\n\xEF\xBB\xBFv 1 0 0\n", 0, "no triangles"); // an unknown statement
    expect_error("v 0 0 \xEF\xBB\xBF"
                 "0\n",
                 1, "bad number");
}

Test(level_errors, size_nul_and_long_lines)
{
    const char *text = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    sim_obj_options o = sim_obj_default_options();
    o.max_bytes = strlen(text) - 1;
    expect_error_opts(text, strlen(text), &o, 0, "larger than");
    o.max_bytes = strlen(text);
    sim_level lvl;
    sim_error err;
    cr_assert_eq(sim_level_parse_obj("t.obj", text, strlen(text), &o, &lvl, &err), 0);
    sim_level_free(&lvl);

    o = sim_obj_default_options();
    const char nul[] = "v 0 0 0\nv 1 0 0\nv 0 0\0 1\nf 1 2 3\n";
    expect_error_opts(nul, sizeof nul - 1, &o, 3, "NUL byte");
    const char nul_comment[] = "# \0\nv 0 0 0\n";
    expect_error_opts(nul_comment, sizeof nul_comment - 1, &o, 1, "NUL byte");

    // A line of exactly 64 KiB is fine; one byte more is not.
    size_t n = 65536;
    char *big = malloc(n + 200);
    cr_assert_not_null(big);
    strcpy(big, "v 0 0 0\nv 1 0 0\nv 0 0 1\n#");
    size_t at = strlen(big);
    memset(big + at, 'x', n - 1);
    strcpy(big + at + n - 1, "\nf 1 2 3\n");
    cr_assert_eq(sim_level_parse_obj("t.obj", big, strlen(big), &o, &lvl, &err), 0, "%s", err.message);
    sim_level_free(&lvl);
    memset(big + at, 'x', n);
    strcpy(big + at + n, "\nf 1 2 3\n");
    expect_error_opts(big, strlen(big), &o, 4, "longer than 65536");
    // Also a long number: the digits are all read, exactly.
    strcpy(big, "v 0.");
    memset(big + 4, '3', 60000);
    strcpy(big + 60004, " 0 0\nv 0 0 0\nv 0 0 1\nf 1 2 3\n");
    cr_assert_eq(sim_level_parse_obj("t.obj", big, strlen(big), &o, &lvl, &err), 0);
    cr_assert_eq(lvl.vertices[0].x, 21845);
    sim_level_free(&lvl);
    free(big);
}

Test(level_errors, too_many_triangles)
{
    // Polygons of 32,000 corners (32,000 - 2 triangles each) in 64 KiB lines.
    const uint32_t limit = 1u << 24, corners = 32000, per_line = corners - 2;
    uint32_t lines = limit / per_line + 1; // crosses the limit on the last line
    size_t line_len = 2 + 2 * (size_t)corners;
    size_t size = 40 + (size_t)lines * line_len;
    char *text = malloc(size);
    cr_assert_not_null(text);
    size_t n = (size_t)sprintf(text, "v 0 0 0\nv 1 0 0\nv 0 0 1\n");
    for (uint32_t l = 0; l < lines; l++) {
        text[n++] = 'f';
        for (uint32_t c = 0; c < corners; c++) {
            text[n++] = ' ';
            text[n++] = (char)('1' + c % 3);
        }
        text[n++] = '\n';
    }
    sim_obj_options o = sim_obj_default_options();
    expect_error_opts(text, n, &o, 3 + lines, "too many triangles");
    free(text);
}

Test(level_errors, too_many_vertices, .timeout = 600)
{
    const uint32_t limit = 1u << 24;
    size_t size = ((size_t)limit + 1) * 8 + 64;
    char *text = malloc(size);
    cr_assert_not_null(text);
    size_t n = 0;
    for (uint32_t i = 0; i <= limit; i++) {
        memcpy(text + n, "v 0 0 0\n", 8);
        n += 8;
    }
    n += (size_t)sprintf(text + n, "f 1 2 3\n");
    sim_obj_options o = sim_obj_default_options();
    expect_error_opts(text, n, &o, limit + 1, "too many vertices");
    // An earlier error still wins: it comes first in the file.
    memcpy(text + 8 * 100, "v 0 0 ?\n", 8);
    expect_error_opts(text, n, &o, 101, "bad number");
    free(text);
}

// ---- files ----------------------------------------------------------------------

static void write_temp(char *path, size_t size, const char *text, size_t len)
{
    snprintf(path, size, "/tmp/keel_test_level_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
}

Test(level_files, load_and_errors)
{
    char path[64];
    const char *good = "v 0 0 0\nv 100 0 0\nv 0 0 100\nf 1 2 3\n";
    write_temp(path, sizeof path, good, strlen(good));
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_level lvl;
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &lvl, &err), 0, "%s", err.message);
    cr_assert_eq(lvl.triangle_count, 1);
    cr_assert_eq(lvl.vertices[1].x, 786432);
    sim_level_free(&lvl);
    o.max_bytes = 10;
    cr_assert_eq(sim_level_load_obj(path, &o, &lvl, &err), -1);
    cr_assert_eq(err.line, 0);
    cr_assert(strstr(err.message, path) == err.message);
    cr_assert(strstr(err.message, "larger than 10 bytes") != NULL, "%s", err.message);
    unlink(path);

    const char *bad = "v 0 0 0\nv 1 0 0\nv 0 0 one\nf 1 2 3\n";
    write_temp(path, sizeof path, bad, strlen(bad));
    cr_assert_eq(sim_level_load_obj(path, NULL, &lvl, &err), -1);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s:3: bad number 'one'", path);
    cr_assert_str_eq(err.message, prefix);
    cr_assert_eq(err.line, 3);
    cr_assert(level_is_empty(&lvl));
    unlink(path);

    write_temp(path, sizeof path, "", 0);
    cr_assert_eq(sim_level_load_obj(path, NULL, &lvl, &err), -1);
    snprintf(prefix, sizeof prefix, "%s: empty file", path);
    cr_assert_str_eq(err.message, prefix);
    cr_assert_eq(err.line, 0);
    unlink(path);

    // Missing file: line 0, the message names the path.
    cr_assert_eq(sim_level_load_obj("/nonexistent/keel/missing.obj", NULL, &lvl, &err), -1);
    cr_assert_eq(err.line, 0);
    cr_assert(strncmp(err.message, "/nonexistent/keel/missing.obj: cannot open", 42) == 0, "%s", err.message);
    cr_assert(level_is_empty(&lvl));
    // A directory opens but cannot be read.
    cr_assert_eq(sim_level_load_obj("/tmp", NULL, &lvl, &err), -1);
    cr_assert_eq(err.line, 0);
    cr_assert(strncmp(err.message, "/tmp: ", 6) == 0, "%s", err.message);
    cr_assert_eq(sim_level_load_obj(NULL, NULL, &lvl, &err), -1);

    // A file starting with a UTF-8 byte-order mark loads like one without.
    const char *bom = "\xEF\xBB\xBFv 0 0 0\nv 100 0 0\nv 0 0 100\nf 1 2 3\n";
    write_temp(path, sizeof path, bom, strlen(bom));
    o = sim_obj_default_options();
    o.unit_scale = "0.12";
    cr_assert_eq(sim_level_load_obj(path, &o, &lvl, &err), 0, "%s", err.message);
    cr_assert_eq(lvl.triangle_count, 1);
    cr_assert_eq(lvl.vertices[1].x, 786432);
    sim_level_free(&lvl);
    unlink(path);
}

// ---- fuzz ---------------------------------------------------------------------

static void check_one(const char *text, size_t len, const sim_obj_options *o, int *ok, int *failed);

Test(level_fuzz, mutated_texts)
{
    static const char *seeds[] = {
        "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n",
        "v -1.5 0 2e1\nv 1 0.25 0\nv 0 0 1 1\nv 2 2 2\nf 1/1/1 2/2/2 3/3/3 4/4/4\n",
        "# c\nvt 0 0\nv 1 2 3\nv 3 2 1\nv 0 0 0\nf -1 -2 -3\ng x\nf 1//2 2//2 3//2\n",
        "o a\nv 10.125 -3.5E-2 7\nv .5 5. -0\nv 1 1 1\nusemtl m\nf 3 2 1\n",
    };
    static const char alphabet[] = "0123456789 -+.eE/\n\r\tvf#x\0\xff";
    static const char *scales[] = {"1", "0.12", "1000", "1e-3"};
    keel_rng rng = {777};
    char text[512];
    int ok = 0, failed = 0;
    for (int iter = 0; iter < 50000; iter++) {
        const char *seed = seeds[keel_rng_range(&rng, 0, 3)];
        size_t len = strlen(seed);
        memcpy(text, seed, len);
        int ops = (int)keel_rng_range(&rng, 1, 6);
        keel_test_mutate(&rng, text, &len, sizeof text, alphabet, sizeof alphabet - 1, ops);
        sim_obj_options o = sim_obj_default_options();
        o.unit_scale = scales[keel_rng_range(&rng, 0, 3)];
        o.up_axis = keel_rng_range(&rng, 0, 1) ? 'y' : 'z';
        check_one(text, len, &o, &ok, &failed);
    }
    cr_log_info("fuzz: %d parsed, %d rejected", ok, failed);
    cr_assert_gt(ok, 1000);
    cr_assert_gt(failed, 1000);
}

/// Checks the loader's contract on one text: success with a sane level, or
/// failure with an empty level and a "fuzz.obj:<line>: " message.
static void check_one(const char *text, size_t len, const sim_obj_options *o, int *ok, int *failed)
{
    sim_level lvl;
    sim_error err;
    int rc = sim_level_parse_obj("fuzz.obj", text, len, o, &lvl, &err);
    uint32_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (rc == 0) {
        (*ok)++;
        cr_assert_gt(lvl.triangle_count, 0);
        check_level_sane(&lvl);
        sim_level_free(&lvl);
        return;
    }
    (*failed)++;
    cr_assert_eq(rc, -1);
    cr_assert(level_is_empty(&lvl));
    cr_assert_leq(err.line, lines);
    char prefix[32];
    if (err.line)
        snprintf(prefix, sizeof prefix, "fuzz.obj:%u: ", err.line);
    else
        snprintf(prefix, sizeof prefix, "fuzz.obj: ");
    cr_assert(strncmp(err.message, prefix, strlen(prefix)) == 0, "%s", err.message);
}

Test(level_fuzz, random_statements)
{
    // Lines assembled from OBJ-like pieces: mostly valid, sometimes one bad piece.
    static const char *keywords[] = {"vt", "vn", "g", "#", "", "fo", "V", "s", "v", "f"};
    static const char *good_numbers[] = {"0",    "1",  "-1", "2.5", "-0.125", "1e3",
                                         "1E-3", ".5", "5.", "+3",  "1e-30",  "-0"};
    static const char *bad_numbers[] = {"4097", "-1e4", "1e", "--1", "x", "0.1.2", "7/8", "99999999999999999999",
                                        "nan",  ""};
    static const char *bad_corners[] = {"0", "1/", "//1", "1/2/3/4", "a", "999", "-999", "1.5"};
    static const char *forms[] = {"%d", "%d/1", "%d//2", "%d/3/4"};
    keel_rng rng = {4242};
    char text[2048];
    int ok = 0, failed = 0;
    for (int iter = 0; iter < 30000; iter++) {
        size_t len = 0;
        int vertices = 0;
        bool bad_run = keel_rng_range(&rng, 0, 3) == 0;
        int nlines = (int)keel_rng_range(&rng, 1, 14);
        for (int l = 0; l < nlines && len < 1800; l++) {
            bool bad = bad_run && keel_rng_range(&rng, 0, 4) == 0;
            int kind = (int)keel_rng_range(&rng, 0, 9);
            if (kind <= 4) { // vertex
                int args = bad ? (int)keel_rng_range(&rng, 0, 6) : (int)keel_rng_range(&rng, 3, 4);
                len += (size_t)snprintf(text + len, sizeof text - len, "v");
                int wrong = bad ? (int)keel_rng_range(&rng, 0, args) : -1;
                for (int a = 0; a < args; a++) {
                    const char *n = a == wrong ? bad_numbers[keel_rng_range(&rng, 0, 9)]
                                               : good_numbers[keel_rng_range(&rng, 0, 11)];
                    len += (size_t)snprintf(text + len, sizeof text - len, " %s", n);
                }
                vertices++;
            } else if (kind <= 7 && vertices > 0) { // face
                int args = bad ? (int)keel_rng_range(&rng, 0, 6) : (int)keel_rng_range(&rng, 3, 6);
                len += (size_t)snprintf(text + len, sizeof text - len, "f");
                int wrong = bad ? (int)keel_rng_range(&rng, 0, args) : -1;
                for (int a = 0; a < args; a++) {
                    if (a == wrong) {
                        len += (size_t)snprintf(text + len, sizeof text - len, " %s",
                                                bad_corners[keel_rng_range(&rng, 0, 7)]);
                        continue;
                    }
                    int idx = (int)keel_rng_range(&rng, 1, vertices);
                    if (keel_rng_range(&rng, 0, 1))
                        idx = idx - vertices - 1; // the same vertex, relative
                    len += (size_t)snprintf(text + len, sizeof text - len, " ");
                    len += (size_t)snprintf(text + len, sizeof text - len, forms[keel_rng_range(&rng, 0, 3)], idx);
                }
            } else {
                len += (size_t)snprintf(text + len, sizeof text - len, "%s junk 1 2",
                                        keywords[keel_rng_range(&rng, 0, bad ? 9 : 7)]);
            }
            len += (size_t)snprintf(text + len, sizeof text - len, "%s", keel_rng_range(&rng, 0, 7) ? "\n" : "\r\n");
        }
        sim_obj_options o = sim_obj_default_options();
        o.unit_scale = keel_rng_range(&rng, 0, 1) ? "1" : "0.12";
        check_one(text, len, &o, &ok, &failed);
    }
    cr_log_info("statements: %d parsed, %d rejected", ok, failed);
    cr_assert_gt(ok, 1000);
    cr_assert_gt(failed, 1000);
}

// ---- the real maps ----------------------------------------------------------------

static sim_fx units(int64_t n) { return (sim_fx)sim_div_round_s64(n * 12 * 65536, 100); }

static void check_real_map(const char *file, uint32_t vertices, uint32_t triangles, int64_t x, int64_t y, int64_t z)
{
    const char *path = keel_test_level_path(file);
    if (!path)
        cr_skip_test("%s is absent (shared levels folder not found)", file);
    char saved[1200];
    snprintf(saved, sizeof saved, "%s", path);
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_level lvl;
    sim_error err;
    double t0 = now_seconds();
    int rc = sim_level_load_obj(saved, &o, &lvl, &err);
    double dt = now_seconds() - t0;
    cr_assert_eq(rc, 0, "%s", err.message);
    fprintf(stderr, "%s: %u vertices, %u triangles, loaded in %.1f ms\n", file, lvl.vertex_count, lvl.triangle_count,
            dt * 1e3);
    cr_assert_lt(dt, SLOW_BUILD ? 10.0 : 1.0);
    cr_assert_eq(lvl.vertex_count, vertices);
    cr_assert_eq(lvl.triangle_count, triangles);
    check_level_sane(&lvl);
    sim_aabb b = sim_level_bounds(&lvl);
    cr_assert(sim_v3_eq(b.min, sim_v3(units(-x), 0, units(-z))), "min %f %f %f", d(b.min.x), d(b.min.y), d(b.min.z));
    cr_assert(sim_v3_eq(b.max, sim_v3(units(x), units(y), units(z))), "max %f %f %f", d(b.max.x), d(b.max.y),
              d(b.max.z));
    sim_level_free(&lvl);
}

Test(level_maps, zdm2) { check_real_map("sauerbraten_zdm2.obj", 39488, 70754, 434, 324, 304); }

Test(level_maps, pandora) { check_real_map("sauerbraten_pandora.obj", 35780, 60810, 736, 448, 416); }

Test(level_maps, zdm2_first_vertex_and_z_up)
{
    const char *path = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!path)
        cr_skip_test("sauerbraten_zdm2.obj is absent");
    char saved[1200];
    snprintf(saved, sizeof saved, "%s", path);
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    o.up_axis = 'z';
    sim_level lvl;
    sim_error err;
    cr_assert_eq(sim_level_load_obj(saved, &o, &lvl, &err), 0, "%s", err.message);
    // "v 211 144 -84" read as Z-up: (211, -84, -144) units.
    cr_assert(sim_v3_eq(lvl.vertices[0], sim_v3(units(211), units(-84), units(-144))));
    sim_level_free(&lvl);
}

// ---- the built-in level -------------------------------------------------------------

static const char *builtin_markers[] = {
    "spawn",
    "floor_center",
    "floor_lane_start",
    "floor_lane_end",
    "stairs_100_start",
    "stairs_100_top",
    "stairs_200_start",
    "stairs_200_top",
    "stairs_300_start",
    "stairs_300_top",
    "stairs_350_start",
    "stairs_350_top",
    "stairs_400_start",
    "stairs_400_top",
    "stairs_500_start",
    "stairs_500_top",
    "stairs_600_start",
    "stairs_600_top",
    "ramp_20_start",
    "ramp_20_top",
    "ramp_40_start",
    "ramp_40_top",
    "ramp_50_start",
    "ramp_50_top",
    "ramp_60_start",
    "ramp_60_top",
    "vcorridor_start",
    "vcorridor_apex",
    "corner_start",
    "corner",
    "thinwall_front",
    "thinwall_back",
    "tunnel_entry",
    "tunnel_inside",
    "ledge_front",
    "ledge_top",
    "pit_edge",
    "pit_bottom",
    "boxrow_start",
    "boxrow_end",
    "platform_area",
    "obb_crate",
    "obb_crate_front",
};
#define BUILTIN_MARKERS (sizeof builtin_markers / sizeof *builtin_markers)

static bool box_is_axis_aligned(const sim_box_def *b)
{
    return sim_v3_eq(b->axis[0], sim_v3(SIM_FX_ONE, 0, 0)) && sim_v3_eq(b->axis[1], sim_v3(0, SIM_FX_ONE, 0)) &&
           sim_v3_eq(b->axis[2], sim_v3(0, 0, SIM_FX_ONE));
}

/// Heights (metres) of the surfaces crossing the vertical line at (x, z):
/// non-vertical triangles, and the tops and bottoms of boxes turned only
/// about Y. Returns how many were written to ys.
static int surfaces_at(const sim_level *l, double x, double z, double *ys, int max)
{
    int n = 0;
    for (uint32_t t = 0; t < l->triangle_count && n < max; t++) {
        sim_vec3 a = l->vertices[l->indices[3 * t]], b = l->vertices[l->indices[3 * t + 1]],
                 c = l->vertices[l->indices[3 * t + 2]];
        double ax = d(a.x), az = d(a.z), bx = d(b.x), bz = d(b.z), cx = d(c.x), cz = d(c.z);
        double det = (bx - ax) * (cz - az) - (cx - ax) * (bz - az);
        if (fabs(det) < 1e-9)
            continue;
        double u = ((x - ax) * (cz - az) - (cx - ax) * (z - az)) / det;
        double v = ((bx - ax) * (z - az) - (x - ax) * (bz - az)) / det;
        if (u < -1e-9 || v < -1e-9 || u + v > 1 + 1e-9)
            continue;
        ys[n++] = d(a.y) + u * (d(b.y) - d(a.y)) + v * (d(c.y) - d(a.y));
    }
    for (uint32_t i = 0; i < l->box_count && n + 1 < max; i++) {
        const sim_box_def *bx = &l->boxes[i];
        if (!sim_v3_eq(bx->axis[1], sim_v3(0, SIM_FX_ONE, 0)))
            continue;
        double rx = x - d(bx->center.x), rz = z - d(bx->center.z);
        double lx = rx * d(bx->axis[0].x) + rz * d(bx->axis[0].z);
        double lz = rx * d(bx->axis[2].x) + rz * d(bx->axis[2].z);
        if (fabs(lx) > d(bx->half.x) + 1e-9 || fabs(lz) > d(bx->half.z) + 1e-9)
            continue;
        ys[n++] = d(bx->center.y) + d(bx->half.y);
        ys[n++] = d(bx->center.y) - d(bx->half.y);
    }
    return n;
}

/// Highest surface at or below y (metres), or -1000 when none.
static double ground_below(const sim_level *l, double x, double y, double z)
{
    double ys[256], best = -1000;
    int n = surfaces_at(l, x, z, ys, 256);
    for (int i = 0; i < n; i++)
        if (ys[i] <= y + 1e-6 && ys[i] > best)
            best = ys[i];
    return best;
}

/// Lowest surface strictly above y + 1 cm, or 1000 when none.
static double ceiling_above(const sim_level *l, double x, double y, double z)
{
    double ys[256], best = 1000;
    int n = surfaces_at(l, x, z, ys, 256);
    for (int i = 0; i < n; i++)
        if (ys[i] > y + 0.01 && ys[i] < best)
            best = ys[i];
    return best;
}

static sim_vec3 marker(const sim_level *l, const char *name)
{
    const sim_marker *m = sim_level_find_marker(l, name);
    cr_assert_not_null(m, "marker %s is missing", name);
    return m->position;
}

Test(level_builtin, markers_stand_on_the_floor)
{
    sim_level lvl;
    cr_assert_eq(sim_level_builtin(&lvl), 0);
    cr_assert_eq(lvl.marker_count, BUILTIN_MARKERS);
    cr_assert_null(sim_level_find_marker(&lvl, "no_such_marker"));
    for (size_t i = 0; i < BUILTIN_MARKERS; i++) {
        sim_vec3 p = marker(&lvl, builtin_markers[i]);
        double x = d(p.x), y = d(p.y), z = d(p.z);
        cr_assert_float_eq(ground_below(&lvl, x, y, z), y, 1e-6, "%s is not on a surface", builtin_markers[i]);
        // Room to stand (1.8 m), except inside the 1.3 m tunnel.
        double room = ceiling_above(&lvl, x, y, z) - y;
        if (strcmp(builtin_markers[i], "tunnel_inside") == 0)
            cr_assert_float_eq(room, 1.3, 1e-4);
        else
            cr_assert_geq(room, 1.8, "%s has only %.2f m of headroom", builtin_markers[i], room);
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(builtin_markers[i], builtin_markers[j]);
    }
    sim_level_free(&lvl);
}

Test(level_builtin, size_bounds_and_determinism)
{
    sim_level a, b;
    cr_assert_eq(sim_level_builtin(&a), 0);
    cr_assert_eq(sim_level_builtin(&b), 0);
    fprintf(stderr, "built-in level: %u vertices, %u triangles, %u boxes, %u markers\n", a.vertex_count,
            a.triangle_count, a.box_count, a.marker_count);
    cr_assert_eq(a.triangle_count, 32800);
    cr_assert_eq(a.box_count, 48);
    check_level_sane(&a);
    sim_aabb bb = sim_level_bounds(&a);
    cr_assert(bb.min.x >= SIM_FX_INT(-100) && bb.min.y >= SIM_FX_INT(-100) && bb.min.z >= SIM_FX_INT(-100));
    cr_assert(bb.max.x <= SIM_FX_INT(100) && bb.max.y <= SIM_FX_INT(100) && bb.max.z <= SIM_FX_INT(100));
    cr_assert_eq(bb.min.y, -SIM_FX_INT(2));
    cr_assert_eq(level_digest(&a), level_digest(&b));
    // Pinned: any change to the level (or a platform computing it differently)
    // shows here. Update together with docs/levels.md when the level changes.
    cr_assert_eq(level_digest(&a), 0xb42b3a6ab8c6fb9eull, "digest %016llx", (unsigned long long)level_digest(&a));
    sim_level_free(&a);
    sim_level_free(&b);
}

Test(level_builtin, floor)
{
    sim_level lvl;
    cr_assert_eq(sim_level_builtin(&lvl), 0);
    uint32_t flat_up = 0;
    for (uint32_t t = 0; t < lvl.triangle_count; t++) {
        sim_vec3 a = lvl.vertices[lvl.indices[3 * t]], b = lvl.vertices[lvl.indices[3 * t + 1]],
                 c = lvl.vertices[lvl.indices[3 * t + 2]];
        if (a.y != 0 || b.y != 0 || c.y != 0)
            continue;
        int64_t ny = ((int64_t)b.z - a.z) * (c.x - a.x) - ((int64_t)b.x - a.x) * (c.z - a.z);
        cr_assert_gt(ny, 0, "floor triangle %u faces down", t);
        flat_up++;
    }
    cr_assert_geq(flat_up, 2000);
    // The lane is open floor along its length.
    sim_vec3 s = marker(&lvl, "floor_lane_start"), e = marker(&lvl, "floor_lane_end");
    cr_assert_eq(s.y, 0);
    cr_assert_eq(e.y, 0);
    cr_assert_eq(s.z, e.z);
    cr_assert_geq(d(e.x) - d(s.x), 15.0);
    for (double x = d(s.x) - 2; x <= d(e.x) + 2; x += 0.25)
        for (double dz = -3; dz <= 3; dz += 0.5)
            cr_assert_geq(ceiling_above(&lvl, x, 0, d(s.z) + dz), 1000);
    sim_level_free(&lvl);
}

static const sim_box_def *box_under(const sim_level *l, double x, double z, double top)
{
    for (uint32_t i = 0; i < l->box_count; i++) {
        const sim_box_def *b = &l->boxes[i];
        if (!box_is_axis_aligned(b))
            continue;
        if (fabs(x - d(b->center.x)) <= d(b->half.x) && fabs(z - d(b->center.z)) <= d(b->half.z) &&
            fabs(d(b->center.y) + d(b->half.y) - top) < 1e-4)
            return b;
    }
    return NULL;
}

Test(level_builtin, stairs)
{
    static const int step_mm[] = {100, 200, 300, 350, 400, 500, 600};
    sim_level lvl;
    cr_assert_eq(sim_level_builtin(&lvl), 0);
    for (int f = 0; f < 7; f++) {
        char name[32];
        snprintf(name, sizeof name, "stairs_%d_start", step_mm[f]);
        sim_vec3 start = marker(&lvl, name);
        snprintf(name, sizeof name, "stairs_%d_top", step_mm[f]);
        sim_vec3 top = marker(&lvl, name);
        cr_assert_eq(start.y, 0);
        cr_assert_eq(top.y, SIM_FX_MM(4 * step_mm[f]));
        cr_assert_eq(start.x, top.x);
        // Walking from start towards top crosses steps of exactly one height each.
        double x = d(start.x), prev = 0;
        int rises = 0;
        for (double z = d(start.z); z <= d(top.z); z += 0.05) {
            double g = ground_below(&lvl, x, 10, z);
            if (g > prev + 1e-6) {
                cr_assert_float_eq(g - prev, step_mm[f] / 1000.0, 1e-4, "flight %d", step_mm[f]);
                rises++;
            }
            prev = g;
        }
        cr_assert_eq(rises, 4);
    }
    // The 0.35 m flight: its first step's top is exactly 0.35 m.
    sim_vec3 s = marker(&lvl, "stairs_350_start");
    const sim_box_def *first = box_under(&lvl, d(s.x), d(s.z) + 1.2, 0.35);
    cr_assert_not_null(first);
    cr_assert_eq(first->center.y + first->half.y, SIM_FX_MM(350));
    sim_level_free(&lvl);
}

Test(level_builtin, ramps)
{
    static const int deg[] = {20, 40, 50, 60};
    sim_level lvl;
    cr_assert_eq(sim_level_builtin(&lvl), 0);
    for (int r = 0; r < 4; r++) {
        char name[32];
        snprintf(name, sizeof name, "ramp_%d_start", deg[r]);
        sim_vec3 start = marker(&lvl, name);
        snprintf(name, sizeof name, "ramp_%d_top", deg[r]);
        sim_vec3 top = marker(&lvl, name);
        cr_assert_eq(top.y, SIM_FX_INT(2));
        // Sample the slope 0.1 m up from its foot and 0.1 m below its crest.
        double x = d(start.x), z0 = d(start.z) + 1.0, run = 2.0 / tan(deg[r] * PI / 180);
        double ya = ground_below(&lvl, x, 10, z0 + 0.1), yb = ground_below(&lvl, x, 10, z0 + run - 0.1);
        double angle = atan2(yb - ya, run - 0.2) * 180 / PI;
        cr_assert_float_eq(angle, deg[r], 0.01, "ramp %d measures %.4f", deg[r], angle);
        cr_assert_float_eq(ground_below(&lvl, x, 10, z0 + run + 0.5), 2.0, 1e-6);
    }
    sim_level_free(&lvl);
}

Test(level_builtin, creases)
{
    sim_level lvl;
    cr_assert_eq(sim_level_builtin(&lvl), 0);
    // The V corridor: the two walls through the apex meet at 30 degrees.
    sim_vec3 apex = marker(&lvl, "vcorridor_apex");
    double dir[2][2];
    int walls = 0;
    for (uint32_t t = 0; t < lvl.triangle_count && walls < 2; t++) {
        // A wall triangle: one corner at the apex on the floor, one 3 m up, and
        // one on the floor elsewhere, which gives the wall's direction.
        const sim_vec3 *v[3];
        bool at_apex = false, tall = false;
        int other = -1;
        for (int k = 0; k < 3; k++) {
            v[k] = &lvl.vertices[lvl.indices[3 * t + k]];
            if (v[k]->y == SIM_FX_INT(3))
                tall = true;
            else if (v[k]->y == 0 && v[k]->x == apex.x && v[k]->z == apex.z)
                at_apex = true;
            else if (v[k]->y == 0)
                other = k;
        }
        if (!at_apex || !tall || other < 0)
            continue;
        double dx = d(v[other]->x) - d(apex.x), dz = d(v[other]->z) - d(apex.z);
        double len = hypot(dx, dz);
        dir[walls][0] = dx / len;
        dir[walls][1] = dz / len;
        walls++;
    }
    cr_assert_eq(walls, 2);
    double angle = acos(dir[0][0] * dir[1][0] + dir[0][1] * dir[1][1]) * 180 / PI;
    cr_assert_float_eq(angle, 30.0, 0.01);
    // The opening is behind the start marker, wide enough for a 0.8 m capsule there.
    sim_vec3 s = marker(&lvl, "vcorridor_start");
    double width = 2 * (d(s.z) - d(apex.z)) * tan(15 * PI / 180);
    cr_assert_gt(width, 2.0);

    // The corner: walls along x and z meet at the marker.
    sim_vec3 c = marker(&lvl, "corner");
    int touching = 0;
    for (uint32_t v = 0; v < lvl.vertex_count; v++)
        touching += lvl.vertices[v].x == c.x && lvl.vertices[v].z == c.z && lvl.vertices[v].y == SIM_FX_INT(3);
    cr_assert_geq(touching, 2);
    sim_level_free(&lvl);
}

Test(level_builtin, thin_wall_tunnel_ledge_pit)
{
    sim_level lvl;
    cr_assert_eq(sim_level_builtin(&lvl), 0);
    // The thin wall lies between its two markers and is 1 cm thick.
    sim_vec3 f = marker(&lvl, "thinwall_front"), bk = marker(&lvl, "thinwall_back");
    const sim_box_def *thin = NULL;
    for (uint32_t i = 0; i < lvl.box_count; i++)
        if (lvl.boxes[i].half.z < SIM_FX_MM(10))
            thin = &lvl.boxes[i];
    cr_assert_not_null(thin);
    cr_assert_float_eq(2 * d(thin->half.z), 0.01, 1e-4);
    cr_assert_float_eq(2 * d(thin->half.y), 3.0, 1e-6);
    cr_assert_float_eq(2 * d(thin->half.x), 4.0, 1e-6);
    cr_assert_float_eq(d(f.z) - d(thin->center.z), 2.0, 1e-6);
    cr_assert_float_eq(d(thin->center.z) - d(bk.z), 2.0, 1e-6);
    cr_assert_eq(f.x, thin->center.x);

    // Tunnel: 1.3 m of room inside, open sky at the entry.
    sim_vec3 in = marker(&lvl, "tunnel_inside"), en = marker(&lvl, "tunnel_entry");
    cr_assert_eq(ceiling_above(&lvl, d(in.x), 0, d(in.z)), d(SIM_FX_MM(1300)));
    cr_assert_geq(ceiling_above(&lvl, d(en.x), 0, d(en.z)), 1000);
    for (double z = d(in.z) - 1.9; z <= d(in.z) + 1.9; z += 0.1)
        cr_assert_float_eq(ceiling_above(&lvl, d(in.x), 0, z), d(SIM_FX_MM(1300)), 1e-9);

    // Ledge: 1.5 m above the floor in front of it.
    sim_vec3 lf = marker(&lvl, "ledge_front"), lt = marker(&lvl, "ledge_top");
    cr_assert_eq(lt.y, SIM_FX_MM(1500));
    cr_assert_eq(lf.y, 0);

    // Pit: 2 m deep, nothing at floor level over it.
    sim_vec3 pb = marker(&lvl, "pit_bottom"), pe = marker(&lvl, "pit_edge");
    cr_assert_eq(pb.y, -SIM_FX_INT(2));
    cr_assert_float_eq(ground_below(&lvl, d(pb.x), 1, d(pb.z)), -2.0, 1e-6);
    for (double dx = -1.4; dx <= 1.4; dx += 0.2)
        for (double dz = -1.4; dz <= 1.4; dz += 0.2)
            cr_assert_float_eq(ground_below(&lvl, d(pb.x) + dx, 1, d(pb.z) + dz), -2.0, 1e-6);
    cr_assert_float_eq(ground_below(&lvl, d(pe.x), 1, d(pe.z)), 0.0, 1e-6);
    cr_assert_float_eq(ground_below(&lvl, d(pe.x), 1, d(pe.z) - 0.99), 0.0, 1e-6);
    cr_assert_float_eq(ground_below(&lvl, d(pe.x), 1, d(pe.z) - 1.01), -2.0, 1e-6);
    sim_level_free(&lvl);
}

Test(level_builtin, box_row_and_crate)
{
    sim_level lvl;
    cr_assert_eq(sim_level_builtin(&lvl), 0);
    sim_vec3 s = marker(&lvl, "boxrow_start"), e = marker(&lvl, "boxrow_end");
    cr_assert_eq(s.y, SIM_FX_HALF);
    cr_assert_eq(e.y, SIM_FX_HALF);
    cr_assert_eq(s.z, e.z);
    // Boxes under the walk from start to end: tops coplanar, faces touching.
    const sim_box_def *row[32];
    int n = 0;
    for (uint32_t i = 0; i < lvl.box_count && n < 32; i++) {
        const sim_box_def *b = &lvl.boxes[i];
        if (box_is_axis_aligned(b) && b->center.y + b->half.y == SIM_FX_HALF && b->center.z == s.z)
            row[n++] = b;
    }
    cr_assert_geq(n, 8);
    for (int i = 1; i < n; i++) {
        cr_assert_eq(row[i - 1]->center.x + row[i - 1]->half.x, row[i]->center.x - row[i]->half.x);
        cr_assert_eq(row[i]->center.y, row[0]->center.y);
        cr_assert_eq(row[i]->half.y, row[0]->half.y);
        cr_assert_eq(row[i]->half.z, row[0]->half.z);
    }
    cr_assert_eq(row[0]->center.x, s.x);
    cr_assert_eq(row[n - 1]->center.x, e.x);

    // At least one oriented box, with orthonormal axes (to rounding).
    int oriented = 0;
    for (uint32_t i = 0; i < lvl.box_count; i++) {
        const sim_box_def *b = &lvl.boxes[i];
        if (box_is_axis_aligned(b))
            continue;
        oriented++;
        for (int k = 0; k < 3; k++) {
            double len = sqrt(pow(d(b->axis[k].x), 2) + pow(d(b->axis[k].y), 2) + pow(d(b->axis[k].z), 2));
            cr_assert_float_eq(len, 1.0, 1e-4);
            int j = (k + 1) % 3;
            double dot = d(b->axis[k].x) * d(b->axis[j].x) + d(b->axis[k].y) * d(b->axis[j].y) +
                         d(b->axis[k].z) * d(b->axis[j].z);
            cr_assert_float_eq(dot, 0.0, 1e-4);
        }
        sim_vec3 top = marker(&lvl, "obb_crate");
        cr_assert_eq(top.x, b->center.x);
        cr_assert_eq(top.y, b->center.y + b->half.y);
    }
    cr_assert_eq(oriented, 1);

    // The platform area is empty floor, 6 m x 6 m.
    sim_vec3 pa = marker(&lvl, "platform_area");
    for (double dx = -3; dx <= 3; dx += 0.25)
        for (double dz = -3; dz <= 3; dz += 0.25) {
            cr_assert_float_eq(ground_below(&lvl, d(pa.x) + dx, 50, d(pa.z) + dz), 0.0, 1e-6);
            cr_assert_geq(ceiling_above(&lvl, d(pa.x) + dx, 0, d(pa.z) + dz), 1000);
        }
    sim_level_free(&lvl);
}

// ---- builder ----------------------------------------------------------------------

Test(level_builder, basics_and_sticky_failure)
{
    sim_level_builder b;
    sim_level out;
    sim_level_builder_init(&b);
    sim_level_builder_quad(&b, sim_v3(0, 0, 0), sim_v3(0, 0, SIM_FX_ONE), sim_v3(SIM_FX_ONE, 0, SIM_FX_ONE),
                           sim_v3(SIM_FX_ONE, 0, 0));
    sim_level_builder_aabox(&b, sim_v3(0, 0, 0), sim_v3(3, SIM_FX_ONE, SIM_FX_HALF));
    sim_level_builder_marker(&b, "a_name_of_exactly_31_characters", sim_v3(1, 2, 3));
    cr_assert_eq(sim_level_builder_finish(&b, &out), 0);
    cr_assert_eq(out.vertex_count, 4);
    cr_assert_eq(out.triangle_count, 2);
    cr_assert_eq(out.box_count, 1);
    // Max corner exact; the odd raw sum moves min down by one unit.
    cr_assert_eq(out.boxes[0].center.x + out.boxes[0].half.x, 3);
    cr_assert_eq(out.boxes[0].center.x - out.boxes[0].half.x, -1);
    cr_assert_eq(out.boxes[0].center.y - out.boxes[0].half.y, 0);
    cr_assert_not_null(sim_level_find_marker(&out, "a_name_of_exactly_31_characters"));
    sim_aabb bb = sim_level_bounds(&out);
    cr_assert(sim_v3_eq(bb.min, sim_v3(-1, 0, 0)));
    cr_assert(sim_v3_eq(bb.max, sim_v3(SIM_FX_ONE, SIM_FX_ONE, SIM_FX_ONE)));
    sim_level_free(&out);

    sim_level_builder_init(&b);
    sim_level_builder_tri(&b, sim_v3(0, 0, 0), sim_v3(1, 0, 0), sim_v3(0, 0, 1));
    sim_level_builder_marker(&b, "a_name_of_exactly_32_characters!", sim_v3(0, 0, 0));
    cr_assert(b.failed);
    sim_level_builder_tri(&b, sim_v3(0, 0, 0), sim_v3(1, 0, 0), sim_v3(0, 0, 1));
    cr_assert_eq(sim_level_builder_finish(&b, &out), -1);
    cr_assert(level_is_empty(&out));

    sim_level_builder_init(&b);
    sim_level_builder_vertex(&b, sim_v3(0, 0, 0));
    sim_level_builder_triangle(&b, 0, 0, 1); // vertex 1 does not exist
    cr_assert_eq(sim_level_builder_finish(&b, &out), -1);

    // Bounds of an oriented box cover its corners; an empty level has zero bounds.
    sim_level_builder_init(&b);
    sim_box_def ob = {sim_v3(0, 0, 0),
                      sim_v3(SIM_FX_ONE, SIM_FX_ONE, SIM_FX_ONE),
                      {sim_v3(46341, 0, -46341), sim_v3(0, SIM_FX_ONE, 0), sim_v3(46341, 0, 46341)}};
    sim_level_builder_box(&b, ob);
    cr_assert_eq(sim_level_builder_finish(&b, &out), 0);
    bb = sim_level_bounds(&out);
    cr_assert_geq(bb.max.x, 92682); // sqrt(2) m, rounded up
    cr_assert_leq(bb.max.x, 92684);
    cr_assert_eq(bb.max.y, SIM_FX_ONE);
    sim_level_free(&out);
    bb = sim_level_bounds(&out);
    cr_assert(sim_v3_is_zero(bb.min) && sim_v3_is_zero(bb.max));
}

// ---- generated levels -----------------------------------------------------------

Test(level_generate, benchmark_level)
{
    sim_level a, b, c;
    double t0 = now_seconds();
    cr_assert_eq(sim_level_generate(&a, 200000, 1), 0);
    double dt = now_seconds() - t0;
    fprintf(stderr, "generated level: %u vertices, %u triangles, %u boxes in %.1f ms\n", a.vertex_count,
            a.triangle_count, a.box_count, dt * 1e3);
    cr_assert_geq(a.triangle_count, 200000);
    check_level_sane(&a);
    sim_aabb bb = sim_level_bounds(&a);
    cr_assert(bb.min.x >= SIM_FX_INT(-1000) && bb.min.y >= SIM_FX_INT(-1000) && bb.min.z >= SIM_FX_INT(-1000));
    cr_assert(bb.max.x <= SIM_FX_INT(1000) && bb.max.y <= SIM_FX_INT(1000) && bb.max.z <= SIM_FX_INT(1000));
    cr_assert_not_null(sim_level_find_marker(&a, "spawn"));

    // Same seed, same bytes; another seed, another level.
    cr_assert_eq(sim_level_generate(&b, 200000, 1), 0);
    cr_assert_eq(level_digest(&a), level_digest(&b));
    cr_assert_eq(sim_level_generate(&c, 200000, 2), 0);
    cr_assert_neq(level_digest(&a), level_digest(&c));
    cr_assert_eq(level_digest(&a), 0x91d75673a04cbbe4ull, "digest %016llx",
                 (unsigned long long)level_digest(&a)); // pinned, as for the built-in level
    cr_assert_eq(a.triangle_count, 200260);

    // Mostly walkable: at least 90% of the triangles face up at 45 degrees or less.
    uint32_t walkable = 0;
    for (uint32_t t = 0; t < a.triangle_count; t++) {
        sim_vec3 p = a.vertices[a.indices[3 * t]], q = a.vertices[a.indices[3 * t + 1]],
                 r = a.vertices[a.indices[3 * t + 2]];
        double ux = d(q.x) - d(p.x), uy = d(q.y) - d(p.y), uz = d(q.z) - d(p.z);
        double vx = d(r.x) - d(p.x), vy = d(r.y) - d(p.y), vz = d(r.z) - d(p.z);
        double nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
        double len = sqrt(nx * nx + ny * ny + nz * nz);
        if (len <= 0)
            continue;
        walkable += ny / len >= sqrt(0.5);
    }
    cr_assert_geq(walkable, a.triangle_count * 9 / 10 - 1, "%u of %u walkable", walkable, a.triangle_count);
    sim_level_free(&a);
    sim_level_free(&b);
    sim_level_free(&c);

    cr_assert_eq(sim_level_generate(&a, 0, 7), 0);
    cr_assert_gt(a.triangle_count, 0);
    sim_level_free(&a);
    cr_assert_eq(sim_level_generate(&a, 2000000, 3), 0);
    cr_assert_geq(a.triangle_count, 2000000);
    bb = sim_level_bounds(&a);
    cr_assert(bb.min.x >= SIM_FX_INT(-1000) && bb.max.x <= SIM_FX_INT(1000));
    cr_assert(bb.min.z >= SIM_FX_INT(-1000) && bb.max.z <= SIM_FX_INT(1000));
    sim_level_free(&a);
    cr_assert_eq(sim_level_generate(&a, 100000000, 3), -1);
    cr_assert(level_is_empty(&a));
}
