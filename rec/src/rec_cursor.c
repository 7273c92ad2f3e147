// keel recordings: cursors, which decode tick blocks (and client blocks) in
// order. MIT licence, see LICENSE.
//
// A cursor owns everything it decodes into, so cursors on one file run on
// different threads. The character set it tracks starts from INIT or from
// the keyframe it started at; every block resets the command delta bases,
// which is what lets a cursor start at any block that begins at a keyframe.
#include <stdlib.h>
#include <string.h>

#include "rec_file.h"

static bool cursor_fault(rec_cursor *c, rec_error *err, const char *why)
{
    const char *type = c->block_type ? c->block_type : "";
    if (c->block_compressed)
        rec_error_set(err, c->block_at, type, "%.4s block at offset %llu, byte %llu of its decompressed contents: %s",
                      type, (unsigned long long)c->block_at, (unsigned long long)c->rd.pos, why);
    else
        rec_error_set(err, c->rd.fault ? c->rd.fault_at : rec_rd_offset(&c->rd), type, "%.4s block at offset %llu: %s",
                      type, (unsigned long long)c->block_at, why);
    c->in_block = false;
    c->block = c->f->block_count; // no more from this cursor
    return false;
}

void rec_cursor_destroy(rec_cursor *c)
{
    if (!c)
        return;
    ZSTD_freeDCtx(c->dz);
    rec_buf_free(&c->raw);
    rec_buf_free(&c->key_raw);
    rec_buf_free(&c->game_raw);
    free(c->ids);
    free(c->prev);
    free(c->leaves);
    free(c->joins);
    free(c->commands);
    free(c->out_ids);
    free(c->hashes);
    free(c->key_states);
    free(c);
}

static rec_cursor *cursor_alloc(const rec_file *f, rec_error *err)
{
    rec_cursor *c = calloc(1, sizeof *c);
    if (!c) {
        rec_error_set(err, 0, NULL, "out of memory");
        return NULL;
    }
    c->f = f;
    c->cap = f->h.max_characters;
    size_t n = c->cap ? c->cap : 1;
    c->ids = calloc(n, sizeof *c->ids);
    c->prev = calloc(n, sizeof *c->prev);
    c->leaves = calloc(n, sizeof *c->leaves);
    c->joins = calloc(n, sizeof *c->joins);
    c->commands = calloc(n, sizeof *c->commands);
    c->out_ids = calloc(n, sizeof *c->out_ids);
    c->hashes = calloc(n, sizeof *c->hashes);
    c->key_states = calloc(n, sizeof *c->key_states);
    c->dz = ZSTD_createDCtx();
    if (!c->ids || !c->prev || !c->leaves || !c->joins || !c->commands || !c->out_ids || !c->hashes || !c->key_states ||
        !c->dz || !rec_buf_reserve(&c->raw, f->max_raw ? f->max_raw : 1)) {
        rec_cursor_destroy(c);
        rec_error_set(err, 0, NULL, "out of memory");
        return NULL;
    }
    return c;
}

