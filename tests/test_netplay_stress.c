// keel tests: the network's edges on the in-memory network with a virtual
// clock (tests/support/play.h), exactly reproducible: the downstream at a
// long, lossy round trip against a short one; a client process that stops
// for a while and wakes; a hello or a welcome lost and sent again. Every
// figure is a count or a virtual time, never a wall-clock one. MIT licence,
// see LICENSE.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "play.h"

// Downstream payload per client (bytes per virtual second) over `seconds`
// after `warmup` seconds, with n random bots on `link` each way.
static double downstream(uint32_t n, const net_memory_link *link, uint32_t warmup, uint32_t seconds, uint64_t seed,
                         cl_stats *t, uint64_t *differ)
{
    play p;
    play_init(&p, n, CL_BOT_RANDOM, link, link, seed);
    for (uint32_t ms = 0; ms < warmup * 1000u; ms++)
        play_ms(&p, true);
    uint64_t before = 0, after = 0;
    for (uint32_t i = 0; i < n; i++) {
        net_host_stats hs;
        net_host_stats_get(p.hosts[i], &hs);
        before += hs.payload_received;
    }
    for (uint32_t ms = 0; ms < seconds * 1000u; ms++)
        play_ms(&p, true);
    for (uint32_t i = 0; i < n; i++) {
        net_host_stats hs;
        net_host_stats_get(p.hosts[i], &hs);
        after += hs.payload_received;
    }
    play_totals(&p, t);
    play_log_totals("downstream", &p, t);
    *differ = p.confirmed_differ;
    play_free(&p);
    return (double)(after - before) / n / seconds;
}

Test(netplay_stress, downstream_does_not_grow_with_the_round_trip, .timeout = 900)
{
    net_memory_link near = {0, 0, 0, 0};
    net_memory_link far = {75, 20, 50, 10}; // 150 ms round trip, 20 ms jitter, 5% loss, 1% duplicates each way
    cl_stats tn, tf;
    uint64_t dn, df;
    double a = downstream(8, &near, 3, 12, 11, &tn, &dn);
    double b = downstream(8, &far, 3, 12, 11, &tf, &df);
    cr_log_info("downstream payload per client: 0 ms link %.0f B/s; 150 ms round trip, 5%% loss %.0f B/s: %.2fx\n", a,
                b, b / a);
    cr_expect_leq(b, 1.3 * a, "downstream %.0f B/s at 150 ms and 5%% loss against %.0f B/s at 0 ms", b, a);
    cr_expect_eq(tn.hash_mismatches + tf.hash_mismatches, 0);
    cr_expect_eq(dn + df, 0, "confirmed states that differ from the server's");
    cr_expect_eq(tf.own_mispredictions[CL_CAUSE_UNEXPLAINED] + tf.remote_mispredictions[CL_CAUSE_UNEXPLAINED], 0);
    cr_expect_gt(tf.snapshots_kept_applied, 0, "no snapshot was lost and repaired");
}

// Bot 0 stops (its process stopped: nothing serviced, nothing sent) for
// `stall_ms` in the middle of a session of `n` bots; what it takes to wake.
typedef struct stall_result {
    uint32_t confirm_ms;   // from waking until it confirms a tick past the one it held before
    uint32_t caught_up_ms; // ... until its confirmed tick is within 32 of the server's
    uint64_t full_states;  // full states it applied during the recovery
    uint64_t bytes;        // payload sent to it from the stop until it caught up
    double margin_ticks;   // its input margin 2 s after waking
    uint64_t hash_mismatches, differ, unexplained;
} stall_result;

