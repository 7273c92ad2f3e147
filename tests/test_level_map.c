// keel tests: the Quake .map loader (parsing, errors, brushes, CSG union, entities). MIT licence.
#define _POSIX_C_SOURCE 200809L // clock_gettime under -std=c11
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/sim_level.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "map_city.h"
#include "map_reference.h"
#include "test_support.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/// CPU time of this process: the machine is shared, so wall time overstates.
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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

Test(level_map, one_box_standard_format)
{
    char text[4096];
    size_t n =
        (size_t)snprintf(text, sizeof text, "// Game: Quake\n// Format: Standard\n{\n\"classname\" \"worldspawn\"\n");
    n += (size_t)map_box_brush(text + n, sizeof text - n, -64, -32, 0, 64, 32, 16, "floor");
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
    cr_assert_eq(b.max.y, 26214);  // 0.4 m
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
        n += (size_t)map_box_brush(text + n, cap - n, b[6 * i], b[6 * i + 1], b[6 * i + 2], b[6 * i + 3], b[6 * i + 4],
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
    cr_assert_float_eq(ref, expected_units2, expected_units2 * 0.02, "reference %f, expected %f", ref, expected_units2);
    map_ref_free(&r);
    sim_level_free(&l);
    sim_map_free(&m);
}

// `text` with every " 64 " written as " form " instead, into out.
static void rewrite_64(const char *text, const char *form, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 16 < cap;) {
        if (strncmp(p, " 64 ", 4) == 0) {
            n += (size_t)snprintf(out + n, cap - n, " %s ", form);
            p += 4;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
}

// The parser reads a plain integer directly: every other way of writing the
// same number gives the same level, and the limits and errors are the same.
Test(level_map, numbers_in_every_form_read_alike)
{
    char plain[4096], text[4096];
    size_t n = (size_t)snprintf(plain, sizeof plain, "{\n\"classname\" \"worldspawn\"\n");
    n += (size_t)map_box_brush(plain + n, sizeof plain - n, -64, -32, 0, 64, 32, 16, "floor");
    snprintf(plain + n, sizeof plain - n, "}\n");
    sim_level ref;
    sim_error e;
    cr_assert_eq(parse(plain, &ref, NULL, &e), 0, "%s", e.message);
    static const char *const forms[] = {"+64", "064", "0000064", "64.0", "64.", "6.4e1", "640e-1", "+64.000"};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        rewrite_64(plain, forms[f], text, sizeof text);
        cr_assert_str_neq(text, plain);
        sim_level l;
        cr_assert_eq(parse(text, &l, NULL, &e), 0, "%s: %s", forms[f], e.message);
        cr_assert_eq(l.vertex_count, ref.vertex_count, "%s", forms[f]);
        cr_assert_eq(l.triangle_count, ref.triangle_count, "%s", forms[f]);
        cr_assert_arr_eq(l.vertices, ref.vertices, ref.vertex_count * sizeof *ref.vertices, "%s", forms[f]);
        cr_assert_arr_eq(l.indices, ref.indices, 3 * ref.triangle_count * sizeof *ref.indices, "%s", forms[f]);
        sim_level_free(&l);
    }
    sim_level_free(&ref);
    // the coordinate limit (65,536 units) and bad tokens, plain or not
    static const char *const bad[] = {"65537", "+65537", "65537.0", "999999", "64a", "6-4", "--64"};
    static const char *const says[] = {"out of range", "out of range", "out of range", "out of range",
                                       "bad number",   "bad number",   "bad number"};
    for (size_t f = 0; f < sizeof bad / sizeof bad[0]; f++) {
        rewrite_64(plain, bad[f], text, sizeof text);
        sim_level l;
        cr_assert_eq(parse(text, &l, NULL, &e), -1, "%s", bad[f]);
        cr_assert(strstr(e.message, says[f]) != NULL, "%s: %s", bad[f], e.message);
    }
    rewrite_64(plain, "65536", text, sizeof text); // the limit itself is in range
    sim_level l;
    cr_assert_eq(parse(text, &l, NULL, &e), 0, "%s", e.message);
    sim_level_free(&l);
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
    const int b[] = {0,   0,   0,  256, 256, 32, 64, 64, 16, 128, 128, 64,
                     160, 160, 32, 224, 224, 96, 0,  0,  0,  256, 256, 32};
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
    double t0 = now_seconds(), c0 = cpu_seconds();
    int rc = sim_level_load_map(saved, NULL, &l, &m, &e);
    double dt = now_seconds() - t0, dc = cpu_seconds() - c0;
    cr_assert_eq(rc, 0, "%s", e.message);
    cr_assert_eq(m.brush_count, brushes);
    cr_assert(m.csg_complete);
    uint32_t markers = 0;
    for (uint32_t i = 0; i < l.marker_count; i++)
        markers += strncmp(l.markers[i].name, "spawn", 5) == 0;
    cr_assert_eq(markers, spawns);
    double t1 = cpu_seconds();
    sim_world *w = sim_world_create(&l, NULL, &e);
    double dw = cpu_seconds() - t1;
    cr_assert_not_null(w);
    fprintf(stderr,
            "%s: %u entities, %u brushes (%u solid), %u faces; %u pieces after the union, %u triangles; "
            "union work %llu; loaded in %.1f ms (cpu %.1f ms), world built in cpu %.1f ms; %u unknown classnames\n",
            file, m.entity_count, m.brush_count, m.solid_brush_count, m.face_count, m.csg_fragments, l.triangle_count,
            (unsigned long long)m.csg_work, dt * 1e3, dc * 1e3, dw * 1e3, m.unknown_count);
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

// ---- the formats -----------------------------------------------------------------

static const char VALVE[] =
    "// Game: Quake\n"
    "// Format: Valve\n"
    "// entity 0\n"
    "{\n"
    "\"mapversion\" \"220\"\n"
    "\"classname\" \"worldspawn\"\n"
    "\"message\" \"A room with a view\"\n"
    "// brush 0\n"
    "{\n"
    "( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 ) __TB_empty [ 0 -1 0 0 ] [ 0 0 -1 0 ] 0 1 1\n"
    "( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) __TB_empty [ 1 0 0 0 ] [ 0 0 -1 0 ] 0 1 1\n"
    "( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) __TB_empty [ -1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1\n"
    "( 64 64 0 ) ( 64 65 0 ) ( 65 64 0 ) __TB_empty [ 1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1\n"
    "( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 ) __TB_empty [ -1 0 0 0 ] [ 0 0 -1 0 ] 0 1 1\n"
    "( 64 64.0 16 ) ( 64 64 17 ) ( 64 65 16 ) \"name with space\" [ 0 1 0 0 ] [ 0 0 -1 0 ] "
    "-0 1.83697e-16 -2.22045e-16\n"
    "}\n"
    "}\n"
    "// entity 1\n"
    "{\n"
    "\"classname\" \"info_player_deathmatch\"\n"
    "\"origin\" \"-32 16 24\"\n"
    "\"angle\" \"90\"\n"
    "}\n"
    "{\n"
    "\"classname\" \"info_player_start\"\n"
    "\"origin\" \"32 -0 24.5\"\n"
    "\"angles\" \"0 -45.5 0\"\n"
    "}\n"
    "{\n"
    "\"classname\" \"monster_dog\"\n"
    "\"origin\" \"0 0 24\"\n"
    "}\n"
    "{\n"
    "\"classname\" \"monster_dog\"\n"
    "\"origin\" \"8 0 24\"\n"
    "}\n";

static char *valve_with(const char *from, const char *to);

Test(level_map, valve_format_entities_and_spawn_points)
{
    sim_level l;
    sim_map m;
    sim_error e;
    cr_assert_eq(parse(VALVE, &l, &m, &e), 0, "%s", e.message);
    cr_assert_eq(l.triangle_count, 12);
    cr_assert_eq(m.entity_count, 5);
    cr_assert_str_eq(sim_map_value(&m, &m.entities[0], "message"), "A room with a view");
    cr_assert_eq(m.entities[1].role, SIM_MAP_ROLE_SPAWN);
    cr_assert_eq(m.entities[1].yaw, SIM_FX_INT(90));
    cr_assert_eq(m.entities[2].yaw, -SIM_FX_INT(91) / 2);
    cr_assert_eq(m.entities[1].line, 19);
    // the origin in engine terms: (x, z, -y) * 0.025
    cr_assert(m.entities[1].has_origin);
    cr_assert_eq(m.entities[1].origin.x, -52429); // -0.8 m
    cr_assert_eq(m.entities[1].origin.y, 39322);  // 0.6 m
    cr_assert_eq(m.entities[1].origin.z, -26214); // -0.4 m
    // the marker stands at the feet, 24 units below the origin
    cr_assert_eq(l.marker_count, 3); // and the entities' digest (SIM_LEVEL_ENTITY_MARKER)
    cr_assert_str_eq(l.markers[2].name, SIM_LEVEL_ENTITY_MARKER);
    cr_assert_eq(sim_level_entity_digest(&l), sim_map_digest(&m));
    cr_assert_str_eq(l.markers[0].name, "spawn_dm");
    cr_assert_eq(l.markers[0].position.y, 0);
    cr_assert_str_eq(l.markers[1].name, "spawn_start");
    cr_assert_eq(l.markers[1].position.y, 819); // 0.5 units: 1.25 cm
    // the unknown classname once, its entities kept with their keys
    cr_assert_eq(m.unknown_count, 1);
    cr_assert_str_eq(m.unknown[0], "monster_dog");
    cr_assert_eq(m.entities[4].role, SIM_MAP_ROLE_OTHER);
    cr_assert_str_eq(sim_map_value(&m, &m.entities[4], "origin"), "8 0 24");
    // the digest covers the entities: one key changed changes it
    uint64_t digest = sim_map_digest(&m);
    sim_level_free(&l);
    sim_map_free(&m);
    char *t = valve_with("\"angle\" \"90\"", "\"angle\" \"91\"");
    cr_assert_eq(parse(t, &l, &m, &e), 0, "%s", e.message);
    free(t);
    cr_assert_neq(sim_map_digest(&m), digest);
    cr_assert_neq(sim_map_digest(NULL), digest);
    sim_level_free(&l);
    sim_map_free(&m);
}

Test(level_map, unit_scale_option)
{
    sim_map_options o = sim_map_default_options();
    o.unit_scale = "0.0254"; // an inch
    sim_level l;
    sim_error e;
    cr_assert_eq(sim_level_parse_map("t.map", VALVE, strlen(VALVE), &o, &l, NULL, &e), 0, "%s", e.message);
    sim_aabb b = sim_level_bounds(&l);
    cr_assert_eq(b.max.x, 106535); // 64 * 0.0254 m = 1.6256 m
    sim_level_free(&l);
    o.unit_scale = "0.1234567";
    cr_assert_eq(sim_level_parse_map("t.map", VALVE, strlen(VALVE), &o, &l, NULL, &e), -1);
    cr_assert_str_eq(e.message, "t.map: bad unit_scale '0.1234567' (a positive decimal with at most 6 significant "
                                "digits)");
}

// ---- errors --------------------------------------------------------------------

static void check_error(const char *text, const char *message)
{
    sim_level l;
    sim_map m;
    sim_error e;
    cr_assert_eq(parse(text, &l, &m, &e), -1, "parsed: %s", text);
    cr_expect_str_eq(e.message, message);
    cr_assert_eq(l.triangle_count, 0);
    cr_assert_null(l.vertices);
    cr_assert_null(m.entities);
}

/// VALVE with `from` replaced by `to` (first occurrence).
static char *valve_with(const char *from, const char *to)
{
    const char *at = strstr(VALVE, from);
    cr_assert_not_null(at);
    size_t n = strlen(VALVE) + strlen(to) + 1;
    char *t = malloc(n);
    snprintf(t, n, "%.*s%s%s", (int)(at - VALVE), VALVE, to, at + strlen(from));
    return t;
}

Test(level_map_errors, lines_brushes_and_entities)
{
    static const struct {
        const char *from, *to, *message;
    } cases[] = {
        {"( 64 64 0 ) ( 64 65 0 ) ( 65 64 0 )", "( 64 64 0 ) ( 64 65 0 ) ( 64 66 0 )",
         "t.map:13: entity 0, brush 0: degenerate plane (its three points are on one line)"},
        {"( 64 64 0 ) ( 64 65 0 ) ( 65 64 0 ) __TB_empty [ 1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1\n", "",
         "t.map:9: entity 0, brush 0: its planes do not close a finite solid"},
        {"( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 )", "( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 1e9 )",
         "t.map:10: entity 0, brush 0: coordinate '1e9' is out of range (more than 65536 units from the origin)"},
        {"( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 )", "( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 x )",
         "t.map:10: entity 0, brush 0: bad number 'x'"},
        {"}\n}\n// entity 1", "}\n// entity 1", "t.map:19: entity 0, brush 1: expected a face '(' or '}', found '\"'"},
        {"\"classname\" \"monster_dog\"\n\"origin\" \"8 0 24\"\n}\n", "\"classname\" \"monster_dog\"\n",
         "t.map:33: entity 4: entity not closed (missing '}')"},
        {"\"message\" \"A room with a view\"", "\"message\"",
         "t.map:7: entity 0: key \"message\" without a quoted "
         "value on its line"},
        {"// entity 1\n{", "// entity 1\n}", "t.map:19: expected '{' to open entity 1, found '}'"},
        {"\"origin\" \"-32 16 24\"", "\"origin\" \"-32 16\"",
         "t.map:19: entity 1 (info_player_deathmatch): bad origin '-32 16' (three numbers within 65536 units)"},
        {"\"angle\" \"90\"", "\"angle\" \"east\"", "t.map:19: entity 1 (info_player_deathmatch): bad angle 'east'"},
        {"1.83697e-16 -2.22045e-16\n", "1.83697e-16\n",
         "t.map:15: entity 0, brush 0: 2 texture numbers after the name (expected 3)"},
        {"[ 0 -1 0 0 ]", "[ 0 -1 0 ]", "t.map:10: entity 0, brush 0: bad number ']'"},
        {"\"name with space\"", "\"name with space",
         "t.map:15: entity 0, brush 0: texture name without its closing "
         "quote"},
        {"( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 )", "( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 ) x",
         "t.map:14: entity 0, brush 0: bad number '__TB_empty'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = valve_with(cases[i].from, cases[i].to);
        check_error(t, cases[i].message);
        free(t);
    }
    check_error("", "t.map: empty file");
    check_error("// nothing\n", "t.map: no entities (an empty map)");
    check_error("{\n\"classname\" \"worldspawn\"\n}\n", "t.map: no solid brushes (nothing to collide with)");
    check_error("{\n{\n( 0 0 0 ) ( 0 1 0 ) ( 1 0 0 ) a 0 0 0 1 1\n}\n}\n",
                "t.map:2: entity 0, brush 0: 1 faces cannot close a solid (at least 4)");
    check_error("{\n{\npatchDef2\n{\n}\n}\n}\n",
                "t.map:3: entity 0, brush 0: 'patchDef2' (Quake 3 brushes and patches) is not supported");
    check_error("{\n\"a\" \"b\0\"\n}\n", "t.map:2: entity 0: string without its closing quote");
}

// ---- hostile input and fuzzing ----------------------------------------------------

/// `count` prisms of `sides` faces, all at the same place (each face cut by
/// every other brush) or side by side.
static char *prisms_map(int count, int sides, bool stacked, size_t *len)
{
    size_t cap = 64 + (size_t)count * (size_t)(sides + 4) * 80, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text + n, cap - n, "{\n\"classname\" \"worldspawn\"\n");
    for (int i = 0; i < count; i++)
        n += map_prism(text + n, cap - n, sides, stacked ? 4000.0 + i : 4000.0, stacked ? 0 : i * 8,
                       stacked ? 64 : i * 8 + 64);
    n += (size_t)snprintf(text + n, cap - n, "}\n");
    *len = n;
    return text;
}

Test(level_map_hostile, overlapping_many_sided_brushes_stay_bounded, .timeout = 300)
{
    // 250 brushes of 64 faces (1 MB) on top of one another: every face meets
    // every brush. The union runs out of its budget and keeps the rest whole.
    size_t len;
    char *text = prisms_map(250, 62, true, &len);
    sim_level l;
    sim_map m;
    sim_error e;
    double t0 = now_seconds();
    int rc = sim_level_parse_map("hostile.map", text, len, NULL, &l, &m, &e);
    double dt = now_seconds() - t0;
    cr_assert_eq(rc, 0, "%s", e.message);
    sim_map_options o = sim_map_default_options();
    fprintf(stderr, "hostile: %zu bytes, %u brushes, %u faces: %.0f ms, union work %llu (limit %u), %s, %u triangles\n",
            len, m.brush_count, m.face_count, dt * 1e3, (unsigned long long)m.csg_work, o.csg_work_limit,
            m.csg_complete ? "complete" : "cut short", l.triangle_count);
    cr_assert_not(m.csg_complete);
    // the budget is checked before each piece is cut: it overshoots by at
    // most one brush's planes times one piece's points
    cr_assert_leq(m.csg_work, (uint64_t)o.csg_work_limit + 64 * 200);
    sim_level_free(&l);
    sim_map_free(&m);
    free(text);
}

/// The loader's contract on one text: success with a sane level, or failure
/// with everything empty and a "fuzz.map:<line>: " message.
static void check_one(const char *text, size_t len, int *ok, int *failed)
{
    sim_level l;
    sim_map m;
    sim_error e;
    int rc = sim_level_parse_map("fuzz.map", text, len, NULL, &l, &m, &e);
    uint32_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (rc == 0) {
        (*ok)++;
        cr_assert_gt(l.triangle_count, 0);
        for (uint32_t i = 0; i < 3 * l.triangle_count; i++)
            cr_assert_lt(l.indices[i], l.vertex_count);
        for (uint32_t i = 0; i < l.vertex_count; i++)
            cr_assert(sim_v3_in_world(l.vertices[i]));
        for (uint32_t i = 0; i < m.entity_count; i++)
            cr_assert_leq(m.entities[i].first_key + m.entities[i].key_count, m.key_count);
        sim_level_free(&l);
        sim_map_free(&m);
        return;
    }
    (*failed)++;
    cr_assert_eq(rc, -1);
    cr_assert_null(l.vertices);
    cr_assert_eq(l.triangle_count, 0);
    cr_assert_null(m.entities);
    cr_assert_leq(e.line, lines);
    char prefix[32];
    if (e.line)
        snprintf(prefix, sizeof prefix, "fuzz.map:%u: ", e.line);
    else
        snprintf(prefix, sizeof prefix, "fuzz.map: ");
    cr_assert(strncmp(e.message, prefix, strlen(prefix)) == 0, "%s", e.message);
}

Test(level_map_fuzz, mutated_texts, .timeout = 600)
{
    char box2[2048];
    const int b[] = {0, 0, 0, 64, 64, 16, 64, 0, 0, 128, 32, 32};
    char *two = boxes_map(b, 2);
    snprintf(box2, sizeof box2, "%s", two);
    free(two);
    const char *seeds[] = {VALVE, box2};
    static const char alphabet[] = "0123456789 -+.eE()[]{}\"\n\r\t/*_x\0\xff";
    keel_rng rng = {2024};
    static char text[8192];
    int ok = 0, failed = 0, iterations = 20000;
    const char *env = getenv("KEEL_FUZZ_MAPS");
    if (env)
        iterations = atoi(env);
    double t0 = now_seconds(), worst = 0;
    for (int iter = 0; iter < iterations; iter++) {
        const char *seed = seeds[keel_rng_range(&rng, 0, 1)];
        size_t len = strlen(seed);
        memcpy(text, seed, len);
        int ops = (int)keel_rng_range(&rng, 1, 4);
        keel_test_mutate(&rng, text, &len, sizeof text, alphabet, sizeof alphabet - 1, ops);
        double t1 = now_seconds();
        check_one(text, len, &ok, &failed);
        double dt = now_seconds() - t1;
        worst = dt > worst ? dt : worst;
    }
    fprintf(stderr, "map fuzz: %d texts, %d parsed, %d rejected, %.1f s, slowest %.2f ms\n", iterations, ok, failed,
            now_seconds() - t0, worst * 1e3);
    cr_assert_gt(ok, iterations / 20);
    cr_assert_gt(failed, iterations / 20);
}

// ---- a floor of many brushes: no ghost hits at the seams ----------------------------

static sim_shape shape_of(int k)
{
    const sim_fx cm = 655; // about a centimetre
    switch (k) {
    case 0: return sim_shape_capsule(40 * cm, 180 * cm);
    case 1: return sim_shape_box(40 * cm, 90 * cm, 40 * cm);
    case 2: return sim_shape_cylinder(40 * cm, 180 * cm);
    default: return sim_shape_cylinder(70 * cm, 30 * cm);
    }
}

Test(level_map_seams, floor_of_many_brushes_gives_the_face_normal_only, .timeout = 300)
{
    // 24 x 24 tiles of 32 units, every other row shifted by half a tile (T
    // junctions), some tiles overlapping their neighbours, all 16 units
    // thick with their tops at z 0: a 19.2 m square floor.
    int b[24 * 25 * 6];
    int n = 0;
    for (int row = 0; row < 24; row++) {
        int shift = (row & 1) ? 16 : 0;
        for (int col = 0; col < 25; col++) {
            int x0 = -384 + col * 32 - shift, x1 = x0 + 32 + ((row + col) % 5 == 0 ? 8 : 0);
            x0 = x0 < -384 ? -384 : x0;
            x1 = x1 > 384 ? 384 : x1;
            if (x1 <= x0)
                continue;
            int v[6] = {x0, -384 + row * 32, -16, x1, -384 + row * 32 + 32, 0};
            memcpy(&b[6 * n++], v, sizeof v);
        }
    }
    char *text = boxes_map(b, n);
    sim_level l;
    sim_map m;
    sim_error e;
    cr_assert_eq(parse(text, &l, &m, &e), 0, "%s", e.message);
    free(text);
    sim_world *w = sim_world_create(&l, NULL, &e);
    cr_assert_not_null(w, "%s", e.message);
    keel_rng rng = {99};
    int hits = 0;
    for (int k = 0; k < 4; k++) {
        sim_shape s = shape_of(k);
        for (int i = 0; i < 3000; i++) {
            const sim_fx lim = SIM_FX_INT(8); // 1.6 m inside the floor's 9.6 m half width
            sim_vec3 at = sim_v3(keel_rng_fx(&rng, -lim, lim), s.half.y + keel_rng_fx(&rng, 0, 1310),
                                 keel_rng_fx(&rng, -lim, lim));
            sim_vec3 dv = sim_v3(keel_rng_fx(&rng, -SIM_FX_ONE, SIM_FX_ONE), -keel_rng_fx(&rng, 0, 8000) - 1400,
                                 keel_rng_fx(&rng, -SIM_FX_ONE, SIM_FX_ONE));
            sim_sweep_input in = {s, at, dv, 0};
            sim_sweep_result r;
            if (sim_world_sweep(w, &in, &r)) {
                hits++;
                cr_assert_eq(r.normal.y, SIM_FX_ONE, "ghost normal (%d,%d,%d) at sweep %d shape %d", r.normal.x,
                             r.normal.y, r.normal.z, i, k);
                cr_assert_not(r.start_overlap);
            }
            // touching the floor and sliding along it: nothing to hit
            sim_sweep_input slide = {s, sim_v3(at.x, s.half.y, at.z), sim_v3(dv.x, 0, dv.z), 0};
            cr_assert_not(sim_world_sweep(w, &slide, &r), "slide hit normal (%d,%d,%d) shape %d", r.normal.x,
                          r.normal.y, r.normal.z, k);
        }
    }
    cr_assert_gt(hits, 10000);
    fprintf(stderr, "seams: %d brushes, %u triangles, %d floor hits, none a ghost\n", n, l.triangle_count, hits);
    sim_world_destroy(w);
    sim_level_free(&l);
    sim_map_free(&m);
}

// ---- a zdm2-sized map ---------------------------------------------------------------

Test(level_map_real, three_thousand_brushes, .timeout = 300)
{
    size_t n;
    char *text = map_city_text(&n);
    cr_assert_not_null(text);
    sim_level l;
    sim_map m;
    sim_error e;
    double t0 = now_seconds(), c0 = cpu_seconds();
    int rc = sim_level_parse_map("city.map", text, n, NULL, &l, &m, &e);
    double dt = now_seconds() - t0, dc = cpu_seconds() - c0;
    cr_assert_eq(rc, 0, "%s", e.message);
    cr_assert_eq(m.brush_count, MAP_CITY_BRUSHES);
    cr_assert(m.csg_complete);
    fprintf(stderr,
            "generated: %zu bytes, %u entities, %u brushes (%u solid), %u faces; %u pieces after the union, %u "
            "triangles; union work %llu; "
            "loaded in %.1f ms (cpu %.1f ms)\n",
            n, m.entity_count, m.brush_count, m.solid_brush_count, m.face_count, m.csg_fragments, l.triangle_count,
            (unsigned long long)m.csg_work, dt * 1e3, dc * 1e3);
    c0 = cpu_seconds();
    sim_world *w = sim_world_create(&l, NULL, &e);
    cr_assert_not_null(w, "%s", e.message);
    fprintf(stderr, "generated: world built in cpu %.1f ms\n", (cpu_seconds() - c0) * 1e3);
    sim_world_destroy(w);
    free(text);
    sim_level_free(&l);
    sim_map_free(&m);
}

// ---- keel's own arena -------------------------------------------------------------

static uint32_t count_role(const sim_map *m, sim_map_role role)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->entity_count; i++)
        n += m->entities[i].role == role;
    return n;
}

