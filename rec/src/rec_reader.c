// keel recordings: the reader's file: opening (reading the bytes, then
// rec_reader_index.c indexes and checks them), its accessors and its
// keyframes. MIT licence, see LICENSE.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_file.h"

void rec_file_close(rec_file *f)
{
    if (!f)
        return;
    free(f->data);
    free(f->init);
    free(f->blocks);
    free(f->keys);
    for (uint32_t i = 0; i < f->game_key_count; i++)
        free(f->game_keys[i].owned);
    free(f->game_keys);
    free(f->key_states);
    ZSTD_freeDCtx(f->key_dz);
    rec_buf_free(&f->key_raw);
    free(f);
}

const rec_header *rec_file_header(const rec_file *f) { return f ? &f->h : NULL; }

uint16_t rec_file_char_hash16(const rec_file *f, const sim_char_state *state)
{
    return f ? rec_char_hash16_schema(&f->state_schema, state) : rec_char_hash16(state);
}

uint64_t rec_file_char_hash64(const rec_file *f, const sim_char_state *state)
{
    return f ? rec_char_hash64_schema(&f->state_schema, state) : rec_char_hash64(state);
}

void rec_file_info(const rec_file *f, rec_info *out)
{
    if (f)
        *out = f->info;
    else
        memset(out, 0, sizeof *out);
}

bool rec_file_initial(const rec_file *f, uint32_t *tick, const sim_char_state **states, uint32_t *count)
{
    if (!f || f->h.kind != REC_KIND_SCENE)
        return false;
    if (tick)
        *tick = f->init_tick;
    if (states)
        *states = f->init;
    if (count)
        *count = f->init_count;
    return true;
}

uint32_t rec_file_keyframe_count(const rec_file *f) { return f ? f->key_count : 0; }

int64_t rec_file_keyframe_at(const rec_file *f, uint32_t tick)
{
    if (!f)
        return -1;
    uint32_t lo = 0, hi = f->key_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->keys[mid].tick < tick)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->key_count && f->keys[lo].tick == tick ? (int64_t)lo : -1;
}

bool rec_file_keyframe(rec_file *f, uint32_t index, uint32_t *tick, const sim_char_state **states, uint32_t *count,
                       rec_error *err)
{
    rec_error_clear(err);
    if (!f || index >= f->key_count) {
        rec_error_set(err, 0, NULL, "no keyframe %u", index);
        return false;
    }
    const rec_key_ref *k = &f->keys[index];
    uint32_t t = 0, n = 0;
    if (k->compressed && !f->key_dz && !(f->key_dz = ZSTD_createDCtx())) {
        rec_error_set(err, 0, NULL, "out of memory");
        return false;
    }
    if (!rec_states_decode(f, k, f->key_dz, &f->key_raw, &t, f->key_states, &n, err))
        return false;
    if (tick)
        *tick = t;
    if (states)
        *states = f->key_states;
    if (count)
        *count = n;
    return true;
}

