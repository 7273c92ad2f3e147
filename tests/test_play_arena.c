// keel tests: keel-play with a game (keel-arena): a rail shot fired with
// the mouse at a bot in front of the camera, and an arena recording played
// back with --game. MIT licence, see LICENSE.
//
// The live case is a real session: keel-server running arena on the
// built-in level, one keel-client bot standing still (--bot idle, its game
// commands drawn at random), keel-play in a window on a virtual display
// (Xvfb) kept turned to the bot (--aim-at, the scripted part) and is clicked
// with xdotool. It is judged by keel-play's summary: the hit marker its
// prediction showed and the bot's health after the shot. Nothing asserts a
// time; every wait is a bound against a hang. The bot's random shots are not
// aimed (it faces where the server spawned it). Skipped when keel-play was
// not built or Xvfb or xdotool is missing; normal_only (a live session).
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "test_xvfb.h"

static char dir[256];
static keel_test_xvfb xvfb;

static void setup(void) { keel_test_dir_make(dir, sizeof dir, "play_arena"); }

static void teardown(void)
{
    if (xvfb.pid > 0)
        keel_test_xvfb_stop(&xvfb);
    keel_test_dir_remove(dir);
}

TestSuite(play_arena, .init = setup, .fini = teardown, .timeout = 180);

static keel_test_run_result run_play(const char *const *args)
{
    setenv("DISPLAY", xvfb.display, 1);
    setenv("LIBGL_ALWAYS_SOFTWARE", "1", 1);
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 120; // a guard against hangs
    return keel_test_run(keel_test_program_path("keel-play"), args, &o);
}

// An object of the summary ("\"arena\":{"), for keel_test_json_num.
static const char *object(const char *json, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":{", name);
    const char *at = strstr(json, pat);
    cr_assert_not_null(at, "no %s in %s", name, json);
    return at;
}

Test(play_arena, a_rail_shot_at_a_bot_in_front_shows_the_hit_marker_and_the_bots_health)
{
    keel_test_play_need(&xvfb, 1024, 600);
    keel_test_proc sv, bot, play;
    const char *sargs[] = {"--bind", "127.0.0.1", "--port",           "0",   "--insecure", "--duration", "120",
                           "--game", "arena",     "--stats-interval", "0.2", NULL};
    keel_test_proc_start(&sv, "keel-server", sargs);
    char port[16], at[64];
    snprintf(port, sizeof port, "%u", keel_test_wait_port(sv.out));
    snprintf(at, sizeof at, "127.0.0.1:%s", port);
    // the bot first: character 1
    const char *bargs[] = {"--port", port, "--bots", "1", "--bot", "idle", "--game", "arena", "--ticks", "0", NULL};
    keel_test_proc_start(&bot, "keel-client", bargs);
    bool joined = false; // the server's stats line counts it
    for (int i = 0; i < 600 && !joined; i++, keel_test_sleep_ms(50))
        joined = keel_test_wait_text(sv.out, "clients 1", 1) || keel_test_wait_text(sv.err, "clients 1", 1);
    cr_assert(joined, "the bot never joined");
    const char *pargs[] = {"--connect", at,        "--game",     "arena",        "--aim-at", "1",
                           "--size",    "640x360", "--no-vsync", "--quit-after", "40",       NULL};
    keel_test_play_start(&play, &xvfb, pargs);
    cr_assert(keel_test_wait_text(play.err, "keel-play: playing", 60000), "keel-play never started playing");
    // After the bot's spawn protection (1.5 s): the rail, then Esc Esc.
    const char *search[] = {"search", "--sync", "--name", "keel-play", NULL};
    keel_test_run_result w = keel_test_run(keel_test_which("xdotool"), search, NULL);
    cr_assert_eq(w.exit_code, 0, "no keel-play window: %s", w.err);
    w.out[strcspn(w.out, "\n")] = 0;
    // Two clicks 1.7 s apart (more than the rail's interval): should the
    // window have lost the mouse (a focus change while it opened), the first
    // only captures it again and the second fires.
    const char *act[] = {"windowfocus", w.out,    "sleep", "2",   "mousedown", "1",      "sleep", "0.3",
                         "mouseup",     "1",      "sleep", "1.7", "click",     "1",      "sleep", "1.5",
                         "key",         "Escape", "sleep", "0.2", "key",       "Escape", NULL};
    keel_test_run_result r = keel_test_run(keel_test_which("xdotool"), act, NULL);
    cr_expect_eq(r.exit_code, 0, "xdotool: %s", r.err);
    keel_test_run_free(&r);
    keel_test_run_free(&w);
    cr_assert(keel_test_proc_wait(&play, 60000), "keel-play did not end");
    char *out = keel_test_read_file(play.out);
    char *err = keel_test_read_file(play.err);
    cr_log_info("keel-play: %s%s", out, err);
    const char *sum = strstr(out, "{\"mode\":\"live\"");
    cr_assert_not_null(sum, "no summary: %s %s", out, err);
    cr_expect_eq(play.status, 0, "keel-play exit %d", play.status);
    cr_expect(strstr(sum, "\"aimed\":true"), "%s", sum);
    cr_expect_geq(keel_test_json_num(sum, "fire_commands"), 1, "%s", sum);
    // the hit marker from the prediction, and the bot's health after the shot
    cr_expect_geq(keel_test_json_num(object(sum, "arena"), "hit_markers"), 1, "%s", sum);
    cr_expect_eq(keel_test_json_num(object(sum, "arena"), "victim"), 1, "%s", sum);
    cr_expect_lt(keel_test_json_num(object(sum, "arena"), "victim_health"), 100, "%s", sum);
    cr_expect_geq(keel_test_json_num(object(sum, "arena"), "victim_damage"), 80, "%s", sum);
    cr_expect_geq(keel_test_json_num(object(sum, "game_fields"), "hits"), 1, "%s", sum);
    cr_expect_eq(keel_test_json_num(sum, "hash_mismatches"), 0, "%s", sum);
    cr_expect_eq(keel_test_json_num(object(sum, "own_mispredictions"), "unexplained"), 0, "%s", sum);
    free(out);
    free(err);
    keel_test_proc_kill(&bot, SIGTERM);
    keel_test_proc_kill(&sv, SIGTERM);
    keel_test_proc_cleanup(&bot);
    keel_test_proc_cleanup(&sv);
    keel_test_proc_cleanup(&play);
}

