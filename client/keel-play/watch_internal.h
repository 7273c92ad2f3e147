// keel-play: the viewer loop's state, shared by watch.c (input, playback,
// the loop) and watch_draw.c (what a frame draws). MIT licence, see LICENSE.
#ifndef KEEL_PLAY_WATCH_INTERNAL_H
#define KEEL_PLAY_WATCH_INTERNAL_H

#include "game_hud.h"
#include "overlay.h"
#include "render.h"
#include "watch.h"

typedef struct watch {
    kp_app *app;
    const kp_options *opt;
    kp_run *a;
    const kp_watch_diff *diff;
    kp_render *rend;
    kp_overlay *ov;
    bool paused, help, free_cam;
    float speed;
    double acc;
    kp_camera cam;      ///< the free camera
    uint32_t follow_id; ///< followed character (when !free_cam)
    float orbit_yaw, orbit_pitch, orbit_dist;
    uint64_t seeks, steps, drawn, pause_toggles;
    int rc;
    kp_char_draw *draws;
    uint32_t draw_cap, draw_count;
    // watch mode while playing: A's characters at the tick before, drawn
    // between it and the current tick by the fraction of a tick played
    kp_char_draw *prev;
    uint32_t prev_count, prev_tick;
    uint32_t last_draw_calls;
    uint32_t shots_requested; ///< F12 presses not written yet
    float hud_rect[4];        ///< the HUD's boxes this frame (x, y, w, h): no label there
    char status[256];
    double status_until;
    kp_game_hud *hud; ///< the recording's game's HUD (NULL: none)
    bool game_panel;  ///< G: the followed character's game fields (on with a game)
    bool scores;      ///< K: the game's score table
} watch;

typedef struct bar {
    float x, y, w, h; ///< the bar; markers sit in the 14 pixels above it
} bar;

/// The timeline bar in window pixels, and the x of a tick on it.
bar kp_watch_timeline(const watch *w);
float kp_watch_tick_x(const watch *w, const bar *b, uint32_t tick);
/// The camera of this frame (following or free).
kp_camera kp_watch_camera(watch *w);
/// Fill w->draws from the runs (A, B's ghosts; interpolated while playing).
void kp_watch_fill(watch *w);
/// Draw a frame: the 3D view, labels, timeline, HUD, help.
void kp_watch_draw(watch *w);

#endif
