// keel: internal-edge classification's shared parts: the compact triangles,
// the classifier and its bounded queries (edges.c), used by the edge pass
// (edges.c) and the vertex pass (world_vertices.c). MIT licence, see LICENSE.
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

/// The triangles whose bounds meet `box`, listed in k->hit[0] in the
/// hierarchy's fixed order: their number, or -1 in a crowd (more than
/// SIM_EDGES_MAX_TESTS box tests or max_hits triangles). Adds its box tests
/// to k->tests, a crowd to k->capped.
int sim_classify_query_box(classifier *k, sim_aabb box, uint32_t max_hits);

/// The vertex pass, once every edge is judged: the vertex flags of every
/// triangle (with `bury`) or of those marked SIM_TRI_RECHECK.
void sim_classify_vertices(classifier *k, sim_world *w, bool bury);

#endif
