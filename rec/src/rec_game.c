// keel recordings: a game's identity and its chunks as the reader meets
// them (GAME, GKEY, GCMD; rec.h). MIT licence, see LICENSE.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_file.h"

bool rec_char_check(uint32_t format_version, const sim_char_state *s, const char **why)
{
    if (format_version < 4 || s->move_type < SIM_GAME_MOVE_FIRST ||
        s->move_type >= (int32_t)(SIM_GAME_MOVE_FIRST + SIM_GAME_MAX_MOVE_TYPES))
        return sim_char_state_check(s, why);
    sim_char_state c = *s;
    c.move_type = SIM_MOVE_AIR;
    return sim_char_state_check(&c, why);
}

uint32_t rec_game_command_bytes(const sim_game *game) { return game ? (sim_game_command_bits(game) + 7u) / 8u : 0u; }

void rec_header_set_game(rec_header *h, const sim_game *game)
{
    memset(h->game_name, 0, sizeof h->game_name);
    h->game_version = 0;
    h->game_digest = 0;
    h->game_command_bytes = 0;
    if (!game)
        return;
    snprintf(h->game_name, sizeof h->game_name, "%s", sim_game_name(game));
    h->game_version = sim_game_version(game);
    h->game_digest = sim_game_digest(game);
    h->game_command_bytes = rec_game_command_bytes(game);
}

bool rec_game_identity_check(const rec_header *h, const sim_game *game, const char *what, rec_error *err)
{
    if (!h->game_name[0] && !game)
        return true;
    if (!h->game_name[0]) {
        rec_error_set(err, 0, REC_T_GAME, "the recording was made without a game; %s is game \"%s\" version %u", what,
                      sim_game_name(game), (unsigned)sim_game_version(game));
        return false;
    }
    if (!game) {
        rec_error_set(err, 0, REC_T_GAME,
                      "the recording was made with game \"%s\" version %u (digest %016" PRIx64 "); %s is none "
                      "(give it with --game)",
                      h->game_name, (unsigned)h->game_version, h->game_digest, what);
        return false;
    }
    if (strcmp(h->game_name, sim_game_name(game)) != 0 || h->game_version != sim_game_version(game) ||
        h->game_digest != sim_game_digest(game) || h->game_command_bytes != rec_game_command_bytes(game)) {
        rec_error_set(err, 0, REC_T_GAME,
                      "the recording was made with game \"%s\" version %u (digest %016" PRIx64
                      "); %s is game \"%s\" version %u (digest %016" PRIx64 ")",
                      h->game_name, (unsigned)h->game_version, h->game_digest, what, sim_game_name(game),
                      (unsigned)sim_game_version(game), sim_game_digest(game));
        return false;
    }
    return true;
}

bool rec_file_set_game(rec_file *f, const sim_game *game, rec_error *err)
{
    rec_error_clear(err);
    f->h.game = NULL;
    if (!rec_game_identity_check(&f->h, game, "the game given", err))
        return false;
    f->h.game = game;
    return true;
}

bool rec_file_game_state(const rec_file *f, uint32_t tick, const uint8_t **data, size_t *size)
{
    // GKEY chunks come in tick order: a binary search.
    uint32_t lo = 0, hi = f->game_key_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->game_keys[mid].tick < tick)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= f->game_key_count || f->game_keys[lo].tick != tick)
        return false;
    const rec_game_key *k = &f->game_keys[lo];
    *data = k->owned ? k->owned : f->data + k->at;
    *size = k->len;
    return true;
}

// The size a zstd frame without its magic number (a GKYZ's or GCMZ's)
// declares, or 0 when it declares none, an empty body or more than `bound`.
static uint64_t frame_size(const uint8_t *z, size_t zn, uint64_t bound)
{
    uint8_t head[4 + REC_ZSTD_HEADER_MAX];
    size_t hn = zn < REC_ZSTD_HEADER_MAX ? zn : REC_ZSTD_HEADER_MAX;
    rec_le32(head, REC_ZSTD_MAGIC);
    memcpy(head + 4, z, hn);
    unsigned long long n = ZSTD_getFrameContentSize(head, 4 + hn);
    return n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n == 0 || n > bound ? 0 : (uint64_t)n;
}

// Decompress that frame into out (exactly `size` bytes): false when it does
// not, or when out of memory (*why says which).
static bool frame_decompress(ZSTD_DCtx *dz, const uint8_t *z, size_t zn, size_t size, rec_buf *out, const char **why)
{
    out->size = 0;
    if (!rec_buf_reserve(out, size + 4 + zn)) {
        *why = "out of memory";
        return false;
    }
    uint8_t *whole = out->data + size; // the frame with its magic put back, after the body's room
    rec_le32(whole, REC_ZSTD_MAGIC);
    memcpy(whole + 4, z, zn);
    size_t got = ZSTD_decompressDCtx(dz, out->data, size, whole, zn + 4);
    if (ZSTD_isError(got) || got != size) {
        *why = ZSTD_isError(got) ? ZSTD_getErrorName(got) : "another size than it declares";
        return false;
    }
    out->size = size;
    return true;
}

