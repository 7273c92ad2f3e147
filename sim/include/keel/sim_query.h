// keel: collision queries against a world's static geometry. MIT licence.
//
// Each query takes an input struct and fills a result struct; the world is
// passed explicitly and only read, so queries on one world may run from several
// threads at once. Nothing here allocates.
//
// Conservative by construction: a sweep never reports an impact later than the
// true first contact. Internally every shape is inflated by SIM_QUERY_TOLERANCE
// (plus a term growing with the sweep length) so that rounding can only make a
// hit earlier; callers keep a skin larger than that (the mover's default skin
// is 5 mm).
//
// Internal edges: an edge between two coplanar triangles (in the same mesh or
// in neighbouring boxes laid side by side, also across T-junctions) is marked
// inactive when the world is built. A hit on an inactive edge or vertex reports
// the triangle's face normal, so sliding along a tessellated floor never bumps.
#ifndef KEEL_SIM_QUERY_H
#define KEEL_SIM_QUERY_H

#include <keel/sim_shape.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Inflation of every shape inside queries: 1/4096 m (about 0.24 mm).
#define SIM_QUERY_TOLERANCE ((sim_fx)16)

typedef struct sim_world sim_world;

typedef enum sim_feature_type {
    SIM_FEATURE_NONE = 0,
    SIM_FEATURE_FACE = 1,
    SIM_FEATURE_EDGE = 2,
    SIM_FEATURE_VERTEX = 3,
} sim_feature_type;

/// What was touched. `triangle` is the stable triangle id: its index among the
/// level's triangles, then 12 per box in the order the boxes were given.
/// `index` is the edge (0: v0-v1, 1: v1-v2, 2: v2-v0) or vertex number.
typedef struct sim_feature {
    uint32_t triangle;
    uint8_t type; ///< sim_feature_type
    uint8_t index;
} sim_feature;

/// Sweep flags. A static world ignores them; a collider with characters
/// (sim_scene's) honours them.
enum {
    /// Only the level (static geometry and platforms) stops the motion, not
    /// other characters: depenetration uses it to move out of a crowd without
    /// passing through anything solid.
    SIM_SWEEP_LEVEL_ONLY = 1u << 0,
};

typedef struct sim_sweep_input {
    sim_shape shape;
    sim_vec3 start;        ///< shape centre at the start
    sim_vec3 displacement; ///< whole motion; |each component| <= SIM_MAX_DISPLACEMENT
    uint32_t flags;        ///< SIM_SWEEP_* (0 for everything)
} sim_sweep_input;

/// Longest displacement one query accepts per axis: 64 m. Longer inputs are
/// clamped to it (documented, not an error: the mover never asks for more).
#define SIM_MAX_DISPLACEMENT SIM_FX_INT(64)

typedef struct sim_sweep_result {
    bool hit;
    /// The shape already penetrates geometry at the start (deeper than
    /// SIM_QUERY_TOLERANCE) and the motion goes further in; then fraction is
    /// 0 and normal is the direction that frees it fastest. Moving along or
    /// out of an overlap is never blocked: it is no hit at all.
    bool start_overlap;
    sim_fx fraction;   ///< of the displacement, in [0, 1]; 1 when no hit
    sim_vec3 position; ///< shape centre at the impact (start + displacement * fraction)
    sim_vec3 normal;   ///< unit, pointing from the geometry toward the shape
    sim_vec3 point;    ///< contact point on the geometry
    sim_feature feature;
} sim_sweep_result;

/// Sweep a character shape; returns result->hit.
bool sim_world_sweep(const sim_world *world, const sim_sweep_input *input, sim_sweep_result *result);

typedef struct sim_contact {
    sim_vec3 normal; ///< unit, from the geometry toward the shape
    sim_fx depth;    ///< penetration along normal (negative: separated by -depth)
    sim_vec3 point;  ///< deepest point on the geometry
    sim_feature feature;
} sim_contact;

typedef struct sim_overlap_input {
    sim_shape shape;
    sim_vec3 position;
    /// Contacts separated by up to this distance are reported too (depth >=
    /// -margin), so a mover can see what it is about to touch.
    sim_fx margin;
} sim_overlap_input;

/// Every contact of the shape at `position`, one per triangle touched, sorted
/// by depth (deepest first), then by feature. Writes at most `capacity` into
/// `contacts` and returns the number found (may exceed capacity).
int sim_world_contacts(const sim_world *world, const sim_overlap_input *input, sim_contact *contacts, int capacity);

typedef struct sim_ray_input {
    sim_vec3 origin;
    sim_vec3 displacement; ///< the ray ends at origin + displacement
} sim_ray_input;

typedef struct sim_ray_result {
    bool hit;
    sim_fx fraction;
    sim_vec3 point;
    sim_vec3 normal; ///< face normal facing the ray origin (triangles have two sides)
    sim_feature feature;
} sim_ray_result;

bool sim_world_raycast(const sim_world *world, const sim_ray_input *input, sim_ray_result *result);

#ifdef __cplusplus
}
#endif

#endif
