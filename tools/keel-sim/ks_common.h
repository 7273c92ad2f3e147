// keel-sim: random streams, the random-walk input and the spawn search, shared
// with tests/test_soak.c and bench/bench_move.c. MIT licence, see LICENSE.
//
// Header-only because each of those programs is built from its own source
// file: one definition of "a character walking and jumping at random" and of
// "a place to stand" means the soak test and the benchmark exercise exactly
// what keel-sim runs. Nothing here is part of the deterministic core, but all
// of it is integer arithmetic, so it gives the same numbers everywhere.
#ifndef KEEL_SIM_TOOL_COMMON_H
#define KEEL_SIM_TOOL_COMMON_H

#include <stdlib.h>
#include <string.h>

#include <keel/sim_move.h>
#include <keel/sim_spawn.h>
#include <keel/sim_world.h>

// ---- random numbers (tool-side; never inside sim/) ---------------------------

/// The library's splitmix64 streams (sim_spawn.h): the same numbers on every
/// machine, and the same ones the library's seeded spawn search draws.
typedef sim_rng ks_rng;

static inline uint64_t ks_mix64(uint64_t z) { return sim_rng_mix(z); }
static inline uint64_t ks_rng_next(ks_rng *r) { return sim_rng_next(r); }
/// The stream of entity `id` for purpose `stream` (see sim_rng_for).
static inline ks_rng ks_rng_for(uint64_t seed, uint32_t id, uint32_t stream) { return sim_rng_for(seed, id, stream); }
/// Uniform integer in [lo, hi] (see sim_rng_range).
static inline int64_t ks_rng_range(ks_rng *r, int64_t lo, int64_t hi) { return sim_rng_range(r, lo, hi); }

/// Random streams; new purposes get new numbers, existing ones never change.
enum {
    KS_STREAM_SPAWN = 1,                ///< probes' random spawn points
    KS_STREAM_MOTION = 2,               ///< probes' acceleration
    KS_STREAM_WALK = 3,                 ///< characters' random-walk input
    KS_STREAM_PLACE = SIM_SPAWN_STREAM, ///< characters' random spawn points (4)
    KS_STREAM_FACING = 5,               ///< characters' yaw at spawn
};

// ---- the random walk ------------------------------------------------------------
// A character holds one "intent" (a direction of travel relative to a yaw, a
// slow turn, maybe a crouch) for a random number of ticks, then picks another;
// jump presses come independently, about once a second. The walker's state
// evolves from its own random stream only, never from the simulation, so the
// commands are a pure function of (seed, character id, tick count): a
// character gets the same commands however many others exist, in whatever
// order they are stepped, and whatever happened to it.

typedef struct ks_walker {
    ks_rng rng;
    uint32_t hold;      ///< ticks left in the current intent
    uint32_t jump_left; ///< ticks left holding jump
    int8_t forward, right;
    uint8_t crouch; ///< SIM_BUTTON_CROUCH or 0 for this intent
    int16_t turn;   ///< yaw change per tick
    sim_angle yaw, pitch;
} ks_walker;

static inline ks_walker ks_walker_init(uint64_t seed, uint32_t id)
{
    ks_walker w = {0};
    w.rng = ks_rng_for(seed, id, KS_STREAM_WALK);
    return w;
}

static inline void ks_walker_new_intent(ks_walker *w)
{
    // Every draw is made whatever the outcome, so the stream's use per intent
    // is fixed and easy to reason about.
    uint32_t hold = (uint32_t)ks_rng_range(&w->rng, 8, 96);
    sim_angle yaw = (sim_angle)ks_rng_range(&w->rng, 0, 65535);
    int64_t kind = ks_rng_range(&w->rng, 0, 99);
    int64_t slow = ks_rng_range(&w->rng, 0, 4);
    int64_t left = ks_rng_range(&w->rng, 0, 1);
    int64_t turning = ks_rng_range(&w->rng, 0, 9);
    int16_t turn = (int16_t)ks_rng_range(&w->rng, -400, 400);
    int64_t crouch = ks_rng_range(&w->rng, 0, 9);
    sim_angle pitch = (sim_angle)(int16_t)ks_rng_range(&w->rng, -8192, 8192);

    // 10% stand, 55% forward, 15% forward and sideways, 10% sideways, 10%
    // backwards; one intent in five at walking pace (half the axis).
    int8_t mag = slow == 0 ? 64 : 127;
    w->forward = kind < 10 ? 0 : kind < 80 ? mag : kind < 90 ? 0 : (int8_t)-mag;
    w->right = kind < 65 || kind >= 90 ? 0 : left ? (int8_t)-mag : mag;
    w->hold = hold;
    w->yaw = yaw;
    w->turn = turning < 3 ? turn : 0; // 3 intents in 10 turn while they last
    w->crouch = crouch == 0 ? SIM_BUTTON_CROUCH : 0;
    w->pitch = pitch;
}

