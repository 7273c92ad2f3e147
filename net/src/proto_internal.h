// keel: pieces shared by the message coders (net/src/proto_*.c). MIT licence.
//
// Every message is written by a `write` function that only turns fields into
// bits, and checked by a `valid` function that the encoder calls first and
// the decoder calls last. Tests reach the write functions directly to put
// out-of-range messages on the wire and watch the decoders refuse them.
#ifndef KEEL_NET_PROTO_INTERNAL_H
#define KEEL_NET_PROTO_INTERNAL_H

#include <keel/net_bits.h>
#include <keel/net_proto.h>

// ---- field widths (docs/protocol.md) ------------------------------------------
#define NET_TYPE_BITS 4u
#define NET_ID_BITS 31u        ///< character ids: 1 .. 2^31 - 1
#define NET_TICK_RATE_BITS 10u ///< SIM_MOVE_MIN_TICK_RATE .. SIM_MOVE_MAX_TICK_RATE
#define NET_FLAGS_BITS 10u     ///< SIM_CHAR_KNOWN_FLAGS
#define NET_MOVE_TYPE_BITS 4u
#define NET_GROUND_BITS 2u
#define NET_COUNT_BITS 9u       ///< 0 .. NET_MAX_CHARACTERS
#define NET_PART_BITS 5u        ///< 0 .. NET_MAX_FULL_PARTS
#define NET_GAME_PART_BITS 8u   ///< part fields with a game: 0 .. NET_MAX_GAME_FULL_PARTS
#define NET_PART_COUNT_BITS 4u  ///< 0 .. NET_FULL_PART_CHARACTERS
#define NET_SPAN_BITS 5u        ///< T - B - 1
#define NET_INPUT_COUNT_BITS 6u ///< count, 0..NET_MAX_INPUT_COMMANDS
#define NET_REASON_LEN_BITS 7u
#define NET_VAR_GROUP 4u ///< group size of every variable-length field
#define NET_MARGIN_LIMIT (INT32_C(1) << 23)
#define NET_MAX_FULL_PARTS ((NET_MAX_CHARACTERS + NET_FULL_PART_CHARACTERS - 1u) / NET_FULL_PART_CHARACTERS)

/// Whether an id may name a character on the wire: 1 .. 2^31 - 1.
static inline bool net_id_valid(uint32_t id) { return id != 0 && id < (UINT32_C(1) << NET_ID_BITS); }

// ---- commands ---------------------------------------------------------------
/// Axes within -127..127 (the tick is not looked at).
bool net_command_valid(const sim_input *c);
/// `cur` delta-coded against `prev`; the tick is never written.
void net_write_command(net_bit_writer *w, const sim_input *prev, const sim_input *cur);
/// The reverse; `cur->tick` is set to `tick`. Fails the reader on a
/// non-canonical or out-of-range command.
void net_read_command(net_bit_reader *r, const sim_input *prev, sim_input *cur, uint32_t tick);

// ---- a game's payloads and identity (proto_game.c) ----------------------------
struct sim_game;
/// Whether a packed payload holds a command of `game` with every field in
/// range and zero bytes beyond it (always true without a game command).
bool net_game_payload_valid(const struct sim_game *game, const uint8_t *payload);
/// `cur` against `prev` (NET_GAME_COMMAND_BYTES each); nothing without a game.
void net_write_game(net_bit_writer *w, const struct sim_game *game, const uint8_t *prev, const uint8_t *cur);
/// The reverse; fails the reader on a non-canonical or out-of-range payload.
void net_read_game(net_bit_reader *r, const struct sim_game *game, const uint8_t *prev, uint8_t *cur);
void net_write_hello_game(net_bit_writer *w, const net_sim_identity *id);
void net_read_hello_game(net_bit_reader *r, net_sim_identity *id);

// ---- character states ----------------------------------------------------------
/// A valid id and sim_char_state_check.
bool net_state_valid(const sim_char_state *s);
void net_write_state(net_bit_writer *w, const sim_char_state *s);
/// Reads every field; fails the reader when the state is not valid.
void net_read_state(net_bit_reader *r, sim_char_state *s);

// ---- small shared fields ---------------------------------------------------------
/// last_applied_tick relative to `tick`: NET_TICK_NONE or below tick.
void net_write_last_applied(net_bit_writer *w, uint32_t tick, uint32_t last);
uint32_t net_read_last_applied(net_bit_reader *r, uint32_t tick);
/// input_margin_q8 within +-2^23.
void net_write_margin(net_bit_writer *w, int32_t margin);
int32_t net_read_margin(net_bit_reader *r);
/// A sorted id list: each id as its gap to the previous one (the first to 0).
void net_write_id_gap(net_bit_writer *w, uint32_t prev, uint32_t id);
uint32_t net_read_id_gap(net_bit_reader *r, uint32_t prev);

/// Start of every message: its type.
static inline void net_write_type(net_bit_writer *w, net_msg_type t) { net_bw_u(w, (uint32_t)t, NET_TYPE_BITS); }
/// Reads the type and fails the reader unless it is `t`.
void net_expect_type(net_bit_reader *r, net_msg_type t);

// ---- the characters present, tick by tick (snapshots) ---------------------------
typedef struct net_roster {
    uint32_t n;
    uint32_t ids[NET_MAX_CHARACTERS];                              ///< sorted
    sim_input prev[NET_MAX_CHARACTERS];                            ///< each one's previous command in the message
    uint8_t prev_game[NET_MAX_CHARACTERS][NET_GAME_COMMAND_BYTES]; ///< and its game payload
} net_roster;
/// Remove `id`; false when absent.
bool net_roster_leave(net_roster *ro, uint32_t id);
/// Add `id` with a zero previous command; false when present, invalid or full.
bool net_roster_join(net_roster *ro, uint32_t id);

// ---- writers without the checks (tests) ------------------------------------------
size_t net_hello_write(const net_hello *m, uint8_t *out, size_t capacity);
size_t net_welcome_write(const net_welcome *m, uint8_t *out, size_t capacity);
size_t net_input_write(const net_input *m, uint8_t *out, size_t capacity);
/// Needs a snapshot whose commands follow the roster (see net_snapshot_valid);
/// the other fields go out unchecked as far as their widths allow.
size_t net_snapshot_write(const net_snapshot *m, uint8_t *out, size_t capacity);
size_t net_full_part_write(const net_full_part *m, uint8_t *out, size_t capacity);

bool net_hello_valid(const net_hello *m);
bool net_welcome_valid(const net_welcome *m);
bool net_refuse_valid(const net_refuse *m);
bool net_input_valid(const net_input *m);
bool net_snapshot_valid(const net_snapshot *m);
bool net_full_part_valid(const net_full_part *m);

#endif
