// keel: a scene: many characters, moving platforms and water in one world,
// advanced one tick at a time. MIT licence, see LICENSE.
//
// The scene is the whole simulated state besides the static world: the tick
// number and every character's sim_char_state. Platforms follow looping paths
// that are pure functions of the tick, so they need no state of their own.
//
// Order independence: characters are kept sorted by id, whatever order they
// were added in, and during a tick every character collides with the others
// as they were at the start of that tick. So the result of a tick does not
// depend on the order of adds, nor on the order characters are processed in.
//
// A tick (sim_scene_step):
//   1. platforms move from their tick-t to their tick-t+1 positions;
//   2. characters standing on a platform are carried by its motion (swept, so
//      a carried character is stopped by walls and ceilings);
//   3. overlapping characters are separated (see below);
//   4. each character runs sim_move_step against the world, the platforms at
//      their new positions and the other characters' start-of-tick shapes:
//      a platform moving into a character is a penetration that the step's
//      depenetration resolves (the platform pushes);
//   5. overlapping characters are separated again: after a step no two
//      overlap by more than 1 mm unless both are marked SIM_CHAR_CROWDED
//      (no free spot was found for one of them: the crowd does not fit, or
//      the step's search budget ran out while placing a pile);
//   6. the tick number advances.
// Separation pushes each of an overlapping pair half the way apart, swept
// against the level, and moves piles and whoever stays squeezed to the
// nearest free spot, in id order (docs/scene.md, "Keeping characters
// apart").
// The start-of-tick shapes are a snapshot taken after step 2 (riders already
// carried) and before any character's own move. Hits on a platform or on
// another character report SIM_FEATURE_OBJECT_BIT | its id in
// sim_feature.triangle (so the two kinds of id must differ). docs/scene.md
// has the details and what is approximated.
#ifndef KEEL_SIM_SCENE_H
#define KEEL_SIM_SCENE_H

#include <stddef.h>

#include <keel/sim_level.h>
#include <keel/sim_move.h>
#include <keel/sim_world.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_PLATFORM_MAX_POINTS 8

/// A kinematic box moving along a closed path of waypoints: it travels from
/// point i to point i+1 (the last back to the first) in `ticks_per_leg` ticks,
/// at constant speed, and waits `pause_ticks` at each point.
typedef struct sim_platform_def {
    uint32_t id; ///< nonzero, unique among platforms
    sim_vec3 half;
    sim_vec3 points[SIM_PLATFORM_MAX_POINTS]; ///< box centre at each waypoint
    uint32_t point_count;                     ///< 1..SIM_PLATFORM_MAX_POINTS
    uint32_t ticks_per_leg;                   ///< >= 1
    uint32_t pause_ticks;
} sim_platform_def;

/// The platform's centre at a tick (a pure function of the tick).
sim_vec3 sim_platform_position(const sim_platform_def *p, uint32_t tick);

typedef struct sim_scene sim_scene;

/// A scene on `world` (which must outlive it) with room for `max_characters`
/// (at most 2^24). Allocates here and never during a step. NULL when the
/// settings fail sim_move_settings_check (or memory runs out).
sim_scene *sim_scene_create(const sim_world *world, const sim_move_settings *settings, uint32_t max_characters);
void sim_scene_destroy(sim_scene *scene);

/// 0 on success; -1 when full, the id is 0 or taken, or the path is invalid.
/// Ids are below SIM_FEATURE_OBJECT_BIT and not used by a character.
int sim_scene_add_platform(sim_scene *scene, const sim_platform_def *platform);
/// The built-in level's platform pair around its platform_area marker: an
/// elevator rising 3 m and a shuttle gliding 4 m (keel-sim and keel-server
/// --platforms, docs/levels.md). 0 on success; -1 when the level has no such
/// marker or the scene refuses a platform.
int sim_scene_add_area_platforms(sim_scene *scene, const sim_level *level, uint32_t elevator_id, uint32_t shuttle_id);

