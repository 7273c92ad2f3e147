// keel tests: a differential fuzzer of the narrow phase (sweeps, contacts,
// the ground probe's downward sweep) against the double-precision reference
// in support/ref_geom.c. MIT licence.
//
// Every configuration is a small level built through sim_world_create (so
// edge flags are judged as in any level: shared, buried and inactive edges,
// folds), a shape and a placement found in double against the reference: a
// near contact of -3 to +6 mm to a random point of a triangle, of an edge or
// of a corner. The fixed-point answers must be conservative:
//  - a contact query misses no overlap deeper than TOL the reference sees
//    (per triangle) and understates no depth by more than TOL;
//  - a sweep that starts apart stops where the shape, all along the motion
//    up to the reported position, is never deeper than TOL in any triangle
//    (the gap along a line is convex for a convex shape and triangle, so it
//    is minimised exactly by a golden-section search).
// A failure prints the whole configuration in raw Q16.16 integers, ready to
// paste into a regression test (narrow_case below replays one).
//
// Budget: KEEL_FUZZ_CONFIGS configurations (default DEFAULT_CONFIGS: about
// 13 s of CPU in the RelWithDebInfo tree), or KEEL_FUZZ_SECONDS of them for
// long runs, from KEEL_FUZZ_SEED (default a fixed seed); KEEL_FUZZ_WORLD
// starts at that world (each world draws its own stream from the seed and
// its index, so a printed failure runs again alone). Long runs:
// scripts/fuzz-narrow.sh. The rates printed are configurations per second
// of wall time and of CPU time.
//
// The double reference is most of the cost, so each question is asked of
// its cheapest sufficient bound first: the centre's distance less the
// shape's reach, a cylinder's bounding box and the box inside it, and
// along a motion the gap's convexity and its speed (at most the shape's).
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/sim_world.h>

#include "ref_geom.h"
#include "test_support.h"
#include "world_internal.h"

#define TOL ((double)SIM_QUERY_TOLERANCE / 65536.0 + 2e-5)
#define DEFAULT_CONFIGS 150000
#define MAX_TRIS 1024
#define DEG (3.14159265358979323846 / 180.0)
#define FQ(x) ((sim_fx)llround((x)*65536.0))

static uint64_t rng_state;
// The run's seed and the world being checked (for the failure printout).
static uint64_t fuzz_seed, fuzz_world;

// Each world draws from its own stream (the seed and its index), so that
// KEEL_FUZZ_WORLD can start a run at the world that failed.
static void rng_world(uint64_t seed, uint64_t world) { rng_state = seed ^ (world * UINT64_C(0xD1B54A32D192ED03)); }

static uint64_t rnd(void)
{
    // splitmix64: the same stream on every platform
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static double unif(double lo, double hi) { return lo + (hi - lo) * (double)(rnd() >> 11) / 9007199254740992.0; }
static int pick(int n) { return (int)(rnd() % (uint64_t)n); }

typedef struct geo {
    sim_vec3 v[MAX_TRIS * 3];
    uint32_t idx[MAX_TRIS * 3];
    uint32_t id[MAX_TRIS]; // each triangle's feature id in the world (its level index)
    uint32_t nt;
    const char *kind;
} geo;

// A frame: yaw about y, then a tilt about x, then an offset.
typedef struct frame {
    double yaw, tilt;
    rv3 at;
} frame;

static rv3 frame_apply(const frame *f, rv3 p)
{
    double cy = cos(f->yaw), sy = sin(f->yaw), ct = cos(f->tilt), st = sin(f->tilt);
    rv3 q = {p.x, p.y * ct - p.z * st, p.y * st + p.z * ct};
    rv3 r = {q.x * cy + q.z * sy, q.y, -q.x * sy + q.z * cy};
    return rv3_add(r, f->at);
}

static sim_vec3 to_fx(rv3 p) { return sim_v3(FQ(p.x), FQ(p.y), FQ(p.z)); }

static void geo_tri(geo *g, const frame *f, rv3 a, rv3 b, rv3 c)
{
    if (g->nt >= MAX_TRIS)
        return;
    uint32_t k = g->nt * 3;
    g->v[k] = to_fx(frame_apply(f, a));
    g->v[k + 1] = to_fx(frame_apply(f, b));
    g->v[k + 2] = to_fx(frame_apply(f, c));
    for (int j = 0; j < 3; j++)
        g->idx[k + j] = k + (uint32_t)j;
    g->id[g->nt] = g->nt;
    g->nt++;
}

// A quad a b c d (counter-clockwise) as two triangles.
static void geo_quad(geo *g, const frame *f, rv3 a, rv3 b, rv3 c, rv3 d)
{
    geo_tri(g, f, a, b, c);
    geo_tri(g, f, a, c, d);
}

// A wall standing on a floor that runs on under it, split along the wall's
// foot so that its edges cover the wall's bottom edge from both sides: that
// edge is buried.
static void geo_wall_on_floor(geo *g, const frame *f, double s, double h, double zw)
{
    geo_quad(g, f, (rv3){-s, 0, -s}, (rv3){-s, 0, s}, (rv3){0, 0, s}, (rv3){0, 0, -s});
    geo_quad(g, f, (rv3){0, 0, -s}, (rv3){0, 0, s}, (rv3){s, 0, s}, (rv3){s, 0, -s});
    geo_quad(g, f, (rv3){0, 0, -zw}, (rv3){0, h, -zw}, (rv3){0, h, zw}, (rv3){0, 0, zw});
}

// A ramp rising along z, its side edge in the wall x = 0, which is split
// along that edge and runs on above and below it: the edge is buried.
static void geo_ramp_by_wall(geo *g, const frame *f, double slope, double len, double wd)
{
    double rise = len * slope;
    rv3 a = {0, 0, 0}, b = {0, rise, len};
    geo_quad(g, f, a, b, (rv3){wd, rise, len}, (rv3){wd, 0, 0});
    geo_quad(g, f, a, (rv3){0, 2, 0}, (rv3){0, rise + 2, len}, b);
    geo_quad(g, f, a, b, (rv3){0, rise - 1, len}, (rv3){0, -1, 0});
}

static double fold_angle(void)
{
    // Degrees: exact, below and around the flatness limit, the real maps'
    // 1.54, up to 5 (beyond coplanar_cos), both signs.
    static const double pinned[] = {0, 0.004, 0.012, 0.05, 0.3, 1.54, 1.99, 2.01, 4.9};
    double a = pick(3) == 0 ? unif(0, 5) : pinned[pick(9)];
    return pick(2) ? a : -a;
}

// One of the level families; every coordinate exact in Q16.16 once built.
static void geo_make(geo *g)
{
    g->nt = 0;
    frame f = {unif(0, 6.2832), 0, {unif(-50, 50), unif(-20, 20), unif(-50, 50)}};
    int kind = pick(6);
    if (kind == 0) {
        g->kind = "triangle";
        f.tilt = unif(-1.6, 1.6);
        double s = unif(0.2, 4);
        geo_tri(g, &f, (rv3){unif(-s, s), 0, unif(-s, s)}, (rv3){unif(-s, s), unif(-0.01, 0.01), unif(-s, s)},
                (rv3){unif(-s, s), 0, unif(-s, s)});
    } else if (kind == 1) {
        // Two triangles folded about a shared edge (convex or concave by the
        // sign), on a tilted base; sometimes a strip of four.
        g->kind = "fold";
        f.tilt = pick(2) ? unif(-0.8, 0.8) : 0;
        double a = fold_angle() * DEG, len = unif(0.5, 3), w = unif(0.4, 3);
        rv3 p0 = {0, 0, -len}, p1 = {0, 0, len};
        rv3 c = {-w, 0, unif(-len, len)};
        rv3 d = {w * cos(a), w * sin(a), unif(-len, len)};
        geo_tri(g, &f, p0, c, p1);
        geo_tri(g, &f, p0, p1, d);
        if (pick(2)) {
            double a2 = a + fold_angle() * DEG;
            rv3 e = {d.x + w * cos(a2), d.y + w * sin(a2), unif(-len, len)};
            geo_tri(g, &f, p1, e, d);
        }
    } else if (kind == 2) {
        // A wall standing on a floor that runs on under it: the wall's bottom
        // edge lies in the floor (buried).
        g->kind = "wall on floor";
        f.tilt = pick(3) == 0 ? unif(-0.3, 0.3) : 0;
        double s = unif(1, 3), h = unif(0.5, 3), zw = unif(0.5, 2);
        geo_wall_on_floor(g, &f, s, h, zw);
    } else if (kind == 3) {
        // A ramp along a wall that runs on above and below its side edge
        // (buried), on a floor.
        g->kind = "ramp by wall";
        double slope = unif(0.05, 0.8), len = unif(1, 4), wd = unif(0.8, 3);
        geo_ramp_by_wall(g, &f, slope, len, wd);
        if (pick(2))
            geo_quad(g, &f, (rv3){0.001, 0, -2}, (rv3){0.001, 0, len + 2}, (rv3){wd + 2, 0, len + 2},
                     (rv3){wd + 2, 0, -2});
    } else if (kind == 4) {
        // A tessellated floor with jitter: flat seams, tiny folds.
        g->kind = "tessellated";
        f.tilt = pick(2) ? unif(-0.6, 0.6) : 0;
        int n = 2 + pick(3);
        double cell = unif(0.3, 1.5), jit = pick(3) == 0 ? 0 : unif(0, 0.02);
        double hy[6][6];
        for (int i = 0; i <= n; i++)
            for (int j = 0; j <= n; j++)
                hy[i][j] = pick(2) ? unif(-jit, jit) : 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                rv3 a = {i * cell, hy[i][j], j * cell}, b = {i * cell, hy[i][j + 1], (j + 1) * cell};
                rv3 c = {(i + 1) * cell, hy[i + 1][j + 1], (j + 1) * cell},
                    d = {(i + 1) * cell, hy[i + 1][j], j * cell};
                geo_quad(g, &f, a, b, c, d);
            }
    } else {
        // A corner: floor and two walls, or a step.
        g->kind = "corner";
        double s = unif(1, 3), h = unif(0.1, 2);
        geo_quad(g, &f, (rv3){0, 0, 0}, (rv3){0, 0, s}, (rv3){s, 0, s}, (rv3){s, 0, 0});
        geo_quad(g, &f, (rv3){0, 0, 0}, (rv3){0, h, 0}, (rv3){0, h, s}, (rv3){0, 0, s});
        if (pick(2))
            geo_quad(g, &f, (rv3){0, 0, 0}, (rv3){s, 0, 0}, (rv3){s, h, 0}, (rv3){0, h, 0});
        else
            geo_quad(g, &f, (rv3){-s, h, 0}, (rv3){-s, h, s}, (rv3){0, h, s}, (rv3){0, h, 0});
    }
}

