// keel-arena: the level's entities into the game's tables (arena_level,
// sim_game_def.level): spawn points, jump pads, teleporters and items.
// MIT licence, see LICENSE.
#include <stddef.h>
#include <string.h>

#include <keel/sim_angle.h>
#include <keel/sim_fx.h>

#include "arena_internal.h"

#define PAD_DEFAULT_SPEED 600 // level units per second, a trigger_push without "speed"

static sim_fx clampfx(sim_fx v, sim_fx lim) { return v < -lim ? -lim : (v > lim ? lim : v); }

sim_vec3 arena_capped(sim_vec3 v)
{
    return sim_v3(clampfx(v.x, ARENA_SPEED_CAP), clampfx(v.y, ARENA_SPEED_CAP), clampfx(v.z, ARENA_SPEED_CAP));
}

// Degrees (Q16.16) to keel's yaw: binary angle units, less a quarter turn
// (Quake's angle 0 looks along +X; sim_map_spawns does the same).
static sim_angle yaw_of_degrees(sim_fx deg)
{
    int64_t units = ((int64_t)deg + (deg < 0 ? -180 : 180)) / 360;
    return (sim_angle)(((uint64_t)units - SIM_ANGLE_QUARTER) & 0xFFFFu);
}

// ---- the level ------------------------------------------------------------------

static const char *key(const sim_game_entity *e, const char *name)
{
    for (uint32_t k = 0; k < e->key_count; k++)
        if (strcmp(e->keys[k].key, name) == 0)
            return e->keys[k].value;
    return NULL;
}

// The integer part of a decimal key ("600", "-1", "600.5"), or `fallback`;
// at most 6 digits.
static int32_t int_key(const sim_game_entity *e, const char *name, int32_t fallback)
{
    const char *v = key(e, name);
    if (!v)
        return fallback;
    int32_t sign = 1, n = 0, digits = 0;
    if (*v == '-') {
        sign = -1;
        v++;
    }
    for (; *v >= '0' && *v <= '9' && digits < 6; v++, digits++)
        n = n * 10 + (*v - '0');
    return digits ? sign * n : fallback;
}

static sim_vec3 box_center(sim_aabb b)
{
    return sim_v3(b.min.x + (b.max.x - b.min.x) / 2, b.min.y + (b.max.y - b.min.y) / 2,
                  b.min.z + (b.max.z - b.min.z) / 2);
}

// A jump pad's launch: toward its target, reaching it at the top of the arc
// (height h above the pad's centre: up at sqrt(2 g h), for sqrt(2 h / g)
// seconds); without a target, "speed" units per second along "angle" (-1
// up, -2 down, else the horizontal direction). False: no launch.
static bool pad_velocity(const sim_game_entity *e, const sim_game_level *l, sim_vec3 *out)
{
    sim_fx g = l->settings ? l->settings->gravity : SIM_FX_INT(20);
    if (e->has_target) {
        sim_vec3 from = box_center(e->bounds);
        sim_fx h = e->target.y - from.y;
        if (h <= 0 || g <= 0)
            return false;
        sim_fx time = sim_fx_sqrt(sim_fx_div(2 * h, g));
        if (time <= 0)
            return false;
        sim_vec3 flat = sim_v3(e->target.x - from.x, 0, e->target.z - from.z);
        *out = arena_capped(sim_v3(sim_fx_div(flat.x, time), sim_fx_mul(g, time), sim_fx_div(flat.z, time)));
        return true;
    }
    int64_t speed = (int64_t)int_key(e, "speed", PAD_DEFAULT_SPEED) * l->unit_m; // m/s, Q16.16
    sim_fx v = (sim_fx)(speed > ARENA_SPEED_CAP ? ARENA_SPEED_CAP : (speed < 0 ? 0 : speed));
    if (e->angle == SIM_FX_INT(-1)) {
        *out = sim_v3(0, v, 0);
    } else if (e->angle == SIM_FX_INT(-2)) {
        *out = sim_v3(0, -v, 0);
    } else {
        // file (cos a, sin a, 0) is engine (cos a, 0, -sin a)
        sim_angle a = (sim_angle)((yaw_of_degrees(e->angle) + SIM_ANGLE_QUARTER) & 0xFFFFu);
        *out = sim_v3(sim_fx_mul(v, sim_angle_cos(a)), 0, -sim_fx_mul(v, sim_angle_sin(a)));
    }
    return v > 0;
}

static uint8_t item_kind(const char *classname)
{
    if (strncmp(classname, "item_health", 11) == 0)
        return ARENA_ITEM_HEALTH;
    if (strncmp(classname, "item_armor", 10) == 0)
        return ARENA_ITEM_ARMOUR;
    return ARENA_ITEM_NONE; // weapons and ammunition: both weapons are always carried
}

void arena_level(const sim_game_level *l, void *state, void *user)
{
    (void)user;
    arena_state *s = state;
    // The level's tables anew (a second call replaces them, never adds).
    s->spawn_count = s->pad_count = s->teleport_count = s->item_count = 0;
    memset(s->spawn, 0, sizeof s->spawn);
    memset(s->pad, 0, sizeof s->pad);
    memset(s->teleport, 0, sizeof s->teleport);
    memset(s->item, 0, sizeof s->item);
    // A Quake player's origin is 24 units above its feet; the feet go 1 cm
    // higher (unit_m is rounded to 2^-16 m: 24 units can come out 0.2 mm
    // short, into the floor), and the character settles the next tick.
    sim_fx lift = (sim_fx)(24 * (int64_t)l->unit_m) - SIM_FX_MM(10);
    bool any_dm = false;
    for (uint32_t i = 0; i < l->entity_count; i++)
        any_dm = any_dm || (l->entities[i].role == SIM_MAP_ROLE_SPAWN && l->entities[i].has_origin &&
                            strcmp(l->entities[i].classname, "info_player_deathmatch") == 0);
    for (uint32_t i = 0; i < l->entity_count; i++) {
        const sim_game_entity *e = &l->entities[i];
        if (e->role == SIM_MAP_ROLE_SPAWN && e->has_origin && s->spawn_count < ARENA_SPAWNS &&
            any_dm == (strcmp(e->classname, "info_player_deathmatch") == 0)) {
            arena_spawn *p = &s->spawn[s->spawn_count++];
            p->feet = sim_v3(e->origin.x, e->origin.y - lift, e->origin.z);
            p->yaw = yaw_of_degrees(e->angle);
        } else if (e->role == SIM_MAP_ROLE_PUSH && s->pad_count < ARENA_PADS) {
            sim_vec3 v;
            if (pad_velocity(e, l, &v))
                s->pad[s->pad_count++] = (arena_pad){e->bounds, v};
        } else if (e->role == SIM_MAP_ROLE_TELEPORT && e->has_target && s->teleport_count < ARENA_TELEPORTS) {
            arena_teleport *p = &s->teleport[s->teleport_count++];
            p->box = e->bounds;
            p->feet = sim_v3(e->target.x, e->target.y - lift, e->target.z);
            p->yaw = yaw_of_degrees(e->target_angle);
        } else if (e->role == SIM_MAP_ROLE_ITEM && e->has_origin && item_kind(e->classname) &&
                   s->item_count < ARENA_ITEMS) {
            s->item[s->item_count++] = (arena_item){item_kind(e->classname), 0, e->origin};
        }
    }
}
