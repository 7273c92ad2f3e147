// keel client: the client library's private parts, shared by its sources.
// MIT licence, see LICENSE.
//
// Invariants: `conf` holds the exact server state at tick C (or nothing
// before the first full state); conf_ring keeps the confirmed states of the
// last CL_RING ticks that were confirmed, for the baselines the server may
// pick, each with the commands its characters ran in the tick before (the
// snapshot reference for that baseline); `pred` is at tick P >= C, and
// pred_ring[k] holds the predicted state at tick k (before tick k ran) and
// the commands each character ran in it, for every k in [C, P); own_ring
// holds the commands we sent; `pending` holds snapshots whose baseline is
// not confirmed yet.
//
// cl_client.c: creation, sending and prediction; cl_confirm.c: what comes
// from the server (welcome, refusal, snapshots, full states), confirmation
// and misprediction causes; cl_island.c: rollback (re-simulating only the
// characters whose prediction can differ).
#ifndef KEEL_CL_INTERNAL_H
#define KEEL_CL_INTERNAL_H

#include <keel/cl_client.h>

#define CL_COOKIE 0x636c6e74u
#define CL_RING 64u
#define CL_PENDING 32u
/// Prediction past the newest tick the server named plus the target lead
/// that the client lets pass instead (see cl_client_predict).
#define AHEAD_SLACK_TICKS 16u
#define MAX_PARTS NET_MAX_GAME_FULL_PARTS // a full state with a game has up to this many
/// A character this close to one whose prediction was wrong may have been
/// touched by it (centres, any axis): larger than any pair of default shapes
/// plus a tick's motion.
#define NEAR_DISTANCE SIM_FX_MM(2500)

typedef struct cl_state_slot {
    uint32_t tick; // NET_TICK_NONE when empty
    uint32_t count;
    sim_char_state *states; // capacity NET_MAX_CHARACTERS
    // pred ring: what each character ran at this tick; conf ring: what each
    // character present at this tick ran in the tick before (the reference)
    net_tick_command *inputs;
    uint32_t input_count;
    // pred ring: the step of this tick placed someone at a free spot or left
    // a ghost (sim_scene_last_separation): reach no island bound covers
    bool placed;
    // with a game: the scene's saved state at this tick (sim_scene_save),
    // the characters' and the game's
    uint8_t *save;
    size_t save_size, save_cap;
} cl_state_slot;

/// A snapshot that cannot be applied yet: its baseline is past the confirmed
/// tick (one before it was lost or is late) or not confirmed yet (no full
/// state so far). Kept as received until the gap is filled.
typedef struct cl_pending {
    uint32_t baseline, tick; // tick NET_TICK_NONE when the slot is free
    size_t length;
    uint8_t data[NET_MTU];
} cl_pending;

typedef struct cl_island cl_island;

typedef struct cl_own_slot {
    uint32_t tick;
    sim_input cmd;
    uint8_t game[NET_GAME_COMMAND_BYTES]; // its game payload
} cl_own_slot;

