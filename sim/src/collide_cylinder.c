// keel: upright cylinder against a triangle. MIT licence, see LICENSE.
//
// Sweep. A cylinder is the vertical segment S = [-H, H] grown by a horizontal
// disc D of radius R. Its centre touches triangle T when it enters
// K = T (+) S (+) D. T (+) S is the capsule's polytope (collide_capsule.c): the
// faces T+H and T-H and the three vertical parallelograms edge_i (+) S. Grown
// by a flat disc instead of a ball, its boundary lies in these primitives:
//   - the side against an edge or a corner, exactly as for the capsule
//     (collide_round.c), plus a whole vertical edge as one vertical cylinder;
//   - an end against the face: T+-H thickened by R along the horizontal part
//     of the normal (a level triangle stays flat: its rim is the next two);
//   - an end's rim against an edge: edge (+) D, a cylinder around the edge
//     whose section is an ellipse, thin when the edge is nearly level (the
//     flat bottom over a stair's nosing). It is solved in coordinates where
//     the ellipse is a circle, scaled so that rounding never grows with the
//     thinness;
//   - an end against a corner: a horizontal disc of radius R at the vertex.
// Each primitive is a subset of K, so a hit is never a ghost; R and H are
// both grown by the inflation, so a hit is never late.
//
// Contact. Separating axes with the cylinder's exact support (H |n.y| +
// R |n_h|): the face normal, the vertical, the edges' horizontal normals, the
// horizontal directions to the corners, and for every edge and corner the
// direction in which the rims meet them. The axis with the largest
// separation gives the depth (an upper bound of the true depth when
// overlapping, a lower bound of the distance when apart) and the normal.
#include <stddef.h>

#include "collide_round.h"

// Below this thickness (Q16.16) an edge's rim ellipse is left to the
// neighbouring slabs, which contain it up to that much.
#define RIM_MIN_THICKNESS 4
// Below this half thickness (Q16.16, about 1 mm) of an end's face slab the
// face counts as nearly level (sim_sweep_cylinder_tri).
#define NEAR_LEVEL_THICKNESS 64
// An end meets a sloping face at the rim's point down the slope, R along the
// horizontal normal's direction, which turns by angle / |n_h| between two
// faces folded by `angle`. Across a fold flatter than SIM_FOLD_FLAT_ANGLE
// (an inactive edge that no sweep solves: at most 2^-12.5 radians) the two
// faces' points lie up to R 2^-12 / |n_h| apart, and the disc could land
// between them, on the edge, unseen by both. Where that can exceed twice
// SIM_QUERY_TOLERANCE (the slack each face allows), |n_h| < R 2^13 with
// |n_h| in Q2.30 and R in Q16.16, the face counts as nearly level too.
#define FLAT_RIM_SHIFT 13

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// |n_h| of a unit direction, Q2.30.
static int64_t horizontal_len(sim_dir n)
{
    return (int64_t)sim_isqrt_u64((uint64_t)((int64_t)n.x * n.x + (int64_t)n.z * n.z));
}

// Length of the vector (x, y) in its own scale, for components of any size.
static int64_t len2(int64_t x, int64_t y)
{
    uint64_t ax = (uint64_t)abs64(x), ay = (uint64_t)abs64(y);
    uint64_t m = ax > ay ? ax : ay;
    int shift = 0;
    while ((m >> shift) >= ((uint64_t)1 << 31))
        shift++;
    ax >>= shift;
    ay >>= shift;
    return (int64_t)sim_isqrt_u64(ax * ax + ay * ay) << shift;
}

