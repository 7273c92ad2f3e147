// keel tests: character movement behaviours on the built-in level, one test
// per behaviour (see docs/levels.md for the markers), each run for the three
// character shapes in turn: the capsule, the box (Quake's hull) and the
// cylinder, all 0.8 m wide and 1.8 m tall (1.0 m crouched). Where a shape
// behaves differently on purpose, the test says so and asserts each its own
// way; the cylinder's reasons to exist (a flat bottom on a ledge's edge and
// on a stair's nosing) have their own tests at the end. MIT licence.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)
#define PI 3.14159265358979323846

static sim_level level;
static sim_world *world;
static sim_collider col;
static sim_move_settings S;

// The shapes every behaviour runs with (keel-sim's --shape sizes).
enum { SHAPE_CAPSULE, SHAPE_BOX, SHAPE_CYLINDER, SHAPE_COUNT };
static const char *const shape_names[SHAPE_COUNT] = {"capsule", "box", "cylinder"};
static int shape; // the one the test body is running with
#define SN (shape_names[shape])

static void use_shape(int k)
{
    shape = k;
    S = sim_move_default_settings();
    if (k == SHAPE_BOX) {
        S.stand_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
        S.crouch_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(500), SIM_FX_MM(400));
    } else if (k == SHAPE_CYLINDER) {
        S.stand_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
        S.crouch_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1000));
    }
}

// Runs the loop body once per shape, with S set up for it. One world per
// test for all three (building the built-in level is most of a test's time).
#define FOR_EACH_SHAPE for (int shape_k = 0; shape_k < SHAPE_COUNT && (use_shape(shape_k), 1); shape_k++)

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    col = sim_collider_world(world);
    use_shape(SHAPE_CAPSULE);
}

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(move, .init = setup, .fini = teardown, .timeout = 120);

static sim_vec3 marker(const char *name)
{
    const sim_marker *mk = sim_level_find_marker(&level, name);
    cr_assert_not_null(mk, "marker %s", name);
    return mk->position;
}

// Binary yaw that looks along (dx, dz): yaw 0 looks along -Z, a quarter turn -X.
static sim_angle yaw_to(double dx, double dz)
{
    double a = atan2(-dx, -dz);
    return (sim_angle)(int32_t)llround(a / (2 * PI) * 65536.0);
}

static sim_input walk_input(uint32_t tick, sim_angle yaw, uint8_t buttons)
{
    sim_input in = {0};
    in.tick = tick;
    in.forward = 127;
    in.yaw = yaw;
    in.buttons = buttons;
    return in;
}

// Settle a character on the ground at a marker (a few ticks of standing).
static sim_char_state stand_at(const char *name, sim_angle yaw)
{
    sim_char_state c = sim_char_spawn(1, marker(name), yaw);
    sim_input in = {0};
    in.yaw = yaw;
    for (int t = 0; t < 16; t++) {
        in.tick = (uint32_t)t;
        sim_move_step(&col, &S, &c, &in);
    }
    return c;
}

static void walk(sim_char_state *c, sim_angle yaw, int ticks, uint8_t buttons)
{
    for (int t = 0; t < ticks; t++) {
        sim_input in = walk_input((uint32_t)t, yaw, buttons);
        sim_move_step(&col, &S, c, &in);
    }
}

static double overlap_depth(const sim_char_state *c)
{
    sim_overlap_input oi = {sim_char_shape(&S, c), sim_char_center(&S, c), 0};
    sim_contact ct;
    int n = sim_world_contacts(world, &oi, &ct, 1);
    return n ? D(ct.depth) : 0.0;
}

// ---- stairs and ramps ---------------------------------------------------------

Test(move, stairs_up_to_the_step_height_are_climbed_higher_ones_block)
{
    static const int mm[] = {100, 200, 300, 350, 400, 500, 600};
    FOR_EACH_SHAPE
    for (int i = 0; i < 7; i++) {
        char name[64];
        snprintf(name, sizeof name, "stairs_%d_start", mm[i]);
        sim_char_state c = stand_at(name, yaw_to(0, 1));
        // walk until the middle of the landing (or for 2 s), then stand;
        // `on floor` must not flicker on the way up
        int airborne = 0;
        for (int t = 0; t < 128 && D(c.position.z) < 19.8; t++) {
            sim_input in = walk_input((uint32_t)t, yaw_to(0, 1), 0);
            sim_move_step(&col, &S, &c, &in);
            airborne += !(c.flags & SIM_CHAR_GROUNDED);
        }
        if (mm[i] <= 350)
            cr_assert_eq(airborne, 0, "%s, %d mm stairs: airborne for %d ticks on the way up", SN, mm[i], airborne);
        sim_input rest = {0};
        rest.yaw = yaw_to(0, 1);
        for (int t = 0; t < 32; t++)
            sim_move_step(&col, &S, &c, &rest);
        double top = 4 * mm[i] / 1000.0;
        if (mm[i] <= 350)
            cr_assert(fabs(D(c.position.y) - top) < 0.02 && D(c.position.z) > 19.2,
                      "%s, %d mm stairs: feet at y %.4f z %.3f, expected the landing at %.2f", SN, mm[i],
                      D(c.position.y), D(c.position.z), top);
        else
            cr_assert(D(c.position.y) < 0.02 && D(c.position.z) < 18.0,
                      "%s, %d mm stairs climbed: feet at y %.4f z %.3f", SN, mm[i], D(c.position.y), D(c.position.z));
    }
}

