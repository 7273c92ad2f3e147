// keel-play: the window (see app.h). MIT licence, see LICENSE.
//
// Invariants: the GL viewport always equals the drawable size in
// app->width x app->height (updated on every size change before the next
// frame); a minimised window draws nothing and waits for events (at most
// 100 ms at a time) so it costs no CPU; kp_app_poll never hands the mode an
// event the app consumed (window events, F11).
#include "app.h"

#include <epoxy/gl.h>
#include <errno.h>
#include <fcntl.h>
#include <stb_image_write.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void update_size(kp_app *app)
{
    int w = 0, h = 0;
    SDL_GL_GetDrawableSize(app->window, &w, &h);
    if (w < 1)
        w = 1;
    if (h < 1)
        h = 1;
    if (w != app->width || h != app->height) {
        if (app->width)
            app->resizes++;
        app->width = w;
        app->height = h;
    }
}

int kp_app_open(kp_app *app, const kp_options *opt)
{
    memset(app, 0, sizeof *app);
    // Without a display SDL would fall back to an off-screen driver: a
    // viewer with no window is a mistake to report, not to run.
    const char *driver = getenv("SDL_VIDEODRIVER"), *x11 = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    if (!(driver && driver[0]) && !(x11 && x11[0]) && !(wl && wl[0])) {
        fputs("keel-play: cannot open a window: no display (DISPLAY and WAYLAND_DISPLAY are unset) (is DISPLAY "
              "set?)\n",
              stderr);
        return KP_EXIT_FAILURE;
    }
    // Only real displays (SDL would also try off-screen and console drivers).
    if (!(driver && driver[0]))
        SDL_SetHint(SDL_HINT_VIDEODRIVER, x11 && x11[0] && wl && wl[0] ? "x11,wayland"
                                          : x11 && x11[0]              ? "x11"
                                                                       : "wayland");
    // A click that focuses the window counts (a click on the timeline
    // seeks at once; SDL's X11 backend drops it otherwise).
    SDL_SetHint(SDL_HINT_MOUSE_FOCUS_CLICKTHROUGH, "1");
    if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0) {
        // SDL says "x11 not available" when the X display cannot be opened:
        // name the display(s) tried instead.
        if (driver && driver[0])
            fprintf(stderr, "keel-play: cannot open a window: %s (SDL_VIDEODRIVER=%s)\n", SDL_GetError(), driver);
        else if (x11 && x11[0] && wl && wl[0])
            fprintf(stderr,
                    "keel-play: cannot open a window: neither the X display %s ($DISPLAY) nor the Wayland display %s "
                    "($WAYLAND_DISPLAY) could be opened (SDL: %s)\n",
                    x11, wl, SDL_GetError());
        else
            fprintf(stderr,
                    "keel-play: cannot open a window: the %s display %s (%s) could not be opened: is a display "
                    "server running there, and may this user use it? (SDL: %s)\n",
                    x11 && x11[0] ? "X" : "Wayland", x11 && x11[0] ? x11 : wl,
                    x11 && x11[0] ? "$DISPLAY" : "$WAYLAND_DISPLAY", SDL_GetError());
        return KP_EXIT_FAILURE;
    }
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
    Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI;
    if (opt->fullscreen)
        flags |= SDL_WINDOW_FULLSCREEN_DESKTOP;
    app->window =
        SDL_CreateWindow("keel-play", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, opt->width, opt->height, flags);
    if (!app->window) {
        fprintf(stderr, "keel-play: cannot open a window: %s (is DISPLAY set?)\n", SDL_GetError());
        SDL_Quit();
        return KP_EXIT_FAILURE;
    }
    app->gl = SDL_GL_CreateContext(app->window);
    if (!app->gl) {
        fprintf(stderr, "keel-play: cannot open a window: no OpenGL 3.3 core context: %s (is DISPLAY set?)\n",
                SDL_GetError());
        SDL_DestroyWindow(app->window);
        SDL_Quit();
        return KP_EXIT_FAILURE;
    }
    SDL_GL_MakeCurrent(app->window, app->gl);
    // Adaptive vsync when there is one, plain vsync otherwise.
    if (opt->vsync) {
        if (SDL_GL_SetSwapInterval(-1) != 0)
            SDL_GL_SetSwapInterval(1);
    } else {
        SDL_GL_SetSwapInterval(0);
    }
    app->fullscreen = opt->fullscreen;
    update_size(app);
    app->last_counter = SDL_GetPerformanceCounter();
    glEnable(GL_DEPTH_TEST);
    return 0;
}

void kp_app_close(kp_app *app)
{
    if (app->gl)
        SDL_GL_DeleteContext(app->gl);
    if (app->window)
        SDL_DestroyWindow(app->window);
    SDL_Quit();
    memset(app, 0, sizeof *app);
}

