// keel: Wavefront OBJ loader (v and f statements) with exact decimal parsing. MIT licence, see LICENSE.
//
// Coordinates are decimal text; the engine wants Q16.16 metres. Going through
// a binary float would make the result depend on the C library and the FPU,
// so each coordinate is converted exactly: value * unit_scale * 65536 is
// formed from the decimal digits with integer arithmetic and rounded once
// (to nearest, ties away from zero). docs/formats.md has the accepted syntax.
#include <keel/sim_level.h>
#include <keel/sim_world.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collide.h"
#include "level_text.h"

#define OBJ_MAX_LINE 65536u
#define OBJ_MAX_ELEMENTS ((uint32_t)1 << 24)
#define OBJ_DEFAULT_MAX_BYTES ((size_t)256 << 20)
// Scale mantissas up to 12 digits keep mantissa * 2^17 * 10 below 2^61.
#define OBJ_SCALE_MAX_DIGITS 12
// Decimal exponents saturate here; anything that large is out of range (or
// rounds to zero) long before, so the exact value no longer matters.
#define OBJ_EXP_SAT ((int64_t)1 << 40)

sim_obj_options sim_obj_default_options(void)
{
    sim_obj_options o;
    o.unit_scale = "1";
    o.up_axis = 'y';
    o.max_bytes = OBJ_DEFAULT_MAX_BYTES;
    return o;
}

// ---- decimal numbers ----------------------------------------------------------

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// [+-]? digits? ('.' digits?)? ([eE] [+-]? digits)? with at least one mantissa
/// digit, and nothing else. Hex, "inf" and "nan" are not numbers here.
bool level_decimal_parse(const char *s, size_t len, level_decimal *d)
{
    size_t i = 0;
    memset(d, 0, sizeof *d);
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        d->negative = s[i] == '-';
        i++;
    }
    d->int_digits = s + i;
    while (i < len && is_digit(s[i]))
        i++;
    d->int_len = (size_t)(s + i - d->int_digits);
    d->frac_digits = s + i;
    if (i < len && s[i] == '.') {
        i++;
        d->frac_digits = s + i;
        while (i < len && is_digit(s[i]))
            i++;
        d->frac_len = (size_t)(s + i - d->frac_digits);
    }
    if (d->int_len + d->frac_len == 0)
        return false;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i >= len || !is_digit(s[i]))
            return false;
        int64_t e = 0;
        while (i < len && is_digit(s[i])) {
            if (e < OBJ_EXP_SAT)
                e = e * 10 + (s[i] - '0');
            i++;
        }
        if (e > OBJ_EXP_SAT)
            e = OBJ_EXP_SAT;
        d->exponent = eneg ? -e : e;
    }
    return i == len;
}

/// k-th digit of the mantissa (integer digits followed by fraction digits).
static uint64_t decimal_digit(const level_decimal *d, size_t k)
{
    char c = k < d->int_len ? d->int_digits[k] : d->frac_digits[k - d->int_len];
    return (uint64_t)(c - '0');
}

bool level_scale_parse(const char *text, level_scale *sc)
{
    level_decimal d;
    if (!level_decimal_parse(text, strlen(text), &d) || d.negative)
        return false;
    size_t n = d.int_len + d.frac_len;
    size_t first = 0, last = n;
    while (first < n && decimal_digit(&d, first) == 0)
        first++;
    if (first == n)
        return false; // zero scale
    while (last > first && decimal_digit(&d, last - 1) == 0)
        last--;
    if (last - first > OBJ_SCALE_MAX_DIGITS)
        return false;
    uint64_t m = 0;
    for (size_t k = first; k < last; k++)
        m = m * 10 + decimal_digit(&d, k);
    sc->mantissa = m;
    // Dropped trailing zeros move the decimal point; frac_len fits easily
    // because the whole text fitted in memory.
    sc->exponent = d.exponent - (int64_t)d.frac_len + (int64_t)(n - last);
    return true;
}

