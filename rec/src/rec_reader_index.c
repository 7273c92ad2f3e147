// keel recordings: indexing a file read into memory: frames, CRCs,
// header, schema, the index of blocks and keyframes, and one decoding pass
// over every tick so that a file that opens is known good to its end. MIT
// licence, see LICENSE.
//
// Chunks must come in order (HEAD, SCHM, INIT, then blocks and keyframes
// whose ticks follow on, then ENDR, which must agree with what came
// before); a file cut short opens up to its last whole chunk
// (rec_info.truncated_at). On failure the file is closed and *err says
// where and why.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_file.h"

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

// Format 3: index the keyframe that opens block b (not yet in f->blocks).
static bool key_in_block(rec_file *f, const rec_block_ref *b, size_t off, const char *type, rec_error *err)
{
    uint32_t kt = b->first;
    if ((f->key_count && f->keys[f->key_count - 1].tick == kt) || kt == f->init_tick) {
        rec_error_set(err, off, type, "chunk %.4s at offset %zu holds a keyframe at tick %u, which already has one",
                      type, off, kt);
        return false;
    }
    if (!grow((void **)&f->keys, &f->key_cap, f->key_count + 1, sizeof *f->keys)) {
        rec_error_set(err, off, type, "out of memory");
        return false;
    }
    rec_key_ref k = {
        b->chunk_at,   b->payload_at, b->length, kt, f->block_count, b->compressed ? REC_T_TBLZ : REC_T_TBLK,
        b->compressed, b->raw_size,   true};
    f->keys[f->key_count++] = k;
    f->info.keyframes++;
    return true;
}

static bool type_is(const uint8_t *t, const char *name) { return memcmp(t, name, 4) == 0; }

// The decoding pass: every tick and keyframe in order, checking that each
// keyframe holds exactly the characters the ticks before it lead to.
static bool open_decode_all(rec_file *f, rec_error *err)
{
    rec_info *info = &f->info;
    rec_cursor *c = rec_cursor_create(f, f->h.kind == REC_KIND_SCENE ? f->init_tick : 0, err);
    if (!c)
        return false;
    bool ok = true;
    if (f->h.kind == REC_KIND_CLIENT) {
        rec_client_record r;
        while (rec_cursor_next_client(c, &r, err)) {
            info->client_records++;
            if (r.op == REC_CLIENT_CONFIRMED) {
                info->last_hash = r.hash;
                info->last_confirmed_tick = r.tick;
            }
        }
        ok = err->message[0] == 0;
        rec_cursor_destroy(c);
        return ok;
    }
    // distinct ids: sorted, grown as new ones appear
    uint32_t *seen = NULL, seen_n = 0, seen_cap = 0;
    for (uint32_t i = 0; i < f->init_count; i++) {
        if (!grow((void **)&seen, &seen_cap, seen_n + 1, sizeof *seen)) {
            ok = false;
            rec_error_set(err, 0, NULL, "out of memory");
            break;
        }
        seen[seen_n++] = f->init[i].id;
    }
    info->max_characters_seen = f->init_count;
    uint32_t next_key = 0;
    rec_tick t;
    while (ok) {
        // a keyframe at the cursor's next tick must hold the cursor's set
        while (next_key < f->key_count && f->keys[next_key].tick == c->tick) {
            const rec_key_ref *k = &f->keys[next_key];
            uint32_t kt, n;
            const sim_char_state *ks;
            if (!rec_cursor_keyframe(c, next_key, &kt, &ks, &n, err)) {
                ok = false;
                break;
            }
            bool same = n == c->count;
            for (uint32_t i = 0; same && i < n; i++)
                same = ks[i].id == c->ids[i];
            if (!same) {
                rec_error_set(err, k->chunk_at, k->type,
                              "%.4s chunk at offset %llu: its characters are not those the ticks before it lead to",
                              k->type, (unsigned long long)k->chunk_at);
                ok = false;
            }
            next_key++;
        }
        if (!ok || !rec_cursor_next(c, &t, err))
            break;
        info->tick_count++;
        info->joins += t.join_count;
        info->leaves += t.leave_count;
        if (t.has_world_hash)
            info->last_hash = t.world_hash;
        for (uint32_t j = 0; j < t.command_count; j++)
            info->substitutes += t.commands[j].substituted;
        if (t.char_count > info->max_characters_seen)
            info->max_characters_seen = t.char_count;
        for (uint32_t j = 0; j < t.join_count && ok; j++) {
            bool found;
            uint32_t at = rec_ids_find(seen, seen_n, t.joins[j].id, &found);
            if (found)
                continue;
            if (!grow((void **)&seen, &seen_cap, seen_n + 1, sizeof *seen)) {
                ok = false;
                rec_error_set(err, 0, NULL, "out of memory");
                break;
            }
            memmove(seen + at + 1, seen + at, (size_t)(seen_n - at) * sizeof *seen);
            seen[at] = t.joins[j].id;
            seen_n++;
        }
    }
    if (ok && err->message[0])
        ok = false;
    if (ok && next_key < f->key_count) {
        rec_error_set(err, f->keys[next_key].chunk_at, f->keys[next_key].type,
                      "%.4s chunk at offset %llu: tick %u is not reached", f->keys[next_key].type,
                      (unsigned long long)f->keys[next_key].chunk_at, f->keys[next_key].tick);
        ok = false;
    }
    info->players = seen_n;
    free(seen);
    rec_cursor_destroy(c);
    return ok;
}

