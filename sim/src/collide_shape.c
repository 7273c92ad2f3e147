// keel: character shape against character shape. MIT licence, see LICENSE.
//
// See collide_shape.h for the model. Distances along the ray are Q16.16 and
// rounded toward the start (roots with a rounded-up denominator, divisions
// truncated), so a hit can only come early.
#include "collide_shape.h"

typedef struct pair_body {
    bool capsule;   // both capsules: the Minkowski sum is a capsule
    int64_t R;      // capsule: radius
    int64_t H;      // capsule: segment half
    int64_t M[3];   // box: half extents
    sim_vec3 other_half; // the obstacle's own half extents (for contact points)
    sim_fx other_radius;
} pair_body;

static sim_vec3 box_half(sim_shape s)
{
    // A capsule's half vector is already its bounding box (x = z = radius).
    return s.half;
}

static int64_t at_least_one(int64_t v) { return v < 1 ? 1 : v; }

static pair_body make_body(sim_shape a, sim_shape b, sim_fx shrink, sim_fx grow)
{
    pair_body p = {0};
    p.other_half = box_half(b);
    p.other_radius = b.radius;
    if (shrink < 0)
        shrink = 0;
    if (a.type == SIM_SHAPE_CAPSULE && b.type == SIM_SHAPE_CAPSULE) {
        p.capsule = true;
        p.R = at_least_one((int64_t)a.radius + b.radius - shrink) + grow;
        p.H = (int64_t)sim_shape_segment_half(a) + sim_shape_segment_half(b);
        return p;
    }
    sim_vec3 ha = box_half(a), hb = box_half(b);
    p.M[0] = at_least_one((int64_t)ha.x + hb.x - shrink) + grow;
    p.M[1] = at_least_one((int64_t)ha.y + hb.y - shrink) + grow;
    p.M[2] = at_least_one((int64_t)ha.z + hb.z - shrink) + grow;
    return p;
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

static int64_t comp64(sim_vec3 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : v.z); }

static sim_vec3 axis_vec(int k, int sign)
{
    sim_fx one = sign > 0 ? SIM_FX_ONE : -SIM_FX_ONE;
    return sim_v3(k == 0 ? one : 0, k == 1 ? one : 0, k == 2 ? one : 0);
}

// Axes in tie-break order: vertical first, so a box landing exactly on a
// corner counts as standing on the top.
static const int axis_order[3] = {1, 0, 2};

// Depth of the point w (the shape's centre relative to the obstacle's) in the
// body, with the normal and the point on the obstacle. Never fails.
static int64_t pair_contact(const pair_body *p, sim_vec3 w, sim_vec3 other_center, int side,
                            sim_vec3 *normal, sim_vec3 *point)
{
    if (p->capsule) {
        int64_t ay = abs64(w.y);
        int64_t gv = ay - p->H; // vertical gap between the two segments
        int64_t dh2 = (int64_t)w.x * w.x + (int64_t)w.z * w.z;
        int64_t d2;
        sim_vec3 n;
        if (gv > 0) {
            d2 = dh2 + gv * gv;
            n = sim_v3_normalize(sim_v3(w.x, (sim_fx)(w.y > 0 ? gv : -gv), w.z));
        } else {
            d2 = dh2;
            // Axes that coincide give no direction: the ids pick opposite
            // ones for the two characters.
            n = dh2 > 0 ? sim_v3_normalize(sim_v3(w.x, 0, w.z)) : axis_vec(0, side);
        }
        int64_t dist = (int64_t)sim_isqrt_u64((uint64_t)d2);
        // Where on the obstacle's axis the contact lies: the nearest end, or
        // the middle of the height the two segments share.
        int64_t hb = p->other_half.y - p->other_radius;
        int64_t ha = p->H - hb;
        int64_t yb;
        if (gv > 0) {
            yb = w.y > 0 ? hb : -hb;
        } else {
            int64_t lo = (int64_t)w.y - ha > -hb ? (int64_t)w.y - ha : -hb;
            int64_t hi = (int64_t)w.y + ha < hb ? (int64_t)w.y + ha : hb;
            yb = lo + (hi - lo) / 2;
        }
        *normal = n;
        *point = sim_v3_add(sim_v3_add(other_center, sim_v3(0, (sim_fx)yb, 0)),
                            sim_v3_scale(n, p->other_radius));
        return p->R - dist;
    }
    int64_t best = INT64_MAX;
    int bk = 1;
    for (int i = 0; i < 3; i++) {
        int k = axis_order[i];
        int64_t o = p->M[k] - abs64(comp64(w, k));
        if (o < best) {
            best = o;
            bk = k;
        }
    }
    int64_t wk = comp64(w, bk);
    int sign = wk > 0 ? 1 : (wk < 0 ? -1 : side);
    *normal = axis_vec(bk, sign);
    // The obstacle's point nearest the centre, pushed onto the face met.
    sim_vec3 h = p->other_half;
    sim_vec3 q = sim_v3(sim_fx_clamp(w.x, -h.x, h.x), sim_fx_clamp(w.y, -h.y, h.y),
                        sim_fx_clamp(w.z, -h.z, h.z));
    sim_fx face = sign > 0 ? (sim_fx)comp64(h, bk) : -(sim_fx)comp64(h, bk);
    if (bk == 0)
        q.x = face;
    else if (bk == 1)
        q.y = face;
    else
        q.z = face;
    *point = sim_v3_add(other_center, q);
    return best;
}

