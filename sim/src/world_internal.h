// keel: the world's private layout, shared by world.c, bvh.c, edges.c and
// query.c. MIT licence, see LICENSE.
//
// Invariants: tris[] is in BVH leaf order and never changes after creation;
// a leaf node covers tris[first .. first+count); an internal node's children
// are nodes[first] and nodes[first+1]; node 0 is the root (absent when the
// world has no triangles).
#ifndef KEEL_WORLD_INTERNAL_H
#define KEEL_WORLD_INTERNAL_H

#include <keel/sim_world.h>

#include "collide.h"
#include "world_near.h"

typedef struct sim_bvh_node {
    sim_aabb box;
    uint32_t first;
    uint32_t count; ///< 0 for an internal node
} sim_bvh_node;

#define SIM_BVH_LEAF_SIZE 4
#define SIM_BVH_MAX_DEPTH 64

/// A field added here must also be copied by the tests' world cache
/// (tests/support/world_cache.c, which checks this struct's layout).
struct sim_world {
    sim_world_def def;
    sim_tri *tris;
    sim_aabb *tri_box; ///< tri_box[i] == tris[i].box, packed: the walks read these
    uint32_t tri_count;
    sim_bvh_node *nodes;
    uint32_t node_count;
    sim_world_stats stats;
    /// Spawn search (spawn.c): the winding of each level triangle seen from
    /// above (+1 up, -1 down, 0 vertical), indexed by triangle id; the level's
    /// triangle count (ids past it are boxes); the spawn markers' feet points.
    int8_t *facing;
    uint32_t level_triangles;
    sim_vec3 *spawn_markers;
    uint32_t spawn_marker_count;
};

/// Fills facing, level_triangles and spawn_markers from the level (spawn.c).
/// False when memory runs out.
bool sim_spawn_world_init(sim_world *world, const sim_level *level);

/// Build the hierarchy over world->tris (reordering them). Returns false when
/// memory runs out.
bool sim_bvh_build(sim_world *world);

/// Visit every triangle whose bounds overlap `box`, in a fixed order.
/// The visitor returns false to stop early.
typedef bool (*sim_bvh_visit_fn)(void *ctx, const sim_tri *t);
void sim_bvh_query(const sim_world *world, sim_aabb box, sim_bvh_visit_fn visit, void *ctx);

/// The indices (into world->tris) of the triangles sim_bvh_query visits, in
/// its order, into out[0 .. cap). Returns how many there are, or cap + 1
/// when there are more than cap (then out holds the first cap).
uint32_t sim_bvh_collect(const sim_world *world, sim_aabb box, uint32_t *out, uint32_t cap);

/// Visit every triangle whose bounds, grown by `grow`, the segment from
/// `origin` to origin + d touches (a sweep: the centre's path against bounds
/// grown by the shape's half extents). Much tighter than the box around a long
/// diagonal motion.
void sim_bvh_query_segment(const sim_world *world, sim_vec3 origin, sim_vec3 d, sim_vec3 grow, sim_bvh_visit_fn visit,
                           void *ctx);

/// sim_bvh_query_segment and sim_bvh_query answered from `near` (see
/// world_near.h) when the query's box lies inside near's box, else by the
/// hierarchy. `near` may be NULL.
void sim_near_query_segment(const sim_world *world, const sim_near *near, sim_vec3 origin, sim_vec3 d, sim_vec3 grow,
                            sim_bvh_visit_fn visit, void *ctx);
void sim_near_query_box(const sim_world *world, const sim_near *near, sim_aabb box, sim_bvh_visit_fn visit, void *ctx);
/// The triangles sim_near_query_segment visits, in its order, as indices
/// into world->tris (at most SIM_NEAR_CAPACITY of them, into out; their
/// number into *count), when `near` answers the query; false (and nothing
/// written) when the hierarchy must.
bool sim_near_segment_tris(const sim_world *world, const sim_near *near, sim_vec3 origin, sim_vec3 d, sim_vec3 grow,
                           uint32_t *out, uint32_t *count);

/// The limits of one query of internal-edge classification (one per edge, per
/// vertex and per triangle that may be buried): at most SIM_EDGES_MAX_TESTS
/// box tests (hierarchy nodes and triangles), and at most SIM_EDGES_MAX_HITS
/// triangles examined along an edge of 0.25 m or more or over a face, or
/// SIM_EDGES_MAX_HITS_NEAR around a shorter edge or a vertex. A query that
/// would go further is a crowd: the triangle keeps all its edges active (or
/// the vertex stays active, or the triangle is kept): never a pass-through,
/// at worst a ghost bump, and only where very many triangles crowd one spot
/// (the real maps stay several times below). This bounds the work per
/// triangle by a constant whatever the arrangement (docs/ranges.md).
#define SIM_EDGES_MAX_TESTS 4096u
#define SIM_EDGES_MAX_HITS 1024u
#define SIM_EDGES_MAX_HITS_NEAR 256u

/// Mark internal edges and vertices (see edges.c); with `bury`, also mark the
/// triangles buried inside solid (SIM_TRI_BURIED) for the caller to drop.
/// Adds to world->stats.classify_tests and classify_capped.
void sim_edges_classify(sim_world *world, bool bury);

/// Mark SIM_TRI_RECHECK on the triangles whose bounds meet one of `gone`
/// grown by the weld distance (the bounds of dropped triangles), all of them
/// when one of those places is a crowd.
void sim_edges_mark_recheck(sim_world *world, const sim_aabb *gone, uint32_t count);

#endif
