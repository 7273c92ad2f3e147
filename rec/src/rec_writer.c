// keel recordings: the writer. MIT licence, see LICENSE.
//
// The caller's thread encodes (ticks into the current block buffer, which
// is reused, so after the first blocks nothing is allocated per tick).
// Finished chunks go to a queue; a background thread (or the caller, when
// not threaded) compresses tick and client blocks with zstd when that makes
// them smaller, frames them with their CRC, writes and flushes each one, so
// a crash leaves every finished chunk readable. The queue is bounded by
// bytes: a writer that falls behind fails the recording instead of
// stalling the game.
//
// Where no thread can be started (a system or build without threads, or
// none left), a threaded writer writes on the caller's thread instead: the
// same chunk_emit on the same chunks in the same order, so the same bytes.
// An open that fails removes the file it created: a failed start never
// leaves a partial recording behind.
//
// This file opens and closes; rec_writer_out.c is the output,
// rec_writer_tick.c the scene ticks, rec_writer_client.c client records.
#include <stdlib.h>
#include <string.h>

#include <keel/net_proto.h>

#include "rec_writer_internal.h"

const uint8_t rec_magic[REC_MAGIC_SIZE] = {'K', 'E', 'E', 'L', 'R', 'E', 'C', 0x1A};

rec_writer_config rec_default_writer_config(void)
{
    rec_writer_config c;
    memset(&c, 0, sizeof c);
    c.threaded = true;
    c.max_pending_bytes = (size_t)64 << 20;
    return c;
}

void rec_wr_fail(rec_writer *w, const char *fmt, ...)
{
    if (w->failed)
        return;
    w->failed = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rec_error_set(&w->err, 0, NULL, "%s", msg);
}

// ---- opening -----------------------------------------------------------------

static void fill_from(rec_error *err, const rec_writer *w)
{
    if (err)
        *err = w->err;
}

static void writer_free(rec_writer *w)
{
    if (!w)
        return;
    if (w->cur) {
        rec_buf_free(&w->cur->buf);
        free(w->cur);
    }
    for (rec_item *it = w->head; it;) {
        rec_item *next = it->next;
        rec_buf_free(&it->buf);
        free(it);
        it = next;
    }
    for (rec_item *it = w->free_items; it;) {
        rec_item *next = it->next;
        rec_buf_free(&it->buf);
        free(it);
        it = next;
    }
    if (w->f)
        fclose(w->f);
    free(w->path);
    ZSTD_freeCCtx(w->zc);
    rec_buf_free(&w->zbuf);
    rec_buf_free(&w->game_ticks);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    free(w->ids);
    free(w->prev);
    free(w->seen);
    rec_buf_free(&w->hashes);
    rec_buf_free(&w->key);
    rec_buf_free(&w->subs);
    free(w->key_states);
    free(w);
}