// INIT and KEYF: tick u32 | count u32 | count state records (schema order),
// ids increasing, every state passing sim_char_state_check. KEYZ: tick,
// count, the records' size (u32), a zstd frame of the records.
bool rec_states_decode(const rec_file *f, const rec_key_ref *k, ZSTD_DCtx *dz, rec_buf *raw, uint32_t *tick,
                       sim_char_state *states, uint32_t *count, rec_error *err)
{
    const char *type = k->type;
    uint64_t payload_at = k->payload_at;
    const uint8_t *payload = f->data + payload_at;
    rec_rd r;
    uint32_t n = 0;
    *count = 0;
    if (k->in_block) {
        // format 3: the block's body opens with keyframe length | count | records
        const rec_block_ref *b = &f->blocks[k->block];
        if (!rec_block_body(f, b, dz, raw, &r, err))
            return false;
        uint32_t klen = rec_get_var32(&r);
        if (rec_rd_ok(&r) && (klen == 0 || klen > rec_rd_left(&r)))
            rec_rd_fail(&r, "its keyframe's length runs past its end");
        else
            r.n = r.pos + klen;
        *tick = b->first;
        n = rec_get_var32(&r);
    } else {
        rec_rd_init(&r, payload, k->length, payload_at);
        *tick = rec_get_u32(&r);
        n = rec_get_u32(&r);
    }
    if (k->compressed && !k->in_block && rec_rd_ok(&r)) {
        // sizes were checked when the file was indexed
        raw->size = 0;
        if (!rec_buf_reserve(raw, k->raw_size ? k->raw_size : 1)) {
            rec_error_set(err, k->chunk_at, type, "out of memory");
            return false;
        }
        size_t got = ZSTD_decompressDCtx(dz, raw->data, k->raw_size, payload + REC_BLOCK_PREFIX + 4,
                                         k->length - REC_BLOCK_PREFIX - 4);
        if (ZSTD_isError(got) || got != k->raw_size) {
            rec_error_set(err, k->chunk_at, type, "%.4s chunk at offset %llu does not decompress (%s)", type,
                          (unsigned long long)k->chunk_at, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
            return false;
        }
        // offsets below are into the decompressed records, from the chunk's
        rec_rd_init(&r, raw->data, k->raw_size, k->chunk_at);
    }
    if (rec_rd_ok(&r) && n > f->h.max_characters)
        rec_rd_fail(&r, "holds more characters than max_characters");
    uint32_t last = 0;
    for (uint32_t i = 0; i < n && rec_rd_ok(&r); i++) {
        size_t at = r.pos;
        if (!(k->in_block ? rec_state_decode_compact(&r, &f->state_schema, &states[i])
                          : rec_state_decode(&r, &f->state_schema, &states[i])))
            break;
        size_t end = r.pos;
        const char *why = NULL;
        const sim_char_state *s = &states[i];
        r.pos = at; // a fault below names the record
        if (s->id == 0 || (s->id & SIM_FEATURE_OBJECT_BIT) || (i > 0 && s->id <= last))
            rec_rd_fail(&r, "a character id is 0, too large or out of order");
        else if (!rec_char_check(f->h.format_version, s, &why))
            rec_rd_fail(&r, why);
        else
            r.pos = end;
        last = s->id;
    }
    if (rec_rd_ok(&r) && rec_rd_left(&r) != 0)
        rec_rd_fail(&r, "has bytes after its last character");
    if (!rec_rd_ok(&r)) {
        rec_error_set(err, k->compressed ? k->chunk_at : r.fault_at, type, "%.4s chunk at offset %llu: %s%s", type,
                      (unsigned long long)k->chunk_at, k->compressed ? "(decompressed) " : "", r.fault);
        return false;
    }
    *count = n;
    return true;
}

// ---- opening ----------------------------------------------------------------

rec_file *rec_file_open_memory(const void *data, size_t size, rec_error *err)
{
    rec_error_clear(err);
    rec_error scratch;
    if (!err)
        err = &scratch;
    rec_file *f = calloc(1, sizeof *f);
    if (!f || (size && !data)) {
        free(f);
        rec_error_set(err, 0, NULL, f ? "no data" : "out of memory");
        return NULL;
    }
    f->data = malloc(size ? size : 1);
    if (!f->data) {
        free(f);
        rec_error_set(err, 0, NULL, "out of memory (%zu bytes)", size);
        return NULL;
    }
    if (size)
        memcpy(f->data, data, size);
    f->size = size;
    return rec_file_index(f, err);
}

rec_file *rec_file_open(const char *path, rec_error *err)
{
    rec_error_clear(err);
    rec_error scratch;
    if (!err)
        err = &scratch;
    FILE *fp = path ? fopen(path, "rb") : NULL;
    if (!fp) {
        rec_error_set(err, 0, NULL, "cannot open %s", path ? path : "(null)");
        return NULL;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (cap - size < 65536) {
            size_t want = cap ? cap * 2 : 1u << 20;
            uint8_t *p = realloc(data, want);
            if (!p) {
                free(data);
                fclose(fp);
                rec_error_set(err, 0, NULL, "out of memory reading %s", path);
                return NULL;
            }
            data = p;
            cap = want;
        }
        size_t got = fread(data + size, 1, cap - size, fp);
        size += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(fp) != 0;
    fclose(fp);
    if (bad) {
        free(data);
        rec_error_set(err, 0, NULL, "reading %s failed", path);
        return NULL;
    }
    rec_file *f = calloc(1, sizeof *f);
    if (!f) {
        free(data);
        rec_error_set(err, 0, NULL, "out of memory");
        return NULL;
    }
    f->data = data;
    f->size = size;
    return rec_file_index(f, err);
}
