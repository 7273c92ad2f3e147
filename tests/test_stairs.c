// keel tests: stairs at full speed. The capsule and the box walk up
// and down the built-in level's flights of 0.1 to 0.35 m risers, straight and
// at 30 and 60 degrees, and a flight found in a real map. Every tick on the
// stairs must cover at least 95% of the horizontal distance the same run
// covers on flat ground, stay grounded, and change height by no more than
// the step height (and the mover's 5 mm skin, see judge); the 0.4 to 0.6 m
// flights are never climbed. Each run prints its per-tick horizontal speed
// (cr_log_info). MIT licence.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <keel/sim_move.h>
#include <keel/sim_world.h>

#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)
#define PI 3.14159265358979323846
#define MAX_TICKS 160
#define SETTLE_TICKS 8

typedef struct shape_case {
    const char *name;
    sim_move_settings s;
    double half_width; ///< horizontal reach of the shape from its axis
} shape_case;

static shape_case shape_capsule(void)
{
    shape_case k = {"capsule", sim_move_default_settings(), 0.4};
    return k;
}

static shape_case shape_cylinder(void)
{
    // keel-sim's --shape cylinder: radius 0.4 m, 1.8 m tall (crouched 1.0 m)
    shape_case k = {"cylinder", sim_move_default_settings(), 0.4};
    k.s.stand_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
    k.s.crouch_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1000));
    return k;
}

static shape_case shape_box(void)
{
    // keel-sim's --shape box: 0.8 x 1.8 x 0.8 m (crouched 0.8 x 1.0 x 0.8 m)
    shape_case k = {"box", sim_move_default_settings(), 0.4};
    k.s.stand_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
    k.s.crouch_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(500), SIM_FX_MM(400));
    return k;
}

// Binary yaw that looks along (dx, dz): yaw 0 looks along -Z, a quarter turn -X.
static sim_angle yaw_to(double dx, double dz)
{
    return (sim_angle)(int32_t)llround(atan2(-dx, -dz) / (2 * PI) * 65536.0);
}

// One tick of a run: where the feet went and whether the character stood.
typedef struct tick_rec {
    double x0, z0, x1, z1; ///< feet before and after, horizontally
    double h;              ///< horizontal displacement, m
    double speed;          ///< the same in m/s
    double dy;             ///< height change, m
    bool grounded;
} tick_rec;

// Spawn at `feet`, let it land, then give it the full ground speed along
// (dx, dz), so every run is at full speed from its first tick (runs
// that start 3 m before the stairs from rest; the speed is full well before
// the first step either way, and the flat-ground reference starts the same).
// Then walk forward for `ticks`, recording each tick.
static void run(const sim_world *w, const sim_move_settings *s, sim_vec3 feet, double dx, double dz, int ticks,
                tick_rec *out)
{
    sim_angle yaw = yaw_to(dx, dz);
    sim_char_state c = sim_char_spawn(1, feet, yaw);
    sim_collider col = sim_collider_world(w);
    sim_input in = {0};
    in.yaw = yaw;
    for (int t = 0; t < SETTLE_TICKS; t++) {
        in.tick = (uint32_t)t;
        sim_move_step(&col, s, &c, &in);
    }
    cr_assert(c.flags & SIM_CHAR_GROUNDED, "did not land at (%.3f %.3f %.3f)", D(feet.x), D(feet.y), D(feet.z));
    c.velocity = sim_v3(sim_fx_mul(s->max_speed, M(dx)), 0, sim_fx_mul(s->max_speed, M(dz)));
    in.forward = 127;
    for (int t = 0; t < ticks; t++) {
        sim_vec3 p0 = c.position;
        in.tick = (uint32_t)(SETTLE_TICKS + t);
        sim_move_step(&col, s, &c, &in);
        tick_rec *r = &out[t];
        r->x0 = D(p0.x);
        r->z0 = D(p0.z);
        r->x1 = D(c.position.x);
        r->z1 = D(c.position.z);
        r->h = hypot(r->x1 - r->x0, r->z1 - r->z0);
        r->speed = r->h * s->tick_rate;
        r->dy = D(c.position.y - p0.y);
        r->grounded = (c.flags & SIM_CHAR_GROUNDED) != 0;
    }
}

