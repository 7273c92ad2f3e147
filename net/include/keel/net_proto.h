// keel: the wire protocol's messages, as plain structs, and their encoding.
// MIT licence, see LICENSE.
//
// Pure functions: a struct in, bytes out, and back. No ENet, no sockets, no
// clock: the same code runs in the server, the client, the in-memory test
// transport and the fuzzers. docs/protocol.md has a table per message
// (fields, bit widths, ranges).
//
// Encoding: a bit stream (keel/net_bits.h), least significant bit first,
// independent of byte order and struct layout. Every message starts with its
// type (4 bits). Every decoder checks lengths and ranges and returns false on
// anything malformed -- a short buffer, trailing garbage beyond the padding of
// the last byte, a value out of its range, a count above its cap -- without
// reading past the buffer; the caller drops the message and counts it.
//
// Exactness: what a client re-simulates travels exactly. Commands (sim_input)
// are integers and go as they are, delta-coded against the previous command of
// the same character; character states (joins, full snapshots) go as the raw
// Q16.16 integers of sim_char_state.
//
// Delta snapshots carry no positions at all: both sides run the same
// deterministic simulation, so the state at tick T follows exactly from the
// state at the baseline tick B the client has acknowledged plus every command
// the server applied in ticks B .. T-1 (and the joins and leaves among them).
// The snapshot carries those commands and the hash of the state at T, which
// the client checks after re-simulating. Full snapshots (on join, when the
// baseline is too old, or after a hash mismatch) carry every state exactly.
#ifndef KEEL_NET_PROTO_H
#define KEEL_NET_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/sim_move.h>

struct sim_game;

