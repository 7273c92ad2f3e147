// keel recordings: the record schemas (a character state, a command), and
// records encoded through them. MIT licence, see LICENSE.
//
// A file stores its schema (SCHM) and a reader decodes every record by the
// file's field names: a field this build does not know is skipped by its
// width, a field the file lacks reads as 0. So adding a field to the state
// keeps old files readable, and old builds read new files.
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include <keel/sim_hash.h>

#include "rec_internal.h"

// The order here is the order records store fields; widths are the smallest
// that hold every valid value (sim_char_state_check bounds flags, move type
// and ground kind).
static const rec_field state_fields[] = {
    {"id", REC_FIELD_U32, 4},
    {"flags", REC_FIELD_U16, 2},
    {"move_type", REC_FIELD_U8, 1},
    {"ground", REC_FIELD_U8, 1},
    {"position.x", REC_FIELD_FX, 4},
    {"position.y", REC_FIELD_FX, 4},
    {"position.z", REC_FIELD_FX, 4},
    {"velocity.x", REC_FIELD_FX, 4},
    {"velocity.y", REC_FIELD_FX, 4},
    {"velocity.z", REC_FIELD_FX, 4},
    {"ground_normal.x", REC_FIELD_FX, 4},
    {"ground_normal.y", REC_FIELD_FX, 4},
    {"ground_normal.z", REC_FIELD_FX, 4},
    {"ground_velocity.x", REC_FIELD_FX, 4},
    {"ground_velocity.y", REC_FIELD_FX, 4},
    {"ground_velocity.z", REC_FIELD_FX, 4},
    {"ground_object", REC_FIELD_U32, 4},
    {"stuck_ticks", REC_FIELD_U32, 4},
    {"yaw", REC_FIELD_U16, 2},
    {"pitch", REC_FIELD_U16, 2},
};
#define STATE_FIELD_COUNT (uint32_t)(sizeof state_fields / sizeof state_fields[0])

// input.tick is not a field: a block stores it as the tick it ran in.
static const rec_field command_fields[] = {
    {"forward", REC_FIELD_I8, 1}, {"right", REC_FIELD_I8, 1}, {"up", REC_FIELD_I8, 1},
    {"buttons", REC_FIELD_U8, 1}, {"yaw", REC_FIELD_U16, 2},  {"pitch", REC_FIELD_U16, 2},
};
#define COMMAND_FIELD_COUNT (uint32_t)(sizeof command_fields / sizeof command_fields[0])

const rec_field *rec_state_fields(uint32_t *count)
{
    if (count)
        *count = STATE_FIELD_COUNT;
    return state_fields;
}

const rec_field *rec_command_fields(uint32_t *count)
{
    if (count)
        *count = COMMAND_FIELD_COUNT;
    return command_fields;
}

int64_t rec_state_get(const sim_char_state *s, uint32_t known)
{
    switch (known) {
    case 0: return s->id;
    case 1: return s->flags;
    case 2: return s->move_type;
    case 3: return s->ground;
    case 4: return s->position.x;
    case 5: return s->position.y;
    case 6: return s->position.z;
    case 7: return s->velocity.x;
    case 8: return s->velocity.y;
    case 9: return s->velocity.z;
    case 10: return s->ground_normal.x;
    case 11: return s->ground_normal.y;
    case 12: return s->ground_normal.z;
    case 13: return s->ground_velocity.x;
    case 14: return s->ground_velocity.y;
    case 15: return s->ground_velocity.z;
    case 16: return s->ground_object;
    case 17: return s->stuck_ticks;
    case 18: return s->yaw;
    case 19: return s->pitch;
    default: return 0;
    }
}

int64_t rec_state_field_value(const sim_char_state *s, uint32_t index) { return rec_state_get(s, index); }

static bool in_u32(int64_t v) { return v >= 0 && v <= (int64_t)UINT32_MAX; }
static bool in_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
static bool in_u16(int64_t v) { return v >= 0 && v <= UINT16_MAX; }