Test(level_map, arena)
{
    sim_level l;
    sim_map m;
    sim_error e;
    cr_assert_eq(sim_level_load_map(KEEL_SOURCE_DIR "/levels/arena.map", NULL, &l, &m, &e), 0, "%s", e.message);
    cr_assert(m.csg_complete);
    cr_assert_eq(m.unknown_count, 0);
    cr_assert_eq(count_role(&m, SIM_MAP_ROLE_SPAWN), 5);
    cr_assert_eq(count_role(&m, SIM_MAP_ROLE_PLATFORM), 2);
    cr_assert_eq(count_role(&m, SIM_MAP_ROLE_PATH), 2);
    cr_assert_eq(count_role(&m, SIM_MAP_ROLE_PUSH), 1);
    cr_assert_eq(count_role(&m, SIM_MAP_ROLE_TELEPORT), 1);
    cr_assert_eq(count_role(&m, SIM_MAP_ROLE_TELEPORT_TARGET), 1);
    cr_assert_eq(count_role(&m, SIM_MAP_ROLE_ITEM), 4);
    uint32_t liquid = 0, mover = 0;
    for (uint32_t i = 0; i < m.brush_count; i++) {
        liquid += m.brushes[i].contents == SIM_MAP_LIQUID;
        mover += m.brushes[i].contents == SIM_MAP_MOVER;
    }
    cr_assert_eq(liquid, 1);
    cr_assert_eq(mover, 2);
    cr_assert_eq(l.marker_count, 6); // five spawn points and the entities' digest, last
    // the spawn points stand on the floor (y 0) inside the room
    for (uint32_t i = 0; i + 1 < l.marker_count; i++)
        cr_assert_eq(l.markers[i].position.y, 0, "%s", l.markers[i].name);
    // the pool's water: 192 x 176 units, 40 deep, in engine terms
    for (uint32_t i = 0; i < m.brush_count; i++)
        if (m.brushes[i].contents == SIM_MAP_LIQUID) {
            sim_aabb b = m.brushes[i].bounds;
            cr_assert_eq(b.min.y, 0);
            cr_assert_eq(b.max.y, SIM_FX_INT(1)); // 40 units
        }
    fprintf(stderr, "arena: %u entities, %u brushes (%u solid), %u triangles\n", m.entity_count, m.brush_count,
            m.solid_brush_count, l.triangle_count);
    sim_level_free(&l);
    sim_map_free(&m);
}

