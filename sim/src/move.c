// keel: the movement step and what every move type shares. MIT licence.
#include <keel/sim_hash.h>
#include <keel/sim_world.h>

#include "move_internal.h"
#include "world_near.h"

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
    s.respawn_depth = 0;
    s.cookie = SIM_MOVE_COOKIE;
    return s;
}

sim_fx sim_move_dt(const sim_move_settings *s)
{
    int32_t rate = s->tick_rate;
    if (rate < SIM_MOVE_MIN_TICK_RATE)
        rate = SIM_MOVE_MIN_TICK_RATE;
    if (rate > SIM_MOVE_MAX_TICK_RATE)
        rate = SIM_MOVE_MAX_TICK_RATE;
    return (sim_fx)((SIM_FX_ONE + rate / 2) / rate);
}

static bool in_range(sim_fx v, sim_fx lo, sim_fx hi) { return v >= lo && v <= hi; }

// The bounds keep every product in the mover inside Q16.16: accelerations
// and friction up to 200 times a speed of 100 m/s over a tick of 1/2 s stay
// below 10,000; a step or a skin stays well inside one query.
bool sim_move_settings_check(const sim_move_settings *s, const char **reason)
{
    const char *why = NULL;
    const sim_fx vmax = SIM_MOVE_MAX_SPEED;
    if (!s || s->cookie != SIM_MOVE_COOKIE)
        why = "settings not made by sim_move_default_settings";
    else if (s->tick_rate < SIM_MOVE_MIN_TICK_RATE || s->tick_rate > SIM_MOVE_MAX_TICK_RATE)
        why = "tick_rate outside 2..1000 Hz";
    else if (!sim_shape_valid_inline(&s->stand_shape))
        why = "stand_shape: unknown type or a size outside 5 mm..16 m";
    else if (!sim_shape_valid_inline(&s->crouch_shape))
        why = "crouch_shape: unknown type or a size outside 5 mm..16 m";
    else if (s->crouch_shape.half.y > s->stand_shape.half.y)
        why = "crouch_shape taller than stand_shape";
    else if (!in_range(s->gravity, 0, SIM_FX_INT(1000)))
        why = "gravity outside 0..1000 m/s^2";
    else if (!in_range(s->max_speed, 0, vmax) || !in_range(s->air_max_speed, 0, vmax) ||
             !in_range(s->fly_speed, 0, vmax) || !in_range(s->swim_speed, 0, vmax) ||
             !in_range(s->stop_speed, 0, vmax) || !in_range(s->jump_velocity, 0, vmax))
        why = "a speed outside 0..100 m/s";
    else if (!in_range(s->crouch_speed_scale, 0, SIM_FX_ONE))
        why = "crouch_speed_scale outside 0..1";
    else if (!in_range(s->accelerate, 0, SIM_FX_INT(200)) || !in_range(s->air_accelerate, 0, SIM_FX_INT(200)) ||
             !in_range(s->friction, 0, SIM_FX_INT(200)))
        why = "accelerate, air_accelerate or friction outside 0..200";
    else if (!in_range(s->step_height, 0, SIM_FX_INT(4)))
        why = "step_height outside 0..4 m";
    else if (!in_range(s->max_slope_cos, 0, SIM_FX_ONE))
        why = "max_slope_cos outside 0..1";
    else if (!in_range(s->skin, SIM_FX_MM(1), SIM_FX_MM(100)))
        why = "skin outside 1..100 mm";
    else if (s->max_slide_iterations < 0 || s->max_slide_iterations > 16)
        why = "max_slide_iterations outside 0..16";
    else if (s->depen_iterations < 0 || s->depen_iterations > 64)
        why = "depen_iterations outside 0..64";
    else if (!in_range(s->water_gravity_scale, 0, SIM_FX_INT(4)))
        why = "water_gravity_scale outside 0..4";
    else if (!in_range(s->respawn_depth, 0, SIM_FX_INT(1024)))
        why = "respawn_depth outside 0..1024 m";
    if (reason)
        *reason = why ? why : "";
    return why == NULL;
}

static bool vec_within(sim_vec3 v, sim_fx lim)
{
    return in_range(v.x, -lim, lim) && in_range(v.y, -lim, lim) && in_range(v.z, -lim, lim);
}

