// keel recordings: the header (HEAD) as tagged entries, the default header
// and the build id. MIT licence, see LICENSE.
//
// HEAD is a list of entries, each
//   name length (u8) | name | type (u8) | value length (varint) | value
// with type 1 an unsigned varint, 2 a signed (zigzag) varint, 3 text bytes.
// A reader skips names it does not know (their length says how far) and
// leaves fields a file lacks at their defaults, so fields can be added
// without a format version bump. Arrays are spelled out in names:
// "platform.0.point.2.x".
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/net_proto.h>
#include <keel/sim_level.h>

#include "rec_internal.h"

enum { HE_UINT = 1, HE_SINT = 2, HE_TEXT = 3 };

// What a header field is in C.
typedef enum hf_kind { HF_U32, HF_I32, HF_U64, HF_BOOL, HF_TEXT, HF_CHAR, HF_ENUM } hf_kind;

typedef struct hf_desc {
    const char *name;
    hf_kind kind;
    size_t offset, size;
} hf_desc;

_Static_assert(sizeof(rec_kind) == sizeof(int) && sizeof(rec_level_kind) == sizeof(int),
               "enums are stored through an int");

#define F(name, kind, member)                                                       \
    {                                                                               \
        name, kind, offsetof(rec_header, member), sizeof(((rec_header *)0)->member) \
    }
#define SHAPE(p, m)                                                                                   \
    F(p ".type", HF_I32, m.type), F(p ".radius", HF_I32, m.radius), F(p ".half.x", HF_I32, m.half.x), \
        F(p ".half.y", HF_I32, m.half.y), F(p ".half.z", HF_I32, m.half.z)

// The order entries are written in; format_version first so a reader meets it first.
static const hf_desc top_fields[] = {
    F("format_version", HF_U32, format_version),
    F("behaviour_version", HF_U32, behaviour_version),
    F("kind", HF_ENUM, kind),
    F("settings.tick_rate", HF_I32, settings.tick_rate),
    SHAPE("settings.stand_shape", settings.stand_shape),
    SHAPE("settings.crouch_shape", settings.crouch_shape),
    F("settings.gravity", HF_I32, settings.gravity),
    F("settings.max_speed", HF_I32, settings.max_speed),
    F("settings.crouch_speed_scale", HF_I32, settings.crouch_speed_scale),
    F("settings.accelerate", HF_I32, settings.accelerate),
    F("settings.air_accelerate", HF_I32, settings.air_accelerate),
    F("settings.air_max_speed", HF_I32, settings.air_max_speed),
    F("settings.friction", HF_I32, settings.friction),
    F("settings.stop_speed", HF_I32, settings.stop_speed),
    F("settings.jump_velocity", HF_I32, settings.jump_velocity),
    F("settings.step_height", HF_I32, settings.step_height),
    F("settings.max_slope_cos", HF_I32, settings.max_slope_cos),
    F("settings.skin", HF_I32, settings.skin),
    F("settings.max_slide_iterations", HF_I32, settings.max_slide_iterations),
    F("settings.depen_iterations", HF_I32, settings.depen_iterations),
    F("settings.fly_speed", HF_I32, settings.fly_speed),
    F("settings.swim_speed", HF_I32, settings.swim_speed),
    F("settings.water_gravity_scale", HF_I32, settings.water_gravity_scale),
    F("settings.respawn_depth", HF_I32, settings.respawn_depth),
    F("settings_digest", HF_U64, settings_digest),
    F("level.kind", HF_ENUM, level.kind),
    F("level.path", HF_TEXT, level.path),
    F("level.scale", HF_TEXT, level.scale),
    F("level.up_axis", HF_CHAR, level.up_axis),
    F("level.generate_triangles", HF_U32, level.generate_triangles),
    F("level.generate_seed", HF_U32, level.generate_seed),
    F("level.digest", HF_U64, level.digest),
    F("platform_count", HF_U32, platform_count),
    F("water_count", HF_U32, water_count),
    F("max_characters", HF_U32, max_characters),
    F("keyframe_interval", HF_U32, keyframe_interval),
    F("compress", HF_BOOL, compress),
    F("build_id", HF_TEXT, build_id),
    F("source", HF_TEXT, source),
    F("client_character", HF_U32, client_character),
    F("client_prediction_cap", HF_U32, client_prediction_cap),
    F("substitutes_marked", HF_BOOL, substitutes_marked),
};
#undef F
#undef SHAPE

