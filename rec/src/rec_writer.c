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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include <keel/net_proto.h>

#include "rec_internal.h"

const uint8_t rec_magic[REC_MAGIC_SIZE] = {'K', 'E', 'E', 'L', 'R', 'E', 'C', 0x1A};

#define ZSTD_LEVEL 3
/// Format 3's tick blocks: small inputs, where level 9 finds more of the
/// commands' repeats than 3 (one player: about -18 kB per hour) at a cost
/// the writer thread does not notice.
#define ZSTD_LEVEL_V3 9

typedef struct rec_item {
    char type[4];
    bool compressible; ///< TBLK/CLOG/KEYF: try zstd
    size_t prefix;     ///< bytes kept before the compressed part (REC_BLOCK_PREFIX; format 3's blocks: their varints)
    bool size_field; ///< the compressed form stores the body's size (u32) before the frame (all but format 3's blocks)
    rec_buf buf;     ///< the payload
    struct rec_item *next;
} rec_item;

struct rec_writer {
    FILE *f;
    char *path; ///< removed again if the open fails
    rec_header h;
    rec_writer_config cfg;

    // The character set after the last recorded tick (id order), with each
    // character's previous command in the current block (delta base).
    uint32_t *ids;
    sim_input *prev;
    uint32_t count;
    uint32_t first_tick, next_tick;
    bool any_tick;

    rec_item *cur; ///< the block being filled (NULL between blocks)
    uint32_t block_first, block_count;
    // Format 2: the block's 16-bit hashes, kept apart from its commands
    // (they do not compress; the commands do), and its check so far.
    rec_buf hashes;
    uint64_t check;
    // Format 3: the keyframe waiting for the block at its tick (key_states),
    // and the current block's keyframe section (key) when it opens with one.
    sim_char_state *key_states;
    uint32_t key_count, key_tick;
    bool key_pending, block_key;
    rec_buf key;

    // client recordings
    uint32_t client_records, block_prev_ms;

    // statistics for ENDR
    uint64_t ticks, joins, leaves;
    uint32_t *seen; ///< distinct ids seen, sorted (grows on joins only)
    uint32_t seen_count, seen_cap;
    uint64_t last_hash;
    uint32_t last_tick;

    bool failed;
    rec_error err;

    // output: the queue and its thread
    pthread_mutex_t mu;
    pthread_cond_t work;
    rec_item *head, *tail; ///< queued chunks, oldest first
    rec_item *free_items;
    size_t pending;
    bool stop, thread_started;
    bool closing; ///< the last chunks are queued whatever is pending (close may wait)
    pthread_t thread;
    bool io_failed; ///< set by whoever writes, under mu
    rec_error io_err;

    // owned by the thread that writes
    ZSTD_CCtx *zc;
    rec_buf zbuf;
};

rec_writer_config rec_default_writer_config(void)
{
    rec_writer_config c;
    memset(&c, 0, sizeof c);
    c.threaded = true;
    c.max_pending_bytes = (size_t)64 << 20;
    return c;
}

static void writer_fail(rec_writer *w, const char *fmt, ...) REC_PRINTF(2, 3);
static void writer_fail(rec_writer *w, const char *fmt, ...)
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

// ---- output ----------------------------------------------------------------

static bool io_write(rec_writer *w, const void *p, size_t n) { return n == 0 || fwrite(p, 1, n, w->f) == n; }

