// keel tests: binary angles, the sine table and view directions. MIT licence.
#include <criterion/criterion.h>

#include <math.h>

#include <keel/sim_angle.h>

#include "test_support.h"

static const double PI = 3.14159265358979323846;
static double rad(int a) { return 2.0 * PI * (double)a / 65536.0; }

Test(angle, table_within_half_ulp_at_every_angle)
{
    // The stated bound: 1/2 raw unit (plus double's own rounding).
    double worst = 0;
    for (int a = 0; a < 65536; a++) {
        double es = fabs(sim_angle_sin((sim_angle)a) - sin(rad(a)) * 65536.0);
        double ec = fabs(sim_angle_cos((sim_angle)a) - cos(rad(a)) * 65536.0);
        worst = fmax(worst, fmax(es, ec));
    }
    cr_assert(worst <= 0.5 + 1e-9, "table off by %.9f ulp", worst);
}

Test(angle, exact_values_and_symmetries)
{
    cr_assert_eq(sim_angle_sin(0), 0);
    cr_assert_eq(sim_angle_sin(SIM_ANGLE_QUARTER), SIM_FX_ONE);
    cr_assert_eq(sim_angle_sin(SIM_ANGLE_HALF), 0);
    cr_assert_eq(sim_angle_sin(3 * SIM_ANGLE_QUARTER), -SIM_FX_ONE);
    cr_assert_eq(sim_angle_cos(0), SIM_FX_ONE);
    cr_assert_eq(sim_angle_cos(SIM_ANGLE_QUARTER), 0);
    cr_assert_eq(sim_angle_cos(SIM_ANGLE_HALF), -SIM_FX_ONE);
    cr_assert_eq(sim_angle_cos(3 * SIM_ANGLE_QUARTER), 0);
    for (int a = 0; a < 65536; a++) {
        sim_angle x = (sim_angle)a, neg = (sim_angle)(0 - a);
        cr_assert_eq(sim_angle_sin(neg), -sim_angle_sin(x));
        cr_assert_eq(sim_angle_cos(neg), sim_angle_cos(x));
        cr_assert_eq(sim_angle_sin((sim_angle)(a + SIM_ANGLE_HALF)), -sim_angle_sin(x));
        cr_assert_eq(sim_angle_sin((sim_angle)(SIM_ANGLE_HALF - a)), sim_angle_sin(x));
        cr_assert_eq(sim_angle_cos(x), sim_angle_sin((sim_angle)(SIM_ANGLE_QUARTER - a)));
        if (a > 0 && a <= SIM_ANGLE_QUARTER)
            cr_assert(sim_angle_sin(x) >= sim_angle_sin((sim_angle)(a - 1)), "monotonic at %d", a);
    }
}

Test(angle, degrees_macro)
{
    cr_assert_eq(SIM_ANGLE_DEG(0), 0);
    cr_assert_eq(SIM_ANGLE_DEG(90), SIM_ANGLE_QUARTER);
    cr_assert_eq(SIM_ANGLE_DEG(180), SIM_ANGLE_HALF);
    cr_assert_eq(SIM_ANGLE_DEG(-45), 0xE000);
    cr_assert_eq(SIM_ANGLE_DEG(360), 0);
    cr_assert_eq(SIM_ANGLE_DEG(1), 182);    // 182.04
    cr_assert_eq(SIM_ANGLE_DEG(-1), 65354); // -182
    for (int d = -720; d <= 720; d++) {
        double want = fmod(round(d * 65536.0 / 360.0), 65536.0);
        if (want < 0)
            want += 65536.0;
        cr_assert_eq(SIM_ANGLE_DEG(d), (sim_angle)want, "%d degrees", d);
    }
}

static double len3(sim_vec3 v)
{
    return sqrt(keel_fx_to_d(v.x) * keel_fx_to_d(v.x) + keel_fx_to_d(v.y) * keel_fx_to_d(v.y) +
                keel_fx_to_d(v.z) * keel_fx_to_d(v.z));
}

