// keel client: the arena bot (cl_bot.h's CL_BOT_ARENA), a bot that fights.
// Integer and Q16.16 only: its commands are the same on every machine, so a
// session of them (keel-server --virtual-bots) is the same everywhere.
// docs/arena.md, "Bots", says what it does. MIT licence, see LICENSE.
//
// It knows a game only through its schema (keel/sim_game.h): the
// per-character fields "dead", "rail_ticks" and "rocket_ticks" it reads by
// name, the command fields "fire_rail" and "fire_rocket" it presses by name.
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/sim_angle.h>
#include <keel/sim_game.h>

#include "cl_bot_internal.h"

#define EYE_STANDING SIM_FX_MM(1600) // keel-arena's eye heights
#define EYE_CROUCHED SIM_FX_MM(900)
#define CENTER_STANDING SIM_FX_MM(900) // the middle of keel's default shapes
#define CENTER_CROUCHED SIM_FX_MM(500)
#define FEET_AIM SIM_FX_MM(150)        // a rocket aims this far above the feet
#define SIGHT SIM_FX_INT(60)           // enemies farther than this are not looked for
#define RAIL_REACH SIM_FX_INT(80)      // keel-arena's rail range
#define ROCKET_NEAR SIM_FX_MM(4500)    // no rocket closer (the splash radius is 3 m)
#define ROCKET_FAR SIM_FX_INT(22)      // nor farther (it flies 20 m/s)
#define FIRE_CONE 0x100u               // 1.4 degrees: the rail fires within it (and when its ray hits)
#define ROCKET_CONE 0x300u             // 4.2 degrees
#define PITCH_LIMIT 0x3800u            // 78.75 degrees up or down
#define SCAN_TICKS 4u                  // without a target, a look every 4 ticks
#define LOOKS 4u                       // rays per look: the 4 nearest enemies
#define SLOW_SPEED_SQ (SIM_FX_ONE / 4) // (0.5 m/s)^2 in Q16.16: walking but not getting anywhere
#define SLOW_LIMIT 20u                 // ticks of that before a detour

enum { FIRE_RAIL = 1, FIRE_ROCKET = 2 };

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// ---- the game's fields, by name ---------------------------------------------------

static const sim_game_field *field_named(const sim_game_schema *s, const char *name)
{
    for (uint32_t i = 0; i < s->field_count; i++)
        if (strcmp(s->fields[i].name, name) == 0)
            return &s->fields[i];
    return NULL;
}

// A field's value (element 0); `absent` when there is no such field or data.
static int64_t field_value(const sim_game_field *f, const void *data, int64_t absent)
{
    if (!f || !data)
        return absent;
    const uint8_t *at = (const uint8_t *)data + f->offset;
    uint32_t size = f->kind == SIM_GAME_BOOL ? 1u
                                             : (f->kind == SIM_GAME_FX      ? 4u
                                                : f->kind == SIM_GAME_ANGLE ? 2u
                                                                            : f->size);
    uint32_t u = 0;
    if (size == 1) {
        uint8_t x;
        memcpy(&x, at, 1);
        u = x;
    } else if (size == 2) {
        uint16_t x;
        memcpy(&x, at, 2);
        u = x;
    } else {
        memcpy(&u, at, 4);
        size = 4;
    }
    if (f->kind != SIM_GAME_INT && f->kind != SIM_GAME_FX)
        return (int64_t)u;
    int64_t sign = (int64_t)1 << (size * 8u - 1u); // two's complement of `size` bytes
    return (int64_t)(u ^ (uint64_t)sign) - sign;
}

typedef struct fighter_view {
    const sim_scene *scene;
    const sim_game_field *dead, *rail_ticks, *rocket_ticks;
} fighter_view;

static fighter_view view_of(const sim_scene *scene)
{
    fighter_view v = {scene, NULL, NULL, NULL};
    const sim_game *g = sim_scene_game(scene);
    if (g) {
        const sim_game_schema *c = &sim_game_definition(g)->character;
        v.dead = field_named(c, "dead");
        v.rail_ticks = field_named(c, "rail_ticks");
        v.rocket_ticks = field_named(c, "rocket_ticks");
    }
    return v;
}

