// keel-play live mode: play on a keel-server in a window. MIT licence, see
// LICENSE.
//
// Invariants:
// - Ticks and frames are decoupled: the simulation advances only in
//   kp_link_pump, at the client's tick clock (one command per tick, made
//   from the keys held and the view angles at that moment); each frame draws
//   the characters interpolated by cl_smooth between the two newest
//   predicted ticks, alpha = time since the newest tick / tick duration.
// - Nothing drawn is written back: the scenes are the client library's; the
//   smoothing, the net graph and the figures only read them.
// - The own character is not drawn in first person (the camera is at its
//   eye), only with the chase camera.
// - The run always ends, and says why: the player quits (Esc twice, closing
//   the window), --frames / --screenshot / --quit-after are reached, or the
//   link ends (refused, unreachable, lost, not playing within
//   --connect-timeout), or the server shuts down: then the reason stays on
//   screen for KP_LIVE_REASON_MS (or until Esc) and the exit status is 1
//   (0 for a shutdown, which is no fault of the player's or the link's).
// - One JSON summary line on stdout at exit (live_summary in this file).
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/cl_smooth.h>

#include "app.h"
#include "game_hud.h"
#include "game_panel.h"
#include "keel_app.h"
#include "kp.h"
#include "live_figures.h"
#include "live_input.h"
#include "live_link.h"
#include "live_view.h"
#include "netgraph.h"
#include "overlay.h"
#include "render.h"
#include "tokens.h"

#define KP_LIVE_REASON_MS 4000u
/// Ticks of a jump the server must have confirmed before a quit leaves.
#define KP_JUMP_PLAYOUT_TICKS 32u
/// Frames are paced to at most this rate when the swap does not wait for the
/// display (no vsync, as under Xvfb): the rest of the CPU is the server's.
#define KP_LIVE_MAX_FPS 144u

// --aim-at: the view from the own camera's eye turned to the character's
// centre, at every command while both are in the predicted scene.
static void aim(kp_live *L)
{
    const sim_scene *sc = cl_client_predicted(L->link.cl);
    const sim_char_state *me = sim_scene_find(sc, cl_client_character(L->link.cl)),
                         *them = sim_scene_find(sc, L->opt->aim_at);
    if (!me || !them)
        return;
    double h = (double)L->settings.stand_shape.half.y / 65536.0;
    double d[3] = {(them->position.x - me->position.x) / 65536.0,
                   (them->position.y - me->position.y) / 65536.0 + h - 1.8 * h,
                   (them->position.z - me->position.z) / 65536.0};
    double flat = sqrt(d[0] * d[0] + d[2] * d[2]);
    // yaw 0 looks along -z, 90 along -x (sim_angle.h)
    L->ctl.yaw_deg = atan2(-d[0], -d[2]) * (180.0 / 3.14159265358979);
    L->ctl.pitch_deg = atan2(d[1], flat) * (180.0 / 3.14159265358979);
    L->aimed = true;
}

static sim_input command_cb(void *user, uint32_t tick, void *game_command)
{
    kp_live *L = user;
    if (!L->yaw_set) {
        // The first command looks where the server spawned the character.
        const sim_char_state *me = sim_scene_find(cl_client_predicted(L->link.cl), cl_client_character(L->link.cl));
        if (me) {
            L->ctl.yaw_deg = kp_angle_to_deg(me->yaw);
            L->ctl.pitch_deg = 0;
        }
        L->yaw_set = true;
    }
    if (L->opt->aim_at)
        aim(L);
    sim_input in = kp_controls_command(&L->ctl, tick);
    uint32_t fire = kp_controls_fire(&L->ctl);
    if (game_command && fire) {
        kp_game_command_buttons(L->opt->game, fire, game_command);
        L->fire_commands++;
    }
    if (in.buttons & SIM_BUTTON_JUMP) {
        L->jump_made = true;
        L->last_jump_tick = tick;
    }
    return in;
}

static void print_causes(const char *name, const uint64_t *v)
{
    printf(",\"%s\":{", name);
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        printf("%s\"%s\":%llu", c ? "," : "", cl_cause_name((cl_cause)c), (unsigned long long)v[c]);
    printf("}");
}

// A JSON string: quotes, backslashes and control characters escaped.
static void print_json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

