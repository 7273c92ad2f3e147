// keel: free spots: where a character of a pile, a leftover of the
// separation pass (scene_separate.c) or a new character fits.
// MIT licence, see LICENSE.
//
// A free spot (scene_find_spot) is searched on rings around the start point: the
// point itself, then rings of radius k * (half the shape's width), 6k
// points each, each dropped onto the walkable ground under it (a step above
// to SPOT_DROP below the start's ground) and also tried one step height up.
// A spot is free when the shape there is clear of the level and the
// platforms (no overlap beyond SIM_QUERY_TOLERANCE), at least SEP_GAP from
// every other solid character, has ground under its whole footprint
// (footprint_on_ground), and the shape reaches it from where the character
// was as a walk would (route_clear: swept up a step, across, down; a centre
// ray first turns away most spots behind walls cheaply). A character with
// no such spot stays where it is: never placed in the air.

#include <keel/sim_angle.h>

#include "scene_spot.h"

// A round shape's diagonal probe points sit at its radius times this
// Q16.16 integer, 46341 / 65536: the cosine of an eighth of a turn, rounded
// up so that the points stay on the circle's outside.
#define SPOT_DIAGONAL ((sim_fx)46341)

#define SPOT_RINGS 40u // 40 rings: up to 16 m for the default shapes
// How far below the start a spot's ground may be (a pile on a ledge spills
// onto the floor beside it).
#define SPOT_DROP SIM_FX_INT(2)
#define SPOT_SAME_PILE 4 // ring steps

static bool shape_eq(sim_shape a, sim_shape b)
{
    return a.type == b.type && a.radius == b.radius && sim_v3_eq(a.half, b.half);
}

static bool free_of_characters(const sim_scene *sc, uint32_t self, sim_shape shape, sim_vec3 c)
{
    sim_aabb box = sim_aabb_expand(sim_shape_bounds(shape, c), sim_v3(SEP_GAP, SEP_GAP, SEP_GAP));
    scene_grid_iter it;
    scene_grid_begin_point(&it, sc, c);
    uint32_t j;
    while (scene_grid_next(&it, &j)) {
        if (j == self || !sim_aabb_overlaps(box, sc->bodies[j].bounds))
            continue;
        sim_fx d;
        sim_vec3 n;
        if (scene_pair_contact(sc, shape, c, j, 1, SEP_GAP, &d, &n) && d > -SEP_GAP)
            return false;
    }
    return true;
}

// 0 when the shape at c is clear of the level and the platforms; 1 when
// something it could stand on is in the way (a step or a ramp: a spot one
// step higher may be free); 2 otherwise.
static int level_block(const sim_collider *col, sim_shape shape, sim_vec3 c)
{
    sim_overlap_input oi = {shape, c, 0};
    sim_contact ct;
    if (col->contacts(col->ctx, &oi, &ct, 1) > 0 && ct.depth > SIM_QUERY_TOLERANCE)
        return ct.normal.y > 0 ? 1 : 2;
    return 0;
}

// Walkable ground under the shape centred at c, within `below` of its
// bottom: true with *floor_y the height of the ground met.
static bool ground_under(const sim_scene *sc, const sim_collider *col, sim_shape shape, sim_vec3 c, sim_fx below,
                         sim_fx *floor_y)
{
    sim_ray_input down = {c, sim_v3(0, -(shape.half.y + below), 0)};
    sim_ray_result r;
    if (!col->raycast(col->ctx, &down, &r) || r.normal.y < sc->settings.max_slope_cos)
        return false;
    *floor_y = r.point.y;
    return true;
}

// Ground under the whole footprint of the shape at c: below each point of
// its rim (a box's four corners; a round shape's eight points around, a skin
// inside its radius) an upward-facing surface within a step height of its
// bottom. (The centre's ground is walkable: the search dropped it there.) A
// character put down with its centre just inside an open edge would roll off.
static bool footprint_on_ground(const sim_scene *sc, const sim_collider *col, sim_shape shape, sim_vec3 c)
{
    const sim_move_settings *s = &sc->settings;
    sim_fx ax, az, dx, dz; // the axis points and the diagonal ones
    if (shape.type == SIM_SHAPE_BOX) {
        ax = az = 0;
        dx = shape.half.x - s->skin;
        dz = shape.half.z - s->skin;
    } else {
        ax = az = shape.radius - s->skin;
        dx = dz = sim_fx_mul(ax, SPOT_DIAGONAL);
    }
    static const int8_t sx[8] = {1, -1, 0, 0, 1, 1, -1, -1}, sz[8] = {0, 0, 1, -1, 1, -1, 1, -1};
    for (int k = shape.type == SIM_SHAPE_BOX ? 4 : 0; k < 8; k++) {
        sim_fx ox = k < 4 ? (sim_fx)(sx[k] * ax) : (sim_fx)(sx[k] * dx);
        sim_fx oz = k < 4 ? (sim_fx)(sz[k] * az) : (sim_fx)(sz[k] * dz);
        sim_ray_input down = {sim_v3_add(c, sim_v3(ox, 0, oz)), sim_v3(0, -(shape.half.y + s->step_height), 0)};
        sim_ray_result r;
        if (!col->raycast(col->ctx, &down, &r) || r.normal.y <= 0)
            return false;
    }
    return true;
}

