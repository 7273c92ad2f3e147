// keel: the client's prediction library: it runs the same scene as the
// server ahead of it, and rolls back and re-simulates when a snapshot shows
// that the prediction was wrong. MIT licence, see LICENSE.
//
// Two scenes: the confirmed one (the server's exact state at the newest
// snapshot tick C, computed from the snapshot's baseline -- the tick of the
// snapshot before it -- and the commands it carries, checked against the
// server's hash; a snapshot whose baseline is not confirmed yet, because one
// before it was lost, is kept until the server's repair fills the gap) and the predicted
// one (tick P > C: the confirmed state advanced with our own commands and,
// for every other character, its last command). When the state at C is
// confirmed, the prediction made for C is compared with it byte for byte:
// equal means nothing to do; different means a misprediction: it is labelled
// with its cause, and the prediction is rebuilt from C. Smoothing for display
// is the game's business and never writes into either scene.
//
// Causes (cl_cause): the server substituted one of our commands (it arrived
// late or not at all); a remote character's command changed from the one we
// predicted it with; an interaction (a character near one whose prediction
// was wrong); unexplained -- that would be a determinism bug, and the tests
// fail on it. With a game: a game rule (a character whose state or game
// state differs though nothing near it changed, when the game has rules that
// couple characters -- a shot from a remote character whose command changed).
//
// Rollback re-simulates an island: the characters whose prediction can
// differ (a different state at C, or a different command in the ticks
// re-simulated) and, tick by tick, everyone who could come within reach of
// them, in old or new trajectories (docs/client.md, "Island rollback");
// the others keep their predicted states, which a full re-simulation would
// reproduce bit for bit.
//
// The prediction horizon is capped (prediction_cap ticks past C, default 48):
// beyond it cl_client_predict refuses to advance (returns false) until a
// snapshot confirms more; the game keeps its last frame. The cap leaves room
// for a lost snapshot: its repair takes about a round trip, during which C
// stands still while P goes on.
#ifndef KEEL_CL_CLIENT_H
#define KEEL_CL_CLIENT_H

#include <keel/net_host.h>
#include <keel/net_proto.h>
#include <keel/sim_level.h>
#include <keel/sim_scene.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cl_cause {
    CL_CAUSE_SUBSTITUTED = 0,
    CL_CAUSE_REMOTE_COMMAND = 1,
    CL_CAUSE_INTERACTION = 2,
    CL_CAUSE_UNEXPLAINED = 3,
    CL_CAUSE_GAME_RULE = 4,
    CL_CAUSE_COUNT = 5,
} cl_cause;

const char *cl_cause_name(cl_cause cause);

typedef struct cl_config {
    uint32_t prediction_cap;   ///< ticks past the confirmed one (1..CL_MAX_PREDICTION_CAP, default 48)
    uint32_t ticks_per_packet; ///< an input packet every this many ticks (1..8, default 2)
    /// Input packets a command is repeated in at least (default 4: three lost
    /// packets in a row lose nothing).
    uint32_t redundancy_packets;
    /// The built-in level's elevator and shuttle in the client's scenes, as
    /// a server with sv_config.platforms has them (none on a level without a
    /// platform_area marker). The simulation identity covers them (its
    /// scene digest): a server set up otherwise refuses the client (default
    /// false).
    bool platforms;
    /// A .map level's entities (NULL for other levels, the default): its
    /// movers and water in the client's scenes, as a server given the same
    /// map (sv_config.map) has them. The map must outlive the client.
    const struct sim_map *map;
    /// Re-simulate every character on every rollback instead of an island
    /// (a reference for measurements; the results are the same bits).
    bool full_rollback;
    /// The sync test of island rollback: after every rollback done on an
    /// island, re-simulate every character as well, in a scene of its own,
    /// and compare the two tick by tick (cl_stats.island_checks and
    /// island_check_differences). Doubles a rollback's cost; for tests and
    /// benchmarks.
    bool island_check;
    /// When given, the client times each rollback with it (cl_stats.
    /// rollback_ns; the sync test's re-simulation left out). The library
    /// reads no clock of its own; for benchmarks (default NULL).
    uint64_t (*clock_ns)(void);
    /// The game the client's scenes run (keel/sim_game.h; NULL: none). It
    /// must be the server's (the handshake compares name, version and
    /// digest) and outlive the client. With a game every rollback is a full
    /// re-simulation (rules may reach any character: cl_stats.
    /// island_fallbacks counts them), and a ring slot keeps the scene's
    /// saved state (sim_scene_save) besides the characters.
    const struct sim_game *game;
    uint32_t cookie;
} cl_config;