// The summary line (field names as keel-client's where they mean the same).
static void live_summary(const kp_live *L, int status, uint64_t now)
{
    cl_stats s;
    memset(&s, 0, sizeof s);
    net_host_stats ns;
    memset(&ns, 0, sizeof ns);
    if (L->link.cl)
        cl_client_stats(L->link.cl, &s);
    if (L->link.host)
        net_host_stats_get(L->link.host, &ns);
    uint64_t end = L->link.ended_us ? L->link.ended_us : now;
    double conn = L->link.connected_us ? (double)(end - L->link.connected_us) / 1e6 : 0;
    double per = conn >= 1.0 ? 1.0 / conn : 0;
    printf("{\"mode\":\"live\",\"name\":");
    print_json_string(L->opt->name);
    printf(",\"character\":%u,\"end\":\"%s\",\"reason\":", L->link.cl ? cl_client_character(L->link.cl) : 0,
           L->link.end ? L->link.end : "left");
    print_json_string(L->link.why);
    printf(",\"status\":%d,\"seconds\":%.2f,\"connected_seconds\":%.2f,\"frames\":%llu,\"ticks\":%llu,"
           "\"predicted_ticks\":%llu,\"rtt_ms\":%.1f,\"input_margin_ticks\":%.2f",
           status, (double)(now - L->start_us) / 1e6, conn, (unsigned long long)L->app->frames,
           (unsigned long long)L->link.played, (unsigned long long)s.predicted_ticks, s.rtt_ms,
           s.input_margin_q8 / 256.0);
    if (L->link.cl)
        printf(",\"lead_ticks\":%d,\"target_lead_ticks\":%u,\"round_trip_lead_ticks\":%u,\"margin_target_ticks\":%.0f",
               (int)(cl_client_predicted_tick(L->link.cl) - cl_client_confirmed_tick(L->link.cl)),
               kp_aimed_lead(L->link.cl), cl_client_target_lead(L->link.cl), cl_client_margin_target(L->link.cl));
    print_causes("own_mispredictions", s.own_mispredictions);
    print_causes("remote_mispredictions", s.remote_mispredictions);
    printf(",\"rollbacks\":%llu,\"resimulated_ticks\":%llu,\"snapshots\":%llu,\"full_states\":%llu,"
           "\"hash_mismatches\":%llu,\"snapshot_packets_lost\":%llu,\"capped_ticks\":%llu,\"up_wire_bytes\":%llu,"
           "\"down_wire_bytes\":%llu,\"up_wire_Bps\":%.0f,\"down_wire_Bps\":%.0f,\"screenshots\":%u",
           (unsigned long long)s.rollbacks, (unsigned long long)s.resimulated_ticks, (unsigned long long)s.snapshots,
           (unsigned long long)s.full_states, (unsigned long long)s.hash_mismatches,
           (unsigned long long)s.snapshot_packets_lost, (unsigned long long)s.capped_ticks,
           (unsigned long long)ns.wire_sent, (unsigned long long)ns.wire_received, ns.wire_sent * per,
           ns.wire_received * per, L->app->screenshots);
    kp_figures_print(L->fig, stdout);
    if (L->link.cl) {
        kp_game_fields_json(stdout, cl_client_predicted(L->link.cl), cl_client_character(L->link.cl));
        kp_game_hud_summary(L->hud, stdout);
        if (L->opt->game)
            printf(",\"fire_commands\":%llu", (unsigned long long)L->fire_commands);
        if (L->opt->aim_at)
            printf(",\"aimed\":%s", L->aimed ? "true" : "false");
    }
    printf("}\n");
    fflush(stdout);
}

// Whether the capture options are met this frame (the frame just drawn is
// the one to write).
static bool capture_due(kp_live *L)
{
    const kp_options *o = L->opt;
    bool playing = L->link.state == KP_LINK_PLAYING, ended = L->link.state == KP_LINK_ENDED;
    if (o->has_at_tick)
        return (playing && cl_client_predicted_tick(L->link.cl) >= o->at_tick) || ended;
    uint32_t limit = kp_frames_limit(o);
    if (!limit)
        return false;
    if (!o->screenshot)
        return L->app->frames + 1 >= limit;
    // A screenshot shows the game (or the reason it ended), not the
    // connecting screen: its frames count from then.
    if (!playing && !ended)
        return false;
    return ++L->capture_frames >= limit;
}

