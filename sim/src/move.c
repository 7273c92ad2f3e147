// keel: the movement step and what every move type shares. MIT licence.
#include <keel/sim_hash.h>
#include <keel/sim_world.h>

#include "move_internal.h"

#define SIM_MOVE_COOKIE 0x6d6f7665u // "move"

static const sim_move_type *const move_types[SIM_MOVE_TYPE_COUNT] = {
#define SIM_MOVE_TYPE(E, name) &sim_move_type_##name,
#include <keel/sim_move_types.def>
#undef SIM_MOVE_TYPE
};

// A character that leaves the level (falls forever, flies away) stops at the
// edge of the representable world rather than overflowing it; a state handed
// in from outside is brought into range the same way.
static void clamp_position(sim_char_state *c)
{
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    sim_vec3 p = c->position;
    if (p.x < -lim || p.x > lim)
        c->velocity.x = 0;
    if (p.y < -lim || p.y > lim)
        c->velocity.y = 0;
    if (p.z < -lim || p.z > lim)
        c->velocity.z = 0;
    c->position = sim_v3(sim_fx_clamp(p.x, -lim, lim), sim_fx_clamp(p.y, -lim, lim), sim_fx_clamp(p.z, -lim, lim));
}

sim_move_settings sim_move_default_settings(void)
{
    sim_move_settings s = {0};
    s.tick_rate = 64;
    s.stand_shape = sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1800));
    s.crouch_shape = sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1000));
    s.gravity = SIM_FX_INT(20);
    s.max_speed = SIM_FX_INT(8);
    s.crouch_speed_scale = SIM_FX_RATIO(1, 4);
    s.accelerate = SIM_FX_INT(10);
    s.air_accelerate = SIM_FX_INT(1);
    s.air_max_speed = SIM_FX_INT(8);
    s.friction = SIM_FX_INT(6);
    s.stop_speed = SIM_FX_MM(2500);
    s.jump_velocity = SIM_FX_MM(6750);
    s.step_height = SIM_FX_MM(350);
    s.max_slope_cos = SIM_FX_RATIO(70711, 100000); // cosine of 45 degrees
    s.skin = SIM_FX_MM(5);
    s.max_slide_iterations = 4;
    s.depen_iterations = 8;
    s.fly_speed = SIM_FX_INT(10);
    s.swim_speed = SIM_FX_INT(4);
    s.water_gravity_scale = SIM_FX_RATIO(1, 10);
    s.cookie = SIM_MOVE_COOKIE;
    return s;
}

sim_fx sim_move_dt(const sim_move_settings *s)
{
    int32_t rate = s->tick_rate < 1 ? 1 : (s->tick_rate > 1000 ? 1000 : s->tick_rate);
    return (sim_fx)((SIM_FX_ONE + rate / 2) / rate);
}

sim_char_state sim_char_spawn(uint32_t id, sim_vec3 feet, sim_angle yaw)
{
    sim_char_state c = {0};
    c.id = id;
    c.move_type = SIM_MOVE_AIR;
    c.position = feet;
    c.yaw = yaw;
    clamp_position(&c);
    return c;
}

sim_shape sim_char_shape(const sim_move_settings *s, const sim_char_state *c)
{
    return (c->flags & SIM_CHAR_CROUCHED) ? s->crouch_shape : s->stand_shape;
}

sim_vec3 sim_char_center(const sim_move_settings *s, const sim_char_state *c)
{
    sim_shape sh = sim_char_shape(s, c);
    return sim_v3_add(c->position, sim_v3(0, sh.half.y, 0));
}

const char *sim_move_type_name(int32_t id)
{
    if (id < 0 || id >= SIM_MOVE_TYPE_COUNT)
        return "?";
    return move_types[id]->name;
}

// ---- static-world collider ----------------------------------------------------

static bool world_sweep(void *ctx, const sim_sweep_input *in, sim_sweep_result *out)
{
    return sim_world_sweep(ctx, in, out);
}
static int world_contacts(void *ctx, const sim_overlap_input *in, sim_contact *out, int capacity)
{
    return sim_world_contacts(ctx, in, out, capacity);
}

static bool world_raycast(void *ctx, const sim_ray_input *in, sim_ray_result *out)
{
    return sim_world_raycast(ctx, in, out);
}

sim_collider sim_collider_world(const sim_world *world)
{
    sim_collider c = {(void *)world, world_sweep, world_contacts, world_raycast, NULL};
    return c;
}