bool rec_state_set(sim_char_state *s, uint32_t known, int64_t v)
{
    bool is_u32 = known == 0 || known == 1 || known == 16 || known == 17;
    bool is_u16 = known == 18 || known == 19;
    if (is_u32 ? !in_u32(v) : is_u16 ? !in_u16(v) : !in_i32(v))
        return false;
    switch (known) {
    case 0: s->id = (uint32_t)v; break;
    case 1: s->flags = (uint32_t)v; break;
    case 2: s->move_type = (int32_t)v; break;
    case 3: s->ground = (int32_t)v; break;
    case 4: s->position.x = (sim_fx)v; break;
    case 5: s->position.y = (sim_fx)v; break;
    case 6: s->position.z = (sim_fx)v; break;
    case 7: s->velocity.x = (sim_fx)v; break;
    case 8: s->velocity.y = (sim_fx)v; break;
    case 9: s->velocity.z = (sim_fx)v; break;
    case 10: s->ground_normal.x = (sim_fx)v; break;
    case 11: s->ground_normal.y = (sim_fx)v; break;
    case 12: s->ground_normal.z = (sim_fx)v; break;
    case 13: s->ground_velocity.x = (sim_fx)v; break;
    case 14: s->ground_velocity.y = (sim_fx)v; break;
    case 15: s->ground_velocity.z = (sim_fx)v; break;
    case 16: s->ground_object = (uint32_t)v; break;
    case 17: s->stuck_ticks = (uint32_t)v; break;
    case 18: s->yaw = (sim_angle)v; break;
    case 19: s->pitch = (sim_angle)v; break;
    default: break;
    }
    return true;
}

int64_t rec_command_get(const sim_input *in, uint32_t known)
{
    switch (known) {
    case 0: return in->forward;
    case 1: return in->right;
    case 2: return in->up;
    case 3: return in->buttons;
    case 4: return in->yaw;
    case 5: return in->pitch;
    default: return 0;
    }
}

bool rec_command_set(sim_input *in, uint32_t known, int64_t v)
{
    if (known <= 2) {
        if (v < INT8_MIN || v > INT8_MAX)
            return false;
        if (known == 0)
            in->forward = (int8_t)v;
        else if (known == 1)
            in->right = (int8_t)v;
        else
            in->up = (int8_t)v;
        return true;
    }
    if (known == 3) {
        if (v < 0 || v > UINT8_MAX)
            return false;
        in->buttons = (uint8_t)v;
        return true;
    }
    if (!in_u16(v))
        return false;
    if (known == 4)
        in->yaw = (sim_angle)v;
    else if (known == 5)
        in->pitch = (sim_angle)v;
    return true;
}

bool rec_field_type_signed(uint8_t type)
{
    return type == REC_FIELD_I32 || type == REC_FIELD_FX || type == REC_FIELD_I8;
}

bool rec_field_fits(uint8_t type, uint8_t width, int64_t v)
{
    if (width >= 8)
        return true;
    unsigned bits = 8u * width;
    if (rec_field_type_signed(type)) {
        int64_t lim = (int64_t)1 << (bits - 1);
        return v >= -lim && v < lim;
    }
    return v >= 0 && v < ((int64_t)1 << bits);
}

void rec_field_put(rec_buf *b, uint8_t type, uint8_t width, int64_t v)
{
    (void)type;
    uint8_t o[8];
    uint64_t u = (uint64_t)v;
    for (unsigned i = 0; i < width && i < 8; i++)
        o[i] = (uint8_t)(u >> (8 * i));
    rec_put_bytes(b, o, width);
}

int64_t rec_field_get(rec_rd *r, uint8_t type, uint8_t width)
{
    const uint8_t *p = rec_get_bytes(r, width);
    if (!p)
        return 0;
    uint64_t u = 0;
    for (unsigned i = 0; i < width; i++)
        u |= (uint64_t)p[i] << (8 * i);
    if (width < 8 && rec_field_type_signed(type)) {
        uint64_t sign = (uint64_t)1 << (8 * width - 1);
        if (u & sign)
            u |= ~((sign << 1) - 1); // extend the sign through the high bits
    }
    return (int64_t)u;
}