cl_config cl_default_config(void);

#define CL_DEFAULT_PREDICTION_CAP 56u
/// The largest prediction_cap (the client keeps 64 ticks of states).
#define CL_MAX_PREDICTION_CAP 56u

typedef enum cl_status {
    CL_STATUS_CONNECTING = 0, ///< waiting for the welcome
    CL_STATUS_SYNCING = 1,    ///< welcomed, waiting for the first full state
    CL_STATUS_PLAYING = 2,
    CL_STATUS_REFUSED = 3, ///< the server refused: see cl_client_refusal
    CL_STATUS_DISCONNECTED = 4,
} cl_status;

typedef struct cl_stats {
    uint64_t own_mispredictions[CL_CAUSE_COUNT];
    uint64_t remote_mispredictions[CL_CAUSE_COUNT];
    uint64_t rollbacks, resimulated_ticks;
    /// Island rollback: characters re-simulated, summed over the rollbacks
    /// (the island's final size, or every character for a full one), and
    /// the character-ticks the rollbacks stepped (an island's retries
    /// included). Rollbacks done on an island, and those that needed every
    /// character (the confirmed and predicted characters differ, someone
    /// was placed at a free spot, or full_rollback is set); island ticks
    /// stepped again because a character joined the island after the step.
    uint64_t resimulated_characters, resimulated_character_ticks;
    uint64_t island_rollbacks, island_fallbacks, island_retries;
    /// The sync test (cl_config.island_check): rollbacks checked, and
    /// character states that differed from the full re-simulation's (a bug
    /// if ever nonzero).
    uint64_t island_checks, island_check_differences;
    /// Time spent in rollbacks (ns), when cl_config.clock_ns is given.
    uint64_t rollback_ns;
    uint64_t snapshots, full_states, snapshots_stale, snapshots_unusable, hash_mismatches;
    uint64_t messages_malformed;
    uint64_t snapshot_packets_lost; ///< from gaps in the server's sequence numbers
    uint64_t predicted_ticks, capped_ticks;
    /// Snapshots kept because one before them was missing (their baseline
    /// not confirmed yet), applied from there later, and dropped when more
    /// were waiting than the client keeps (32).
    uint64_t snapshots_kept, snapshots_kept_applied, snapshots_dropped;
    /// Ticks let pass without predicting because commands arrived far
    /// earlier than needed (after a stall, or a lead from a round trip that
    /// was too long).
    uint64_t held_ticks;
    /// A backlog of snapshots handled between two predictions (a machine
    /// that cannot keep up, or a burst after a stall): after the first
    /// misprediction the rollback waits for the next cl_client_predict (or
    /// cl_client_take_catch_up), and the snapshots confirmed meanwhile are
    /// not compared again (confirms_coalesced): one rollback for the
    /// backlog instead of one per snapshot.
    uint64_t rollbacks_deferred, confirms_coalesced;
    uint64_t commands_sent, input_packets;
    /// The first field that differed in the newest own-character misprediction
    /// ("position", or a game field as "game.health"; valid until the next
    /// call that handles an event).
    const char *last_own_field;
    uint32_t last_own_tick;
    /// With a game: confirmations whose game-wide state differed from the
    /// prediction, and the first field that differed ("game.clock").
    uint64_t game_state_mispredictions;
    const char *last_game_field;
    double rtt_ms;           ///< smoothed round-trip time of echoed inputs, 0 before the first (display only)
    int32_t input_margin_q8; ///< the newest margin the server reported
    double clock_scale;      ///< tick duration factor in use (0.98 .. 1.02)
} cl_stats;

typedef struct cl_client cl_client;

