// keel: keeping characters apart (the separation pass; the free-spot search
// it moves piles and leftovers with is scene_spot.c).
// MIT licence, see LICENSE.
//
// During a tick every character collides with the others' start-of-tick
// shapes, so two characters walking into the same gap both advance into it.
// A separation pass after the moves (and one before them, after platforms
// have carried their riders) takes that overlap away:
//
//   1. Piles. A character whose bounds overlap more than SEP_CROWD others'
//      is in a pile (many characters spawned at one point, a platform that
//      crushed a group). Pushing a pile apart pair by pair costs the square
//      of its size per iteration and takes many ticks, so piled characters
//      are moved to the nearest free spot instead, one by one in id order
//      (each leaves the pile; the last one stays where it is).
//   2. Pairs. Jacobi iterations over every overlapping pair: each of the two
//      is pushed half the depth (plus half of SEP_GAP) apart along the
//      pair's normal, all pushes of an iteration computed from the same
//      positions and summed, then each character's total is swept against
//      the level and the platforms (never through a wall; stopped a skin
//      early, sliding along what it meets). A character held by a wall
//      leaves the rest to its partner in the next iteration.
//   3. Leftovers. A character still overlapping by more than SEP_LIMIT after
//      the iterations (squeezed between walls and others) is moved to the
//      nearest free spot, in id order, as a pile is.
//
// Order independence: every loop runs in id order (the characters' order),
// the grid's buckets are filled in that order, and the pushes of an
// iteration are integer sums, whose value does not depend on the order of
// their terms. The pass allocates nothing: the grid and the scratch arrays
// are taken in sim_scene_create.
//
// Each pass may spend SPOT_BUDGET on tests against the level. Characters a
// pass could not place (its budget spent, or no free spot in reach) are
// ghosts until the next pass: the others pass through them and they through
// the others, so a pile costs each of its members one move, not one per
// member. After the pass that follows the moves, whoever still overlaps
// another by more than SEP_LIMIT (only ghosts and their partners can) is
// marked SIM_CHAR_CROWDED and counted (mark_crowded): the crowd does not
// fit where it stands (docs/scene.md, "How many characters a spot holds").
#include <string.h>

#include <keel/sim_angle.h>
#include <keel/sim_hash.h>

#include "move_internal.h"
#include "scene_internal.h"
#include "scene_spot.h"

#define SEP_TOLERANCE SIM_QUERY_TOLERANCE // deeper than this is resolved (0.24 mm)
#define SEP_LIMIT ((sim_fx)48)            // what is left after the pushes: 0.73 mm at most
#define SEP_CROWD 12u                     // overlapping bounds that make a pile
#define SEP_ITERATIONS 8
#define SEP_MAX_PUSH SIM_FX_HALF // per iteration

// ---- pairs ----------------------------------------------------------------------

// Whether character i overlaps any other solid character by more than
// `limit`. With `mark`, every such pair is marked SIM_CHAR_CROWDED (both).
static bool overlaps_any(sim_scene *sc, uint32_t i, sim_fx limit, bool mark)
{
    const scene_body *me = &sc->bodies[i];
    scene_grid_iter it;
    scene_grid_begin_body(&it, sc, i);
    uint32_t j;
    bool any = false;
    while (scene_grid_next(&it, &j)) {
        if (j == i || !sim_aabb_overlaps(me->bounds, sc->bodies[j].bounds))
            continue;
        sim_fx d;
        sim_vec3 n;
        if (scene_pair_contact(sc, me->shape, me->center, j, 1, 0, &d, &n) && d > limit) {
            if (!mark)
                return true;
            any = true;
            sc->chars[i].flags |= SIM_CHAR_CROWDED;
            sc->chars[j].flags |= SIM_CHAR_CROWDED;
        }
    }
    return any;
}

// A character's scan marks (scan_one); STALE: its last scan may no longer
// hold (it or a character whose bounds touch its own has moved since).
enum { SCAN_MARK_PAIRS = 1, SCAN_MARK_CROWDED = 2, SCAN_MARK_OVERFLOW = 4, SCAN_MARK_STALE = 8 };

