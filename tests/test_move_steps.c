// keel tests: the step-up failures other controllers admit to, on small
// hand-made levels, for the capsule, the box (Quake hull) and the cylinder in
// turn (test_move.c runs the built-in level's behaviours for all three).
// MIT licence.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include <keel/sim_move.h>
#include <keel/sim_world.h>

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)
#define PI 3.14159265358979323846

static sim_angle yaw_to(double dx, double dz)
{
    return (sim_angle)(int32_t)llround(atan2(-dx, -dz) / (2 * PI) * 65536.0);
}

enum { SHAPE_CAPSULE, SHAPE_BOX, SHAPE_CYLINDER, SHAPE_COUNT };
static const char *const shape_names[SHAPE_COUNT] = {"capsule", "box", "cylinder"};

// keel-sim's --shape sizes: 0.8 m wide, 1.8 m tall (1.0 m crouched).
static sim_move_settings shape_settings(int k)
{
    sim_move_settings s = sim_move_default_settings();
    if (k == SHAPE_BOX) {
        s.stand_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
        s.crouch_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(500), SIM_FX_MM(400));
    } else if (k == SHAPE_CYLINDER) {
        s.stand_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
        s.crouch_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1000));
    }
    return s;
}

typedef struct mini {
    sim_vec3 v[64];
    uint32_t idx[96];
    uint32_t nv, nt;
    sim_box_def box[8];
    uint32_t nb;
} mini;

static void quad(mini *l, sim_vec3 a, sim_vec3 b, sim_vec3 c, sim_vec3 d)
{
    uint32_t k = l->nv;
    l->v[k] = a;
    l->v[k + 1] = b;
    l->v[k + 2] = c;
    l->v[k + 3] = d;
    uint32_t t[6] = {k, k + 1, k + 2, k, k + 2, k + 3};
    for (int i = 0; i < 6; i++)
        l->idx[3 * l->nt + (uint32_t)i] = t[i];
    l->nv += 4;
    l->nt += 2;
}

static void box(mini *l, double x0, double y0, double z0, double x1, double y1, double z1)
{
    sim_box_def b = {sim_v3(M((x0 + x1) / 2), M((y0 + y1) / 2), M((z0 + z1) / 2)),
                     sim_v3(M((x1 - x0) / 2), M((y1 - y0) / 2), M((z1 - z0) / 2)),
                     {sim_v3(SIM_FX_ONE, 0, 0), sim_v3(0, SIM_FX_ONE, 0), sim_v3(0, 0, SIM_FX_ONE)}};
    l->box[l->nb++] = b;
}

static sim_world *build(mini *l)
{
    sim_level lv = {l->v, l->nv, l->idx, l->nt, l->box, l->nb, NULL, 0};
    sim_world *w = sim_world_create(&lv, NULL, NULL);
    cr_assert_not_null(w);
    return w;
}

static void floor_quad(mini *l, double half)
{
    quad(l, sim_v3(M(-half), 0, M(-half)), sim_v3(M(-half), 0, M(half)), sim_v3(M(half), 0, M(half)),
         sim_v3(M(half), 0, M(-half)));
}

static void run(const sim_world *w, const sim_move_settings *s, sim_char_state *c, sim_angle yaw, int ticks,
                double *max_y)
{
    sim_collider col = sim_collider_world(w);
    for (int t = 0; t < ticks; t++) {
        sim_input in = {0};
        in.tick = (uint32_t)t;
        in.forward = 127;
        in.yaw = yaw;
        sim_move_step(&col, s, c, &in);
        if (max_y)
            *max_y = fmax(*max_y, D(c->position.y));
    }
}