// Compress if it pays, frame, write and flush one chunk. Runs on the
// writing thread; the only shared state it touches is io_failed (under mu).
static void chunk_emit(rec_writer *w, rec_item *it)
{
    char type[4];
    memcpy(type, it->type, 4);
    const uint8_t *payload = it->buf.data;
    size_t size = it->buf.size;
    size_t pre = it->prefix, head_n = it->prefix + (it->size_field ? 4 : 0);
    if (it->compressible && w->h.compress && size > pre + 64) {
        size_t body = size - pre;
        size_t bound = ZSTD_compressBound(body);
        w->zbuf.size = 0;
        if (w->zc && rec_buf_reserve(&w->zbuf, head_n + bound)) {
            // (the frame records the body's size, no checksum: the chunk has its CRC)
            int level = it->size_field ? ZSTD_LEVEL : ZSTD_LEVEL_V3;
            size_t z = ZSTD_compressCCtx(w->zc, w->zbuf.data + head_n, bound, it->buf.data + pre, body, level);
            bool ok = !ZSTD_isError(z);
            if (ok && !it->size_field) {
                // format 3's blocks leave out the frame's magic number (a
                // frame without one, which zstd never writes, stays TBLK)
                ok = z > 4 && rec_get_le32(w->zbuf.data + head_n) == REC_ZSTD_MAGIC;
                if (ok) {
                    memmove(w->zbuf.data + head_n, w->zbuf.data + head_n + 4, z - 4);
                    z -= 4;
                }
            }
            if (ok && head_n + z < size) {
                memcpy(w->zbuf.data, it->buf.data, pre);
                if (it->size_field)
                    rec_le32(w->zbuf.data + pre, (uint32_t)body);
                payload = w->zbuf.data;
                size = head_n + z;
                memcpy(type,
                       memcmp(it->type, REC_T_TBLK, 4) == 0   ? REC_T_TBLZ
                       : memcmp(it->type, REC_T_CLOG, 4) == 0 ? REC_T_CLGZ
                                                              : REC_T_KEYZ,
                       4);
            }
        }
    }
    uint8_t head[8], tail[4];
    memcpy(head, type, 4);
    rec_le32(head + 4, (uint32_t)size);
    uint32_t crc = rec_crc32_update(rec_crc32(head, 8), payload, size);
    rec_le32(tail, crc);
    bool ok = io_write(w, head, 8) && io_write(w, payload, size) && io_write(w, tail, 4) && fflush(w->f) == 0;
    if (!ok) {
        pthread_mutex_lock(&w->mu);
        if (!w->io_failed) {
            w->io_failed = true;
            rec_error_set(&w->io_err, 0, type, "writing a %.4s chunk failed (disk full or file closed?)", type);
        }
        pthread_mutex_unlock(&w->mu);
    }
}

static void *writer_thread(void *arg)
{
    rec_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->work, &w->mu);
        rec_item *it = w->head;
        if (!it)
            break; // stop, and nothing left
        w->head = it->next;
        if (!w->head)
            w->tail = NULL;
        bool skip = w->io_failed;
        pthread_mutex_unlock(&w->mu);
        if (!skip)
            chunk_emit(w, it);
        pthread_mutex_lock(&w->mu);
        w->pending -= it->buf.size;
        it->next = w->free_items;
        w->free_items = it;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static rec_item *item_take(rec_writer *w, const char *type, size_t reserve)
{
    pthread_mutex_lock(&w->mu);
    rec_item *it = w->free_items;
    if (it)
        w->free_items = it->next;
    pthread_mutex_unlock(&w->mu);
    if (!it) {
        it = calloc(1, sizeof *it);
        if (!it) {
            writer_fail(w, "out of memory");
            return NULL;
        }
    }
    memcpy(it->type, type, 4);
    it->compressible =
        memcmp(type, REC_T_TBLK, 4) == 0 || memcmp(type, REC_T_CLOG, 4) == 0 || memcmp(type, REC_T_KEYF, 4) == 0;
    it->prefix = REC_BLOCK_PREFIX;
    it->size_field = true;
    it->buf.size = 0;
    it->buf.failed = false;
    it->next = NULL;
    if (!rec_buf_reserve(&it->buf, reserve)) {
        writer_fail(w, "out of memory");
        pthread_mutex_lock(&w->mu);
        it->next = w->free_items;
        w->free_items = it;
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    return it;
}

static void item_give_back(rec_writer *w, rec_item *it)
{
    pthread_mutex_lock(&w->mu);
    it->next = w->free_items;
    w->free_items = it;
    pthread_mutex_unlock(&w->mu);
}

// Hand a finished chunk to the output (the queue, or straight to disk).
static void item_submit(rec_writer *w, rec_item *it)
{
    if (it->buf.failed) {
        writer_fail(w, "out of memory");
        item_give_back(w, it);
        return;
    }
    if (!w->cfg.threaded) {
        chunk_emit(w, it);
        item_give_back(w, it);
        if (w->io_failed && !w->failed) {
            w->failed = true;
            w->err = w->io_err;
        }
        return;
    }
    pthread_mutex_lock(&w->mu);
    bool io_failed = w->io_failed;
    size_t pending = w->pending;
    bool over = !w->closing && pending + it->buf.size > w->cfg.max_pending_bytes;
    if (!io_failed && !over) {
        w->pending += it->buf.size;
        if (w->tail)
            w->tail->next = it;
        else
            w->head = it;
        w->tail = it;
        pthread_cond_signal(&w->work);
    } else {
        it->next = w->free_items;
        w->free_items = it;
    }
    rec_error io_err = w->io_err;
    pthread_mutex_unlock(&w->mu);
    if (io_failed) {
        if (!w->failed) {
            w->failed = true;
            w->err = io_err;
        }
    } else if (over) {
        writer_fail(w, "the recording fell behind: %zu bytes waiting for the disk (limit %zu)", pending,
                    w->cfg.max_pending_bytes);
    }
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
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    free(w->ids);
    free(w->prev);
    free(w->seen);
    rec_buf_free(&w->hashes);
    rec_buf_free(&w->key);
    free(w->key_states);
    free(w);
}

static bool seen_add(rec_writer *w, uint32_t id)
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

// Let the thread write what is queued, and join it.
static void thread_stop(rec_writer *w)
{
    if (w->thread_started) {
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_signal(&w->work);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thread, NULL);
        w->thread_started = false;
    }
}

