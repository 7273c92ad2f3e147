// keel-server: what its source files share. MIT licence, see LICENSE.
#ifndef KEEL_SERVER_PROGRAM_H
#define KEEL_SERVER_PROGRAM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <keel/rec.h>
#include <keel/sv_server.h>

#include "agones.h"

typedef struct options {
    const char *bind, *level, *scale;
    char up;
    uint32_t port, rate, snapshot_ticks, max_clients, per_address;
    uint64_t duration_ms, stats_ms; ///< --duration, --stats-interval (seconds with decimals), 0: none
    bool stats_json, platforms, quiet;
    uint32_t ticks; ///< stop after this many ticks (0: no limit)
    // recording
    const char *record;
    uint32_t keyframe_interval;
    bool record_full, no_compress;
    // the virtual session
    uint32_t virtual_bots;
    uint32_t full_clients; ///< of the virtual bots, how many run the client library
    uint32_t seed;
    bool churn;
    // secure mode (docs/security.md, "The handshake")
    const char *key_file;       ///< --key: the backend key; NULL: insecure
    const char *public_address; ///< --public: how clients reach this server
    uint64_t protocol_id;       ///< --protocol-id
    bool insecure;              ///< --insecure (the default for now, said explicitly)
    // --metrics HOST:PORT (metrics.c)
    const char *metrics_host; ///< NULL: no metrics
    uint32_t metrics_port;
    // the match lifecycle (match.c, agones.c)
    bool agones;          ///< --agones: the Agones SDK sidecar's lifecycle
    uint64_t match_ms;    ///< --match-seconds: end the match this long after it started (0: never)
    uint64_t empty_ms;    ///< --empty-seconds: end when the players all left this long ago (0: never)
    uint64_t join_ms;     ///< --join-seconds: end when no player joined this long after the match started (0: never)
    uint32_t stall_after; ///< --test-stall-after-ticks (a test hook; 0: none)
    uint64_t stall_ms;    ///< --test-stall-seconds
    uint32_t respawn_depth_m; ///< --respawn-depth M (default KEEL_APP_RESPAWN_DEPTH_M; 0: off)
    /// --timeout S: the silence that ends a connection (net_host_config's
    /// timeout_ms: 1 ms to NET_HOST_MAX_TIMEOUT_MS, default
    /// NET_HOST_DEFAULT_TIMEOUT_MS; a token's shorter timeout wins)
    uint32_t timeout_ms;
    const char *game_spec;       ///< --game NAME|PATH (app/keel_game.h; NULL: no game)
    uint32_t lag_ms;             ///< --lag-compensation MS (sv_config.lag_compensation_ms)
    const struct sim_game *game; ///< the game it gave, loaded by main before the scene
} options;

/// The recording of a server through its tick observer.
typedef struct recorder {
    const char *path; ///< the file written: --record's path, or a free name beside it (path_buf)
    char path_buf[1024];
    rec_writer *w;
    bool failed; ///< reported once on stderr; the server serves on
    uint64_t ticks;
} recorder;

/// Open `o->record` (nothing when NULL) and attach the observer. An existing
/// file is never truncated: when `o->record` exists (an earlier run's
/// recording, perhaps of a match that crashed), the recording goes to the
/// first free name STEM-N.EXT beside it (N from 1 to RECORDER_MAX_NAMES),
/// said on stderr. Prints the reason and returns false when the file cannot
/// be opened.
bool recorder_start(recorder *r, const options *o, sv_server *sv);
#define RECORDER_MAX_NAMES 9999u
/// Detach, finish the file (ENDR) and print where it went, the ticks and the
/// final hash. False when the recording failed at any point.
bool recorder_finish(recorder *r, sv_server *sv, FILE *text);

// ---- --metrics (metrics.c; docs/operations.md) ---------------------------------

#define METRICS_TICK_BUCKETS 13u
/// /healthz fails when the tick loop has not published for this long.
#define METRICS_ALIVE_US 1000000u
/// HTTP connections held at once from one client address (more are closed at
/// once), in all, and the seconds a connection may stay silent.
#define METRICS_PER_ADDRESS 4u
#define METRICS_CONNECTIONS 64u
#define METRICS_IDLE_S 3u

