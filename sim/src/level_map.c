// keel: Quake .map loader (standard and Valve 220 formats, as TrenchBroom writes them). MIT licence, see LICENSE.
//
// The text is entities in braces; an entity holds "key" "value" pairs and
// brushes; a brush holds face lines, each three points on a plane followed by
// a texture name and its alignment:
//   ( x y z ) ( x y z ) ( x y z ) TEXTURE xoff yoff rot xscale yscale        standard
//   ( x y z ) ( x y z ) ( x y z ) TEXTURE [ ux uy uz uoff ] [ vx vy vz voff ] rot xscale yscale   Valve 220
// "//" starts a comment to the end of the line. Numbers are read exactly
// (no floating point): the points into Q8 Quake units, the alignment only
// checked for syntax. Parsing is one pass, linear in the text; the brush
// geometry (level_map_brush.c) is bounded per face and by a CSG budget.
#include <keel/sim_level.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "level_map.h"
#include "level_text.h"

#define MAP_DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define MAP_SCALE_MAX 1000000u // exclusive bound of the scale's significant digits

sim_map_options sim_map_default_options(void)
{
    sim_map_options o;
    o.unit_scale = "0.025";
    o.max_bytes = MAP_DEFAULT_MAX_BYTES;
    o.csg_work_limit = (uint32_t)1 << 22;
    return o;
}

// ---- growable arrays ------------------------------------------------------------

typedef struct map_vec {
    void *data;
    uint32_t count, capacity;
} map_vec;

/// Room for one more element of `size` bytes; NULL when out of memory or
/// past MAP_MAX_ELEMENTS.
static void *vec_push(map_vec *v, size_t size)
{
    if (v->count == v->capacity) {
        uint32_t cap = v->capacity ? v->capacity * 2 : 16;
        if (v->count >= MAP_MAX_ELEMENTS)
            return NULL;
        void *d = realloc(v->data, (size_t)cap * size);
        if (!d)
            return NULL;
        v->data = d;
        v->capacity = cap;
    }
    return (char *)v->data + (size_t)v->count++ * size;
}

typedef struct map_parser {
    const char *name;
    sim_error *err;
    const char *p, *end;
    uint32_t line;
    map_vec faces, brushes, entities, keys;
    char *pool;
    size_t pool_len, pool_cap;
    uint32_t entity, brush; ///< numbers for messages
} map_parser;

static int fail_oom(map_parser *ps)
{
    level_set_error(ps->name, ps->err, 0, "out of memory (or more than %u entities, brushes or faces)",
                    (unsigned)MAP_MAX_ELEMENTS);
    return -1;
}

/// Appends a NUL-terminated copy of s[0..len) to the pool; its offset, or
/// UINT32_MAX when out of memory.
static uint32_t pool_add(map_parser *ps, const char *s, size_t len)
{
    if (ps->pool_len + len + 1 > ps->pool_cap) {
        size_t cap = ps->pool_cap ? ps->pool_cap : 4096;
        while (cap < ps->pool_len + len + 1)
            cap *= 2;
        if (cap > UINT32_MAX)
            return UINT32_MAX;
        char *np = realloc(ps->pool, cap);
        if (!np)
            return UINT32_MAX;
        ps->pool = np;
        ps->pool_cap = cap;
    }
    uint32_t at = (uint32_t)ps->pool_len;
    memcpy(ps->pool + at, s, len);
    ps->pool[at + len] = '\0';
    ps->pool_len += len + 1;
    return at;
}

// ---- tokens ----------------------------------------------------------------------

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

static bool is_delim(char c) { return is_space(c) || c == '(' || c == ')' || c == '[' || c == ']' || c == '"'; }