// Marks character i and every character whose bounds touch i's as stale: a
// scan of any other character neither reads i (bounds apart) nor changes.
static void mark_stale_near(sim_scene *sc, uint32_t i)
{
    sim_aabb box = sc->bodies[i].bounds;
    sc->scan_mark[i] |= SCAN_MARK_STALE;
    scene_grid_iter it;
    scene_grid_begin_body(&it, sc, i);
    uint32_t j;
    while (scene_grid_next(&it, &j))
        if (sim_aabb_overlaps(box, sc->bodies[j].bounds))
            sc->scan_mark[j] |= SCAN_MARK_STALE;
}

// Move character i's body (and its grid entry) to a new centre; the scans
// that met it where it was or meet it where it goes are stale.
static void body_move(sim_scene *sc, uint32_t i, sim_vec3 center)
{
    scene_body *b = &sc->bodies[i];
    mark_stale_near(sc, i);
    b->center = center;
    b->bounds = sim_shape_bounds(b->shape, center);
    scene_grid_remove(sc, i);
    scene_grid_insert(sc, i);
    mark_stale_near(sc, i);
    sc->sep_flag[i] |= SEP_FLAG_MOVED; // moved: written back at the end
}

// Characters flagged SEP_FLAG_RELOCATE that still overlap someone by more than
// `limit` go to the nearest free spot, in id order.
static void relocate_flagged(sim_scene *sc, sim_fx limit, spot_cursor *cur)
{
    for (uint32_t i = 0; i < sc->count; i++) {
        if (!(sc->sep_flag[i] & SEP_FLAG_RELOCATE))
            continue;
        sc->sep_flag[i] &= (uint8_t)~SEP_FLAG_RELOCATE;
        if (!overlaps_any(sc, i, limit, false))
            continue;
        sim_vec3 to;
        sim_vec3 origin = sim_v3_add(sc->chars[i].position, sc->feet_offset[i]);
        if (scene_find_spot(sc, i, sc->bodies[i].shape, sc->bodies[i].center, origin, cur, &to)) {
            body_move(sc, i, to);
            sc->sep_relocated++;
            sim_vec3 *r = &sc->reloc_feet[4 * (size_t)i + 2 * (size_t)sc->sep_pass];
            r[0] = sc->chars[i].position; // not written back before the pass ends
            r[1] = sim_v3_sub(to, sc->feet_offset[i]);
            sc->reloc_mark[i] |= (uint8_t)(1u << sc->sep_pass);
        } else {
            sc->sep_flag[i] |= SEP_FLAG_GHOST; // a ghost until the next pass
            sc->sep_unresolved++;
        }
    }
}

// ---- pushing pairs apart ---------------------------------------------------------

static sim_fx clamp_push(int64_t v)
{
    const int64_t lim = SIM_FX_INT(8);
    return (sim_fx)(v > lim ? lim : (v < -lim ? -lim : v));
}

// What one scan over the pairs found.
enum { SCAN_CLEAR, SCAN_PUSHED, SCAN_PILE };

// Pair (i, j), i < j: j is pushed by p, i by -p.
static void add_pair_push(sim_scene *sc, uint32_t i, uint32_t j, sim_vec3 p)
{
    sc->push[3 * j] += p.x;
    sc->push[3 * j + 1] += p.y;
    sc->push[3 * j + 2] += p.z;
    sc->push[3 * i] -= p.x;
    sc->push[3 * i + 1] -= p.y;
    sc->push[3 * i + 2] -= p.z;
}