sim_fx sim_shape_pair_depth(sim_shape a, sim_vec3 pa, sim_shape b, sim_vec3 pb)
{
    pair_body p = make_body(a, b, 0, 0);
    sim_vec3 n, q;
    // Only magnitudes of the offset enter the depth, so swapping the pair
    // (negating the offset, swapping the radii or halves) gives the same value.
    int64_t d = pair_contact(&p, sim_v3_sub(pa, pb), pb, 1, &n, &q);
    return sim_fx_from_s64_checked(d);
}

bool sim_contact_shape_obstacle(sim_shape shape, sim_vec3 pos, const sim_obstacle *o,
                                sim_fx margin, sim_tri_hit *hit)
{
    pair_body p = make_body(shape, o->shape, o->shrink, 0);
    sim_vec3 n, q;
    int64_t d = pair_contact(&p, sim_v3_sub(pos, o->center), o->center, o->side, &n, &q);
    if (d < -(int64_t)(margin < 0 ? 0 : margin))
        return false;
    hit->s = sim_fx_from_s64_checked(d);
    hit->normal = n;
    hit->point = q;
    hit->feature = (sim_feature){o->feature, SIM_FEATURE_FACE, 0};
    hit->start_overlap = false;
    hit->depth = 0;
    return true;
}


// The discriminant of the entry quadratic, a R^2 - |w x u|^2 in Q32.32 (by
// Lagrange's identity equal to b^2 - a c): both terms are of the size of R^2,
// where b^2 and a c are of the size of the distance squared and cancel, which
// would multiply the rounding of b by the distance. The cross product keeps
// 20 fraction bits. `cross` holds its components in Q18.46; -1 when the line
// passes further than R from the axis (or point).
static int64_t discriminant(const int64_t cross[3], int64_t a, int64_t R)
{
    int64_t lim = (R + 1) << 4, sq = 0;
    for (int k = 0; k < 3; k++) {
        int64_t c20 = sim_shr_round_s64(cross[k], 26); // Q16.20
        if (c20 > lim || c20 < -lim)
            return -1;
        sq += c20 * c20; // Q32.40, below 2^54 each
    }
    return sim_shr_round_s64(a * sim_shr_round_s64(R * R, 12), 18) - sim_shr_round_s64(sq, 8);
}

// Entry distance of the ray w + u s (s in [0, L]) into the upright capsule
// around the origin; -1 when it misses. The start is known to be outside.
static int64_t ray_capsule(sim_vec3 w, sim_dir u, int64_t L, int64_t H, int64_t R)
{
    int64_t best = -1;
    int64_t reach = R + L + 1;
    // The side: the vertical cylinder, as a 2-D circle in x and z.
    int64_t wh2 = (int64_t)w.x * w.x + (int64_t)w.z * w.z;
    int64_t c = wh2 - R * R;
    if (c > 0 && wh2 <= reach * reach) {
        int64_t b = sim_shr_round_s64((int64_t)u.x * w.x + (int64_t)u.z * w.z, 30); // Q16.16
        if (b < 0) {
            // |u_h|^2 in Q2.30: small for a nearly vertical motion, so kept
            // in 30 bits (the triangle cylinder does the same).
            int64_t a = sim_shr_round_s64((int64_t)u.x * u.x + (int64_t)u.z * u.z, 30);
            int64_t cross[3] = {0, (int64_t)u.z * w.x - (int64_t)u.x * w.z, 0};
            int64_t disc = discriminant(cross, a, R);
            if (disc >= 0) {
                int64_t s = c / (-b + sim_sqrt_ceil_q32(disc));
                if (s <= L) {
                    int64_t y = (int64_t)w.y + sim_shr_round_s64((int64_t)u.y * s, 30);
                    if (y >= -H && y <= H)
                        best = s;
                }
            }
        }
    }
    // The ends: spheres at +-H (one when the segment is a point).
    for (int k = 0; k < (H > 0 ? 2 : 1); k++) {
        sim_vec3 v = sim_v3(w.x, (sim_fx)((int64_t)w.y - (k == 0 ? -H : H)), w.z);
        int64_t v2 = sim_v3_len_sq64(v);
        int64_t cc = v2 - R * R;
        if (cc <= 0 || v2 > reach * reach)
            continue;
        int64_t b = sim_shr_round_s64(sim_dir_dot_v3_raw(u, v), 30);
        if (b >= 0)
            continue;
        int64_t cross[3] = {(int64_t)u.z * v.y - (int64_t)u.y * v.z, (int64_t)u.x * v.z - (int64_t)u.z * v.x,
                            (int64_t)u.y * v.x - (int64_t)u.x * v.y};
        int64_t disc = discriminant(cross, SIM_DIR_ONE, R); // |u| = 1 within 2^-29
        if (disc < 0)
            continue;
        int64_t s = cc / (-b + sim_sqrt_ceil_q32(disc));
        if (s <= L && (best < 0 || s < best))
            best = s;
    }
    return best;
}