void rec_schema_native(rec_schema *out, int kind)
{
    uint32_t n = 0;
    const rec_field *f = kind == REC_SCHEMA_STATE ? rec_state_fields(&n) : rec_command_fields(&n);
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < n; i++) {
        snprintf(out->fields[i].name, sizeof out->fields[i].name, "%s", f[i].name);
        out->fields[i].type = (uint8_t)f[i].type;
        out->fields[i].width = f[i].width;
        out->fields[i].known = (int16_t)i;
        out->record_bytes += f[i].width;
    }
    out->count = n;
    out->native = true;
}

static uint8_t *put16(uint8_t *o, uint32_t v)
{
    o[0] = (uint8_t)v;
    o[1] = (uint8_t)(v >> 8);
    return o + 2;
}
static uint8_t *put32(uint8_t *o, uint32_t v)
{
    rec_le32(o, v);
    return o + 4;
}
static uint8_t *put_v3(uint8_t *o, sim_vec3 v)
{
    o = put32(o, (uint32_t)v.x);
    o = put32(o, (uint32_t)v.y);
    return put32(o, (uint32_t)v.z);
}

// state_fields spelled out (every tick hashes every character through this;
// the round-trip tests decode it through the table, so the two agree).
size_t rec_state_encode_raw(uint8_t *out, const sim_char_state *s)
{
    uint8_t *o = out;
    o = put32(o, s->id);
    o = put16(o, s->flags);
    *o++ = (uint8_t)s->move_type;
    *o++ = (uint8_t)s->ground;
    o = put_v3(o, s->position);
    o = put_v3(o, s->velocity);
    o = put_v3(o, s->ground_normal);
    o = put_v3(o, s->ground_velocity);
    o = put32(o, s->ground_object);
    o = put32(o, s->stuck_ticks);
    o = put16(o, s->yaw);
    o = put16(o, s->pitch);
    return (size_t)(o - out);
}

void rec_state_encode(rec_buf *b, const sim_char_state *s)
{
    uint8_t raw[128];
    size_t n = rec_state_encode_raw(raw, s);
    rec_put_bytes(b, raw, n);
}

bool rec_state_decode(rec_rd *r, const rec_schema *sc, sim_char_state *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < sc->count; i++) {
        const rec_schema_field *f = &sc->fields[i];
        size_t at = r->pos;
        int64_t v = rec_field_get(r, f->type, f->width);
        if (!rec_rd_ok(r))
            return false;
        if (f->known >= 0 && !rec_state_set(out, (uint32_t)f->known, v)) {
            r->pos = at;
            rec_rd_fail(r, "a state field's value is out of its range");
            return false;
        }
    }
    return true;
}

// Format 3's keyframe records: most of a state's fields are 0 at any time
// (a walking character has no ground velocity, no ground object, no
// stuck ticks), so a mask names the others and only they follow, as
// varints: small values take a byte or two.
_Static_assert(REC_SCHEMA_MAX_FIELDS <= 64, "a compact record's mask holds a bit per field");

void rec_state_encode_compact(rec_buf *b, const sim_char_state *s)
{
    uint32_t n = 0;
    const rec_field *f = rec_state_fields(&n);
    uint64_t mask = 0;
    for (uint32_t i = 0; i < n; i++)
        if (rec_state_get(s, i) != 0)
            mask |= (uint64_t)1 << i;
    rec_put_var(b, mask);
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = rec_state_get(s, i);
        if (v == 0)
            continue;
        if (rec_command_field_is_angle((uint8_t)f[i].type, f[i].width))
            rec_put_svar(b, rec_angle_delta(0, v));
        else if (rec_field_type_signed((uint8_t)f[i].type))
            rec_put_svar(b, v);
        else
            rec_put_var(b, (uint64_t)v);
    }
}

