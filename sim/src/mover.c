// keel: mover building blocks: collide-and-slide, depenetration, ground
// probe, step up and down. MIT licence, see LICENSE.
//
// Every position handled here is the shape's centre; the state keeps the feet.
// A skin (default 5 mm) is kept between the shape and geometry: after a hit
// the shape is pulled back along its motion until it is a skin away from the
// plane it met, so the next sweep starts free and nothing rests at zero
// distance (where rounding decides whether two things touch).
#include <stddef.h>

#include "move_internal.h"

#define MAX_CONTACTS 16
#define MAX_PLANES 5

sim_shape mover_shape(const sim_move_ctx *m) { return sim_char_shape(m->s, m->c); }
sim_vec3 mover_center(const sim_move_ctx *m) { return sim_char_center(m->s, m->c); }

void mover_set_center(sim_move_ctx *m, sim_vec3 center)
{
    sim_shape sh = mover_shape(m);
    m->c->position = sim_v3_sub(center, sim_v3(0, sh.half.y, 0));
}

bool mover_sweep(const sim_move_ctx *m, sim_shape shape, sim_vec3 center, sim_vec3 d, sim_sweep_result *r)
{
    // Validated settings keep every motion of a tick inside one query
    // (docs/ranges.md); a longer one is a bug here, not a caller's value.
    const sim_fx lim = SIM_MAX_DISPLACEMENT;
    SIM_CHECK(d.x >= -lim && d.x <= lim && d.y >= -lim && d.y <= lim && d.z >= -lim && d.z <= lim);
    (void)lim; // without KEEL_CHECKS
    sim_sweep_input in = {shape, center, d, 0};
    return m->col->sweep(m->col->ctx, &in, r);
}

sim_fx mover_overlap(const sim_move_ctx *m, sim_shape shape, sim_vec3 center)
{
    sim_contact c[1];
    sim_overlap_input in = {shape, center, 0};
    if (m->col->contacts(m->col->ctx, &in, c, 1) == 0)
        return 0;
    return c[0].depth > SIM_QUERY_TOLERANCE ? c[0].depth : 0;
}

bool mover_walkable(const sim_move_ctx *m, sim_vec3 n) { return n.y >= m->s->max_slope_cos; }

sim_vec3 mover_support(const sim_move_ctx *m, const sim_sweep_result *r, sim_fx *height)
{
    if (height)
        *height = r->point.y;
    if (r->feature.type == SIM_FEATURE_FACE || !m->col->raycast)
        return r->normal;
    // A rounded bottom resting on a step's nosing touches an edge, whose
    // normal leans; what carries the character is the top face beyond it.
    // Look straight down just past the contact, away from the shape's axis.
    sim_vec3 toward = sim_v3_sub(r->point, r->position);
    toward.y = 0;
    sim_vec3 nudge = sim_v3_scale(sim_v3_normalize(toward), SIM_FX_MM(2));
    sim_ray_input ray = {sim_v3_add(sim_v3_add(r->point, nudge), sim_v3(0, SIM_FX_MM(20), 0)),
                         sim_v3(0, -SIM_FX_MM(60), 0)};
    sim_ray_result rr;
    if (m->col->raycast(m->col->ctx, &ray, &rr) && rr.normal.y > 0) {
        if (height)
            *height = rr.point.y;
        return rr.normal;
    }
    return r->normal;
}

// ---- collide and slide -------------------------------------------------------------

static sim_vec3 clip(sim_vec3 v, sim_vec3 n)
{
    sim_fx into = sim_v3_dot(v, n);
    if (into >= 0)
        return v;
    return sim_v3_sub(v, sim_v3_scale(n, into));
}

static sim_vec3 along(sim_vec3 v, sim_vec3 dir) { return sim_v3_scale(dir, sim_v3_dot(v, dir)); }

