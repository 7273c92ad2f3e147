// keel-play live mode: what a frame draws (see live_view.h for its
// invariants). MIT licence, see LICENSE.
#include "live_view.h"

#include "game_panel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAD_TO_DEG (180.0f / 3.14159265358979f)

static const float text_white[4] = {0.95f, 0.95f, 0.95f, 1.0f};
static const float text_red[4] = {1.0f, 0.35f, 0.30f, 1.0f};
static const float cross[4] = {1.0f, 1.0f, 1.0f, 0.8f};

void kp_live_own_pose(kp_live *L, float dt, float alpha)
{
    L->have_pose = false;
    L->pose_snapped = false;
    if (L->link.state != KP_LINK_PLAYING || !cl_smooth_pose(L->smooth, cl_client_character(L->link.cl), &L->pose)) {
        kp_figures_break(L->fig);
        return;
    }
    L->have_pose = true;
    L->pose_snapped = L->pose.snapped;
    kp_figures_pose(L->fig, L->link.cl, L->smooth, &L->pose, dt, alpha);
}

// Room for the predicted scene's characters (grown when it has more).
static bool ensure_draws(kp_live *L, uint32_t n)
{
    if (n <= L->draws_cap)
        return true;
    kp_char_draw *d = realloc(L->draws, (size_t)n * sizeof *d);
    if (!d)
        return false;
    L->draws = d;
    L->draws_cap = n;
    return true;
}

// The characters at their smoothed poses; the own one only with the chase
// camera, flashing in the cause's colour after its misprediction.
static uint32_t character_records(kp_live *L, uint64_t now)
{
    const sim_scene *scene = cl_client_predicted(L->link.cl);
    uint32_t n = 0;
    sim_scene_characters(scene, &n);
    if (!ensure_draws(L, n))
        return 0;
    n = kp_render_records_from_scene(scene, &L->settings, L->draws, n);
    uint32_t own = cl_client_character(L->link.cl), out = 0;
    cl_cause cause;
    bool flashing = kp_netgraph_flashing(&L->graph, now, &cause);
    for (uint32_t i = 0; i < n; i++) {
        kp_char_draw d = L->draws[i];
        cl_pose p;
        if (d.id == own && !L->ctl.chase)
            continue;
        if (cl_smooth_pose(L->smooth, d.id, &p)) {
            for (int k = 0; k < 3; k++) {
                d.centre[k] += p.position[k] - d.feet[k];
                d.feet[k] = p.position[k];
            }
            d.yaw = p.yaw * RAD_TO_DEG;
            d.pitch = p.pitch * RAD_TO_DEG;
        }
        if (d.id == own && flashing) {
            kp_netgraph_cause_color(cause, d.flash);
            d.flash[3] = 0.7f;
        }
        L->draws[out++] = d;
    }
    kp_game_hud_characters(L->hud, scene, L->draws, out, L->app->time);
    return out;
}

static kp_camera live_camera(kp_live *L)
{
    const kp_options *o = L->opt;
    if (o->has_camera)
        return kp_camera_make(o->camera[0], o->camera[1], o->camera[2], o->camera[3], o->camera[4]);
    float yaw = (float)L->ctl.yaw_deg, pitch = (float)L->ctl.pitch_deg;
    if (!L->have_pose) // connecting: the level from above its first spawn
        return kp_camera_make(0.0f, 12.0f, 16.0f, 0.0f, -30.0f);
    sim_shape sh = L->pose.crouched ? L->settings.crouch_shape : L->settings.stand_shape;
    float height = (float)sh.half.y / 65536.0f * 2.0f;
    if (L->ctl.chase) {
        float centre[3] = {L->pose.position[0], L->pose.position[1] + height * 0.75f, L->pose.position[2]};
        return kp_camera_chase(centre, yaw, pitch, kp_camera_chase_distance(L->world, centre, yaw, pitch, 4.0f));
    }
    return kp_camera_first_person(L->pose.position, height, yaw, pitch);
}

