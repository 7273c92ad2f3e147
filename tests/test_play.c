// keel-play under a private X server (Xvfb): the pictures it draws, its bad
// cases and its controls. MIT licence, see LICENSE.
//
// Each test starts its own Xvfb (tests/support/test_xvfb.h) and writes its
// own recordings with rec_writer: three characters standing still on the
// built-in level's open floor at places the test knows, so it can project
// their centres with keel-play's own camera code (client/keel-play/camera.c)
// and look at the pixels there. The controls are driven with xdotool and
// judged by the JSON summary keel-play prints at exit (frames, tick, seeks,
// steps), never by time. Without keel-play built (SDL2, libepoxy, cglm or
// stb missing) the tests skip.
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <keel/rec.h>
#include <keel/rec_verify.h>

#include "test_support.h"
#include "test_xvfb.h"

#if KEEL_PLAY_BUILT

#include <stb_image.h>

#include "labels.h"
#include "live_figures.h"
#include "render.h"

// ---- recordings ------------------------------------------------------------------

// Characters 1, 2, 3 standing at x = -3, 0, 3 on the floor (z = 0, the
// built-in level's clear lane), facing -z. join_tick: character 4 joins at
// (0, 0, -6) then, and 10 ticks later character 3's command is marked as a
// substitute (input.tick the tick before the one it ran in). nudge_tick:
// character 2 runs forward for that one tick (a recording that diverges
// from the plain one there).
// The header's source: keel-server's recordings are read otherwise.
static const char *recording_source = "test_play";

static void write_recording(const char *path, uint32_t ticks, uint32_t join_tick, uint32_t nudge_tick)
{
    sim_level level;
    sim_world *world = keel_test_builtin_world(&level);
    sim_move_settings s = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(world, &s, 8);
    cr_assert_not_null(scene);
    for (uint32_t id = 1; id <= 3; id++) {
        sim_char_state c = sim_char_spawn(id, sim_v3(SIM_FX_INT(3 * ((int32_t)id - 2)), 0, 0), 0);
        cr_assert_eq(sim_scene_add_character(scene, &c), 0);
    }
    rec_header h = rec_default_header();
    rec_header_set_scene(&h, scene);
    h.settings = s;
    snprintf(h.source, sizeof h.source, "%s", recording_source);
    rec_error err;
    memset(&err, 0, sizeof err);
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = false;
    rec_writer *w = rec_writer_open(path, &h, &wc, scene, &err);
    cr_assert_not_null(w, "%s", err.message);
    for (uint32_t t = 0; t < ticks; t++) {
        sim_char_state joiner = sim_char_spawn(4, sim_v3(0, 0, SIM_FX_INT(-6)), 0);
        rec_tick rt;
        memset(&rt, 0, sizeof rt);
        rt.tick = sim_scene_tick(scene);
        if (join_tick && rt.tick == join_tick) {
            cr_assert_eq(sim_scene_add_character(scene, &joiner), 0);
            rt.join_count = 1;
            rt.joins = &joiner;
        }
        rec_command cmds[8];
        uint32_t n;
        const sim_char_state *cs = sim_scene_characters(scene, &n);
        for (uint32_t i = 0; i < n; i++) {
            memset(&cmds[i], 0, sizeof cmds[i]);
            cmds[i].id = cs[i].id;
            cmds[i].input.tick = rt.tick;
            if (nudge_tick && rt.tick == nudge_tick && cs[i].id == 2)
                cmds[i].input.forward = 127;
            if (join_tick && rt.tick == join_tick + 10u && cs[i].id == 3)
                cmds[i].input.tick = rt.tick - 1u;
            cr_assert(sim_scene_set_input(scene, cmds[i].id, &cmds[i].input));
        }
        rt.command_count = n;
        rt.commands = cmds;
        sim_scene_step(scene);
        cr_assert(rec_writer_tick(w, &rt, scene));
    }
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    sim_scene_destroy(scene);
    keel_test_builtin_free(&level, world);
}

// ---- running keel-play -------------------------------------------------------------

static keel_test_xvfb xvfb;

// Mesa's llvmpipe keeps allocations of its own until exit, and SDL's X11
// start leaves libdbus's when the display cannot be opened, which the
// sanitizer tree's LeakSanitizer would report as keel-play's leaks: leak
// checks are off for the programs these tests start (and only here).
static void no_leak_checks(void)
{
    const char *old = getenv("ASAN_OPTIONS");
    if (old && strstr(old, "detect_leaks=0"))
        return;
    char opts[512];
    snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", old ? old : "", old && old[0] ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
}

static void start_display(void)
{
    if (!keel_test_program_find("keel-play"))
        cr_skip_test("keel-play is not built");
    if (!keel_test_xvfb_start(&xvfb, 1600, 1000))
        cr_skip_test("%s", xvfb.why);
    setenv("DISPLAY", xvfb.display, 1);
    unsetenv("WAYLAND_DISPLAY");
    unsetenv("SDL_VIDEODRIVER");
    no_leak_checks();
}

static void stop_display(void) { keel_test_xvfb_stop(&xvfb); }

static keel_test_run_result play(const char *const *args)
{
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 120; // a guard against a hang, not a speed check
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-play"), args, &o);
    cr_assert(!r.timed_out, "keel-play hung; stderr: %s", r.err);
    return r;
}

