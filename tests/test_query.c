// keel tests: sweeps, contacts and rays against hand-made geometry, and
// randomized properties against a double-precision reference. MIT licence.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <keel/sim_world.h>

#include "ref_geom.h"
#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define V(x, y, z) sim_v3(M(x), M(y), M(z))

// Tolerances stated once: a position is rounded to 2^-16 m per component, so a
// gap measured at a reported position may be off by sqrt(3) * 2^-17 m.
#define POS_TOL 2e-5
#define NORMAL_TOL (1.0 / 8192.0)

typedef struct tri_list {
    sim_vec3 v[4096];
    uint32_t idx[4096 * 3];
    uint32_t nv, nt;
    sim_box_def boxes[64];
    uint32_t nb;
} tri_list;

static void add_tri(tri_list *l, sim_vec3 a, sim_vec3 b, sim_vec3 c)
{
    l->v[l->nv] = a;
    l->v[l->nv + 1] = b;
    l->v[l->nv + 2] = c;
    l->idx[3 * l->nt] = l->nv;
    l->idx[3 * l->nt + 1] = l->nv + 1;
    l->idx[3 * l->nt + 2] = l->nv + 2;
    l->nv += 3;
    l->nt++;
}

static void add_box(tri_list *l, sim_vec3 c, sim_vec3 half)
{
    sim_box_def b = {c, half, {V(1, 0, 0), V(0, 1, 0), V(0, 0, 1)}};
    l->boxes[l->nb++] = b;
}

// A square floor at height y from (x0,z0) to (x1,z1) split into n x n cells.
static void add_floor(tri_list *l, double x0, double z0, double x1, double z1, double y, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double ax = x0 + (x1 - x0) * i / n, bx = x0 + (x1 - x0) * (i + 1) / n;
            double az = z0 + (z1 - z0) * j / n, bz = z0 + (z1 - z0) * (j + 1) / n;
            // counter-clockwise seen from above (+Y)
            add_tri(l, V(ax, y, az), V(ax, y, bz), V(bx, y, bz));
            add_tri(l, V(ax, y, az), V(bx, y, bz), V(bx, y, az));
        }
}

static sim_world *make_world(tri_list *l)
{
    sim_level lv = {0};
    lv.vertices = l->v;
    lv.vertex_count = l->nv;
    lv.indices = l->idx;
    lv.triangle_count = l->nt;
    lv.boxes = l->boxes;
    lv.box_count = l->nb;
    sim_error err;
    sim_world_def def = sim_world_default_def();
    sim_world *w = sim_world_create(&lv, &def, &err);
    cr_assert_not_null(w, "world: %s", err.message);
    return w;
}

static sim_shape capsule(double r, double height) { return sim_shape_capsule(M(r), M(height)); }
static sim_shape box(double hx, double hy, double hz) { return sim_shape_box(M(hx), M(hy), M(hz)); }
static sim_shape cylinder(double r, double height) { return sim_shape_cylinder(M(r), M(height)); }

static double unit_err(sim_vec3 n)
{
    rv3 r = rv3_from(n);
    return fabs(rv3_len(r) - 1.0);
}

static tri_list L;

// ---- hand-made cases -----------------------------------------------------------