bool rec_state_decode_compact(rec_rd *r, const rec_schema *sc, sim_char_state *out)
{
    memset(out, 0, sizeof *out);
    size_t at = r->pos;
    uint64_t mask = rec_get_var(r);
    if (rec_rd_ok(r) && sc->count < 64 && (mask >> sc->count) != 0) {
        r->pos = at;
        rec_rd_fail(r, "a state's field mask names a field the schema lacks");
    }
    for (uint32_t i = 0; i < sc->count && rec_rd_ok(r); i++) {
        if (!(mask & ((uint64_t)1 << i)))
            continue;
        const rec_schema_field *f = &sc->fields[i];
        at = r->pos;
        int64_t v;
        if (rec_command_field_is_angle(f->type, f->width)) {
            int64_t d = rec_get_svar(r);
            v = d >= -32768 && d <= 32767 ? d & 0xFFFF : -1; // -1 fits no unsigned field
        } else if (rec_field_type_signed(f->type)) {
            v = rec_get_svar(r);
        } else {
            uint64_t u = rec_get_var(r);
            v = u > (uint64_t)INT64_MAX ? -1 : (int64_t)u;
        }
        if (rec_rd_ok(r) &&
            (!rec_field_fits(f->type, f->width, v) || (f->known >= 0 && !rec_state_set(out, (uint32_t)f->known, v)))) {
            r->pos = at;
            rec_rd_fail(r, "a state field's value is out of its range");
        }
    }
    return rec_rd_ok(r);
}

uint64_t rec_char_hash64_schema(const rec_schema *sc, const sim_char_state *s)
{
    if (sc->native)
        return rec_char_hash64(s);
    uint8_t raw[REC_SCHEMA_MAX_FIELDS * 8];
    size_t at = 0;
    for (uint32_t i = 0; i < sc->count; i++) {
        const rec_schema_field *f = &sc->fields[i];
        uint64_t u = f->known >= 0 ? (uint64_t)rec_state_get(s, (uint32_t)f->known) : 0;
        for (unsigned k = 0; k < f->width; k++)
            raw[at++] = (uint8_t)(u >> (8 * k));
    }
    return XXH64(raw, at, SIM_HASH_SEED);
}

uint16_t rec_char_hash16_schema(const rec_schema *sc, const sim_char_state *s)
{
    return (uint16_t)(rec_char_hash64_schema(sc, s) & 0xFFFFu);
}

uint64_t rec_char_hash64(const sim_char_state *state)
{
    uint8_t raw[128];
    size_t n = rec_state_encode_raw(raw, state);
    return XXH64(raw, n, SIM_HASH_SEED);
}

uint16_t rec_char_hash16(const sim_char_state *state) { return (uint16_t)(rec_char_hash64(state) & 0xFFFFu); }

// SCHM: u8 record count; per record: u8 kind, u8 field count, and per field
// u8 name length, the name, u8 type, u8 width.
static void schema_put(rec_buf *b, int kind, const rec_field *f, uint32_t n)
{
    rec_put_u8(b, (uint8_t)kind);
    rec_put_u8(b, (uint8_t)n);
    for (uint32_t i = 0; i < n; i++) {
        size_t len = strlen(f[i].name);
        rec_put_u8(b, (uint8_t)len);
        rec_put_bytes(b, f[i].name, len);
        rec_put_u8(b, (uint8_t)f[i].type);
        rec_put_u8(b, f[i].width);
    }
}

void rec_schema_encode(rec_buf *b)
{
    rec_put_u8(b, 2);
    schema_put(b, REC_SCHEMA_STATE, state_fields, STATE_FIELD_COUNT);
    schema_put(b, REC_SCHEMA_COMMAND, command_fields, COMMAND_FIELD_COUNT);
}

// A file's record that is this build's, field for field (names, types,
// widths, order): it hashes and decodes the native way.
static void schema_mark_native(rec_schema *sc, const rec_field *native, uint32_t n)
{
    bool same = sc->count == n;
    for (uint32_t i = 0; same && i < n; i++)
        same = sc->fields[i].known == (int16_t)i && sc->fields[i].type == (uint8_t)native[i].type &&
               sc->fields[i].width == native[i].width;
    sc->native = same;
}

static bool schema_fail(rec_error *err, const rec_rd *r, uint64_t at, const char *fmt, const char *name)
{
    rec_error_set(err, r->fault ? r->fault_at : at, REC_T_SCHM, fmt, r->fault ? r->fault : name);
    return false;
}