// A failed open: stop the thread, and remove the file (nothing of it is a
// recording yet).
static void writer_abort(rec_writer *w)
{
    thread_stop(w);
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
    w->h.format_version = w->cfg.test_format_version ? w->cfg.test_format_version : REC_FORMAT_VERSION;
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
    if (!io_write(w, rec_magic, REC_MAGIC_SIZE) || fflush(w->f) != 0) {
        rec_error_set(err, 0, NULL, "cannot write %s", path);
        writer_abort(w);
        return NULL;
    }
    if (w->cfg.threaded) {
        if (!w->cfg.test_no_thread && pthread_create(&w->thread, NULL, writer_thread, w) == 0)
            w->thread_started = true;
        else
            w->cfg.threaded = false; // no thread to be had: write on the caller's
    }
    rec_item *it = item_take(w, REC_T_HEAD, 4096);
    if (it) {
        rec_header_encode(&it->buf, &w->h);
        item_submit(w, it);
    }
    it = item_take(w, REC_T_SCHM, 1024);
    if (it) {
        rec_schema_encode(&it->buf);
        item_submit(w, it);
    }
    return w;
}

// Capacity to keep for a block of n characters (bytes a tick usually needs,
// times the ticks of a block); ticks that need more grow the buffer.
static size_t block_reserve(uint32_t n)
{
    size_t per_tick = 32u + (size_t)n * 20u;
    size_t want = REC_BLOCK_PREFIX + per_tick * REC_BLOCK_TICKS;
    return want < ((size_t)8 << 20) ? want : ((size_t)8 << 20);
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

static void put_states_chunk(rec_writer *w, const char *type, uint32_t tick, const sim_char_state *c, uint32_t n)
{
    rec_item *it = item_take(w, type, 8 + (size_t)n * 80);
    if (!it)
        return;
    rec_put_u32(&it->buf, tick);
    rec_put_u32(&it->buf, n);
    for (uint32_t i = 0; i < n; i++)
        rec_state_encode(&it->buf, &c[i]);
    item_submit(w, it);
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
    rec_writer *w = writer_begin(path, header, config, REC_KIND_SCENE, err);
    if (!w)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        const char *why = NULL;
        if (!sim_char_state_check(&c[i], &why)) {
            rec_error_set(err, 0, NULL, "initial character %u: %s", c[i].id, why);
            writer_abort(w);
            return NULL;
        }
        w->ids[i] = c[i].id;
        if (!seen_add(w, c[i].id)) {
            rec_error_set(err, 0, NULL, "out of memory");
            writer_abort(w);
            return NULL;
        }
    }
    w->count = n;
    w->first_tick = w->next_tick = sim_scene_tick(initial);
    put_states_chunk(w, REC_T_INIT, w->first_tick, c, n);
    // Two block buffers up front: one filling, one being written.
    rec_item *a = item_take(w, REC_T_TBLK, block_reserve(w->h.max_characters));
    rec_item *b = item_take(w, REC_T_TBLK, block_reserve(w->h.max_characters));
    if (a)
        item_give_back(w, a);
    if (b)
        item_give_back(w, b);
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
    rec_writer *w = writer_begin(path, header, config, REC_KIND_CLIENT, err);
    if (w && w->failed) {
        fill_from(err, w);
        writer_abort(w);
        return NULL;
    }
    return w;
}

