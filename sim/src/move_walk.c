// keel: move type "walk": on walkable ground, standing. MIT licence.
#include "move_ground.h"

static void walk_enter(sim_move_ctx *m, int32_t from)
{
    (void)from;
    if (m->c->velocity.y < 0)
        m->c->velocity.y = 0; // landed
}

static int32_t walk_tick(sim_move_ctx *m)
{
    if (m->in->buttons & SIM_BUTTON_CROUCH) {
        move_set_crouched(m, true);
        return move_ground_tick(m, true);
    }
    return move_ground_tick(m, false);
}

static void walk_exit(sim_move_ctx *m, int32_t to)
{
    (void)m;
    (void)to;
}

const sim_move_type sim_move_type_walk = {"walk", walk_enter, walk_tick, walk_exit};
