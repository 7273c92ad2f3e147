// keel-play: what a frame of the viewer loop draws (see watch_internal.h).
// MIT licence, see LICENSE.
//
// Invariant: the 3D pass comes first, then one overlay batch (labels,
// timeline, HUD, help) drawn over it; nothing here changes the playback.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <keel/cl_client.h>
#include <keel/rec_verify.h>

#include "game_panel.h"
#include "watch_internal.h"

static const float white[4] = {1, 1, 1, 1}, red[4] = {1.0f, 0.35f, 0.3f, 1};
static const float marker_colors[KP_MARK_KIND_COUNT][4] = {
    {0.3f, 0.95f, 0.4f, 1},  {0.85f, 0.85f, 0.85f, 1}, {1.0f, 0.6f, 0.1f, 1},
    {1.0f, 0.15f, 0.15f, 1}, {1.0f, 0.6f, 0.1f, 1},    {0.3f, 0.8f, 1.0f, 1},
    {1.0f, 0.9f, 0.2f, 1},   {1.0f, 0.1f, 0.9f, 1},    {0.2f, 1.0f, 0.8f, 1}};

// ---- drawing --------------------------------------------------------------------

static bool states_differ(const sim_char_state *x, const sim_char_state *y)
{
    uint32_t n;
    rec_state_fields(&n);
    for (uint32_t i = 0; i < n; i++)
        if (rec_state_field_value(x, i) != rec_state_field_value(y, i))
            return true;
    return false;
}

static float lerp_angle(float a, float b, float t)
{
    float d = fmodf(b - a + 540.0f, 360.0f) - 180.0f;
    return a + d * t;
}

// While playing, A's characters between the previous tick and this one.
static void interpolate(watch *w)
{
    if (w->paused || w->prev_tick == UINT32_MAX || w->prev_tick + 1u != kp_run_tick(w->a))
        return;
    float t = (float)w->acc;
    for (uint32_t i = 0, j = 0; i < w->draw_count; i++) {
        kp_char_draw *d = &w->draws[i];
        while (j < w->prev_count && w->prev[j].id < d->id)
            j++;
        if (j >= w->prev_count || w->prev[j].id != d->id)
            continue;
        const kp_char_draw *p = &w->prev[j];
        for (int k = 0; k < 3; k++) {
            d->feet[k] = p->feet[k] + (d->feet[k] - p->feet[k]) * t;
            d->centre[k] = p->centre[k] + (d->centre[k] - p->centre[k]) * t;
        }
        d->yaw = lerp_angle(p->yaw, d->yaw, t);
        d->pitch = p->pitch + (d->pitch - p->pitch) * t;
    }
}

// Records of A, then B's as ghosts; A's characters that B has otherwise
// (or not at all) flash red.
void kp_watch_fill(watch *w)
{
    const sim_move_settings *s = &w->a->h->settings;
    w->draw_count = kp_render_records_from_scene(w->a->view, s, w->draws, w->draw_cap);
    if (!w->diff || !w->diff->b) {
        interpolate(w);
        return;
    }
    const kp_run *b = w->diff->b;
    uint32_t na, nb;
    const sim_char_state *ca = sim_scene_characters(w->a->view, &na), *cb = sim_scene_characters(b->view, &nb);
    for (uint32_t i = 0, j = 0; i < na && i < w->draw_count; i++) {
        while (j < nb && cb[j].id < ca[i].id)
            j++;
        if (j >= nb || cb[j].id != ca[i].id || states_differ(&ca[i], &cb[j])) {
            static const float flash[4] = {1.0f, 0.1f, 0.1f, 0.45f};
            memcpy(w->draws[i].flash, flash, sizeof flash);
        }
    }
    uint32_t start = w->draw_count;
    w->draw_count += kp_render_records_from_scene(b->view, &b->h->settings, w->draws + start, w->draw_cap - start);
    for (uint32_t i = start; i < w->draw_count; i++) {
        w->draws[i].ghost = true;
        w->draws[i].label = false;
    }
}

static void draw_timeline(watch *w)
{
    static const float back[4] = {0, 0, 0, 0.55f}, played[4] = {0.25f, 0.55f, 0.95f, 0.9f}, knob[4] = {1, 1, 1, 1};
    bar b = kp_watch_timeline(w);
    kp_overlay_rect(w->ov, b.x - 4.0f, b.y - 18.0f, b.w + 8.0f, b.h + 22.0f, back);
    float now = kp_watch_tick_x(w, &b, kp_run_tick(w->a));
    kp_overlay_rect(w->ov, b.x, b.y + 4.0f, now - b.x, b.h - 8.0f, played);
    for (uint32_t i = 0; i < w->a->marker_count; i++) {
        const kp_marker *m = &w->a->markers[i];
        float x = kp_watch_tick_x(w, &b, m->tick);
        kp_overlay_rect(w->ov, x - 1.0f, b.y - 13.0f, 2.0f, 11.0f, marker_colors[m->kind]);
    }
    if (w->diff && w->diff->found) {
        float x = kp_watch_tick_x(w, &b, w->diff->show_tick);
        kp_overlay_rect(w->ov, x - 2.0f, b.y - 14.0f, 4.0f, b.h + 14.0f, marker_colors[KP_MARK_DIVERGENCE]);
    }
    kp_overlay_rect(w->ov, now - 2.0f, b.y, 4.0f, b.h, knob);
}