bool rec_writer_threaded(const rec_writer *w) { return w && w->thread_started; }

bool rec_writer_pending(rec_writer *w, size_t *bytes)
{
    if (!w || pthread_mutex_trylock(&w->mu) != 0)
        return false;
    *bytes = w->pending;
    pthread_mutex_unlock(&w->mu);
    return true;
}

// ---- scene ticks -----------------------------------------------------------

// Format 3: the chunk is assembled here from its parts: the prefix
// varints, the keyframe section (when the block opens with one), the
// events' length and the events (`ev`, the buffer the ticks filled), the
// hashes and the trailer.
static void block_finish_v3(rec_writer *w, rec_item *ev)
{
    size_t need = REC_V3_PREFIX_MAX + 10 + w->key.size + 10 + ev->buf.size + w->hashes.size + REC_BLOCK_TRAILER;
    rec_item *it = item_take(w, REC_T_TBLK, need);
    if (it) {
        rec_put_var(&it->buf, w->block_first);
        rec_put_var(&it->buf, (uint64_t)w->block_count * 2u + (w->block_key ? REC_V3_KEY_FLAG : 0u));
        it->prefix = it->buf.size;
        it->size_field = false;
        if (w->block_key) {
            rec_put_var(&it->buf, w->key.size);
            rec_put_bytes(&it->buf, w->key.data, w->key.size);
        }
        rec_put_var(&it->buf, ev->buf.size);
        rec_put_bytes(&it->buf, ev->buf.data, ev->buf.size);
        rec_put_bytes(&it->buf, w->hashes.data, w->hashes.size);
        rec_put_u64(&it->buf, w->last_hash);
        rec_put_u64(&it->buf, w->check);
        item_submit(w, it);
    }
    item_give_back(w, ev);
}

static void block_finish(rec_writer *w)
{
    rec_item *it = w->cur;
    if (!it)
        return;
    w->cur = NULL;
    if (w->h.kind == REC_KIND_SCENE && w->h.format_version >= 3) {
        block_finish_v3(w, it);
        return;
    }
    rec_le32(it->buf.data, w->block_first);
    rec_le32(it->buf.data + 4, w->block_count);
    if (w->h.kind == REC_KIND_SCENE && w->h.format_version >= 2) {
        // events length, the events (already there), the hashes, the trailer
        rec_le32(it->buf.data + REC_BLOCK_PREFIX, (uint32_t)(it->buf.size - REC_BLOCK_PREFIX - 4));
        rec_put_bytes(&it->buf, w->hashes.data, w->hashes.size);
        rec_put_u64(&it->buf, w->last_hash);
        rec_put_u64(&it->buf, w->check);
    }
    item_submit(w, it);
}

// Slot of `id` in the current set, or the insertion point with *found false.
static uint32_t set_find(const rec_writer *w, uint32_t id, bool *found)
{
    return rec_ids_find(w->ids, w->count, id, found);
}

static void put_command(rec_buf *b, uint32_t tick, const sim_input *in, sim_input *prev)
{
    uint32_t nf = 0;
    const rec_field *f = rec_command_fields(&nf);
    uint64_t mask = 0;
    if (in->tick != tick)
        mask |= REC_CMD_TICK_BIT;
    for (uint32_t i = 0; i < nf; i++)
        if (rec_command_get(in, i) != rec_command_get(prev, i))
            mask |= (uint64_t)1 << (i + 1);
    rec_put_var(b, mask);
    if (mask & REC_CMD_TICK_BIT)
        rec_put_svar(b, (int64_t)in->tick - (int64_t)tick);
    for (uint32_t i = 0; i < nf; i++) {
        if (!(mask & ((uint64_t)1 << (i + 1))))
            continue;
        int64_t v = rec_command_get(in, i);
        if (rec_command_field_is_angle(f[i].type, f[i].width))
            // A turning player changes its yaw by about the same amount every
            // tick: the wrapped difference repeats, and zstd takes repeats.
            rec_put_svar(b, rec_angle_delta(rec_command_get(prev, i), v));
        else
            rec_field_put(b, (uint8_t)f[i].type, f[i].width, v);
    }
    *prev = *in;
}

