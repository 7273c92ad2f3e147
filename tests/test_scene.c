// keel tests: the scene: moving platforms, characters against characters,
// water, order independence and rollback, on the built-in level (markers in
// docs/levels.md). MIT licence.
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "ref_geom.h"
#include "world_near.h"
#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)
#define PI 3.14159265358979323846

static sim_level level;
static sim_world *world;
static sim_move_settings S;

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    S = sim_move_default_settings();
}

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(scene, .init = setup, .fini = teardown, .timeout = 120);

static sim_vec3 marker(const char *name)
{
    const sim_marker *mk = sim_level_find_marker(&level, name);
    cr_assert_not_null(mk, "marker %s", name);
    return mk->position;
}

static sim_vec3 offset(sim_vec3 p, double dx, double dy, double dz)
{
    return sim_v3(p.x + M(dx), p.y + M(dy), p.z + M(dz));
}

// Binary yaw that looks along (dx, dz): yaw 0 looks along -Z, a quarter turn -X.
static sim_angle yaw_to(double dx, double dz)
{
    double a = atan2(-dx, -dz);
    return (sim_angle)(int32_t)llround(a / (2 * PI) * 65536.0);
}

static sim_input command(uint32_t tick, sim_angle yaw, int8_t forward, uint8_t buttons)
{
    sim_input in = {0};
    in.tick = tick;
    in.forward = forward;
    in.yaw = yaw;
    in.buttons = buttons;
    return in;
}

static const sim_char_state *get(const sim_scene *sc, uint32_t id)
{
    const sim_char_state *c = sim_scene_find(sc, id);
    cr_assert_not_null(c, "character %u", id);
    return c;
}

static void add(sim_scene *sc, uint32_t id, sim_vec3 feet, sim_angle yaw)
{
    sim_char_state c = sim_char_spawn(id, feet, yaw);
    cr_assert_eq(sim_scene_add_character(sc, &c), 0, "add %u", id);
}

static void steps(sim_scene *sc, int n)
{
    for (int i = 0; i < n; i++)
        sim_scene_step(sc);
}

// Deepest penetration of a character into anything in its view (world,
// platforms, the others at full size).
static double full_depth_between(const sim_char_state *a, const sim_char_state *b)
{
    return D(sim_shape_pair_depth(sim_char_shape(&S, a), sim_char_center(&S, a), sim_char_shape(&S, b),
                                  sim_char_center(&S, b)));
}

// ---- the pair narrow phase against a double reference ----------------------------------

// Signed gap of two shapes, as collide_shape.h models them: capsules by the
// distance of their segments; any pair with a cylinder as a prism (each shape
// a rounded rectangle over its height, a capsule as its bounding cylinder):
// the larger of the vertical gap and the 2-D gap to the summed rectangle
// grown by the summed radii; any other pair with a box as two boxes (the
// largest separation along an axis; minus the shallowest overlap when
// overlapping).
static double ref_pair_gap(sim_shape a, rv3 pa, sim_shape b, rv3 pb)
{
    if (a.type == SIM_SHAPE_CAPSULE && b.type == SIM_SHAPE_CAPSULE) {
        double ha = D(sim_shape_segment_half(a)), hb = D(sim_shape_segment_half(b));
        rv3 a0 = {pa.x, pa.y - ha, pa.z}, a1 = {pa.x, pa.y + ha, pa.z};
        rv3 b0 = {pb.x, pb.y - hb, pb.z}, b1 = {pb.x, pb.y + hb, pb.z};
        return sqrt(ref_seg_seg_dist2(a0, a1, b0, b1)) - D(a.radius) - D(b.radius);
    }
    rv3 w = rv3_sub(pa, pb);
    if (a.type == SIM_SHAPE_CYLINDER || b.type == SIM_SHAPE_CYLINDER) {
        double r = (a.type == SIM_SHAPE_BOX ? 0 : D(a.radius)) + (b.type == SIM_SHAPE_BOX ? 0 : D(b.radius));
        double cx = (a.type == SIM_SHAPE_BOX ? D(a.half.x) : 0) + (b.type == SIM_SHAPE_BOX ? D(b.half.x) : 0);
        double cz = (a.type == SIM_SHAPE_BOX ? D(a.half.z) : 0) + (b.type == SIM_SHAPE_BOX ? D(b.half.z) : 0);
        double qx = fabs(w.x) - cx, qz = fabs(w.z) - cz;
        double rect = qx > 0 && qz > 0 ? hypot(qx, qz) : fmax(qx, qz);
        return fmax(rect - r, fabs(w.y) - D(a.half.y) - D(b.half.y));
    }
    double g[3] = {fabs(w.x) - D(a.half.x) - D(b.half.x), fabs(w.y) - D(a.half.y) - D(b.half.y),
                   fabs(w.z) - D(a.half.z) - D(b.half.z)};
    return fmax(g[0], fmax(g[1], g[2]));
}

// The true distance between a capsule and a cylinder (the prism model above
// must never be further apart than this: early, never late).
static double ref_capsule_cylinder_gap(sim_shape cap, rv3 pc, sim_shape cyl, rv3 py)
{
    rv3 w = rv3_sub(pc, py);
    double h = fmax(0, hypot(w.x, w.z) - D(cyl.radius));
    double v = fmax(0, fabs(w.y) - D(sim_shape_segment_half(cap)) - D(cyl.half.y));
    return hypot(h, v) - D(cap.radius);
}

// First fraction in [0, 1] where the gap reaches 0 (sampled, then bisected);
// 2 when never. The gap along a line is convex, so a fine sampling finds it.
static double ref_pair_toi(sim_shape a, rv3 pa, rv3 d, sim_shape b, rv3 pb)
{
    const int steps = 512;
    double prev = 0;
    for (int i = 0; i <= steps; i++) {
        double t = (double)i / steps;
        if (ref_pair_gap(a, rv3_add(pa, rv3_scale(d, t)), b, pb) <= 0) {
            if (i == 0)
                return 0;
            double lo = prev, hi = t;
            for (int k = 0; k < 60; k++) {
                double mid = (lo + hi) / 2;
                if (ref_pair_gap(a, rv3_add(pa, rv3_scale(d, mid)), b, pb) <= 0)
                    hi = mid;
                else
                    lo = mid;
            }
            return hi;
        }
        prev = t;
    }
    return 2;
}

static sim_shape random_shape(keel_rng *r, int type)
{
    sim_fx radius = keel_rng_fx(r, M(0.2), M(0.6));
    if (type == SIM_SHAPE_CAPSULE)
        return sim_shape_capsule(radius, keel_rng_fx(r, 2 * radius, M(2.0)));
    if (type == SIM_SHAPE_CYLINDER)
        return sim_shape_cylinder(radius, keel_rng_fx(r, M(0.2), M(2.0)));
    return sim_shape_box(radius, keel_rng_fx(r, M(0.2), M(1.0)), keel_rng_fx(r, M(0.2), M(0.6)));
}