void mover_slide(const sim_move_ctx *m, sim_shape shape, sim_vec3 *center, sim_vec3 *velocity, sim_vec3 d,
                 slide_mode mode, slide_result *out)
{
    *out = (slide_result){0};
    const sim_move_settings *s = m->s;
    sim_vec3 planes[MAX_PLANES];
    int np = 0;
    sim_vec3 c = *center, v = *velocity;
    const sim_vec3 d0 = d, v0 = v;
    int iters = s->max_slide_iterations < 4 ? 4 : s->max_slide_iterations;
    for (int it = 0; it < iters; it++) {
        if (sim_v3_len_sq64(d) < (int64_t)16 * 16) // below 0.25 mm: nothing to do
            break;
        sim_sweep_result r;
        if (!mover_sweep(m, shape, c, d, &r)) {
            c = sim_v3_add(c, d);
            d = sim_v3_zero();
            break;
        }
        sim_vec3 n = r.normal;
        sim_fx into = sim_v3_dot(d, n); // of this round's whole motion
        if (!r.start_overlap) {
            sim_fx len = sim_v3_length(d);
            sim_fx travelled = (sim_fx)(((int64_t)len * r.fraction) >> 16);
            // Back off along the motion until a skin from the plane; at
            // grazing angles cap the back-off at 16 skins.
            sim_fx cosang = -sim_v3_dot(d, n);
            cosang = (sim_fx)(((int64_t)cosang * 65536) / (len ? len : 1));
            if (cosang < SIM_FX_ONE / 16)
                cosang = SIM_FX_ONE / 16;
            sim_fx back = (sim_fx)(((int64_t)s->skin << 16) / cosang);
            if (travelled - back > s->skin / 4) {
                sim_vec3 u = sim_v3_normalize(d);
                sim_vec3 moved = sim_v3_scale(u, travelled - back);
                c = sim_v3_add(c, moved);
                d = sim_v3_sub(d, moved);
            }
            // Else stay put: moving by less than a quarter skin only trades
            // one rounding for another and shows up as jitter. Either way
            // what was not moved stays to do: clipped against the plane
            // below, its part along the plane goes on (a jump pressed into
            // a wall keeps rising at its full speed).
        }
        bool walkable = n.y >= s->max_slope_cos;
        if (walkable) {
            out->landed = true;
            out->floor_normal = n;
            // More than a quarter millimetre into it: not the rounding of a
            // motion along the ground's own plane.
            if (mode == SLIDE_GROUND && into < -16)
                out->climbed = true;
        }
        if (n.y < -SIM_FX_HALF)
            out->touched_ceiling = true;
        if (!walkable && n.y > -SIM_FX_HALF) {
            out->blocked_steep = true;
            if (!(r.feature.triangle & SIM_FEATURE_OBJECT_BIT) ||
                (int64_t)r.point.y - (r.position.y - shape.half.y) <= (int64_t)s->step_height + s->skin)
                out->blocked_riser = true;
        }
        if (!walkable && n.y > 0 && mode != SLIDE_FREE) {
            // Walking, a slope too steep to stand on is a wall: clipping on
            // its real normal would lift the character up it. Airborne, the
            // same for an edge below the centre: the legs clip on it rather
            // than ride over it -- unless the motion left after that still
            // drives into the edge (falling onto it): then it slides off.
            if (mode == SLIDE_GROUND || r.feature.type != SIM_FEATURE_FACE) {
                sim_vec3 h = sim_v3(n.x, 0, n.z);
                if (!sim_v3_is_zero(h)) {
                    sim_vec3 nh = sim_v3_normalize(h);
                    if (mode == SLIDE_GROUND || sim_v3_dot(clip(d, nh), n) >= 0)
                        n = nh;
                }
            }
        }
        // A plane met again (within about 8 degrees) is not a new one.
        bool known = false;
        for (int i = 0; i < np; i++)
            if (sim_v3_dot(planes[i], n) > SIM_FX_RATIO(99, 100))
                known = true;
        if (!known && np < MAX_PLANES)
            planes[np++] = n;
        out->planes = np;
        d = clip(d, n);
        v = clip(v, n);
        for (int i = 0; i < np; i++) {
            if (sim_v3_eq(planes[i], n) || sim_v3_dot(d, planes[i]) >= 0)
                continue;
            if (np == 2) {
                // Clipping on the new plane drives into the other: follow the
                // seam between them.
                sim_vec3 seam = sim_v3_normalize(sim_v3_cross(planes[0], planes[1]));
                d = along(d, seam);
                v = along(v, seam);
            } else {
                d = sim_v3_zero(); // a third plane: stop
                v = sim_v3_zero();
            }
            break;
        }
        if (sim_v3_dot64(d, d0) <= 0)
            d = sim_v3_zero(); // never turn back against the original motion
        if (sim_v3_dot64(v, v0) < 0)
            v = sim_v3_zero();
    }
    *center = c;
    *velocity = v;
}

// ---- depenetration -------------------------------------------------------------

static sim_fx max_depth(const sim_contact *ct, int n)
{
    sim_fx d = 0;
    for (int i = 0; i < n; i++)
        d = ct[i].depth > d ? ct[i].depth : d;
    return d;
}