// The help, a table laid out by measured widths; its box in *rect.
static void help_box(kp_overlay *ov, float x, float y, float rect[4])
{
    static const char *help = "W A S D\tmove\n"
                              "mouse\tlook (--sensitivity)\n"
                              "Space\tjump (fly, swim: up)\n"
                              "Ctrl or C\tcrouch (fly, swim: down)\n"
                              "V\tfly on/off (noclip flight)\n"
                              "T or F3\tchase camera\n"
                              "N or F2\tnet graph\n"
                              "left / right mouse\ta game's first / second button (arena: rail, rocket)\n"
                              "Tab\tplayer list (held; arena: the scores)\n"
                              "G\tthe game's fields\n"
                              "F1\tthis help\n"
                              "F11\tfullscreen\n"
                              "F12\tscreenshot (keel-play-NNNNN.png)\n"
                              "Esc\trelease the mouse; again: quit";
    kp_overlay_table(ov, x, y, 2.0f, help, text_white, true);
    float w, h;
    kp_overlay_table_size(help, 2.0f, &w, &h);
    rect[0] = x - 6, rect[1] = y - 4, rect[2] = w + 12, rect[3] = h + 6;
}

// The player list (Tab): a table, as many lines as the window has room for
// below y, then "+N more"; its box in *rect.
static void player_list(kp_live *L, kp_overlay *ov, float x, float y, float rect[4])
{
    char text[8192];
    size_t used = (size_t)snprintf(text, sizeof text, "id\tmove\tspeed m/s\theight m\t\n");
    uint32_t n = 0, own = cl_client_character(L->link.cl);
    const sim_char_state *c = sim_scene_characters(cl_client_predicted(L->link.cl), &n);
    float line_h = 12.0f * 2.0f;
    int room = (int)(((float)L->app->height - y - 40.0f) / line_h) - 1; // lines below the header
    uint32_t shown = n;
    if (room < 2)
        room = 2;
    if (n > (uint32_t)room)
        shown = (uint32_t)room - 1; // the last line says how many more
    for (uint32_t i = 0; i < shown && used < sizeof text - 120; i++) {
        double vx = c[i].velocity.x / 65536.0, vz = c[i].velocity.z / 65536.0;
        used += (size_t)snprintf(text + used, sizeof text - used, "%u\t%s\t%.2f\t%.2f\t%s\n", c[i].id,
                                 sim_move_type_name(c[i].move_type), sqrt(vx * vx + vz * vz), c[i].position.y / 65536.0,
                                 c[i].id == own ? L->opt->name : "");
    }
    if (shown < n)
        snprintf(text + used, sizeof text - used, "+%u more", (unsigned)(n - shown));
    else if (used > 0)
        text[used - 1] = '\0';
    float w, h;
    kp_overlay_table_size(text, 2.0f, &w, &h);
    if (x < 0)
        x = (float)L->app->width - w - 40;
    kp_overlay_table(ov, x, y, 2.0f, text, text_white, true);
    rect[0] = x - 6, rect[1] = y - 4, rect[2] = w + 12, rect[3] = h + 6;
}