bool rec_wr_seen_add(rec_writer *w, uint32_t id)
{
    uint32_t lo = 0, hi = w->seen_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (w->seen[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < w->seen_count && w->seen[lo] == id)
        return true;
    if (w->seen_count == w->seen_cap) {
        uint32_t cap = w->seen_cap ? w->seen_cap * 2 : 64;
        uint32_t *p = realloc(w->seen, (size_t)cap * sizeof *p);
        if (!p)
            return false;
        w->seen = p;
        w->seen_cap = cap;
    }
    memmove(w->seen + lo + 1, w->seen + lo, (size_t)(w->seen_count - lo) * sizeof *w->seen);
    w->seen[lo] = id;
    w->seen_count++;
    return true;
}

// A failed open: stop the thread, and remove the file (nothing of it is a
// recording yet).
static void writer_abort(rec_writer *w)
{
    rec_wr_thread_stop(w);
    if (w->f) {
        fclose(w->f);
        w->f = NULL;
        remove(w->path);
    }
    writer_free(w);
}

static rec_writer *writer_begin(const char *path, const rec_header *header, const rec_writer_config *config,
                                rec_kind kind, rec_error *err)
{
    rec_error_clear(err);
    rec_writer *w = calloc(1, sizeof *w);
    if (!w) {
        rec_error_set(err, 0, NULL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    w->cfg = config ? *config : rec_default_writer_config();
    if (w->cfg.max_pending_bytes == 0)
        w->cfg.max_pending_bytes = rec_default_writer_config().max_pending_bytes;
    w->h = *header;
    w->h.kind = kind;
    // Formats 4 and 5 are format 3 with a game's chunks: without a game the
    // writer writes format 3 (the same bytes as before games).
    w->h.format_version = w->cfg.test_format_version ? w->cfg.test_format_version : REC_FORMAT_VERSION;
    if (!w->h.game_name[0] && w->h.format_version == REC_FORMAT_VERSION)
        w->h.format_version = REC_FORMAT_VERSION_NO_GAME;
    if (w->h.game_name[0] &&
        (w->h.format_version < REC_FORMAT_VERSION_GAME_FIRST || w->h.format_version > REC_FORMAT_VERSION)) {
        rec_error_set(err, 0, NULL, "a recording with a game is format %u to %u (asked for %u)",
                      REC_FORMAT_VERSION_GAME_FIRST, REC_FORMAT_VERSION, w->h.format_version);
        writer_free(w);
        return NULL;
    }
    w->h.game = NULL;
    if (w->h.behaviour_version == 0)
        w->h.behaviour_version = NET_BEHAVIOUR_VERSION;
    w->h.settings_digest = net_settings_digest(&w->h.settings);
    w->h.build_id[sizeof w->h.build_id - 1] = 0;
    w->h.source[sizeof w->h.source - 1] = 0;
    w->h.level.path[sizeof w->h.level.path - 1] = 0;
    w->h.level.scale[sizeof w->h.level.scale - 1] = 0;
    if (w->h.build_id[0] == 0)
        snprintf(w->h.build_id, sizeof w->h.build_id, "%s", rec_build_id());
    if (!rec_header_check(&w->h, err)) {
        writer_free(w);
        return NULL;
    }
    uint32_t cap = w->h.max_characters;
    w->ids = calloc(cap, sizeof *w->ids);
    w->prev = calloc(cap, sizeof *w->prev);
    w->key_states = calloc(cap ? cap : 1, sizeof *w->key_states);
    w->zc = ZSTD_createCCtx();
    if (!w->ids || !w->prev || !w->key_states || !w->zc) {
        rec_error_set(err, 0, NULL, "out of memory");
        writer_free(w);
        return NULL;
    }
    size_t path_len = strlen(path);
    w->path = malloc(path_len + 1);
    if (!w->path) {
        rec_error_set(err, 0, NULL, "out of memory");
        writer_free(w);
        return NULL;
    }
    memcpy(w->path, path, path_len + 1);
    w->f = fopen(path, "wb");
    if (!w->f) {
        rec_error_set(err, 0, NULL, "cannot create %s", path);
        writer_free(w);
        return NULL;
    }
    if (!rec_wr_io_write(w, rec_magic, REC_MAGIC_SIZE) || fflush(w->f) != 0) {
        rec_error_set(err, 0, NULL, "cannot write %s", path);
        writer_abort(w);
        return NULL;
    }
    if (w->cfg.threaded) {
        if (!w->cfg.test_no_thread && pthread_create(&w->thread, NULL, rec_wr_thread, w) == 0)
            w->thread_started = true;
        else
            w->cfg.threaded = false; // no thread to be had: write on the caller's
    }
    rec_item *it = rec_wr_item_take(w, REC_T_HEAD, 4096);
    if (it) {
        rec_header_encode(&it->buf, &w->h);
        rec_wr_item_submit(w, it);
    }
    it = rec_wr_item_take(w, REC_T_SCHM, 1024);
    if (it) {
        rec_schema_encode(&it->buf);
        rec_wr_item_submit(w, it);
    }
    return w;
}

static bool platform_same(const sim_platform_def *a, const sim_platform_def *b)
{
    if (a->id != b->id || !sim_v3_eq(a->half, b->half) || a->point_count != b->point_count ||
        a->ticks_per_leg != b->ticks_per_leg || a->pause_ticks != b->pause_ticks)
        return false;
    for (uint32_t i = 0; i < a->point_count && i < SIM_PLATFORM_MAX_POINTS; i++)
        if (!sim_v3_eq(a->points[i], b->points[i]))
            return false;
    return true;
}

void rec_wr_put_states_chunk(rec_writer *w, const char *type, uint32_t tick, const sim_char_state *c, uint32_t n)
{
    rec_item *it = rec_wr_item_take(w, type, 8 + (size_t)n * 80);
    if (!it)
        return;
    rec_put_u32(&it->buf, tick);
    rec_put_u32(&it->buf, n);
    for (uint32_t i = 0; i < n; i++)
        rec_state_encode(&it->buf, &c[i]);
    rec_wr_item_submit(w, it);
}

rec_writer *rec_writer_open(const char *path, const rec_header *header, const rec_writer_config *config,
                            const sim_scene *initial, rec_error *err)
{
    rec_error_clear(err);
    if (!path || !header || !initial) {
        rec_error_set(err, 0, NULL, "rec_writer_open: no path, header or scene");
        return NULL;
    }
    // The scene must be the one the header describes, or a replay would
    // rebuild a different one.
    if (sim_scene_platform_count(initial) != header->platform_count) {
        rec_error_set(err, 0, NULL, "the scene has %u platforms, the header %u", sim_scene_platform_count(initial),
                      header->platform_count);
        return NULL;
    }
    for (uint32_t i = 0; i < header->platform_count && i < REC_MAX_PLATFORMS; i++) {
        if (!platform_same(sim_scene_platform(initial, i), &header->platforms[i])) {
            rec_error_set(err, 0, NULL, "platform %u differs between the scene and the header", i);
            return NULL;
        }
    }
    if (sim_scene_water_count(initial) != header->water_count) {
        rec_error_set(err, 0, NULL, "the scene has %u water boxes, the header %u", sim_scene_water_count(initial),
                      header->water_count);
        return NULL;
    }
    for (uint32_t i = 0; i < header->water_count && i < REC_MAX_WATERS; i++) {
        sim_aabb a = sim_scene_water(initial, i), b = header->waters[i];
        if (!sim_v3_eq(a.min, b.min) || !sim_v3_eq(a.max, b.max)) {
            rec_error_set(err, 0, NULL, "water box %u differs between the scene and the header", i);
            return NULL;
        }
    }
    uint32_t n = 0;
    const sim_char_state *c = sim_scene_characters(initial, &n);
    if (n > header->max_characters) {
        rec_error_set(err, 0, NULL, "the scene holds %u characters, the header allows %u", n, header->max_characters);
        return NULL;
    }
    const sim_game *game = sim_scene_game(initial);
    if (!rec_game_identity_check(header, game, "the scene", err))
        return NULL;
    rec_writer *w = writer_begin(path, header, config, REC_KIND_SCENE, err);
    if (!w)
        return NULL;
    w->game = game;
    for (uint32_t i = 0; i < n; i++) {
        const char *why = NULL;
        if (!rec_char_check(w->h.format_version, &c[i], &why)) {
            rec_error_set(err, 0, NULL, "initial character %u: %s", c[i].id, why);
            writer_abort(w);
            return NULL;
        }
        w->ids[i] = c[i].id;
        if (!rec_wr_seen_add(w, c[i].id)) {
            rec_error_set(err, 0, NULL, "out of memory");
            writer_abort(w);
            return NULL;
        }
    }
    w->count = n;
    w->first_tick = w->next_tick = sim_scene_tick(initial);
    rec_wr_put_states_chunk(w, REC_T_INIT, w->first_tick, c, n);
    if (w->game)
        rec_wr_game_open(w, initial);
    // Two block buffers up front: one filling, one being written.
    rec_item *a = rec_wr_item_take(w, REC_T_TBLK, rec_wr_block_reserve(w->h.max_characters));
    rec_item *b = rec_wr_item_take(w, REC_T_TBLK, rec_wr_block_reserve(w->h.max_characters));
    if (a)
        rec_wr_item_give_back(w, a);
    if (b)
        rec_wr_item_give_back(w, b);
    if (w->failed) {
        fill_from(err, w);
        writer_abort(w);
        return NULL;
    }
    return w;
}

rec_writer *rec_writer_open_client(const char *path, const rec_header *header, const rec_writer_config *config,
                                   rec_error *err)
{
    rec_error_clear(err);
    if (!path || !header) {
        rec_error_set(err, 0, NULL, "rec_writer_open_client: no path or header");
        return NULL;
    }
    // A client with a game: the header names it and carries it (to check
    // each packed command with).
    if (header->game_name[0] && !rec_game_identity_check(header, header->game, "the header's game", err))
        return NULL;
    rec_writer *w = writer_begin(path, header, config, REC_KIND_CLIENT, err);
    if (w && header->game_name[0]) {
        w->game = header->game;
        rec_wr_game_identity(w);
    }
    if (w && w->failed) {
        fill_from(err, w);
        writer_abort(w);
        return NULL;
    }
    return w;
}

// ---- closing -----------------------------------------------------------------

bool rec_writer_close(rec_writer *w, rec_error *err)
{
    rec_error_clear(err);
    if (!w)
        return false;
    if (!w->failed) {
        w->closing = true;
        rec_wr_block_finish(w);
        if (w->key_pending) {
            rec_wr_put_states_chunk(w, REC_T_KEYF, w->key_tick, w->key_states, w->key_count);
            w->key_pending = false;
        }
        rec_item *it = rec_wr_item_take(w, REC_T_ENDR, 64);
        if (it) {
            rec_put_u32(&it->buf, w->any_tick ? w->last_tick : 0);
            rec_put_u64(&it->buf, w->any_tick ? w->last_hash : 0);
            rec_put_u32(&it->buf, (uint32_t)w->ticks);
            rec_put_u64(&it->buf, w->joins);
            rec_put_u64(&it->buf, w->leaves);
            rec_put_u32(&it->buf, w->seen_count);
            rec_put_u32(&it->buf, w->client_records);
            rec_wr_item_submit(w, it);
        }
    }
    rec_wr_thread_stop(w);
    if (w->io_failed && !w->failed) {
        w->failed = true;
        w->err = w->io_err;
    }
    if (w->f) {
        if (fclose(w->f) != 0 && !w->failed)
            rec_wr_fail(w, "closing the file failed");
        w->f = NULL;
    }
    bool ok = !w->failed;
    if (!ok)
        fill_from(err, w);
    writer_free(w);
    return ok;
}