static sim_world *geo_world_def(geo *g, const sim_world_def *def)
{
    sim_level lv = {0};
    lv.vertices = g->v;
    lv.vertex_count = g->nt * 3;
    lv.indices = g->idx;
    lv.triangle_count = g->nt;
    return sim_world_create(&lv, def, NULL);
}

static sim_world *geo_world(geo *g)
{
    sim_world_def def = sim_world_default_def();
    return geo_world_def(g, &def);
}

static rv3 vtx(const geo *g, uint32_t t, int j) { return rv3_from(g->v[3 * t + (uint32_t)j]); }

static double tri_gap(const geo *g, uint32_t t, sim_shape s, rv3 p)
{
    return ref_shape_tri_gap(s, p, vtx(g, t, 0), vtx(g, t, 1), vtx(g, t, 2));
}

// A lower bound of the gap to triangle t: the centre's distance to it less
// the shape's reach (|half| bounds every point of every shape), which only
// grows as the shape is pushed out of an overlap. It spares the slow exact
// gaps of triangles that cannot decide a question.
static double tri_gap_bound(const geo *g, uint32_t t, sim_shape s, rv3 p)
{
    rv3 q = ref_closest_on_tri(p, vtx(g, t, 0), vtx(g, t, 1), vtx(g, t, 2));
    return rv3_len(rv3_sub(p, q)) - rv3_len(rv3_from(s.half));
}

// tri_gap when it is at most `stop`, else some value above `stop`.
static double tri_gap_stop(const geo *g, uint32_t t, sim_shape s, rv3 p, double stop)
{
    if (tri_gap_bound(g, t, s, p) > stop)
        return tri_gap_bound(g, t, s, p);
    return ref_shape_tri_gap_stop(s, p, vtx(g, t, 0), vtx(g, t, 1), vtx(g, t, 2), stop);
}

static double world_gap(const geo *g, sim_shape s, rv3 p)
{
    double best = 1e9;
    for (uint32_t t = 0; t < g->nt; t++) {
        double d = tri_gap_stop(g, t, s, p, best);
        best = d < best ? d : best;
    }
    return best;
}

// Whether triangle t's gap is at most `target`. A cylinder lies between its
// bounding box and the box inside it (half width R / sqrt 2): their gaps
// decide most cases without the slow exact one.
static bool tri_gap_within(const geo *g, uint32_t t, sim_shape s, rv3 p, double target)
{
    if (tri_gap_bound(g, t, s, p) > target)
        return false;
    rv3 a = vtx(g, t, 0), b = vtx(g, t, 1), c = vtx(g, t, 2);
    if (s.type == SIM_SHAPE_CYLINDER) {
        rv3 half = rv3_from(s.half);
        if (ref_box_tri_gap(half, p, a, b, c) > target)
            return false;
        half.x *= 0.70710678118654752;
        half.z *= 0.70710678118654752;
        if (ref_box_tri_gap(half, p, a, b, c) <= target)
            return true;
    }
    return ref_shape_tri_gap_stop(s, p, a, b, c, target) <= target;
}

// Whether every triangle's gap exceeds `target` (world_gap > target).
static bool world_clear(const geo *g, sim_shape s, rv3 p, double target)
{
    for (uint32_t t = 0; t < g->nt; t++)
        if (tri_gap_within(g, t, s, p, target))
            return false;
    return true;
}

static sim_shape random_shape(void)
{
    int k = pick(3);
    double r = unif(0.15, 0.6), half = unif(r, 1.1);
    if (k == 0)
        return sim_shape_capsule(FQ(r), FQ(2 * half));
    if (k == 1)
        return sim_shape_box(FQ(r), FQ(half), FQ(unif(0.15, 0.6)));
    return sim_shape_cylinder(FQ(r), FQ(2 * half));
}

static const char *shape_name(sim_shape s)
{
    return s.type == SIM_SHAPE_BOX ? "box" : (s.type == SIM_SHAPE_CYLINDER ? "cylinder" : "capsule");
}

static rv3 unit(rv3 v)
{
    double l = rv3_len(v);
    return l > 0 ? rv3_scale(v, 1 / l) : (rv3){0, 1, 0};
}

static rv3 random_dir(void)
{
    for (;;) {
        rv3 v = {unif(-1, 1), unif(-1, 1), unif(-1, 1)};
        double l = rv3_len(v);
        if (l > 0.1 && l <= 1)
            return rv3_scale(v, 1 / l);
    }
}

static rv3 tri_normal(const geo *g, uint32_t t)
{
    return unit(rv3_cross(rv3_sub(vtx(g, t, 1), vtx(g, t, 0)), rv3_sub(vtx(g, t, 2), vtx(g, t, 0))));
}

// A point of triangle t: inside, on an edge or at a corner.
static rv3 tri_point(const geo *g, uint32_t t)
{
    double u = unif(0, 1), v = unif(0, 1);
    if (u + v > 1) {
        u = 1 - u;
        v = 1 - v;
    }
    int mode = pick(4);
    if (mode == 1)
        v = 0; // edge 0
    else if (mode == 2) {
        u = (double)pick(2);
        v = u > 0 ? 0 : (double)pick(2); // a corner
    }
    rv3 a = vtx(g, t, 0), b = vtx(g, t, 1), c = vtx(g, t, 2);
    return rv3_add(a, rv3_add(rv3_scale(rv3_sub(b, a), u), rv3_scale(rv3_sub(c, a), v)));
}

// The centre on the ray from p along u where the world gap is `target`
// (bisection between the surface point, inside, and far out). False when
// the far end is not clear.
static bool place(const geo *g, sim_shape s, rv3 p, rv3 u, double target, sim_vec3 *out)
{
    double lo = 0, hi = 0.1 + rv3_len(rv3_from(s.half)) * 1.8;
    if (!world_clear(g, s, rv3_add(p, rv3_scale(u, hi)), target))
        return false;
    if (world_clear(g, s, p, target))
        return false;
    // To 1e-8 m: far below Q16.16's step (1.5e-5 m) the position is rounded to.
    while (hi - lo > 1e-8) {
        double m = 0.5 * (lo + hi);
        if (world_clear(g, s, rv3_add(p, rv3_scale(u, m)), target))
            hi = m;
        else
            lo = m;
    }
    *out = to_fx(rv3_add(p, rv3_scale(u, hi)));
    return sim_v3_in_world(*out);
}