// xdotool with the arguments given; its stdout (free it).
static char *xdo(const char *const *args)
{
    const char *x = keel_test_which("xdotool");
    if (!x)
        cr_skip_test("xdotool is not installed (scripts/setup.sh)");
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 30;
    keel_test_run_result r = keel_test_run(x, args, &o);
    cr_assert(!r.timed_out && r.exit_code == 0, "xdotool %s failed: %s", args[0], r.err);
    free(r.err);
    return r.out;
}

// ---- pictures ----------------------------------------------------------------------

typedef struct image {
    unsigned char *px;
    int w, h;
} image;

static image load_png(const char *path)
{
    image im;
    int n;
    im.px = stbi_load(path, &im.w, &im.h, &n, 3);
    cr_assert_not_null(im.px, "cannot read %s", path);
    return im;
}

static const unsigned char *pixel(const image *im, int x, int y)
{
    cr_assert(x >= 0 && y >= 0 && x < im->w && y < im->h, "pixel %d,%d outside %dx%d", x, y, im->w, im->h);
    return im->px + ((size_t)y * (size_t)im->w + (size_t)x) * 3u;
}

// Hue in degrees and saturation of an RGB colour (0..1 each).
static void hue_sat(const float c[3], float *hue, float *sat)
{
    float mx = fmaxf(c[0], fmaxf(c[1], c[2])), mn = fminf(c[0], fminf(c[1], c[2])), d = mx - mn;
    *sat = mx > 0 ? d / mx : 0;
    float h = 0;
    if (d > 0) {
        if (mx == c[0])
            h = fmodf((c[1] - c[2]) / d + 6.0f, 6.0f);
        else if (mx == c[1])
            h = (c[2] - c[0]) / d + 2.0f;
        else
            h = (c[0] - c[1]) / d + 4.0f;
    }
    *hue = h * 60.0f;
}

// The palette entry whose hue is nearest the pixel's (lighting scales a
// colour's brightness, not its hue); -1 for an unsaturated pixel.
static int nearest_palette(const unsigned char *p)
{
    float c[3] = {p[0] / 255.0f, p[1] / 255.0f, p[2] / 255.0f}, hue, sat;
    hue_sat(c, &hue, &sat);
    if (sat < 0.4f)
        return -1;
    int best = -1;
    float bd = 360.0f;
    for (uint32_t i = 0; i < kp_palette_size(); i++) {
        float e[3], eh, es;
        kp_palette_entry(i, e);
        hue_sat(e, &eh, &es);
        float d = fabsf(eh - hue);
        d = d > 180.0f ? 360.0f - d : d;
        if (d < bd)
            bd = d, best = (int)i;
    }
    return best;
}

static int palette_index(uint32_t id)
{
    float want[3];
    kp_character_color(id, want);
    for (uint32_t i = 0; i < kp_palette_size(); i++) {
        float e[3];
        kp_palette_entry(i, e);
        if (memcmp(e, want, sizeof e) == 0)
            return (int)i;
    }
    return -1;
}

#define CAMERA "0,3,7,0,-20"

Test(play, picture_characters_level_overlay, .timeout = 120)
{
    start_display();
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_picture");
    const char *rec = keel_test_dir_file(dir, "still.rec"), *png = keel_test_dir_file(dir, "still.png");
    write_recording(rec, 64, 0, 0);
    const char *args[] = {"--replay",     rec, "--at-tick", "32",      "--camera", CAMERA,
                          "--screenshot", png, "--size",    "960x540", NULL};
    keel_test_run_result r = play(args);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_assert_eq(keel_test_json_num(r.out, "tick"), 32);
    cr_assert_eq(keel_test_json_num(r.out, "screenshots"), 1);
    image im = load_png(png);
    cr_assert_eq(im.w, 960);
    cr_assert_eq(im.h, 540);

    // Every character's centre shows its own palette colour.
    kp_camera cam = kp_camera_make(0, 3, 7, 0, -20);
    for (uint32_t id = 1; id <= 3; id++) {
        float centre[3] = {3.0f * ((float)id - 2.0f), 0.9f, 0}, x, y;
        cr_assert(kp_camera_project(&cam, im.w, im.h, centre, &x, &y));
        const unsigned char *p = pixel(&im, (int)x, (int)y);
        cr_log_info("character %u at (%.0f, %.0f): %u %u %u\n", (unsigned)id, (double)x, (double)y, p[0], p[1], p[2]);
        cr_expect_eq(nearest_palette(p), palette_index(id), "character %u at (%.0f, %.0f) is %u,%u,%u", (unsigned)id,
                     (double)x, (double)y, p[0], p[1], p[2]);
    }
    // The level covers most of the frame: not the clear colour (sky), not black.
    uint32_t clear = 0, black = 0, total = 0;
    for (int y = 0; y < im.h; y += 4)
        for (int x = 0; x < im.w; x += 4, total++) {
            const unsigned char *p = pixel(&im, x, y);
            clear += abs(p[0] - 135) < 4 && abs(p[1] - 179) < 4 && abs(p[2] - 219) < 4;
            black += p[0] < 8 && p[1] < 8 && p[2] < 8;
        }
    cr_log_info("clear colour %.1f%%, black %.1f%%\n", 100.0 * clear / total, 100.0 * black / total);
    cr_expect_lt(clear, total / 2, "the level covers less than half the frame");
    cr_expect_lt(black, total / 20, "the frame is mostly black");
    // The timeline's played half is blue, the HUD's box darker than the sky.
    const unsigned char *bar = pixel(&im, 40, im.h - 26), *hud = pixel(&im, 8, 10);
    cr_expect(bar[2] > bar[0] + 60, "timeline at (40, %d) is %u,%u,%u", im.h - 26, bar[0], bar[1], bar[2]);
    cr_expect(hud[0] + hud[1] + hud[2] < 135 + 179 + 219 - 150, "HUD box is %u,%u,%u", hud[0], hud[1], hud[2]);
    stbi_image_free(im.px);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

Test(play, diff_starts_at_the_first_divergence, .timeout = 120)
{
    start_display();
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_diff");
    const char *a = keel_test_dir_file(dir, "a.rec"), *b = keel_test_dir_file(dir, "b.rec"),
               *png = keel_test_dir_file(dir, "diff.png");
    write_recording(a, 100, 0, 0);
    write_recording(b, 100, 0, 40); // character 2 runs forward at tick 40 in B only
    const char *diff[] = {"diff", a, b, "--json", NULL};
    keel_test_run_result want = keel_test_run(keel_test_program_path("keel-replay"), diff, NULL);
    cr_assert_eq(want.exit_code, REC_EXIT_DIVERGED, "%s", want.err);
    const char *args[] = {"--diff", a, b, "--screenshot", png, "--size", "960x540", NULL};
    keel_test_run_result r = play(args);
    cr_log_info("%s", r.out);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "\"diverged\":true"), "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "divergent_tick"), keel_test_json_num(want.out, "tick"), "keel-replay: %s",
                 want.out);
    cr_expect_eq(keel_test_json_num(r.out, "divergent_tick"), 40);
    cr_expect_eq(keel_test_json_num(r.out, "divergent_character"), 2);
    cr_expect_eq(keel_test_json_num(r.out, "follow"), 2, "the camera follows the divergent character");
    cr_expect_eq(keel_test_json_num(r.out, "tick"), 41, "the view starts at the state after the divergent tick");
    cr_expect(strstr(r.err, "first divergence (inputs)"), "%s", r.err);
    image im = load_png(png);
    cr_expect_eq(im.w, 960);
    stbi_image_free(im.px);
    keel_test_run_free(&want);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

