// keel-play live mode: keys and mouse to the player's command. MIT licence,
// see LICENSE.
//
// Invariants:
// - The view angles live here in degrees (doubles: the mouse moves them by
//   fractions of a sim_angle unit); a command takes them rounded to the
//   nearest sim_angle. Pitch stays within +-89 degrees.
// - Keys are sampled as held (SDL's keyboard state) when a command is made,
//   so one command per tick sees whatever is down at that tick; a Space
//   pressed and released between two commands still jumps (latched until
//   the next command); toggles
//   (fly, chase camera, net graph, help) flip on key presses, never on
//   repeats.
// - The mouse buttons are a game's fire buttons only while the mouse is
//   captured (the click that captures it fires nothing); like Space, a
//   click shorter than a tick is latched until the next command.
// - The mouse turns the view only while it is captured (SDL relative mode).
//   Esc releases it; Esc while released quits; a click captures it again.
//   F11 (fullscreen) and closing the window are the window's (app.h).
#ifndef KP_LIVE_INPUT_H
#define KP_LIVE_INPUT_H

#include <stdbool.h>

#include <SDL.h>
#include <keel/sim_move.h>

typedef struct kp_controls {
    double yaw_deg, pitch_deg;
    double sensitivity; ///< degrees per mouse count
    bool captured;
    bool fly, chase, netgraph, help, players;
    bool quit;
    uint32_t screenshots;  ///< F12 presses not written yet (each press a shot)
    bool keys_ignored;     ///< the window lost focus: commands carry no keys
    bool jump_latched;     ///< Space went down since the last command
    bool game_panel;       ///< G: the game's fields of the own character
    uint32_t fire_latched; ///< mouse buttons (KP_GAME_BUTTON_*) pressed since the last command
} kp_controls;

void kp_controls_init(kp_controls *c, double sensitivity, double yaw_deg);
/// Capture or release the mouse: the flag the window follows (kp_app's
/// relative mouse mode).
void kp_controls_capture(kp_controls *c, bool on);
/// One window event. Returns true when it was the controls' business.
bool kp_controls_event(kp_controls *c, const SDL_Event *e);
/// The command of a tick from the keys held now and the view angles.
sim_input kp_controls_command(kp_controls *c, uint32_t tick);

/// The mouse buttons of this tick's command (KP_GAME_BUTTON_*: left 1,
/// right 2, middle 4): held now or pressed since the last call, while the
/// mouse is captured and the window has the focus. Clears the latch.
uint32_t kp_controls_fire(kp_controls *c);

/// Degrees to the nearest binary angle, and back.
sim_angle kp_angle_from_deg(double deg);
double kp_angle_to_deg(sim_angle a);

#endif
