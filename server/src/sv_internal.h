// keel server: the server's private parts, shared by its sources.
// MIT licence, see LICENSE.
//
// sv_server.c: clients, commands and the tick; sv_snapshot.c: what each
// client is sent after a tick (sv_snapshot.c opens with its rules).
#ifndef KEEL_SV_INTERNAL_H
#define KEEL_SV_INTERNAL_H

#include <keel/sv_server.h>

#include "sv_history.h"

#define CMD_RING 64u               // > NET_MAX_SNAPSHOT_TICKS: the command buffer's window
#define SEND_RING SV_HISTORY_TICKS // ticks whose sending is remembered per client

/// Per client: when the commands of each recent tick last went out, where
/// the chain of delta snapshots ends, the full states sent, and the round
/// trip the client's acknowledgements show.
typedef struct sv_send_state {
    uint32_t sent_tick[SEND_RING]; // NET_TICK_NONE or the tick whose send time is in sent_us
    uint64_t sent_us[SEND_RING];
    uint32_t chain_end;          // T of the newest snapshot or full state sent, or NET_TICK_NONE
    uint32_t repairs;            // repairs since the acknowledgement last moved (backoff)
    uint32_t full_tick;          // tick of the newest full state sent, or NET_TICK_NONE
    uint64_t full_us;            // when it was sent
    uint32_t fulls;              // full states since the acknowledgement last moved (backoff)
    uint64_t srtt_us, rttvar_us; // from acknowledgements (RFC 6298's filter)
    bool has_rtt;
} sv_send_state;

#define CMD_RING 64u // > NET_MAX_SNAPSHOT_TICKS: the command buffer's window

enum { RAN_SUBSTITUTE = 0, RAN_OWN = 1, RAN_LATE = 2 };

typedef struct sv_cmd_slot {
    uint32_t tick; // NET_TICK_NONE when empty
    sim_input cmd;
    uint8_t game[NET_GAME_COMMAND_BYTES]; // the game's payload (zero without a game)
} sv_cmd_slot;

typedef struct sv_client {
    bool used, joined, leaving;
    uint32_t peer;
    uint32_t id; // character id, 0 before the join
    uint32_t join_tick;
    sv_cmd_slot ring[CMD_RING];
    // per tick % CMD_RING: RAN_OWN if its own command ran, RAN_SUBSTITUTE if
    // a substitute did, RAN_LATE once a copy of the missing command came in
    uint8_t ran_own[CMD_RING];
    sim_input last_cmd;
    uint8_t last_game[NET_GAME_COMMAND_BYTES]; // last_cmd's game payload
    // the commands as they came, kept after their tick ran (a late one too):
    // what the client predicted with, for rebuilding its view (sv_lag.c)
    sv_cmd_slot seen[CMD_RING];
    uint32_t last_applied_tick;
    uint64_t substituted_bits; // bit 0: the last tick run
    uint32_t ack_tick;         // the client's confirmed tick C, or NET_TICK_NONE
    uint32_t held_mask;        // bit k: it also holds the commands of tick C + k
    uint64_t last_input_us;    // when its newest input arrived (0: none yet)
    uint64_t join_us;          // when it joined
    sv_send_state send;        // what snapshots went out, for the chain and repairs
    uint32_t client_time;      // newest input's client_time_ms
    uint16_t newest_sequence;
    bool has_sequence;
    uint64_t client_time_at_us; // when that input arrived
    int32_t margin_q8, margin_min_q8;
    bool margin_seen;
    uint16_t snapshot_sequence;
    uint32_t window_start_tick; // rate limiting
    uint32_t window_commands;
    uint64_t malformed_window_start_us;
    uint32_t malformed_in_window;
    uint64_t packet_window_start_us;
    uint32_t packets_in_window;
    uint32_t hello_time;
} sv_client;

struct sv_server {
    const sim_world *world;
    const sim_level *level;
    sim_move_settings settings;
    sv_config config;
    net_host *host;
    sim_scene *scene;
    net_sim_identity identity;
    sv_client *clients;
    uint32_t next_id;
    uint32_t *pending_leaves; // character ids leaving at the next tick
    uint32_t pending_leave_count;
    // connections that have not said hello yet, oldest first
    uint32_t *waiting_peer;
    uint64_t *waiting_since_us;
    uint32_t waiting_count, waiting_capacity;
    sv_history history;
    uint64_t tick_us;
    uint64_t now_us;
    sim_vec3 spawn_origin; // the level's spawn marker (or the origin): the fallback
    sim_vec3 *spawns;      // the spawn spots (sim_spawn_spots), nearest the markers first
    uint32_t spawn_count;
    sim_angle *spawn_yaws; // a .map's spawn points' yaws (spawns holds their feet); NULL: searched spots
    // scratch for snapshots (allocated once)
    net_join *snap_joins;
    net_leave *snap_leaves;
    net_tick_command *snap_commands;
    uint32_t snap_join_cap, snap_leave_cap, snap_command_cap;
    uint8_t packet[NET_MTU];
    uint8_t *save; // a full state's saved scene with a game (grown as needed)
    size_t save_cap;
    sv_stats stats;
    // the tick observer and its scratch (allocated once, max_clients each)
    sv_tick_observer observer;
    void *observer_ctx;
    uint32_t *obs_leaves;
    sim_char_state *obs_joins;
    rec_command *obs_commands;
    uint8_t *obs_game;     // with a game: each command's packed payload (obs_game_bytes each)
    size_t obs_game_bytes; // net_game_command_bytes of the game (0: none)
    // lag compensation (sv_lag.c): the scene at each of the last lag_ring
    // ticks (saved after the step before it), and a scene to rebuild views in
    uint32_t lag_ticks; // the bound in ticks (0: off)
    uint32_t lag_ring;
    uint32_t *lag_tick; // per slot: the tick saved, or NET_TICK_NONE
    uint8_t **lag_save;
    size_t *lag_size, *lag_cap;
    sim_scene *view;
    // draining (sv_drain.c)
    bool draining;
    char drain_reason[NET_REASON_MAX + 1];
};

void sv_send_reset(sv_send_state *s);
/// The acknowledgement moved from `from` to `to` (NET_TICK_NONE: nothing before).
void sv_send_acked(sv_server *sv, sv_client *c, uint32_t from, uint32_t to);
/// Snapshots due to client c after a tick: `hash` is the scene's at its tick.
void sv_send_snapshot(sv_server *sv, sv_client *c, uint64_t hash);

/// Send a refuse (code, reason cut to NET_REASON_MAX) and close the peer's
/// connection; not counted (the caller counts).
void sv_send_refusal(sv_server *sv, uint32_t peer, net_refuse_code code, const char *reason);
/// Lag compensation (sv_lag.c): set up with the server (true when off),
/// freed; the state after a step kept; a command about to run at tick t
/// judged (its payload rewritten: `own` false for a substitute, judged at
/// the present).
bool sv_lag_init(sv_server *sv);
void sv_lag_free(sv_server *sv);
void sv_lag_keep(sv_server *sv);
void sv_lag_judge(sv_server *sv, const sv_client *c, uint32_t t, const sim_input *cmd, uint8_t *payload, bool own);

/// A hello while draining: refused with the drain's reason (sv_drain.c).
void sv_drain_refuse(sv_server *sv, uint32_t peer);

#endif
