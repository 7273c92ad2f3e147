// keel: the parts of a tick that move characters: carrying riders with
// their platforms, and each character's own move against the snapshot (the
// step's parallel part). scene_tick.c runs them in order. MIT licence.
//
// The collider a character sees during its step is a "view": the world, the
// platforms' triangles at the tick being computed and a snapshot of every
// character's shape taken before any character's own move.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "world_near.h"
#include "scene_bodies.h"
#include <keel/sim_game.h>

// Move a rider with its platform, stopped (a skin early) by the world and
// other platforms. Characters are left out: the snapshot is taken after
// carrying, and overlaps it makes are shared out by the characters' steps.
static void carry(sim_scene *sc, sim_char_state *c, const scene_platform *p);

// A carry may not take a rider past the character range (the step would
// refuse such a state): it stops at the edge, as the step's own clamp does.
static void carry_within_range(sim_scene *sc, sim_char_state *c, const scene_platform *p)
{
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    carry(sc, c, p);
    c->position = sim_v3(sim_fx_clamp(c->position.x, -lim, lim), sim_fx_clamp(c->position.y, -lim, lim),
                         sim_fx_clamp(c->position.z, -lim, lim));
}

static void carry(sim_scene *sc, sim_char_state *c, const scene_platform *p)
{
    const sim_move_settings *s = &sc->settings;
    scene_view v = {sc, -1, p->def.id, false, NULL, NULL};
    sim_sweep_input in = {sim_char_shape(s, c), sim_char_center(s, c), p->delta, 0};
    sim_sweep_result r;
    if (!scene_view_sweep(&v, &in, &r)) {
        c->position = sim_v3_add(c->position, p->delta); // exact: the rider keeps its gap
        return;
    }
    if (r.start_overlap)
        return; // jammed already: the step's depenetration decides
    sim_fx len;
    sim_vec3 u = sim_v3_normalize_len(p->delta, &len);
    sim_fx travelled = (sim_fx)(((int64_t)len * r.fraction) >> 16);
    // Back off along the motion until a skin from the plane met, as the
    // mover does (capped at 16 skins for grazing hits).
    sim_fx cosang = -sim_v3_dot(u, r.normal);
    if (cosang < SIM_FX_ONE / 16)
        cosang = SIM_FX_ONE / 16;
    sim_fx back = (sim_fx)(((int64_t)s->skin << 16) / cosang);
    if (travelled > back)
        c->position = sim_v3_add(c->position, sim_v3_scale(u, travelled - back));
}

void scene_carry_riders(sim_scene *sc)
{
    for (uint32_t i = 0; i < sc->count; i++) {
        sim_char_state *c = &sc->chars[i];
        const scene_platform *p = scene_find_platform(sc, c->ground_object);
        c->ground_velocity = p ? p->velocity : sim_v3_zero();
        if (p && !sim_v3_is_zero(p->delta)) {
            carry_within_range(sc, c, p);
            sc->sep_clean = false;
        }
    }
}

// Character i's slots of sc->near_body (move_prepare fills them).
static uint32_t *near_list(const sim_scene *sc, uint32_t i) { return &sc->near_body[(size_t)i * BODY_NEAR_CAPACITY]; }

// How many of them hold bodies: 0 when move_prepare found too many (the
// queries then scan the broad phase).
static uint32_t near_listed(const sim_scene *sc, uint32_t i)
{
    return sc->near_count[i] <= BODY_NEAR_CAPACITY ? sc->near_count[i] : 0;
}

// Before the moves: the other solid bodies around character i's step box,
// in the broad phase's order, into its slots of sc->near_body (the move's
// body_near), and whether it is alone (scene_alone.c): no such body, or it
// passes through them as a ghost, and no platform touches the box.
static void move_prepare(sim_scene *sc, uint32_t i)
{
    const sim_char_state *c = &sc->chars[i];
    sc->alone[i] = 0;
    if (c->move_type == SIM_MOVE_FLY)
        return;
    sim_aabb box = sim_near_step_box(&sc->settings, c);
    sc->step_box[i] = box;
    uint32_t *list = near_list(sc, i);
    scene_view v = {sc, (int64_t)i, 0, true, NULL, NULL};
    body_cursor cur = bodies_in(&v, box);
    uint32_t j, n = 0;
    while (next_body(&v, box, &cur, &j)) {
        if (n == BODY_NEAR_CAPACITY) {
            n = BODY_NEAR_CAPACITY + 1; // too many: the queries scan the broad phase
            break;
        }
        list[n++] = j;
    }
    sc->near_count[i] = (uint8_t)n;
    for (uint32_t k = 0; k < sc->platform_count; k++)
        if (sim_aabb_overlaps(box, sc->platforms[k].bounds))
            return;
    sc->alone[i] = n == 0 || (sc->sep_flag[i] & SEP_FLAG_GHOST);
}