/// Skips spaces, newlines (counting them) and "//" comments. When `in_line`,
/// stops at a newline instead. Returns false on a NUL byte (error set).
static bool skip(map_parser *ps, bool in_line)
{
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '\n') {
            if (in_line)
                return true;
            ps->line++;
            ps->p++;
        } else if (is_space(c)) {
            ps->p++;
        } else if (c == '/' && ps->p + 1 < ps->end && ps->p[1] == '/') {
            while (ps->p < ps->end && *ps->p != '\n')
                ps->p++;
        } else if (c == '\0') {
            level_set_error(ps->name, ps->err, ps->line, "NUL byte (not a text file?)");
            return false;
        } else {
            return true;
        }
    }
    return true;
}

/// The word at p: up to a space or a delimiter (at least one byte).
static size_t word_len(const map_parser *ps)
{
    const char *s = ps->p;
    while (s < ps->end && !is_delim(*s) && *s != '\0')
        s++;
    return (size_t)(s - ps->p);
}

/// What stands at p, for messages.
static const char *found(const map_parser *ps, char buf[32])
{
    if (ps->p >= ps->end)
        return "the end of the file";
    size_t n = word_len(ps);
    return level_quote(ps->p, n ? n : 1, buf);
}

/// "entity E" or "entity E, brush B" for messages.
static const char *where(const map_parser *ps, bool brush, char buf[48])
{
    if (brush)
        snprintf(buf, 48, "entity %u, brush %u", (unsigned)ps->entity, (unsigned)ps->brush);
    else
        snprintf(buf, 48, "entity %u", (unsigned)ps->entity);
    return buf;
}

static bool expect(map_parser *ps, char c, bool in_brush)
{
    if (!skip(ps, false))
        return false;
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    char q[32], w[48];
    level_set_error(ps->name, ps->err, ps->line, "%s: expected '%c', found '%s'", where(ps, in_brush, w), c,
                    found(ps, q));
    return false;
}

/// The token at p when it is a plain integer, [+-]? and 1 to 6 digits (as
/// nearly every number of a .map is): its length, and its value into *v; 0
/// for any other token. It ends where word_len ends it.
static size_t plain_integer(const map_parser *ps, int64_t *v)
{
    const char *s = ps->p, *e = ps->end;
    bool neg = s < e && *s == '-';
    s += s < e && (*s == '-' || *s == '+');
    const char *digits = s;
    int64_t x = 0;
    while (s < e && s - digits < 7 && *s >= '0' && *s <= '9')
        x = 10 * x + (*s++ - '0');
    if (s == digits || s - digits == 7 || (s < e && !is_delim(*s) && *s != '\0'))
        return 0;
    *v = neg ? -x : x;
    return (size_t)(s - ps->p);
}

/// A number token, checked for syntax; `d` receives it, and *v its value
/// when it is a plain integer (*is_int, when given, says whether it is).
static bool number(map_parser *ps, level_decimal *d, const char **tok, size_t *len, int64_t *v, bool *is_int)
{
    if (!skip(ps, false))
        return false;
    *tok = ps->p;
    int64_t x;
    size_t n = plain_integer(ps, &x);
    if (is_int)
        *is_int = n > 0;
    if (n > 0) {
        // what level_decimal_parse makes of it
        size_t sign = (*tok)[0] == '-' || (*tok)[0] == '+';
        *d = (level_decimal){(*tok)[0] == '-', *tok + sign, n - sign, *tok + n, 0, 0};
        *len = n;
        *v = x;
        ps->p += n;
        return true;
    }
    *len = word_len(ps);
    if (*len == 0 || !level_decimal_parse(*tok, *len, d)) {
        char q[32], w[48];
        level_set_error(ps->name, ps->err, ps->line, "%s: bad number '%s'", where(ps, true, w), found(ps, q));
        return false;
    }
    ps->p += *len;
    return true;
}