// Pixels of the diff notes' amber in the top-left quarter (the HUD's side).
static uint32_t amber_pixels(const image *im)
{
    uint32_t n = 0;
    for (int y = 0; y < im->h / 2; y++)
        for (int x = 0; x < im->w / 2; x++) {
            const unsigned char *p = pixel(im, x, y);
            n += p[0] > 225 && p[1] > 190 && p[1] < 235 && p[2] > 70 && p[2] < 130;
        }
    return n;
}

// keel-replay diff's notes on the headers (a setting that differs) are
// shown: on stderr and on screen; recordings of two levels are refused
// (B's characters on A's level would mean nothing), naming both levels.
Test(play, diff_shows_the_notes_and_refuses_two_levels, .timeout = 120)
{
    if (!keel_test_program_find("keel-sim"))
        cr_skip_test("keel-sim is not built");
    start_display();
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_diff_notes");
    char a[512], b[512], g[512], png[512], plain[512];
    snprintf(a, sizeof a, "%s/a.rec", dir);
    snprintf(b, sizeof b, "%s/b.rec", dir);
    snprintf(g, sizeof g, "%s/g.rec", dir);
    snprintf(png, sizeof png, "%s/notes.png", dir);
    snprintf(plain, sizeof plain, "%s/plain.png", dir);
    const char *sa[] = {"--characters", "2", "--ticks", "64", "--record", a, "--quiet", NULL};
    const char *sb[] = {"--characters", "2", "--ticks", "64", "--set", "max_speed=10", "--record", b, "--quiet", NULL};
    const char *sg[] = {
        "--level", "generated", "--generate-triangles", "2000", "--characters", "2", "--ticks", "64", "--record", g,
        "--quiet", NULL};
    const char *const *sims[] = {sa, sb, sg};
    for (int i = 0; i < 3; i++) {
        keel_test_run_result s = keel_test_run(keel_test_program_path("keel-sim"), sims[i], NULL);
        cr_assert_eq(s.exit_code, 0, "%s", s.err);
        keel_test_run_free(&s);
    }
    const char *args[] = {"--diff",       a,   b,        "--at-tick", "0", "--camera", "0,40,0,0,-89",
                          "--screenshot", png, "--size", "960x540",   NULL};
    keel_test_run_result r = play(args);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "keel-play: note: setting max_speed differs"), "%s", r.err);
    cr_expect_geq(keel_test_json_num(r.out, "notes"), 1, "%s", r.out);
    keel_test_run_free(&r);
    const char *same[] = {"--diff",       a,     a,        "--at-tick", "0", "--camera", "0,40,0,0,-89",
                          "--screenshot", plain, "--size", "960x540",   NULL};
    r = play(same);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    keel_test_run_free(&r);
    image im = load_png(png), im0 = load_png(plain);
    uint32_t with = amber_pixels(&im), without = amber_pixels(&im0);
    cr_log_info("note pixels: %u with notes, %u without", with, without);
    cr_expect_gt(with, without + 100, "the notes are not on screen (%u vs %u amber pixels)", with, without);
    stbi_image_free(im.px);
    stbi_image_free(im0.px);

    const char *two[] = {"--diff", a, g, "--frames", "1", NULL};
    r = play(two);
    cr_expect_eq(r.exit_code, 2, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "different levels") && strstr(r.err, "the built-in level") &&
                  strstr(r.err, "a generated level (2000 triangles"),
              "%s", r.err);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