#define P(name, member)                                     \
    {                                                       \
        name, HF_I32, offsetof(sim_platform_def, member), 4 \
    }
static const hf_desc platform_fields[] = {
    {"id", HF_U32, offsetof(sim_platform_def, id), 4},
    P("half.x", half.x),
    P("half.y", half.y),
    P("half.z", half.z),
    {"point_count", HF_U32, offsetof(sim_platform_def, point_count), 4},
    {"ticks_per_leg", HF_U32, offsetof(sim_platform_def, ticks_per_leg), 4},
    {"pause_ticks", HF_U32, offsetof(sim_platform_def, pause_ticks), 4},
};
#undef P
#define W(name, member)                             \
    {                                               \
        name, HF_I32, offsetof(sim_aabb, member), 4 \
    }
static const hf_desc water_fields[] = {
    W("min.x", min.x), W("min.y", min.y), W("min.z", min.z), W("max.x", max.x), W("max.y", max.y), W("max.z", max.z),
};
#undef W
static const char *const axis_names[3] = {"x", "y", "z"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

// ---- the build id ----------------------------------------------------------

#define KEEL_STR2(x) #x
#define KEEL_STR(x) KEEL_STR2(x)

#if defined(__clang__)
#define BUILD_COMPILER \
    "clang " KEEL_STR(__clang_major__) "." KEEL_STR(__clang_minor__) "." KEEL_STR(__clang_patchlevel__)
#elif defined(__GNUC__)
#define BUILD_COMPILER "gcc " KEEL_STR(__GNUC__) "." KEEL_STR(__GNUC_MINOR__) "." KEEL_STR(__GNUC_PATCHLEVEL__)
#elif defined(__TINYC__)
#define BUILD_COMPILER "tcc " KEEL_STR(__TINYC__)
#elif defined(_MSC_VER)
#define BUILD_COMPILER "msvc " KEEL_STR(_MSC_VER)
#else
#define BUILD_COMPILER "cc"
#endif

#if defined(__OPTIMIZE_SIZE__)
#define BUILD_OPT " -Os"
#elif defined(__OPTIMIZE__)
#define BUILD_OPT " -O"
#else
#define BUILD_OPT " -O0"
#endif

#if defined(__x86_64__) || defined(_M_X64)
#define BUILD_ARCH " x86_64"
#elif defined(__aarch64__) || defined(_M_ARM64)
#define BUILD_ARCH " aarch64"
#elif defined(__i386__) || defined(_M_IX86)
#define BUILD_ARCH " i386"
#elif defined(__arm__) || defined(_M_ARM)
#define BUILD_ARCH " arm"
#elif defined(__s390x__)
#define BUILD_ARCH " s390x"
#elif defined(__wasm64__)
#define BUILD_ARCH " wasm64"
#elif defined(__wasm32__)
#define BUILD_ARCH " wasm32"
#elif defined(__riscv) && defined(__riscv_xlen) && __riscv_xlen == 64
#define BUILD_ARCH " riscv64"
#elif defined(__riscv)
#define BUILD_ARCH " riscv"
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define BUILD_ARCH " ppc64le"
#elif defined(__powerpc64__)
#define BUILD_ARCH " ppc64"
#else
#define BUILD_ARCH " unknown-arch"
#endif

// The system the build is for: recordings made on Windows and on Linux by
// the same compiler on the same CPU are told apart by it.
#if defined(__EMSCRIPTEN__)
#define BUILD_OS " emscripten"
#elif defined(_WIN32)
#define BUILD_OS " windows"
#elif defined(__linux__)
#define BUILD_OS " linux"
#else
#define BUILD_OS " other-os"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define BUILD_SAN " asan"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUILD_SAN " asan"
#endif
#endif
#ifndef BUILD_SAN
#define BUILD_SAN ""
#endif

#if defined(__AVX2__)
#define BUILD_ISA " avx2"
#elif defined(__SSE4_2__)
#define BUILD_ISA " sse4.2"
#else
#define BUILD_ISA ""
#endif

#if defined(NDEBUG)
#define BUILD_NDEBUG " ndebug"
#else
#define BUILD_NDEBUG ""
#endif

#if defined(KEEL_GIT_COMMIT)
#define BUILD_COMMIT " " KEEL_STR(KEEL_GIT_COMMIT)
#else
#define BUILD_COMMIT ""
#endif

const char *rec_build_id(void)
{
    return BUILD_COMPILER BUILD_OPT BUILD_ARCH BUILD_OS BUILD_ISA BUILD_SAN BUILD_NDEBUG BUILD_COMMIT;
}

// ---- defaults ----------------------------------------------------------------

rec_header rec_default_header(void)
{
    rec_header h;
    memset(&h, 0, sizeof h);
    h.format_version = REC_FORMAT_VERSION;
    h.behaviour_version = NET_BEHAVIOUR_VERSION;
    h.kind = REC_KIND_SCENE;
    h.settings = sim_move_default_settings();
    h.settings_digest = net_settings_digest(&h.settings);
    h.level.kind = REC_LEVEL_BUILTIN;
    h.level.up_axis = 'y';
    sim_level level;
    if (sim_level_builtin(&level) == 0) {
        h.level.digest = net_level_digest(&level);
        sim_level_free(&level);
    }
    h.max_characters = 64;
    h.keyframe_interval = REC_DEFAULT_KEYFRAME_INTERVAL;
    h.compress = true;
    snprintf(h.build_id, sizeof h.build_id, "%s", rec_build_id());
    return h;
}

void rec_header_set_scene(rec_header *h, const sim_scene *scene)
{
    uint32_t np = sim_scene_platform_count(scene), nw = sim_scene_water_count(scene);
    h->platform_count = np < REC_MAX_PLATFORMS ? np : REC_MAX_PLATFORMS;
    for (uint32_t i = 0; i < h->platform_count; i++)
        h->platforms[i] = *sim_scene_platform(scene, i);
    h->water_count = nw < REC_MAX_WATERS ? nw : REC_MAX_WATERS;
    for (uint32_t i = 0; i < h->water_count; i++)
        h->waters[i] = sim_scene_water(scene, i);
    uint32_t cap = sim_scene_capacity(scene);
    h->max_characters = cap < REC_MAX_CHARACTERS ? cap : REC_MAX_CHARACTERS;
    rec_header_set_game(h, sim_scene_game(scene));
}

// ---- encoding ------------------------------------------------------------------

static void entry_head(rec_buf *b, const char *name, uint8_t type)
{
    size_t len = strlen(name);
    rec_put_u8(b, (uint8_t)len);
    rec_put_bytes(b, name, len);
    rec_put_u8(b, type);
}

static void entry_uint(rec_buf *b, const char *name, uint64_t v)
{
    rec_buf tmp = {0};
    uint8_t space[10];
    tmp.data = space;
    tmp.cap = sizeof space;
    rec_put_var(&tmp, v);
    entry_head(b, name, HE_UINT);
    rec_put_var(b, tmp.size);
    rec_put_bytes(b, space, tmp.size);
}

static void entry_sint(rec_buf *b, const char *name, int64_t v)
{
    rec_buf tmp = {0};
    uint8_t space[10];
    tmp.data = space;
    tmp.cap = sizeof space;
    rec_put_svar(&tmp, v);
    entry_head(b, name, HE_SINT);
    rec_put_var(b, tmp.size);
    rec_put_bytes(b, space, tmp.size);
}

static void entry_text(rec_buf *b, const char *name, const char *text, size_t cap)
{
    size_t len = 0;
    while (len < cap && text[len])
        len++;
    entry_head(b, name, HE_TEXT);
    rec_put_var(b, len);
    rec_put_bytes(b, text, len);
}

static void put_field(rec_buf *b, const char *name, const hf_desc *d, const void *base)
{
    const char *p = (const char *)base + d->offset;
    switch (d->kind) {
    case HF_U32: {
        uint32_t v;
        memcpy(&v, p, 4);
        entry_uint(b, name, v);
        break;
    }
    case HF_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        entry_sint(b, name, v);
        break;
    }
    case HF_ENUM: {
        int v;
        memcpy(&v, p, sizeof v);
        entry_sint(b, name, v);
        break;
    }
    case HF_U64: {
        uint64_t v;
        memcpy(&v, p, 8);
        entry_uint(b, name, v);
        break;
    }
    case HF_BOOL: {
        bool v;
        memcpy(&v, p, sizeof v);
        entry_uint(b, name, v ? 1 : 0);
        break;
    }
    case HF_CHAR: {
        entry_uint(b, name, (uint8_t)*p);
        break;
    }
    case HF_TEXT: entry_text(b, name, p, d->size); break;
    }
}

