// keel tests: where a joining player looks. keel-server turns each new
// character toward the longest clear view from its spawn spot
// (sim_spawn_yaw_open), so a player on the built-in level starts looking
// into the open level, not at the 60-degree ramp 10 m before the spawn
// marker (where the old rule, the middle of the level, turned the first
// player). MIT licence.
#include <criterion/criterion.h>
#include <stdio.h>

#include <keel/sim_angle.h>
#include <keel/sim_spawn.h>

#include "keel_session.h"
#include "test_support.h"

/// The least view a joining player on the built-in level has (docs/spawns.md).
#define LEAST_VIEW_M 15

static sim_level level;
static sim_world *world;

static void setup(void) { world = keel_test_builtin_world(&level); }
static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(spawn_view, .init = setup, .fini = teardown, .timeout = 240);

// The distance (m) to the level along yaw from the feet: the shorter of
// level rays 0.5 m and 1.5 m up, up to 40 m (40 when clear).
static double view_m(sim_vec3 feet, sim_angle yaw)
{
    const sim_fx reach = SIM_FX_INT(40);
    sim_vec3 d = sim_v3_scale(sim_angle_dir(yaw, 0), reach);
    double least = 40.0;
    for (int i = 0; i < 2; i++) {
        sim_ray_input in = {sim_v3(feet.x, feet.y + SIM_FX_MM(i ? 1500 : 500), feet.z), d};
        sim_ray_result r;
        if (sim_world_raycast(world, &in, &r) && r.hit) {
            double m = 40.0 * r.fraction / 65536.0;
            least = m < least ? m : least;
        }
    }
    return least;
}

typedef struct joins_seen {
    uint32_t count;
    sim_char_state states[16];
} joins_seen;

static void observe(void *ctx, const rec_tick *t, const sim_scene *after)
{
    (void)after;
    joins_seen *j = ctx;
    for (uint32_t i = 0; i < t->join_count && j->count < 16; i++)
        j->states[j->count++] = t->joins[i];
}

Test(spawn_view, joining_players_on_the_builtin_level_look_into_the_open)
{
    keel_session_config sc = keel_session_default_config();
    sc.bots = 8;
    sc.full_clients = 0;
    sc.ticks = 512;
    sim_move_settings settings = sim_move_default_settings();
    keel_session *s = keel_session_create(world, &level, &settings, &sc);
    cr_assert_not_null(s);
    joins_seen seen = {0};
    sv_server_set_observer(keel_session_server(s), observe, &seen);
    keel_session_run(s);
    keel_session_destroy(s);
    cr_assert_eq(seen.count, 8u, "%u of 8 bots joined", seen.count);
    for (uint32_t i = 0; i < seen.count; i++) {
        const sim_char_state *c = &seen.states[i];
        double m = view_m(c->position, c->yaw);
        cr_log_info("character %u at (%.2f, %.2f, %.2f), yaw %u: view %.2f m\n", c->id, c->position.x / 65536.0,
                    c->position.y / 65536.0, c->position.z / 65536.0, (unsigned)c->yaw, m);
        cr_expect_geq(m, LEAST_VIEW_M, "character %u looks at the level %.2f m away", c->id, m);
    }
}

// Ties between clear views go to the way given (the middle of the level);
// a view the level blocks loses to a clear one whatever the way given.
Test(spawn_view, the_open_yaw_prefers_the_clearer_view_then_the_way_given)
{
    const sim_marker *m = sim_level_find_marker(&level, "floor_center");
    cr_assert_not_null(m);
    sim_vec3 feet = sim_v3(m->position.x, m->position.y + SIM_FX_MM(5), m->position.z);
    // (0, 0): the floor's lane along x is clear both ways, so is -z
    cr_expect_eq(sim_spawn_yaw_open(world, feet, -SIM_FX_ONE, 0), SIM_ANGLE_QUARTER);                  // -x
    cr_expect_eq(sim_spawn_yaw_open(world, feet, SIM_FX_ONE, 0), (sim_angle)(3u * SIM_ANGLE_QUARTER)); // +x
    cr_expect_eq(sim_spawn_yaw_open(world, feet, 0, -SIM_FX_ONE), 0);                                  // -z
    // the spawn marker: straight to the middle (+z) the 60-degree ramp stands 10 m away
    const sim_marker *sp = sim_level_find_marker(&level, "spawn");
    cr_assert_not_null(sp);
    sim_vec3 at = sim_v3(sp->position.x, sp->position.y + SIM_FX_MM(5), sp->position.z);
    cr_assert_lt(view_m(at, SIM_ANGLE_HALF), 11.0);
    sim_angle yaw = sim_spawn_yaw_open(world, at, 0, SIM_FX_ONE);
    cr_expect_geq(view_m(at, yaw), LEAST_VIEW_M, "yaw %u", (unsigned)yaw);
}