// An end (the bottom when lift = +H: the centre sits H above the triangle)
// against the face: the slab of half thickness R |n_h| around T + lift,
// entered where the disc's edge point along the slope meets the face. A
// slab thinner than RIM_MIN_THICKNESS is taken as the plane itself (the
// triangle is level within that): the rims at its edges cover the rest.
static void prim_end_face(round_ctx *c, sim_fx lift, int64_t nh)
{
    const sim_tri *t = c->t;
    sim_vec3 o = sim_v3_sub(c->ray->start, sim_v3(0, lift, 0));
    sim_fx dist0 = sim_dir_dot_v3(t->n, sim_v3_sub(o, t->v[0]));
    int64_t half = ((int64_t)c->R * nh + ((int64_t)1 << 30) - 1) >> 30;
    bool level = half < RIM_MIN_THICKNESS;
    if (level)
        half = 0;
    int sg;
    int64_t s = round_slab_entry(c, dist0, t->n, half, &sg);
    if (s == -1)
        return;
    sim_vec3 q = s >= 0 ? sim_v3_add(o, sim_dir_scale(c->ray->dir, (sim_fx)s)) : o;
    sim_fx slack = SIM_QUERY_TOLERANCE;
    if (!level) {
        // Back onto the plane along the slope's horizontal direction h. At
        // an entry the point is on a face of the slab, R from the plane along
        // h: exact. Inside (touching) it is d / |n_h| along h, whose rounding
        // grows as the slope flattens: the test is widened by that much (the
        // contact then decides).
        sim_dir h = sim_dir_from_s64(t->n.x, 0, t->n.z);
        int64_t along;
        if (s >= 0) {
            along = sg > 0 ? c->R : -(int64_t)c->R;
        } else {
            along = (int64_t)sim_dir_dot_v3(t->n, sim_v3_sub(q, t->v[0])) * ((int64_t)1 << 30) / nh;
            slack = (sim_fx)(slack + c->R / half + 2);
        }
        q = sim_v3_sub(q, sim_dir_scale(h, (sim_fx)along));
    }
    if (!round_in_triangle(t, q, slack))
        return;
    if (s == -2) {
        c->touching = true;
        return;
    }
    sim_dir n = sg > 0 ? t->n : sim_dir_neg(t->n);
    round_consider(c, (sim_fx)s, sim_dir_to_v3(n), SIM_FEATURE_FACE, 0, q);
}

// The frame of edge i for the rim: side = the horizontal normal, m = the unit
// vector perpendicular to the edge and to side, pointing up. A point at
// offset w from the edge has beta = side . w and mu = m . w; it lies in
// edge (+) D when beta^2 + (mu / e.y)^2 <= R^2 (and its position along the
// edge, (e . w) + |e_h| mu / e.y, is on the edge).
typedef struct rim_frame {
    sim_dir e, side, m;
    int64_t dy; // e.y, Q2.30
    int64_t dh; // |e_h|, Q2.30
} rim_frame;

static bool rim_frame_make(const sim_tri *t, int i, rim_frame *f)
{
    f->e = t->edir[i];
    f->side = t->side[i];
    if (sim_dir_is_zero(f->side))
        return false;
    f->dy = f->e.y;
    f->dh = horizontal_len(f->e);
    if (f->dh == 0)
        return false;
    f->m.x = (int32_t)(-(f->dy * f->e.x) / f->dh);
    f->m.y = (int32_t)f->dh;
    f->m.z = (int32_t)(-(f->dy * f->e.z) / f->dh);
    return true;
}

// The outward normal of the rim ellipse at scaled coordinates (beta, nu),
// both within +-16 m: the gradient of beta^2 + (mu / e.y)^2, times e.y^2.
static sim_vec3 rim_normal(const rim_frame *f, int64_t beta, int64_t nu)
{
    int64_t a = sim_shr_round_s64(f->dy * beta, 20); // Q6.26
    int64_t b = nu * 1024;                           // Q6.26
    if (f->dy < 0) {
        a = -a;
        b = -b;
    }
    sim_dir n = sim_dir_from_s64(a * f->side.x + b * f->m.x, a * f->side.y + b * f->m.y, a * f->side.z + b * f->m.z);
    return sim_dir_to_v3(n);
}

