// keel: the scene's lifetime and contents: create and destroy, adding and
// removing characters, platforms and water, commands, and what the scene
// shows of itself (its characters, its hash, a collider). MIT licence.
//
// Everything a tick depends on is the tick number and the characters' states
// (kept in id order), plus the fixed platform paths and water boxes. All
// memory is taken in create and the add functions; a step allocates nothing.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "world_near.h"

sim_scene *sim_scene_create(const sim_world *world, const sim_move_settings *settings, uint32_t max_characters)
{
    if (!world || !sim_move_settings_check(settings, NULL) || max_characters > MAX_CHARACTERS)
        return NULL;
    sim_scene *sc = calloc(1, sizeof *sc);
    if (!sc)
        return NULL;
    size_t n = max_characters ? max_characters : 1;
    sc->world = world;
    sc->settings = *settings;
    sc->dt = sim_move_dt(settings);
    sc->max_chars = max_characters;
    sc->batch = SIM_SCENE_DEFAULT_BATCH;
    sc->chars = calloc(n, sizeof *sc->chars);
    sc->inputs = calloc(n, sizeof *sc->inputs);
    sc->has_input = calloc(n, sizeof *sc->has_input);
    sc->bodies = calloc(n, sizeof *sc->bodies);
    sc->bodies_next = calloc(n, sizeof *sc->bodies_next);
    sc->order = calloc(n, sizeof *sc->order);
    sc->scratch = calloc(n, sizeof *sc->scratch);
    sc->keys = calloc(n, sizeof *sc->keys);
    sc->span = calloc(2 * n, sizeof *sc->span);
    sc->views = calloc(n + 1, sizeof *sc->views);
    sc->near_keep = calloc(n, sizeof *sc->near_keep);
    sc->alone = calloc(n, sizeof *sc->alone);
    sc->near_count = calloc(n, sizeof *sc->near_count);
    sc->step_box = calloc(n, sizeof *sc->step_box);
    sc->near_body = calloc(n * BODY_NEAR_CAPACITY, sizeof *sc->near_body);
    size_t buckets = 2;
    while (buckets < 2 * n)
        buckets *= 2;
    sc->grid_mask = (uint32_t)(buckets - 1);
    sc->grid_head = calloc(buckets, sizeof *sc->grid_head);
    sc->grid_built = calloc(buckets, sizeof *sc->grid_built);
    sc->grid_next = calloc(n, sizeof *sc->grid_next);
    sc->grid_prev = calloc(n, sizeof *sc->grid_prev);
    sc->grid_cell = calloc(2 * n, sizeof *sc->grid_cell);
    sc->feet_offset = calloc(n, sizeof *sc->feet_offset);
    sc->push = calloc(3 * n, sizeof *sc->push);
    sc->sep_flag = calloc(n, sizeof *sc->sep_flag);
    sc->scan_other = calloc(SCAN_SLOTS * n, sizeof *sc->scan_other);
    sc->scan_push = calloc(SCAN_SLOTS * n, sizeof *sc->scan_push);
    sc->scan_count = calloc(n, sizeof *sc->scan_count);
    sc->scan_mark = calloc(n, sizeof *sc->scan_mark);
    sc->reloc_feet = calloc(4 * n, sizeof *sc->reloc_feet);
    sc->reloc_mark = calloc(n, sizeof *sc->reloc_mark);
    if (!sc->chars || !sc->inputs || !sc->has_input || !sc->bodies || !sc->bodies_next || !sc->order || !sc->scratch ||
        !sc->keys || !sc->span || !sc->views || !sc->near_keep || !sc->alone || !sc->near_count || !sc->step_box ||
        !sc->near_body || !sc->grid_head || !sc->grid_built || !sc->grid_next || !sc->grid_prev || !sc->grid_cell ||
        !sc->feet_offset || !sc->push || !sc->sep_flag || !sc->scan_other || !sc->scan_push || !sc->scan_count ||
        !sc->scan_mark || !sc->reloc_feet || !sc->reloc_mark || !scene_respawn_init(sc)) {
        sim_scene_destroy(sc);
        return NULL;
    }
    return sc;
}

void sim_scene_destroy(sim_scene *sc)
{
    if (!sc)
        return;
    free(sc->chars);
    free(sc->inputs);
    free(sc->has_input);
    free(sc->bodies);
    free(sc->bodies_next);
    free(sc->order);
    free(sc->scratch);
    free(sc->keys);
    free(sc->span);
    free(sc->views);
    free(sc->near_keep);
    free(sc->alone);
    free(sc->near_count);
    free(sc->step_box);
    free(sc->near_body);
    free(sc->grid_head);
    free(sc->grid_built);
    free(sc->grid_next);
    free(sc->grid_prev);
    free(sc->grid_cell);
    free(sc->feet_offset);
    free(sc->push);
    free(sc->sep_flag);
    free(sc->reloc_feet);
    free(sc->reloc_mark);
    free(sc->scan_other);
    free(sc->scan_push);
    free(sc->scan_count);
    free(sc->scan_mark);
    free(sc->platforms);
    free(sc->water);
    free(sc->spawns);
    scene_game_free(sc);
    free(sc);
}

