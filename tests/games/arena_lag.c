// keel tests: keel-arena's lag compensation in a session on the in-memory
// network (tests/support/play.h, a virtual clock: exactly reproducible),
// part of test_game_net. Shooters fire the rail at each other through
// latency and 2% loss; every shot a shooter's client showed as a hit the
// server confirms, and every miss as a miss (bench/common/bench_hits.h
// compares them tick by tick); a view older than the bound is counted and
// rebuilt from the oldest state the bound allows. MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <string.h>

#include <keel/sim_game.h>
#include <keel/sv_server.h>

#include "arena.h"
#include "bench_hits.h"
#include "play.h"
#include "test_support.h"

#define SHOOTERS 4u
#ifdef KEEL_SANITIZED_BUILD
#define LAG_SESSION_MS 2500u
#else
#define LAG_SESSION_MS 5000u
#endif

static hits_watch watch;

// Fires the rail whenever it can (bench/common/bench_hits.c aims it); the
// movement is cl_bot's random walk.
static void shooter(play *p, uint32_t i, uint32_t tick, sim_input *in, void *command)
{
    cl_client *cl = p->cls[i];
    hits_after_predict(&watch, i, cl); // the previous tick's shot, as shown
    hits_before_predict(&watch, i, cl);
    arena_command *c = command;
    memset(c, 0, sizeof *c);
    c->fire_rail = 1;
    hits_aim(cl, tick * 31u + i, in);
}

static void session(uint32_t one_way_ms, uint32_t bound_ms, sv_stats *ss, cl_stats *cs)
{
    static arena_def d;
    arena_settings settings = hits_arena_settings();
    arena_def_init(&d, &settings);
    sim_game *g = sim_game_create(&d.def, NULL);
    cr_assert_not_null(g);
    static play p;
    const net_memory_link link = {one_way_ms, 0, 20, 0}; // 2% loss each way
    play_init_game_lag(&p, SHOOTERS, CL_BOT_RANDOM, &link, 41, g, bound_ms);
    p.game_command = shooter;
    for (uint32_t i = 0; i < SHOOTERS; i++)
        p.bots[i].leash = SIM_FX_INT(4);
    // (without compensation the shots are sorted by the default bound)
    hits_watch_init(&watch, SHOOTERS, d.settings.rail_interval, (bound_ms ? bound_ms : 400u) * 64u / 1000u);
    uint32_t ran = sv_server_scene_tick(p.sv);
    for (uint32_t ms = 0; ms < LAG_SESSION_MS; ms++) {
        play_ms(&p, true);
        if (sv_server_scene_tick(p.sv) != ran) {
            ran = sv_server_scene_tick(p.sv);
            hits_after_server_tick(&watch, p.sv, p.cls);
        }
    }
    sv_server_stats(p.sv, ss);
    play_totals(&p, cs);
    cr_expect_eq(cs->hash_mismatches, 0u);
    cr_expect_eq(p.confirmed_differ, 0u);
    cr_expect_eq(cs->own_mispredictions[CL_CAUSE_UNEXPLAINED] + cs->remote_mispredictions[CL_CAUSE_UNEXPLAINED], 0u);
    const hits_tally *t = &watch.tally;
    cr_log_info("arena lag %u ms round trip, bound %u ms: shown %llu hits (%llu confirmed), %llu misses (%llu "
                "confirmed), %llu unfired, %llu beyond the bound (%llu agreed); server: %llu judged, %llu beyond the "
                "bound, %llu inexact, %llu view ticks, view lag mean %.1f max %u ticks\n",
                2 * one_way_ms, bound_ms, (unsigned long long)t->shown_hits, (unsigned long long)t->hits_confirmed,
                (unsigned long long)t->shown_misses, (unsigned long long)t->misses_confirmed,
                (unsigned long long)t->unfired, (unsigned long long)t->beyond, (unsigned long long)t->beyond_agreed,
                (unsigned long long)ss->shots_judged, (unsigned long long)ss->shots_beyond_bound,
                (unsigned long long)ss->shots_inexact, (unsigned long long)ss->view_ticks,
                ss->shots_judged ? (double)ss->view_lag_sum / ss->shots_judged : 0.0, ss->view_lag_max);
    play_free(&p);
    sim_game_destroy(g);
}

Test(game_net, arena_shots_agree_with_the_shooters_view_under_latency, .timeout = 300)
{
    sv_stats ss;
    cl_stats cs;
    session(50, 400, &ss, &cs); // 100 ms round trip, 2% loss
    const hits_tally *t = &watch.tally;
    cr_expect_gt(t->shown_hits, 5u, "too few hits to judge");
    cr_expect_gt(t->shown_misses, 5u, "too few misses to judge");
    cr_expect_eq(t->hits_confirmed, t->shown_hits, "a hit the shooter saw was not confirmed");
    cr_expect_eq(t->misses_confirmed, t->shown_misses, "a miss the shooter saw became a hit");
    cr_expect_gt(ss.shots_judged, 0u);
    cr_expect_leq(ss.shots_beyond_bound, ss.shots_judged / 10u, "views older than the bound (only at the start)");
    cr_expect_eq(t->beyond, ss.shots_beyond_bound, "the client and the server count the same views beyond the bound");
    cr_expect_eq(ss.shots_unrebuilt, 0u);
}

Test(game_net, arena_rewind_is_bounded, .timeout = 300)
{
    sv_stats ss;
    cl_stats cs;
    session(150, 100, &ss, &cs); // a 300 ms round trip against a 100 ms bound (6 ticks)
    cr_expect_gt(ss.shots_judged, 0u);
    cr_expect_eq(ss.shots_beyond_bound, ss.shots_judged, "every view is older than 100 ms");
    cr_expect_gt(watch.tally.beyond, 0u);
    cr_expect_lt(watch.tally.beyond_agreed, watch.tally.beyond, "the bound took nothing from the shooters");
    session(50, 0, &ss, &cs); // compensation off: judged at the server's present
    cr_expect_eq(ss.shots_judged, 0u);
    const hits_tally *t = &watch.tally;
    cr_expect_gt(t->shown_hits + t->shown_misses, 5u);
    cr_expect_lt(t->hits_confirmed + t->misses_confirmed, t->shown_hits + t->shown_misses,
                 "without compensation the server disagreed with none of the shooters' views");
}
