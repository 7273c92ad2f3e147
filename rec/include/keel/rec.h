// keel: recordings: a versioned file of everything a scene applied, tick by
// tick, with the hashes it reached, so any build on any CPU can re-simulate it
// and say where it diverged. MIT licence, see LICENSE. docs/replay.md has the
// byte layout; this header is the API.
//
// A file is an 8-byte magic followed by chunks. Every chunk is framed as
//   type (4 ASCII bytes) | payload length (u32 LE) | payload | CRC-32 (u32 LE)
// with the CRC over type, length and payload, so a crash leaves a readable
// prefix and a flipped bit is found, never misread. Chunks, in order:
//   HEAD  header (rec_header): versions, identity, settings, level, platforms
//   SCHM  schema: the fields of a character state and of a command, with
//         their names, types and widths, in the order records store them
//   INIT  the initial state (tick and every character)
//   then, repeated:
//   TBLK  a block of up to 64 ticks (TBLZ: the same, zstd-compressed when it
//         pays): when it starts at a keyframe tick (every keyframe_interval
//         ticks; with interval 1, every tick: debug mode), the full state at
//         the start of that tick; for every tick its leaves, joins, the
//         command each character ran and one 16-bit hash per character after
//         it; at the block's end the world hash after its last tick and a
//         64-bit check of every tick's characters
//   KEYF  a keyframe no block follows (KEYZ: the same, zstd-compressed);
//         formats 1 and 2 wrote every keyframe so, before its block
//   SUBS  (optional, right after the tick block it describes) the commands
//         of that block that were substitutes (rec_command.substituted);
//         informational: it decides no result, and readers that predate it
//         skip it as they skip every chunk type they do not know
//   ENDR  the end: last tick, final hash, counts (absent after a crash)
// A scene recording made with a game (format 5; rec_header.game_name) adds:
//   GAME  after INIT: the game's name, version, digest and packed command size
//   GKEY  after INIT and after each keyframe's tick: the scene's whole state
//         at that tick as sim_scene_save writes it (version 2: with the game;
//         GKYZ: the same, zstd-compressed when it pays)
//   GCMD  after each TBLK/TBLZ, for the same ticks: the world hash after each
//         tick and each command's game command, packed by the game's schema
//         (GCMZ: the same, zstd-compressed when it pays)
// A client recording (kind REC_KIND_CLIENT) holds CLOG blocks instead of
// TBLK: the calls made to the client library (with their clock values and
// the packets received) and the confirmed hashes it reached. A client with a
// game writes format 5: a GAME chunk after SCHM, and each predict call's
// packed game command in its record.
//
// Nothing here depends on byte order or struct layout: every value is encoded
// field by field, little-endian. No floating point.
#ifndef KEEL_REC_H
#define KEEL_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/sim_game.h>
#include <keel/sim_move.h>
#include <keel/sim_scene.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REC_MAGIC_SIZE 8
/// "KEELREC" and 0x1A: stops `type` on some systems, and a text-mode transfer
/// that changes line ends breaks the magic at once.
extern const uint8_t rec_magic[REC_MAGIC_SIZE];
/// Bumped when the layout changes incompatibly; readers accept every version
/// up to theirs (older files keep reading through the schema). 2: a tick
/// stores no world hash of its own; each tick block ends with the world hash
/// after its last tick and a 64-bit check over all its ticks, and keeps its
/// hashes apart from its commands (1: an 8-byte world hash every tick).
/// 3: a keyframe sits inside the tick block that starts at its tick, its
/// records as varints; a block's prefix is varints and its zstd frame
/// carries the body's size.
/// 4: a recording made with a game adds its GAME, GKEY and GCMD chunks; a
/// recording without a game is still written as format 3, byte for byte.
/// 5: GKEY and GCMD are compressed as GKYZ and GCMZ when it pays (format 4
/// never compresses them; an older reader refuses format 5 by its version).
#define REC_FORMAT_VERSION 5u
/// The oldest format a recording with a game can be written in (for tests).
#define REC_FORMAT_VERSION_GAME_FIRST 4u
/// The format of a recording without a game.
#define REC_FORMAT_VERSION_NO_GAME 3u
#define REC_MAX_PLATFORMS 16u
#define REC_MAX_WATERS 16u
#define REC_DEFAULT_KEYFRAME_INTERVAL 64u
/// Most ticks in one TBLK/TBLZ block.
#define REC_BLOCK_TICKS 64u
/// Most characters a recording holds at any tick.
#define REC_MAX_CHARACTERS 4096u