static int64_t div_floor_q30(int64_t num, int64_t den) { return sim_div_floor_s64(num * ((int64_t)1 << 30), den); }

static int64_t div_ceil_q30(int64_t num, int64_t den)
{
    return -sim_div_floor_s64(-num * ((int64_t)1 << 30), den);
}

// Entry distance of the ray into the box of half extents M around the
// origin (slabs); -1 when it misses. *axis and *sign give the face entered.
static int64_t ray_box(sim_vec3 w, sim_dir u, int64_t L, const int64_t M[3], int *axis, int *sign)
{
    int64_t enter = INT64_MIN, exit = INT64_MAX;
    int ek = 1, es = 1;
    for (int i = 0; i < 3; i++) {
        int k = axis_order[i];
        int64_t uk = k == 0 ? u.x : (k == 1 ? u.y : u.z);
        int64_t wk = comp64(w, k);
        if (uk == 0) {
            if (wk < -M[k] || wk > M[k])
                return -1;
            continue;
        }
        int64_t te, tx;
        if (uk > 0) {
            te = div_floor_q30(-M[k] - wk, uk);
            tx = div_ceil_q30(M[k] - wk, uk);
        } else {
            te = div_floor_q30(wk - M[k], -uk);
            tx = div_ceil_q30(wk + M[k], -uk);
        }
        if (te > enter) {
            enter = te;
            ek = k;
            es = uk > 0 ? -1 : 1;
        }
        if (tx < exit)
            exit = tx;
    }
    if (enter == INT64_MIN || enter > exit || exit < 0 || enter > L)
        return -1;
    *axis = ek;
    *sign = es;
    return enter < 0 ? 0 : enter;
}

bool sim_sweep_shape_obstacle(const sim_sweep_ray *ray, const sim_obstacle *o, sim_tri_hit *hit)
{
    // Touching or overlapping at the start. Unlike a triangle, the body is
    // convex: a motion that does not go deeper (away, or along its side)
    // can only leave it, so it is free even from a real overlap. Blocking it
    // would strand two characters left a fraction of a millimetre inside each
    // other (below the mover's depenetration threshold, above the overlap
    // flag): neither could fall or step away.
    sim_tri_hit ct;
    if (sim_contact_shape_obstacle(ray->shape, ray->start, o, ray->inflate, &ct)) {
        if (sim_v3_dot64(ct.normal, sim_dir_to_v3(ray->dir)) >= 0)
            return false;
        *hit = ct;
        hit->start_overlap = ct.s > SIM_QUERY_TOLERANCE;
        hit->depth = ct.s;
        hit->s = 0;
        return true;
    }
    if (ray->length <= 0)
        return false;
    pair_body p = make_body(ray->shape, o->shape, o->shrink, ray->inflate);
    sim_vec3 w = sim_v3_sub(ray->start, o->center);
    int64_t s;
    int axis = 1, sign = 1;
    if (p.capsule)
        s = ray_capsule(w, ray->dir, ray->length, p.H, p.R);
    else
        s = ray_box(w, ray->dir, ray->length, p.M, &axis, &sign);
    if (s < 0)
        return false;
    sim_vec3 at = sim_v3_add(ray->start, sim_dir_scale(ray->dir, (sim_fx)s));
    pair_body real = make_body(ray->shape, o->shape, o->shrink, 0);
    sim_vec3 n, q;
    pair_contact(&real, sim_v3_sub(at, o->center), o->center, o->side, &n, &q);
    if (!p.capsule) {
        // The face the ray entered through, not the shallowest one there.
        n = axis_vec(axis, sign);
        sim_vec3 h = p.other_half;
        sim_vec3 r = sim_v3_sub(at, o->center);
        q = sim_v3(sim_fx_clamp(r.x, -h.x, h.x), sim_fx_clamp(r.y, -h.y, h.y),
                   sim_fx_clamp(r.z, -h.z, h.z));
        sim_fx face = sign > 0 ? (sim_fx)comp64(h, axis) : -(sim_fx)comp64(h, axis);
        if (axis == 0)
            q.x = face;
        else if (axis == 1)
            q.y = face;
        else
            q.z = face;
        q = sim_v3_add(o->center, q);
    }
    hit->s = (sim_fx)s;
    hit->normal = n;
    hit->point = q;
    hit->feature = (sim_feature){o->feature, SIM_FEATURE_FACE, 0};
    hit->start_overlap = false;
    hit->depth = 0;
    return true;
}
