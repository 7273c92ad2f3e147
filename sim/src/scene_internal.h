// keel: the scene's private parts, shared by its files: scene_tick.c (the
// order of a tick), scene_move.c (carrying and moving characters),
// scene_view.c and scene_bodies.h (the snapshot and its broad phase),
// scene_query.c, scene_life.c (lifetime and contents), scene_save.c,
// scene_platforms.c and scene_separate.c (keeping characters apart and
// finding free spots). MIT licence, see LICENSE.
#ifndef KEEL_SCENE_INTERNAL_H
#define KEEL_SCENE_INTERNAL_H

#include <keel/sim_game.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "world_near.h"

#define PLATFORM_TRIS 12

// Out of line and away from the hot code (a path most steps never take):
// keeps the code a move runs through small for the instruction cache.
#if defined(__GNUC__) || defined(__clang__)
#define SCENE_COLD __attribute__((noinline, cold))
#else
#define SCENE_COLD
#endif
// A hint to fetch the cache line at p early (no effect on any result).
#if defined(__GNUC__) || defined(__clang__)
#define SCENE_PREFETCH(p) __builtin_prefetch(p)
#else
#define SCENE_PREFETCH(p) ((void)(p))
#endif
#define SCENE_MAGIC 0x4E43534Bu /* "KSCN" as little-endian bytes */
#define SCENE_VERSION 1u
#define SCENE_VERSION_GAME 2u /* with a game's block (scene_save.c) */
#define HEADER_BYTES 16u
#define CHAR_BYTES 76u
#define MAX_CHARACTERS (1u << 24)

typedef struct scene_platform {
    sim_platform_def def;
    sim_vec3 delta;    // motion during the tick being computed
    sim_vec3 velocity; // delta per second, clamped like any velocity
    sim_aabb bounds;   // of the triangles below
    sim_tri tris[PLATFORM_TRIS];
} scene_platform;

// A character's shape as the others see it this tick.
typedef struct scene_body {
    uint32_t id;
    bool solid; // a noclip flyer passes through everything, and everything through it
    sim_shape shape;
    sim_vec3 center;
    sim_aabb bounds;
} scene_body;

// The context of a collider: whose view (self is excluded and decides the
// shared depth of overlaps), and what to leave out.
typedef struct scene_view {
    sim_scene *scene;
    int64_t self;           // index into bodies, -1 for none
    uint32_t skip_platform; // 0 for none
    bool characters;
    const sim_near *near;          // the mover's neighbourhood of the world (NULL: none)
    struct body_near *bodies_near; // and of the other characters (NULL: none)
} scene_view;

// The other characters whose bounds touch a box, gathered for each move
// before the moves (scene_move.c: move_prepare) in the broad phase's order (see
// body_cursor in scene_bodies.h): a query whose box lies inside takes them from
// here, the same bodies in the same order; any other query (or all, when
// more than BODY_NEAR_CAPACITY were found) scans the broad phase.
#define BODY_NEAR_CAPACITY 64u
#define SCAN_SLOTS 4u

// A character's marks during a separation pass.
#define SEP_FLAG_RELOCATE 1u // to be moved to a free spot
#define SEP_FLAG_MOVED 2u    // its body moved: written back at the end
#define SEP_FLAG_GHOST 4u    // not placed: passes through the others this tick
// A character slot's kept neighbourhood of the world (scene_near.c). Each
// move reads its own slot once a tick, and a crowd's slots lie far apart in
// memory: the first reads of a slot miss the caches. So a slot is small
// (about 3 KiB: the slots of 1,000 characters share few memory pages), it is
// read in one stream from its start (each triangle's packed bounds beside
// its index), and the move before fetches it ahead (scene_near_prefetch).
#define SCENE_NEAR_KEEP_CAPACITY 128u
typedef struct scene_near_entry {
    sim_pbox pbox; // the triangle's bounds, sim_pbox_rel to the kept box's minimum
    uint32_t tri;  // its index in the world
} scene_near_entry;
typedef struct scene_near_keep {
    const sim_world *world; // NULL: nothing kept yet
    sim_aabb box;           // gathered around: every triangle overlapping it, in the walk's order
    bool full;              // more than the capacity overlap box: gather the step box directly
    uint32_t count;
    scene_near_entry e[SCENE_NEAR_KEEP_CAPACITY];
} scene_near_keep;

typedef struct body_near {
    sim_aabb box;
    bool usable;
    uint32_t count;
    uint32_t body[BODY_NEAR_CAPACITY];
    sim_fx shrink[BODY_NEAR_CAPACITY]; // the view's shrink of each, once known (-1: not yet)
} body_near;

