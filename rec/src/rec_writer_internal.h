// keel recordings: what the writer's files share (not installed). MIT licence.
//
// One rec_writer is spread over four files, each with one concern:
// rec_writer.c opens (header, schema, initial states), keeps the ENDR
// statistics and closes; rec_writer_out.c is the output (the chunk queue,
// its thread, compression and framing); rec_writer_tick.c encodes scene
// ticks into tick blocks (formats 1, 2 and 3); rec_writer_client.c encodes
// client records. Everything but the output's queue fields (under mu) and
// the thread's own compressor belongs to the caller's thread.
#ifndef KEEL_REC_WRITER_INTERNAL_H
#define KEEL_REC_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include <zstd.h>

#include "rec_internal.h"

typedef struct rec_item {
    char type[4];
    bool compressible; ///< TBLK/CLOG/KEYF/GKEY/GCMD: try zstd
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
    // The current block's substituted commands (SUBS entries, after it).
    rec_buf subs;
    uint32_t subs_count;

    // A recording with a game (format 4 and later): the game, the block's GCMD body
    // (per tick: the world hash, a flag and the packed game commands) and
    // a command struct to check each packed command with.
    const sim_game *game;
    rec_buf game_ticks;
    uint8_t game_scratch[SIM_GAME_COMMAND_MAX_BYTES];

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

/// Fail the recording with a message (the first failure is kept).
void rec_wr_fail(rec_writer *w, const char *fmt, ...) REC_PRINTF(2, 3);
/// Add an id to the distinct ids seen (false: out of memory).
bool rec_wr_seen_add(rec_writer *w, uint32_t id);
/// Queue a chunk of n whole states (INIT, formats 1 and 2's KEYF, format 3's
/// keyframe that no block took).
void rec_wr_put_states_chunk(rec_writer *w, const char *type, uint32_t tick, const sim_char_state *c, uint32_t n);

// ---- output (rec_writer_out.c) ----
bool rec_wr_io_write(rec_writer *w, const void *p, size_t n);
/// The output thread's body (w->thread).
void *rec_wr_thread(void *arg);
/// A chunk buffer for `type` with `reserve` bytes (a free one when there
/// is one); NULL with the writer failed when out of memory.
rec_item *rec_wr_item_take(rec_writer *w, const char *type, size_t reserve);
void rec_wr_item_give_back(rec_writer *w, rec_item *it);
/// Hand a finished chunk to the output (the queue, or straight to disk).
void rec_wr_item_submit(rec_writer *w, rec_item *it);
/// Let the thread write what is queued, and join it.
void rec_wr_thread_stop(rec_writer *w);

// ---- blocks (rec_writer_tick.c) ----
/// Capacity to keep for a scene block of n characters.
size_t rec_wr_block_reserve(uint32_t n);
/// Finish the current block (scene or client), if any, and submit it.
void rec_wr_block_finish(rec_writer *w);

// ---- games (rec_writer_game.c) ----
/// The GAME chunk (a client recording's, after SCHM).
void rec_wr_game_identity(rec_writer *w);
/// GAME and the initial GKEY, after INIT.
void rec_wr_game_open(rec_writer *w, const sim_scene *initial);
/// One tick's part of the block's GCMD (false: the writer failed).
bool rec_wr_game_tick(rec_writer *w, const rec_tick *t, uint64_t hash);
/// Submit the block's GCMD (after its TBLK).
void rec_wr_game_block(rec_writer *w, uint32_t first, uint32_t count);
/// A GKEY of the scene at the start of its tick.
void rec_wr_game_key(rec_writer *w, const sim_scene *scene);

#endif
