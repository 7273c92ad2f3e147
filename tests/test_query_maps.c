// keel tests: the sweep properties on the two real game maps (triangle soup
// with T-junctions and degenerate triangles), judged by a brute-force double
// reference over every triangle near the motion. Skipped with a message when
// ../shared/levels is absent. MIT licence.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <keel/sim_world.h>

#include "ref_geom.h"
#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define POS_TOL 2e-5
#define NORMAL_TOL (1.0 / 8192.0)

typedef struct map_case {
    sim_level level;
    sim_world *world;
    rv3 *tri;            // 3 per triangle, degenerate ones left out
    uint32_t *tri_index; // each one's index among the level's triangles
    uint32_t tri_count;
} map_case;

static bool load_map(const char *file, map_case *m)
{
    const char *path = keel_test_level_path(file);
    if (!path)
        return false;
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = "0.12";
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &m->level, &err), 0, "%s", err.message);
    m->world = sim_world_create(&m->level, NULL, &err);
    cr_assert_not_null(m->world, "%s", err.message);
    m->tri = malloc(3 * sizeof *m->tri * m->level.triangle_count);
    m->tri_index = malloc(sizeof *m->tri_index * m->level.triangle_count);
    m->tri_count = 0;
    for (uint32_t i = 0; i < m->level.triangle_count; i++) {
        rv3 a = rv3_from(m->level.vertices[m->level.indices[3 * i]]);
        rv3 b = rv3_from(m->level.vertices[m->level.indices[3 * i + 1]]);
        rv3 c = rv3_from(m->level.vertices[m->level.indices[3 * i + 2]]);
        if (rv3_len(rv3_cross(rv3_sub(b, a), rv3_sub(c, a))) < 1e-4)
            continue; // the world drops these (doubled area below 2^-16 m^2, with margin)
        m->tri[3 * m->tri_count] = a;
        m->tri[3 * m->tri_count + 1] = b;
        m->tri[3 * m->tri_count + 2] = c;
        m->tri_index[m->tri_count] = i;
        m->tri_count++;
    }
    return true;
}

static void free_map(map_case *m)
{
    sim_world_destroy(m->world);
    sim_level_free(&m->level);
    free(m->tri);
    free(m->tri_index);
}

static bool box_overlap(rv3 lo, rv3 hi, const rv3 *t)
{
    double mnx = fmin(t[0].x, fmin(t[1].x, t[2].x)), mxx = fmax(t[0].x, fmax(t[1].x, t[2].x));
    double mny = fmin(t[0].y, fmin(t[1].y, t[2].y)), mxy = fmax(t[0].y, fmax(t[1].y, t[2].y));
    double mnz = fmin(t[0].z, fmin(t[1].z, t[2].z)), mxz = fmax(t[0].z, fmax(t[1].z, t[2].z));
    return mnx <= hi.x && mxx >= lo.x && mny <= hi.y && mxy >= lo.y && mnz <= hi.z && mxz >= lo.z;
}

// A sweep's inputs in raw Q16.16, for failure messages.
static const char *sweep_text(sim_shape s, sim_vec3 start, sim_vec3 d)
{
    static char buf[200];
    snprintf(buf, sizeof buf, "shape %d radius %d half (%d,%d,%d) start (%d,%d,%d) displacement (%d,%d,%d)",
             (int)s.type, s.radius, s.half.x, s.half.y, s.half.z, start.x, start.y, start.z, d.x, d.y, d.z);
    return buf;
}