#if KEEL_PLAY_SESSION

#include <keel/cl_record.h>

#include "keel_session.h"

// A client recording made on the in-memory network with a virtual clock
// (keel_session: the same session every run): keel-play re-runs the client
// library on it and must find the client's own mispredictions, one marker
// each, and reach its last predicted tick.
Test(play, client_recording_shows_the_prediction, .timeout = 120)
{
    start_display();
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_client");
    const char *file = keel_test_dir_file(dir, "client.rec");
    sim_level level;
    sim_world *world = keel_test_builtin_world(&level);
    keel_session_config sc = keel_session_default_config();
    sc.bots = 6;
    sc.ticks = 640;
    sc.full_clients = 1;
    sim_move_settings settings = sim_move_default_settings();
    keel_session *session = keel_session_create(world, &level, &settings, &sc);
    cr_assert_not_null(session);
    rec_header ch = cl_record_default_header(keel_session_client0(session));
    rec_error err;
    memset(&err, 0, sizeof err);
    cl_record *cr = cl_record_open(file, &ch, NULL, &err);
    cr_assert_not_null(cr, "%s", err.message);
    keel_session_record_client0(session, cr);
    keel_session_run(session);
    cl_stats st;
    cl_client_stats(keel_session_client0(session), &st);
    double own = 0;
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        own += (double)st.own_mispredictions[c];
    double predicted = cl_client_predicted_tick(keel_session_client0(session));
    double id = cl_client_character(keel_session_client0(session));
    cr_assert(cl_record_close(cr, &err), "%s", err.message);
    keel_session_destroy(session);
    keel_test_builtin_free(&level, world);

    const char *png = keel_test_dir_file(dir, "client.png");
    const char *args[] = {"--replay", file,      "--at-tick",    "4000000000", "--frames", "2",
                          "--size",   "640x360", "--screenshot", png,          NULL};
    keel_test_run_result r = play(args);
    // The HUD's client line is wrapped to the window: no HUD text in the
    // last 10 columns (it ran off the right edge at 1280 and 960 wide).
    image im = load_png(png);
    uint32_t edge = 0;
    for (int y = 0; y < 140; y++)
        for (int x = im.w - 10; x < im.w; x++) {
            const unsigned char *p = pixel(&im, x, y);
            edge += p[0] > 245 && p[1] > 245 && p[2] > 245;
        }
    cr_expect_eq(edge, 0, "%u white pixels of text at the right edge of the HUD", edge);
    stbi_image_free(im.px);
    cr_log_info("own mispredictions %.0f, predicted tick %.0f\n%s", own, predicted, r.out);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "\"client\":true"), "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "follow"), id, "the client's own character is followed: %s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "own_mispredictions"), own, "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "markers"), own, "one marker per own misprediction: %s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "last_tick"), predicted, "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "tick"), predicted, "%s", r.out);
    cr_expect_lt(keel_test_json_num(r.out, "first_tick"), predicted, "%s", r.out);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

#endif

Test(play, real_map_follows_a_character, .timeout = 120)
{
    const char *map = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!map)
        cr_skip_test("the shared maps are not there (KEEL_LEVELS_DIR)");
    if (!keel_test_program_find("keel-sim"))
        cr_skip_test("keel-sim is not built");
    start_display();
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_map");
    const char *rec = keel_test_dir_file(dir, "zdm2.rec"), *png = keel_test_dir_file(dir, "zdm2.png");
    const char *sim[] = {"--level", map,   "--scale",  "0.12", "--characters", "16",
                         "--ticks", "160", "--record", rec,    "--quiet",      NULL};
    keel_test_run_result s = keel_test_run(keel_test_program_path("keel-sim"), sim, NULL);
    cr_assert_eq(s.exit_code, 0, "%s", s.err);
    // The chase camera looks at a point inside the followed character's
    // shape, from a spot the level does not hide it from: the middle of
    // the frame is that character.
    const char *args[] = {"--replay", rec, "--at-tick", "120", "--screenshot", png, "--size", "800x450", NULL};
    keel_test_run_result r = play(args);
    cr_log_info("%s", r.out);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    uint32_t id = (uint32_t)keel_test_json_num(r.out, "follow");
    cr_assert_gt(id, 0u, "%s", r.out);
    image im = load_png(png);
    const unsigned char *p = pixel(&im, im.w / 2, im.h / 2);
    cr_expect_eq(nearest_palette(p), palette_index(id), "the middle is %u,%u,%u, not character %u's colour", p[0], p[1],
                 p[2], (unsigned)id);
    uint32_t clear = 0, total = 0;
    for (int y = 0; y < im.h; y += 4)
        for (int x = 0; x < im.w; x += 4, total++) {
            const unsigned char *q = pixel(&im, x, y);
            clear += abs(q[0] - 135) < 4 && abs(q[1] - 179) < 4 && abs(q[2] - 219) < 4;
        }
    cr_log_info("clear colour %.1f%%\n", 100.0 * clear / total);
    cr_expect_lt(clear, total / 2, "the map covers less than half the frame");
    stbi_image_free(im.px);
    keel_test_run_free(&s);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