/// A coordinate in Q8 units within MAP_COORD_LIMIT.
static bool coordinate(map_parser *ps, int64_t *out, bool in_brush)
{
    static const level_scale q8 = {390625, -8}; // 1/256: the raw result is value * 256
    level_decimal d;
    const char *tok;
    size_t len;
    sim_fx raw = 0;
    int64_t v = 0;
    bool is_int = false;
    if (!number(ps, &d, &tok, &len, &v, &is_int))
        return false;
    if (is_int && v * 256 <= MAP_COORD_LIMIT && v * 256 >= -MAP_COORD_LIMIT) {
        *out = v * 256; // what level_decimal_to_raw makes of an integer in units of 1/256 (exact)
        return true;
    }
    if (!level_decimal_to_raw(&d, &q8, &raw) || raw > MAP_COORD_LIMIT || raw < -MAP_COORD_LIMIT) {
        char q[32], w[48];
        level_set_error(ps->name, ps->err, ps->line,
                        "%s: coordinate '%s' is out of range (more than %d units from "
                        "the origin)",
                        where(ps, in_brush, w), level_quote(tok, len, q), (int)(MAP_COORD_LIMIT >> 8));
        return false;
    }
    *out = raw;
    return true;
}

// ---- faces and brushes -------------------------------------------------------------

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/// The plane through three Q8 points, normal (p0 - p1) x (p2 - p1) as Quake
/// takes it (outward for the brush). False when the points are collinear.
static bool plane_from_points(int64_t p[3][3], map_plane *pl)
{
    int64_t a[3], b[3], c[3];
    for (int i = 0; i < 3; i++) {
        a[i] = p[0][i] - p[1][i]; // within 2^25
        b[i] = p[2][i] - p[1][i];
    }
    c[0] = a[1] * b[2] - a[2] * b[1]; // within 2^51
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
    int64_t m = abs64(c[0]) > abs64(c[1]) ? abs64(c[0]) : abs64(c[1]);
    m = m > abs64(c[2]) ? m : abs64(c[2]);
    if (m == 0)
        return false;
    // Bring the largest component to [2^29, 2^30] (or leave smaller ones
    // exact), so the squares' sum stays below 2^62.
    int64_t div = 1;
    while (m / div > ((int64_t)1 << 30))
        div *= 2;
    for (int i = 0; i < 3; i++)
        c[i] = sim_div_round_s64(c[i], div);
    uint64_t sq = (uint64_t)(c[0] * c[0]) + (uint64_t)(c[1] * c[1]) + (uint64_t)(c[2] * c[2]);
    int64_t len = (int64_t)sim_isqrt_u64(sq);
    if (len == 0)
        return false;
    for (int i = 0; i < 3; i++)
        pl->n[i] = sim_div_round_s64(c[i] * ((int64_t)1 << 30), len);
    pl->d = pl->n[0] * p[0][0] + pl->n[1] * p[0][1] + pl->n[2] * p[0][2];
    return true;
}

static bool tex_is(const char *t, size_t len, const char *name)
{
    size_t n = strlen(name);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != name[i])
            return false;
    }
    return true;
}

