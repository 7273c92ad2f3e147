// keel tests: keel-play's live mode as a player meets it -- a real
// keel-server on loopback, keel-play in a window on a virtual display
// (Xvfb, Mesa's software OpenGL), keys and mouse from xdotool -- judged by
// the server's recording and keel-play's own summary. MIT licence, see
// LICENSE.
//
// Nothing here asserts a time: xdotool holds W for about two seconds, far
// more than the 5 m walked that is checked; every wait is a bound against a
// hang, not a measurement. keel-play leaves on Esc Esc, with --quit-after
// as its own bound. Skipped when keel-play was not built (no SDL2 or GL
// packages) or Xvfb or xdotool is missing.
//
// Mesa's llvmpipe keeps some allocations to the end of the process, which
// LeakSanitizer reports in the sanitizer build; keel-play runs here with
// detect_leaks=0 added to ASAN_OPTIONS (only keel-play: the server and the
// relay keep the leak check).
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <keel/rec.h>
#if KEEL_PLAY_BUILT
#include <stb_image.h> // the screenshot read back
#endif

#include "test_support.h"
#include "test_xvfb.h"

static char dir[256];
static keel_test_xvfb xvfb;

static void setup(void) { keel_test_dir_make(dir, sizeof dir, "play_live"); }

static void teardown(void)
{
    if (xvfb.pid > 0)
        keel_test_xvfb_stop(&xvfb);
    keel_test_dir_remove(dir);
}

TestSuite(play_live, .init = setup, .fini = teardown, .timeout = 180);

static void need_display(void) { keel_test_play_need(&xvfb, 1024, 600); }

static void start_play(keel_test_proc *p, const char *const *args) { keel_test_play_start(p, &xvfb, args); }

// xdotool on the virtual display; its output (free it), NULL when it failed.
static char *xdotool(const char *const *args)
{
    setenv("DISPLAY", xvfb.display, 1);
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 30; // a hang guard
    keel_test_run_result r = keel_test_run(keel_test_which("xdotool"), args, &o);
    char *out = r.exit_code == 0 ? strdup(r.out) : NULL;
    if (!out)
        keel_test_warn("xdotool %s: exit %d: %s", args[0], r.exit_code, r.err);
    keel_test_run_free(&r);
    return out;
}

// Waits (bounded: a hang guard) until `text` appears in a file.
static bool wait_for_text(const char *file, const char *text, long ms)
{
    for (long waited = 0; waited < ms; waited += 50) {
        char *s = keel_test_read_file(file);
        bool found = strstr(s, text) != NULL;
        free(s);
        if (found)
            return true;
        keel_test_sleep_ms(50);
    }
    return false;
}

// keel-server recording to `record_name` in the test's folder, secure with
// the backend key file `key` (NULL: --insecure); its address
// "127.0.0.1:PORT" in `at`, its port returned.
static unsigned start_secure_server(keel_test_proc *sv, const char *record_name, bool platforms, const char *key,
                                    char at[64])
{
    const char *record = keel_test_dir_file(dir, record_name);
    const char *args[14] = {"--bind", "127.0.0.1",           "--port", "0",        "--duration",
                            "120",    "--keyframe-interval", "4",      "--record", record};
    size_t n = 10;
    if (key) {
        args[n++] = "--key";
        args[n++] = key;
    } else {
        args[n++] = "--insecure";
    }
    if (platforms)
        args[n++] = "--platforms";
    args[n] = NULL;
    keel_test_proc_start(sv, "keel-server", args);
    unsigned port = keel_test_wait_port(sv->out);
    snprintf(at, 64, "127.0.0.1:%u", port);
    return port;
}

static unsigned start_server(keel_test_proc *sv, const char *record_name, bool platforms, char at[64])
{
    return start_secure_server(sv, record_name, platforms, NULL, at);
}