/// The next command. `tick` goes into sim_input.tick (the number of ticks run
/// before this command's step).
static inline sim_input ks_walker_next(ks_walker *w, uint32_t tick)
{
    if (w->hold == 0)
        ks_walker_new_intent(w);
    w->hold--;
    int64_t press = ks_rng_range(&w->rng, 0, 63);
    int64_t length = ks_rng_range(&w->rng, 1, 12);
    if (w->jump_left == 0 && press == 0)
        w->jump_left = (uint32_t)length;
    sim_input in = {0};
    in.tick = tick;
    in.forward = w->forward;
    in.right = w->right;
    in.buttons = w->crouch;
    if (w->jump_left > 0) {
        in.buttons |= SIM_BUTTON_JUMP;
        w->jump_left--;
    }
    w->yaw = (sim_angle)(w->yaw + (sim_angle)w->turn);
    in.yaw = w->yaw;
    in.pitch = w->pitch;
    return in;
}

/// The yaw (of 256 evenly spaced ones) that looks most nearly along the
/// horizontal direction (dx, dz); yaw 0 looks along -Z, a quarter turn -X.
/// Integer only (no atan2), and 1.4 degrees is plenty to turn away from an
/// edge.
static inline sim_angle ks_yaw_toward(sim_fx dx, sim_fx dz) { return sim_spawn_yaw_toward(dx, dz); }

/// One query accepts at most SIM_MAX_DISPLACEMENT per axis; long vertical
/// rays are cast in pieces of this length.
#define KS_RAY_PIECE SIM_FX_INT(60)

// ---- edge guard ----------------------------------------------------------------------
// Real maps are render meshes, open wherever the game relied on sky or clip
// brushes, and the built-in level's floor simply ends. A random walk finds
// those edges and walks off into nothing. The soak test and the benchmark
// want characters that stay on the level, so before each command they look
// ahead: when there is no surface at all below a point in the direction of
// travel, the character turns round and does not jump; nor does it jump
// within 1.5 m of such a point in any direction. Falling to a lower floor is
// still allowed. Harness behaviour only: it reads the state, so
// commands that pass through it are no longer a pure function of the seed.

/// Whether nothing at all lies below `p` down to `bottom`.
static inline bool ks_void_below(const sim_world *world, sim_vec3 p, sim_fx bottom)
{
    while (p.y > bottom) {
        sim_fx piece = p.y - bottom < KS_RAY_PIECE ? p.y - bottom : KS_RAY_PIECE;
        sim_ray_input in = {p, sim_v3(0, -piece, 0)};
        sim_ray_result r;
        if (sim_world_raycast(world, &in, &r))
            return false;
        p.y -= piece;
    }
    return true;
}

// Whether there is no surface at all below some point along `dir` (not
// normalised; zero: false) from a metre above the character's feet, at the
// given distances.
static inline bool ks_void_along(const sim_world *world, sim_aabb bounds, const sim_char_state *c, sim_vec3 dir,
                                 const int32_t *ahead_mm, int count)
{
    if (sim_v3_is_zero(dir))
        return false;
    dir = sim_v3_normalize(dir);
    sim_fx bottom = bounds.min.y - SIM_FX_ONE;
    sim_vec3 from = sim_v3_add(c->position, sim_v3(0, SIM_FX_ONE, 0));
    for (int i = 0; i < count; i++) {
        sim_vec3 p = sim_v3_add(from, sim_v3_scale(dir, SIM_FX_MM(ahead_mm[i])));
        if (!sim_v3_in_world(p) || ks_void_below(world, p, bottom))
            return true;
    }
    return false;
}