bool sim_char_state_check(const sim_char_state *c, const char **reason)
{
    const char *why = NULL;
    if (c->move_type < 0 || c->move_type >= SIM_MOVE_TYPE_COUNT)
        why = "unknown move type";
    else if (c->ground != SIM_GROUND_NONE && c->ground != SIM_GROUND_FLOOR && c->ground != SIM_GROUND_STEEP)
        why = "unknown ground kind";
    else if (c->flags & ~(uint32_t)SIM_CHAR_KNOWN_FLAGS)
        why = "unknown flag bits";
    else if (!vec_within(c->position, SIM_MOVE_POSITION_LIMIT))
        why = "position outside the character range (4016 m per axis)";
    else if (!vec_within(c->velocity, SIM_MOVE_MAX_SPEED))
        why = "velocity above 100 m/s on an axis";
    else if (!vec_within(c->ground_velocity, SIM_MOVE_MAX_SPEED))
        why = "ground velocity above 100 m/s on an axis";
    else if (c->ground_object & SIM_FEATURE_OBJECT_BIT)
        why = "ground object id out of range";
    else if (!sim_v3_is_zero(c->ground_normal)) {
        // Each component within [-1, 1] first, so the squared length below
        // cannot overflow; then unit within 1/256.
        const int64_t one = (int64_t)SIM_FX_ONE * SIM_FX_ONE;
        if (!vec_within(c->ground_normal, SIM_FX_ONE)) {
            why = "ground normal not unit";
        } else {
            int64_t l2 = sim_v3_len_sq64(c->ground_normal);
            if (l2 < one - one / 256 || l2 > one + one / 256)
                why = "ground normal not unit";
        }
    }
    if (reason)
        *reason = why ? why : "";
    return why == NULL;
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

// The same answers from a neighbourhood gathered for the step (world_near.h).
static bool near_sweep(void *ctx, const sim_sweep_input *in, sim_sweep_result *out)
{
    const sim_near *n = ctx;
    return sim_near_sweep(n->world, n, in, out);
}
static int near_contacts(void *ctx, const sim_overlap_input *in, sim_contact *out, int capacity)
{
    const sim_near *n = ctx;
    return sim_near_contacts(n->world, n, in, out, capacity);
}
static bool near_raycast(void *ctx, const sim_ray_input *in, sim_ray_result *out)
{
    const sim_near *n = ctx;
    return sim_near_raycast(n->world, n, in, out);
}

sim_aabb sim_near_step_box(const sim_move_settings *s, const sim_char_state *c)
{
    // A tenth of a metre beyond a tick of motion at the present velocity (which
    // a tick's acceleration changes by far less) and a step up and down:
    // depenetration, the slide, the step, the ground probe and its ray fit.
    const sim_fx margin = SIM_FX_MM(100);
    sim_fx dt = sim_move_dt(s);
    sim_vec3 half = s->stand_shape.half;
    sim_fx hx = half.x + margin + sim_fx_mul(sim_fx_abs(c->velocity.x), dt);
    sim_fx hz = half.z + margin + sim_fx_mul(sim_fx_abs(c->velocity.z), dt);
    sim_fx vy = sim_fx_mul(c->velocity.y, dt);
    sim_fx up = s->step_height + margin + (vy > 0 ? vy : 0);
    sim_fx down = s->step_height + margin + (vy < 0 ? -vy : 0);
    sim_vec3 p = c->position;
    sim_aabb b = {sim_v3(p.x - hx, p.y - down, p.z - hz), sim_v3(p.x + hx, p.y + 2 * half.y + up, p.z + hz)};
    return b;
}

// ---- the step -------------------------------------------------------------------

static sim_fx clamp_axis(sim_fx v) { return sim_fx_clamp(v, -SIM_MOVE_MAX_SPEED, SIM_MOVE_MAX_SPEED); }

void move_clamp_velocity(sim_move_ctx *m)
{
    sim_vec3 v = m->c->velocity;
    m->c->velocity = sim_v3(clamp_axis(v.x), clamp_axis(v.y), clamp_axis(v.z));
}

bool sim_move_step(const sim_collider *col, const sim_move_settings *s, sim_char_state *c, const sim_input *in)
{
    if (!sim_move_settings_check(s, NULL))
        return false;
    return move_step_checked_settings(col, s, c, in);
}

bool move_step_checked_settings(const sim_collider *col, const sim_move_settings *s, sim_char_state *c,
                                const sim_input *in)
{
    if (!sim_char_state_check(c, NULL))
        return false;
    // The static world alone: its queries of this step come from the
    // character's neighbourhood, gathered once (the same answers, faster).
    sim_near near;
    sim_collider local;
    if (col->sweep == world_sweep && col->contacts == world_contacts && col->raycast == world_raycast &&
        !col->in_water && c->move_type != SIM_MOVE_FLY) {
        sim_near_gather(&near, col->ctx, sim_near_step_box(s, c));
        local = (sim_collider){&near, near_sweep, near_contacts, near_raycast, NULL};
        col = &local;
    }
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
    return true;
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
