// keel: move type "fly": noclip flight for spectators, along the view
// direction, through geometry. MIT licence.
#include "move_internal.h"

static void fly_enter(sim_move_ctx *m, int32_t from)
{
    (void)from;
    m->c->flags &= ~(uint32_t)(SIM_CHAR_GROUNDED | SIM_CHAR_STUCK);
    m->c->ground = SIM_GROUND_NONE;
    m->c->ground_normal = sim_v3_zero();
    m->c->ground_object = 0;
}

static int32_t fly_tick(sim_move_ctx *m)
{
    if (!(m->in->buttons & SIM_BUTTON_FLY))
        return SIM_MOVE_AIR;
    m->c->velocity = move_wish_3d(m, m->s->fly_speed);
    sim_vec3 p = sim_v3_add(m->c->position, sim_v3_scale(m->c->velocity, m->dt));
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    m->c->position = sim_v3(sim_fx_clamp(p.x, -lim, lim), sim_fx_clamp(p.y, -lim, lim), sim_fx_clamp(p.z, -lim, lim));
    return SIM_MOVE_FLY;
}

static void fly_exit(sim_move_ctx *m, int32_t to)
{
    (void)to;
    m->c->velocity = sim_v3_zero();
}

const sim_move_type sim_move_type_fly = {"fly", fly_enter, fly_tick, fly_exit};
