// keel tests: world building stays bounded whatever the triangles' arrangement,
// and leaves ordinary levels exactly as classified before. MIT licence.
//
// Work is asserted through the deterministic counter in sim_world_stats
// (classify_tests: box tests made by internal-edge classification), never
// through time.
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_world.h>

#include "map_city.h"
#include "test_support.h"
#include "world_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

// ---- levels -------------------------------------------------------------------------

// `count` triangles with every corner drawn in a 2 cm cube.
static sim_level cube_level(uint32_t count, uint64_t seed)
{
    sim_level_builder b;
    sim_level_builder_init(&b);
    keel_rng r = {seed};
    for (uint32_t i = 0; i < count; i++) {
        sim_vec3 p[3];
        for (int k = 0; k < 3; k++) {
            sim_fx x = keel_rng_fx(&r, 0, SIM_FX_MM(20));
            sim_fx y = keel_rng_fx(&r, 0, SIM_FX_MM(20));
            sim_fx z = keel_rng_fx(&r, 0, SIM_FX_MM(20));
            p[k] = sim_v3(x, y, z);
        }
        sim_level_builder_tri(&b, p[0], p[1], p[2]);
    }
    sim_level l;
    cr_assert_eq(sim_level_builder_finish(&b, &l), 0);
    return l;
}

// A convex polygon of `corners` corners on a 10 m circle in the floor plane,
// through the OBJ loader: with a centre vertex and one triangle per side
// (fan), or as one face listing every corner (the loader fans it from its
// first corner).
static sim_level polygon_level(int corners, bool fan)
{
    size_t cap = (size_t)corners * 48 + 64, n = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    if (fan)
        n += (size_t)snprintf(text + n, cap - n, "v 0 0 0\n");
    for (int i = 0; i < corners; i++) {
        double a = 6.283185307179586 * (double)i / (double)corners;
        n += (size_t)snprintf(text + n, cap - n, "v %.6f 0 %.6f\n", 10.0 * cos(a), -10.0 * sin(a));
    }
    if (fan) {
        for (int i = 0; i < corners; i++)
            n += (size_t)snprintf(text + n, cap - n, "f 1 %d %d\n", 2 + i, 2 + (i + 1) % corners);
    } else {
        n += (size_t)snprintf(text + n, cap - n, "f");
        for (int i = 0; i < corners; i++)
            n += (size_t)snprintf(text + n, cap - n, " %d", 1 + i);
        n += (size_t)snprintf(text + n, cap - n, "\n");
    }
    sim_obj_options o = sim_obj_default_options();
    sim_level l;
    sim_error err;
    int rc = sim_level_parse_obj("polygon.obj", text, n, &o, &l, &err);
    free(text);
    cr_assert_eq(rc, 0, "%s", err.message);
    return l;
}

// ---- checks ---------------------------------------------------------------------------

// Builds the world and checks that classification stayed within a constant
// amount of work per triangle: at most `per_tri` box tests on average, never
// more than the hard bound (per triangle one walk for the edges, one for a
// possible burial and three for the vertices; as much again for the pass
// after dropping buried faces, and one walk per dropped face to find its
// neighbours).
static uint64_t build_digest(const sim_world *w);

// ... and that it decided exactly as before: the digest of the world against
// `digest` (0: not pinned).
static sim_world_stats build_bounded(const char *name, sim_level *l, uint64_t per_tri, uint64_t digest)
{
    sim_world *w = sim_world_create(l, NULL, NULL);
    cr_assert_not_null(w, "%s: no world", name);
    sim_world_stats st = sim_world_get_stats(w);
    uint64_t d = build_digest(w);
    cr_assert(digest == 0 || d == digest, "%s: build digest 0x%016llx", name, (unsigned long long)d);
    uint64_t n = st.triangle_count ? st.triangle_count : 1;
    cr_log_info("%s: %u triangles, %.1f box tests per triangle, %u queries gave up", name, st.triangle_count,
                (double)st.classify_tests / (double)n, st.classify_capped);
    cr_assert_leq(st.classify_tests, per_tri * n, "%s: %llu box tests for %u triangles", name,
                  (unsigned long long)st.classify_tests, st.triangle_count);
    cr_assert_leq(st.classify_tests, (uint64_t)SIM_EDGES_MAX_TESTS * (10 * n + 6 * (uint64_t)st.buried_count));
    sim_world_destroy(w);
    sim_level_free(l);
    return st;
}