// Step character i against the snapshot. It writes only its own state, its
// own view and its own slots, and reads only what no move writes (the
// snapshot, the platforms, the world, inputs), so the moves may run in any
// order, on any threads, and compute the same states.
static void move_one(sim_scene *sc, uint32_t i)
{
    const sim_move_settings *s = &sc->settings;
    sim_char_state *c = &sc->chars[i];
    scene_view *v = &sc->views[i];
    if (scene_out(sc, i))
        return; // out of collisions (a game's): it does not move
    // The world near the character, gathered once for the step's queries
    // (world_near.h: the same answers as the whole world's).
    sim_near near;
    body_near bodies;
    sim_collider col;
    // A ghost (a character the separation could not place yet) and the
    // others pass through each other this tick (scene_separate.c).
    *v = (scene_view){sc, (int64_t)i, 0, !(sc->sep_flag[i] & SEP_FLAG_GHOST), NULL, NULL};
    if (c->move_type == SIM_MOVE_FLY) {
        col = scene_view_collider(v);
    } else {
        sim_aabb box = sc->step_box[i]; // move_prepare's: the state has not changed since
        scene_near_step(&sc->near_keep[i], sc->world, box, c->velocity, sc->dt, &near);
        v->near = &near;
        if (sc->alone[i]) {
            col = scene_alone_collider(v);
        } else {
            const uint32_t *list = near_list(sc, i);
            bodies.box = box;
            bodies.usable = sc->near_count[i] <= BODY_NEAR_CAPACITY;
            bodies.count = near_listed(sc, i);
            for (uint32_t k = 0; k < bodies.count; k++) {
                bodies.body[k] = list[k];
                bodies.shrink[k] = -1;
            }
            v->bodies_near = &bodies;
            col = scene_view_collider(v);
        }
    }
    if (!sc->water_count)
        col.in_water = NULL; // nothing is ever in water: no call at all
    sim_input in;
    if (sc->has_input[i]) {
        in = sc->inputs[i];
    } else {
        // No command: stand still, looking where the character looked.
        in = (sim_input){0};
        in.tick = sc->tick; // the tick being computed
        in.yaw = c->yaw;
        in.pitch = c->pitch;
    }
    // The scene admits only valid settings and states and keeps them
    // valid, so the step never refuses here. (Its settings were checked
    // when it was created and never change.)
    if (c->move_type >= SIM_GAME_MOVE_FIRST) {
        scene_game_move(sc, i, &col, &in); // a game's move type (scene_game_move.c)
    } else {
        bool stepped = move_step_checked_settings(&col, s, c, &in);
        SIM_CHECK(stepped);
        (void)stepped;
    }
    v->near = NULL; // they lived on this stack
    v->bodies_near = NULL;
}

// Ask the memory for what move_one(sc, i) reads first and finds cold: its
// kept neighbourhood of the world and its list of nearby bodies (written by
// move_prepare, long before). Asked for while the move before runs.
static void move_prefetch(const sim_scene *sc, uint32_t i)
{
    scene_near_prefetch(&sc->near_keep[i]);
    if (sc->alone[i])
        return;
    const uint32_t *list = near_list(sc, i);
    for (uint32_t k = 0, n = near_listed(sc, i); k < n; k += 16)
        SCENE_PREFETCH(list + k);
}

// The moves of the characters in [begin, end) whose alone mark is `alone`,
// each next one's memory asked for while the one before runs.
static void moves_run(sim_scene *sc, uint32_t begin, uint32_t end, uint8_t alone)
{
    uint32_t next = begin;
    while (next < end && sc->alone[next] != alone)
        next++;
    while (next < end) {
        uint32_t i = next;
        for (next = i + 1; next < end && sc->alone[next] != alone; next++) {
        }
        if (next < end)
            move_prefetch(sc, next);
        move_one(sc, i);
    }
}

// Step characters [begin, end). In runs over the characters, each with less
// code than a whole move, so that a run's code stays in the instruction
// cache: who is alone; the moves of those alone (the code of a move against
// the world alone); the others' moves; the bodies after the moves.
static void move_range(sim_scene *sc, uint32_t begin, uint32_t end)
{
    for (uint32_t i = begin; i < end; i++)
        move_prepare(sc, i);
    moves_run(sc, begin, end, 1);
    moves_run(sc, begin, end, 0);
    for (uint32_t i = begin; i < end; i++) {
        // What the separation pass after the moves starts from (its
        // prepare, done here on the moves' threads): the body after the
        // move, kept apart from the snapshot the other moves still read.
        scene_body_fill(sc, i, &sc->bodies_next[i]);
        sc->feet_offset[i] = sim_v3_sub(sc->bodies_next[i].center, sc->chars[i].position);
        sc->sep_flag[i] = 0;
    }
}

// The executor's task: work items [begin, end), each sc->batch characters.
void scene_move_items(void *task, uint32_t begin, uint32_t end)
{
    sim_scene *sc = task;
    uint32_t from, to;
    scene_item_range(sc, begin, end, &from, &to);
    if (from < to)
        move_range(sc, from, to);
}
