// keel: the static world. MIT licence, see LICENSE.
//
// A world owns the collision geometry built from a level: triangles (boxes are
// turned into 12 triangles each), their unit normals, internal-edge flags and a
// bounding-volume hierarchy. It is immutable after creation.
#ifndef KEEL_SIM_WORLD_H
#define KEEL_SIM_WORLD_H

#include <keel/sim_level.h>
#include <keel/sim_query.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_world_def {
    /// Triangles whose doubled area is below this (m^2, Q16.16) are dropped as
    /// degenerate. Default 1e-6 m^2 (raw 0 rounds up to 1).
    sim_fx min_double_area;
    /// Angle tolerance for "coplanar" when classifying internal edges, as the
    /// cosine (default cos 2 degrees).
    sim_fx coplanar_cos;
    /// Distance tolerance for shared and collinear edges (default 1 mm).
    sim_fx weld_distance;
    uint32_t cookie; ///< set by sim_world_default_def; checked by sim_world_create
} sim_world_def;

sim_world_def sim_world_default_def(void);

typedef struct sim_world_stats {
    uint32_t triangle_count;   ///< collision triangles kept
    uint32_t degenerate_count; ///< dropped as degenerate
    uint32_t buried_count;     ///< dropped as buried inside solid (faces where boxes touch)
    uint32_t inactive_edges;   ///< edges marked internal
    uint32_t bvh_nodes;
    uint32_t bvh_depth;
    sim_aabb bounds;
    /// Work of internal-edge classification: box tests (hierarchy nodes and
    /// triangles) made by its queries; at most a constant per triangle.
    uint64_t classify_tests;
    /// Classification queries that gave up in a crowd (very many triangles at
    /// one spot), each leaving a triangle's edges or a vertex active or a
    /// triangle kept: safe, at worst a ghost bump. 0 on ordinary levels.
    uint32_t classify_capped;
} sim_world_stats;

/// Build a world. Returns NULL (with err filled when non-NULL) if the level is
/// out of range (a coordinate beyond SIM_WORLD_LIMIT) or memory runs out.
sim_world *sim_world_create(const sim_level *level, const sim_world_def *def, sim_error *err);
void sim_world_destroy(sim_world *world);
sim_world_stats sim_world_get_stats(const sim_world *world);

#ifdef __cplusplus
}
#endif

#endif