// A table (kp_overlay_table): the key, a tab, what it does.
static const char *help_text = "Space\tplay / pause\n"
                               "[ ] or - +\tslower / faster (1/4x to 8x)\n"
                               ". , or arrows\tone tick forward / back (pauses)\n"
                               "Home End\tfirst / last tick\n"
                               "timeline\tclick or drag: seek; click a marker: jump there, follow its character\n"
                               "markers\tgreen join, white leave, orange substituted command, red divergence\n"
                               "\tclient recordings, own mispredictions: orange substituted,\n"
                               "\tblue remote command, yellow interaction, magenta unexplained\n"
                               "1..9\tfollow the n-th character\n"
                               "Tab\tfollow the next one\n"
                               "G\tthe followed character's game fields (--game)\n"
                               "K\tthe game's score table (arena)\n"
                               "0 or F\tfree camera: WASD, Q/E down/up, Shift faster\n"
                               "click the view\tcapture the mouse to look around (Esc releases)\n"
                               "mouse wheel\tchase distance\n"
                               "F1\tthis help\n"
                               "F11\tfullscreen\n"
                               "F12\tscreenshot (keel-play-NNNNN.png)\n"
                               "Esc\tquit";

// A HUD box at (12, *y), wrapped to the window's width; *y moves below it,
// *wmax grows to its width.
static void hud_box(watch *w, float *y, float *wmax, const char *text, const float rgba[4])
{
    char wrapped[2048];
    float room = (float)w->app->width - 24.0f - 12.0f;
    kp_overlay_wrap(text, 2.0f, room > 40.0f ? room : 40.0f, wrapped, sizeof wrapped);
    float tw = kp_overlay_text_box(w->ov, 12.0f, *y, 2.0f, wrapped, rgba);
    *wmax = tw > *wmax ? tw : *wmax;
    *y += kp_overlay_text_height(wrapped, 2.0f) + 12.0f;
}

static void draw_hud(watch *w)
{
    char text[1024];
    uint32_t tick = kp_run_tick(w->a), count;
    sim_scene_characters(w->a->view, &count);
    int n = snprintf(text, sizeof text, "%s  tick %u (%u..%u)  x%g  %s  %u characters", w->a->file, (unsigned)tick,
                     (unsigned)w->a->first, (unsigned)w->a->last, (double)w->speed, w->paused ? "paused" : "playing",
                     (unsigned)count);
    const sim_char_state *c = w->free_cam ? NULL : sim_scene_find(w->a->view, w->follow_id);
    if (c && n > 0 && (size_t)n < sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n, "\nfollowing %u: %s%s%s  (%.2f, %.2f, %.2f)", (unsigned)c->id,
                      sim_move_type_name(c->move_type), c->flags & SIM_CHAR_GROUNDED ? ", grounded" : "",
                      c->flags & SIM_CHAR_CROUCHED ? ", crouched" : "", c->position.x / 65536.0,
                      c->position.y / 65536.0, c->position.z / 65536.0);
    else if (n > 0 && (size_t)n < sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n, "\nfree camera (%.1f, %.1f, %.1f) yaw %.0f pitch %.0f",
                      (double)w->cam.eye[0], (double)w->cam.eye[1], (double)w->cam.eye[2], (double)w->cam.yaw,
                      (double)w->cam.pitch);
    if (w->a->client && n > 0 && (size_t)n < sizeof text) {
        const uint64_t *m = w->a->own_mispredictions;
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "\nclient recording: character %u, confirmed tick %u; own mispredictions: %llu substituted, "
                      "%llu remote, %llu interaction, %llu unexplained",
                      (unsigned)cl_client_character(w->a->cl), (unsigned)cl_client_confirmed_tick(w->a->cl),
                      (unsigned long long)m[0], (unsigned long long)m[1], (unsigned long long)m[2],
                      (unsigned long long)m[3]);
        if (m[CL_CAUSE_GAME_RULE] && n > 0 && (size_t)n < sizeof text)
            n += snprintf(text + n, sizeof text - (size_t)n, ", %llu game rule",
                          (unsigned long long)m[CL_CAUSE_GAME_RULE]);
    }
    if (n > 0 && (size_t)n < sizeof text)
        snprintf(text + n, sizeof text - (size_t)n, "\nF1 help");
    // Each box wrapped to the window (never cut off at its right edge), one
    // under the other; the region they take is kept free of labels.
    float y = 12.0f, wmax = 0;
    hud_box(w, &y, &wmax, text, white);
    if (w->diff) {
        char line[700];
        if (w->diff->found)
            snprintf(line, sizeof line, "first divergence (%s): %s", w->diff->kind, w->diff->line);
        else
            snprintf(line, sizeof line, "no divergence: %s", w->diff->line);
        hud_box(w, &y, &wmax, line, w->diff->found ? red : white);
        if (w->diff->notes[0]) {
            static const float note_color[4] = {1.0f, 0.85f, 0.4f, 1};
            hud_box(w, &y, &wmax, w->diff->notes, note_color);
        }
    }
    if (w->status[0] && w->app->time < w->status_until)
        hud_box(w, &y, &wmax, w->status, white);
    w->hud_rect[0] = 0;
    w->hud_rect[1] = 0;
    w->hud_rect[2] = wmax + 24.0f;
    w->hud_rect[3] = y;
}

