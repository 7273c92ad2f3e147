// keel tests: the Quake .map loader (parsing, errors, brushes, CSG union, entities). MIT licence.
#define _POSIX_C_SOURCE 200809L // clock_gettime under -std=c11
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/sim_level.h>
#include <keel/sim_world.h>

#include "map_reference.h"
#include "test_support.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double d(sim_fx v) { return (double)v / 65536.0; }

/// Area of the level's triangles in square metres.
static double level_area(const sim_level *l)
{
    double area = 0;
    for (uint32_t t = 0; t < l->triangle_count; t++) {
        const sim_vec3 *a = &l->vertices[l->indices[3 * t]], *b = &l->vertices[l->indices[3 * t + 1]],
                       *c = &l->vertices[l->indices[3 * t + 2]];
        double u[3] = {d(b->x - a->x), d(b->y - a->y), d(b->z - a->z)};
        double v[3] = {d(c->x - a->x), d(c->y - a->y), d(c->z - a->z)};
        double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        area += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    }
    return area;
}

static int parse(const char *text, sim_level *l, sim_map *m, sim_error *e)
{
    return sim_level_parse_map("t.map", text, strlen(text), NULL, l, m, e);
}

/// A box brush from (x0,y0,z0) to (x1,y1,z1) in Quake units, standard format.
static int box_brush(char *out, size_t cap, int x0, int y0, int z0, int x1, int y1, int z1, const char *tex)
{
    return snprintf(out, cap,
                    "{\n"
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // x0 (-x)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // x1 (+x)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // y0 (-y)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // y1 (+y)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // z0 (-z)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // z1 (+z)
                    "}\n",
                    x0, 0, 0, x0, 1, 0, x0, 0, 1, tex, //
                    x1, 0, 0, x1, 0, 1, x1, 1, 0, tex, //
                    0, y0, 0, 0, y0, 1, 1, y0, 0, tex, //
                    0, y1, 0, 1, y1, 0, 0, y1, 1, tex, //
                    0, 0, z0, 1, 0, z0, 0, 1, z0, tex, //
                    0, 0, z1, 0, 1, z1, 1, 0, z1, tex);
}

Test(level_map, one_box_standard_format)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "// Game: Quake\n// Format: Standard\n{\n\"classname\" \"worldspawn\"\n");
    n += (size_t)box_brush(text + n, sizeof text - n, -64, -32, 0, 64, 32, 16, "floor");
    snprintf(text + n, sizeof text - n, "}\n");
    sim_level l;
    sim_map m;
    sim_error e;
    cr_assert_eq(parse(text, &l, &m, &e), 0, "%s", e.message);
    cr_assert_eq(l.triangle_count, 12);
    cr_assert_eq(m.brush_count, 1);
    cr_assert_eq(m.solid_brush_count, 1);
    cr_assert_eq(m.entity_count, 1);
    cr_assert_str_eq(m.entities[0].classname, "worldspawn");
    cr_assert_eq(m.entities[0].role, SIM_MAP_ROLE_WORLD);
    sim_aabb b = sim_level_bounds(&l);
    // 128 x 64 x 16 units at 2.5 cm, Z-up to Y-up: x = x, y = z, z = -y
    cr_assert_eq(b.min.x, -104858); // 1.6 m
    cr_assert_eq(b.max.x, 104858);
    cr_assert_eq(b.min.y, 0);
    cr_assert_eq(b.max.y, 26214); // 0.4 m
    cr_assert_eq(b.min.z, -52429); // 0.8 m
    cr_assert_eq(b.max.z, 52429);
    cr_assert_float_eq(level_area(&l), 2 * (3.2 * 1.6 + 3.2 * 0.4 + 1.6 * 0.4), 1e-4);
    // every triangle faces out of the box
    for (uint32_t t = 0; t < l.triangle_count; t++) {
        const sim_vec3 *a = &l.vertices[l.indices[3 * t]], *p = &l.vertices[l.indices[3 * t + 1]],
                       *c = &l.vertices[l.indices[3 * t + 2]];
        double u[3] = {d(p->x - a->x), d(p->y - a->y), d(p->z - a->z)};
        double v[3] = {d(c->x - a->x), d(c->y - a->y), d(c->z - a->z)};
        double nrm[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        double ctr[3] = {d(a->x + p->x + c->x) / 3, d(a->y + p->y + c->y) / 3 - 0.2, d(a->z + p->z + c->z) / 3};
        cr_assert_gt(nrm[0] * ctr[0] + nrm[1] * ctr[1] + nrm[2] * ctr[2], 0, "triangle %u faces inward", t);
    }
    sim_level_free(&l);
    sim_map_free(&m);
}

