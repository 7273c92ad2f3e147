// keel: upright (axis-aligned) box against a triangle. MIT licence.
//
// Separating-axis test over the 13 candidate axes: the triangle normal, the
// box's three axes and the nine cross products of triangle edges with box
// axes. The sweep version treats each axis as a 1-D interval problem: the
// time the moving box interval starts and stops overlapping the triangle's
// interval. Times are ratios, so the axes need not be unit length: the cross
// axes are exact integer vectors and their projections exact int64 values.
// The box is grown by the inflation so that the time found is never late.
#include <stddef.h>

#include "collide.h"

typedef struct sat_axis {
    int64_t x, y, z; // axis components in its own fixed scale
    int shift;       // fraction bits of the components (16 or 30)
} sat_axis;

enum { AXIS_FACE = 0, AXIS_BOX0 = 1, AXIS_CROSS0 = 4, AXIS_COUNT = 13 };

// Axis k; false when degenerate (an edge parallel to the box axis).
static bool get_axis(const sim_tri *t, const sim_vec3 e[3], int k, sat_axis *a)
{
    if (k == AXIS_FACE) {
        *a = (sat_axis){t->n.x, t->n.y, t->n.z, 30};
        return true;
    }
    if (k < AXIS_CROSS0) {
        int b = k - AXIS_BOX0;
        *a = (sat_axis){b == 0 ? 65536 : 0, b == 1 ? 65536 : 0, b == 2 ? 65536 : 0, 16};
        return true;
    }
    int i = (k - AXIS_CROSS0) / 3;
    int b = (k - AXIS_CROSS0) % 3;
    sim_vec3 v = e[i];
    if (b == 0)
        *a = (sat_axis){0, v.z, -(int64_t)v.y, 16};
    else if (b == 1)
        *a = (sat_axis){-(int64_t)v.z, 0, v.x, 16};
    else
        *a = (sat_axis){v.y, -(int64_t)v.x, 0, 16};
    // An edge (almost) parallel to the box axis gives no usable direction:
    // |e x axis| < |e| / 1024. Dropping an axis can only add overlaps.
    int64_t l2 = a->x * a->x + a->y * a->y + a->z * a->z;
    int64_t e2 = sim_v3_len_sq64(v);
    return l2 > 0 && l2 >= (e2 >> 20);
}

static int64_t proj(const sat_axis *a, sim_vec3 w) { return a->x * w.x + a->y * w.y + a->z * w.z; }

static int64_t box_radius(const sat_axis *a, sim_vec3 half)
{
    int64_t ax = a->x < 0 ? -a->x : a->x;
    int64_t ay = a->y < 0 ? -a->y : a->y;
    int64_t az = a->z < 0 ? -a->z : a->z;
    return ax * half.x + ay * half.y + az * half.z;
}

// num/den as Q16.16, clamped to [-2, 2]; rounded down or up.
static int64_t ratio_q16(int64_t num, int64_t den, bool round_up)
{
    if (den < 0) {
        num = -num;
        den = -den;
    }
    const int64_t two = 2 * 65536;
    if (num >= 2 * den)
        return two;
    if (num <= -2 * den)
        return -two;
    while (den >= ((int64_t)1 << 45)) {
        den >>= 1;
        num = num >= 0 ? num >> 1 : -((-num) >> 1);
    }
    if (den == 0)
        return num >= 0 ? two : -two;
    int64_t n = num * 65536;
    int64_t q = sim_div_floor_s64(n, den);
    if (round_up && q * den != n)
        q += 1;
    return q;
}

static sim_dir axis_dir(const sat_axis *a) { return sim_dir_from_s64(a->x, a->y, a->z); }

// Which triangle feature touches along axis k, given the triangle lies on the
// side `lower` (its smallest projections face the box) or the other.
static sim_feature axis_feature(const sim_tri *t, int k, const int64_t p[3], bool lower)
{
    sim_feature f = {t->id, SIM_FEATURE_FACE, 0};
    if (k == AXIS_FACE)
        return f;
    if (k >= AXIS_CROSS0) {
        f.type = SIM_FEATURE_EDGE;
        f.index = (uint8_t)((k - AXIS_CROSS0) / 3);
        return f;
    }
    int64_t ext = p[0];
    for (int j = 1; j < 3; j++)
        ext = lower ? (p[j] < ext ? p[j] : ext) : (p[j] > ext ? p[j] : ext);
    int count = 0, first = -1, mask = 0;
    for (int j = 0; j < 3; j++) {
        if (p[j] == ext) {
            count++;
            mask |= 1 << j;
            if (first < 0)
                first = j;
        }
    }
    if (count == 1) {
        f.type = SIM_FEATURE_VERTEX;
        f.index = (uint8_t)first;
    } else if (count == 2) {
        f.type = SIM_FEATURE_EDGE;
        f.index = (uint8_t)(mask == 3 ? 0 : (mask == 6 ? 1 : 2));
    }
    return f;
}

