// keel programs: a server session with bots on the in-memory network and a
// virtual clock, run as fast as the CPU allows (keel-server --virtual-bots,
// the recording tests, the cross-build matrix). MIT licence, see LICENSE.
//
// The real server core (sv_server) and the real client library (cl_client)
// with cl_bot bots, as keel-server and keel-client run them, but on
// net_memory hosts whose clock only moves when the session says: every
// virtual millisecond the network is serviced, the server ticks at its
// deadlines and each bot predicts on its own clock. The same configuration
// gives the same session, bit for bit, on the same build (bots aim with
// floating point; their commands are what the recordings hold).
//
// Full clients and light bots: the first `full_clients` bots run the client
// library (prediction, rollback, their confirmed states checked against the
// server's), which costs each of them several times the server's simulation;
// the others are light bots that speak the protocol -- hello, inputs with
// redundancy, acknowledgements -- but steer by the server's scene and send
// each command a few ticks ahead, so that the server sees real connections,
// joins, leaves, late and lost commands at a fraction of the cost.
//
// The bots: bot i plays mode `modes[i % 8]` of platforms, pusher, random,
// pusher, circuit, platforms, random, pusher -- so characters ride the
// platforms, walk into each other and wander. Bot 0 joins at once; the others
// at staggered times in the first seconds. With churn, every bot but bot 0
// leaves after 8 to 30 s of play (one in four without a word: the server
// times it out) and comes back 1 to 8 s later as a new client.
#ifndef KEEL_SESSION_H
#define KEEL_SESSION_H

#include <keel/cl_client.h>
#include <keel/cl_record.h>
#include <keel/net_host.h>
#include <keel/sv_server.h>

#define KEEL_SESSION_MAX_BOTS 64u

typedef struct keel_session_config {
    uint32_t bots;             ///< 1..KEEL_SESSION_MAX_BOTS (default 8)
    uint32_t ticks;            ///< server ticks to run (default 11520: 3 minutes at 64 Hz)
    uint64_t seed;             ///< the network's and the bots' (default 1)
    bool churn;                ///< bots leave and rejoin (default false)
    bool platforms;            ///< the built-in level's elevator and shuttle, on both sides (default true)
    const struct sim_map *map; ///< a .map level's entities, on both sides (sv_config.map; default NULL)
    uint32_t full_clients;     ///< bots 0 .. full_clients - 1 run cl_client (0..bots, default 1)
    net_memory_link link;      ///< each direction (default 25 ms, 5 ms jitter, 0.5% loss, 0.2% duplicated)
    /// The game the server and the full bots run (keel/sim_game.h; default
    /// NULL: none); it outlives the session. The bots draw its commands with
    /// cl_bot_game_command; in a game with fire buttons (keel-arena's
    /// "fire_rail", "fire_rocket": cl_bot_game_fights) every bot plays the
    /// arena mode instead of the mix above: they fight. Light bots send no game payload: with a game
    /// full_clients must be bots (else keel_session_create fails). Client
    /// recordings hold no game commands yet: keel_session_record_client0
    /// records nothing with a game.
    const struct sim_game *game;
} keel_session_config;

keel_session_config keel_session_default_config(void);

typedef struct keel_session_stats {
    uint32_t ticks;           ///< server ticks run
    uint64_t character_ticks; ///< characters simulated by the server, summed over ticks
    uint32_t max_characters;
    uint64_t joins, leaves, silent_leaves; ///< by the bots (silent: timed out by the server)
    uint64_t confirmed_checked;            ///< bots' confirmed states compared with the server's
    uint64_t confirmed_differ;             ///< ... that differed (a determinism bug)
    uint64_t own_mispredictions, unexplained, hash_mismatches, rollbacks;
} keel_session_stats;

typedef struct keel_session keel_session;

/// A session on `world` (made from `level`; both outlive it). NULL on an
/// invalid configuration or settings.
keel_session *keel_session_create(const sim_world *world, const sim_level *level, const sim_move_settings *settings,
                                  const keel_session_config *config);
void keel_session_destroy(keel_session *s);

/// The server: set its observer (sv_server_set_observer) before the first step.
sv_server *keel_session_server(keel_session *s);
/// Bot 0's client (it exists from the start and never leaves): build a
/// cl_record header from it.
cl_client *keel_session_client0(keel_session *s);
/// Record bot 0's calls with `rec` (not owned; close it after the session).
void keel_session_record_client0(keel_session *s, cl_record *rec);

/// One millisecond of virtual time; false once the server has run its ticks.
bool keel_session_step(keel_session *s);
/// Steps until the end.
void keel_session_run(keel_session *s);

void keel_session_stats_get(const keel_session *s, keel_session_stats *out);

#endif