// The same run on a flat floor with nothing else: the reference displacement
// for every tick.
static void run_flat(const sim_move_settings *s, double dx, double dz, int ticks, tick_rec *out)
{
    static sim_vec3 v[4];
    static uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    const sim_fx h = SIM_FX_INT(200);
    v[0] = sim_v3(-h, 0, -h);
    v[1] = sim_v3(-h, 0, h);
    v[2] = sim_v3(h, 0, h);
    v[3] = sim_v3(h, 0, -h);
    sim_level lv = {v, 4, idx, 2, NULL, 0, NULL, 0};
    sim_world *w = sim_world_create(&lv, NULL, NULL);
    cr_assert_not_null(w);
    run(w, s, sim_v3(0, 0, 0), dx, dz, ticks, out);
    sim_world_destroy(w);
}

// Which ticks a run is judged on: both ends of the tick inside this box of
// feet positions (the flight, less the shape's reach at its sides, so a shape
// hanging over a side is not judged on the fall there).
typedef struct window {
    double x_min, x_max, z_min, z_max;
} window;

static bool in_window(const window *win, double x, double z)
{
    return x >= win->x_min && x <= win->x_max && z >= win->z_min && z <= win->z_max;
}

typedef struct verdict {
    int judged;       ///< ticks judged
    int slow;         ///< judged ticks below 95% of flat ground
    int airborne;     ///< judged ticks not grounded
    int too_high;     ///< judged ticks rising or falling more than a step (and a skin)
    double min_ratio; ///< slowest judged tick / flat
    double max_dy;    ///< largest |height change| over judged ticks
    int first_bad;    ///< first tick failing any check (-1: none)
} verdict;

static verdict judge(const sim_move_settings *s, const tick_rec *r, const tick_rec *flat, int ticks, const window *win,
                     char *speeds, size_t speeds_size)
{
    verdict v = {0, 0, 0, 0, 1e9, 0, -1};
    // The mover keeps its feet a skin (5 mm) above the floor, but a character
    // spawned on a floor, or one the probe left nearer, rests up to a skin
    // lower: stepping from there onto a riser of the full step height raises
    // the feet by the step height plus that skin.
    double step = D(s->step_height + s->skin);
    size_t used = 0;
    speeds[0] = 0;
    for (int t = 0; t < ticks; t++) {
        bool judged = in_window(win, r[t].x0, r[t].z0) && in_window(win, r[t].x1, r[t].z1);
        // the speed row: m/s for every tick, judged ones marked with nothing,
        // others in brackets
        int n = snprintf(speeds + used, speeds_size - used, judged ? " %.2f" : " (%.2f)", r[t].speed);
        if (n > 0 && (size_t)n < speeds_size - used)
            used += (size_t)n;
        if (!judged)
            continue;
        v.judged++;
        double ratio = r[t].h / flat[t].h;
        bool bad = false;
        if (ratio < v.min_ratio)
            v.min_ratio = ratio;
        if (fabs(r[t].dy) > v.max_dy)
            v.max_dy = fabs(r[t].dy);
        if (ratio < 0.95) {
            v.slow++;
            bad = true;
        }
        if (!r[t].grounded) {
            v.airborne++;
            bad = true;
        }
        if (fabs(r[t].dy) > step) {
            v.too_high++;
            bad = true;
        }
        if (bad && v.first_bad < 0)
            v.first_bad = t;
    }
    return v;
}

static void report(const char *what, const verdict *v, const char *speeds)
{
    cr_log_info("%s: %d ticks judged, slowest %.1f%% of flat, largest height change %.4f m, "
                "%d slow, %d airborne, %d above a step; m/s per tick (bracketed: not judged):%s",
                what, v->judged, 100.0 * v->min_ratio, v->max_dy, v->slow, v->airborne, v->too_high, speeds);
}