/// keel-replay's exit codes (and the verify/diff results below).
enum {
    REC_EXIT_MATCH = 0,
    REC_EXIT_DIVERGED = 1,
    REC_EXIT_USAGE = 2,
    REC_EXIT_BAD_FILE = 3,
};

typedef enum rec_kind {
    REC_KIND_SCENE = 1,  ///< a server or keel-sim: every applied command, every hash
    REC_KIND_CLIENT = 2, ///< a client: the calls into the client library and its confirmed hashes
} rec_kind;

typedef enum rec_level_kind {
    REC_LEVEL_BUILTIN = 0,
    REC_LEVEL_GENERATED = 1, ///< sim_level_generate(generate_triangles, generate_seed)
    REC_LEVEL_OBJ = 2,       ///< path, scale, up axis
} rec_level_kind;

/// How to rebuild the level. `digest` (net_level_digest) decides whether a
/// level found later is the same; the path is only where to look first.
typedef struct rec_level_ref {
    rec_level_kind kind;
    char path[256]; ///< OBJ path as the recorder was given it ("" otherwise)
    char scale[32]; ///< OBJ metres per file unit, decimal text ("" otherwise)
    char up_axis;   ///< 'y' or 'z' (OBJ)
    uint32_t generate_triangles, generate_seed;
    uint64_t digest; ///< net_level_digest of the level
} rec_level_ref;

typedef struct rec_header {
    uint32_t format_version;    ///< of the file (REC_FORMAT_VERSION when writing)
    uint32_t behaviour_version; ///< NET_BEHAVIOUR_VERSION of the build that wrote it
    rec_kind kind;
    sim_move_settings settings; ///< everything that decides movement; tick_rate is in here
    uint64_t settings_digest;   ///< net_settings_digest(&settings), checked on read
    rec_level_ref level;
    sim_platform_def platforms[REC_MAX_PLATFORMS]; ///< added to the scene in this order
    uint32_t platform_count;
    sim_aabb waters[REC_MAX_WATERS];
    uint32_t water_count;
    uint32_t max_characters;    ///< the scene's capacity (1..REC_MAX_CHARACTERS)
    uint32_t keyframe_interval; ///< ticks between keyframes; 1 = debug mode; 0 = none
    bool compress;              ///< zstd blocks when that makes them smaller
    char build_id[64];          ///< informational: compiler, flags, commit; never decides anything
    char source[32];            ///< "keel-server", "keel-sim", "keel-client", a test's name
    /// Client recordings: the character the client played and the client
    /// library's settings that decide its results.
    uint32_t client_character;
    uint32_t client_prediction_cap;
    /// The recorder marks the commands it substituted (rec_command.substituted;
    /// keel-server does): a recording with it and no marked command had none.
    /// Without it a recording says nothing about substitutes but what
    /// input.tick shows. Written only when set (older headers lack it).
    bool substitutes_marked;
    /// The game the scene ran (format 4 and later; "" : none), as sim_game_name,
    /// sim_game_version and sim_game_digest give it, and the bytes of one
    /// packed game command (ceil(sim_game_command_bits / 8)). Set by
    /// rec_header_set_scene from the scene's game.
    char game_name[SIM_GAME_NAME_MAX + 1];
    uint32_t game_version;
    uint64_t game_digest;
    uint32_t game_command_bytes;
    /// Reading: the game given with rec_file_set_game (NULL until then).
    /// Re-simulating a recording made with a game needs it.
    const sim_game *game;
} rec_header;

/// A header for a scene recording with default settings, the built-in
/// level, keyframes every 64 ticks, compression on, this build's versions and
/// build id.
rec_header rec_default_header(void);

/// Copy a scene's platforms, water boxes, capacity (clamped to
/// REC_MAX_CHARACTERS) and game identity into a header, so that rec_writer_open's check that
/// they match holds. The settings are the caller's (a scene does not expose
/// them).
void rec_header_set_scene(rec_header *h, const sim_scene *scene);

/// The build id of this build ("gcc 12.2.0 -O2 x86_64" and the like).
const char *rec_build_id(void);

/// Why something failed: static or formatted text, and where in the file.
typedef struct rec_error {
    char message[256];
    uint64_t offset; ///< byte offset in the file of the chunk (or field) at fault
    char chunk[5];   ///< its type ("" when not in a chunk)
} rec_error;

