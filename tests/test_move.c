// keel tests: character movement behaviours on the built-in level, one test
// per behaviour (see docs/levels.md for the markers). MIT licence.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <keel/sim_move.h>
#include <keel/sim_world.h>

#include "test_support.h"

#define M(x) ((sim_fx)llround((x) * 65536.0))
#define D(v) ((v) / 65536.0)
#define PI 3.14159265358979323846

static sim_level level;
static sim_world *world;
static sim_collider col;
static sim_move_settings S;

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    col = sim_collider_world(world);
    S = sim_move_default_settings();
}

static void teardown(void)
{
    keel_test_builtin_free(&level, world);
}

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
            cr_assert_eq(airborne, 0, "%d mm stairs: airborne for %d ticks on the way up", mm[i], airborne);
        sim_input rest = {0};
        rest.yaw = yaw_to(0, 1);
        for (int t = 0; t < 32; t++)
            sim_move_step(&col, &S, &c, &rest);
        double top = 4 * mm[i] / 1000.0;
        if (mm[i] <= 350)
            cr_assert(fabs(D(c.position.y) - top) < 0.02 && D(c.position.z) > 19.2,
                      "%d mm stairs: feet at y %.4f z %.3f, expected the landing at %.2f", mm[i],
                      D(c.position.y), D(c.position.z), top);
        else
            cr_assert(D(c.position.y) < 0.02 && D(c.position.z) < 18.0,
                      "%d mm stairs climbed: feet at y %.4f z %.3f", mm[i], D(c.position.y),
                      D(c.position.z));
    }
}

Test(move, ramps_20_and_40_are_walkable_50_and_60_are_not)
{
    static const int deg[] = {20, 40, 50, 60};
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
            cr_assert_eq(airborne, 0, "%d degree ramp: airborne for %d ticks on the way up", deg[i], airborne);
        if (deg[i] <= 40)
            cr_assert(max_y > 1.99, "%d degree ramp: only reached %.3f m", deg[i], max_y);
        else
            cr_assert(max_y < 0.36 && D(c.position.y) < 0.05,
                      "%d degree ramp climbed to %.3f m (ends at %.3f)", deg[i], max_y, D(c.position.y));
    }
}

Test(move, steep_slope_slides_down_under_gravity)
{
    // dropped onto the middle of the 60 degree ramp
    sim_vec3 start = marker("ramp_60_start");
    sim_char_state c = sim_char_spawn(1, sim_v3(start.x, M(1.5), start.z + M(1.0 + 0.9)), 0);
    sim_input in = {0};
    for (int t = 0; t < 64 * 3; t++) {
        in.tick = (uint32_t)t;
        sim_move_step(&col, &S, &c, &in);
    }
    cr_assert(D(c.position.y) < 0.05, "still on the slope at y %.3f", D(c.position.y));
    cr_assert(D(c.position.z) < D(start.z) + 1.0 + 0.2, "did not slide back down: z %.3f", D(c.position.z));
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
        cr_assert_eq(c.position.y, y0, "tick %d: y moved from %.6f to %.6f", t, D(y0), D(c.position.y));
        cr_assert_eq(c.velocity.y, 0, "tick %d: vertical velocity %.6f", t, D(c.velocity.y));
        cr_assert(c.flags & SIM_CHAR_GROUNDED, "tick %d: lost the ground", t);
        cr_assert_eq(c.ground_normal.y, SIM_FX_ONE, "tick %d: ground normal y %.6f", t,
                     D(c.ground_normal.y));
    }
    double walked = sqrt(pow(D(c.position.x - a.x), 2) + pow(D(c.position.z - a.z), 2));
    cr_assert_gt(walked, dist * 0.6, "walked only %.3f of %.3f m", walked, dist);
}

Test(move, tessellated_floor_gives_no_vertical_motion)
{
    no_vertical_motion("floor_lane_start", "floor_lane_end");
    no_vertical_motion("floor_center", "spawn");
}