bool sim_contact_box_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin, sim_tri_hit *hit)
{
    sim_vec3 e[3] = {sim_v3_sub(t->v[1], t->v[0]), sim_v3_sub(t->v[2], t->v[1]), sim_v3_sub(t->v[0], t->v[2])};
    sim_vec3 w[3] = {sim_v3_sub(t->v[0], pos), sim_v3_sub(t->v[1], pos), sim_v3_sub(t->v[2], pos)};
    int64_t best_depth = INT64_MAX;
    int best_k = -1;
    bool best_lower = false;
    sim_dir best_n = {0, 0, 0};
    int64_t best_p[3] = {0, 0, 0};
    for (int k = 0; k < AXIS_COUNT; k++) {
        sat_axis a;
        if (!get_axis(t, e, k, &a))
            continue;
        sim_dir d = a.shift == 30 ? (sim_dir){(int32_t)a.x, (int32_t)a.y, (int32_t)a.z} : axis_dir(&a);
        sat_axis u = {d.x, d.y, d.z, 30};
        int64_t p[3] = {proj(&u, w[0]), proj(&u, w[1]), proj(&u, w[2])}; // Q18.46
        int64_t lo = p[0] < p[1] ? (p[0] < p[2] ? p[0] : p[2]) : (p[1] < p[2] ? p[1] : p[2]);
        int64_t hi = p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2]) : (p[1] > p[2] ? p[1] : p[2]);
        int64_t rb = box_radius(&u, shape.half);
        int64_t push_neg = rb - lo; // move the box along -axis by this
        int64_t push_pos = hi + rb; // or along +axis by this
        bool lower = push_neg < push_pos;
        int64_t depth = lower ? push_neg : push_pos;
        if (depth < best_depth) {
            best_depth = depth;
            best_k = k;
            best_lower = lower;
            best_n = lower ? sim_dir_neg(d) : d;
            for (int j = 0; j < 3; j++)
                best_p[j] = lower ? p[j] : -p[j];
        }
    }
    if (best_k < 0)
        return false;
    int64_t depth = sim_shr_round_s64(best_depth, 30);
    if (depth < -(int64_t)margin)
        return false;
    hit->feature = axis_feature(t, best_k, best_p, true);
    (void)best_lower;
    // A buried edge or corner is still a real overlap: its axis is kept with
    // its own normal and depth (the smallest over the axes). Where the edge
    // lies in a surface that ends at it (a ramp's side edge in the wall, a
    // wall's bottom edge in the floor) that axis is the face's own within
    // rounding; dropping it lost the whole overlap.
    if (sim_tri_feature_inactive(t, hit->feature.type, hit->feature.index)) {
        // The surface's normal, the true (smallest) depth: see the capsule.
        best_n = sim_tri_facing_normal(t, pos, (sim_dir){0, -SIM_DIR_ONE, 0});
    }
    hit->s = (sim_fx)depth;
    hit->normal = sim_dir_to_v3(best_n);
    hit->point = sim_tri_closest_point(t, pos, NULL);
    hit->start_overlap = false;
    hit->depth = 0;
    return true;
}