// A (nearly) level edge: edge (+) D is then a flat strip (its ends are the
// corners' discs), taken as the slab |mu| <= rho over the edge, |beta| <= R.
// It exceeds the ellipse by less than RIM_MIN_THICKNESS.
static void prim_rim_level(round_ctx *c, const rim_frame *f, sim_vec3 w, int64_t rho, int i)
{
    int64_t mu0 = sim_shr_round_s64(sim_dir_dot_v3_raw(f->m, w), 30);
    int sg;
    int64_t s = round_slab_entry(c, (sim_fx)mu0, f->m, rho, &sg);
    if (s == -1)
        return;
    sim_vec3 at = s >= 0 ? sim_v3_add(w, sim_dir_scale(c->ray->dir, (sim_fx)s)) : w;
    int64_t beta = sim_dir_dot_v3(f->side, at);
    int64_t lambda = sim_dir_dot_v3(f->e, at);
    if (abs64(beta) > c->R || lambda < 0 || lambda > c->t->elen[i])
        return;
    if (s == -2) {
        c->touching = true;
        return;
    }
    sim_vec3 point = sim_v3_add(c->t->v[i], sim_dir_scale(f->e, (sim_fx)lambda));
    sim_dir n = sg > 0 ? f->m : sim_dir_neg(f->m);
    round_consider(c, (sim_fx)s, sim_dir_to_v3(n), SIM_FEATURE_EDGE, i, point);
}

// Normals of the rim ellipse (semi-axes A along side, B = A |e.y| along m)
// at the points of its outer half (m pointing `up` = +1 or -1: the bottom
// rim's ellipse bounds the body from above) that see (beta, mu) (Q16.16,
// within +-32 m) along their normal: for a point outside the nearest one,
// for a point inside possibly several (one of them is the nearest boundary
// point; the separating-axis test keeps the best). A normal
// n = (1 - tau, tau) in the point's quarter has the support point p(n);
// g(tau) = (w - p(n)) x n vanishes there. Sign changes of g over eight
// samples are refined by bisection. No division by e.y, so a flat ellipse is
// as precise as a round one.
typedef struct rim_solver {
    int64_t A, B, ab, am, d2;
} rim_solver;

static int64_t rim_g(const rim_solver *r, int64_t tau)
{
    int64_t nx = 65536 - tau, ny = tau;
    int64_t anx = (r->A * nx) >> 16, bny = (r->B * ny) >> 16;
    int64_t S = (int64_t)sim_isqrt_u64((uint64_t)(anx * anx + bny * bny));
    int64_t term = S > 0 ? (((r->d2 * nx) >> 16) * ny >> 16) / S : 0;
    return ((r->ab * ny) >> 16) - sim_shr_round_s64(r->am * nx, 16) - term;
}

static int rim_axes(const rim_frame *f, int64_t A, int64_t beta, int64_t mu, int up, sim_dir out[4])
{
    rim_solver r = {A, (A * abs64(f->dy)) >> 30, abs64(beta), up > 0 ? mu : -mu, 0};
    r.d2 = r.A * r.A - r.B * r.B;
    int count = 0;
    int64_t prev_tau = 0, prev_g = rim_g(&r, 0);
    for (int k = 1; k <= 8 && count < 4; k++) {
        int64_t tau = k * 8192, g = rim_g(&r, tau);
        if ((prev_g < 0) != (g < 0) || (k == 8 && count == 0)) {
            int64_t lo = prev_tau, hi = tau;
            bool rising = prev_g < 0;
            for (int it = 0; it < 13; it++) {
                int64_t mid = (lo + hi) / 2;
                if ((rim_g(&r, mid) < 0) == rising)
                    lo = mid;
                else
                    hi = mid;
            }
            int64_t t = (lo + hi) / 2;
            int64_t nx = beta < 0 ? -(65536 - t) : 65536 - t, ny = up > 0 ? t : -t;
            out[count++] = sim_dir_from_s64(nx * f->side.x + ny * f->m.x, nx * f->side.y + ny * f->m.y,
                                            nx * f->side.z + ny * f->m.z);
        }
        prev_tau = tau;
        prev_g = g;
    }
    return count;
}

