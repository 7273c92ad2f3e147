// keel-play: the window. MIT licence, see LICENSE.
//
// One SDL2 window with an OpenGL 3.3 core context (function pointers through
// libepoxy), resizable, vsync on unless asked otherwise. The app owns the
// window-level events: resizes (the viewport follows the drawable size),
// minimising (kp_app_frame_begin then waits for events instead of spinning),
// F11 (fullscreen toggle), closing the window (quit). Everything else is
// handed to the mode through kp_app_poll. Screenshots read the back buffer
// of the frame just drawn (before the swap) and write it, flipped to
// top-down rows, as a PNG with stb_image_write.
#ifndef KEEL_PLAY_APP_H
#define KEEL_PLAY_APP_H

#include <stdbool.h>
#include <stdint.h>

#include <SDL.h>

#include "kp.h"

struct kp_app {
    SDL_Window *window;
    SDL_GLContext gl;
    int width, height; ///< drawable size in pixels (the viewport)
    bool minimised, fullscreen, quit;
    bool mouse_captured;  ///< relative mouse mode on
    uint64_t frames;      ///< frames drawn (kp_app_frame_end calls)
    uint32_t resizes;     ///< size changes seen
    uint32_t minimises;   ///< times the window was minimised
    uint32_t screenshots; ///< PNGs written
    uint32_t next_shot;   ///< F12: the number to try first for the next name
    double dt;            ///< seconds since the previous frame began (clamped to 0.25)
    double time;          ///< seconds since the window opened (monotonic)
    uint64_t last_counter;
};

/// Open the window (title "keel-play"), the GL context and vsync as `opt`
/// says. 0 on success; on failure prints "keel-play: cannot open a window:
/// <SDL's reason> (is DISPLAY set?)" and returns KP_EXIT_FAILURE.
int kp_app_open(kp_app *app, const kp_options *opt);
void kp_app_close(kp_app *app);

/// The next event the mode should see (the app has handled its own part of
/// it first: resize, minimise, F11, window close). False when none is left.
/// While the window is minimised, the first call of a frame waits (up to
/// 100 ms) for an event instead of returning at once.
bool kp_app_poll(kp_app *app, SDL_Event *ev);

/// Start a frame: timing (dt, time), viewport, clear. Returns false while
/// minimised (nothing to draw: skip to kp_app_frame_end).
bool kp_app_frame_begin(kp_app *app);
/// End a frame: swap buffers, count it.
void kp_app_frame_end(kp_app *app);

/// Write the frame drawn so far (call before kp_app_frame_end) as a PNG.
/// True on success; prints "keel-play: cannot write PATH: ..." otherwise.
bool kp_app_screenshot(kp_app *app, const char *path);

/// F12, in every mode: write the frame drawn so far as keel-play-NNNNN.png
/// in the working folder, NNNNN the lowest number from 00001 on whose file
/// does not exist yet (never an earlier shot overwritten, this run's or
/// another's), and print "keel-play: wrote NAME" on stderr. The name is put
/// in `name`. False (with a message) when no file could be written.
bool kp_app_screenshot_next(kp_app *app, char *name, size_t size);

/// Relative mouse mode (first-person look, free-fly) on or off.
void kp_app_capture_mouse(kp_app *app, bool on);
void kp_app_toggle_fullscreen(kp_app *app);

#endif