Test(move, ramps_20_and_40_are_walkable_50_and_60_are_not)
{
    static const int deg[] = {20, 40, 50, 60};
    FOR_EACH_SHAPE
    for (int i = 0; i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "ramp_%d_start", deg[i]);
        sim_char_state c = stand_at(name, yaw_to(0, 1));
        double max_y = 0;
        int airborne = 0;
        for (int t = 0; t < 64 * 4; t++) {
            sim_input in = walk_input((uint32_t)t, yaw_to(0, 1), 0);
            sim_move_step(&col, &S, &c, &in);
            max_y = fmax(max_y, D(c.position.y));
            if (max_y < 1.99) // on the way up, until the top
                airborne += !(c.flags & SIM_CHAR_GROUNDED);
        }
        if (deg[i] <= 40)
            cr_assert_eq(airborne, 0, "%s, %d degree ramp: airborne for %d ticks on the way up", SN, deg[i], airborne);
        if (deg[i] <= 40)
            cr_assert(max_y > 1.99, "%s, %d degree ramp: only reached %.3f m", SN, deg[i], max_y);
        else
            cr_assert(max_y < 0.36 && D(c.position.y) < 0.05, "%s, %d degree ramp climbed to %.3f m (ends at %.3f)", SN,
                      deg[i], max_y, D(c.position.y));
    }
}

Test(move, steep_slope_slides_down_under_gravity)
{
    FOR_EACH_SHAPE
    {
        // dropped onto the middle of the 60 degree ramp
        sim_vec3 start = marker("ramp_60_start");
        sim_char_state c = sim_char_spawn(1, sim_v3(start.x, M(1.5), start.z + M(1.0 + 0.9)), 0);
        sim_input in = {0};
        for (int t = 0; t < 64 * 3; t++) {
            in.tick = (uint32_t)t;
            sim_move_step(&col, &S, &c, &in);
        }
        cr_assert(D(c.position.y) < 0.05, "%s: still on the slope at y %.3f", SN, D(c.position.y));
        cr_assert(D(c.position.z) < D(start.z) + 1.0 + 0.2, "%s: did not slide back down: z %.3f", SN, D(c.position.z));
    }
}

// ---- flat ground without ghost bumps ---------------------------------------------

static void no_vertical_motion(const char *from, const char *to)
{
    sim_vec3 a = marker(from), b = marker(to);
    sim_angle yaw = yaw_to(D(b.x - a.x), D(b.z - a.z));
    sim_char_state c = stand_at(from, yaw);
    sim_fx y0 = c.position.y;
    double dist = sqrt(pow(D(b.x - a.x), 2) + pow(D(b.z - a.z), 2));
    int ticks = (int)(dist / 8.0 * 64) - 8;
    for (int t = 0; t < ticks; t++) {
        sim_input in = walk_input((uint32_t)t, yaw, 0);
        sim_move_step(&col, &S, &c, &in);
        cr_assert_eq(c.position.y, y0, "%s %s tick %d: y moved from %.6f to %.6f", SN, from, t, D(y0), D(c.position.y));
        cr_assert_eq(c.velocity.y, 0, "%s %s tick %d: vertical velocity %.6f", SN, from, t, D(c.velocity.y));
        cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s %s tick %d: lost the ground", SN, from, t);
        cr_assert_eq(c.ground_normal.y, SIM_FX_ONE, "%s %s tick %d: ground normal y %.6f", SN, from, t,
                     D(c.ground_normal.y));
    }
    double walked = sqrt(pow(D(c.position.x - a.x), 2) + pow(D(c.position.z - a.z), 2));
    cr_assert_gt(walked, dist * 0.6, "%s %s: walked only %.3f of %.3f m", SN, from, walked, dist);
}

Test(move, tessellated_floor_gives_no_vertical_motion)
{
    FOR_EACH_SHAPE
    {
        no_vertical_motion("floor_lane_start", "floor_lane_end");
        no_vertical_motion("floor_center", "spawn");
    }
}

Test(move, row_of_boxes_gives_no_vertical_motion)
{
    FOR_EACH_SHAPE
    no_vertical_motion("boxrow_start", "boxrow_end");
}

// ---- corners settle ---------------------------------------------------------------