/// value * scale in Q16.16 raw units, rounded to nearest with ties away from
/// zero. Returns false when the magnitude exceeds SIM_WORLD_LIMIT.
///
/// With D the significant digits of the value (value = D * 10^e) and the scale
/// S * 10^g, twice the raw result is x = D * S * 2^17 * 10^(e+g). Its integer
/// part is taken from the digits left of the decimal point; floor of the
/// fraction times C = S * 2^17 comes from Horner's rule run from the last
/// digit backwards, where floor((d*C + t)/10) with t already floored is exact.
/// Then raw = floor((floor(x) + 1) / 2) is round-half-away of x / 2.
bool level_decimal_to_raw(const level_decimal *d, const level_scale *sc, sim_fx *out)
{
    size_t total = d->int_len + d->frac_len;
    size_t lead = 0;
    while (lead < total && decimal_digit(d, lead) == 0)
        lead++;
    *out = 0;
    if (lead == total)
        return true;
    int64_t n = (int64_t)(total - lead);
    int64_t pow10 = d->exponent - (int64_t)d->frac_len + sc->exponent;
    int64_t point = n + pow10; // digits left of the decimal point
    const uint64_t c = sc->mantissa << 17;
    const uint64_t x_limit = (uint64_t)SIM_WORLD_LIMIT * 2 + 1;

    uint64_t ip = 0;
    if (point > 0) {
        int64_t int_digits = point < n ? point : n;
        for (int64_t k = 0; k < int_digits; k++) {
            ip = ip * 10 + decimal_digit(d, lead + (size_t)k);
            if (ip > x_limit)
                return false;
        }
        for (int64_t k = n; k < point; k++) {
            ip *= 10;
            if (ip > x_limit)
                return false;
        }
    }
    if (ip > x_limit / c)
        return false;

    uint64_t frac = 0;
    if (point < n && point >= -20) {
        int64_t from = point > 0 ? point : 0;
        for (int64_t k = n - 1; k >= from; k--)
            frac = (decimal_digit(d, lead + (size_t)k) * c + frac) / 10;
        for (int64_t k = point; k < 0; k++)
            frac /= 10;
    }
    // A fraction starting with more than 20 zeros times c < 2^57 is below one.

    uint64_t x = ip * c + frac;
    if (x > x_limit)
        return false;
    uint64_t raw = (x + 1) >> 1;
    if (raw > (uint64_t)SIM_WORLD_LIMIT)
        return false;
    *out = d->negative ? -(sim_fx)raw : (sim_fx)raw;
    return true;
}

// ---- parser -------------------------------------------------------------------

typedef struct obj_parser {
    const char *name;
    sim_error *err;
    level_scale scale;
    bool z_up;
    /// False when the first pass saw that a count limit will be exceeded: the
    /// second pass then only validates, up to the error, and stores nothing.
    bool store;
    sim_vec3 *vertices;
    uint32_t vertex_count;
    uint32_t *indices;
    uint32_t triangle_count;
} obj_parser;

void level_set_error(const char *name, sim_error *err, uint32_t line, const char *fmt, ...)
{
    if (!err)
        return;
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line)
        snprintf(err->message, sizeof err->message, "%s:%u: %s", name, (unsigned)line, what);
    else
        snprintf(err->message, sizeof err->message, "%s: %s", name, what);
    err->line = line;
}

/// A token for messages: at most 24 bytes, non-printable bytes as '?'.
const char *level_quote(const char *s, size_t len, char buf[32])
{
    size_t n = len < 24 ? len : 24;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    if (len > n) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// Next whitespace-separated token in [*p, end); false at the end.
static bool next_token(const char **p, const char *end, const char **tok, size_t *len)
{
    const char *s = *p;
    while (s < end && is_space(*s))
        s++;
    if (s == end) {
        *p = s;
        return false;
    }
    const char *t = s;
    while (s < end && !is_space(*s))
        s++;
    *tok = t;
    *len = (size_t)(s - t);
    *p = s;
    return true;
}

static size_t count_tokens(const char *p, const char *end)
{
    const char *tok;
    size_t len, n = 0;
    while (next_token(&p, end, &tok, &len))
        n++;
    return n;
}

/// The statement part of a line: everything before a '#'.
static const char *content_end(const char *line, const char *end)
{
    const char *hash = memchr(line, '#', (size_t)(end - line));
    return hash ? hash : end;
}

typedef struct obj_counts {
    uint64_t vertices;
    uint64_t triangles;
} obj_counts;

/// First pass: how many vertices and triangles the text declares, so the
/// second pass allocates once. Malformed lines are counted as they look; the
/// second pass reports them.
static void obj_count(const char *text, size_t length, obj_counts *c)
{
    const char *p = text, *end = text + length;
    c->vertices = c->triangles = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        const char *q = p, *stop = content_end(p, line_end), *tok;
        size_t len;
        if (next_token(&q, stop, &tok, &len) && len == 1) {
            if (tok[0] == 'v') {
                c->vertices++;
            } else if (tok[0] == 'f') {
                size_t k = count_tokens(q, stop);
                if (k >= 3)
                    c->triangles += k - 2;
            }
        }
        p = nl ? nl + 1 : end;
    }
}

