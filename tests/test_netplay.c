// keel tests: server and clients on the in-memory network with a virtual
// clock: bit-exactly reproducible for a seed. MIT licence, see LICENSE.
//
// The same server core (sv_server) and prediction library (cl_client) as
// keel-server and keel-client, on net_memory hosts. Every millisecond of
// virtual time: the network is serviced, the server ticks at its deadlines,
// each client predicts at its own (slightly adjustable) clock. After every
// server tick the test records the server's state hash, so that each
// client's confirmed state can be compared with the server's at the same
// tick, bit for bit (by hash: sim_scene_hash covers every field).
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/sv_server.h>

#include "test_support.h"

#define MAX_BOTS 16
#define HASH_RING 4096u

typedef struct play {
    sim_level level;
    sim_world *world;
    sim_move_settings settings;
    net_memory *mem;
    net_host *server_host;
    sv_server *sv;
    uint64_t next_server_us;
    uint32_t nbots;
    net_host *hosts[MAX_BOTS];
    cl_client *cls[MAX_BOTS];
    cl_bot bots[MAX_BOTS];
    bool started[MAX_BOTS];
    uint64_t next_us[MAX_BOTS];
    uint64_t server_hash[HASH_RING];
    uint32_t server_hash_tick[HASH_RING];
    uint64_t confirmed_checked, confirmed_differ;
    uint32_t last_checked[MAX_BOTS];
} play;

// Bot i has the built-in platforms when bit i of client_platforms is set.
static void play_init_platforms(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up,
                                const net_memory_link *down, uint64_t seed, bool server_platforms,
                                uint32_t client_platforms)
{
    memset(p, 0, sizeof *p);
    cr_assert_eq(sim_level_builtin(&p->level), 0);
    p->world = sim_world_create(&p->level, NULL, NULL);
    cr_assert_not_null(p->world);
    p->settings = sim_move_default_settings();
    p->mem = net_memory_create(seed);
    net_host_config hc = net_host_default_config();
    p->server_host = net_memory_listen(p->mem, "server", &hc);
    cr_assert_not_null(p->server_host);
    sv_config sc = sv_default_config();
    sc.platforms = server_platforms;
    p->sv = sv_server_create(p->world, &p->level, &p->settings, &sc, p->server_host);
    cr_assert_not_null(p->sv);
    p->nbots = nbots;
    cl_config cc = cl_default_config();
    for (uint32_t i = 0; i < nbots; i++) {
        p->hosts[i] = net_memory_connect(p->mem, "server", up, down, &hc);
        cr_assert_not_null(p->hosts[i]);
        cc.platforms = (client_platforms >> i) & 1u;
        p->cls[i] = cl_client_create(p->world, &p->level, &p->settings, &cc, p->hosts[i]);
        cr_assert_not_null(p->cls[i]);
        cl_bot_init(&p->bots[i], mode, seed * 100 + i);
        p->last_checked[i] = NET_TICK_NONE;
    }
    for (uint32_t i = 0; i < HASH_RING; i++)
        p->server_hash_tick[i] = NET_TICK_NONE;
}

static void play_init(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up,
                      const net_memory_link *down, uint64_t seed)
{
    play_init_platforms(p, nbots, mode, up, down, seed, false, 0);
}

static void play_free(play *p)
{
    for (uint32_t i = 0; i < p->nbots; i++) {
        cl_client_destroy(p->cls[i]);
        net_host_destroy(p->hosts[i]);
    }
    sv_server_destroy(p->sv);
    net_host_destroy(p->server_host);
    net_memory_destroy(p->mem);
    sim_world_destroy(p->world);
    sim_level_free(&p->level);
}

static void record_server_hash(play *p)
{
    uint32_t t = sv_server_scene_tick(p->sv);
    p->server_hash[t % HASH_RING] = sim_scene_hash(sv_server_scene(p->sv));
    p->server_hash_tick[t % HASH_RING] = t;
}

