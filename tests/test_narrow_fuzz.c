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
// Budget: KEEL_FUZZ_CONFIGS configurations (default DEFAULT_CONFIGS: well
// under a minute in the RelWithDebInfo tree), or KEEL_FUZZ_SECONDS of them
// for long runs, from KEEL_FUZZ_SEED (default a fixed seed). Long runs:
// scripts/fuzz-narrow.sh. The rate printed is configurations per second.
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

#define TOL ((double)SIM_QUERY_TOLERANCE / 65536.0 + 2e-5)
#define DEFAULT_CONFIGS 20000
#define MAX_TRIS 40
#define DEG (3.14159265358979323846 / 180.0)
#define FQ(x) ((sim_fx)llround((x)*65536.0))

static uint64_t rng_state;

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
    g->nt++;
}

// A quad a b c d (counter-clockwise) as two triangles.
static void geo_quad(geo *g, const frame *f, rv3 a, rv3 b, rv3 c, rv3 d)
{
    geo_tri(g, f, a, b, c);
    geo_tri(g, f, a, c, d);
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
        geo_quad(g, &f, (rv3){-s, 0, -s}, (rv3){-s, 0, s}, (rv3){s, 0, s}, (rv3){s, 0, -s});
        geo_quad(g, &f, (rv3){0, 0, -zw}, (rv3){0, h, -zw}, (rv3){0, h, zw}, (rv3){0, 0, zw});
    } else if (kind == 3) {
        // A ramp along a wall that runs on above and below its side edge
        // (buried), on a floor.
        g->kind = "ramp by wall";
        double slope = unif(0.05, 0.8), len = unif(1, 4), wd = unif(0.8, 3), rise = len * slope;
        geo_quad(g, &f, (rv3){0, 0, 0}, (rv3){0, rise, len}, (rv3){wd, rise, len}, (rv3){wd, 0, 0});
        geo_quad(g, &f, (rv3){0, -1, -1}, (rv3){0, rise + 2, -1}, (rv3){0, rise + 2, len + 1}, (rv3){0, -1, len + 1});
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
                rv3 c = {(i + 1) * cell, hy[i + 1][j + 1], (j + 1) * cell}, d = {(i + 1) * cell, hy[i + 1][j], j * cell};
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

static sim_world *geo_world(geo *g)
{
    sim_level lv = {0};
    lv.vertices = g->v;
    lv.vertex_count = g->nt * 3;
    lv.indices = g->idx;
    lv.triangle_count = g->nt;
    sim_world_def def = sim_world_default_def();
    return sim_world_create(&lv, &def, NULL);
}

static rv3 vtx(const geo *g, uint32_t t, int j) { return rv3_from(g->v[3 * t + (uint32_t)j]); }

static double tri_gap(const geo *g, uint32_t t, sim_shape s, rv3 p)
{
    return ref_shape_tri_gap(s, p, vtx(g, t, 0), vtx(g, t, 1), vtx(g, t, 2));
}

static double world_gap(const geo *g, sim_shape s, rv3 p)
{
    double best = 1e9;
    for (uint32_t t = 0; t < g->nt; t++) {
        double d = tri_gap(g, t, s, p);
        best = d < best ? d : best;
    }
    return best;
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
    if (world_gap(g, s, rv3_add(p, rv3_scale(u, hi))) <= target)
        return false;
    if (world_gap(g, s, p) > target)
        return false;
    for (int i = 0; i < 40; i++) {
        double m = 0.5 * (lo + hi);
        if (world_gap(g, s, rv3_add(p, rv3_scale(u, m))) > target)
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
        double depth = -tri_gap(g, t, s, p);
        if (depth <= TOL)
            continue;
        double got = -1e9;
        for (int i = 0; i < n && i < MAX_TRIS; i++)
            if (cs[i].feature.triangle == t && cs[i].depth / 65536.0 > got)
                got = cs[i].depth / 65536.0;
        if (got < depth - TOL) {
            if (ok)
                print_config("contact", g, s, pos, sim_v3_zero());
            fprintf(stderr, "  triangle %u: reference depth %.6f m, keel %s %.6f m\n", t, depth,
                    got > -1e8 ? "depth" : "no contact", got > -1e8 ? got : 0.0);
            ok = false;
        }
    }
    return ok;
}

// The smallest gap to triangle t on the motion's fractions [a, b] (convex:
// golden-section search).
static double min_gap_on(const geo *g, uint32_t t, sim_shape s, rv3 p, rv3 d, double a, double b)
{
    const double r = 0.6180339887498949;
    double x1 = b - r * (b - a), x2 = a + r * (b - a);
    double f1 = tri_gap(g, t, s, rv3_add(p, rv3_scale(d, x1))), f2 = tri_gap(g, t, s, rv3_add(p, rv3_scale(d, x2)));
    for (int i = 0; i < 50 && b - a > 1e-9; i++) {
        if (f1 < f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - r * (b - a);
            f1 = tri_gap(g, t, s, rv3_add(p, rv3_scale(d, x1)));
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + r * (b - a);
            f2 = tri_gap(g, t, s, rv3_add(p, rv3_scale(d, x2)));
        }
    }
    double m = f1 < f2 ? f1 : f2;
    double fb = tri_gap(g, t, s, rv3_add(p, rv3_scale(d, b)));
    return fb < m ? fb : m;
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
    (void)f;
    bool ok = true;
    for (uint32_t t = 0; t < g->nt; t++) {
        rv3 a = vtx(g, t, 0), b = vtx(g, t, 1), c = vtx(g, t, 2);
        double toi = ref_shape_tri_toi(s, p, dd, a, b, c, 0);
        if (toi >= 1)
            continue;
        double m = min_gap_on(g, t, s, p, dd, toi, 1.0);
        if (m < -TOL) {
            if (ok)
                print_config(what, g, s, pos, d);
            fprintf(stderr, "  triangle %u: keel %s at fraction %.6f; reference first contact %.6f of that, "
                            "then %.6f m deep\n",
                    t, hit ? "hit" : "no hit", hit ? r.fraction / 65536.0 : 1.0, toi, -m);
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

Test(narrow_fuzz, conservative_against_reference, .timeout = 600)
{
    uint64_t seed = env_u64("KEEL_FUZZ_SEED", 20261129);
    uint64_t seconds = env_u64("KEEL_FUZZ_SECONDS", 0);
    uint64_t configs = env_u64("KEEL_FUZZ_CONFIGS", seconds ? UINT64_MAX : DEFAULT_CONFIGS);
    rng_state = seed;
    stats st = {0, 0, 0, 0};
    double t0 = now_s();
    uint64_t worlds = 0;
    geo *g = malloc(sizeof *g);
    cr_assert_not_null(g);
    while (st.contacts + st.sweeps + st.probes < configs && st.failures < 20) {
        // The time limit is a long run's budget only; the default run is
        // counted, so the same configurations run everywhere.
        if (seconds && (worlds & 15) == 0 && now_s() - t0 > (double)seconds)
            break;
        geo_make(g);
        run_world(&st, g);
        worlds++;
    }
    free(g);
    double dt = now_s() - t0;
    uint64_t total = st.contacts + st.sweeps + st.probes;
    printf("narrow fuzz: seed %llu, %llu worlds, %llu configurations (%llu contacts, %llu sweeps, %llu ground "
           "probes), %llu failures, %.0f configurations/s\n",
           (unsigned long long)seed, (unsigned long long)worlds, (unsigned long long)total,
           (unsigned long long)st.contacts, (unsigned long long)st.sweeps, (unsigned long long)st.probes,
           (unsigned long long)st.failures, dt > 0 ? (double)total / dt : 0.0);
    fflush(stdout);
    cr_assert_eq(st.failures, 0, "%llu configurations were not conservative (printed above)",
                 (unsigned long long)st.failures);
}