// The help (F1) in the middle of the window; the region it covers in rect
// (all zero when it is off).
static void draw_help(watch *w, bool draw, float rect[4])
{
    memset(rect, 0, 4 * sizeof *rect);
    if (!w->help)
        return;
    // on a darker box than the HUD's: it covers the view
    static const float shade[4] = {0, 0, 0, 0.5f};
    float scale = 2.0f, hw, hh;
    kp_overlay_table_size(help_text, scale, &hw, &hh);
    if (hw + 48.0f > (float)w->app->width || hh + 48.0f > (float)w->app->height) {
        scale = 1.0f; // a small window: the small font
        kp_overlay_table_size(help_text, scale, &hw, &hh);
    }
    float hx = ((float)w->app->width - hw) * 0.5f, hy = ((float)w->app->height - hh) * 0.5f;
    rect[0] = hx - 16.0f, rect[1] = hy - 14.0f, rect[2] = hw + 32.0f, rect[3] = hh + 24.0f;
    if (!draw)
        return;
    kp_overlay_rect(w->ov, rect[0], rect[1], rect[2], rect[3], shade);
    kp_overlay_table(w->ov, hx, hy, scale, help_text, white, true);
}

// The followed character's game fields (generic: the schema's names), at
// the right below the `count` regions of keep; its box in rect (zero when
// none).
static void draw_game_panel(watch *w, const float (*keep)[4], uint32_t count, float rect[4])
{
    char panel[4096];
    memset(rect, 0, 4 * sizeof *rect);
    if (!w->game_panel || w->free_cam || !kp_game_panel_text(w->a->view, w->follow_id, panel, sizeof panel))
        return;
    float pw, ph;
    kp_overlay_table_size(panel, 1.5f, &pw, &ph);
    float x = (float)w->app->width - pw - 16, y = kp_game_panel_top(110, pw, w->app->width, keep, count);
    kp_overlay_table(w->ov, x, y, 1.5f, panel, white, true);
    rect[0] = x - 6, rect[1] = y - 4, rect[2] = pw + 12, rect[3] = ph + 8;
}

void kp_watch_draw(watch *w)
{
    kp_watch_fill(w);
    kp_game_hud_observe(w->hud, w->a->view, w->follow_id, w->app->time);
    kp_game_hud_characters(w->hud, w->a->view, w->draws, w->draw_count, w->app->time);
    kp_camera cam = kp_watch_camera(w);
    kp_render_begin(w->rend, &cam, w->app->width, w->app->height);
    kp_render_level(w->rend);
    kp_render_scene_objects(w->rend, w->a->view);
    kp_render_characters(w->rend, w->draws, w->draw_count);
    kp_game_hud_draw_world(w->hud, w->rend, w->app->time);
    kp_render_end(w->rend);
    uint32_t calls = kp_render_draw_calls(w->rend);
    kp_overlay_begin(w->ov, w->app->width, w->app->height);
    // labels of characters the level hides are left out
    for (uint32_t i = 0; i < w->draw_count; i++) {
        kp_char_draw *d = &w->draws[i];
        float top[3] = {d->centre[0], d->centre[1] + d->half[1], d->centre[2]};
        if (d->label && kp_world_blocks(w->a->world, cam.eye, top))
            d->label = false;
    }
    draw_timeline(w);
    draw_hud(w);
    // the labels keep clear of the HUDs and the timeline (and its markers)
    bar b = kp_watch_timeline(w);
    float keep[8][4] = {{w->hud_rect[0], w->hud_rect[1], w->hud_rect[2], w->hud_rect[3]},
                        {0, b.y - 24.0f, (float)w->app->width, (float)w->app->height - (b.y - 24.0f)}};
    uint32_t nk = 2;
    // the game's HUD above the timeline, its fields below the HUD's boxes
    kp_game_hud_frame f = {&cam,      w->app->width, w->app->height, (int)(b.y - 24.0f), w->app->time, false,
                           w->scores, !w->free_cam,  false};
    nk += kp_game_hud_draw(w->hud, w->ov, &f, keep + nk, 4);
    draw_game_panel(w, (const float(*)[4])keep + 2, nk - 2, keep[nk]); // below the game HUD's boxes
    nk++;
    draw_help(w, false, keep[nk]);
    kp_render_labels(w->rend, w->ov, w->draws, w->draw_count, (const float(*)[4])keep, nk + 1);
    draw_help(w, true, keep[nk]);
    kp_overlay_end(w->ov, &calls);
    w->last_draw_calls = calls;
}