/// Water: an axis-aligned box; a character whose centre is inside swims.
int sim_scene_add_water(sim_scene *scene, sim_aabb volume);

/// Add a character (kept sorted by id); 0 on success, -1 when full or the id
/// is taken (also: 0, not below SIM_FEATURE_OBJECT_BIT, a platform's id), or
/// when the state fails sim_char_state_check (a position outside the
/// character range, SIM_MOVE_POSITION_LIMIT, among others).
int sim_scene_add_character(sim_scene *scene, const sim_char_state *state);
bool sim_scene_remove_character(sim_scene *scene, uint32_t id);

// ---- placing characters ----------------------------------------------------
// Spawning, respawning and joining players should not land inside whoever
// stands at the spawn point: these find the nearest free spot.

/// The nearest point to `feet` where a character in `state` (its shape,
/// standing or crouched, from the scene's settings) fits: clear of the level
/// and the platforms (at the current tick), at least half a millimetre from
/// every other solid character (the character `state->id` itself is left
/// out, so a character already in the scene can be re-placed). Tried in
/// order: `feet` itself, then rings around it of radius k times half the
/// shape's width (6k points on ring k, up to 40 rings: 16 m for the default
/// shapes), each point dropped onto the walkable ground under it and also
/// tried one step height up. A ring spot must have ground under its whole
/// footprint (its rim sampled, within a step height), lie at most a step
/// height above the ground at `feet` and at most 2 m below it, and be
/// reached as a walk would reach it: the shape swept up a step height,
/// across, and down onto the spot, against the level and the platforms
/// (docs/scene.md, "Free spots"). false (and *out_feet untouched) when none
/// is found. Deterministic: the same scene and arguments give the same point
/// on every machine.
bool sim_scene_find_spot(sim_scene *scene, const sim_char_state *state, sim_vec3 feet, sim_vec3 *out_feet);

/// sim_scene_add_character at the nearest free spot to state->position
/// (sim_scene_find_spot). Returns 0 when placed at a free spot, 1 when none
/// was found and the character was added where it was asked for (the
/// scene's separation then moves it), -1 when the add was refused.
/// *placed_feet (when given) is where it went.
int sim_scene_place_character(sim_scene *scene, const sim_char_state *state, sim_vec3 *placed_feet);

// ---- respawning -------------------------------------------------------------
// With settings.respawn_depth > 0 the scene finds up to SIM_SCENE_SPAWN_SPOTS
// spawn spots when it is created (sim_spawn_spots with
// sim_spawn_default_settings of its settings: a function of the world and
// the settings only, so every scene made from them, a client's and a
// replay's alike, has the same spots). At the end of each step (after the
// separation, before the tick advances) every character that is not flying
// and whose feet lie more than respawn_depth below the world's lowest point
// (sim_world_stats.bounds.min.y) is respawned, in id order: a fresh
// sim_char_spawn state (same id, yaw and pitch; velocity zero, standing) on
// the first spot, counting on from one chosen by (id, tick), that no other
// character stands on (within a body width and 2 m in height); when all are
// taken, on the chosen one. A level where no spot is found respawns nobody.

/// Most spawn spots a scene keeps.
#define SIM_SCENE_SPAWN_SPOTS 32u
/// The scene's spawn spots (0 when respawning is off or none was found) and
/// spot `index` (zero past the end).
uint32_t sim_scene_spawn_count(const sim_scene *scene);
sim_vec3 sim_scene_spawn_spot(const sim_scene *scene, uint32_t index);
/// The first of `count` spots, counting on (cyclically) from `start`, that no
/// character but `self` (0: none) stands on: none within a body width (the
/// standing shape's width + 10 cm) horizontally and 2 m in height. `count`
/// when every spot is taken. Reads only; time grows with count x characters.
uint32_t sim_scene_free_spot(const sim_scene *scene, const sim_vec3 *spots, uint32_t count, uint32_t start,
                             uint32_t self);
/// Characters respawned by the last step.
uint32_t sim_scene_last_respawns(const sim_scene *scene);

