// keel: the character snapshot's broad phase as the queries and the moves
// walk it (scene_view.c builds it): private to the scene, inline so that the
// hot queries keep calling it without a call. MIT licence, see LICENSE.
#ifndef KEEL_SCENE_BODIES_H
#define KEEL_SCENE_BODIES_H

#include "scene_internal.h"

// Character i's body from its current state.
static inline void scene_body_fill(const sim_scene *sc, uint32_t i, scene_body *b)
{
    const sim_move_settings *s = &sc->settings;
    b->id = sc->chars[i].id;
    b->shape = sim_char_shape(s, &sc->chars[i]);
    b->center = sim_char_center(s, &sc->chars[i]);
    b->bounds = sim_shape_bounds(b->shape, b->center);
    b->solid = sc->chars[i].move_type != SIM_MOVE_FLY && !scene_out(sc, i);
}

// The first sorted slot whose body can reach `lo` along the sort axis.
static inline uint32_t bodies_from(const sim_scene *sc, int64_t lo)
{
    int64_t key = lo - sc->max_width;
    // A lower bound without a branch on the keys (a conditional move in
    // each halving: the keys met are in no order a predictor could learn).
    uint32_t base = 0, n = sc->count;
    if (n == 0)
        return 0;
    while (n > 1) {
        uint32_t half = n / 2;
        base = sc->keys[base + half] < key ? base + half : base;
        n -= half;
    }
    return base + (sc->keys[base] < key);
}

// The other character j as an obstacle for the view's owner. `shrink`, when
// not NULL, keeps the shrink of the pair for the rest of the move (-1: not
// known yet): it depends only on the two snapshot bodies.
static inline sim_obstacle obstacle(const scene_view *v, uint32_t j, sim_fx *shrink)
{
    const sim_scene *sc = v->scene;
    const scene_body *o = &sc->bodies[j];
    sim_obstacle ob;
    ob.shape = o->shape;
    ob.center = o->center;
    ob.feature = SIM_FEATURE_OBJECT_BIT | o->id;
    ob.shrink = 0;
    ob.side = -1;
    if (v->self >= 0) {
        const scene_body *me = &sc->bodies[v->self];
        ob.side = me->id < o->id ? -1 : 1;
        if (shrink && *shrink >= 0) {
            ob.shrink = *shrink;
            return ob;
        }
        // Each of a pair overlapping at the start of the tick sees the other
        // smaller by half the overlap: each resolves its half, and asking
        // again after moving does not hand it the other half as well.
        sim_fx d = sim_shape_pair_depth(me->shape, me->center, o->shape, o->center);
        ob.shrink = d > 0 ? d / 2 : 0;
        if (shrink)
            *shrink = ob.shrink;
    }
    return ob;
}

// The other solid characters whose bounds touch `box`, from the sorted broad
// phase: start with bodies_in, then take them one by one with next_body.
typedef struct body_cursor {
    uint32_t slot;
    int64_t hi;
    body_near *list; // non-NULL: take the bodies from this list
} body_cursor;

// Where the shrink of the body next_body just took is kept (NULL: nowhere).
static inline sim_fx *cursor_shrink(const body_cursor *c) { return c->list ? &c->list->shrink[c->slot - 1] : NULL; }

static inline body_cursor bodies_in(const scene_view *v, sim_aabb box)
{
    const sim_scene *sc = v->scene;
    body_near *bn = v->bodies_near;
    if (bn && bn->usable && scene_box_inside(box, bn->box))
        return (body_cursor){0, 0, bn};
    body_cursor c = {bodies_from(sc, sim_v3_comp(box.min, sc->sort_axis)), sim_v3_comp(box.max, sc->sort_axis), NULL};
    return c;
}

static inline bool body_wanted(const scene_view *v, sim_aabb box, uint32_t j)
{
    const sim_scene *sc = v->scene;
    return (int64_t)j != v->self && sc->bodies[j].solid && sim_aabb_overlaps(box, sc->bodies[j].bounds);
}

static inline bool next_body(const scene_view *v, sim_aabb box, body_cursor *c, uint32_t *body)
{
    const sim_scene *sc = v->scene;
    if (c->list) {
        // Every body that touches box touches the list's larger box: the
        // same test over the list finds the same bodies, in the same order.
        for (; c->slot < c->list->count; c->slot++) {
            uint32_t j = c->list->body[c->slot];
            if (!body_wanted(v, box, j))
                continue;
            c->slot++;
            *body = j;
            return true;
        }
        return false;
    }
    // The other horizontal axis first, from the sorted copy: a body whose
    // bounds miss the box there is not wanted (sim_aabb_overlaps), and the
    // test reads no body.
    int other = 2 - sc->sort_axis;
    sim_fx olo = sim_v3_comp(box.min, other), ohi = sim_v3_comp(box.max, other);
    for (; c->slot < sc->count && sc->keys[c->slot] <= c->hi; c->slot++) {
        // One branch, mostly taken (most bodies along the sort axis miss
        // on the other), rather than two at random.
        if ((sc->span[2 * c->slot] > ohi) | (sc->span[2 * c->slot + 1] < olo))
            continue;
        uint32_t j = sc->order[c->slot];
        if (!body_wanted(v, box, j))
            continue;
        c->slot++;
        *body = j;
        return true;
    }
    return false;
}

#endif
