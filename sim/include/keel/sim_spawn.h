// keel: places to stand: the spawn search every program uses (keel-server's
// joins, the scene's respawns, keel-sim's seeded spawns). MIT licence, see
// LICENSE.
//
// A spot is a feet point where a character in the standing shape may start:
//   - the shape fits: no contact with the level at margin 0;
//   - the floor under its centre is walkable (normal.y >= walkable_ny) and
//     open above (see "floors" below);
//   - with `footprint` on, there is ground within `ground_reach` under the
//     whole footprint: under the centre and under four points near the rim
//     (at 7/10 of the radius, or 9/10 of a box's half widths, along the
//     diagonals), so no spot hangs over an edge;
//   - inside the character range (SIM_MOVE_POSITION_LIMIT on each axis).
//
// Floors: a vertical ray is cast from above the level to below it and every
// surface on the way is listed. Levels are wound counter-clockwise seen from
// the open (playable) side (docs/levels.md), so although collision is
// double-sided the winding tells the two sides apart: a face wound downwards
// is a ceiling with open space under it, a face wound upwards a floor. A floor
// is a candidate only when the space above it is open: the ray came straight
// from the sky, or the surface above was a ceiling. That keeps spots off the
// top of a closed map's roof and out of the gaps between stacked faces. Boxes
// are solids seen from outside: a hit on one from above is a floor.
//
// Lists of spots (sim_spawn_spots): a level with spawn markers (names
// starting "spawn") gets spots searched outward from its markers, each
// reachable from its marker in a straight line at step height (a sweep of
// the standing shape that hits nothing); a level without markers gets the
// same around the seeded open-floor search's first spot, then more seeded
// spots. Everything is integer arithmetic: the same
// world and settings give the same spots on every machine.
#ifndef KEEL_SIM_SPAWN_H
#define KEEL_SIM_SPAWN_H

#include <keel/sim_move.h>
#include <keel/sim_world.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- seeded random streams ---------------------------------------------------

/// splitmix64: one 64-bit state, full period, the same on every machine.
typedef struct sim_rng {
    uint64_t state;
} sim_rng;

/// The splitmix64 finaliser.
uint64_t sim_rng_mix(uint64_t z);
/// The next number of the stream.
uint64_t sim_rng_next(sim_rng *r);
/// The stream of entity `id` for purpose `stream`: a function of (seed, id,
/// stream) only.
sim_rng sim_rng_for(uint64_t seed, uint32_t id, uint32_t stream);
/// Uniform integer in [lo, hi] (lo <= hi, hi - lo < 2^32; the modulo bias is
/// below 2^-32).
int64_t sim_rng_range(sim_rng *r, int64_t lo, int64_t hi);

/// The stream the seeded search draws its lines from (seed, id, 4).
#define SIM_SPAWN_STREAM 4u

// ---- settings ---------------------------------------------------------------------

/// Most surfaces listed on one vertical line.
#define SIM_SPAWN_MAX_HITS 64

typedef struct sim_spawn_settings {
    sim_shape shape;    ///< the standing shape (default: the move settings')
    sim_fx walkable_ny; ///< least normal.y of a floor (default: max_slope_cos)
    /// Seeded lines are drawn this far inside the world's bounds in x and z
    /// (default 1 m; 0..1024 m; bounds narrower than twice it: the middle).
    sim_fx inset;
    /// Only floors with a ceiling somewhere above them (inside a building);
    /// false (the default) also accepts floors open to the sky.
    bool require_ceiling;
    /// Ground under the whole footprint (default true; keel-sim's seeded
    /// spawns leave it off to keep their pinned scenarios).
    bool footprint;
    /// How far below the feet the footprint's ground may lie (default the
    /// step height, 0.35 m; 0..2 m).
    sim_fx ground_reach;
    /// Seeded lines tried per spot (default 512; 1..65536).
    uint32_t attempts;
    /// Least horizontal distance between two spots of a list that are less
    /// than 2 m apart in height (default 4 m, as far as players started apart
    /// before; 0..64 m).
    sim_fx spacing;
    /// How far from a marker spots are searched, in x and z (default 24 m;
    /// 0..256 m).
    sim_fx marker_reach;
    /// The seed of the seeded search (default 0).
    uint64_t seed;
} sim_spawn_settings;

/// The defaults above for characters moving with `move` (its standing shape,
/// slope limit and step height).
sim_spawn_settings sim_spawn_default_settings(const sim_move_settings *move);

// ---- single spots -----------------------------------------------------------------