static stall_result stall(uint32_t n, uint32_t stall_ms, uint64_t seed)
{
    net_memory_link link = {20, 2, 0, 0};
    play p;
    play_init(&p, n, CL_BOT_RANDOM, &link, &link, seed);
    for (uint32_t ms = 0; ms < 4000; ms++)
        play_ms(&p, true);
    cr_assert_eq(cl_client_status(p.cls[0]), CL_STATUS_PLAYING);
    uint32_t held = cl_client_confirmed_tick(p.cls[0]);
    cl_stats s0;
    cl_client_stats(p.cls[0], &s0);
    net_host_stats h0;
    net_host_stats_get(p.hosts[0], &h0);
    p.stall_until_ms[0] = net_memory_now(p.mem) + stall_ms;
    for (uint32_t ms = 0; ms < stall_ms; ms++)
        play_ms(&p, true);
    stall_result r = {0};
    r.confirm_ms = r.caught_up_ms = UINT32_MAX;
    for (uint32_t ms = 1; ms <= 4000; ms++) {
        play_ms(&p, true);
        uint32_t c = cl_client_confirmed_tick(p.cls[0]);
        if (r.confirm_ms == UINT32_MAX && c != NET_TICK_NONE && c > held)
            r.confirm_ms = ms;
        if (r.caught_up_ms == UINT32_MAX && c != NET_TICK_NONE && c + 32u >= sv_server_scene_tick(p.sv)) {
            r.caught_up_ms = ms;
            net_host_stats h1;
            net_host_stats_get(p.hosts[0], &h1);
            r.bytes = h1.payload_received - h0.payload_received;
        }
        if (ms == 2000) {
            cl_stats s;
            cl_client_stats(p.cls[0], &s);
            r.margin_ticks = s.input_margin_q8 / 256.0;
        }
    }
    cl_stats s1;
    cl_client_stats(p.cls[0], &s1);
    r.full_states = s1.full_states - s0.full_states;
    cl_stats t;
    play_totals(&p, &t);
    r.hash_mismatches = t.hash_mismatches;
    r.unexplained = t.own_mispredictions[CL_CAUSE_UNEXPLAINED] + t.remote_mispredictions[CL_CAUSE_UNEXPLAINED];
    r.differ = p.confirmed_differ;
    char name[64];
    snprintf(name, sizeof name, "stall %u ms", stall_ms);
    play_log_totals(name, &p, &t);
    play_free(&p);
    return r;
}

Test(netplay_stress, a_stopped_client_wakes_on_deltas_and_confirms_within_2_s, .timeout = 900)
{
    static const uint32_t stalls[] = {500, 2000, 4500};
    for (uint32_t k = 0; k < 3; k++) {
        stall_result r = stall(12, stalls[k], 20 + k);
        cr_log_info("stopped %u ms: confirmed again %u ms after waking, caught up after %u ms, %llu full states, "
                    "%llu payload bytes for the recovery, input margin 2 s after waking %.2f ticks\n",
                    stalls[k], r.confirm_ms, r.caught_up_ms, (unsigned long long)r.full_states,
                    (unsigned long long)r.bytes, r.margin_ticks);
        cr_expect_leq(r.confirm_ms, 2000, "stopped %u ms: confirmed again after %u ms", stalls[k], r.confirm_ms);
        cr_expect_leq(r.caught_up_ms, 2000, "stopped %u ms: caught up after %u ms", stalls[k], r.caught_up_ms);
        cr_expect_leq(r.full_states, 2, "stopped %u ms: %llu full states", stalls[k],
                      (unsigned long long)r.full_states);
        // the margin is back near its target (a tick, and three input packets on a lossy-looking link)
        cr_expect_leq(r.margin_ticks, 12.0, "stopped %u ms: input margin %.2f ticks 2 s after waking", stalls[k],
                      r.margin_ticks);
        cr_expect_eq(r.hash_mismatches, 0);
        cr_expect_eq(r.differ, 0);
        cr_expect_eq(r.unexplained, 0);
    }
}

// One bot joins over a 150 ms round trip; its hello or the server's welcome
// (or neither) is lost once and sent again three round trips (450 ms) later,
// as the ENet host paces it (docs/transport.md, "Joining"; test_net_join
// checks that pacing through ENet). Returns how many of its ticks the server
// ran a substitute for, over 6 s.
static uint64_t substitutes_after_handshake(int lose, uint64_t *own_mispredictions)
{
    net_memory_link link = {75, 0, 0, 0};
    play p;
    play_init(&p, 1, CL_BOT_RANDOM, &link, &link, 30);
    if (lose == 1)
        net_memory_lose_next_control(p.hosts[0], 450); // the hello (and the ping sent with it)
    else if (lose == 2)
        net_memory_lose_next_control(p.server_host, 450); // the welcome
    for (uint32_t ms = 0; ms < 6000; ms++)
        play_ms(&p, true);
    cr_assert_eq(cl_client_status(p.cls[0]), CL_STATUS_PLAYING);
    sv_stats ss;
    sv_server_stats(p.sv, &ss);
    cl_stats t;
    play_totals(&p, &t);
    play_log_totals(lose == 0 ? "handshake" : lose == 1 ? "hello lost" : "welcome lost", &p, &t);
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(p.confirmed_differ, 0);
    *own_mispredictions =
        t.own_mispredictions[0] + t.own_mispredictions[1] + t.own_mispredictions[2] + t.own_mispredictions[3];
    play_free(&p);
    return ss.commands_substituted;
}

