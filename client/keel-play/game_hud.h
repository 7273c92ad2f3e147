// keel-play: a game's HUD, behind one interface the modes call without
// knowing the game. MIT licence, see LICENSE.
//
// Invariants:
// - A mode (watch, live) knows only this interface: kp_game_hud_create finds
//   the HUD written for the scene's game by its name and checks that the
//   game's schemas are the ones that HUD reads (their sizes); any other game
//   gets none (NULL), and the generic panel (game_panel.h) shows its fields.
// - A HUD only reads scenes: it never writes into one. It finds events
//   (shots, hits, kills, deaths, respawns, rockets, explosions) by comparing
//   the scene it is shown with the one it saw the frame before; a seek
//   (watch) calls kp_game_hud_reset first, so that going back is no event.
// - In live mode it is shown the predicted scene: the player's own hit
//   marker shows as soon as the prediction has the hit, and a hit a rollback
//   takes back (the server disagreed) shows as a cancelled marker (the net
//   graph names the cause: cl_cause).
// - Floats and wall-clock seconds are for drawing only.
#ifndef KEEL_PLAY_GAME_HUD_H
#define KEEL_PLAY_GAME_HUD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <keel/sim_game.h>

#include "overlay.h"
#include "render.h"

typedef struct kp_game_hud kp_game_hud;

/// What one frame of a HUD is drawn for.
typedef struct kp_game_hud_frame {
    const kp_camera *cam;
    int width, height; ///< the window (the camera's projection)
    int bottom;        ///< the y the HUD keeps above (the watch timeline, the live help line)
    double now_s;      ///< the app's clock (fades and timers)
    bool crosshair;    ///< first person (live): a crosshair and the hit marker at the centre
    bool scores;       ///< the score table (Tab held in live mode; K in watch mode)
    bool follow;       ///< the HUD's character is shown (health, weapons); off for a free camera
    bool player;       ///< the HUD's character is the one playing (live): named "you"
} kp_game_hud_frame;

/// A game's HUD, as game_hud.c lists them.
typedef struct kp_game_hud_ops {
    const char *game; ///< the game's name (sim_game_name)
    bool (*fits)(const sim_game *game);
    void *(*create)(const sim_game *game, const sim_move_settings *settings);
    void (*destroy)(void *self);
    void (*reset)(void *self);
    void (*observe)(void *self, const sim_scene *scene, uint32_t own, double now_s);
    void (*characters)(void *self, const sim_scene *scene, kp_char_draw *draws, uint32_t count, double now_s);
    void (*draw_world)(void *self, kp_render *r, double now_s);
    uint32_t (*draw)(void *self, kp_overlay *o, const kp_game_hud_frame *f, float (*keep)[4], uint32_t room);
    void (*summary)(const void *self, FILE *out);
} kp_game_hud_ops;

/// The HUD for `game` (NULL when keel-play has none for it, or no game).
kp_game_hud *kp_game_hud_create(const sim_game *game, const sim_move_settings *settings);
void kp_game_hud_destroy(kp_game_hud *h);
/// Forget the scene seen before (a seek): the next observe finds no events.
void kp_game_hud_reset(kp_game_hud *h);
/// Look at the scene drawn this frame; `own` is whose HUD it is (the
/// player, or the character followed; 0: nobody's).
void kp_game_hud_observe(kp_game_hud *h, const sim_scene *scene, uint32_t own, double now_s);
/// Mark the characters to draw: the dead, the protected.
void kp_game_hud_characters(kp_game_hud *h, const sim_scene *scene, kp_char_draw *draws, uint32_t count, double now_s);
/// The 3D part (rockets, explosions), between kp_render_begin and _end.
void kp_game_hud_draw_world(kp_game_hud *h, kp_render *r, double now_s);
/// The 2D part (in the overlay batch). The regions it covers go to keep (at
/// most `room`); returns how many.
uint32_t kp_game_hud_draw(kp_game_hud *h, kp_overlay *o, const kp_game_hud_frame *f, float (*keep)[4], uint32_t room);
/// `,"NAME":{...}` for the summary line (what the HUD showed and counted).
void kp_game_hud_summary(const kp_game_hud *h, FILE *out);

/// keel-arena's (hud_arena.c).
extern const kp_game_hud_ops kp_arena_hud_ops;

#endif