static int gather(const sim_move_ctx *m, sim_shape shape, sim_vec3 center, sim_contact *ct)
{
    sim_overlap_input in = {shape, center, 0};
    int n = m->col->contacts(m->col->ctx, &in, ct, MAX_CONTACTS);
    return n > MAX_CONTACTS ? MAX_CONTACTS : n;
}

// Nudge directions for the escape policy: the 26 neighbours of a cube.
static sim_vec3 nudge_dir(int k)
{
    int i = k < 13 ? k : k + 1; // skip (0,0,0)
    sim_vec3 d = sim_v3(SIM_FX_INT(i % 3 - 1), SIM_FX_INT((i / 3) % 3 - 1), SIM_FX_INT(i / 9 - 1));
    return sim_v3_normalize(d);
}

// Move the centre by a correction, swept against the level alone (the
// world and platforms, not other characters): a push out of a crowd or out
// of a platform may only take a character where it could walk, never
// through a wall or a floor. Like the slide, a plane met clips what is left
// (up to three), and the centre stays a skin short of it. Returns the centre
// reached.
sim_vec3 mover_push_swept(const sim_collider *col, sim_fx skin, sim_shape shape, sim_vec3 center, sim_vec3 corr)
{
    sim_vec3 c = center, d = corr;
    for (int it = 0; it < 3; it++) {
        if (sim_v3_len_sq64(d) < (int64_t)16 * 16)
            break;
        sim_sweep_input in = {shape, c, d, SIM_SWEEP_LEVEL_ONLY};
        sim_sweep_result r;
        if (!col->sweep(col->ctx, &in, &r)) {
            c = sim_v3_add(c, d);
            break;
        }
        if (!r.start_overlap) {
            sim_fx len;
            sim_vec3 u = sim_v3_normalize_len(d, &len);
            sim_fx travelled = (sim_fx)(((int64_t)len * r.fraction) >> 16);
            sim_fx cosang = -sim_v3_dot(u, r.normal);
            if (cosang < SIM_FX_ONE / 16)
                cosang = SIM_FX_ONE / 16;
            sim_fx back = (sim_fx)(((int64_t)skin << 16) / cosang);
            if (travelled > back)
                c = sim_v3_add(c, sim_v3_scale(u, travelled - back));
            d = sim_v3_scale(d, SIM_FX_ONE - r.fraction);
        }
        // What is left may not go into the plane met.
        sim_fx into = sim_v3_dot(d, r.normal);
        if (into < 0)
            d = sim_v3_sub(d, sim_v3_scale(r.normal, into));
        if (sim_v3_dot64(d, corr) <= 0)
            break;
    }
    return c;
}

// Whether the shape can go from `from` to `to` in a straight line without the
// level stopping it (other characters do not count: they are pushed apart).
static bool reachable(const sim_move_ctx *m, sim_shape shape, sim_vec3 from, sim_vec3 to)
{
    sim_sweep_input in = {shape, from, sim_v3_sub(to, from), SIM_SWEEP_LEVEL_ONLY};
    sim_sweep_result r;
    return !m->col->sweep(m->col->ctx, &in, &r);
}