void rec_header_encode(rec_buf *b, const rec_header *h)
{
    for (size_t i = 0; i < COUNT(top_fields); i++) {
        // Written only when set: a header without respawning (or without
        // marked substitutes) has the bytes it had before the field existed
        // (readers leave it at 0).
        if (top_fields[i].offset == offsetof(rec_header, settings.respawn_depth) && h->settings.respawn_depth == 0)
            continue;
        if (top_fields[i].offset == offsetof(rec_header, substitutes_marked) && !h->substitutes_marked)
            continue;
        put_field(b, top_fields[i].name, &top_fields[i], h);
    }
    char name[64];
    for (uint32_t i = 0; i < h->platform_count && i < REC_MAX_PLATFORMS; i++) {
        const sim_platform_def *pd = &h->platforms[i];
        for (size_t k = 0; k < COUNT(platform_fields); k++) {
            snprintf(name, sizeof name, "platform.%u.%s", i, platform_fields[k].name);
            put_field(b, name, &platform_fields[k], pd);
        }
        for (uint32_t m = 0; m < pd->point_count && m < SIM_PLATFORM_MAX_POINTS; m++) {
            const sim_fx v[3] = {pd->points[m].x, pd->points[m].y, pd->points[m].z};
            for (int a = 0; a < 3; a++) {
                snprintf(name, sizeof name, "platform.%u.point.%u.%s", i, m, axis_names[a]);
                entry_sint(b, name, v[a]);
            }
        }
    }
    for (uint32_t i = 0; i < h->water_count && i < REC_MAX_WATERS; i++) {
        for (size_t k = 0; k < COUNT(water_fields); k++) {
            snprintf(name, sizeof name, "water.%u.%s", i, water_fields[k].name);
            put_field(b, name, &water_fields[k], &h->waters[i]);
        }
    }
}