// Most bytes of a scene saved with a game (GKEY): generous for the largest
// game state and character records the game API allows.
static uint64_t game_key_bound(const rec_file *f) { return (1u << 20) + (uint64_t)f->h.max_characters * 1024u; }

// A GKYZ chunk's saved scene, decompressed into memory the file owns.
static bool game_key_inflate(rec_file *f, const uint8_t *z, size_t zn, uint64_t off, rec_game_key *k, rec_error *err)
{
    uint64_t size = frame_size(z, zn, game_key_bound(f));
    const char *why = "declares no size, or one above the bound of a saved scene";
    rec_buf raw = {0};
    if (size && !f->key_dz && !(f->key_dz = ZSTD_createDCtx()))
        why = "out of memory";
    else if (size && frame_decompress(f->key_dz, z, zn, (size_t)size, &raw, &why)) {
        k->owned = raw.data;
        k->len = (uint32_t)size;
        return true;
    }
    rec_buf_free(&raw);
    rec_error_set(err, off, REC_T_GKYZ, "GKYZ chunk at offset %" PRIu64 ": its zstd frame: %s", off, why);
    return false;
}

static bool name_ok(const uint8_t *p, size_t n)
{
    if (n == 0 || n > SIM_GAME_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                  c == '.';
        if (!ok)
            return false;
    }
    return true;
}

static bool is(const uint8_t *t, const char *type) { return memcmp(t, type, 4) == 0; }

int rec_index_game_chunk(rec_file *f, const uint8_t *chunk, uint32_t len, uint64_t off, uint32_t next_tick,
                         bool before_blocks, rec_error *err)
{
    const uint8_t *payload = chunk + 8;
    uint64_t pat = off + 8;
    bool game = is(chunk, REC_T_GAME), key = is(chunk, REC_T_GKEY) || is(chunk, REC_T_GKYZ),
         cmd = is(chunk, REC_T_GCMD) || is(chunk, REC_T_GCMZ), z = is(chunk, REC_T_GKYZ) || is(chunk, REC_T_GCMZ);
    if (!game && !key && !cmd)
        return 0;
    char type[5] = {(char)chunk[0], (char)chunk[1], (char)chunk[2], (char)chunk[3], 0};
    // A client recording with a game holds GAME only (no states, no ticks).
    if (f->h.format_version < 4 || (f->h.kind != REC_KIND_SCENE && !game)) {
        rec_error_set(err, off, type, "%s chunk at offset %" PRIu64 " in a recording of format %u or of a client", type,
                      off, (unsigned)f->h.format_version);
        return -1;
    }
    rec_rd r;
    rec_rd_init(&r, payload, len, pat);
    if (game) {
        if (f->has_game || !before_blocks) {
            rec_error_set(err, off, type, "GAME chunk at offset %" PRIu64 " is not the first after INIT", off);
            return -1;
        }
        uint32_t n = rec_get_var32(&r);
        const uint8_t *name = rec_rd_ok(&r) && n <= rec_rd_left(&r) ? rec_get_bytes(&r, n) : NULL;
        uint32_t version = rec_get_u32(&r);
        uint64_t digest = rec_get_u64(&r);
        uint32_t bytes = rec_get_u32(&r);
        if (!name || !rec_rd_ok(&r) || rec_rd_left(&r) != 0 || !name_ok(name, n) ||
            bytes > SIM_GAME_COMMAND_MAX_BYTES) {
            rec_error_set(err, off, type,
                          "GAME chunk at offset %" PRIu64
                          " is malformed (a name of 1 to %u letters, digits, '_', '-' or '.', a command of at most "
                          "%u bytes)",
                          off, (unsigned)SIM_GAME_NAME_MAX, (unsigned)SIM_GAME_COMMAND_MAX_BYTES);
            return -1;
        }
        memcpy(f->h.game_name, name, n);
        f->h.game_name[n] = 0;
        f->h.game_version = version;
        f->h.game_digest = digest;
        f->h.game_command_bytes = bytes;
        f->has_game = true;
        return 1;
    }
    if (!f->has_game) {
        rec_error_set(err, off, type, "%s chunk at offset %" PRIu64 " before any GAME chunk", type, off);
        return -1;
    }
    if (key) {
        uint32_t tick = rec_get_u32(&r);
        uint32_t last = f->game_key_count ? f->game_keys[f->game_key_count - 1].tick : 0;
        if (!rec_rd_ok(&r) || tick != next_tick || (f->game_key_count && tick <= last)) {
            rec_error_set(err, off, type, "%s chunk at offset %" PRIu64 " is not at the start of the next tick (%u)",
                          type, off, (unsigned)next_tick);
            return -1;
        }
        if (f->game_key_count == f->game_key_cap) {
            uint32_t cap = f->game_key_cap ? f->game_key_cap * 2u : 16u;
            rec_game_key *p = realloc(f->game_keys, (size_t)cap * sizeof *p);
            if (!p) {
                rec_error_set(err, off, type, "out of memory");
                return -1;
            }
            f->game_keys = p;
            f->game_key_cap = cap;
        }
        rec_game_key k = {tick, pat + 4, len - 4, NULL};
        if (z && !game_key_inflate(f, payload + 4, len - 4, off, &k, err))
            return -1;
        f->game_keys[f->game_key_count++] = k;
        return 1;
    }
    // GCMD: the ticks of the block just before it
    uint32_t first = rec_get_u32(&r), count = rec_get_u32(&r);
    rec_block_ref *b = f->block_count ? &f->blocks[f->block_count - 1] : NULL;
    if (!rec_rd_ok(&r) || !b || b->has_game || b->first != first || b->count != count) {
        rec_error_set(err, off, type, "%s chunk at offset %" PRIu64 " does not follow the tick block of its ticks",
                      type, off);
        return -1;
    }
    // Most bytes of a block's GCMD body: every tick's hash and flag, and a
    // command of every character.
    uint64_t bound = (uint64_t)count * (9u + (uint64_t)f->h.max_characters * f->h.game_command_bytes);
    if (z && !(b->game_raw = (uint32_t)frame_size(payload + 8, len - 8, bound))) {
        rec_error_set(err, off, type,
                      "GCMZ chunk at offset %" PRIu64 " holds no zstd frame that declares a size of 1 to %" PRIu64
                      " bytes",
                      off, bound);
        return -1;
    }
    b->game_at = pat + 8;
    b->game_len = len - 8;
    b->has_game = true;
    b->game_compressed = z;
    return 1;
}