static void settles(const char *start, const char *target)
{
    sim_vec3 a = marker(start), b = marker(target);
    sim_angle yaw = yaw_to(D(b.x - a.x), D(b.z - a.z));
    sim_char_state c = stand_at(start, yaw);
    sim_vec3 last = c.position;
    int still = 0;
    for (int t = 0; t < 64 * 5; t++) {
        sim_input in = walk_input((uint32_t)t, yaw, 0);
        sim_move_step(&col, &S, &c, &in);
        if (sim_v3_eq(c.position, last))
            still++;
        else
            still = 0;
        if (t >= 64 * 2)
            cr_assert(sim_v3_eq(c.position, last), "%s %s tick %d: moved (%.6f %.6f %.6f) -> (%.6f %.6f %.6f)", SN,
                      start, t, D(last.x), D(last.y), D(last.z), D(c.position.x), D(c.position.y), D(c.position.z));
        last = c.position;
        cr_assert_leq(overlap_depth(&c), 0.0005, "%s %s tick %d: %.5f m deep", SN, start, t, overlap_depth(&c));
    }
    cr_assert_geq(still, 64 * 3, "%s %s: still for only %d ticks", SN, start, still);
}

Test(move, three_wall_corner_settles_without_jitter)
{
    FOR_EACH_SHAPE
    settles("corner_start", "corner");
}

Test(move, v_corridor_settles_without_jitter)
{
    FOR_EACH_SHAPE
    settles("vcorridor_start", "vcorridor_apex");
}

Test(move, sliding_along_a_wall_keeps_a_steady_speed)
{
    FOR_EACH_SHAPE
    {
        // along the side of the box row (0.5 m high, 10 m long, face at z = -10.5),
        // pushing at 45 degrees into it
        sim_char_state c = stand_at("spawn", 0);
        c.position = sim_v3(M(4.3), c.position.y, M(-11.2));
        sim_angle yaw = yaw_to(1, 1);
        sim_fx last = 0;
        int changes = 0;
        for (int t = 0; t < 56; t++) {
            sim_input in = walk_input((uint32_t)t, yaw, 0);
            sim_vec3 before = c.position;
            sim_move_step(&col, &S, &c, &in);
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s tick %d: airborne", SN, t);
            cr_assert_eq(c.position.y, before.y, "%s tick %d: vertical motion", SN, t);
            cr_assert_lt(D(c.position.z), -10.5 - 0.4 + 0.001, "%s tick %d: into the boxes", SN, t);
            sim_fx dx = c.position.x - before.x;
            if (t >= 24) {
                // settled: the speed along the wall holds within 0.1 mm per tick
                cr_assert(abs(dx - last) <= 8, "%s tick %d: step %.6f after %.6f", SN, t, D(dx), D(last));
                changes += dx != last;
            }
            last = dx;
        }
        cr_assert_gt(D(last) * 64, 4.0, "%s: slid at only %.3f m/s", SN, D(last) * 64);
        cr_log_info("%s wall slide: %.4f m/s, %d changes of the step after settling\n", SN, D(last) * 64, changes);
    }
}

// ---- thin wall, spawn inside ----------------------------------------------------------

Test(move, fifty_metres_per_second_never_passes_the_thin_wall)
{
    FOR_EACH_SHAPE
    for (int k = 0; k < 16; k++) {
        sim_char_state c = stand_at("thinwall_front", yaw_to(0, -1));
        c.position.x += M(k * 0.1 - 0.8);
        c.velocity = sim_v3(0, 0, -M(50));
        for (int t = 0; t < 64; t++) {
            sim_input in = walk_input((uint32_t)t, yaw_to(0, -1), 0);
            sim_move_step(&col, &S, &c, &in);
            // the wall's front face is at z = -10 + 0.005; every shape's back
            // is 0.4 m behind its axis
            cr_assert_gt(D(c.position.z) - 0.4, -10.0 + 0.005, "%s run %d tick %d: through to z %.4f", SN, k, t,
                         D(c.position.z));
        }
    }
}

Test(move, spawn_inside_geometry_resolves_within_a_few_ticks)
{
    static const char *inside[] = {"ledge_top", "stairs_600_top", "obb_crate", "boxrow_start"};
    FOR_EACH_SHAPE
    for (int i = 0; i < 4; i++) {
        sim_vec3 p = marker(inside[i]);
        p.y -= M(0.6); // feet 0.6 m down inside the block
        sim_char_state c = sim_char_spawn(7, p, 0);
        sim_input in = {0};
        int t = 0;
        for (; t < 8; t++) {
            in.tick = (uint32_t)t;
            sim_move_step(&col, &S, &c, &in);
            if (overlap_depth(&c) <= D(S.skin))
                break;
        }
        cr_assert_lt(t, 8, "%s %s: still %.4f m deep after 8 ticks", SN, inside[i], overlap_depth(&c));
        cr_assert_not(c.flags & SIM_CHAR_STUCK, "%s %s: stuck", SN, inside[i]);
    }
}

// ---- steps from a standstill and next to a wall ------------------------------------------

