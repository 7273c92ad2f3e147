// keel tests: server and clients on the in-memory network with a virtual
// clock (tests/support/play.h): bit-exactly reproducible for a seed. MIT
// licence, see LICENSE. test_netplay_stress.c has the edges: loss and the
// round trip, stalled clients, lost handshakes.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/sv_server.h>

#include "play.h"
#include "test_support.h"

Test(netplay, eight_bots_apart_never_mispredict_their_own_character, .timeout = 600)
{
    net_memory_link link = {25, 0, 0, 0};
    play p;
    play_init(&p, 8, CL_BOT_RANDOM, &link, &link, 1);
    for (int ms = 0; ms < 20000; ms++)
        play_ms(&p, true);
    cl_stats t;
    play_totals(&p, &t);
    play_log_totals("apart", &p, &t);
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
    play_totals(&p, &t);
    play_log_totals("lossy", &p, &t);
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
    play_totals(&p, &t);
    play_log_totals("pushers", &p, &t);
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
    play_totals(&p, &t);
    play_log_totals("platforms", &p, &t);
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