/// Turns `in` away from open edges (see above). `bounds` is the world's.
static inline void ks_guard_edges(const sim_world *world, sim_aabb bounds, const sim_char_state *c, sim_input *in)
{
    // A running jump carries about 5.4 m; look a little further.
    static const int32_t ahead_mm[] = {700, 1500, 3000, 6000};
    // Along the horizontal velocity when moving, else along the wish.
    sim_vec3 dir = sim_v3(c->velocity.x, 0, c->velocity.z);
    if (sim_v3_len_sq64(dir) < (int64_t)SIM_FX_HALF * SIM_FX_HALF) {
        sim_vec3 f, r;
        sim_angle_forward_right(in->yaw, &f, &r);
        dir = sim_v3_add(sim_v3_scale(f, (sim_fx)in->forward * 516),
                         sim_v3_scale(r, (sim_fx)in->right * 516)); // 127 * 516 ~ 1.0
    }
    if (ks_void_along(world, bounds, c, dir, ahead_mm, 4)) {
        in->yaw = ks_yaw_toward(-dir.x, -dir.z);
        in->forward = 127;
        in->right = 0;
        in->buttons &= (uint8_t)~SIM_BUTTON_JUMP;
        return;
    }
    // A jump may be turned by what it meets (another character's rounded
    // bottom sends it sideways): none within 1.5 m of an edge, any way round.
    if (in->buttons & SIM_BUTTON_JUMP) {
        static const int32_t near_mm[] = {700, 1500};
        for (int k = 0; k < 8; k++) {
            sim_angle a = (sim_angle)(k * 8192);
            sim_vec3 d = sim_v3(sim_angle_sin(a), 0, sim_angle_cos(a));
            if (ks_void_along(world, bounds, c, d, near_mm, 2)) {
                in->buttons &= (uint8_t)~SIM_BUTTON_JUMP;
                return;
            }
        }
    }
}

// ---- spawn search -------------------------------------------------------------------
// The library's seeded search (sim_spawn.h: floors open above, found by
// vertical rays through the level, the standing shape fitting). keel-sim
// keeps the footprint test off, so its seeded spawns, and the scenarios
// pinned on them, are what they were before the search moved into the library.

#define KS_SPAWN_MAX_HITS SIM_SPAWN_MAX_HITS
#define KS_SPAWN_ATTEMPTS 512

typedef struct ks_spawn_area {
    const sim_level *level; ///< unused (the world knows its triangles' winding)
    const sim_world *world;
    sim_aabb bounds;    ///< unused: the world's bounds are used
    sim_shape shape;    ///< the standing shape
    sim_fx walkable_ny; ///< least normal.y of walkable floor
    sim_fx inset;       ///< x and z are drawn this far inside the bounds
    /// Only floors with a ceiling somewhere above them (inside a building);
    /// false also accepts floors open to the sky.
    bool require_ceiling;
} ks_spawn_area;

/// The library's settings for an area and seed.
static inline sim_spawn_settings ks_spawn_settings(const ks_spawn_area *a, uint64_t seed)
{
    sim_spawn_settings s = sim_spawn_default_settings(NULL);
    s.shape = a->shape;
    s.walkable_ny = a->walkable_ny;
    s.inset = a->inset;
    s.require_ceiling = a->require_ceiling;
    s.footprint = false;
    s.attempts = KS_SPAWN_ATTEMPTS;
    s.seed = seed;
    return s;
}

/// Whether the shape with its feet at `feet` touches nothing (margin 0).
static inline bool ks_shape_fits(const sim_world *world, sim_shape shape, sim_vec3 feet)
{
    return sim_spawn_fits(world, shape, feet);
}

/// Whether a feet point lies in the character range: the mover clamps feet
/// to +-SIM_MOVE_POSITION_LIMIT (4016 m) on each axis, so a spawn point
/// beyond it would be moved at once (and, on a level out there, lost and
/// respawned every tick). Geometry may lie further out, up to SIM_WORLD_LIMIT.
static inline bool ks_feet_in_range(sim_vec3 p)
{
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    return p.x >= -lim && p.x <= lim && p.y >= -lim && p.y <= lim && p.z >= -lim && p.z <= lim;
}

/// Whether a candidate feet point keeps the spacing from the characters
/// already placed (ctx is the caller's record of them).
typedef sim_spawn_apart_fn ks_spawn_apart_fn;