Test(scene, pair_narrow_phase_matches_a_double_reference)
{
    keel_rng r = {2024};
    const double raw = 1.0 / 65536;
    int hits = 0, overlaps = 0, misses = 0;
    int pair_hits[3][3] = {{0}}, pair_misses[3][3] = {{0}};
    for (int k = 0; k < 36000; k++) {
        // every ordered pair of capsule, box and cylinder in turn
        int ta = k % 3, tb = (k / 3) % 3;
        sim_shape a = random_shape(&r, ta), b = random_shape(&r, tb);
        sim_vec3 pb = sim_v3(keel_rng_fx(&r, M(-1), M(1)), keel_rng_fx(&r, M(-1), M(1)), keel_rng_fx(&r, M(-1), M(1)));
        sim_vec3 pa = sim_v3(keel_rng_fx(&r, M(-3), M(3)), keel_rng_fx(&r, M(-3), M(3)), keel_rng_fx(&r, M(-3), M(3)));
        // mostly aimed near the other, sometimes axis-aligned (a box's slabs)
        sim_vec3 aim = sim_v3(pb.x + keel_rng_fx(&r, M(-1), M(1)), pb.y + keel_rng_fx(&r, M(-1), M(1)),
                              pb.z + keel_rng_fx(&r, M(-1), M(1)));
        sim_vec3 d = sim_v3_scale(sim_v3_sub(aim, pa), keel_rng_fx(&r, M(0.2), M(1.5)));
        if (k % 7 == 0)
            d = sim_v3(k % 3 == 0 ? d.x : 0, k % 3 == 1 ? d.y : 0, k % 3 == 2 ? d.z : 0);
        if (sim_v3_is_zero(d))
            continue;
        rv3 ra = rv3_from(pa), rb = rv3_from(pb), rd = rv3_from(d);

        // depth: the reference's, symmetric, and shrink takes off exactly its amount
        double gap0 = ref_pair_gap(a, ra, b, rb);
        sim_fx depth = sim_shape_pair_depth(a, pa, b, pb);
        cr_assert_eq(depth, sim_shape_pair_depth(b, pb, a, pa), "case %d: not symmetric", k);
        cr_assert(fabs(D(depth) + gap0) <= 2 * raw, "case %d: depth %.7f, reference %.7f", k, D(depth), -gap0);
        sim_obstacle ob = {b, pb, 0, 1, SIM_FEATURE_OBJECT_BIT | 9};
        sim_tri_hit ct, shrunk;
        cr_assert(sim_contact_shape_obstacle(a, pa, &ob, M(10), &ct)); // within 10 m: always
        cr_assert_eq(ct.s, depth);
        cr_assert_eq(ct.feature.triangle, SIM_FEATURE_OBJECT_BIT | 9);
        cr_assert_geq(sim_v3_dot64(ct.normal, sim_v3_sub(pa, pb)), 0, "case %d: normal inward", k);
        cr_assert(fabs(rv3_len(rv3_from(ct.normal)) - 1) < 1e-4, "case %d: normal not unit", k);
        if (ta != tb && (ta == SIM_SHAPE_CYLINDER || tb == SIM_SHAPE_CYLINDER) &&
            (ta == SIM_SHAPE_CAPSULE || tb == SIM_SHAPE_CAPSULE)) {
            double truth = ta == SIM_SHAPE_CAPSULE ? ref_capsule_cylinder_gap(a, ra, b, rb)
                                                   : ref_capsule_cylinder_gap(b, rb, a, ra);
            cr_assert_leq(gap0, truth + 1e-9, "case %d: the bounding cylinder is further than the capsule", k);
        }
        ob.shrink = M(0.05);
        cr_assert(sim_contact_shape_obstacle(a, pa, &ob, M(10), &shrunk));
        cr_assert_eq(shrunk.s, depth - M(0.05), "case %d: shrink", k);
        ob.shrink = 0;

        // sweep: never late, never deep, and early only by the inflation
        sim_sweep_ray ray = sim_sweep_ray_make(a, pa, d);
        double L = D(ray.length);
        double toi = ref_pair_toi(a, ra, rd, b, rb);
        sim_tri_hit h;
        bool hit = sim_sweep_shape_obstacle(&ray, &ob, &h);
        if (gap0 <= -D(SIM_QUERY_TOLERANCE) - 2 * raw) {
            // flagged when moving deeper, free when leaving (a convex body)
            bool into = sim_v3_dot64(ct.normal, d) < 0;
            if (into)
                cr_assert(hit && h.start_overlap && h.s == 0, "case %d: start overlap %.6f missed", k, -gap0);
            else
                cr_assert_not(hit, "case %d: leaving an overlap was blocked", k);
            overlaps++;
            continue;
        }
        if (toi <= 1 && toi > 0) {
            cr_assert(hit, "case %d: missed a contact at %.6f", k, toi);
            cr_assert_leq(D(h.s), toi * L + 4 * raw, "case %d: late, %.7f m after %.7f m", k, D(h.s), toi * L);
        }
        if (hit && !h.start_overlap) {
            rv3 at = rv3_from(sim_v3_add(pa, sim_dir_scale(ray.dir, h.s)));
            double g = ref_pair_gap(a, at, b, rb);
            // (a hit the reference's sampling missed is a graze: this covers it)
            cr_assert_leq(g, D(ray.inflate) + 4 * raw, "case %d: hit %.6f m short of contact", k, g);
            // at 0 it may start up to the tolerance deep: a touch, not an overlap
            double allowed = (h.s == 0 ? D(SIM_QUERY_TOLERANCE) : 0) + 4 * raw;
            cr_assert_geq(g, -allowed, "case %d: hit %.7f m deep", k, -g);
            cr_assert_lt(sim_v3_dot64(h.normal, d), 0, "case %d: normal not against the motion", k);
            cr_assert(fabs(rv3_len(rv3_from(h.normal)) - 1) < 1e-4, "case %d: normal not unit", k);
            hits++;
            pair_hits[ta][tb]++;
        }
        if (!hit) {
            cr_assert(toi > 1 || (toi == 0 && gap0 > -D(SIM_QUERY_TOLERANCE) - 2 * raw),
                      "case %d: no hit, reference %.6f", k, toi);
            misses++;
            pair_misses[ta][tb]++;
        }
        // deterministic: the same query gives the same bits
        sim_tri_hit again;
        cr_assert_eq(sim_sweep_shape_obstacle(&ray, &ob, &again), hit);
        if (hit)
            cr_assert(again.s == h.s && sim_v3_eq(again.normal, h.normal) && sim_v3_eq(again.point, h.point));
    }
    cr_log_info("pair sweeps: %d hits, %d start overlaps, %d misses\n", hits, overlaps, misses);
    cr_assert_gt(hits, 3600);
    cr_assert_gt(misses, 3600);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            cr_assert(pair_hits[i][j] > 300 && pair_misses[i][j] > 300, "shapes %d, %d: %d hits, %d misses", i, j,
                      pair_hits[i][j], pair_misses[i][j]);
}

Test(scene, pair_sweep_touching_and_separating_is_free)
{
    sim_shape c = sim_shape_default();
    sim_obstacle ob = {c, sim_v3(0, M(0.9), 0), 0, 1, SIM_FEATURE_OBJECT_BIT | 2};
    // side by side, a skin apart... and exactly touching
    for (int k = 0; k < 2; k++) {
        sim_vec3 start = sim_v3(M(0.8) + (k ? 0 : S.skin), M(0.9), 0);
        sim_tri_hit h;
        sim_sweep_ray away = sim_sweep_ray_make(c, start, sim_v3(M(0.5), 0, 0));
        cr_assert_not(sim_sweep_shape_obstacle(&away, &ob, &h), "moving away");
        sim_sweep_ray along = sim_sweep_ray_make(c, start, sim_v3(0, 0, M(0.5)));
        cr_assert_not(sim_sweep_shape_obstacle(&along, &ob, &h), "moving along");
        sim_sweep_ray into = sim_sweep_ray_make(c, start, sim_v3(-M(0.5), 0, 0));
        cr_assert(sim_sweep_shape_obstacle(&into, &ob, &h));
        cr_assert_not(h.start_overlap);
        cr_assert_leq(h.s, k ? 0 : S.skin);
        cr_assert_eq(h.normal.x, SIM_FX_ONE);
    }
    // standing on another's head: the normal is straight up
    sim_tri_hit h;
    sim_sweep_ray down = sim_sweep_ray_make(c, sim_v3(M(0.1), M(2.9), 0), sim_v3(0, -M(0.5), 0));
    cr_assert(sim_sweep_shape_obstacle(&down, &ob, &h));
    cr_assert_gt(h.normal.y, M(0.95));
    cr_assert(fabs(D(h.point.y) - 1.8) < 0.01, "contact at y %.4f", D(h.point.y));
}

Test(scene, pair_cylinder_rims_corners_and_coincident_axes)
{
    const sim_fx r = M(0.4), hh = M(0.9); // exact in Q16.16 as given, whatever they round to
    sim_shape cyl = sim_shape_cylinder(r, 2 * hh);
    sim_obstacle ob = {cyl, sim_v3(0, hh, 0), 0, 1, SIM_FEATURE_OBJECT_BIT | 2};
    sim_tri_hit h;
    // exactly on the rim: a tie of the side and the top stands on the top
    cr_assert(sim_contact_shape_obstacle(cyl, sim_v3(2 * r, 3 * hh, 0), &ob, 0, &h));
    cr_assert_eq(h.s, 0);
    cr_assert_eq(h.normal.y, SIM_FX_ONE);
    sim_sweep_ray down = sim_sweep_ray_make(cyl, sim_v3(2 * r, 3 * hh + M(0.3), 0), sim_v3(0, -M(0.5), 0));
    cr_assert(sim_sweep_shape_obstacle(&down, &ob, &h));
    cr_assert_eq(h.normal.y, SIM_FX_ONE);
    cr_assert(fabs(D(h.s) - D(M(0.3))) <= D(down.inflate) + 0.0001, "landed after %.5f m", D(h.s));
    cr_assert(h.point.y == 2 * hh && h.point.x == r, "point %.4f %.4f", D(h.point.x), D(h.point.y));
    // a cylinder beside a cylinder diagonally: round, not its bounding box
    sim_vec3 diag = sim_v3(M(0.6), M(0.9), M(0.6)); // 0.849 m apart: 0.049 m clear
    cr_assert(sim_contact_shape_obstacle(cyl, diag, &ob, M(1), &h));
    cr_assert(fabs(D(h.s) + (sqrt(0.72) - 0.8)) < 0.0001, "depth %.5f", D(h.s));
    cr_assert(abs(h.normal.x - h.normal.z) <= 1 && h.normal.y == 0);
    // coincident axes: pushed along x, opposite ways for the two ids
    ob.side = -1;
    cr_assert(sim_contact_shape_obstacle(cyl, sim_v3(0, M(1.0), 0), &ob, 0, &h));
    cr_assert_eq(h.normal.x, -SIM_FX_ONE);
    cr_assert(fabs(D(h.s) - 0.8) < 0.0001);
    ob.side = 1;
    cr_assert(sim_contact_shape_obstacle(cyl, sim_v3(0, M(1.0), 0), &ob, 0, &h));
    cr_assert_eq(h.normal.x, SIM_FX_ONE);

    // a cylinder against a box's vertical edge: the corner, grown round
    sim_shape box = sim_shape_box(M(0.4), M(0.9), M(0.4));
    sim_obstacle bo = {box, sim_v3(0, M(0.9), 0), 0, 1, SIM_FEATURE_OBJECT_BIT | 3};
    sim_vec3 corner = sim_v3(M(0.7), M(0.9), M(0.7)); // 0.424 m from the edge: 0.024 m clear
    cr_assert(sim_contact_shape_obstacle(cyl, corner, &bo, M(1), &h));
    cr_assert(fabs(D(h.s) + (sqrt(0.18) - 0.4)) < 0.0001, "depth %.5f", D(h.s));
    cr_assert(h.point.x == M(0.4) && h.point.z == M(0.4), "the box's edge, not (%.4f, %.4f)", D(h.point.x),
              D(h.point.z));
    // and the box against the cylinder (the pair the other way round)
    sim_obstacle co = {cyl, sim_v3(M(0.7), M(0.9), M(0.7)), 0, 1, SIM_FEATURE_OBJECT_BIT | 4};
    cr_assert(sim_contact_shape_obstacle(box, sim_v3(0, M(0.9), 0), &co, M(1), &h));
    cr_assert(fabs(D(h.s) + (sqrt(0.18) - 0.4)) < 0.0001, "depth %.5f", D(h.s));
    cr_assert(h.normal.x < 0 && h.normal.z < 0);
    // sweeping diagonally into the edge stops a radius from it
    sim_sweep_ray in = sim_sweep_ray_make(cyl, sim_v3(M(1.2), M(0.9), M(1.2)), sim_v3(-M(1), 0, -M(1)));
    cr_assert(sim_sweep_shape_obstacle(&in, &bo, &h));
    sim_vec3 at = sim_v3_add(in.start, sim_dir_scale(in.dir, h.s));
    double gap = hypot(D(at.x) - 0.4, D(at.z) - 0.4) - 0.4;
    cr_assert(gap >= 0 && gap <= D(in.inflate) + 0.0001, "stopped %.5f m from the edge", gap);
    cr_assert(abs(h.normal.x - h.normal.z) <= 1 && h.normal.x > 0);
    // a shrink larger than the rounding comes off the box's core
    bo.shrink = M(0.5);
    cr_assert(sim_contact_shape_obstacle(cyl, sim_v3(M(0.3), M(0.9), 0), &bo, M(1), &h));
    cr_assert_lt(D(h.s), 0.8 + 0.1 - 0.5 + 0.0001);
}

