// keel: the simulation identity: digests of the settings, the level and the
// scene's fixed setup (platforms and water). MIT licence, see LICENSE.
//
// Every digest is XXH64, seeded with SIM_HASH_SEED, of an explicit byte
// string: every field in declaration order as little-endian bytes (int32 and
// Q16.16 as 4 bytes of two's complement). Never raw struct memory, so the same
// values give the same digest on every machine and compiler.
#include <string.h>

#define XXH_STATIC_LINKING_ONLY // XXH64_state_t on the stack
#include <xxhash.h>

#include <keel/sim_hash.h>
#include <keel/sim_level.h>
#include <keel/sim_scene.h>

#include "proto_internal.h"

static uint8_t *put_u32(uint8_t *o, uint32_t v)
{
    o[0] = (uint8_t)v;
    o[1] = (uint8_t)(v >> 8);
    o[2] = (uint8_t)(v >> 16);
    o[3] = (uint8_t)(v >> 24);
    return o + 4;
}
static uint8_t *put_s32(uint8_t *o, int32_t v) { return put_u32(o, (uint32_t)v); }
static uint8_t *put_vec(uint8_t *o, sim_vec3 v)
{
    o = put_s32(o, v.x);
    o = put_s32(o, v.y);
    return put_s32(o, v.z);
}
static uint8_t *put_shape(uint8_t *o, sim_shape s)
{
    o = put_s32(o, s.type);
    o = put_s32(o, s.radius);
    return put_vec(o, s.half);
}

// tick_rate, stand_shape (type, radius, half: 20 bytes), crouch_shape,
// gravity, max_speed, crouch_speed_scale, accelerate, air_accelerate,
// air_max_speed, friction, stop_speed, jump_velocity, step_height,
// max_slope_cos, skin, max_slide_iterations, depen_iterations, fly_speed,
// swim_speed, water_gravity_scale: 112 bytes; then respawn_depth (4 bytes)
// only when it is not 0, so settings without respawning digest as they did
// before the field existed (old recordings still verify). Not the cookie.
uint64_t net_settings_digest(const sim_move_settings *s)
{
    uint8_t buf[128];
    uint8_t *o = buf;
    o = put_s32(o, s->tick_rate);
    o = put_shape(o, s->stand_shape);
    o = put_shape(o, s->crouch_shape);
    o = put_s32(o, s->gravity);
    o = put_s32(o, s->max_speed);
    o = put_s32(o, s->crouch_speed_scale);
    o = put_s32(o, s->accelerate);
    o = put_s32(o, s->air_accelerate);
    o = put_s32(o, s->air_max_speed);
    o = put_s32(o, s->friction);
    o = put_s32(o, s->stop_speed);
    o = put_s32(o, s->jump_velocity);
    o = put_s32(o, s->step_height);
    o = put_s32(o, s->max_slope_cos);
    o = put_s32(o, s->skin);
    o = put_s32(o, s->max_slide_iterations);
    o = put_s32(o, s->depen_iterations);
    o = put_s32(o, s->fly_speed);
    o = put_s32(o, s->swim_speed);
    o = put_s32(o, s->water_gravity_scale);
    if (s->respawn_depth != 0)
        o = put_s32(o, s->respawn_depth);
    return (uint64_t)XXH64(buf, (size_t)(o - buf), SIM_HASH_SEED);
}

// vertex_count, each vertex (x, y, z), triangle_count, each triangle's three
// indices, box_count, each box (center, half, axis[0..2]); then a .map's
// entity digest (sim_level_entity_digest, 8 bytes) only when it is not 0, so
// OBJ and built-in levels digest as they did before .map levels existed.
// Not the markers.
uint64_t net_level_digest(const struct sim_level *level)
{
    XXH64_state_t st;
    XXH64_reset(&st, SIM_HASH_SEED);
    uint8_t buf[60];
    uint32_t vc = level ? level->vertex_count : 0, tc = level ? level->triangle_count : 0,
             bc = level ? level->box_count : 0;
    put_u32(buf, vc);
    XXH64_update(&st, buf, 4);
    for (uint32_t i = 0; i < vc; i++) {
        put_vec(buf, level->vertices[i]);
        XXH64_update(&st, buf, 12);
    }
    put_u32(buf, tc);
    XXH64_update(&st, buf, 4);
    for (uint32_t i = 0; i < tc; i++) {
        uint8_t *o = buf;
        for (int k = 0; k < 3; k++)
            o = put_u32(o, level->indices[3u * i + (uint32_t)k]);
        XXH64_update(&st, buf, 12);
    }
    put_u32(buf, bc);
    XXH64_update(&st, buf, 4);
    for (uint32_t i = 0; i < bc; i++) {
        const sim_box_def *b = &level->boxes[i];
        uint8_t *o = put_vec(buf, b->center);
        o = put_vec(o, b->half);
        for (int k = 0; k < 3; k++)
            o = put_vec(o, b->axis[k]);
        XXH64_update(&st, buf, (size_t)(o - buf));
    }
    uint64_t entities = sim_level_entity_digest(level);
    if (entities != 0) {
        put_u32(put_u32(buf, (uint32_t)entities), (uint32_t)(entities >> 32));
        XXH64_update(&st, buf, 8);
    }
    return (uint64_t)XXH64_digest(&st);
}