Test(angle, view_convention)
{
    const sim_fx one = SIM_FX_ONE;
    cr_assert(sim_v3_eq(sim_angle_dir(0, 0), sim_v3(0, 0, -one)), "yaw 0 looks along -Z");
    cr_assert(sim_v3_eq(sim_angle_dir(SIM_ANGLE_QUARTER, 0), sim_v3(-one, 0, 0)), "then -X");
    cr_assert(sim_v3_eq(sim_angle_dir(SIM_ANGLE_HALF, 0), sim_v3(0, 0, one)));
    cr_assert(sim_v3_eq(sim_angle_dir(3 * SIM_ANGLE_QUARTER, 0), sim_v3(one, 0, 0)));
    cr_assert(sim_v3_eq(sim_angle_dir(1234, SIM_ANGLE_QUARTER), sim_v3(0, one, 0)), "straight up");
    cr_assert(sim_v3_eq(sim_angle_dir(0, (sim_angle)-SIM_ANGLE_QUARTER), sim_v3(0, -one, 0)));
    sim_vec3 d = sim_angle_dir(SIM_ANGLE_DEG(45), SIM_ANGLE_DEG(30));
    cr_assert(d.x < 0 && d.y > 0 && d.z < 0, "45 left of -Z, looking up");
    sim_vec3 f, r;
    sim_angle_forward_right(0, &f, &r);
    cr_assert(sim_v3_eq(f, sim_v3(0, 0, -one)));
    cr_assert(sim_v3_eq(r, sim_v3(one, 0, 0)), "right at yaw 0 is +X");
    sim_angle_forward_right(SIM_ANGLE_QUARTER, &f, &r);
    cr_assert(sim_v3_eq(f, sim_v3(-one, 0, 0)));
    cr_assert(sim_v3_eq(r, sim_v3(0, 0, -one)));
    sim_angle_forward_right(77, NULL, &r);
    sim_angle_forward_right(77, &f, NULL);
}

Test(angle, dir_unit_and_accurate)
{
    // Components within 1.5 ulp of the double value; |dir| within 2^-15 of 1.
    double worst_c = 0, worst_len = 0;
    for (int yaw = 0; yaw < 65536; yaw += 13) {
        for (int pitch = -SIM_ANGLE_QUARTER; pitch <= SIM_ANGLE_QUARTER; pitch += 61) {
            sim_vec3 d = sim_angle_dir((sim_angle)yaw, (sim_angle)pitch);
            double cp = cos(rad(pitch));
            double ex = fabs(keel_fx_to_d(d.x) + sin(rad(yaw)) * cp);
            double ey = fabs(keel_fx_to_d(d.y) - sin(rad(pitch)));
            double ez = fabs(keel_fx_to_d(d.z) + cos(rad(yaw)) * cp);
            worst_c = fmax(worst_c, fmax(ex, fmax(ey, ez)));
            worst_len = fmax(worst_len, fabs(len3(d) - 1.0));
            // mirrored yaw mirrors x exactly
            sim_vec3 m = sim_angle_dir((sim_angle)(0 - yaw), (sim_angle)pitch);
            cr_assert(m.x == -d.x && m.y == d.y && m.z == d.z, "mirror at %d %d", yaw, pitch);
        }
    }
    cr_assert(worst_c <= 1.5 / 65536.0, "component off by %f ulp", worst_c * 65536.0);
    cr_assert(worst_len <= 1.0 / 32768.0, "|dir| off by %f ulp", worst_len * 65536.0);
}

Test(angle, forward_right_every_yaw)
{
    for (int yaw = 0; yaw < 65536; yaw++) {
        sim_vec3 f, r;
        sim_angle_forward_right((sim_angle)yaw, &f, &r);
        cr_assert(sim_v3_eq(f, sim_angle_dir((sim_angle)yaw, 0)));
        cr_assert(f.y == 0 && r.y == 0);
        cr_assert_eq(sim_v3_dot64(f, r), 0, "perpendicular at %d", yaw);
        cr_assert(sim_v3_eq(r, sim_v3_cross(f, sim_v3_up())), "right = forward x up at %d", yaw);
        cr_assert(fabs(len3(f) - 1.0) <= 1.0 / 65536.0, "|forward| at %d", yaw);
    }
}