static void add_crouched(sim_scene *sc, uint32_t id, sim_vec3 feet, sim_angle yaw)
{
    sim_char_state c = sim_char_spawn(id, feet, yaw);
    c.flags |= SIM_CHAR_CROUCHED;
    cr_assert_eq(sim_scene_add_character(sc, &c), 0, "add %u", id);
}

// Two characters of the given shapes (the one standing, the other crouched:
// a scene's characters share their settings) walk into each other, then one
// drops onto the other's head.
static void pair_of_shapes_meet(sim_shape_type stand, sim_shape_type crouch)
{
    static const char *names[3] = {"capsule", "box", "cylinder"};
    sim_move_settings s = sim_move_default_settings();
    s.stand_shape = stand == SIM_SHAPE_BOX        ? sim_shape_box(M(0.4), M(0.9), M(0.4))
                    : stand == SIM_SHAPE_CYLINDER ? sim_shape_cylinder(M(0.4), M(1.8))
                                                  : sim_shape_capsule(M(0.4), M(1.8));
    s.crouch_shape = crouch == SIM_SHAPE_BOX        ? sim_shape_box(M(0.4), M(0.5), M(0.4))
                     : crouch == SIM_SHAPE_CYLINDER ? sim_shape_cylinder(M(0.4), M(1.0))
                                                    : sim_shape_capsule(M(0.4), M(1.0));
    cr_assert(sim_move_settings_check(&s, NULL));
    const sim_move_settings saved = S;
    S = s; // full_depth_between uses S
    sim_vec3 c0 = marker("platform_area");

    // walking into each other head on...
    sim_scene *sc = sim_scene_create(world, &S, 4);
    add(sc, 1, offset(c0, -2, 0, 0), yaw_to(1, 0));
    add_crouched(sc, 2, offset(c0, 2, 0, 0), yaw_to(-1, 0));
    const sim_char_state *a = get(sc, 1), *b = get(sc, 2);
    double worst = -1;
    for (int t = 0; t < 200; t++) {
        uint32_t now = sim_scene_tick(sc);
        int8_t go = t < 8 ? 0 : 127;
        sim_input ia = command(now, yaw_to(1, 0), go, 0), ib = command(now, yaw_to(-1, 0), go, SIM_BUTTON_CROUCH);
        sim_scene_set_input(sc, 1, &ia);
        sim_scene_set_input(sc, 2, &ib);
        sim_scene_step(sc);
        cr_assert_lt(a->position.x, b->position.x, "%s into %s, tick %d: passed through", names[stand], names[crouch],
                     t);
        double depth = full_depth_between(a, b);
        worst = fmax(worst, depth);
        cr_assert_lt(depth, 0.125, "%s into %s, tick %d: %.4f m deep", names[stand], names[crouch], t, depth);
        if (t > 150)
            cr_assert_leq(depth, D(S.skin), "%s into %s, tick %d: still %.4f m deep", names[stand], names[crouch], t,
                          depth);
        if (t >= 8)
            cr_assert(a->flags & b->flags & SIM_CHAR_GROUNDED, "tick %d: knocked off the floor", t);
    }
    cr_assert(b->flags & SIM_CHAR_CROUCHED);
    double depth = full_depth_between(a, b);
    cr_assert(depth <= D(S.skin) && depth >= -0.02, "%s into %s: ended %.4f m apart", names[stand], names[crouch],
              -depth);
    sim_scene_destroy(sc);

    // ... and along a diagonal, where corners meet round sides: they may
    // slide round each other, never into each other
    sc = sim_scene_create(world, &S, 4);
    add(sc, 1, offset(c0, -1.5, 0, -1.4), yaw_to(1, 1));
    add_crouched(sc, 2, offset(c0, 1.5, 0, 1.4), yaw_to(-1, -1));
    a = get(sc, 1);
    b = get(sc, 2);
    int deep_ticks = 0, touching_ticks = 0;
    for (int t = 0; t < 160; t++) {
        uint32_t now = sim_scene_tick(sc);
        int8_t go = t < 8 ? 0 : 127;
        sim_input ia = command(now, yaw_to(1, 1), go, 0), ib = command(now, yaw_to(-1, -1), go, SIM_BUTTON_CROUCH);
        sim_scene_set_input(sc, 1, &ia);
        sim_scene_set_input(sc, 2, &ib);
        sim_scene_step(sc);
        double d = full_depth_between(a, b);
        worst = fmax(worst, d);
        cr_assert_lt(d, 0.125, "%s into %s diagonally, tick %d: %.4f m deep", names[stand], names[crouch], t, d);
        deep_ticks += d > D(S.skin);
        touching_ticks += d > -0.02;
    }
    cr_assert_gt(touching_ticks, 4, "%s into %s diagonally: never met", names[stand], names[crouch]);
    cr_assert_leq(deep_ticks, 2, "%s into %s diagonally: %d ticks deeper than the skin", names[stand], names[crouch],
                  deep_ticks);
    sim_scene_destroy(sc);

    // standing on the other's head
    sc = sim_scene_create(world, &S, 4);
    add_crouched(sc, 2, c0, 0);
    add(sc, 1, offset(c0, 0, 1.0 + 0.3, 0), 0); // 0.3 m above the crouched head
    a = get(sc, 1);
    b = get(sc, 2);
    double deepest = -1;
    for (int t = 0; t < 96; t++) {
        uint32_t now = sim_scene_tick(sc);
        sim_input ib = command(now, 0, 0, SIM_BUTTON_CROUCH);
        sim_scene_set_input(sc, 2, &ib);
        sim_scene_step(sc);
        double d = full_depth_between(a, b);
        deepest = fmax(deepest, d);
        cr_assert_lt(d, 0.125, "%s on %s, tick %d: %.4f m deep", names[stand], names[crouch], t, d);
        if (t > 48)
            cr_assert_leq(d, D(S.skin), "%s on %s, tick %d: still %.4f m deep", names[stand], names[crouch], t, d);
    }
    double top = D(b->position.y) + 2 * D(S.crouch_shape.half.y);
    cr_assert(b->flags & SIM_CHAR_CROUCHED);
    cr_assert(a->flags & SIM_CHAR_GROUNDED, "%s on %s: not standing", names[stand], names[crouch]);
    cr_assert(fabs(D(a->position.y) - top) <= 2 * D(S.skin), "%s on %s: feet %.4f m from the head", names[stand],
              names[crouch], D(a->position.y) - top);
    cr_assert(fabs(D(a->position.x - c0.x)) < 0.001 && fabs(D(a->position.z - c0.z)) < 0.001,
              "%s on %s: slid off to (%.4f, %.4f)", names[stand], names[crouch], D(a->position.x - c0.x),
              D(a->position.z - c0.z));
    cr_log_info("%s vs %s: walking deepest %.4f m (diagonally: %d ticks in touch), landing deepest %.4f m\n",
                names[stand], names[crouch], worst, touching_ticks, deepest);
    sim_scene_destroy(sc);
    S = saved;
}

Test(scene, every_pair_of_shapes_stops_walking_into_and_standing_on_each_other)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            pair_of_shapes_meet((sim_shape_type)i, (sim_shape_type)j);
}