// The summary's pop figures: each one with its own frame's. A long frame
// (bound 0.4 m) with the largest pop (0.325 m), a short one (bound 0.195 m)
// with the largest ratio (0.18 m): pop_bound_m is the long frame's bound,
// never the short one's beside the long one's pop.
Test(play, pop_figures_name_their_own_frames)
{
    kp_figures *f = malloc(sizeof *f);
    cr_assert_not_null(f);
    kp_figures_init(f);
    kp_figures_pop(f, 0.05, 0.2);
    kp_figures_pop(f, 0.325, 0.4);
    kp_figures_pop(f, 0.18, 0.195);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    kp_figures_print(f, out);
    fclose(out);
    cr_log_info("%s", text);
    cr_expect(strstr(text, "\"largest_pop_m\":0.32500,\"pop_bound_m\":0.40000"), "%s", text);
    cr_expect(strstr(text, "\"largest_pop_ratio\":0.9231,\"ratio_pop_m\":0.18000,\"ratio_bound_m\":0.19500"), "%s",
              text);
    cr_expect_eq(keel_test_json_num(text, "pop_frames"), 3);
    free(text);
    free(f);
}

// A character as keel-play draws it: a 0.6 x 1.8 m box on the floor at x, z
// (half height `half_y`), labelled.
static kp_char_draw label_char(uint32_t id, float x, float z, float half_y)
{
    kp_char_draw d;
    memset(&d, 0, sizeof d);
    d.id = id;
    d.feet[0] = x, d.feet[2] = z;
    d.centre[0] = x, d.centre[1] = half_y, d.centre[2] = z;
    d.half[0] = 0.3f, d.half[1] = half_y, d.half[2] = 0.3f;
    d.shape = KP_SHAPE_BOX;
    d.label = true;
    return d;
}

static bool placed(const kp_label *l, uint32_t n, uint32_t id)
{
    for (uint32_t i = 0; i < n; i++)
        if (l[i].id == id)
            return true;
    return false;
}

// Labels: inside the view, off the HUD, not through a nearer character, not
// over a nearer character's label.
Test(play, labels_keep_off_the_hud_nearer_characters_and_each_other)
{
    kp_camera cam = kp_camera_make(0, 3, 7, 0, -20);
    kp_char_draw c[6] = {
        label_char(1, -3, 0, 0.9f), label_char(2, 0, 0, 0.9f),
        label_char(3, 3, 0, 0.9f),  label_char(4, 3.05f, -0.3f, 0.9f), // just behind 3: its label would run into 3's
        label_char(5, 0, -4, 0.9f),                                    // behind 6, a pillar 4 m tall in front of it
        label_char(6, 0, -2, 2.0f),
    };
    kp_label out[KP_MAX_LABELS];
    uint32_t n = kp_labels_place(&cam, 960, 540, c, 6, NULL, 0, out, KP_MAX_LABELS);
    for (uint32_t i = 0; i < n; i++)
        cr_log_info("label %u at (%.0f, %.0f) %.0fx%.0f", out[i].id, (double)out[i].box[0], (double)out[i].box[1],
                    (double)out[i].box[2], (double)out[i].box[3]);
    cr_expect(placed(out, n, 1) && placed(out, n, 2) && placed(out, n, 3) && placed(out, n, 6), "%u placed", n);
    cr_expect(!placed(out, n, 4), "4's label runs into nearer 3's");
    cr_expect(!placed(out, n, 5), "5 is behind the pillar 6");
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < i; k++) {
            const float *a = out[i].box, *b = out[k].box;
            cr_expect(!(a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3]),
                      "labels %u and %u overlap", out[i].id, out[k].id);
        }
    // a HUD over the left half: 1's label is left out, the others stay
    const float hud[1][4] = {{0, 0, 420, 540}};
    n = kp_labels_place(&cam, 960, 540, c, 6, hud, 1, out, KP_MAX_LABELS);
    cr_expect(!placed(out, n, 1) && placed(out, n, 3), "%u placed", n);
    // a view too narrow for a label at its edge: whole or not at all
    n = kp_labels_place(&cam, 960, 540, c, 6, NULL, 0, out, KP_MAX_LABELS);
    for (uint32_t i = 0; i < n; i++)
        cr_expect(out[i].box[0] >= 0 && out[i].box[0] + out[i].box[2] <= 960, "label %u leaves the view", out[i].id);
}

// A keel-server recording from before the substitution marks (no
// substitutes_marked in its header) holds a substitute as the tick's own
// command: keel-play says it cannot show them instead of counting 0.
Test(play, a_server_recording_from_before_the_marks_says_so, .timeout = 120)
{
    start_display();
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_subst");
    const char *plain = keel_test_dir_file(dir, "server.rec"), *marked = keel_test_dir_file(dir, "marked.rec");
    recording_source = "keel-server";
    write_recording(plain, 40, 0, 0);
    write_recording(marked, 40, 5, 0); // a substitute marked at tick 15
    recording_source = "test_play";
    const char *args[] = {"--replay", plain, "--frames", "1", "--size", "320x200", NULL};
    keel_test_run_result r = play(args);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "\"substitutes_marked\":false"), "%s", r.out);
    cr_expect(strstr(r.err, "predates substitution marks"), "%s", r.err);
    keel_test_run_free(&r);
    const char *args2[] = {"--replay", marked, "--frames", "1", "--size", "320x200", NULL};
    r = play(args2);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "\"substitutes_marked\":true"), "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "substitutes"), 1, "%s", r.out);
    cr_expect(!strstr(r.err, "predates substitution marks"), "%s", r.err);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