Test(netplay_stress, a_lost_hello_or_welcome_costs_only_its_retransmission, .timeout = 600)
{
    uint64_t m0, m1, m2;
    uint64_t normal = substitutes_after_handshake(0, &m0);
    uint64_t hello = substitutes_after_handshake(1, &m1);
    uint64_t welcome = substitutes_after_handshake(2, &m2);
    // 450 ms of retransmission is 28.8 ticks; "a few" more: 8
    cr_log_info("substituted ticks after joining: %llu; hello lost once: %llu; welcome lost once: %llu\n",
                (unsigned long long)normal, (unsigned long long)hello, (unsigned long long)welcome);
    cr_expect_leq(hello, normal + 29 + 8, "hello lost: %llu substitutes against %llu", (unsigned long long)hello,
                  (unsigned long long)normal);
    cr_expect_leq(welcome, normal + 29 + 8, "welcome lost: %llu substitutes against %llu", (unsigned long long)welcome,
                  (unsigned long long)normal);
    cr_expect_eq(m0 + m1 + m2, 0, "own mispredictions after the join");
}

// Karn's rule: a round trip measured on a message that may have been sent
// again is no sample. The welcome answers the hello (both reliable): when
// either was lost and sent again 450 ms later, now - hello time is 600 ms
// on a 150 ms round trip (it showed 614 ms until the first echo). The
// samples come only from the server's echoes of unreliable inputs, which
// are never sent again: the round trip the client reports is 0 until the
// first echo, then within a tick of the link's, at every millisecond of
// the join, and the first echo comes before play starts.
Test(netplay_stress, the_first_round_trip_sample_is_never_stretched_by_a_lost_hello_or_welcome, .timeout = 600)
{
    static const char *const names[] = {"nothing", "the hello", "the welcome"};
    for (int lose = 0; lose < 3; lose++) {
        net_memory_link link = {75, 0, 0, 0};
        play p;
        play_init(&p, 1, CL_BOT_RANDOM, &link, &link, 30);
        if (lose == 1)
            net_memory_lose_next_control(p.hosts[0], 450);
        else if (lose == 2)
            net_memory_lose_next_control(p.server_host, 450);
        double worst = 0, at_play = -1;
        uint32_t worst_ms = 0;
        for (uint32_t ms = 0; ms < 2500; ms++) {
            play_ms(&p, true);
            cl_stats s;
            cl_client_stats(p.cls[0], &s);
            if (s.rtt_ms > worst) {
                worst = s.rtt_ms;
                worst_ms = ms;
            }
            if (at_play < 0 && cl_client_status(p.cls[0]) == CL_STATUS_PLAYING)
                at_play = s.rtt_ms;
        }
        cr_log_info("%s lost once: the round trip reported at most %.1f ms (at %u ms), %.1f ms when play began\n",
                    names[lose], worst, worst_ms, at_play);
        cr_expect_leq(worst, 150.0 + 16.0, "%s lost: a round trip of %.1f ms at %u ms", names[lose], worst, worst_ms);
        cr_expect_gt(at_play, 0.0, "%s lost: no echo before play (%.1f)", names[lose], at_play);
        play_free(&p);
    }
}

// A client's first two full states are lost (a burst of loss downstream
// for the first 400 ms) on a short round trip. Until it has a state the
// client sends nothing after the ping on the welcome, so the server must go
// on sending full states without hearing from it. (It once stopped once the
// client had been quiet for two timeouts, and such a client never played.)
Test(netplay_stress, lost_first_full_states_are_sent_again_to_a_client_that_is_not_playing_yet, .timeout = 600)
{
    net_memory_link link = {15, 0, 0, 0};
    play p;
    play_init(&p, 1, CL_BOT_RANDOM, &link, &link, 41);
    net_memory_lose_unreliable_for(p.server_host, 400);
    uint32_t playing_ms = 0;
    for (uint32_t ms = 1; ms <= 4000; ms++) {
        play_ms(&p, true);
        if (!playing_ms && cl_client_status(p.cls[0]) == CL_STATUS_PLAYING)
            playing_ms = ms;
    }
    sv_stats ss;
    sv_server_stats(p.sv, &ss);
    cl_stats t;
    play_totals(&p, &t);
    cr_log_info("full states lost for 400 ms: playing after %u ms (virtual), full states sent %llu\n", playing_ms,
                (unsigned long long)ss.full_states);
    cr_assert_neq(playing_ms, 0, "the client never played");
    cr_expect_leq(playing_ms, 1500, "playing after %u ms", playing_ms);
    cr_expect_geq(ss.full_states, 3, "two lost and one more");
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(p.confirmed_differ, 0);
    play_free(&p);
}

