// keel-play: the viewer loop of watch and diff mode (see watch.h). MIT
// licence, see LICENSE.
//
// Invariants: in diff mode run B is always at run A's tick (or at its own
// end when shorter) when a frame is drawn; playback advances by whole ticks
// at the recording's tick rate times the speed, never past the last tick
// (it pauses there); the frame limit counts frames actually drawn, so a
// minimised window cannot end a capture run without its screenshot.
#include "watch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/cl_client.h>
#include <keel/rec_verify.h>

#include "game_panel.h"
#include "watch_internal.h"

// ---- the timeline ---------------------------------------------------------------

bar kp_watch_timeline(const watch *w)
{
    bar b = {16.0f, (float)w->app->height - 36.0f, (float)w->app->width - 32.0f, 20.0f};
    return b;
}

float kp_watch_tick_x(const watch *w, const bar *b, uint32_t tick)
{
    uint32_t span = w->a->last - w->a->first;
    return b->x + (span ? (float)(tick - w->a->first) / (float)span * b->w : 0.0f);
}

static uint32_t x_tick(const watch *w, const bar *b, float x)
{
    float f = (x - b->x) / b->w;
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    return w->a->first + (uint32_t)lroundf(f * (float)(w->a->last - w->a->first));
}

// ---- moving through the recording ----------------------------------------------------

static void sync_b(watch *w)
{
    if (w->diff && w->diff->b) {
        uint32_t t = kp_run_tick(w->a);
        kp_run_seek(w->diff->b, t > w->diff->b->last ? w->diff->b->last : t);
    }
}

static void seek(watch *w, uint32_t tick)
{
    w->prev_tick = UINT32_MAX;
    kp_game_hud_reset(w->hud); // a jump is no event
    if (!kp_run_seek(w->a, tick))
        w->rc = KP_EXIT_FAILURE;
    w->acc = 0;
    w->seeks++;
    sync_b(w);
}

static void step(watch *w, int dir)
{
    w->prev_tick = UINT32_MAX;
    w->paused = true;
    w->steps++;
    uint32_t t = kp_run_tick(w->a);
    if (dir > 0) {
        if (t < w->a->last && !kp_run_step(w->a))
            w->rc = KP_EXIT_FAILURE;
        sync_b(w);
    } else if (t > w->a->first) {
        kp_game_hud_reset(w->hud);
        if (!kp_run_seek(w->a, t - 1u))
            w->rc = KP_EXIT_FAILURE;
        sync_b(w);
    }
}

static void advance(watch *w)
{
    if (w->paused)
        return;
    w->acc += w->app->dt * (double)w->a->h->settings.tick_rate * (double)w->speed;
    int n = 0;
    while (w->acc >= 1.0 && n < 1024) {
        w->acc -= 1.0;
        n++;
        if (kp_run_tick(w->a) >= w->a->last) {
            w->paused = true; // the end: stay there
            w->acc = 0;
            break;
        }
        if (w->prev && (w->acc < 1.0 || n == 1024)) { // this frame's last step: keep where it starts
            w->prev_count = kp_render_records_from_scene(w->a->view, &w->a->h->settings, w->prev, w->draw_cap);
            w->prev_tick = kp_run_tick(w->a);
        }
        if (!kp_run_step(w->a)) {
            w->rc = KP_EXIT_FAILURE;
            w->paused = true;
            break;
        }
    }
    if (n)
        sync_b(w);
}

// ---- cameras ------------------------------------------------------------------

static const kp_char_draw *find_draw(const watch *w, uint32_t id)
{
    for (uint32_t i = 0; i < w->draw_count; i++)
        if (w->draws[i].id == id && !w->draws[i].ghost)
            return &w->draws[i];
    return NULL;
}

static void follow(watch *w, uint32_t id)
{
    w->follow_id = id;
    w->free_cam = false;
    const kp_char_draw *d = find_draw(w, id);
    if (d)
        w->orbit_yaw = d->yaw;
}

// The n-th character (id order) of run A, 0 when there are fewer.
static uint32_t nth_id(const watch *w, uint32_t n)
{
    uint32_t count;
    const sim_char_state *c = sim_scene_characters(w->a->view, &count);
    return n < count ? c[n].id : 0;
}

static void next_follow(watch *w)
{
    uint32_t count;
    const sim_char_state *c = sim_scene_characters(w->a->view, &count);
    if (!count)
        return;
    uint32_t i = 0;
    while (i < count && c[i].id <= w->follow_id)
        i++;
    follow(w, c[i < count ? i : 0].id);
}