// The app's own part of an event; true when it is consumed.
static bool handle(kp_app *app, const SDL_Event *ev)
{
    switch (ev->type) {
    case SDL_QUIT: app->quit = true; return false; // the mode may want to know too
    case SDL_WINDOWEVENT:
        switch (ev->window.event) {
        case SDL_WINDOWEVENT_MINIMIZED:
        case SDL_WINDOWEVENT_HIDDEN:
            if (!app->minimised)
                app->minimises++;
            app->minimised = true;
            break;
        case SDL_WINDOWEVENT_RESTORED:
        case SDL_WINDOWEVENT_SHOWN:
        case SDL_WINDOWEVENT_EXPOSED:
        case SDL_WINDOWEVENT_MAXIMIZED:
            app->minimised = false;
            update_size(app);
            break;
        case SDL_WINDOWEVENT_SIZE_CHANGED:
        case SDL_WINDOWEVENT_RESIZED: update_size(app); break;
        case SDL_WINDOWEVENT_CLOSE: app->quit = true; break;
        default: break;
        }
        return true;
    case SDL_KEYDOWN:
        if (ev->key.keysym.sym == SDLK_F11 && !ev->key.repeat) {
            kp_app_toggle_fullscreen(app);
            return true;
        }
        return false;
    default: return false;
    }
}

bool kp_app_poll(kp_app *app, SDL_Event *ev)
{
    for (;;) {
        int got = SDL_PollEvent(ev);
        if (!got && app->minimised && !app->quit) {
            // Nothing to draw: sleep on the event queue instead of spinning.
            got = SDL_WaitEventTimeout(ev, 100);
            if (!got)
                return false;
        }
        if (!got)
            return false;
        if (!handle(app, ev))
            return true;
    }
}

bool kp_app_frame_begin(kp_app *app)
{
    uint64_t now = SDL_GetPerformanceCounter();
    double dt = (double)(now - app->last_counter) / (double)SDL_GetPerformanceFrequency();
    app->last_counter = now;
    app->time += dt;
    app->dt = dt > 0.25 ? 0.25 : dt;
    if (app->minimised)
        return false;
    update_size(app);
    glViewport(0, 0, app->width, app->height);
    glClearColor(0.53f, 0.70f, 0.86f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    return true;
}

void kp_app_frame_end(kp_app *app)
{
    if (!app->minimised)
        SDL_GL_SwapWindow(app->window);
    app->frames++;
}

bool kp_app_screenshot(kp_app *app, const char *path)
{
    int w = app->width, h = app->height;
    size_t row = (size_t)w * 3u;
    unsigned char *px = malloc(row * (size_t)h), *flipped = malloc(row * (size_t)h);
    if (!px || !flipped) {
        free(px);
        free(flipped);
        fprintf(stderr, "keel-play: cannot write %s: out of memory\n", path);
        return false;
    }
    glFinish();
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, px);
    // GL's rows go bottom-up, a PNG's top-down.
    for (int y = 0; y < h; y++)
        memcpy(flipped + (size_t)y * row, px + (size_t)(h - 1 - y) * row, row);
    int ok = stbi_write_png(path, w, h, 3, flipped, (int)row);
    free(px);
    free(flipped);
    if (!ok) {
        fprintf(stderr, "keel-play: cannot write %s: stb_image_write failed (a folder that does not exist?)\n", path);
        return false;
    }
    app->screenshots++;
    return true;
}

void kp_app_capture_mouse(kp_app *app, bool on)
{
    if (SDL_SetRelativeMouseMode(on ? SDL_TRUE : SDL_FALSE) == 0)
        app->mouse_captured = on;
}

void kp_app_toggle_fullscreen(kp_app *app)
{
    bool to = !app->fullscreen;
    if (SDL_SetWindowFullscreen(app->window, to ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0) == 0)
        app->fullscreen = to;
    update_size(app);
}

bool kp_app_screenshot_next(kp_app *app, char *name, size_t size)
{
    // Claim the name first (O_EXCL: a file that exists is never replaced),
    // then write the PNG over the empty file claimed.
    for (uint32_t n = app->next_shot ? app->next_shot : 1u; n < 10000000u; n++) {
        snprintf(name, size, "keel-play-%05u.png", (unsigned)n);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0) {
            fprintf(stderr, "keel-play: cannot write %s: %s\n", name, strerror(errno));
            return false;
        }
        close(fd);
        app->next_shot = n + 1u;
        if (!kp_app_screenshot(app, name)) {
            unlink(name);
            return false;
        }
        fprintf(stderr, "keel-play: wrote %s\n", name);
        return true;
    }
    fprintf(stderr, "keel-play: cannot write a screenshot: keel-play-00001.png to keel-play-9999999.png all exist\n");
    return false;
}
