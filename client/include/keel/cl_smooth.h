// keel: what to draw for each character this frame: the predicted states
// interpolated between the two newest ticks, plus a visual error offset that
// hides rollback corrections. MIT licence, see LICENSE.
//
// Display only: cl_smooth reads states (a cl_client's predicted scene, or
// any states the game hands it) and never writes into a scene; it uses
// floats, the simulation does not.
//
// The model. An update holds, per character, its state at the newest
// predicted tick T (`cur`) and at T - 1 (`prev`). A frame draws
//     position = prev + (cur - prev) * alpha + offset
// where alpha (0..1, given to cl_smooth_frame) is how far the game's clock is
// from tick T - 1 to tick T. When a rollback changes the states of a tick the
// smoother already held (the same T again, or T + 1 whose prev is the old
// T), the difference old - new is added to the character's offset, so the
// drawn position does not jump; each frame the offset decays by
// 2^(-dt / half_life). Yaw and pitch work the same way (the short way round,
// in radians), with their own offsets.
//
// Snaps (offsets set to zero, the new state drawn at once):
// - a character newly present (the first update, a spawn, one that left and
//   came back between two updates);
// - a correction that would make the offset longer than snap_distance;
// - a teleport: motion between prev and cur longer than teleport_distance
//   (then cur alone is drawn, not the way between).
//
// Invariants: |offset| <= snap_distance after every update and frame; the
// drawn position minus the offset lies on the segment prev..cur, so it lags
// the newest predicted position by at most one tick's motion; equal states
// give a zero offset (differences are taken in fixed point, exactly).
//
// Figures with the defaults (half-life 0.1 s; tests/test_smooth.c measures
// and prints them): a frame of dt seconds removes the fraction
// 1 - 2^(-dt / 0.1) of the offset: 10.9% at 60 Hz, so a correction of c
// metres moves the drawn position by at most 0.109 * c in a frame beyond its
// own motion (32.7 mm for 0.3 m; at most 218 mm for the largest absorbed
// correction, 2 m). An offset of c decays below 1 mm after
// 0.1 * log2(c / 1 mm) seconds: 0.823 s for 0.3 m, 50 frames (0.833 s) at
// 60 Hz.
//
// Use with a cl_client (after handling the network events and after each
// cl_client_predict; both are cheap when nothing changed):
//     cl_smooth_update_client(smooth, client);
//     ... once per rendered frame:
//     cl_smooth_frame(smooth, dt_seconds, alpha);
//     cl_smooth_pose(smooth, id, &pose);
// Without one, cl_smooth_update takes the states of T and T - 1 directly
// (both in id order, as sim_scene_characters gives them). Nothing is
// allocated after cl_smooth_create.
#ifndef KEEL_CL_SMOOTH_H
#define KEEL_CL_SMOOTH_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/cl_client.h>
#include <keel/sim_move.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cl_smooth_settings {
    /// Seconds for an offset to halve, 0..10 (default 0.1; 0: corrections
    /// show at once, the offset is cleared by each frame).
    float half_life_s;
    /// Metres, > 0 (default 2): a correction that would make the offset
    /// longer than this snaps instead.
    float snap_distance;
    /// Metres per tick, > 0 (default 3: more than the most the mover moves in
    /// one tick at 64 Hz, 100 m/s on every axis, 2.71 m): longer motion from
    /// one tick to the next is a teleport and snaps.
    float teleport_distance;
    uint32_t cookie; ///< set by cl_smooth_default_settings; checked
} cl_smooth_settings;

cl_smooth_settings cl_smooth_default_settings(void);

/// What to draw for one character.
typedef struct cl_pose {
    uint32_t id;
    float position[3];              ///< feet (bottom centre of the shape), metres, offset included
    float yaw, pitch;               ///< radians in [-pi, pi), offsets included (sim_angle.h's convention)
    float offset[3];                ///< the position offset included above, metres
    float yaw_offset, pitch_offset; ///< radians
    uint32_t tick;                  ///< the newest tick held (cur's)
    uint32_t flags;                 ///< cur's SIM_CHAR_* flags
    int32_t move_type;              ///< cur's sim_move_type_id
    bool crouched;                  ///< cur has SIM_CHAR_CROUCHED
    /// Snapped (spawn, large correction or teleport) in an update between the
    /// last two cl_smooth_frame calls: this frame is its first after the snap.
    bool snapped;
} cl_pose;

