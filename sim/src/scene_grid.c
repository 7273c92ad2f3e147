// keel: the scene's grid of characters: a hash grid over x and z of the
// bodies' centres, for the separation's pair scans and free-spot tests
// (scene_separate.c). MIT licence, see LICENSE.
//
// Cells are square, a power of two wide and at least as wide as the widest
// body plus SCENE_GRID_PAD, so two bodies whose bounds come within the pad of
// each other have their centres in the same or in neighbouring cells. A
// bucket holds the characters of every cell hashed to it, in a doubly linked
// list; the walk keeps only the cell's own. Characters are inserted in id
// order (each at the head), so a bucket's order is a function of the bodies
// alone. Buckets carry the stamp of the build that last filled them: a
// build needs no clearing. Everything is taken in sim_scene_create.
#include <string.h>

#include "scene_internal.h"

static uint32_t cell_of(sim_fx v, uint32_t shift) { return (uint32_t)(((int64_t)v + GRID_OFFSET) >> shift); }

void scene_grid_insert(sim_scene *sc, uint32_t i)
{
    sim_vec3 c = sc->bodies[i].center;
    uint32_t cx = cell_of(c.x, sc->grid_shift), cz = cell_of(c.z, sc->grid_shift);
    uint32_t b = scene_grid_bucket(sc, cx, cz);
    sc->grid_cell[2 * i] = cx;
    sc->grid_cell[2 * i + 1] = cz;
    if (sc->grid_built[b] != sc->grid_stamp) {
        sc->grid_built[b] = sc->grid_stamp;
        sc->grid_head[b] = GRID_NONE;
    }
    uint32_t h = sc->grid_head[b];
    sc->grid_next[i] = h;
    sc->grid_prev[i] = GRID_NONE;
    if (h != GRID_NONE)
        sc->grid_prev[h] = i;
    sc->grid_head[b] = i;
}

void scene_grid_remove(sim_scene *sc, uint32_t i)
{
    uint32_t b = scene_grid_bucket(sc, sc->grid_cell[2 * i], sc->grid_cell[2 * i + 1]);
    uint32_t p = sc->grid_prev[i], n = sc->grid_next[i];
    if (p != GRID_NONE)
        sc->grid_next[p] = n;
    else
        sc->grid_head[b] = n;
    if (n != GRID_NONE)
        sc->grid_prev[n] = p;
}

// Every solid character into the grid, in id order. Cells are at least as
// wide as the widest shape, so two shapes that overlap are in the same or
// in neighbouring cells.
void scene_grid_build(sim_scene *sc)
{
    int64_t widest = 1;
    for (uint32_t i = 0; i < sc->count; i++) {
        sim_aabb b = sc->bodies[i].bounds;
        int64_t wx = (int64_t)b.max.x - b.min.x, wz = (int64_t)b.max.z - b.min.z;
        if (wx > widest)
            widest = wx;
        if (wz > widest)
            widest = wz;
    }
    sc->grid_reach = (widest + 1) / 2; // bounds are centre +- half: the largest half, rounded up
    widest += (int64_t)SCENE_GRID_PAD;
    uint32_t shift = 0;
    while (((int64_t)1 << shift) < widest)
        shift++;
    sc->grid_shift = shift;
    sc->grid_stamp++;
    if (sc->grid_stamp == 0) { // wrapped: forget every bucket
        memset(sc->grid_built, 0, ((size_t)sc->grid_mask + 1) * sizeof *sc->grid_built);
        sc->grid_stamp = 1;
    }
    for (uint32_t i = 0; i < sc->count; i++)
        if (sc->bodies[i].solid)
            scene_grid_insert(sc, i);
}

static void near_begin_cells(scene_grid_iter *it, const sim_scene *sc, uint32_t x0, uint32_t x1, uint32_t z0,
                             uint32_t z1)
{
    it->sc = sc;
    it->x0 = x0;
    it->x1 = x1;
    it->z1 = z1;
    it->x = x0;
    it->z = z0;
    it->j = scene_grid_first(sc, x0, z0);
}

// The 3 x 3 cells around a point.
void scene_grid_begin_point(scene_grid_iter *it, const sim_scene *sc, sim_vec3 c)
{
    uint32_t cx = cell_of(c.x, sc->grid_shift), cz = cell_of(c.z, sc->grid_shift);
    near_begin_cells(it, sc, cx - 1u, cx + 1u, cz - 1u, cz + 1u);
}

// The cells that can hold the centre of a body whose bounds touch `box`:
// the box grown by the largest half width. For a body's own bounds they are
// among the 3 x 3 around its centre (cells are wider than the widest
// shape), usually 2 x 2 or 2 x 3 of them: the same characters, in the same
// order, as the 3 x 3 walk keeps after the bounds test. The number of cells
// (0 when the box reaches outside the cells' range: nothing is walked).
uint64_t scene_grid_begin_box(scene_grid_iter *it, const sim_scene *sc, sim_aabb box)
{
    int64_t r = sc->grid_reach;
    uint32_t sh = sc->grid_shift;
    int64_t x0 = (int64_t)box.min.x - r + GRID_OFFSET, x1 = (int64_t)box.max.x + r + GRID_OFFSET;
    int64_t z0 = (int64_t)box.min.z - r + GRID_OFFSET, z1 = (int64_t)box.max.z + r + GRID_OFFSET;
    if (x0 < 0 || z0 < 0 || x1 >= 2 * GRID_OFFSET || z1 >= 2 * GRID_OFFSET || x1 < x0 || z1 < z0) {
        *it = (scene_grid_iter){sc, 0, 0, 0, 0, 0, GRID_NONE}; // the walk ends at once
        return 0;
    }
    near_begin_cells(it, sc, (uint32_t)(x0 >> sh), (uint32_t)(x1 >> sh), (uint32_t)(z0 >> sh), (uint32_t)(z1 >> sh));
    return (uint64_t)((x1 >> sh) - (x0 >> sh) + 1) * (uint64_t)((z1 >> sh) - (z0 >> sh) + 1);
}

void scene_grid_begin_body(scene_grid_iter *it, const sim_scene *sc, uint32_t i)
{
    scene_grid_begin_box(it, sc, sc->bodies[i].bounds);
}