// An end's rim (lift as in prim_end_face) against edge i.
static void prim_rim_edge(round_ctx *c, sim_fx lift, int i)
{
    const sim_tri *t = c->t;
    const sim_sweep_ray *ray = c->ray;
    rim_frame f;
    if (!rim_frame_make(t, i, &f))
        return;
    int64_t R = c->R, L = ray->length;
    int64_t rho = (R * abs64(f.dy)) >> 30; // the ellipse's half thickness
    if (rho < RIM_MIN_THICKNESS) {
        prim_rim_level(c, &f, sim_v3_sub(ray->start, sim_v3_add(t->v[i], sim_v3(0, lift, 0))), rho, i);
        return;
    }
    sim_vec3 a = sim_v3_add(t->v[i], sim_v3(0, lift, 0));
    sim_vec3 w = sim_v3_sub(ray->start, a);
    int64_t beta0 = sim_shr_round_s64(sim_dir_dot_v3_raw(f.side, w), 30);
    if (abs64(beta0) > R + L)
        return;
    int64_t mu0 = sim_dir_dot_v3_raw(f.m, w); // Q18.46
    int64_t amu = abs64(sim_shr_round_s64(mu0, 30));
    if (amu > rho + L)
        return;
    sim_dir u = ray->dir;
    int64_t ub = sim_shr_round_s64((int64_t)u.x * f.side.x + (int64_t)u.z * f.side.z, 30);
    int64_t um = sim_shr_round_s64((int64_t)u.x * f.m.x + (int64_t)u.y * f.m.y + (int64_t)u.z * f.m.z, 30);
    // Until |mu| <= rho the ray cannot be inside; solving from there keeps
    // nu = mu / e.y of the size of R however thin the ellipse.
    int64_t s0 = 0;
    if (amu > rho) {
        if ((mu0 > 0 && um >= 0) || (mu0 < 0 && um <= 0))
            return;
        s0 = ((amu - rho) << 30) / abs64(um);
        if (s0 > L)
            return;
    }
    int64_t beta = beta0 + sim_shr_round_s64(ub * s0, 30);
    int64_t nu = (mu0 + um * s0) / f.dy; // Q16.16
    int64_t cc = beta * beta + nu * nu - R * R;
    int64_t s = s0;
    if (cc > 0) {
        // The motion in scaled coordinates: (ub, um / e.y), Q2.30.
        int64_t vb = ub, vn = um * ((int64_t)1 << 30) / f.dy;
        sim_dir v = sim_dir_from_s64(vb, vn, 0);
        if (sim_dir_is_zero(v))
            return;
        int64_t b = sim_shr_round_s64(beta * v.x + nu * v.y, 30);
        if (b >= 0)
            return;
        int64_t cross = sim_shr_round_s64(beta * v.y - nu * v.x, 30);
        int64_t disc = R * R - cross * cross;
        if (disc < 0)
            return;
        int64_t sigma = cc / (-b + sim_sqrt_ceil_q32(disc)); // along the scaled direction
        s = s0 + sigma * ((int64_t)1 << 30) / len2(vb, vn);
        // The hit's coordinates from the scaled solution itself: recomputed
        // from the rounded position, nu = mu / e.y would carry mu's rounding
        // times 1 / e.y.
        beta += sim_shr_round_s64(sigma * v.x, 30);
        nu += sim_shr_round_s64(sigma * v.y, 30);
    } else if (s0 == 0) {
        // Inside at the start: whether it is on the edge decides touching.
        int64_t lambda = sim_dir_dot_v3(f.e, w) + sim_shr_round_s64(f.dh * nu, 30);
        if (lambda >= 0 && lambda <= t->elen[i])
            c->touching = true;
        return;
    }
    if (s > L)
        return;
    // Along the edge: e . (w + s u) + |e_h| nu.
    int64_t eu = sim_shr_round_s64((int64_t)u.x * f.e.x + (int64_t)u.y * f.e.y + (int64_t)u.z * f.e.z, 30);
    int64_t lambda = sim_shr_round_s64(sim_dir_dot_v3_raw(f.e, w) + eu * s, 30) + sim_shr_round_s64(f.dh * nu, 30);
    if (lambda < 0 || lambda > t->elen[i])
        return;
    sim_vec3 point = sim_v3_add(t->v[i], sim_dir_scale(f.e, (sim_fx)lambda));
    round_consider(c, (sim_fx)s, rim_normal(&f, beta, nu), SIM_FEATURE_EDGE, i, point);
}

