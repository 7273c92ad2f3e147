// keel tests: a server and client library bots on the in-memory network
// with a virtual clock, bit-exactly reproducible for a seed. MIT licence,
// see LICENSE.
//
// The same server core (sv_server) and prediction library (cl_client) as
// keel-server and keel-client, on net_memory hosts. Every millisecond of
// virtual time: the network is serviced, the server ticks at its deadlines,
// each client predicts at its own (slightly adjustable) clock. After every
// server tick the harness records the server's state hash, so that each
// client's confirmed state is compared with the server's at the same tick,
// bit for bit (by hash: sim_scene_hash covers every field).
#ifndef KEEL_TEST_PLAY_H
#define KEEL_TEST_PLAY_H

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/sim_game.h>
#include <keel/sv_server.h>

#define PLAY_MAX_BOTS 32
#define PLAY_HASH_RING 4096u

typedef struct play play;
struct play {
    sim_level level;
    sim_world *world;
    sim_move_settings settings;
    net_memory *mem;
    net_host *server_host;
    sv_server *sv;
    uint64_t next_server_us;
    uint32_t nbots;
    net_host *hosts[PLAY_MAX_BOTS];
    cl_client *cls[PLAY_MAX_BOTS];
    cl_bot bots[PLAY_MAX_BOTS];
    bool started[PLAY_MAX_BOTS];
    uint64_t next_us[PLAY_MAX_BOTS];
    uint64_t server_hash[PLAY_HASH_RING];
    uint32_t server_hash_tick[PLAY_HASH_RING];
    uint64_t confirmed_checked, confirmed_differ;
    uint32_t last_checked[PLAY_MAX_BOTS];
    /// Bot i is neither serviced nor predicts while the virtual clock is
    /// below stall_until_ms[i] (a stopped process: what is sent to it waits).
    uint64_t stall_until_ms[PLAY_MAX_BOTS];
    /// Bot i runs only every frame_ms[i] virtual milliseconds (0: every
    /// millisecond): a machine that cannot keep up handles a backlog of
    /// snapshots and predicts several ticks at once.
    uint32_t frame_ms[PLAY_MAX_BOTS];
    /// The server's game (play_init_game; NULL: none).
    const sim_game *game;
    /// With a game: bot i's game command for `tick` (SIM_GAME_COMMAND_MAX_BYTES
    /// bytes at `command`), beside its movement command `in`, which it may
    /// change; NULL: every bot predicts with cl_client_predict.
    void (*game_command)(struct play *p, uint32_t i, uint32_t tick, sim_input *in, void *command);
    void *user; ///< for game_command
};

/// Bot i has the built-in platforms when bit i of client_platforms is set.
void play_init_platforms(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up,
                         const net_memory_link *down, uint64_t seed, bool server_platforms, uint32_t client_platforms);
/// The server runs `server_game` and the bots' clients `client_game` (the
/// same, or another to be refused); the same link both ways.
void play_init_game(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *link, uint64_t seed,
                    const sim_game *server_game, const sim_game *client_game);
/// play_init_game with the server's lag compensation bound (sv_config.
/// lag_compensation_ms; 0: off).
void play_init_game_lag(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *link, uint64_t seed,
                        const sim_game *game, uint32_t lag_compensation_ms);
void play_init(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up, const net_memory_link *down,
               uint64_t seed);
void play_free(play *p);
/// One millisecond of virtual time; without `inputs` every bot sends empty commands.
void play_ms(play *p, bool inputs);
/// The bots' statistics summed.
void play_totals(const play *p, cl_stats *t);
void play_log_totals(const char *name, const play *p, const cl_stats *t);

#endif