/// The texture name and its alignment numbers, to the end of the line.
static bool face_texture(map_parser *ps, uint32_t *flags)
{
    char w[48];
    if (!skip(ps, true))
        return false;
    const char *t = ps->p;
    size_t len;
    if (ps->p < ps->end && *ps->p == '"') { // a quoted name (spaces inside)
        const char *close = memchr(ps->p + 1, '"', (size_t)(ps->end - ps->p - 1));
        const char *nl = memchr(ps->p + 1, '\n', (size_t)(ps->end - ps->p - 1));
        if (!close || (nl && nl < close)) {
            level_set_error(ps->name, ps->err, ps->line, "%s: texture name without its closing quote",
                            where(ps, true, w));
            return false;
        }
        t = ps->p + 1;
        len = (size_t)(close - t);
        ps->p = close + 1;
    } else {
        while (ps->p < ps->end && !is_space(*ps->p) && *ps->p != '\0')
            ps->p++;
        len = (size_t)(ps->p - t);
    }
    if (len == 0) {
        level_set_error(ps->name, ps->err, ps->line, "%s: face without a texture name", where(ps, true, w));
        return false;
    }
    if (t[0] == '*')
        *flags |= MAP_TEX_LIQUID;
    else if (tex_is(t, len, "hint") || tex_is(t, len, "hintskip"))
        *flags |= MAP_TEX_HINT;
    else if (tex_is(t, len, "origin"))
        *flags |= MAP_TEX_ORIGIN;
    else
        *flags |= MAP_TEX_OTHER;
    // Valve 220: two bracketed axes first, then rotation and scales;
    // standard: offsets, rotation and scales. Up to three more numbers
    // (Quake 2's surface flags) are accepted.
    int need = 5, count = 0;
    if (!skip(ps, true))
        return false;
    if (ps->p < ps->end && *ps->p == '[') {
        for (int k = 0; k < 2; k++) {
            level_decimal d;
            int64_t iv;
            const char *tok;
            size_t tl;
            if (!expect(ps, '[', true))
                return false;
            for (int i = 0; i < 4; i++)
                if (!number(ps, &d, &tok, &tl, &iv, NULL))
                    return false;
            if (!expect(ps, ']', true))
                return false;
        }
        need = 3;
    }
    for (;;) {
        if (!skip(ps, true))
            return false;
        if (ps->p >= ps->end || *ps->p == '\n')
            break;
        level_decimal d;
        int64_t iv;
        const char *tok;
        size_t tl;
        if (!number(ps, &d, &tok, &tl, &iv, NULL))
            return false;
        count++;
    }
    if (count < need || count > need + 3) {
        level_set_error(ps->name, ps->err, ps->line, "%s: %d texture numbers after the name (expected %d)",
                        where(ps, true, w), count, need);
        return false;
    }
    return true;
}

static int parse_face(map_parser *ps, map_brush_src *br)
{
    char w[48];
    uint32_t line = ps->line;
    int64_t pt[3][3];
    for (int k = 0; k < 3; k++) {
        if (!expect(ps, '(', true))
            return -1;
        for (int i = 0; i < 3; i++)
            if (!coordinate(ps, &pt[k][i], true))
                return -1;
        if (!expect(ps, ')', true))
            return -1;
    }
    map_face f;
    memset(&f, 0, sizeof f);
    f.line = line;
    if (!plane_from_points(pt, &f.plane)) {
        level_set_error(ps->name, ps->err, line, "%s: degenerate plane (its three points are on one line)",
                        where(ps, true, w));
        return -1;
    }
    if (!face_texture(ps, &br->textures))
        return -1;
    if (br->face_count >= MAP_MAX_FACES) {
        level_set_error(ps->name, ps->err, line, "%s: more than %d faces", where(ps, true, w), MAP_MAX_FACES);
        return -1;
    }
    map_face *slot = vec_push(&ps->faces, sizeof f);
    if (!slot)
        return fail_oom(ps);
    *slot = f;
    br->face_count++;
    return 0;
}

/// Inside a brush or an entity opened at `line`: 1 at its '}' (taken), 0 at
/// anything else, -1 at the end of the file (error set).
static int block_next(map_parser *ps, uint32_t line, bool brush)
{
    char w[48];
    if (!skip(ps, false))
        return -1;
    if (ps->p >= ps->end) {
        level_set_error(ps->name, ps->err, line, "%s: %s not closed (missing '}')", where(ps, brush, w),
                        brush ? "brush" : "entity");
        return -1;
    }
    if (*ps->p != '}')
        return 0;
    ps->p++;
    return 1;
}

