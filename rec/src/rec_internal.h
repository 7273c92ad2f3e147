// keel recordings: what the format's files share (not installed). MIT licence.
#ifndef KEEL_REC_INTERNAL_H
#define KEEL_REC_INTERNAL_H

#include <stdarg.h>

#include <keel/rec.h>

#include "rec_bytes.h"

/// printf-style checking of a function's format (argument f) and its first
/// variadic argument (a). MinGW-w64's gcc checks "printf" against the rules
/// of msvcrt (no %zu); __MINGW_PRINTF_FORMAT names the rules of the printf
/// that the build calls (gnu_printf under -std=c11, which selects MinGW's own
/// C99 printf). Compilers without gcc's attributes check nothing.
#if defined(__MINGW32__) && defined(__MINGW_PRINTF_FORMAT)
#define REC_PRINTF(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#elif defined(__GNUC__) || defined(__clang__)
#define REC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define REC_PRINTF(f, a)
#endif

/// A chunk: type (4) | length (u32 LE) | payload | CRC-32 (u32 LE).
#define REC_CHUNK_OVERHEAD 12u
/// No chunk is larger: a length above it is corruption, not a big block.
#define REC_MAX_CHUNK (256u << 20)

#define REC_T_HEAD "HEAD"
#define REC_T_SCHM "SCHM"
#define REC_T_INIT "INIT"
#define REC_T_KEYF "KEYF"
#define REC_T_KEYZ "KEYZ"
#define REC_T_TBLK "TBLK"
#define REC_T_TBLZ "TBLZ"
#define REC_T_CLOG "CLOG"
#define REC_T_CLGZ "CLGZ"
#define REC_T_ENDR "ENDR"
/// The substitutes of the tick block before it: first tick (varint), entry
/// count (varint), then per entry the tick's offset in the block (varint,
/// never decreasing) and the character id (varint, increasing within a
/// tick). Only the ids of commands that tick holds.
#define REC_T_SUBS "SUBS"
#define REC_T_GAME "GAME"
#define REC_T_GKEY "GKEY"
#define REC_T_GCMD "GCMD"
/// GKEY and GCMD compressed: the same prefix (GKEY: the tick; GCMD: first
/// tick and tick count), then one zstd frame of the rest without its magic
/// number, declaring its size (as format 3's TBLZ).
#define REC_T_GKYZ "GKYZ"
#define REC_T_GCMZ "GCMZ"

/// Bytes of a TBLK/CLOG/KEYF payload before its records: first tick and
/// tick count (client blocks: first record and record count; keyframes:
/// tick and character count). TBLZ/CLGZ/KEYZ add the raw size (u32) and
/// then hold one zstd frame of everything after the 8 bytes.
#define REC_BLOCK_PREFIX 8u

/// Format 3's scene tick blocks (TBLK/TBLZ) start with a varint first tick
/// and a varint holding the tick count times 2, plus 1 when the block opens
/// with the keyframe at its first tick. TBLZ then holds one zstd frame of
/// the body, which carries its own size; TBLK holds the body itself. At
/// most 10 bytes of prefix.
/// TBLZ's frame leaves out zstd's 4-byte magic number (REC_ZSTD_MAGIC, the
/// same in every frame); readers put it back before decompressing.
#define REC_V3_KEY_FLAG 1u
#define REC_V3_PREFIX_MAX 10u
#define REC_ZSTD_MAGIC 0xFD2FB528u
/// The most bytes a zstd frame header takes (magic number included).
#define REC_ZSTD_HEADER_MAX 18u

/// Client log blocks are closed once they hold this many bytes.
#define REC_CLIENT_BLOCK_BYTES (64u << 10)

// ---- CRC-32 (IEEE 802.3, reflected 0xEDB88320) ----
uint32_t rec_crc32_update(uint32_t crc, const void *data, size_t n);
uint32_t rec_crc32(const void *data, size_t n);

// ---- errors ----
void rec_error_set(rec_error *err, uint64_t offset, const char *chunk, const char *fmt, ...) REC_PRINTF(4, 5);
void rec_error_clear(rec_error *err);

// ---- schema ----
/// Record kinds in SCHM.
enum { REC_SCHEMA_STATE = 1, REC_SCHEMA_COMMAND = 2 };

/// Most fields a record may have in a file.
#define REC_SCHEMA_MAX_FIELDS 64u
#define REC_FIELD_NAME_MAX 48u

/// A record layout as a file declares it, resolved against this build.
typedef struct rec_schema_field {
    char name[REC_FIELD_NAME_MAX];
    uint8_t type;
    uint8_t width;
    int16_t known; ///< index into this build's table, -1 when unknown
} rec_schema_field;

typedef struct rec_schema {
    rec_schema_field fields[REC_SCHEMA_MAX_FIELDS];
    uint32_t count;
    uint32_t record_bytes; ///< sum of widths
    bool native;           ///< exactly this build's record (fields, types, widths, order)
} rec_schema;

const rec_field *rec_command_fields(uint32_t *count);
/// This build's schema for a kind (every field known).
void rec_schema_native(rec_schema *out, int kind);
/// Encode SCHM's payload (both records).
void rec_schema_encode(rec_buf *b);
/// Decode SCHM. False with *err filled (offset: base + position).
bool rec_schema_decode(const uint8_t *p, size_t n, uint64_t base, rec_schema *state, rec_schema *command,
                       rec_error *err);