// An end (lift as in prim_end_face) against corner i: a horizontal disc.
static void prim_end_corner(round_ctx *c, sim_fx lift, int i)
{
    const sim_sweep_ray *ray = c->ray;
    sim_vec3 centre = sim_v3_add(c->t->v[i], sim_v3(0, lift, 0));
    sim_vec3 o = ray->start;
    int64_t dy0 = (int64_t)o.y - centre.y, uy = ray->dir.y;
    int64_t R2 = (int64_t)c->R * c->R;
    int64_t s = 0;
    if (dy0 != 0) {
        if ((dy0 > 0 && uy >= 0) || (dy0 < 0 && uy <= 0))
            return;
        s = (abs64(dy0) << 30) / abs64(uy);
        if (s > ray->length)
            return;
    }
    sim_vec3 at = sim_v3_add(o, sim_dir_scale(ray->dir, (sim_fx)s));
    int64_t dx = (int64_t)at.x - centre.x, dz = (int64_t)at.z - centre.z;
    if (dx * dx + dz * dz > R2)
        return;
    if (dy0 == 0) {
        c->touching = true;
        return;
    }
    round_consider(c, (sim_fx)s, sim_v3(0, dy0 > 0 ? SIM_FX_ONE : -SIM_FX_ONE, 0), SIM_FEATURE_VERTEX, i, c->t->v[i]);
}

static bool feature_live(const sim_tri *t, int type, int i) { return !sim_tri_feature_skipped(t, type, i); }

bool sim_sweep_cylinder_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit)
{
    round_ctx c = {ray, t, ray->shape.radius + ray->inflate, false, false, {0}, false, {0}};
    sim_fx H = ray->shape.half.y + ray->inflate;
    int64_t nh = horizontal_len(t->n);
    // The whole swept cylinder on one side of the plane, beyond its reach.
    {
        int64_t ny = abs64(t->n.y);
        int64_t reach = (((int64_t)c.R * nh + (int64_t)H * ny) >> 30) + 2;
        int64_t d0 = sim_dir_dot_v3(t->n, sim_v3_sub(ray->start, t->v[0]));
        int64_t d1 = d0 + sim_dir_dot_v3(t->n, ray->displacement);
        if ((d0 > reach && d1 > reach) || (d0 < -reach && d1 < -reach))
            return false;
    }
    bool edge_live[3], vert_live[3], edge_end[3], vert_end[3];
    // A nearly level face (not level: see prim_end_face) meets an end at
    // the rim's point down its slope, whose direction turns wildly between
    // neighbours that are flat with each other within SIM_FOLD_FLAT_ANGLE:
    // the faces around an internal edge or corner can all miss a disc that
    // lands on it. There the ends solve internal edges and corners too
    // (hits on them report the face normal); buried ones stay skipped.
    int64_t slab = ((int64_t)c.R * nh + ((int64_t)1 << 30) - 1) >> 30;
    bool near_level =
        slab >= RIM_MIN_THICKNESS && (slab < NEAR_LEVEL_THICKNESS || nh < ((int64_t)c.R << FLAT_RIM_SHIFT));
    for (int i = 0; i < 3; i++) {
        edge_live[i] = feature_live(t, SIM_FEATURE_EDGE, i);
        vert_live[i] = feature_live(t, SIM_FEATURE_VERTEX, i);
        edge_end[i] = edge_live[i] || (near_level && !sim_tri_feature_buried(t, SIM_FEATURE_EDGE, i));
        vert_end[i] = vert_live[i] || (near_level && !sim_tri_feature_buried(t, SIM_FEATURE_VERTEX, i));
    }
    for (int k = 0; k < 2; k++) {
        sim_fx lift = k == 0 ? H : -H;
        prim_end_face(&c, lift, nh);
        for (int i = 0; i < 3; i++) {
            if (edge_end[i])
                prim_rim_edge(&c, lift, i);
            if (vert_end[i])
                prim_end_corner(&c, lift, i);
        }
    }
    for (int i = 0; i < 3; i++) {
        if (edge_live[i]) {
            if (!sim_dir_is_zero(t->side[i])) {
                round_prim_side(&c, ray->start, H, i);
            } else {
                // A vertical edge: the side against all of it.
                sim_vec3 lo = t->v[i];
                if (t->edir[i].y < 0)
                    lo = t->v[(i + 1) % 3];
                round_prim_vertical(&c, ray->start, sim_v3_sub(lo, sim_v3(0, H, 0)), t->elen[i] + 2 * H,
                                    SIM_FEATURE_EDGE, i);
            }
        }
        if (vert_live[i])
            round_prim_vertical(&c, ray->start, sim_v3_sub(t->v[i], sim_v3(0, H, 0)), 2 * H, SIM_FEATURE_VERTEX, i);
    }
    if (round_segment_crosses(t, ray->start, H))
        c.touching = true;
    if (c.touching) {
        // Growing R and H by the inflation e grows the cylinder by up to
        // e * sqrt(2) at its rims, so the contact looks that far (1.5 e).
        sim_tri_hit ct;
        if (sim_contact_cylinder_tri(ray->shape, ray->start, t, ray->inflate + (ray->inflate + 1) / 2, &ct))
            return sim_tri_hit_from_touch(ray, &ct, hit);
    }
    if (c.has)
        *hit = c.best;
    return c.has;
}