// Whether a sweep of the shape from `from` by `d` meets nothing (against the
// level and the platforms), or meets it no more than `slack` short of the end.
static bool sweep_clear(const sim_collider *col, sim_shape shape, sim_vec3 from, sim_vec3 d, sim_fx slack,
                        sim_vec3 *reached)
{
    *reached = sim_v3_add(from, d);
    if (sim_v3_is_zero(d))
        return true;
    sim_sweep_input in = {shape, from, d, 0};
    sim_sweep_result r;
    if (!col->sweep(col->ctx, &in, &r))
        return true;
    *reached = r.position;
    if (r.start_overlap)
        return false;
    sim_fx len;
    (void)sim_v3_normalize_len(d, &len);
    return (int64_t)len - (((int64_t)len * r.fraction) >> 16) <= slack;
}

// The route a relocation takes, the way a character walking there would:
// from `from` (where it was when the pass began) up by a step height over
// the higher of the two ends, across horizontally to above `to`, and down
// onto it. Each leg is a sweep of the whole shape against the level and the
// platforms; the first may stop early (a low ceiling) as long as it still
// clears the spot's height, the others must run their whole way (the last
// may stop a skin short: the floor under the spot). So a spot behind a wall,
// past a corner the shape would graze or through a floor is never reached,
// and a spot below the start is reached only across open air the character
// could walk off into and fall (SPOT_DROP at most, scene_find_spot).
static bool route_clear(const sim_scene *sc, const sim_collider *col, sim_shape shape, sim_vec3 from, sim_vec3 to)
{
    const sim_fx skin = sc->settings.skin;
    sim_fx top = (sim_fx)((from.y > to.y ? from.y : to.y) + sc->settings.step_height);
    sim_vec3 a, b, c;
    if (!sweep_clear(col, shape, from, sim_v3(0, top - from.y, 0), 0, &a) && a.y - skin > from.y)
        a.y -= skin; // stopped under a ceiling: go across a skin below it
    return sweep_clear(col, shape, a, sim_v3(to.x - a.x, 0, to.z - a.z), 0, &b) &&
           sweep_clear(col, shape, sim_v3(to.x, a.y, to.z), sim_v3(0, to.y - a.y, 0), skin, &c);
}

// Half the shape's horizontal width: the spacing of the rings.
static sim_fx ring_step(sim_shape s)
{
    sim_fx w = s.type == SIM_SHAPE_BOX ? (s.half.x > s.half.z ? s.half.x : s.half.z) : s.radius;
    return w + SEP_GAP;
}

static void cursor_keep(spot_cursor *cur, sim_vec3 center, sim_shape shape, uint32_t index)
{
    cur->valid = true;
    cur->from = center;
    cur->shape = shape;
    cur->next = index;
}