/// A state through a schema (the writer always uses the native one).
void rec_state_encode(rec_buf *b, const sim_char_state *s);
/// Encode into out[] (REC_STATE_BYTES for the native schema); returns bytes.
size_t rec_state_encode_raw(uint8_t *out, const sim_char_state *s);
/// Format 3's keyframe record: a varint mask of the fields that are not 0
/// (bit i: field i in schema order), then each of those as a varint
/// (unsigned types), a zigzag varint (signed types) or, for angles (u16,
/// width 2), a zigzag varint of the value taken as -32768..32767.
void rec_state_encode_compact(rec_buf *b, const sim_char_state *s);
/// Decode one by the file's schema (a value outside its field's width or
/// range is a fault, the reader's position at the field).
bool rec_state_decode_compact(rec_rd *r, const rec_schema *sc, sim_char_state *out);
/// Decode one state record by the file's schema. False on a value out of
/// its field's range (the reader's position is then at fault).
bool rec_state_decode(rec_rd *r, const rec_schema *sc, sim_char_state *out);
/// The value a state's known field has, and setting it (false: out of range).
int64_t rec_state_get(const sim_char_state *s, uint32_t known);
bool rec_state_set(sim_char_state *s, uint32_t known, int64_t v);

/// Command fields as int64 by this build's index.
int64_t rec_command_get(const sim_input *in, uint32_t known);
bool rec_command_set(sim_input *in, uint32_t known, int64_t v);

/// Store/load v in `width` bytes as a field of `type` (sign-extended for signed types).
void rec_field_put(rec_buf *b, uint8_t type, uint8_t width, int64_t v);
int64_t rec_field_get(rec_rd *r, uint8_t type, uint8_t width);
bool rec_field_type_signed(uint8_t type);
bool rec_field_fits(uint8_t type, uint8_t width, int64_t v);

/// Hash16 of a state by a schema's order and widths (fields the schema has
/// but this build does not know hash as 0).
uint16_t rec_char_hash16_schema(const rec_schema *sc, const sim_char_state *s);
/// The whole 64-bit XXH64 whose low 16 bits rec_char_hash16 keeps (this
/// build's schema; the second by a file's).
uint64_t rec_char_hash64(const sim_char_state *state);
uint64_t rec_char_hash64_schema(const rec_schema *sc, const sim_char_state *s);
/// rec_char_hash64 over a file's own state schema (rec_file_char_hash16's
/// whole hash).
uint64_t rec_file_char_hash64(const rec_file *f, const sim_char_state *state);

// ---- format 2's block check ----
/// Every tick block of format 2 ends with the full world hash after its last
/// tick and a 64-bit check over all its ticks: starting from
/// REC_CHECK_SEED, each tick mixes in its character count and then, in id
/// order, each character's whole 64-bit record hash (rec_char_hash64). The
/// per-tick 16-bit hashes locate a divergence; the check catches anything
/// they let through, to the block.
#define REC_CHECK_SEED UINT64_C(0x9E3779B97F4A7C15)
static inline uint64_t rec_check_mix(uint64_t h, uint64_t v)
{
    h += v * UINT64_C(0xC2B2AE3D27D4EB4F);
    h = (h << 31) | (h >> 33);
    return h * UINT64_C(0x9E3779B185EBCA87);
}
/// Bytes at the end of a format 2 block body: world hash and check (u64 each).
#define REC_BLOCK_TRAILER 16u

// ---- games (rec_game.c) ----
/// Whether a header's game identity is `game`'s (both none counts). False
/// with *err naming both ("`what` has game ..."; `what` names the game's side).
bool rec_game_identity_check(const rec_header *h, const sim_game *game, const char *what, rec_error *err);
/// A header's game identity from `game` (NULL: none).
void rec_header_set_game(rec_header *h, const sim_game *game);
/// sim_char_state_check for a character of a recording of format
/// `format_version`: from format 4 (recordings with a game) a game's move
/// type (SIM_GAME_MOVE_FIRST on, below SIM_GAME_MOVE_FIRST +
/// SIM_GAME_MAX_MOVE_TYPES) passes as well; restoring it into the game's
/// scene checks it exactly.
bool rec_char_check(uint32_t format_version, const sim_char_state *s, const char **why);
/// The bytes of one packed command of `game` (0 for none).
uint32_t rec_game_command_bytes(const sim_game *game);

// ---- header ----
void rec_header_encode(rec_buf *b, const rec_header *h);
/// Decode HEAD's payload into *h (fields absent: defaults). Checks ranges,
/// settings, digests. base = file offset of the payload.
bool rec_header_decode(const uint8_t *p, size_t n, uint64_t base, rec_header *h, rec_error *err);
/// Whether a header is one this build writes (writer side checks).
bool rec_header_check(const rec_header *h, rec_error *err);

// ---- commands within a tick block ----
/// Change mask bit 0: input.tick differs from the tick (then a zigzag delta
/// follows); bit 1 + i: command field i changed (its new value follows).
#define REC_CMD_TICK_BIT 1u

/// Angles (u16 fields) in a tick block's commands are stored as the wrapped
/// difference from the character's previous command, -32768..32767, as a
/// zigzag varint.
static inline bool rec_command_field_is_angle(uint8_t type, uint8_t width)
{
    return type == REC_FIELD_U16 && width == 2;
}
static inline int64_t rec_angle_delta(int64_t from, int64_t to)
{
    int64_t d = (to - from) & 0xFFFF;
    return d >= 0x8000 ? d - 0x10000 : d;
}

/// Slot of `id` in the ascending `ids[0..count)` (a recording's character
/// set, kept in id order by the writer and the cursor alike), or the
/// insertion point with *found false.
static inline uint32_t rec_ids_find(const uint32_t *ids, uint32_t count, uint32_t id, bool *found)
{
    uint32_t lo = 0, hi = count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < count && ids[lo] == id;
    return lo;
}

#endif