typedef struct sim_spawn_floor {
    sim_vec3 point;     ///< where the line meets the floor
    bool under_ceiling; ///< some ceiling lies above it on the line
} sim_spawn_floor;

/// The candidate floors on the vertical through (x, z), top to bottom (at
/// most SIM_SPAWN_MAX_HITS surfaces are looked at); returns how many were
/// written (at most `capacity`). Floors outside the character range are not
/// candidates.
int sim_spawn_floors_at(const sim_world *world, const sim_spawn_settings *s, sim_fx x, sim_fx z, sim_spawn_floor *out,
                        int capacity);

/// Whether the shape with its feet at `feet` touches nothing (margin 0).
bool sim_spawn_fits(const sim_world *world, sim_shape shape, sim_vec3 feet);

/// Whether `feet` is a spot (see the top of this header; the floor's
/// openness is the caller's: `feet` should come from sim_spawn_floors_at).
bool sim_spawn_valid(const sim_world *world, const sim_spawn_settings *s, sim_vec3 feet);

/// Whether a candidate keeps the caller's spacing (ctx is the caller's).
typedef bool (*sim_spawn_apart_fn)(const void *ctx, sim_vec3 feet);

/// The seeded search: up to s->attempts vertical lines at (x, z) drawn from
/// the stream (s->seed, id, SIM_SPAWN_STREAM) inside the bounds less the
/// inset; on each, one candidate floor chosen by the stream; accepted when
/// `apart` (NULL: any) says so and the spot is valid (tried at 5, 20 and 100
/// mm above the floor, for sloped floors). *lines (when given) counts the
/// lines cast. False when none was found.
bool sim_spawn_search(const sim_world *world, const sim_spawn_settings *s, uint32_t id, sim_spawn_apart_fn apart,
                      const void *ctx, uint64_t *lines, sim_vec3 *feet);

// ---- lists of spots ---------------------------------------------------------------

/// Up to `capacity` spots, at least s->spacing apart, into out; returns how
/// many. With spawn markers in the world: for each marker in level order,
/// the points of a square grid of s->spacing around it, ring by ring out to
/// s->marker_reach, each on the first floor found below 1 m above the
/// marker's height (down to 4 m below it), valid, and reached from the
/// marker by a straight sweep at step height. Without markers (or when the
/// markers give none): the seeded search's spot 1 (inside rooms first when
/// the level has any, like keel-sim) stands in for a marker, so the spots
/// around it come first and players start together; then the seeded search
/// for spots 2, 3, ... fills the list. Allocates nothing.
uint32_t sim_spawn_spots(const sim_world *world, const sim_spawn_settings *s, sim_vec3 *out, uint32_t capacity);

/// The yaw (of 256 evenly spaced ones) that looks most nearly along the
/// horizontal direction (dx, dz); yaw 0 looks along -Z, a quarter turn -X.
/// (0, 0): 0.
sim_angle sim_spawn_yaw_toward(sim_fx dx, sim_fx dz);

/// Directions sim_spawn_yaw_open looks along (every 22.5 degrees), and how
/// far (32 m).
#define SIM_SPAWN_VIEW_DIRECTIONS 16u
#define SIM_SPAWN_VIEW_REACH SIM_FX_INT(32)

/// The yaw a character starting at `feet` looks into the open along: of the
/// SIM_SPAWN_VIEW_DIRECTIONS level directions, the one whose view runs
/// farthest before it meets the level, up to SIM_SPAWN_VIEW_REACH; a view
/// is the shorter of two level rays from 0.5 m and 1.5 m above the feet (a
/// low wall and a ceiling count both). Ties (views clear to the reach) go to
/// the direction nearest to (dx, dz) -- keel-server passes the way to the
/// middle of the level -- then to the smaller yaw. 32 rays, no allocation.
sim_angle sim_spawn_yaw_open(const sim_world *world, sim_vec3 feet, sim_fx dx, sim_fx dz);

/// Cell k of a square spiral of grid cells around (0, 0): k = 0 is (0, 0);
/// ring r >= 1 (the cells at Chebyshev distance r) holds 8r cells and starts
/// at k = (2r - 1)^2. The order the spawn searches visit a grid in.
void sim_spawn_spiral_cell(uint32_t k, int32_t *dx, int32_t *dz);

/// The world's spawn markers (feet points of the level's markers whose names
/// start with "spawn", in level order); *count gets how many.
const sim_vec3 *sim_world_spawn_markers(const sim_world *world, uint32_t *count);

#ifdef __cplusplus
}
#endif

#endif