// A SUBS chunk: the substitutes of the tick block just before it (its
// entries are checked against that block's commands as the ticks decode).
static bool subs_index(rec_file *f, const uint8_t *payload, uint32_t len, size_t off, rec_error *err)
{
    rec_rd r;
    rec_rd_init(&r, payload, len, off + 8);
    uint32_t first = rec_get_var32(&r);
    uint32_t count = rec_get_var32(&r);
    rec_block_ref *b = f->block_count ? &f->blocks[f->block_count - 1] : NULL;
    const char *why = NULL;
    if (f->h.kind != REC_KIND_SCENE)
        why = "in a client recording";
    else if (!rec_rd_ok(&r))
        why = "is too short for its first tick and count";
    else if (!b || b->first != first || b->subs_length || b->chunk_at + REC_CHUNK_OVERHEAD + b->length != off)
        why = "does not follow the tick block it names";
    else if (count == 0 || (uint64_t)count > (uint64_t)b->count * f->h.max_characters || count > rec_rd_left(&r) / 2)
        why = "holds no entries, more than its block's commands, or more than its bytes";
    if (why) {
        rec_error_set(err, off, REC_T_SUBS, "SUBS chunk at offset %zu %s", off, why);
        return false;
    }
    b->subs_chunk_at = off;
    b->subs_at = off + 8 + r.pos;
    b->subs_length = (uint32_t)rec_rd_left(&r);
    b->subs_count = count;
    return true;
}

static rec_file *open_fail(rec_file *f)
{
    rec_file_close(f);
    return NULL;
}

