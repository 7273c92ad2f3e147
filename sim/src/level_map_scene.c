// keel: Quake .map loader, movers and water into a scene. MIT licence, see LICENSE.
//
// func_train: its box visits the path_corner chain from its "target" (a
// Quake train's lowest corner sits on each path corner), one leg per corner,
// at "speed" units per second (default 100), pausing "wait" seconds (the
// first corner's; default 0.1 s rounded to ticks). func_plat: its box as drawn
// is the top; it travels "height" units (default its height less 8) down and
// back at "speed" (default 150), pausing 3 s at each end. func_door stays
// out (doors need the game's triggers). Liquid brushes become water boxes.
#include <keel/sim_game.h>
#include <keel/sim_level.h>
#include <keel/sim_scene.h>

#include <stdlib.h>
#include <string.h>

#include "level_text.h"

/// A key's value as a decimal in Q16.16 (scale 1), or `fallback`.
static sim_fx number_key(const sim_map *map, const sim_map_entity *e, const char *key, sim_fx fallback)
{
    static const level_scale one = {1, 0};
    const char *v = sim_map_value(map, e, key);
    level_decimal d;
    sim_fx raw;
    if (!v || !level_decimal_parse(v, strlen(v), &d) || !level_decimal_to_raw(&d, &one, &raw))
        return fallback;
    return raw;
}

static const sim_map_entity *find_target(const sim_map *map, const char *name)
{
    for (uint32_t i = 0; name && i < map->entity_count; i++) {
        const char *t = sim_map_value(map, &map->entities[i], "targetname");
        if (t && strcmp(t, name) == 0 && map->entities[i].role == SIM_MAP_ROLE_PATH)
            return &map->entities[i];
    }
    return NULL;
}

/// Ticks to cover `dist` (raw metres) at `speed` units per second.
static uint32_t leg_ticks(sim_fx dist, sim_fx speed_units, sim_fx unit_m, int32_t tick_rate)
{
    // metres per second = speed * unit_m; ticks = dist / (that) * rate.
    int64_t mps = (int64_t)speed_units * unit_m / SIM_FX_ONE; // Q16.16
    if (mps <= 0)
        mps = 1;
    int64_t t = (int64_t)dist * tick_rate / mps;
    return t < 1 ? 1 : (t > 1000000 ? 1000000 : (uint32_t)t);
}

static sim_fx length(sim_vec3 a, sim_vec3 b)
{
    int64_t dx = (int64_t)a.x - b.x, dy = (int64_t)a.y - b.y, dz = (int64_t)a.z - b.z;
    return (sim_fx)sim_isqrt_u64((uint64_t)(dx * dx + dy * dy + dz * dz));
}