// The pairs character i starts (the neighbours j > i it overlaps by more than
// SEP_TOLERANCE, with the push j gets; i gets the opposite), and whether its
// bounds overlap more than SEP_CROWD others' (only when `piles`). Reads the
// bodies, the grid and the ghost marks; writes only i's scan slots, so the
// characters may be scanned on several threads. `emit` (serial use only)
// adds the pushes straight into sc->push instead of the slots.
static void scan_one(sim_scene *sc, uint32_t i, bool piles, bool emit)
{
    const scene_body *a = &sc->bodies[i];
    uint32_t stored = 0;
    uint8_t mark = 0;
    if (a->solid && !(sc->sep_flag[i] & SEP_FLAG_GHOST)) {
        scene_grid_iter it;
        scene_grid_begin_body(&it, sc, i);
        uint32_t j, crowd = 0;
        while (scene_grid_next(&it, &j)) {
            if (j == i || (sc->sep_flag[j] & SEP_FLAG_GHOST) || !sim_aabb_overlaps(a->bounds, sc->bodies[j].bounds))
                continue; // ghosts wait for the next pass
            if (piles && ++crowd > SEP_CROWD) {
                mark |= SCAN_MARK_CROWDED;
                break;
            }
            // Each pair once, from its lower index, so the normal and the
            // push are the same whichever of the two is looked at.
            if (j < i)
                continue;
            const scene_body *b = &sc->bodies[j];
            if (a->shape.type != SIM_SHAPE_BOX && b->shape.type != SIM_SHAPE_BOX) {
                // Two round shapes further apart across than their radii
                // together cannot overlap: most neighbours in a crowd end
                // here, before the narrow phase.
                int64_t dx = (int64_t)b->center.x - a->center.x, dz = (int64_t)b->center.z - a->center.z;
                int64_t rr = (int64_t)a->shape.radius + b->shape.radius;
                if (dx * dx + dz * dz >= rr * rr)
                    continue;
            }
            sim_fx d;
            sim_vec3 n;
            if (!scene_pair_contact(sc, b->shape, b->center, i, -1, 0, &d, &n) || d <= SEP_TOLERANCE)
                continue;
            if (a->center.x == b->center.x && a->center.z == b->center.z && n.y == 0) {
                // Axes that coincide give no direction: the pair's ids pick
                // one, so a few characters at one point part every way.
                uint64_t h = sim_hash_u32(sim_hash_u32(SIM_HASH_SEED, a->id), b->id);
                sim_angle ang = (sim_angle)(h & 0xFFFFu);
                n = sim_v3(sim_angle_sin(ang), 0, sim_angle_cos(ang));
            }
            sim_vec3 p = sim_v3_scale(n, d / 2 + SEP_GAP / 2);
            if (emit) {
                add_pair_push(sc, i, j, p);
            } else if (stored < SCAN_SLOTS) {
                sc->scan_other[SCAN_SLOTS * i + stored] = j;
                sc->scan_push[SCAN_SLOTS * i + stored] = p;
                stored++;
            } else {
                mark |= SCAN_MARK_OVERFLOW; // the serial part scans i again
            }
            mark |= SCAN_MARK_PAIRS;
        }
    }
    if (!emit) {
        sc->scan_count[i] = (uint8_t)stored;
        sc->scan_mark[i] = mark;
    }
}

// The scan of work items [begin, end); each also clears its characters'
// pushes for the serial sum after the scan.
static void scan_items(void *task, uint32_t begin, uint32_t end)
{
    sim_scene *sc = task;
    uint32_t from, to;
    scene_item_range(sc, begin, end, &from, &to);
    if (from < to)
        memset(&sc->push[3 * (size_t)from], 0, (size_t)(to - from) * 3 * sizeof *sc->push);
    bool all = !sc->scan_reuse;
    for (uint32_t i = from; i < to; i++)
        if (all || (sc->scan_mark[i] & SCAN_MARK_STALE))
            scan_one(sc, i, sc->scan_piles, false);
}