bool rec_writer_tick(rec_writer *w, const rec_tick *t, const sim_scene *after)
{
    if (!w || w->failed)
        return false;
    if (w->h.kind != REC_KIND_SCENE) {
        writer_fail(w, "rec_writer_tick on a client recording");
        return false;
    }
    if (t->tick != w->next_tick) {
        writer_fail(w, "tick %u recorded where tick %u was next", t->tick, w->next_tick);
        return false;
    }
    if (sim_scene_tick(after) != t->tick + 1u) {
        writer_fail(w, "tick %u: the scene after it is at tick %u (expected %u)", t->tick, sim_scene_tick(after),
                    t->tick + 1u);
        return false;
    }
    if ((t->leave_count && !t->leaves) || (t->join_count && !t->joins) || (t->command_count && !t->commands)) {
        writer_fail(w, "tick %u: a count without its array", t->tick);
        return false;
    }
    if (t->command_count > w->h.max_characters || t->join_count > w->h.max_characters ||
        t->leave_count > w->h.max_characters) {
        writer_fail(w, "tick %u: more events than max_characters", t->tick);
        return false;
    }
    if (!w->cur) {
        w->cur = item_take(w, REC_T_TBLK, block_reserve(w->h.max_characters));
        if (!w->cur)
            return false;
        w->cur->buf.size = REC_BLOCK_PREFIX; // filled in by block_finish
        if (w->h.format_version >= 2)
            w->cur->buf.size += 4; // the events' length, likewise
        w->block_key = false;
        if (w->h.format_version >= 3) {
            w->cur->buf.size = 0; // the events only: block_finish_v3 puts the rest around them
            w->key.size = 0;
            w->block_key = w->key_pending;
            w->key_pending = false;
            if (w->block_key) {
                rec_put_var(&w->key, w->key_count);
                for (uint32_t i = 0; i < w->key_count; i++)
                    rec_state_encode_compact(&w->key, &w->key_states[i]);
                if (w->key.failed) {
                    writer_fail(w, "out of memory");
                    return false;
                }
            }
        }
        w->hashes.size = 0;
        w->check = REC_CHECK_SEED;
        w->block_first = t->tick;
        w->block_count = 0;
        for (uint32_t i = 0; i < w->count; i++)
            memset(&w->prev[i], 0, sizeof w->prev[i]);
    }
    rec_buf *b = &w->cur->buf;
    size_t need = 64 + (size_t)t->leave_count * 5 + (size_t)t->join_count * 80 + (size_t)t->command_count * 20 +
                  (size_t)(w->count + t->join_count) * 2;
    if (!rec_buf_reserve(b, need)) {
        writer_fail(w, "out of memory");
        return false;
    }

    // leaves
    rec_put_var(b, t->leave_count);
    for (uint32_t i = 0; i < t->leave_count; i++) {
        bool found;
        uint32_t at = set_find(w, t->leaves[i], &found);
        if (!found) {
            writer_fail(w, "tick %u: leave of character %u, which is not in the scene", t->tick, t->leaves[i]);
            return false;
        }
        memmove(w->ids + at, w->ids + at + 1, (size_t)(w->count - at - 1) * sizeof *w->ids);
        memmove(w->prev + at, w->prev + at + 1, (size_t)(w->count - at - 1) * sizeof *w->prev);
        w->count--;
        rec_put_var(b, t->leaves[i]);
    }
    // joins
    rec_put_var(b, t->join_count);
    for (uint32_t i = 0; i < t->join_count; i++) {
        const sim_char_state *j = &t->joins[i];
        const char *why = NULL;
        bool found;
        uint32_t at = set_find(w, j->id, &found);
        if (j->id == 0 || (j->id & SIM_FEATURE_OBJECT_BIT) || found) {
            writer_fail(w, "tick %u: join of character %u, which is 0, too large or already in the scene", t->tick,
                        j->id);
            return false;
        }
        if (!sim_char_state_check(j, &why)) {
            writer_fail(w, "tick %u: joining character %u: %s", t->tick, j->id, why);
            return false;
        }
        if (w->count >= w->h.max_characters) {
            writer_fail(w, "tick %u: more than max_characters (%u) characters", t->tick, w->h.max_characters);
            return false;
        }
        memmove(w->ids + at + 1, w->ids + at, (size_t)(w->count - at) * sizeof *w->ids);
        memmove(w->prev + at + 1, w->prev + at, (size_t)(w->count - at) * sizeof *w->prev);
        w->ids[at] = j->id;
        memset(&w->prev[at], 0, sizeof w->prev[at]);
        w->count++;
        if (!seen_add(w, j->id)) {
            writer_fail(w, "out of memory");
            return false;
        }
        rec_state_encode(b, j);
    }
    // commands: one per character in id order needs no ids
    bool implicit = t->command_count == w->count;
    for (uint32_t i = 0; implicit && i < t->command_count; i++)
        implicit = t->commands[i].id == w->ids[i];
    rec_put_u8(b, implicit ? 0 : 1);
    if (implicit) {
        for (uint32_t i = 0; i < t->command_count; i++)
            put_command(b, t->tick, &t->commands[i].input, &w->prev[i]);
    } else {
        rec_put_var(b, t->command_count);
        uint32_t last = 0;
        for (uint32_t i = 0; i < t->command_count; i++) {
            uint32_t id = t->commands[i].id;
            bool found;
            uint32_t at = set_find(w, id, &found);
            if (!found || (i > 0 && id <= last)) {
                writer_fail(w, "tick %u: command for character %u, %s", t->tick, id,
                            found ? "out of id order" : "which is not in the scene");
                return false;
            }
            rec_put_var(b, id - last);
            last = id;
            put_command(b, t->tick, &t->commands[i].input, &w->prev[at]);
        }
    }
    // the result: the world hash and one short hash per character
    uint32_t n = 0;
    const sim_char_state *c = sim_scene_characters(after, &n);
    if (n != w->count) {
        writer_fail(w, "tick %u: the scene after it has %u characters, the recorded events give %u", t->tick, n,
                    w->count);
        return false;
    }
    uint64_t hash = sim_scene_hash(after);
    bool v1 = w->h.format_version < 2;
    if (v1)
        rec_put_u64(b, hash); // format 1: every tick's world hash, among its commands
    rec_buf *hb = v1 ? b : &w->hashes;
    if (!rec_buf_reserve(hb, (size_t)n * 2)) {
        writer_fail(w, "out of memory");
        return false;
    }
    w->check = rec_check_mix(w->check, n);
    for (uint32_t i = 0; i < n; i++) {
        if (c[i].id != w->ids[i]) {
            writer_fail(w, "tick %u: the scene after it holds character %u where the recorded events give %u", t->tick,
                        c[i].id, w->ids[i]);
            return false;
        }
        uint64_t h64 = rec_char_hash64(&c[i]);
        w->check = rec_check_mix(w->check, h64);
        hb->data[hb->size++] = (uint8_t)h64;
        hb->data[hb->size++] = (uint8_t)(h64 >> 8);
    }
    if (!v1 && !rec_buf_reserve(b, REC_BLOCK_TRAILER + w->hashes.size)) {
        writer_fail(w, "out of memory");
        return false;
    }
    if (b->failed) {
        writer_fail(w, "out of memory");
        return false;
    }
    w->block_count++;
    w->ticks++;
    w->joins += t->join_count;
    w->leaves += t->leave_count;
    w->last_hash = hash;
    w->last_tick = t->tick;
    w->any_tick = true;
    w->next_tick = t->tick + 1u;

    uint32_t ki = w->h.keyframe_interval;
    bool keyframe = ki != 0 && w->next_tick % ki == 0;
    if (keyframe || w->block_count >= REC_BLOCK_TICKS)
        block_finish(w);
    if (keyframe) {
        for (uint32_t i = 0; i < n; i++) {
            const char *why = NULL;
            if (!sim_char_state_check(&c[i], &why)) {
                writer_fail(w, "tick %u: character %u after it: %s", t->tick, c[i].id, why);
                return false;
            }
        }
        if (w->h.format_version >= 3) {
            // into the block that starts at its tick (or, when none follows,
            // a KEYF chunk of its own at close)
            memcpy(w->key_states, c, (size_t)n * sizeof *c);
            w->key_count = n;
            w->key_tick = w->next_tick;
            w->key_pending = true;
        } else {
            put_states_chunk(w, REC_T_KEYF, w->next_tick, c, n);
        }
    }
    return !w->failed;
}