// ---- the scene's raycast: characters as targets ---------------------------------------

// Signed distance-like gap of a point to a shape (zero on the surface,
// negative inside; convex along any line).
static double ref_point_gap(sim_shape s, rv3 c, rv3 p)
{
    rv3 w = rv3_sub(p, c);
    if (s.type == SIM_SHAPE_CAPSULE) {
        double h = D(sim_shape_segment_half(s));
        double y = fmax(-h, fmin(h, w.y));
        return sqrt(w.x * w.x + (w.y - y) * (w.y - y) + w.z * w.z) - D(s.radius);
    }
    if (s.type == SIM_SHAPE_CYLINDER)
        return fmax(hypot(w.x, w.z) - D(s.radius), fabs(w.y) - D(s.half.y));
    return fmax(fabs(w.x) - D(s.half.x), fmax(fabs(w.y) - D(s.half.y), fabs(w.z) - D(s.half.z)));
}

// First fraction of the segment in the shape (sampled, then bisected); 2 when never.
static double ref_ray_toi(sim_shape s, rv3 c, rv3 o, rv3 d)
{
    const int steps = 1024;
    double prev = 0;
    for (int i = 0; i <= steps; i++) {
        double t = (double)i / steps;
        if (ref_point_gap(s, c, rv3_add(o, rv3_scale(d, t))) <= 0) {
            if (i == 0)
                return 0;
            double lo = prev, hi = t;
            for (int k = 0; k < 60; k++) {
                double mid = (lo + hi) / 2;
                if (ref_point_gap(s, c, rv3_add(o, rv3_scale(d, mid))) <= 0)
                    hi = mid;
                else
                    lo = mid;
            }
            return hi;
        }
        prev = t;
    }
    return 2;
}

Test(scene, ray_against_each_shape_matches_a_double_reference)
{
    keel_rng r = {77};
    const double raw = 1.0 / 65536, tol = D(SIM_QUERY_TOLERANCE);
    int hits[3] = {0}, misses[3] = {0};
    for (int k = 0; k < 30000; k++) {
        int type = k % 3;
        sim_shape shape = random_shape(&r, type);
        sim_vec3 c = sim_v3(keel_rng_fx(&r, M(-1), M(1)), keel_rng_fx(&r, M(-1), M(1)), keel_rng_fx(&r, M(-1), M(1)));
        sim_fx far = k % 4 == 3 ? M(40) : M(4); // a quarter are long shots
        sim_vec3 o = sim_v3(keel_rng_fx(&r, -far, far), keel_rng_fx(&r, -far, far), keel_rng_fx(&r, -far, far));
        sim_vec3 aim = sim_v3(c.x + keel_rng_fx(&r, M(-1), M(1)), c.y + keel_rng_fx(&r, M(-1.5), M(1.5)),
                              c.z + keel_rng_fx(&r, M(-1), M(1)));
        sim_vec3 d = sim_v3_scale(sim_v3_sub(aim, o), keel_rng_fx(&r, M(0.3), M(2)));
        if (k % 7 == 0) // along an axis: the flat faces and the rims
            d = sim_v3(k % 3 == 0 ? d.x : 0, k % 3 == 1 ? d.y : 0, k % 3 == 2 ? d.z : 0);
        if (sim_v3_is_zero(d))
            continue;
        sim_dir dir = sim_dir_from_v3(d);
        sim_fx len = sim_v3_length(d);
        rv3 rc = rv3_from(c), ro = rv3_from(o), rd = rv3_from(d);
        double L = D(len), toi = ref_ray_toi(shape, rc, ro, rd);
        sim_tri_hit h;
        bool hit = sim_ray_shape(o, dir, len, shape, c, SIM_QUERY_TOLERANCE, &h);
        sim_tri_hit again;
        cr_assert_eq(sim_ray_shape(o, dir, len, shape, c, SIM_QUERY_TOLERANCE, &again), hit);
        if (hit)
            cr_assert(again.s == h.s && sim_v3_eq(again.normal, h.normal) && sim_v3_eq(again.point, h.point));
        if (toi <= 1) {
            cr_assert(hit, "case %d (shape %d): missed at %.6f", k, type, toi * L);
            cr_assert_leq(D(h.s), toi * L + 2 * raw, "case %d (shape %d): late, %.7f m after %.7f m", k, type, D(h.s),
                          toi * L);
        }
        if (hit) {
            double g = ref_point_gap(shape, rc, rv3_from(h.point));
            cr_assert_leq(g, tol + 4 * raw, "case %d (shape %d): hit %.7f m short of the surface", k, type, g);
            if (h.s > 0) {
                cr_assert_geq(g, -4 * raw, "case %d (shape %d): hit %.7f m deep", k, type, -g);
                cr_assert_leq(sim_v3_dot64(h.normal, d), 0, "case %d (shape %d): normal along the ray", k, type);
            }
            cr_assert(fabs(rv3_len(rv3_from(h.normal)) - 1) < 1e-4, "case %d: normal not unit", k);
            hits[type]++;
        } else {
            cr_assert_gt(toi, 1, "case %d (shape %d)", k, type);
            misses[type]++;
        }
    }
    for (int t = 0; t < 3; t++) {
        cr_log_info("rays against shape %d: %d hits, %d misses\n", t, hits[t], misses[t]);
        cr_assert(hits[t] > 1000 && misses[t] > 1000);
    }
}

static sim_platform_def elevator_def(void);

static sim_move_settings settings_of_type(int type)
{
    sim_move_settings s = sim_move_default_settings();
    if (type == SIM_SHAPE_BOX) {
        s.stand_shape = sim_shape_box(M(0.4), M(0.9), M(0.4));
        s.crouch_shape = sim_shape_box(M(0.4), M(0.5), M(0.4));
    } else if (type == SIM_SHAPE_CYLINDER) {
        s.stand_shape = sim_shape_cylinder(M(0.4), M(1.8));
        s.crouch_shape = sim_shape_cylinder(M(0.4), M(1.0));
    }
    return s;
}

static bool shoot(const sim_scene *sc, sim_vec3 from, sim_vec3 d, uint32_t ignore, sim_ray_result *rr, uint32_t *who)
{
    sim_ray_input ray = {from, d};
    return sim_scene_raycast(sc, &ray, ignore, rr, who);
}

Test(scene, raycast_hits_characters_ignores_the_shooter_and_breaks_ties_by_id)
{
    sim_vec3 c0 = marker("platform_area");
    for (int type = 0; type < 3; type++) {
        sim_move_settings s = settings_of_type(type);
        sim_scene *sc = sim_scene_create(world, &s, 8);
        sim_char_state shooter = sim_char_spawn(1, offset(c0, -3, 0, 0), 0);
        sim_char_state target = sim_char_spawn(2, c0, 0);
        cr_assert_eq(sim_scene_add_character(sc, &shooter), 0);
        cr_assert_eq(sim_scene_add_character(sc, &target), 0);
        sim_fx r = s.stand_shape.half.x, top = 2 * s.stand_shape.half.y; // feet at c0.y
        sim_vec3 eye = offset(c0, -3, 1.2, 0);
        sim_ray_result rr;
        uint32_t who = 99;
        // straight at the target from inside the shooter
        cr_assert(shoot(sc, eye, sim_v3(M(6), 0, 0), 1, &rr, &who));
        cr_assert_eq(who, 2);
        cr_assert_eq(rr.feature.triangle, SIM_FEATURE_OBJECT_BIT | 2);
        double expect = 3 - D(r);
        double got = D(rr.point.x - eye.x);
        cr_assert(got <= expect + 2e-5 && got >= expect - D(SIM_QUERY_TOLERANCE) - 2e-5,
                  "shape %d: hit after %.6f m, not %.6f", type, got, expect);
        cr_assert_eq(rr.normal.x, -SIM_FX_ONE);
        cr_assert(fabs(D(rr.fraction) - expect / 6) < 1e-4);
        // the shooter itself when not ignored: at once
        cr_assert(shoot(sc, eye, sim_v3(M(6), 0, 0), 0, &rr, &who));
        cr_assert_eq(who, 1);
        cr_assert_eq(rr.fraction, 0);
        // beside the target by a millimetre: missed; a millimetre inside: hit
        sim_vec3 beside = sim_v3(eye.x, eye.y, eye.z + r + M(0.001));
        cr_assert_not(shoot(sc, beside, sim_v3(M(6), 0, 0), 1, &rr, &who) && who != 0, "shape %d", type);
        cr_assert_eq(who, 0);
        sim_vec3 grazing = sim_v3(eye.x, eye.y, eye.z + r - M(0.001));
        cr_assert(shoot(sc, grazing, sim_v3(M(6), 0, 0), 1, &rr, &who));
        cr_assert_eq(who, 2, "shape %d", type);
        // from above onto the head: the capsule's apex, the flat tops
        sim_vec3 above = offset(c0, 0, 3, 0);
        cr_assert(shoot(sc, above, sim_v3(0, -M(2), 0), 1, &rr, &who));
        cr_assert_eq(who, 2);
        cr_assert(fabs(D(rr.point.y - c0.y - top)) <= D(SIM_QUERY_TOLERANCE) + 2e-5, "shape %d: head at %.6f", type,
                  D(rr.point.y - c0.y));
        cr_assert_eq(rr.normal.y, SIM_FX_ONE);
        // near the rim, 5 mm inside the radius: a capsule's shoulder is lower
        sim_vec3 rim = sim_v3(c0.x + r - M(0.005), c0.y + M(3), c0.z);
        cr_assert(shoot(sc, rim, sim_v3(0, -M(2), 0), 1, &rr, &who));
        cr_assert_eq(who, 2);
        // never late, and within the inflation of the surface (which on a
        // capsule's steep shoulder is more than the inflation vertically)
        double ref = 3 - D(top) + (type == SIM_SHAPE_CAPSULE ? D(r) - sqrt(D(r) * D(r) - pow(D(r) - 0.005, 2)) : 0);
        cr_assert_leq(D(rim.y - rr.point.y), ref + 2e-5, "shape %d: rim hit after %.6f m, not %.6f", type,
                      D(rim.y - rr.point.y), ref);
        double g = ref_point_gap(s.stand_shape, rv3_from(sim_char_center(&s, &target)), rv3_from(rr.point));
        cr_assert(g >= -2e-5 && g <= D(SIM_QUERY_TOLERANCE) + 2e-5, "shape %d: rim hit %.6f m off", type, g);

        // two at the same spot: the smaller id, whatever the order they came in
        sim_char_state t5 = sim_char_spawn(5, offset(c0, 0, 0, 3), 0), t3 = sim_char_spawn(3, offset(c0, 0, 0, 3), 0);
        cr_assert_eq(sim_scene_add_character(sc, &t5), 0);
        cr_assert_eq(sim_scene_add_character(sc, &t3), 0);
        sim_vec3 side = offset(c0, -3, 1.2, 3);
        cr_assert(shoot(sc, side, sim_v3(M(6), 0, 0), 1, &rr, &who));
        cr_assert_eq(who, 3);
        cr_assert(shoot(sc, side, sim_v3(M(6), 0, 0), 3, &rr, &who));
        cr_assert_eq(who, 5);
        // a noclip flyer is not a target
        sim_char_state fly = sim_char_spawn(6, offset(c0, -1.5, 0, 0), 0);
        fly.move_type = SIM_MOVE_FLY;
        cr_assert_eq(sim_scene_add_character(sc, &fly), 0);
        cr_assert(shoot(sc, eye, sim_v3(M(6), 0, 0), 1, &rr, &who));
        cr_assert_eq(who, 2);
        // nothing hit but the floor: no character
        cr_assert(shoot(sc, offset(c0, 5, 1, 5), sim_v3(0, -M(2), 0), 0, &rr, &who));
        cr_assert_eq(who, 0);
        cr_assert_eq(rr.normal.y, SIM_FX_ONE);
        sim_scene_destroy(sc);
    }
}