bool rec_schema_decode(const uint8_t *p, size_t n, uint64_t base, rec_schema *state, rec_schema *command,
                       rec_error *err)
{
    rec_rd r;
    rec_rd_init(&r, p, n, base);
    bool have_state = false, have_command = false;
    memset(state, 0, sizeof *state);
    memset(command, 0, sizeof *command);
    uint8_t records = rec_get_u8(&r);
    for (uint32_t k = 0; k < records && rec_rd_ok(&r); k++) {
        uint64_t rec_at = rec_rd_offset(&r);
        uint8_t kind = rec_get_u8(&r);
        uint8_t count = rec_get_u8(&r);
        rec_schema scratch;
        rec_schema *sc = &scratch;
        if (kind == REC_SCHEMA_STATE && !have_state)
            sc = state, have_state = true;
        else if (kind == REC_SCHEMA_COMMAND && !have_command)
            sc = command, have_command = true;
        else if (kind == REC_SCHEMA_STATE || kind == REC_SCHEMA_COMMAND)
            return schema_fail(err, &r, rec_at, "schema: %s record declared twice",
                               kind == REC_SCHEMA_STATE ? "state" : "command");
        memset(sc, 0, sizeof *sc);
        if (count > REC_SCHEMA_MAX_FIELDS)
            return schema_fail(err, &r, rec_at, "schema: %s (more than 64 fields in a record)", "refused");
        uint32_t native_n = 0;
        const rec_field *native = kind == REC_SCHEMA_STATE     ? rec_state_fields(&native_n)
                                  : kind == REC_SCHEMA_COMMAND ? rec_command_fields(&native_n)
                                                               : NULL;
        for (uint32_t i = 0; i < count && rec_rd_ok(&r); i++) {
            uint64_t at = rec_rd_offset(&r);
            uint8_t len = rec_get_u8(&r);
            const uint8_t *name = rec_get_bytes(&r, len);
            uint8_t type = rec_get_u8(&r);
            uint8_t width = rec_get_u8(&r);
            if (!rec_rd_ok(&r))
                break;
            if (len == 0 || len >= REC_FIELD_NAME_MAX)
                return schema_fail(err, &r, at, "schema: a field name is %s (1..47 bytes)", "empty or too long");
            rec_schema_field *f = &sc->fields[i];
            for (uint32_t c = 0; c < len; c++) {
                if (name[c] < 0x21 || name[c] > 0x7E)
                    return schema_fail(err, &r, at, "schema: a field name has %s", "a byte that is not printable");
                f->name[c] = (char)name[c];
            }
            f->name[len] = 0;
            if (width < 1 || width > 8)
                return schema_fail(err, &r, at, "schema: field %s has a width outside 1..8", f->name);
            for (uint32_t j = 0; j < i; j++)
                if (strcmp(sc->fields[j].name, f->name) == 0)
                    return schema_fail(err, &r, at, "schema: field %s appears twice", f->name);
            f->type = type;
            f->width = width;
            f->known = -1;
            for (uint32_t j = 0; j < native_n; j++)
                if (strcmp(native[j].name, f->name) == 0)
                    f->known = (int16_t)j;
            sc->count = i + 1;
            sc->record_bytes += width;
        }
    }
    if (rec_rd_ok(&r) && rec_rd_left(&r) != 0)
        rec_rd_fail(&r, "has bytes after its last record");
    if (!rec_rd_ok(&r))
        return schema_fail(err, &r, 0, "schema %s", "");
    if (!have_state || !have_command)
        return schema_fail(err, &r, base, "schema: the %s record is missing", have_state ? "command" : "state");
    bool has_id = false;
    for (uint32_t i = 0; i < state->count; i++)
        has_id = has_id || state->fields[i].known == 0;
    if (!has_id)
        return schema_fail(err, &r, base, "schema: the state record has no %s field", "id");
    schema_mark_native(state, state_fields, STATE_FIELD_COUNT);
    schema_mark_native(command, command_fields, COMMAND_FIELD_COUNT);
    return true;
}