// ---- the step -------------------------------------------------------------------

static sim_fx clamp_axis(sim_fx v)
{
    return sim_fx_clamp(v, -SIM_MOVE_MAX_SPEED, SIM_MOVE_MAX_SPEED);
}

void move_clamp_velocity(sim_move_ctx *m)
{
    sim_vec3 v = m->c->velocity;
    m->c->velocity = sim_v3(clamp_axis(v.x), clamp_axis(v.y), clamp_axis(v.z));
}

void sim_move_step(const sim_collider *col, const sim_move_settings *s, sim_char_state *c,
                   const sim_input *in)
{
    SIM_CHECK(s->cookie == SIM_MOVE_COOKIE);
    sim_move_ctx m;
    m = (sim_move_ctx){0};
    m.col = col;
    m.s = s;
    m.c = c;
    m.in = in;
    m.dt = sim_move_dt(s);
    c->yaw = in->yaw;
    c->pitch = in->pitch;
    sim_angle_forward_right(in->yaw, &m.forward, &m.right);
    bool jump_down = (in->buttons & SIM_BUTTON_JUMP) != 0;
    m.jump_pressed = jump_down && !(c->flags & SIM_CHAR_JUMP_HELD);
    c->flags &= ~(uint32_t)(SIM_CHAR_CEILING | SIM_CHAR_STEPPED | SIM_CHAR_WALL);
    if (c->move_type < 0 || c->move_type >= SIM_MOVE_TYPE_COUNT)
        c->move_type = SIM_MOVE_AIR;
    move_clamp_velocity(&m);
    clamp_position(c);

    // Noclip flight ignores geometry entirely; everything else starts free.
    if (c->move_type != SIM_MOVE_FLY)
        mover_depenetrate(&m);

    // Entering flight, or water, is decided before the move type runs.
    int32_t next;
    if ((in->buttons & SIM_BUTTON_FLY) && c->move_type != SIM_MOVE_FLY)
        next = SIM_MOVE_FLY;
    else
        next = move_types[c->move_type]->tick(&m);
    move_clamp_velocity(&m);
    if (next < 0 || next >= SIM_MOVE_TYPE_COUNT)
        next = SIM_MOVE_AIR;
    if (next != c->move_type) {
        move_types[c->move_type]->exit(&m, next);
        int32_t from = c->move_type;
        c->move_type = next;
        move_types[next]->enter(&m, from);
    }
    clamp_position(c);
    if (jump_down)
        c->flags |= SIM_CHAR_JUMP_HELD;
    else
        c->flags &= ~(uint32_t)SIM_CHAR_JUMP_HELD;
}

// ---- Quake-style acceleration ------------------------------------------------------

static sim_fx axis_fraction(int8_t v)
{
    int32_t a = v < -127 ? -127 : v; // -128 counts as -127
    return (sim_fx)(((int64_t)a * SIM_FX_ONE) / 127);
}

sim_vec3 move_wish_horizontal(const sim_move_ctx *m, sim_fx max_speed)
{
    sim_fx f = axis_fraction(m->in->forward), r = axis_fraction(m->in->right);
    sim_vec3 w = sim_v3_add(sim_v3_scale(m->forward, f), sim_v3_scale(m->right, r));
    w.y = 0;
    sim_fx len;
    sim_vec3 dir = sim_v3_normalize_len(w, &len);
    if (len > SIM_FX_ONE)
        len = SIM_FX_ONE; // diagonal input is no faster
    return sim_v3_scale(dir, sim_fx_mul(len, max_speed));
}

sim_vec3 move_wish_3d(const sim_move_ctx *m, sim_fx max_speed)
{
    sim_fx f = axis_fraction(m->in->forward), r = axis_fraction(m->in->right);
    sim_fx u = axis_fraction(m->in->up);
    sim_vec3 view = sim_angle_dir(m->in->yaw, m->in->pitch);
    sim_vec3 w = sim_v3_add(sim_v3_scale(view, f), sim_v3_scale(m->right, r));
    w = sim_v3_add(w, sim_v3(0, u, 0));
    sim_fx len;
    sim_vec3 dir = sim_v3_normalize_len(w, &len);
    if (len > SIM_FX_ONE)
        len = SIM_FX_ONE;
    return sim_v3_scale(dir, sim_fx_mul(len, max_speed));
}

