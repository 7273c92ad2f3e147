// keel: character shape against character shape. MIT licence, see LICENSE.
//
// See collide_shape.h for the model. Distances along the ray are Q16.16 and
// rounded toward the start (roots with a rounded-up denominator, divisions
// truncated), so a hit can only come early.
#include "collide_shape.h"

enum { BODY_BOX, BODY_CAPSULE, BODY_PRISM };

typedef struct pair_body {
    int kind;            // BODY_*
    int64_t R;           // capsule: radius; prism: the rounding's radius
    int64_t H;           // capsule: segment half; prism: half height
    int64_t C[2];        // prism: half extents in x and z of the core the rounding goes around
    int64_t M[3];        // box: half extents
    sim_vec3 other_half; // the obstacle's own half extents (for contact points)
    sim_fx other_radius;
    int32_t other_type;
} pair_body;

static sim_vec3 box_half(sim_shape s)
{
    // A capsule's half vector is already its bounding box (x = z = radius).
    return s.half;
}

static int64_t at_least_one(int64_t v) { return v < 1 ? 1 : v; }

// A shape as a prism (a horizontal rounded rectangle swept over a height):
// the rounding's radius and the flat core's half extents. A capsule takes
// part as its bounding cylinder.
static int64_t prism_round(sim_shape s) { return s.type == SIM_SHAPE_BOX ? 0 : s.radius; }
static int64_t prism_core(sim_shape s, int k) { return s.type == SIM_SHAPE_BOX ? (k == 0 ? s.half.x : s.half.z) : 0; }

// Inlined into each caller, which then keeps only the parts of the body its
// kind uses (a body is about 90 bytes: zeroed, filled and copied out by a
// call, it took about 65 instructions each time).
#if defined(__GNUC__) || defined(__clang__)
#define BODY_INLINE inline __attribute__((always_inline))
#else
#define BODY_INLINE inline
#endif

static BODY_INLINE pair_body make_body(sim_shape a, sim_shape b, sim_fx shrink)
{
    pair_body p = {0};
    p.other_half = box_half(b);
    p.other_radius = b.radius;
    p.other_type = b.type;
    if (shrink < 0)
        shrink = 0;
    if (a.type == SIM_SHAPE_CAPSULE && b.type == SIM_SHAPE_CAPSULE) {
        p.kind = BODY_CAPSULE;
        p.R = at_least_one((int64_t)a.radius + b.radius - shrink);
        p.H = (int64_t)sim_shape_segment_half(a) + sim_shape_segment_half(b);
        return p;
    }
    if (a.type == SIM_SHAPE_CYLINDER || b.type == SIM_SHAPE_CYLINDER) {
        // Sums of the two prisms' parts: exact for two cylinders and for a
        // cylinder and a box. The shrink comes off the rounding, and off the
        // core once the rounding is used up.
        p.kind = BODY_PRISM;
        int64_t r = prism_round(a) + prism_round(b) - shrink;
        int64_t cx = prism_core(a, 0) + prism_core(b, 0), cz = prism_core(a, 1) + prism_core(b, 1);
        if (r < 1) {
            int64_t rest = 1 - r;
            r = 1;
            cx = cx > rest ? cx - rest : 0;
            cz = cz > rest ? cz - rest : 0;
        }
        p.R = r;
        p.C[0] = cx;
        p.C[1] = cz;
        p.H = at_least_one((int64_t)a.half.y + b.half.y - shrink);
        return p;
    }
    p.kind = BODY_BOX;
    sim_vec3 ha = box_half(a), hb = box_half(b);
    p.M[0] = at_least_one((int64_t)ha.x + hb.x - shrink);
    p.M[1] = at_least_one((int64_t)ha.y + hb.y - shrink);
    p.M[2] = at_least_one((int64_t)ha.z + hb.z - shrink);
    return p;
}

