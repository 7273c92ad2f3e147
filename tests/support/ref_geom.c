// keel tests: double-precision reference geometry. MIT licence.
#include "ref_geom.h"

#include <math.h>

rv3 rv3_from(sim_vec3 v) { return (rv3){v.x / 65536.0, v.y / 65536.0, v.z / 65536.0}; }
rv3 rv3_add(rv3 a, rv3 b) { return (rv3){a.x + b.x, a.y + b.y, a.z + b.z}; }
rv3 rv3_sub(rv3 a, rv3 b) { return (rv3){a.x - b.x, a.y - b.y, a.z - b.z}; }
rv3 rv3_scale(rv3 a, double s) { return (rv3){a.x * s, a.y * s, a.z * s}; }
double rv3_dot(rv3 a, rv3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
rv3 rv3_cross(rv3 a, rv3 b)
{
    return (rv3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
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
        double lo = fmin(p0, fmin(p1, p2)), hi = fmax(p0, fmax(p1, p2));
        double r = half.x * fabs(u.x) + half.y * fabs(u.y) + half.z * fabs(u.z);
        double g = fmax(lo - r, -r - hi);
        if (g > gap)
            gap = g;
    }
    return gap;
}

double ref_shape_tri_gap(sim_shape s, rv3 pos, rv3 a, rv3 b, rv3 c)
{
    if (s.type == SIM_SHAPE_BOX)
        return box_tri_gap(rv3_from(s.half), pos, a, b, c);
    double r = s.radius / 65536.0;
    double h = (s.half.y - s.radius) / 65536.0;
    rv3 p0 = {pos.x, pos.y - h, pos.z}, p1 = {pos.x, pos.y + h, pos.z};
    return ref_seg_tri_dist(p0, p1, a, b, c) - r;
}

double ref_shape_tri_toi(sim_shape s, rv3 pos, rv3 d, rv3 a, rv3 b, rv3 c, int steps)
{
    (void)steps;
    // The gap along a straight motion is convex (a distance between convex
    // sets, or a maximum of linear functions), so a ternary search finds its
    // minimum and a bisection before it the first contact: exact, no sampling.
    if (ref_shape_tri_gap(s, pos, a, b, c) <= 0)
        return 0;
    double lo = 0, hi = 1;
    for (int k = 0; k < 200; k++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        double g1 = ref_shape_tri_gap(s, rv3_add(pos, rv3_scale(d, m1)), a, b, c);
        double g2 = ref_shape_tri_gap(s, rv3_add(pos, rv3_scale(d, m2)), a, b, c);
        if (g1 <= g2)
            hi = m2;
        else
            lo = m1;
    }
    double tmin = 0.5 * (lo + hi);
    if (ref_shape_tri_gap(s, rv3_add(pos, rv3_scale(d, tmin)), a, b, c) > 0)
        return 2.0;
    lo = 0;
    hi = tmin;
    for (int k = 0; k < 80; k++) {
        double m = 0.5 * (lo + hi);
        if (ref_shape_tri_gap(s, rv3_add(pos, rv3_scale(d, m)), a, b, c) <= 0)
            hi = m;
        else
            lo = m;
    }
    return hi;
}