void mover_depenetrate(sim_move_ctx *m)
{
    const sim_move_settings *s = m->s;
    sim_shape shape = mover_shape(m);
    sim_vec3 center = mover_center(m);
    sim_contact ct[MAX_CONTACTS];
    const sim_fx tol = SIM_QUERY_TOLERANCE; // what a sweep calls an overlap
    int n = 0;
    bool clear = false;
    for (int pass = 0; pass < 4; pass++) {
        n = gather(m, shape, center, ct);
        if (max_depth(ct, n) <= tol) {
            clear = true;
            break;
        }
        // Gauss-Seidel over all contacts together: each correction sees the
        // ones before it, so two opposing walls settle on the middle instead
        // of being fought one after the other.
        sim_vec3 corr = sim_v3_zero();
        int iters = s->depen_iterations < 1 ? 1 : s->depen_iterations;
        for (int it = 0; it < iters; it++) {
            for (int i = 0; i < n; i++) {
                if (ct[i].depth <= 0)
                    continue;
                sim_fx pen = ct[i].depth + s->skin / 2 - sim_v3_dot(corr, ct[i].normal);
                if (pen > 0)
                    corr = sim_v3_add(corr, sim_v3_scale(ct[i].normal, pen));
            }
        }
        // At most half a metre a pass: a deep spawn is walked out over passes.
        sim_fx len;
        sim_vec3 dir = sim_v3_normalize_len(corr, &len);
        if (len > SIM_FX_HALF)
            corr = sim_v3_scale(dir, SIM_FX_HALF);
        sim_vec3 next = mover_push_swept(m->col, s->skin, shape, center, corr);
        if (sim_v3_eq(next, center))
            break; // the level holds it here: no pass would do better
        center = next;
    }
    if (!clear)
        n = gather(m, shape, center, ct);
    if (clear || max_depth(ct, n) <= s->skin) {
        mover_set_center(m, center);
        m->c->flags &= ~(uint32_t)SIM_CHAR_STUCK;
        m->c->stuck_ticks = 0;
        return;
    }
    // Truly stuck: try nudged positions, nearest first, and take the first
    // that is free and that the shape can reach in a straight sweep (never a
    // jump through a wall or a floor). The direction to try first comes from
    // the tick and the character id, so every machine makes the same choice
    // and two characters stuck together pick differently. When none works
    // the character stays, marked stuck, and the next tick tries again.
    static const int32_t dist_mm[] = {100, 250, 500, 1000, 2000};
    uint32_t first = (m->in->tick * 7u + m->c->id * 13u) % 26u;
    for (int di = 0; di < 5; di++) {
        for (int k = 0; k < 26; k++) {
            sim_vec3 dir = nudge_dir((int)((first + (uint32_t)k) % 26u));
            sim_vec3 p = sim_v3_add(center, sim_v3_scale(dir, SIM_FX_MM(dist_mm[di])));
            if (!sim_v3_in_world(p))
                continue;
            int pn = gather(m, shape, p, ct);
            if (max_depth(ct, pn) <= tol && reachable(m, shape, center, p)) {
                mover_set_center(m, p);
                m->c->flags &= ~(uint32_t)SIM_CHAR_STUCK;
                m->c->stuck_ticks = 0;
                return;
            }
        }
    }
    mover_set_center(m, center);
    m->c->flags |= SIM_CHAR_STUCK;
    if (m->c->stuck_ticks < UINT32_MAX)
        m->c->stuck_ticks++;
}

// ---- ground ------------------------------------------------------------------

void mover_ground_probe(sim_move_ctx *m, bool snap)
{
    const sim_move_settings *s = m->s;
    sim_char_state *c = m->c;
    sim_shape shape = mover_shape(m);
    sim_vec3 center = mover_center(m);
    sim_fx probe = 2 * s->skin + (snap ? s->step_height : 0);
    c->flags &= ~(uint32_t)(SIM_CHAR_GROUNDED | SIM_CHAR_ON_STEEP);
    c->ground = SIM_GROUND_NONE;
    c->ground_normal = sim_v3_zero();
    c->ground_object = 0;
    sim_sweep_result r;
    if (!mover_sweep(m, shape, center, sim_v3(0, -probe, 0), &r))
        return;
    sim_vec3 n = r.start_overlap ? r.normal : mover_support(m, &r, NULL);
    if (!mover_walkable(m, n)) {
        if (n.y > 0) {
            c->ground = SIM_GROUND_STEEP;
            c->ground_normal = n;
            c->flags |= SIM_CHAR_ON_STEEP;
        }
        return;
    }
    c->ground = SIM_GROUND_FLOOR;
    c->ground_normal = n;
    c->flags |= SIM_CHAR_GROUNDED;
    if (r.feature.triangle & SIM_FEATURE_OBJECT_BIT)
        c->ground_object = r.feature.triangle & ~SIM_FEATURE_OBJECT_BIT;
    if (!r.start_overlap) {
        sim_fx travelled = (sim_fx)(((int64_t)probe * r.fraction) >> 16);
        if (travelled > s->skin + s->skin / 4) {
            center.y -= travelled - s->skin; // settle a skin above the floor
            mover_set_center(m, center);
            if (travelled > 3 * s->skin)
                c->flags |= SIM_CHAR_STEPPED;
        }
    }
}

// ---- walking with steps ----------------------------------------------------------

static int64_t horizontal_dist_sq(sim_vec3 a, sim_vec3 b)
{
    sim_vec3 d = sim_v3_sub(a, b);
    d.y = 0;
    return sim_v3_len_sq64(d);
}