Test(level_map, arena_platforms_and_water_in_a_scene)
{
    sim_level l;
    sim_map m;
    sim_error e;
    cr_assert_eq(sim_level_load_map(KEEL_SOURCE_DIR "/levels/arena.map", NULL, &l, &m, &e), 0, "%s", e.message);
    sim_world *w = sim_world_create(&l, NULL, &e);
    cr_assert_not_null(w, "%s", e.message);
    sim_move_settings s = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(w, &s, 4);
    uint32_t platforms = 0, water = 0;
    cr_assert_eq(sim_map_add_to_scene(&m, scene, s.tick_rate, 1638, 100, &platforms, &water), 0); // 0.025 m
    cr_assert_eq(platforms, 2);
    cr_assert_eq(water, 1);
    cr_assert_eq(sim_scene_platform_count(scene), 2);
    cr_assert_eq(sim_scene_water_count(scene), 1);
    sim_scene_destroy(scene);
    sim_world_destroy(w);
    sim_level_free(&l);
    sim_map_free(&m);
}

Test(level_map_fuzz, random_brushes, .timeout = 600)
{
    // Maps assembled from random brushes: boxes cut by random planes through
    // integer points, overlapping, touching and coplanar, with sometimes one
    // bad piece (a repeated point, an open side, a huge or broken number).
    static const char *bad[] = {"( 0 0 0 ) ( 0 0 0 ) ( 1 0 0 ) t 0 0 0 1 1\n",
                                "( 1e6 0 0 ) ( 0 1 0 ) ( 0 0 1 ) t 0 0 0 1 1\n",
                                "( 0 0 0 ) ( 0 1 0 ) ( 0 0 ) t 0 0 0 1 1\n",
                                "}\n",
                                "{\n",
                                "\"k\" \"v\"\n",
                                "( 0 0 0 ) ( 0 1 0 ) ( 1 0 0 ) t [ 1 0 0 0 ] 0 1 1\n"};
    keel_rng rng = {31337};
    static char text[16384];
    int ok = 0, failed = 0, iterations = 4000;
    double worst = 0;
    for (int iter = 0; iter < iterations; iter++) {
        size_t n = (size_t)snprintf(text, sizeof text, "{\n\"classname\" \"worldspawn\"\n");
        int brushes = (int)keel_rng_range(&rng, 1, 12);
        bool bad_run = keel_rng_range(&rng, 0, 3) == 0;
        for (int b = 0; b < brushes && n < sizeof text - 2048; b++) {
            int x0 = (int)keel_rng_range(&rng, -8, 8) * 16, y0 = (int)keel_rng_range(&rng, -8, 8) * 16;
            int z0 = (int)keel_rng_range(&rng, -4, 4) * 16;
            int sx = (int)keel_rng_range(&rng, 1, 8) * 16, sy = (int)keel_rng_range(&rng, 1, 8) * 16;
            int sz = (int)keel_rng_range(&rng, 1, 4) * 16;
            n += (size_t)map_box_brush(text + n, sizeof text - n, x0, y0, z0, x0 + sx, y0 + sy, z0 + sz, "t");
            n -= 2; // reopen the brush: drop "}\n"
            int cuts = (int)keel_rng_range(&rng, 0, 3);
            for (int c = 0; c < cuts; c++) {
                // a plane through three random points near the box, either way round
                int p[3][3];
                for (int k = 0; k < 3; k++) {
                    p[k][0] = x0 + (int)keel_rng_range(&rng, -8, sx + 8);
                    p[k][1] = y0 + (int)keel_rng_range(&rng, -8, sy + 8);
                    p[k][2] = z0 + (int)keel_rng_range(&rng, -8, sz + 8);
                }
                n += (size_t)snprintf(text + n, sizeof text - n, "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) t 0 0 0 1 1\n",
                                      p[0][0], p[0][1], p[0][2], p[1][0], p[1][1], p[1][2], p[2][0], p[2][1], p[2][2]);
            }
            if (bad_run && keel_rng_range(&rng, 0, 3) == 0)
                n += (size_t)snprintf(text + n, sizeof text - n, "%s", bad[keel_rng_range(&rng, 0, 6)]);
            n += (size_t)snprintf(text + n, sizeof text - n, "}\n");
        }
        n += (size_t)snprintf(text + n, sizeof text - n, "}\n");
        double t1 = now_seconds();
        check_one(text, n, &ok, &failed);
        double dt = now_seconds() - t1;
        worst = dt > worst ? dt : worst;
    }
    fprintf(stderr, "random brushes: %d maps, %d parsed, %d rejected, slowest %.2f ms\n", iterations, ok, failed,
            worst * 1e3);
    cr_assert_gt(ok, iterations / 10);
    cr_assert_gt(failed, iterations / 10);
}
