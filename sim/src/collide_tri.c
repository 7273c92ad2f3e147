// keel: collision triangles: precomputation, closest point, ray. MIT licence.
#include "collide.h"

// sim_dir_from_s64, answered directly for a vector along an axis (most of a
// level's edges and normals): sim_dir_from_s64 scales the lone magnitude m
// into [2^29, 2^30), its root is m exactly, and (m 2^30 + m / 2) / m is
// 2^30, so the answer is +-2^30 on that axis and 0 elsewhere.
static inline sim_dir tri_dir(int64_t x, int64_t y, int64_t z)
{
    if ((x != 0) + (y != 0) + (z != 0) == 1) {
        const int32_t one = (int32_t)1 << 30;
        sim_dir d = {x > 0 ? one : (x < 0 ? -one : 0), y > 0 ? one : (y < 0 ? -one : 0),
                     z > 0 ? one : (z < 0 ? -one : 0)};
        return d;
    }
    return sim_dir_from_s64(x, y, z);
}

// sim_v3_length, answered directly along an axis: the exact root of m^2 is m.
static inline sim_fx tri_length(sim_vec3 e)
{
    int nonzero = (e.x != 0) + (e.y != 0) + (e.z != 0);
    if (nonzero == 1) {
        int64_t m = e.x != 0 ? e.x : (e.y != 0 ? e.y : e.z);
        m = m < 0 ? -m : m;
        if (m <= INT32_MAX)
            return (sim_fx)m;
    }
    return sim_v3_length(e);
}

static sim_dir cross_dir(sim_vec3 a, sim_vec3 b)
{
    int64_t x = (int64_t)a.y * b.z - (int64_t)a.z * b.y;
    int64_t y = (int64_t)a.z * b.x - (int64_t)a.x * b.z;
    int64_t z = (int64_t)a.x * b.y - (int64_t)a.y * b.x;
    return tri_dir(x, y, z);
}

// The triangle's extent along unit a measured from v[i], in Q16.16 rounded
// outward (floor of the least projection, ceiling of the greatest).
static void extent_from(const sim_tri *t, int i, sim_dir a, sim_fx *lo, sim_fx *hi)
{
    int64_t mn = 0, mx = 0; // v[i] itself
    for (int k = 0; k < 3; k++) {
        int64_t p = sim_dir_dot_v3_raw(a, sim_v3_sub(t->v[k], t->v[i])); // Q18.46
        mn = p < mn ? p : mn;
        mx = p > mx ? p : mx;
    }
    *lo = (sim_fx)sim_div_floor_s64(mn, (int64_t)1 << 30);
    *hi = (sim_fx)-sim_div_floor_s64(-mx, (int64_t)1 << 30);
}

bool sim_tri_init(sim_tri *t, sim_vec3 a, sim_vec3 b, sim_vec3 c, uint32_t id, sim_fx min_double_area)
{
    *t = (sim_tri){0};
    t->v[0] = a;
    t->v[1] = b;
    t->v[2] = c;
    t->box = sim_aabb_union(sim_aabb_union(sim_aabb_of_point(a), sim_aabb_of_point(b)), sim_aabb_of_point(c));
    t->id = id;
    sim_vec3 e[3] = {sim_v3_sub(b, a), sim_v3_sub(c, b), sim_v3_sub(a, c)};
    for (int i = 0; i < 3; i++) {
        t->elen[i] = tri_length(e[i]);
        if (t->elen[i] == 0)
            return false;
        t->edir[i] = tri_dir(e[i].x, e[i].y, e[i].z);
    }
    // Doubled area from the exact cross product: |e0 x e2| in Q32.32, compared
    // after scaling to Q16.16 m^2. Lengths are <= 2^13 m, so each cross
    // component is < 2^59 and the comparison below cannot overflow.
    sim_vec3 f = sim_v3_sub(c, a);
    int64_t cx = (int64_t)e[0].y * f.z - (int64_t)e[0].z * f.y;
    int64_t cy = (int64_t)e[0].z * f.x - (int64_t)e[0].x * f.z;
    int64_t cz = (int64_t)e[0].x * f.y - (int64_t)e[0].y * f.x;
    t->n = tri_dir(cx, cy, cz);
    if (sim_dir_is_zero(t->n))
        return false;
    // |cross| >= max component; a cheap bound first, exact only when close.
    int64_t mx = cx < 0 ? -cx : cx;
    int64_t my = cy < 0 ? -cy : cy;
    int64_t mz = cz < 0 ? -cz : cz;
    int64_t m = mx > my ? (mx > mz ? mx : mz) : (my > mz ? my : mz);
    int64_t limit = (int64_t)(min_double_area > 0 ? min_double_area : 1) << 16;
    if (m < limit) {
        // |cross| = cross . n exactly enough: n is within 2^-29 of unit.
        int64_t along = sim_shr_round_s64(cx, 16) * t->n.x + sim_shr_round_s64(cy, 16) * t->n.y +
                        sim_shr_round_s64(cz, 16) * t->n.z; // Q16.16 * Q2.30
        if ((along >> 30) < (int64_t)(min_double_area > 0 ? min_double_area : 1))
            return false;
    }
    sim_vec3 nv = sim_dir_to_v3(t->n);
    for (int i = 0; i < 3; i++) {
        t->inward[i] = cross_dir(nv, e[i]);
        // e x up = (-e.z, 0, e.x): the horizontal normal of the edge's vertical
        // parallelogram (capsule sides sliding along the edge).
        t->side[i] = tri_dir(-(int64_t)e[i].z, 0, e[i].x);
        extent_from(t, i, t->inward[i], &t->in_lo[i], &t->in_hi[i]);
        extent_from(t, i, t->side[i], &t->side_lo[i], &t->side_hi[i]);
        t->in_at[i] = sim_dir_dot_v3_raw(t->inward[i], t->v[i]);
        t->side_at[i] = (int64_t)t->side[i].x * t->v[i].x + (int64_t)t->side[i].z * t->v[i].z;
    }
    t->n_at = sim_dir_dot_v3_raw(t->n, a);
    return true;
}