// The nearest free spot to `from` for `shape` (character `self` left out;
// GRID_NONE for none) that the shape reaches from `origin` (where the
// character was when the pass began: the pass may have pushed it since, and
// its whole way must be one it could take; route_clear), searching on from
// cursor->next when the cursor is for the same pile. `from` itself is taken
// when it is free (the pushes that took the character there were swept).
// Any other spot rests on ground under its whole footprint (ground_under,
// footprint_on_ground) between a step height above the ground under the
// search's centre (or, with none there, under its bottom) and SPOT_DROP
// below it. false when there is none in reach or in the pass's budget: the
// character then stays where it is.
bool scene_find_spot(sim_scene *sc, uint32_t self, sim_shape shape, sim_vec3 from, sim_vec3 origin, spot_cursor *cur,
                     sim_vec3 *out)
{
    scene_view v = {sc, -1, 0, false, NULL, NULL};
    sim_collider col = scene_view_collider(&v);
    const sim_move_settings *s = &sc->settings;
    sim_fx step = ring_step(shape);
    // A pile that has started to spread (its members moved a little, each
    // its own way while they waited as ghosts) is still one pile: within
    // SPOT_SAME_PILE ring steps of where the last search started, go on
    // around that point.
    sim_vec3 center = from;
    uint32_t start = 0;
    sim_fx near = (sim_fx)((int64_t)step * SPOT_SAME_PILE);
    if (cur->valid && shape_eq(cur->shape, shape)) {
        sim_vec3 d = sim_v3_sub(from, cur->from);
        if (d.x >= -near && d.x <= near && d.y >= -step && d.y <= step && d.z >= -near && d.z <= near) {
            center = cur->from;
            start = cur->next;
        }
    }
    if (start == 0) {
        if (cur->tries <= 0 || cur->budget <= 0)
            return false;
        cur->tries--;
        if (free_of_characters(sc, self, shape, from)) {
            cur->budget--;
            if (level_block(&col, shape, from) == 0) {
                *out = from;
                return true;
            }
        }
    }
    // Each ring point is dropped onto the walkable ground under it: from a
    // step height above the ground under the centre (a stair) down to
    // SPOT_DROP below it (a pile on a ledge spills onto the floor beside it).
    // A centre with no ground under it (a pile in the air) measures from its
    // bottom instead. A point with no such ground is no spot.
    sim_fx floor_y = 0;
    if (!ground_under(sc, &col, shape, center, s->step_height + s->skin, &floor_y))
        floor_y = (sim_fx)(center.y - shape.half.y);
    sim_fx rest = (sim_fx)(center.y - floor_y); // centre above the ground it stands on
    uint32_t index = 1;
    for (uint32_t k = 1; k <= SPOT_RINGS; k++) {
        uint32_t count = 6u * k;
        sim_fx r = (sim_fx)((int64_t)step * k);
        uint32_t phase = k * 0x3C6Fu; // rings start at different angles
        for (uint32_t a = 0; a < count; a++, index++) {
            if (index < start)
                continue;
            sim_angle ang = (sim_angle)(phase + (uint32_t)(((uint64_t)a << 16) / count));
            sim_vec3 q =
                sim_v3_add(center, sim_v3(sim_fx_mul(sim_angle_sin(ang), r), 0, sim_fx_mul(sim_angle_cos(ang), r)));
            // Most ring points of a pile are taken by those placed before:
            // look at the characters first, the level only for the rest.
            // (A point taken at this height is skipped even if its ground
            // lies lower: the spot found is still checked whole.)
            if (cur->tries <= 0)
                return false;
            cur->tries--;
            if (!sim_v3_in_world(q) || !free_of_characters(sc, self, shape, sim_v3_add(q, sim_v3(0, s->skin, 0))))
                continue;
            sim_vec3 top = sim_v3_add(q, sim_v3(0, s->step_height, 0));
            sim_fx g;
            if (!ground_under(sc, &col, shape, top, s->step_height + SPOT_DROP, &g) ||
                (int64_t)g > (int64_t)floor_y + s->step_height)
                continue;
            // A skin up: a shape resting exactly on a floor touches every
            // triangle under it, one a skin above meets none of them (the
            // level's tree skips them all).
            q.y = (sim_fx)((int64_t)g + rest + s->skin);
            for (int up = 0; up < 2; up++) {
                if (up)
                    q = sim_v3_add(q, sim_v3(0, s->step_height, 0));
                if (cur->tries <= 0 || cur->budget <= 0)
                    return false;
                cur->tries--;
                if (!sim_v3_in_world(q) || !free_of_characters(sc, self, shape, q))
                    break;
                cur->budget--;
                int block = level_block(&col, shape, q);
                if (block == 0) {
                    // A ray between the centres first: it turns away most
                    // spots behind a wall for a fraction of the route's cost.
                    sim_ray_input ray = {origin, sim_v3_sub(q, origin)};
                    sim_ray_result rr;
                    if (col.raycast(col.ctx, &ray, &rr))
                        break;
                    // The footprint's rays and the route's three sweeps:
                    // counted as two tests more.
                    cur->budget -= 2;
                    if (!footprint_on_ground(sc, &col, shape, q) || !route_clear(sc, &col, shape, origin, q))
                        break;
                    cursor_keep(cur, center, shape, index);
                    *out = q;
                    return true;
                }
                if (block == 2)
                    break; // a wall: one step up is no better
            }
        }
    }
    return false;
}

// ---- placing a character ------------------------------------------------------------

bool sim_scene_find_spot(sim_scene *sc, const sim_char_state *state, sim_vec3 feet, sim_vec3 *out_feet)
{
    const sim_move_settings *s = &sc->settings;
    if (!sim_v3_in_world(feet))
        return false;
    sim_char_state probe = *state;
    probe.position = feet;
    sim_shape shape = sim_char_shape(s, &probe);
    sim_vec3 center = sim_char_center(s, &probe);
    sim_vec3 offset = sim_v3_sub(center, feet);
    scene_build_platforms(sc, sc->tick, false);
    scene_bodies_fill(sc);
    scene_grid_build(sc);
    uint32_t self = GRID_NONE;
    for (uint32_t i = 0; i < sc->count; i++)
        if (sc->chars[i].id == state->id)
            self = i;
    spot_cursor cur = {0};
    cur.budget = SPOT_BUDGET;
    cur.tries = SPOT_TRIES;
    sim_vec3 c;
    if (!scene_find_spot(sc, self, shape, center, center, &cur, &c))
        return false;
    sim_vec3 f = sim_v3_sub(c, offset);
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    if (f.x < -lim || f.x > lim || f.y < -lim || f.y > lim || f.z < -lim || f.z > lim)
        return false;
    *out_feet = f;
    return true;
}

int sim_scene_place_character(sim_scene *sc, const sim_char_state *state, sim_vec3 *placed_feet)
{
    sim_char_state c = *state;
    sim_vec3 f;
    bool found = sim_scene_find_spot(sc, state, state->position, &f);
    if (found)
        c.position = f;
    if (sim_scene_add_character(sc, &c) != 0)
        return -1;
    if (placed_feet)
        *placed_feet = c.position;
    return found ? 0 : 1;
}