bool sim_sweep_box_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit)
{
    sim_vec3 e[3] = {sim_v3_sub(t->v[1], t->v[0]), sim_v3_sub(t->v[2], t->v[1]), sim_v3_sub(t->v[0], t->v[2])};
    sim_vec3 w[3] = {sim_v3_sub(t->v[0], ray->start), sim_v3_sub(t->v[1], ray->start), sim_v3_sub(t->v[2], ray->start)};
    sim_vec3 half = sim_v3_add(ray->shape.half, sim_v3(ray->inflate, ray->inflate, ray->inflate));
    const int64_t one = 65536;
    int64_t enter = -2 * one, exit = 2 * one;
    int enter_k = -1;
    bool enter_pos = false; // box moving toward +axis at the entering axis
    int64_t enter_p[3] = {0, 0, 0};
    sat_axis enter_axis = {0, 0, 0, 16};
    for (int k = 0; k < AXIS_COUNT; k++) {
        sat_axis a;
        if (!get_axis(t, e, k, &a))
            continue;
        int64_t p[3] = {proj(&a, w[0]), proj(&a, w[1]), proj(&a, w[2])};
        int64_t lo = p[0] < p[1] ? (p[0] < p[2] ? p[0] : p[2]) : (p[1] < p[2] ? p[1] : p[2]);
        int64_t hi = p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2]) : (p[1] > p[2] ? p[1] : p[2]);
        int64_t rb = box_radius(&a, half);
        int64_t v = proj(&a, ray->displacement);
        int64_t lo_g = lo - rb, hi_g = hi + rb; // box centre must be within [lo_g, hi_g]
        int64_t te, tx;
        if (v == 0) {
            if (lo_g > 0 || hi_g < 0)
                return false;
            continue;
        }
        if (v > 0) {
            te = ratio_q16(lo_g, v, false);
            tx = ratio_q16(hi_g, v, true);
        } else {
            te = ratio_q16(hi_g, v, false);
            tx = ratio_q16(lo_g, v, true);
        }
        if (te > enter) {
            enter = te;
            enter_k = k;
            enter_pos = v > 0;
            enter_axis = a;
            for (int j = 0; j < 3; j++)
                enter_p[j] = p[j];
        }
        if (tx < exit)
            exit = tx;
        if (enter > exit || enter > one || exit < 0)
            return false;
    }
    if (enter_k < 0 || enter < 0) {
        // Overlapping (within the inflation) already at the start. The box
        // was grown by the inflation on each axis, which along a tilted axis
        // reaches up to sqrt(3) times as far: the contact looks that far
        // (7/4, rounded up, and two units for its own rounding), or a start
        // between the two would be neither a hit nor a sweep.
        sim_tri_hit ct;
        sim_fx look = ray->inflate + (3 * ray->inflate + 3) / 4 + 2;
        if (!sim_contact_box_tri(ray->shape, ray->start, t, look, &ct))
            return false;
        // Moving along or out of an overlap is never blocked (see the capsule).
        bool into = sim_v3_dot64(ct.normal, ray->displacement) < 0;
        if (into) {
            *hit = ct;
            hit->start_overlap = ct.s > SIM_QUERY_TOLERANCE;
            hit->depth = ct.s;
            hit->s = 0;
            return true;
        }
        return false;
    }
    sim_dir n = axis_dir(&enter_axis);
    if (enter_pos)
        n = sim_dir_neg(n);
    if (enter_k != AXIS_FACE) {
        // The side of the box meets a corner or edge that lies in a plane the
        // real box only touches (a floor at exactly the box's bottom): the
        // box cannot get into it by this motion unless it moves into the
        // plane, and then the plane is what it meets.
        sat_axis f;
        get_axis(t, e, AXIS_FACE, &f);
        int64_t pf0 = proj(&f, w[0]);
        int64_t rb = box_radius(&f, ray->shape.half);
        int64_t vf = proj(&f, ray->displacement);
        int64_t moved = sim_shr_round_s64(vf, 16) * enter;
        int64_t above = -(pf0 + rb) + moved; // box min beyond the plane (plane below the box)
        int64_t below = pf0 - rb - moved;    // box max before the plane (plane above the box)
        int64_t tol = (int64_t)SIM_QUERY_TOLERANCE << 30;
        if (above >= -tol || below >= -tol) {
            bool into = above >= -tol ? vf < 0 : vf > 0;
            if (!into)
                return false;
            n = above >= -tol ? t->n : sim_dir_neg(t->n);
            enter_k = AXIS_FACE;
        }
    }
    // the triangle's facing side: its lowest projections when the box moves +axis
    int64_t pf[3];
    for (int j = 0; j < 3; j++)
        pf[j] = enter_pos ? enter_p[j] : -enter_p[j];
    // A buried feature is met like any other (see the contact): its axis is
    // the one entered last, so the motion goes into its normal.
    sim_feature f = axis_feature(t, enter_k, pf, true);
    sim_fx s = (sim_fx)((enter * (int64_t)ray->length) >> 16);
    sim_vec3 centre = sim_v3_add(ray->start, sim_dir_scale(ray->dir, s));
    if (sim_tri_feature_inactive(t, f.type, f.index)) {
        sim_dir nf = sim_tri_facing_normal(t, centre, ray->dir);
        if (sim_dir_dot(ray->dir, nf) >= 0)
            return false;
        n = nf;
    }
    hit->s = s;
    hit->normal = sim_dir_to_v3(n);
    hit->point = sim_tri_closest_point(t, centre, NULL);
    hit->feature = f;
    hit->start_overlap = false;
    hit->depth = 0;
    return true;
}