Test(move, step_up_from_a_standstill_in_the_same_tick)
{
    FOR_EACH_SHAPE
    {
        // standing against the first 0.3 m step, at rest
        sim_char_state c = stand_at("stairs_300_start", yaw_to(0, 1));
        c.position.z = M(18.0 - 0.4 - 0.005);
        c.velocity = sim_v3_zero();
        sim_input in = {0};
        sim_move_step(&col, &S, &c, &in); // at rest against it
        cr_assert_eq(c.velocity.z, 0, "%s: not at rest", SN);
        sim_fx y0 = c.position.y;
        in = walk_input(1, yaw_to(0, 1), 0);
        sim_move_step(&col, &S, &c, &in);
        cr_assert(c.flags & SIM_CHAR_STEPPED, "%s: no step in the first tick", SN);
        cr_assert_gt(c.position.z, M(18.0 - 0.4), "%s: no progress in the first tick", SN);
        if (shape == SHAPE_CAPSULE) {
            // A capsule's rounded bottom rolls onto the nosing: in this first
            // tick of 2 cm it rises a little over a centimetre, and keeps
            // climbing after.
            cr_assert_gt(c.position.y, y0 + M(0.005), "%s: no rise in the first tick: y %.4f", SN, D(c.position.y));
        } else {
            // A flat bottom cannot roll: it steps onto the tread whole, as soon
            // as its bottom reaches over the nosing.
            cr_assert(fabs(D(c.position.y) - 0.3) < 0.01, "%s: first tick ends at y %.4f, not on the tread", SN,
                      D(c.position.y));
        }
        for (int t = 0; t < 128 && D(c.position.z) < 19.8; t++) {
            sim_input w = walk_input((uint32_t)t, yaw_to(0, 1), 0);
            sim_move_step(&col, &S, &c, &w);
        }
        cr_assert(fabs(D(c.position.y) - 1.2) < 0.02, "%s: then up the flight: y %.4f", SN, D(c.position.y));
    }
}

// ---- air ------------------------------------------------------------------------------

Test(move, airborne_jump_into_stairs_clips_the_legs)
{
    FOR_EACH_SHAPE
    {
        // run at the 0.6 m stairs and jump late, so the legs meet the riser
        sim_char_state c = stand_at("stairs_600_start", yaw_to(0, 1));
        c.position.z = M(17.2);
        sim_input in = walk_input(0, yaw_to(0, 1), SIM_BUTTON_JUMP);
        c.velocity = sim_v3(0, 0, M(8));
        sim_move_step(&col, &S, &c, &in);
        cr_assert_eq(c.move_type, SIM_MOVE_AIR, "%s: did not jump", SN);
        bool clipped = false;
        for (int t = 1; t < 64 && !clipped; t++) {
            sim_fx vy_before = c.velocity.y;
            in = walk_input((uint32_t)t, yaw_to(0, 1), 0);
            sim_move_step(&col, &S, &c, &in);
            if (c.move_type == SIM_MOVE_AIR && c.velocity.z < M(0.5) && D(c.position.z) < 18.0) {
                clipped = true;
                // vertical motion continues on the parabola: only gravity changed it
                sim_fx g = sim_fx_mul(S.gravity, sim_move_dt(&S));
                cr_assert(abs(c.velocity.y - (vy_before - g)) <= 2, "%s: vertical velocity %.4f -> %.4f", SN,
                          D(vy_before), D(c.velocity.y));
            }
        }
        cr_assert(clipped, "%s: the legs never clipped", SN);
    }
}

Test(move, jump_lands_and_resets_to_walking)
{
    FOR_EACH_SHAPE
    {
        sim_char_state c = stand_at("floor_center", 0);
        sim_input in = {0};
        in.buttons = SIM_BUTTON_JUMP;
        sim_move_step(&col, &S, &c, &in);
        cr_assert_eq(c.move_type, SIM_MOVE_AIR, "%s: did not jump", SN);
        double apex = 0;
        int t = 1;
        for (; t < 128 && c.move_type == SIM_MOVE_AIR; t++) {
            in.tick = (uint32_t)t;
            in.buttons = 0;
            sim_move_step(&col, &S, &c, &in);
            apex = fmax(apex, D(c.position.y));
        }
        cr_assert_eq(c.move_type, SIM_MOVE_WALK, "%s: did not land", SN);
        cr_assert(apex > 1.10 && apex < 1.16, "%s: apex %.4f", SN, apex);
        cr_assert(t > 40 && t < 50, "%s: air time %d ticks", SN, t);
    }
}

// ---- crouch -----------------------------------------------------------------------------