/// Two feet points are too close when they are less than 2 m apart in height
/// and less than `spacing` apart horizontally.
static inline bool ks_spawn_too_close(sim_vec3 a, sim_vec3 b, int64_t spacing_sq)
{
    int64_t dx = (int64_t)a.x - b.x, dz = (int64_t)a.z - b.z;
    int64_t dy = (int64_t)a.y - b.y;
    return dy < SIM_FX_INT(2) && dy > -SIM_FX_INT(2) && dx * dx + dz * dz < spacing_sq;
}

/// sim_spawn_search for an area: up to KS_SPAWN_ATTEMPTS seeded vertical
/// lines, one candidate floor on each, accepted when `apart` says so and the
/// standing shape fits.
static inline bool ks_spawn_search(const ks_spawn_area *a, uint64_t seed, uint32_t id, ks_spawn_apart_fn apart,
                                   const void *ctx, uint64_t *lines, sim_vec3 *feet)
{
    sim_spawn_settings s = ks_spawn_settings(a, seed);
    return sim_spawn_search(a->world, &s, id, apart, ctx, lines, feet);
}

typedef struct ks_spawn_taken {
    const sim_vec3 *points;
    uint32_t count;
    int64_t spacing_sq;
} ks_spawn_taken;

static inline bool ks_spawn_apart_linear(const void *ctx, sim_vec3 p)
{
    const ks_spawn_taken *t = (const ks_spawn_taken *)ctx;
    for (uint32_t i = 0; i < t->count; i++)
        if (ks_spawn_too_close(t->points[i], p, t->spacing_sq))
            return false;
    return true;
}

/// A feet point for character `id` from the seeded stream (seed, id): on a
/// candidate floor, where the standing shape fits, and at least `spacing`
/// (horizontally) from each of the `taken` feet points that are within 2 m
/// in height. Deterministic in (area, seed, id, taken). False when nothing
/// was found in KS_SPAWN_ATTEMPTS vertical lines. Checks every taken point
/// (time grows with taken_count); ks_spawn_find_grid gives the same answer
/// in constant time per line.
static inline bool ks_spawn_find(const ks_spawn_area *a, uint64_t seed, uint32_t id, const sim_vec3 *taken,
                                 uint32_t taken_count, sim_fx spacing, sim_vec3 *feet)
{
    ks_spawn_taken t = {taken, taken_count, (int64_t)spacing * spacing};
    return ks_spawn_search(a, seed, id, ks_spawn_apart_linear, &t, NULL, feet);
}

// ---- a uniform grid of taken spawn points -----------------------------------------
// Cells are `spacing` wide in x and z and 2 m tall, so a point too close to
// another (ks_spawn_too_close) is always in one of the 27 cells around it. The
// cells live in an open-addressing hash table; the answer (is any point too
// close?) is exact, so it depends only on the points, never on the table.
// Integer arithmetic only.

#define KS_GRID_EMPTY UINT32_MAX

typedef struct ks_spawn_grid {
    sim_fx spacing;
    int64_t spacing_sq;
    uint32_t count, capacity;
    sim_vec3 *points; ///< in insertion order
    uint32_t *next;   ///< next point in the same cell, KS_GRID_EMPTY at the end
    uint64_t *keys;   ///< cell keys of the table slots
    uint32_t *heads;  ///< first point of a slot's cell, KS_GRID_EMPTY for a free slot
    uint32_t mask;    ///< table size - 1 (a power of two)
    /// Work counters: vertical lines cast by ks_spawn_find_grid, and points
    /// compared by ks_spawn_grid_apart (a handful per call, however many
    /// points the grid holds).
    uint64_t lines, compared;
} ks_spawn_grid;

/// Room for `capacity` points. False when memory runs out.
static inline bool ks_spawn_grid_init(ks_spawn_grid *g, sim_fx spacing, uint32_t capacity)
{
    memset(g, 0, sizeof *g);
    g->spacing = spacing > 0 ? spacing : 1;
    g->spacing_sq = (int64_t)spacing * spacing;
    g->capacity = capacity;
    uint32_t slots = 16;
    while (slots < 2u * (capacity ? capacity : 1) && slots < (1u << 31))
        slots *= 2;
    g->mask = slots - 1;
    size_t n = capacity ? capacity : 1;
    g->points = (sim_vec3 *)malloc(n * sizeof *g->points);
    g->next = (uint32_t *)malloc(n * sizeof *g->next);
    g->keys = (uint64_t *)malloc((size_t)slots * sizeof *g->keys);
    g->heads = (uint32_t *)malloc((size_t)slots * sizeof *g->heads);
    if (!g->points || !g->next || !g->keys || !g->heads) {
        free(g->points), free(g->next), free(g->keys), free(g->heads);
        memset(g, 0, sizeof *g);
        return false;
    }
    for (uint32_t i = 0; i < slots; i++)
        g->heads[i] = KS_GRID_EMPTY;
    return true;
}

