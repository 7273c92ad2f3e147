// keel-play live mode: its state and what a frame draws. MIT licence, see
// LICENSE.
//
// Invariants:
// - A frame draws the predicted scene's level objects and characters at the
//   poses cl_smooth gives (never the raw predicted positions), the own
//   character only with the chase camera; the camera is at the own
//   character's drawn eye with the player's own view angles (the mouse
//   turns the view at once, not a tick later).
// - Overlays: a status line, the reason the link ended (large, until the
//   program ends), the net graph, F1 help, Tab player list, a crosshair.
//   With a game: its HUD (game_hud.h: it sees the predicted scene each
//   frame; Tab then shows its score table) or, with G or for a game without
//   one, the own character's game fields (game_panel.h).
#ifndef KP_LIVE_VIEW_H
#define KP_LIVE_VIEW_H

#include <keel/cl_smooth.h>

#include "app.h"
#include "game_hud.h"
#include "kp.h"
#include "live_figures.h"
#include "live_input.h"
#include "live_link.h"
#include "netgraph.h"
#include "overlay.h"
#include "render.h"

typedef struct kp_live {
    kp_app *app;
    const kp_options *opt;
    sim_level level;
    sim_map map; ///< a .map level's entities (empty for others)
    sim_world *world;
    sim_move_settings settings;
    kp_link link;
    cl_smooth *smooth;
    kp_render *render;
    kp_overlay *overlay;
    kp_controls ctl;
    kp_netgraph graph;
    kp_figures *fig;
    kp_char_draw *draws;
    uint32_t draws_cap;
    uint64_t start_us;
    uint32_t capture_frames;
    bool yaw_set;
    bool jump_made;          ///< a command with the jump button was made
    uint32_t last_jump_tick; ///< the tick of the newest such command
    bool have_pose, pose_snapped;
    cl_pose pose;           ///< the own character's this frame
    kp_game_hud *hud;       ///< the game's HUD (NULL: no game, or none for it)
    bool aimed;             ///< --aim-at: the view was turned to the character
    uint64_t fire_commands; ///< commands made with a mouse button down (a game's)
} kp_live;

/// The own character's pose this frame (after cl_smooth_frame), into the
/// figures.
void kp_live_own_pose(kp_live *L, float dt, float alpha);
/// Draw a frame (3D and overlays); returns its draw calls. Nothing when the
/// window is minimised (0).
uint32_t kp_live_draw(kp_live *L, uint64_t now_us);

#endif