typedef struct cl_smooth_stats {
    uint64_t updates;
    uint64_t corrections;      ///< nonzero differences absorbed into an offset
    uint64_t snaps_spawn;      ///< characters newly present
    uint64_t snaps_correction; ///< corrections above snap_distance
    uint64_t snaps_teleport;   ///< motion above teleport_distance in a tick
    uint64_t dropped;          ///< characters beyond max_characters (the highest ids), per update
    float largest_correction;  ///< metres, absorbed or snapped
} cl_smooth_stats;

typedef struct cl_smooth cl_smooth;

/// NULL when the settings are out of range (or not from
/// cl_smooth_default_settings), max_characters is not in 1..65536, or
/// memory runs out.
cl_smooth *cl_smooth_create(const cl_smooth_settings *settings, uint32_t max_characters);
void cl_smooth_destroy(cl_smooth *smooth);

/// The newest predicted states: `cur` at `tick` (n of them) and `prev` at
/// tick - 1 (may be NULL: then nothing is interpolated and no correction is
/// found through it), each in strictly increasing id order. Characters not
/// in `cur` are forgotten. False (and nothing changes) when an array is not
/// in id order; true otherwise, also when characters beyond max_characters
/// were left out (cl_smooth_stats.dropped).
bool cl_smooth_update(cl_smooth *smooth, uint32_t tick, const sim_char_state *cur, uint32_t n,
                      const sim_char_state *prev, uint32_t prev_n);

/// States for the tick held as cur by the last update, as they stand now:
/// their difference from the held ones goes into the offsets (a caller
/// that predicted several ticks since its last update calls it before
/// cl_smooth_update, which compares only the ticks it is given). Another
/// tick, or states not in id order: false, nothing changes.
bool cl_smooth_correct(cl_smooth *smooth, uint32_t tick, const sim_char_state *states, uint32_t n);

/// cl_smooth_update with a client's predicted scene (tick P) and its
/// predicted states at P - 1, after cl_smooth_correct with its states at the
/// held tick when it is older than P - 1 and still kept. False when the
/// client is not playing (nothing changes).
bool cl_smooth_update_client(cl_smooth *smooth, const cl_client *client);

/// A new frame: offsets decay over dt_seconds (negative or not finite: 0),
/// and poses are drawn at alpha (clamped to 0..1; not finite: 1) between
/// the two newest ticks.
void cl_smooth_frame(cl_smooth *smooth, float dt_seconds, float alpha);

/// The pose of character `id` for this frame; false when it is not held.
bool cl_smooth_pose(const cl_smooth *smooth, uint32_t id, cl_pose *out);
/// The number of characters held, and the pose of the i-th in id order
/// (false when i is out of range).
uint32_t cl_smooth_count(const cl_smooth *smooth);
bool cl_smooth_pose_at(const cl_smooth *smooth, uint32_t i, cl_pose *out);

/// The newest tick held (NET_TICK_NONE-like 0xFFFFFFFF before the first update).
uint32_t cl_smooth_tick(const cl_smooth *smooth);
void cl_smooth_stats_get(const cl_smooth *smooth, cl_smooth_stats *stats);
const cl_smooth_settings *cl_smooth_get_settings(const cl_smooth *smooth);

/// Seconds for an offset of from_m metres to decay below to_m with these
/// settings, counted in whole frames of dt seconds (the figures above, for
/// printing): 0 when from_m <= to_m, dt with a half-life of 0, infinity when
/// to_m or dt is not positive.
float cl_smooth_decay_seconds(const cl_smooth_settings *settings, float from_m, float to_m, float dt);

#ifdef __cplusplus
}
#endif

#endif