Test(scene, raycast_sees_walls_before_characters_and_platforms_where_they_are)
{
    // a character behind the thin wall: the wall is hit first
    sim_scene *sc = sim_scene_create(world, &S, 4);
    add(sc, 2, marker("thinwall_back"), 0);
    sim_ray_result rr;
    uint32_t who = 99;
    sim_vec3 front = offset(marker("thinwall_front"), 0, 1, 0);
    cr_assert(shoot(sc, front, sim_v3(0, 0, -M(6)), 0, &rr, &who));
    cr_assert_eq(who, 0);
    cr_assert(rr.feature.triangle < SIM_FEATURE_OBJECT_BIT);
    cr_assert(fabs(D(rr.point.z) + 10 - 0.005) < 0.001, "wall at z %.4f", D(rr.point.z));
    // over the wall: the character
    cr_assert(shoot(sc, offset(front, 0, 5, 0), sim_v3(0, -M(5), -M(4)), 0, &rr, &who));
    cr_assert_eq(who, 2);
    sim_scene_destroy(sc);

    // with nobody else in it, the same answer as the collider's raycast
    sim_platform_def e = elevator_def();
    sc = sim_scene_create(world, &S, 4);
    cr_assert_eq(sim_scene_add_platform(sc, &e), 0);
    add(sc, 1, marker("platform_area"), 0);
    keel_rng r = {5};
    for (int t = 0; t < 200; t++) {
        sim_scene_step(sc);
        sim_vec3 from =
            offset(marker("platform_area"), D(keel_rng_fx(&r, M(-2), M(2))), 3, D(keel_rng_fx(&r, M(-2), M(2))));
        sim_vec3 d = sim_v3(keel_rng_fx(&r, M(-2), M(2)), -M(4), keel_rng_fx(&r, M(-2), M(2)));
        sim_ray_input ray = {from, d};
        sim_ray_result a, b;
        bool ha = sim_scene_raycast(sc, &ray, 1, &a, &who);
        sim_collider col = sim_scene_collider(sc, 1);
        bool hb = col.raycast(col.ctx, &ray, &b);
        cr_assert_eq(ha, hb, "tick %d", t);
        cr_assert_eq(who, 0);
        if (ha)
            cr_assert(a.fraction == b.fraction && sim_v3_eq(a.point, b.point) && sim_v3_eq(a.normal, b.normal) &&
                          a.feature.triangle == b.feature.triangle && a.feature.type == b.feature.type &&
                          a.feature.index == b.feature.index,
                      "tick %d: differs from the collider's raycast", t);
    }
    sim_scene_destroy(sc);
}

// ---- platforms -----------------------------------------------------------------

enum { ELEVATOR = 100, SHUTTLE = 200 };

// Top flush with the floor at the bottom, 2 m up at the top: 1 m/s, with a
// half-second pause at each end.
static sim_platform_def elevator_def(void)
{
    sim_vec3 c = marker("platform_area");
    sim_platform_def p = {0};
    p.id = ELEVATOR;
    p.half = sim_v3(M(1.5), M(0.25), M(1.5));
    p.points[0] = offset(c, 0, -0.25, 0);
    p.points[1] = offset(c, 0, 1.75, 0);
    p.point_count = 2;
    p.ticks_per_leg = 128;
    p.pause_ticks = 32;
    return p;
}

static double platform_top(const sim_platform_def *p, uint32_t tick)
{
    return D(sim_platform_position(p, tick).y + p->half.y);
}

Test(scene, platform_path_is_exact_at_waypoints_and_linear_between)
{
    sim_platform_def p = {0};
    p.id = 1;
    p.half = sim_v3(M(1), M(1), M(1));
    p.points[0] = sim_v3(M(0), M(0), M(0));
    p.points[1] = sim_v3(M(3), M(-1), M(0.1));
    p.points[2] = sim_v3(M(-2), M(5), M(7));
    p.point_count = 3;
    p.ticks_per_leg = 7;
    p.pause_ticks = 2;
    uint32_t leg = 9, cycle = 27;
    for (uint32_t round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 3; i++) {
            uint32_t t0 = round * cycle + i * leg;
            // paused on the waypoint, then leaving it
            for (uint32_t k = 0; k <= 2; k++)
                cr_assert(sim_v3_eq(sim_platform_position(&p, t0 + k), p.points[i]), "tick %u", t0 + k);
            cr_assert(sim_v3_eq(sim_platform_position(&p, t0 + leg), p.points[(i + 1) % 3]));
            sim_vec3 a = p.points[i], b = p.points[(i + 1) % 3];
            for (uint32_t k = 0; k < 7; k++) {
                sim_vec3 q = sim_platform_position(&p, t0 + 2 + k);
                double f = k / 7.0;
                cr_assert(fabs(q.x - (a.x + (b.x - a.x) * f)) <= 0.5 && fabs(q.y - (a.y + (b.y - a.y) * f)) <= 0.5 &&
                              fabs(q.z - (a.z + (b.z - a.z) * f)) <= 0.5,
                          "leg %u step %u off the line", i, k);
            }
        }
    }
    // a whole cycle at the end of the tick range wraps into phase like any other
    cr_assert(sim_v3_eq(sim_platform_position(&p, 27u * 1000u), p.points[0]));

    sim_scene *sc = sim_scene_create(world, &S, 4);
    sim_platform_def bad = p;
    bad.id = 0;
    cr_assert_eq(sim_scene_add_platform(sc, &bad), -1, "id 0");
    bad = p;
    bad.point_count = 0;
    cr_assert_eq(sim_scene_add_platform(sc, &bad), -1, "no points");
    bad = p;
    bad.ticks_per_leg = 0;
    cr_assert_eq(sim_scene_add_platform(sc, &bad), -1, "zero-length legs");
    bad = p;
    bad.points[1].x = SIM_WORLD_LIMIT;
    cr_assert_eq(sim_scene_add_platform(sc, &bad), -1, "beyond the world");
    cr_assert_eq(sim_scene_add_platform(sc, &p), 0);
    cr_assert_eq(sim_scene_add_platform(sc, &p), -1, "id taken");
    sim_char_state c = sim_char_spawn(1, sim_v3(0, 0, 0), 0);
    cr_assert_eq(sim_scene_add_character(sc, &c), -1, "a character may not share a platform's id");
    sim_scene_destroy(sc);
}

