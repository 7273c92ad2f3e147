// keel: a game definition checked once (sim_game_create), its identity and
// the field-by-field checks of its structs. MIT licence, see LICENSE.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>

#include "game_internal.h"

#define GAME_DIGEST_FORMAT 1u

static bool refuse(sim_game_error *e, const char *reason, const char *field, int64_t element)
{
    if (e)
        *e = (sim_game_error){reason, field ? field : "", element};
    return false;
}

static void clear(sim_game_error *e)
{
    if (e)
        *e = (sim_game_error){"", "", -1};
}

sim_game_def sim_game_default_def(void)
{
    sim_game_def d;
    memset(&d, 0, sizeof d);
    d.abi_version = SIM_GAME_ABI_VERSION;
    return d;
}

// ---- field values ------------------------------------------------------------

int64_t game_field_get(const game_field *f, const uint8_t *base, uint32_t k)
{
    const uint8_t *p = base + f->offset + (size_t)k * f->stride;
    switch (f->esize) {
    case 1: {
        uint8_t u;
        memcpy(&u, p, 1);
        return f->kind == SIM_GAME_INT ? (int64_t)(int8_t)u : (int64_t)u;
    }
    case 2: {
        uint16_t u;
        memcpy(&u, p, 2);
        return f->kind == SIM_GAME_INT ? (int64_t)(int16_t)u : (int64_t)u;
    }
    default: {
        uint32_t u;
        memcpy(&u, p, 4);
        return (f->kind == SIM_GAME_INT || f->kind == SIM_GAME_FX) ? (int64_t)(int32_t)u : (int64_t)u;
    }
    }
}

void game_field_set(const game_field *f, uint8_t *base, uint32_t k, int64_t v)
{
    uint8_t *p = base + f->offset + (size_t)k * f->stride;
    // v is in the field's range, so it fits its size (as two's complement
    // for the signed kinds): the conversions below keep its bits.
    if (f->esize == 1) {
        uint8_t u = (uint8_t)(v & 0xFF);
        memcpy(p, &u, 1);
    } else if (f->esize == 2) {
        uint16_t u = (uint16_t)(v & 0xFFFF);
        memcpy(p, &u, 2);
    } else {
        uint32_t u = (uint32_t)(v & 0xFFFFFFFF);
        memcpy(p, &u, 4);
    }
}

bool game_field_valid(const game_field *f, int64_t v)
{
    if (v < f->min || v > f->max)
        return false;
    return f->kind != SIM_GAME_ANGLE || (v & ((1 << (16 - f->bits)) - 1)) == 0;
}

uint32_t game_clamp(const game_schema *s, uint8_t *data)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < s->field_count; i++) {
        const game_field *f = &s->fields[i];
        for (uint32_t k = 0; k < f->count; k++) {
            int64_t v = game_field_get(f, data, k);
            if (game_field_valid(f, v))
                continue;
            out++;
            v = v < f->min ? f->min : (v > f->max ? f->max : v);
            if (f->kind == SIM_GAME_ANGLE)
                v &= ~(int64_t)((1 << (16 - f->bits)) - 1);
            game_field_set(f, data, k, v);
        }
    }
    return out;
}

uint64_t game_hash(const game_schema *s, const uint8_t *data, uint64_t h)
{
    for (uint32_t i = 0; i < s->field_count; i++) {
        const game_field *f = &s->fields[i];
        for (uint32_t k = 0; k < f->count; k++)
            h = sim_hash_u32(h, (uint32_t)(game_field_get(f, data, k) & 0xFFFFFFFF));
    }
    return h;
}

bool sim_game_check(const sim_game *game, sim_game_part part, const void *data, sim_game_error *error)
{
    clear(error);
    if ((unsigned)part > SIM_GAME_PART_STATE)
        return refuse(error, "unknown part", NULL, -1);
    const game_schema *s = &game->part[part];
    for (uint32_t i = 0; i < s->field_count; i++) {
        const game_field *f = &s->fields[i];
        for (uint32_t k = 0; k < f->count; k++) {
            int64_t v = game_field_get(f, data, k);
            if (!game_field_valid(f, v))
                return refuse(error,
                              f->kind == SIM_GAME_ANGLE && v >= f->min && v <= f->max
                                  ? "angle finer than the field's bits"
                                  : "field out of its declared range",
                              f->name, f->count > 1 ? (int64_t)k : -1);
        }
    }
    return true;
}