Test(move, crouch_passes_the_tunnel_and_standing_up_is_refused_inside)
{
    FOR_EACH_SHAPE
    {
        sim_angle yaw = yaw_to(0, 1);
        sim_char_state c = stand_at("tunnel_entry", yaw);
        walk(&c, yaw, 64, 0);
        cr_assert_lt(D(c.position.z), 6.0 - 0.39, "%s: walked into the 1.3 m tunnel standing: z %.3f", SN,
                     D(c.position.z));
        walk(&c, yaw, 64 * 2, SIM_BUTTON_CROUCH); // crouched speed 2 m/s
        cr_assert_gt(D(c.position.z), 7.0, "%s: crouched, only reached z %.3f", SN, D(c.position.z));
        cr_assert_eq(c.move_type, SIM_MOVE_CROUCH, "%s", SN);
        // let go of crouch inside: refused
        sim_input in = {0};
        in.yaw = yaw;
        for (int t = 0; t < 8; t++)
            sim_move_step(&col, &S, &c, &in);
        cr_assert(c.flags & SIM_CHAR_CROUCHED, "%s: stood up under the roof", SN);
        cr_assert_eq(c.move_type, SIM_MOVE_CROUCH, "%s", SN);
        cr_assert_leq(overlap_depth(&c), 0.0005, "%s: %.5f m deep", SN, overlap_depth(&c));
        // out of the far end, with crouch still released: stands up as soon as it fits
        int t = 0;
        for (; t < 64 * 2 && (c.flags & SIM_CHAR_CROUCHED); t++) {
            sim_input w = walk_input((uint32_t)t, yaw, 0);
            sim_move_step(&col, &S, &c, &w);
            if (c.flags & SIM_CHAR_CROUCHED)
                cr_assert_lt(D(c.position.z), 10.0 + 0.4 + 0.05,
                             "%s tick %d: still crouched at z %.3f, clear of the roof", SN, t, D(c.position.z));
        }
        cr_assert_not(c.flags & SIM_CHAR_CROUCHED, "%s: never stood up", SN);
        cr_assert_gt(D(c.position.z), 10.0 + 0.4 - 0.01, "%s: stood up under the roof's end, z %.3f", SN,
                     D(c.position.z));
        cr_assert_leq(overlap_depth(&c), 0.0005, "%s: %.5f m deep", SN, overlap_depth(&c));
    }
}

// Runs at the ledge's face from `z0`, jumping at tick `jump_tick` (crouching
// from then on when asked), and returns the highest floor stood on.
static double jump_at_ledge(double z0, int jump_tick, bool crouch)
{
    sim_angle yaw = yaw_to(0, 1);
    sim_char_state c = stand_at("ledge_front", yaw);
    c.position.z = M(z0);
    double top = 0;
    for (int t = 0; t < 64 * 2; t++) {
        uint8_t b = 0;
        if (t == jump_tick)
            b |= SIM_BUTTON_JUMP;
        if (crouch && t > jump_tick)
            b |= SIM_BUTTON_CROUCH;
        sim_input in = walk_input((uint32_t)t, yaw, b);
        sim_move_step(&col, &S, &c, &in);
        if (c.flags & SIM_CHAR_GROUNDED)
            top = fmax(top, D(c.position.y));
    }
    return top;
}

Test(move, crouch_jump_reaches_the_ledge_a_standing_jump_does_not)
{
    FOR_EACH_SHAPE
    {
        // a run-up from 4 m before the face, jumping 1.7 m before it
        double standing = jump_at_ledge(2.0, 22, false);
        cr_assert_lt(standing, 0.05, "%s: a standing jump got onto the 1.5 m ledge (y %.3f)", SN, standing);
        double crouched = jump_at_ledge(2.0, 22, true);
        cr_assert(fabs(crouched - 1.5) < 0.02, "%s: crouch jump ended at y %.3f", SN, crouched);
    }
}

// A character pressing into a wall while airborne rises as fast as in the
// open. (mover_slide once lost the motion before a grazing hit whenever the
// back-off from the wall was longer than it: such a jump rose half as high,
// and a flat bottom could not get its feet over a ledge it was pressed into.)
Test(move, crouch_jump_pressed_against_the_ledge_reaches_it)
{
    FOR_EACH_SHAPE
    {
        // at rest against the face (from z 5.3, pushing +z), then a crouch jump
        double standing = jump_at_ledge(5.3, 6, false);
        cr_assert_lt(standing, 0.05, "%s: a standing jump got onto the 1.5 m ledge (y %.3f)", SN, standing);
        double crouched = jump_at_ledge(5.3, 6, true);
        cr_assert(fabs(crouched - 1.5) < 0.02, "%s: crouch jump pressed into the face ended at y %.3f", SN, crouched);
    }
}

Test(move, a_jump_pressed_against_a_wall_rises_as_high_as_in_the_open)
{
    FOR_EACH_SHAPE
    {
        double apex[2];
        for (int wall = 0; wall < 2; wall++) {
            // in the open, walking -z, or walking -z into the 3 m high thin wall
            sim_char_state c = stand_at(wall ? "thinwall_front" : "floor_center", yaw_to(0, -1));
            walk(&c, yaw_to(0, -1), wall ? 40 : 0, 0);
            double y0 = D(c.position.y);
            apex[wall] = 0;
            for (int t = 0; t < 64; t++) {
                sim_input in = walk_input((uint32_t)t, yaw_to(0, -1), t == 0 ? SIM_BUTTON_JUMP : 0);
                sim_move_step(&col, &S, &c, &in);
                apex[wall] = fmax(apex[wall], D(c.position.y) - y0);
            }
        }
        cr_assert(fabs(apex[0] - 1.139) < 0.02, "%s: apex in the open %.4f", SN, apex[0]);
        cr_assert(fabs(apex[1] - apex[0]) < 0.02, "%s: apex %.4f m against the wall, %.4f m in the open", SN, apex[1],
                  apex[0]);
    }
}

