// keel: pieces shared by the capsule and the cylinder against a triangle.
// MIT licence, see LICENSE. See collide_round.h.
#include "collide_round.h"

void round_consider(round_ctx *c, sim_fx s, sim_vec3 normal, uint8_t type, int index, sim_vec3 point)
{
    const sim_tri *t = c->t;
    if (sim_tri_feature_buried(t, type, index))
        return;
    bool inactive = sim_tri_feature_inactive(t, type, index);
    if (inactive) {
        // An internal edge of a flat surface: the surface's own normal is the
        // truth. A motion that leaves that surface cannot be blocked by it.
        sim_vec3 centre = sim_v3_add(c->ray->start, sim_dir_scale(c->ray->dir, s));
        sim_dir nf = sim_tri_facing_normal(t, centre, c->ray->dir);
        if (sim_dir_dot(c->ray->dir, nf) >= 0)
            return;
        normal = sim_dir_to_v3(nf);
    }
    sim_tri_hit h = {s, normal, point, {t->id, type, (uint8_t)index}, false, 0};
    if (!c->has || sim_tri_hit_before(&h, &c->best)) {
        c->best = h;
        c->has = true;
    }
}

// Ray from o against the cylinder of radius c->R around the segment
// a + e*[0, len]; the ends are left to other primitives.
void round_prim_cylinder(round_ctx *c, sim_vec3 o, sim_vec3 a, sim_dir e, sim_fx len, uint8_t type, int index)
{
    sim_vec3 w = sim_v3_sub(o, a);
    sim_fx we = sim_dir_dot_v3(e, w);
    sim_vec3 wp = sim_v3_sub(w, sim_dir_scale(e, we));
    int64_t reach = (int64_t)c->R + c->ray->length + 1;
    int64_t wp2 = sim_v3_len_sq64(wp);
    int64_t cc = wp2 - (int64_t)c->R * c->R;
    if (cc <= 0) {
        if (we >= 0 && we <= len)
            c->touching = true;
        return;
    }
    if (wp2 > reach * reach)
        return; // too far to reach: keeps every product below in range
    // The velocity across the axis, u - e (u.e), in Q2.30: at small angles to
    // the axis its length is small and Q16.16 would lose most of its bits.
    sim_dir u = c->ray->dir;
    int64_t ue30 = sim_shr_round_s64((int64_t)u.x * e.x + (int64_t)u.y * e.y + (int64_t)u.z * e.z, 30);
    int64_t px = (int64_t)u.x - sim_shr_round_s64(ue30 * e.x, 30);
    int64_t py = (int64_t)u.y - sim_shr_round_s64(ue30 * e.y, 30);
    int64_t pz = (int64_t)u.z - sim_shr_round_s64(ue30 * e.z, 30);
    // b = wp . up (Q16.16), a = |up|^2 (Q2.30); |wp| <= reach keeps both small.
    int64_t b = sim_shr_round_s64(px * wp.x + py * wp.y + pz * wp.z, 30);
    if (b >= 0)
        return;
    int64_t aa = sim_shr_round_s64(px * px + py * py + pz * pz, 30);
    // a * c in Q32.32: Q2.30 * Q16.16 (c >> 16) >> 14
    int64_t s = round_stable_root(c, b, b * b - sim_shr_round_s64(aa * sim_shr_round_s64(cc, 16), 14), cc);
    if (s < 0)
        return;
    int64_t axial = (int64_t)we + sim_shr_round_s64(ue30 * s, 30);
    if (axial < 0 || axial > len)
        return;
    sim_vec3 at = sim_v3(wp.x + (sim_fx)sim_shr_round_s64(px * s, 30), wp.y + (sim_fx)sim_shr_round_s64(py * s, 30),
                         wp.z + (sim_fx)sim_shr_round_s64(pz * s, 30));
    sim_vec3 point = sim_v3_add(a, sim_dir_scale(e, (sim_fx)axial));
    round_consider(c, (sim_fx)s, sim_v3_normalize(at), type, index, point);
}

// round_prim_cylinder for a vertical axis (e = up), with its arithmetic
// reduced: u . up is u.y, the part of w across the axis is (w.x, 0, w.z) and
// that of u is (u.x, 0, u.z), each exactly what the general form computes
// for e = up (its roundings of products by 2^30 are exact). The same result
// to the bit, without the work of a general axis; the horizontal distance
// decides first.
void round_prim_vertical(round_ctx *c, sim_vec3 o, sim_vec3 a, sim_fx len, uint8_t type, int index)
{
    sim_vec3 w = sim_v3_sub(o, a);
    int64_t wx = w.x, wz = w.z;
    int64_t reach = (int64_t)c->R + c->ray->length + 1;
    int64_t wp2 = wx * wx + wz * wz;
    int64_t cc = wp2 - (int64_t)c->R * c->R;
    sim_fx we = w.y;
    if (cc <= 0) {
        if (we >= 0 && we <= len)
            c->touching = true;
        return;
    }
    if (wp2 > reach * reach)
        return;
    sim_dir u = c->ray->dir;
    int64_t px = u.x, pz = u.z;
    int64_t b = sim_shr_round_s64(px * wx + pz * wz, 30);
    if (b >= 0)
        return;
    int64_t aa = sim_shr_round_s64(px * px + pz * pz, 30);
    int64_t s = round_stable_root(c, b, b * b - sim_shr_round_s64(aa * sim_shr_round_s64(cc, 16), 14), cc);
    if (s < 0)
        return;
    int64_t axial = (int64_t)we + sim_shr_round_s64((int64_t)u.y * s, 30);
    if (axial < 0 || axial > len)
        return;
    sim_vec3 at = sim_v3((sim_fx)(wx + sim_shr_round_s64(px * s, 30)), 0, (sim_fx)(wz + sim_shr_round_s64(pz * s, 30)));
    sim_vec3 point = sim_v3_add(a, sim_v3(0, (sim_fx)axial, 0));
    round_consider(c, (sim_fx)s, sim_v3_normalize(at), type, index, point);
}