// One Jacobi iteration over the pairs. With `piles`, a character whose
// bounds overlap more than SEP_CROWD others' is flagged (SEP_FLAG_RELOCATE) and the scan
// returns SCAN_PILE without pushing anyone: the piles go to free spots
// first (the scan of a pile stops at SEP_CROWD, so a pile costs its size
// times SEP_CROWD, not its size squared). The scan runs on the scene's
// executor when it has one; the pushes are then summed here in id order
// (integer sums: the same values whatever ran the scan). With `reuse` (the
// last iteration found no pile and nobody was placed since), only the stale
// characters are scanned again: every other scan would find what it found.
static int push_pairs(sim_scene *sc, bool piles, bool reuse)
{
    bool any = false, pile = false;
    sc->scan_piles = piles;
    sc->scan_reuse = reuse;
    scene_run_items(sc, scan_items);
    for (uint32_t i = 0; i < sc->count; i++) {
        uint8_t mark = sc->scan_mark[i];
        if (mark & SCAN_MARK_CROWDED) {
            sc->sep_flag[i] |= SEP_FLAG_RELOCATE;
            pile = true;
        }
        if (!(mark & SCAN_MARK_PAIRS) || pile)
            continue;
        any = true;
        if (mark & SCAN_MARK_OVERFLOW) {
            scan_one(sc, i, piles, true);
            continue;
        }
        for (uint32_t k = 0; k < sc->scan_count[i]; k++) {
            uint32_t j = sc->scan_other[SCAN_SLOTS * i + k];
            add_pair_push(sc, i, j, sc->scan_push[SCAN_SLOTS * i + k]);
        }
    }
    if (pile)
        return SCAN_PILE;
    if (!any)
        return SCAN_CLEAR;
    for (uint32_t i = 0; i < sc->count; i++) {
        sim_vec3 p =
            sim_v3(clamp_push(sc->push[3 * i]), clamp_push(sc->push[3 * i + 1]), clamp_push(sc->push[3 * i + 2]));
        if (sim_v3_is_zero(p))
            continue;
        sim_fx len;
        sim_vec3 u = sim_v3_normalize_len(p, &len);
        if (len > SEP_MAX_PUSH)
            p = sim_v3_scale(u, SEP_MAX_PUSH);
        scene_view v = {sc, -1, 0, false, NULL, NULL};
        sim_collider col = scene_view_collider(&v);
        sim_vec3 to = mover_push_swept(&col, sc->settings.skin, sc->bodies[i].shape, sc->bodies[i].center, p);
        if (!sim_v3_eq(to, sc->bodies[i].center)) {
            body_move(sc, i, to);
            sc->sep_pushed++;
            // A push is a contact: the velocity into it goes, as against a
            // wall (else one standing on another's head would keep falling
            // into it and gather speed every tick).
            sim_char_state *c = &sc->chars[i];
            sim_fx into = sim_v3_dot(c->velocity, u);
            if (into < 0)
                c->velocity = sim_v3_sub(c->velocity, sim_v3_scale(u, into));
        }
    }
    return SCAN_PUSHED;
}

// ---- the pass -------------------------------------------------------------------

static void prepare(sim_scene *sc)
{
    if (sc->bodies_ready) {
        // After the moves: each move filled its body, feet offset and flags
        // (scene.c, move_range); the snapshot is no longer needed.
        scene_body *t = sc->bodies;
        sc->bodies = sc->bodies_next;
        sc->bodies_next = t;
        sc->bodies_ready = false;
    } else {
        scene_bodies_fill(sc);
        for (uint32_t i = 0; i < sc->count; i++) {
            sc->feet_offset[i] = sim_v3_sub(sc->bodies[i].center, sc->chars[i].position);
            sc->sep_flag[i] = 0;
        }
    }
    scene_grid_build(sc);
}

static void write_back(sim_scene *sc)
{
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    for (uint32_t i = 0; i < sc->count; i++) {
        if (!(sc->sep_flag[i] & SEP_FLAG_MOVED))
            continue;
        sim_vec3 f = sim_v3_sub(sc->bodies[i].center, sc->feet_offset[i]);
        sc->chars[i].position =
            sim_v3(sim_fx_clamp(f.x, -lim, lim), sim_fx_clamp(f.y, -lim, lim), sim_fx_clamp(f.z, -lim, lim));
        sc->sep_flag[i] &= (uint8_t)~SEP_FLAG_MOVED;
    }
}