Test(move, walking_down_ramps_stays_grounded)
{
    static const char *tops[] = {"ramp_20_top", "ramp_40_top"};
    FOR_EACH_SHAPE
    for (int i = 0; i < 2; i++) {
        sim_char_state c = sim_char_spawn(1, marker(tops[i]), 0);
        sim_input in = {0};
        for (int t = 0; t < 16; t++)
            sim_move_step(&col, &S, &c, &in);
        // 1.5 s: a flat bottom stays level over each crest until its rim
        // passes it, so it takes a few ticks longer than the capsule (64 vs 61)
        for (int t = 0; t < 96 && D(c.position.y) > 0.02; t++) {
            in = walk_input((uint32_t)t, yaw_to(0, -1), 0);
            sim_move_step(&col, &S, &c, &in);
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s %s tick %d: airborne at y %.3f z %.3f", SN, tops[i], t,
                      D(c.position.y), D(c.position.z));
        }
        cr_assert_lt(D(c.position.y), 0.02, "%s %s: not down", SN, tops[i]);
    }
}

Test(move, walking_down_stairs_stays_grounded)
{
    FOR_EACH_SHAPE
    {
        sim_char_state c = sim_char_spawn(1, marker("stairs_300_top"), 0);
        sim_angle yaw = yaw_to(0, -1);
        sim_input in = {0};
        for (int t = 0; t < 16; t++)
            sim_move_step(&col, &S, &c, &in);
        for (int t = 0; t < 48; t++) {
            in = walk_input((uint32_t)t, yaw, 0);
            sim_move_step(&col, &S, &c, &in);
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s tick %d: airborne at y %.3f z %.3f", SN, t, D(c.position.y),
                      D(c.position.z));
        }
        cr_assert_lt(D(c.position.y), 0.02, "%s: not down", SN);
    }
}

Test(move, other_tick_rates_jump_the_same_height)
{
    static const int rates[] = {30, 60, 64, 128};
    FOR_EACH_SHAPE
    for (int i = 0; i < 4; i++) {
        sim_move_settings s = S;
        s.tick_rate = rates[i];
        sim_char_state c = sim_char_spawn(1, marker("floor_center"), 0);
        sim_input in = {0};
        for (int t = 0; t < 16; t++)
            sim_move_step(&col, &s, &c, &in);
        double y0 = D(c.position.y), apex = y0;
        in.buttons = SIM_BUTTON_JUMP;
        for (int t = 0; t < 4 * rates[i]; t++) {
            sim_move_step(&col, &s, &c, &in);
            in.buttons = 0;
            apex = fmax(apex, D(c.position.y));
        }
        // v^2 / 2g = 6.75^2 / 40 = 1.139 m; half-step gravity keeps every rate
        // on the same parabola, within the skin and a tick's sampling
        cr_assert(fabs(apex - y0 - 1.139) < 0.02, "%s, %d Hz: apex %.4f", SN, rates[i], apex - y0);
        cr_assert_eq(c.move_type, SIM_MOVE_WALK, "%s, %d Hz: did not land", SN, rates[i]);
    }
}

Test(move, ground_probe_classifies_floor_steep_wall_and_ceiling)
{
    FOR_EACH_SHAPE
    {
        // floor
        sim_char_state c = stand_at("floor_center", 0);
        cr_assert_eq(c.ground, SIM_GROUND_FLOOR, "%s", SN);
        cr_assert_eq(c.ground_normal.y, SIM_FX_ONE, "%s", SN);
        // steep: resting against the 60 degree ramp's foot, sliding
        sim_vec3 r = marker("ramp_60_start");
        c = sim_char_spawn(1, sim_v3(r.x, M(0.8), r.z + M(1.0 + 0.5)), 0);
        sim_input in = {0};
        bool steep = false;
        for (int t = 0; t < 32; t++) {
            sim_move_step(&col, &S, &c, &in);
            steep = steep || c.ground == SIM_GROUND_STEEP;
        }
        cr_assert(steep, "%s: never classified the 60 degree slope as steep", SN);
        // wall: walking into the thin wall
        c = stand_at("thinwall_front", yaw_to(0, -1));
        walk(&c, yaw_to(0, -1), 40, 0);
        cr_assert(c.flags & SIM_CHAR_WALL, "%s: no wall", SN);
        // ceiling: jumping inside the tunnel, crouched
        c = stand_at("tunnel_entry", yaw_to(0, 1));
        walk(&c, yaw_to(0, 1), 128, SIM_BUTTON_CROUCH);
        bool ceiling = false;
        in = walk_input(0, yaw_to(0, 1), SIM_BUTTON_CROUCH | SIM_BUTTON_JUMP);
        for (int t = 0; t < 32; t++) {
            sim_move_step(&col, &S, &c, &in);
            in.buttons = SIM_BUTTON_CROUCH;
            ceiling = ceiling || (c.flags & SIM_CHAR_CEILING);
        }
        cr_assert(ceiling, "%s: a jump under the tunnel's roof never touched the ceiling", SN);
        cr_assert_leq(overlap_depth(&c), 0.0005, "%s", SN);
    }
}

