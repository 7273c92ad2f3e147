// keel-play: a scene recording re-simulated for viewing, with random access.
// MIT licence, see LICENSE.
//
// A kp_run holds a recording, its level and world (rebuilt as keel-replay
// does: tools/keel-replay/level.c, the digest decides), a scene and a cursor.
// The scene's tick is the tick shown: the state at the start of that tick,
// after the step of the tick before. It goes from the initial state's tick
// (first) to first + tick_count (the state after the last recorded tick).
// Seeking restores the nearest keyframe at or before the target (or the
// initial state) and re-simulates from there with the recording's own code
// (rec_resim_apply: leaves, joins, commands; then sim_scene_step).
// Markers list the recording's events by tick: joins, leaves and substituted
// commands (a command whose input.tick is not the tick it ran in: the server
// ran the previous one again).
#ifndef KEEL_PLAY_PLAYBACK_H
#define KEEL_PLAY_PLAYBACK_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/rec.h>

#include "replay.h" // keel-replay's replay_level

typedef enum kp_marker_kind {
    KP_MARK_JOIN = 0,
    KP_MARK_LEAVE = 1,
    KP_MARK_SUBSTITUTE = 2,
    KP_MARK_DIVERGENCE = 3,
    KP_MARK_KIND_COUNT
} kp_marker_kind;

typedef struct kp_marker {
    uint32_t tick; ///< the state to show for it: the start of the tick it happened at (+1 for a result)
    uint32_t id;   ///< the character
    kp_marker_kind kind;
} kp_marker;

#define KP_MAX_MARKERS 4096u

typedef struct kp_run {
    const char *file;
    rec_file *f;
    const rec_header *h;
    rec_info info;
    replay_level lv;   ///< the level and world (when this run owns them)
    const sim_world *world;
    const sim_level *level;
    sim_scene *scene;
    rec_cursor *cur;
    uint32_t first, last; ///< the ticks that can be shown
    kp_marker *markers;
    uint32_t marker_count;
    uint64_t substitutes, joins, leaves; ///< counted over the whole recording
} kp_run;

/// Open a scene recording and put it at its first tick. With `world` given
/// (diff: the other recording's, same digest) no level is loaded. Returns
/// 0, or an exit code with the message printed as keel-replay prints it
/// (REC_EXIT_BAD_FILE for a corrupt file or a level that is not found).
int kp_run_open(kp_run *r, const char *file, const char *level_override, const sim_level *level,
                const sim_world *world);
void kp_run_close(kp_run *r);

uint32_t kp_run_tick(const kp_run *r);
/// Show `tick` (clamped to [first, last]). False with a message on stderr
/// when the recording cannot be re-simulated there (a malformed block).
bool kp_run_seek(kp_run *r, uint32_t tick);
/// One tick forward; false at the end (or on a fault, with a message).
bool kp_run_step(kp_run *r);

#endif