static void map_sweeps(const char *file, sim_shape shape, uint64_t seed, int cases)
{
    map_case m;
    if (!load_map(file, &m)) {
        cr_skip_test("shared map %s absent", file);
        return;
    }
    keel_rng rng = {seed};
    static uint32_t cand[200000];
    static rv3 cand_tri[3 * 200000];
    int hits = 0, tested = 0;
    for (int i = 0; i < cases; i++) {
        // start near a random triangle: on its front side, up to 1.5 m away
        uint32_t k = (uint32_t)keel_rng_range(&rng, 0, m.tri_count - 1);
        const rv3 *t = &m.tri[3 * k];
        rv3 ctr = rv3_scale(rv3_add(t[0], rv3_add(t[1], t[2])), 1.0 / 3);
        rv3 n = rv3_cross(rv3_sub(t[1], t[0]), rv3_sub(t[2], t[0]));
        n = rv3_scale(n, 1.0 / rv3_len(n));
        double off = 0.05 + keel_rng_range(&rng, 0, 1500) / 1000.0 + shape.half.y / 65536.0;
        rv3 p = rv3_add(ctr, rv3_scale(n, off));
        sim_vec3 start = sim_v3(M(p.x), M(p.y), M(p.z));
        sim_vec3 d = sim_v3(keel_rng_fx(&rng, M(-1.6), M(1.6)), keel_rng_fx(&rng, M(-1.6), M(1.6)),
                            keel_rng_fx(&rng, M(-1.6), M(1.6)));
        rv3 p0 = rv3_from(start), dd = rv3_from(d);
        double len = rv3_len(dd);
        double inflate = (SIM_QUERY_TOLERANCE + (M(len) >> 12)) / 65536.0;
        // candidates: every triangle whose bounds touch the swept bounds
        rv3 h = rv3_from(shape.half);
        rv3 lo = {fmin(p0.x, p0.x + dd.x) - h.x - 0.01, fmin(p0.y, p0.y + dd.y) - h.y - 0.01,
                  fmin(p0.z, p0.z + dd.z) - h.z - 0.01};
        rv3 hi = {fmax(p0.x, p0.x + dd.x) + h.x + 0.01, fmax(p0.y, p0.y + dd.y) + h.y + 0.01,
                  fmax(p0.z, p0.z + dd.z) + h.z + 0.01};
        uint32_t nc = 0;
        double gap0 = 1e300;
        for (uint32_t j = 0; j < m.tri_count; j++) {
            if (box_overlap(lo, hi, &m.tri[3 * j])) {
                cand[nc++] = j;
                const rv3 *c = &m.tri[3 * j];
                gap0 = fmin(gap0, ref_shape_tri_gap(shape, p0, c[0], c[1], c[2]));
            }
        }
        if (gap0 < 2 * inflate)
            continue; // starts (nearly) touching: start overlaps are tested elsewhere
        tested++;
        for (uint32_t j = 0; j < nc; j++)
            for (int v = 0; v < 3; v++)
                cand_tri[3 * j + v] = m.tri[3 * cand[j] + v];
        double toi = ref_shape_tris_toi(shape, p0, dd, cand_tri, nc);
        sim_sweep_input in = {shape, start, d, 0};
        sim_sweep_result r;
        bool hit = sim_world_sweep(m.world, &in, &r);
        if (!hit) {
            cr_assert_gt(toi, 1.0, "%s case %d: missed a contact at fraction %.9f\n  %s", file, i, toi,
                         sweep_text(shape, start, d));
            continue;
        }
        cr_assert_not(r.start_overlap, "%s case %d: start overlap with gap %.6f\n  %s", file, i, gap0,
                      sweep_text(shape, start, d));
        hits++;
        double frac = r.fraction / 65536.0;
        cr_assert_leq(frac, toi + 1e-9, "%s case %d: reported %.9f after the true contact %.9f\n  %s", file, i, frac,
                      toi, sweep_text(shape, start, d));
        rv3 at = rv3_from(r.position);
        double gmin = 1e300;
        for (uint32_t j = 0; j < nc; j++) {
            const rv3 *c = &m.tri[3 * cand[j]];
            double g = ref_shape_tri_gap(shape, at, c[0], c[1], c[2]);
            cr_assert_geq(g, -POS_TOL, "%s case %d: overlap %.9f at the impact (triangle %u of the level)\n  %s", file,
                          i, g, m.tri_index[cand[j]], sweep_text(shape, start, d));
            gmin = fmin(gmin, g);
        }
        // not too early: by the inflation, grown along a box's diagonal
        // (sqrt 3) or a cylinder's rim (sqrt 2); the unit direction's rounding
        double early = shape.type == SIM_SHAPE_BOX        ? 1.7321 * inflate
                       : shape.type == SIM_SHAPE_CYLINDER ? 1.4143 * inflate
                                                          : inflate;
        cr_assert_leq(gmin, early + 1e-4 + 1e-4 * len,
                      "%s case %d: impact %.6f m early (fraction %.9f, true %.9f)\n  %s", file, i, gmin, frac, toi,
                      sweep_text(shape, start, d));
        cr_assert_lt(fabs(rv3_len(rv3_from(r.normal)) - 1), NORMAL_TOL);
    }
    cr_log_info("%s: %d sweeps judged, %d hits\n", file, tested, hits);
    cr_assert_gt(hits, tested / 10);
    free_map(&m);
}

static sim_shape capsule(void) { return sim_shape_capsule(M(0.4), M(1.8)); }
static sim_shape box(void) { return sim_shape_box(M(0.4), M(0.9), M(0.4)); }
static sim_shape cylinder(void) { return sim_shape_cylinder(M(0.4), M(1.8)); }

Test(maps, zdm2_capsule_sweeps, .timeout = 600) { map_sweeps("sauerbraten_zdm2.obj", capsule(), 1, 1000); }
Test(maps, zdm2_box_sweeps, .timeout = 600) { map_sweeps("sauerbraten_zdm2.obj", box(), 2, 1000); }
Test(maps, pandora_capsule_sweeps, .timeout = 600) { map_sweeps("sauerbraten_pandora.obj", capsule(), 3, 1000); }
Test(maps, pandora_box_sweeps, .timeout = 600) { map_sweeps("sauerbraten_pandora.obj", box(), 4, 1000); }
Test(maps, zdm2_cylinder_sweeps, .timeout = 600) { map_sweeps("sauerbraten_zdm2.obj", cylinder(), 5, 1000); }
Test(maps, pandora_cylinder_sweeps, .timeout = 600) { map_sweeps("sauerbraten_pandora.obj", cylinder(), 6, 1000); }
