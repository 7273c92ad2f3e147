// keel: respawning characters that fell below the level (sim_scene.h,
// "Respawning"). MIT licence, see LICENSE.
#include <keel/sim_spawn.h>

#include <stdlib.h>

#include "scene_internal.h"

bool scene_respawn_init(sim_scene *sc)
{
    if (sc->settings.respawn_depth <= 0)
        return true;
    sim_aabb b = sim_world_get_stats(sc->world).bounds;
    int64_t below = (int64_t)b.min.y - sc->settings.respawn_depth;
    sc->respawn_below = below > -(int64_t)SIM_MOVE_POSITION_LIMIT ? below : -(int64_t)SIM_MOVE_POSITION_LIMIT;
    sc->spawns = malloc(SIM_SCENE_SPAWN_SPOTS * sizeof *sc->spawns);
    if (!sc->spawns)
        return false;
    sim_spawn_settings s = sim_spawn_default_settings(&sc->settings);
    sc->spawn_count = sim_spawn_spots(sc->world, &s, sc->spawns, SIM_SCENE_SPAWN_SPOTS);
    return true;
}

// Whether a character other than `self` stands within a body width of
// `spot` (horizontally, and less than 2 m apart in height).
static bool occupied(const sim_scene *sc, uint32_t self, sim_vec3 spot)
{
    int64_t width = 2 * (int64_t)sc->settings.stand_shape.half.x + SIM_FX_MM(100);
    for (uint32_t i = 0; i < sc->count; i++) {
        const sim_char_state *c = &sc->chars[i];
        if (c->id == self)
            continue;
        int64_t dx = (int64_t)c->position.x - spot.x, dz = (int64_t)c->position.z - spot.z;
        int64_t dy = (int64_t)c->position.y - spot.y;
        if (dy < SIM_FX_INT(2) && dy > -SIM_FX_INT(2) && dx * dx + dz * dz < width * width)
            return true;
    }
    return false;
}

uint32_t sim_scene_free_spot(const sim_scene *sc, const sim_vec3 *spots, uint32_t count, uint32_t start, uint32_t self)
{
    for (uint32_t k = 0; k < count; k++) {
        uint32_t j = (uint32_t)(((uint64_t)start + k) % count);
        if (!occupied(sc, self, spots[j]))
            return j;
    }
    return count;
}

bool scene_respawn(sim_scene *sc)
{
    sc->respawned = 0;
    if (sc->spawn_count == 0)
        return false;
    for (uint32_t i = 0; i < sc->count; i++) {
        sim_char_state *c = &sc->chars[i];
        if (c->move_type == SIM_MOVE_FLY || (int64_t)c->position.y >= sc->respawn_below)
            continue;
        // The first free spot from one chosen by id and tick; all taken: the
        // chosen one (the separation then moves whoever overlaps).
        uint32_t n = sc->spawn_count;
        uint32_t start = (uint32_t)(sim_rng_mix((uint64_t)c->id << 32 | sc->tick) % n);
        uint32_t pick = sim_scene_free_spot(sc, sc->spawns, n, start, c->id);
        if (pick == n)
            pick = start;
        sim_char_state fresh = sim_char_spawn(c->id, sc->spawns[pick], c->yaw);
        fresh.pitch = c->pitch;
        *c = fresh;
        sc->respawned++;
    }
    return sc->respawned > 0;
}

uint32_t sim_scene_spawn_count(const sim_scene *sc) { return sc->spawn_count; }
sim_vec3 sim_scene_spawn_spot(const sim_scene *sc, uint32_t index)
{
    return index < sc->spawn_count ? sc->spawns[index] : sim_v3_zero();
}
uint32_t sim_scene_last_respawns(const sim_scene *sc) { return sc->respawned; }