static int parse_brush(map_parser *ps, map_entity_src *e)
{
    char q[32], w[48];
    map_brush_src br;
    memset(&br, 0, sizeof br);
    br.line = ps->line;
    br.entity = e->index;
    br.index = ps->brush;
    br.first_face = ps->faces.count;
    ps->p++; // '{'
    for (;;) {
        int at = block_next(ps, br.line, true);
        if (at < 0)
            return -1;
        if (at > 0)
            break;
        if (*ps->p != '(') {
            size_t n = word_len(ps);
            if (n > 0 &&
                (tex_is(ps->p, n, "patchdef2") || tex_is(ps->p, n, "brushdef") || tex_is(ps->p, n, "patchdef3")))
                level_set_error(ps->name, ps->err, ps->line, "%s: '%s' (Quake 3 brushes and patches) is not supported",
                                where(ps, true, w), found(ps, q));
            else
                level_set_error(ps->name, ps->err, ps->line, "%s: expected a face '(' or '}', found '%s'",
                                where(ps, true, w), found(ps, q));
            return -1;
        }
        if (parse_face(ps, &br) != 0)
            return -1;
    }
    if (br.face_count < 4) {
        level_set_error(ps->name, ps->err, br.line, "%s: %u faces cannot close a solid (at least 4)",
                        where(ps, true, w), (unsigned)br.face_count);
        return -1;
    }
    if ((br.textures & ~(uint32_t)MAP_TEX_ORIGIN) != 0)
        br.textures &= ~(uint32_t)MAP_TEX_ORIGIN; // origin only when every face is
    map_brush_src *slot = vec_push(&ps->brushes, sizeof br);
    if (!slot)
        return fail_oom(ps);
    *slot = br;
    e->brush_count++;
    ps->brush++;
    return 0;
}

/// A quoted string at p (no escapes; may not span lines).
static bool quoted(map_parser *ps, uint32_t *offset)
{
    char w[48];
    const char *s = ps->p + 1;
    const char *close = memchr(s, '"', (size_t)(ps->end - s));
    const char *nl = memchr(s, '\n', (size_t)(ps->end - s));
    if (!close || (nl && nl < close)) {
        level_set_error(ps->name, ps->err, ps->line, "%s: string without its closing quote", where(ps, false, w));
        return false;
    }
    if (memchr(s, '\0', (size_t)(close - s))) {
        level_set_error(ps->name, ps->err, ps->line, "NUL byte (not a text file?)");
        return false;
    }
    *offset = pool_add(ps, s, (size_t)(close - s));
    if (*offset == UINT32_MAX) {
        fail_oom(ps);
        return false;
    }
    ps->p = close + 1;
    return true;
}

static int parse_entity(map_parser *ps)
{
    char q[32], w[48];
    map_entity_src e;
    memset(&e, 0, sizeof e);
    e.line = ps->line;
    e.index = ps->entity;
    e.first_key = ps->keys.count;
    e.first_brush = ps->brushes.count;
    ps->brush = 0;
    ps->p++; // '{'
    for (;;) {
        int at = block_next(ps, e.line, false);
        if (at < 0)
            return -1;
        if (at > 0)
            break;
        char c = *ps->p;
        if (c == '{') {
            if (parse_brush(ps, &e) != 0)
                return -1;
            continue;
        }
        if (c != '"') {
            level_set_error(ps->name, ps->err, ps->line, "%s: expected a \"key\", a brush '{' or '}', found '%s'",
                            where(ps, false, w), found(ps, q));
            return -1;
        }
        map_key_ref k;
        uint32_t key_line = ps->line;
        if (!quoted(ps, &k.key) || !skip(ps, true))
            return -1;
        if (ps->p >= ps->end || *ps->p != '"') {
            level_set_error(ps->name, ps->err, key_line, "%s: key \"%s\" without a quoted value on its line",
                            where(ps, false, w), level_quote(ps->pool + k.key, strlen(ps->pool + k.key), q));
            return -1;
        }
        if (!quoted(ps, &k.value))
            return -1;
        map_key_ref *slot = vec_push(&ps->keys, sizeof k);
        if (!slot)
            return fail_oom(ps);
        *slot = k;
        e.key_count++;
    }
    map_entity_src *slot = vec_push(&ps->entities, sizeof e);
    if (!slot)
        return fail_oom(ps);
    *slot = e;
    ps->entity++;
    return 0;
}