// ---- checking a definition -----------------------------------------------------

static bool name_ok(const char *name, bool dots_only)
{
    if (!name || !name[0])
        return false;
    size_t n = 0;
    for (const char *p = name; *p; p++, n++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                  (!dots_only && c == '-');
        if (!ok || n >= SIM_GAME_NAME_MAX)
            return false;
    }
    return true;
}

// Fills the defaults of one field and checks it on its own.
static bool field_compile(const sim_game_field *in, uint32_t struct_size, game_field *f, sim_game_error *e)
{
    const char *nm = in->name;
    if (!name_ok(nm, true))
        return refuse(e, "field name empty, longer than 47 or not of letters, digits, '_' and '.'", nm, -1);
    f->name = nm;
    f->kind = in->kind;
    f->offset = in->offset;
    f->count = in->count ? in->count : 1;
    f->stride = in->stride;
    f->bits = in->bits;
    f->min = in->min;
    f->max = in->max;
    bool whole = in->min == 0 && in->max == 0;
    switch (in->kind) {
    case SIM_GAME_BOOL:
        f->esize = 1;
        if (f->bits == 0)
            f->bits = 1;
        f->min = 0;
        f->max = 1;
        break;
    case SIM_GAME_INT:
    case SIM_GAME_UINT:
        if (in->size != 1 && in->size != 2 && in->size != 4)
            return refuse(e, "integer size not 1, 2 or 4 bytes", nm, -1);
        f->esize = in->size;
        if (f->bits == 0)
            f->bits = 8 * in->size;
        if (f->bits > 8 * in->size)
            return refuse(e, "more bits than the field's size holds", nm, -1);
        if (whole) {
            bool sg = in->kind == SIM_GAME_INT;
            f->min = sg ? -((int64_t)1 << (f->bits - 1)) : 0;
            f->max = sg ? ((int64_t)1 << (f->bits - 1)) - 1 : ((int64_t)1 << f->bits) - 1;
        } else {
            int64_t lo = in->kind == SIM_GAME_INT ? -((int64_t)1 << (8 * in->size - 1)) : 0;
            int64_t hi =
                in->kind == SIM_GAME_INT ? ((int64_t)1 << (8 * in->size - 1)) - 1 : ((int64_t)1 << (8 * in->size)) - 1;
            if (in->min < lo || in->max > hi)
                return refuse(e, "range does not fit the field's size", nm, -1);
        }
        break;
    case SIM_GAME_FX:
        f->esize = 4;
        if (f->bits == 0)
            f->bits = 32;
        if (whole) {
            if (f->bits != 32)
                return refuse(e, "a fixed-point field narrower than 32 bits needs a range", nm, -1);
            f->min = INT32_MIN;
            f->max = INT32_MAX;
        } else if (in->min < INT32_MIN || in->max > INT32_MAX) {
            return refuse(e, "fixed-point range outside Q16.16", nm, -1);
        }
        break;
    case SIM_GAME_ANGLE:
        f->esize = 2;
        if (f->bits == 0)
            f->bits = 16;
        if (f->bits > 16)
            return refuse(e, "an angle has at most 16 bits", nm, -1);
        f->min = 0;
        f->max = 65535 - ((1 << (16 - f->bits)) - 1);
        break;
    default: return refuse(e, "unknown field kind", nm, -1);
    }
    if (f->bits < 1 || f->bits > 32)
        return refuse(e, "bit width outside 1..32", nm, -1);
    if (f->min > f->max)
        return refuse(e, "range minimum above its maximum", nm, -1);
    if (f->kind != SIM_GAME_ANGLE && (uint64_t)(f->max - f->min) > ((uint64_t)1 << f->bits) - 1)
        return refuse(e, "range does not fit the field's bits", nm, -1);
    if (f->count > 1 && f->stride < f->esize)
        return refuse(e, "array stride smaller than an element", nm, -1);
    uint64_t end = (uint64_t)f->offset + (uint64_t)(f->count - 1) * f->stride + f->esize;
    if (end > struct_size)
        return refuse(e, "field reaches past the end of its struct", nm, -1);
    return true;
}