static int live_loop(kp_live *L)
{
    kp_app *app = L->app;
    const kp_options *o = L->opt;
    uint64_t last = keel_app_now_us();
    bool screenshot_failed = false;
    uint64_t quit_at = 0;
    uint64_t reason_until = 0;
    for (;;) {
        SDL_Event ev;
        while (kp_app_poll(app, &ev))
            kp_controls_event(&L->ctl, &ev);
        if (app->quit || L->ctl.quit) {
            // A jump pressed just before quitting is still played out: its
            // command made, and the server's state confirmed
            // KP_JUMP_PLAYOUT_TICKS past its tick (so the server ran it and
            // the jump shows in its recording) before the leave; on a slow
            // or loaded machine the server may be far behind the
            // prediction, hence ticks, not time; 3 s at most.
            uint64_t t = keel_app_now_us();
            if (!quit_at)
                quit_at = t;
            bool jump_pending = L->ctl.jump_latched;
            if (!jump_pending && L->jump_made && L->link.state == KP_LINK_PLAYING) {
                uint32_t confirmed = cl_client_confirmed_tick(L->link.cl);
                jump_pending = (int32_t)(confirmed - (L->last_jump_tick + KP_JUMP_PLAYOUT_TICKS)) < 0;
            }
            if (!jump_pending || L->link.state != KP_LINK_PLAYING || t - quit_at > 3000000u)
                break;
        }
        if (L->ctl.captured != app->mouse_captured)
            kp_app_capture_mouse(app, L->ctl.captured);
        uint64_t now = keel_app_now_us();
        double dt = (double)(now - last) / 1e6;
        last = now;
        kp_link_state before = L->link.state;
        kp_link_state st = kp_link_pump(&L->link, now, command_cb, L);
        if (st == KP_LINK_ENDED && before != KP_LINK_ENDED) {
            fprintf(stderr, "keel-play: %s\n", L->link.why);
            reason_until = now + KP_LIVE_REASON_MS * 1000u;
        }
        uint64_t t_smooth = keel_app_now_us();
        float alpha = (float)kp_link_alpha(&L->link, now);
        if (st == KP_LINK_PLAYING)
            cl_smooth_frame(L->smooth, (float)dt, alpha);
        double smooth_ms = (double)(keel_app_now_us() - t_smooth + L->link.smooth_us) / 1000.0;
        kp_live_own_pose(L, (float)dt, alpha);
        uint32_t draw_calls = kp_live_draw(L, now);
        bool due = capture_due(L);
        if (due && o->screenshot) {
            if (!kp_app_screenshot(app, o->screenshot))
                screenshot_failed = true;
        }
        for (; L->ctl.screenshots > 0; L->ctl.screenshots--) { // F12: this frame, keel-play-NNNNN.png
            char name[64];
            kp_app_screenshot_next(app, name, sizeof name);
        }
        kp_app_frame_end(app);
        double work_ms = (double)(L->link.predict_us + L->link.rollback_us) / 1000.0 + smooth_ms;
        double frame_ms = (double)(keel_app_now_us() - now) / 1000.0;
        if (st == KP_LINK_PLAYING) {
            cl_stats s;
            cl_client_stats(L->link.cl, &s);
            net_host_stats ns;
            net_host_stats_get(L->link.host, &ns);
            kp_netgraph_frame(&L->graph, now, &s, &ns, dt * 1000.0, L->link.predict_us / 1000.0,
                              L->link.rollback_us / 1000.0, smooth_ms, L->link.handle_us / 1000.0,
                              L->pose_snapped ? 1u : 0u);
            kp_figures_frame(L->fig, frame_ms, work_ms, draw_calls);
        }
        if (due)
            break;
        if (o->quit_after_ms && st == KP_LINK_PLAYING && now - L->link.playing_us >= o->quit_after_ms * 1000u)
            break;
        if (st == KP_LINK_ENDED && now >= reason_until)
            break;
        // Pace frames that the swap did not (no vsync).
        uint64_t next = now + 1000000u / KP_LIVE_MAX_FPS;
        if (keel_app_now_us() < next)
            keel_app_sleep_until_us(next);
    }
    // A server that shut down ended the match as keel-client counts it: not
    // a failure (exit 0), though its reason was shown like any other end.
    bool shut_down = L->link.end && strcmp(L->link.end, "server_shutdown") == 0;
    bool failed = (L->link.state == KP_LINK_ENDED && !shut_down) || screenshot_failed;
    kp_link_leave(&L->link);
    return failed ? KP_EXIT_FAILURE : KP_EXIT_OK;
}