/// The input a character uses next step (characters without one this tick
/// use an empty command). Returns false for an unknown id.
bool sim_scene_set_input(sim_scene *scene, uint32_t id, const sim_input *input);

/// Advance one tick.
void sim_scene_step(sim_scene *scene);

/// What the last step's separation passes did (docs/scene.md, "Keeping
/// characters apart"): characters pushed apart (counted once per push
/// iteration that moved them), moved to a free spot (piles and leftovers),
/// and left overlapping because no free spot was found in reach or in the
/// pass's budget (they are tried again next tick; counted per pass).
/// `crowded`: characters marked SIM_CHAR_CROWDED after the step, those that
/// still overlap another by more than 0.73 mm (both of each such pair). Zero
/// means no two characters overlap by more than that.
typedef struct sim_scene_separation {
    SIM_RETURNED_STRUCT uint32_t pushed;
    uint32_t relocated;
    uint32_t unresolved;
    uint32_t crowded;
} sim_scene_separation;
sim_scene_separation sim_scene_last_separation(const sim_scene *scene);

/// The separation passes of a step: before the characters' moves (after
/// platforms carried their riders) and after them.
enum { SIM_SCENE_PASS_BEFORE_MOVES = 0, SIM_SCENE_PASS_AFTER_MOVES = 1 };

/// Whether pass `pass` of the last step moved character `id` to a free spot,
/// with where its feet were when the pass began (*from_feet) and where the
/// relocation put them (*to_feet; either may be NULL). The way between is
/// the one the search checked: the shape swept up a step height over the
/// higher end, across, and down onto the spot. Pushes of the same pass may
/// move it on from there (each swept, a few millimetres). A character
/// relocated twice in one pass reports the last spot (from is still where
/// the pass began). Between the two passes the character made its move, so
/// its path through a step is: from (pass 0) -> to (pass 0) -> its move ->
/// from (pass 1) -> to (pass 1). false for an unknown id, a pass that did
/// not relocate it, or when the scene changed (an add, a remove, a restore)
/// since the step. Reads per-character slots filled during the step: no
/// cost when nobody is relocated.
bool sim_scene_relocation(const sim_scene *scene, uint32_t id, int pass, sim_vec3 *from_feet, sim_vec3 *to_feet);

// ---- running the moves on several threads (optional) ------------------------
// Every character collides with the others' start-of-tick shapes, so the
// characters' moves (step 3 above) are independent of each other: each
// writes only its own state and reads only the snapshot, the platforms and
// the world. The scene has no threads of its own; the embedding may hand it
// an executor that spreads the moves over its threads (app/keel_jobs.h
// is a small pthread one). The result is bit-identical to the plain loop
// whatever the executor, the thread count and the scheduling.

/// A piece of work: items [begin, end) of `task`.
typedef void (*sim_task_fn)(void *task, uint32_t begin, uint32_t end);

/// The executor. It must call fn(task, begin, end) over disjoint ranges that
/// together cover [0, count) exactly once each, on any threads, in any order
/// and split in any way, and return when every call has returned. The
/// calling thread may (and should) take part. Its synchronisation must make
/// the caller's writes before the call visible to the ranges and the ranges'
/// writes visible to the caller after it returns (any mutex, condition
/// variable or thread join does). fn must not be called after it returns.
typedef void (*sim_parallel_for_fn)(void *user, uint32_t count, sim_task_fn fn, void *task);

/// Characters per work item when sim_scene_set_parallel is given 0: small,
/// so that the threads of a loop finish close together (a move of a
/// character in a crowd takes a few microseconds); an executor that claims
/// items one by one may want a larger batch.
#define SIM_SCENE_DEFAULT_BATCH 4u