Test(scene, elevator_ride_up_and_down_stays_on_the_platform)
{
    sim_platform_def e = elevator_def();
    sim_scene *sc = sim_scene_create(world, &S, 4);
    cr_assert_eq(sim_scene_add_platform(sc, &e), 0);
    add(sc, 1, marker("platform_area"), 0);
    steps(sc, 16); // lands during the first pause
    double worst_gap = 0, worst_sink = 0;
    int carried = 0;
    for (int t = 0; t < 3 * 320; t++) {
        sim_scene_step(sc);
        const sim_char_state *c = get(sc, 1);
        uint32_t now = sim_scene_tick(sc);
        double top = platform_top(&e, now);
        double gap = D(c->position.y) - top;
        worst_gap = fmax(worst_gap, gap);
        worst_sink = fmin(worst_sink, gap);
        cr_assert(c->flags & SIM_CHAR_GROUNDED, "tick %u: airborne, feet %.4f above the top %.4f", now, gap, top);
        cr_assert(gap <= D(S.skin) + 0.001, "tick %u: lifted off, feet %.4f m above the top %.3f", now, gap, top);
        cr_assert(gap >= -D(S.skin), "tick %u: sunk %.4f m into the top %.3f", now, -gap, top);
        carried += c->ground_object == ELEVATOR;
    }
    const sim_char_state *c = get(sc, 1);
    cr_assert(fabs(D(c->position.x)) < 0.01 && fabs(D(c->position.z) + 24) < 0.01, "drifted to (%.4f, %.4f)",
              D(c->position.x), D(c->position.z));
    cr_assert_gt(carried, 3 * 256, "stood on the elevator only %d ticks", carried);
    // the collider for queries between steps sees the platform where it is now
    // (half way up; flush with the floor, the floor would win the tie)
    steps(sc, 100);
    sim_collider col = sim_scene_collider(sc, 1);
    sim_vec3 above = offset(marker("platform_area"), 1.2, 3, 1.2);
    sim_ray_input ray = {above, sim_v3(0, -M(4), 0)};
    sim_ray_result rr;
    cr_assert(col.raycast(col.ctx, &ray, &rr));
    cr_assert_eq(rr.feature.triangle, SIM_FEATURE_OBJECT_BIT | ELEVATOR);
    cr_assert(fabs(D(rr.point.y) - platform_top(&e, sim_scene_tick(sc))) < 0.0001);
    cr_assert_eq(rr.normal.y, SIM_FX_ONE);
    cr_assert_not(col.in_water(col.ctx, above));
    cr_log_info("elevator: feet between %.5f and %.5f m of the top\n", worst_sink, worst_gap);
    sim_scene_destroy(sc);
}

Test(scene, jumping_off_a_rising_elevator_leaves_it)
{
    sim_platform_def e = elevator_def();
    sim_scene *sc = sim_scene_create(world, &S, 4);
    cr_assert_eq(sim_scene_add_platform(sc, &e), 0);
    add(sc, 1, marker("platform_area"), 0);
    steps(sc, 32 + 40); // riding up at 1 m/s
    const sim_char_state *c = get(sc, 1);
    cr_assert(c->flags & SIM_CHAR_GROUNDED);
    cr_assert_eq(c->ground_object, ELEVATOR);
    cr_assert_eq(c->ground_velocity.y, SIM_FX_ONE, "ground velocity %.4f", D(c->ground_velocity.y));
    sim_input jump = command(sim_scene_tick(sc), 0, 0, SIM_BUTTON_JUMP);
    sim_scene_set_input(sc, 1, &jump);
    sim_scene_step(sc);
    cr_assert_eq(c->move_type, SIM_MOVE_AIR);
    cr_assert_eq(c->ground_object, 0);
    cr_assert_not(c->flags & SIM_CHAR_GROUNDED);
    double highest = 0;
    int rising_ticks = 0;
    for (int t = 0; t < 30; t++) {
        sim_scene_step(sc);
        double gap = D(c->position.y) - platform_top(&e, sim_scene_tick(sc));
        highest = fmax(highest, gap);
        if (c->velocity.y > 0) {
            rising_ticks++;
            cr_assert_not(c->flags & SIM_CHAR_GROUNDED, "tick %d: snapped back while rising", t);
            cr_assert_eq(c->move_type, SIM_MOVE_AIR);
        }
    }
    cr_assert_gt(rising_ticks, 20, "rose for only %d ticks", rising_ticks);
    // 6.75 m/s relative to the platform: about 1.1 m above it at the apex
    cr_assert_gt(highest, 1.0, "only %.3f m above the platform", highest);
    // and lands back on it, riding again
    for (int t = 0; t < 40 && !(c->flags & SIM_CHAR_GROUNDED); t++)
        sim_scene_step(sc);
    cr_assert(c->flags & SIM_CHAR_GROUNDED);
    cr_assert_eq(c->ground_object, ELEVATOR);
    sim_scene_destroy(sc);
}

Test(scene, shuttle_carries_a_rider_and_pushes_a_bystander)
{
    sim_vec3 c0 = marker("platform_area");
    sim_platform_def p = {0};
    p.id = SHUTTLE;
    p.half = sim_v3(M(0.75), M(0.25), M(0.75));
    p.points[0] = offset(c0, -1.5, 0.3, 0); // 0.05 m above the floor: it glides
    p.points[1] = offset(c0, 1.5, 0.3, 0);
    p.point_count = 2;
    p.ticks_per_leg = 96; // 2 m/s
    p.pause_ticks = 16;
    sim_scene *sc = sim_scene_create(world, &S, 4);
    cr_assert_eq(sim_scene_add_platform(sc, &p), 0);
    add(sc, 1, offset(c0, -1.5, 0.56, 0), 0); // the rider, on top
    add(sc, 2, offset(c0, 0.5, 0, 0), 0);     // the bystander, in the way
    steps(sc, 12);
    const sim_char_state *rider = get(sc, 1), *by = get(sc, 2);
    cr_assert_eq(rider->ground_object, SHUTTLE);
    double rel0 = D(rider->position.x - sim_platform_position(&p, sim_scene_tick(sc)).x);
    double pushed_to = D(by->position.x);
    double worst_overlap = 0;
    for (int t = 0; t < 2 * 112 + 40; t++) {
        sim_scene_step(sc);
        uint32_t now = sim_scene_tick(sc);
        sim_vec3 at = sim_platform_position(&p, now);
        // the rider keeps its place on the platform
        cr_assert(rider->flags & SIM_CHAR_GROUNDED, "tick %u: rider airborne", now);
        cr_assert_eq(rider->ground_object, SHUTTLE, "tick %u", now);
        double rel = D(rider->position.x - at.x);
        cr_assert(fabs(rel - rel0) < 0.002, "tick %u: rider slid from %.4f to %.4f on the platform", now, rel0, rel);
        double gap = D(rider->position.y - at.y - p.half.y);
        cr_assert(gap >= -D(S.skin) && gap <= D(S.skin) + 0.001, "tick %u: rider gap %.4f", now, gap);
        // the bystander is never left inside it
        sim_contact ct[16];
        sim_overlap_input oi = {sim_char_shape(&S, by), sim_char_center(&S, by), 0};
        sim_collider col = sim_scene_collider(sc, 2);
        int n = col.contacts(col.ctx, &oi, ct, 16);
        double depth = 0;
        for (int i = 0; i < n && i < 16; i++)
            if (ct[i].feature.triangle == (SIM_FEATURE_OBJECT_BIT | SHUTTLE))
                depth = fmax(depth, D(ct[i].depth));
        worst_overlap = fmax(worst_overlap, depth);
        cr_assert_leq(depth, D(S.skin), "tick %u: bystander %.4f m inside the shuttle", now, depth);
        pushed_to = fmax(pushed_to, D(by->position.x));
        cr_assert(by->flags & SIM_CHAR_GROUNDED, "tick %u: bystander knocked off the floor", now);
    }
    // pushed to the far end: the face at x = 1.5 + 0.75, plus the radius
    cr_assert_gt(pushed_to, D(c0.x) + 2.25 + 0.4 - 0.01, "bystander only pushed to x %.3f", pushed_to);
    cr_log_info("shuttle: bystander pushed to x %.4f, deepest %.5f m\n", pushed_to, worst_overlap);
    sim_scene_destroy(sc);
}

Test(scene, a_carried_rider_is_stopped_by_a_wall)
{
    // A low shuttle passing straight through the thin wall (platforms ignore
    // the world); its rider must stay on the near side (front face at z -9.995).
    sim_vec3 c0 = marker("thinwall_front");
    sim_platform_def p = {0};
    p.id = SHUTTLE;
    p.half = sim_v3(M(0.75), M(0.1), M(0.75));
    p.points[0] = offset(c0, 0, 0.15, 0.5);
    p.points[1] = offset(c0, 0, 0.15, -5);
    p.point_count = 2;
    p.ticks_per_leg = 176; // 2 m/s
    p.pause_ticks = 16;
    sim_scene *sc = sim_scene_create(world, &S, 2);
    cr_assert_eq(sim_scene_add_platform(sc, &p), 0);
    add(sc, 1, offset(c0, 0, 0.26, 0.5), 0);
    steps(sc, 12);
    const sim_char_state *c = get(sc, 1);
    cr_assert_eq(c->ground_object, SHUTTLE);
    bool blocked = false;
    for (int t = 0; t < 200; t++) {
        sim_scene_step(sc);
        cr_assert_gt(D(c->position.z) - 0.4, -10.0 + 0.005 - 0.0005, "tick %d: into the wall, z %.4f", t,
                     D(c->position.z));
        blocked |= D(c->position.z) < -10.0 + 0.005 + 0.4 + 0.01;
    }
    cr_assert(blocked, "never reached the wall");
    cr_assert_neq(c->ground_object, SHUTTLE, "still riding after the shuttle went through");
    sim_scene_destroy(sc);
}

