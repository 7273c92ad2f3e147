// keel recordings: the writer's output. MIT licence, see LICENSE.
//
// Finished chunks go to a queue bounded by bytes; a background thread (or
// the caller, when not threaded) compresses tick, client and keyframe
// chunks and a game's GKEY and GCMD with zstd when that makes them smaller, frames them with their
// CRC, writes and flushes each one, so a crash leaves every finished chunk
// readable. Chunk buffers are kept on a free list and reused, so after the
// first blocks nothing is allocated per tick. The queue, its counters and
// io_failed are shared under mu; the compressor (zc, zbuf) belongs to
// whoever writes. A writer that falls behind fails the recording instead
// of stalling the game.
#include <stdlib.h>
#include <string.h>

#include "rec_writer_internal.h"

#define ZSTD_LEVEL 3
/// Format 3's tick blocks: small inputs, where level 9 finds more of the
/// commands' repeats than 3 (one player: about -18 kB per hour) at a cost
/// the writer thread does not notice.
#define ZSTD_LEVEL_V3 9

bool rec_wr_io_write(rec_writer *w, const void *p, size_t n) { return n == 0 || fwrite(p, 1, n, w->f) == n; }

// The type of a compressible chunk's compressed form.
static const char *compressed_type(const char *type)
{
    static const char *const pairs[][2] = {{REC_T_TBLK, REC_T_TBLZ},
                                           {REC_T_CLOG, REC_T_CLGZ},
                                           {REC_T_KEYF, REC_T_KEYZ},
                                           {REC_T_GKEY, REC_T_GKYZ},
                                           {REC_T_GCMD, REC_T_GCMZ}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (memcmp(type, pairs[i][0], 4) == 0)
            return pairs[i][1];
    return type;
}

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
                memcpy(type, compressed_type(it->type), 4);
            }
        }
    }
    uint8_t head[8], tail[4];
    memcpy(head, type, 4);
    rec_le32(head + 4, (uint32_t)size);
    uint32_t crc = rec_crc32_update(rec_crc32(head, 8), payload, size);
    rec_le32(tail, crc);
    bool ok = rec_wr_io_write(w, head, 8) && rec_wr_io_write(w, payload, size) && rec_wr_io_write(w, tail, 4) &&
              fflush(w->f) == 0;
    if (!ok) {
        pthread_mutex_lock(&w->mu);
        if (!w->io_failed) {
            w->io_failed = true;
            rec_error_set(&w->io_err, 0, type, "writing a %.4s chunk failed (disk full or file closed?)", type);
        }
        pthread_mutex_unlock(&w->mu);
    }
}

void *rec_wr_thread(void *arg)
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

rec_item *rec_wr_item_take(rec_writer *w, const char *type, size_t reserve)
{
    pthread_mutex_lock(&w->mu);
    rec_item *it = w->free_items;
    if (it)
        w->free_items = it->next;
    pthread_mutex_unlock(&w->mu);
    if (!it) {
        it = calloc(1, sizeof *it);
        if (!it) {
            rec_wr_fail(w, "out of memory");
            return NULL;
        }
    }
    memcpy(it->type, type, 4);
    it->compressible = compressed_type(type) != type;
    it->prefix = REC_BLOCK_PREFIX;
    it->size_field = true;
    it->buf.size = 0;
    it->buf.failed = false;
    it->next = NULL;
    if (!rec_buf_reserve(&it->buf, reserve)) {
        rec_wr_fail(w, "out of memory");
        pthread_mutex_lock(&w->mu);
        it->next = w->free_items;
        w->free_items = it;
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    return it;
}

void rec_wr_item_give_back(rec_writer *w, rec_item *it)
{
    pthread_mutex_lock(&w->mu);
    it->next = w->free_items;
    w->free_items = it;
    pthread_mutex_unlock(&w->mu);
}

// Hand a finished chunk to the output (the queue, or straight to disk).
void rec_wr_item_submit(rec_writer *w, rec_item *it)
{
    if (it->buf.failed) {
        rec_wr_fail(w, "out of memory");
        rec_wr_item_give_back(w, it);
        return;
    }
    if (!w->cfg.threaded) {
        chunk_emit(w, it);
        rec_wr_item_give_back(w, it);
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
        rec_wr_fail(w, "the recording fell behind: %zu bytes waiting for the disk (limit %zu)", pending,
                    w->cfg.max_pending_bytes);
    }
}

// Let the thread write what is queued, and join it.
void rec_wr_thread_stop(rec_writer *w)
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

bool rec_writer_threaded(const rec_writer *w) { return w && w->thread_started; }

bool rec_writer_pending(rec_writer *w, size_t *bytes)
{
    if (!w || pthread_mutex_trylock(&w->mu) != 0)
        return false;
    *bytes = w->pending;
    pthread_mutex_unlock(&w->mu);
    return true;
}