// ---- platforms ---------------------------------------------------------------------

Test(move, platforms_carry_the_character)
{
    enum { ELEVATOR = 100, SHUTTLE = 200 };
    sim_vec3 c0 = marker("platform_area");
    FOR_EACH_SHAPE
    {
        // an elevator whose top is flush with the floor at the bottom and 2 m
        // up at the top, 1 m/s with half-second pauses (as in test_scene.c)
        sim_platform_def e = {0};
        e.id = ELEVATOR;
        e.half = sim_v3(M(1.5), M(0.25), M(1.5));
        e.points[0] = sim_v3(c0.x, c0.y - M(0.25), c0.z);
        e.points[1] = sim_v3(c0.x, c0.y + M(1.75), c0.z);
        e.point_count = 2;
        e.ticks_per_leg = 128;
        e.pause_ticks = 32;
        sim_scene *sc = sim_scene_create(world, &S, 2);
        cr_assert_not_null(sc);
        cr_assert_eq(sim_scene_add_platform(sc, &e), 0);
        sim_char_state rider = sim_char_spawn(1, c0, 0);
        cr_assert_eq(sim_scene_add_character(sc, &rider), 0);
        for (int t = 0; t < 16; t++)
            sim_scene_step(sc);
        const sim_char_state *c = sim_scene_find(sc, 1);
        int carried = 0;
        for (int t = 0; t < 2 * 320; t++) {
            sim_scene_step(sc);
            uint32_t now = sim_scene_tick(sc);
            double gap = D(c->position.y) - D(sim_platform_position(&e, now).y + e.half.y);
            cr_assert(c->flags & SIM_CHAR_GROUNDED, "%s elevator tick %u: airborne %.4f m above the top", SN, now, gap);
            cr_assert(gap <= D(S.skin) + 0.001 && gap >= -D(S.skin), "%s elevator tick %u: feet %.4f m from the top",
                      SN, now, gap);
            carried += c->ground_object == ELEVATOR;
        }
        cr_assert_gt(carried, 2 * 256, "%s: stood on the elevator only %d ticks", SN, carried);
        cr_assert(fabs(D(c->position.x - c0.x)) < 0.01 && fabs(D(c->position.z - c0.z)) < 0.01,
                  "%s: drifted on the elevator to (%.4f, %.4f)", SN, D(c->position.x), D(c->position.z));
        sim_scene_destroy(sc);

        // a shuttle gliding 3 m along x at 2 m/s, 5 cm above the floor
        sim_platform_def p = {0};
        p.id = SHUTTLE;
        p.half = sim_v3(M(0.75), M(0.25), M(0.75));
        p.points[0] = sim_v3(c0.x - M(1.5), c0.y + M(0.3), c0.z);
        p.points[1] = sim_v3(c0.x + M(1.5), c0.y + M(0.3), c0.z);
        p.point_count = 2;
        p.ticks_per_leg = 96;
        p.pause_ticks = 16;
        sc = sim_scene_create(world, &S, 2);
        cr_assert_eq(sim_scene_add_platform(sc, &p), 0);
        rider = sim_char_spawn(1, sim_v3(c0.x - M(1.5), c0.y + M(0.56), c0.z), 0);
        cr_assert_eq(sim_scene_add_character(sc, &rider), 0);
        for (int t = 0; t < 12; t++)
            sim_scene_step(sc);
        c = sim_scene_find(sc, 1);
        cr_assert_eq(c->ground_object, SHUTTLE, "%s: not on the shuttle", SN);
        double rel0 = D(c->position.x - sim_platform_position(&p, sim_scene_tick(sc)).x);
        for (int t = 0; t < 2 * 112 + 40; t++) {
            sim_scene_step(sc);
            uint32_t now = sim_scene_tick(sc);
            sim_vec3 at = sim_platform_position(&p, now);
            cr_assert_eq(c->ground_object, SHUTTLE, "%s shuttle tick %u: fell off", SN, now);
            double rel = D(c->position.x - at.x);
            cr_assert(fabs(rel - rel0) < 0.002, "%s shuttle tick %u: slid from %.4f to %.4f on it", SN, now, rel0, rel);
            double gap = D(c->position.y - at.y - p.half.y);
            cr_assert(gap >= -D(S.skin) && gap <= D(S.skin) + 0.001, "%s shuttle tick %u: gap %.4f", SN, now, gap);
        }
        sim_scene_destroy(sc);
    }
}

// ---- what a flat bottom is for -------------------------------------------------------------

// Stands a character still for 2 s with its axis `beyond` metres past an
// edge (along -z from `edge_z`) on a surface at `top`, at x; returns it.
static sim_char_state stand_beyond_edge(double x, double top, double edge_z, double beyond)
{
    sim_char_state c = sim_char_spawn(1, sim_v3(M(x), M(top), M(edge_z - beyond)), 0);
    sim_input in = {0};
    for (int t = 0; t < 128; t++) {
        in.tick = (uint32_t)t;
        sim_move_step(&col, &S, &c, &in);
    }
    return c;
}

