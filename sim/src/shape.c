// keel: character shapes. MIT licence, see LICENSE.
#include <keel/sim_shape.h>

#include "shape_valid.h"

// A caller's size is clamped into the documented range, not refused
// (sim_shape.h); sim_move_settings_check refuses shapes built by hand.
static sim_fx clamp_size(sim_fx v) { return sim_fx_clamp(v, SIM_SHAPE_MIN_SIZE / 2, SIM_SHAPE_MAX_SIZE); }

sim_shape sim_shape_capsule(sim_fx radius, sim_fx height)
{
    sim_shape s = {0};
    s.type = SIM_SHAPE_CAPSULE;
    s.radius = clamp_size(radius);
    sim_fx half = clamp_size(height / 2);
    if (half < s.radius)
        half = s.radius;
    s.half = sim_v3(s.radius, half, s.radius);
    return s;
}

sim_shape sim_shape_box(sim_fx half_x, sim_fx half_y, sim_fx half_z)
{
    sim_shape s = {0};
    s.type = SIM_SHAPE_BOX;
    s.half = sim_v3(clamp_size(half_x), clamp_size(half_y), clamp_size(half_z));
    return s;
}

sim_shape sim_shape_cylinder(sim_fx radius, sim_fx height)
{
    sim_shape s = {0};
    s.type = SIM_SHAPE_CYLINDER;
    s.radius = clamp_size(radius);
    s.half = sim_v3(s.radius, clamp_size(height / 2), s.radius);
    return s;
}

bool sim_shape_valid(sim_shape s) { return sim_shape_valid_inline(&s); }

sim_shape sim_shape_default(void) { return sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1800)); }