static bool alive(const fighter_view *v, uint32_t id)
{
    return !sim_scene_game_out(v->scene, id) && field_value(v->dead, sim_scene_game_char(v->scene, id), 0) == 0;
}

// Whether a weapon whose timer field is `f` fires this tick: its timer
// counts down before the shots (keel-arena's tick), so 1 is ready too. A
// game without the field has no such weapon.
static bool ready(const fighter_view *v, const sim_game_field *f, uint32_t id)
{
    return f && field_value(f, sim_scene_game_char(v->scene, id), 1) <= 1;
}

// ---- angles ----------------------------------------------------------------------------

// The binary angle of the direction (x, y) (x along angle 0's cosine).
static sim_angle angle_of(sim_fx y, sim_fx x)
{
    sim_fx rad = sim_fx_atan2(y, x); // (-pi, pi]
    return (sim_angle)(uint16_t)(sim_div_round_s64((int64_t)rad * 32768, SIM_FX_PI) & 0xFFFF);
}

// Horizontal length of (dx, dz), Q16.16 (saturated).
static sim_fx flat_length(sim_fx dx, sim_fx dz)
{
    uint64_t l = sim_isqrt_u64((uint64_t)((int64_t)dx * dx) + (uint64_t)((int64_t)dz * dz));
    return l > INT32_MAX ? INT32_MAX : (sim_fx)l;
}

// The yaw whose forward vector (-sin, 0, -cos) points along (dx, dz), and
// the pitch that looks along d, within PITCH_LIMIT.
static sim_fx neg(sim_fx v) { return v == INT32_MIN ? INT32_MAX : -v; }
static sim_angle yaw_to(sim_vec3 d) { return angle_of(neg(d.x), neg(d.z)); }
static sim_angle pitch_to(sim_vec3 d)
{
    sim_angle p = angle_of(d.y, flat_length(d.x, d.z));
    int16_t s = (int16_t)p;
    return (sim_angle)(s > (int16_t)PITCH_LIMIT
                           ? PITCH_LIMIT
                           : (s < -(int16_t)PITCH_LIMIT ? (sim_angle)(0x10000u - PITCH_LIMIT) : p));
}

// `from` turned toward `to` by at most CL_BOT_TURN_PER_TICK.
static sim_angle turn(sim_angle from, sim_angle to)
{
    int32_t d = (int16_t)(sim_angle)(to - from);
    int32_t r = (int32_t)CL_BOT_TURN_PER_TICK;
    d = d > r ? r : (d < -r ? -r : d);
    return (sim_angle)(from + d);
}

static uint32_t angle_error(sim_angle a, sim_angle b)
{
    int32_t d = (int16_t)(sim_angle)(a - b);
    return (uint32_t)(d < 0 ? -d : d);
}

// ---- looking ------------------------------------------------------------------------------

static sim_vec3 eye(const sim_char_state *c)
{
    return sim_v3(c->position.x, c->position.y + ((c->flags & SIM_CHAR_CROUCHED) ? EYE_CROUCHED : EYE_STANDING),
                  c->position.z);
}

static sim_vec3 center(const sim_char_state *c)
{
    return sim_v3(c->position.x, c->position.y + ((c->flags & SIM_CHAR_CROUCHED) ? CENTER_CROUCHED : CENTER_STANDING),
                  c->position.z);
}

// Whether the first thing a ray from `from` to `to` meets is character
// `id` (sim_scene_raycast: the world, the platforms and the characters,
// `self` passed through).
static bool sees(const sim_scene *scene, uint32_t self, sim_vec3 from, sim_vec3 to, uint32_t id)
{
    sim_ray_input ray = {from, sim_v3_sub(to, from)};
    sim_ray_result hit;
    uint32_t who = 0;
    return sim_scene_raycast(scene, &ray, self, &hit, &who) && who == id;
}

// Squared distance in Q32.32, unsigned: each axis's square is below 2^62, so
// the sum of three never wraps.
static uint64_t distance_sq(sim_vec3 a, sim_vec3 b)
{
    int64_t x = (int64_t)a.x - b.x, y = (int64_t)a.y - b.y, z = (int64_t)a.z - b.z;
    return (uint64_t)(x * x) + (uint64_t)(y * y) + (uint64_t)(z * z);
}