// keel-play's summary line (free it), failing the test when there is none.
static char *play_summary(const keel_test_proc *p)
{
    char *out = keel_test_read_file(p->out);
    char *err = keel_test_read_file(p->err);
    cr_log_info("keel-play: %s%s", out, err);
    free(err);
    const char *at = strstr(out, "{\"mode\":\"live\"");
    cr_assert_not_null(at, "no summary from keel-play: %s", out);
    char *line = strdup(at);
    free(out);
    return line;
}

// The number after "key": inside the object that follows "\"object\":{".
static double json_in(const char *json, const char *object, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":{", object);
    const char *at = strstr(json, pat);
    cr_assert_not_null(at, "no %s in %s", object, json);
    return keel_test_json_num(at, key);
}

static void expect_clean(const char *sum)
{
    cr_expect_eq(keel_test_json_num(sum, "hash_mismatches"), 0, "%s", sum);
    cr_expect_eq(json_in(sum, "own_mispredictions", "unexplained"), 0, "%s", sum);
    cr_expect_eq(json_in(sum, "remote_mispredictions", "unexplained"), 0, "%s", sum);
}

// Holds W about 2 s, turns, jumps, and quits with Esc Esc.
static void walk_turn_jump_quit(keel_test_proc *play)
{
    const char *search[] = {"search", "--sync", "--name", "keel-play", NULL};
    char *wid = xdotool(search);
    cr_assert_not_null(wid, "no keel-play window");
    wid[strcspn(wid, "\n")] = 0;
    const char *focus[] = {"windowfocus", wid, NULL};
    free(xdotool(focus));
    const char *play_keys[] = {"keydown", "w",   "sleep", "2",      "keyup", "w",   "mousemove_relative",
                               "--",      "150", "0",     "sleep",  "0.3",   "key", "space",
                               "sleep",   "1",   "key",   "Escape", "sleep", "0.2", "key",
                               "Escape",  NULL};
    free(xdotool(play_keys));
    free(wid);
    cr_assert(keel_test_proc_wait(play, 60000), "keel-play did not end");
}

// keel-play connected to `at`: walk, turn, jump, quit; its summary (free it),
// checked for a clean end with nothing that disagreed.
static char *play_session(keel_test_proc *play, const char *at)
{
    const char *args[] = {"--connect", at, "--name", "tester", "--size", "640x360", "--quit-after", "40", NULL};
    start_play(play, args);
    cr_assert(wait_for_text(play->err, "keel-play: playing", 60000), "keel-play never started playing");
    walk_turn_jump_quit(play);
    char *sum = play_summary(play);
    cr_expect_eq(play->status, 0, "keel-play exit %d", play->status);
    expect_clean(sum);
    return sum;
}

