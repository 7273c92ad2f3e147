// keel tests: the in-memory play harness (play.h). MIT licence, see LICENSE.
#include "play.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Bot i has the built-in platforms when bit i of client_platforms is set.
static void init(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up, const net_memory_link *down,
                 uint64_t seed, bool server_platforms, uint32_t client_platforms, const sim_game *server_game,
                 const sim_game *client_game, uint32_t lag_ms)
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
    sc.game = server_game;
    sc.lag_compensation_ms = lag_ms;
    p->game = server_game;
    p->sv = sv_server_create(p->world, &p->level, &p->settings, &sc, p->server_host);
    cr_assert_not_null(p->sv);
    p->nbots = nbots;
    cl_config cc = cl_default_config();
    cc.game = client_game;
    for (uint32_t i = 0; i < nbots; i++) {
        p->hosts[i] = net_memory_connect(p->mem, "server", up, down, &hc);
        cr_assert_not_null(p->hosts[i]);
        cc.platforms = (client_platforms >> i) & 1u;
        p->cls[i] = cl_client_create(p->world, &p->level, &p->settings, &cc, p->hosts[i]);
        cr_assert_not_null(p->cls[i]);
        cl_bot_init(&p->bots[i], mode, seed * 100 + i);
        p->last_checked[i] = NET_TICK_NONE;
    }
    for (uint32_t i = 0; i < PLAY_HASH_RING; i++)
        p->server_hash_tick[i] = NET_TICK_NONE;
}

void play_init_platforms(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up,
                         const net_memory_link *down, uint64_t seed, bool server_platforms, uint32_t client_platforms)
{
    init(p, nbots, mode, up, down, seed, server_platforms, client_platforms, NULL, NULL, 0);
}

void play_init_game(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *link, uint64_t seed,
                    const sim_game *server_game, const sim_game *client_game)
{
    init(p, nbots, mode, link, link, seed, false, 0, server_game, client_game, sv_default_config().lag_compensation_ms);
}

void play_init_game_lag(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *link, uint64_t seed,
                        const sim_game *game, uint32_t lag_compensation_ms)
{
    init(p, nbots, mode, link, link, seed, false, 0, game, game, lag_compensation_ms);
}

void play_init(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up, const net_memory_link *down,
               uint64_t seed)
{
    play_init_platforms(p, nbots, mode, up, down, seed, false, 0);
}

void play_free(play *p)
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
    p->server_hash[t % PLAY_HASH_RING] = sim_scene_hash(sv_server_scene(p->sv));
    p->server_hash_tick[t % PLAY_HASH_RING] = t;
}

// One millisecond of virtual time.
void play_ms(play *p, bool inputs)
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
        if (now_ms < p->stall_until_ms[i] || (p->frame_ms[i] > 1 && now_ms % p->frame_ms[i] != 0))
            continue;
        while (net_host_service(p->hosts[i], &ev, 0) != NET_EVENT_NONE) {
            if (ev.type == NET_EVENT_CONNECT)
                cl_client_hello(cl, now_ms);
            cl_client_handle(cl, &ev, now_ms);
        }
        if (cl_client_status(cl) != CL_STATUS_PLAYING)
            continue;
        // the confirmed state equals the server's at the same tick
        uint32_t c = cl_client_confirmed_tick(cl);
        if (c != p->last_checked[i] && p->server_hash_tick[c % PLAY_HASH_RING] == c) {
            p->last_checked[i] = c;
            p->confirmed_checked++;
            if (sim_scene_hash(cl_client_confirmed(cl)) != p->server_hash[c % PLAY_HASH_RING])
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
            sim_input cmd =
                cl_bot_command(&p->bots[i], cl_client_predicted(cl), cl_client_character(cl), &p->level, tick);
            if (!inputs) {
                memset(&cmd, 0, sizeof cmd);
                cmd.tick = tick;
            }
            if (p->game_command) {
                uint8_t game_cmd[SIM_GAME_COMMAND_MAX_BYTES];
                p->game_command(p, i, tick, &cmd, game_cmd);
                cl_client_predict_game(cl, &cmd, game_cmd, now_ms);
            } else {
                cl_client_predict(cl, &cmd, now_ms);
            }
        }
        net_host_flush(p->hosts[i]);
    }
    net_host_flush(p->server_host);
}

void play_totals(const play *p, cl_stats *t)
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
        t->snapshots_kept += s.snapshots_kept;
        t->snapshots_kept_applied += s.snapshots_kept_applied;
        t->snapshots_dropped += s.snapshots_dropped;
        t->held_ticks += s.held_ticks;
        t->rollbacks_deferred += s.rollbacks_deferred;
        t->confirms_coalesced += s.confirms_coalesced;
    }
}

void play_log_totals(const char *name, const play *p, const cl_stats *t)
{
    for (uint32_t i = 0; i < p->nbots; i++) {
        cl_stats s;
        cl_client_stats(p->cls[i], &s);
        if (s.last_own_field)
            cr_log_info("%s: bot %u: last own misprediction at tick %u (%s), rtt %.1f ms, margin %.2f ticks\n", name, i,
                        s.last_own_tick, s.last_own_field, s.rtt_ms, s.input_margin_q8 / 256.0);
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