static bool schema_compile(const sim_game_schema *in, uint32_t max_size, game_schema *out, sim_game_error *e)
{
    memset(out, 0, sizeof *out);
    if (in->size > max_size)
        return refuse(e, "struct larger than the core holds for this part", NULL, -1);
    if (in->field_count > SIM_GAME_MAX_FIELDS)
        return refuse(e, "more than 128 fields in one schema", NULL, -1);
    if (in->field_count && (!in->fields || in->size == 0))
        return refuse(e, "fields without a struct", NULL, -1);
    out->size = in->size;
    if (in->field_count == 0)
        return true;
    out->fields = calloc(in->field_count, sizeof *out->fields);
    uint8_t *used = calloc(in->size, 1);
    bool ok = out->fields && used;
    if (!ok)
        refuse(e, "out of memory", NULL, -1);
    for (uint32_t i = 0; ok && i < in->field_count; i++) {
        game_field *f = &out->fields[i];
        ok = field_compile(&in->fields[i], in->size, f, e);
        for (uint32_t j = 0; ok && j < i; j++)
            if (strcmp(out->fields[j].name, f->name) == 0)
                ok = refuse(e, "two fields of one name", f->name, -1);
        for (uint32_t k = 0; ok && k < f->count; k++)
            for (uint32_t b = 0; ok && b < f->esize; b++) {
                uint8_t *u = &used[f->offset + (size_t)k * f->stride + b];
                if (*u)
                    ok = refuse(e, "field overlaps another (or itself)", f->name, f->count > 1 ? (int64_t)k : -1);
                *u = 1;
            }
        if (ok) {
            out->field_count = i + 1;
            out->elements += f->count;
            out->bits += f->count * f->bits;
        }
    }
    free(used);
    if (!ok) {
        free(out->fields);
        out->fields = NULL;
    }
    return ok;
}

static uint64_t hash_text(uint64_t h, const char *s)
{
    size_t n = strlen(s);
    return sim_hash_bytes(sim_hash_u32(h, (uint32_t)n), s, n);
}

// The digest covers what the game means, never how a compiler lays out its
// structs: names, kinds, bits, counts and ranges of the fields, in order, but
// no struct size or offset (tcc on x86-64 aligns sim_vec3's members to 8
// bytes; the same game must have the same identity on every build).
static uint64_t digest(const sim_game *g)
{
    const sim_game_def *d = &g->def;
    uint64_t h = hash_text(SIM_HASH_SEED, d->name);
    // The digest's own format (it hashed SIM_GAME_ABI_VERSION 1 when it was
    // defined; the ABI's later struct layouts keep it, and every digest).
    h = sim_hash_u32(sim_hash_u32(h, d->version), GAME_DIGEST_FORMAT);
    for (int p = 0; p < 3; p++) {
        const game_schema *s = &g->part[p];
        h = sim_hash_u32(h, s->field_count);
        for (uint32_t i = 0; i < s->field_count; i++) {
            const game_field *f = &s->fields[i];
            h = hash_text(h, f->name);
            h = sim_hash_u32(sim_hash_u32(h, (uint32_t)f->kind), f->bits);
            h = sim_hash_u32(h, f->count);
            h = sim_hash_u64(sim_hash_u64(h, (uint64_t)f->min), (uint64_t)f->max);
        }
    }
    h = game_hash(&g->part[SIM_GAME_PART_CHARACTER], g->char_initial, h);
    h = game_hash(&g->part[SIM_GAME_PART_STATE], g->state_initial, h);
    h = sim_hash_u32(h, d->move_type_count);
    for (uint32_t i = 0; i < d->move_type_count; i++)
        h = hash_text(h, d->move_types[i].name);
    h = sim_hash_u64(h, (uint64_t)d->settings_size);
    if (d->settings_size)
        h = sim_hash_bytes(h, d->settings, d->settings_size);
    if (d->view_lag_field) // (a game that does not judge keeps the digest it had)
        h = hash_text(sim_hash_u32(h, 0x4a554447u), d->view_lag_field);
    return h;
}