// A keel-server session whose bots' commands go missing now and then: its
// recording shows a substitution marker for every substitute the server
// counted (the server marks them in the recording; before, it recorded a
// substitute as the tick's own command and keel-play showed none).
Test(play, a_server_session_shows_every_substitute_its_server_ran, .timeout = 120)
{
    start_display();
    if (!keel_test_program_find("keel-server"))
        cr_skip_test("keel-server is not built");
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_subst_server");
    const char *rec = keel_test_dir_file(dir, "session.krec");
    const char *sargs[] = {"--virtual-bots", "4", "--full-clients", "0", "--ticks", "640", "--record", rec, NULL};
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 120; // a guard against a hang, not a speed check
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-server"), sargs, &o);
    cr_assert_eq(r.exit_code, 0, "keel-server: %s %s", r.out, r.err);
    const char *at = strstr(r.out, "substituted ");
    cr_assert_not_null(at, "%s", r.out);
    unsigned long long ran = strtoull(at + strlen("substituted "), NULL, 10);
    keel_test_run_free(&r);
    cr_assert_gt(ran, 0u, "the session substituted nothing: nothing to show");
    const char *args[] = {"--replay", rec, "--frames", "1", "--size", "320x200", NULL};
    r = play(args);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "\"substitutes_marked\":true"), "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "substitutes"), (double)ran, "server: %llu; keel-play: %s", ran, r.out);
    cr_expect_eq(keel_test_json_num(r.out, "markers_dropped"), 0, "%s", r.out);
    cr_expect(!strstr(r.err, "predates substitution marks"), "%s", r.err);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

// ---- bad cases ---------------------------------------------------------------------

Test(play, no_display)
{
    if (!keel_test_program_find("keel-play"))
        cr_skip_test("keel-play is not built");
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    unsetenv("SDL_VIDEODRIVER");
    const char *args[] = {"--replay", "/nonexistent.rec", NULL};
    keel_test_run_result r = play(args);
    cr_expect_eq(r.exit_code, 1);
    cr_expect(strstr(r.err, "keel-play: cannot open a window") && strstr(r.err, "is DISPLAY set?"), "stderr: %s",
              r.err);
    keel_test_run_free(&r);
    // a display that is not there: named, with the variable it came from
    no_leak_checks();
    setenv("DISPLAY", ":7177", 1);
    r = play(args);
    cr_expect_eq(r.exit_code, 1);
    cr_expect(strstr(r.err, "keel-play: cannot open a window: the X display :7177 ($DISPLAY) could not be opened"),
              "stderr: %s", r.err);
    keel_test_run_free(&r);
    unsetenv("DISPLAY");
}

// --follow names a character the recording holds; --level is the recorded
// level (its digest), never passed over for the recorded path.
Test(play, follow_and_level_flags_are_checked_against_the_recording, .timeout = 120)
{
    start_display();
    char dir[256], rec[512], a[512], b[512];
    keel_test_dir_make(dir, sizeof dir, "play_flags");
    snprintf(rec, sizeof rec, "%s/still.rec", dir);
    snprintf(a, sizeof a, "%s/a.obj", dir);
    snprintf(b, sizeof b, "%s/b.obj", dir);
    write_recording(rec, 20, 0, 0);
    const char *follow[] = {"--replay", rec, "--follow", "99", "--frames", "1", NULL};
    keel_test_run_result r = play(follow);
    cr_expect_eq(r.exit_code, 2, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "--follow 99") && strstr(r.err, "no character 99") && strstr(r.err, "1, 2, 3"), "%s",
              r.err);
    keel_test_run_free(&r);
    const char *follow2[] = {"--replay", rec, "--follow", "2", "--frames", "1", NULL};
    r = play(follow2);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect_eq(keel_test_json_num(r.out, "follow"), 2, "%s", r.out);
    keel_test_run_free(&r);

    if (!keel_test_program_find("keel-sim"))
        cr_skip_test("keel-sim is not built");
    static const char floor_obj[] = "v -20 0 -20\nv 20 0 -20\nv 20 0 20\nv -20 0 20\nf 1 3 2\nf 1 4 3\n";
    static const char other_obj[] = "v -20 0 -20\nv 20 0 -20\nv 20 0 20\nv -20 0 20\nv 0 2 0\nf 1 3 2\nf 1 4 3\n";
    FILE *f = fopen(a, "wb");
    cr_assert_not_null(f);
    fputs(floor_obj, f);
    fclose(f);
    f = fopen(b, "wb");
    cr_assert_not_null(f);
    fputs(other_obj, f);
    fclose(f);
    const char *sim[] = {"--level", a,    "--scale",  "1", "--characters", "2",
                         "--ticks", "32", "--record", rec, "--quiet",      NULL};
    keel_test_run_result s = keel_test_run(keel_test_program_path("keel-sim"), sim, NULL);
    cr_assert_eq(s.exit_code, 0, "%s", s.err);
    keel_test_run_free(&s);
    const char *level[] = {"--replay", rec, "--level", b, "--frames", "1", NULL};
    r = play(level);
    cr_expect_eq(r.exit_code, 3, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "--level") && strstr(r.err, "is not the recorded level: its digest is") &&
                  strstr(r.err, "the recording's"),
              "%s", r.err);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

