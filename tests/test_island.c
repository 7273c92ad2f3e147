// keel tests: island rollback (client/src/cl_island.c) against the full
// re-simulation, its sync test (cl_config.island_check). 64 moving bots on
// the built-in level with its platforms, on the in-memory network with a
// virtual clock (exactly reproducible): two prediction clients with the sync
// test on, one on a 25 ms link and one on a 60 ms link with jitter and 3%
// loss each way, and 62 light clients (cl_light) whose random-walk commands
// are made from the server's scene (a light client keeps none). Every
// rollback of the two is re-simulated in full as well and compared tick by
// tick: no character state may differ, the islands must be smaller than the
// crowd, and the confirmed states must match the server's hashes. Counts
// only, no wall-clock figure. MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/cl_light.h>
#include <keel/sv_server.h>

#define FULL 2u
#define LIGHT 62u

typedef struct rig {
    sim_level level;
    sim_world *world;
    sim_move_settings settings;
    net_memory *mem;
    net_host *server_host;
    sv_server *sv;
    uint64_t next_server_us;
    net_host *full_hosts[FULL], *light_hosts[LIGHT];
    cl_client *cls[FULL];
    cl_bot full_bots[FULL], light_bots[LIGHT];
    bool started[FULL];
    uint64_t next_us[FULL];
    cl_light lights[LIGHT];
} rig;

static void rig_init(rig *r)
{
    memset(r, 0, sizeof *r);
    cr_assert_eq(sim_level_builtin(&r->level), 0);
    r->world = sim_world_create(&r->level, NULL, NULL);
    cr_assert_not_null(r->world);
    r->settings = sim_move_default_settings();
    r->mem = net_memory_create(21);
    net_host_config hc = net_host_default_config();
    r->server_host = net_memory_listen(r->mem, "server", &hc);
    cr_assert_not_null(r->server_host);
    sv_config sc = sv_default_config();
    sc.platforms = true;
    r->sv = sv_server_create(r->world, &r->level, &r->settings, &sc, r->server_host);
    cr_assert_not_null(r->sv);
    cl_config cc = cl_default_config();
    cc.platforms = true;
    cc.island_check = true;
    const net_memory_link links[FULL] = {{25, 0, 0, 0}, {60, 15, 30, 0}};
    for (uint32_t i = 0; i < FULL; i++) {
        r->full_hosts[i] = net_memory_connect(r->mem, "server", &links[i], &links[i], &hc);
        cr_assert_not_null(r->full_hosts[i]);
        r->cls[i] = cl_client_create(r->world, &r->level, &r->settings, &cc, r->full_hosts[i]);
        cr_assert_not_null(r->cls[i]);
        cl_bot_init(&r->full_bots[i], CL_BOT_RANDOM, 500 + i);
        r->full_bots[i].leash = SIM_FX_INT(4);
    }
    net_sim_identity id = cl_client_identity(r->cls[0]);
    const net_memory_link light_link = {25, 5, 10, 0};
    for (uint32_t i = 0; i < LIGHT; i++) {
        r->light_hosts[i] = net_memory_connect(r->mem, "server", &light_link, &light_link, &hc);
        cr_assert_not_null(r->light_hosts[i]);
        cl_light_init(&r->lights[i], &id, cc.ticks_per_packet, cc.redundancy_packets);
        // a few ride the platforms, the rest walk about
        cl_bot_init(&r->light_bots[i], i % 8 == 0 ? CL_BOT_PLATFORMS : CL_BOT_RANDOM, 700 + i);
        r->light_bots[i].leash = SIM_FX_INT(4);
    }
}

static void rig_free(rig *r)
{
    for (uint32_t i = 0; i < FULL; i++) {
        cl_client_destroy(r->cls[i]);
        net_host_destroy(r->full_hosts[i]);
    }
    for (uint32_t i = 0; i < LIGHT; i++)
        net_host_destroy(r->light_hosts[i]);
    sv_server_destroy(r->sv);
    net_host_destroy(r->server_host);
    net_memory_destroy(r->mem);
    sim_world_destroy(r->world);
    sim_level_free(&r->level);
}

static void full_ms(rig *r, uint32_t i, uint64_t now_us, uint32_t now_ms)
{
    cl_client *cl = r->cls[i];
    net_event ev;
    while (net_host_service(r->full_hosts[i], &ev, 0) != NET_EVENT_NONE) {
        if (ev.type == NET_EVENT_CONNECT)
            cl_client_hello(cl, now_ms);
        cl_client_handle(cl, &ev, now_ms);
    }
    if (cl_client_status(cl) != CL_STATUS_PLAYING)
        return;
    if (!r->started[i]) {
        r->started[i] = true;
        r->next_us[i] = now_us;
    }
    uint32_t due = cl_client_take_catch_up(cl);
    while (now_us >= r->next_us[i]) {
        due++;
        r->next_us[i] += cl_client_tick_us(cl);
    }
    for (uint32_t k = 0; k < due; k++) {
        uint32_t tick = cl_client_predicted_tick(cl);
        sim_input cmd =
            cl_bot_command(&r->full_bots[i], cl_client_predicted(cl), cl_client_character(cl), &r->level, tick);
        cl_client_predict(cl, &cmd, now_ms);
    }
    net_host_flush(r->full_hosts[i]);
}