// ---- decoding ------------------------------------------------------------------

// Parse "<digits>." at *s into *index (below limit), advancing *s.
static bool parse_index(const char **s, uint32_t limit, uint32_t *index)
{
    const char *p = *s;
    uint32_t v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10u + (uint32_t)(*p - '0');
        if (++digits > 4)
            return false;
        p++;
    }
    if (digits == 0 || *p != '.' || v >= limit)
        return false;
    *index = v;
    *s = p + 1;
    return true;
}

static const hf_desc *find_desc(const hf_desc *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    return NULL;
}

typedef struct entry_value {
    uint8_t type;
    uint64_t u;
    int64_t s;
    const uint8_t *text;
    size_t text_len;
} entry_value;

// Store an entry's value into a described field. NULL when fine, else why.
static const char *store_field(const hf_desc *d, void *base, const entry_value *v)
{
    char *p = (char *)base + d->offset;
    bool want_sint = d->kind == HF_I32 || d->kind == HF_ENUM;
    bool want_text = d->kind == HF_TEXT;
    if (want_text ? v->type != HE_TEXT : want_sint ? v->type != HE_SINT : v->type != HE_UINT)
        return "has the wrong entry type";
    switch (d->kind) {
    case HF_U32: {
        if (v->u > UINT32_MAX)
            return "is above 32 bits";
        uint32_t x = (uint32_t)v->u;
        memcpy(p, &x, 4);
        break;
    }
    case HF_I32:
    case HF_ENUM: {
        if (v->s < INT32_MIN || v->s > INT32_MAX)
            return "is outside 32 bits";
        int32_t x = (int32_t)v->s;
        if (d->kind == HF_ENUM) {
            int e = x;
            memcpy(p, &e, sizeof e);
        } else {
            memcpy(p, &x, 4);
        }
        break;
    }
    case HF_U64: memcpy(p, &v->u, 8); break;
    case HF_BOOL: {
        if (v->u > 1)
            return "is not 0 or 1";
        bool x = v->u == 1;
        memcpy(p, &x, sizeof x);
        break;
    }
    case HF_CHAR:
        if (v->u > 0x7F)
            return "is not an ASCII character";
        *p = (char)v->u;
        break;
    case HF_TEXT:
        if (v->text_len >= d->size)
            return "is too long";
        for (size_t i = 0; i < v->text_len; i++)
            if (v->text[i] == 0)
                return "holds a NUL byte";
        memcpy(p, v->text, v->text_len);
        p[v->text_len] = 0;
        break;
    }
    return NULL;
}