// The living enemy nearest to `me` not in `skip` (its `skips` indices into
// the scene's characters), ties by id; *index gets its index. 0: none.
static uint32_t nearest_enemy(const fighter_view *v, const sim_char_state *me, const uint32_t *skip, uint32_t skips,
                              uint32_t *index, uint64_t *dist_sq)
{
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(v->scene, &n);
    uint64_t best = UINT64_MAX;
    uint32_t found = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool skipped = false;
        for (uint32_t k = 0; k < skips; k++)
            skipped = skipped || skip[k] == i;
        uint64_t d = distance_sq(cs[i].position, me->position);
        if (skipped || cs[i].id == me->id || d >= best || !alive(v, cs[i].id))
            continue;
        best = d;
        found = cs[i].id;
        *index = i;
    }
    if (dist_sq)
        *dist_sq = best;
    return found;
}

// Of the LOOKS living enemies nearest to `me` within SIGHT, the nearest one
// in sight (0: none).
static uint32_t look(const fighter_view *v, const sim_char_state *me)
{
    const sim_char_state *cs = sim_scene_characters(v->scene, &(uint32_t){0});
    uint32_t tried[LOOKS];
    for (uint32_t tries = 0; tries < LOOKS; tries++) {
        uint64_t d;
        uint32_t id = nearest_enemy(v, me, tried, tries, &tried[tries], &d);
        if (!id || d > (uint64_t)((int64_t)SIGHT * SIGHT))
            return 0;
        if (sees(v->scene, me->id, eye(me), center(&cs[tried[tries]]), id))
            return id;
    }
    return 0;
}

// ---- the command ----------------------------------------------------------------------------