bool rec_index_game_finish(rec_file *f, rec_error *err)
{
    if (!f->has_game || f->h.kind != REC_KIND_SCENE)
        return true;
    for (uint32_t i = 0; i < f->block_count; i++) {
        if (f->blocks[i].has_game)
            continue;
        if (i + 1 == f->block_count && !f->info.complete) {
            f->block_count--; // a crash between the block and its GCMD: the readable prefix ends before it
            f->info.blocks--;
            break;
        }
        rec_error_set(err, f->blocks[i].chunk_at, REC_T_GCMD, "the tick block at offset %" PRIu64 " has no GCMD chunk",
                      f->blocks[i].chunk_at);
        return false;
    }
    return true;
}

bool rec_cursor_game_block(rec_cursor *c, const rec_block_ref *b, rec_error *err)
{
    if (!b->has_game) {
        rec_error_set(err, b->chunk_at, REC_T_GCMD, "the tick block at offset %" PRIu64 " has no GCMD chunk",
                      b->chunk_at);
        return false;
    }
    if (!b->game_compressed) {
        rec_rd_init(&c->gd, c->f->data + b->game_at, b->game_len, b->game_at);
        return true;
    }
    const char *why = NULL;
    if (!frame_decompress(c->dz, c->f->data + b->game_at, b->game_len, b->game_raw, &c->game_raw, &why)) {
        rec_error_set(err, b->game_at, REC_T_GCMZ, "GCMZ chunk at offset %" PRIu64 " does not decompress (%s)",
                      b->game_at - 8u - 8u, why);
        return false;
    }
    // Offsets in messages: the chunk's (bytes of the decompressed body count
    // from it, as in a compressed block).
    rec_rd_init(&c->gd, c->game_raw.data, b->game_raw, b->game_at - 16u);
    return true;
}

bool rec_cursor_game_tick(rec_cursor *c, rec_tick *out, bool last, rec_error *err)
{
    rec_rd *g = &c->gd;
    uint32_t bytes = c->f->h.game_command_bytes;
    uint64_t hash = rec_get_u64(g);
    uint8_t flag = rec_get_u8(g);
    if (rec_rd_ok(g) && flag > 1)
        rec_rd_fail(g, "a tick's game command flag is not 0 or 1");
    const uint8_t *p = NULL;
    if (rec_rd_ok(g) && flag) {
        size_t n = (size_t)out->command_count * bytes;
        if (n > rec_rd_left(g))
            rec_rd_fail(g, "its game commands run past its end");
        else
            p = rec_get_bytes(g, n);
    }
    if (rec_rd_ok(g) && last && rec_rd_left(g) != 0)
        rec_rd_fail(g, "has bytes after its last tick");
    if (rec_rd_ok(g) && out->has_world_hash && out->world_hash != hash)
        rec_rd_fail(g, "a world hash differs from its tick block's");
    if (!rec_rd_ok(g)) {
        rec_error_set(err, g->fault_at, REC_T_GCMD, "GCMD of tick %u at offset %" PRIu64 ": %s", (unsigned)out->tick,
                      g->fault_at, g->fault);
        return false;
    }
    out->world_hash = hash;
    out->has_world_hash = true;
    out->game_commands = flag && out->command_count ? p : NULL;
    return true;
}