static int parse_vertex(obj_parser *ps, uint32_t line, const char *p, const char *end)
{
    const char *tok = "";
    size_t len = 0, k = count_tokens(p, end);
    if (k < 3) {
        level_set_error(ps->name, ps->err, line, "too few coordinates (%u, need x y z)", (unsigned)k);
        return -1;
    }
    if (k > 4) {
        level_set_error(ps->name, ps->err, line, "too many coordinates (%u, at most x y z w)", (unsigned)k);
        return -1;
    }
    sim_fx c[3] = {0, 0, 0};
    for (size_t i = 0; i < k; i++) {
        level_decimal d;
        char q[32];
        // count_tokens found k tokens, so this finds one each time; were it
        // not to, the empty token is reported as a bad number.
        if (!next_token(&p, end, &tok, &len))
            len = 0;
        if (!level_decimal_parse(tok, len, &d)) {
            level_set_error(ps->name, ps->err, line, "bad number '%s'", level_quote(tok, len, q));
            return -1;
        }
        if (i == 3)
            break; // w: checked for syntax, otherwise ignored
        if (!level_decimal_to_raw(&d, &ps->scale, &c[i])) {
            level_set_error(ps->name, ps->err, line, "coordinate '%s' is beyond 4096 m from the origin after scaling",
                            level_quote(tok, len, q));
            return -1;
        }
    }
    if (ps->vertex_count >= OBJ_MAX_ELEMENTS) {
        level_set_error(ps->name, ps->err, line, "too many vertices (more than %u)", (unsigned)OBJ_MAX_ELEMENTS);
        return -1;
    }
    if (ps->store) {
        // Z-up files: file +Z is engine +Y and file +Y is engine -Z, which
        // keeps the handedness (a rotation, not a mirror).
        ps->vertices[ps->vertex_count] = ps->z_up ? sim_v3(c[0], c[2], -c[1]) : sim_v3(c[0], c[1], c[2]);
    }
    ps->vertex_count++;
    return 0;
}

/// Optional sign and at least one digit at s[*i]; the magnitude saturates.
static bool parse_int(const char *s, size_t len, size_t *i, int64_t *value)
{
    bool neg = false;
    if (*i < len && (s[*i] == '+' || s[*i] == '-')) {
        neg = s[*i] == '-';
        (*i)++;
    }
    if (*i >= len || !is_digit(s[*i]))
        return false;
    int64_t v = 0;
    while (*i < len && is_digit(s[*i])) {
        if (v < ((int64_t)1 << 40))
            v = v * 10 + (s[*i] - '0');
        (*i)++;
    }
    *value = neg ? -v : v;
    return true;
}

/// One face corner: v, v/vt, v/vt/vn or v//vn. Only v is used.
static int parse_corner(obj_parser *ps, uint32_t line, const char *tok, size_t len, uint32_t *index)
{
    char q[32];
    size_t i = 0;
    int64_t v, other;
    bool ok = parse_int(tok, len, &i, &v);
    if (ok && i < len) {
        // After '/': an index, or nothing when a second '/' follows.
        ok = tok[i] == '/';
        i++;
        if (ok && i < len && tok[i] == '/') {
            i++;
            ok = parse_int(tok, len, &i, &other);
        } else if (ok) {
            ok = parse_int(tok, len, &i, &other);
            if (ok && i < len) {
                ok = tok[i] == '/';
                i++;
                ok = ok && parse_int(tok, len, &i, &other);
            }
        }
        ok = ok && i == len;
    }
    if (!ok) {
        level_set_error(ps->name, ps->err, line, "bad face index '%s'", level_quote(tok, len, q));
        return -1;
    }
    if (v == 0) {
        level_set_error(ps->name, ps->err, line, "face index 0 (OBJ indices start at 1)");
        return -1;
    }
    int64_t count = ps->vertex_count;
    if (v > count || v < -count) {
        level_set_error(ps->name, ps->err, line, "face index %s is out of range (%u vertices defined before this line)",
                        level_quote(tok, len, q), (unsigned)ps->vertex_count);
        return -1;
    }
    *index = (uint32_t)(v > 0 ? v - 1 : count + v);
    return 0;
}