// From the server's recording: how far character `id` moved along its view
// while W was held, and whether it left the ground after pressing jump.
static void check_recording(const char *path, uint32_t id, double *along, bool *jumped)
{
    rec_error err;
    rec_file *f = rec_file_open(path, &err);
    cr_assert_not_null(f, "%s: %s", path, err.message);
    rec_info info;
    rec_file_info(f, &info);
    rec_cursor *c = rec_cursor_create(f, info.first_tick, &err);
    cr_assert_not_null(c, "%s", err.message);
    uint32_t walk_first = UINT32_MAX, walk_last = 0, jump_tick = UINT32_MAX;
    sim_angle yaw = 0, jump_yaw = 0;
    rec_tick t;
    while (rec_cursor_next(c, &t, &err)) {
        for (uint32_t i = 0; i < t.command_count; i++) {
            const rec_command *cmd = &t.commands[i];
            if (cmd->id != id)
                continue;
            if (cmd->input.forward > 0) {
                if (walk_first == UINT32_MAX) {
                    walk_first = t.tick;
                    yaw = cmd->input.yaw;
                }
                walk_last = t.tick;
            }
            if ((cmd->input.buttons & SIM_BUTTON_JUMP) && jump_tick == UINT32_MAX && walk_first != UINT32_MAX) {
                jump_tick = t.tick;
                jump_yaw = cmd->input.yaw; // after the mouse moved
            }
        }
    }
    cr_assert_str_empty(err.message, "%s", err.message);
    rec_cursor_destroy(c);
    cr_assert_neq(walk_first, UINT32_MAX, "character %u never walked forward in %u ticks", id, info.tick_count);
    cr_log_info("character %u: forward held ticks %u..%u, yaw 0x%04x; jump at tick %u, yaw 0x%04x", id, walk_first,
                walk_last, yaw, jump_tick, jump_yaw);
    // The keyframes (every 4 ticks): the state before walking, after it, and
    // any airborne one after the jump.
    uint32_t n = rec_file_keyframe_count(f);
    bool have_before = false, have_after = false;
    sim_char_state before = {0}, after = {0}, at_jump = {0};
    bool have_jump_base = false;
    *jumped = false;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t tick, count;
        const sim_char_state *states;
        cr_assert(rec_file_keyframe(f, k, &tick, &states, &count, &err), "%s", err.message);
        const sim_char_state *me = NULL;
        for (uint32_t i = 0; i < count; i++)
            if (states[i].id == id)
                me = &states[i];
        if (!me)
            continue;
        if (tick <= walk_first) {
            before = *me;
            have_before = true;
        }
        if (tick > walk_last && !have_after) {
            after = *me;
            have_after = true;
        }
        if (jump_tick != UINT32_MAX && tick <= jump_tick) {
            at_jump = *me;
            have_jump_base = true;
        }
        if (jump_tick != UINT32_MAX && tick > jump_tick && have_jump_base && !(me->flags & SIM_CHAR_GROUNDED) &&
            me->position.y > at_jump.position.y + SIM_FX_MM(100))
            *jumped = true;
    }
    cr_assert(have_before && have_after, "no keyframes around the walk");
    double dx = keel_fx_to_d(after.position.x - before.position.x);
    double dz = keel_fx_to_d(after.position.z - before.position.z);
    double a = yaw * (2.0 * 3.14159265358979323846 / 65536.0);
    *along = dx * -sin(a) + dz * -cos(a);
    rec_file_close(f);
}