// ---- client records --------------------------------------------------------

bool rec_writer_client(rec_writer *w, const rec_client_record *r)
{
    if (!w || w->failed)
        return false;
    if (w->h.kind != REC_KIND_CLIENT) {
        writer_fail(w, "rec_writer_client on a scene recording");
        return false;
    }
    if (r->op < REC_CLIENT_HELLO || r->op > REC_CLIENT_CONFIRMED) {
        writer_fail(w, "client record %u: unknown op %d", w->client_records, (int)r->op);
        return false;
    }
    if (r->op == REC_CLIENT_EVENT && r->length && !r->data) {
        writer_fail(w, "client record %u: a packet length without data", w->client_records);
        return false;
    }
    if (!w->cur) {
        w->cur = item_take(w, REC_T_CLOG, REC_CLIENT_BLOCK_BYTES + 256);
        if (!w->cur)
            return false;
        w->cur->buf.size = REC_BLOCK_PREFIX;
        w->block_first = w->client_records;
        w->block_count = 0;
        w->block_prev_ms = 0;
    }
    rec_buf *b = &w->cur->buf;
    rec_put_u8(b, (uint8_t)r->op);
    rec_put_svar(b, (int64_t)r->now_ms - (int64_t)w->block_prev_ms);
    w->block_prev_ms = r->now_ms;
    switch (r->op) {
    case REC_CLIENT_HELLO: break;
    case REC_CLIENT_EVENT:
        rec_put_svar(b, r->event_type);
        rec_put_u8(b, r->channel);
        rec_put_var(b, r->length);
        rec_put_bytes(b, r->data, r->length);
        break;
    case REC_CLIENT_PREDICT: {
        uint32_t nf = 0;
        const rec_field *f = rec_command_fields(&nf);
        rec_put_var(b, r->input.tick);
        for (uint32_t i = 0; i < nf; i++)
            rec_field_put(b, (uint8_t)f[i].type, f[i].width, rec_command_get(&r->input, i));
        rec_put_var(b, r->result);
        break;
    }
    case REC_CLIENT_CATCH_UP: rec_put_var(b, r->result); break;
    case REC_CLIENT_CONFIRMED:
        rec_put_var(b, r->tick);
        rec_put_u64(b, r->hash);
        break;
    }
    if (b->failed) {
        writer_fail(w, "out of memory");
        return false;
    }
    w->client_records++;
    w->block_count++;
    if (b->size >= REC_CLIENT_BLOCK_BYTES)
        block_finish(w);
    return !w->failed;
}