static void expect_full_speed(const char *what, const verdict *v, const tick_rec *r)
{
    cr_assert_gt(v->judged, 8, "%s: only %d ticks judged", what, v->judged);
    if (v->first_bad >= 0) {
        const tick_rec *b = &r[v->first_bad];
        cr_assert_fail("%s: tick %d from (%.3f %.3f) to (%.3f %.3f): %.2f m/s, height change %.4f m, %s; "
                       "%d slow, %d airborne, %d above a step",
                       what, v->first_bad, b->x0, b->z0, b->x1, b->z1, b->speed, b->dy,
                       b->grounded ? "grounded" : "airborne", v->slow, v->airborne, v->too_high);
    }
}

// ---- the built-in level -------------------------------------------------------

static sim_level level;
static sim_world *world;

static void setup(void) { world = keel_test_builtin_world(&level); }

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(stairs, .init = setup, .fini = teardown, .timeout = 120);

// The flights (docs/levels.md): 2 m wide (x = c +- 1), the first riser at
// z = 18, treads 0.4 m, the landing from z = 19.2 to 20.8 at 4 risers up.
#define FLIGHT_FRONT 18.0
#define FLIGHT_LANDING 19.2
#define FLIGHT_BACK 20.8

static double flight_x(int mm)
{
    char name[64];
    snprintf(name, sizeof name, "stairs_%d_start", mm);
    const sim_marker *mk = sim_level_find_marker(&level, name);
    cr_assert_not_null(mk, "marker %s", name);
    return D(mk->position.x);
}

// One run from `feet` along `deg` degrees off +z (or -z going down) for
// `length` metres, judged inside `win`; returns nothing, asserts.
static void judged_run(const sim_world *w, const shape_case *k, const char *where, int mm, double deg, bool up,
                       sim_vec3 feet, double length, const window *win)
{
    double a = deg * PI / 180;
    double dx = up ? sin(a) : -sin(a), dz = up ? cos(a) : -cos(a);
    int ticks = (int)ceil(length / 0.125);
    cr_assert_leq(ticks, MAX_TICKS);
    static tick_rec r[MAX_TICKS], flat[MAX_TICKS];
    run(w, &k->s, feet, dx, dz, ticks, r);
    run_flat(&k->s, dx, dz, ticks, flat);
    static char speeds[4096];
    verdict v = judge(&k->s, r, flat, ticks, win, speeds, sizeof speeds);
    char what[160];
    snprintf(what, sizeof what, "%s, %s %s %d mm at %.0f degrees", where, k->name, up ? "up" : "down", mm, deg);
    report(what, &v, speeds);
    expect_full_speed(what, &v, r);
}

// A run over a flight of the built-in level (centre line x = c): judged
// while the feet are over the flight or the ground in front of it with the
// whole shape inside the flight's 2 m width, and not past the landing's back
// edge (a drop of 4 risers). At 30 and 60 degrees the path leaves the flight
// over a side, where it falls off: that is not a stair, so it is not judged.
static void flight_run(const shape_case *k, int mm, double deg, bool up, double x_off, double z_start, double length)
{
    double c = flight_x(mm);
    double y = up ? 0.0 : 4 * mm / 1000.0; // the start's floor: the landing going down
    window win = {c - 1 + k->half_width, c + 1 - k->half_width, 14.0, FLIGHT_BACK - k->half_width - 0.05};
    if (deg == 0) {
        win.x_min = c - 1;
        win.x_max = c + 1;
    }
    judged_run(world, k, "built-in", mm, deg, up, sim_v3(M(c + x_off), M(y), M(z_start)), length, &win);
}

