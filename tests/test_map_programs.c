// keel tests: .map levels in the programs' layer: the shared loader
// (keel_app), the spawn points with their yaws (sim_map_spawns), the level
// digest of the simulation identity covering the entities, and a server
// session on levels/arena.map (its movers, water and spawn points). MIT
// licence, see LICENSE.
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/cl_client.h>
#include <keel/net_proto.h>
#include <keel/sim_level.h>
#include <keel/sv_server.h>

#include "keel_app.h"
#include "keel_session.h"
#include "test_support.h"

#define ARENA KEEL_SOURCE_DIR "/levels/arena.map"

typedef struct loaded {
    sim_level level;
    sim_map map;
    sim_world *world;
} loaded;

static void load(loaded *l, const char *path)
{
    char err[600];
    memset(l, 0, sizeof *l);
    cr_assert_eq(keel_app_load_level_map(path, "1", 'y', &l->level, &l->map, err, sizeof err), 0, "%s", err);
    l->world = sim_world_create(&l->level, NULL, NULL);
    cr_assert_not_null(l->world);
}

static void unload(loaded *l)
{
    sim_world_destroy(l->world);
    sim_level_free(&l->level);
    sim_map_free(&l->map);
}

Test(map_programs, loader_tells_map_from_obj)
{
    cr_assert(keel_app_is_map("a/b/arena.map"));
    cr_assert(keel_app_is_map("X.MAP"));
    cr_assert(!keel_app_is_map("arena.obj"));
    cr_assert(!keel_app_is_map("map"));
    cr_assert_str_eq(keel_app_level_scale("a.map", "0.12"), "0.025");
    cr_assert_eq(keel_app_level_up("a.map", 'y'), 'z');
    cr_assert_str_eq(keel_app_level_scale("a.obj", "0.12"), "0.12");
    loaded l;
    load(&l, ARENA);
    cr_assert_gt(l.map.entity_count, 0);
    cr_assert_eq(l.map.unit_m, 1638); // 0.025 m in Q16.16
    cr_assert_neq(sim_level_entity_digest(&l.level), 0);
    cr_assert_eq(sim_level_entity_digest(&l.level), sim_map_digest(&l.map));
    unload(&l);
    // The built-in level has no entities: its digest is what it always was.
    sim_level b;
    char err[600];
    cr_assert_eq(keel_app_load_level_map("builtin", "1", 'y', &b, NULL, err, sizeof err), 0);
    cr_assert_eq(sim_level_entity_digest(&b), 0);
    sim_level_free(&b);
}

Test(map_programs, spawn_points_with_yaws)
{
    loaded l;
    load(&l, ARENA);
    sim_map_spawn sp[8];
    // arena.map: four info_player_deathmatch (angles 45, 135, 225, 315) and
    // an info_player_start, which a deathmatch leaves out.
    cr_assert_eq(sim_map_spawns(&l.map, &l.level, sp, 8), 4);
    static const sim_angle yaws[4] = {SIM_ANGLE_DEG(-45), SIM_ANGLE_DEG(45), SIM_ANGLE_DEG(135), SIM_ANGLE_DEG(225)};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(sp[i].yaw, yaws[i], "spawn %d: yaw %04x", i, sp[i].yaw);
        // origin z 24 units: the feet stand on the floor at height 0
        cr_assert_eq(sp[i].feet.y, 0, "spawn %d: feet y %d", i, sp[i].feet.y);
    }
    // Quake's angle 45 looks along file (+x, +y): engine (+x, -z). The
    // first point (-384, -384) is at engine (-9.6 m, 9.6 m) and looks
    // toward the middle.
    cr_assert_eq(sp[0].feet.x, -SIM_FX_MM(9600));
    cr_assert_eq(sp[0].feet.z, SIM_FX_MM(9600));
    cr_assert_gt(-sim_angle_sin(sp[0].yaw), 0); // view x = -sin yaw
    cr_assert_lt(-sim_angle_cos(sp[0].yaw), 0); // view z = -cos yaw
    cr_assert_eq(sim_map_spawns(&l.map, &l.level, NULL, 0), 4);
    cr_assert_eq(sim_map_spawns(NULL, &l.level, NULL, 0), 0);
    unload(&l);
}