rec_file *rec_file_index(rec_file *f, rec_error *err)
{
    rec_info *info = &f->info;
    info->file_bytes = f->size;
    if (f->size < REC_MAGIC_SIZE || memcmp(f->data, rec_magic, REC_MAGIC_SIZE) != 0) {
        rec_error_set(err, 0, NULL,
                      f->size < REC_MAGIC_SIZE ? "too short to be a keel recording (%zu bytes)"
                                               : "not a keel recording (no KEELREC magic; %zu bytes)",
                      f->size);
        return open_fail(f);
    }
    enum { WANT_HEAD, WANT_SCHM, WANT_INIT, BODY, ENDED } stage = WANT_HEAD;
    uint32_t next_tick = 0; // the tick the next block or keyframe must start at
    uint32_t next_record = 0;
    bool truncated = false;
    int game_chunk = 0;
    size_t off = REC_MAGIC_SIZE;
    uint64_t endr_at = 0;
    uint32_t endr_tick = 0, endr_count = 0, endr_players = 0, endr_clients = 0;
    uint64_t endr_hash = 0, endr_joins = 0, endr_leaves = 0;
    while (off < f->size) {
        if (f->size - off < 8) {
            truncated = true;
            break;
        }
        const uint8_t *t = f->data + off;
        // the type as text for messages (a damaged one may hold any bytes)
        char type[5] = {0};
        for (int i = 0; i < 4; i++)
            type[i] = (t[i] >= 0x20 && t[i] < 0x7F) ? (char)t[i] : '?';
        uint32_t len = rec_get_le32(t + 4);
        if (len > REC_MAX_CHUNK) {
            rec_error_set(err, off, type,
                          "chunk %.4s at offset %zu declares %u bytes (more than the 256 MiB a chunk may hold)", type,
                          off, len);
            return open_fail(f);
        }
        if ((uint64_t)len + REC_CHUNK_OVERHEAD > f->size - off) {
            truncated = true;
            break;
        }
        uint32_t want = rec_get_le32(t + 8 + len);
        uint32_t crc = rec_crc32(t, 8 + (size_t)len);
        if (crc != want) {
            rec_error_set(err, off, type, "chunk %.4s at offset %zu: CRC mismatch (stored %08x, computed %08x)", type,
                          off, want, crc);
            return open_fail(f);
        }
        const uint8_t *payload = t + 8;
        uint64_t pat = off + 8;
        uint64_t framed = (uint64_t)len + REC_CHUNK_OVERHEAD;
        bool scene = f->h.kind == REC_KIND_SCENE;
        if (stage == ENDED) {
            rec_error_set(err, off, type, "chunk %.4s at offset %zu comes after ENDR", type, off);
            return open_fail(f);
        }
        if (stage == WANT_HEAD) {
            if (!type_is(t, REC_T_HEAD)) {
                rec_error_set(err, off, type, "the first chunk (offset %zu) is %.4s, not HEAD", off, type);
                return open_fail(f);
            }
            if (!rec_header_decode(payload, len, pat, &f->h, err))
                return open_fail(f);
            info->bytes_header += framed;
            stage = WANT_SCHM;
            f->key_states = calloc(f->h.max_characters, sizeof *f->key_states);
            f->init = calloc(f->h.max_characters, sizeof *f->init);
            if (!f->key_states || !f->init) {
                rec_error_set(err, off, type, "out of memory");
                return open_fail(f);
            }
        } else if (stage == WANT_SCHM) {
            if (!type_is(t, REC_T_SCHM)) {
                rec_error_set(err, off, type, "the chunk after HEAD (offset %zu) is %.4s, not SCHM", off, type);
                return open_fail(f);
            }
            if (!rec_schema_decode(payload, len, pat, &f->state_schema, &f->command_schema, err))
                return open_fail(f);
            info->bytes_schema += framed;
            stage = scene ? WANT_INIT : BODY;
        } else if (stage == WANT_INIT) {
            if (!type_is(t, REC_T_INIT)) {
                rec_error_set(err, off, type, "the chunk after SCHM (offset %zu) is %.4s, not INIT", off, type);
                return open_fail(f);
            }
            rec_key_ref init = {.chunk_at = off, .payload_at = pat, .length = len, .type = REC_T_INIT};
            if (!rec_states_decode(f, &init, NULL, NULL, &f->init_tick, f->init, &f->init_count, err))
                return open_fail(f);
            info->bytes_initial += framed;
            info->first_tick = f->init_tick;
            next_tick = f->init_tick;
            stage = BODY;
        } else if (type_is(t, REC_T_TBLK) || type_is(t, REC_T_TBLZ) || type_is(t, REC_T_CLOG) ||
                   type_is(t, REC_T_CLGZ)) {
            bool ticks = type_is(t, REC_T_TBLK) || type_is(t, REC_T_TBLZ);
            bool z = type_is(t, REC_T_TBLZ) || type_is(t, REC_T_CLGZ);
            if (ticks != scene) {
                rec_error_set(err, off, type, "chunk %.4s at offset %zu in a %s recording", type, off,
                              scene ? "scene" : "client");
                return open_fail(f);
            }
            rec_rd r;
            rec_rd_init(&r, payload, len, pat);
            rec_block_ref b = {.chunk_at = off, .payload_at = pat, .length = len, .compressed = z};
            bool v3 = ticks && f->h.format_version >= 3;
            unsigned long long frame_size = 0;
            if (v3) {
                // first tick, ticks × 2 + keyframe flag (varints); TBLZ: a
                // zstd frame that declares the body's size
                b.first = rec_get_var32(&r);
                uint32_t cf = rec_get_var32(&r);
                b.count = cf >> 1;
                b.has_key = (cf & REC_V3_KEY_FLAG) != 0;
                b.prefix = (uint32_t)r.pos;
                if (rec_rd_ok(&r) && z) {
                    // the frame's header, its magic number put back
                    uint8_t head[4 + REC_ZSTD_HEADER_MAX];
                    size_t hn = len - r.pos < REC_ZSTD_HEADER_MAX ? len - r.pos : REC_ZSTD_HEADER_MAX;
                    rec_le32(head, REC_ZSTD_MAGIC);
                    memcpy(head + 4, payload + r.pos, hn);
                    frame_size = ZSTD_getFrameContentSize(head, 4 + hn);
                    b.magicless = true;
                }
                b.raw_size = (uint32_t)(z ? (frame_size <= REC_MAX_CHUNK ? frame_size : 0) : len - r.pos);
            } else {
                b.first = rec_get_u32(&r);
                b.count = rec_get_u32(&r);
                b.raw_size = z ? rec_get_u32(&r) : len - (rec_rd_ok(&r) ? REC_BLOCK_PREFIX : 0);
                b.prefix = REC_BLOCK_PREFIX + (z ? 4u : 0u);
            }
            const char *why = NULL;
            if (!rec_rd_ok(&r))
                why = "is too short for its prefix";
            else if (v3 && z && frame_size > REC_MAX_CHUNK)
                why = "holds no zstd frame that declares a decompressed size of at most 256 MiB";
            else if (b.first != (ticks ? next_tick : next_record))
                why = ticks ? "does not start at the tick after the previous block" : "does not continue the records";
            else if (b.count == 0 || (ticks && b.count > REC_BLOCK_TICKS))
                why = "holds no ticks or more than a block may";
            else if (ticks && (uint64_t)b.first + b.count > (uint64_t)UINT32_MAX + 1u)
                why = "runs past the last tick number";
            else if (b.raw_size > REC_MAX_CHUNK)
                why = "declares a decompressed size above 256 MiB";
            else if (z && !v3 && (unsigned long long)ZSTD_getFrameContentSize(payload + 12, len - 12) != b.raw_size)
                why = "declares a decompressed size its zstd frame does not have";
            if (why) {
                rec_error_set(err, off, type, "chunk %.4s at offset %zu %s", type, off, why);
                return open_fail(f);
            }
            if (!grow((void **)&f->blocks, &f->block_cap, f->block_count + 1, sizeof *f->blocks)) {
                rec_error_set(err, off, type, "out of memory");
                return open_fail(f);
            }
            if (b.has_key && !key_in_block(f, &b, off, type, err))
                return open_fail(f);
            f->blocks[f->block_count++] = b;
            if (b.raw_size > f->max_raw)
                f->max_raw = b.raw_size;
            info->blocks++;
            if (z)
                info->compressed_blocks++;
            if (ticks) {
                info->bytes_ticks += framed;
                next_tick = b.first + b.count; // wraps only at the very end, checked above
            } else {
                info->bytes_client += framed;
                next_record += b.count;
            }
        } else if (type_is(t, REC_T_KEYF) || type_is(t, REC_T_KEYZ)) {
            bool z = type_is(t, REC_T_KEYZ);
            if (!scene) {
                rec_error_set(err, off, type, "%.4s chunk at offset %zu in a client recording", type, off);
                return open_fail(f);
            }
            uint32_t kt = len >= 4 ? rec_get_le32(payload) : 0;
            if (len < (z ? 12u : 8u) || kt != next_tick || (f->key_count && f->keys[f->key_count - 1].tick == kt) ||
                kt == f->init_tick) {
                rec_error_set(err, off, type, "%.4s chunk at offset %zu is not at the start of the next tick (%u)",
                              type, off, next_tick);
                return open_fail(f);
            }
            rec_key_ref k = {off, pat, len, kt, 0, z ? REC_T_KEYZ : REC_T_KEYF, z, 0, false};
            if (z) {
                // the records' size follows from the count and the schema
                uint32_t count = rec_get_le32(payload + 4);
                k.raw_size = rec_get_le32(payload + 8);
                uint64_t records = (uint64_t)count * f->state_schema.record_bytes;
                if (count > f->h.max_characters || k.raw_size != records ||
                    (unsigned long long)ZSTD_getFrameContentSize(payload + 12, len - 12) != k.raw_size) {
                    rec_error_set(err, off, type, "KEYZ chunk at offset %zu declares sizes that do not agree", off);
                    return open_fail(f);
                }
            }
            if (!grow((void **)&f->keys, &f->key_cap, f->key_count + 1, sizeof *f->keys)) {
                rec_error_set(err, off, type, "out of memory");
                return open_fail(f);
            }
            f->keys[f->key_count++] = k;
            info->keyframes++;
            info->bytes_keyframes += framed;
        } else if (type_is(t, REC_T_ENDR)) {
            rec_rd r;
            rec_rd_init(&r, payload, len, pat);
            endr_tick = rec_get_u32(&r);
            endr_hash = rec_get_u64(&r);
            endr_count = rec_get_u32(&r);
            endr_joins = rec_get_u64(&r);
            endr_leaves = rec_get_u64(&r);
            endr_players = rec_get_u32(&r);
            endr_clients = rec_get_u32(&r);
            if (!rec_rd_ok(&r)) {
                rec_error_set(err, off, type, "ENDR chunk at offset %zu is too short", off);
                return open_fail(f);
            }
            endr_at = off;
            info->bytes_end += framed;
            info->complete = true;
            stage = ENDED;
        } else if (type_is(t, REC_T_SUBS)) {
            if (!subs_index(f, payload, len, off, err))
                return open_fail(f);
            info->bytes_ticks += framed;
        } else if ((game_chunk = rec_index_game_chunk(f, t, len, off, next_tick,
                                                      f->block_count == 0 && f->key_count == 0, err)) != 0) {
            if (game_chunk < 0)
                return open_fail(f);
            if (type_is(t, REC_T_GCMD) || type_is(t, REC_T_GCMZ))
                info->bytes_ticks += framed;
            else if (type_is(t, REC_T_GKEY) || type_is(t, REC_T_GKYZ))
                info->bytes_keyframes += framed;
            else
                info->bytes_header += framed;
        } else if (type_is(t, REC_T_HEAD) || type_is(t, REC_T_SCHM) || type_is(t, REC_T_INIT)) {
            rec_error_set(err, off, type, "a second %.4s chunk at offset %zu", type, off);
            return open_fail(f);
        }
        // any other type: a later format's chunk, skipped
        off += (size_t)framed;
    }
    if (stage != BODY && stage != ENDED) {
        const char *missing = stage == WANT_HEAD ? "HEAD" : stage == WANT_SCHM ? "SCHM" : "INIT";
        rec_error_set(err, off, missing, "the file ends (offset %zu of %zu) before its %s chunk is complete", off,
                      f->size, missing);
        return open_fail(f);
    }
    if (!info->complete)
        info->truncated_at = truncated ? off : f->size;
    if (!rec_index_game_finish(f, err))
        return open_fail(f);
    // each keyframe starts the block at its tick (or none: the file ends there)
    uint32_t bi = 0;
    for (uint32_t k = 0; k < f->key_count; k++) {
        while (bi < f->block_count && f->blocks[bi].first < f->keys[k].tick)
            bi++;
        f->keys[k].block = bi;
    }
    if (!open_decode_all(f, err))
        return open_fail(f);
    if (info->complete) {
        bool scene = f->h.kind == REC_KIND_SCENE;
        uint32_t last_tick = info->tick_count ? f->init_tick + info->tick_count - 1u : 0;
        bool agree = scene
                         ? endr_count == info->tick_count && endr_hash == info->last_hash && endr_tick == last_tick &&
                               endr_joins == info->joins && endr_leaves == info->leaves && endr_players == info->players
                         : endr_clients == info->client_records;
        if (!agree) {
            rec_error_set(err, endr_at, REC_T_ENDR, "ENDR chunk at offset %llu disagrees with the ticks before it",
                          (unsigned long long)endr_at);
            return open_fail(f);
        }
    }
    return f;
}