static void straight_flights(const shape_case *k)
{
    static const int mm[] = {100, 200, 300, 350};
    double back = FLIGHT_BACK - k->half_width - 0.05; // the furthest feet on the landing
    for (int i = 0; i < 4; i++) {
        // up: from 3 m before the first riser to the middle of the landing
        flight_run(k, mm[i], 0, true, 0, FLIGHT_FRONT - 3, 3 + FLIGHT_LANDING + 0.8 - FLIGHT_FRONT);
        // down: from the back of the landing to 3 m past the first riser
        flight_run(k, mm[i], 0, false, 0, back, back - FLIGHT_FRONT + 3);
    }
}

Test(stairs, capsule_straight_up_and_down_at_full_speed)
{
    shape_case k = shape_capsule();
    straight_flights(&k);
}
Test(stairs, box_straight_up_and_down_at_full_speed)
{
    shape_case k = shape_box();
    straight_flights(&k);
}
Test(stairs, cylinder_straight_up_and_down_at_full_speed)
{
    shape_case k = shape_cylinder();
    straight_flights(&k);
}

static void angled_flights(const shape_case *k)
{
    static const int mm[] = {100, 200, 300, 350};
    static const double deg[] = {30, 60};
    double edge = 1 - k->half_width - 0.05; // furthest feet from the centre line, inside the flight
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 2; j++) {
            double a = deg[j] * PI / 180;
            // Up: a line crossing the centre line in the middle of the treads
            // (z = 18.6), from 3 m before that. The whole shape is inside
            // the flight's width for 1.2 m of x: at 30 degrees 2.1 m of z
            // (every riser), at 60 degrees 0.7 m (the second and third
            // nosings, with the first in reach of the shape).
            double z_mid = (FLIGHT_FRONT + FLIGHT_LANDING) / 2;
            flight_run(k, mm[i], deg[j], true, -3 * sin(a), z_mid - 3 * cos(a), 5.5);
            // Down: from a corner of the landing, placed so the judged part
            // (2 * edge of x) ends 0.45 m past the landing's nosing, or from
            // the back of the landing when that is further: at 30 degrees
            // every riser is judged, at 60 degrees the landing's nosing (the
            // wide flight below has the rest).
            double z0 = fmin(FLIGHT_BACK - k->half_width - 0.05, FLIGHT_LANDING - 0.45 + 2 * edge / tan(a));
            flight_run(k, mm[i], deg[j], false, edge, z0, 5.0);
        }
    }
}

Test(stairs, capsule_at_30_and_60_degrees)
{
    shape_case k = shape_capsule();
    angled_flights(&k);
}
Test(stairs, box_at_30_and_60_degrees)
{
    shape_case k = shape_box();
    angled_flights(&k);
}
Test(stairs, cylinder_at_30_and_60_degrees)
{
    shape_case k = shape_cylinder();
    angled_flights(&k);
}

// ---- a wide flight --------------------------------------------------------------

// The built-in flights' profile (4 risers, 0.4 m treads, a 1.6 m landing)
// 16 m wide, so that a path at 60 degrees stays on it from 3 m before the
// first riser to the landing and every tick is judged.
static sim_world *wide_flight(int mm)
{
    static sim_vec3 v[4];
    static uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    static sim_box_def b[4];
    const sim_fx h = SIM_FX_INT(50);
    v[0] = sim_v3(-h, 0, -h);
    v[1] = sim_v3(-h, 0, h);
    v[2] = sim_v3(h, 0, h);
    v[3] = sim_v3(h, 0, -h);
    for (int k = 1; k <= 4; k++) {
        double z0 = FLIGHT_FRONT + 0.4 * (k - 1), z1 = k < 4 ? z0 + 0.4 : FLIGHT_BACK;
        double top = k * mm / 1000.0;
        b[k - 1] = (sim_box_def){sim_v3(0, M(top / 2), M((z0 + z1) / 2)),
                                 sim_v3(SIM_FX_INT(8), M(top / 2), M((z1 - z0) / 2)),
                                 {sim_v3(SIM_FX_ONE, 0, 0), sim_v3(0, SIM_FX_ONE, 0), sim_v3(0, 0, SIM_FX_ONE)}};
    }
    sim_level lv = {v, 4, idx, 2, b, 4, NULL, 0};
    sim_world *w = sim_world_create(&lv, NULL, NULL);
    cr_assert_not_null(w);
    return w;
}