// A body grown by `grow` (a sweep's inflation): added to every size of its
// kind, after the shrink and the floor of one unit.
static pair_body body_grown(pair_body p, sim_fx grow)
{
    if (p.kind == BODY_CAPSULE) {
        p.R += grow;
    } else if (p.kind == BODY_PRISM) {
        p.R += grow;
        p.H += grow;
    } else {
        for (int k = 0; k < 3; k++)
            p.M[k] += grow;
    }
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

// ---- prisms: a horizontal rounded rectangle swept over a height ----------------
// The body of a pair with a cylinder: |y| <= H, and in x and z the core
// rectangle C grown by the radius R (for two round shapes C is 0: a circle).
// Depths are the smaller of the horizontal and the vertical escape, so the
// normal is horizontal or vertical; when separated, the larger of the two
// gaps (as for boxes).

static int sign_or(int64_t v, int side) { return v > 0 ? 1 : (v < 0 ? -1 : side); }

// Horizontal depth of the offset r in the rounded rectangle, and the normal:
// from the nearest core corner when beyond both core edges, else along the
// axis whose edge is nearer (x on ties).
static int64_t prism_depth_h(const pair_body *p, sim_vec3 r, int side, sim_vec3 *normal)
{
    int64_t qx = abs64(r.x) - p->C[0], qz = abs64(r.z) - p->C[1];
    int sx = sign_or(r.x, side), sz = sign_or(r.z, side);
    if (qx > 0 && qz > 0) {
        *normal = sim_v3_normalize(sim_v3((sim_fx)(sx * qx), 0, (sim_fx)(sz * qz)));
        return p->R - (int64_t)sim_isqrt_u64((uint64_t)(qx * qx + qz * qz));
    }
    if (qx >= qz) {
        *normal = axis_vec(0, sx);
        return p->R - qx;
    }
    *normal = axis_vec(2, sz);
    return p->R - qz;
}

// The obstacle's point that the contact with normal n touches (the normal
// is the truth; the point is its nearest point on the obstacle's side or top).
static sim_vec3 prism_point(const pair_body *p, sim_vec3 r, sim_vec3 other_center, sim_vec3 n)
{
    sim_vec3 h = p->other_half;
    sim_fx rad = p->other_radius;
    bool box = p->other_type == SIM_SHAPE_BOX;
    sim_vec3 q = sim_v3(0, sim_fx_clamp(r.y, -h.y, h.y), 0);
    if (n.y != 0) {
        q.y = n.y > 0 ? h.y : -h.y;
        if (box) {
            q.x = sim_fx_clamp(r.x, -h.x, h.x);
            q.z = sim_fx_clamp(r.z, -h.z, h.z);
        } else if (p->other_type == SIM_SHAPE_CYLINDER) {
            // the nearest point of the flat end (a capsule's end is its apex)
            int64_t l2 = (int64_t)r.x * r.x + (int64_t)r.z * r.z;
            if (l2 <= (int64_t)rad * rad) {
                q.x = r.x;
                q.z = r.z;
            } else {
                int64_t l = (int64_t)sim_isqrt_u64((uint64_t)l2);
                q.x = (sim_fx)((int64_t)r.x * rad / l);
                q.z = (sim_fx)((int64_t)r.z * rad / l);
            }
        }
    } else if (box) {
        q.x = n.x != 0 ? (n.x > 0 ? h.x : -h.x) : sim_fx_clamp(r.x, -h.x, h.x);
        q.z = n.z != 0 ? (n.z > 0 ? h.z : -h.z) : sim_fx_clamp(r.z, -h.z, h.z);
    } else {
        q.x = sim_fx_mul(n.x, rad);
        q.z = sim_fx_mul(n.z, rad);
    }
    return sim_v3_add(other_center, q);
}

static int64_t prism_contact(const pair_body *p, sim_vec3 w, sim_vec3 other_center, int side, sim_vec3 *normal,
                             sim_vec3 *point)
{
    int64_t dv = p->H - abs64(w.y);
    sim_vec3 nh;
    int64_t dh = prism_depth_h(p, w, side, &nh);
    // vertical on ties: a cylinder landing exactly on a rim stands on the top
    *normal = dv <= dh ? axis_vec(1, sign_or(w.y, side)) : nh;
    *point = prism_point(p, w, other_center, *normal);
    return dv <= dh ? dv : dh;
}

// Two capsules: the squared distance between their segments (w the offset
// of their centres, Q32.32) and the vertical gap between them (> 0: apart in
// height).
static int64_t capsule_dist2(const pair_body *p, sim_vec3 w, int64_t *gap)
{
    int64_t gv = abs64(w.y) - p->H;
    int64_t dh2 = (int64_t)w.x * w.x + (int64_t)w.z * w.z;
    *gap = gv;
    return gv > 0 ? dh2 + gv * gv : dh2;
}

// Depth of the point w (the shape's centre relative to the obstacle's) in the
// body, with the normal and the point on the obstacle. Never fails.
static int64_t pair_contact(const pair_body *p, sim_vec3 w, sim_vec3 other_center, int side, sim_vec3 *normal,
                            sim_vec3 *point)
{
    if (p->kind == BODY_PRISM)
        return prism_contact(p, w, other_center, side, normal, point);
    if (p->kind == BODY_CAPSULE) {
        int64_t gv; // vertical gap between the two segments
        int64_t d2 = capsule_dist2(p, w, &gv);
        sim_vec3 n;
        if (gv > 0) {
            n = sim_v3_normalize(sim_v3(w.x, (sim_fx)(w.y > 0 ? gv : -gv), w.z));
        } else {
            // Axes that coincide give no direction: the ids pick opposite
            // ones for the two characters.
            n = d2 > 0 ? sim_v3_normalize(sim_v3(w.x, 0, w.z)) : axis_vec(0, side);
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
        *point = sim_v3_add(sim_v3_add(other_center, sim_v3(0, (sim_fx)yb, 0)), sim_v3_scale(n, p->other_radius));
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
    sim_vec3 q = sim_v3(sim_fx_clamp(w.x, -h.x, h.x), sim_fx_clamp(w.y, -h.y, h.y), sim_fx_clamp(w.z, -h.z, h.z));
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
    pair_body p = make_body(a, b, 0);
    sim_vec3 w = sim_v3_sub(pa, pb);
    // Only magnitudes of the offset enter the depth, so swapping the pair
    // (negating the offset, swapping the radii or halves) gives the same value.
    int64_t d;
    if (p.kind == BODY_CAPSULE) {
        // pair_contact's depth, without the normal and point it also finds.
        int64_t gv;
        d = p.R - (int64_t)sim_isqrt_u64((uint64_t)capsule_dist2(&p, w, &gv));
    } else {
        sim_vec3 n, q;
        d = pair_contact(&p, w, pb, 1, &n, &q);
    }
    return sim_fx_from_s64_checked(d);
}

bool sim_contact_shape_obstacle(sim_shape shape, sim_vec3 pos, const sim_obstacle *o, sim_fx margin, sim_tri_hit *hit)
{
    pair_body p = make_body(shape, o->shape, o->shrink);
    sim_vec3 n, q;
    sim_vec3 w = sim_v3_sub(pos, o->center);
    int64_t m = margin < 0 ? 0 : margin;
    if (p.kind == BODY_CAPSULE) {
        // The depth is R - floor(sqrt(d2)): below -m exactly when d2 reaches
        // (R + m + 1)^2. Most pairs asked are that far apart; skip the normal.
        int64_t gv, lim = p.R + m + 1;
        if (capsule_dist2(&p, w, &gv) >= lim * lim)
            return false;
    }
    int64_t d = pair_contact(&p, w, o->center, o->side, &n, &q);
    if (d < -m)
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

static int64_t div_ceil_q30(int64_t num, int64_t den) { return -sim_div_floor_s64(-num * ((int64_t)1 << 30), den); }

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

// The part [en, ex] of the ray inside the slab |w_k + u_k s| <= M, entry
// rounded toward the start and exit away from it; false when it never is.
static bool ray_slab(int64_t wk, int64_t uk, int64_t M, int64_t *en, int64_t *ex)
{
    if (uk == 0) {
        if (wk < -M || wk > M)
            return false;
        *en = INT64_MIN;
        *ex = INT64_MAX;
        return true;
    }
    if (uk > 0) {
        *en = div_floor_q30(-M - wk, uk);
        *ex = div_ceil_q30(M - wk, uk);
    } else {
        *en = div_floor_q30(wk - M, -uk);
        *ex = div_ceil_q30(wk + M, -uk);
    }
    return true;
}

// The horizontal part of the motion, for circles: its unit direction e and
// its length |u_h| in Q2.30, rounded up and down.
typedef struct ray_h {
    sim_dir e;
    int64_t len_up, len_down; // 0: no horizontal motion at all
} ray_h;

static ray_h ray_h_make(sim_dir u)
{
    ray_h h = {{0, 0, 0}, 0, 0};
    uint64_t l2 = (uint64_t)((int64_t)u.x * u.x + (int64_t)u.z * u.z); // Q4.60
    if (l2 == 0)
        return h;
    h.e = sim_dir_from_s64(u.x, 0, u.z);
    uint64_t l = sim_isqrt_u64(l2);
    h.len_down = (int64_t)l;
    h.len_up = (int64_t)(l * l < l2 ? l + 1 : l);
    return h;
}

// The same for the vertical cylinder of radius R around the offset v (in x
// and z). The circle is solved in the horizontal plane, along the unit e, so
// a steep motion keeps the precision of a flat one; the horizontal distances
// then become distances along the ray (divided by |u_h|, rounded so that the
// entry is early and the exit late).
static bool ray_circle(int64_t vx, int64_t vz, const ray_h *h, int64_t R, int64_t *en, int64_t *ex)
{
    int64_t c = vx * vx + vz * vz - R * R; // Q32.32
    if (h->len_down == 0) {
        if (c > 0)
            return false;
        *en = INT64_MIN;
        *ex = INT64_MAX;
        return true;
    }
    int64_t b = sim_shr_round_s64((int64_t)h->e.x * vx + (int64_t)h->e.z * vz, 30);     // Q16.16
    int64_t cross = sim_shr_round_s64((int64_t)h->e.z * vx - (int64_t)h->e.x * vz, 30); // Q16.16
    if (c > 0 && b >= 0)
        return false;                                                    // outside and not closing in
    int64_t disc = cross > R || cross < -R ? -1 : R * R - cross * cross; // Q32.32
    if (disc < 0) {
        if (c > 0)
            return false;
        disc = 0; // inside: the line meets the circle, whatever the rounding says
    }
    int64_t root = -b + sim_sqrt_ceil_q32(disc); // Q16.16, the exit along e
    *ex = -sim_div_floor_s64(-root * ((int64_t)1 << 30), h->len_down);
    *en = c > 0 ? (c / root) * ((int64_t)1 << 30) / h->len_up : INT64_MIN;
    return true;
}

static void span_merge(int64_t en, int64_t ex, bool *any, int64_t *best_en, int64_t *best_ex)
{
    if (en > ex)
        return;
    if (!*any || en < *best_en)
        *best_en = en;
    if (!*any || ex > *best_ex)
        *best_ex = ex;
    *any = true;
}

// The part of the ray inside the prism's horizontal section, extruded: the
// union of the two crossed rectangles and the four corner circles. The
// union is convex, so the ray meets it in one interval: from the earliest
// entry to the latest exit of the pieces it meets.
static bool ray_rounded_rect(const pair_body *p, sim_vec3 w, sim_dir u, int64_t *en, int64_t *ex)
{
    bool any = false;
    for (int k = 0; k < 2; k++) {
        // A rectangle with no width (a cylinder's core) lies inside the circles.
        if (p->C[1 - k] == 0)
            continue;
        int64_t ex_ = p->C[0] + (k == 0 ? p->R : 0), ez_ = p->C[1] + (k == 1 ? p->R : 0);
        int64_t e1, x1, e2, x2;
        if (ray_slab(w.x, u.x, ex_, &e1, &x1) && ray_slab(w.z, u.z, ez_, &e2, &x2))
            span_merge(e1 > e2 ? e1 : e2, x1 < x2 ? x1 : x2, &any, en, ex);
    }
    ray_h h = ray_h_make(u);
    for (int sx = (p->C[0] > 0 ? -1 : 1); sx <= 1; sx += 2) {
        for (int sz = (p->C[1] > 0 ? -1 : 1); sz <= 1; sz += 2) {
            int64_t e, x;
            if (ray_circle((int64_t)w.x - sx * p->C[0], (int64_t)w.z - sz * p->C[1], &h, p->R, &e, &x))
                span_merge(e, x, &any, en, ex);
        }
    }
    return any;
}

// Entry distance of the ray into the prism around the origin, -1 when it
// misses: the entry into both the vertical slab and the horizontal section,
// if before the exit from either. *vertical tells a top or bottom entered
// (also on a tie with the side: standing on a rim).
static int64_t ray_prism(const pair_body *p, sim_vec3 w, sim_dir u, int64_t L, bool *vertical)
{
    int64_t ev = 0, xv = 0, eh = 0, xh = 0; // set by the two spans (gcc -O1 cannot see it)
    if (!ray_slab(w.y, u.y, p->H, &ev, &xv) || !ray_rounded_rect(p, w, u, &eh, &xh))
        return -1;
    int64_t en = ev >= eh ? ev : eh, ex = xv <= xh ? xv : xh;
    if (en > ex || ex < 0 || en > L)
        return -1;
    *vertical = ev >= eh && u.y != 0;
    return en < 0 ? 0 : en;
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
    pair_body real = make_body(ray->shape, o->shape, o->shrink);
    pair_body p = body_grown(real, ray->inflate);
    sim_vec3 w = sim_v3_sub(ray->start, o->center);
    int64_t s;
    int axis = 1, sign = 1;
    bool vertical = false;
    if (p.kind == BODY_PRISM)
        s = ray_prism(&p, w, ray->dir, ray->length, &vertical);
    else if (p.kind == BODY_CAPSULE)
        s = ray_capsule(w, ray->dir, ray->length, p.H, p.R);
    else
        s = ray_box(w, ray->dir, ray->length, p.M, &axis, &sign);
    if (s < 0)
        return false;
    sim_vec3 at = sim_v3_add(ray->start, sim_dir_scale(ray->dir, (sim_fx)s));
    sim_vec3 n, q;
    if (p.kind != BODY_PRISM)
        pair_contact(&real, sim_v3_sub(at, o->center), o->center, o->side, &n, &q);
    if (p.kind == BODY_PRISM) {
        sim_vec3 r = sim_v3_sub(at, o->center);
        if (vertical)
            n = axis_vec(1, ray->dir.y < 0 ? 1 : -1);
        else
            prism_depth_h(&real, r, o->side, &n);
        // A graze of the inflation whose normal rounds to along the motion:
        // no hit (a true contact enters the grown body at an angle). The
        // exact displacement, not the rounded direction, decides.
        if (sim_v3_dot64(n, ray->displacement) >= 0)
            return false;
        q = prism_point(&real, r, o->center, n);
    } else if (p.kind == BODY_BOX) {
        // The face the ray entered through, not the shallowest one there.
        n = axis_vec(axis, sign);
        sim_vec3 h = p.other_half;
        sim_vec3 r = sim_v3_sub(at, o->center);
        q = sim_v3(sim_fx_clamp(r.x, -h.x, h.x), sim_fx_clamp(r.y, -h.y, h.y), sim_fx_clamp(r.z, -h.z, h.z));
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

// The shape alone as a body around its centre (the other of the pair is a
// point), grown by `grow`.
static pair_body shape_body(sim_shape s, sim_fx grow)
{
    pair_body p = {0};
    p.other_half = s.half;
    p.other_radius = s.radius;
    p.other_type = s.type;
    if (s.type == SIM_SHAPE_CAPSULE) {
        p.kind = BODY_CAPSULE;
        p.R = (int64_t)s.radius + grow;
        p.H = sim_shape_segment_half(s);
    } else if (s.type == SIM_SHAPE_CYLINDER) {
        p.kind = BODY_PRISM;
        p.R = (int64_t)s.radius + grow;
        p.H = (int64_t)s.half.y + grow;
    } else {
        p.kind = BODY_BOX;
        p.M[0] = (int64_t)s.half.x + grow;
        p.M[1] = (int64_t)s.half.y + grow;
        p.M[2] = (int64_t)s.half.z + grow;
    }
    return p;
}

bool sim_ray_shape(sim_vec3 origin, sim_dir dir, sim_fx length, sim_shape shape, sim_vec3 center, sim_fx grow,
                   sim_tri_hit *hit)
{
    pair_body p = shape_body(shape, grow < 0 ? 0 : grow);
    sim_vec3 w = sim_v3_sub(origin, center), n, q;
    hit->feature = (sim_feature){0, SIM_FEATURE_FACE, 0};
    hit->start_overlap = false;
    hit->depth = 0;
    if (pair_contact(&p, w, center, 1, &n, &q) >= 0) {
        // Starting inside: met at once, facing the ray.
        hit->s = 0;
        hit->normal = sim_v3_neg(sim_dir_to_v3(dir));
        hit->point = origin;
        return true;
    }
    if (length <= 0)
        return false;
    // The roots' rounding grows with the distance solved over: start the
    // solve where the ray reaches the shape's bounding sphere (no point
    // before it can be inside), so a long shot is as exact as a short one.
    // The new start is off the line by at most half a unit per axis, well
    // inside the growth.
    int64_t bound = (int64_t)sim_v3_length(shape.half) + (grow < 0 ? 0 : grow) + 2;
    int64_t skip = (int64_t)sim_v3_length(w) - bound;
    if (skip > length)
        return false;
    if (skip > 0) {
        w = sim_v3_sub(sim_v3_add(origin, sim_dir_scale(dir, (sim_fx)skip)), center);
    } else {
        skip = 0;
    }
    int64_t s, rest = length - skip;
    int axis = 1, sign = 1;
    bool vertical = false;
    if (p.kind == BODY_PRISM)
        s = ray_prism(&p, w, dir, rest, &vertical);
    else if (p.kind == BODY_CAPSULE)
        s = ray_capsule(w, dir, rest, p.H, p.R);
    else
        s = ray_box(w, dir, rest, p.M, &axis, &sign);
    if (s < 0)
        return false;
    s += skip;
    sim_vec3 at = sim_v3_add(origin, sim_dir_scale(dir, (sim_fx)s));
    sim_vec3 r = sim_v3_sub(at, center);
    if (p.kind == BODY_PRISM) {
        if (vertical)
            n = axis_vec(1, dir.y < 0 ? 1 : -1);
        else
            prism_depth_h(&p, r, 1, &n);
    } else if (p.kind == BODY_CAPSULE) {
        pair_contact(&p, r, center, 1, &n, &q);
    } else {
        n = axis_vec(axis, sign);
    }
    hit->s = (sim_fx)s;
    hit->normal = n;
    hit->point = at;
    return true;
}
