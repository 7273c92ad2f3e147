// keel: the dedicated server's core: clients, command buffers, the
// authoritative scene and snapshots. MIT licence, see LICENSE.
//
// No clock and no sockets of its own: the caller (keel-server, or a test on
// the in-memory network) hands it the network's events and the time, and
// calls sv_server_tick at each tick's deadline. Everything goes out through
// the net_host it was given.
//
// A tick t (the scene's tick): clients that left are removed and clients that
// said hello get a character (both recorded for tick t); every character runs
// its client's command for tick t, or -- when that command has not arrived --
// the client's previous command again (a substitution, recorded and reported
// to that client); the scene steps to t + 1; every ticks_per_snapshot ticks
// each client gets a snapshot of the state at t + 1: a delta that continues
// the chain of snapshots sent to it (the commands of every character since
// the last one, and the state hash), repairs of what it lacks, or -- rate-
// limited -- a full state when no delta can reach its state
// (server/src/sv_snapshot.c has the rules).
#ifndef KEEL_SV_SERVER_H
#define KEEL_SV_SERVER_H

#include <keel/net_host.h>
#include <keel/net_proto.h>
#include <keel/rec.h>
#include <keel/sim_level.h>
#include <keel/sim_scene.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sv_config {
    uint32_t max_clients;        ///< 1..NET_MAX_CHARACTERS (default 64)
    uint32_t ticks_per_snapshot; ///< 1..16 (default 2: 32 snapshots/s at 64 Hz)
    /// Commands accepted from one client per second, new ones only (default
    /// 2 x tick rate + 32); more are dropped and counted.
    uint32_t max_commands_per_second;
    /// Malformed messages from one client within a second before it is
    /// disconnected (default 64).
    uint32_t max_malformed_per_second;
    /// Input packets accepted from one client per second (default 4 x tick
    /// rate; a client sends tick rate / 2 by default); more are dropped
    /// unread and counted.
    uint32_t max_input_packets_per_second;
    /// A connection that has not said hello after this long is closed
    /// (default 5000 ms).
    uint32_t hello_timeout_ms;
    bool platforms; ///< the built-in level's elevator and shuttle (needs a platform_area marker)
    /// A .map level's entities (sim_level_load_map; NULL for other levels,
    /// the default): its movers and water go into the scene (platform ids
    /// from SIM_MAP_FIRST_PLATFORM_ID) and players join at its spawn points
    /// (sim_map_spawns) with their yaws, in place of the spawn search, when
    /// it has any. The map must outlive the server.
    const struct sim_map *map;
    /// The game the scene runs (keel/sim_game.h; NULL: none, the server as
    /// without games). It must outlive the server. Clients must run the same
    /// game (name, version, digest: the handshake refuses others, naming
    /// it); commands carry its payload, and full states its state. A game
    /// whose payload is wider than NET_GAME_COMMAND_BYTES is refused.
    const struct sim_game *game;
    /// Lag compensation, for a game that judges shots (sim_game_judges):
    /// the longest rewind, in ms (0: none -- every shot is judged against
    /// the characters as they are at its tick). A shot is judged against the
    /// shooter's view, rebuilt from the state the shooter's client had
    /// confirmed when it fired, at most floor(ms x tick rate / 1000) ticks
    /// (at most 63) before the shot; a view older than that is rebuilt from
    /// the oldest state the bound allows (docs/arena.md, "Lag
    /// compensation"). 0..1000 (default 400: 25 ticks at 64 Hz, which
    /// covers a 200 ms round trip on a lossy link: the view lag is about
    /// the round trip plus the input margin plus a snapshot interval).
    uint32_t lag_compensation_ms;
    uint32_t cookie;
} sv_config;

sv_config sv_default_config(void);