Test(world_build, crowded_cube_is_bounded, .timeout = 300)
{
    // Today's figures are 545 to 663 box tests per triangle; an exhaustive
    // classification would need about as many per triangle as there are
    // triangles.
    static const uint32_t counts[] = {5000, 20000, 100000};
    int runs = SANITIZED ? 2 : 3;
    double first = 0;
    for (int i = 0; i < runs; i++) {
        char name[32];
        snprintf(name, sizeof name, "cube2cm_%u", counts[i]);
        sim_level l = cube_level(counts[i], 7);
        sim_world_stats st = build_bounded(name, &l, 1024, i == 0 ? UINT64_C(0x63604c0a35b0b9bb) : 0);
        cr_assert_gt(st.classify_capped, 0, "%s: the crowd went unnoticed", name);
        double per = (double)st.classify_tests / (double)st.triangle_count;
        if (i == 0)
            first = per;
        else // near-linear: the work per triangle hardly grows with the count
            cr_assert_lt(per, 1.5 * first, "%s: %.1f box tests per triangle, %.1f at 5,000", name, per, first);
    }
}

Test(world_build, fan_and_polygon_are_bounded, .timeout = 300)
{
    // 10,000 corners; 2,500 under the sanitizers (still more than twice the
    // limit around each spoke), where the segment tests are slow.
    int corners = SANITIZED ? 2500 : 10000;
    for (int fan = 1; fan >= 0; fan--) {
        const char *name = fan ? "fan" : "polygon";
        sim_level l = polygon_level(corners, fan);
        sim_world *w = sim_world_create(&l, NULL, NULL);
        cr_assert_not_null(w);
        // The crowded spokes stay active, which is safe: a ray still lands on
        // the floor.
        sim_ray_input in = {sim_v3(SIM_FX_INT(3), SIM_FX_INT(2), SIM_FX_INT(1)), sim_v3(0, -SIM_FX_INT(4), 0)};
        sim_ray_result hit;
        cr_assert(sim_world_raycast(w, &in, &hit), "%s: the ray fell through", name);
        cr_assert_leq(sim_fx_abs(hit.point.y), SIM_FX_MM(1));
        sim_world_destroy(w);
        // (digests for 10,000 corners and for 2,500)
        static const uint64_t digest[2][2] = {{UINT64_C(0x9804aeb46163b015), UINT64_C(0xc0d5bef4719e9365)},
                                              {UINT64_C(0x8f8f9c04db6ec9f3), UINT64_C(0x0c440796efe9c3ca)}};
        sim_world_stats st = build_bounded(name, &l, SIM_EDGES_MAX_TESTS, digest[SANITIZED][fan]);
        cr_assert_gt(st.classify_capped, 0);
    }
}

Test(world_build, tiny_real_map_is_bounded, .timeout = 300)
{
    const char *path = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!path)
        cr_skip_test("shared levels absent");
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.001";
    sim_level l;
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &l, &err), 0, "%s", err.message);
    build_bounded("zdm2 at 0.001", &l, SIM_EDGES_MAX_TESTS, UINT64_C(0xc74f7fa0c943cea2));
}

// ---- ordinary levels: classification exactly as before the limits ------------------

// Hash of every kept triangle's stable id and flags, in the world's order.
static uint64_t classification_hash(const sim_world *w)
{
    uint64_t h = SIM_HASH_SEED;
    for (uint32_t i = 0; i < w->tri_count; i++) {
        h = sim_hash_u32(h, w->tris[i].id);
        h = sim_hash_u32(h, w->tris[i].flags);
    }
    return h;
}

// Hash of everything world building decides: every kept triangle's id and
// flags in the world's order, every hierarchy node (bounds, first, count) and
// every figure of the stats, the work counters included. World building may
// get faster, never different: these are pinned.
static uint64_t build_digest(const sim_world *w)
{
    uint64_t h = classification_hash(w);
    for (uint32_t i = 0; i < w->node_count; i++) {
        const sim_bvh_node *nd = &w->nodes[i];
        const sim_fx c[6] = {nd->box.min.x, nd->box.min.y, nd->box.min.z, nd->box.max.x, nd->box.max.y, nd->box.max.z};
        for (int k = 0; k < 6; k++)
            h = sim_hash_u32(h, (uint32_t)c[k]);
        h = sim_hash_u32(h, nd->first);
        h = sim_hash_u32(h, nd->count);
    }
    sim_world_stats st = sim_world_get_stats(w);
    const uint32_t f[] = {st.triangle_count, st.degenerate_count, st.buried_count,   st.inactive_edges,
                          st.bvh_nodes,      st.bvh_depth,        st.classify_capped};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        h = sim_hash_u32(h, f[k]);
    return sim_hash_u64(h, st.classify_tests);
}

typedef struct pinned {
    uint32_t triangles, degenerate, buried, inactive, nodes, depth;
    uint64_t flags;
    uint64_t digest; ///< build_digest
} pinned;