sim_input cl_bot_arena_command(cl_bot *bot, const sim_scene *scene, const sim_char_state *me, uint32_t tick)
{
    sim_input in;
    memset(&in, 0, sizeof in);
    in.tick = tick;
    in.yaw = me->yaw;
    in.pitch = me->pitch;
    bot->fire = 0;
    bot->fire_tick = tick;
    fighter_view v = view_of(scene);
    if (!alive(&v, me->id)) {
        bot->target = 0;
        bot->slow_ticks = 0;
        return in;
    }
    // Keep a target while it lives and is in sight; else look again.
    const sim_char_state *target = bot->target ? sim_scene_find(scene, bot->target) : NULL;
    if (target && (!alive(&v, target->id) || !sees(scene, me->id, eye(me), center(target), target->id)))
        target = NULL;
    if (!target && tick >= bot->next_scan) {
        bot->next_scan = tick + SCAN_TICKS;
        uint32_t seen = look(&v, me);
        target = seen ? sim_scene_find(scene, seen) : NULL;
    }
    bot->target = target ? target->id : 0;

    if (target) {
        sim_vec3 from = eye(me);
        sim_fx dist = sim_v3_length(sim_v3_sub(target->position, me->position));
        bool rail = ready(&v, v.rail_ticks, me->id);
        bool rocket = ready(&v, v.rocket_ticks, me->id) && dist >= ROCKET_NEAR && dist <= ROCKET_FAR;
        // The rail at the body; a rocket, while the rail reloads, at the feet
        // of one on the ground (its splash reaches whoever it misses).
        bool at_feet = rocket && !rail && (target->flags & SIM_CHAR_GROUNDED);
        sim_vec3 aim =
            at_feet ? sim_v3(target->position.x, target->position.y + FEET_AIM, target->position.z) : center(target);
        sim_vec3 d = sim_v3_sub(aim, from);
        sim_angle want_yaw = yaw_to(d), want_pitch = pitch_to(d);
        in.yaw = turn(me->yaw, want_yaw);
        in.pitch = turn(me->pitch, want_pitch);
        uint32_t off = angle_error(in.yaw, want_yaw) + angle_error(in.pitch, want_pitch);
        if (rail && off <= FIRE_CONE) {
            sim_vec3 to = sim_v3_add(from, sim_v3_scale(sim_angle_dir(in.yaw, in.pitch), RAIL_REACH));
            if (sees(scene, me->id, from, to, target->id))
                bot->fire |= FIRE_RAIL;
        }
        if (rocket && off <= ROCKET_CONE)
            bot->fire |= FIRE_ROCKET;
        // Strafe, changing sides every 0.4 to 1.4 s; close in from afar,
        // back off when close.
        if (tick >= bot->strafe_until || bot->strafe == 0) {
            uint64_t r = next(&bot->rng);
            bot->strafe = (r & 1u) ? 127 : -127;
            bot->strafe_until = tick + 26u + (uint32_t)((r >> 8) % 64u);
        }
        in.right = bot->strafe;
        in.forward = dist > SIM_FX_INT(14) ? 127 : (dist < SIM_FX_INT(5) ? -90 : 30);
        if ((next(&bot->rng) & 63u) == 0)
            in.buttons = SIM_BUTTON_JUMP; // now and then a jump aside
        bot->slow_ticks = 0;
        return in;
    }

    // Nobody in sight: toward the nearest living enemy, around what stops
    // it (a detour along a drawn heading, with a jump), looking level.
    uint32_t at;
    uint32_t nearest = nearest_enemy(&v, me, NULL, 0, &at, NULL);
    sim_angle want = me->yaw;
    if (tick < bot->detour_until)
        want = bot->detour_yaw;
    else if (nearest)
        want = yaw_to(sim_v3_sub(sim_scene_find(scene, nearest)->position, me->position));
    in.yaw = turn(me->yaw, want);
    in.pitch = turn(me->pitch, 0);
    in.forward = 127;
    int64_t speed_sq = (int64_t)me->velocity.x * me->velocity.x + (int64_t)me->velocity.z * me->velocity.z;
    bot->slow_ticks = speed_sq < (int64_t)SLOW_SPEED_SQ * SIM_FX_ONE ? bot->slow_ticks + 1u : 0u;
    if (bot->slow_ticks >= SLOW_LIMIT) {
        uint64_t r = next(&bot->rng);
        bot->detour_yaw = (sim_angle)(me->yaw + SIM_ANGLE_QUARTER + (sim_angle)(r % SIM_ANGLE_HALF));
        bot->detour_until = tick + 48u + (uint32_t)((r >> 16) % 96u);
        bot->slow_ticks = 0;
        in.buttons = SIM_BUTTON_JUMP;
    }
    return in;
}

bool cl_bot_arena_game_command(const cl_bot *bot, const sim_game *game, uint32_t tick, void *command, size_t size)
{
    const sim_game_def *d = game ? sim_game_definition(game) : NULL;
    if (!d || d->command.size == 0 || size < d->command.size)
        return false;
    memset(command, 0, d->command.size);
    uint8_t fire = bot->fire_tick == tick ? bot->fire : 0;
    const sim_game_field *rail = field_named(&d->command, "fire_rail");
    const sim_game_field *rocket = field_named(&d->command, "fire_rocket");
    uint8_t one = 1;
    if (rail && rail->kind == SIM_GAME_BOOL && (fire & FIRE_RAIL))
        memcpy((uint8_t *)command + rail->offset, &one, 1);
    if (rocket && rocket->kind == SIM_GAME_BOOL && (fire & FIRE_ROCKET))
        memcpy((uint8_t *)command + rocket->offset, &one, 1);
    return sim_game_check(game, SIM_GAME_PART_COMMAND, command, NULL);
}

bool cl_bot_game_fights(const sim_game *game)
{
    const sim_game_def *d = game ? sim_game_definition(game) : NULL;
    if (!d)
        return false;
    const sim_game_field *rail = field_named(&d->command, "fire_rail");
    const sim_game_field *rocket = field_named(&d->command, "fire_rocket");
    return (rail && rail->kind == SIM_GAME_BOOL) || (rocket && rocket->kind == SIM_GAME_BOOL);
}

int64_t cl_bot_game_value(const sim_game_schema *schema, const void *data, const char *name, int64_t absent)
{
    return schema ? field_value(field_named(schema, name), data, absent) : absent;
}