typedef struct stats {
    uint64_t contacts, sweeps, probes, failures;
} stats;

static void print_config(const char *what, const geo *g, sim_shape s, sim_vec3 pos, sim_vec3 d)
{
    fprintf(stderr, "narrow fuzz FAILURE (%s), level family %s, %u triangles (raw Q16.16):\n", what, g->kind, g->nt);
    fprintf(stderr,
            "  seed %llu world %llu (KEEL_FUZZ_SEED=%llu KEEL_FUZZ_WORLD=%llu KEEL_FUZZ_CONFIGS=1 runs it again)\n",
            (unsigned long long)fuzz_seed, (unsigned long long)fuzz_world, (unsigned long long)fuzz_seed,
            (unsigned long long)fuzz_world);
    for (uint32_t t = 0; t < g->nt; t++) {
        const sim_vec3 *v = &g->v[3 * t];
        fprintf(stderr, "  {{%d, %d, %d}, {%d, %d, %d}, {%d, %d, %d}},\n", v[0].x, v[0].y, v[0].z, v[1].x, v[1].y,
                v[1].z, v[2].x, v[2].y, v[2].z);
    }
    fprintf(stderr, "  shape %s type %d radius %d half {%d, %d, %d}\n", shape_name(s), (int)s.type, s.radius, s.half.x,
            s.half.y, s.half.z);
    fprintf(stderr, "  position {%d, %d, %d} displacement {%d, %d, %d}\n", pos.x, pos.y, pos.z, d.x, d.y, d.z);
}

// The contact query at pos against the reference, per triangle.
static bool check_contact(const sim_world *w, const geo *g, sim_shape s, sim_vec3 pos, sim_fx margin)
{
    sim_contact cs[MAX_TRIS];
    sim_overlap_input in = {s, pos, margin};
    int n = sim_world_contacts(w, &in, cs, MAX_TRIS);
    rv3 p = rv3_from(pos);
    bool ok = true;
    for (uint32_t t = 0; t < g->nt; t++) {
        double depth = -tri_gap_stop(g, t, s, p, -TOL);
        if (depth <= TOL)
            continue;
        double got = -1e9;
        for (int i = 0; i < n && i < MAX_TRIS; i++)
            if (cs[i].feature.triangle == g->id[t] && cs[i].depth / 65536.0 > got)
                got = cs[i].depth / 65536.0;
        if (got < depth - TOL) {
            if (ok)
                print_config("contact", g, s, pos, sim_v3_zero());
            fprintf(stderr, "  triangle %u (id %u): reference depth %.6f m, keel %s %.6f m\n", t, g->id[t], depth,
                    got > -1e8 ? "depth" : "no contact", got > -1e8 ? got : 0.0);
            ok = false;
        }
    }
    return ok;
}

// The gap to triangle t at fraction x of the motion: the shape's, or
// (bounding) that of the box around it.
static double gap_along(const geo *g, uint32_t t, sim_shape s, bool bounding, rv3 p, rv3 d, double x)
{
    rv3 at = rv3_add(p, rv3_scale(d, x));
    if (bounding)
        return ref_box_tri_gap(rv3_from(s.half), at, vtx(g, t, 0), vtx(g, t, 1), vtx(g, t, 2));
    return tri_gap(g, t, s, at);
}

