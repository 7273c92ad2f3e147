// keel: the free-spot search shared by the separation pass and the placing
// of characters (scene_spot.c), and the pair contact both use. Private to
// sim/src. MIT licence, see LICENSE.
#ifndef KEEL_SCENE_SPOT_H
#define KEEL_SCENE_SPOT_H

#include "scene_internal.h"

#define SEP_GAP ((sim_fx)32) // pairs are pushed this far apart (0.49 mm)
_Static_assert(SCENE_GRID_PAD >= 2 * SEP_GAP, "free_of_characters looks SEP_GAP around a shape");
// Tests against the level in one step, both passes together (a contact query
// and two rays count one; a spot that passes them costs two more for its
// footprint's rays and its route's three sweeps): a bound on the time a step
// may spend placing characters. A character left over waits, as a ghost, for
// the next pass. With 2560, a pile at the built-in level's spawn point
// reaches every spot of its 40 rings within five ticks (1280 left 71 of the
// 971 spots unreached, tick after tick: the spots behind the thin wall used
// it up).
#define SPOT_BUDGET 2560
#define SPOT_TRIES 8192 // spots looked at (against the characters) in one step

// Where the last search of a pass ended: characters of one pile share their
// start point, and the spots a pile member took stay taken, so the next
// member goes on from there instead of testing them all again.
typedef struct spot_cursor {
    bool valid;
    sim_vec3 from;
    sim_shape shape;
    uint32_t next;
    int budget; // level tests left in this pass
    int tries;  // spots left to look at in this pass
} spot_cursor;

// Depth of the shape at `c` against character j (negative: apart), with the
// normal from j toward the shape. `side` picks the direction when the axes
// coincide. false when they are further apart than `margin`.
static inline bool scene_pair_contact(const sim_scene *sc, sim_shape shape, sim_vec3 c, uint32_t j, int side,
                                      sim_fx margin, sim_fx *depth, sim_vec3 *normal)
{
    const scene_body *o = &sc->bodies[j];
    sim_obstacle ob = {o->shape, o->center, 0, side, 0};
    sim_tri_hit h;
    if (!sim_contact_shape_obstacle(shape, c, &ob, margin, &h))
        return false;
    *depth = h.s;
    *normal = h.normal;
    return true;
}

// The nearest free spot to `from` for `shape` that the shape reaches from
// `origin` (scene_spot.c): true with its centre in *out.
bool scene_find_spot(sim_scene *sc, uint32_t self, sim_shape shape, sim_vec3 from, sim_vec3 origin, spot_cursor *cur,
                     sim_vec3 *out);

#endif