// What is drawn over the view; the regions labels must keep out of go in
// keep (up to 4), their count returned.
static uint32_t overlays(kp_live *L, uint64_t now, float keep[][4])
{
    kp_app *app = L->app;
    kp_overlay *ov = L->overlay;
    char line[512], status[300], wrapped[1024];
    uint32_t nk = 0;
    float room = (float)app->width - 24.0f;
    if (L->link.state == KP_LINK_PLAYING) {
        snprintf(line, sizeof line, "%s  #%u  %s:%u  tick %u%s%s", L->opt->name, cl_client_character(L->link.cl),
                 L->link.server, (unsigned)L->link.port, cl_client_predicted_tick(L->link.cl),
                 L->ctl.fly ? "  [fly]" : "", L->ctl.captured ? "" : "  (mouse released: click to look)");
        kp_overlay_wrap(line, 2.0f, room, wrapped, sizeof wrapped);
        float w = kp_overlay_text_box(ov, 8, 8, 2.0f, wrapped, text_white);
        keep[nk][0] = 0, keep[nk][1] = 0, keep[nk][2] = w + 20,
        keep[nk][3] = kp_overlay_text_height(wrapped, 2.0f) + 16;
        nk++;
        float cx = app->width / 2.0f, cy = app->height / 2.0f;
        kp_overlay_rect(ov, cx - 8, cy - 1, 16, 2, cross);
        kp_overlay_rect(ov, cx - 1, cy - 8, 2, 16, cross);
        if (L->hud) {
            kp_camera cam = *kp_render_camera(L->render);
            kp_game_hud_frame f = {&cam,           app->width, app->height, app->height - 40, app->time, !L->ctl.chase,
                                   L->ctl.players, true,       true};
            nk += kp_game_hud_draw(L->hud, ov, &f, keep + nk, 4);
        }
        if (L->ctl.netgraph) {
            cl_stats s;
            cl_client_stats(L->link.cl, &s);
            kp_ng_client c = {&s,
                              cl_client_predicted_tick(L->link.cl),
                              cl_client_confirmed_tick(L->link.cl),
                              kp_aimed_lead(L->link.cl),
                              cl_client_margin_target(L->link.cl),
                              (uint32_t)L->settings.tick_rate};
            kp_netgraph_draw(&L->graph, ov, app->width, app->height, &c, now, keep[nk++]);
        }
        if (L->ctl.players && !L->hud) // on the right while the help is up
            player_list(L, ov, L->ctl.help ? -1 : 40, 60, keep[nk++]);
        char panel[4096];
        if (L->ctl.game_panel && nk < 8 &&
            kp_game_panel_text(cl_client_predicted(L->link.cl), cl_client_character(L->link.cl), panel, sizeof panel)) {
            float pw, ph;
            kp_overlay_table_size(panel, 1.5f, &pw, &ph);
            float x = (float)app->width - pw - 16, y = kp_game_panel_top(110, pw, app->width, keep, nk);
            kp_overlay_table(ov, x, y, 1.5f, panel, text_white, true);
            keep[nk][0] = x - 6, keep[nk][1] = y - 4, keep[nk][2] = pw + 12, keep[nk][3] = ph + 8;
            nk++;
        }
    } else {
        kp_link_status_text(&L->link, status, sizeof status);
        bool ended = L->link.state == KP_LINK_ENDED;
        float scale = 3.0f;
        if (kp_overlay_text_width(status, scale) > room)
            scale = 2.0f;
        kp_overlay_wrap(status, scale, room, wrapped, sizeof wrapped); // a long reason on several lines
        float w = kp_overlay_text_width(wrapped, scale);
        kp_overlay_text_box(ov, (app->width - w) / 2, app->height / 2.0f - 20, scale, wrapped,
                            ended ? text_red : text_white);
        if (ended) {
            kp_overlay_wrap("the connection has ended: Esc quits (keel-play exits in 4 s)", 2.0f, room, line,
                            sizeof line);
            kp_overlay_text_box(ov, 8, 8, 2.0f, line, text_white);
        }
    }
    if (L->ctl.help)
        help_box(ov, 40, 60, keep[nk++]);
    else if (L->link.state != KP_LINK_ENDED)
        kp_overlay_text_box(ov, 8, app->height - 24.0f, 1.5f, "F1 help", text_white);
    return nk;
}

uint32_t kp_live_draw(kp_live *L, uint64_t now)
{
    kp_app *app = L->app;
    if (!kp_app_frame_begin(app))
        return 0;
    kp_camera cam = live_camera(L);
    kp_render_begin(L->render, &cam, app->width, app->height);
    kp_render_level(L->render);
    uint32_t n = 0;
    if (L->link.state == KP_LINK_PLAYING) {
        const sim_scene *predicted = cl_client_predicted(L->link.cl);
        kp_render_scene_objects(L->render, predicted);
        kp_game_hud_observe(L->hud, predicted, cl_client_character(L->link.cl), app->time);
        n = character_records(L, now);
        kp_render_characters(L->render, L->draws, n);
        kp_game_hud_draw_world(L->hud, L->render, app->time);
    }
    kp_render_end(L->render);
    uint32_t calls = kp_render_draw_calls(L->render);
    kp_overlay_begin(L->overlay, app->width, app->height);
    float keep[12][4];
    uint32_t nk = overlays(L, now, keep);
    if (n) // clear of what overlays drew
        kp_render_labels(L->render, L->overlay, L->draws, n, (const float(*)[4])keep, nk);
    kp_overlay_end(L->overlay, &calls);
    return calls;
}