// Writes `text` to `name` in `dir` and returns its path.
static const char *temp_map(const char *dir, const char *name, const char *text)
{
    const char *path = keel_test_dir_file(dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

Test(map_programs, identity_covers_entities)
{
    FILE *f = fopen(ARENA, "rb");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    // Move one item: the same triangles, other entities.
    char *item = strstr(text, "\"item_health\"");
    cr_assert_not_null(item);
    char *origin = strstr(item, "\"origin\" \"");
    cr_assert_not_null(origin);
    origin += strlen("\"origin\" \"");
    *origin = *origin == '1' ? '2' : '1';
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "map_programs");
    loaded a, b;
    load(&a, ARENA);
    load(&b, temp_map(dir, "arena.map", text));
    keel_test_dir_remove(dir);
    cr_assert_eq(a.level.triangle_count, b.level.triangle_count);
    cr_assert_neq(sim_level_entity_digest(&a.level), sim_level_entity_digest(&b.level));
    cr_assert_neq(net_level_digest(&a.level), net_level_digest(&b.level));
    // A client on the other file is refused for its level.
    sim_move_settings s = sim_move_default_settings();
    cl_config ca = cl_default_config(), cb = cl_default_config();
    ca.map = &a.map;
    cb.map = &b.map;
    net_sim_identity ia = cl_client_identity_for(a.world, &a.level, &s, &ca);
    net_sim_identity ib = cl_client_identity_for(b.world, &b.level, &s, &cb);
    const char *why = NULL;
    cr_assert(!net_identity_equal(&ia, &ib, &why));
    cr_assert_str_eq(why, "level differs");
    // Without the map's movers and water the scene differs.
    cl_config none = cl_default_config();
    net_sim_identity in = cl_client_identity_for(a.world, &a.level, &s, &none);
    cr_assert(!net_identity_equal(&ia, &in, &why));
    cr_assert_neq(ia.scene_digest, in.scene_digest);
    unload(&a);
    unload(&b);
}

typedef struct joins_seen {
    sim_map_spawn spawns[8];
    uint32_t spawn_count;
    uint32_t joins, at_spawn;
} joins_seen;

static void on_tick(void *ctx, const rec_tick *t, const sim_scene *after)
{
    (void)after;
    joins_seen *j = ctx;
    for (uint32_t i = 0; i < t->join_count; i++) {
        const sim_char_state *st = &t->joins[i];
        j->joins++;
        for (uint32_t k = 0; k < j->spawn_count; k++)
            if (st->yaw == j->spawns[k].yaw && sim_v3_eq(st->position, j->spawns[k].feet))
                j->at_spawn++;
    }
}

Test(map_programs, server_session_on_arena)
{
    loaded l;
    load(&l, ARENA);
    sim_move_settings s = sim_move_default_settings();
    keel_session_config sc = keel_session_default_config();
    sc.bots = 4;
    sc.ticks = 256;
    sc.platforms = false;
    sc.map = &l.map;
    keel_session *ks = keel_session_create(l.world, &l.level, &s, &sc);
    cr_assert_not_null(ks);
    sv_server *sv = keel_session_server(ks);
    joins_seen j;
    memset(&j, 0, sizeof j);
    j.spawn_count = sim_map_spawns(&l.map, &l.level, j.spawns, 8);
    sv_server_set_observer(sv, on_tick, &j);
    const sim_scene *scene = sv_server_scene(sv);
    cr_assert_eq(sim_scene_platform_count(scene), 2); // arena.map's func_plat and func_train
    cr_assert_eq(sim_scene_water_count(scene), 1);
    keel_session_run(ks);
    keel_session_stats st;
    keel_session_stats_get(ks, &st);
    cr_assert_eq(j.joins, 4);
    // Four spawn points for four players: each joins on one, with its yaw.
    cr_assert_eq(j.at_spawn, 4, "%u of %u joins on a spawn point", j.at_spawn, j.joins);
    cr_assert_eq(st.confirmed_differ, 0);
    cr_assert_eq(st.hash_mismatches, 0);
    cr_assert_gt(st.confirmed_checked, 0);
    keel_session_destroy(ks);
    unload(&l);
}
