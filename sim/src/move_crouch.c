// keel: move type "crouch": on the ground with the crouched shape, slower.
// Standing up is refused while the standing shape would overlap. MIT licence.
#include "move_ground.h"

static void crouch_enter(sim_move_ctx *m, int32_t from)
{
    (void)from;
    move_set_crouched(m, true);
    if (m->c->velocity.y < 0)
        m->c->velocity.y = 0;
}

static int32_t crouch_tick(sim_move_ctx *m)
{
    bool want = (m->in->buttons & SIM_BUTTON_CROUCH) != 0;
    if (!want && move_set_crouched(m, false))
        return move_ground_tick(m, false);
    return move_ground_tick(m, true);
}

static void crouch_exit(sim_move_ctx *m, int32_t to)
{
    (void)m;
    (void)to; // leaving for the air keeps the crouch: that is the crouch-jump
}

const sim_move_type sim_move_type_crouch = {"crouch", crouch_enter, crouch_tick, crouch_exit};
