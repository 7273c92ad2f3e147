// keel: building the static world from a level. MIT licence, see LICENSE.
#include <stdio.h>
#include <stdlib.h>

#include "world_internal.h"

#define SIM_WORLD_COOKIE 0x6b65656cu // "keel"

sim_world_def sim_world_default_def(void)
{
    sim_world_def d;
    d.min_double_area = 1;          // raw 1 = 2^-16 m^2: only true slivers go
    d.coplanar_cos = (sim_fx)65496; // cosine of 2 degrees, 0.99939
    d.weld_distance = SIM_FX_MM(1);
    d.cookie = SIM_WORLD_COOKIE;
    return d;
}

static void set_error(sim_error *err, const char *msg)
{
    if (err) {
        snprintf(err->message, sizeof err->message, "%s", msg);
        err->line = 0;
    }
}

// Corner (bx, by, bz) of an oriented box, each bit choosing +half or -half.
static sim_vec3 box_corner(const sim_box_def *b, int bx, int by, int bz)
{
    sim_vec3 p = b->center;
    p = sim_v3_add(p, sim_v3_scale(b->axis[0], bx ? b->half.x : -b->half.x));
    p = sim_v3_add(p, sim_v3_scale(b->axis[1], by ? b->half.y : -b->half.y));
    p = sim_v3_add(p, sim_v3_scale(b->axis[2], bz ? b->half.z : -b->half.z));
    return p;
}

// Faces as corner bit patterns, counter-clockwise seen from outside.
static const unsigned char box_faces[6][4] = {
    {4, 6, 7, 5}, // +x
    {0, 1, 3, 2}, // -x
    {2, 3, 7, 6}, // +y
    {0, 4, 5, 1}, // -y
    {1, 5, 7, 3}, // +z
    {0, 2, 6, 4}, // -z
};

static bool in_range(sim_vec3 p) { return sim_v3_in_world(p); }

sim_world *sim_world_create(const sim_level *level, const sim_world_def *def_in, sim_error *err)
{
    sim_world_def def = def_in ? *def_in : sim_world_default_def();
    if (def.cookie != SIM_WORLD_COOKIE) {
        set_error(err, "sim_world_create: definition not initialised with sim_world_default_def()");
        return NULL;
    }
    for (uint32_t i = 0; i < level->vertex_count; i++) {
        if (!in_range(level->vertices[i])) {
            set_error(err, "sim_world_create: a vertex lies beyond SIM_WORLD_LIMIT (4096 m)");
            return NULL;
        }
    }
    for (uint32_t b = 0; b < level->box_count; b++) {
        const sim_box_def *bd = &level->boxes[b];
        if (!in_range(bd->center) || bd->half.x < 0 || bd->half.y < 0 || bd->half.z < 0 ||
            bd->half.x > SIM_FX_INT(1024) || bd->half.y > SIM_FX_INT(1024) || bd->half.z > SIM_FX_INT(1024)) {
            set_error(err, "sim_world_create: a box is out of range (centre beyond 4096 m or half "
                           "extent outside [0, 1024] m)");
            return NULL;
        }
    }
    sim_world *w = calloc(1, sizeof *w);
    if (!w) {
        set_error(err, "sim_world_create: out of memory");
        return NULL;
    }
    w->def = def;
    if (!sim_spawn_world_init(w, level)) {
        sim_world_destroy(w);
        set_error(err, "sim_world_create: out of memory");
        return NULL;
    }
    size_t cap = (size_t)level->triangle_count + 12 * (size_t)level->box_count;
    w->tris = malloc((cap ? cap : 1) * sizeof *w->tris);
    if (!w->tris) {
        sim_world_destroy(w);
        set_error(err, "sim_world_create: out of memory");
        return NULL;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < level->triangle_count; i++) {
        const uint32_t *ix = &level->indices[3 * i];
        if (ix[0] >= level->vertex_count || ix[1] >= level->vertex_count || ix[2] >= level->vertex_count) {
            sim_world_destroy(w);
            set_error(err, "sim_world_create: a triangle index is out of range");
            return NULL;
        }
        if (sim_tri_init(&w->tris[n], level->vertices[ix[0]], level->vertices[ix[1]], level->vertices[ix[2]], i,
                         def.min_double_area))
            n++;
        else
            w->stats.degenerate_count++;
    }
    for (uint32_t b = 0; b < level->box_count; b++) {
        const sim_box_def *bd = &level->boxes[b];
        for (int f = 0; f < 6; f++) {
            sim_vec3 q[4];
            for (int k = 0; k < 4; k++) {
                int c = box_faces[f][k];
                q[k] = box_corner(bd, (c >> 2) & 1, (c >> 1) & 1, c & 1);
            }
            uint32_t id = level->triangle_count + 12 * b + 2 * (uint32_t)f;
            if (sim_tri_init(&w->tris[n], q[0], q[1], q[2], id, def.min_double_area))
                n++;
            else
                w->stats.degenerate_count++;
            if (sim_tri_init(&w->tris[n], q[0], q[2], q[3], id + 1, def.min_double_area))
                n++;
            else
                w->stats.degenerate_count++;
        }
    }
    w->tri_count = n;
    w->stats.triangle_count = n;
    if (!sim_bvh_build(w)) {
        sim_world_destroy(w);
        set_error(err, "sim_world_create: out of memory");
        return NULL;
    }
    sim_edges_classify(w, true);
    // Drop the triangles buried inside solid material and index the rest.
    // Their neighbours are judged again: a dropped triangle no longer
    // continues a surface.
    uint32_t kept = 0, dropped = 0;
    for (uint32_t i = 0; i < w->tri_count; i++)
        dropped += (w->tris[i].flags & SIM_TRI_BURIED) != 0;
    sim_aabb *gone = dropped ? malloc(dropped * sizeof *gone) : NULL;
    if (dropped && !gone) {
        sim_world_destroy(w);
        set_error(err, "sim_world_create: out of memory");
        return NULL;
    }
    dropped = 0;
    for (uint32_t i = 0; i < w->tri_count; i++) {
        if (w->tris[i].flags & SIM_TRI_BURIED)
            gone[dropped++] = sim_tri_bounds(&w->tris[i]);
        else
            w->tris[kept++] = w->tris[i];
    }
    w->stats.buried_count = dropped;
    if (dropped) {
        w->tri_count = kept;
        free(w->nodes);
        w->nodes = NULL;
        if (!sim_bvh_build(w)) {
            free(gone);
            sim_world_destroy(w);
            set_error(err, "sim_world_create: out of memory");
            return NULL;
        }
        sim_edges_mark_recheck(w, gone, dropped);
        sim_edges_classify(w, false);
        for (uint32_t i = 0; i < w->tri_count; i++)
            w->tris[i].flags &= ~(uint32_t)SIM_TRI_RECHECK;
    }
    free(gone);
    n = w->tri_count;
    w->stats.triangle_count = n;
    uint32_t inactive = 0;
    for (uint32_t i = 0; i < n; i++)
        for (int e = 0; e < 3; e++)
            inactive += sim_tri_edge_inactive(&w->tris[i], e);
    w->stats.inactive_edges = inactive;
    w->stats.bounds = n ? w->nodes[0].box : (sim_aabb){{0, 0, 0}, {0, 0, 0}};
    return w;
}

void sim_world_destroy(sim_world *w)
{
    if (!w)
        return;
    free(w->tris);
    free(w->tri_box);
    free(w->nodes);
    free(w->facing);
    free(w->spawn_markers);
    free(w);
}

sim_world_stats sim_world_get_stats(const sim_world *w) { return w->stats; }