/// A character's 16-bit hash as recorded per tick: the low 16 bits of an
/// XXH64 over its fields (the schema's order and widths). The world hash,
/// 64 bits, is sim_scene_hash; the per-character ones locate the character.
uint16_t rec_char_hash16(const sim_char_state *state);

/// One tick of a scene recording: what was applied at its start, and the
/// result after it.
typedef struct rec_command {
    uint32_t id;
    sim_input input; ///< input.tick is the tick it ran in
    /// The recorder ran this command in place of the character's own, which
    /// had not come (a server repeating a player's last command, with
    /// input.tick the tick it ran in). Informational: stored apart from the
    /// command (a SUBS chunk), never part of a result or a hash.
    bool substituted;
} rec_command;

/// The index of character id's command among n commands in increasing id
/// order (a rec_tick's), or n when it has none.
uint32_t rec_command_find(const rec_command *commands, uint32_t n, uint32_t id);

typedef struct rec_tick {
    uint32_t tick;
    uint32_t leave_count, join_count, command_count;
    const uint32_t *leaves;      ///< ids removed at the start of the tick
    const sim_char_state *joins; ///< characters added at the start of the tick (after leaves)
    const rec_command *commands; ///< every character's command, in id order
    uint64_t world_hash;         ///< sim_scene_hash after the tick, when has_world_hash (else 0)
    uint32_t char_count;         ///< characters after the tick
    const uint32_t *char_ids;    ///< in id order
    const uint16_t *char_hashes; ///< rec_char_hash16 of each, after the tick
    /// Reading: whether world_hash is recorded for this tick (format 1:
    /// every tick; formats 2 and 3: the last tick of each block).
    bool has_world_hash;
    bool block_start; ///< reading: the first tick of a tick block
    /// Reading, formats 2 and 3, on a block's last tick: the block's check over
    /// all its ticks (rec_verify and rec_diff compare it; see docs/replay.md).
    bool has_block_check;
    uint64_t block_check;
    /// Recordings with a game: each command's game command packed
    /// (sim_game_pack_command), command_count times the header's
    /// game_command_bytes, in the commands' order. Writing: NULL gives the
    /// tick no game commands (the scene ran sim_scene_set_input). Reading:
    /// NULL when the tick has none. (With a game, every tick also holds its
    /// world hash: has_world_hash.)
    const uint8_t *game_commands;
} rec_tick;

// ---- writing -------------------------------------------------------------------------

typedef struct rec_writer rec_writer;

typedef struct rec_writer_config {
    /// Encode on the caller's thread (cheap), compress and write on a
    /// background thread, so the caller never waits on the disk. Where no
    /// thread can be started, the writer writes on the caller's thread
    /// instead (the same bytes; rec_writer_threaded says which).
    bool threaded;
    /// Bytes waiting for the disk before the writer gives up (the recording
    /// then ends with an error rather than stalling the caller; default 64 MiB).
    size_t max_pending_bytes;
    /// Testing: act as if no thread could be started (a threaded writer
    /// then falls back to the caller's thread). Off by default.
    bool test_no_thread;
    /// Testing: write this older format version (1 or 2) instead of
    /// REC_FORMAT_VERSION, to check that readers still take it. 0: current.
    uint32_t test_format_version;
} rec_writer_config;

rec_writer_config rec_default_writer_config(void);

/// Create `path` and write HEAD, SCHM and INIT (the scene's current state,
/// which must match the header: its platforms, waters, settings). A scene
/// with a game needs a header naming that game (rec_header_set_scene does):
/// the recording is then format 5 and also holds GAME and the scene's saved
/// state (GKEY); a header whose game is not the scene's is refused. NULL with
/// *err filled on failure; a file it had created is removed again.
rec_writer *rec_writer_open(const char *path, const rec_header *header, const rec_writer_config *config,
                            const sim_scene *initial, rec_error *err);

/// True when a background thread writes (threaded asked for and started).
bool rec_writer_threaded(const rec_writer *w);

/// Bytes of finished chunks queued for the disk now (0 when not threaded).
/// Never waits: false, *bytes unchanged, while the writer's thread holds the
/// queue's lock (ask again later).
bool rec_writer_pending(rec_writer *w, size_t *bytes);