// Secure mode: the token from --token, or one issued with --token-key for
// --client-id and --connect's address. False with the reason in the link
// (a file that is not a key or token, an address a token cannot name).
static bool live_token(kp_live *L, token_source *t, const uint8_t **token)
{
    const kp_options *o = L->opt;
    char err[256];
    *token = NULL;
    if (tokens_load(t, o->token_file, o->token_key, o->protocol_id, err, sizeof err) &&
        tokens_list_server(t, o->token_server[0] ? o->token_server : NULL, err, sizeof err) &&
        (!(o->token_file || o->token_key) ||
         (*token = tokens_for(t, o->client_id, o->host, o->port, err, sizeof err)) != NULL))
        return true;
    snprintf(L->link.why, sizeof L->link.why, "%s", err);
    L->link.end = "bad_token";
    return false;
}

int kp_live_run(kp_app *app, const kp_options *opt)
{
    kp_live *L = calloc(1, sizeof *L);
    kp_figures *fig = calloc(1, sizeof *fig);
    if (!L || !fig) {
        free(L);
        free(fig);
        fputs("keel-play: out of memory\n", stderr);
        return KP_EXIT_FAILURE;
    }
    L->app = app;
    L->opt = opt;
    L->fig = fig;
    L->start_us = keel_app_now_us();
    kp_figures_init(fig);
    kp_netgraph_init(&L->graph);
    kp_controls_init(&L->ctl, opt->sensitivity, 0.0);
    L->ctl.chase = opt->third_person;
    int rc = KP_EXIT_FAILURE;
    L->world = keel_app_load_world("keel-play", opt->live_level, opt->scale, opt->up, &L->level, &L->map);
    if (!L->world) {
        snprintf(L->link.why, sizeof L->link.why, "cannot load the level %s", opt->live_level);
        L->link.end = "no_level";
        live_summary(L, rc, keel_app_now_us());
        free(fig);
        free(L);
        return rc;
    }
    L->settings = sim_move_default_settings();
    L->settings.tick_rate = (int32_t)opt->rate;
    L->settings.respawn_depth = SIM_FX_INT((int32_t)opt->respawn_depth_m);
    cl_config cc = cl_default_config();
    cc.platforms = opt->platforms;
    cc.map = L->map.entity_count ? &L->map : NULL;
    cc.ticks_per_packet = opt->ticks_per_packet;
    cc.game = opt->game;
    L->hud = kp_game_hud_create(opt->game, &L->settings);
    L->ctl.game_panel = opt->game && !L->hud; // a game without a HUD: its fields
    cl_smooth_settings ss = cl_smooth_default_settings();
    L->smooth = cl_smooth_create(&ss, NET_MAX_CHARACTERS);
    L->render = kp_render_create();
    L->overlay = kp_overlay_create();
    if (L->smooth && L->render && L->overlay && kp_render_upload_level(L->render, &L->level) &&
        kp_render_upload_map(L->render, &L->map)) {
        token_source tokens;
        const uint8_t *token = NULL;
        bool token_ok = live_token(L, &tokens, &token);
        bool open = token_ok && kp_link_open(&L->link, opt->host, (uint16_t)opt->port, token, L->world, &L->level,
                                             &L->settings, &cc, (uint32_t)opt->connect_timeout_ms, opt->timeout_ms);
        tokens_wipe(&tokens); // the host keeps its own copy
        L->link.level = opt->live_level;
        if (open && (!opt->record || kp_link_record(&L->link, opt->record, opt->live_level, opt->scale, opt->up))) {
            L->link.smooth = L->smooth;
            L->ctl.captured = true;
            rc = live_loop(L);
        } else {
            fprintf(stderr, "keel-play: %s\n", L->link.why);
        }
    } else {
        snprintf(L->link.why, sizeof L->link.why, "cannot set up the view (out of memory, or GL failed)");
        L->link.end = "no_view";
    }
    if (!kp_link_end_record(&L->link))
        rc = KP_EXIT_FAILURE;
    live_summary(L, rc, keel_app_now_us());
    kp_app_capture_mouse(app, false);
    kp_link_close(&L->link);
    cl_smooth_destroy(L->smooth);
    kp_game_hud_destroy(L->hud);
    kp_overlay_destroy(L->overlay);
    kp_render_destroy(L->render);
    free(L->draws);
    sim_world_destroy(L->world);
    sim_level_free(&L->level);
    sim_map_free(&L->map);
    free(fig);
    free(L);
    return rc;
}