Test(move, row_of_boxes_gives_no_vertical_motion) { no_vertical_motion("boxrow_start", "boxrow_end"); }

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
            cr_assert(sim_v3_eq(c.position, last), "tick %d: moved (%.6f %.6f %.6f) -> (%.6f %.6f %.6f)", t,
                      D(last.x), D(last.y), D(last.z), D(c.position.x), D(c.position.y), D(c.position.z));
        last = c.position;
        cr_assert_leq(overlap_depth(&c), 0.0005);
    }
    cr_assert_geq(still, 64 * 3);
}

Test(move, three_wall_corner_settles_without_jitter) { settles("corner_start", "corner"); }
Test(move, v_corridor_settles_without_jitter) { settles("vcorridor_start", "vcorridor_apex"); }

Test(move, sliding_along_a_wall_keeps_a_steady_speed)
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
        cr_assert(c.flags & SIM_CHAR_GROUNDED);
        cr_assert_eq(c.position.y, before.y, "tick %d: vertical motion", t);
        cr_assert_lt(D(c.position.z), -10.5 - 0.4 + 0.001, "tick %d: into the boxes", t);
        sim_fx dx = c.position.x - before.x;
        if (t >= 24) {
            // settled: the speed along the wall holds within 0.1 mm per tick
            cr_assert(abs(dx - last) <= 8, "tick %d: step %.6f after %.6f", t, D(dx), D(last));
            changes += dx != last;
        }
        last = dx;
    }
    cr_log_info("wall slide speed %.4f m/s\n", D(last) * 64);
    cr_assert_gt(D(last) * 64, 4.0, "slid at only %.3f m/s", D(last) * 64);
    cr_log_info("wall slide: %.4f m/s, %d changes of the step after settling\n", D(last) * 64, changes);
}

// ---- thin wall, spawn inside ----------------------------------------------------------

Test(move, fifty_metres_per_second_never_passes_the_thin_wall)
{
    for (int k = 0; k < 16; k++) {
        sim_char_state c = stand_at("thinwall_front", yaw_to(0, -1));
        c.position.x += M(k * 0.1 - 0.8);
        c.velocity = sim_v3(0, 0, -M(50));
        for (int t = 0; t < 64; t++) {
            sim_input in = walk_input((uint32_t)t, yaw_to(0, -1), 0);
            sim_move_step(&col, &S, &c, &in);
            // the wall's front face is at z = -10 + 0.005; the capsule's back at z - 0.4
            cr_assert_gt(D(c.position.z) - 0.4, -10.0 + 0.005, "run %d tick %d: through to z %.4f", k,
                         t, D(c.position.z));
        }
    }
}

Test(move, spawn_inside_geometry_resolves_within_a_few_ticks)
{
    static const char *inside[] = {"ledge_top", "stairs_600_top", "obb_crate", "boxrow_start"};
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
        cr_assert_lt(t, 8, "%s: still %.4f m deep after 8 ticks", inside[i], overlap_depth(&c));
        cr_assert_not(c.flags & SIM_CHAR_STUCK);
    }
}

// ---- steps from a standstill and next to a wall ------------------------------------------

Test(move, step_up_from_a_standstill_in_the_same_tick)
{
    // standing against the first 0.3 m step, at rest
    sim_char_state c = stand_at("stairs_300_start", yaw_to(0, 1));
    c.position.z = M(18.0 - 0.4 - 0.005);
    c.velocity = sim_v3_zero();
    sim_input in = {0};
    sim_move_step(&col, &S, &c, &in); // at rest against it
    cr_assert_eq(c.velocity.z, 0);
    sim_fx y0 = c.position.y;
    in = walk_input(1, yaw_to(0, 1), 0);
    sim_move_step(&col, &S, &c, &in);
    // A capsule's rounded bottom rolls onto the nosing: in this first tick of
    // 2 cm it rises a little over a centimetre, and keeps climbing after.
    cr_assert(c.flags & SIM_CHAR_STEPPED, "no step in the first tick");
    cr_assert_gt(c.position.y, y0 + M(0.005), "no rise in the first tick: y %.4f", D(c.position.y));
    cr_assert_gt(c.position.z, M(18.0 - 0.4), "no progress in the first tick");
    for (int t = 0; t < 128 && D(c.position.z) < 19.8; t++) {
        sim_input w = walk_input((uint32_t)t, yaw_to(0, 1), 0);
        sim_move_step(&col, &S, &c, &w);
    }
    cr_assert(fabs(D(c.position.y) - 1.2) < 0.02, "then up the flight: y %.4f", D(c.position.y));
}