// ---- closing -----------------------------------------------------------------

bool rec_writer_close(rec_writer *w, rec_error *err)
{
    rec_error_clear(err);
    if (!w)
        return false;
    if (!w->failed) {
        w->closing = true;
        block_finish(w);
        if (w->key_pending) {
            put_states_chunk(w, REC_T_KEYF, w->key_tick, w->key_states, w->key_count);
            w->key_pending = false;
        }
        rec_item *it = item_take(w, REC_T_ENDR, 64);
        if (it) {
            rec_put_u32(&it->buf, w->any_tick ? w->last_tick : 0);
            rec_put_u64(&it->buf, w->any_tick ? w->last_hash : 0);
            rec_put_u32(&it->buf, (uint32_t)w->ticks);
            rec_put_u64(&it->buf, w->joins);
            rec_put_u64(&it->buf, w->leaves);
            rec_put_u32(&it->buf, w->seen_count);
            rec_put_u32(&it->buf, w->client_records);
            item_submit(w, it);
        }
    }
    thread_stop(w);
    if (w->io_failed && !w->failed) {
        w->failed = true;
        w->err = w->io_err;
    }
    if (w->f) {
        if (fclose(w->f) != 0 && !w->failed)
            writer_fail(w, "closing the file failed");
        w->f = NULL;
    }
    bool ok = !w->failed;
    if (!ok)
        fill_from(err, w);
    writer_free(w);
    return ok;
}