// ---- contact -----------------------------------------------------------------

typedef struct sat_best {
    bool has;
    int64_t sep; // separation along the axis (negative: overlap)
    sim_dir n;   // from the triangle toward the cylinder
    uint8_t type;
    int index;
} sat_best;

typedef struct sat_ctx {
    const sim_tri *t;
    sim_vec3 pos;
    int64_t R, H;
    sim_vec3 rel[3]; // vertices relative to pos
    sat_best best;
} sat_ctx;

// Try axis n (unit); nh = |n_h|. True when it is the best so far.
static bool sat_axis(sat_ctx *x, sim_dir n, int64_t nh, uint8_t type, int index)
{
    if (sim_dir_is_zero(n))
        return false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int k = 0; k < 3; k++) {
        int64_t p = sim_shr_round_s64(sim_dir_dot_v3_raw(n, x->rel[k]), 30);
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
    }
    // The cylinder's reach along n, rounded up.
    int64_t ext = (x->H * abs64(n.y) + x->R * nh + ((int64_t)1 << 30) - 1) >> 30;
    int64_t above = lo - ext;  // the triangle on the +n side
    int64_t below = -ext - hi; // on the -n side
    int64_t sep = above > below ? above : below;
    if (x->best.has && sep <= x->best.sep)
        return false;
    x->best.has = true;
    x->best.sep = sep;
    x->best.n = above > below ? sim_dir_neg(n) : n;
    x->best.type = type;
    x->best.index = index;
    return true;
}

// The vertical axis stands for the face on a level triangle, else for the
// highest or lowest corner (or the level edge between two).
static void sat_vertical(sat_ctx *x)
{
    static const sim_dir up = {0, SIM_DIR_ONE, 0};
    const sim_tri *t = x->t;
    if (horizontal_len(t->n) == 0) {
        sat_axis(x, up, 0, SIM_FEATURE_FACE, 0);
        return;
    }
    if (sat_axis(x, up, 0, SIM_FEATURE_VERTEX, 0)) {
        bool below = x->best.n.y > 0; // the triangle under the cylinder: its top corner
        int k = 0;
        for (int i = 1; i < 3; i++)
            if (below ? t->v[i].y > t->v[k].y : t->v[i].y < t->v[k].y)
                k = i;
        x->best.index = k;
        for (int i = 0; i < 3; i++) {
            if (i != k && t->v[i].y == t->v[k].y) {
                // a level edge: k and i are neighbours; name the edge
                int e = (k + 1) % 3 == i ? k : i;
                x->best.type = SIM_FEATURE_EDGE;
                x->best.index = e;
            }
        }
    }
}