/// Counters since creation (the stats line shows their rates).
typedef struct sv_stats {
    uint32_t clients;
    uint64_t ticks;
    uint64_t commands_received;      ///< new commands stored
    uint64_t commands_duplicate;     ///< already held (redundancy)
    uint64_t commands_late;          ///< arrived after their tick ran
    uint64_t commands_out_of_window; ///< beyond server tick + NET_MAX_SNAPSHOT_TICKS
    uint64_t commands_rate_limited;
    uint64_t packets_rate_limited; ///< input packets beyond max_input_packets_per_second
    uint64_t hello_timeouts;       ///< connections closed for saying no hello
    uint64_t commands_substituted;
    uint64_t input_packets, input_packets_lost, input_packets_reordered; ///< from the clients' sequence numbers
    uint64_t messages_malformed;
    uint64_t messages_unexpected; ///< well formed but not valid now (input before hello, ...)
    uint64_t clients_refused;     ///< hellos answered with a refusal
    uint64_t clients_joined;
    /// How joined clients went: left (the client closed the connection: a
    /// leave, or another close), timed out (not heard from for the host's
    /// timeout: killed, crashed, or the link failed), dropped (the server
    /// closed it: misbehaviour). Each client counts in exactly one.
    uint64_t clients_left, clients_timed_out, clients_dropped;
    /// Joined clients the server closed because it shut down
    /// (sv_server_drain); counted apart from left, timed out and dropped.
    uint64_t clients_drained;
    uint64_t snapshots_delta, snapshots_full_parts;
    uint64_t snapshots_repair; ///< delta snapshots re-sending ticks a client lacked (among snapshots_delta)
    uint64_t full_states;      ///< full states sent (each snapshots_full_parts / ceil(characters / 12) parts)
    uint64_t snapshot_bytes;   ///< payload of snapshots and full parts
    /// Lag compensation: shots judged against a rebuilt view, those whose
    /// view was older than the bound (rebuilt from the oldest state it
    /// allows), those rebuilt without one of the shooter's commands (it
    /// never came: the view may differ from the client's), and those judged
    /// at the present because the state or commands were no longer held.
    uint64_t shots_judged, shots_beyond_bound, shots_inexact, shots_unrebuilt;
    uint64_t view_ticks; ///< ticks stepped to rebuild views (the cost)
    /// The view lags the shooters' clients sent (T - C, ticks), summed over
    /// the shots judged, and the largest.
    uint64_t view_lag_sum;
    uint32_t view_lag_max;
} sv_stats;

typedef struct sv_server sv_server;

/// A server for `world` (made from `level`, both outliving it), simulating
/// with `settings`, talking through `host`. NULL on invalid settings or config.
sv_server *sv_server_create(const sim_world *world, const sim_level *level, const sim_move_settings *settings,
                            const sv_config *config, net_host *host);
void sv_server_destroy(sv_server *sv);

/// Handle one event of the host; `now_us` is the server's clock and
/// `next_tick_us` the deadline of the next tick (for the input margin).
void sv_server_handle(sv_server *sv, const net_event *event, uint64_t now_us, uint64_t next_tick_us);
/// Run one tick (at its deadline, `now_us` on the same clock as the events')
/// and send the snapshots that fall due.
void sv_server_tick(sv_server *sv, uint64_t now_us);

uint32_t sv_server_scene_tick(const sv_server *sv);
const sim_scene *sv_server_scene(const sv_server *sv);
void sv_server_stats(const sv_server *sv, sv_stats *stats);
/// The identity clients must match.
net_sim_identity sv_server_identity(const sv_server *sv);
const sim_move_settings *sv_server_settings(const sv_server *sv);

// ---- shutting down (draining) --------------------------------------------------------

/// Begin shutting down: every client, joined or not, gets a refuse with
/// NET_REFUSE_SHUTDOWN and `reason` (cut to NET_REASON_MAX printable
/// characters) and its connection closed; a hello from then on is refused
/// the same way. The caller stops calling sv_server_tick and keeps handling
/// the host's events until net_host_open_connections is 0 (every close
/// acknowledged) or its own time bound passes. A second call does nothing.
void sv_server_drain(sv_server *sv, const char *reason);
bool sv_server_draining(const sv_server *sv);

// ---- observing the ticks (recordings) -------------------------------------------------

/// Called at the end of every sv_server_tick with exactly what the tick
/// applied -- the leaves and joins at its start (joins with the states the
/// characters were spawned with), every character's command in id order,
/// substituted ones included and marked (rec_command.substituted: the
/// client's command for the tick had not come, its last one ran again with
/// input.tick the tick), with a game each command's payload packed by its
/// schema as the client sent it, a judging game's outcome fields as the
/// server judged them (rec_tick.game_commands) -- and the scene
/// after the step. The hash
/// fields of `tick` are left empty (a recorder computes them from `after`).
/// The pointers are valid only during the call; the observer must not
/// change the server.
typedef void (*sv_tick_observer)(void *ctx, const rec_tick *tick, const sim_scene *after);

/// Set (or with NULL clear) the tick observer. No allocation: the server
/// keeps the scratch for it from its creation.
void sv_server_set_observer(sv_server *sv, sv_tick_observer fn, void *ctx);

/// What a recording's header needs at the moment recording starts: the
/// settings and their digest, the level digest, the scene's platforms and
/// water boxes, its capacity, its game's identity (rec_header_set_scene); kind REC_KIND_SCENE; substitutes_marked
/// (the observer's ticks mark them). The other fields of
/// `header` (level path, keyframes, compression, source) are left as they
/// are: start from rec_default_header(). False when the scene has more
/// platforms or water boxes than a header holds.
bool sv_server_fill_header(const sv_server *sv, rec_header *header);

#ifdef __cplusplus
}
#endif

#endif