static int parse_face(obj_parser *ps, uint32_t line, const char *p, const char *end)
{
    const char *tok = "";
    size_t len = 0, k = count_tokens(p, end);
    if (k < 3) {
        level_set_error(ps->name, ps->err, line, "face with fewer than 3 vertices (%u)", (unsigned)k);
        return -1;
    }
    if ((uint64_t)ps->triangle_count + (k - 2) > OBJ_MAX_ELEMENTS) {
        level_set_error(ps->name, ps->err, line, "too many triangles (more than %u)", (unsigned)OBJ_MAX_ELEMENTS);
        return -1;
    }
    uint32_t first = 0, prev = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t idx;
        // count_tokens found k tokens, so this finds one each time; were it
        // not to, the empty token is reported as a bad index.
        if (!next_token(&p, end, &tok, &len))
            len = 0;
        if (parse_corner(ps, line, tok, len, &idx) != 0)
            return -1;
        if (i == 0) {
            first = idx;
        } else if (i >= 2) {
            if (ps->store) {
                uint32_t *t = &ps->indices[(size_t)ps->triangle_count * 3];
                t[0] = first;
                t[1] = prev;
                t[2] = idx;
            }
            ps->triangle_count++;
        }
        prev = idx;
    }
    return 0;
}

static int obj_parse_lines(obj_parser *ps, const char *text, size_t length)
{
    const char *p = text, *end = text + length;
    uint32_t line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t len = (size_t)(line_end - p);
        line++;
        if (len > OBJ_MAX_LINE) {
            level_set_error(ps->name, ps->err, line, "line longer than %u bytes", OBJ_MAX_LINE);
            return -1;
        }
        if (memchr(p, '\0', len)) {
            level_set_error(ps->name, ps->err, line, "NUL byte (not a text file?)");
            return -1;
        }
        const char *q = p, *stop = content_end(p, line_end), *tok;
        size_t tlen;
        if (next_token(&q, stop, &tok, &tlen) && tlen == 1) {
            int rc = 0;
            if (tok[0] == 'v')
                rc = parse_vertex(ps, line, q, stop);
            else if (tok[0] == 'f')
                rc = parse_face(ps, line, q, stop);
            if (rc != 0)
                return -1;
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/// Whether some triangle survives the world's degenerate test with the
/// default settings (sim_world_default_def). Stops at the first one, which in
/// a real file is almost always the first triangle.
static bool any_usable_triangle(const obj_parser *ps)
{
    const sim_fx min_double_area = sim_world_default_def().min_double_area;
    for (uint32_t i = 0; i < ps->triangle_count; i++) {
        const uint32_t *ix = &ps->indices[(size_t)i * 3];
        sim_tri t;
        if (sim_tri_init(&t, ps->vertices[ix[0]], ps->vertices[ix[1]], ps->vertices[ix[2]], i, min_double_area))
            return true;
    }
    return false;
}

int sim_level_parse_obj(const char *name, const char *text, size_t length, const sim_obj_options *options,
                        sim_level *out, sim_error *err)
{
    sim_obj_options opt = options ? *options : sim_obj_default_options();
    obj_parser ps;
    memset(&ps, 0, sizeof ps);
    ps.name = name ? name : "<memory>";
    ps.err = err;
    if (opt.max_bytes == 0)
        opt.max_bytes = OBJ_DEFAULT_MAX_BYTES;
    if (level_text_begin(ps.name, err, out, &text, &length, opt.max_bytes) != 0)
        return -1;
    if (!opt.unit_scale)
        opt.unit_scale = "1";
    if (!level_scale_parse(opt.unit_scale, &ps.scale)) {
        char q[32];
        level_set_error(ps.name, err, 0, "bad unit_scale '%s' (a positive decimal with at most %d significant digits)",
                        level_quote(opt.unit_scale, strlen(opt.unit_scale), q), OBJ_SCALE_MAX_DIGITS);
        return -1;
    }
    if (opt.up_axis == 0 || opt.up_axis == 'y' || opt.up_axis == 'Y') {
        ps.z_up = false;
    } else if (opt.up_axis == 'z' || opt.up_axis == 'Z') {
        ps.z_up = true;
    } else {
        level_set_error(ps.name, err, 0, "bad up_axis (use 'y' or 'z')");
        return -1;
    }

    obj_counts counts;
    obj_count(text, length, &counts);
    ps.store = counts.vertices <= OBJ_MAX_ELEMENTS && counts.triangles <= OBJ_MAX_ELEMENTS;
    if (ps.store) {
        size_t nv = counts.vertices ? (size_t)counts.vertices : 1;
        size_t nt = counts.triangles ? (size_t)counts.triangles : 1;
        ps.vertices = malloc(nv * sizeof(sim_vec3));
        ps.indices = malloc(nt * 3 * sizeof(uint32_t));
        if (!ps.vertices || !ps.indices) {
            free(ps.vertices);
            free(ps.indices);
            level_set_error(ps.name, err, 0, "out of memory");
            return -1;
        }
    }
    int rc = obj_parse_lines(&ps, text, length);
    if (rc == 0 && ps.triangle_count == 0) {
        level_set_error(ps.name, err, 0, "no triangles (no f statements with 3 or more vertices)");
        rc = -1;
    }
    if (rc == 0 && ps.store && !any_usable_triangle(&ps)) {
        // The world would drop every one of them and be empty: as useless as
        // a file without faces, and usually a wrong unit_scale.
        char q[32];
        char count[48] = "the only triangle is";
        if (ps.triangle_count > 1)
            snprintf(count, sizeof count, "all %u triangles are", (unsigned)ps.triangle_count);
        level_set_error(ps.name, err, 0,
                        "no triangles left: %s degenerate at unit_scale '%s' (zero area, or an edge "
                        "shorter than 1/65536 m)",
                        count, level_quote(opt.unit_scale, strlen(opt.unit_scale), q));
        rc = -1;
    }
    if (rc == 0 && !ps.store) {
        // Unreachable: the first pass overcounts, so the second pass hits
        // the same limit and stops with an error first.
        level_set_error(ps.name, err, 0, "too many vertices or triangles");
        rc = -1;
    }
    if (rc != 0) {
        free(ps.vertices);
        free(ps.indices);
        return -1;
    }
    out->vertices = ps.vertices;
    out->vertex_count = ps.vertex_count;
    out->indices = ps.indices;
    out->triangle_count = ps.triangle_count;
    return 0;
}

int level_text_begin(const char *name, sim_error *err, sim_level *out, const char **text, size_t *length,
                     size_t max_bytes)
{
    if (err) {
        err->message[0] = '\0';
        err->line = 0;
    }
    if (!out) {
        level_set_error(name, err, 0, "no output level");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (!*text && *length > 0) {
        level_set_error(name, err, 0, "no text");
        return -1;
    }
    if (*length > max_bytes) {
        level_set_error(name, err, 0, "file is larger than %zu bytes", max_bytes);
        return -1;
    }
    if (*length == 0) {
        level_set_error(name, err, 0, "empty file");
        return -1;
    }
    // A UTF-8 byte-order mark (some Windows editors write one) is not part of
    // the first line.
    if (*length >= 3 && memcmp(*text, "\xEF\xBB\xBF", 3) == 0) {
        *text += 3;
        *length -= 3;
    }
    return 0;
}

int level_read_file(const char *path, size_t max_bytes, char **text, size_t *length, sim_error *err)
{
    const char *name = path ? path : "<null>";
    *text = NULL;
    *length = 0;
    if (err) {
        err->message[0] = '\0';
        err->line = 0;
    }
    if (!path) {
        level_set_error(name, err, 0, "no path");
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        level_set_error(name, err, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    // Read in growing chunks rather than trusting a size from fseek: works
    // for pipes and files that change while being read.
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = 0;
    if (!buf) {
        level_set_error(name, err, 0, "out of memory");
        rc = -1;
    }
    while (rc == 0) {
        if (len == cap) {
            if (cap > max_bytes) {
                level_set_error(name, err, 0, "file is larger than %zu bytes", max_bytes);
                rc = -1;
                break;
            }
            size_t ncap = cap * 2;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                level_set_error(name, err, 0, "out of memory");
                rc = -1;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                level_set_error(name, err, 0, "cannot read: %s", strerror(errno));
                rc = -1;
            }
            break;
        }
    }
    fclose(f);
    if (rc != 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    *length = len;
    return 0;
}

int sim_level_load_obj(const char *path, const sim_obj_options *options, sim_level *out, sim_error *err)
{
    sim_obj_options opt = options ? *options : sim_obj_default_options();
    const char *name = path ? path : "<null>";
    if (opt.max_bytes == 0)
        opt.max_bytes = OBJ_DEFAULT_MAX_BYTES;
    if (out)
        memset(out, 0, sizeof *out);
    char *buf;
    size_t len;
    if (level_read_file(path, opt.max_bytes, &buf, &len, err) != 0)
        return -1;
    int rc = sim_level_parse_obj(name, buf, len, &opt, out, err);
    free(buf);
    return rc;
}
