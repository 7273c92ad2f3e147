// keel tests: double-precision reference geometry. MIT licence.
#include "ref_geom.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

// fmax and fmin are calls into libm in strict C (NaN rules): these inline.
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }

rv3 rv3_from(sim_vec3 v) { return (rv3){v.x / 65536.0, v.y / 65536.0, v.z / 65536.0}; }
rv3 rv3_add(rv3 a, rv3 b) { return (rv3){a.x + b.x, a.y + b.y, a.z + b.z}; }
rv3 rv3_sub(rv3 a, rv3 b) { return (rv3){a.x - b.x, a.y - b.y, a.z - b.z}; }
rv3 rv3_scale(rv3 a, double s) { return (rv3){a.x * s, a.y * s, a.z * s}; }
double rv3_dot(rv3 a, rv3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
rv3 rv3_cross(rv3 a, rv3 b) { return (rv3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
double rv3_len(rv3 a) { return sqrt(rv3_dot(a, a)); }

// Region-based closest point (Voronoi regions of vertices, edges, face).
rv3 ref_closest_on_tri(rv3 p, rv3 a, rv3 b, rv3 c)
{
    rv3 ab = rv3_sub(b, a), ac = rv3_sub(c, a), ap = rv3_sub(p, a);
    double d1 = rv3_dot(ab, ap), d2 = rv3_dot(ac, ap);
    if (d1 <= 0 && d2 <= 0)
        return a;
    rv3 bp = rv3_sub(p, b);
    double d3 = rv3_dot(ab, bp), d4 = rv3_dot(ac, bp);
    if (d3 >= 0 && d4 <= d3)
        return b;
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0)
        return rv3_add(a, rv3_scale(ab, d1 / (d1 - d3)));
    rv3 cp = rv3_sub(p, c);
    double d5 = rv3_dot(ab, cp), d6 = rv3_dot(ac, cp);
    if (d6 >= 0 && d5 <= d6)
        return c;
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0)
        return rv3_add(a, rv3_scale(ac, d2 / (d2 - d6)));
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
        return rv3_add(b, rv3_scale(rv3_sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
    double denom = 1.0 / (va + vb + vc);
    double v = vb * denom, w = vc * denom;
    return rv3_add(a, rv3_add(rv3_scale(ab, v), rv3_scale(ac, w)));
}

static double clamp01(double v) { return v < 0 ? 0 : (v > 1 ? 1 : v); }

double ref_seg_seg_dist2(rv3 p1, rv3 q1, rv3 p2, rv3 q2)
{
    rv3 d1 = rv3_sub(q1, p1), d2 = rv3_sub(q2, p2), r = rv3_sub(p1, p2);
    double a = rv3_dot(d1, d1), e = rv3_dot(d2, d2), f = rv3_dot(d2, r);
    double s, t;
    if (a <= 1e-18 && e <= 1e-18) {
        s = t = 0;
    } else if (a <= 1e-18) {
        s = 0;
        t = clamp01(f / e);
    } else {
        double c = rv3_dot(d1, r);
        if (e <= 1e-18) {
            t = 0;
            s = clamp01(-c / a);
        } else {
            double b = rv3_dot(d1, d2);
            double den = a * e - b * b;
            s = den > 1e-18 ? clamp01((b * f - c * e) / den) : 0;
            t = (b * s + f) / e;
            if (t < 0) {
                t = 0;
                s = clamp01(-c / a);
            } else if (t > 1) {
                t = 1;
                s = clamp01((b - c) / a);
            }
        }
    }
    rv3 c1 = rv3_add(p1, rv3_scale(d1, s)), c2 = rv3_add(p2, rv3_scale(d2, t));
    rv3 dd = rv3_sub(c1, c2);
    return rv3_dot(dd, dd);
}

double ref_seg_tri_dist(rv3 p0, rv3 p1, rv3 a, rv3 b, rv3 c)
{
    // Segment through the triangle?
    rv3 n = rv3_cross(rv3_sub(b, a), rv3_sub(c, a));
    double d0 = rv3_dot(n, rv3_sub(p0, a)), d1 = rv3_dot(n, rv3_sub(p1, a));
    if ((d0 <= 0 && d1 >= 0) || (d0 >= 0 && d1 <= 0)) {
        if (d0 != d1) {
            rv3 x = rv3_add(p0, rv3_scale(rv3_sub(p1, p0), d0 / (d0 - d1)));
            rv3 q = ref_closest_on_tri(x, a, b, c);
            if (rv3_len(rv3_sub(q, x)) < 1e-12)
                return 0;
        }
    }
    double best = 1e300;
    rv3 q = ref_closest_on_tri(p0, a, b, c);
    double d = rv3_dot(rv3_sub(q, p0), rv3_sub(q, p0));
    best = d < best ? d : best;
    q = ref_closest_on_tri(p1, a, b, c);
    d = rv3_dot(rv3_sub(q, p1), rv3_sub(q, p1));
    best = d < best ? d : best;
    rv3 v[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        d = ref_seg_seg_dist2(p0, p1, v[i], v[(i + 1) % 3]);
        best = d < best ? d : best;
    }
    return sqrt(best);
}

static double box_tri_gap(rv3 half, rv3 pos, rv3 a, rv3 b, rv3 c)
{
    rv3 v[3] = {rv3_sub(a, pos), rv3_sub(b, pos), rv3_sub(c, pos)};
    rv3 e[3] = {rv3_sub(v[1], v[0]), rv3_sub(v[2], v[1]), rv3_sub(v[0], v[2])};
    rv3 axes[13];
    int n = 0;
    axes[n++] = rv3_cross(e[0], rv3_sub(v[2], v[0]));
    axes[n++] = (rv3){1, 0, 0};
    axes[n++] = (rv3){0, 1, 0};
    axes[n++] = (rv3){0, 0, 1};
    for (int i = 0; i < 3; i++) {
        rv3 bx[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        for (int k = 0; k < 3; k++)
            axes[n++] = rv3_cross(e[i], bx[k]);
    }
    double gap = -1e300;
    for (int k = 0; k < n; k++) {
        double l = rv3_len(axes[k]);
        if (l < 1e-9)
            continue;
        rv3 u = rv3_scale(axes[k], 1.0 / l);
        double p0 = rv3_dot(u, v[0]), p1 = rv3_dot(u, v[1]), p2 = rv3_dot(u, v[2]);
        double lo = dmin(p0, dmin(p1, p2)), hi = dmax(p0, dmax(p1, p2));
        double r = half.x * fabs(u.x) + half.y * fabs(u.y) + half.z * fabs(u.z);
        double g = dmax(lo - r, -r - hi);
        if (g > gap)
            gap = g;
    }
    return gap;
}

// ---- cylinder ---------------------------------------------------------------------
//
// The signed gap between convex sets is the largest separation over unit
// directions n, sep(n) = min_T n.(v - c) - h(n), with the cylinder's support
// h(n) = H |n.y| + R |n_horizontal|. The best direction is normal to both
// sets at the closest (or deepest) pair, so it lies in one of these families:
// the face normal, the vertical, the horizontal directions (side or side
// line against anything), the directions perpendicular to a triangle edge
// (edge against rim) and, for a vertex, the vertical plane through the axis
// and that vertex (vertex against rim). Each family is the projection onto a
// line or plane, and the best separation in it is the 2-D signed distance
// of the projections: exact for the polygons (disc and triangle seen from
// above, rectangle and triangle in a vertex's plane), searched numerically
// for the ellipse of an edge's plane.

#define REF_PI 3.14159265358979323846
#define REF_SQRT1_2 0.70710678118654752440

typedef struct rv2 {
    double x, y;
} rv2;

static double seg2_dist(rv2 p, rv2 a, rv2 b)
{
    double dx = b.x - a.x, dy = b.y - a.y;
    double l2 = dx * dx + dy * dy;
    double t = l2 > 0 ? clamp01(((p.x - a.x) * dx + (p.y - a.y) * dy) / l2) : 0;
    double ex = a.x + t * dx - p.x, ey = a.y + t * dy - p.y;
    return sqrt(ex * ex + ey * ey);
}

static void proj2(const rv2 *p, int n, double ax, double ay, double *lo, double *hi)
{
    *lo = 1e300;
    *hi = -1e300;
    for (int i = 0; i < n; i++) {
        double d = p[i].x * ax + p[i].y * ay;
        *lo = dmin(*lo, d);
        *hi = dmax(*hi, d);
    }
}

// Signed distance between two convex polygons (vertices in order around; a
// point or a segment is fine): the distance when apart, else minus the
// smallest overlap over the edge normals (exact for polygons). Edge
// directions are tried too: they are the separating axes of degenerate ones.
static double poly2_gap(const rv2 *a, int na, const rv2 *b, int nb)
{
    double sat = -1e300;
    for (int side = 0; side < 2; side++) {
        const rv2 *p = side ? b : a;
        int n = side ? nb : na;
        for (int i = 0; n > 1 && i < n; i++) {
            double dx = p[(i + 1) % n].x - p[i].x, dy = p[(i + 1) % n].y - p[i].y;
            double l = sqrt(dx * dx + dy * dy);
            if (l < 1e-15)
                continue;
            double axes[2][2] = {{-dy / l, dx / l}, {dx / l, dy / l}};
            for (int k = 0; k < 2; k++) {
                double alo, ahi, blo, bhi;
                proj2(a, na, axes[k][0], axes[k][1], &alo, &ahi);
                proj2(b, nb, axes[k][0], axes[k][1], &blo, &bhi);
                sat = dmax(sat, dmax(blo - ahi, alo - bhi));
            }
        }
    }
    if (sat <= 0)
        return sat;
    double best = 1e300;
    for (int side = 0; side < 2; side++) {
        const rv2 *p = side ? b : a, *q = side ? a : b;
        int np = side ? nb : na, nq = side ? na : nb;
        for (int i = 0; i < np; i++)
            for (int j = 0; j < nq; j++)
                best = dmin(best, seg2_dist(p[i], q[j], q[(j + 1) % nq]));
    }
    return best;
}

// The directions perpendicular to one edge: n(t) = cos t p1 + sin t p2 with
// p1 horizontal. There the cylinder's support is H |sin t p2.y| + R
// sqrt(cos^2 t + k2 sin^2 t) (an ellipse, the disc seen edge-on, plus a
// segment) and the triangle is the segment from q (the edge) to r. k2 is
// |p2 horizontal|^2 taken from p2's components, not 1 - p2.y^2: for a nearly
// level edge that difference loses the digits the sharp ellipse depends on.
typedef struct edge_family {
    double qx, qy, rx, ry;
    double hy, k2, radius;
} edge_family;

static inline double edge_sep(const edge_family *e, double c, double s)
{
    double a = c * e->qx + s * e->qy, b = c * e->rx + s * e->ry;
    return dmin(a, b) - e->hy * fabs(s) - e->radius * sqrt(c * c + e->k2 * s * s);
}

static double edge_sep_at(const edge_family *e, double t) { return edge_sep(e, cos(t), sin(t)); }

#define CYL_STEPS 720
#define CYL_REFINE 8
#define CYL_BLOCK 48

static double cyl_cos[CYL_STEPS], cyl_sin[CYL_STEPS];
static bool cyl_table_ready;

static void cyl_table_init(void)
{
    if (cyl_table_ready)
        return;
    for (int i = 0; i < CYL_STEPS; i++) {
        double t = 2 * REF_PI * i / CYL_STEPS;
        cyl_cos[i] = cos(t);
        cyl_sin[i] = sin(t);
    }
    // exact at the quarter turns (the kinks of |sin| and the ellipse's axes)
    for (int i = 0; i < CYL_STEPS; i += CYL_STEPS / 4) {
        cyl_cos[i] = i == 0 ? 1 : (i == CYL_STEPS / 2 ? -1 : 0);
        cyl_sin[i] = i == CYL_STEPS / 4 ? 1 : (i == 3 * CYL_STEPS / 4 ? -1 : 0);
    }
    cyl_table_ready = true;
}

// Golden-section search for the largest value on [lo, hi].
static double edge_refine(const edge_family *e, double lo, double hi)
{
    const double g = 0.6180339887498949;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = edge_sep_at(e, x1), f2 = edge_sep_at(e, x2);
    while (hi - lo > 1e-12) {
        if (f1 < f2) {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = edge_sep_at(e, x2);
        } else {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = edge_sep_at(e, x1);
        }
    }
    return dmax(f1, f2);
}

// Samples f over the steps lo..hi (f[lo] and f[hi] known), halving while
// the interval could hold a value above *bar (half_lip: lip * step / 2).
static void family_fill(const edge_family *e, double *f, int lo, int hi, double half_lip, double *bar)
{
    if (hi - lo <= 1)
        return;
    double flo = f[lo], fhi = f[hi % CYL_STEPS];
    if (0.5 * (flo + fhi) + half_lip * (hi - lo) <= *bar)
        return;
    int mid = (lo + hi) / 2;
    f[mid] = edge_sep(e, cyl_cos[mid], cyl_sin[mid]);
    *bar = dmax(*bar, f[mid]);
    family_fill(e, f, lo, mid, half_lip, bar);
    family_fill(e, f, mid, hi, half_lip, bar);
}

// The family's largest separation, or a value <= `floor` when it has none
// above that: only brackets that could beat `floor` are refined (within a
// step of a sample the separation changes by at most `lip` per radian).
static double edge_family_max(const edge_family *e, double floor)
{
    cyl_table_init();
    double f[CYL_STEPS];
    double best = -1e300;
    const double step = 2 * REF_PI / CYL_STEPS;
    double lip = dmax(sqrt(e->qx * e->qx + e->qy * e->qy), sqrt(e->rx * e->rx + e->ry * e->ry)) + e->hy + e->radius;
    // Samples every CYL_BLOCK steps, then each interval halved while its
    // ends do not bound it below the best so far (a function of slope at
    // most lip exceeds its ends' mean by at most lip * width / 2): what is
    // left unsampled cannot win.
    for (int i = 0; i < CYL_STEPS; i++)
        f[i] = -1e300;
    for (int i = 0; i < CYL_STEPS; i += CYL_BLOCK) {
        f[i] = edge_sep(e, cyl_cos[i], cyl_sin[i]);
        best = dmax(best, f[i]);
    }
    double bar = dmax(floor, best);
    for (int i = 0; i < CYL_STEPS; i += CYL_BLOCK)
        family_fill(e, f, i, i + CYL_BLOCK, lip * step * 0.5, &bar);
    for (int i = 0; i < CYL_STEPS; i++)
        best = dmax(best, f[i]);
    // the triangle's kink: n perpendicular to q - r
    double dx = e->qx - e->rx, dy = e->qy - e->ry;
    if (dx * dx + dy * dy > 0) {
        double t = atan2(dx, -dy);
        best = dmax(best, dmax(edge_sep_at(e, t), edge_sep_at(e, t + REF_PI)));
    }
    floor = dmax(floor, best);
    // refine the sampled local maxima that could still win, the highest few
    int cand[CYL_REFINE];
    int nc = 0;
    for (int i = 0; i < CYL_STEPS; i++) {
        double prev = f[(i + CYL_STEPS - 1) % CYL_STEPS], next = f[(i + 1) % CYL_STEPS];
        if (!(f[i] >= prev && f[i] >= next && (f[i] > prev || f[i] > next)))
            continue;
        if (f[i] + lip * step <= floor)
            continue;
        if (nc < CYL_REFINE) {
            cand[nc++] = i;
        } else {
            int low = 0;
            for (int k = 1; k < nc; k++)
                if (f[cand[k]] < f[cand[low]])
                    low = k;
            if (f[i] > f[cand[low]])
                cand[low] = i;
        }
    }
    for (int k = 0; k < nc; k++)
        best = dmax(best, edge_refine(e, (cand[k] - 1) * step, (cand[k] + 1) * step));
    return best;
}

static double cyl_sep(double R, double H, rv3 n, const rv3 *v)
{
    double lo = dmin(rv3_dot(n, v[0]), dmin(rv3_dot(n, v[1]), rv3_dot(n, v[2])));
    return lo - H * fabs(n.y) - R * sqrt(dmax(0, n.x * n.x + n.z * n.z));
}

// The gap, or when it exceeds `stop` some value above `stop` (the searches
// end as soon as one family shows that).
static double cyl_tri_gap(double R, double H, rv3 pos, rv3 a, rv3 b, rv3 c, double stop)
{
    rv3 v[3] = {rv3_sub(a, pos), rv3_sub(b, pos), rv3_sub(c, pos)};
    double gap = dmax(cyl_sep(R, H, (rv3){0, 1, 0}, v), cyl_sep(R, H, (rv3){0, -1, 0}, v));
    rv3 n = rv3_cross(rv3_sub(v[1], v[0]), rv3_sub(v[2], v[0]));
    double nl = rv3_len(n);
    if (nl > 1e-15) {
        n = rv3_scale(n, 1.0 / nl);
        gap = dmax(gap, dmax(cyl_sep(R, H, n, v), cyl_sep(R, H, rv3_scale(n, -1), v)));
    }
    // seen from above: the disc's centre against the triangle
    rv2 centre = {0, 0};
    rv2 top[3] = {{v[0].x, v[0].z}, {v[1].x, v[1].z}, {v[2].x, v[2].z}};
    gap = dmax(gap, poly2_gap(&centre, 1, top, 3) - R);
    // a vertex's vertical plane: the rectangle R x H against the triangle
    rv2 rect[4] = {{-R, -H}, {R, -H}, {R, H}, {-R, H}};
    for (int i = 0; i < 3; i++) {
        double ox = v[i].x, oz = v[i].z, ol = sqrt(ox * ox + oz * oz);
        if (ol < 1e-12) {
            ox = 1;
            oz = 0;
        } else {
            ox /= ol;
            oz /= ol;
        }
        rv2 tri[3];
        for (int k = 0; k < 3; k++)
            tri[k] = (rv2){v[k].x * ox + v[k].z * oz, v[k].y};
        gap = dmax(gap, poly2_gap(rect, 4, tri, 3));
    }
    if (gap > stop)
        return gap;
    // an edge's perpendicular plane (a vertical edge's is the horizontal one)
    for (int i = 0; i < 3; i++) {
        rv3 e = rv3_sub(v[(i + 1) % 3], v[i]);
        double el = rv3_len(e);
        if (el < 1e-15)
            continue;
        e = rv3_scale(e, 1.0 / el);
        double hl = sqrt(e.x * e.x + e.z * e.z);
        if (hl < 1e-9)
            continue;
        rv3 p1 = {-e.z / hl, 0, e.x / hl};
        rv3 p2 = rv3_cross(e, p1);
        rv3 q = v[i], r = v[(i + 2) % 3];
        edge_family f = {rv3_dot(q, p1),
                         rv3_dot(q, p2),
                         rv3_dot(r, p1),
                         rv3_dot(r, p2),
                         H * fabs(p2.y),
                         p2.x * p2.x + p2.z * p2.z,
                         R};
        gap = dmax(gap, edge_family_max(&f, gap));
        if (gap > stop)
            return gap;
    }
    return gap;
}

double ref_cylinder_tri_gap(double R, double H, rv3 pos, rv3 a, rv3 b, rv3 c)
{
    return cyl_tri_gap(R, H, pos, a, b, c, 1e300);
}

double ref_shape_tri_gap_stop(sim_shape s, rv3 pos, rv3 a, rv3 b, rv3 c, double stop)
{
    if (s.type == SIM_SHAPE_CYLINDER)
        return cyl_tri_gap(s.radius / 65536.0, s.half.y / 65536.0, pos, a, b, c, stop);
    return ref_shape_tri_gap(s, pos, a, b, c);
}

double ref_box_tri_gap(rv3 half, rv3 pos, rv3 a, rv3 b, rv3 c) { return box_tri_gap(half, pos, a, b, c); }

double ref_shape_tri_gap(sim_shape s, rv3 pos, rv3 a, rv3 b, rv3 c)
{
    if (s.type == SIM_SHAPE_BOX)
        return box_tri_gap(rv3_from(s.half), pos, a, b, c);
    if (s.type == SIM_SHAPE_CYLINDER)
        return ref_cylinder_tri_gap(s.radius / 65536.0, s.half.y / 65536.0, pos, a, b, c);
    double r = s.radius / 65536.0;
    double h = (s.half.y - s.radius) / 65536.0;
    rv3 p0 = {pos.x, pos.y - h, pos.z}, p1 = {pos.x, pos.y + h, pos.z};
    return ref_seg_tri_dist(p0, p1, a, b, c) - r;
}

// ---- first contact along a motion --------------------------------------------------

typedef struct gap_fn {
    int kind; // 0: the shape, 1: a box of half extents `half`
    sim_shape shape;
    rv3 half;
    rv3 pos, d, a, b, c;
} gap_fn;

static double gap_at(const gap_fn *g, double t)
{
    rv3 p = rv3_add(g->pos, rv3_scale(g->d, t));
    if (g->kind == 1)
        return box_tri_gap(g->half, p, g->a, g->b, g->c);
    return ref_shape_tri_gap(g->shape, p, g->a, g->b, g->c);
}

// Whether the gap at t is <= 0 (for a cylinder without searching further
// once one family separates).
static bool touches_at(const gap_fn *g, double t)
{
    if (g->kind == 0 && g->shape.type == SIM_SHAPE_CYLINDER) {
        rv3 p = rv3_add(g->pos, rv3_scale(g->d, t));
        return cyl_tri_gap(g->shape.radius / 65536.0, g->shape.half.y / 65536.0, p, g->a, g->b, g->c, 0) <= 0;
    }
    return gap_at(g, t) <= 0;
}

// The gap along a straight motion is convex (a distance between convex sets,
// or a signed distance to their Minkowski difference), so a golden-section
// search finds its minimum, stopping at the first value <= 0, and a
// bisection before that the first contact: exact, no sampling. Returns a
// value > 1 when the gap stays positive over [lo, 1].
static double toi_convex(const gap_fn *g, double lo, double hi_known)
{
    double hi;
    if (hi_known <= 1) {
        hi = hi_known;
    } else {
        const double gr = 0.6180339887498949;
        double a = lo, b = 1;
        double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
        double f1 = gap_at(g, x1), f2 = gap_at(g, x2);
        hi = -1;
        if (gap_at(g, 1) <= 0)
            hi = 1;
        while (hi < 0 && b - a > 1e-13) {
            if (f1 <= 0) {
                hi = x1;
            } else if (f2 <= 0) {
                hi = x2;
            } else if (f1 < f2) {
                b = x2;
                x2 = x1;
                f2 = f1;
                x1 = b - gr * (b - a);
                f1 = gap_at(g, x1);
            } else {
                a = x1;
                x1 = x2;
                f1 = f2;
                x2 = a + gr * (b - a);
                f2 = gap_at(g, x2);
            }
        }
        if (hi < 0)
            return 2.0;
    }
    for (int k = 0; k < 80 && hi - lo > 1e-15; k++) {
        double m = 0.5 * (lo + hi);
        if (touches_at(g, m))
            hi = m;
        else
            lo = m;
    }
    return hi;
}

static double toi_box(rv3 half, rv3 pos, rv3 d, rv3 a, rv3 b, rv3 c)
{
    gap_fn g = {1, {0}, half, pos, d, a, b, c};
    if (gap_at(&g, 0) <= 0)
        return 0;
    return toi_convex(&g, 0, 2.0);
}

double ref_shape_tri_toi(sim_shape s, rv3 pos, rv3 d, rv3 a, rv3 b, rv3 c, int steps)
{
    (void)steps;
    if (ref_shape_tri_gap(s, pos, a, b, c) <= 0)
        return 0;
    if (s.type != SIM_SHAPE_CYLINDER) {
        gap_fn g = {0, s, {0, 0, 0}, pos, d, a, b, c};
        return toi_convex(&g, 0, 2.0);
    }
    // The cylinder lies between its bounding box and the square box inside
    // it: it is met no sooner than the first and no later than the second,
    // and only the cylinder's own gap is the slow one.
    double R = s.radius / 65536.0, H = s.half.y / 65536.0;
    double outer = toi_box((rv3){R, H, R}, pos, d, a, b, c);
    if (outer > 1)
        return 2.0;
    double inner = toi_box((rv3){R * REF_SQRT1_2, H, R * REF_SQRT1_2}, pos, d, a, b, c);
    gap_fn g = {0, s, {0, 0, 0}, pos, d, a, b, c};
    return toi_convex(&g, outer, inner);
}

double ref_shape_tris_toi(sim_shape s, rv3 pos, rv3 d, const rv3 *tri, uint32_t count)
{
    // Each triangle's bound first (the shape's bounding box meets it no
    // later), then the exact first contact in that order while it can win.
    double *bound = malloc(sizeof *bound * (count + 1));
    uint32_t *order = malloc(sizeof *order * (count + 1));
    if (!bound || !order)
        abort();
    rv3 half = rv3_from(s.half);
    for (uint32_t i = 0; i < count; i++) {
        bound[i] = toi_box(half, pos, d, tri[3 * i], tri[3 * i + 1], tri[3 * i + 2]);
        uint32_t k = i;
        while (k > 0 && bound[order[k - 1]] > bound[i]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    double best = 2.0;
    for (uint32_t k = 0; k < count && bound[order[k]] <= 1 && bound[order[k]] < best; k++) {
        uint32_t i = order[k];
        best = dmin(best, ref_shape_tri_toi(s, pos, d, tri[3 * i], tri[3 * i + 1], tri[3 * i + 2], 0));
    }
    free(bound);
    free(order);
    return best;
}

// ---- two upright character shapes ----------------------------------------------

static double ref_d(sim_fx v) { return v / 65536.0; }

// Support function of an upright shape about its centre along (nx, ny, nz).
static double pair_support(sim_shape s, double nx, double ny, double nz)
{
    double hy = ref_d(s.half.y);
    if (s.type == SIM_SHAPE_BOX)
        return ref_d(s.half.x) * fabs(nx) + hy * fabs(ny) + ref_d(s.half.z) * fabs(nz);
    double r = ref_d(s.radius), h = nx * nx + nz * nz;
    if (s.type == SIM_SHAPE_CAPSULE)
        return r + (hy - r) * fabs(ny);
    return r * sqrt(h) + hy * fabs(ny);
}

// Separation of the two shapes along the unit direction of (theta, phi).
static double pair_separation(sim_shape a, sim_shape b, const double w[3], double theta, double phi)
{
    double nx = sin(theta) * cos(phi), ny = cos(theta), nz = sin(theta) * sin(phi);
    return nx * w[0] + ny * w[1] + nz * w[2] - pair_support(a, nx, ny, nz) - pair_support(b, nx, ny, nz);
}

// Signed gap between shape a at pa and shape b at pb (centres): the largest
// separation along any direction, which is the distance when apart and minus
// the penetration depth when overlapping (both are convex). Proven apart
// along an axis or the horizontal offset, the gap returned is that lower
// bound; otherwise a grid over the sphere and a pattern search from its best
// points. An inexact search only finds a smaller separation: it can
// overstate a depth, never hide one.
double ref_shape_pair_gap(sim_shape a, rv3 pa, sim_shape b, rv3 pb)
{
    if (a.type == SIM_SHAPE_CAPSULE && b.type == SIM_SHAPE_CAPSULE) {
        // Exact: the distance of the two vertical segments minus the radii.
        double ha = ref_d(a.half.y) - ref_d(a.radius), hb = ref_d(b.half.y) - ref_d(b.radius);
        rv3 a0 = {pa.x, pa.y - ha, pa.z}, a1 = {pa.x, pa.y + ha, pa.z};
        rv3 b0 = {pb.x, pb.y - hb, pb.z}, b1 = {pb.x, pb.y + hb, pb.z};
        return sqrt(ref_seg_seg_dist2(a0, a1, b0, b1)) - ref_d(a.radius) - ref_d(b.radius);
    }
    const double w[3] = {pb.x - pa.x, pb.y - pa.y, pb.z - pa.z};
    double best = fabs(w[1]) - ref_d(a.half.y) - ref_d(b.half.y);
    best = fmax(best, fabs(w[0]) - ref_d(a.half.x) - ref_d(b.half.x));
    best = fmax(best, fabs(w[2]) - ref_d(a.half.z) - ref_d(b.half.z));
    double wh = hypot(w[0], w[2]);
    if (wh > 0) {
        double nx = w[0] / wh, nz = w[2] / wh;
        best = fmax(best, wh - pair_support(a, nx, 0, nz) - pair_support(b, nx, 0, nz));
    }
    if (best > 0)
        return best;
    enum { NT = 24, NP = 48, SEEDS = 3 };
    double seed_t[SEEDS], seed_p[SEEDS], seed_v[SEEDS];
    for (int k = 0; k < SEEDS; k++)
        seed_v[k] = -INFINITY, seed_t[k] = seed_p[k] = 0;
    for (int i = 0; i <= NT; i++) {
        for (int j = 0; j < NP; j++) {
            double t = REF_PI * i / NT, p = 2 * REF_PI * j / NP, v = pair_separation(a, b, w, t, p);
            for (int k = 0; k < SEEDS; k++) {
                if (v > seed_v[k]) {
                    for (int m = SEEDS - 1; m > k; m--)
                        seed_v[m] = seed_v[m - 1], seed_t[m] = seed_t[m - 1], seed_p[m] = seed_p[m - 1];
                    seed_v[k] = v, seed_t[k] = t, seed_p[k] = p;
                    break;
                }
            }
        }
    }
    for (int k = 0; k < SEEDS; k++) {
        double t = seed_t[k], p = seed_p[k], v = seed_v[k];
        for (double step = REF_PI / NT; step > 1e-10;) {
            static const double dt[8] = {1, -1, 0, 0, 1, 1, -1, -1}, dp[8] = {0, 0, 1, -1, 1, -1, 1, -1};
            bool moved = false;
            for (int m = 0; m < 8; m++) {
                double v2 = pair_separation(a, b, w, t + step * dt[m], p + step * dp[m]);
                if (v2 > v) {
                    v = v2, t += step * dt[m], p += step * dp[m];
                    moved = true;
                    break;
                }
            }
            if (!moved)
                step /= 2;
        }
        best = fmax(best, v);
    }
    return best;
}
