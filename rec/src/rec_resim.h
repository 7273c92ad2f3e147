// keel recordings: what verify and diff share (internal). MIT licence, see LICENSE.
//
// Rebuilding a scene from a header, applying a recorded tick to it, and
// filling a diff report from two full states.
#ifndef KEEL_REC_RESIM_H
#define KEEL_REC_RESIM_H

#include <keel/rec_verify.h>

#include "rec_internal.h"

/// Fill *err (message formatted, offset, chunk). Returns REC_EXIT_BAD_FILE.
int rec_fail(rec_error *err, uint64_t offset, const char *chunk, const char *fmt, ...) REC_PRINTF(4, 5);

/// A scene as the header describes it: settings, capacity, platforms in
/// header order, waters. NULL with *err filled when the header's settings or
/// platforms are refused (or memory runs out). Not yet holding characters.
sim_scene *rec_resim_scene_create(const rec_header *h, const sim_world *world, rec_error *err);

/// Put the scene at a recorded state (the initial one or a keyframe).
bool rec_resim_restore(sim_scene *scene, uint32_t tick, const sim_char_state *states, uint32_t count, const char *what,
                       rec_error *err);

/// Apply what the recording says happened at the start of t->tick: leaves,
/// joins, commands. False (with *err) when the scene refuses one: the
/// recording does not fit its own scene.
bool rec_resim_apply(sim_scene *scene, const rec_tick *t, rec_error *err);

/// A recording with a game: put the game's state recorded at `tick` (GKEY)
/// into a scene just restored there with rec_resim_restore (true at once for
/// a recording without a game). False with *err when the file holds none
/// at that tick or the scene refuses it (the field named).
bool rec_resim_restore_game(sim_scene *scene, const rec_file *f, uint32_t tick, rec_error *err);

/// rec_resim_apply's commands with their game commands (rec_game_resim.c).
bool rec_resim_apply_game(sim_scene *scene, const sim_game *game, const rec_tick *t, rec_error *err);

/// Add the differences of two scenes' game states (the characters of `a`
/// and `b` matched by id) to the report: the game-wide fields (character 0)
/// and each character's. Returns how many values were added.
uint32_t rec_report_add_game(rec_diff_report *r, const sim_scene *a, const sim_scene *b);
/// The fields of two structs of schema `s` that differ, named `prefix` and
/// the field's name (with "[k]" for an array's element k).
uint32_t rec_report_add_game_struct(rec_diff_report *r, uint32_t character, const sim_game_schema *s, const void *a,
                                    const void *b, const char *prefix);

/// The game fields in which the recording's state at `tick` (its GKEY) and
/// `now` differ, added to the report (0 without a game or a GKEY there).
uint32_t rec_verify_game_values(rec_diff_report *r, const rec_file *f, const sim_world *world, uint32_t tick,
                                const sim_scene *now);

/// A divergence only the game's state shows: its characters (ids of the
/// report's values from index `from` on, 0 left out) become the report's.
void rec_report_game_characters(rec_diff_report *r, uint32_t from);

/// Compare the scene after a step with the recorded results of that tick
/// (character hashes as the file's writer computed them: its schema).
/// Returns the number of characters whose 16-bit hash or presence differs
/// (writing the first REC_DIFF_MAX_CHARACTERS ids to ids, when given) and
/// sets *world_differs (false where the tick holds no world hash). With
/// `check`, carries the block check (rec_check_mix) over the scene's
/// characters: restarted on a block's first tick, to be compared with
/// t->block_check on its last.
uint32_t rec_resim_compare(const rec_file *f, const sim_scene *scene, const rec_tick *t, uint64_t *check,
                           bool *world_differs, uint32_t *ids, uint32_t *id_count);

/// Whether a tick's re-simulated result differs from the recorded one:
/// rec_resim_compare's characters, its world hash, and on a block's last
/// tick the block check. *check_only: only the check differs (the 16-bit
/// hashes of the block all matched).
static inline bool rec_resim_differs(const rec_file *f, const sim_scene *scene, const rec_tick *t, uint64_t *check,
                                     bool *check_only)
{
    bool world_differs = false;
    uint32_t n = rec_resim_compare(f, scene, t, check, &world_differs, NULL, NULL);
    bool check_differs = t->has_block_check && *check != t->block_check;
    *check_only = n == 0 && !world_differs && check_differs;
    return n > 0 || world_differs || check_differs;
}

/// Add the differences of two full states (id order) to the report's value
/// list. Returns how many characters differ.
uint32_t rec_report_add_states(rec_diff_report *r, const sim_char_state *a, uint32_t a_count, const sim_char_state *b,
                               uint32_t b_count);

/// Append one value (sets values_truncated when the list is full).
void rec_report_add_value(rec_diff_report *r, uint32_t character, rec_value_kind kind, uint32_t field, int64_t a,
                          int64_t b);

/// The field name of a value ("velocity.x", "input.forward", "present").
const char *rec_value_name(const rec_diff_value *v);
rec_field_type rec_value_type(const rec_diff_value *v);

/// Fill div.field/recorded/other from the report's first value of the first
/// character, and write div.detail from everything (names label the sides).
void rec_report_summarize(rec_diff_report *r, const char *name_a, const char *name_b, const char *extra);

/// The keyframe index at `tick`, or -1; never for tick 0 when the file has
/// no keyframes.
static inline int64_t rec_resim_keyframe_at(const rec_file *f, uint32_t tick)
{
    return rec_file_keyframe_count(f) == 0 ? -1 : rec_file_keyframe_at(f, tick);
}

/// The first keyframe tick in [from, to], or UINT32_MAX.
uint32_t rec_resim_next_keyframe(const rec_file *f, uint32_t from, uint32_t to);

#endif