// The capsule's bottom sphere resting on an edge `beyond` from its axis
// holds the feet this far below the edge (skin aside).
static double capsule_sag(double beyond)
{
    double r = D(S.stand_shape.radius);
    return r - sqrt(r * r - beyond * beyond);
}

Test(move, a_flat_bottom_stays_on_a_ledge_with_its_centre_past_the_edge)
{
    // the 1.5 m ledge's front edge (z = 6, x 8 to 12)
    static const double beyond[] = {0.1, 0.2, 0.35, 0.39};
    FOR_EACH_SHAPE
    for (int i = 0; i < 4; i++) {
        sim_char_state c = stand_beyond_edge(10, 1.5, 6, beyond[i]);
        double y = D(c.position.y), moved = D(c.position.z) - (6 - beyond[i]);
        if (shape != SHAPE_CAPSULE) {
            // the bottom still reaches over the ledge: it stands on the top,
            // level, and does not move
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s %.2f m past the edge: airborne", SN, beyond[i]);
            cr_assert(fabs(y - 1.5) < 0.001, "%s %.2f m past the edge: feet at y %.4f", SN, beyond[i], y);
            cr_assert_eq(c.position.z, M(6 - beyond[i]), "%s %.2f m past the edge: moved %.4f m", SN, beyond[i], moved);
            cr_assert_eq(c.ground_normal.y, SIM_FX_ONE, "%s %.2f m past the edge: ground normal y %.4f", SN, beyond[i],
                         D(c.ground_normal.y));
        } else if (beyond[i] < 0.38) {
            // the round bottom rests on the edge, sunk by the sphere's sag
            // (where it ended up: it may roll a few centimetres first)
            double sag = capsule_sag(6 - D(c.position.z));
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s %.2f m past the edge: airborne", SN, beyond[i]);
            cr_assert(y < 1.5 - 0.005 && fabs(y - (1.5 - sag)) < D(S.skin) + 0.001,
                      "%s %.2f m past the edge: feet at y %.4f, expected %.4f", SN, beyond[i], y, 1.5 - sag);
            cr_assert(moved <= 0 && moved > -0.06, "%s %.2f m past the edge: rolled %.4f m", SN, beyond[i], moved);
            cr_log_info("capsule %.2f m past the ledge's edge: %.4f m lower, rolled %.4f m off\n", beyond[i], 1.5 - y,
                        -moved);
        } else {
            // almost all of it past the edge: the sphere rolls off, down to the floor
            cr_assert_lt(y, 0.05, "%s %.2f m past the edge: still up at y %.4f", SN, beyond[i], y);
        }
    }
}

Test(move, a_flat_bottom_stands_level_on_a_stair_nosing)
{
    // the 0.3 m flight's first step (x -9 to -7; tread y 0.3, nosing at z 18)
    static const double beyond[] = {0.1, 0.2, 0.3, 0.39};
    FOR_EACH_SHAPE
    for (int i = 0; i < 4; i++) {
        sim_char_state c = stand_beyond_edge(-8, 0.3, 18, beyond[i]);
        double y = D(c.position.y);
        if (shape != SHAPE_CAPSULE) {
            cr_assert(fabs(y - 0.3) < 0.001 && c.position.z == M(18 - beyond[i]),
                      "%s %.2f m past the nosing: feet at (y %.4f, z %.4f)", SN, beyond[i], y, D(c.position.z));
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s %.2f m past the nosing: airborne", SN, beyond[i]);
            cr_assert_eq(c.ground_normal.y, SIM_FX_ONE, "%s %.2f m past the nosing: ground normal y %.4f", SN,
                         beyond[i], D(c.ground_normal.y));
        } else {
            // on the nosing's edge, lower than the tread; or down on the floor
            cr_assert_lt(y, 0.3 - 0.005, "%s %.2f m past the nosing: feet at y %.4f", SN, beyond[i], y);
            cr_log_info("capsule %.2f m past the nosing: feet %.4f m below the tread\n", beyond[i], 0.3 - y);
        }
    }
}

Test(move, a_standing_jump_never_lifts_a_flat_bottom_onto_the_ledge)
{
    // From a 4 m run-up, jumping at each of 40 ticks on the way to the 1.5 m
    // ledge (a standing jump's feet reach 1.14 m): a flat bottom never gets on;
    // the capsule's round bottom, its sphere's centre above the edge at the
    // apex, rolls over it for a few timings.
    FOR_EACH_SHAPE
    {
        int mounted = 0;
        for (int jt = 0; jt < 40; jt++)
            mounted += jump_at_ledge(2.0, jt, false) > 1.4;
        if (shape == SHAPE_CAPSULE)
            cr_assert_gt(mounted, 0, "%s: never rolled onto the ledge", SN);
        else
            cr_assert_eq(mounted, 0, "%s: a standing jump got onto the ledge %d times in 40", SN, mounted);
        cr_log_info("%s: a standing jump got onto the 1.5 m ledge for %d of 40 timings\n", SN, mounted);
    }
}