int sim_scene_add_platform(sim_scene *sc, const sim_platform_def *def)
{
    // Platform and character ids share the feature space of hits (and a
    // character's ground_object), so one id may not name both.
    if (!scene_platform_valid(def) || scene_find_platform(sc, def->id) || scene_char_index(sc, def->id) >= 0)
        return -1;
    scene_platform *grown = realloc(sc->platforms, (sc->platform_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    sc->platforms = grown;
    uint32_t at = scene_platform_lower_bound(sc, def->id);
    memmove(&grown[at + 1], &grown[at], (sc->platform_count - at) * sizeof *grown);
    memset(&grown[at], 0, sizeof *grown);
    grown[at].def = *def;
    sc->platform_count++;
    return 0;
}

int sim_scene_add_water(sim_scene *sc, sim_aabb volume)
{
    if (!sim_v3_in_world(volume.min) || !sim_v3_in_world(volume.max) || volume.min.x > volume.max.x ||
        volume.min.y > volume.max.y || volume.min.z > volume.max.z)
        return -1;
    sim_aabb *grown = realloc(sc->water, (sc->water_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    sc->water = grown;
    sc->water[sc->water_count++] = volume;
    return 0;
}

int sim_scene_add_character(sim_scene *sc, const sim_char_state *state)
{
    uint32_t id = state->id;
    if (sc->count >= sc->max_chars || id == 0 || (id & SIM_FEATURE_OBJECT_BIT) || scene_char_index(sc, id) >= 0 ||
        scene_find_platform(sc, id) || !scene_char_check(sc, state, NULL))
        return -1;
    uint32_t at = scene_char_lower_bound(sc, id);
    if (sc->game)
        scene_game_insert(sc, at);
    uint32_t tail = sc->count - at;
    memmove(&sc->chars[at + 1], &sc->chars[at], tail * sizeof *sc->chars);
    memmove(&sc->inputs[at + 1], &sc->inputs[at], tail * sizeof *sc->inputs);
    memmove(&sc->has_input[at + 1], &sc->has_input[at], tail * sizeof *sc->has_input);
    sc->chars[at] = *state;
    sc->has_input[at] = 0;
    sc->count++;
    sc->sep_clean = false;
    sc->reloc_valid = false; // indices shift: the last step's relocations are gone
    return 0;
}

bool sim_scene_remove_character(sim_scene *sc, uint32_t id)
{
    int64_t i = scene_char_index(sc, id);
    if (i < 0)
        return false;
    uint32_t at = (uint32_t)i, tail = sc->count - at - 1;
    if (sc->game)
        scene_game_erase(sc, at);
    memmove(&sc->chars[at], &sc->chars[at + 1], tail * sizeof *sc->chars);
    memmove(&sc->inputs[at], &sc->inputs[at + 1], tail * sizeof *sc->inputs);
    memmove(&sc->has_input[at], &sc->has_input[at + 1], tail * sizeof *sc->has_input);
    sc->count--;
    sc->reloc_valid = false;
    return true;
}

bool sim_scene_set_input(sim_scene *sc, uint32_t id, const sim_input *input)
{
    int64_t i = scene_char_index(sc, id);
    if (i < 0)
        return false;
    sc->inputs[i] = *input;
    sc->has_input[i] = 1;
    return true;
}

uint32_t sim_scene_tick(const sim_scene *sc) { return sc->tick; }
uint32_t sim_scene_capacity(const sim_scene *sc) { return sc->max_chars; }
uint32_t sim_scene_platform_count(const sim_scene *sc) { return sc->platform_count; }
const sim_platform_def *sim_scene_platform(const sim_scene *sc, uint32_t index)
{
    return index < sc->platform_count ? &sc->platforms[index].def : NULL;
}
uint32_t sim_scene_water_count(const sim_scene *sc) { return sc->water_count; }
sim_aabb sim_scene_water(const sim_scene *sc, uint32_t index)
{
    sim_aabb none = {{0, 0, 0}, {0, 0, 0}};
    return index < sc->water_count ? sc->water[index] : none;
}

const sim_char_state *sim_scene_characters(const sim_scene *sc, uint32_t *count)
{
    if (count)
        *count = sc->count;
    return sc->chars;
}

const sim_char_state *sim_scene_find(const sim_scene *sc, uint32_t id)
{
    int64_t i = scene_char_index(sc, id);
    return i < 0 ? NULL : &sc->chars[i];
}

uint64_t sim_scene_hash(const sim_scene *sc)
{
    uint64_t h = sim_hash_u32(SIM_HASH_SEED, sc->tick);
    for (uint32_t i = 0; i < sc->count; i++)
        h = sim_hash_char(h, &sc->chars[i]);
    return sc->game ? scene_game_hash(sc, h) : h;
}

sim_collider sim_scene_collider(sim_scene *sc, uint32_t self)
{
    scene_build_platforms(sc, sc->tick, false);
    scene_build_bodies(sc, false);
    int64_t i = scene_char_index(sc, self);
    scene_view *v = &sc->views[i < 0 ? sc->max_chars : (uint32_t)i];
    *v = (scene_view){sc, i, 0, true, NULL, NULL};
    return scene_view_collider(v);
}