static void wide_flights(const shape_case *k)
{
    static const int mm[] = {100, 200, 300, 350};
    static const double deg[] = {0, 30, 60};
    double back = FLIGHT_BACK - k->half_width - 0.05;
    window win = {-8 + k->half_width, 8 - k->half_width, 10.0, back};
    for (int i = 0; i < 4; i++) {
        sim_world *w = wide_flight(mm[i]);
        for (int j = 0; j < 3; j++) {
            double a = deg[j] * PI / 180, s = sin(a), c = cos(a);
            // up: from 3 m before the first riser (along the path) to the
            // middle of the landing
            double up_len = 3 + (FLIGHT_LANDING + 0.8 - FLIGHT_FRONT) / c;
            judged_run(w, k, "wide flight", mm[i], deg[j], true, sim_v3(M(-3 * s), 0, M(FLIGHT_FRONT - 3 * c)), up_len,
                       &win);
            // down: from the back of the landing to 3 m past the first riser
            double down_len = (back - FLIGHT_FRONT) / c + 3;
            judged_run(w, k, "wide flight", mm[i], deg[j], false,
                       sim_v3(M(down_len / 2 * s), M(4 * mm[i] / 1000.0), M(back)), down_len, &win);
        }
        sim_world_destroy(w);
    }
}

Test(stairs, capsule_on_a_wide_flight_at_0_30_and_60_degrees)
{
    shape_case k = shape_capsule();
    wide_flights(&k);
}
Test(stairs, box_on_a_wide_flight_at_0_30_and_60_degrees)
{
    shape_case k = shape_box();
    wide_flights(&k);
}
Test(stairs, cylinder_on_a_wide_flight_at_0_30_and_60_degrees)
{
    shape_case k = shape_cylinder();
    wide_flights(&k);
}

static void tall_flights_block(const shape_case *k)
{
    static const int mm[] = {400, 500, 600};
    for (int i = 0; i < 3; i++) {
        static const double deg[] = {0, 30, 60};
        for (int j = 0; j < 3; j++) {
            double c = flight_x(mm[i]), a = deg[j] * PI / 180;
            double dx = sin(a), dz = cos(a);
            static tick_rec r[MAX_TICKS];
            run(world, &k->s, sim_v3(M(c - dx * 3), 0, M(FLIGHT_FRONT - dz * 3)), dx, dz, 64, r);
            double y = 0;
            for (int t = 0; t < 64; t++) {
                y += r[t].dy;
                cr_assert_lt(y, 0.02, "%s climbed the %d mm flight at %.0f degrees: y %.3f at tick %d", k->name, mm[i],
                             deg[j], y, t);
            }
        }
    }
}

Test(stairs, capsule_never_climbs_risers_above_the_step_height)
{
    shape_case k = shape_capsule();
    tall_flights_block(&k);
}
Test(stairs, box_never_climbs_risers_above_the_step_height)
{
    shape_case k = shape_box();
    tall_flights_block(&k);
}
Test(stairs, cylinder_never_climbs_risers_above_the_step_height)
{
    shape_case k = shape_cylinder();
    tall_flights_block(&k);
}

// ---- a flight in a real map -------------------------------------------------------