struct cl_client {
    const sim_world *world;
    const sim_level *level;
    sim_move_settings settings;
    cl_config config;
    net_host *host;
    sim_scene *pred, *conf, *work;
    net_sim_identity identity;
    cl_status status;
    char refusal[NET_REASON_MAX + 1];
    uint8_t refusal_code; // net_refuse_code, 0 before a refusal
    uint32_t character;
    uint32_t ticks_per_snapshot;
    uint32_t confirmed; // C, NET_TICK_NONE before the first full state
    cl_state_slot conf_ring[CL_RING];
    cl_state_slot pred_ring[CL_RING];
    cl_own_slot own_ring[CL_RING];
    // the command each character ran last in the confirmed state (remote prediction)
    net_tick_command *last_cmds;
    uint32_t last_cmd_count;
    // full state assembly
    uint32_t full_tick;
    uint64_t full_hash;
    uint32_t full_parts_seen[(MAX_PARTS + 31) / 32];
    uint32_t full_part_count, full_total, full_received;
    sim_char_state *full_states;
    sim_input *full_cmds;
    uint8_t (*full_game)[NET_GAME_COMMAND_BYTES]; // the last commands' game payloads
    uint8_t *full_save;                           // with a game: the saved scene, assembled
    uint32_t full_save_size;
    bool full_ready;        // a full state assembled and checked before the welcome came
    uint32_t full_ready_ms; // when
    cl_pending *pending;    // CL_PENDING snapshots kept until their baseline is held
    // what the server told us
    uint32_t last_applied_tick;
    uint32_t substituted_mask;
    int32_t margin_q8;
    bool has_margin;
    int32_t margins[32]; // the last reported margins: the clock steers their minimum
    uint32_t margin_count;
    double seen_snapshots, lost_snapshots; // decaying counts: the loss the link shows
    uint16_t snap_sequence;
    bool has_snap_sequence;
    // clock
    uint64_t nominal_tick_us;
    double clock_scale;
    double rtt_ms;
    bool has_rtt;
    bool rtt_from_echo;  // from an unreliable echo (the welcome's may include a retransmission)
    uint32_t hold;       // predicted ticks to let pass without predicting (commands arrive too early)
    uint32_t idle_ticks; // ticks let pass (held or capped): a ping every ticks_per_packet of them
    uint32_t heard_tick; // the newest tick a snapshot or full state named (NET_TICK_NONE: none yet)
    // Snapshots confirmed since the last cl_client_predict or take_catch_up
    // (a backlog is handled in one go), and a rollback put off until then.
    uint32_t confirms_since_predict;
    bool rollback_pending;
    uint32_t catch_up;      // ticks to predict at once (after a full state or a jump in latency)
    uint32_t catch_up_hold; // no new catch-up until the confirmed tick passes this
    // Ticks before this one were run (or will be) by the server before any
    // command of ours can reach it: it substitutes substitute_cmd, and so
    // does the prediction.
    uint32_t live_tick;
    sim_input substitute_cmd;
    uint8_t substitute_game[NET_GAME_COMMAND_BYTES];
    uint64_t next_deadline_us;
    bool clock_started;
    // input packets
    uint16_t input_sequence;
    // scratch
    net_snapshot snap;
    net_join *snap_joins;
    net_leave *snap_leaves;
    net_tick_command *snap_cmds;
    uint8_t *changed; // per character index in conf: command changed or joined
    uint8_t packet[NET_MTU];
    cl_island *island; // island rollback (cl_island.c)
    sim_scene *check;  // the sync test's full re-simulation (island_check only)
    cl_stats stats;
    const struct sim_game *game;        // config.game
    char own_field[64], game_field[64]; // the names last_own_field and last_game_field point to
    cl_state_slot scratch;              // a saved scene on its way between two scenes (with a game)
};

/// A ping: an input without commands (cl_client.c).
void cl_send_ping(cl_client *cl, uint32_t now_ms);
/// Run the predicted scene one tick (cl_client.c).
void cl_predict_one(cl_client *cl);
/// The command character `c` (in its state before tick t) runs at tick t in
/// the prediction, and its game payload when `game` is given (cl_client.c).
void cl_command_for(const cl_client *cl, uint32_t t, const sim_char_state *c, sim_input *out, uint8_t *game);
/// With a game: save `scene` into a slot (its buffer grown as needed), and
/// restore a scene from one; without, the states alone (cl_client.c).
bool cl_save_slot(cl_state_slot *slot, const sim_scene *scene);
bool cl_restore_slot(const cl_client *cl, sim_scene *scene, const cl_state_slot *slot);
/// `dst` becomes `src` (characters, tick and the game's state).
bool cl_copy_scene(cl_client *cl, sim_scene *dst, const sim_scene *src);
/// The first field in which two states differ, NULL when equal; whether two
/// commands are the same (the tick aside) (cl_confirm.c).
const char *cl_first_field(const sim_char_state *a, const sim_char_state *b);
bool cl_same_command(const sim_input *a, const sim_input *b);
/// Both commands and their game payloads the same (the tick aside).
bool cl_same_tick_command(const net_tick_command *a, const net_tick_command *b);
/// Rebuild the prediction from the confirmed state up to tick `to`: on an
/// island when it can, else every character (cl_island.c).
void cl_rollback(cl_client *cl, uint32_t to);
/// The island's scenes and scratch, allocated with the client (cl_island.c).
bool cl_island_init(cl_client *cl);
void cl_island_free(cl_client *cl);
/// The sync test after an island rollback up to P (cl_island_check.c).
void cl_island_check(cl_client *cl, uint32_t P);
/// The command of character `id` in a list sorted by id, or NULL.
const net_tick_command *cl_find_cmd(const net_tick_command *cmds, uint32_t n, uint32_t id);
/// Finish a rollback a backlog of snapshots put off (cl_confirm.c).
void cl_settle(cl_client *cl);

#endif