rec_cursor *rec_cursor_create(const rec_file *f, uint32_t tick, rec_error *err)
{
    rec_error_clear(err);
    if (!f) {
        rec_error_set(err, 0, NULL, "no file");
        return NULL;
    }
    rec_cursor *c = cursor_alloc(f, err);
    if (!c)
        return NULL;
    if (f->h.kind == REC_KIND_CLIENT) {
        c->block = 0;
        c->tick = 0;
        return c;
    }
    if (tick == f->init_tick) {
        for (uint32_t i = 0; i < f->init_count; i++)
            c->ids[i] = f->init[i].id;
        c->count = f->init_count;
        c->block = 0;
        c->tick = tick;
        return c;
    }
    int64_t k = rec_file_keyframe_at(f, tick);
    if (k < 0) {
        rec_error_set(err, 0, NULL, "tick %u is neither the first recorded tick (%u) nor a keyframe", tick,
                      f->init_tick);
        rec_cursor_destroy(c);
        return NULL;
    }
    const rec_key_ref *key = &f->keys[k];
    uint32_t kt = 0, n = 0;
    if (!rec_states_decode(f, key, c->dz, &c->key_raw, &kt, c->key_states, &n, err)) {
        rec_cursor_destroy(c);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        c->ids[i] = c->key_states[i].id;
    c->count = n;
    c->block = key->block;
    c->tick = tick;
    return c;
}

bool rec_cursor_keyframe(rec_cursor *c, uint32_t index, uint32_t *tick, const sim_char_state **states, uint32_t *count,
                         rec_error *err)
{
    rec_error_clear(err);
    if (!c || index >= c->f->key_count) {
        rec_error_set(err, 0, NULL, "no keyframe %u", index);
        return false;
    }
    const rec_key_ref *key = &c->f->keys[index];
    uint32_t t = 0, n = 0;
    if (!rec_states_decode(c->f, key, c->dz, &c->key_raw, &t, c->key_states, &n, err))
        return false;
    if (tick)
        *tick = t;
    if (states)
        *states = c->key_states;
    if (count)
        *count = n;
    return true;
}

static const char *block_type(const rec_file *f, const rec_block_ref *b)
{
    if (f->h.kind == REC_KIND_CLIENT)
        return b->compressed ? REC_T_CLGZ : REC_T_CLOG;
    return b->compressed ? REC_T_TBLZ : REC_T_TBLK;
}

bool rec_block_body(const rec_file *f, const rec_block_ref *b, ZSTD_DCtx *dz, rec_buf *raw, rec_rd *out, rec_error *err)
{
    const uint8_t *payload = f->data + b->payload_at;
    if (!b->compressed) {
        rec_rd_init(out, payload + b->prefix, b->length - b->prefix, b->payload_at + b->prefix);
        return true;
    }
    const char *type = block_type(f, b);
    const uint8_t *z = payload + b->prefix;
    size_t zn = b->length - b->prefix;
    raw->size = 0;
    if (!rec_buf_reserve(raw, (size_t)b->raw_size + (b->magicless ? 4 + zn : 1))) {
        rec_error_set(err, b->chunk_at, type, "out of memory");
        return false;
    }
    if (b->magicless) {
        // the frame with its magic number put back, after the body's room
        uint8_t *whole = raw->data + b->raw_size;
        rec_le32(whole, REC_ZSTD_MAGIC);
        memcpy(whole + 4, z, zn);
        z = whole;
        zn += 4;
    }
    size_t got = ZSTD_decompressDCtx(dz, raw->data, b->raw_size, z, zn);
    if (ZSTD_isError(got) || got != b->raw_size) {
        rec_error_set(err, b->chunk_at, type, "%.4s block at offset %llu does not decompress (%s)", type,
                      (unsigned long long)b->chunk_at, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
        return false;
    }
    rec_rd_init(out, raw->data, b->raw_size, b->chunk_at);
    return true;
}

// Load block c->block into the reader.
static bool block_load(rec_cursor *c, rec_error *err)
{
    const rec_file *f = c->f;
    const rec_block_ref *b = &f->blocks[c->block];
    c->block_at = b->chunk_at;
    c->block_compressed = b->compressed;
    bool client = f->h.kind == REC_KIND_CLIENT;
    c->block_type = block_type(f, b);
    if (!rec_block_body(f, b, c->dz, &c->raw, &c->rd, err)) {
        c->block = f->block_count;
        return false;
    }
    if (!client && f->h.format_version >= 2) {
        // [format 3: keyframe length (varint) | keyframe] | events length
        // (u32; format 3: varint) | events | hashes | world hash | check
        rec_rd *r = &c->rd;
        bool v3 = f->h.format_version >= 3;
        if (b->has_key) {
            uint32_t klen = rec_get_var32(r);
            if (rec_rd_ok(r) && (klen == 0 || klen > rec_rd_left(r)))
                rec_rd_fail(r, "its keyframe's length runs past its end");
            else
                r->pos += klen; // decoded by rec_states_decode
        }
        uint32_t len = v3 ? rec_get_var32(r) : rec_get_u32(r);
        if (rec_rd_ok(r) && (rec_rd_left(r) < REC_BLOCK_TRAILER || len > rec_rd_left(r) - REC_BLOCK_TRAILER))
            rec_rd_fail(r, "its events' length runs past its hashes");
        if (!rec_rd_ok(r)) {
            c->in_block = true; // for cursor_fault's message
            return cursor_fault(c, err, r->fault);
        }
        size_t trailer = r->n - REC_BLOCK_TRAILER;
        rec_rd t;
        rec_rd_init(&t, r->p + trailer, REC_BLOCK_TRAILER, r->base + trailer);
        c->block_world_hash = rec_get_u64(&t);
        c->block_check = rec_get_u64(&t);
        c->hd = *r;
        c->hd.pos = r->pos + len;
        c->hd.n = trailer;
        r->n = r->pos + len;
    }
    if (!client && f->has_game && !rec_cursor_game_block(c, b, err)) {
        c->block = f->block_count;
        return false;
    }
    c->in_block = true;
    c->ticks_left = b->count;
    c->block_ticks = b->count;
    c->tick = b->first;
    c->subs_left = client ? 0 : b->subs_count;
    c->sub_ready = c->sub_any = false;
    if (c->subs_left) {
        rec_rd_init(&c->sd, f->data + b->subs_at, b->subs_length, b->subs_at);
        c->subs_chunk_at = b->subs_chunk_at;
        c->subs_first = b->first;
        c->subs_end = b->first + b->count;
    }
    c->prev_ms = 0;
    for (uint32_t i = 0; i < c->count; i++)
        memset(&c->prev[i], 0, sizeof c->prev[i]);
    return true;
}

static uint32_t slot_find(const rec_cursor *c, uint32_t id, bool *found)
{
    return rec_ids_find(c->ids, c->count, id, found);
}

static bool command_decode(rec_cursor *c, uint32_t slot, uint32_t tick, rec_command *out)
{
    const rec_schema *sc = &c->f->command_schema;
    rec_rd *r = &c->rd;
    uint64_t mask = rec_get_var(r);
    if (!rec_rd_ok(r))
        return false;
    if (sc->count < 63 && (mask >> (sc->count + 1)) != 0) {
        rec_rd_fail(r, "a command's change mask names a field the schema lacks");
        return false;
    }
    sim_input *p = &c->prev[slot];
    p->tick = tick;
    if (mask & REC_CMD_TICK_BIT) {
        int64_t d = rec_get_svar(r);
        int64_t t = (int64_t)tick + d;
        if (!rec_rd_ok(r) || d == 0 || t < 0 || t > (int64_t)UINT32_MAX) {
            rec_rd_fail(r, "a command's tick is out of range");
            return false;
        }
        p->tick = (uint32_t)t;
    }
    for (uint32_t i = 0; i < sc->count && i < 63; i++) {
        if (!(mask & ((uint64_t)1 << (i + 1))))
            continue;
        const rec_schema_field *fd = &sc->fields[i];
        int64_t v;
        if (rec_command_field_is_angle(fd->type, fd->width)) {
            int64_t d = rec_get_svar(r);
            if (rec_rd_ok(r) && (d < -32768 || d > 32767 || d == 0)) {
                rec_rd_fail(r, "a command's angle change is out of range");
                return false;
            }
            v = fd->known >= 0 ? (rec_command_get(p, (uint32_t)fd->known) + d) & 0xFFFF : 0;
        } else {
            v = rec_field_get(r, fd->type, fd->width);
        }
        if (!rec_rd_ok(r))
            return false;
        if (fd->known >= 0 && !rec_command_set(p, (uint32_t)fd->known, v)) {
            rec_rd_fail(r, "a command field's value is out of its range");
            return false;
        }
    }
    out->id = c->ids[slot];
    out->input = *p;
    out->substituted = false;
    return true;
}

uint32_t rec_command_find(const rec_command *commands, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (commands[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && commands[lo].id == id ? lo : n;
}

static bool subs_fault(rec_cursor *c, rec_error *err, const char *why)
{
    rec_error_set(err, c->subs_chunk_at, REC_T_SUBS, "SUBS chunk at offset %llu: %s",
                  (unsigned long long)c->subs_chunk_at, why);
    c->in_block = false;
    c->block = c->f->block_count; // no more from this cursor
    return false;
}

// Mark this tick's substitutes among the n commands just decoded (in id
// order), reading the block's SUBS entries as far as this tick.
static bool subs_mark(rec_cursor *c, uint32_t n, rec_error *err)
{
    for (;;) {
        if (!c->sub_ready) {
            if (c->subs_left == 0)
                return true;
            uint32_t dt = rec_get_var32(&c->sd), id = rec_get_var32(&c->sd);
            uint64_t tick = (uint64_t)c->subs_first + dt;
            if (!rec_rd_ok(&c->sd))
                return subs_fault(c, err, "its entries run past its end");
            if (tick >= c->subs_end || (c->sub_any && (tick < c->sub_tick || (tick == c->sub_tick && id <= c->sub_id))))
                return subs_fault(c, err, "an entry is outside its block or out of order");
            c->sub_tick = (uint32_t)tick;
            c->sub_id = id;
            c->sub_ready = c->sub_any = true;
            if (--c->subs_left == 0 && rec_rd_left(&c->sd) != 0)
                return subs_fault(c, err, "has bytes after its entries");
        }
        if (c->sub_tick != c->tick)
            return true; // a later tick's (an earlier one's was taken at its tick)
        uint32_t at = rec_command_find(c->commands, n, c->sub_id);
        if (at == n)
            return subs_fault(c, err, "an entry names a character that ran no command at its tick");
        c->commands[at].substituted = true;
        c->sub_ready = false;
    }
}

// The start both next calls share: false when there is nothing more to
// read, the file is of the other kind, or the next block fails to load.
static bool cursor_enter(rec_cursor *c, rec_kind kind, rec_error *err)
{
    rec_error_clear(err);
    if (!c || c->f->h.kind != kind)
        return false;
    if (!c->in_block) {
        if (c->block >= c->f->block_count)
            return false;
        if (!block_load(c, err))
            return false;
    }
    return true;
}

bool rec_cursor_next(rec_cursor *c, rec_tick *out, rec_error *err)
{
    if (!cursor_enter(c, REC_KIND_SCENE, err))
        return false;
    const rec_file *f = c->f;
    rec_rd *r = &c->rd;
    memset(out, 0, sizeof *out);
    out->tick = c->tick;
    out->block_start = c->ticks_left == c->block_ticks;

    uint32_t n = rec_get_var32(r);
    if (rec_rd_ok(r) && n > c->count)
        rec_rd_fail(r, "more leaves than characters");
    for (uint32_t i = 0; i < n && rec_rd_ok(r); i++) {
        uint32_t id = rec_get_var32(r);
        bool found;
        uint32_t at = slot_find(c, id, &found);
        if (!rec_rd_ok(r))
            break;
        if (!found) {
            rec_rd_fail(r, "a leave names a character not in the scene");
            break;
        }
        memmove(c->ids + at, c->ids + at + 1, (size_t)(c->count - at - 1) * sizeof *c->ids);
        memmove(c->prev + at, c->prev + at + 1, (size_t)(c->count - at - 1) * sizeof *c->prev);
        c->count--;
        c->leaves[i] = id;
    }
    out->leave_count = n;
    if (!rec_rd_ok(r))
        return cursor_fault(c, err, r->fault);

    n = rec_get_var32(r);
    if (rec_rd_ok(r) && n > c->cap - c->count)
        rec_rd_fail(r, "joins would exceed max_characters");
    for (uint32_t i = 0; i < n && rec_rd_ok(r); i++) {
        sim_char_state *j = &c->joins[i];
        size_t at_pos = r->pos;
        if (!rec_state_decode(r, &f->state_schema, j))
            break;
        const char *why = NULL;
        bool found;
        uint32_t at = slot_find(c, j->id, &found);
        if (j->id == 0 || (j->id & SIM_FEATURE_OBJECT_BIT) || found) {
            r->pos = at_pos;
            rec_rd_fail(r, "a join's id is 0, too large or already in the scene");
            break;
        }
        if (!rec_char_check(c->f->h.format_version, j, &why)) {
            r->pos = at_pos;
            rec_rd_fail(r, "a joining character's state fails its check");
            break;
        }
        memmove(c->ids + at + 1, c->ids + at, (size_t)(c->count - at) * sizeof *c->ids);
        memmove(c->prev + at + 1, c->prev + at, (size_t)(c->count - at) * sizeof *c->prev);
        c->ids[at] = j->id;
        memset(&c->prev[at], 0, sizeof c->prev[at]);
        c->count++;
    }
    out->join_count = n;
    if (!rec_rd_ok(r))
        return cursor_fault(c, err, r->fault);

    uint8_t mode = rec_get_u8(r);
    if (mode == 0) {
        for (uint32_t i = 0; i < c->count && rec_rd_ok(r); i++)
            command_decode(c, i, c->tick, &c->commands[i]);
        out->command_count = c->count;
    } else if (mode == 1) {
        n = rec_get_var32(r);
        if (rec_rd_ok(r) && n > c->count)
            rec_rd_fail(r, "more commands than characters");
        uint64_t id = 0;
        for (uint32_t i = 0; i < n && rec_rd_ok(r); i++) {
            uint32_t d = rec_get_var32(r);
            id += d;
            bool found = false;
            uint32_t at = 0;
            if (rec_rd_ok(r) && (d == 0 || id > UINT32_MAX))
                rec_rd_fail(r, "command ids are not increasing");
            else
                at = slot_find(c, (uint32_t)id, &found);
            if (rec_rd_ok(r) && !found)
                rec_rd_fail(r, "a command names a character not in the scene");
            if (rec_rd_ok(r))
                command_decode(c, at, c->tick, &c->commands[i]);
        }
        out->command_count = n;
    } else if (rec_rd_ok(r)) {
        rec_rd_fail(r, "unknown command mode");
    }
    bool v2 = f->h.format_version >= 2;
    if (!v2) {
        out->world_hash = rec_get_u64(r);
        out->has_world_hash = true;
    }
    rec_rd *hr = v2 ? &c->hd : r;
    for (uint32_t i = 0; i < c->count && rec_rd_ok(r) && rec_rd_ok(hr); i++) {
        c->hashes[i] = rec_get_u16(hr);
        c->out_ids[i] = c->ids[i];
    }
    if (rec_rd_ok(r) && !rec_rd_ok(hr)) {
        r->pos = hr->pos; // the hash section's fault, in the same offsets
        r->fault = hr->fault;
        r->fault_at = hr->fault_at;
    }
    if (!rec_rd_ok(r))
        return cursor_fault(c, err, r->fault);
    if (!subs_mark(c, out->command_count, err))
        return false;
    c->ticks_left--;
    if (c->ticks_left == 0) {
        if (rec_rd_left(r) != 0 || (v2 && rec_rd_left(hr) != 0)) {
            if (rec_rd_left(r) == 0)
                r->pos = hr->pos;
            rec_rd_fail(r, rec_rd_left(r) != 0 ? "has bytes after its last tick" : "has more hashes than its ticks");
            return cursor_fault(c, err, r->fault);
        }
        if (v2) {
            out->world_hash = c->block_world_hash;
            out->has_world_hash = true;
            out->has_block_check = true;
            out->block_check = c->block_check;
        }
        c->in_block = false;
        c->block++;
    }
    if (f->has_game && !rec_cursor_game_tick(c, out, c->ticks_left == 0, err))
        return false;
    out->leaves = c->leaves;
    out->joins = c->joins;
    out->commands = c->commands;
    out->char_count = c->count;
    out->char_ids = c->out_ids;
    out->char_hashes = c->hashes;
    c->tick++;
    return true;
}

// A PREDICT record's game command (a client recording with a game): u8 0
// (none given), 1 and the packed command, 2 (refused: it did not pack).
static void client_game_command(rec_rd *r, uint32_t bytes, rec_client_record *out)
{
    uint8_t flag = rec_get_u8(r);
    if (!rec_rd_ok(r))
        return;
    if (flag > 2)
        rec_rd_fail(r, "a predict record's game command flag is not 0, 1 or 2");
    else if (flag == 2)
        out->game_refused = true;
    else if (flag == 1 && bytes > rec_rd_left(r))
        rec_rd_fail(r, "a predict record's game command runs past its block");
    else if (flag == 1)
        out->game_command = rec_get_bytes(r, bytes);
}

bool rec_cursor_next_client(rec_cursor *c, rec_client_record *out, rec_error *err)
{
    if (!cursor_enter(c, REC_KIND_CLIENT, err))
        return false;
    const rec_file *f = c->f;
    rec_rd *r = &c->rd;
    memset(out, 0, sizeof *out);
    uint8_t op = rec_get_u8(r);
    int64_t ms = (int64_t)c->prev_ms + rec_get_svar(r);
    if (rec_rd_ok(r) && (ms < 0 || ms > (int64_t)UINT32_MAX))
        rec_rd_fail(r, "a record's clock is out of range");
    out->op = (rec_client_op)op;
    out->now_ms = (uint32_t)(rec_rd_ok(r) ? ms : 0);
    switch (op) {
    case REC_CLIENT_HELLO: break;
    case REC_CLIENT_EVENT: {
        int64_t type = rec_get_svar(r);
        if (rec_rd_ok(r) && (type < INT32_MIN || type > INT32_MAX))
            rec_rd_fail(r, "an event type is out of range");
        out->event_type = (int32_t)(rec_rd_ok(r) ? type : 0);
        out->channel = rec_get_u8(r);
        out->length = rec_get_var32(r);
        out->data = rec_get_bytes(r, out->length);
        break;
    }
    case REC_CLIENT_PREDICT: {
        const rec_schema *sc = &f->command_schema;
        out->input.tick = rec_get_var32(r);
        for (uint32_t i = 0; i < sc->count && rec_rd_ok(r); i++) {
            int64_t v = rec_field_get(r, sc->fields[i].type, sc->fields[i].width);
            if (rec_rd_ok(r) && sc->fields[i].known >= 0 &&
                !rec_command_set(&out->input, (uint32_t)sc->fields[i].known, v))
                rec_rd_fail(r, "a command field's value is out of its range");
        }
        out->result = rec_get_var32(r);
        if (f->has_game)
            client_game_command(r, f->h.game_command_bytes, out);
        break;
    }
    case REC_CLIENT_CATCH_UP: out->result = rec_get_var32(r); break;
    case REC_CLIENT_CONFIRMED:
        out->tick = rec_get_var32(r);
        out->hash = rec_get_u64(r);
        break;
    default:
        if (rec_rd_ok(r))
            rec_rd_fail(r, "unknown client record op");
    }
    if (!rec_rd_ok(r))
        return cursor_fault(c, err, r->fault);
    c->prev_ms = out->now_ms;
    c->ticks_left--;
    c->tick++;
    if (c->ticks_left == 0) {
        if (rec_rd_left(r) != 0) {
            rec_rd_fail(r, "has bytes after its last record");
            return cursor_fault(c, err, r->fault);
        }
        c->in_block = false;
        c->block++;
    }
    return true;
}
