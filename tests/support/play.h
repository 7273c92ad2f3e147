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
#include <keel/sv_server.h>

#define PLAY_MAX_BOTS 32
#define PLAY_HASH_RING 4096u

typedef struct play {
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
} play;

/// Bot i has the built-in platforms when bit i of client_platforms is set.
void play_init_platforms(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up,
                         const net_memory_link *down, uint64_t seed, bool server_platforms, uint32_t client_platforms);
void play_init(play *p, uint32_t nbots, cl_bot_mode mode, const net_memory_link *up, const net_memory_link *down,
               uint64_t seed);
void play_free(play *p);
/// One millisecond of virtual time; without `inputs` every bot sends empty commands.
void play_ms(play *p, bool inputs);
/// The bots' statistics summed.
void play_totals(const play *p, cl_stats *t);
void play_log_totals(const char *name, const play *p, const cl_stats *t);

#endif