// One millisecond of virtual time.
static void play_ms(play *p, bool inputs)
{
    net_memory_advance(p->mem, 1);
    uint64_t now_us = net_memory_now(p->mem) * 1000u;
    uint32_t now_ms = (uint32_t)net_memory_now(p->mem);
    uint64_t tick_us = 1000000u / (uint64_t)p->settings.tick_rate;
    if (p->next_server_us == 0)
        p->next_server_us = now_us;
    net_event ev;
    while (net_host_service(p->server_host, &ev, 0) != NET_EVENT_NONE)
        sv_server_handle(p->sv, &ev, now_us, p->next_server_us);
    while (now_us >= p->next_server_us) {
        sv_server_tick(p->sv, now_us);
        record_server_hash(p);
        p->next_server_us += tick_us;
    }
    for (uint32_t i = 0; i < p->nbots; i++) {
        cl_client *cl = p->cls[i];
        while (net_host_service(p->hosts[i], &ev, 0) != NET_EVENT_NONE) {
            if (ev.type == NET_EVENT_CONNECT)
                cl_client_hello(cl, now_ms);
            cl_client_handle(cl, &ev, now_ms);
        }
        if (cl_client_status(cl) != CL_STATUS_PLAYING)
            continue;
        // the confirmed state equals the server's at the same tick
        uint32_t c = cl_client_confirmed_tick(cl);
        if (c != p->last_checked[i] && p->server_hash_tick[c % HASH_RING] == c) {
            p->last_checked[i] = c;
            p->confirmed_checked++;
            if (sim_scene_hash(cl_client_confirmed(cl)) != p->server_hash[c % HASH_RING])
                p->confirmed_differ++;
        }
        if (!p->started[i]) {
            p->started[i] = true;
            p->next_us[i] = now_us;
        }
        uint32_t due = cl_client_take_catch_up(cl);
        while (now_us >= p->next_us[i]) {
            due++;
            p->next_us[i] += cl_client_tick_us(cl);
        }
        for (uint32_t k = 0; k < due; k++) {
            uint32_t tick = cl_client_predicted_tick(cl);
            sim_input cmd = cl_bot_command(&p->bots[i], cl_client_predicted(cl), cl_client_character(cl), &p->level,
                                           tick);
            if (!inputs) {
                memset(&cmd, 0, sizeof cmd);
                cmd.tick = tick;
            }
            cl_client_predict(cl, &cmd, now_ms);
        }
        net_host_flush(p->hosts[i]);
    }
    net_host_flush(p->server_host);
}

static void totals(const play *p, cl_stats *t)
{
    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < p->nbots; i++) {
        cl_stats s;
        cl_client_stats(p->cls[i], &s);
        for (int c = 0; c < CL_CAUSE_COUNT; c++) {
            t->own_mispredictions[c] += s.own_mispredictions[c];
            t->remote_mispredictions[c] += s.remote_mispredictions[c];
        }
        t->rollbacks += s.rollbacks;
        t->resimulated_ticks += s.resimulated_ticks;
        t->snapshots += s.snapshots;
        t->full_states += s.full_states;
        t->hash_mismatches += s.hash_mismatches;
        t->snapshots_unusable += s.snapshots_unusable;
        t->capped_ticks += s.capped_ticks;
    }
}

static void log_totals(const char *name, const play *p, const cl_stats *t)
{
    for (uint32_t i = 0; i < p->nbots; i++) {
        cl_stats s;
        cl_client_stats(p->cls[i], &s);
        if (s.last_own_field)
            cr_log_info("%s: bot %u: last own misprediction at tick %u (%s), rtt %.1f ms, margin %.2f ticks\n", name,
                        i, s.last_own_tick, s.last_own_field, s.rtt_ms, s.input_margin_q8 / 256.0);
    }
    sv_stats ss;
    sv_server_stats(p->sv, &ss);
    cr_log_info("%s: %u bots, server tick %u; own mispredictions substituted %llu remote %llu interaction %llu "
                "unexplained %llu; remote ones %llu/%llu/%llu/%llu; rollbacks %llu, resimulated %llu; snapshots %llu, "
                "full %llu, unusable %llu, hash mismatches %llu, capped %llu; confirmed states checked %llu, differing "
                "%llu; server: commands %llu, late %llu, substituted %llu, duplicates %llu\n",
                name, p->nbots, sv_server_scene_tick(p->sv), (unsigned long long)t->own_mispredictions[0],
                (unsigned long long)t->own_mispredictions[1], (unsigned long long)t->own_mispredictions[2],
                (unsigned long long)t->own_mispredictions[3], (unsigned long long)t->remote_mispredictions[0],
                (unsigned long long)t->remote_mispredictions[1], (unsigned long long)t->remote_mispredictions[2],
                (unsigned long long)t->remote_mispredictions[3], (unsigned long long)t->rollbacks,
                (unsigned long long)t->resimulated_ticks, (unsigned long long)t->snapshots,
                (unsigned long long)t->full_states, (unsigned long long)t->snapshots_unusable,
                (unsigned long long)t->hash_mismatches, (unsigned long long)t->capped_ticks,
                (unsigned long long)p->confirmed_checked, (unsigned long long)p->confirmed_differ,
                (unsigned long long)ss.commands_received, (unsigned long long)ss.commands_late,
                (unsigned long long)ss.commands_substituted, (unsigned long long)ss.commands_duplicate);
}

Test(netplay, eight_bots_apart_never_mispredict_their_own_character, .timeout = 600)
{
    net_memory_link link = {25, 0, 0, 0};
    play p;
    play_init(&p, 8, CL_BOT_RANDOM, &link, &link, 1);
    for (int ms = 0; ms < 20000; ms++)
        play_ms(&p, true);
    cl_stats t;
    totals(&p, &t);
    log_totals("apart", &p, &t);
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        cr_expect_eq(t.own_mispredictions[c], 0, "own mispredictions (%s)", cl_cause_name((cl_cause)c));
    cr_expect_eq(t.remote_mispredictions[CL_CAUSE_UNEXPLAINED], 0);
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_gt(p.confirmed_checked, 8 * 500);
    cr_expect_eq(p.confirmed_differ, 0);
    play_free(&p);
}