Test(sweep, capsule_falls_onto_floor_face)
{
    L = (tri_list){0};
    add_tri(&L, V(-10, 0, -10), V(-10, 0, 10), V(10, 0, 10));
    add_tri(&L, V(-10, 0, -10), V(10, 0, 10), V(10, 0, -10));
    sim_world *w = make_world(&L);
    sim_sweep_input in = {capsule(0.5, 1.8), V(0.3, 2, 0.2), V(0, -3, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    cr_assert_not(r.start_overlap);
    // the bottom reaches y = 0 after 1.1 m: fraction 0.3667, centre y 0.9,
    // early by at most the inflation (0.24 mm + 3 m / 4096)
    double y = r.position.y / 65536.0;
    cr_assert(y >= 0.9 && y <= 0.9 + 0.0011, "y = %.6f", y);
    cr_assert_eq(r.normal.x, 0);
    cr_assert_eq(r.normal.y, SIM_FX_ONE);
    cr_assert_eq(r.normal.z, 0);
    cr_assert_eq(r.feature.type, SIM_FEATURE_FACE);
    sim_world_destroy(w);
}

Test(sweep, box_falls_onto_floor_face)
{
    L = (tri_list){0};
    add_floor(&L, -4, -4, 4, 4, 0, 8);
    sim_world *w = make_world(&L);
    sim_sweep_input in = {box(0.4, 0.9, 0.4), V(0.5, 2, 0.5), V(0, -3, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    double y = r.position.y / 65536.0;
    cr_assert(y >= 0.9 && y <= 0.9 + 0.0011, "y = %.6f", y);
    cr_assert_eq(r.normal.y, SIM_FX_ONE);
    cr_assert_eq(r.normal.x, 0);
    sim_world_destroy(w);
}

Test(sweep, capsule_into_wall)
{
    L = (tri_list){0};
    // wall in the plane x = 2, facing -x
    add_tri(&L, V(2, 0, -5), V(2, 5, -5), V(2, 5, 5));
    add_tri(&L, V(2, 0, -5), V(2, 5, 5), V(2, 0, 5));
    sim_world *w = make_world(&L);
    sim_sweep_input in = {capsule(0.4, 1.8), V(0, 1, 0), V(3, 0, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    double x = r.position.x / 65536.0;
    cr_assert(x <= 1.6 && x >= 1.6 - 0.0011, "x = %.6f", x);
    cr_assert_eq(r.normal.x, -SIM_FX_ONE);
    sim_world_destroy(w);
}

Test(sweep, capsule_side_hits_ledge_edge)
{
    L = (tri_list){0};
    // a horizontal ledge at y = 1 ending at x = 2 (edge along z)
    add_tri(&L, V(2, 1, -5), V(5, 1, 5), V(2, 1, 5));
    add_tri(&L, V(2, 1, -5), V(5, 1, -5), V(5, 1, 5));
    sim_world *w = make_world(&L);
    // the capsule's side (y from 0.2 to 1.8 on the segment) moves into the edge
    sim_sweep_input in = {capsule(0.4, 2.4), V(0, 1.1, 0), V(3, 0, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    cr_assert_eq(r.feature.type, SIM_FEATURE_EDGE);
    double x = r.position.x / 65536.0;
    cr_assert(x <= 1.6 && x >= 1.6 - 0.0011, "x = %.6f", x);
    cr_assert_eq(r.normal.x, -SIM_FX_ONE);
    cr_assert_eq(r.normal.y, 0);
    sim_world_destroy(w);
}

Test(sweep, sphere_hits_vertex)
{
    L = (tri_list){0};
    add_tri(&L, V(1, 0, 0), V(3, 0, 1), V(3, 0, -1));
    sim_world *w = make_world(&L);
    sim_shape s = capsule(0.5, 1.0); // a sphere
    sim_sweep_input in = {s, V(-1, 0, 0), V(4, 0, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    cr_assert_eq(r.feature.type, SIM_FEATURE_VERTEX);
    double x = r.position.x / 65536.0;
    cr_assert(x <= 0.5 && x >= 0.5 - 0.0015, "x = %.6f", x);
    sim_world_destroy(w);
}

Test(sweep, start_overlap_is_flagged)
{
    L = (tri_list){0};
    add_floor(&L, -4, -4, 4, 4, 0, 4);
    sim_world *w = make_world(&L);
    sim_shape shapes[3] = {capsule(0.4, 1.8), box(0.4, 0.9, 0.4), cylinder(0.4, 1.8)};
    for (int k = 0; k < 3; k++) {
        // 0.4 m into the floor, moving further in
        sim_sweep_input in = {shapes[k], V(0.1, 0.5, 0.1), V(1, -0.2, 0), 0};
        sim_sweep_result r;
        cr_assert(sim_world_sweep(w, &in, &r));
        cr_assert(r.start_overlap);
        cr_assert_eq(r.fraction, 0);
        cr_assert_eq(r.normal.y, SIM_FX_ONE);
        // moving along or out of it is not blocked
        in.displacement = V(1, 0, 0);
        cr_assert_not(sim_world_sweep(w, &in, &r), "along, shape %d", k);
        in.displacement = V(0.3, 0.5, 0);
        cr_assert_not(sim_world_sweep(w, &in, &r), "out, shape %d", k);
    }
    sim_world_destroy(w);
}

Test(sweep, touching_and_leaving_is_free)
{
    L = (tri_list){0};
    add_floor(&L, -4, -4, 4, 4, 0, 4);
    sim_world *w = make_world(&L);
    sim_shape shapes[3] = {capsule(0.4, 1.8), box(0.4, 0.9, 0.4), cylinder(0.4, 1.8)};
    for (int k = 0; k < 3; k++) {
        // resting exactly on the floor
        sim_sweep_input in = {shapes[k], V(0.1, 0.9, 0.1), V(0, 1, 0), 0};
        sim_sweep_result r;
        cr_assert_not(sim_world_sweep(w, &in, &r), "up, shape %d", k);
        in.displacement = V(1.5, 0, 0.7);
        cr_assert_not(sim_world_sweep(w, &in, &r), "along, shape %d", k);
        in.displacement = V(1, -0.5, 0);
        cr_assert(sim_world_sweep(w, &in, &r), "into, shape %d", k);
        cr_assert_eq(r.fraction, 0);
        cr_assert_not(r.start_overlap);
    }
    sim_world_destroy(w);
}

Test(sweep, thin_wall_is_never_tunnelled)
{
    L = (tri_list){0};
    add_box(&L, V(5, 1.5, 0), V(0.005, 1.5, 2)); // a 1 cm wall at x = 5
    sim_world *w = make_world(&L);
    sim_shape shapes[4] = {capsule(0.4, 1.8), box(0.4, 0.9, 0.4), cylinder(0.4, 1.8), cylinder(0.4, 0.2)};
    // 100 m/s at 64 Hz is 1.5625 m per tick; also one 60 m leap
    for (int k = 0; k < 4; k++) {
        for (int start = 0; start < 64; start++) {
            double x0 = 5 - 0.41 - 1.5625 * (start / 64.0) - 0.4;
            sim_sweep_input in = {shapes[k], V(x0, 1, 0.3), V(1.5625, 0, 0), 0};
            sim_sweep_result r;
            bool hit = sim_world_sweep(w, &in, &r);
            double end = (in.start.x + (hit ? r.position.x - in.start.x : in.displacement.x)) / 65536.0;
            cr_assert(end + 0.4 <= 4.995 + 1e-6, "shape %d start %d ends at %.6f", k, start, end);
        }
        sim_sweep_input in = {shapes[k], V(-50, 1, 0), V(60, 0, 0), 0};
        sim_sweep_result r;
        cr_assert(sim_world_sweep(w, &in, &r));
        cr_assert(r.position.x / 65536.0 + 0.4 <= 4.995);
    }
    sim_world_destroy(w);
}

// ---- the cylinder: flat ends, round sides ------------------------------------------

Test(sweep, cylinder_falls_onto_floor_flat)
{
    L = (tri_list){0};
    add_floor(&L, -4, -4, 4, 4, 0, 8);
    sim_world *w = make_world(&L);
    // over a cell's middle, over a shared vertex of the tessellation, and
    // a flat one wider than tall
    const double at[3][2] = {{0.3, 0.2}, {0, 0}, {1.5, -1}};
    sim_shape shapes[3] = {cylinder(0.5, 1.8), cylinder(0.4, 1.8), cylinder(0.9, 0.3)};
    for (int k = 0; k < 3; k++) {
        double hy = shapes[k].half.y / 65536.0;
        sim_sweep_input in = {shapes[k], V(at[k][0], 2, at[k][1]), V(0, -3, 0), 0};
        sim_sweep_result r;
        cr_assert(sim_world_sweep(w, &in, &r));
        cr_assert_not(r.start_overlap);
        // the flat bottom stops at the floor (a round one would sink by
        // nothing either, but a bounding-sphere one would stop high)
        double y = r.position.y / 65536.0;
        cr_assert(y >= hy && y <= hy + 0.0011, "case %d: y = %.6f, want %.6f", k, y, hy);
        cr_assert_eq(r.normal.x, 0, "case %d", k);
        cr_assert_eq(r.normal.y, SIM_FX_ONE, "case %d", k);
        cr_assert_eq(r.normal.z, 0, "case %d", k);
    }
    sim_world_destroy(w);
}

// A ledge whose top (y = 1) covers x >= 2, made of triangles or of a box.
static sim_world *ledge_world(bool solid)
{
    L = (tri_list){0};
    if (solid) {
        add_box(&L, V(3.5, 0.5, 0), V(1.5, 0.5, 5));
    } else {
        add_tri(&L, V(2, 1, -5), V(5, 1, 5), V(5, 1, -5));
        add_tri(&L, V(2, 1, -5), V(2, 1, 5), V(5, 1, 5));
    }
    return make_world(&L);
}

Test(sweep, cylinder_beyond_ledge_edge_is_supported)
{
    for (int solid = 0; solid < 2; solid++) {
        sim_world *w = ledge_world(solid);
        // centre 0.3, 0.1 and 0.01 m short of the edge's line, disc 0.4 m:
        // its bottom still overlaps the ledge top and lands on it, flat
        const double overlap[3] = {0.1, 0.3, 0.39};
        for (int k = 0; k < 3; k++) {
            double x = 2 + overlap[k] - 0.4 - 0.01 * k; // a little less overlap for the last
            sim_sweep_input in = {cylinder(0.4, 1.8), V(x, 2.5, 0.3), V(0, -1, 0), 0};
            sim_sweep_result r;
            cr_assert(sim_world_sweep(w, &in, &r), "solid %d case %d: no hit", solid, k);
            cr_assert_not(r.start_overlap);
            double y = r.position.y / 65536.0;
            cr_assert(y >= 1.9 && y <= 1.9 + 0.0011, "solid %d case %d: y = %.6f", solid, k, y);
            cr_assert(r.normal.y >= SIM_FX_ONE - 8 && abs(r.normal.x) <= 8 && abs(r.normal.z) <= 8,
                      "solid %d case %d: normal (%d,%d,%d) feature %d/%d", solid, k, r.normal.x, r.normal.y, r.normal.z,
                      r.feature.type, r.feature.index);
            // and at rest there, moving along the ledge or off it is free
            sim_sweep_input slide = {in.shape, sim_v3(in.start.x, M(1.9), in.start.z), V(0, 0, 1.5), 0};
            cr_assert_not(sim_world_sweep(w, &slide, &r), "solid %d case %d: slide along blocked", solid, k);
            slide.displacement = V(-1, 0, 0);
            cr_assert_not(sim_world_sweep(w, &slide, &r), "solid %d case %d: step off blocked", solid, k);
        }
        // centre beyond the edge by more than the radius: falls past it
        sim_sweep_input in = {cylinder(0.4, 1.8), V(2 - 0.41, 2.5, 0.3), V(0, -1, 0), 0};
        sim_sweep_result r;
        cr_assert_not(sim_world_sweep(w, &in, &r), "solid %d: hit the ledge from 1 cm away", solid);
        sim_world_destroy(w);
    }
}

Test(sweep, cylinder_side_hits_ledge_edge)
{
    sim_world *w = ledge_world(false);
    // the side (y from -0.1 to 2.3) moves into the ledge's edge at y = 1
    sim_sweep_input in = {cylinder(0.4, 2.4), V(0, 1.1, 0), V(3, 0, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    double x = r.position.x / 65536.0;
    cr_assert(x <= 1.6 && x >= 1.6 - 0.0011, "x = %.6f", x);
    cr_assert_eq(r.normal.x, -SIM_FX_ONE);
    cr_assert_eq(r.normal.y, 0);
    cr_assert_eq(r.normal.z, 0);
    sim_world_destroy(w);
}

Test(sweep, cylinder_rim_hits_ledge_edge)
{
    sim_world *w = ledge_world(false);
    // the bottom rim starts 0.125 m left of the ledge's edge and 0.125 m
    // above its top, and moves diagonally onto the edge: rim and edge meet at
    // a quarter of the motion (every figure exact in Q16.16)
    sim_sweep_input in = {cylinder(0.375, 1.0), V(1.5, 1.625, 0), V(0.5, -0.5, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    rv3 a = {2, 1, -5}, b = {2, 1, 5}, c = {5, 1, 5};
    double toi = ref_shape_tri_toi(in.shape, rv3_from(in.start), rv3_from(in.displacement), a, b, c, 0);
    cr_assert(fabs(toi - 0.25) < 1e-9, "reference toi %.12f", toi);
    double f = r.fraction / 65536.0;
    cr_assert(f <= 0.25 + 1e-9 && f >= 0.25 - 0.003, "fraction %.6f", f);
    cr_assert_lt(unit_err(r.normal), NORMAL_TOL);
    // the edge against the rim: the normal lies in the x-y plane, against the motion
    cr_assert(abs(r.normal.z) <= 8, "normal (%d,%d,%d)", r.normal.x, r.normal.y, r.normal.z);
    cr_assert(r.normal.x <= 0 && r.normal.y >= 0, "normal (%d,%d,%d)", r.normal.x, r.normal.y, r.normal.z);
    sim_world_destroy(w);
}

Test(sweep, cylinder_lands_on_slope_with_its_rim)
{
    L = (tri_list){0};
    // a 30 degree slope rising toward +x through the origin
    double t = tan(30 * 3.14159265358979 / 180);
    add_tri(&L, V(-4, -4 * t, -4), V(-4, -4 * t, 4), V(4, 4 * t, 4));
    add_tri(&L, V(-4, -4 * t, -4), V(4, 4 * t, 4), V(4, 4 * t, -4));
    sim_world *w = make_world(&L);
    sim_sweep_input in = {cylinder(0.5, 1.8), V(0, 3, 0), V(0, -3, 0), 0};
    sim_sweep_result r;
    cr_assert(sim_world_sweep(w, &in, &r));
    // the uphill rim point (0.5, y - 0.9) touches the plane y = x tan 30
    double want = 0.9 + 0.5 * t, y = r.position.y / 65536.0;
    // early by at most the inflation e = (16 + 3 m / 4096) / 65536 m, which
    // lowers the rim by e and moves it uphill by e: (1 + tan 30) e higher
    double e = (SIM_QUERY_TOLERANCE + (M(3) >> 12)) / 65536.0;
    cr_assert(y >= want && y <= want + (1 + t) * e + 2e-5, "y = %.6f want %.6f", y, want);
    rv3 n = rv3_from(r.normal);
    cr_assert(fabs(n.x + 0.5) < 1e-3 && fabs(n.y - cos(30 * 3.14159265358979 / 180)) < 1e-3,
              "normal (%.5f, %.5f, %.5f)", n.x, n.y, n.z);
    sim_world_destroy(w);
}

Test(sweep, cylinder_slides_along_wall)
{
    L = (tri_list){0};
    // a wall in the plane x = 2 facing -x, tessellated in 0.5 m cells
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 8; j++) {
            double z0 = -4 + 0.5 * i, z1 = z0 + 0.5, y0 = 0.5 * j, y1 = y0 + 0.5;
            add_tri(&L, V(2, y0, z0), V(2, y1, z0), V(2, y1, z1));
            add_tri(&L, V(2, y0, z0), V(2, y1, z1), V(2, y0, z1));
        }
    sim_world *w = make_world(&L);
    keel_rng rng = {41};
    sim_shape shapes[2] = {cylinder(0.4, 1.8), cylinder(0.6, 0.4)};
    for (int i = 0; i < 1000; i++) {
        sim_shape s = shapes[i % 2];
        double R = s.radius / 65536.0, hy = s.half.y / 65536.0;
        double gap = keel_rng_range(&rng, 0, 1000) / 1e5; // 0 to 1 cm
        double y = hy + 0.1 + keel_rng_range(&rng, 0, 1000) / 1000.0 * (3.8 - 2 * hy - 0.2);
        double z = -2 + keel_rng_range(&rng, 0, 1000) / 250.0;
        double dz = keel_rng_range(&rng, -1500, 1500) / 1000.0;
        double dy = keel_rng_range(&rng, -100, 100) / 1000.0;
        sim_vec3 start = V(2 - R - gap, y, z);
        // into the wall at a slant: the wall's own normal
        sim_sweep_input in = {s, start, V(gap + 0.05, dy, dz), 0};
        sim_sweep_result r;
        cr_assert(sim_world_sweep(w, &in, &r), "sweep %d: no hit", i);
        cr_assert_not(r.start_overlap);
        cr_assert(r.normal.x == -SIM_FX_ONE && r.normal.y == 0 && r.normal.z == 0,
                  "sweep %d: normal (%d,%d,%d) feature %d/%d", i, r.normal.x, r.normal.y, r.normal.z, r.feature.type,
                  r.feature.index);
        // touching it and moving along it: free
        sim_sweep_input slide = {s, V(2 - R, y, z), V(0, dy, dz), 0};
        cr_assert_not(sim_world_sweep(w, &slide, &r), "sweep %d: slide hit normal (%d,%d,%d) feature %d", i, r.normal.x,
                      r.normal.y, r.normal.z, r.feature.type);
    }
    sim_world_destroy(w);
}

// ---- internal edges: no ghost bumps --------------------------------------------

// Sweeps over a flat floor whose whole travel (start, end, plus the shape's
// extent) stays inside the rectangle [x0, x1] x [z0, z1].
static void check_floor_normals(sim_world *w, sim_shape s, double floor_y, double x0, double x1, double z0, double z1,
                                uint64_t seed)
{
    keel_rng rng = {seed};
    int hits = 0;
    for (int i = 0; i < 3000; i++) {
        double hy = s.half.y / 65536.0;
        double gap = (double)keel_rng_range(&rng, 0, 2000) / 1e5; // 0 to 2 cm above
        double ext = s.half.x / 65536.0 + 1.0;
        double x = x0 + ext + (x1 - x0 - 2 * ext) * keel_rng_range(&rng, 0, 100000) / 1e5;
        double z = z0 + ext + (z1 - z0 - 2 * ext) * keel_rng_range(&rng, 0, 100000) / 1e5;
        double dx = (keel_rng_range(&rng, -1000, 1000)) / 1000.0;
        double dz = (keel_rng_range(&rng, -1000, 1000)) / 1000.0;
        double dy = -(keel_rng_range(&rng, 0, 1000)) / 10000.0 - gap;
        sim_sweep_input in = {s, V(x, floor_y + hy + gap, z), V(dx, dy, dz), 0};
        sim_sweep_result r;
        if (sim_world_sweep(w, &in, &r)) {
            hits++;
            cr_assert_eq(r.normal.y, SIM_FX_ONE, "ghost normal (%d,%d,%d) at sweep %d feature %d/%d", r.normal.x,
                         r.normal.y, r.normal.z, i, r.feature.type, r.feature.index);
            cr_assert_not(r.start_overlap);
        }
        // sliding exactly along the floor, touching it, never hits anything
        sim_sweep_input slide = {s, V(x, floor_y + hy, z), V(dx, 0, dz), 0};
        cr_assert_not(sim_world_sweep(w, &slide, &r), "slide hit normal (%d,%d,%d) feature %d", r.normal.x, r.normal.y,
                      r.normal.z, r.feature.type);
    }
    cr_assert_gt(hits, 2000);
}

Test(internal_edges, tessellated_floor_gives_face_normal_only)
{
    L = (tri_list){0};
    add_floor(&L, -3, -3, 3, 3, 0, 12); // 288 triangles of 0.5 m
    sim_world *w = make_world(&L);
    cr_assert_gt(sim_world_get_stats(w).inactive_edges, 500);
    check_floor_normals(w, capsule(0.4, 1.8), 0, -3, 3, -3, 3, 11);
    check_floor_normals(w, box(0.4, 0.9, 0.4), 0, -3, 3, -3, 3, 12);
    check_floor_normals(w, capsule(0.25, 0.5), 0, -3, 3, -3, 3, 13);
    check_floor_normals(w, cylinder(0.4, 1.8), 0, -3, 3, -3, 3, 14);
    check_floor_normals(w, cylinder(0.7, 0.3), 0, -3, 3, -3, 3, 15); // flat, wider than tall
    sim_world_destroy(w);
}

Test(internal_edges, t_junction_floor_gives_face_normal_only)
{
    L = (tri_list){0};
    // left half: 2 big triangles; right half: 8x8 small ones, meeting along
    // x = 0 with T-junctions (no shared vertices but the corners)
    add_tri(&L, V(-3, 0, -3), V(-3, 0, 3), V(0, 0, 3));
    add_tri(&L, V(-3, 0, -3), V(0, 0, 3), V(0, 0, -3));
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            double ax = 3.0 * i / 8, bx = 3.0 * (i + 1) / 8;
            double az = -3 + 6.0 * j / 8, bz = -3 + 6.0 * (j + 1) / 8;
            add_tri(&L, V(ax, 0, az), V(ax, 0, bz), V(bx, 0, bz));
            add_tri(&L, V(ax, 0, az), V(bx, 0, bz), V(bx, 0, az));
        }
    sim_world *w = make_world(&L);
    check_floor_normals(w, capsule(0.4, 1.8), 0, -3, 3, -3, 3, 21);
    check_floor_normals(w, box(0.4, 0.9, 0.4), 0, -3, 3, -3, 3, 22);
    check_floor_normals(w, cylinder(0.4, 1.8), 0, -3, 3, -3, 3, 23);
    check_floor_normals(w, cylinder(0.7, 0.3), 0, -3, 3, -3, 3, 24);
    sim_world_destroy(w);
}

Test(internal_edges, boxes_side_by_side_give_face_normal_only)
{
    L = (tri_list){0};
    for (int i = 0; i < 8; i++)
        add_box(&L, V(-4 + 0.5 + i, 0.25, 0), V(0.5, 0.25, 2));
    sim_world *w = make_world(&L);
    // the two faces where neighbours touch are inside solid: 7 seams x 2 x 2
    cr_assert_eq(sim_world_get_stats(w).buried_count, 28);
    check_floor_normals(w, capsule(0.4, 1.8), 0.5, -4, 4, -2, 2, 31);
    check_floor_normals(w, box(0.4, 0.9, 0.4), 0.5, -4, 4, -2, 2, 32);
    check_floor_normals(w, cylinder(0.4, 1.8), 0.5, -4, 4, -2, 2, 33);
    check_floor_normals(w, cylinder(0.7, 0.3), 0.5, -4, 4, -2, 2, 34);
    sim_world_destroy(w);
}

// ---- randomized properties against the double reference -------------------------

// A sweep's inputs in raw Q16.16, for failure messages: enough to replay it.
static const char *sweep_text(sim_shape s, const sim_vec3 *tv, sim_vec3 start, sim_vec3 d)
{
    static char buf[400];
    snprintf(buf, sizeof buf,
             "shape %d radius %d half (%d,%d,%d) tri (%d,%d,%d) (%d,%d,%d) (%d,%d,%d) start (%d,%d,%d) "
             "displacement (%d,%d,%d) [1/65536 m]",
             (int)s.type, s.radius, s.half.x, s.half.y, s.half.z, tv[0].x, tv[0].y, tv[0].z, tv[1].x, tv[1].y, tv[1].z,
             tv[2].x, tv[2].y, tv[2].z, start.x, start.y, start.z, d.x, d.y, d.z);
    return buf;
}

// `level`: nearly level triangles (floors and treads tilted by up to 5 mm)
// and the shape coming down or sideways near one of their corners, where an
// edge's ends and the face's rim meet (thin rim ellipses for the cylinder).
static void random_sweep_property(sim_shape (*make_shape)(keel_rng *), uint64_t seed, int cases, bool level)
{
    keel_rng rng = {seed};
    int hits = 0, overlaps = 0;
    cases = KEEL_TEST_SIZE(cases, cases / 8);
    for (int i = 0; i < cases; i++) {
        L = (tri_list){0};
        sim_vec3 tv[3];
        for (int k = 0; k < 3; k++)
            tv[k] =
                sim_v3(keel_rng_fx(&rng, M(-2), M(2)), keel_rng_fx(&rng, M(-2), M(2)), keel_rng_fx(&rng, M(-2), M(2)));
        // every few cases an axis-aligned triangle (floors and walls are common)
        if (i % 4 == 0 && !level) {
            tv[1].y = tv[0].y;
            tv[2].y = tv[0].y;
        }
        if (level) {
            tv[1].y = tv[0].y + (sim_fx)keel_rng_range(&rng, -300, 300);
            tv[2].y = tv[0].y + (sim_fx)keel_rng_range(&rng, -300, 300);
        }
        add_tri(&L, tv[0], tv[1], tv[2]);
        sim_level lv = {L.v, 3, L.idx, 1, NULL, 0, NULL, 0};
        sim_world_def def = sim_world_default_def();
        sim_world *w = sim_world_create(&lv, &def, NULL);
        cr_assert_not_null(w);
        if (sim_world_get_stats(w).triangle_count == 0) {
            sim_world_destroy(w);
            continue;
        }
        sim_shape s = make_shape(&rng);
        sim_vec3 start, d;
        if (level) {
            sim_vec3 corner = tv[keel_rng_range(&rng, 0, 2)];
            sim_fx reach = s.half.x + M(0.3);
            start = sim_v3_add(corner,
                               sim_v3(keel_rng_fx(&rng, -reach, reach), s.half.y + keel_rng_fx(&rng, M(0.001), M(0.5)),
                                      keel_rng_fx(&rng, -reach, reach)));
            d = sim_v3(keel_rng_fx(&rng, M(-0.5), M(0.5)), keel_rng_fx(&rng, M(-1), 0),
                       keel_rng_fx(&rng, M(-0.5), M(0.5)));
        } else {
            start =
                sim_v3(keel_rng_fx(&rng, M(-4), M(4)), keel_rng_fx(&rng, M(-4), M(4)), keel_rng_fx(&rng, M(-4), M(4)));
            if (keel_rng_range(&rng, 0, 1)) {
                // aim at a point of the triangle
                sim_vec3 target = tv[keel_rng_range(&rng, 0, 2)];
                d = sim_v3_sub(target, start);
            } else {
                d = sim_v3(keel_rng_fx(&rng, M(-3), M(3)), keel_rng_fx(&rng, M(-3), M(3)),
                           keel_rng_fx(&rng, M(-3), M(3)));
            }
        }
        sim_sweep_input in = {s, start, d, 0};
        sim_sweep_result r;
        bool hit = sim_world_sweep(w, &in, &r);
        rv3 a = rv3_from(tv[0]), b = rv3_from(tv[1]), c = rv3_from(tv[2]);
        rv3 p0 = rv3_from(start), dd = rv3_from(d);
        double len = rv3_len(dd);
        double inflate = (SIM_QUERY_TOLERANCE + (M(len) >> 12)) / 65536.0;
        double gap0 = ref_shape_tri_gap(s, p0, a, b, c);
        double toi = ref_shape_tri_toi(s, p0, dd, a, b, c, 0);
        if (gap0 < -2 * SIM_QUERY_TOLERANCE / 65536.0) {
            // flagged when the motion goes further in; free when it leaves
            double g1 = ref_shape_tri_gap(s, rv3_add(p0, rv3_scale(dd, 1e-4)), a, b, c);
            if (g1 < gap0 - 1e-9) {
                overlaps++;
                cr_assert(hit && r.start_overlap, "case %d: start gap %.6f not flagged\n  %s", i, gap0,
                          sweep_text(s, tv, start, d));
                cr_assert_lt(unit_err(r.normal), NORMAL_TOL, "case %d\n  %s", i, sweep_text(s, tv, start, d));
            } else if (g1 > gap0 + 1e-9 && (s.type != SIM_SHAPE_CAPSULE || gap0 > -s.radius / 65536.0 + 1e-3)) {
                // (a capsule whose segment pierces the triangle is pushed out
                // along the face normal, not along the distance's gradient)
                cr_assert_not(hit, "case %d: blocked while leaving an overlap (start gap %.6f)\n  %s", i, gap0,
                              sweep_text(s, tv, start, d));
            }
            sim_world_destroy(w);
            continue;
        }
        if (gap0 > inflate + POS_TOL)
            cr_assert(!hit || !r.start_overlap, "case %d: false start overlap (start gap %.6f)\n  %s", i, gap0,
                      sweep_text(s, tv, start, d));
        if (!hit) {
            cr_assert_gt(toi, 1.0, "case %d: missed a contact at %.9f (start gap %.9f)\n  %s", i, toi, gap0,
                         sweep_text(s, tv, start, d));
            sim_world_destroy(w);
            continue;
        }
        if (r.start_overlap) {
            sim_world_destroy(w);
            continue;
        }
        hits++;
        double frac = r.fraction / 65536.0;
        cr_assert_leq(frac, toi + 1e-9, "case %d: reported %.9f after the true contact %.9f\n  %s", i, frac, toi,
                      sweep_text(s, tv, start, d));
        rv3 at = rv3_from(r.position);
        double g = ref_shape_tri_gap(s, at, a, b, c);
        cr_assert_geq(g, -POS_TOL, "case %d: overlap %.9f at the impact (fraction %.9f, true %.9f)\n  %s", i, g, frac,
                      toi, sweep_text(s, tv, start, d));
        // a box is grown by the inflation along each of its axes: up to
        // sqrt(3) times that along a diagonal; a cylinder's radius and half
        // height both grow by it: sqrt(2) times that at the rim
        double early = s.type == SIM_SHAPE_BOX        ? 1.7321 * inflate
                       : s.type == SIM_SHAPE_CYLINDER ? 1.4143 * inflate
                                                      : inflate;
        // rounding of the unit direction adds up to 1e-4 of the length
        cr_assert_leq(g, early + 1e-4 + 1e-4 * len, "case %d: impact %.6f m early (fraction %.9f, true %.9f)\n  %s", i,
                      g, frac, toi, sweep_text(s, tv, start, d));
        // pulled back by a 5 mm skin along the motion: still no overlap
        rv3 back = rv3_sub(at, rv3_scale(dd, fmin(0.005 / len, frac)));
        cr_assert_geq(ref_shape_tri_gap(s, back, a, b, c), -POS_TOL, "case %d\n  %s", i, sweep_text(s, tv, start, d));
        cr_assert_lt(unit_err(r.normal), NORMAL_TOL, "case %d: normal not unit\n  %s", i, sweep_text(s, tv, start, d));
        cr_assert_leq(rv3_dot(rv3_from(r.normal), dd), 1e-4 * len, "case %d: normal (%d,%d,%d) along the motion\n  %s",
                      i, r.normal.x, r.normal.y, r.normal.z, sweep_text(s, tv, start, d));
        sim_world_destroy(w);
    }
    cr_assert_gt(hits, cases / 10, "only %d hits", hits);
    cr_assert(level || overlaps > 0);
}

static sim_shape rand_capsule(keel_rng *rng)
{
    sim_fx r = keel_rng_fx(rng, M(0.1), M(0.8));
    return sim_shape_capsule(r, keel_rng_fx(rng, 2 * r, M(2.5)));
}
static sim_shape rand_sphere(keel_rng *rng)
{
    sim_fx r = keel_rng_fx(rng, M(0.1), M(0.8));
    return sim_shape_capsule(r, 2 * r);
}
static sim_shape rand_box(keel_rng *rng)
{
    return sim_shape_box(keel_rng_fx(rng, M(0.1), M(1)), keel_rng_fx(rng, M(0.1), M(1)),
                         keel_rng_fx(rng, M(0.1), M(1)));
}

Test(sweep_property, capsule_vs_random_triangles) { random_sweep_property(rand_capsule, 101, 8000, false); }
Test(sweep_property, sphere_vs_random_triangles) { random_sweep_property(rand_sphere, 102, 4000, false); }
static sim_shape rand_cylinder(keel_rng *rng)
{
    // 0.1 to 1 m wide, 0.1 to 2.5 m tall: flat ones wider than tall too
    return sim_shape_cylinder(keel_rng_fx(rng, M(0.1), M(1)), keel_rng_fx(rng, M(0.1), M(2.5)));
}

Test(sweep_property, box_vs_random_triangles) { random_sweep_property(rand_box, 103, 8000, false); }
Test(sweep_property, cylinder_vs_random_triangles, .timeout = 600)
{
    random_sweep_property(rand_cylinder, 104, 8000, false);
}
Test(sweep_property, capsule_vs_nearly_level_triangles) { random_sweep_property(rand_capsule, 105, 8000, true); }
Test(sweep_property, box_vs_nearly_level_triangles) { random_sweep_property(rand_box, 106, 8000, true); }
// DISABLED until the cylinder's sweep is fixed: near the corners of nearly
// level triangles it reports hits up to 13 cm early, ghost hits included
// (thin rim ellipses and end slabs, see the cyl-ref report).
Test(sweep_property, cylinder_vs_nearly_level_triangles, .timeout = 600)
{
    random_sweep_property(rand_cylinder, 107, 8000, true);
}

// ---- contacts -----------------------------------------------------------------

Test(contacts, capsule_and_box_in_floor)
{
    L = (tri_list){0};
    add_floor(&L, -4, -4, 4, 4, 0, 8);
    sim_world *w = make_world(&L);
    sim_contact c[8];
    sim_overlap_input in = {capsule(0.4, 1.8), V(0.25, 0.8, 0.25), 0};
    int n = sim_world_contacts(w, &in, c, 8);
    cr_assert_gt(n, 0);
    for (int i = 0; i < (n < 8 ? n : 8); i++) {
        cr_assert_eq(c[i].normal.y, SIM_FX_ONE, "contact %d normal (%d,%d,%d)", i, c[i].normal.x, c[i].normal.y,
                     c[i].normal.z);
        // triangles met at an internal edge or corner report the true
        // (smaller) distance; the deepest is the face under the centre
        cr_assert_leq(c[i].depth, M(0.1) + 2);
    }
    cr_assert(labs((long)c[0].depth - M(0.1)) <= 2, "depth %d", c[0].depth);
    in.shape = box(0.4, 0.9, 0.4);
    n = sim_world_contacts(w, &in, c, 8);
    cr_assert_gt(n, 0);
    for (int i = 0; i < (n < 8 ? n : 8); i++) {
        cr_assert_eq(c[i].normal.y, SIM_FX_ONE);
        cr_assert_leq(c[i].depth, M(0.1) + 2);
    }
    cr_assert(labs((long)c[0].depth - M(0.1)) <= 2, "depth %d", c[0].depth);
    // sorted deepest first, then by triangle
    for (int i = 1; i < (n < 8 ? n : 8); i++)
        cr_assert(c[i - 1].depth > c[i].depth ||
                  (c[i - 1].depth == c[i].depth && c[i - 1].feature.triangle < c[i].feature.triangle));
    sim_world_destroy(w);
}

Test(contacts, capsule_depth_matches_reference)
{
    keel_rng rng = {77};
    for (int i = 0; i < 5000; i++) {
        L = (tri_list){0};
        sim_vec3 tv[3];
        for (int k = 0; k < 3; k++)
            tv[k] =
                sim_v3(keel_rng_fx(&rng, M(-2), M(2)), keel_rng_fx(&rng, M(-2), M(2)), keel_rng_fx(&rng, M(-2), M(2)));
        add_tri(&L, tv[0], tv[1], tv[2]);
        sim_level lv = {L.v, 3, L.idx, 1, NULL, 0, NULL, 0};
        sim_world *w = sim_world_create(&lv, NULL, NULL);
        sim_shape s = rand_capsule(&rng);
        sim_vec3 p =
            sim_v3(keel_rng_fx(&rng, M(-2), M(2)), keel_rng_fx(&rng, M(-2), M(2)), keel_rng_fx(&rng, M(-2), M(2)));
        sim_overlap_input in = {s, p, M(0.5)};
        sim_contact c;
        int n = sim_world_contacts(w, &in, &c, 1);
        double gap = ref_shape_tri_gap(s, rv3_from(p), rv3_from(tv[0]), rv3_from(tv[1]), rv3_from(tv[2]));
        if (sim_world_get_stats(w).triangle_count == 0) {
            sim_world_destroy(w);
            continue;
        }
        if (gap > 0.5 + 1e-3) {
            cr_assert_eq(n, 0, "case %d gap %.6f", i, gap);
        } else if (gap < 0.5 - 1e-3) {
            cr_assert_eq(n, 1, "case %d gap %.6f", i, gap);
            double r = s.radius / 65536.0;
            if (gap <= -r + 1e-9) {
                // the segment pierces the triangle: the depth is the push
                // along the face normal that frees it, at least the radius
                cr_assert_geq(c.depth / 65536.0, r - 1e-4, "case %d", i);
            } else {
                // depth = -gap within 0.1 mm (fixed-point closest points)
                cr_assert(fabs(c.depth / 65536.0 + gap) < 1e-4, "case %d depth %.6f gap %.6f", i, c.depth / 65536.0,
                          gap);
            }
            cr_assert_lt(unit_err(c.normal), NORMAL_TOL);
        }
        sim_world_destroy(w);
    }
}

Test(contacts, cylinder_in_floor)
{
    L = (tri_list){0};
    add_floor(&L, -4, -4, 4, 4, 0, 8);
    sim_world *w = make_world(&L);
    sim_contact c[8];
    // 0.1 m into a tessellated floor, centred over a shared vertex
    sim_overlap_input in = {cylinder(0.4, 1.8), V(0, 0.8, 0), 0};
    int n = sim_world_contacts(w, &in, c, 8);
    cr_assert_gt(n, 0);
    for (int i = 0; i < (n < 8 ? n : 8); i++) {
        cr_assert_eq(c[i].normal.y, SIM_FX_ONE, "contact %d normal (%d,%d,%d)", i, c[i].normal.x, c[i].normal.y,
                     c[i].normal.z);
        cr_assert(labs((long)c[i].depth - M(0.1)) <= 2, "contact %d depth %d", i, c[i].depth);
    }
    sim_world_destroy(w);
}

// One random cylinder and triangle (seeded by case), for the contact tests.
typedef struct contact_case {
    sim_world *world;
    sim_vec3 tv[3];
    sim_shape shape;
    sim_vec3 pos;
    int n;
    sim_contact c;
    double gap; // the reference's
} contact_case;

static bool contact_case_make(keel_rng *rng, int i, sim_fx margin, contact_case *k)
{
    L = (tri_list){0};
    for (int j = 0; j < 3; j++)
        k->tv[j] = sim_v3(keel_rng_fx(rng, M(-2), M(2)), keel_rng_fx(rng, M(-2), M(2)), keel_rng_fx(rng, M(-2), M(2)));
    if (i % 4 == 0) {
        k->tv[1].y = k->tv[0].y;
        k->tv[2].y = k->tv[0].y;
    }
    add_tri(&L, k->tv[0], k->tv[1], k->tv[2]);
    sim_level lv = {L.v, 3, L.idx, 1, NULL, 0, NULL, 0};
    k->world = sim_world_create(&lv, NULL, NULL);
    k->shape = rand_cylinder(rng);
    k->pos = sim_v3(keel_rng_fx(rng, M(-2), M(2)), keel_rng_fx(rng, M(-2), M(2)), keel_rng_fx(rng, M(-2), M(2)));
    if (sim_world_get_stats(k->world).triangle_count == 0) {
        sim_world_destroy(k->world);
        return false;
    }
    sim_overlap_input in = {k->shape, k->pos, margin};
    k->n = sim_world_contacts(k->world, &in, &k->c, 1);
    k->gap = ref_shape_tri_gap(k->shape, rv3_from(k->pos), rv3_from(k->tv[0]), rv3_from(k->tv[1]), rv3_from(k->tv[2]));
    return true;
}

static const char *contact_text(const contact_case *k)
{
    static char buf[400];
    snprintf(buf, sizeof buf,
             "depth %.6f normal (%d,%d,%d) feature %d/%d; reference gap %.6f; radius %d half height %d at "
             "(%d,%d,%d) tri (%d,%d,%d) (%d,%d,%d) (%d,%d,%d) [1/65536 m]",
             k->c.depth / 65536.0, k->c.normal.x, k->c.normal.y, k->c.normal.z, k->c.feature.type, k->c.feature.index,
             k->gap, k->shape.radius, k->shape.half.y, k->pos.x, k->pos.y, k->pos.z, k->tv[0].x, k->tv[0].y, k->tv[0].z,
             k->tv[1].x, k->tv[1].y, k->tv[1].z, k->tv[2].x, k->tv[2].y, k->tv[2].z);
    return buf;
}

// What the separating-axis contact promises: every contact within the margin
// is found; an overlap is never reported shallower than it is, and pushing
// the cylinder out along the normal by the depth frees it; a separation is
// never reported larger than it is.
Test(contacts, cylinder_contact_frees_along_normal)
{
    keel_rng rng = {78};
    int judged = 0, overlapping = 0;
    for (int i = 0; i < 5000; i++) {
        contact_case k;
        if (!contact_case_make(&rng, i, M(0.5), &k))
            continue;
        if (k.gap < 0.5 - 1e-3) {
            judged++;
            cr_assert_eq(k.n, 1, "case %d: no contact; %s", i, contact_text(&k));
            cr_assert_lt(unit_err(k.c.normal), NORMAL_TOL, "case %d: %s", i, contact_text(&k));
            double depth = k.c.depth / 65536.0;
            if (k.gap < 0) {
                overlapping++;
                cr_assert_geq(depth, -k.gap - 1e-4, "case %d: too shallow; %s", i, contact_text(&k));
                rv3 out = rv3_add(rv3_from(k.pos), rv3_scale(rv3_from(k.c.normal), depth + 1e-4));
                double g = ref_shape_tri_gap(k.shape, out, rv3_from(k.tv[0]), rv3_from(k.tv[1]), rv3_from(k.tv[2]));
                cr_assert_geq(g, -1e-4, "case %d: pushed out along the normal, still %.6f in; %s", i, g,
                              contact_text(&k));
            } else {
                cr_assert_geq(depth, -k.gap - 1e-4, "case %d: separation over-estimated; %s", i, contact_text(&k));
            }
        }
        sim_world_destroy(k.world);
    }
    cr_assert_gt(judged, 1000);
    cr_assert_gt(overlapping, 300);
}

// The exact depth, as for the capsule: the cylinder is convex, its depth is
// the shortest translation that frees it, its separation the distance.
// The contact tests a finite set of separating axes (collide_cylinder.c):
// exact where the movement lives (overlaps up to 5 cm, and any separation),
// an upper bound for deep overlaps, which it may overstate by a few percent.
Test(contacts, cylinder_depth_matches_reference)
{
    keel_rng rng = {78};
    int judged = 0, bad = 0;
    double worst = 0;
    for (int i = 0; i < 5000; i++) {
        contact_case k;
        if (!contact_case_make(&rng, i, M(0.5), &k))
            continue;
        if (k.gap > 0.5 + 1e-3) {
            cr_assert_eq(k.n, 0, "case %d: contact beyond the margin; %s", i, contact_text(&k));
        } else if (k.gap < 0.5 - 1e-3) {
            judged++;
            cr_assert_eq(k.n, 1, "case %d: no contact; %s", i, contact_text(&k));
            double err = k.c.depth / 65536.0 + k.gap; // > 0: deeper than the truth
            if (-k.gap <= 0.05) {
                cr_assert(fabs(err) < 1e-4, "case %d: %s", i, contact_text(&k));
            } else {
                cr_assert(err > -1e-4 && err < 0.05 * -k.gap, "case %d: %s", i, contact_text(&k));
                if (err >= 1e-4)
                    bad++;
                worst = fmax(worst, err / -k.gap);
            }
        }
        sim_world_destroy(k.world);
    }
    cr_log_info("cylinder contact depth: %d judged; %d overlaps deeper than 5 cm overstated by more than 0.1 mm, at "
                "most by %.2f%%",
                judged, bad, 100 * worst);
    cr_assert_gt(judged, 1000);
}

// ---- the reference itself -------------------------------------------------------
//
// ref_cylinder_tri_gap searches a few families of directions; these check it
// against methods that know nothing of them.

static double bf_R, bf_H;
static rv3 bf_p, bf_a, bf_b, bf_c;

// Distance from a point to the solid cylinder: clamp vertically and radially.
static double bf_point_dist(rv3 q)
{
    double dy = fmax(fabs(q.y - bf_p.y) - bf_H, 0);
    double dr = fmax(sqrt((q.x - bf_p.x) * (q.x - bf_p.x) + (q.z - bf_p.z) * (q.z - bf_p.z)) - bf_R, 0);
    return sqrt(dy * dy + dr * dr);
}

static rv3 bf_tri_point(double u, double v)
{
    return rv3_add(bf_a, rv3_add(rv3_scale(rv3_sub(bf_b, bf_a), u), rv3_scale(rv3_sub(bf_c, bf_a), v)));
}

// That distance is convex over the triangle: nested golden sections find its
// minimum, the distance between the sets.
static double bf_min_over_v(double u)
{
    double lo = 0, hi = 1 - u;
    for (int k = 0; k < 80 && hi - lo > 1e-13; k++) {
        double m1 = lo + (hi - lo) * 0.381966, m2 = hi - (hi - lo) * 0.381966;
        if (bf_point_dist(bf_tri_point(u, m1)) <= bf_point_dist(bf_tri_point(u, m2)))
            hi = m2;
        else
            lo = m1;
    }
    return bf_point_dist(bf_tri_point(u, 0.5 * (lo + hi)));
}

static double bf_distance(void)
{
    double lo = 0, hi = 1;
    for (int k = 0; k < 80 && hi - lo > 1e-13; k++) {
        double m1 = lo + (hi - lo) * 0.381966, m2 = hi - (hi - lo) * 0.381966;
        if (bf_min_over_v(m1) <= bf_min_over_v(m2))
            hi = m2;
        else
            lo = m1;
    }
    return bf_min_over_v(0.5 * (lo + hi));
}

// The cylinder as a regular prism of `sides` sides and circumradius rc: for
// two overlapping polytopes the separating-axis test over face normals and
// edge crosses gives minus the exact penetration depth.
static double bf_prism_axis(double rc, int sides, rv3 n)
{
    double l = rv3_len(n);
    if (l < 1e-12)
        return -1e300;
    n = rv3_scale(n, 1 / l);
    double h = sqrt(n.x * n.x + n.z * n.z), st = 2 * 3.14159265358979323846 / sides;
    double ring = 0;
    if (h > 0) {
        double phi = atan2(n.z, n.x), d = phi - round(phi / st) * st;
        ring = rc * h * cos(d); // a vertex nearest the direction; symmetric both ways
    }
    double support = bf_H * fabs(n.y) + ring;
    rv3 v[3] = {rv3_sub(bf_a, bf_p), rv3_sub(bf_b, bf_p), rv3_sub(bf_c, bf_p)};
    double lo = fmin(rv3_dot(n, v[0]), fmin(rv3_dot(n, v[1]), rv3_dot(n, v[2])));
    double hi = fmax(rv3_dot(n, v[0]), fmax(rv3_dot(n, v[1]), rv3_dot(n, v[2])));
    return fmax(lo - support, -support - hi);
}

static double bf_prism_gap(double rc, int sides)
{
    double st = 2 * 3.14159265358979323846 / sides;
    rv3 e[3] = {rv3_sub(bf_b, bf_a), rv3_sub(bf_c, bf_b), rv3_sub(bf_a, bf_c)};
    rv3 up = {0, 1, 0};
    double best = fmax(bf_prism_axis(rc, sides, up), bf_prism_axis(rc, sides, rv3_cross(e[0], e[1])));
    for (int i = 0; i < 3; i++)
        best = fmax(best, bf_prism_axis(rc, sides, rv3_cross(up, e[i])));
    for (int k = 0; k < sides; k++) {
        rv3 ed = {rc * (cos((k + 1) * st) - cos(k * st)), 0, rc * (sin((k + 1) * st) - sin(k * st))};
        best = fmax(best, bf_prism_axis(rc, sides, rv3_cross(ed, up)));
        for (int i = 0; i < 3; i++)
            best = fmax(best, bf_prism_axis(rc, sides, rv3_cross(ed, e[i])));
    }
    return best;
}

Test(ref_geom, cylinder_gap_hand_cases)
{
    const double R = 0.5, H = 0.9;
    rv3 f0 = {-10, 0, -10}, f1 = {-10, 0, 10}, f2 = {10, 0, 10};
    // standing on a floor, above it, sunk into it
    cr_assert(fabs(ref_cylinder_tri_gap(R, H, (rv3){0.3, 0.9, 0.2}, f0, f1, f2)) < 1e-12);
    cr_assert(fabs(ref_cylinder_tri_gap(R, H, (rv3){0.3, 1.0, 0.2}, f0, f1, f2) - 0.1) < 1e-12);
    cr_assert(fabs(ref_cylinder_tri_gap(R, H, (rv3){0.3, 0.7, 0.2}, f0, f1, f2) + 0.2) < 1e-12);
    // a wall x = 2
    rv3 w0 = {2, -5, -5}, w1 = {2, 5, -5}, w2 = {2, 5, 5};
    cr_assert(fabs(ref_cylinder_tri_gap(R, H, (rv3){1.3, 0.5, 0}, w0, w1, w2) - 0.2) < 1e-12);
    cr_assert(fabs(ref_cylinder_tri_gap(R, H, (rv3){1.6, 0.5, 0}, w0, w1, w2) + 0.1) < 1e-12);
    // a ledge top y = 1 over x >= 2: the bottom rim near its edge
    rv3 l0 = {2, 1, -5}, l1 = {2, 1, 5}, l2 = {5, 1, 0};
    cr_assert(fabs(ref_cylinder_tri_gap(R, 0.5, (rv3){1.47, 1.54, 0}, l0, l1, l2) - 0.05) < 1e-12);
    // centre short of the edge, disc over the ledge: the flat bottom
    cr_assert(fabs(ref_cylinder_tri_gap(R, 0.5, (rv3){1.8, 1.54, 0}, l0, l1, l2) - 0.04) < 1e-12);
    // sunk 0.1 m into the ledge's edge, 0.05 m in from the side: the side is nearer
    cr_assert(fabs(ref_cylinder_tri_gap(R, 0.5, (rv3){1.55, 1.4, 0}, l0, l1, l2) + 0.05) < 1e-12);
    // the bottom rim against a vertex pointing at it
    rv3 v0 = {0.6, 0.1, 0}, v1 = {2, -1, 1}, v2 = {2, -1, -1};
    cr_assert(fabs(ref_cylinder_tri_gap(R, 0.05, (rv3){0, 0, 0}, v0, v1, v2) - sqrt(0.0125)) < 1e-12);
    // the same seen at an angle about the axis
    double ca = cos(0.7), sa = sin(0.7);
    rv3 r0 = {0.6 * ca, 0.1, 0.6 * sa}, r1 = {2 * ca - sa, -1, 2 * sa + ca}, r2 = {2 * ca + sa, -1, 2 * sa - ca};
    cr_assert(fabs(ref_cylinder_tri_gap(R, 0.05, (rv3){0, 0, 0}, r0, r1, r2) - sqrt(0.0125)) < 1e-12);
    // the shape dispatch agrees
    sim_shape s = cylinder(0.5, 1.8);
    cr_assert(fabs(ref_shape_tri_gap(s, (rv3){0.3, 1.0, 0.2}, f0, f1, f2) - (1.0 - s.half.y / 65536.0)) < 1e-12);
}

Test(ref_geom, cylinder_gap_matches_brute_force, .timeout = 600)
{
    keel_rng rng = {99};
    int apart = 0, overlapping = 0;
    for (int i = 0; i < 300; i++) {
        bf_R = keel_rng_range(&rng, 100, 1000) / 1000.0;
        bf_H = keel_rng_range(&rng, 50, 1250) / 1000.0;
        rv3 *pts[4] = {&bf_p, &bf_a, &bf_b, &bf_c};
        for (int k = 0; k < 4; k++)
            *pts[k] = (rv3){keel_rng_range(&rng, -2000, 2000) / 1000.0, keel_rng_range(&rng, -2000, 2000) / 1000.0,
                            keel_rng_range(&rng, -2000, 2000) / 1000.0};
        if (i % 3 == 1) { // a floor
            bf_b.y = bf_a.y;
            bf_c.y = bf_a.y;
        } else if (i % 3 == 2) { // the centre near the triangle's
            bf_p = rv3_scale(rv3_add(bf_a, rv3_add(bf_b, bf_c)), 1.0 / 3);
            bf_p.y += keel_rng_range(&rng, -1000, 1000) / 1000.0 * bf_H;
        }
        double g = ref_cylinder_tri_gap(bf_R, bf_H, bf_p, bf_a, bf_b, bf_c);
        if (g > 0) {
            apart++;
            double d = bf_distance();
            cr_assert(fabs(g - d) < 1e-9, "case %d: gap %.12f, brute force %.12f", i, g, d);
        } else {
            overlapping++;
            // between the prisms inside and around the cylinder
            const int sides = 512;
            double in = bf_prism_gap(bf_R, sides);
            double out = bf_prism_gap(bf_R / cos(3.14159265358979323846 / sides), sides);
            cr_assert(g <= in + 1e-9 && g >= out - 1e-9, "case %d: gap %.12f, prisms [%.12f, %.12f]", i, g, out, in);
        }
    }
    cr_assert_gt(apart, 50);
    cr_assert_gt(overlapping, 50);
}

// ---- rays -----------------------------------------------------------------------

Test(ray, hits_floor_and_reports_face)
{
    L = (tri_list){0};
    add_floor(&L, -4, -4, 4, 4, 0, 8);
    sim_world *w = make_world(&L);
    sim_ray_input in = {V(0.3, 5, 0.7), V(0, -10, 0)};
    sim_ray_result r;
    cr_assert(sim_world_raycast(w, &in, &r));
    cr_assert(labs((long)r.fraction - M(0.5)) <= 1);
    cr_assert_eq(r.normal.y, SIM_FX_ONE);
    cr_assert(labs((long)r.point.y) <= 1);
    in.origin = V(0.3, -5, 0.7);
    in.displacement = V(0, 10, 0);
    cr_assert(sim_world_raycast(w, &in, &r));
    cr_assert_eq(r.normal.y, -SIM_FX_ONE); // double-sided: faces the origin
    in.origin = V(5, 5, 0);
    in.displacement = V(0, -10, 0);
    cr_assert_not(sim_world_raycast(w, &in, &r));
    sim_world_destroy(w);
}

// ---- determinism: the order of triangles does not matter --------------------------

Test(determinism, triangle_order_does_not_change_results)
{
    static tri_list a, b;
    a = (tri_list){0};
    add_floor(&a, -4, -4, 4, 4, 0, 10);
    add_tri(&a, V(1, 0, -4), V(1, 3, -4), V(1, 3, 4));
    add_tri(&a, V(1, 0, -4), V(1, 3, 4), V(1, 0, 4));
    // b: the same triangles in reversed order
    b = (tri_list){0};
    for (int i = (int)a.nt - 1; i >= 0; i--)
        add_tri(&b, a.v[a.idx[3 * i]], a.v[a.idx[3 * i + 1]], a.v[a.idx[3 * i + 2]]);
    sim_world *wa = make_world(&a);
    sim_world *wb = make_world(&b);
    keel_rng rng = {5};
    for (int i = 0; i < 2000; i++) {
        sim_sweep_input in = {
            i % 2 ? capsule(0.4, 1.8) : box(0.4, 0.9, 0.4),
            sim_v3(keel_rng_fx(&rng, M(-3), M(3)), keel_rng_fx(&rng, M(0.5), M(2)), keel_rng_fx(&rng, M(-3), M(3))),
            sim_v3(keel_rng_fx(&rng, M(-2), M(2)), keel_rng_fx(&rng, M(-2), M(1)), keel_rng_fx(&rng, M(-2), M(2))), 0};
        sim_sweep_result ra, rb;
        bool ha = sim_world_sweep(wa, &in, &ra), hb = sim_world_sweep(wb, &in, &rb);
        cr_assert_eq(ha, hb);
        cr_assert_eq(ra.fraction, rb.fraction, "sweep %d: %d vs %d, n (%d,%d,%d) vs (%d,%d,%d)", i, ra.fraction,
                     rb.fraction, ra.normal.x, ra.normal.y, ra.normal.z, rb.normal.x, rb.normal.y, rb.normal.z);
        cr_assert(sim_v3_eq(ra.normal, rb.normal), "sweep %d", i);
        cr_assert(sim_v3_eq(ra.position, rb.position), "sweep %d", i);
    }
    sim_world_destroy(wa);
    sim_world_destroy(wb);
}

// ---- oriented boxes -------------------------------------------------------------

#include <keel/sim_angle.h>

#include "world_internal.h"

// Sweeps of both character shapes against random oriented boxes, judged by
// the reference against the box's 12 triangles as the world built them.
static void obb_property(sim_shape (*make_shape)(keel_rng *), uint64_t seed)
{
    keel_rng rng = {seed};
    int hits = 0;
    const int cases = KEEL_TEST_SIZE(2000, 250);
    for (int i = 0; i < cases; i++) {
        sim_angle yaw = (sim_angle)keel_rng_range(&rng, 0, 65535);
        sim_angle tilt = (sim_angle)keel_rng_range(&rng, 0, 65535);
        // axes: a yaw about Y, then a tilt about the yawed X axis
        sim_fx cy = sim_angle_cos(yaw), sy = sim_angle_sin(yaw);
        sim_fx ct = sim_angle_cos(tilt), st = sim_angle_sin(tilt);
        sim_vec3 ax = sim_v3(cy, 0, -sy);
        sim_vec3 ay = sim_v3(sim_fx_mul(sy, st), ct, sim_fx_mul(cy, st));
        sim_vec3 az = sim_v3_cross(ax, ay);
        sim_fx hx = keel_rng_fx(&rng, M(0.05), M(2)), hy = keel_rng_fx(&rng, M(0.05), M(2));
        sim_fx hz = keel_rng_fx(&rng, M(0.05), M(2));
        sim_box_def b = {sim_v3_zero(), sim_v3(hx, hy, hz), {ax, ay, az}};
        sim_level lv = {NULL, 0, NULL, 0, &b, 1, NULL, 0};
        sim_world *w = sim_world_create(&lv, NULL, NULL);
        cr_assert_not_null(w);
        sim_shape s = make_shape(&rng);
        sim_fx sx = keel_rng_fx(&rng, M(-5), M(5));
        sim_fx sy2 = keel_rng_fx(&rng, M(-5), M(5));
        sim_fx sz = keel_rng_fx(&rng, M(-5), M(5));
        sim_vec3 start = sim_v3(sx, sy2, sz);
        sim_vec3 d = sim_v3_sub(sim_v3_zero(), start); // aim at the centre
        sim_sweep_input in = {s, start, d, 0};
        sim_sweep_result r;
        bool hit = sim_world_sweep(w, &in, &r);
        rv3 p0 = rv3_from(start), dd = rv3_from(d);
        double gap0 = 1e300;
        rv3 tris[3 * 12];
        cr_assert_leq(w->tri_count, 12);
        for (uint32_t k = 0; k < w->tri_count; k++) {
            for (int j = 0; j < 3; j++)
                tris[3 * k + j] = rv3_from(w->tris[k].v[j]);
            gap0 = fmin(gap0, ref_shape_tri_gap(s, p0, tris[3 * k], tris[3 * k + 1], tris[3 * k + 2]));
        }
        double toi = ref_shape_tris_toi(s, p0, dd, tris, w->tri_count);
        if (gap0 < 0.01 || (toi > 1 && !hit)) {
            // starting against it, or inside the box without touching a face
            sim_world_destroy(w);
            continue;
        }
        char what[400];
        snprintf(what, sizeof what,
                 "shape %d radius %d half (%d,%d,%d) start (%d,%d,%d) displacement (%d,%d,%d); box half "
                 "(%d,%d,%d) axes (%d,%d,%d) (%d,%d,%d) (%d,%d,%d) at 0 [1/65536 m]",
                 (int)s.type, s.radius, s.half.x, s.half.y, s.half.z, start.x, start.y, start.z, d.x, d.y, d.z, hx, hy,
                 hz, ax.x, ax.y, ax.z, ay.x, ay.y, ay.z, az.x, az.y, az.z);
        cr_assert(hit, "case %d: missed the box (true contact at %.6f)\n  %s", i, toi, what);
        hits++;
        cr_assert_leq(r.fraction / 65536.0, toi + 1e-9, "case %d: late (%.9f, true %.9f)\n  %s", i,
                      r.fraction / 65536.0, toi, what);
        rv3 at = rv3_from(r.position);
        double gmin = 1e300;
        for (uint32_t k = 0; k < w->tri_count; k++) {
            double g = ref_shape_tri_gap(s, at, rv3_from(w->tris[k].v[0]), rv3_from(w->tris[k].v[1]),
                                         rv3_from(w->tris[k].v[2]));
            cr_assert_geq(g, -POS_TOL, "case %d: overlap %.6f at the impact (triangle %u)\n  %s", i, g, k, what);
            gmin = fmin(gmin, g);
        }
        // not too early either (the bounds of random_sweep_property)
        double len = rv3_len(dd);
        double inflate = (SIM_QUERY_TOLERANCE + (M(len) >> 12)) / 65536.0;
        double early = s.type == SIM_SHAPE_BOX        ? 1.7321 * inflate
                       : s.type == SIM_SHAPE_CYLINDER ? 1.4143 * inflate
                                                      : inflate;
        cr_assert_leq(gmin, early + 1e-4 + 1e-4 * len, "case %d: impact %.6f m early (fraction %.9f, true %.9f)\n  %s",
                      i, gmin, r.fraction / 65536.0, toi, what);
        cr_assert_lt(unit_err(r.normal), NORMAL_TOL, "case %d\n  %s", i, what);
        sim_world_destroy(w);
    }
    cr_assert_gt(hits, cases * 2 / 5);
}

Test(sweep_property, capsule_vs_random_oriented_boxes) { obb_property(rand_capsule, 201); }
Test(sweep_property, box_vs_random_oriented_boxes) { obb_property(rand_box, 202); }
Test(sweep_property, cylinder_vs_random_oriented_boxes, .timeout = 600) { obb_property(rand_cylinder, 203); }
