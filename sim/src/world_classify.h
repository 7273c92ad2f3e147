// keel: internal-edge classification's shared parts: the compact triangles,
// the classifier and its bounded queries (world_walk.c), used by the edge
// pass (edges.c) and the vertex pass (world_vertices.c). MIT licence, see
// LICENSE.
#ifndef KEEL_WORLD_CLASSIFY_H
#define KEEL_WORLD_CLASSIFY_H

#include "world_internal.h"

// World building's compact view of triangle i (same index as w->tris): its
// corners and normal, so that a query through a crowd of triangles reads a
// few bytes of each instead of a whole sim_tri (whose bounds are w->tri_box).
typedef struct cls_tri {
    sim_vec3 v[3];
    sim_dir n;
} cls_tri;

typedef struct classifier {
    const sim_world *w;
    cls_tri *ct;
    uint32_t *hit[3]; // the triangles a query found (SIM_EDGES_MAX_HITS each)
    uint64_t tests;   // box tests made by all queries
    uint32_t capped;  // queries that met a limit
} classifier;

/// A segment's terms for the exact segment-box test (world_walk.c), worked
/// out once per query: 2a + d, d and |d| per axis for the segment from a to
/// a + d.
typedef struct segment {
    int64_t s[3], e[3], ae[3];
} segment;

/// A place a query lists the triangles of: those whose bounds meet `box` and,
/// with a segment `seg` (seg[0] to seg[1]), whose bounds grown by the query's
/// `grow` the segment meets; at most `max_hits` of them.
typedef struct region {
    sim_aabb box;
    const sim_vec3 *seg;
    uint32_t max_hits;
    uint32_t *hit; // the list, in the hierarchy's fixed order
    uint32_t hits;
    segment sg; // of seg, when there is one
} region;

/// sim_bvh_query with limits, for the three places of a triangle's edges in
/// one walk (they share most of it): lists each place's triangles in the
/// same fixed order as sim_bvh_query. Gives up after SIM_EDGES_MAX_TESTS box
/// tests (nodes and triangles visited) or when a place has more than its
/// max_hits, and then returns false: too crowded to judge. Nothing is judged
/// before the lists are complete, so a crowd costs only the walk.
///
/// A node is opened when it meets any place: the places of boxes alone are
/// tried before those with a segment (the answer is the same, the segment test
/// dearer). With several places, a box that misses the union of their boxes
/// meets none of them: one test of that union rejects most triangles before the
/// places are tried one by one. The counts of tests are the same either way.
bool sim_classify_query(classifier *k, region r[3], sim_fx grow);

/// The triangles whose bounds meet `box`, listed in k->hit[0] in the
/// hierarchy's fixed order: their number, or -1 in a crowd (more than
/// SIM_EDGES_MAX_TESTS box tests or max_hits triangles). Adds its box tests
/// to k->tests, a crowd to k->capped.
int sim_classify_query_box(classifier *k, sim_aabb box, uint32_t max_hits);

/// The vertex pass, once every edge is judged: the vertex flags of every
/// triangle (with `bury`) or of those marked SIM_TRI_RECHECK.
void sim_classify_vertices(classifier *k, sim_world *w, bool bury);

#endif