static inline void ks_spawn_grid_free(ks_spawn_grid *g)
{
    free(g->points), free(g->next), free(g->keys), free(g->heads);
    memset(g, 0, sizeof *g);
}

/// The cell of a point, as three cell coordinates.
static inline void ks_spawn_grid_cell(const ks_spawn_grid *g, sim_vec3 p, int64_t c[3])
{
    c[0] = sim_div_floor_s64(p.x, g->spacing);
    c[1] = sim_div_floor_s64(p.y, SIM_FX_INT(2));
    c[2] = sim_div_floor_s64(p.z, g->spacing);
}

/// The key of a cell: 21 bits of each coordinate. Cells whose coordinates
/// agree modulo 2^21 share a key and a chain; that only adds points to
/// check, each checked exactly, so the answers stay the same.
static inline uint64_t ks_spawn_grid_key(int64_t cx, int64_t cy, int64_t cz)
{
    return ((uint64_t)cx & 0x1FFFFFu) << 42 | ((uint64_t)cy & 0x1FFFFFu) << 21 | ((uint64_t)cz & 0x1FFFFFu);
}

/// The table slot of a cell: its own, or the free one where it would go.
static inline uint32_t ks_spawn_grid_slot(const ks_spawn_grid *g, uint64_t key)
{
    uint32_t i = (uint32_t)ks_mix64(key) & g->mask;
    while (g->heads[i] != KS_GRID_EMPTY && g->keys[i] != key)
        i = (i + 1) & g->mask;
    return i;
}

/// Adds a point (at most `capacity` of them; more are ignored).
static inline void ks_spawn_grid_add(ks_spawn_grid *g, sim_vec3 p)
{
    if (g->count >= g->capacity)
        return;
    int64_t c[3];
    ks_spawn_grid_cell(g, p, c);
    uint64_t key = ks_spawn_grid_key(c[0], c[1], c[2]);
    uint32_t slot = ks_spawn_grid_slot(g, key);
    uint32_t k = g->count++;
    g->points[k] = p;
    g->next[k] = g->heads[slot]; // KS_GRID_EMPTY for a new cell
    g->keys[slot] = key;
    g->heads[slot] = k;
}

/// Whether `p` keeps the spacing from every point added so far: the same
/// answer as checking each of them with ks_spawn_too_close.
static inline bool ks_spawn_grid_apart(const void *ctx, sim_vec3 p)
{
    ks_spawn_grid *g = (ks_spawn_grid *)ctx; // only the work counter changes
    int64_t c[3];
    ks_spawn_grid_cell(g, p, c);
    for (int64_t dx = -1; dx <= 1; dx++)
        for (int64_t dy = -1; dy <= 1; dy++)
            for (int64_t dz = -1; dz <= 1; dz++) {
                uint64_t key = ks_spawn_grid_key(c[0] + dx, c[1] + dy, c[2] + dz);
                uint32_t slot = ks_spawn_grid_slot(g, key);
                for (uint32_t k = g->heads[slot]; k != KS_GRID_EMPTY; k = g->next[k]) {
                    g->compared++;
                    if (ks_spawn_too_close(g->points[k], p, g->spacing_sq))
                        return false;
                }
            }
    return true;
}

/// ks_spawn_find with the taken points in a grid (its spacing is the
/// spacing): the same point, in time that does not grow with the number of
/// points taken. The caller adds each point found with ks_spawn_grid_add.
static inline bool ks_spawn_find_grid(const ks_spawn_area *a, uint64_t seed, uint32_t id, ks_spawn_grid *grid,
                                      sim_vec3 *feet)
{
    return ks_spawn_search(a, seed, id, ks_spawn_grid_apart, grid, &grid->lines, feet);
}

#endif