static int parse_text(map_parser *ps)
{
    char q[32];
    for (;;) {
        if (!skip(ps, false))
            return -1;
        if (ps->p >= ps->end)
            return 0;
        if (*ps->p != '{') {
            level_set_error(ps->name, ps->err, ps->line, "expected '{' to open entity %u, found '%s'",
                            (unsigned)ps->entity, found(ps, q));
            return -1;
        }
        if (parse_entity(ps) != 0)
            return -1;
    }
}

// ---- the public entry points ----------------------------------------------------------

int sim_level_parse_map(const char *name, const char *text, size_t length, const sim_map_options *options,
                        sim_level *out, sim_map *map, sim_error *err)
{
    sim_map_options opt = options ? *options : sim_map_default_options();
    map_parser ps;
    memset(&ps, 0, sizeof ps);
    ps.name = name ? name : "<memory>";
    ps.err = err;
    ps.line = 1;
    if (map)
        memset(map, 0, sizeof *map);
    if (opt.max_bytes == 0)
        opt.max_bytes = MAP_DEFAULT_MAX_BYTES;
    if (level_text_begin(ps.name, err, out, &text, &length, opt.max_bytes) != 0)
        return -1;
    if (!opt.unit_scale)
        opt.unit_scale = "0.025";
    level_scale sc;
    if (!level_scale_parse(opt.unit_scale, &sc) || sc.mantissa >= MAP_SCALE_MAX || sc.exponent > 18) {
        char q[32];
        level_set_error(ps.name, err, 0, "bad unit_scale '%s' (a positive decimal with at most 6 significant digits)",
                        level_quote(opt.unit_scale, strlen(opt.unit_scale), q));
        return -1;
    }
    ps.p = text;
    ps.end = text + length;
    int rc = parse_text(&ps);
    if (rc == 0 && ps.entities.count == 0) {
        level_set_error(ps.name, err, 0, "no entities (an empty map)");
        rc = -1;
    }
    if (rc == 0) {
        map_source src = {ps.faces.data, ps.brushes.data, ps.brushes.count, ps.entities.data, ps.entities.count,
                          ps.keys.data,  ps.keys.count,   ps.pool,          ps.pool_len};
        rc = map_finish(ps.name, &src, sc.mantissa, sc.exponent, opt.csg_work_limit, out, map, err);
        ps.pool = NULL; // map_finish took it
        // The scale in Q16.16 for sim_map_add_to_scene: 1 unit times the
        // scale, rounded as every coordinate is (a scale beyond the world's
        // range leaves 0: no level that large loads anyway).
        level_decimal one;
        sim_fx unit = 0;
        if (rc == 0 && map && level_decimal_parse("1", 1, &one) && !level_decimal_to_raw(&one, &sc, &unit))
            unit = 0;
        if (rc == 0 && map)
            map->unit_m = unit;
    }
    free(ps.faces.data);
    free(ps.brushes.data);
    free(ps.entities.data);
    free(ps.keys.data);
    free(ps.pool);
    return rc;
}

int sim_level_load_map(const char *path, const sim_map_options *options, sim_level *out, sim_map *map, sim_error *err)
{
    sim_map_options opt = options ? *options : sim_map_default_options();
    char *buf;
    size_t len;
    if (level_read_file(path, opt.max_bytes ? opt.max_bytes : MAP_DEFAULT_MAX_BYTES, &buf, &len, err) != 0) {
        if (out)
            memset(out, 0, sizeof *out);
        if (map)
            memset(map, 0, sizeof *map);
        return -1;
    }
    int rc = sim_level_parse_map(path, buf, len, &opt, out, map, err);
    free(buf);
    return rc;
}