/// A client for the same level, world and settings the server uses.
cl_client *cl_client_create(const sim_world *world, const sim_level *level, const sim_move_settings *settings,
                            const cl_config *config, net_host *host);
void cl_client_destroy(cl_client *cl);

/// Send the hello (call once the host reports NET_EVENT_CONNECT, or at once
/// on a memory host: it is queued until the connection is up).
void cl_client_hello(cl_client *cl, uint32_t now_ms);
/// Handle one event of the host; `now_ms` is the client's clock.
void cl_client_handle(cl_client *cl, const net_event *event, uint32_t now_ms);

cl_status cl_client_status(const cl_client *cl);
const char *cl_client_refusal(const cl_client *cl);
/// Why the server refused (0 before a refusal). NET_REFUSE_SHUTDOWN comes at
/// any time, to a playing client too: the server shut down, with the reason
/// in cl_client_refusal; the session is over, through no fault of this client.
net_refuse_code cl_client_refusal_code(const cl_client *cl);
uint32_t cl_client_character(const cl_client *cl);
/// The next tick to predict (P) and the newest confirmed one (C).
uint32_t cl_client_predicted_tick(const cl_client *cl);
uint32_t cl_client_confirmed_tick(const cl_client *cl);
/// How many ticks the client should be ahead of its confirmed state now, from
/// the round trip; the game predicts until P reaches C + this.
uint32_t cl_client_target_lead(const cl_client *cl);
/// The input margin in ticks the clock steers the lowest of the recent
/// margins towards: 1, plus three input packets' worth (3 x ticks_per_packet)
/// on a lossy link (snapshots went missing, or fewer than 64 were seen yet).
/// cl_client_target_lead counts one tick of margin, so the lead the client
/// settles at is about that plus this less one.
double cl_client_margin_target(const cl_client *cl);
/// The current tick duration in microseconds: the nominal one scaled within
/// +-2% to keep the input margin near one tick.
uint64_t cl_client_tick_us(const cl_client *cl);

/// Ticks to predict at once now (after the first full state, to get ahead of
/// the server by the target lead; after a jump in latency, to make up the
/// commands that would arrive late); reading it clears it. Call it after
/// handling the events and before reading the predicted scene: it finishes a
/// rollback that a backlog of snapshots put off (cl_stats.rollbacks_deferred).
uint32_t cl_client_take_catch_up(cl_client *cl);

/// Predict tick P with our command (its tick is set to P) and send inputs
/// when due. False when not playing or at the prediction cap. With a game
/// the command's payload is all zero bytes: each field at its minimum.
bool cl_client_predict(cl_client *cl, const sim_input *command, uint32_t now_ms);
/// cl_client_predict with the game's command struct (NULL: all zero bytes
/// on the wire, as cl_client_predict). False, and nothing predicted, when a
/// field is out of its range too.
bool cl_client_predict_game(cl_client *cl, const sim_input *command, const void *game_command, uint32_t now_ms);

/// What it was created with, and the identity it says hello with.
const sim_move_settings *cl_client_settings(const cl_client *cl);
const cl_config *cl_client_config(const cl_client *cl);
net_sim_identity cl_client_identity(const cl_client *cl);
/// The identity a client created with these arguments says hello with,
/// without creating one (a light client's, cl_light.h); all zero when out of
/// memory.
net_sim_identity cl_client_identity_for(const sim_world *world, const sim_level *level,
                                        const sim_move_settings *settings, const cl_config *config);

const sim_scene *cl_client_predicted(const cl_client *cl);
/// The predicted characters (id order) at a tick in [C, P]: the state before
/// that tick ran, as the prediction now stands (after any rollback); at P the
/// predicted scene's. NULL (and *count 0) for any other tick, before the
/// first full state, and while a rollback is put off (see
/// cl_client_take_catch_up). Valid until the next call that predicts or
/// handles an event. For display smoothing (cl_smooth.h).
const sim_char_state *cl_client_predicted_at(const cl_client *cl, uint32_t tick, uint32_t *count);
const sim_scene *cl_client_confirmed(const cl_client *cl);
void cl_client_stats(const cl_client *cl, cl_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