Test(netplay, a_lossy_jittery_link_still_never_mispredicts_the_own_character, .timeout = 600)
{
    // 150 ms round trip, 20 ms jitter, 5% loss, 1% duplication each way
    net_memory_link link = {75, 20, 50, 10};
    play p;
    play_init(&p, 8, CL_BOT_RANDOM, &link, &link, 2);
    for (int ms = 0; ms < 20000; ms++)
        play_ms(&p, true);
    cl_stats t;
    totals(&p, &t);
    log_totals("lossy", &p, &t);
    sv_stats ss;
    sv_server_stats(p.sv, &ss);
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        cr_expect_eq(t.own_mispredictions[c], 0, "own mispredictions (%s)", cl_cause_name((cl_cause)c));
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(p.confirmed_differ, 0);
    cr_expect_leq(ss.commands_late * 1000, ss.commands_received, "late commands above 0.1%%");
    play_free(&p);
}

Test(netplay, pushing_bots_mispredict_only_for_named_causes_and_converge, .timeout = 600)
{
    net_memory_link link = {40, 5, 0, 0};
    play p;
    play_init(&p, 8, CL_BOT_PUSHER, &link, &link, 3);
    for (int ms = 0; ms < 12000; ms++)
        play_ms(&p, true);
    for (int ms = 0; ms < 3000; ms++) // inputs stop: everyone stands still
        play_ms(&p, false);
    cl_stats t;
    totals(&p, &t);
    log_totals("pushers", &p, &t);
    cr_expect_eq(t.own_mispredictions[CL_CAUSE_UNEXPLAINED], 0);
    cr_expect_eq(t.remote_mispredictions[CL_CAUSE_UNEXPLAINED], 0);
    cr_expect_gt(t.own_mispredictions[CL_CAUSE_INTERACTION] + t.own_mispredictions[CL_CAUSE_REMOTE_COMMAND] +
                     t.remote_mispredictions[CL_CAUSE_REMOTE_COMMAND],
                 0, "the pushers never disturbed each other");
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(p.confirmed_differ, 0);
    // After the inputs stopped, each client's prediction equals the server
    // (their predicted scene at the server's tick is not kept; compare the
    // confirmed one, which the prediction was rebuilt from).
    for (uint32_t i = 0; i < p.nbots; i++) {
        uint32_t c = cl_client_confirmed_tick(p.cls[i]);
        cr_expect_geq(c + 16u, sv_server_scene_tick(p.sv), "client %u confirmed only up to %u", i, c);
    }
    play_free(&p);
}

// A client must simulate the server's platforms and water: one that does not
// would mispredict every snapshot, so the server refuses it at the hello with
// a reason that says what to do, and the client keeps that reason.
static const char scene_refusal[] = "simulation differs from the server's: platforms or water differ (server and "
                                    "client must both use --platforms or neither)";

Test(netplay, a_client_without_the_servers_platforms_is_refused_and_one_with_them_plays, .timeout = 600)
{
    net_memory_link link = {20, 0, 0, 0};
    play p;
    // bots 0 and 2 have the platforms, bot 1 does not
    play_init_platforms(&p, 3, CL_BOT_PLATFORMS, &link, &link, 4, true, 0x5u);
    cr_assert_eq(sim_scene_platform_count(sv_server_scene(p.sv)), 2);
    for (int ms = 0; ms < 6000; ms++)
        play_ms(&p, true);
    cr_assert_eq(cl_client_status(p.cls[1]), CL_STATUS_REFUSED);
    cr_assert_str_eq(cl_client_refusal(p.cls[1]), scene_refusal);
    for (uint32_t i = 0; i < 3; i += 2) {
        cr_assert_eq(cl_client_status(p.cls[i]), CL_STATUS_PLAYING, "bot %u", i);
        cr_assert_eq(sim_scene_platform_count(cl_client_predicted(p.cls[i])), 2);
    }
    cl_stats t;
    totals(&p, &t);
    log_totals("platforms", &p, &t);
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(t.own_mispredictions[CL_CAUSE_UNEXPLAINED], 0);
    cr_expect_gt(p.confirmed_checked, 2 * 100);
    cr_expect_eq(p.confirmed_differ, 0);
    sv_stats ss;
    sv_server_stats(p.sv, &ss);
    cr_expect_eq(ss.clients_refused, 1);
    cr_expect_eq(ss.clients_joined, 2);
    play_free(&p);
}

Test(netplay, a_client_with_platforms_is_refused_by_a_server_without, .timeout = 600)
{
    net_memory_link link = {20, 0, 0, 0};
    play p;
    play_init_platforms(&p, 2, CL_BOT_RANDOM, &link, &link, 5, false, 0x2u);
    for (int ms = 0; ms < 1000; ms++)
        play_ms(&p, true);
    cr_assert_eq(cl_client_status(p.cls[0]), CL_STATUS_PLAYING);
    cr_assert_eq(cl_client_status(p.cls[1]), CL_STATUS_REFUSED);
    cr_assert_str_eq(cl_client_refusal(p.cls[1]), scene_refusal);
    play_free(&p);
}
