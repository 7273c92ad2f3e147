// keel-play: a scene recording re-simulated for viewing, with random access.
// MIT licence, see LICENSE.
//
// A kp_run holds a recording, its level and world (rebuilt as keel-replay
// does: tools/keel-replay/level.c, the digest decides), a scene and a cursor.
// The scene's tick is the tick shown: the state at the start of that tick,
// after the step of the tick before. It goes from the initial state's tick
// (first) to first + tick_count (the state after the last recorded tick).
// Seeking restores the nearest keyframe at or before the target (or the
// initial state; with a game, the game's state recorded there too) and
// re-simulates from there with the recording's own code
// (rec_resim_apply: leaves, joins, commands; then sim_scene_step).
// Markers list the recording's events by tick: joins, leaves and substituted
// commands (marked substituted, as keel-server marks the commands it ran in
// place of a player's own that had not come; or, in recordings of other
// sources, a command whose input.tick is not the tick it ran in).
//
// A client recording (keel-client --record) holds the calls made into the
// client library, not scene ticks: a kp_run of one re-runs the client library
// on them (cl_replay_apply, what keel-replay verify does) and shows the
// client's predicted scene; its tick is the predicted tick. Markers are the
// client's own mispredictions by cause. There are no keyframes: seeking back
// starts again from the first call.
#ifndef KEEL_PLAY_PLAYBACK_H
#define KEEL_PLAY_PLAYBACK_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/cl_client.h>
#include <keel/rec.h>

#include "replay.h" // keel-replay's replay_level

typedef enum kp_marker_kind {
    KP_MARK_JOIN = 0,
    KP_MARK_LEAVE = 1,
    KP_MARK_SUBSTITUTE = 2,
    KP_MARK_DIVERGENCE = 3,
    KP_MARK_MISS_SUBSTITUTED = 4, ///< own misprediction: the server substituted our command
    KP_MARK_MISS_REMOTE = 5,      ///< own misprediction: a remote command changed
    KP_MARK_MISS_INTERACTION = 6, ///< own misprediction: near a mispredicted character
    KP_MARK_MISS_UNEXPLAINED = 7, ///< own misprediction with no cause: a determinism bug
    KP_MARK_MISS_GAME_RULE = 8,   ///< own misprediction: a game's rule (a shot whose command changed)
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
    replay_level lv; ///< the level and world (when this run owns them)
    const sim_world *world;
    const sim_level *level;
    sim_scene *scene;      ///< scene recordings: the re-simulated scene
    const sim_scene *view; ///< what is drawn: the scene, or the client's predicted scene
    rec_cursor *cur;
    // client recordings
    bool client;
    struct net_host *host;
    struct cl_client *cl;
    uint64_t records;                            ///< calls applied since the start
    uint64_t own_mispredictions[CL_CAUSE_COUNT]; ///< by cl_cause, over the whole recording
    uint32_t first, last;                        ///< the ticks that can be shown
    kp_marker *markers;
    uint32_t marker_count;
    uint64_t markers_dropped;            ///< events past KP_MAX_MARKERS: counted, not drawn
    uint64_t substitutes, joins, leaves; ///< counted over the whole recording
    /// Whether the recording marks substituted commands (its header says so,
    /// or input.tick not the tick run). A keel-server recording from before
    /// the marks (no substitutes_marked in its header) recorded a substitute
    /// as the tick's own command and says nothing about substitutions: false
    /// then, and `substitutes` is not a count.
    bool substitutes_marked;
    uint32_t *ids; ///< scene recordings: every character id in the recording, increasing
    uint32_t id_count, id_cap;
} kp_run;

/// Open a scene recording and put it at its first tick. With `world` given
/// (diff: the other recording's, same digest) no level is loaded. `game`
/// (--game; NULL: none) is given to the recording (rec_file_set_game) before
/// anything is re-simulated: a recording of a game needs it, and one of
/// another game (or of none) is refused. Returns 0, or an exit code with the
/// message printed as keel-replay prints it (REC_EXIT_BAD_FILE for a corrupt
/// file or a level that is not found, KEEL_EXIT_GAME_MISMATCH (7) for a
/// game that is not the recording's).
int kp_run_open(kp_run *r, const char *file, const char *level_override, const sim_level *level, const sim_world *world,
                const struct sim_game *game);
void kp_run_close(kp_run *r);

/// --follow ID: 0 when the recording holds character `id` (or id is 0, or
/// r is a client recording, whose characters are known only as it plays),
/// else KP_EXIT_USAGE with a message naming the flag and the ids there are.
int kp_run_check_follow(const kp_run *r, uint32_t id);

uint32_t kp_run_tick(const kp_run *r);
/// Show `tick` (clamped to [first, last]). False with a message on stderr
/// when the recording cannot be re-simulated there (a malformed block).
bool kp_run_seek(kp_run *r, uint32_t tick);
/// One tick forward; false at the end (or on a fault, with a message).
bool kp_run_step(kp_run *r);

// client recordings (playback_client.c), called by the functions above
int kp_run_client_open(kp_run *r);
void kp_run_client_close(kp_run *r);
bool kp_run_client_seek(kp_run *r, uint32_t tick);
bool kp_run_client_step(kp_run *r);
void kp_run_add_marker(kp_run *r, uint32_t tick, uint32_t id, kp_marker_kind kind);

#endif