// The stepped move from centre c0 at velocity v0 by d: up, over, down. When
// it gets further than the plain slide's end *c1, it replaces *c1 and *v1
// and the result is true.
static bool step_up(const sim_move_ctx *m, sim_shape shape, sim_vec3 d, sim_vec3 c0, sim_vec3 v0, sim_vec3 *c1,
                    sim_vec3 *v1)
{
    const sim_move_settings *s = m->s;
    // Up, over, down, when something stopped or lifted the slide: a riser
    // too steep to walk, or walkable ground that turned the motion upward.
    // The second is a rounded bottom on a step's nosing: the edge's normal
    // leans back at a walkable angle, and sliding up it turns most of the
    // speed into climbing; the stepped move keeps the speed and rides over
    // the nosing (and a ramp's foot is crossed without the slide's loss).
    // The landing must be walkable floor no higher than a step above the
    // floor that carries us, and the stepped move is kept only when it gets
    // further, so a steep wall is never climbed in steps from any angle.
    // Rise a skin above the step height, so that a rounded bottom clears a
    // step of exactly that height.
    sim_sweep_result r;
    sim_fx rise = s->step_height + s->skin;
    sim_fx climb = rise;
    if (mover_sweep(m, shape, c0, sim_v3(0, rise, 0), &r)) {
        climb = (sim_fx)(((int64_t)rise * r.fraction) >> 16) - s->skin;
        if (r.start_overlap)
            climb = 0;
    }
    bool stepped = false;
    sim_vec3 c2 = sim_v3_add(c0, sim_v3(0, climb, 0)), v2 = v0;
    // The height a step is measured from: the floor that carries us now (a
    // rounded bottom on a nosing stands lower than that floor; measuring from
    // the feet would let it climb a tall riser in several small steps).
    sim_fx base = m->c->position.y;
    if (mover_sweep(m, shape, c0, sim_v3(0, -3 * s->skin, 0), &r) && !r.start_overlap)
        mover_support(m, &r, &base);
    if (climb > s->skin) {
        slide_result r2;
        mover_slide(m, shape, &c2, &v2, sim_v3(d.x, 0, d.z), SLIDE_GROUND, &r2);
        // Down as far as the ground probe would snap: over a nosing the
        // stepped move may end lower than it started (walking down stairs
        // from a floor touched at zero gap, where the plain slide grazes the
        // nosing and loses speed).
        sim_fx down = climb + s->step_height + 2 * s->skin;
        sim_fx land = 0;
        if (mover_sweep(m, shape, c2, sim_v3(0, -down, 0), &r) && !r.start_overlap &&
            mover_walkable(m, mover_support(m, &r, &land)) && land <= base + s->step_height + s->skin) {
            sim_fx travelled = (sim_fx)(((int64_t)down * r.fraction) >> 16);
            sim_vec3 c3 = sim_v3_sub(c2, sim_v3(0, travelled > s->skin ? travelled - s->skin : 0, 0));
            // Keep the step only if it gets further than sliding did, and no
            // higher than a step: sliding over an edge at the raised height
            // must not add to it.
            if (c3.y <= c0.y + s->step_height + s->skin &&
                horizontal_dist_sq(c3, c0) > horizontal_dist_sq(*c1, c0) + (int64_t)SIM_FX_MM(1) * SIM_FX_MM(1)) {
                *c1 = c3;
                *v1 = sim_v3(v2.x, v0.y, v2.z);
                stepped = true;
            }
        }
    }
    return stepped;
}

void mover_walk_move(sim_move_ctx *m, sim_vec3 d)
{
    const sim_move_settings *s = m->s;
    sim_shape shape = mover_shape(m);
    sim_vec3 c0 = mover_center(m), v0 = m->c->velocity;
    sim_vec3 c1 = c0, v1 = v0;
    slide_result r1;
    mover_slide(m, shape, &c1, &v1, d, SLIDE_GROUND, &r1);
    if (r1.touched_ceiling)
        m->c->flags |= SIM_CHAR_CEILING;
    // Something that could be a step stopped the slide, or walkable ground
    // lifted it (an object taller than a step is not tried as one).
    bool stepped = (r1.blocked_riser || r1.climbed) && s->step_height > 0 && !(d.x == 0 && d.z == 0) &&
                   step_up(m, shape, d, c0, v0, &c1, &v1);
    mover_set_center(m, c1);
    m->c->velocity = v1;
    if (stepped)
        m->c->flags |= SIM_CHAR_STEPPED;
    else if (r1.blocked_steep)
        m->c->flags |= SIM_CHAR_WALL; // blocked by a riser too high, a wall or a tall object
}