// ---- air ------------------------------------------------------------------------------

Test(move, airborne_jump_into_stairs_clips_the_legs)
{
    // run at the 0.6 m stairs and jump late, so the legs meet the riser
    sim_char_state c = stand_at("stairs_600_start", yaw_to(0, 1));
    c.position.z = M(17.2);
    sim_input in = walk_input(0, yaw_to(0, 1), SIM_BUTTON_JUMP);
    c.velocity = sim_v3(0, 0, M(8));
    sim_move_step(&col, &S, &c, &in);
    cr_assert_eq(c.move_type, SIM_MOVE_AIR);
    bool clipped = false;
    for (int t = 1; t < 64 && !clipped; t++) {
        sim_fx vy_before = c.velocity.y;
        in = walk_input((uint32_t)t, yaw_to(0, 1), 0);
        sim_move_step(&col, &S, &c, &in);
        if (c.move_type == SIM_MOVE_AIR && c.velocity.z < M(0.5) && D(c.position.z) < 18.0) {
            clipped = true;
            // vertical motion continues on the parabola: only gravity changed it
            sim_fx g = sim_fx_mul(S.gravity, sim_move_dt(&S));
            cr_assert(abs(c.velocity.y - (vy_before - g)) <= 2, "vertical velocity %.4f -> %.4f", D(vy_before),
                      D(c.velocity.y));
        }
    }
    cr_assert(clipped, "the legs never clipped");
}

Test(move, jump_lands_and_resets_to_walking)
{
    sim_char_state c = stand_at("floor_center", 0);
    sim_input in = {0};
    in.buttons = SIM_BUTTON_JUMP;
    sim_move_step(&col, &S, &c, &in);
    cr_assert_eq(c.move_type, SIM_MOVE_AIR);
    double apex = 0;
    int t = 1;
    for (; t < 128 && c.move_type == SIM_MOVE_AIR; t++) {
        in.tick = (uint32_t)t;
        in.buttons = 0;
        sim_move_step(&col, &S, &c, &in);
        apex = fmax(apex, D(c.position.y));
    }
    cr_assert_eq(c.move_type, SIM_MOVE_WALK);
    cr_assert(apex > 1.10 && apex < 1.16, "apex %.4f", apex);
    cr_assert(t > 40 && t < 50, "air time %d ticks", t);
}

// ---- crouch -----------------------------------------------------------------------------

Test(move, crouch_passes_the_tunnel_and_standing_up_is_refused_inside)
{
    sim_angle yaw = yaw_to(0, 1);
    sim_char_state c = stand_at("tunnel_entry", yaw);
    walk(&c, yaw, 64, 0);
    cr_assert_lt(D(c.position.z), 6.0 - 0.39, "walked into the 1.3 m tunnel standing: z %.3f", D(c.position.z));
    walk(&c, yaw, 64 * 2, SIM_BUTTON_CROUCH); // crouched speed 2 m/s
    cr_assert_gt(D(c.position.z), 7.0, "crouched, only reached z %.3f", D(c.position.z));
    cr_assert_eq(c.move_type, SIM_MOVE_CROUCH);
    // let go of crouch inside: refused
    sim_input in = {0};
    in.yaw = yaw;
    for (int t = 0; t < 8; t++)
        sim_move_step(&col, &S, &c, &in);
    cr_assert(c.flags & SIM_CHAR_CROUCHED);
    cr_assert_eq(c.move_type, SIM_MOVE_CROUCH);
    cr_assert_leq(overlap_depth(&c), 0.0005);
}

