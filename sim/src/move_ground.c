// keel: walking and falling, shared by the move types. MIT licence.
#include "move_ground.h"

static bool in_water(const sim_move_ctx *m)
{
    return m->col->in_water && m->col->in_water(m->col->ctx, mover_center(m));
}

static int32_t landed_type(const sim_move_ctx *m)
{
    return (m->c->flags & SIM_CHAR_CROUCHED) ? SIM_MOVE_CROUCH : SIM_MOVE_WALK;
}

int32_t move_air_tick(sim_move_ctx *m)
{
    const sim_move_settings *s = m->s;
    sim_char_state *c = m->c;
    if (in_water(m))
        return SIM_MOVE_SWIM;
    c->flags &= ~(uint32_t)SIM_CHAR_GROUNDED;
    // Crouching in the air pulls the legs up; letting go lowers them again
    // when there is room.
    move_set_crouched(m, (m->in->buttons & SIM_BUTTON_CROUCH) != 0);
    move_accelerate(m, move_wish_horizontal(m, s->air_max_speed), s->air_accelerate);
    // Half the gravity before the move and half after: the height follows the
    // exact parabola at every tick, whatever the tick rate.
    sim_fx half_g = sim_fx_mul(s->gravity, m->dt) / 2;
    c->velocity.y -= half_g;
    sim_vec3 center = mover_center(m);
    slide_result sr;
    mover_slide(m, mover_shape(m), &center, &c->velocity, sim_v3_scale(c->velocity, m->dt), SLIDE_AIR, &sr);
    mover_set_center(m, center);
    c->velocity.y -= half_g;
    if (sr.touched_ceiling)
        c->flags |= SIM_CHAR_CEILING;
    if (sr.blocked_steep)
        c->flags |= SIM_CHAR_WALL;
    if (c->velocity.y > 0 && c->velocity.y > c->ground_velocity.y) {
        c->flags &= ~(uint32_t)SIM_CHAR_GROUNDED;
        c->ground = SIM_GROUND_NONE;
        c->ground_normal = sim_v3_zero();
        c->ground_object = 0;
        return SIM_MOVE_AIR; // still rising: no landing, no snap
    }
    mover_ground_probe(m, false);
    if (c->flags & SIM_CHAR_GROUNDED) {
        c->velocity.y = 0;
        return landed_type(m);
    }
    return SIM_MOVE_AIR;
}

int32_t move_ground_tick(sim_move_ctx *m, bool crouched)
{
    const sim_move_settings *s = m->s;
    sim_char_state *c = m->c;
    if (in_water(m))
        return SIM_MOVE_SWIM;
    if (!(c->flags & SIM_CHAR_GROUNDED))
        return move_air_tick(m);
    if (m->jump_pressed) {
        // Jump relative to the ground: off a rising elevator, higher.
        sim_fx up = c->ground_velocity.y > 0 ? c->ground_velocity.y : 0;
        c->velocity.y = s->jump_velocity + up;
        c->flags &= ~(uint32_t)SIM_CHAR_GROUNDED;
        move_air_tick(m);
        return SIM_MOVE_AIR;
    }
    move_friction(m, s->friction, true);
    sim_fx speed = crouched ? sim_fx_mul(s->max_speed, s->crouch_speed_scale) : s->max_speed;
    sim_vec3 before = sim_v3(c->velocity.x, 0, c->velocity.z);
    sim_fx before_len = sim_v3_length(before);
    move_accelerate(m, move_wish_horizontal(m, speed), s->accelerate);
    // Quake lets the part of the push that a wall absorbs build speed along
    // the wall (sliding along it faster than running): on the ground,
    // accelerating never takes the speed above the wish speed.
    sim_fx limit = before_len > speed ? before_len : speed;
    sim_vec3 h = sim_v3(c->velocity.x, 0, c->velocity.z);
    sim_fx len;
    sim_vec3 dir = sim_v3_normalize_len(h, &len);
    if (len > limit) {
        c->velocity.x = sim_fx_mul(dir.x, limit);
        c->velocity.z = sim_fx_mul(dir.z, limit);
    }
    c->velocity.y = 0;
    sim_vec3 d = sim_v3_scale(c->velocity, m->dt);
    // Follow the ground's plane, up and down slopes alike.
    sim_vec3 n = c->ground_normal;
    if (!sim_v3_is_zero(n))
        d = sim_v3_sub(d, sim_v3_scale(n, sim_v3_dot(d, n)));
    mover_walk_move(m, d);
    c->velocity.y = 0; // what the ground's slope or a step did is not a launch
    mover_ground_probe(m, true);
    if (!(c->flags & SIM_CHAR_GROUNDED))
        return SIM_MOVE_AIR;
    return crouched ? SIM_MOVE_CROUCH : SIM_MOVE_WALK;
}
