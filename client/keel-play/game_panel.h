// keel-play: any game's fields and commands, through its schemas
// (keel/sim_game.h). MIT licence, see LICENSE.
//
// Invariants: nothing here knows a game. Field names come from the schemas
// and values are decoded by their kind (rec_game_field_value): BOOL, INT and
// UINT as integers, FX in units (raw / 65536), ANGLE in degrees. The mouse
// buttons map onto the command schema's BOOL fields in schema order (the
// left button the first, the right the second, the middle the third), so a
// game's fire buttons need no code here. Nothing is written into a scene.
#ifndef KEEL_PLAY_GAME_PANEL_H
#define KEEL_PLAY_GAME_PANEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <keel/sim_game.h>

/// Mouse buttons as kp_game_command_buttons takes them.
enum { KP_GAME_BUTTON_LEFT = 1u, KP_GAME_BUTTON_RIGHT = 2u, KP_GAME_BUTTON_MIDDLE = 4u };

/// Set the command struct's k-th BOOL field (schema order) to bit k of
/// `buttons` (1: left, 2: right, 4: middle); other fields stay as they are
/// (the caller zeroes the struct). Returns how many BOOL fields there are.
uint32_t kp_game_command_buttons(const sim_game *game, uint32_t buttons, void *command);
/// The name of the command field button k (0 left, 1 right, 2 middle)
/// sets, or NULL.
const char *kp_game_button_field(const sim_game *game, uint32_t k);

/// The panel: "game NAME vV  character ID" and a line "field\tvalue" per
/// field of the character's game state (an array's elements on one line,
/// the first 4 then "..."), for kp_overlay_table. False (out empty) when
/// the scene has no game or no such character.
bool kp_game_panel_text(const sim_scene *scene, uint32_t id, char *out, size_t size);

/// Where a box `w` wide goes at the right edge of a window `width` wide:
/// its top at `y`, or below every region of `keep` (x, y, w, h) it would
/// overlap there.
float kp_game_panel_top(float y, float w, int width, const float (*keep)[4], uint32_t count);

/// `,"game":"NAME","game_fields":{"field":value,...}` for the summary line
/// (an array's first element only, named "field[0]"); nothing when the
/// scene has no game or no such character.
void kp_game_fields_json(FILE *f, const sim_scene *scene, uint32_t id);

/// One field's value as text, by its kind (element k of an array).
void kp_game_format_value(const sim_game_field *field, const void *data, uint32_t k, char *out, size_t size);

#endif