static kp_camera overview(const sim_level *level)
{
    sim_aabb b = sim_level_bounds(level);
    float c[3] = {(float)(b.min.x / 2 + b.max.x / 2) / 65536.0f, (float)b.max.y / 65536.0f,
                  (float)(b.min.z / 2 + b.max.z / 2) / 65536.0f};
    float ext = (float)(b.max.z - b.min.z) / 65536.0f * 0.5f;
    if (ext > 60.0f)
        ext = 60.0f;
    return kp_camera_make(c[0], c[1] + ext * 0.7f, c[2] + ext * 1.1f, 0.0f, -35.0f);
}

kp_camera kp_watch_camera(watch *w)
{
    if (!w->free_cam) {
        const kp_char_draw *d = find_draw(w, w->follow_id);
        if (!d && w->draw_count)
            d = &w->draws[0];
        if (d) {
            float c[3] = {d->centre[0], d->centre[1] + d->half[1] * 0.5f, d->centre[2]};
            float dist = kp_camera_chase_distance(w->a->world, c, w->orbit_yaw, w->orbit_pitch, w->orbit_dist);
            return kp_camera_chase(c, w->orbit_yaw, w->orbit_pitch, dist);
        }
    }
    return w->cam;
}

static void fly(watch *w)
{
    if (!w->free_cam)
        return;
    const Uint8 *k = SDL_GetKeyboardState(NULL);
    float f[3], s = (float)w->app->dt * ((k[SDL_SCANCODE_LSHIFT] || k[SDL_SCANCODE_RSHIFT]) ? 30.0f : 8.0f);
    kp_camera_forward(w->cam.yaw, w->cam.pitch, f);
    float r[3] = {cosf(w->cam.yaw * 0.0174533f), 0, -sinf(w->cam.yaw * 0.0174533f)};
    float mv[3] = {0, 0, 0};
    int fwd = k[SDL_SCANCODE_W] - k[SDL_SCANCODE_S], side = k[SDL_SCANCODE_D] - k[SDL_SCANCODE_A],
        up = k[SDL_SCANCODE_E] - k[SDL_SCANCODE_Q];
    for (int i = 0; i < 3; i++)
        mv[i] = f[i] * (float)fwd + r[i] * (float)side + (i == 1 ? (float)up : 0.0f);
    for (int i = 0; i < 3; i++)
        w->cam.eye[i] += mv[i] * s;
}

// ---- input ----------------------------------------------------------------------

static void set_status(watch *w, const char *text)
{
    snprintf(w->status, sizeof w->status, "%s", text);
    w->status_until = w->app->time + 3.0;
}

static void click(watch *w, float mx, float my)
{
    bar b = kp_watch_timeline(w);
    if (my >= b.y - 14.0f && my < b.y) { // the marker row: the nearest marker within 4 px
        const kp_marker *best = NULL;
        float bd = 5.0f;
        const kp_marker *ms = w->a->markers;
        for (uint32_t i = 0; i < w->a->marker_count; i++) {
            float d = fabsf(kp_watch_tick_x(w, &b, ms[i].tick) - mx);
            if (d < bd)
                bd = d, best = &ms[i];
        }
        if (w->diff && w->diff->found && fabsf(kp_watch_tick_x(w, &b, w->diff->show_tick) - mx) < bd) {
            seek(w, w->diff->show_tick);
            if (w->diff->character)
                follow(w, w->diff->character);
            w->paused = true;
            return;
        }
        if (best) {
            seek(w, best->tick);
            follow(w, best->id);
            w->paused = true;
            return;
        }
    }
    if (my >= b.y - 14.0f && my <= b.y + b.h + 6.0f && mx >= b.x - 6.0f && mx <= b.x + b.w + 6.0f) {
        seek(w, x_tick(w, &b, mx));
        return;
    }
    kp_app_capture_mouse(w->app, true); // the 3D view: look around
}

static void key(watch *w, SDL_Keycode k)
{
    switch (k) {
    case SDLK_SPACE:
        w->paused = !w->paused;
        w->pause_toggles++;
        break;
    case SDLK_LEFTBRACKET:
    case SDLK_MINUS:
    case SDLK_KP_MINUS: w->speed = w->speed > 0.25f ? w->speed * 0.5f : 0.25f; break;
    case SDLK_RIGHTBRACKET:
    case SDLK_EQUALS:
    case SDLK_PLUS:
    case SDLK_KP_PLUS: w->speed = w->speed < 8.0f ? w->speed * 2.0f : 8.0f; break;
    case SDLK_PERIOD:
    case SDLK_RIGHT: step(w, 1); break;
    case SDLK_COMMA:
    case SDLK_LEFT: step(w, -1); break;
    case SDLK_HOME: seek(w, w->a->first); break;
    case SDLK_END: seek(w, w->a->last); break;
    case SDLK_TAB: next_follow(w); break;
    case SDLK_0:
    case SDLK_f:
        if (!w->free_cam)
            w->cam = kp_watch_camera(w);
        w->free_cam = true;
        break;
    case SDLK_F1: w->help = !w->help; break;
    case SDLK_g: w->game_panel = !w->game_panel; break;
    case SDLK_k: w->scores = !w->scores; break;
    case SDLK_F12: w->shots_requested++; break; // each press a shot, two in one frame too
    case SDLK_ESCAPE:
        if (w->app->mouse_captured)
            kp_app_capture_mouse(w->app, false);
        else
            w->app->quit = true;
        break;
    default:
        if (k >= SDLK_1 && k <= SDLK_9) {
            uint32_t id = nth_id(w, (uint32_t)(k - SDLK_1));
            if (id)
                follow(w, id);
        }
        break;
    }
}