// After the pass after the moves: SIM_CHAR_CROWDED on every character that
// overlaps another by more than SEP_LIMIT. Only a ghost of this pass can
// (ghost: flagged for a free spot and none found): the last scan found no
// pair of the others deeper than SEP_TOLERANCE, or the leftovers deeper than
// SEP_LIMIT went to free spots (clear of everyone) or became ghosts. So only
// the ghosts' neighbours are looked at: nothing when nobody is crowded.
static void mark_crowded(sim_scene *sc, bool ghosts)
{
    for (uint32_t i = 0; i < sc->count; i++)
        sc->chars[i].flags &= ~(uint32_t)SIM_CHAR_CROWDED;
    sc->sep_crowded = 0;
    if (!ghosts)
        return;
    for (uint32_t i = 0; i < sc->count; i++)
        if (sc->sep_flag[i] & SEP_FLAG_GHOST)
            (void)overlaps_any(sc, i, SEP_LIMIT, true);
    for (uint32_t i = 0; i < sc->count; i++)
        sc->sep_crowded += (sc->chars[i].flags & SIM_CHAR_CROWDED) != 0;
}

void scene_separate_begin_step(sim_scene *sc)
{
    sc->sep_pushed = sc->sep_relocated = sc->sep_unresolved = sc->sep_crowded = 0;
    memset(sc->reloc_mark, 0, sc->count ? sc->count : 1);
    sc->reloc_valid = true;
    sc->spot_budget = SPOT_BUDGET;
    sc->spot_tries = SPOT_TRIES;
}

bool scene_separate(sim_scene *sc)
{
    sc->sep_pass = sc->bodies_ready ? 1 : 0; // after the moves: their bodies are ready
    if (sc->count < 2) {
        if (sc->count)
            sc->sep_flag[0] = 0;
        if (sc->sep_pass)
            mark_crowded(sc, false);
        return true;
    }
    prepare(sc);
    uint32_t unresolved_before = sc->sep_unresolved;
    spot_cursor cur = {0};
    cur.budget = sc->spot_budget;
    cur.tries = sc->spot_tries;
    int scan = push_pairs(sc, true, false);
    if (scan == SCAN_PILE) {
        relocate_flagged(sc, SEP_TOLERANCE, &cur);
        scan = push_pairs(sc, false, false);
    }
    for (int it = 1; it < SEP_ITERATIONS && scan == SCAN_PUSHED; it++)
        scan = push_pairs(sc, false, true);
    if (scan == SCAN_PUSHED) {
        // The iterations ran out with pairs still overlapping: whoever is
        // still in by more than SEP_LIMIT goes to a free spot.
        for (uint32_t i = 0; i < sc->count; i++)
            if (sc->bodies[i].solid && !(sc->sep_flag[i] & SEP_FLAG_GHOST) && overlaps_any(sc, i, SEP_LIMIT, false))
                sc->sep_flag[i] |= SEP_FLAG_RELOCATE;
        relocate_flagged(sc, SEP_LIMIT, &cur);
    }
    write_back(sc);
    if (sc->sep_pass)
        mark_crowded(sc, sc->sep_unresolved != unresolved_before);
    sc->spot_budget = cur.budget;
    sc->spot_tries = cur.tries;
    // Clean: the last scan found no pair to push (so nothing was moved after
    // it) and nobody was left unplaced. A pass on a clean state does nothing.
    return scan == SCAN_CLEAR && sc->sep_unresolved == unresolved_before;
}

sim_scene_separation sim_scene_last_separation(const sim_scene *sc)
{
    sim_scene_separation r = {sc->sep_pushed, sc->sep_relocated, sc->sep_unresolved, sc->sep_crowded};
    return r;
}

bool sim_scene_relocation(const sim_scene *sc, uint32_t id, int pass, sim_vec3 *from_feet, sim_vec3 *to_feet)
{
    if (!sc->reloc_valid || (pass != SIM_SCENE_PASS_BEFORE_MOVES && pass != SIM_SCENE_PASS_AFTER_MOVES))
        return false;
    const sim_char_state *c = sim_scene_find(sc, id);
    if (!c)
        return false;
    size_t i = (size_t)(c - sc->chars);
    if (!(sc->reloc_mark[i] & (1u << pass)))
        return false;
    const sim_vec3 *r = &sc->reloc_feet[4 * i + 2 * (size_t)pass];
    if (from_feet)
        *from_feet = r[0];
    if (to_feet)
        *to_feet = r[1];
    return true;
}