Test(steps, diagonally_into_a_step_next_to_a_wall)
{
    static mini l;
    l = (mini){0};
    floor_quad(&l, 10);
    box(&l, 0, 0, -3, 9, 0.3, 0); // the step, its riser at x = 0
    box(&l, -3, 0, 0, 9, 3, 0.5); // a wall along its side, face at z = 0
    sim_world *w = build(&l);
    for (int sh = 0; sh < SHAPE_COUNT; sh++) {
        sim_move_settings s = shape_settings(sh);
        // close to the wall, walking at 45 degrees into both the wall and the step
        for (int k = 0; k < 4; k++) {
            sim_char_state c = sim_char_spawn(1, sim_v3(M(-1.2 + 0.2 * k), 0, M(-0.45)), 0);
            run(w, &s, &c, yaw_to(1, 1), 48, NULL);
            cr_assert(fabs(D(c.position.y) - 0.3) < 0.02 && D(c.position.x) > 0.5,
                      "%s start %d: feet at (%.3f %.3f %.3f), not up on the step", shape_names[sh], k, D(c.position.x),
                      D(c.position.y), D(c.position.z));
            cr_assert(c.flags & SIM_CHAR_GROUNDED, "%s start %d: airborne", shape_names[sh], k);
        }
    }
    sim_world_destroy(w);
}

Test(steps, a_steep_wall_is_never_climbed_at_an_acute_angle)
{
    // a 60 degree slope rising along +x from x = 0, 10 m long in z
    static mini l;
    l = (mini){0};
    floor_quad(&l, 10);
    double run_x = 3 / tan(60 * PI / 180);
    quad(&l, sim_v3(0, 0, M(-5)), sim_v3(0, 0, M(5)), sim_v3(M(run_x), M(3), M(5)), sim_v3(M(run_x), M(3), M(-5)));
    sim_world *w = build(&l);
    static const double deg[] = {5, 10, 20, 30, 45, 60, 90};
    for (int sh = 0; sh < SHAPE_COUNT; sh++) {
        sim_move_settings s = shape_settings(sh);
        for (int k = 0; k < 7; k++) {
            double a = deg[k] * PI / 180;
            sim_char_state c = sim_char_spawn(1, sim_v3(M(-0.41), 0, M(-4)), 0);
            double max_y = 0;
            // along +z, turned by `a` into the slope (for 1 s: about 7 m, within its 10 m)
            run(w, &s, &c, yaw_to(sin(a), cos(a)), 64, &max_y);
            cr_assert_lt(max_y, 0.02, "%s: approach at %.0f degrees climbed to %.3f m", shape_names[sh], deg[k], max_y);
            // every shape reaches 0.4 m from its axis along x
            cr_assert_lt(D(c.position.x), 0.0, "%s: into the slope at %.0f degrees: x %.3f", shape_names[sh], deg[k],
                         D(c.position.x));
        }
    }
    sim_world_destroy(w);
}

Test(steps, curb_is_climbed_from_a_standstill)
{
    static mini l;
    l = (mini){0};
    floor_quad(&l, 10);
    box(&l, 0, 0, -5, 5, 0.15, 5); // a 15 cm curb
    sim_world *w = build(&l);
    sim_collider col = sim_collider_world(w);
    for (int sh = 0; sh < SHAPE_COUNT; sh++) {
        sim_move_settings s = shape_settings(sh);
        // Where the shape just clears the curb's edge: the capsule's bottom
        // sphere (centre 0.405 m up) meets it above the floor, a flat bottom's
        // side at its full radius.
        double touch = sh == SHAPE_CAPSULE ? sqrt(0.4 * 0.4 - (0.405 - 0.15) * (0.405 - 0.15)) : 0.4;
        sim_char_state c = sim_char_spawn(1, sim_v3(M(-touch - 0.006), 0, 0), 0);
        sim_input in = {0};
        in.yaw = yaw_to(1, 0);
        for (int t = 0; t < 8; t++)
            sim_move_step(&col, &s, &c, &in); // at rest against the curb
        cr_assert(sim_v3_is_zero(c.velocity), "%s: not at rest", shape_names[sh]);
        sim_fx y0 = c.position.y;
        in.forward = 127;
        sim_move_step(&col, &s, &c, &in);
        cr_assert_gt(c.position.y, y0, "%s: the first tick did not start up the curb", shape_names[sh]);
        run(w, &s, &c, yaw_to(1, 0), 32, NULL);
        cr_assert(fabs(D(c.position.y) - 0.15) < 0.01, "%s: on the curb: y %.3f", shape_names[sh], D(c.position.y));
    }
    sim_world_destroy(w);
}