// platform_count, then each platform in id order: id, half (x, y, z),
// point_count, its point_count points (x, y, z; the unused slots do not move
// it), ticks_per_leg, pause_ticks; then water_count and each water box in the
// order added (min, max). All u32/s32 little-endian. No platforms and no water
// (or no scene): the digest of two zero counts, the same on every build.
uint64_t net_scene_digest(const struct sim_scene *scene)
{
    XXH64_state_t st;
    XXH64_reset(&st, SIM_HASH_SEED);
    uint8_t buf[4 + 12 + 4 + 12 * SIM_PLATFORM_MAX_POINTS + 8];
    uint32_t pc = scene ? sim_scene_platform_count(scene) : 0, wc = scene ? sim_scene_water_count(scene) : 0;
    put_u32(buf, pc);
    XXH64_update(&st, buf, 4);
    for (uint32_t i = 0; i < pc; i++) {
        const sim_platform_def *p = sim_scene_platform(scene, i);
        uint32_t n = p->point_count < SIM_PLATFORM_MAX_POINTS ? p->point_count : SIM_PLATFORM_MAX_POINTS;
        uint8_t *o = put_u32(buf, p->id);
        o = put_vec(o, p->half);
        o = put_u32(o, p->point_count);
        for (uint32_t k = 0; k < n; k++)
            o = put_vec(o, p->points[k]);
        o = put_u32(o, p->ticks_per_leg);
        o = put_u32(o, p->pause_ticks);
        XXH64_update(&st, buf, (size_t)(o - buf));
    }
    put_u32(buf, wc);
    XXH64_update(&st, buf, 4);
    for (uint32_t i = 0; i < wc; i++) {
        sim_aabb w = sim_scene_water(scene, i);
        uint8_t *o = put_vec(buf, w.min);
        o = put_vec(o, w.max);
        XXH64_update(&st, buf, (size_t)(o - buf));
    }
    return (uint64_t)XXH64_digest(&st);
}

net_sim_identity net_identity_make(const sim_move_settings *s, const struct sim_level *level,
                                   const struct sim_scene *scene)
{
    net_sim_identity id;
    memset(&id, 0, sizeof id);
    id.behaviour_version = NET_BEHAVIOUR_VERSION;
    id.settings_digest = net_settings_digest(s);
    id.level_digest = net_level_digest(level);
    id.scene_digest = net_scene_digest(scene);
    id.tick_rate = (s->tick_rate > 0 && s->tick_rate <= UINT16_MAX) ? (uint16_t)s->tick_rate : 0;
    return id;
}

bool net_identity_equal(const net_sim_identity *a, const net_sim_identity *b, const char **reason)
{
    const char *why = NULL;
    if (a->behaviour_version != b->behaviour_version)
        why = "behaviour version differs";
    else if (a->tick_rate != b->tick_rate)
        why = "tick rate differs";
    else if (a->settings_digest != b->settings_digest)
        why = "settings differ";
    else if (a->level_digest != b->level_digest)
        why = "level differs";
    else if (a->scene_digest != b->scene_digest)
        why = "platforms or water differ (server and client must both use --platforms or neither)";
    else if (strncmp(a->game_name, b->game_name, sizeof a->game_name) != 0 || a->game_version != b->game_version ||
             a->game_digest != b->game_digest)
        why = "game differs";
    if (reason)
        *reason = why ? why : "";
    return why == NULL;
}
