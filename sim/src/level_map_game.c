// keel: a .map level's entities handed to the scene's game
// (sim_scene_game_map, keel/sim_game.h). MIT licence, see LICENSE.
//
// Each entity becomes a sim_game_entity: its classname, role, origin,
// angle, bounds and keys, and for one with a "target" the origin and angle
// of the first entity whose "targetname" matches (in file order).
#include <stdlib.h>
#include <string.h>

#include <keel/sim_game.h>

static const sim_map_entity *named(const sim_map *map, const char *name)
{
    for (uint32_t i = 0; name && i < map->entity_count; i++) {
        const char *t = sim_map_value(map, &map->entities[i], "targetname");
        if (t && strcmp(t, name) == 0)
            return &map->entities[i];
    }
    return NULL;
}

bool sim_scene_game_map(sim_scene *scene, const sim_map *map, sim_game_error *error)
{
    const sim_game *game = sim_scene_game(scene);
    if (error)
        *error = (sim_game_error){"", "", -1};
    if (!game || !sim_game_definition(game)->level || !map)
        return true;
    uint32_t n = map->entity_count;
    sim_game_entity *list = calloc(n ? n : 1, sizeof *list);
    if (!list) {
        if (error)
            error->reason = "out of memory";
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const sim_map_entity *e = &map->entities[i];
        sim_game_entity *g = &list[i];
        g->classname = e->classname;
        g->role = (int32_t)e->role;
        g->has_origin = e->has_origin;
        g->origin = e->origin;
        g->angle = e->yaw;
        g->bounds = e->bounds;
        g->keys = map->keys + e->first_key;
        g->key_count = e->key_count;
        const sim_map_entity *t = named(map, sim_map_value(map, e, "target"));
        if (t && t->has_origin) {
            g->has_target = true;
            g->target = t->origin;
            g->target_angle = t->yaw;
        }
    }
    sim_game_level level = {list, n, map->unit_m, NULL};
    bool ok = sim_scene_game_level(scene, &level, error);
    free(list);
    return ok;
}