static double jump_at_ledge(bool crouch)
{
    sim_angle yaw = yaw_to(0, 1);
    sim_char_state c = stand_at("ledge_front", yaw);
    c.position.z = M(5.3);
    double top = 0; // the highest floor stood on
    for (int t = 0; t < 64 * 2; t++) {
        uint8_t b = 0;
        if (t == 6)
            b |= SIM_BUTTON_JUMP;
        if (crouch && t > 6)
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
    double standing = jump_at_ledge(false);
    cr_assert_lt(standing, 0.05, "a standing jump got onto the 1.5 m ledge (y %.3f)", standing);
    double crouched = jump_at_ledge(true);
    cr_assert(fabs(crouched - 1.5) < 0.02, "crouch jump ended at y %.3f", crouched);
}

Test(move, walking_down_ramps_stays_grounded)
{
    static const char *tops[] = {"ramp_20_top", "ramp_40_top"};
    for (int i = 0; i < 2; i++) {
        sim_char_state c = sim_char_spawn(1, marker(tops[i]), 0);
        sim_input in = {0};
        for (int t = 0; t < 16; t++)
            sim_move_step(&col, &S, &c, &in);
        for (int t = 0; t < 64 && D(c.position.y) > 0.02; t++) {
            in = walk_input((uint32_t)t, yaw_to(0, -1), 0);
            sim_move_step(&col, &S, &c, &in);
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s tick %d: airborne at y %.3f z %.3f", tops[i], t,
                      D(c.position.y), D(c.position.z));
        }
        cr_assert_lt(D(c.position.y), 0.02, "%s: not down", tops[i]);
    }
}

Test(move, walking_down_stairs_stays_grounded)
{
    sim_char_state c = sim_char_spawn(1, marker("stairs_300_top"), 0);
    sim_angle yaw = yaw_to(0, -1);
    sim_input in = {0};
    for (int t = 0; t < 16; t++)
        sim_move_step(&col, &S, &c, &in);
    for (int t = 0; t < 48; t++) {
        in = walk_input((uint32_t)t, yaw, 0);
        sim_move_step(&col, &S, &c, &in);
        cr_assert(c.flags & SIM_CHAR_GROUNDED, "tick %d: airborne at y %.3f z %.3f", t, D(c.position.y),
                  D(c.position.z));
    }
    cr_assert_lt(D(c.position.y), 0.02);
}

Test(move, other_tick_rates_jump_the_same_height)
{
    static const int rates[] = {30, 60, 64, 128};
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
        cr_assert(fabs(apex - y0 - 1.139) < 0.02, "%d Hz: apex %.4f", rates[i], apex - y0);
        cr_assert_eq(c.move_type, SIM_MOVE_WALK, "%d Hz: did not land", rates[i]);
    }
}

Test(move, ground_probe_classifies_floor_steep_wall_and_ceiling)
{
    // floor
    sim_char_state c = stand_at("floor_center", 0);
    cr_assert_eq(c.ground, SIM_GROUND_FLOOR);
    cr_assert_eq(c.ground_normal.y, SIM_FX_ONE);
    // steep: resting against the 60 degree ramp's foot, sliding
    sim_vec3 r = marker("ramp_60_start");
    c = sim_char_spawn(1, sim_v3(r.x, M(0.8), r.z + M(1.0 + 0.5)), 0);
    sim_input in = {0};
    bool steep = false;
    for (int t = 0; t < 32; t++) {
        sim_move_step(&col, &S, &c, &in);
        steep = steep || c.ground == SIM_GROUND_STEEP;
    }
    cr_assert(steep, "never classified the 60 degree slope as steep");
    // wall: walking into the thin wall
    c = stand_at("thinwall_front", yaw_to(0, -1));
    walk(&c, yaw_to(0, -1), 40, 0);
    cr_assert(c.flags & SIM_CHAR_WALL);
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
    cr_assert(ceiling, "a jump under the tunnel's roof never touched the ceiling");
    cr_assert_leq(overlap_depth(&c), 0.0005);
}
