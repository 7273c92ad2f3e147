// keel tests: 48 random walkers on each LibreQuake .map level cross no surface. MIT licence.
//
// The levels are loaded by the .map loader (brushes, CSG union), spawned
// where keel-sim spawns (tools/keel-sim/ks_common.h: the level's spawn
// markers, here its info_player_* entities) and walked by keel-sim's random
// walk with its edge guard. After every tick no character's centre may have
// moved through a triangle of the level (keel_test_crossings), and none may
// fall out of the level's bounds.
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_level.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>
#include <keel/sim_world.h>

#include "../tools/keel-sim/ks_common.h"
#include "test_support.h"

#define WALKERS 48
#define TICKS 2000

static void soak_map(const char *file, uint64_t seed)
{
    const char *path = keel_test_level_path(file);
    if (!path) {
        keel_test_warn("%s is absent: skipped", file);
        return;
    }
    sim_level level;
    sim_error err;
    cr_assert_eq(sim_level_load_map(path, NULL, &level, NULL, &err), 0, "%s", err.message);
    sim_world *world = sim_world_create(&level, NULL, &err);
    cr_assert_not_null(world, "%s", err.message);
    sim_move_settings s = sim_move_default_settings();
    sim_aabb bounds = sim_world_get_stats(world).bounds;
    sim_scene *scene = sim_scene_create(world, &s, WALKERS);
    cr_assert_not_null(scene);
    ks_spawn_area area = {&level, world, bounds, s.stand_shape, s.max_slope_cos, SIM_FX_ONE, false};
    sim_vec3 feet[WALKERS];
    ks_walker walkers[WALKERS];
    for (uint32_t i = 0; i < WALKERS; i++) {
        uint32_t id = i + 1;
        cr_assert(ks_spawn_find(&area, seed, id, feet, i, SIM_FX_MM(1200), &feet[i]), "%s: no spawn point for %u", file,
                  id);
        sim_char_state c = sim_char_spawn(id, feet[i], 0);
        cr_assert_eq(sim_scene_add_character(scene, &c), 0);
        walkers[i] = ks_walker_init(seed, id);
    }
    sim_char_state before[WALKERS];
    uint64_t crossings = 0, fell = 0;
    for (uint32_t t = 0; t < TICKS; t++) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(scene, &n);
        cr_assert_eq(n, WALKERS);
        memcpy(before, chars, sizeof before);
        for (uint32_t i = 0; i < n; i++) {
            sim_input in = ks_walker_next(&walkers[chars[i].id - 1], sim_scene_tick(scene));
            ks_guard_edges(world, bounds, &chars[i], &in);
            sim_scene_set_input(scene, chars[i].id, &in);
        }
        sim_scene_step(scene);
        chars = sim_scene_characters(scene, &n);
        int64_t first = -1;
        uint32_t crossed = keel_test_crossings(world, &s, before, chars, n, &first);
        cr_expect_eq(crossed, 0, "%s tick %u: character %u went through the level", file, t,
                     crossed ? chars[first].id : 0);
        crossings += crossed;
        for (uint32_t i = 0; i < n; i++)
            fell += chars[i].position.y < bounds.min.y;
    }
    fprintf(stderr, "%s: %d walkers x %d ticks, %llu crossings, %llu character-ticks below the level\n", file, WALKERS,
            TICKS, (unsigned long long)crossings, (unsigned long long)fell);
    cr_assert_eq(crossings, 0);
    cr_assert_eq(fell, 0);
    sim_scene_destroy(scene);
    sim_world_destroy(world);
    sim_level_free(&level);
}

Test(map_soak, lqdm1, .timeout = 1200) { soak_map("librequake/lqdm1.map", 1); }

Test(map_soak, lqdm2, .timeout = 1200) { soak_map("librequake/lqdm2_a6.map", 1); }