// The smallest gap to triangle t on the motion's fractions [a, b] (convex:
// golden-section search), or the first value found below `enough`.
static double line_min(const geo *g, uint32_t t, sim_shape s, bool bounding, rv3 p, rv3 d, double a, double b,
                       double enough)
{
    const double r = 0.6180339887498949;
    double x1 = b - r * (b - a), x2 = a + r * (b - a);
    double f1 = gap_along(g, t, s, bounding, p, d, x1), f2 = gap_along(g, t, s, bounding, p, d, x2);
    // The gap moves at most as fast as the shape (1-Lipschitz in position):
    // once the bracket is too short to hide a value below `enough`, the
    // minimum is known to be above it.
    double speed = rv3_len(d);
    for (int i = 0; i < 50 && b - a > 1e-9 && f1 >= enough && f2 >= enough; i++) {
        if ((f1 < f2 ? f1 : f2) - speed * (b - a) > enough)
            break;
        if (f1 < f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - r * (b - a);
            f1 = gap_along(g, t, s, bounding, p, d, x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + r * (b - a);
            f2 = gap_along(g, t, s, bounding, p, d, x2);
        }
    }
    double m = f1 < f2 ? f1 : f2;
    if (m < enough)
        return m;
    double fb = gap_along(g, t, s, bounding, p, d, b);
    return fb < m ? fb : m;
}

// The smallest gap to triangle t on [a, b] when it is below -TOL (or some
// value below -TOL), else a value above -TOL: a cylinder's slow exact gap
// only where its bounding box comes within TOL (and a micrometre for the
// search's own rounding).
static double min_gap_on(const geo *g, uint32_t t, sim_shape s, rv3 p, rv3 d, double a, double b)
{
    const double limit = -TOL;
    if (s.type == SIM_SHAPE_CYLINDER) {
        double m = line_min(g, t, s, true, p, d, a, b, limit + 1e-6);
        if (m > limit + 1e-6)
            return m;
    }
    return line_min(g, t, s, false, p, d, a, b, limit);
}

// A sweep from pos (apart from every triangle) by d.
static bool check_sweep(const sim_world *w, const geo *g, sim_shape s, sim_vec3 pos, sim_vec3 d, const char *what)
{
    sim_sweep_input in = {s, pos, d, 0};
    sim_sweep_result r;
    bool hit = sim_world_sweep(w, &in, &r);
    rv3 p = rv3_from(pos), dv = rv3_from(d);
    double f = hit ? r.fraction / 65536.0 : 1.0;
    // The reported position is the start plus the rounded displacement: use it.
    rv3 end = rv3_from(hit ? r.position : sim_v3_add(pos, d));
    rv3 dd = rv3_sub(end, p);
    double reach = rv3_len(rv3_from(s.half));
    (void)f;
    bool ok = true;
    for (uint32_t t = 0; t < g->nt; t++) {
        rv3 a = vtx(g, t, 0), b = vtx(g, t, 1), c = vtx(g, t, 2);
        // Out of reach of the whole motion: nothing to judge.
        if (ref_seg_tri_dist(p, end, a, b, c) > reach)
            continue;
        // Apart at the start and convex along the motion: deeper than TOL
        // anywhere on [0, 1] is deeper than TOL after the first contact.
        if (min_gap_on(g, t, s, p, dd, 0.0, 1.0) >= -TOL)
            continue;
        double toi = ref_shape_tri_toi(s, p, dd, a, b, c, 0);
        double m = line_min(g, t, s, false, p, dd, toi < 1 ? toi : 0.0, 1.0, -1e300);
        if (m < -TOL) {
            if (ok)
                print_config(what, g, s, pos, d);
            fprintf(stderr,
                    "  triangle %u: keel %s at fraction %.6f; reference first contact %.6f of that, "
                    "then %.6f m deep\n",
                    t, hit ? "hit" : "no hit", hit ? r.fraction / 65536.0 : 1.0, toi, -m);
            fprintf(stderr,
                    "  it is {{%d, %d, %d}, {%d, %d, %d}, {%d, %d, %d}} (id %u); keel's hit: triangle %u type %d "
                    "index %d normal {%d, %d, %d}\n",
                    g->v[3 * t].x, g->v[3 * t].y, g->v[3 * t].z, g->v[3 * t + 1].x, g->v[3 * t + 1].y,
                    g->v[3 * t + 1].z, g->v[3 * t + 2].x, g->v[3 * t + 2].y, g->v[3 * t + 2].z, g->id[t],
                    hit ? r.feature.triangle : 0, hit ? r.feature.type : -1, hit ? r.feature.index : -1,
                    hit ? r.normal.x : 0, hit ? r.normal.y : 0, hit ? r.normal.z : 0);
            ok = false;
        }
    }
    (void)dv;
    return ok;
}

// One world and a few placements against it.
static void run_world(stats *st, geo *g)
{
    sim_world *w = geo_world(g);
    cr_assert_not_null(w, "world of %u triangles (%s)", g->nt, g->kind);
    for (int q = 0; q < 6; q++) {
        sim_shape s = random_shape();
        uint32_t t = (uint32_t)pick((int)g->nt);
        rv3 n = tri_normal(g, t);
        if (pick(2))
            n = rv3_scale(n, -1);
        rv3 u;
        int mode = pick(4);
        if (mode == 0)
            u = n;
        else if (mode == 1)
            u = (rv3){0, n.y < 0 ? -1 : 1, 0};
        else
            u = unit(rv3_add(n, rv3_scale(random_dir(), mode == 2 ? 0.5 : 1.2)));
        rv3 p = tri_point(g, t);
        // contact: -3 mm to +2 mm
        sim_vec3 pos;
        if (place(g, s, p, u, unif(-0.003, 0.002), &pos)) {
            st->contacts++;
            if (!check_contact(w, g, s, pos, pick(2) ? 0 : FQ(0.005)))
                st->failures++;
        }
        // sweep from 0-6 mm (mostly within 2 mm)
        double gap0 = pick(4) == 0 ? unif(0, 0.006) : unif(0, 0.002);
        if (!place(g, s, p, u, gap0, &pos) || world_gap(g, s, rv3_from(pos)) < 0)
            continue;
        rv3 dir;
        int dm = pick(4);
        if (dm == 0)
            dir = unit(rv3_add(rv3_scale(u, -1), rv3_scale(random_dir(), 0.3)));
        else if (dm == 1)
            dir = random_dir();
        else {
            // along the surface, slightly into it
            rv3 along = unit(rv3_sub(random_dir(), rv3_scale(n, rv3_dot(random_dir(), n))));
            dir = unit(rv3_add(along, rv3_scale(n, -unif(0, 0.05))));
        }
        double len = pick(3) == 0 ? unif(0.0005, 0.02) : unif(0.02, 1.5);
        st->sweeps++;
        if (!check_sweep(w, g, s, pos, to_fx(rv3_scale(dir, len)), "sweep"))
            st->failures++;
        // The ground probe: straight down by 2 skins, or 2 skins and a step.
        if (n.y > 0.1 || u.y > 0.1) {
            st->probes++;
            sim_vec3 down = sim_v3(0, -(pick(2) ? FQ(0.010) : FQ(0.360)), 0);
            if (!check_sweep(w, g, s, pos, down, "ground probe"))
                st->failures++;
        }
    }
    sim_world_destroy(w);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

Test(narrow_fuzz, conservative_against_reference, .timeout = 86400)
{
    uint64_t seed = env_u64("KEEL_FUZZ_SEED", 20261129);
    uint64_t seconds = env_u64("KEEL_FUZZ_SECONDS", 0);
    uint64_t configs = env_u64("KEEL_FUZZ_CONFIGS", seconds ? UINT64_MAX : DEFAULT_CONFIGS);
    uint64_t first = env_u64("KEEL_FUZZ_WORLD", 0);
    stats st = {0, 0, 0, 0};
    double t0 = now_s(), c0 = cpu_s();
    uint64_t worlds = 0;
    geo *g = malloc(sizeof *g);
    cr_assert_not_null(g);
    fuzz_seed = seed;
    while (st.contacts + st.sweeps + st.probes < configs && st.failures < 20) {
        // The time limit is a long run's budget only; the default run is
        // counted, so the same configurations run everywhere.
        if (seconds && (worlds & 15) == 0 && now_s() - t0 > (double)seconds)
            break;
        fuzz_world = first + worlds;
        rng_world(seed, fuzz_world);
        geo_make(g);
        run_world(&st, g);
        worlds++;
    }
    free(g);
    double dt = now_s() - t0, dc = cpu_s() - c0;
    uint64_t total = st.contacts + st.sweeps + st.probes;
    printf("narrow fuzz: seed %llu, worlds %llu-%llu, %llu configurations (%llu contacts, %llu sweeps, %llu ground "
           "probes), %llu failures, %.1f s (%.1f s of CPU): %.0f configurations/s, %.0f per CPU second\n",
           (unsigned long long)seed, (unsigned long long)first, (unsigned long long)(first + worlds),
           (unsigned long long)total, (unsigned long long)st.contacts, (unsigned long long)st.sweeps,
           (unsigned long long)st.probes, (unsigned long long)st.failures, dt, dc, dt > 0 ? (double)total / dt : 0.0,
           dc > 0 ? (double)total / dc : 0.0);
    fflush(stdout);
    cr_assert_eq(st.failures, 0, "%llu configurations were not conservative (printed above)",
                 (unsigned long long)st.failures);
}

// ---- regression cases ----------------------------------------------------------

static geo G;

// A box 0.25-0.6 mm from a face tilted on all three axes, swept down as far as
// the ground probe: the start overlaps the box grown by the inflation on each
// axis (up to sqrt(3) times the inflation along this normal) but not the
// inflation itself, which the start-overlap fallback once looked no further
// than: the sweep answered "no contact" and passed through the face.
Test(narrow_case, box_sweep_starts_near_tilted_face)
{
    frame f = {0, 0, {0, 0, 0}};
    uint32_t failures = 0;
    for (int tilt = 0; tilt < 4; tilt++) {
        G.nt = 0;
        G.kind = "tilted face";
        f.yaw = 0.3 * tilt;
        geo_tri(&G, &f, (rv3){2, -1, -1}, (rv3){-1, 2, -1}, (rv3){-1, -1, 2});
        sim_world *w = geo_world(&G);
        cr_assert_not_null(w);
        rv3 n = tri_normal(&G, 0);
        for (int k = 0; k <= 14; k++) {
            double gap = 0.00025 + 0.000025 * k;
            sim_shape s = sim_shape_box(FQ(0.3 + 0.05 * tilt), FQ(0.9), FQ(0.3));
            sim_vec3 pos;
            cr_assert(place(&G, s, (rv3){0.01 * k, 0, -0.01 * k}, n, gap, &pos));
            failures += !check_sweep(w, &G, s, pos, sim_v3(0, -FQ(0.36), 0), "box near a tilted face");
            failures += !check_sweep(w, &G, s, pos, sim_v3(0, -FQ(0.01), 0), "box near a tilted face");
            failures += !check_sweep(w, &G, s, pos, to_fx(rv3_scale(n, -0.2)), "box near a tilted face");
        }
        sim_world_destroy(w);
    }
    cr_assert_eq(failures, 0);
}

// Boxes in a ramp beside the wall its side edge lies in (the edge is buried:
// the wall runs on above and below it), and in a wall whose bottom edge lies
// in the floor: the edge's cross axis is the face's own there, and once
// rounding let it win the whole overlap was dropped.
Test(narrow_case, box_contact_at_buried_edges)
{
    uint32_t failures = 0;
    frame f = {0, 0, {0, 0, 0}};
    for (int k = 0; k < 60; k++) {
        G.nt = 0;
        G.kind = "ramp by wall";
        double slope = 0.05 + 0.0125 * k;
        geo_ramp_by_wall(&G, &f, slope, 3, 2);
        // A map's rounding: the ramp's far side a few units off its plane,
        // so that the side edge's cross axis and the face normal differ in
        // their last bits.
        for (int j = 0; j < 6; j++)
            if (G.v[j].x == FQ(2))
                G.v[j].y += k % 7 - 3;
        sim_world *w = geo_world(&G);
        cr_assert_not_null(w);
        rv3 n = tri_normal(&G, 0);
        if (n.y < 0)
            n = rv3_scale(n, -1);
        for (int j = 0; j < 8; j++) {
            sim_shape s = sim_shape_box(FQ(0.2 + 0.05 * j), FQ(0.9), FQ(0.3));
            double z = 0.5 + 0.25 * j;
            rv3 p = frame_apply(&f, (rv3){0.2 + 0.05 * j + 0.002, z * slope, z});
            sim_vec3 pos;
            if (place(&G, s, p, n, -0.02 - 0.025 * j, &pos))
                failures += !check_contact(w, &G, s, pos, 0);
        }
        sim_world_destroy(w);
        G.nt = 0;
        G.kind = "wall on floor";
        geo_wall_on_floor(&G, &f, 3, 2, 1);
        w = geo_world(&G);
        cr_assert_not_null(w);
        for (int j = 0; j < 8; j++) {
            sim_shape s = sim_shape_box(FQ(0.3), FQ(0.9), FQ(0.3));
            rv3 p = frame_apply(&f, (rv3){0, 0.9 + 0.001 * j, 0.1 * j});
            sim_vec3 pos;
            if (place(&G, s, p, frame_apply(&(frame){f.yaw, 0, {0, 0, 0}}, (rv3){1, 0, 0}), -0.01 - 0.02 * j, &pos))
                failures += !check_contact(w, &G, s, pos, 0);
        }
        sim_world_destroy(w);
    }
    cr_assert_eq(failures, 0);
}

// A capsule or cylinder 4.3 mm above a convex ridge of 0.05-4 degrees between
// two faces (within coplanar_cos: the edge is inactive), swept down: the
// ridge stops it within the tolerance, though its edge reports the face normal.
Test(narrow_case, round_shapes_stop_on_shallow_convex_fold)
{
    static const double angle[] = {0.05, 0.3, 1.0, 1.54, 1.99, 3.0};
    uint32_t failures = 0;
    for (int a = 0; a < 6; a++) {
        for (int k = 0; k < 6; k++) {
            frame f = {0.7 * k, 0.1 * (k % 3), {0.37 * k, 0, 0}};
            double th = angle[a] * DEG;
            G.nt = 0;
            G.kind = "convex fold";
            rv3 p0 = {0, 0, -2}, p1 = {0, 0, 2};
            geo_tri(&G, &f, p0, (rv3){-2 * cos(th / 2), -2 * sin(th / 2), 0.3}, p1);
            geo_tri(&G, &f, p0, p1, (rv3){2 * cos(th / 2), -2 * sin(th / 2), -0.3});
            sim_world *w = geo_world(&G);
            cr_assert_not_null(w);
            sim_shape s = k % 2 ? sim_shape_cylinder(FQ(0.4), FQ(1.8)) : sim_shape_capsule(FQ(0.4), FQ(1.8));
            sim_vec3 pos;
            rv3 up = frame_apply(&(frame){f.yaw, f.tilt, {0, 0, 0}}, (rv3){0, 1, 0});
            cr_assert(place(&G, s, frame_apply(&f, (rv3){0.001 * k, 0, 0.2 * k - 0.5}), up, 0.0043, &pos));
            failures += !check_sweep(w, &G, s, pos, sim_v3(0, -FQ(0.36), 0), "convex fold");
            failures += !check_sweep(w, &G, s, pos, to_fx(rv3_scale(up, -0.36)), "convex fold");
            sim_world_destroy(w);
        }
    }
    cr_assert_eq(failures, 0);
}

// ---- the real maps (skipped when absent) -------------------------------------

static sim_world *load_map(const char *file, sim_level *lv)
{
    const char *path = keel_test_level_path(file);
    if (!path)
        return NULL;
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, lv, &err), 0, "%s", err.message);
    sim_world *w = sim_world_create(lv, NULL, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

// The world's own triangles (as built: flags judged, buried ones dropped)
// whose bounds come within `reach` of p, as the reference's list.
static void geo_near(geo *g, const sim_world *w, rv3 p, double reach)
{
    g->nt = 0;
    g->kind = "map";
    for (uint32_t i = 0; i < w->tri_count && g->nt < MAX_TRIS; i++) {
        const sim_tri *t = &w->tris[i];
        rv3 lo = rv3_from(t->box.min), hi = rv3_from(t->box.max);
        if (p.x < lo.x - reach || p.x > hi.x + reach || p.y < lo.y - reach || p.y > hi.y + reach ||
            p.z < lo.z - reach || p.z > hi.z + reach)
            continue;
        for (int j = 0; j < 3; j++) {
            g->v[3 * g->nt + (uint32_t)j] = t->v[j];
            g->idx[3 * g->nt + (uint32_t)j] = 3 * g->nt + (uint32_t)j;
        }
        g->id[g->nt++] = t->id;
    }
}

static const sim_tri *map_tri(const sim_world *w, uint32_t id)
{
    for (uint32_t i = 0; i < w->tri_count; i++)
        if (w->tris[i].id == id)
            return &w->tris[i];
    return NULL;
}

static bool tri_has_buried_edge(const sim_tri *t)
{
    for (int e = 0; e < 3; e++)
        if (sim_tri_feature_buried(t, SIM_FEATURE_EDGE, e))
            return true;
    return false;
}

// zdm2 and pandora: boxes standing 2 to 20 cm deep in every ramp with a
// buried edge (its side edge in a wall), next to that edge, are reported
// at their depth (the zdm2 box that stood 18-23 cm inside a ramp unseen).
Test(narrow_map, box_in_ramps_with_buried_edges, .timeout = 600)
{
    static const char *maps[] = {"sauerbraten_zdm2.obj", "sauerbraten_pandora.obj"};
    uint32_t failures = 0, checked = 0;
    for (int m = 0; m < 2; m++) {
        sim_level lv;
        sim_world *w = load_map(maps[m], &lv);
        if (!w) {
            keel_test_warn("%s absent: skipped", maps[m]);
            continue;
        }
        sim_shape s = sim_shape_box(FQ(0.4), FQ(0.9), FQ(0.4));
        for (uint32_t i = 0; i < w->tri_count && failures < 5; i++) {
            const sim_tri *t = &w->tris[i];
            double ny = fabs(t->n.y / 1073741824.0);
            if (ny < 0.5 || ny > 0.995 || !tri_has_buried_edge(t))
                continue;
            for (int e = 0; e < 3; e++) {
                if (!sim_tri_feature_buried(t, SIM_FEATURE_EDGE, e))
                    continue;
                // 0.41 m in from the edge's middle, along the face
                rv3 a = rv3_from(t->v[e]), b = rv3_from(t->v[(e + 1) % 3]);
                rv3 in = rv3_from(sim_dir_to_v3(t->inward[e]));
                rv3 n = rv3_scale(rv3_from(sim_dir_to_v3(t->n)), t->n.y > 0 ? 1.0 : -1.0);
                rv3 p = rv3_add(rv3_scale(rv3_add(a, b), 0.5), rv3_scale(in, 0.41));
                geo_near(&G, w, p, 1.5);
                for (int k = 0; k < 3; k++) {
                    sim_vec3 pos;
                    if (!place(&G, s, p, n, -0.02 - 0.09 * k, &pos))
                        continue;
                    checked++;
                    failures += !check_contact(w, &G, s, pos, 0);
                }
            }
        }
        sim_world_destroy(w);
        sim_level_free(&lv);
    }
    cr_log_info("%u placements checked", checked);
    cr_assert_eq(failures, 0);
}

// pandora's triangles 16614 and 16615 meet at a convex ridge of 1.54 degrees
// (within coplanar_cos: the edge is inactive): a capsule 4.3 mm above it,
// swept down, once first hit after 17.8 mm.
Test(narrow_map, pandora_capsule_on_shallow_ridge, .timeout = 600)
{
    sim_level lv;
    sim_world *w = load_map("sauerbraten_pandora.obj", &lv);
    if (!w) {
        keel_test_warn("sauerbraten_pandora.obj absent: skipped");
        return;
    }
    const sim_tri *t0 = map_tri(w, 16614), *t1 = map_tri(w, 16615);
    cr_assert(t0 && t1);
    // the shared edge: the two corners t1 also has
    rv3 shared[3];
    int ns = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (sim_v3_eq(t0->v[i], t1->v[j]) && ns < 3)
                shared[ns++] = rv3_from(t0->v[i]);
    cr_assert_eq(ns, 2, "16614 and 16615 share %d corners", ns);
    uint32_t failures = 0;
    for (int k = 1; k < 10; k++) {
        rv3 p = rv3_add(shared[0], rv3_scale(rv3_sub(shared[1], shared[0]), k / 10.0));
        geo_near(&G, w, p, 1.5);
        for (int shape = 0; shape < 2; shape++) {
            sim_shape s = shape ? sim_shape_cylinder(FQ(0.4), FQ(1.8)) : sim_shape_capsule(FQ(0.4), FQ(1.8));
            sim_vec3 pos;
            cr_assert(place(&G, s, p, (rv3){0, 1, 0}, 0.0043, &pos));
            failures += !check_sweep(w, &G, s, pos, sim_v3(0, -FQ(0.36), 0), "pandora ridge");
        }
    }
    sim_world_destroy(w);
    sim_level_free(&lv);
    cr_assert_eq(failures, 0);
}

// pandora and zdm2: a box 0.34-0.40 mm above a tilted face (normals with all
// three components), swept down as far as the ground probe (the box that
// walked 18 cm into a pandora ramp).
Test(narrow_map, box_probe_near_tilted_faces, .timeout = 600)
{
    static const char *maps[] = {"sauerbraten_pandora.obj", "sauerbraten_zdm2.obj"};
    uint32_t failures = 0, checked = 0;
    for (int m = 0; m < 2; m++) {
        sim_level lv;
        sim_world *w = load_map(maps[m], &lv);
        if (!w) {
            keel_test_warn("%s absent: skipped", maps[m]);
            continue;
        }
        sim_shape s = sim_shape_box(FQ(0.4), FQ(0.9), FQ(0.4));
        uint32_t used = 0;
        for (uint32_t i = 0; i < w->tri_count && used < 300 && failures < 5; i++) {
            const sim_tri *t = &w->tris[i];
            if (t->n.y < 1073741824 / 3 || t->n.y > 1069000000 || t->n.x == 0 || t->n.z == 0)
                continue;
            used++;
            rv3 c = rv3_scale(rv3_add(rv3_from(t->v[0]), rv3_add(rv3_from(t->v[1]), rv3_from(t->v[2]))), 1.0 / 3);
            rv3 n = rv3_from(sim_dir_to_v3(t->n));
            geo_near(&G, w, c, 1.5);
            sim_vec3 pos;
            if (!place(&G, s, c, n, 0.00034 + 0.00002 * (i % 4), &pos) || world_gap(&G, s, rv3_from(pos)) < 0)
                continue;
            checked++;
            failures += !check_sweep(w, &G, s, pos, sim_v3(0, -FQ(0.36), 0), "map ground probe");
        }
        sim_world_destroy(w);
        sim_level_free(&lv);
    }
    cr_log_info("%u placements checked", checked);
    cr_assert_eq(failures, 0);
}

// A level of raw Q16.16 triangles (a fuzzer's printout) in G and its world.
static sim_world *raw_world(const sim_fx (*tri)[3][3], uint32_t count)
{
    G.nt = 0;
    G.kind = "printed";
    for (uint32_t t = 0; t < count && t < MAX_TRIS; t++) {
        for (int j = 0; j < 3; j++) {
            G.v[3 * t + (uint32_t)j] = sim_v3(tri[t][j][0], tri[t][j][1], tri[t][j][2]);
            G.idx[3 * t + (uint32_t)j] = 3 * t + (uint32_t)j;
        }
        G.id[t] = t;
        G.nt++;
    }
    sim_world *w = geo_world(&G);
    cr_assert_not_null(w);
    return w;
}

// Found by the fuzzer (seed 3): a cylinder 0.2 mm beside the high corner of a
// tilted tessellated floor, moving slightly away from the floor's plane
// toward that corner. The start's contact axis was the horizontal one built
// from an inner corner (inactive) of the triangle, so it reported the face
// normal; the motion went away from that normal, the sweep answered "no hit"
// and ended 5.3 mm inside the floor.
Test(narrow_case, cylinder_leaves_tilted_tessellated_floor)
{
    static const sim_fx tri[8][3][3] = {
        {{-811607, 551372, 2043960}, {-792652, 562993, 2046591}, {-789573, 562993, 2024415}},
        {{-811607, 551372, 2043960}, {-789573, 562993, 2024415}, {-808529, 551373, 2021784}},
        {{-792652, 562993, 2046591}, {-773696, 574613, 2049223}, {-770618, 574613, 2027047}},
        {{-792652, 562993, 2046591}, {-770618, 574613, 2027047}, {-789573, 562993, 2024415}},
        {{-808529, 551373, 2021784}, {-789573, 562993, 2024415}, {-786494, 562992, 2002239}},
        {{-808529, 551373, 2021784}, {-786494, 562992, 2002239}, {-805449, 551372, 1999607}},
        {{-789573, 562993, 2024415}, {-770618, 574613, 2027047}, {-767539, 574613, 2004870}},
        {{-789573, 562993, 2024415}, {-767539, 574613, 2004870}, {-786494, 562992, 2002239}},
    };
    sim_world *w = raw_world(tri, 8);
    sim_shape s = sim_shape_cylinder(26440, 2 * 61572);
    bool ok = check_sweep(w, &G, s, sim_v3(-747889, 601587, 1987159), sim_v3(-285, -95, 221), "tessellated floor");
    sim_world_destroy(w);
    cr_assert(ok);
}

// Found by the fuzzer (seed 20261129, world 9291): a cylinder 1.1 mm above a
// level floor of 32 triangles jittered by a few units, swept down.
Test(narrow_case, cylinder_onto_jittered_level_floor)
{
    static const sim_fx tri[32][3][3] = {
        {{-3243509, 329156, -1004824}, {-3212831, 329152, -1044975}, {-3252982, 329162, -1075653}},
        {{-3243509, 329156, -1004824}, {-3252982, 329162, -1075653}, {-3283660, 329156, -1035502}},
        {{-3212831, 329152, -1044975}, {-3182153, 329156, -1085126}, {-3222305, 329155, -1115804}},
        {{-3212831, 329152, -1044975}, {-3222305, 329155, -1115804}, {-3252982, 329162, -1075653}},
        {{-3182153, 329156, -1085126}, {-3151475, 329156, -1125278}, {-3191627, 329151, -1155956}},
        {{-3182153, 329156, -1085126}, {-3191627, 329151, -1155956}, {-3222305, 329155, -1115804}},
        {{-3151475, 329156, -1125278}, {-3120798, 329156, -1165429}, {-3160949, 329156, -1196107}},
        {{-3151475, 329156, -1125278}, {-3160949, 329156, -1196107}, {-3191627, 329151, -1155956}},
        {{-3283660, 329156, -1035502}, {-3252982, 329162, -1075653}, {-3293134, 329156, -1106331}},
        {{-3283660, 329156, -1035502}, {-3293134, 329156, -1106331}, {-3323811, 329156, -1066180}},
        {{-3252982, 329162, -1075653}, {-3222305, 329155, -1115804}, {-3262456, 329156, -1146482}},
        {{-3252982, 329162, -1075653}, {-3262456, 329156, -1146482}, {-3293134, 329156, -1106331}},
        {{-3222305, 329155, -1115804}, {-3191627, 329151, -1155956}, {-3231778, 329156, -1186633}},
        {{-3222305, 329155, -1115804}, {-3231778, 329156, -1186633}, {-3262456, 329156, -1146482}},
        {{-3191627, 329151, -1155956}, {-3160949, 329156, -1196107}, {-3201100, 329156, -1226785}},
        {{-3191627, 329151, -1155956}, {-3201100, 329156, -1226785}, {-3231778, 329156, -1186633}},
        {{-3323811, 329156, -1066180}, {-3293134, 329156, -1106331}, {-3333285, 329154, -1137009}},
        {{-3323811, 329156, -1066180}, {-3333285, 329154, -1137009}, {-3363963, 329156, -1096857}},
        {{-3293134, 329156, -1106331}, {-3262456, 329156, -1146482}, {-3302607, 329158, -1177160}},
        {{-3293134, 329156, -1106331}, {-3302607, 329158, -1177160}, {-3333285, 329154, -1137009}},
        {{-3262456, 329156, -1146482}, {-3231778, 329156, -1186633}, {-3271929, 329160, -1217311}},
        {{-3262456, 329156, -1146482}, {-3271929, 329160, -1217311}, {-3302607, 329158, -1177160}},
        {{-3231778, 329156, -1186633}, {-3201100, 329156, -1226785}, {-3241251, 329156, -1257463}},
        {{-3231778, 329156, -1186633}, {-3241251, 329156, -1257463}, {-3271929, 329160, -1217311}},
        {{-3363963, 329156, -1096857}, {-3333285, 329154, -1137009}, {-3373436, 329156, -1167687}},
        {{-3363963, 329156, -1096857}, {-3373436, 329156, -1167687}, {-3404114, 329155, -1127535}},
        {{-3333285, 329154, -1137009}, {-3302607, 329158, -1177160}, {-3342758, 329156, -1207838}},
        {{-3333285, 329154, -1137009}, {-3342758, 329156, -1207838}, {-3373436, 329156, -1167687}},
        {{-3302607, 329158, -1177160}, {-3271929, 329160, -1217311}, {-3312081, 329156, -1247989}},
        {{-3302607, 329158, -1177160}, {-3312081, 329156, -1247989}, {-3342758, 329156, -1207838}},
        {{-3271929, 329160, -1217311}, {-3241251, 329156, -1257463}, {-3281403, 329156, -1288140}},
        {{-3271929, 329160, -1217311}, {-3281403, 329156, -1288140}, {-3312081, 329156, -1247989}}};
    sim_world *w = raw_world(tri, 32);
    sim_shape s = sim_shape_cylinder(27775, 2 * 71600);
    bool ok = check_sweep(w, &G, s, sim_v3(-3222297, 400831, -1175291), sim_v3(0, -655, 0), "jittered floor");
    ok &= check_sweep(w, &G, s, sim_v3(-3222297, 400831, -1175291), sim_v3(-133, -257, 61), "jittered floor");
    sim_world_destroy(w);
    cr_assert(ok);
}

// Found by the fuzzer (seed 202, world 14522): a capsule 0.3 mm above the
// peak corner of a jittered tessellated floor (the corner 8-23 mm above its
// neighbours), swept 0.36 m straight down as the ground probe, met no
// triangle and ended 0.36 m inside the floor. Its bottom sphere started
// within every face's slab, its foot beyond the corner over the folds'
// slack: "touching", yet further than R from every triangle (the corner),
// and the dead corner was never solved.
Test(narrow_case, capsule_onto_peak_of_jittered_floor)
{
    static const sim_fx tri[32][3][3] = {
        {{2224763, 1095427, 1748986}, {2302548, 1094435, 1709128}, {2262691, 1094346, 1631343}},
        {{2224763, 1095427, 1748986}, {2262691, 1094346, 1631343}, {2184906, 1094435, 1671201}},
        {{2302548, 1094435, 1709128}, {2380333, 1094435, 1669271}, {2340476, 1094435, 1591486}},
        {{2302548, 1094435, 1709128}, {2340476, 1094435, 1591486}, {2262691, 1094346, 1631343}},
        {{2380333, 1094435, 1669271}, {2458119, 1094435, 1629414}, {2418261, 1094435, 1551628}},
        {{2380333, 1094435, 1669271}, {2418261, 1094435, 1551628}, {2340476, 1094435, 1591486}},
        {{2458119, 1094435, 1629414}, {2535904, 1094435, 1589556}, {2496046, 1094165, 1511771}},
        {{2458119, 1094435, 1629414}, {2496046, 1094165, 1511771}, {2418261, 1094435, 1551628}},
        {{2184906, 1094435, 1671201}, {2262691, 1094346, 1631343}, {2222834, 1094961, 1553558}},
        {{2184906, 1094435, 1671201}, {2222834, 1094961, 1553558}, {2145049, 1094380, 1593416}},
        {{2262691, 1094346, 1631343}, {2340476, 1094435, 1591486}, {2300619, 1094435, 1513701}},
        {{2262691, 1094346, 1631343}, {2300619, 1094435, 1513701}, {2222834, 1094961, 1553558}},
        {{2340476, 1094435, 1591486}, {2418261, 1094435, 1551628}, {2378404, 1094435, 1473843}},
        {{2340476, 1094435, 1591486}, {2378404, 1094435, 1473843}, {2300619, 1094435, 1513701}},
        {{2418261, 1094435, 1551628}, {2496046, 1094165, 1511771}, {2456189, 1094435, 1433986}},
        {{2418261, 1094435, 1551628}, {2456189, 1094435, 1433986}, {2378404, 1094435, 1473843}},
        {{2145049, 1094380, 1593416}, {2222834, 1094961, 1553558}, {2182976, 1093477, 1475773}},
        {{2145049, 1094380, 1593416}, {2182976, 1093477, 1475773}, {2105191, 1093553, 1515631}},
        {{2222834, 1094961, 1553558}, {2300619, 1094435, 1513701}, {2260761, 1094435, 1435916}},
        {{2222834, 1094961, 1553558}, {2260761, 1094435, 1435916}, {2182976, 1093477, 1475773}},
        {{2300619, 1094435, 1513701}, {2378404, 1094435, 1473843}, {2338546, 1094039, 1396058}},
        {{2300619, 1094435, 1513701}, {2338546, 1094039, 1396058}, {2260761, 1094435, 1435916}},
        {{2378404, 1094435, 1473843}, {2456189, 1094435, 1433986}, {2416331, 1094395, 1356201}},
        {{2378404, 1094435, 1473843}, {2416331, 1094395, 1356201}, {2338546, 1094039, 1396058}},
        {{2105191, 1093553, 1515631}, {2182976, 1093477, 1475773}, {2143119, 1094435, 1397988}},
        {{2105191, 1093553, 1515631}, {2143119, 1094435, 1397988}, {2065334, 1094435, 1437846}},
        {{2182976, 1093477, 1475773}, {2260761, 1094435, 1435916}, {2220904, 1094435, 1358131}},
        {{2182976, 1093477, 1475773}, {2220904, 1094435, 1358131}, {2143119, 1094435, 1397988}},
        {{2260761, 1094435, 1435916}, {2338546, 1094039, 1396058}, {2298689, 1094435, 1318273}},
        {{2260761, 1094435, 1435916}, {2298689, 1094435, 1318273}, {2220904, 1094435, 1358131}},
        {{2338546, 1094039, 1396058}, {2416331, 1094395, 1356201}, {2376474, 1094657, 1278416}},
        {{2338546, 1094039, 1396058}, {2376474, 1094657, 1278416}, {2298689, 1094435, 1318273}}};
    sim_world *w = raw_world(tri, 32);
    sim_shape s = sim_shape_capsule(34623, 2 * 68346);
    bool ok = check_sweep(w, &G, s, sim_v3(2222834, 1163329, 1553558), sim_v3(0, -23593, 0), "peak of a floor");
    sim_world_destroy(w);
    cr_assert(ok);
}

// ---- peaks -------------------------------------------------------------------

#ifdef KEEL_SANITIZED_BUILD
#define DEFAULT_PEAKS 60
#else
#define DEFAULT_PEAKS 600
#endif

// A peak: n triangles around an apex, each rim corner `slope` below it per
// metre out (a cone when every slope is the same), on a frame. False unless
// every fold between neighbours is under max_fold degrees (within the
// world's coplanar_cos: every edge at the apex is internal, and so is the
// apex itself).
static bool geo_peak(geo *g, const frame *f, int n, const double *angle, const double *slope, double max_fold)
{
    g->nt = 0;
    g->kind = "peak";
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        double ri = 0.4 + 0.1 * (i % 4), rj = 0.4 + 0.1 * (j % 4);
        geo_tri(g, f, (rv3){0, 0, 0}, (rv3){rj * cos(angle[j]), -rj * slope[j], -rj * sin(angle[j])},
                (rv3){ri * cos(angle[i]), -ri * slope[i], -ri * sin(angle[i])});
    }
    for (uint32_t i = 0; i < g->nt; i++) {
        double c = fabs(rv3_dot(tri_normal(g, i), tri_normal(g, (i + 1) % g->nt)));
        if (acos(fmin(1, c)) / DEG >= max_fold)
            return false;
    }
    return true;
}

// Is every triangle's corner at p internal (SIM_TRI_VERT0_INACTIVE)?
static bool corner_dead(const sim_world *w, sim_vec3 p)
{
    for (uint32_t i = 0; i < w->tri_count; i++)
        for (int v = 0; v < 3; v++)
            if (sim_v3_eq(w->tris[i].v[v], p) && !(w->tris[i].flags & (SIM_TRI_VERT0_INACTIVE << v)))
                return false;
    return true;
}

// Capsules and cylinders onto the apex of a peak whose every fold is
// shallow, so that its edges and the apex itself are internal (the sweeps
// meet it through the faces' slabs and their fold slack alone): a few
// faces tilted up to 8 degrees, irregular, or a finely divided cone up to
// 50 degrees steep. The shape starts 0.05-20 mm off the apex's ball in a
// direction of its normal cone and is swept down, back along that
// direction, across, or aimed at the ball from up to 0.3 m away. Half the
// peaks are built with the widest coplanar_cos whose folds stay inactive
// (SIM_FOLD_MAX_ANGLE, 2.5 degrees). KEEL_CONES peaks are tried (default
// 600; KEEL_CONE_SEED picks another set).
Test(narrow_case, round_shapes_onto_shallow_peaks, .timeout = 3600)
{
    uint64_t count = env_u64("KEEL_CONES", DEFAULT_PEAKS);
    uint64_t seed = env_u64("KEEL_CONE_SEED", 77);
    uint32_t failures = 0, sweeps = 0, peaks = 0, dead = 0;
    for (uint64_t k = 0; k < count && failures < 5; k++) {
        rng_world(seed, k);
        bool fine = pick(2);
        int n = fine ? 16 + pick(150) : 3 + pick(14);
        double angle[200], slope[200], share[200], sum = 0;
        for (int i = 0; i < n; i++)
            sum += (share[i] = fine ? unif(0.9, 1.1) : (pick(3) ? unif(0.3, 1.0) : unif(0.05, 3)));
        bool convex_sectors = true;
        double at = unif(0, 2 * 3.14159265358979323846);
        for (int i = 0; i < n; i++) {
            angle[i] = at;
            at += share[i] / sum * 2 * 3.14159265358979323846;
            convex_sectors = convex_sectors && share[i] / sum * 360 < 175;
        }
        double tilt = (fine ? unif(3, 50) : unif(0.5, 8)) * DEG;
        double spread = fine ? unif(0, 0.002) : (pick(2) ? 0.05 : 0.4);
        for (int i = 0; i < n; i++)
            slope[i] = tan(tilt * unif(1 - spread, 1 + spread));
        bool wide = pick(2);
        frame f = {unif(0, 6.3), pick(2) ? unif(-0.3, 0.3) : 0, {unif(-5, 5), unif(-2, 2), unif(-5, 5)}};
        if (!convex_sectors || !geo_peak(&G, &f, n, angle, slope, wide ? 2.48 : 1.98))
            continue;
        sim_world_def def = sim_world_default_def();
        if (wide)
            def.coplanar_cos = FQ(cos(2.49 * DEG));
        sim_world *w = geo_world_def(&G, &def);
        cr_assert_not_null(w);
        peaks++;
        rv3 apex = frame_apply(&f, (rv3){0, 0, 0});
        dead += corner_dead(w, to_fx(apex));
        rv3 up = frame_apply(&(frame){f.yaw, f.tilt, {0, 0, 0}}, (rv3){0, 1, 0});
        for (int q = 0; q < 16; q++) {
            double r = unif(0.15, 0.6);
            sim_shape s = pick(4) ? sim_shape_capsule(FQ(r), FQ(1.8)) : sim_shape_cylinder(FQ(r), FQ(1.8));
            // A direction in the apex's normal cone: up, near it, or a mix
            // of the faces' normals.
            rv3 u = {0, 0, 0};
            if (q < 2) {
                u = up;
            } else if (q < 6) {
                u = unit(rv3_add(up, rv3_scale(random_dir(), unif(0, 0.3))));
            } else {
                for (uint32_t i = 0; i < G.nt; i++)
                    u = rv3_add(u, rv3_scale(tri_normal(&G, i), pick(3) ? unif(0, 1) : 0));
                u = unit(u);
            }
            sim_vec3 pos;
            if (u.y < 0.5 || !place(&G, s, apex, u, pick(2) ? unif(0.00005, 0.001) : unif(0.001, 0.02), &pos))
                continue;
            if (pick(2)) {
                // Aimed at the apex's ball from further off.
                rv3 aim = rv3_add(
                    apex, rv3_scale(unit(rv3_add(up, rv3_scale(random_dir(), unif(0, 0.4)))), r * unif(0.9, 1.0)));
                rv3 dir = unit(rv3_add(rv3_scale(up, unif(0, 1)), random_dir()));
                rv3 from = rv3_add(aim, rv3_scale(dir, unif(0.002, 0.3)));
                if (world_gap(&G, s, from) <= 0.0001 || rv3_dot(rv3_sub(from, apex), up) < 0)
                    continue;
                sweeps++;
                rv3 go = rv3_sub(aim, from);
                failures += !check_sweep(w, &G, s, to_fx(from), to_fx(rv3_scale(unit(go), rv3_len(go) + 0.05)),
                                         "aimed at a peak");
                continue;
            }
            rv3 dir;
            int how = pick(3);
            if (how == 0) {
                dir = rv3_scale(u, -1);
            } else if (how == 1) {
                rv3 across = unit(rv3_sub(random_dir(), rv3_scale(up, rv3_dot(random_dir(), up))));
                dir = unit(rv3_add(across, rv3_scale(up, -unif(0, 0.2))));
            } else {
                dir = unit(rv3_add(rv3_scale(up, -1), rv3_scale(random_dir(), unif(0, 1))));
            }
            if (rv3_dot(dir, u) > 0)
                dir = rv3_sub(dir, rv3_scale(u, 2 * rv3_dot(dir, u)));
            sweeps += 2;
            failures += !check_sweep(w, &G, s, pos, to_fx(rv3_scale(dir, unif(0.01, 0.5))), "onto a peak");
            failures += !check_sweep(w, &G, s, pos, sim_v3(0, -FQ(0.36), 0), "ground probe onto a peak");
        }
        sim_world_destroy(w);
    }
    cr_log_info("%u peaks (%u with an internal apex), %u sweeps, %u failures", peaks, dead, sweeps, failures);
    printf("shallow peaks: %u peaks (%u with an internal apex), %u sweeps, %u failures\n", peaks, dead, sweeps,
           failures);
    cr_assert_eq(failures, 0);
    cr_assert_gt(dead, peaks / 2, "most peaks have an internal apex");
}

// Every configuration in tests/narrow/found.txt, the fuzzer's printouts as it
// wrote them: each must now pass the check that once failed (a sweep or a
// ground probe by check_sweep, a contact by check_contact with and without
// the 5 mm margin). KEEL_NARROW_FOUND names another file of printouts.
Test(narrow_case, printed_configurations)
{
    const char *path =
        getenv("KEEL_NARROW_FOUND") ? getenv("KEEL_NARROW_FOUND") : KEEL_SOURCE_DIR "/tests/narrow/found.txt";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s cannot be read", path);
    static sim_fx tri[MAX_TRIS][3][3];
    char line[512], what[64] = "";
    uint32_t count = 0, checked = 0, failures = 0, lineno = 0;
    sim_shape s = {0};
    while (fgets(line, sizeof line, f)) {
        lineno++;
        int v[9], type;
        if (sscanf(line, "narrow fuzz FAILURE (%63[^)])", what) == 1) {
            count = 0;
        } else if (sscanf(line, " {{%d, %d, %d}, {%d, %d, %d}, {%d, %d, %d}}", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                          &v[6], &v[7], &v[8]) == 9) {
            cr_assert_lt(count, MAX_TRIS, "%s:%u: too many triangles", path, lineno);
            for (int k = 0; k < 9; k++)
                tri[count][k / 3][k % 3] = v[k];
            count++;
        } else if (sscanf(line, " shape %*s type %d radius %d half {%d, %d, %d}", &type, &v[0], &v[1], &v[2], &v[3]) ==
                   5) {
            s = (sim_shape){type, v[0], sim_v3(v[1], v[2], v[3])};
            cr_assert(sim_shape_valid(s), "%s:%u: not a shape keel makes", path, lineno);
        } else if (sscanf(line, " position {%d, %d, %d} displacement {%d, %d, %d}", &v[0], &v[1], &v[2], &v[3], &v[4],
                          &v[5]) == 6) {
            cr_assert_gt(count, 0, "%s:%u: a configuration without triangles", path, lineno);
            sim_world *w = raw_world((const sim_fx(*)[3][3])tri, count);
            sim_vec3 pos = sim_v3(v[0], v[1], v[2]);
            if (strcmp(what, "contact") == 0) {
                failures += !check_contact(w, &G, s, pos, 0);
                failures += !check_contact(w, &G, s, pos, FQ(0.005));
            } else {
                failures += !check_sweep(w, &G, s, pos, sim_v3(v[3], v[4], v[5]), what);
            }
            sim_world_destroy(w);
            checked++;
            count = 0;
        }
    }
    fclose(f);
    cr_log_info("%u printed configurations checked", checked);
    cr_assert_gt(checked, 0, "%s holds no configuration", path);
    cr_assert_eq(failures, 0, "%u of %u printed configurations fail (printed above)", failures, checked);
}