Test(play, a_bad_flag_is_named_without_the_usage)
{
    if (!keel_test_program_find("keel-play"))
        cr_skip_test("keel-play is not built");
    const char *args[] = {"--replay", "x.rec", "--frobnicate", NULL};
    keel_test_run_result r = play(args);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "unknown option '--frobnicate'") && strstr(r.err, "keel-play --help lists the options") &&
                  !strstr(r.err, "usage: keel-play"),
              "%s", r.err);
    keel_test_run_free(&r);
    const char *live_only[] = {"--replay", "x.rec", "--sensitivity", "0.2", NULL};
    r = play(live_only);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    keel_test_run_free(&r);
}

Test(play, corrupt_recording_as_keel_replay, .timeout = 120)
{
    start_display();
    char dir[256];
    keel_test_dir_make(dir, sizeof dir, "play_corrupt");
    const char *rec = keel_test_dir_file(dir, "bad.rec");
    write_recording(rec, 200, 0, 0);
    // one flipped byte in the middle of the file: a CRC fails there
    FILE *f = fopen(rec, "r+b");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size / 2, SEEK_SET);
    int c = fgetc(f);
    fseek(f, size / 2, SEEK_SET);
    fputc(c ^ 0x20, f);
    fclose(f);
    const char *verify[] = {"verify", rec, NULL};
    keel_test_run_result want = keel_test_run(keel_test_program_path("keel-replay"), verify, NULL);
    const char *args[] = {"--replay", rec, "--frames", "2", NULL};
    keel_test_run_result r = play(args);
    cr_expect_eq(want.exit_code, REC_EXIT_BAD_FILE, "keel-replay: %s", want.err);
    cr_expect_eq(r.exit_code, want.exit_code, "keel-play: %s", r.err);
    // the same message, keel-play's name in front of it
    const char *prefix = "keel-replay: ";
    cr_assert(strncmp(want.err, prefix, strlen(prefix)) == 0, "%s", want.err);
    cr_expect(strncmp(r.err, "keel-play: ", 11) == 0 && strstr(r.err, want.err + strlen(prefix)) &&
                  !strstr(r.err, prefix),
              "keel-play said '%s', keel-replay '%s'", r.err, want.err);
    keel_test_run_free(&r);
    // a file that cannot be opened: why, from both programs
    const char *missing[] = {"--replay", "/nonexistent-dir/x.rec", "--frames", "1", NULL};
    r = play(missing);
    cr_expect_eq(r.exit_code, REC_EXIT_BAD_FILE, "%s", r.err);
    cr_expect(strstr(r.err, "keel-play: cannot open /nonexistent-dir/x.rec: No such file or directory"), "%s", r.err);
    const char *vmissing[] = {"verify", "/nonexistent-dir/x.rec", NULL};
    keel_test_run_result v = keel_test_run(keel_test_program_path("keel-replay"), vmissing, NULL);
    cr_expect_eq(v.exit_code, REC_EXIT_BAD_FILE, "%s", v.err);
    cr_expect(strstr(v.err, "keel-replay: cannot open /nonexistent-dir/x.rec: No such file or directory"), "%s", v.err);
    keel_test_run_free(&v);
    keel_test_run_free(&want);
    keel_test_run_free(&r);
    keel_test_dir_remove(dir);
    stop_display();
}

// ---- a running window, driven with xdotool --------------------------------------------

// A display, a folder `what` with a recording of `ticks` ticks (a join at
// join_tick when nonzero), and keel-play started in the background on it
// (in that folder, where F12 writes its PNGs) at `at_tick`, 800x600, its
// window mapped and focused; the window id in w->wid.
typedef struct window {
    char dir[256];
    char wid[32];
    keel_test_proc p;
} window;

static void open_window(window *w, const char *what, uint32_t ticks, uint32_t join_tick, const char *at_tick)
{
    start_display();
    keel_test_dir_make(w->dir, sizeof w->dir, what);
    const char *rec = keel_test_dir_file(w->dir, "play.rec");
    write_recording(rec, ticks, join_tick, 0);
    const char *args[] = {"--replay", rec, "--at-tick", at_tick, "--size", "800x600", NULL};
    char cwd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(w->dir), 0);
    keel_test_proc_start(&w->p, "keel-play", args);
    cr_assert_eq(chdir(cwd), 0);
    const char *search[] = {"search", "--sync", "--onlyvisible", "--name", "^keel-play$", NULL};
    char *out = xdo(search);
    snprintf(w->wid, sizeof w->wid, "%.*s", (int)strcspn(out, "\n"), out);
    free(out);
    cr_assert(w->wid[0], "no keel-play window");
    // keyboard focus without a window manager
    const char *focus[] = {"windowfocus", "--sync", w->wid, NULL};
    free(xdo(focus));
}

static void close_window(window *w)
{
    keel_test_proc_cleanup(&w->p);
    keel_test_dir_remove(w->dir);
    stop_display();
}

static char *finish_window(keel_test_proc *p)
{
    cr_assert(keel_test_proc_wait(p, 60000), "keel-play did not quit after Escape"); // a guard, not a speed check
    char *out = keel_test_read_file(p->out);
    cr_expect_eq(p->status, 0, "stderr: %s", keel_test_read_file(p->err));
    return out;
}