void move_accelerate(sim_move_ctx *m, sim_vec3 wish_velocity, sim_fx accel)
{
    sim_fx wish_speed;
    sim_vec3 dir = sim_v3_normalize_len(wish_velocity, &wish_speed);
    if (wish_speed == 0)
        return;
    sim_fx current = sim_v3_dot(m->c->velocity, dir);
    sim_fx add = wish_speed - current;
    if (add <= 0)
        return;
    sim_fx step = sim_fx_mul(sim_fx_mul(accel, m->dt), wish_speed);
    if (step > add)
        step = add;
    m->c->velocity = sim_v3_add(m->c->velocity, sim_v3_scale(dir, step));
}

void move_friction(sim_move_ctx *m, sim_fx friction, bool horizontal_only)
{
    sim_vec3 v = m->c->velocity;
    if (horizontal_only)
        v.y = 0;
    sim_fx speed = sim_v3_length(v);
    if (speed < SIM_FX_MM(10)) {
        // Below 1 cm/s: stop outright, so a character at rest stays exactly still.
        m->c->velocity.x = 0;
        m->c->velocity.z = 0;
        if (!horizontal_only)
            m->c->velocity.y = 0;
        return;
    }
    sim_fx control = speed < m->s->stop_speed ? m->s->stop_speed : speed;
    sim_fx drop = sim_fx_mul(sim_fx_mul(control, friction), m->dt);
    sim_fx newspeed = speed - drop;
    if (newspeed < 0)
        newspeed = 0;
    sim_fx scale = (sim_fx)(((int64_t)newspeed << 16) / speed);
    m->c->velocity.x = sim_fx_mul(m->c->velocity.x, scale);
    m->c->velocity.z = sim_fx_mul(m->c->velocity.z, scale);
    if (!horizontal_only)
        m->c->velocity.y = sim_fx_mul(m->c->velocity.y, scale);
}

bool move_set_crouched(sim_move_ctx *m, bool crouched)
{
    sim_char_state *c = m->c;
    bool is = (c->flags & SIM_CHAR_CROUCHED) != 0;
    if (is == crouched)
        return true;
    const sim_move_settings *s = m->s;
    sim_fx lift = s->stand_shape.half.y * 2 - s->crouch_shape.half.y * 2;
    bool airborne = !(c->flags & SIM_CHAR_GROUNDED);
    if (crouched) {
        // In the air the head stays where it is and the legs come up. A
        // character standing on something it has not been told about yet (the
        // first tick after a spawn) crouches on its feet.
        if (airborne) {
            sim_sweep_result r;
            sim_vec3 center = sim_v3_add(c->position, sim_v3(0, s->stand_shape.half.y, 0));
            if (!mover_sweep(m, s->stand_shape, center, sim_v3(0, -3 * s->skin, 0), &r))
                c->position.y += lift;
        }
        c->flags |= SIM_CHAR_CROUCHED;
        return true;
    }
    // Standing up: on the ground the head rises; in the air the legs come down
    // first, then (if that overlaps) the head rises instead.
    sim_vec3 feet[2] = {c->position, c->position};
    int tries = 1;
    if (airborne) {
        feet[0].y -= lift;
        tries = 2;
    }
    for (int i = 0; i < tries; i++) {
        sim_vec3 center = sim_v3_add(feet[i], sim_v3(0, s->stand_shape.half.y, 0));
        if (mover_overlap(m, s->stand_shape, center) <= 0) {
            c->position = feet[i];
            c->flags &= ~(uint32_t)SIM_CHAR_CROUCHED;
            return true;
        }
    }
    return false;
}

uint64_t sim_hash_char(uint64_t h, const sim_char_state *c)
{
    h = sim_hash_u32(h, c->id);
    h = sim_hash_u32(h, c->flags);
    h = sim_hash_u32(h, (uint32_t)c->move_type);
    h = sim_hash_u32(h, (uint32_t)c->ground);
    h = sim_hash_vec3(h, c->position);
    h = sim_hash_vec3(h, c->velocity);
    h = sim_hash_vec3(h, c->ground_normal);
    h = sim_hash_vec3(h, c->ground_velocity);
    h = sim_hash_u32(h, c->ground_object);
    h = sim_hash_u32(h, c->stuck_ticks);
    h = sim_hash_u32(h, c->yaw);
    h = sim_hash_u32(h, c->pitch);
    return h;
}