// The triangle's corners nearest the cylinder along the best axis (within
// SUPPORT_TIE of the nearest): one names a corner, two an edge. True (and
// the best axis renamed) when that feature is live; false when it is
// internal or the whole face.
#define SUPPORT_TIE 4
static bool support_relabel(sat_ctx *x)
{
    int64_t p[3], top = INT64_MIN;
    for (int k = 0; k < 3; k++) {
        p[k] = sim_shr_round_s64(sim_dir_dot_v3_raw(x->best.n, x->rel[k]), 30);
        top = p[k] > top ? p[k] : top;
    }
    int count = 0, first = -1, last = -1;
    for (int k = 0; k < 3; k++)
        if (p[k] >= top - SUPPORT_TIE) {
            count++;
            first = first < 0 ? k : first;
            last = k;
        }
    uint8_t type;
    int index;
    if (count == 1) {
        type = SIM_FEATURE_VERTEX;
        index = first;
    } else if (count == 2) {
        type = SIM_FEATURE_EDGE;
        index = (first + 1) % 3 == last ? first : last; // edge i runs from v[i] to v[i + 1]
    } else {
        return false;
    }
    if (sim_tri_feature_inactive(x->t, type, index))
        return false;
    x->best.type = type;
    x->best.index = index;
    return true;
}