struct sim_scene {
    const sim_world *world;
    sim_move_settings settings;
    sim_fx dt; // sim_move_dt(&settings)
    uint32_t tick;
    uint32_t max_chars;
    uint32_t count;
    sim_char_state *chars; // sorted by id
    sim_input *inputs;     // parallel to chars
    uint8_t *has_input;
    scene_body *bodies;         // snapshot, parallel to chars
    scene_body *bodies_next;    // each body after its move: the separation's start (see prepare)
    bool bodies_ready;          // bodies_next, feet_offset and sep_flag filled by the moves
    uint32_t *order;            // body indices sorted by (key, index)
    uint32_t order_count;       // count when order was last sorted (then a permutation of that many)
    uint32_t *scratch;          // merge buffer
    sim_fx *keys;               // key of order[i]
    sim_fx *span;               // bounds of order[i] along the other horizontal axis: min, max
    int sort_axis;              // 0 (x) or 2 (z)
    sim_fx max_width;           // largest body extent along the sort axis
    scene_view *views;          // max_chars + 1: one per character slot, the last for none
    scene_near_keep *near_keep; // per character slot (scene_near.c)
    uint8_t *alone;             // per character, during the moves: nobody near (scene_alone.c)
    sim_aabb *step_box;         // per character, during the moves: its step box (sim_near_step_box)
    uint8_t *near_count;        // per character, during the moves: its bodies near (> BODY_NEAR_CAPACITY: too many)
    uint32_t *near_body;        // BODY_NEAR_CAPACITY per character: those bodies, in the broad phase's order
    scene_platform *platforms;  // sorted by id
    uint32_t platform_count;
    sim_aabb *water;
    uint32_t water_count;
    // Respawning (scene_respawn.c): the spawn spots found at creation, the
    // height below which a character is respawned, the last step's count.
    sim_vec3 *spawns;
    uint32_t spawn_count;
    int64_t respawn_below;
    uint32_t respawned;
    // The embedding's executor for the moves (NULL: the plain loop).
    sim_parallel_for_fn run;
    void *run_user;
    uint32_t batch; // characters per work item
    // Keeping characters apart (scene_separate.c): a hash grid over x and z
    // of the characters' current shapes, and per-character scratch.
    uint32_t grid_mask;   // buckets - 1 (a power of two minus one)
    uint32_t grid_stamp;  // the current build; a bucket of another build is empty
    uint32_t *grid_head;  // first character in a bucket
    uint32_t *grid_built; // the build each bucket was last filled in
    uint32_t *grid_next;  // per character: next and previous in its bucket
    uint32_t *grid_prev;
    uint32_t *grid_cell;   // per character: cell x, cell z (two entries)
    uint32_t grid_shift;   // cell size is 2^grid_shift raw units
    int64_t grid_reach;    // the largest half width of a body (x or z) in this build
    sim_vec3 *feet_offset; // per character: centre - feet
    int64_t *push;         // per character: x, y, z
    uint8_t *sep_flag;     // SEP_FLAG_* per character, for one pass (ghosts: to the moves)
    // The pair scan's per-character slots (filled on the executor's threads):
    // up to SCAN_SLOTS pairs each, their count and marks.
    uint32_t *scan_other;
    sim_vec3 *scan_push;
    uint8_t *scan_count;
    uint8_t *scan_mark;
    bool scan_piles;
    bool scan_reuse;        // scan only the characters marked stale (scene_separate.c)
    uint32_t sep_relocated; // statistics of the last step's passes
    uint32_t sep_pushed;
    uint32_t sep_unresolved;
    uint32_t sep_crowded; // characters marked SIM_CHAR_CROWDED by the last step
    int sep_pass;         // the pass running: 0 before the moves, 1 after
    // Where each character's relocations of the last step took it (feet):
    // from and to for the pass before the moves, then for the one after;
    // reloc_mark bit p set when pass p relocated it. Valid after a step
    // until an add, a remove or a restore (reloc_valid).
    sim_vec3 *reloc_feet;
    uint8_t *reloc_mark;
    bool reloc_valid;
    bool sep_clean;  // the last pass left the scene clean and nothing moved since
    int spot_budget; // what the step's passes may still spend placing characters
    int spot_tries;
    // The game (keel/sim_game.h, scene_game.c): NULL for none, and then
    // every pointer below is NULL and no part of a tick looks at them.
    const sim_game *game;
    uint8_t *game_cmd;          // per character: its command struct this tick
    uint8_t *game_char;         // per character: its game state
    uint8_t *game_out;          // per character: 1 when out of collisions
    uint8_t *game_state;        // the game-wide state
    uint32_t *game_char_faults; // per character: faults of a per-character rule pass
    uint64_t game_faults;
    const char *game_refused;        // the game field the last restore refused ("" or NULL: none)
    sim_game_char_rule_fn game_each; // the per-character rule of the pass running
};