// ---- characters against characters ---------------------------------------------------

Test(scene, two_characters_walking_into_each_other_end_up_touching)
{
    sim_vec3 c0 = marker("platform_area");
    sim_scene *sc = sim_scene_create(world, &S, 4);
    add(sc, 1, offset(c0, -2, 0, 0), yaw_to(1, 0));
    add(sc, 2, offset(c0, 2, 0, 0), yaw_to(-1, 0));
    steps(sc, 8);
    const sim_char_state *a = get(sc, 1), *b = get(sc, 2);
    double worst = -1;
    for (int t = 0; t < 128; t++) {
        uint32_t now = sim_scene_tick(sc);
        sim_input ia = command(now, yaw_to(1, 0), 127, 0), ib = command(now, yaw_to(-1, 0), 127, 0);
        sim_scene_set_input(sc, 1, &ia);
        sim_scene_set_input(sc, 2, &ib);
        sim_scene_step(sc);
        cr_assert_lt(a->position.x, b->position.x, "tick %d: passed through each other", t);
        double depth = full_depth_between(a, b);
        worst = fmax(worst, depth);
        // At first contact each has swept against where the other was, so
        // for one tick they overlap by up to the closing distance of a tick.
        cr_assert_lt(depth, 0.125, "tick %d: %.4f m deep", t, depth);
        if (t > 64)
            cr_assert_leq(depth, D(S.skin), "tick %d: still %.4f m deep", t, depth);
        cr_assert(a->flags & SIM_CHAR_GROUNDED);
        cr_assert(b->flags & SIM_CHAR_GROUNDED);
    }
    double depth = full_depth_between(a, b);
    cr_assert(depth <= D(S.skin) && depth >= -0.02, "ended %.4f m apart", -depth);
    // symmetric: the same distance from where they met
    cr_assert(abs((a->position.x - c0.x) + (b->position.x - c0.x)) <= 2, "not symmetric: %.6f %.6f",
              D(a->position.x - c0.x), D(b->position.x - c0.x));
    cr_log_info("walking into each other: deepest %.4f m, final gap %.4f m\n", worst, -depth);
    sim_scene_destroy(sc);
}

// A character touched higher than a step above the feet is a wall: walking
// into one never tries the step-up (which costs sweeps and, with rounded
// shapes, could report a step that never happened). One lower than a step
// (here a crouched box 0.3 m tall) is still a step, and walked onto.
static void walk_into_a_standing_character(bool low, int *stepped, int *walled, double *highest)
{
    sim_move_settings saved = S;
    if (low) {
        S.stand_shape = sim_shape_box(M(0.4), M(0.9), M(0.4));
        S.crouch_shape = sim_shape_box(M(0.4), M(0.15), M(0.4));
    }
    sim_vec3 c0 = marker("platform_area");
    sim_scene *sc = sim_scene_create(world, &S, 4);
    add(sc, 1, offset(c0, -2, 0, 0), yaw_to(1, 0));
    add(sc, 2, c0, 0);
    const sim_char_state *a = get(sc, 1);
    *stepped = *walled = 0;
    *highest = 0;
    for (int t = 0; t < 96; t++) {
        uint32_t now = sim_scene_tick(sc);
        sim_input ia = command(now, yaw_to(1, 0), 127, 0), ib = command(now, 0, 0, low ? SIM_BUTTON_CROUCH : 0);
        sim_scene_set_input(sc, 1, &ia);
        sim_scene_set_input(sc, 2, &ib);
        sim_scene_step(sc);
        *stepped += (a->flags & SIM_CHAR_STEPPED) != 0;
        *walled += (a->flags & SIM_CHAR_WALL) != 0;
        *highest = fmax(*highest, D(a->position.y - c0.y));
    }
    sim_scene_destroy(sc);
    S = saved;
}

Test(scene, a_character_is_a_step_only_when_lower_than_one)
{
    int stepped, walled;
    double highest;
    walk_into_a_standing_character(false, &stepped, &walled, &highest);
    cr_log_info("into a standing capsule: %d ticks stepped, %d walled, feet at most %.4f m up\n", stepped, walled,
                highest);
    cr_assert_eq(stepped, 0, "stepped on %d ticks", stepped);
    cr_assert_gt(walled, 32, "a wall on only %d ticks", walled);
    cr_assert_leq(highest, 2 * D(S.skin), "feet rose %.4f m", highest);
    walk_into_a_standing_character(true, &stepped, &walled, &highest);
    cr_log_info("into a crouched box 0.3 m tall: %d ticks stepped, %d walled, feet at most %.4f m up\n", stepped,
                walled, highest);
    cr_assert_gt(stepped, 0, "never stepped onto the low box");
    cr_assert_gt(highest, 0.25, "feet rose only %.4f m", highest);
}

Test(scene, overlapping_characters_each_resolve_half)
{
    sim_vec3 c0 = marker("platform_area");
    sim_scene *sc = sim_scene_create(world, &S, 4);
    add(sc, 1, offset(c0, -0.3, 0, 0), 0);
    add(sc, 2, offset(c0, 0.3, 0, 0), 0); // 0.2 m deep
    sim_scene_step(sc);
    const sim_char_state *a = get(sc, 1), *b = get(sc, 2);
    double depth = full_depth_between(a, b);
    cr_assert(depth <= 0 && depth >= -1.5 * D(S.skin), "after one tick: depth %.5f", depth);
    cr_assert(abs((a->position.x - c0.x) + (b->position.x - c0.x)) <= 2, "moved %.5f and %.5f", D(a->position.x - c0.x),
              D(b->position.x - c0.x));
    // two at the same spot part in a direction their ids pick, each going
    // half the way: the spot stays between them
    sim_scene *s2 = sim_scene_create(world, &S, 4);
    add(s2, 5, c0, 0);
    add(s2, 3, c0, 0);
    steps(s2, 8);
    const sim_char_state *p3 = get(s2, 3), *p5 = get(s2, 5);
    cr_assert_leq(full_depth_between(p3, p5), 0.001);
    cr_assert(abs((p3->position.x - c0.x) + (p5->position.x - c0.x)) <= 2 &&
                  abs((p3->position.z - c0.z) + (p5->position.z - c0.z)) <= 2,
              "not symmetric: %.5f %.5f and %.5f %.5f", D(p3->position.x - c0.x), D(p3->position.z - c0.z),
              D(p5->position.x - c0.x), D(p5->position.z - c0.z));
    sim_scene_destroy(s2);
    // a noclip flyer neither pushes nor is pushed
    sim_scene *s3 = sim_scene_create(world, &S, 4);
    add(s3, 1, c0, 0);
    add(s3, 2, offset(c0, 0.1, 0.2, 0), 0);
    steps(s3, 8);
    sim_vec3 walker = get(s3, 1)->position;
    for (int t = 0; t < 16; t++) {
        sim_input fly = command(sim_scene_tick(s3), 0, 0, SIM_BUTTON_FLY);
        sim_scene_set_input(s3, 2, &fly);
        sim_scene_step(s3);
    }
    cr_assert_eq(get(s3, 2)->move_type, SIM_MOVE_FLY);
    cr_assert(sim_v3_eq(get(s3, 1)->position, walker), "the walker was pushed by a flyer");
    sim_scene_destroy(s3);
    sim_scene_destroy(sc);
}

// ---- water ---------------------------------------------------------------------------

Test(scene, water_switches_to_swimming_and_back)
{
    sim_vec3 c0 = marker("platform_area");
    sim_scene *sc = sim_scene_create(world, &S, 4);
    cr_assert_eq(sim_scene_add_water(sc, (sim_aabb){offset(c0, -1.5, -1, -3), offset(c0, 1.5, 1.5, 3)}), 0);
    sim_aabb inverted = {offset(c0, 1, 0, 0), offset(c0, -1, 1, 1)};
    cr_assert_eq(sim_scene_add_water(sc, inverted), -1);
    add(sc, 1, offset(c0, -2.8, 0, 0), yaw_to(1, 0));
    steps(sc, 8);
    const sim_char_state *c = get(sc, 1);
    cr_assert_eq(c->move_type, SIM_MOVE_WALK);
    int first_swim = -1, last_swim = -1;
    for (int t = 0; t < 128; t++) {
        sim_input in = command(sim_scene_tick(sc), yaw_to(1, 0), 127, 0);
        sim_scene_set_input(sc, 1, &in);
        sim_scene_step(sc);
        bool inside = fabs(D(c->position.x - c0.x)) <= 1.5;
        if (c->move_type == SIM_MOVE_SWIM) {
            cr_assert(inside, "tick %d: swimming at x %.3f", t, D(c->position.x - c0.x));
            cr_assert(c->flags & SIM_CHAR_IN_WATER);
            if (first_swim < 0)
                first_swim = t;
            last_swim = t;
        } else if (first_swim >= 0) {
            cr_assert_not(c->flags & SIM_CHAR_IN_WATER);
        }
    }
    cr_assert_geq(first_swim, 0, "never swam");
    cr_assert_gt(D(c->position.x - c0.x), 1.6, "stuck in the water at x %.3f", D(c->position.x - c0.x));
    cr_assert_neq(c->move_type, SIM_MOVE_SWIM);
    cr_assert(c->flags & SIM_CHAR_GROUNDED, "not walking again after the water");
    cr_log_info("water: swam from tick %d to %d\n", first_swim, last_swim);
    sim_scene_destroy(sc);
}