// A client whose machine runs a frame only every 250 ms (4 frames a second
// for a 64 Hz simulation) among 11 ordinary ones: each frame it handles a
// backlog of about 8 snapshots and predicts 16 ticks. The confirmation work
// is done in full, the prediction's rollback once per frame, and it neither
// falls behind nor needs a full state again.
Test(netplay_stress, a_client_that_cannot_keep_up_rolls_back_once_a_frame, .timeout = 600)
{
    net_memory_link link = {25, 3, 0, 0};
    play p;
    play_init(&p, 12, CL_BOT_RANDOM, &link, &link, 40);
    p.frame_ms[0] = 250;
    for (uint32_t ms = 0; ms < 3000; ms++)
        play_ms(&p, true);
    cl_stats a;
    cl_client_stats(p.cls[0], &a);
    uint32_t worst_behind = 0;
    for (uint32_t ms = 0; ms < 10000; ms++) {
        play_ms(&p, true);
        uint32_t c = cl_client_confirmed_tick(p.cls[0]), t = sv_server_scene_tick(p.sv);
        if (c != NET_TICK_NONE && t - c > worst_behind)
            worst_behind = t - c;
    }
    cl_stats b;
    cl_client_stats(p.cls[0], &b);
    uint64_t frames = 10000 / 250;
    cr_log_info("slow client: %llu rollbacks in %llu frames (%llu put off, %llu confirmations not compared again), "
                "%llu re-simulated ticks, confirmed at most %u ticks behind the server, full states %llu\n",
                (unsigned long long)(b.rollbacks - a.rollbacks), (unsigned long long)frames,
                (unsigned long long)(b.rollbacks_deferred - a.rollbacks_deferred),
                (unsigned long long)(b.confirms_coalesced - a.confirms_coalesced),
                (unsigned long long)(b.resimulated_ticks - a.resimulated_ticks), worst_behind,
                (unsigned long long)(b.full_states - a.full_states));
    cr_expect_leq(b.rollbacks - a.rollbacks, 2 * frames, "more than two rollbacks a frame");
    cr_expect_gt(b.rollbacks_deferred - a.rollbacks_deferred, 0);
    cr_expect_eq(b.full_states - a.full_states, 0);
    cr_expect_leq(worst_behind, 32u, "fell %u ticks behind", worst_behind);
    cl_stats t;
    play_totals(&p, &t);
    play_log_totals("slow client", &p, &t);
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(p.confirmed_differ, 0);
    cr_expect_eq(t.own_mispredictions[CL_CAUSE_UNEXPLAINED] + t.remote_mispredictions[CL_CAUSE_UNEXPLAINED], 0);
    play_free(&p);
}

// Clients whose connections end in the same tick, the newest first: the
// leaves go into that tick's record in id order, so the snapshots that carry
// them encode, and the clients that stay get deltas, not full states.
Test(netplay_stress, clients_leaving_in_one_tick_cost_the_others_no_full_state, .timeout = 600)
{
    net_memory_link link = {10, 0, 0, 0};
    play p;
    play_init(&p, 8, CL_BOT_RANDOM, &link, &link, 50);
    for (uint32_t ms = 0; ms < 3000; ms++)
        play_ms(&p, true);
    sv_stats a;
    sv_server_stats(p.sv, &a);
    for (uint32_t i = 7; i >= 4; i--) { // ids 8, 7, 6, 5: their disconnects arrive in that order
        net_host_disconnect(p.hosts[i], 0);
        net_host_flush(p.hosts[i]);
        p.stall_until_ms[i] = UINT64_MAX;
    }
    for (uint32_t ms = 0; ms < 2000; ms++)
        play_ms(&p, true);
    sv_stats b;
    sv_server_stats(p.sv, &b);
    cl_stats t;
    play_totals(&p, &t);
    cr_log_info("4 clients left in one tick: server left %llu, full states sent after %llu\n",
                (unsigned long long)(b.clients_left - a.clients_left),
                (unsigned long long)(b.full_states - a.full_states));
    cr_expect_eq(b.clients_left - a.clients_left, 4);
    cr_expect_eq(b.full_states - a.full_states, 0, "full states to the clients that stayed");
    cr_expect_eq(t.hash_mismatches, 0);
    cr_expect_eq(p.confirmed_differ, 0);
    play_free(&p);
}