// Route a named entry to its field; unknown names are ignored.
static const char *store_entry(rec_header *h, const char *name, const entry_value *v)
{
    const hf_desc *d = find_desc(top_fields, COUNT(top_fields), name);
    if (d)
        return store_field(d, h, v);
    const char *s = name;
    uint32_t i;
    if (strncmp(s, "platform.", 9) == 0) {
        s += 9;
        if (!parse_index(&s, REC_MAX_PLATFORMS, &i))
            return NULL;
        sim_platform_def *pd = &h->platforms[i];
        if (strncmp(s, "point.", 6) == 0) {
            s += 6;
            uint32_t m;
            if (!parse_index(&s, SIM_PLATFORM_MAX_POINTS, &m))
                return NULL;
            sim_fx *axis = strcmp(s, "x") == 0   ? &pd->points[m].x
                           : strcmp(s, "y") == 0 ? &pd->points[m].y
                           : strcmp(s, "z") == 0 ? &pd->points[m].z
                                                 : NULL;
            if (!axis)
                return NULL;
            if (v->type != HE_SINT)
                return "has the wrong entry type";
            if (v->s < INT32_MIN || v->s > INT32_MAX)
                return "is outside 32 bits";
            *axis = (sim_fx)v->s;
            return NULL;
        }
        d = find_desc(platform_fields, COUNT(platform_fields), s);
        return d ? store_field(d, pd, v) : NULL;
    }
    if (strncmp(s, "water.", 6) == 0) {
        s += 6;
        if (!parse_index(&s, REC_MAX_WATERS, &i))
            return NULL;
        d = find_desc(water_fields, COUNT(water_fields), s);
        return d ? store_field(d, &h->waters[i], v) : NULL;
    }
    return NULL;
}

static bool head_fail(rec_error *err, uint64_t at, const char *fmt, ...) REC_PRINTF(3, 4);
static bool head_fail(rec_error *err, uint64_t at, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rec_error_set(err, at, REC_T_HEAD, "header: %s", msg);
    return false;
}

static bool platform_valid(const sim_platform_def *p, const char **why)
{
    *why = NULL;
    if (p->id == 0 || (p->id & SIM_FEATURE_OBJECT_BIT))
        *why = "id is 0 or too large";
    else if (p->point_count < 1 || p->point_count > SIM_PLATFORM_MAX_POINTS)
        *why = "point_count is outside 1..8";
    else if (p->ticks_per_leg < 1)
        *why = "ticks_per_leg is 0";
    return *why == NULL;
}