static void events(watch *w)
{
    SDL_Event ev;
    while (kp_app_poll(w->app, &ev)) {
        if (ev.type == SDL_KEYDOWN)
            key(w, ev.key.keysym.sym);
        else if (ev.type == SDL_MOUSEBUTTONDOWN && ev.button.button == SDL_BUTTON_LEFT && !w->app->mouse_captured)
            click(w, (float)ev.button.x, (float)ev.button.y);
        else if (ev.type == SDL_MOUSEMOTION && w->app->mouse_captured) {
            float dx = (float)ev.motion.xrel * 0.15f, dy = (float)ev.motion.yrel * 0.15f;
            float *yaw = w->free_cam ? &w->cam.yaw : &w->orbit_yaw,
                  *pitch = w->free_cam ? &w->cam.pitch : &w->orbit_pitch;
            *yaw -= dx;
            *pitch -= dy;
            *pitch = *pitch > 89.0f ? 89.0f : *pitch < -89.0f ? -89.0f : *pitch;
        } else if (ev.type == SDL_MOUSEMOTION && (ev.motion.state & SDL_BUTTON_LMASK)) {
            bar b = kp_watch_timeline(w); // dragging along the timeline keeps seeking
            if (ev.motion.y >= b.y - 14.0f && ev.motion.y <= b.y + b.h + 6.0f)
                seek(w, x_tick(w, &b, (float)ev.motion.x));
        } else if (ev.type == SDL_MOUSEWHEEL && !w->free_cam) {
            w->orbit_dist *= ev.wheel.y > 0 ? 0.85f : 1.0f / 0.85f;
            w->orbit_dist = w->orbit_dist < 1.5f ? 1.5f : w->orbit_dist > 80.0f ? 80.0f : w->orbit_dist;
        }
    }
}

// ---- the loop ---------------------------------------------------------------------

static void summary(const watch *w)
{
    printf("{\"mode\":\"%s\",\"frames\":%llu,\"tick\":%u,\"first_tick\":%u,\"last_tick\":%u,\"paused\":%s,"
           "\"speed\":%g,\"pause_toggles\":%llu,\"seeks\":%llu,\"steps\":%llu,\"screenshots\":%u,\"markers\":%u,"
           "\"markers_dropped\":%llu,\"joins\":%llu,"
           "\"leaves\":%llu,\"substitutes\":%llu,\"follow\":%u,\"free_camera\":%s,\"width\":%d,\"height\":%d,"
           "\"resizes\":%u,\"minimises\":%u,\"draw_calls\":%u",
           w->diff ? "diff" : "replay", (unsigned long long)w->drawn, (unsigned)kp_run_tick(w->a),
           (unsigned)w->a->first, (unsigned)w->a->last, w->paused ? "true" : "false", (double)w->speed,
           (unsigned long long)w->pause_toggles, (unsigned long long)w->seeks, (unsigned long long)w->steps,
           (unsigned)w->app->screenshots, (unsigned)w->a->marker_count, (unsigned long long)w->a->markers_dropped,
           (unsigned long long)w->a->joins, (unsigned long long)w->a->leaves, (unsigned long long)w->a->substitutes,
           (unsigned)(w->free_cam ? 0 : w->follow_id), w->free_cam ? "true" : "false", w->app->width, w->app->height,
           (unsigned)w->app->resizes, (unsigned)w->app->minimises, (unsigned)w->last_draw_calls);
    if (!w->a->client)
        printf(",\"substitutes_marked\":%s", w->a->substitutes_marked ? "true" : "false");
    if (w->a->client)
        printf(",\"client\":true,\"own_mispredictions\":%llu",
               (unsigned long long)(w->a->own_mispredictions[0] + w->a->own_mispredictions[1] +
                                    w->a->own_mispredictions[2] + w->a->own_mispredictions[3] +
                                    w->a->own_mispredictions[CL_CAUSE_GAME_RULE]));
    if (w->diff)
        printf(",\"notes\":%u,\"diverged\":%s,\"divergent_tick\":%u,\"divergent_character\":%u",
               (unsigned)w->diff->note_count, w->diff->found ? "true" : "false", (unsigned)w->diff->tick,
               (unsigned)w->diff->character);
    kp_game_fields_json(stdout, w->a->view, w->free_cam ? nth_id(w, 0) : w->follow_id);
    kp_game_hud_summary(w->hud, stdout);
    printf(",\"exit\":%d}\n", w->rc);
}