// ---- order independence and rollback ---------------------------------------------------

#define CROWD 16

// Input of a character at a tick: a stream seeded by the id alone, so it is
// the same whatever order the characters were added in.
typedef struct crowd_input {
    keel_rng rng[CROWD + 1];
} crowd_input;

static void crowd_init(crowd_input *ci)
{
    for (uint32_t id = 1; id <= CROWD; id++)
        ci->rng[id].state = 0x5eed0000u + id * 7919u;
}

static void crowd_feed(sim_scene *sc, crowd_input *ci)
{
    for (uint32_t id = 1; id <= CROWD; id++) {
        keel_rng *r = &ci->rng[id];
        sim_input in = {0};
        in.tick = sim_scene_tick(sc);
        in.forward = (int8_t)keel_rng_range(r, -127, 127);
        in.right = (int8_t)keel_rng_range(r, -127, 127);
        in.yaw = (sim_angle)keel_rng_range(r, 0, 65535);
        uint64_t b = keel_rng_next(r);
        in.buttons = (uint8_t)(((b & 15) == 0 ? SIM_BUTTON_JUMP : 0) | (((b >> 4) & 31) == 0 ? SIM_BUTTON_CROUCH : 0));
        sim_scene_set_input(sc, id, &in);
    }
}

static sim_vec3 crowd_spawn(uint32_t id)
{
    // a 4 x 4 block 0.9 m apart on the elevator and around it
    sim_vec3 c0 = marker("platform_area");
    uint32_t k = id - 1;
    return offset(c0, -1.35 + 0.9 * (k % 4), 0, -1.35 + 0.9 * (k / 4));
}

static sim_scene *crowd_scene(const uint32_t order[CROWD])
{
    sim_scene *sc = sim_scene_create(world, &S, CROWD);
    sim_platform_def e = elevator_def();
    e.half = sim_v3(M(0.75), M(0.25), M(0.75)); // only part of the crowd rides
    cr_assert_eq(sim_scene_add_platform(sc, &e), 0);
    sim_vec3 c0 = marker("platform_area");
    cr_assert_eq(sim_scene_add_water(sc, (sim_aabb){offset(c0, 1.5, -1, -3), offset(c0, 3, 1.5, 3)}), 0);
    for (int i = 0; i < CROWD; i++)
        add(sc, order[i], crowd_spawn(order[i]), (sim_angle)(order[i] * 4099u));
    return sc;
}

Test(scene, the_result_does_not_depend_on_the_order_characters_were_added)
{
    uint32_t orders[3][CROWD];
    for (int i = 0; i < CROWD; i++) {
        orders[0][i] = (uint32_t)i + 1;
        orders[1][i] = CROWD - (uint32_t)i;
    }
    keel_rng shuffle = {12345};
    for (int i = 0; i < CROWD; i++)
        orders[2][i] = (uint32_t)i + 1;
    for (int i = CROWD - 1; i > 0; i--) {
        int j = (int)keel_rng_range(&shuffle, 0, i);
        uint32_t x = orders[2][i];
        orders[2][i] = orders[2][j];
        orders[2][j] = x;
    }
    enum { TICKS = 500 };
    static uint64_t hashes[3][TICKS];
    int swims = 0, rides = 0, stacked = 0;
    uint32_t crossings = 0;
    for (int k = 0; k < 3; k++) {
        sim_scene *sc = crowd_scene(orders[k]);
        crowd_input ci;
        crowd_init(&ci);
        for (int t = 0; t < TICKS; t++) {
            crowd_feed(sc, &ci);
            sim_char_state before[CROWD];
            memcpy(before, sim_scene_characters(sc, NULL), sizeof before);
            sim_scene_step(sc);
            crossings += keel_test_crossings(world, &S, before, sim_scene_characters(sc, NULL), CROWD, NULL);
            hashes[k][t] = sim_scene_hash(sc);
            if (k == 0) {
                uint32_t n;
                const sim_char_state *cs = sim_scene_characters(sc, &n);
                for (uint32_t i = 0; i < n; i++) {
                    swims += cs[i].move_type == SIM_MOVE_SWIM;
                    rides += cs[i].ground_object == ELEVATOR;
                    stacked += cs[i].ground_object != 0 && cs[i].ground_object != ELEVATOR;
                }
            }
        }
        sim_scene_destroy(sc);
    }
    for (int t = 0; t < TICKS; t++) {
        cr_assert_eq(hashes[1][t], hashes[0][t], "reversed order differs at tick %d", t);
        cr_assert_eq(hashes[2][t], hashes[0][t], "shuffled order differs at tick %d", t);
    }
    cr_assert_eq(crossings, 0, "a character's centre crossed the level");
    // the run exercised what it should
    cr_assert_gt(rides, 0);
    cr_assert_gt(swims, 0);
    cr_log_info("crowd: %d character-ticks riding, %d swimming, %d on another's head\n", rides, swims, stacked);
}

Test(scene, save_and_restore_replays_the_same_ticks)
{
    static const uint32_t order[CROWD] = {3, 1, 4, 15, 9, 2, 6, 5, 13, 8, 7, 16, 10, 12, 11, 14};
    sim_scene *sc = crowd_scene(order);
    crowd_input ci;
    crowd_init(&ci);
    for (int t = 0; t < 100; t++) {
        crowd_feed(sc, &ci);
        sim_scene_step(sc);
    }
    size_t size = sim_scene_state_size(sc);
    cr_assert_eq(size, 16u + CROWD * 76u);
    unsigned char *saved = malloc(size);
    sim_scene_save(sc, saved);
    uint64_t at100 = sim_scene_hash(sc);
    crowd_input ci_saved = ci;
    uint64_t hashes[100];
    for (int t = 0; t < 100; t++) {
        crowd_feed(sc, &ci);
        sim_scene_step(sc);
        hashes[t] = sim_scene_hash(sc);
    }
    cr_assert_eq(sim_scene_tick(sc), 200u);

    // bad buffers are refused and change nothing
    uint64_t at200 = sim_scene_hash(sc);
    cr_assert_not(sim_scene_restore(sc, saved, size - 1, NULL));
    cr_assert_not(sim_scene_restore(sc, saved, 8, NULL));
    saved[0] ^= 1;
    cr_assert_not(sim_scene_restore(sc, saved, size, NULL));
    saved[0] ^= 1;
    cr_assert_eq(sim_scene_hash(sc), at200);

    // a scene changed in between (a character gone, a pending input) comes back whole
    cr_assert(sim_scene_remove_character(sc, 7));
    sim_input junk = command(0, 0, 127, SIM_BUTTON_JUMP);
    sim_scene_set_input(sc, 3, &junk);
    cr_assert(sim_scene_restore(sc, saved, size, NULL));
    cr_assert_eq(sim_scene_tick(sc), 100u);
    cr_assert_eq(sim_scene_hash(sc), at100);
    ci = ci_saved;
    for (int t = 0; t < 100; t++) {
        crowd_feed(sc, &ci);
        sim_scene_step(sc);
        cr_assert_eq(sim_scene_hash(sc), hashes[t], "replay differs at tick %d", 101 + t);
    }
    // the saved bytes are a plain little-endian format: the tick at byte 8
    cr_assert_eq(saved[8] | (saved[9] << 8), 100);
    free(saved);
    sim_scene_destroy(sc);
}

// ---- many characters ---------------------------------------------------------------------

Test(scene, a_thousand_characters_step_without_quadratic_cost)
{
    enum { N = 1000 };
    sim_scene *sc = sim_scene_create(world, &S, N);
    // a 50 x 20 grid over the open middle of the level, 1.2 m apart along x
    // and 0.85 m along z: close enough to keep bumping into each other
    for (uint32_t i = 0; i < N; i++)
        add(sc, i + 1, sim_v3(M(-30 + 1.2 * (i % 50)), 0, M(-8.5 + 0.85 * (i / 50))), (sim_angle)(i * 977u));
    steps(sc, 4);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    keel_rng r = {99};
    static sim_char_state before[N];
    uint32_t crossings = 0;
    for (int t = 0; t < 16; t++) {
        for (uint32_t id = 1; id <= N; id++) {
            sim_input in = command(sim_scene_tick(sc), (sim_angle)keel_rng_range(&r, 0, 65535), 127, 0);
            sim_scene_set_input(sc, id, &in);
        }
        memcpy(before, sim_scene_characters(sc, NULL), sizeof before);
        sim_scene_step(sc);
        crossings += keel_test_crossings(world, &S, before, sim_scene_characters(sc, NULL), N, NULL);
    }
    cr_expect_eq(crossings, 0, "a character's centre crossed the level");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / 16;
    cr_log_info("1000 characters: %.2f ms per tick\n", ms);
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(sc, &n);
    cr_assert_eq(n, (uint32_t)N);
    for (uint32_t i = 1; i < n; i++)
        cr_assert_lt(cs[i - 1].id, cs[i].id);
    sim_scene_destroy(sc);
}
