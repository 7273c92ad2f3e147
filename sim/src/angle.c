// keel: view directions from binary angles. MIT licence, see LICENSE.
#include <keel/sim_angle.h>

#include <stddef.h>

sim_vec3 sim_angle_dir(sim_angle yaw, sim_angle pitch)
{
    sim_fx sy = sim_angle_sin(yaw), cy = sim_angle_cos(yaw);
    sim_fx sp = sim_angle_sin(pitch), cp = sim_angle_cos(pitch);
    // sim_fx_mul rounds ties away from zero, symmetrically, so mirrored yaws
    // give exactly mirrored directions. The products are within +-1: negating
    // them cannot overflow.
    return sim_v3(-sim_fx_mul(sy, cp), sp, -sim_fx_mul(cy, cp));
}

void sim_angle_forward_right(sim_angle yaw, sim_vec3 *forward, sim_vec3 *right)
{
    sim_fx s = sim_angle_sin(yaw), c = sim_angle_cos(yaw);
    if (forward)
        *forward = sim_v3(-s, 0, -c);
    if (right)
        *right = sim_v3(c, 0, -s);
}
