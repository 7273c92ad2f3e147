// keel: move type "swim": inside a water volume, moving along the view
// direction, slowed by the water and sinking slowly. MIT licence.
#include "move_ground.h"

static bool in_water(const sim_move_ctx *m)
{
    return m->col->in_water && m->col->in_water(m->col->ctx, mover_center(m));
}

static void swim_enter(sim_move_ctx *m, int32_t from)
{
    (void)from;
    m->c->flags |= SIM_CHAR_IN_WATER;
}

static int32_t swim_tick(sim_move_ctx *m)
{
    if (!in_water(m))
        return move_air_tick(m);
    const sim_move_settings *s = m->s;
    move_friction(m, s->friction / 2, false);
    sim_vec3 wish = move_wish_3d(m, s->swim_speed);
    if (m->in->buttons & SIM_BUTTON_JUMP)
        wish.y = s->swim_speed;
    move_accelerate(m, wish, s->accelerate);
    if (sim_v3_is_zero(wish))
        m->c->velocity.y -= sim_fx_mul(sim_fx_mul(s->gravity, s->water_gravity_scale), m->dt);
    sim_vec3 center = mover_center(m);
    slide_result sr;
    mover_slide(m, mover_shape(m), &center, &m->c->velocity, sim_v3_scale(m->c->velocity, m->dt), SLIDE_FREE, &sr);
    mover_set_center(m, center);
    mover_ground_probe(m, false);
    return in_water(m) ? SIM_MOVE_SWIM : SIM_MOVE_AIR;
}

static void swim_exit(sim_move_ctx *m, int32_t to)
{
    (void)to;
    m->c->flags &= ~(uint32_t)SIM_CHAR_IN_WATER;
}

const sim_move_type sim_move_type_swim = {"swim", swim_enter, swim_tick, swim_exit};