// Values from the exhaustive classification (before the limits existed).
static void check_pinned(const char *name, sim_level *l, pinned p)
{
    sim_world *w = sim_world_create(l, NULL, NULL);
    cr_assert_not_null(w);
    sim_world_stats st = sim_world_get_stats(w);
    uint64_t h = classification_hash(w);
    cr_log_info("%s: %u triangles, %.1f box tests per triangle", name, st.triangle_count,
                (double)st.classify_tests / (double)(st.triangle_count ? st.triangle_count : 1));
    cr_assert_eq(st.classify_capped, 0, "%s: %u queries gave up", name, st.classify_capped);
    cr_assert_eq(st.triangle_count, p.triangles, "%s", name);
    cr_assert_eq(st.degenerate_count, p.degenerate, "%s", name);
    cr_assert_eq(st.buried_count, p.buried, "%s", name);
    cr_assert_eq(st.inactive_edges, p.inactive, "%s", name);
    cr_assert_eq(st.bvh_nodes, p.nodes, "%s", name);
    cr_assert_eq(st.bvh_depth, p.depth, "%s", name);
    cr_assert_eq(h, p.flags, "%s: classification hash 0x%016llx", name, (unsigned long long)h);
    uint64_t d = build_digest(w);
    cr_assert_eq(d, p.digest, "%s: build digest 0x%016llx", name, (unsigned long long)d);
    sim_world_destroy(w);
    sim_level_free(l);
}

Test(world_build, ordinary_levels_classified_as_before)
{
    sim_level l;
    cr_assert_eq(sim_level_builtin(&l), 0);
    check_pinned("builtin", &l,
                 (pinned){33317, 0, 59, 98547, 17481, 15, UINT64_C(0x9cd0694172076e75), UINT64_C(0xc41a9597aaa3f3ea)});
    cr_assert_eq(sim_level_generate(&l, 20000, 3), 0);
    check_pinned("generated 20000/3", &l,
                 (pinned){20388, 0, 0, 30480, 16199, 14, UINT64_C(0x55758535b194b8d8), UINT64_C(0x7de078446e7c5db1)});
}

static void check_map(const char *file, pinned p)
{
    const char *path = keel_test_level_path(file);
    if (!path)
        cr_skip_test("shared levels absent");
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_level l;
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &l, &err), 0, "%s", err.message);
    check_pinned(file, &l, p);
}

Test(world_build, zdm2_classified_as_before, .timeout = 600)
{
    check_map("sauerbraten_zdm2.obj",
              (pinned){70680, 63, 11, 87617, 43055, 16, UINT64_C(0x6d5484a1201d59d3), UINT64_C(0x8c694c30343c2fc4)});
}

Test(world_build, pandora_classified_as_before, .timeout = 600)
{
    check_map("sauerbraten_pandora.obj",
              (pinned){60694, 116, 0, 103720, 32767, 15, UINT64_C(0xa07e34321984758a), UINT64_C(0x4b1f10fb0343835f)});
}

static void check_quake_map(const char *file, pinned p)
{
    const char *path = keel_test_level_path(file);
    if (!path)
        cr_skip_test("shared levels absent");
    sim_level l;
    sim_error err;
    cr_assert_eq(sim_level_load_map(path, NULL, &l, NULL, &err), 0, "%s", err.message);
    check_pinned(file, &l, p);
}

Test(world_build, lqdm1_classified_as_before, .timeout = 600)
{
    check_quake_map("librequake/lqdm1.map",
                    (pinned){6246, 0, 0, 11999, 4095, 12, UINT64_C(0x084f038956f9d80d), UINT64_C(0xba4b3f1196205687)});
}

Test(world_build, lqdm2_classified_as_before, .timeout = 600)
{
    check_quake_map("librequake/lqdm2_a6.map",
                    (pinned){1927, 0, 0, 3442, 1023, 10, UINT64_C(0xe8945734040f5fab), UINT64_C(0xdc3077c9bd02d9ce)});
}

// The generated zdm2-sized .map of tests/support/map_city.c (3,000 brushes,
// some overlapping, T junctions everywhere) whose build time bench_query
// reports.
Test(world_build, three_thousand_brushes_classified_as_before, .timeout = 600)
{
    size_t len;
    char *text = map_city_text(&len);
    cr_assert_not_null(text);
    sim_level l;
    sim_error err;
    cr_assert_eq(sim_level_parse_map("city.map", text, len, NULL, &l, NULL, &err), 0, "%s", err.message);
    free(text);
    check_pinned("city.map", &l,
                 (pinned){50739, 8, 0, 94035, 32767, 15, UINT64_C(0x71c37e66fd67dec2), UINT64_C(0xa2d76b30a23a6321)});
}