void sim_game_destroy(sim_game *g)
{
    if (!g)
        return;
    for (int p = 0; p < 3; p++)
        free(g->part[p].fields);
    free(g->char_initial);
    free(g->state_initial);
    free(g);
}

static bool initial(const sim_game *g, sim_game_part part, uint8_t **out, const void *from, sim_game_error *e)
{
    size_t n = g->part[part].size;
    *out = calloc(n ? n : 1, 1);
    if (!*out)
        return refuse(e, "out of memory", NULL, -1);
    if (from && n)
        memcpy(*out, from, n);
    if (!sim_game_check(g, part, *out, e)) {
        if (e)
            e->reason = part == SIM_GAME_PART_STATE ? "initial game state: field out of its declared range"
                                                    : "initial character state: field out of its declared range";
        return false;
    }
    return true;
}

sim_game *sim_game_create(const sim_game_def *def, sim_game_error *error)
{
    clear(error);
    if (!def)
        return refuse(error, "no definition", NULL, -1), NULL;
    if (def->abi_version != SIM_GAME_ABI_VERSION)
        return refuse(error, "game built against another keel game ABI version", NULL, -1), NULL;
    if (!name_ok(def->name, false))
        return refuse(error, "game name empty, longer than 47 or not of letters, digits, '_', '-' and '.'", NULL, -1),
               NULL;
    if (def->move_type_count > SIM_GAME_MAX_MOVE_TYPES || (def->move_type_count && !def->move_types))
        return refuse(error, "more than 16 game move types", NULL, -1), NULL;
    for (uint32_t i = 0; i < def->move_type_count; i++)
        if (!def->move_types[i].tick || !name_ok(def->move_types[i].name, false))
            return refuse(error, "a game move type without a tick or a valid name", NULL, (int64_t)i), NULL;
    if (def->settings_size && !def->settings)
        return refuse(error, "settings_size without settings", NULL, -1), NULL;
    sim_game *g = calloc(1, sizeof *g);
    if (!g)
        return refuse(error, "out of memory", NULL, -1), NULL;
    g->def = *def;
    const uint32_t max[3] = {SIM_GAME_COMMAND_MAX_BYTES, SIM_GAME_CHAR_MAX_BYTES, SIM_GAME_STATE_MAX_BYTES};
    const sim_game_schema *in[3] = {&def->command, &def->character, &def->state};
    bool ok = true;
    for (int p = 0; ok && p < 3; p++)
        ok = schema_compile(in[p], max[p], &g->part[p], error);
    ok = ok && initial(g, SIM_GAME_PART_CHARACTER, &g->char_initial, def->character_initial, error);
    ok = ok && initial(g, SIM_GAME_PART_STATE, &g->state_initial, def->state_initial, error);
    if (!ok) {
        sim_game_destroy(g);
        return NULL;
    }
    g->per_char_rules = def->rules.before_move_char || def->rules.after_move_char;
    g->view_lag = -1;
    if ((def->judge != NULL) != (def->view_lag_field != NULL)) {
        sim_game_destroy(g);
        return refuse(error, "a judge without a view-lag field, or a view-lag field without a judge", NULL, -1), NULL;
    }
    for (uint32_t i = 0; def->view_lag_field && i < g->part[SIM_GAME_PART_COMMAND].field_count; i++) {
        const game_field *f = &g->part[SIM_GAME_PART_COMMAND].fields[i];
        if (strcmp(f->name, def->view_lag_field) == 0 && f->kind == SIM_GAME_UINT && f->esize == 1 && f->count == 1 &&
            f->min == 0)
            g->view_lag = (int32_t)i;
    }
    if (def->view_lag_field && g->view_lag < 0) {
        sim_game_destroy(g);
        return refuse(error, "view-lag field is not a 1-byte UINT command field with minimum 0", def->view_lag_field,
                      -1),
               NULL;
    }
    g->digest = digest(g);
    return g;
}

const char *sim_game_name(const sim_game *g) { return g->def.name; }
uint32_t sim_game_version(const sim_game *g) { return g->def.version; }
uint64_t sim_game_digest(const sim_game *g) { return g->digest; }
const sim_game_def *sim_game_definition(const sim_game *g) { return &g->def; }
