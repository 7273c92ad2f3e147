// keel: move type "air": falling and jumping. Gravity, a little air control,
// no step-up: a step that a jump did not clear stops the legs (the horizontal
// motion), not the fall. MIT licence.
#include "move_ground.h"

static void air_enter(sim_move_ctx *m, int32_t from)
{
    (void)from;
    m->c->flags &= ~(uint32_t)SIM_CHAR_GROUNDED;
}

static int32_t air_tick(sim_move_ctx *m) { return move_air_tick(m); }

static void air_exit(sim_move_ctx *m, int32_t to)
{
    (void)m;
    (void)to;
}

const sim_move_type sim_move_type_air = {"air", air_enter, air_tick, air_exit};