// ---- lookups: characters and platforms are kept sorted by id ----
// Index of the first character with id >= id.
static inline uint32_t scene_char_lower_bound(const sim_scene *sc, uint32_t id)
{
    uint32_t lo = 0, hi = sc->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sc->chars[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline int64_t scene_char_index(const sim_scene *sc, uint32_t id)
{
    uint32_t i = scene_char_lower_bound(sc, id);
    return i < sc->count && sc->chars[i].id == id ? (int64_t)i : -1;
}

static inline uint32_t scene_platform_lower_bound(const sim_scene *sc, uint32_t id)
{
    uint32_t lo = 0, hi = sc->platform_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sc->platforms[mid].def.id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline scene_platform *scene_find_platform(sim_scene *sc, uint32_t id)
{
    if (id == 0)
        return NULL;
    uint32_t i = scene_platform_lower_bound(sc, id);
    return i < sc->platform_count && sc->platforms[i].def.id == id ? &sc->platforms[i] : NULL;
}

/// Whether box `in` lies inside box `out`.
static inline bool scene_box_inside(sim_aabb in, sim_aabb out)
{
    return in.min.x >= out.min.x && in.max.x <= out.max.x && in.min.y >= out.min.y && in.max.y <= out.max.y &&
           in.min.z >= out.min.z && in.max.z <= out.max.z;
}

// ---- the grid of characters (scene_grid.c) ----
#define GRID_NONE UINT32_MAX
// Added to coordinates before taking cells, so cells are non-negative
// (positions stay within SIM_MOVE_POSITION_LIMIT, below 2^28 raw units).
#define GRID_OFFSET ((int64_t)1 << 29)
// Cells are this much wider than the widest body (twice the separation's gap).
#define SCENE_GRID_PAD ((sim_fx)64)

// The characters in a rectangle of cells, one by one, rows (z) in turn and
// cells (x) along each.
typedef struct scene_grid_iter {
    const sim_scene *sc;
    uint32_t x0, x1, z1; // the cells walked: x0..x1 by z0..z1
    uint32_t x, z;       // the cell being walked
    uint32_t j;          // next character in the bucket
} scene_grid_iter;

/// Every solid body of sc->bodies into the grid, in index (id) order.
void scene_grid_build(sim_scene *sc);
/// Body i into the grid (at its centre), or out of it.
void scene_grid_insert(sim_scene *sc, uint32_t i);
void scene_grid_remove(sim_scene *sc, uint32_t i);
/// Walks the 3 x 3 cells around a point.
void scene_grid_begin_point(scene_grid_iter *it, const sim_scene *sc, sim_vec3 c);
/// Walks the cells that can hold a body whose bounds touch `box`; returns
/// their number (0: the box reaches outside the grid's range, nothing walked).
uint64_t scene_grid_begin_box(scene_grid_iter *it, const sim_scene *sc, sim_aabb box);
/// scene_grid_begin_box of body i's bounds.
void scene_grid_begin_body(scene_grid_iter *it, const sim_scene *sc, uint32_t i);

// The bucket of cell (cx, cz), and its first character in the current build.
static inline uint32_t scene_grid_bucket(const sim_scene *sc, uint32_t cx, uint32_t cz)
{
    uint32_t h = cx * 0x9E3779B1u ^ (cz * 0x85EBCA77u + 0x165667B1u);
    h ^= h >> 15;
    return h & sc->grid_mask;
}

static inline uint32_t scene_grid_first(const sim_scene *sc, uint32_t x, uint32_t z)
{
    uint32_t b = scene_grid_bucket(sc, x, z);
    return sc->grid_built[b] == sc->grid_stamp ? sc->grid_head[b] : GRID_NONE;
}

/// The next character of the walk (false: done).
static inline bool scene_grid_next(scene_grid_iter *it, uint32_t *out)
{
    const sim_scene *sc = it->sc;
    for (;;) {
        while (it->j == GRID_NONE) {
            if (it->x == it->x1) {
                if (it->z == it->z1)
                    return false;
                it->z++;
                it->x = it->x0;
            } else {
                it->x++;
            }
            it->j = scene_grid_first(sc, it->x, it->z);
        }
        uint32_t j = it->j;
        it->j = sc->grid_next[j];
        // A bucket may hold other cells too (hash collisions): take only
        // this one's, so no character is met twice.
        if (sc->grid_cell[2 * j] == it->x && sc->grid_cell[2 * j + 1] == it->z) {
            *out = j;
            return true;
        }
    }
}

/// Characters apart (scene_separate.c). Run after the carry (before the
/// snapshot) and after the moves. Reads and writes sc->chars and sc->bodies.
/// True when it leaves the scene clean: no pair deeper than the pass's
/// tolerance, nobody unplaced; a pass on a clean scene changes nothing.
bool scene_separate(sim_scene *sc);

/// The spawn spots for settings.respawn_depth > 0 (none when it is 0);
/// false when memory runs out (scene_respawn.c).
bool scene_respawn_init(sim_scene *sc);
/// Respawns the characters below the level (the step's last part); true
/// when any was moved.
bool scene_respawn(sim_scene *sc);

/// Resets the statistics and the placing budget of a step.
void scene_separate_begin_step(sim_scene *sc);

/// sc->bodies from the characters' current states, unsorted.
void scene_bodies_fill(sim_scene *sc);

/// The world near a step box, as sim_near_gather(near, world, step) gathers
/// it, cut out of the slot's kept list `k` (gathered again when the step box
/// leaves it; the new kept box also reaches a few ticks of the character's
/// motion ahead: `velocity` over ticks of `dt`). scene_near.c.
void scene_near_step(scene_near_keep *k, const sim_world *world, sim_aabb step, sim_vec3 velocity, sim_fx dt,
                     sim_near *near);
// Ask the memory for the start of a slot a coming move will read (no effect
// on any result).
void scene_near_prefetch(const scene_near_keep *k);

/// Work items of sc->batch characters (the last may hold fewer): how many
/// cover the characters, and the characters [*from, *to) of items
/// [begin, end). scene_run_items runs fn(sc, begin, end) over all of them on
/// the scene's executor (inside a step only), or here in one range when
/// there is none or a single item. scene_tick.c.
uint32_t scene_item_count(const sim_scene *sc);
void scene_run_items(sim_scene *sc, sim_task_fn fn);
static inline void scene_item_range(const sim_scene *sc, uint32_t begin, uint32_t end, uint32_t *from, uint32_t *to)
{
    uint64_t f = (uint64_t)begin * sc->batch, t = (uint64_t)end * sc->batch;
    *to = t > sc->count ? sc->count : (uint32_t)t;
    *from = f > *to ? *to : (uint32_t)f;
}

/// A view's collider and its queries (scene_query.c).
sim_collider scene_view_collider(scene_view *v);
bool scene_view_sweep(void *ctx, const sim_sweep_input *in, sim_sweep_result *out);
int scene_view_contacts(void *ctx, const sim_overlap_input *in, sim_contact *out, int capacity);
bool scene_view_raycast(void *ctx, const sim_ray_input *in, sim_ray_result *out);

/// The collider of view `v` for a move with no other body and no platform
/// near its step box v->near->box (v->near must be set): the same answers,
/// from the world's own queries wherever they fit (scene_alone.c).
sim_collider scene_alone_collider(scene_view *v);

/// Platforms at `tick`; with `motion`, at tick + 1 with the motion between
/// (scene_platforms.c). scene_platform_build: p's triangles and bounds
/// with its centre at c; scene_platform_valid: whether a definition can be
/// added (ids, sizes, points in the world, at most 16 m per tick).
void scene_build_platforms(sim_scene *sc, uint32_t tick, bool motion);
void scene_platform_build(scene_platform *p, sim_vec3 c);
bool scene_platform_valid(const sim_platform_def *p);

/// The snapshot sc->bodies and the broad phase over it (scene_view.c);
/// `parallel`: the bodies filled on the executor (in a step only).
void scene_build_bodies(sim_scene *sc, bool parallel);

/// The tick's parts that move characters (scene_move.c): riders carried
/// with their platforms (each one's ground velocity set), and the moves of
/// work items [begin, end) as the executor's task (task: the scene).
void scene_carry_riders(sim_scene *sc);
void scene_move_items(void *task, uint32_t begin, uint32_t end);

// ---- the game (scene_game.c, scene_game_move.c; NULL game: never called) ----
/// Whether character i is out of collisions (a game took it out).
static inline bool scene_out(const sim_scene *sc, uint32_t i) { return sc->game_out && sc->game_out[i]; }
/// sim_char_state_check, which with a game also accepts its move types.
bool scene_char_check(const sim_scene *sc, const sim_char_state *c, const char **why);
/// The game's arrays opened for a character inserted at index `at` (with its
/// initial game state), or closed over one removed from `at` (count is the
/// count before the change).
void scene_game_insert(sim_scene *sc, uint32_t at);
void scene_game_erase(sim_scene *sc, uint32_t at);
void scene_game_free(sim_scene *sc);
/// The rules of one point of the tick: before the movement (after = false)
/// or after it.
void scene_game_rules(sim_scene *sc, bool after);
/// The per-character fault counts (rules, game moves) into the scene's.
void scene_game_fold_faults(sim_scene *sc);
/// The move of character i under a game move type through collider `col`.
void scene_game_move(sim_scene *sc, uint32_t i, const sim_collider *col, const sim_input *in);
/// The game's part of the scene's hash.
uint64_t scene_game_hash(const sim_scene *sc, uint64_t h);

#endif