#ifdef __cplusplus
extern "C" {
#endif

/// 2: the hello carries the scene digest (platforms and water).
/// 3: inputs may carry no command (a ping and acknowledgement) and say which
/// ticks past the acknowledged one the client holds (held_mask); the server
/// chains snapshots from the last one it sent instead of from the
/// acknowledged one.
/// 4: an input's clock and the snapshots' and full parts' echo of it are 16
/// bits (a round trip is far below 65 s), 2 bytes less each way.
/// 5: a character's flags are 10 bits (SIM_CHAR_CROWDED).
/// 6: secure mode encrypts each datagram after ENet's header and no longer
/// seals each message (18 bytes less per message; insecure mode's wire is
/// unchanged).
#define NET_PROTOCOL_VERSION 6u
/// Largest datagram payload keel sends or accepts unfragmented (docs/protocol.md).
#define NET_MTU 1200u
/// Most bytes of a game's packed command payload (sim_game_pack_command) the
/// protocol carries: 256 bits. A game whose payload is wider cannot be served.
#define NET_GAME_COMMAND_BYTES 32u
/// A tick value meaning "none" (no baseline, nothing acknowledged yet).
#define NET_TICK_NONE 0xFFFFFFFFu
/// Most commands one input packet carries (the newest and the unacknowledged).
#define NET_MAX_INPUT_COMMANDS 32u
/// Most ticks a delta snapshot spans (T - B); beyond it the server sends a
/// full snapshot. Also the client's prediction cap.
#define NET_MAX_SNAPSHOT_TICKS 32u
/// Most characters in a scene served over the network.
#define NET_MAX_CHARACTERS 256u
/// Most characters one full-snapshot part carries (so a part fits NET_MTU).
#define NET_FULL_PART_CHARACTERS 12u
/// Bytes of the saved state one full-snapshot part carries with a game.
#define NET_FULL_CHUNK_BYTES 480u
/// Most parts of a full snapshot with a game (a saved state up to 255 x
/// NET_FULL_CHUNK_BYTES bytes, about 120 KB).
#define NET_MAX_GAME_FULL_PARTS 255u
/// Longest refusal text, bytes, without the terminating NUL.
#define NET_REASON_MAX 120u

/// Message types: the first 4 bits of every message.
typedef enum net_msg_type {
    NET_MSG_HELLO = 1,    ///< client -> server, reliable: who I am, what I simulate
    NET_MSG_WELCOME = 2,  ///< server -> client, reliable: accepted, your character
    NET_MSG_REFUSE = 3,   ///< server -> client, reliable: refused, with a reason
    NET_MSG_INPUT = 4,    ///< client -> server, unreliable: commands
    NET_MSG_SNAPSHOT = 5, ///< server -> client, unreliable: delta snapshot
    NET_MSG_FULL = 6,     ///< server -> client, unreliable: one part of a full snapshot
} net_msg_type;

/// What decides the simulation: two builds that simulate the same accept
/// each other whatever their compiler; anything else is refused.
typedef struct net_sim_identity {
    uint32_t behaviour_version; ///< NET_BEHAVIOUR_VERSION of the build
    uint64_t settings_digest;   ///< net_settings_digest
    uint64_t level_digest;      ///< net_level_digest
    uint64_t scene_digest;      ///< net_scene_digest: the platforms and water
    uint16_t tick_rate;
    /// The game (keel/sim_game.h) both sides run: its name ("" for none),
    /// version and digest (net_identity_set_game). No game: all zero, and
    /// the hello is encoded exactly as without this field.
    char game_name[48];
    uint32_t game_version;
    uint64_t game_digest;
} net_sim_identity;

typedef struct net_hello {
    uint16_t protocol_version;
    net_sim_identity identity;
    uint32_t client_time_ms; ///< the client's clock, for the first round-trip estimate
} net_hello;

typedef struct net_welcome {
    uint32_t character_id; ///< the client's character in the scene
    uint32_t server_tick;  ///< the tick the server is about to simulate
    uint16_t tick_rate;
    uint8_t ticks_per_snapshot; ///< 1..16
    uint32_t client_time_echo;  ///< net_hello.client_time_ms, echoed
} net_welcome;

typedef enum net_refuse_code {
    NET_REFUSE_PROTOCOL = 1,  ///< protocol version differs
    NET_REFUSE_IDENTITY = 2,  ///< behaviour, settings, level, scene or tick rate differ
    NET_REFUSE_FULL = 3,      ///< no free slot
    NET_REFUSE_BAD_HELLO = 4, ///< malformed or repeated hello
    /// The server is shutting down (it drains: every client, joined or not,
    /// gets this and its connection closed; hellos meanwhile get it too).
    /// Not a fault of the client's.
    NET_REFUSE_SHUTDOWN = 5,
} net_refuse_code;

typedef struct net_refuse {
    uint8_t code;                    ///< net_refuse_code
    char reason[NET_REASON_MAX + 1]; ///< printable ASCII, NUL-terminated
} net_refuse;

/// Client -> server. Commands for ticks newest_tick - count + 1 .. newest_tick,
/// oldest first; each one's `tick` field equals its tick. count 0: no
/// command, the message only acknowledges and carries the client's clock
/// (a ping: its round trip never includes a retransmission).
typedef struct net_input {
    uint16_t sequence;       ///< the client's packet counter (loss and reordering)
    uint16_t client_time_ms; ///< the client's clock (ms, low 16 bits), echoed in snapshots for the round trip
    /// The client's confirmed tick C: it holds the exact state at C (and the
    /// commands every character ran in C - 1), or NET_TICK_NONE.
    uint32_t ack_tick;
    /// Bit k: the client also holds the commands of tick ack_tick + k (from
    /// snapshots it could not use yet because one before them is missing);
    /// 0 when ack_tick is NET_TICK_NONE.
    uint32_t held_mask;
    uint32_t newest_tick; ///< not NET_TICK_NONE (with count 0: any tick)
    uint8_t count;        ///< 0..NET_MAX_INPUT_COMMANDS
    sim_input commands[NET_MAX_INPUT_COMMANDS];
    /// With a game (set `game` before encoding and decoding; NULL: none and
    /// the encoding is the one without games): each command's payload as
    /// sim_game_pack_command packs it, bits beyond the payload 0. On the wire
    /// each goes as one bit "the same as the previous command's" or that bit
    /// and the payload's sim_game_command_bits bits; the decoder refuses a
    /// payload with a field out of its range (sim_game_unpack_command).
    const struct sim_game *game;
    uint8_t game_commands[NET_MAX_INPUT_COMMANDS][NET_GAME_COMMAND_BYTES];
} net_input;

/// One command a character ran in one tick of a delta snapshot.
typedef struct net_tick_command {
    uint32_t id;
    sim_input command; ///< command.tick is the tick it ran in
    /// The game's packed command payload (net_input.game_commands); all zero
    /// without a game.
    uint8_t game[NET_GAME_COMMAND_BYTES];
} net_tick_command;

/// A character that joined at the start of `tick` with this exact state (it
/// runs that tick's command from it), or left at the start of `tick`.
typedef struct net_join {
    uint32_t tick;
    sim_char_state state;
} net_join;
typedef struct net_leave {
    uint32_t tick;
    uint32_t id;
} net_leave;

/// Server -> client. The state at `tick` is the state at `baseline_tick`
/// (which the client acknowledged) advanced through ticks baseline_tick ..
/// tick - 1: at the start of each tick first the leaves of that tick, then
/// the joins, then every character present runs its command. `commands` holds,
/// tick by tick in order and by id within a tick, one command per character
/// present (so each tick's commands are the scene's characters in id order).
/// `joins` and `leaves` are sorted by (tick, id).
/// Arrays are the caller's: the decoder fills at most their capacities and
/// fails when the message holds more.
typedef struct net_snapshot {
    uint16_t sequence;          ///< the server's packet counter for this client
    uint16_t client_time_echo;  ///< client_time_ms of the newest input received (a round trip is (now - echo) mod 2^16)
    uint16_t echo_delay_ms;     ///< how long the server held that input before this send (0..65535)
    uint32_t tick;              ///< T: the state this snapshot describes
    uint32_t baseline_tick;     ///< B < T, with T - B <= NET_MAX_SNAPSHOT_TICKS
    uint32_t last_applied_tick; ///< newest tick at which one of this client's own commands ran, or NET_TICK_NONE
    uint32_t substituted_mask;  ///< bit k: at tick T - 1 - k the server ran a substitute for this client
    int32_t input_margin_q8;    ///< how early this client's commands arrive, 1/256 tick (clamped to +-2^23)
    uint64_t state_hash;        ///< sim_scene_hash of the state at T
    uint32_t join_count, leave_count, command_count;
    net_join *joins;
    uint32_t join_capacity;
    net_leave *leaves;
    uint32_t leave_capacity;
    net_tick_command *commands;
    uint32_t command_capacity;
    /// What the receiver already knows of the baseline, or NULL: for each
    /// character present at B (before tick B's leaves and joins), in id order,
    /// the command it ran in tick B - 1 (zero where unknown). With it, the
    /// roster at B is not sent and each character's first command is coded
    /// against its previous one instead of against zero -- the cheap common
    /// case. Encoder and decoder must be given the same list; a receiver with
    /// a different one decodes other commands, which the state hash exposes.
    /// Without it (NULL), the roster goes explicitly and first commands are
    /// coded against zero. A header bit says which; decoding a message made
    /// with a reference needs one.
    const net_tick_command *reference;
    uint32_t reference_count;
    /// The game whose payloads the commands carry (NULL: none; the encoding
    /// without games). Set it before encoding and decoding, as `reference`.
    const struct sim_game *game;
} net_snapshot;

/// Server -> client: part `part` of `part_count` of the full state at `tick`.
/// Each part decodes on its own: it names the tick and carries whole
/// character records (exact), with each character's last applied command
/// (remote characters are predicted from it).
typedef struct net_full_part {
    uint16_t sequence;
    uint16_t client_time_echo;
    uint16_t echo_delay_ms;
    uint32_t tick;
    uint32_t last_applied_tick;
    int32_t input_margin_q8;
    uint64_t state_hash;       ///< of the whole state at tick
    uint16_t part, part_count; ///< part < part_count <= ceil(NET_MAX_CHARACTERS / NET_FULL_PART_CHARACTERS)
    uint16_t total_characters; ///< in the whole state (0..NET_MAX_CHARACTERS)
    uint8_t count;             ///< in this part (0..NET_FULL_PART_CHARACTERS)
    sim_char_state states[NET_FULL_PART_CHARACTERS];
    sim_input last_commands[NET_FULL_PART_CHARACTERS];
    /// With a game (NULL: none, and the encoding without games): each last
    /// command's payload, and a piece of the scene's whole saved state
    /// (sim_scene_save, which holds the game's state): `save_size` bytes in
    /// all, this part's `chunk_size` of them from `chunk_offset`. With a game
    /// part and part_count take 8 bits (up to NET_MAX_GAME_FULL_PARTS parts).
    const struct sim_game *game;
    uint8_t last_game[NET_FULL_PART_CHARACTERS][NET_GAME_COMMAND_BYTES];
    uint32_t save_size, chunk_offset;
    uint16_t chunk_size; ///< 0..NET_FULL_CHUNK_BYTES
    uint8_t chunk[NET_FULL_CHUNK_BYTES];
} net_full_part;

// ---- encoding ------------------------------------------------------------------
// Encoders write at most `capacity` bytes and return the length, or 0 when the
// message does not fit or a field is out of range (a bug of the caller).
// Decoders return false on anything malformed (see above) and count nothing
// themselves.

/// Type of a message (its first 4 bits), or 0 for an empty buffer or an unknown type.
net_msg_type net_msg_peek_type(const uint8_t *data, size_t length);

size_t net_hello_encode(const net_hello *m, uint8_t *out, size_t capacity);
bool net_hello_decode(const uint8_t *data, size_t length, net_hello *m);
/// The protocol_version of a hello of any version (its first 20 bits stay the
/// same in every version), so that a hello that does not decode can still be
/// refused as another version. False when it is not a hello or too short.
bool net_hello_peek_version(const uint8_t *data, size_t length, uint16_t *version);
size_t net_welcome_encode(const net_welcome *m, uint8_t *out, size_t capacity);
bool net_welcome_decode(const uint8_t *data, size_t length, net_welcome *m);
size_t net_refuse_encode(const net_refuse *m, uint8_t *out, size_t capacity);
bool net_refuse_decode(const uint8_t *data, size_t length, net_refuse *m);
size_t net_input_encode(const net_input *m, uint8_t *out, size_t capacity);
bool net_input_decode(const uint8_t *data, size_t length, net_input *m);
/// net_input_decode for a game's inputs (m->game is set to `game`; NULL:
/// exactly net_input_decode). A payload with a field out of range makes the
/// message malformed.
bool net_input_decode_game(const uint8_t *data, size_t length, const struct sim_game *game, net_input *m);
/// The held_mask bits of one kept snapshot [baseline, tick) for a client
/// whose confirmed tick is `ack`: bit k for each of its ticks ack + k, k < 32.
/// 0 when `ack` or `tick` is NET_TICK_NONE or the snapshot ends by `ack`.
uint32_t net_held_bits(uint32_t ack, uint32_t baseline, uint32_t tick);
size_t net_snapshot_encode(const net_snapshot *m, uint8_t *out, size_t capacity);
bool net_snapshot_decode(const uint8_t *data, size_t length, net_snapshot *m);
/// The header of a delta snapshot alone (sequence, echo, ticks, last applied
/// tick, substitutions, margin, hash; no joins, leaves or commands), which
/// needs no reference: for a snapshot kept until its baseline is held. False
/// when it is not a snapshot or the header is malformed.
bool net_snapshot_peek(const uint8_t *data, size_t length, net_snapshot *m);
size_t net_full_part_encode(const net_full_part *m, uint8_t *out, size_t capacity);
bool net_full_part_decode(const uint8_t *data, size_t length, net_full_part *m);
/// net_full_part_decode for a game's full state (m->game is set to `game`).
bool net_full_part_decode_game(const uint8_t *data, size_t length, const struct sim_game *game, net_full_part *m);

// ---- the simulation identity ---------------------------------------------------------

/// Bumped whenever a change to sim/ changes results for the same inputs.
#define NET_BEHAVIOUR_VERSION 10u

/// Digest of every movement setting, field by field (xxHash64).
uint64_t net_settings_digest(const sim_move_settings *s);
/// Digest of a level's content: vertices, triangles, boxes and a .map's
/// entities (sim_level_entity_digest; not the markers).
struct sim_level;
uint64_t net_level_digest(const struct sim_level *level);
/// Digest of a scene's fixed setup: every platform (every field, id order)
/// and every water box (in order). NULL, or a scene with neither, gives the
/// digest of an empty setup. Two sides that agree on it build the same
/// platforms and water (keel-server and keel-client --platforms).
struct sim_scene;
uint64_t net_scene_digest(const struct sim_scene *scene);
/// The identity of a build simulating `level` with settings `s` in a scene set
/// up like `scene` (its platforms and water; NULL: none). Compute it from the
/// scene the side actually simulates, once its platforms and water are added.
net_sim_identity net_identity_make(const sim_move_settings *s, const struct sim_level *level,
                                   const struct sim_scene *scene);
/// Whether two identities simulate the same; on false, *reason names what differs.
bool net_identity_equal(const net_sim_identity *a, const net_sim_identity *b, const char **reason);
/// Put a game's name, version and digest into an identity (NULL: none, the
/// fields zeroed). False when the game's payload is wider than
/// NET_GAME_COMMAND_BYTES (the protocol cannot carry it).
bool net_identity_set_game(net_sim_identity *id, const struct sim_game *game);
/// net_identity_equal with a reason that names the game when the games
/// differ ("game tag 1 differs from the server's tag 2"), written into
/// `reason` (`capacity` bytes, NUL-terminated). `client` is the one asking.
bool net_identity_check(const net_sim_identity *client, const net_sim_identity *server, char *reason, size_t capacity);
/// A command and its game payload for character `id` of `scene`: with a
/// game command, the payload unpacked and sim_scene_set_command; without,
/// sim_scene_set_input. All-zero payload bytes are every field at its
/// minimum, always valid: the command of a character nobody commands. False
/// when the id is unknown or the payload is refused.
struct sim_scene;
bool net_set_command(struct sim_scene *scene, uint32_t id, const sim_input *input, const uint8_t *payload);
/// Bytes of a game's packed command payload (0: no game or no payload).
size_t net_game_command_bytes(const struct sim_game *game);

#ifdef __cplusplus
}
#endif

#endif