// Distance travelled until a point at signed distance dist0 from a plane with
// unit normal n (moving along the ray) comes within `half` of it; -1 when
// never, -2 when already within.
int64_t round_slab_entry(const round_ctx *c, sim_fx dist0, sim_dir n, int64_t half, int *sign)
{
    // u . n in Q2.30: at grazing angles it is small, and its relative error
    // becomes the error of the distance.
    sim_dir u = c->ray->dir;
    int64_t vn = sim_shr_round_s64((int64_t)u.x * n.x + (int64_t)u.y * n.y + (int64_t)u.z * n.z, 30);
    int sg = dist0 > 0 ? 1 : (dist0 < 0 ? -1 : (vn > 0 ? -1 : 1));
    *sign = sg;
    int64_t d = sg > 0 ? dist0 : -(int64_t)dist0;
    if (d <= half)
        return -2;
    int64_t approach = sg > 0 ? vn : -(int64_t)vn;
    if (approach >= 0)
        return -1;
    int64_t s = ((d - half) << 30) / (-approach);
    return s > c->ray->length ? -1 : s;
}

bool round_in_triangle(const sim_tri *t, sim_vec3 q, sim_fx slack)
{
    if (slack < 0) {
        for (int i = 0; i < 3; i++)
            if (sim_dir_dot_v3(t->inward[i], sim_v3_sub(q, t->v[i])) < -slack)
                return false;
        return true;
    }
    // The same test without rounding: sim_dir_dot_v3 rounds raw =
    // inward[i] . (q - v[i]) (Q18.46; inward[i] . q - in_at[i], the same
    // integer) to nearest, ties away from zero, then saturates (which keeps
    // the order). For slack >= 0 the result is below -slack, at most
    // -slack - 1, exactly when raw <= -(slack + 1/2) 2^30 (a tie rounds
    // away from zero, to -slack - 1).
    const int64_t lim = -(2 * (int64_t)slack + 1) * ((int64_t)1 << 29);
    for (int i = 0; i < 3; i++) {
        if (sim_dir_dot_v3_raw(t->inward[i], q) - t->in_at[i] <= lim)
            return false;
    }
    return true;
}

bool round_in_triangle_each(const sim_tri *t, sim_vec3 q, const sim_fx slack[3])
{
    // round_in_triangle's exact test, edge by edge (every slack >= 0)
    for (int i = 0; i < 3; i++) {
        const int64_t lim = -(2 * (int64_t)slack[i] + 1) * ((int64_t)1 << 29);
        if (sim_dir_dot_v3_raw(t->inward[i], q) - t->in_at[i] <= lim)
            return false;
    }
    return true;
}

// Position along edge i (metres from v[i]) of the point whose horizontal
// position matches p's; false for an (almost) vertical edge.
bool round_edge_param_horizontal(const sim_tri *t, int i, sim_vec3 p, int64_t *lambda)
{
    sim_dir e = t->edir[i];
    int64_t den = ((int64_t)e.x * e.x + (int64_t)e.z * e.z) >> 30; // |e_h|^2, Q2.30
    if (den < (SIM_DIR_ONE >> 20))
        return false;
    sim_vec3 d = sim_v3_sub(p, t->v[i]);
    int64_t num = (int64_t)d.x * e.x + (int64_t)d.z * e.z; // Q18.46
    *lambda = num / den;                                   // Q16.16
    return true;
}

// The side against edge i: the vertical parallelogram edge (+) [-h, h].
void round_prim_side(round_ctx *c, sim_vec3 o, sim_fx h, int i)
{
    const sim_tri *t = c->t;
    sim_dir p = t->side[i];
    if (sim_dir_is_zero(p))
        return;
    sim_fx dist0 = sim_dir_dot_v3(p, sim_v3_sub(o, t->v[i]));
    int sg;
    int64_t s = round_slab_entry(c, dist0, p, c->R, &sg);
    sim_vec3 at = o;
    if (s == -1)
        return;
    if (s >= 0)
        at = sim_v3_add(o, sim_dir_scale(c->ray->dir, (sim_fx)s));
    int64_t lambda;
    if (!round_edge_param_horizontal(t, i, at, &lambda))
        return;
    if (lambda < 0 || lambda > t->elen[i])
        return;
    sim_vec3 point = sim_v3_add(t->v[i], sim_dir_scale(t->edir[i], (sim_fx)lambda));
    int64_t sigma = (int64_t)at.y - point.y;
    if (sigma < -(int64_t)h || sigma > h)
        return;
    if (s == -2) {
        c->touching = true;
        return;
    }
    sim_dir n = sg > 0 ? p : sim_dir_neg(p);
    round_consider(c, (sim_fx)s, sim_dir_to_v3(n), SIM_FEATURE_EDGE, i, point);
}

bool round_segment_crosses(const sim_tri *t, sim_vec3 centre, sim_fx h)
{
    sim_fx db = sim_dir_dot_v3(t->n, sim_v3_sub(sim_v3_sub(centre, sim_v3(0, h, 0)), t->v[0]));
    sim_fx dt = sim_dir_dot_v3(t->n, sim_v3_sub(sim_v3_add(centre, sim_v3(0, h, 0)), t->v[0]));
    return (db <= 0 && dt >= 0) || (db >= 0 && dt <= 0);
}