// zdm2 (Sauerbraten, /work/shared/levels) at its usual scale of 0.12 m per
// unit has no flight with risers of 0.1 to 0.35 m: a probe that listed every
// upward floor on a 5 cm grid over the whole map and followed each along 8
// directions found its stairs all built of 4-unit risers (0.48 m) on 8-unit
// treads (0.96 m), with a single 0.36 m riser among them. This is the
// widest: 8 risers from y = 1.92 to 5.76, their fronts at z = -8.64 + 0.96 k
// (k = 0..7), the flight from x = -15.12 to -7.44 (64 units), open floor
// before and after it and at least 3.2 m of headroom (found by the probe,
// then the edges pinned by vertical rays every centimetre).
//
// Two ways to walk it: as Sauerbraten plays it, at scale 0.12 with a step
// height of 0.5 m (its player steps 4.1 units, 0.49 m); and at scale 0.07
// with the default settings, where the same flight has risers of 0.28 m on
// 0.56 m treads and still 1.89 m of headroom.
#define ZDM2_X0 -15.12
#define ZDM2_X1 -7.44
#define ZDM2_FIRST -8.64
#define ZDM2_LAST -1.92
#define ZDM2_BOTTOM 1.92
#define ZDM2_TOP 5.76

static void real_map_runs(shape_case k, const char *scale, double ratio, sim_fx step_height)
{
    const char *path = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!path) {
        cr_log_info("sauerbraten_zdm2.obj is absent: the real-map stairs are not walked");
        return;
    }
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = scale;
    sim_level lv;
    sim_error err;
    cr_assert_eq(sim_level_load_obj(path, &o, &lv, &err), 0, "%s", err.message);
    sim_world *w = sim_world_create(&lv, NULL, NULL);
    cr_assert_not_null(w);
    k.s.step_height = step_height;
    double x0 = ZDM2_X0 * ratio, x1 = ZDM2_X1 * ratio, first = ZDM2_FIRST * ratio, last = ZDM2_LAST * ratio;
    double bottom = ZDM2_BOTTOM * ratio, top = ZDM2_TOP * ratio;
    double xc = (x0 + x1) / 2, zc = (first + last) / 2;
    window win = {x0 + k.half_width + 0.05, x1 - k.half_width - 0.05, first - 3.5, last + 1.5};
    char where[64];
    snprintf(where, sizeof where, "zdm2 at scale %s, step height %.2f m", scale, D(step_height));
    int mm = (int)lround(480 * ratio); // the risers, mm
    static const double deg[] = {0, 30};
    for (int j = 0; j < 2; j++) {
        double a = deg[j] * PI / 180, s = sin(a), c = cos(a);
        // through the middle of the flight, from 3 m before its first riser
        // to 1 m past its last (along z), up and then down
        double half = (zc - (first - 3)) / c, len = (last + 1 - (first - 3)) / c;
        judged_run(w, &k, where, mm, deg[j], true, sim_v3(M(xc - s * half), M(bottom), M(zc - c * half)), len, &win);
        half = (last + 1 - zc) / c;
        judged_run(w, &k, where, mm, deg[j], false, sim_v3(M(xc + s * half), M(top), M(zc + c * half)), len, &win);
    }
    sim_world_destroy(w);
    sim_level_free(&lv);
}

Test(stairs, capsule_on_a_real_map_flight)
{
    real_map_runs(shape_capsule(), "0.12", 1.0, SIM_FX_MM(500));
    if (KEEL_TEST_SIZE(true, false)) // one scale under the sanitizers: the same paths
        real_map_runs(shape_capsule(), "0.07", 0.07 / 0.12, sim_move_default_settings().step_height);
}

Test(stairs, cylinder_on_a_real_map_flight)
{
    real_map_runs(shape_cylinder(), "0.12", 1.0, SIM_FX_MM(500));
    if (KEEL_TEST_SIZE(true, false)) // one scale under the sanitizers: the same paths
        real_map_runs(shape_cylinder(), "0.07", 0.07 / 0.12, sim_move_default_settings().step_height);
}

Test(stairs, box_on_a_real_map_flight)
{
    real_map_runs(shape_box(), "0.12", 1.0, SIM_FX_MM(500));
    if (KEEL_TEST_SIZE(true, false)) // one scale under the sanitizers: the same paths
        real_map_runs(shape_box(), "0.07", 0.07 / 0.12, sim_move_default_settings().step_height);
}