bool sim_contact_cylinder_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin, sim_tri_hit *hit)
{
    if (margin < 0)
        margin = 0;
    sat_ctx x = {t, pos, shape.radius, shape.half.y, {{0, 0, 0}}, {false, 0, {0, 0, 0}, 0, 0}};
    for (int k = 0; k < 3; k++)
        x.rel[k] = sim_v3_sub(t->v[k], pos);
    sat_axis(&x, t->n, horizontal_len(t->n), SIM_FEATURE_FACE, 0);
    if (x.best.sep > margin)
        return false;
    sat_vertical(&x);
    for (int i = 0; i < 3; i++)
        sat_axis(&x, t->side[i], SIM_DIR_ONE, SIM_FEATURE_EDGE, i);
    if (x.best.sep > margin)
        return false;
    for (int i = 0; i < 3; i++) {
        sim_vec3 r = x.rel[i];
        sat_axis(&x, sim_dir_from_s64(r.x, 0, r.z), SIM_DIR_ONE, SIM_FEATURE_VERTEX, i);
    }
    for (int k = 0; k < 2; k++) {
        sim_fx lift = k == 0 ? (sim_fx)x.H : -(sim_fx)x.H; // bottom rim, then top
        for (int i = 0; i < 3; i++) {
            // The rim against edge i: the normal at the rim ellipse's point
            // nearest the centre (the exact axis when they meet there).
            rim_frame f;
            if (rim_frame_make(t, i, &f)) {
                sim_vec3 w = sim_v3_sub(pos, sim_v3_add(t->v[i], sim_v3(0, lift, 0)));
                int64_t beta = sim_shr_round_s64(sim_dir_dot_v3_raw(f.side, w), 30);
                int64_t mu = sim_shr_round_s64(sim_dir_dot_v3_raw(f.m, w), 30);
                int64_t lim = (int64_t)SIM_SHAPE_MAX_SIZE * 2;
                if (abs64(beta) <= lim && abs64(mu) <= lim) {
                    sim_dir n[4];
                    int count = rim_axes(&f, x.R, beta, mu, lift > 0 ? 1 : -1, n);
                    for (int a = 0; a < count; a++)
                        sat_axis(&x, n[a], horizontal_len(n[a]), SIM_FEATURE_EDGE, i);
                }
            }
            // The rim against corner i: from the rim's nearest point.
            sim_vec3 r = x.rel[i];
            sim_dir h = sim_dir_from_s64(r.x, 0, r.z);
            if (!sim_dir_is_zero(h)) {
                sim_vec3 rim = sim_v3_add(sim_dir_scale(h, (sim_fx)x.R), sim_v3(0, -lift, 0));
                sim_dir n = sim_dir_from_v3(sim_v3_sub(r, rim));
                sat_axis(&x, n, horizontal_len(n), SIM_FEATURE_VERTEX, i);
            }
        }
    }
    if (x.best.has && x.best.sep < 0) {
        // Overlapping: in a corner's vertical plane (through the axis) the
        // cylinder is a rectangle and the triangle a triangle; the deepest
        // escape in that plane may also be across a triangle edge.
        for (int i = 0; i < 3; i++) {
            sim_vec3 r = x.rel[i];
            sim_dir h = sim_dir_from_s64(r.x, 0, r.z);
            if (sim_dir_is_zero(h))
                continue;
            for (int k = 0; k < 3; k++) {
                sim_vec3 e = sim_v3_sub(t->v[(k + 1) % 3], t->v[k]);
                int64_t eh = sim_dir_dot_v3(h, e); // the edge in the plane: (eh, e.y)
                int64_t a = -(int64_t)e.y, b = eh; // its normal there
                sim_dir n = sim_dir_from_s64(a * h.x, b * SIM_DIR_ONE, a * h.z);
                sat_axis(&x, n, horizontal_len(n), SIM_FEATURE_VERTEX, i);
            }
        }
        // In an edge's perpendicular plane the triangle is a segment from
        // the edge to the opposite corner; the rims against that corner.
        for (int i = 0; i < 3; i++) {
            rim_frame f;
            if (!rim_frame_make(t, i, &f))
                continue;
            for (int k = 0; k < 2; k++) {
                sim_fx lift = k == 0 ? (sim_fx)x.H : -(sim_fx)x.H;
                sim_vec3 w = sim_v3_sub(pos, sim_v3_add(t->v[(i + 2) % 3], sim_v3(0, lift, 0)));
                int64_t beta = sim_shr_round_s64(sim_dir_dot_v3_raw(f.side, w), 30);
                int64_t mu = sim_shr_round_s64(sim_dir_dot_v3_raw(f.m, w), 30);
                int64_t lim = (int64_t)SIM_SHAPE_MAX_SIZE * 2;
                if (abs64(beta) > lim || abs64(mu) > lim)
                    continue;
                sim_dir n[4];
                int count = rim_axes(&f, x.R, beta, mu, lift > 0 ? 1 : -1, n);
                for (int a = 0; a < count; a++)
                    sat_axis(&x, n[a], horizontal_len(n[a]), SIM_FEATURE_VERTEX, (i + 2) % 3);
            }
        }
    }
    // A buried edge or corner is reported like any other: an overlap is
    // never dropped (only the sweeps skip it, where a surface covers it).
    if (!x.best.has || x.best.sep > margin)
        return false;
    sim_vec3 normal = sim_dir_to_v3(x.best.n);
    // On an internal edge or corner the surface's own normal is the truth;
    // the depth stays the one found. An axis is named after the feature it
    // was built from, which need not be where the triangle meets it (the
    // horizontal axis toward one corner can rest on another): when that
    // feature is internal, the corners nearest along the axis decide, and a
    // live one keeps the axis (the sweeps' start test relies on it).
    if (sim_tri_feature_inactive(t, x.best.type, x.best.index) && !support_relabel(&x))
        normal = sim_dir_to_v3(sim_tri_facing_normal(t, pos, (sim_dir){0, -SIM_DIR_ONE, 0}));
    // The point of the triangle nearest the cylinder's deepest point.
    sim_dir nh = sim_dir_from_s64(x.best.n.x, 0, x.best.n.z);
    sim_vec3 deep = sim_v3_sub(pos, sim_dir_scale(nh, (sim_fx)x.R));
    if (x.best.n.y > 0)
        deep.y -= (sim_fx)x.H;
    else if (x.best.n.y < 0)
        deep.y += (sim_fx)x.H;
    hit->s = sim_fx_from_s64_checked(-x.best.sep);
    hit->normal = normal;
    hit->point = sim_tri_closest_point(t, deep, NULL);
    hit->feature = (sim_feature){t->id, x.best.type, (uint8_t)x.best.index};
    hit->start_overlap = false;
    hit->depth = 0;
    return true;
}