static void start(watch *w)
{
    const kp_options *opt = w->opt;
    w->paused = opt->paused || opt->has_at_tick || (w->diff && w->diff->found);
    w->speed = opt->speed;
    w->orbit_pitch = -20.0f;
    w->orbit_dist = 6.0f;
    w->cam = overview(w->a->level);
    uint32_t at = w->a->first;
    if (opt->has_at_tick)
        at = opt->at_tick;
    else if (w->diff && w->diff->found)
        at = w->diff->show_tick;
    if (at > w->a->last)
        fprintf(stderr, "keel-play: --at-tick %u is past the recording's last tick %u: showing %u\n", (unsigned)at,
                (unsigned)w->a->last, (unsigned)w->a->last);
    if (at != kp_run_tick(w->a) && !kp_run_seek(w->a, at))
        w->rc = KP_EXIT_FAILURE;
    sync_b(w);
    kp_watch_fill(w);
    uint32_t id = opt->follow                       ? opt->follow
                  : (w->diff && w->diff->character) ? w->diff->character
                  : w->a->client                    ? cl_client_character(w->a->cl)
                                                    : nth_id(w, 0);
    follow(w, id);
    if (opt->has_camera) {
        w->cam = kp_camera_make(opt->camera[0], opt->camera[1], opt->camera[2], opt->camera[3], opt->camera[4]);
        w->free_cam = true;
    } else if (!id) {
        w->free_cam = true;
    }
}

int kp_watch_loop(kp_app *app, const kp_options *opt, kp_run *a, const kp_watch_diff *diff)
{
    watch w;
    memset(&w, 0, sizeof w);
    w.app = app;
    w.opt = opt;
    w.a = a;
    w.diff = diff;
    w.draw_cap = a->h->max_characters + (diff && diff->b ? diff->b->h->max_characters : 0u);
    w.draws = calloc(w.draw_cap ? w.draw_cap : 1u, sizeof *w.draws);
    w.prev = diff ? NULL : calloc(w.draw_cap ? w.draw_cap : 1u, sizeof *w.prev);
    w.prev_tick = UINT32_MAX;
    const sim_game *game = sim_scene_game(a->view);
    w.hud = kp_game_hud_create(game, &a->h->settings);
    w.game_panel = game != NULL;
    w.rend = w.draws ? kp_render_create() : NULL;
    w.ov = w.rend ? kp_overlay_create() : NULL;
    if (!w.ov || !kp_render_upload_level(w.rend, a->level) || !kp_render_upload_map(w.rend, &a->lv.map)) {
        fputs("keel-play: cannot set up the renderer\n", stderr);
        kp_game_hud_destroy(w.hud);
        kp_overlay_destroy(w.ov);
        kp_render_destroy(w.rend);
        free(w.draws);
        free(w.prev);
        return KP_EXIT_FAILURE;
    }
    start(&w);
    uint32_t limit = kp_frames_limit(opt);
    while (!app->quit && w.rc == KP_EXIT_OK) {
        events(&w); // a quit asked for here still gets this frame (and its F12 screenshot)
        if (kp_app_frame_begin(app)) {
            fly(&w);
            advance(&w);
            kp_watch_draw(&w);
            w.drawn++;
            bool last = limit && w.drawn >= limit;
            if (last && opt->screenshot && !kp_app_screenshot(app, opt->screenshot))
                w.rc = KP_EXIT_FAILURE;
            for (; w.shots_requested > 0; w.shots_requested--) {
                char name[64];
                if (kp_app_screenshot_next(app, name, sizeof name)) {
                    char msg[128];
                    snprintf(msg, sizeof msg, "screenshot: %s", name);
                    set_status(&w, msg);
                }
            }
            if (last)
                app->quit = true;
        }
        kp_app_frame_end(app);
    }
    summary(&w);
    kp_game_hud_destroy(w.hud);
    kp_overlay_destroy(w.ov);
    kp_render_destroy(w.rend);
    free(w.draws);
    free(w.prev);
    return w.rc;
}