Test(play_arena, an_arena_recording_plays_back_with_its_game)
{
    keel_test_play_need(&xvfb, 1024, 600);
    const char *rec = keel_test_dir_file(dir, "arena.krec");
    const char *sargs[] = {
        "--virtual-bots", "8", "--ticks", "400", "--level", KEEL_SOURCE_DIR "/levels/arena.map", "--game", "arena",
        "--record",       rec, "--seed",  "3",   NULL};
    keel_test_run_result s = keel_test_run(keel_test_program_path("keel-server"), sargs, NULL);
    cr_assert_eq(s.exit_code, 0, "keel-server: %s", s.err);
    keel_test_run_free(&s);
    // Without the game: refused, naming it (keel-replay's exit code 3).
    const char *none[] = {"--replay", rec, "--frames", "1", NULL};
    keel_test_run_result r = run_play(none);
    cr_expect_eq(r.exit_code, 3, "%s", r.err);
    cr_expect(strstr(r.err, "game \"arena\"") && strstr(r.err, "--game"), "%s", r.err);
    keel_test_run_free(&r);
    // Another game: 7, naming both.
    const char *other[] = {"--replay", rec, "--game", "tag", "--frames", "1", NULL};
    r = run_play(other);
    cr_expect_eq(r.exit_code, 7, "%s", r.err);
    keel_test_run_free(&r);
    // With it: a seek to tick 300 (a keyframe's game state restored, then
    // re-simulated), the followed character's game fields by name.
    const char *png = keel_test_dir_file(dir, "arena.png");
    const char *args[] = {"--replay", rec,      "--game",  "arena",        "--at-tick", "300", "--follow",
                          "1",        "--size", "640x360", "--screenshot", png,         NULL};
    r = run_play(args);
    cr_log_info("%s%s", r.out, r.err);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_eq(keel_test_json_num(r.out, "tick"), 300, "%s", r.out);
    cr_expect(strstr(r.out, "\"game\":\"arena\""), "%s", r.out);
    cr_expect(strstr(r.out, "\"game_fields\":{\"health\":"), "%s", r.out);
    cr_expect_gt(keel_test_json_num(object(r.out, "arena"), "kills"), 0, "%s",
                 r.out); // 8 bots fire at random: kills by tick 300
    cr_expect_eq(keel_test_json_num(object(r.out, "arena"), "clock"), 300, "%s", r.out);
    keel_test_run_free(&r);
    // Played forward at 8x to the end: the HUD saw shots, rockets and deaths.
    const char *fwd[] = {"--replay", rec,          "--game",   "arena", "--follow", "1",       "--speed",
                         "8",        "--no-vsync", "--frames", "150",   "--size",   "320x180", NULL};
    r = run_play(fwd);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    if (keel_test_json_num(r.out, "tick") >= 400) {
        cr_expect_gt(keel_test_json_num(object(r.out, "arena"), "rail_shots"), 0, "%s", r.out);
        cr_expect_gt(keel_test_json_num(object(r.out, "arena"), "rockets"), 0, "%s", r.out);
        cr_expect_gt(keel_test_json_num(object(r.out, "arena"), "deaths"), 0, "%s", r.out);
    } else {
        keel_test_warn("150 frames reached tick %.0f only: the HUD's counts are not judged",
                       keel_test_json_num(r.out, "tick"));
    }
    keel_test_run_free(&r);
}
