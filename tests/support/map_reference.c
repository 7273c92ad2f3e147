// keel tests: a Quake .map read in double, apart from the loader, for reference figures. MIT licence.
#include "map_reference.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_MAX_POLY 160

typedef struct ref_poly {
    int n;
    double p[REF_MAX_POLY][3];
} ref_poly;

static bool solid_class(const char *c)
{
    return strcmp(c, "worldspawn") == 0 || strcmp(c, "func_group") == 0 || strcmp(c, "func_wall") == 0 ||
           (strncmp(c, "func_detail", 11) == 0 && strcmp(c, "func_detail_illusionary") != 0);
}

int map_ref_read(const char *text, map_ref *out)
{
    memset(out, 0, sizeof *out);
    int cap = 64, depth = 0;
    out->brushes = malloc((size_t)cap * sizeof *out->brushes);
    char classname[128] = "";
    bool brush_ok = true;
    map_ref_brush cur;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[1024];
        if (len >= sizeof line)
            return -1;
        memcpy(line, p, len);
        line[len] = '\0';
        p = nl ? nl + 1 : p + len;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (strncmp(s, "//", 2) == 0 || *s == '\0' || *s == '\r')
            continue;
        if (*s == '{') {
            depth++;
            if (depth == 1)
                classname[0] = '\0';
            if (depth == 2) {
                memset(&cur, 0, sizeof cur);
                brush_ok = true;
            }
        } else if (*s == '}') {
            if (depth == 2 && brush_ok && solid_class(classname)) {
                if (out->count == cap) {
                    cap *= 2;
                    out->brushes = realloc(out->brushes, (size_t)cap * sizeof *out->brushes);
                }
                out->brushes[out->count++] = cur;
            }
            depth--;
        } else if (*s == '"' && depth == 1) {
            char k[128], v[128];
            if (sscanf(s, "\"%127[^\"]\" \"%127[^\"]\"", k, v) == 2 && strcmp(k, "classname") == 0)
                snprintf(classname, sizeof classname, "%s", v);
        } else if (*s == '(' && depth == 2) {
            double a[3], b[3], c[3];
            char tex[256];
            if (sscanf(s, "( %lf %lf %lf ) ( %lf %lf %lf ) ( %lf %lf %lf ) %255s", &a[0], &a[1], &a[2], &b[0], &b[1],
                       &b[2], &c[0], &c[1], &c[2], tex) != 10 ||
                cur.planes == 64)
                return -1;
            if (tex[0] == '*' || strcmp(tex, "hint") == 0 || strcmp(tex, "hintskip") == 0 || strcmp(tex, "origin") == 0)
                brush_ok = false;
            double u[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]}, w[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]};
            double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
            double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            for (int i = 0; i < 3; i++)
                cur.n[cur.planes][i] = n[i] / l;
            cur.d[cur.planes] = cur.n[cur.planes][0] * a[0] + cur.n[cur.planes][1] * a[1] + cur.n[cur.planes][2] * a[2];
            cur.planes++;
        }
    }
    return depth == 0 ? 0 : -1;
}

static void clip_back(ref_poly *w, const double n[3], double d)
{
    ref_poly o;
    o.n = 0;
    for (int i = 0; i < w->n; i++) {
        const double *a = w->p[i], *b = w->p[(i + 1) % w->n];
        double da = n[0] * a[0] + n[1] * a[1] + n[2] * a[2] - d;
        double db = n[0] * b[0] + n[1] * b[1] + n[2] * b[2] - d;
        if (da <= 1e-7 && o.n < REF_MAX_POLY)
            memcpy(o.p[o.n++], a, sizeof o.p[0]);
        if ((da > 1e-7 && db < -1e-7) || (da < -1e-7 && db > 1e-7)) {
            double t = da / (da - db);
            if (o.n < REF_MAX_POLY)
                for (int k = 0; k < 3; k++)
                    o.p[o.n][k] = a[k] + (b[k] - a[k]) * t;
            o.n++;
        }
    }
    *w = o;
    if (w->n < 3)
        w->n = 0;
}