Test(play_live, walks_where_it_looks_and_jumps)
{
    need_display();
    keel_test_proc sv, play;
    char connect[64];
    start_server(&sv, "live.krec", false, connect);
    char *sum = play_session(&play, connect);
    uint32_t id = (uint32_t)keel_test_json_num(sum, "character");
    keel_test_proc_kill(&sv, SIGTERM);
    cr_assert_eq(sv.status, 0, "keel-server exit %d", sv.status);
    double along;
    bool jumped;
    check_recording(keel_test_dir_file(dir, "live.krec"), id, &along, &jumped);
    cr_log_info("walked %.2f m along the view; frames %.0f, distance drawn %.2f m; own mispredictions: "
                "substituted %.0f, remote command %.0f, interaction %.0f, unexplained %.0f; largest pop %.4f m",
                along, keel_test_json_num(sum, "frames"), keel_test_json_num(sum, "distance_m"),
                json_in(sum, "own_mispredictions", "substituted"), json_in(sum, "own_mispredictions", "remote_command"),
                json_in(sum, "own_mispredictions", "interaction"), json_in(sum, "own_mispredictions", "unexplained"),
                keel_test_json_num(sum, "largest_pop_m"));
    cr_expect_geq(along, 5.0, "walked %.2f m along the view", along);
    cr_expect(jumped, "character %u never left the ground after the jump", id);
    free(sum);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

// Through keel-relay at a 150 ms round trip with 5% loss each way, with two
// bots on the server: the own character's drawn position never jumps by
// more than cl_smooth's bound in a frame (its largest pop divided by the
// bound of that frame's length is at most 1), and nothing disagrees.
Test(play_live, through_loss_and_latency_the_drawing_stays_within_the_smoothing_bound)
{
    need_display();
    keel_test_proc sv, relay, bots, play;
    char server_at[64], relay_at[64], port[16];
    snprintf(port, sizeof port, "%u", start_server(&sv, "relay.krec", false, server_at));
    const char *bargs[] = {"--port", port, "--bots", "2", "--ticks", "0", "--seed", "5", NULL};
    keel_test_proc_start(&bots, "keel-client", bargs);
    const char *rargs[] = {"--server", server_at, "--latency", "75", "--loss", "5", "--duration", "120", NULL};
    keel_test_proc_start(&relay, "keel-relay", rargs);
    snprintf(relay_at, sizeof relay_at, "127.0.0.1:%u", keel_test_wait_port(relay.out));
    char *sum = play_session(&play, relay_at);
    double pop = keel_test_json_num(sum, "largest_pop_m"), ratio = keel_test_json_num(sum, "largest_pop_ratio");
    cr_log_info("through the relay: frames %.0f, rtt %.0f ms, snapshot packets lost %.0f, rollbacks %.0f; own "
                "mispredictions: substituted %.0f, remote command %.0f, interaction %.0f; largest pop %.4f m "
                "(%.2f of its frame's bound %.4f m), snaps %.0f",
                keel_test_json_num(sum, "frames"), keel_test_json_num(sum, "rtt_ms"),
                keel_test_json_num(sum, "snapshot_packets_lost"), keel_test_json_num(sum, "rollbacks"),
                json_in(sum, "own_mispredictions", "substituted"), json_in(sum, "own_mispredictions", "remote_command"),
                json_in(sum, "own_mispredictions", "interaction"), pop, ratio, keel_test_json_num(sum, "pop_bound_m"),
                keel_test_json_num(sum, "snaps"));
    cr_expect_leq(ratio, 1.0, "a pop of %.4f m beyond the smoothing bound: %s", pop, sum);
    // On a lossy link the client keeps three input packets (2 ticks each) of
    // margin beyond the one tick the round trip's lead counts: the target
    // shown is the lead it aims at, margin included.
    double target = keel_test_json_num(sum, "target_lead_ticks"), rt = keel_test_json_num(sum, "round_trip_lead_ticks");
    cr_log_info("lead %.0f ticks, target %.0f (round trip %.0f, margin target %.0f)",
                keel_test_json_num(sum, "lead_ticks"), target, rt, keel_test_json_num(sum, "margin_target_ticks"));
    cr_expect_eq(keel_test_json_num(sum, "margin_target_ticks"), 7, "%s", sum);
    cr_expect_eq(target, rt + 6, "%s", sum);
    cr_expect_gt(keel_test_json_num(sum, "pop_frames"), 0, "no frame measured: %s", sum);
    free(sum);
    keel_test_proc_kill(&bots, SIGTERM);
    keel_test_proc_kill(&relay, SIGTERM);
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&bots);
    keel_test_proc_cleanup(&relay);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

// A closed loopback port: keel-play shows why on screen (the screenshot is
// taken of that frame) and exits 1 within its own connect timeout.
Test(play_live, an_unreachable_server_is_reported_and_keel_play_gives_up)
{
    need_display();
    keel_test_proc play;
    const char *png = keel_test_dir_file(dir, "unreachable.png");
    // A free UDP port that nothing listens on: a relay that is stopped.
    keel_test_proc relay;
    const char *rargs[] = {"--server", "127.0.0.1:9", "--duration", "60", NULL};
    keel_test_proc_start(&relay, "keel-relay", rargs);
    char at[64];
    snprintf(at, sizeof at, "127.0.0.1:%u", keel_test_wait_port(relay.out));
    keel_test_proc_kill(&relay, SIGTERM);
    keel_test_proc_cleanup(&relay);
    const char *args[] = {"--connect", at, "--connect-timeout", "3", "--size", "640x360", "--screenshot", png, NULL};
    start_play(&play, args);
    cr_assert(keel_test_proc_wait(&play, 60000), "keel-play did not give up");
    char *sum = play_summary(&play);
    cr_expect_eq(play.status, 1, "keel-play exit %d", play.status);
    cr_expect(strstr(sum, "\"end\":\"never_connected\"") || strstr(sum, "\"end\":\"unanswered\""), "%s", sum);
    cr_expect(strstr(sum, "\"reason\":\"\"") == NULL, "no reason given: %s", sum);
    cr_expect_eq(keel_test_json_num(sum, "screenshots"), 1, "%s", sum);
    char *img = keel_test_read_file(png);
    cr_expect_gt(strlen(img), 4, "the screenshot %s is empty", png);
    cr_expect(memcmp(img, "\x89PNG", 4) == 0, "not a PNG");
    free(img);
    free(sum);
    keel_test_proc_cleanup(&play);
}

// keel-play with `args` (and a --screenshot) is refused: exit 1, `end` and a
// reason that starts with `reason` in its summary, the reason drawn.
static void expect_refused(keel_test_proc *play, const char *const *args, const char *end, const char *reason)
{
    start_play(play, args);
    cr_assert(keel_test_proc_wait(play, 60000), "keel-play did not end");
    char *sum = play_summary(play);
    char want_end[64], want_reason[768];
    snprintf(want_end, sizeof want_end, "\"end\":\"%s\"", end);
    snprintf(want_reason, sizeof want_reason, "\"reason\":\"%s", reason);
    cr_expect_eq(play->status, 1, "keel-play exit %d", play->status);
    cr_expect(strstr(sum, want_end), "%s", sum);
    cr_expect(strstr(sum, want_reason), "%s", sum);
    cr_expect_eq(keel_test_json_num(sum, "screenshots"), 1, "the reason was drawn: %s", sum);
    free(sum);
}

// A server set up otherwise (its platforms): refused, the reason in the
// summary, exit 1.
Test(play_live, a_refusing_server_gives_its_reason)
{
    need_display();
    keel_test_proc sv, play;
    char at[64];
    start_server(&sv, "refuse.krec", true, at);
    const char *args[] = {"--connect", at, "--size", "640x360", "--screenshot", keel_test_dir_file(dir, "refused.png"),
                          NULL};
    expect_refused(&play, args, "refused", "refused by the server: ");
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

// A player on another level than the server's: refused for it, the reason
// naming the level file the player loaded.
Test(play_live, a_player_on_another_level_is_told_which_file_it_loaded)
{
    need_display();
    keel_test_proc sv, play;
    char at[64];
    start_server(&sv, "other_level.krec", false, at);
    char obj[512];
    snprintf(obj, sizeof obj, "%s", keel_test_dir_file(dir, "floor.obj"));
    FILE *f = fopen(obj, "w");
    cr_assert_not_null(f);
    fputs("v -5 0 -5\nv 5 0 -5\nv 5 0 5\nv -5 0 5\nf 1 3 2\nf 1 4 3\n", f);
    fclose(f);
    char want[640];
    snprintf(want, sizeof want,
             "refused by the server: simulation differs from the server's: level differs (this player's level: %s)",
             obj);
    const char *args[] = {"--connect", at,        "--level",      obj,
                          "--size",    "640x360", "--screenshot", keel_test_dir_file(dir, "other_level.png"),
                          NULL};
    expect_refused(&play, args, "refused", want);
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

// A server that drains (SIGTERM) while keel-play plays: keel-play shows
// the shutdown with the server's reason, ends "server_shutdown" and exits 0.
Test(play_live, a_server_shutting_down_is_shown_and_ends_the_match_cleanly)
{
    need_display();
    keel_test_proc sv, play;
    char at[64];
    start_server(&sv, "shutdown.krec", false, at);
    const char *args[] = {"--connect", at, "--name", "tester", "--size", "640x360", "--quit-after", "60", NULL};
    start_play(&play, args);
    cr_assert(wait_for_text(play.err, "keel-play: playing", 60000), "keel-play never started playing");
    keel_test_proc_kill(&sv, SIGTERM);
    cr_assert(keel_test_proc_wait(&play, 60000), "keel-play did not end");
    char *sum = play_summary(&play);
    char *err = keel_test_read_file(play.err);
    cr_expect_eq(play.status, 0, "keel-play exit %d", play.status);
    cr_expect(strstr(sum, "\"end\":\"server_shutdown\""), "%s", sum);
    cr_expect(strstr(sum, "\"reason\":\"match over: server shutting down"), "%s", sum);
    cr_expect(strstr(err, "keel-play: match over: server shutting down"), "%s", err);
    cr_expect_eq(sv.status, 0, "keel-server exit %d", sv.status);
    expect_clean(sum);
    free(err);
    free(sum);
    keel_test_proc_cleanup(&play);
    keel_test_proc_cleanup(&sv);
}

// --screenshot with --at-tick: written once the predicted tick reaches N,
// then keel-play leaves and exits 0.
Test(play_live, a_screenshot_at_a_predicted_tick)
{
    need_display();
    keel_test_proc sv, play;
    char at[64];
    start_server(&sv, "shot.krec", false, at);
    const char *png = keel_test_dir_file(dir, "tick.png");
    const char *args[] = {"--connect",    at,   "--size", "960x540", "--screenshot", png, "--at-tick", "200",
                          "--quit-after", "40", NULL};
    start_play(&play, args);
    cr_assert(keel_test_proc_wait(&play, 60000), "keel-play did not end");
    char *sum = play_summary(&play);
    cr_expect_eq(play.status, 0, "keel-play exit %d", play.status);
    cr_expect_eq(keel_test_json_num(sum, "screenshots"), 1, "%s", sum);
    cr_expect(strstr(sum, "\"end\":\"left\""), "%s", sum);
#if KEEL_PLAY_BUILT
    // The net graph is on by default at the bottom right: its legend names
    // the causes in their colours (amber substituted, blue remote command),
    // and nothing else in this frame has them (no other character is on the
    // server, and the own one is not drawn in first person). The graph is as
    // wide as its text, so its legend starts left of the middle.
    int w, h, n;
    unsigned char *px = stbi_load(png, &w, &h, &n, 3);
    cr_assert_not_null(px, "cannot read %s", png);
    cr_expect_eq(w, 960);
    cr_expect_eq(h, 540);
    long amber = 0, blue = 0, amber_right = 0, blue_low = 0, dark = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const unsigned char *p = px + ((size_t)y * (size_t)w + (size_t)x) * 3u;
            if (p[0] > 200 && p[1] > 140 && p[1] < 215 && p[2] < 90) {
                amber++;
                amber_right += x >= w / 4 && y >= h / 3;
            }
            if (p[0] < 110 && p[1] > 120 && p[1] < 200 && p[2] > 210) {
                blue++;
                blue_low += y >= h / 3;
            }
            dark += p[0] < 8 && p[1] < 8 && p[2] < 8;
        }
    stbi_image_free(px);
    cr_log_info("screenshot at tick 200: net graph legend pixels amber %ld (%ld right of the first quarter, below the "
                "top third), blue %ld (%ld "
                "below the top third); black %.1f%%",
                amber, amber_right, blue, blue_low, 100.0 * (double)dark / ((double)w * h));
    cr_expect_geq(amber, 20, "no net graph legend (substituted, amber)");
    cr_expect_geq(blue, 20, "no net graph legend (remote command, blue)");
    cr_expect_eq(amber_right, amber, "the net graph is not at the bottom right");
    cr_expect_eq(blue_low, blue, "the net graph is not at the bottom");
    cr_expect_lt(dark, (long)w * h / 2, "a black frame");
#endif
    free(sum);
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

// A new backend key in the test's folder (keel-token keygen); its path.
static const char *keygen(void)
{
    static char key[512]; // not one of keel_test_dir_file's buffers, which later calls reuse
    snprintf(key, sizeof key, "%s", keel_test_dir_file(dir, "backend.key"));
    const char *args[] = {"keygen", key, NULL};
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-token"), args, NULL);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    keel_test_run_free(&r);
    return key;
}

// Secure mode (docs/security.md): keel-play issues its own connect token
// with the server's backend key (--token-key) and plays; the server says it
// is secure and counts the admission.
// A secure server with a fresh key (recording to `record_name`), and
// keel-play run to its end on it with --connect and `args` (up to 10; the
// key's path stands where "KEY" is); its summary (free it).
static char *secure_session(keel_test_proc *sv, keel_test_proc *play, const char *record_name, const char *const *args)
{
    need_display();
    const char *key = keygen();
    char at[64];
    start_secure_server(sv, record_name, false, key, at);
    const char *all[14] = {"--connect", at};
    size_t n = 2;
    for (size_t i = 0; args[i] && n < 13; i++)
        all[n++] = strcmp(args[i], "KEY") == 0 ? key : args[i];
    all[n] = NULL;
    start_play(play, all);
    cr_assert(keel_test_proc_wait(play, 60000), "keel-play did not end");
    return play_summary(play);
}

Test(play_live, with_token_key_it_joins_a_secure_server_and_plays)
{
    keel_test_proc sv, play;
    const char *args[] = {"--token-key", "KEY", "--client-id", "5", "--size", "640x360", "--quit-after", "2", NULL};
    char *sum = secure_session(&sv, &play, "secure.krec", args);
    cr_expect_eq(play.status, 0, "keel-play exit %d", play.status);
    cr_expect(strstr(sum, "\"end\":\"left\""), "%s", sum);
    expect_clean(sum);
    cr_expect_gt(keel_test_json_num(sum, "ticks"), 0, "%s", sum);
    free(sum);
    keel_test_proc_kill(&sv, SIGTERM);
    char *out = keel_test_read_file(sv.out);
    cr_expect_eq(strncmp(out, "keel-server: secure (connect tokens required, key ", 50), 0, "%s", out);
    // admitted at least once: a response sent again before the admission
    // arrived is admitted again
    const char *hs = strstr(out, "keel-server: handshake: ");
    unsigned long long challenges = 0, admitted = 0, refused = 1;
    cr_expect(hs && sscanf(hs, "keel-server: handshake: challenges %llu, admitted %llu, refused %llu", &challenges,
                           &admitted, &refused) == 3,
              "%s", out);
    cr_expect(challenges >= 1 && admitted >= 1 && refused == 0, "%s", out);
    free(out);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

// A secure server does not answer a client without a connect token: the
// reason keel-play gives names that cause beside the others, with the flags
// that would join.
Test(play_live, a_secure_server_without_a_token_is_named_as_a_cause)
{
    keel_test_proc sv, play;
    const char *args[] = {"--connect-timeout", "3", "--size", "640x360", "--quit-after", "20", NULL};
    char *sum = secure_session(&sv, &play, "notoken.krec", args);
    cr_expect_eq(play.status, 1, "keel-play exit %d", play.status);
    cr_expect(strstr(sum, "\"end\":\"never_connected\"") || strstr(sum, "\"end\":\"unanswered\""), "%s", sum);
    cr_expect(strstr(sum, "a secure keel-server (--key)") && strstr(sum, "--token FILE or --token-key FILE"), "%s",
              sum);
    free(sum);
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

// An expired token (--token): refused by the server's handshake, the reason
// on screen and in the summary, exit 1. --token with --token-key is a usage
// error.
Test(play_live, an_expired_token_is_refused_with_the_reason)
{
    need_display();
    const char *key = keygen(), *token = keel_test_dir_file(dir, "old.token");
    keel_test_proc sv, play;
    char at[64], now[32];
    start_secure_server(&sv, "expired.krec", false, key, at);
    snprintf(now, sizeof now, "%lld", (long long)time(NULL) - 100); // valid for 1 s, 99 s ago
    const char *iargs[] = {"issue",     "--key", key,     "--client-id", "3",     "--server", at,
                           "--expires", "1",     "--now", now,           "--out", token,      NULL};
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-token"), iargs, NULL);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    keel_test_run_free(&r);
    const char *both[] = {"--connect", at, "--token", token, "--token-key", key, NULL};
    r = keel_test_run(keel_test_program_path("keel-play"), both, NULL);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    keel_test_run_free(&r);
    const char *args[] = {"--connect", at,        "--token",      token,
                          "--size",    "640x360", "--screenshot", keel_test_dir_file(dir, "expired.png"),
                          NULL};
    expect_refused(&play, args, "refused_token", "refused by the server's handshake: expired\"");
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}