// Checks both the reader and the writer make.
static bool header_valid(const rec_header *h, rec_error *err, uint64_t at)
{
    if (h->kind != REC_KIND_SCENE && h->kind != REC_KIND_CLIENT)
        return head_fail(err, at, "unknown recording kind %d", (int)h->kind);
    const char *why = NULL;
    if (!sim_move_settings_check(&h->settings, &why))
        return head_fail(err, at, "movement settings refused: %s", why ? why : "?");
    if (h->settings_digest != net_settings_digest(&h->settings))
        return head_fail(err, at, "settings digest %016llx does not match the settings (%016llx)",
                         (unsigned long long)h->settings_digest, (unsigned long long)net_settings_digest(&h->settings));
    if (h->level.kind != REC_LEVEL_BUILTIN && h->level.kind != REC_LEVEL_GENERATED && h->level.kind != REC_LEVEL_OBJ)
        return head_fail(err, at, "unknown level kind %d", (int)h->level.kind);
    if (h->level.kind == REC_LEVEL_OBJ && h->level.up_axis != 'y' && h->level.up_axis != 'z')
        return head_fail(err, at, "level up axis is not 'y' or 'z'");
    if (h->platform_count > REC_MAX_PLATFORMS)
        return head_fail(err, at, "%u platforms (at most %u)", h->platform_count, REC_MAX_PLATFORMS);
    if (h->water_count > REC_MAX_WATERS)
        return head_fail(err, at, "%u water boxes (at most %u)", h->water_count, REC_MAX_WATERS);
    for (uint32_t i = 0; i < h->platform_count; i++) {
        if (!platform_valid(&h->platforms[i], &why))
            return head_fail(err, at, "platform %u: %s", i, why);
        for (uint32_t j = 0; j < i; j++)
            if (h->platforms[j].id == h->platforms[i].id)
                return head_fail(err, at, "platform %u: id %u used twice", i, h->platforms[i].id);
    }
    if (h->max_characters < 1 || h->max_characters > REC_MAX_CHARACTERS)
        return head_fail(err, at, "max_characters %u is outside 1..%u", h->max_characters, REC_MAX_CHARACTERS);
    return true;
}

bool rec_header_check(const rec_header *h, rec_error *err)
{
    if (h->format_version < 1 || h->format_version > REC_FORMAT_VERSION)
        return head_fail(err, 0, "format version %u: this build writes 1 to %u", h->format_version, REC_FORMAT_VERSION);
    return header_valid(h, err, 0);
}

bool rec_header_decode(const uint8_t *data, size_t n, uint64_t base, rec_header *h, rec_error *err)
{
    memset(h, 0, sizeof *h);
    h->settings = sim_move_default_settings();
    h->level.up_axis = 'y';
    bool have_version = false;
    rec_rd r;
    rec_rd_init(&r, data, n, base);
    char name[256];
    while (rec_rd_left(&r) > 0) {
        uint64_t at = rec_rd_offset(&r);
        uint8_t len = rec_get_u8(&r);
        const uint8_t *nm = rec_get_bytes(&r, len);
        uint8_t type = rec_get_u8(&r);
        uint64_t vlen = rec_get_var(&r);
        if (!rec_rd_ok(&r))
            return head_fail(err, r.fault_at, "an entry %s", r.fault);
        if (vlen > rec_rd_left(&r))
            return head_fail(err, at, "an entry's value runs past the end of the chunk");
        if (len == 0)
            return head_fail(err, at, "an entry has an empty name");
        memcpy(name, nm, len);
        name[len] = 0;
        for (uint32_t c = 0; c < len; c++)
            if (name[c] < 0x21 || name[c] > 0x7E)
                return head_fail(err, at, "an entry name has a byte that is not printable");
        entry_value v = {.type = type};
        uint64_t vat = rec_rd_offset(&r);
        const uint8_t *vp = rec_get_bytes(&r, (size_t)vlen);
        if (type == HE_UINT || type == HE_SINT) {
            rec_rd vr;
            rec_rd_init(&vr, vp, (size_t)vlen, vat);
            if (type == HE_UINT)
                v.u = rec_get_var(&vr);
            else
                v.s = rec_get_svar(&vr);
            if (!rec_rd_ok(&vr) || rec_rd_left(&vr) != 0)
                return head_fail(err, at, "entry %s: malformed number", name);
        } else if (type == HE_TEXT) {
            v.text = vp;
            v.text_len = (size_t)vlen;
        }
        // other types: a later format's; skipped unless the name is ours
        if (strcmp(name, "format_version") == 0)
            have_version = true;
        const char *why = store_entry(h, name, &v);
        if (why)
            return head_fail(err, at, "entry %s %s", name, why);
    }
    if (!have_version || h->format_version == 0)
        return head_fail(err, base, "no format version");
    if (h->format_version > REC_FORMAT_VERSION)
        return head_fail(err, base, "format version %u is newer than this build reads (%u)", h->format_version,
                         REC_FORMAT_VERSION);
    h->settings.cookie = sim_move_default_settings().cookie;
    return header_valid(h, err, base);
}