/// Run the snapshot's bodies, the moves of sim_scene_step and the pair scans
/// of its separation passes through `run` (with `user`), in work items of
/// `batch` consecutive characters (0: SIM_SCENE_DEFAULT_BATCH): `run` is
/// called once for the snapshot, once for the moves and once per scan (at
/// least one a step). A step with a single item runs it on the calling thread
/// without calling `run`. NULL (the default) is the plain loop on the calling
/// thread. While a step runs, nothing else may use the scene (as without an
/// executor); the platforms, the carrying, the snapshot's sort, and the
/// separation's pushes and placing stay on the calling thread.
void sim_scene_set_parallel(sim_scene *scene, sim_parallel_for_fn run, void *user, uint32_t batch);

uint32_t sim_scene_tick(const sim_scene *scene);
/// Characters in id order.
const sim_char_state *sim_scene_characters(const sim_scene *scene, uint32_t *count);
const sim_char_state *sim_scene_find(const sim_scene *scene, uint32_t id);

/// The scene's platforms (id order) and water boxes (in the order added):
/// what a recording must carry to rebuild the scene.
uint32_t sim_scene_platform_count(const sim_scene *scene);
const sim_platform_def *sim_scene_platform(const sim_scene *scene, uint32_t index);
uint32_t sim_scene_water_count(const sim_scene *scene);
sim_aabb sim_scene_water(const sim_scene *scene, uint32_t index);
/// The capacity given to sim_scene_create.
uint32_t sim_scene_capacity(const sim_scene *scene);

/// Hash of the whole state: the tick, then every character in id order.
uint64_t sim_scene_hash(const sim_scene *scene);

/// The collider a character sees at the scene's current positions (world,
/// platforms, water and the other characters but `self`), for queries made
/// outside a step. Valid until the scene changes.
sim_collider sim_scene_collider(sim_scene *scene, uint32_t self);

/// A ray against everything at the scene's current positions, characters
/// included (hitscan): the world, the platforms where they are at the
/// current tick and every character's current shape but `ignore_id`'s (the
/// shooter; 0 ignores none) and noclip flyers'. Characters are exact upright
/// bodies (capsule, box or cylinder) grown by SIM_QUERY_TOLERANCE, so a hit
/// is never late; a ray starting inside one hits it at 0. The earliest hit
/// wins, ties as for sim_collider's raycast: the world before objects, then
/// the smaller object id. *hit_character_id (when given) is the id of the
/// character hit, 0 when the first hit is not a character. Reads only; the
/// cost grows with the number of characters. Returns out->hit.
bool sim_scene_raycast(const sim_scene *scene, const sim_ray_input *in, uint32_t ignore_id, sim_ray_result *out,
                       uint32_t *hit_character_id);

/// Save and restore the state (tick and characters) for rollback: the size a
/// buffer needs, a copy into it, and back. Restoring keeps platforms and water.
size_t sim_scene_state_size(const sim_scene *scene);
void sim_scene_save(const sim_scene *scene, void *buffer);

/// Why sim_scene_restore refused a buffer.
typedef struct sim_scene_error {
    const char *reason; ///< static text; "" when nothing was refused
    int64_t record;     ///< 0-based character record, -1 for the header
    size_t offset;      ///< byte offset of the header or of that record
} sim_scene_error;

/// Restore a saved state. The buffer is untrusted (snapshots and recordings
/// come from the network and from files): every field is checked -- the
/// header, the size, ids (nonzero, increasing, below SIM_FEATURE_OBJECT_BIT,
/// not a platform's), and each record with sim_char_state_check -- before
/// anything changes. Returns false and fills *error (when given) on the first
/// fault, leaving the scene as it was. Any tick is valid, up to 2^32 - 1.
bool sim_scene_restore(sim_scene *scene, const void *buffer, size_t size, sim_scene_error *error);

/// The same from states in memory (`count` of them, ids increasing): every
/// state is checked as sim_scene_restore checks a record (record is the index
/// into `states`, offset 0). With a game (keel/sim_game.h) the game-wide
/// state is kept and each character gets the game's initial character state.
bool sim_scene_restore_states(sim_scene *scene, uint32_t tick, const sim_char_state *states, uint32_t count,
                              sim_scene_error *error);

#ifdef __cplusplus
}
#endif

#endif