Test(play, resize_and_minimise_keep_working, .timeout = 120)
{
    window w;
    open_window(&w, "play_resize", 64, 0, "10");
    const char *wid = w.wid;
    const char *resize[] = {"windowsize", "--sync", wid, "640", "400", NULL};
    free(xdo(resize));
    // Minimise (a request a window manager would act on), then hide and
    // show the window as a minimise does: keel-play waits for events while
    // hidden and draws again once shown.
    const char *minimise[] = {"windowminimize", wid, NULL};
    free(xdo(minimise));
    const char *unmap[] = {"windowunmap", "--sync", wid, NULL};
    free(xdo(unmap));
    const char *map[] = {"windowmap", "--sync", wid, NULL};
    free(xdo(map));
    const char *focus[] = {"windowfocus", "--sync", wid, NULL};
    free(xdo(focus));
    const char *keys[] = {"key", "--delay", "50", "F12", "Escape", NULL};
    free(xdo(keys));
    char *out = finish_window(&w.p);
    cr_log_info("%s", out);
    cr_expect_eq(keel_test_json_num(out, "screenshots"), 1, "%s", out);
    cr_expect_eq(keel_test_json_num(out, "width"), 640, "%s", out);
    cr_expect_eq(keel_test_json_num(out, "height"), 400, "%s", out);
    cr_expect_geq(keel_test_json_num(out, "resizes"), 1, "%s", out);
    cr_expect_geq(keel_test_json_num(out, "minimises"), 1, "%s", out);
    // the screenshot has the new size
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/keel-play-*.png", w.dir);
    FILE *ls = popen(cmd, "r");
    char png[512] = "";
    cr_assert(ls && fgets(png, sizeof png, ls), "no screenshot in %s", w.dir);
    pclose(ls);
    png[strcspn(png, "\n")] = '\0';
    image im = load_png(png);
    cr_expect_eq(im.w, 640);
    cr_expect_eq(im.h, 400);
    stbi_image_free(im.px);
    free(out);
    close_window(&w);
}

// F12 takes the next free keel-play-NNNNN.png (the same names in every
// mode), never an earlier shot's, and says which it wrote.
Test(play, f12_screenshots_take_the_next_free_name_and_say_so, .timeout = 120)
{
    window w;
    open_window(&w, "play_shots", 64, 0, "10");
    char old[512];
    snprintf(old, sizeof old, "%s/keel-play-00001.png", w.dir);
    FILE *f = fopen(old, "wb");
    cr_assert_not_null(f);
    fputs("an earlier shot", f);
    fclose(f);
    const char *keys[] = {"key", "--delay", "80", "F12", "F12", "Escape", NULL};
    free(xdo(keys));
    char *out = finish_window(&w.p);
    char *err = keel_test_read_file(w.p.err);
    cr_log_info("%s%s", out, err);
    cr_expect_eq(keel_test_json_num(out, "screenshots"), 2, "%s", out);
    cr_expect(strstr(err, "keel-play: wrote keel-play-00002.png") &&
                  strstr(err, "keel-play: wrote keel-play-00003.png"),
              "%s", err);
    char *kept = keel_test_read_file(old);
    cr_expect_str_eq(kept, "an earlier shot", "the earlier shot was overwritten");
    free(kept);
    for (int n = 2; n <= 3; n++) {
        char png[512];
        snprintf(png, sizeof png, "%s/keel-play-%05d.png", w.dir, n);
        image im = load_png(png);
        cr_expect_eq(im.w, 800);
        stbi_image_free(im.px);
    }
    free(err);
    free(out);
    close_window(&w);
}

Test(play, pause_step_and_seek_by_clicking_the_timeline, .timeout = 120)
{
    window w;
    open_window(&w, "play_controls", 200, 50, "100");
    const char *wid = w.wid;
    // Play and pause (wherever that leaves it). Click the substitute's
    // marker (tick 60, just above the bar: the bar runs from x = 16 to
    // width - 16 for ticks 0..200, so x = 16 + 0.3 * 768 = 246): the view
    // goes to tick 60 and follows character 3. Then click the bar itself
    // three quarters along (x = 592: tick 150), three ticks forward and one
    // back: 152, paused.
    const char *pause[] = {"key", "--delay", "50", "space", "space", NULL};
    free(xdo(pause));
    const char *marker[] = {"mousemove", "--window", wid, "--sync", "246", "557", "click", "1", NULL};
    free(xdo(marker));
    const char *click[] = {"mousemove", "--window", wid, "--sync", "592", "580", "click", "1", NULL};
    free(xdo(click));
    const char *steps[] = {"key", "--delay", "50", "period", "period", "Right", "comma", "Escape", NULL};
    free(xdo(steps));
    char *out = finish_window(&w.p);
    cr_log_info("%s", out);
    cr_expect_eq(keel_test_json_num(out, "tick"), 152, "%s", out);
    cr_expect(strstr(out, "\"paused\":true"), "%s", out);
    cr_expect_eq(keel_test_json_num(out, "seeks"), 2, "%s", out);
    cr_expect_eq(keel_test_json_num(out, "follow"), 3, "the marker's character: %s", out);
    cr_expect_eq(keel_test_json_num(out, "substitutes"), 1, "%s", out);
    cr_expect_eq(keel_test_json_num(out, "markers"), 2, "%s", out);
    cr_expect_eq(keel_test_json_num(out, "steps"), 4, "%s", out);
    cr_expect_eq(keel_test_json_num(out, "pause_toggles"), 2, "%s", out);
    cr_expect_eq(keel_test_json_num(out, "joins"), 1, "%s", out);
    free(out);
    close_window(&w);
}

#else

Test(play, skipped) { cr_skip_test("keel-play is not built (SDL2, libepoxy, cglm or stb missing: scripts/setup.sh)"); }

#endif