/// Face polygon `f` of brush b.
static void face_poly(const map_ref_brush *b, int f, ref_poly *w)
{
    const double *n = b->n[f];
    double up[3] = {0, 0, 1};
    if (fabs(n[2]) >= fabs(n[0]) && fabs(n[2]) >= fabs(n[1])) {
        up[0] = 1;
        up[2] = 0;
    }
    double dot = up[0] * n[0] + up[2] * n[2];
    for (int i = 0; i < 3; i++)
        up[i] -= n[i] * dot;
    double l = sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
    for (int i = 0; i < 3; i++)
        up[i] /= l;
    double r[3] = {up[1] * n[2] - up[2] * n[1], up[2] * n[0] - up[0] * n[2], up[0] * n[1] - up[1] * n[0]};
    const double R = 1e6, su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
    w->n = 4;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++)
            w->p[k][i] = n[i] * b->d[f] + su[k] * r[i] * R + sv[k] * up[i] * R;
    for (int j = 0; j < b->planes && w->n; j++) {
        if (j == f)
            continue;
        bool same = fabs(b->n[j][0] - n[0]) + fabs(b->n[j][1] - n[1]) + fabs(b->n[j][2] - n[2]) < 1e-9 &&
                    fabs(b->d[j] - b->d[f]) < 1e-6;
        if (same) {
            if (j < f)
                w->n = 0;
            continue;
        }
        clip_back(w, b->n[j], b->d[j]);
    }
}

static bool inside(const map_ref_brush *b, const double p[3])
{
    for (int i = 0; i < 3; i++)
        if (p[i] < b->min[i] - 1 || p[i] > b->max[i] + 1)
            return false;
    for (int j = 0; j < b->planes; j++)
        if (b->n[j][0] * p[0] + b->n[j][1] * p[1] + b->n[j][2] * p[2] - b->d[j] >= 0)
            return false;
    return true;
}

static double tri_area(const double *a, const double *b, const double *c)
{
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    return 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

static void bounds(map_ref *r)
{
    for (int i = 0; i < r->count; i++) {
        map_ref_brush *b = &r->brushes[i];
        for (int k = 0; k < 3; k++) {
            b->min[k] = 1e30;
            b->max[k] = -1e30;
        }
        for (int f = 0; f < b->planes; f++) {
            ref_poly w;
            face_poly(b, f, &w);
            for (int v = 0; v < w.n; v++)
                for (int k = 0; k < 3; k++) {
                    b->min[k] = fmin(b->min[k], w.p[v][k]);
                    b->max[k] = fmax(b->max[k], w.p[v][k]);
                }
        }
    }
}

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) / 9007199254740992.0; }

double map_ref_total_area(const map_ref *r)
{
    double total = 0;
    for (int i = 0; i < r->count; i++)
        for (int f = 0; f < r->brushes[i].planes; f++) {
            ref_poly w;
            face_poly(&r->brushes[i], f, &w);
            for (int k = 2; k < w.n; k++)
                total += tri_area(w.p[0], w.p[k - 1], w.p[k]);
        }
    return total;
}

double map_ref_union_area(const map_ref *cr, double per_unit2, uint64_t seed)
{
    map_ref *r = (map_ref *)cr;
    bounds(r);
    double total = 0;
    uint64_t rng = seed;
    for (int i = 0; i < r->count; i++) {
        const map_ref_brush *b = &r->brushes[i];
        for (int f = 0; f < b->planes; f++) {
            ref_poly w;
            face_poly(b, f, &w);
            double area = 0;
            for (int k = 2; k < w.n; k++)
                area += tri_area(w.p[0], w.p[k - 1], w.p[k]);
            if (area <= 0)
                continue;
            int samples = (int)fmax(64, area * per_unit2);
            int exposed = 0;
            for (int s = 0; s < samples; s++) {
                // a triangle of the fan by area, then a uniform point in it
                double pick = uniform(&rng) * area, acc = 0;
                int k = 2;
                for (; k < w.n - 1; k++) {
                    acc += tri_area(w.p[0], w.p[k - 1], w.p[k]);
                    if (acc >= pick)
                        break;
                }
                double u = uniform(&rng), v = uniform(&rng);
                if (u + v > 1) {
                    u = 1 - u;
                    v = 1 - v;
                }
                double p[3], out[3], in[3];
                for (int c = 0; c < 3; c++) {
                    p[c] = w.p[0][c] + u * (w.p[k - 1][c] - w.p[0][c]) + v * (w.p[k][c] - w.p[0][c]);
                    out[c] = p[c] + b->n[f][c] * 0.05;
                    in[c] = p[c] - b->n[f][c] * 0.05;
                }
                bool ok = true;
                for (int j = 0; j < r->count && ok; j++)
                    ok = !inside(&r->brushes[j], out);
                for (int j = 0; j < i && ok; j++)
                    ok = !inside(&r->brushes[j], in);
                exposed += ok;
            }
            total += area * exposed / samples;
        }
    }
    return total;
}

void map_ref_free(map_ref *r)
{
    free(r->brushes);
    memset(r, 0, sizeof *r);
}