bool sim_tri_hit_before(const sim_tri_hit *a, const sim_tri_hit *b)
{
    if (a->s != b->s)
        return a->s < b->s;
    if (a->start_overlap != b->start_overlap)
        return a->start_overlap; // a real overlap outranks a touch at the same place
    if (a->start_overlap && a->depth != b->depth)
        return a->depth > b->depth;
    if (a->feature.type != b->feature.type)
        return a->feature.type < b->feature.type;
    if (a->feature.triangle != b->feature.triangle)
        return a->feature.triangle < b->feature.triangle;
    return a->feature.index < b->feature.index;
}

sim_dir sim_tri_facing_normal(const sim_tri *t, sim_vec3 p, sim_dir motion)
{
    int64_t d = sim_dir_dot_v3_raw(t->n, sim_v3_sub(p, t->v[0]));
    if (d > 0)
        return t->n;
    if (d < 0)
        return sim_dir_neg(t->n);
    return sim_dir_dot(motion, t->n) > 0 ? sim_dir_neg(t->n) : t->n;
}

sim_vec3 sim_tri_closest_point(const sim_tri *t, sim_vec3 p, sim_feature *feature)
{
    sim_feature f = {t->id, SIM_FEATURE_FACE, 0};
    bool inside = true;
    for (int i = 0; i < 3; i++) {
        if (sim_dir_dot_v3(t->inward[i], sim_v3_sub(p, t->v[i])) < 0) {
            inside = false;
            break;
        }
    }
    if (inside) {
        if (feature)
            *feature = f;
        sim_fx d = sim_dir_dot_v3(t->n, sim_v3_sub(p, t->v[0]));
        return sim_v3_sub(p, sim_dir_scale(t->n, d));
    }
    int64_t best_d2 = INT64_MAX;
    sim_vec3 best = t->v[0];
    for (int i = 0; i < 3; i++) {
        sim_fx a = sim_dir_dot_v3(t->edir[i], sim_v3_sub(p, t->v[i]));
        sim_feature fi = {t->id, SIM_FEATURE_EDGE, (uint8_t)i};
        sim_vec3 q;
        if (a <= 0) {
            a = 0;
            fi.type = SIM_FEATURE_VERTEX;
            q = t->v[i];
        } else if (a >= t->elen[i]) {
            fi.type = SIM_FEATURE_VERTEX;
            fi.index = (uint8_t)((i + 1) % 3);
            q = t->v[(i + 1) % 3];
        } else {
            q = sim_v3_add(t->v[i], sim_dir_scale(t->edir[i], a));
        }
        int64_t d2 = sim_v3_len_sq64(sim_v3_sub(p, q));
        if (d2 < best_d2) {
            best_d2 = d2;
            best = q;
            f = fi;
        }
    }
    if (feature)
        *feature = f;
    return best;
}

bool sim_ray_tri(sim_vec3 origin, sim_dir dir, sim_fx length, const sim_tri *t, sim_tri_hit *hit)
{
    sim_fx dist = sim_dir_dot_v3(t->n, sim_v3_sub(origin, t->v[0]));
    sim_fx vn = sim_dir_dot(dir, t->n);
    if (vn == 0 || dist == 0)
        return false;
    if ((dist > 0) == (vn > 0))
        return false; // moving away from the plane
    int64_t num = (int64_t)(dist < 0 ? -dist : dist) << 16;
    int64_t s = num / (vn < 0 ? -vn : vn);
    if (s > length)
        return false;
    sim_vec3 q = sim_v3_add(origin, sim_dir_scale(dir, (sim_fx)s));
    // Generous by a few units so a ray through a shared edge hits one side.
    for (int i = 0; i < 3; i++)
        if (sim_dir_dot_v3(t->inward[i], sim_v3_sub(q, t->v[i])) < -4)
            return false;
    hit->s = (sim_fx)s;
    hit->normal = sim_dir_to_v3(dist > 0 ? t->n : sim_dir_neg(t->n));
    hit->point = q;
    hit->feature = (sim_feature){t->id, SIM_FEATURE_FACE, 0};
    hit->start_overlap = false;
    hit->depth = 0;
    return true;
}