/// A worldspawn of box brushes given as x0 y0 z0 x1 y1 z1 sextets.
static char *boxes_map(const int *b, int count)
{
    size_t cap = 256 + (size_t)count * 512, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text + n, cap - n, "{\n\"classname\" \"worldspawn\"\n");
    for (int i = 0; i < count; i++)
        n += (size_t)box_brush(text + n, cap - n, b[6 * i], b[6 * i + 1], b[6 * i + 2], b[6 * i + 3], b[6 * i + 4],
                               b[6 * i + 5], "wall");
    snprintf(text + n, cap - n, "}\n");
    return text;
}

static void check_union_area(const char *text, double expected_units2)
{
    sim_level l;
    sim_map m;
    sim_error e;
    cr_assert_eq(parse(text, &l, &m, &e), 0, "%s", e.message);
    cr_assert(m.csg_complete);
    double got = level_area(&l) / (0.025 * 0.025);
    cr_assert_float_eq(got, expected_units2, expected_units2 * 1e-5, "area %f units^2, expected %f", got,
                       expected_units2);
    map_ref r;
    cr_assert_eq(map_ref_read(text, &r), 0);
    double ref = map_ref_union_area(&r, 0.05, 7);
    cr_assert_float_eq(ref, expected_units2, expected_units2 * 0.02, "reference %f, expected %f", ref,
                       expected_units2);
    map_ref_free(&r);
    sim_level_free(&l);
    sim_map_free(&m);
}

Test(level_map_csg, touching_boxes_lose_the_faces_between_them)
{
    // three 64-unit cubes in a row: one 192 x 64 x 64 box
    const int b[] = {0, 0, 0, 64, 64, 64, 64, 0, 0, 128, 64, 64, 128, 0, 0, 192, 64, 64};
    char *text = boxes_map(b, 3);
    check_union_area(text, 4.0 * 192 * 64 + 2.0 * 64 * 64);
    free(text);
}

Test(level_map_csg, overlapping_and_flush_boxes)
{
    // a slab, a box sunk half into it, a box standing on it (its bottom on
    // the slab's top) and a second copy of the slab
    const int b[] = {0, 0, 0, 256, 256, 32, 64, 64, 16, 128, 128, 64, 160, 160, 32, 224, 224, 96, 0, 0, 0, 256, 256, 32};
    char *text = boxes_map(b, 4);
    double slab = 2.0 * 256 * 256 + 4.0 * 256 * 32;
    double sunk = 64 * 64 + 4.0 * 64 * 32; // its top and its sides above the slab
    double flush = 64 * 64 + 4.0 * 64 * 64;
    double expected = slab - 64 * 64 - 64 * 64 + sunk + flush;
    check_union_area(text, expected);
    free(text);
}

static void check_real_map(const char *file, uint32_t brushes, uint32_t spawns)
{
    const char *path = keel_test_level_path(file);
    if (!path) {
        keel_test_warn("%s is absent: skipped", file);
        return;
    }
    char saved[1200];
    snprintf(saved, sizeof saved, "%s", path);
    sim_level l;
    sim_map m;
    sim_error e;
    double t0 = now_seconds();
    int rc = sim_level_load_map(saved, NULL, &l, &m, &e);
    double dt = now_seconds() - t0;
    cr_assert_eq(rc, 0, "%s", e.message);
    cr_assert_eq(m.brush_count, brushes);
    cr_assert(m.csg_complete);
    uint32_t markers = 0;
    for (uint32_t i = 0; i < l.marker_count; i++)
        markers += strncmp(l.markers[i].name, "spawn", 5) == 0;
    cr_assert_eq(markers, spawns);
    double t1 = now_seconds();
    sim_world *w = sim_world_create(&l, NULL, &e);
    double dw = now_seconds() - t1;
    cr_assert_not_null(w);
    fprintf(stderr,
            "%s: %u entities, %u brushes (%u solid), %u faces; %u pieces after the union, %u triangles; "
            "loaded in %.1f ms, world built in %.1f ms; %u unknown classnames\n",
            file, m.entity_count, m.brush_count, m.solid_brush_count, m.face_count, m.csg_fragments, l.triangle_count,
            dt * 1e3, dw * 1e3, m.unknown_count);
    // The union's surface against the reference computed in double.
    char *text = keel_test_read_file(saved);
    map_ref r;
    cr_assert_eq(map_ref_read(text, &r), 0);
    double ref = map_ref_union_area(&r, 0.02, 11), all = map_ref_total_area(&r);
    double got = level_area(&l) / (0.025 * 0.025);
    fprintf(stderr, "%s: surface %.0f units^2 (reference union %.0f, all faces %.0f)\n", file, got, ref, all);
    cr_assert_float_eq(got, ref, ref * 0.02, "surface %f units^2 against the reference union's %f", got, ref);
    map_ref_free(&r);
    free(text);
    sim_world_destroy(w);
    sim_level_free(&l);
    sim_map_free(&m);
}

Test(level_map_real, lqdm1, .timeout = 300) { check_real_map("librequake/lqdm1.map", 389, 9); }

Test(level_map_real, lqdm2, .timeout = 300) { check_real_map("librequake/lqdm2_a6.map", 130, 6); }
