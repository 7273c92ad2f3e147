// keel-play: a .map level's entities as coloured boxes: what its static
// triangles do not show. MIT licence, see LICENSE.
//
// Brush entities outside the static world are drawn as the bounds of each
// brush, translucent: water and other liquids blue, movers (func_plat,
// func_train, func_door) green where the map draws them (the scene's
// platforms move on their paths in the platforms' colour), jump pads
// (trigger_push) orange, teleporters magenta, other triggers yellow,
// decoration (func_illusionary) grey. Point entities are small opaque
// boxes: spawn points cyan (at the feet), items gold, teleport destinations
// magenta.
#include "render.h"

#include <stdlib.h>
#include <string.h>

static float fx(sim_fx v) { return (float)v / 65536.0f; }

static const float LIQUID[4] = {0.15f, 0.40f, 0.85f, 0.35f}, MOVER[4] = {0.20f, 0.80f, 0.30f, 0.30f},
                   PUSH[4] = {1.00f, 0.55f, 0.10f, 0.45f}, TELEPORT[4] = {0.85f, 0.20f, 0.85f, 0.40f},
                   TRIGGER[4] = {0.95f, 0.90f, 0.20f, 0.30f}, DECORATION[4] = {0.60f, 0.60f, 0.60f, 0.35f},
                   SPAWN[4] = {0.20f, 0.90f, 0.95f, 1.0f}, ITEM[4] = {0.95f, 0.75f, 0.15f, 1.0f};

static const float *brush_color(const sim_map *map, const sim_map_brush *b)
{
    sim_map_role role = map->entities[b->entity].role;
    if (b->contents == SIM_MAP_LIQUID)
        return LIQUID;
    if (b->contents == SIM_MAP_MOVER)
        return MOVER;
    if (b->contents != SIM_MAP_NONSOLID)
        return NULL; // in the static world: its triangles are drawn
    switch (role) {
    case SIM_MAP_ROLE_PUSH: return PUSH;
    case SIM_MAP_ROLE_TELEPORT: return TELEPORT;
    case SIM_MAP_ROLE_TRIGGER: return TRIGGER;
    case SIM_MAP_ROLE_DECORATION: return DECORATION;
    default: return NULL; // world hint, origin and clip-less brushes: nothing to see
    }
}

static void put(float *o, const float c[3], const float h[3], const float rgba[4])
{
    memcpy(o, c, 3 * sizeof(float));
    memcpy(o + 3, h, 3 * sizeof(float));
    memcpy(o + 6, rgba, 4 * sizeof(float));
}

uint32_t kp_map_boxes(const sim_map *map, float **out)
{
    *out = NULL;
    if (!map || map->entity_count == 0)
        return 0;
    float *v = malloc(((size_t)map->brush_count + map->entity_count) * KP_MAP_BOX_FLOATS * sizeof(float));
    if (!v)
        return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < map->brush_count; i++) {
        const float *rgba = brush_color(map, &map->brushes[i]);
        if (!rgba)
            continue;
        sim_aabb b = map->brushes[i].bounds;
        float c[3] = {fx(b.min.x + (b.max.x - b.min.x) / 2), fx(b.min.y + (b.max.y - b.min.y) / 2),
                      fx(b.min.z + (b.max.z - b.min.z) / 2)};
        float h[3] = {fx((b.max.x - b.min.x) / 2), fx((b.max.y - b.min.y) / 2), fx((b.max.z - b.min.z) / 2)};
        put(v + (size_t)n++ * KP_MAP_BOX_FLOATS, c, h, rgba);
    }
    for (uint32_t i = 0; i < map->entity_count; i++) {
        const sim_map_entity *e = &map->entities[i];
        if (!e->has_origin || e->brush_count > 0)
            continue;
        float c[3] = {fx(e->origin.x), fx(e->origin.y), fx(e->origin.z)};
        if (e->role == SIM_MAP_ROLE_SPAWN) {
            static const float h[3] = {0.3f, 0.05f, 0.3f};
            c[1] -= 0.6f - 0.05f; // a plate at the feet: 24 units of 2.5 cm below the origin
            put(v + (size_t)n++ * KP_MAP_BOX_FLOATS, c, h, SPAWN);
        } else if (e->role == SIM_MAP_ROLE_ITEM || e->role == SIM_MAP_ROLE_TELEPORT_TARGET) {
            static const float h[3] = {0.2f, 0.2f, 0.2f};
            put(v + (size_t)n++ * KP_MAP_BOX_FLOATS, c, h, e->role == SIM_MAP_ROLE_ITEM ? ITEM : TELEPORT);
        }
    }
    *out = v;
    return n;
}