/// Record one tick of a scene recording. `t` carries the applied events and
/// commands; the hashes are computed here from `after`, the scene after the
/// tick (t->world_hash and the per-character arrays are ignored). Commands
/// marked substituted are listed in a SUBS chunk after their block. Writes a
/// keyframe of `after` when its tick is a multiple of the interval. Never
/// blocks on I/O when threaded. False once the recording has failed.
bool rec_writer_tick(rec_writer *w, const rec_tick *t, const sim_scene *after);

/// Client recordings: one call into the client library.
typedef enum rec_client_op {
    REC_CLIENT_HELLO = 1,     ///< cl_client_hello(now)
    REC_CLIENT_EVENT = 2,     ///< cl_client_handle(event, now): type, channel, data
    REC_CLIENT_PREDICT = 3,   ///< cl_client_predict(input, now); `result` is what it returned
    REC_CLIENT_CATCH_UP = 4,  ///< cl_client_take_catch_up(); `result` is what it returned
    REC_CLIENT_CONFIRMED = 5, ///< after the op before it: the confirmed tick and its hash (expected output)
} rec_client_op;

typedef struct rec_client_record {
    rec_client_op op;
    uint32_t now_ms;
    int32_t event_type;  ///< net_event_type (EVENT)
    uint8_t channel;     ///< (EVENT)
    const uint8_t *data; ///< (EVENT) the packet as received
    uint32_t length;
    sim_input input; ///< (PREDICT)
    uint32_t result; ///< (PREDICT: 0/1; CATCH_UP: ticks)
    uint32_t tick;   ///< (CONFIRMED)
    uint64_t hash;   ///< (CONFIRMED) sim_scene_hash of the confirmed scene
    /// (PREDICT, a client recording with a game) the game command as
    /// sim_game_pack_command packs it (the header's game_command_bytes):
    /// cl_client_predict_game(input, game_command unpacked, now); NULL: the
    /// call gave none (all zero bytes). Ignored without a game.
    const uint8_t *game_command;
    /// (PREDICT, with a game) the call's game command did not pack (a field
    /// out of its range): the client refused the call and changed nothing.
    bool game_refused;
} rec_client_record;

/// Open a client recording (header kind REC_KIND_CLIENT; no INIT state). A
/// client with a game needs a header naming it (its identity and
/// header->game, the game itself: cl_record_default_header sets both): the
/// recording is then format 5, holds a GAME chunk after SCHM, and every
/// PREDICT record carries the call's packed game command.
rec_writer *rec_writer_open_client(const char *path, const rec_header *header, const rec_writer_config *config,
                                   rec_error *err);
bool rec_writer_client(rec_writer *w, const rec_client_record *r);

/// Flush everything, write ENDR and close. False (with *err) when any write
/// failed or the writer fell behind. Frees the writer either way.
bool rec_writer_close(rec_writer *w, rec_error *err);

// ---- reading -------------------------------------------------------------------------

/// A whole file, checked and indexed: every chunk's frame and CRC, the
/// header, the schema; tick blocks are decoded on demand.
typedef struct rec_file rec_file;

/// Read and index a file. A truncated file (a crash) opens with the readable
/// prefix and rec_info.complete false; corruption, an unknown format version,
/// a schema this build cannot read or any malformed chunk is an error naming
/// the offset and the chunk. Never crashes on any bytes (fuzzed).
rec_file *rec_file_open(const char *path, rec_error *err);
rec_file *rec_file_open_memory(const void *data, size_t size, rec_error *err);
void rec_file_close(rec_file *f);

const rec_header *rec_file_header(const rec_file *f);

/// The game to re-simulate a recording with: it must be the recording's
/// (the same name, version and digest; NULL for a recording without a game).
/// False with *err naming both games when it is not; the file keeps none.
bool rec_file_set_game(rec_file *f, const sim_game *game, rec_error *err);

/// The scene's whole state (sim_scene_save, version 2) recorded at `tick`
/// (the initial tick and each keyframe's) in a recording with a game: false
/// when the file holds none at that tick. *data points into the file.
bool rec_file_game_state(const rec_file *f, uint32_t tick, const uint8_t **data, size_t *size);

/// rec_char_hash16 the way the file's writer computed it: over the file's
/// state schema (its fields, order and widths). The same as
/// rec_char_hash16 while the schema is this build's; when a later build
/// adds a state field, hashing an old file's characters this way still
/// matches (a field only the file has hashes as 0 here, so it cannot).
uint16_t rec_file_char_hash16(const rec_file *f, const sim_char_state *state);