int sim_map_add_to_scene(const sim_map *map, struct sim_scene *scene, int32_t tick_rate, sim_fx unit_m,
                         uint32_t first_platform_id, uint32_t *platforms, uint32_t *water)
{
    uint32_t np = 0, nw = 0;
    int rc = 0;
    for (uint32_t i = 0; i < map->brush_count; i++)
        if (map->brushes[i].contents == SIM_MAP_LIQUID) {
            if (sim_scene_add_water(scene, map->brushes[i].bounds) != 0)
                rc = -1;
            else
                nw++;
        }
    for (uint32_t i = 0; i < map->entity_count; i++) {
        const sim_map_entity *e = &map->entities[i];
        if (e->role != SIM_MAP_ROLE_PLATFORM || e->brush_count == 0)
            continue;
        sim_platform_def p;
        memset(&p, 0, sizeof p);
        p.id = first_platform_id + np;
        sim_vec3 h = sim_v3((e->bounds.max.x - e->bounds.min.x) / 2, (e->bounds.max.y - e->bounds.min.y) / 2,
                            (e->bounds.max.z - e->bounds.min.z) / 2);
        p.half = h;
        sim_vec3 top = sim_v3(e->bounds.min.x + h.x, e->bounds.min.y + h.y, e->bounds.min.z + h.z);
        if (strcmp(e->classname, "func_plat") == 0) {
            sim_fx height_units = number_key(map, e, "height", 0);
            sim_fx height = height_units > 0 ? (sim_fx)((int64_t)height_units * unit_m / SIM_FX_ONE)
                                             : 2 * h.y - (sim_fx)((int64_t)8 * unit_m);
            p.points[0] = sim_v3(top.x, top.y - height, top.z);
            p.points[1] = top;
            p.point_count = 2;
            p.ticks_per_leg = leg_ticks(height, number_key(map, e, "speed", SIM_FX_INT(150)), unit_m, tick_rate);
            p.pause_ticks = (uint32_t)(3 * tick_rate);
        } else if (strcmp(e->classname, "func_train") == 0) {
            const sim_map_entity *first = find_target(map, sim_map_value(map, e, "target")), *c = first;
            while (c && p.point_count < SIM_PLATFORM_MAX_POINTS) {
                // the train's lowest corner (engine min x, min y, max z) on the path corner
                p.points[p.point_count++] = sim_v3(c->origin.x + h.x, c->origin.y + h.y, c->origin.z - h.z);
                c = find_target(map, sim_map_value(map, c, "target"));
                if (c == first)
                    break; // back at the first corner
            }
            if (p.point_count == 0)
                continue; // no path: it stays where it is drawn, not in the world
            sim_fx leg = p.point_count > 1 ? length(p.points[0], p.points[1]) : SIM_FX_ONE;
            p.ticks_per_leg = leg_ticks(leg, number_key(map, e, "speed", SIM_FX_INT(100)), unit_m, tick_rate);
            sim_fx wait = first ? number_key(map, first, "wait", 0) : 0;
            p.pause_ticks = wait > 0 ? (uint32_t)((int64_t)wait * tick_rate / SIM_FX_ONE) : 0;
        } else {
            continue;
        }
        if (sim_scene_add_platform(scene, &p) != 0)
            rc = -1;
        else
            np++;
    }
    // The entities to the scene's game, if it has one that takes them.
    if (!sim_scene_game_map(scene, map, NULL))
        rc = -1;
    if (platforms)
        *platforms = np;
    if (water)
        *water = nw;
    return rc;
}

// The k-th spawn marker of the level is the k-th spawn entity with an
// origin (the loader adds them in entity order and adds no other markers
// whose names start with "spawn_").
uint32_t sim_map_spawns(const sim_map *map, const sim_level *level, sim_map_spawn *out, uint32_t capacity)
{
    if (!map || !level)
        return 0;
    bool any_dm = false;
    for (uint32_t i = 0; i < map->entity_count; i++)
        any_dm = any_dm || (map->entities[i].role == SIM_MAP_ROLE_SPAWN && map->entities[i].has_origin &&
                            strcmp(map->entities[i].classname, "info_player_deathmatch") == 0);
    uint32_t n = 0, marker = 0;
    for (uint32_t i = 0; i < map->entity_count; i++) {
        const sim_map_entity *e = &map->entities[i];
        if (e->role != SIM_MAP_ROLE_SPAWN || !e->has_origin)
            continue;
        while (marker < level->marker_count && strncmp(level->markers[marker].name, "spawn_", 6) != 0)
            marker++;
        if (marker == level->marker_count)
            break; // not the level this map was loaded with
        sim_vec3 feet = level->markers[marker++].position;
        if (any_dm != (strcmp(e->classname, "info_player_deathmatch") == 0))
            continue;
        if (n < capacity) {
            // Degrees in Q16.16 to binary angles: 65536 units per 360
            // degrees is raw / 360, rounded to nearest; less a quarter turn.
            int64_t units = ((int64_t)e->yaw + (e->yaw < 0 ? -180 : 180)) / 360;
            out[n].feet = feet;
            out[n].yaw = (sim_angle)(((uint64_t)units - SIM_ANGLE_QUARTER) & 0xFFFFu);
        }
        n++;
    }
    return n;
}