/// What the tick thread publishes after each tick: counters since the start.
typedef struct metrics_snapshot {
    uint64_t alive_us; ///< keel_app_now_us() when published
    uint64_t ticks, overruns, tick_us_sum;
    uint64_t tick_buckets[METRICS_TICK_BUCKETS]; ///< ticks per bucket (not cumulative); above the last: none
    uint32_t tick_rate;
    bool draining, secure;
    bool ready; ///< accepting players: from the start, or with --agones once Ready was accepted
    // with --agones (agones.c): the GameServer's state as keel-server knows it and the SDK thread's counts
    bool agones;
    const char *agones_state; ///< agones_state(): a static string
    agones_counts agones_counts;
    sv_stats sv;
    net_host_stats net;
    bool recording, recording_failed;
    uint64_t recording_ticks;
    uint64_t recording_queue_bytes; ///< the writer's queue at the last look (rec_writer_pending)
    uint32_t crowded;               ///< report_crowded after the last tick
    const char *recording_path;     ///< lives as long as the program
} metrics_snapshot;

typedef struct metrics metrics;

/// Whether this keel-server was built with libmicrohttpd.
bool metrics_available(void);
/// Serve /metrics, /healthz and /readyz on address:*port (*port 0: a free
/// one, written back) from libmicrohttpd's own thread. NULL (the reason
/// printed) when it cannot.
metrics *metrics_start(const char *address, uint32_t *port);
/// The tick thread's publication: never waits (skipped while a scrape copies).
void metrics_publish(metrics *m, const metrics_snapshot *s);
void metrics_stop(metrics *m);
/// The histogram bucket of a tick time (METRICS_TICK_BUCKETS: above the last bound).
uint32_t metrics_tick_bucket(uint64_t tick_us);

// ---- the run's report (report.c) ---------------------------------------------

/// Count one tick's wall time and the CPU time its thread used, us.
void report_tick(uint64_t wall_us, uint64_t cpu_us);
/// Secure mode: the handshake's counts and refusals, two text lines.
void report_handshake(FILE *f, const net_host_stats *ns);
/// With --stats-json, the last line: the whole run's counts and tick times.
void report_summary_json(const sv_server *sv, const net_host_stats *ns, double secs, bool secure);
/// Characters the last tick left marked SIM_CHAR_CROWDED: overlapping others
/// because no free spot was found for them (sim_scene_last_separation).
uint32_t report_crowded(const sv_server *sv);

// ---- the match lifecycle (match.c) -------------------------------------------

typedef struct match {
    const options *o;
    agones *sdk; ///< with --agones
    FILE *text;
    bool started, had_players;
    uint64_t start_tick, empty_ticks;
} match;

/// Before the tick loop: with --agones, start the SDK thread and wait until
/// Ready is accepted (or *stop is set), publishing to `mx` (may be NULL)
/// meanwhile that the program is alive (/healthz 200) but not ready (/readyz
/// 503); `ms->ready` is set once Ready was accepted (at once without
/// --agones). False (the reason printed) when it cannot: exit 1.
bool match_begin(match *m, const options *o, sv_server *sv, FILE *text, volatile sig_atomic_t *stop, metrics *mx,
                 metrics_snapshot *ms);
/// The SDK thread's state and counts into `ms` (atomics only, never waits).
void match_publish(const match *m, metrics_snapshot *ms);
/// After each tick (k ticks run): NULL to go on, or why the run is over.
/// Never waits (except in the test stall it was asked for).
const char *match_after_tick(match *m, uint64_t k, const sv_server *sv);
/// The run ends: unless a signal ended it, ask Agones to shut down.
void match_end(match *m, bool by_signal);
/// After the drain: stop the SDK thread (a requested shutdown sent first) and print its counts.
void match_finish(match *m);

/// keel-server --virtual-bots: the session on a virtual clock (virtual.c).
int run_virtual(const options *o, const struct sim_world *world, const sim_level *level, const sim_map *map,
                const sim_move_settings *settings);

#endif