static void light_ms(rig *r, uint32_t i, uint32_t now_ms)
{
    cl_light *l = &r->lights[i];
    net_event ev;
    while (net_host_service(r->light_hosts[i], &ev, 0) != NET_EVENT_NONE) {
        if (ev.type == NET_EVENT_CONNECT)
            cl_light_hello(l, r->light_hosts[i], now_ms);
        else
            cl_light_handle(l, &ev, now_ms);
    }
    if (l->status != CL_LIGHT_PLAYING)
        return;
    uint32_t target = cl_light_target_tick(l, now_ms);
    while (l->next_tick <= target) {
        sim_input cmd =
            cl_bot_command(&r->light_bots[i], sv_server_scene(r->sv), l->character, &r->level, l->next_tick);
        cl_light_command(l, &cmd);
    }
    cl_light_send(l, r->light_hosts[i], now_ms);
    net_host_flush(r->light_hosts[i]);
}

static void rig_ms(rig *r)
{
    net_memory_advance(r->mem, 1);
    uint64_t now_us = net_memory_now(r->mem) * 1000u;
    uint32_t now_ms = (uint32_t)net_memory_now(r->mem);
    uint64_t tick_us = 1000000u / (uint64_t)r->settings.tick_rate;
    if (r->next_server_us == 0)
        r->next_server_us = now_us;
    net_event ev;
    while (net_host_service(r->server_host, &ev, 0) != NET_EVENT_NONE)
        sv_server_handle(r->sv, &ev, now_us, r->next_server_us);
    while (now_us >= r->next_server_us) {
        sv_server_tick(r->sv, now_us);
        r->next_server_us += tick_us;
    }
    for (uint32_t i = 0; i < FULL; i++)
        full_ms(r, i, now_us, now_ms);
    for (uint32_t i = 0; i < LIGHT; i++)
        light_ms(r, i, now_ms);
    net_host_flush(r->server_host);
}

Test(island, rollback_on_islands_matches_the_full_resimulation, .timeout = 600)
{
    rig r;
    rig_init(&r);
    for (uint32_t ms = 0; ms < 3500; ms++)
        rig_ms(&r);
    uint32_t characters;
    sim_scene_characters(sv_server_scene(r.sv), &characters);
    cr_expect_eq(characters, FULL + LIGHT, "characters on the server: %u", characters);
    cl_stats t;
    memset(&t, 0, sizeof t);
    for (uint32_t i = 0; i < FULL; i++) {
        cl_stats s;
        cl_client_stats(r.cls[i], &s);
        cr_expect_eq(cl_client_status(r.cls[i]), CL_STATUS_PLAYING, "client %u not playing", i);
        cr_log_info("client %u: %llu rollbacks, %llu on islands (%llu checked, %llu states differed), %llu "
                    "characters re-simulated in all (%.1f per rollback), %llu island retries, %llu snapshots lost\n",
                    i, (unsigned long long)s.rollbacks, (unsigned long long)s.island_rollbacks,
                    (unsigned long long)s.island_checks, (unsigned long long)s.island_check_differences,
                    (unsigned long long)s.resimulated_characters,
                    s.rollbacks ? (double)s.resimulated_characters / (double)s.rollbacks : 0.0,
                    (unsigned long long)s.island_retries, (unsigned long long)s.snapshot_packets_lost);
        cr_expect_gt(s.island_checks, 30, "client %u: too few island rollbacks checked", i);
        t.rollbacks += s.rollbacks;
        t.island_rollbacks += s.island_rollbacks;
        t.island_checks += s.island_checks;
        t.island_check_differences += s.island_check_differences;
        t.resimulated_characters += s.resimulated_characters;
        t.hash_mismatches += s.hash_mismatches;
        t.snapshot_packets_lost += s.snapshot_packets_lost;
        t.own_mispredictions[CL_CAUSE_UNEXPLAINED] += s.own_mispredictions[CL_CAUSE_UNEXPLAINED];
        t.remote_mispredictions[CL_CAUSE_UNEXPLAINED] += s.remote_mispredictions[CL_CAUSE_UNEXPLAINED];
    }
    cr_expect_eq(t.island_check_differences, 0, "island rollback differs from the full re-simulation");
    cr_expect_eq(t.island_checks, t.island_rollbacks);
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(t.own_mispredictions[CL_CAUSE_UNEXPLAINED] + t.remote_mispredictions[CL_CAUSE_UNEXPLAINED], 0);
    cr_expect_gt(t.snapshot_packets_lost, 0, "the lossy link lost nothing");
    // Most rollbacks on islands, and islands well short of the crowd.
    cr_expect_geq(t.island_rollbacks * 10, t.rollbacks * 9, "%llu of %llu rollbacks on islands",
                  (unsigned long long)t.island_rollbacks, (unsigned long long)t.rollbacks);
    cr_expect_leq(t.resimulated_characters * 2, t.rollbacks * characters,
                  "%llu characters re-simulated over %llu rollbacks of %u",
                  (unsigned long long)t.resimulated_characters, (unsigned long long)t.rollbacks, characters);
    rig_free(&r);
}