typedef struct rec_info {
    uint64_t file_bytes;
    bool complete;         ///< ENDR present
    uint64_t truncated_at; ///< when not complete: offset of the first unreadable byte
    uint32_t first_tick;   ///< the initial state's tick
    uint32_t tick_count;   ///< ticks recorded
    uint32_t players;      ///< distinct character ids seen (initial and joins)
    uint32_t max_characters_seen;
    uint64_t joins, leaves;
    uint32_t keyframes; ///< in blocks and in chunks of their own
    uint32_t blocks, compressed_blocks;
    /// Bytes of each kind of chunk, framing included. A keyframe inside a
    /// tick block (format 3) counts with bytes_ticks, and so does a SUBS
    /// chunk; bytes_keyframes counts KEYF/KEYZ chunks.
    uint64_t bytes_header, bytes_schema, bytes_initial, bytes_ticks, bytes_keyframes, bytes_client, bytes_end;
    /// Scene recordings: the world hash after the last tick (0 if none).
    /// Client recordings: the hash of the last confirmed state recorded
    /// (its tick in last_confirmed_tick; 0 if the client confirmed none).
    uint64_t last_hash;
    uint32_t client_records;      ///< client recordings
    uint32_t last_confirmed_tick; ///< client recordings: see last_hash (0 if none)
    uint64_t substitutes;         ///< scene recordings: commands marked substituted
} rec_info;

void rec_file_info(const rec_file *f, rec_info *out);

/// The initial state: its tick and characters (id order). Scene recordings only.
bool rec_file_initial(const rec_file *f, uint32_t *tick, const sim_char_state **states, uint32_t *count);

/// Keyframes in tick order.
uint32_t rec_file_keyframe_count(const rec_file *f);
/// Decode keyframe `index`: the state at the start of *tick. `states` points
/// into storage owned by the file, valid until the next call on any
/// keyframe of this file (not thread-safe; use rec_cursor_keyframe per thread).
bool rec_file_keyframe(rec_file *f, uint32_t index, uint32_t *tick, const sim_char_state **states, uint32_t *count,
                       rec_error *err);
/// Index of the keyframe at `tick`, or -1.
int64_t rec_file_keyframe_at(const rec_file *f, uint32_t tick);

/// Sequential decoding of ticks (or client records). One cursor per thread;
/// cursors on the same file may run in parallel.
typedef struct rec_cursor rec_cursor;

/// A cursor positioned at `tick` (the first recorded tick, or a keyframe's
/// tick: blocks start there). NULL with *err otherwise. On a client
/// recording `tick` is ignored: the cursor starts at the first record.
rec_cursor *rec_cursor_create(const rec_file *f, uint32_t tick, rec_error *err);
void rec_cursor_destroy(rec_cursor *c);
/// The next tick; false at the end (err->message "" ) or on a fault (filled).
/// The arrays in *out stay valid until the next call.
bool rec_cursor_next(rec_cursor *c, rec_tick *out, rec_error *err);
/// Decode a keyframe into the cursor's own storage (thread-safe per cursor).
bool rec_cursor_keyframe(rec_cursor *c, uint32_t index, uint32_t *tick, const sim_char_state **states, uint32_t *count,
                         rec_error *err);
/// Client recordings: the next record; false at the end or on a fault.
bool rec_cursor_next_client(rec_cursor *c, rec_client_record *out, rec_error *err);

// ---- the schema ------------------------------------------------------------------------

/// A field of a recorded record: the names diff prints ("position.x").
typedef enum rec_field_type {
    REC_FIELD_U32 = 1,
    REC_FIELD_I32 = 2,
    REC_FIELD_FX = 3, ///< Q16.16, printed as a decimal and raw
    REC_FIELD_U16 = 4,
    REC_FIELD_I8 = 5,
    REC_FIELD_U8 = 6,
} rec_field_type;

typedef struct rec_field {
    const char *name;
    rec_field_type type;
    uint8_t width; ///< bytes in the file
} rec_field;

/// This build's character-state fields, in the order records store them.
const rec_field *rec_state_fields(uint32_t *count);
/// The value of field `index` of a state, widened to 64 bits (for diff).
int64_t rec_state_field_value(const sim_char_state *s, uint32_t index);

#ifdef __cplusplus
}
#endif

#endif
