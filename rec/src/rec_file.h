// keel recordings: the reader's file and cursor (not installed). MIT licence.
#ifndef KEEL_REC_FILE_H
#define KEEL_REC_FILE_H

#include <zstd.h>

#include "rec_internal.h"

/// A tick block (or client block) found in the file.
typedef struct rec_block_ref {
    uint64_t chunk_at;   ///< file offset of the chunk's type
    uint64_t payload_at; ///< file offset of its payload
    uint32_t length;     ///< payload bytes
    bool compressed;     ///< TBLZ / CLGZ
    uint32_t raw_size;   ///< bytes of the body after the prefix, decompressed
    uint32_t prefix;     ///< bytes before the body (or its zstd frame and, before format 3, its size)
    bool has_key;        ///< format 3: the body opens with the keyframe at `first`
    bool magicless;      ///< format 3's TBLZ: the zstd frame lacks its magic number
    uint32_t first;      ///< first tick (client: first record index)
    uint32_t count;      ///< ticks (client: records)
    /// The SUBS chunk after the block: its offset, its entries' offset
    /// (after first tick and count) and bytes, and the entry count (0: none).
    uint64_t subs_chunk_at, subs_at;
    uint32_t subs_length, subs_count;
    /// A recording with a game: the block's GCMD payload (after its 8-byte
    /// prefix), which follows the block's chunk; GCMZ: its zstd frame (no
    /// magic number) of game_raw bytes.
    uint64_t game_at;
    uint32_t game_len;
    bool has_game;
    bool game_compressed;
    uint32_t game_raw;
} rec_block_ref;

/// A GKEY chunk: the scene saved at the start of `tick` (a GKYZ chunk's
/// decompressed at open: `owned`).
typedef struct rec_game_key {
    uint32_t tick;
    uint64_t at; ///< file offset of the saved bytes (GKEY)
    uint32_t len;
    uint8_t *owned; ///< GKYZ: the saved bytes (len of them), freed with the file
} rec_game_key;

/// A full-state chunk: INIT, KEYF or KEYZ (compressed).
typedef struct rec_key_ref {
    uint64_t chunk_at, payload_at;
    uint32_t length;
    uint32_t tick;
    uint32_t block; ///< index of the block starting at the keyframe's tick (block_count: none)
    const char *type;
    bool compressed;
    uint32_t raw_size; ///< KEYZ: bytes of the records decompressed
    bool in_block;     ///< format 3: the keyframe section of block `block` (the chunk is that block's)
} rec_key_ref;

struct rec_file {
    uint8_t *data;
    size_t size;
    rec_header h;
    rec_schema state_schema, command_schema;
    rec_info info;

    uint32_t init_tick;
    sim_char_state *init;
    uint32_t init_count;

    rec_block_ref *blocks;
    uint32_t block_count, block_cap;
    rec_key_ref *keys;
    uint32_t key_count, key_cap;
    uint32_t max_raw; ///< largest decompressed block body

    sim_char_state *key_states; ///< rec_file_keyframe's storage (max_characters)
    ZSTD_DCtx *key_dz;          ///< and its decompression (created on first use)
    rec_buf key_raw;

    bool has_game; ///< a GAME chunk was read (its identity is in h)
    rec_game_key *game_keys;
    uint32_t game_key_count, game_key_cap;
};

struct rec_cursor {
    const rec_file *f;
    uint32_t cap;   ///< max_characters
    uint32_t block; ///< the next block to load
    bool in_block;
    uint32_t ticks_left;
    uint32_t tick;                          ///< the next tick (client: next record index)
    rec_rd rd;                              ///< the block's ticks (format 2: its events only)
    rec_rd hd;                              ///< format 2: the block's 16-bit hashes (same bytes and offsets as rd)
    uint32_t block_ticks;                   ///< ticks in the current block
    uint64_t block_world_hash, block_check; ///< format 2: the block's trailer
    rec_buf raw;
    ZSTD_DCtx *dz;
    rec_buf key_raw;   ///< a keyframe decompressed (not to disturb the current block)
    uint64_t block_at; ///< file offset of the current block's chunk
    const char *block_type;
    bool block_compressed;

    uint32_t *ids;   ///< the character set (id order)
    sim_input *prev; ///< delta base per slot
    uint32_t count;

    uint32_t *leaves;
    sim_char_state *joins;
    rec_command *commands;
    uint32_t *out_ids;
    uint16_t *hashes;
    sim_char_state *key_states;

    uint32_t prev_ms; ///< client blocks: the last record's clock

    // The current block's SUBS entries: the reader, the entries left and
    // the next one (its tick and id), read ahead.
    rec_rd sd;
    uint64_t subs_chunk_at;
    uint32_t subs_left, subs_first;
    uint64_t subs_end; ///< the tick after the block
    bool sub_ready, sub_any;
    uint32_t sub_tick, sub_id; ///< the next entry (sub_ready) or the last one read
    rec_rd gd;                 ///< a recording with a game: the current block's GCMD ticks
    rec_buf game_raw;          ///< and a GCMZ's body decompressed
};

/// The body of block b (after its prefix) in *out: decompressed with dz
/// into raw for TBLZ/CLGZ (offsets then count from the chunk's), else in
/// place. False with *err filled when the frame does not decompress to the
/// size it declares.
bool rec_block_body(const rec_file *f, const rec_block_ref *b, ZSTD_DCtx *dz, rec_buf *raw, rec_rd *out,
                    rec_error *err);

/// Decode a keyframe (or INIT) into states[max_characters]; a KEYZ (or a
/// compressed block holding the keyframe) is decompressed with dz into raw
/// first.
bool rec_states_decode(const rec_file *f, const rec_key_ref *k, ZSTD_DCtx *dz, rec_buf *raw, uint32_t *tick,
                       sim_char_state *states, uint32_t *count, rec_error *err);

/// A game's chunk met while indexing (GAME, GKEY/GKYZ, GCMD/GCMZ): 1 when it was one
/// and is fine, 0 when `type` is not a game chunk, -1 with *err filled.
int rec_index_game_chunk(rec_file *f, const uint8_t *chunk, uint32_t len, uint64_t off, uint32_t next_tick,
                         bool before_blocks, rec_error *err);
/// After the last chunk: every block of a game recording has its GCMD (a
/// crash's last block without one is dropped). False with *err filled.
bool rec_index_game_finish(rec_file *f, rec_error *err);
/// The cursor's part of a block with a game: its GCMD loaded (false: a fault
/// filled in *err) and one tick of it read into *out (command_count known).
bool rec_cursor_game_block(rec_cursor *c, const rec_block_ref *b, rec_error *err);
bool rec_cursor_game_tick(rec_cursor *c, rec_tick *out, bool last, rec_error *err);

/// Index and check a file whose bytes f->data[0..f->size) hold (the
/// decoding pass included): f, or NULL with f closed and *err filled.
rec_file *rec_file_index(rec_file *f, rec_error *err);

#endif
