// keel benchmark: the network -- bandwidth, snapshot size, server tick time
// and client re-simulation time. MIT licence, see LICENSE.
//
// One process runs the dedicated server's core (sv_server) and N bot clients
// (cl_client driven by cl_bot), the same code as keel-server and keel-client,
// on the built-in level, for 8 and for 64 moving bots. Each run has a
// warm-up (the clients connect, get their full state and settle their clock)
// and then a measured window (default 20 s of play) in which it reports:
//
// - bytes per second per client, up and down, payload and wire
//   (net_host_stats of each client's host, mean over the clients);
// - snapshot payload bytes per moving character per snapshot (the server's
//   snapshot bytes / (characters x snapshot messages)) and per second;
// - the server's tick time, median and p99: clock_gettime around each
//   sv_server_tick, snapshots included: CLOCK_THREAD_CPUTIME_ID (the CPU
//   time the tick costs; the target is judged on it) and CLOCK_MONOTONIC
//   (elapsed, which on a shared machine also counts time other processes
//   had the core);
// - the client's re-simulation time per rollback: cl_client_handle is timed
//   from here (the prediction library reads no clock); a call that handled a
//   snapshot and raised cl_stats.rollbacks counts as a rollback call. Such a
//   call also decodes the snapshot and steps the baseline to the snapshot
//   tick (T - B ticks, read from the header) to check the hash; the
//   rollback's time is estimated as the call's time times its share of the
//   ticks stepped (re-simulated / (T - B + re-simulated)). Calls that
//   confirmed without a rollback are timed too; the difference of the means
//   is printed as a second estimate (with 64 bots nearly every snapshot
//   rolls back, so it rests on a handful of calls).
//
// --secure runs ENet with the server in secure mode (docs/security.md): each
// client holds a token issued here, and every datagram is encrypted and
// authenticated; --secure-compare runs each bot count over ENet without and
// with it and prints the two side by side, with what sealing one datagram
// costs.
//
// By default the network is the in-memory one (net_memory, a virtual clock:
// the play costs only CPU time; the wire bytes are the estimate of
// docs/transport.md), 25 ms each way, no loss. --enet runs real ENet on
// 127.0.0.1 in this one process instead: one loop services every host, the
// clock is real, and each run ends by the clock (warm-up + window, plus at
// most 20 s to connect). When the loop cannot keep up with real time (64
// clients predicting on one core) the ticks run late and the report says so.
//
// Bots: random walk (cl_bot CL_BOT_RANDOM) with a 4 m leash by default (the
// default 1 m leash keeps them turning back home most of the time), or
// circuit bots (--mode circuit). "Moving" is checked: the report gives the
// smallest share of ticks, over the characters, in which a character's
// position changed on the server.
//
// Targets printed beside the figures (1 KB = 1000 bytes): upstream at most
// 2.5 KB/s on the wire at 32 packets/s; with 64 moving characters downstream
// at most 200 payload bytes per second per moving character (6 bytes per
// snapshot at 32 snapshots/s) and 14 KB/s on the wire; server tick p99 at
// most 2 ms with 64 bots.
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/net_bits.h>
#include <keel/sim_game.h>
#include <keel/net_token.h>
#include <keel/sv_server.h>

#include "arena.h"
#include "common/bench_game_wire.h"
#include "frame.h"
#include "host_impl.h"

#define MAX_RUNS 8
#define MAX_ID 4096u

typedef struct options {
    uint32_t bots[MAX_RUNS];
    uint32_t runs;
    double seconds, warmup;
    cl_bot_mode mode;
    uint32_t leash_mm;
    uint32_t latency_ms, jitter_ms, loss_permille;
    uint64_t seed;
    bool enet;
    bool secure;           // over ENet: the server needs tokens, every datagram is sealed
    bool compare;          // the downstream at a 150 ms round trip with loss beside a 0 ms link
    bool secure_compare;   // ENet insecure, then secure, side by side
    bool full_rollback;    // clients re-simulate every character on a rollback (cl_config.full_rollback)
    bool island_check;     // clients run the island sync test (cl_config.island_check)
    bool rollback_compare; // each bot count re-simulating everyone, then on islands, side by side
    const sim_game *game;  // --arena: keel-arena on both sides, every bot an arena bot
} options;

// What a run measured, for the side-by-side tables.
typedef struct figures {
    double up_wire, packets_up, datagrams_up, down_payload, down_wire, per_char_s, tick_cpu_p99, tick_p99;
    uint64_t frames_dropped;
    uint32_t playing, nbots;
    double rollback_us, resim_chars; // per rollback, as the clients measured it
} figures;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

// ---- samples ------------------------------------------------------------------------------

typedef struct samples {
    double *v;
    size_t n, cap;
    double sum;
} samples;

static void samples_add(samples *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        double *nv = realloc(s->v, s->cap * sizeof *nv);
        if (!nv) {
            fprintf(stderr, "bench_net: out of memory\n");
            exit(1);
        }
        s->v = nv;
    }
    s->v[s->n++] = x;
    s->sum += x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/// The q-quantile (nearest rank) of the samples; sorts them.
static double quantile(samples *s, double q)
{
    if (s->n == 0)
        return 0;
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    size_t k = (size_t)ceil(q * (double)s->n);
    return s->v[k ? k - 1 : 0];
}

static double mean(const samples *s) { return s->n ? s->sum / (double)s->n : 0; }

// ---- the rig: server and clients in one process ----------------------------------------------

typedef struct rig {
    const options *o;
    uint32_t nbots;
    sim_level level;
    sim_world *world;
    sim_move_settings settings;
    net_memory *mem;   // NULL over ENet
    net_token_key key; // --secure: the backend key the tokens are issued with
    net_host *server_host;
    sv_server *sv;
    uint64_t tick_us, start_us, next_server_us;
    uint64_t real_start_ns;
    bool server_started;
    net_host **hosts;
    cl_client **cls;
    cl_bot *bots;
    bool *started;
    uint64_t *next_us;
    // measurement
    bool measuring;
    samples tick_ms, tick_cpu_ms, tick_snap_ms, tick_nosnap_ms;
    samples handle_rollback_us, handle_plain_us;
    samples rollback_share_us; // per rollback call: its time x re-simulated / (verified + re-simulated) ticks
    uint64_t verified_ticks;   // T - B of the snapshots of rollback calls
    uint64_t ticks_late;       // server ticks run more than a tick after their deadline (ENet)
    // moving check, per character id
    sim_vec3 *last_pos;
    bool *seen;
    uint32_t *moved_ticks, *present_ticks;
    double *path_m;
} rig;

static uint64_t rig_now_us(const rig *r)
{
    if (r->mem)
        return net_memory_now(r->mem) * 1000u;
    return (mono_ns() - r->real_start_ns) / 1000u;
}

// A token for client `id` at 127.0.0.1:port, valid for an hour.
static bool issue_token(const net_token_key *key, uint16_t port, uint64_t id, uint8_t *token)
{
    net_token_params p;
    memset(&p, 0, sizeof p);
    p.create_time = (uint64_t)time(NULL);
    p.expire_time = p.create_time + 3600u;
    p.timeout_s = 10;
    p.client_id = id;
    p.server_count = 1;
    char text[32];
    snprintf(text, sizeof text, "127.0.0.1:%u", (unsigned)port);
    const char *why = NULL;
    if (!net_token_address_parse(text, &p.servers[0]) || !net_token_issue(&p, key, token, &why)) {
        fprintf(stderr, "bench_net: cannot issue a token: %s\n", why ? why : "bad address");
        return false;
    }
    return true;
}

static bool rig_init(rig *r, const options *o, uint32_t nbots)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    r->nbots = nbots;
    if (sim_level_builtin(&r->level) != 0)
        return false;
    r->world = sim_world_create(&r->level, NULL, NULL);
    if (!r->world)
        return false;
    r->settings = sim_move_default_settings();
    r->tick_us = 1000000u / (uint64_t)r->settings.tick_rate;
    net_host_config shc = net_host_default_config();
    shc.max_peers = nbots + 4u;
    shc.max_peers_per_address = nbots + 4u; // every client is 127.0.0.1 over ENet
    net_host_config chc = net_host_default_config();
    const char *why = NULL;
    if (o->secure && !net_token_key_generate(&r->key)) {
        fprintf(stderr, "bench_net: libsodium failed\n");
        return false;
    }
    if (o->secure)
        shc.token_key = &r->key;
    if (o->enet) {
        r->server_host = net_host_listen("127.0.0.1", 0, &shc, &why);
    } else {
        r->mem = net_memory_create(o->seed);
        r->server_host = net_memory_listen(r->mem, "server", &shc);
    }
    if (!r->server_host) {
        fprintf(stderr, "bench_net: cannot listen: %s\n", why ? why : "?");
        return false;
    }
    sv_config sc = sv_default_config();
    sc.max_clients = nbots;
    sc.game = o->game;
    r->sv = sv_server_create(r->world, &r->level, &r->settings, &sc, r->server_host);
    r->hosts = calloc(nbots, sizeof *r->hosts);
    r->cls = calloc(nbots, sizeof *r->cls);
    r->bots = calloc(nbots, sizeof *r->bots);
    r->started = calloc(nbots, sizeof *r->started);
    r->next_us = calloc(nbots, sizeof *r->next_us);
    r->last_pos = calloc(MAX_ID, sizeof *r->last_pos);
    r->seen = calloc(MAX_ID, sizeof *r->seen);
    r->moved_ticks = calloc(MAX_ID, sizeof *r->moved_ticks);
    r->present_ticks = calloc(MAX_ID, sizeof *r->present_ticks);
    r->path_m = calloc(MAX_ID, sizeof *r->path_m);
    if (!r->sv || !r->hosts || !r->cls || !r->bots || !r->started || !r->next_us || !r->last_pos || !r->seen ||
        !r->moved_ticks || !r->present_ticks || !r->path_m)
        return false;
    net_memory_link link = {o->latency_ms, o->jitter_ms, o->loss_permille, 0};
    uint16_t port = net_host_port(r->server_host);
    cl_config cc = cl_default_config();
    cc.full_rollback = o->full_rollback;
    cc.island_check = o->island_check;
    cc.clock_ns = thread_cpu_ns; // the clients time their rollbacks (CPU time, cl_stats.rollback_ns)
    cc.game = o->game;
    for (uint32_t i = 0; i < nbots; i++) {
        uint8_t token[NET_TOKEN_BYTES];
        if (o->secure) {
            if (!issue_token(&r->key, port, i + 1u, token))
                return false;
            chc.connect_token = token;
        }
        r->hosts[i] = o->enet ? net_host_connect("127.0.0.1", port, &chc, &why)
                              : net_memory_connect(r->mem, "server", &link, &link, &chc);
        if (!r->hosts[i]) {
            fprintf(stderr, "bench_net: cannot connect: %s\n", why ? why : "?");
            return false;
        }
        r->cls[i] = cl_client_create(r->world, &r->level, &r->settings, &cc, r->hosts[i]);
        if (!r->cls[i])
            return false;
        cl_bot_init(&r->bots[i], o->game ? CL_BOT_ARENA : o->mode, o->seed * 1000u + i);
        r->bots[i].leash = (sim_fx)((int64_t)o->leash_mm * SIM_FX_ONE / 1000);
    }
    r->real_start_ns = mono_ns();
    return true;
}

static void rig_free(rig *r)
{
    net_token_key_wipe(&r->key);
    for (uint32_t i = 0; r->cls && i < r->nbots; i++) {
        cl_client_destroy(r->cls[i]);
        if (r->hosts[i])
            net_host_destroy(r->hosts[i]);
    }
    sv_server_destroy(r->sv);
    if (r->server_host)
        net_host_destroy(r->server_host);
    net_memory_destroy(r->mem);
    sim_world_destroy(r->world);
    sim_level_free(&r->level);
    free(r->hosts);
    free(r->cls);
    free(r->bots);
    free(r->started);
    free(r->next_us);
    free(r->last_pos);
    free(r->seen);
    free(r->moved_ticks);
    free(r->present_ticks);
    free(r->path_m);
    free(r->tick_ms.v);
    free(r->tick_cpu_ms.v);
    free(r->tick_snap_ms.v);
    free(r->tick_nosnap_ms.v);
    free(r->handle_rollback_us.v);
    free(r->handle_plain_us.v);
    free(r->rollback_share_us.v);
}

static void note_motion(rig *r)
{
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(sv_server_scene(r->sv), &n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = chars[i].id;
        if (id >= MAX_ID)
            continue;
        sim_vec3 p = chars[i].position;
        if (r->measuring && r->seen[id]) {
            sim_vec3 q = r->last_pos[id];
            r->present_ticks[id]++;
            if (p.x != q.x || p.y != q.y || p.z != q.z)
                r->moved_ticks[id]++;
            double dx = (double)(p.x - q.x) / 65536.0, dz = (double)(p.z - q.z) / 65536.0;
            r->path_m[id] += sqrt(dx * dx + dz * dz);
        }
        r->seen[id] = true;
        r->last_pos[id] = p;
    }
}

// T - B of a snapshot message, from its fixed-width header (docs/protocol.md):
// the ticks the client re-simulates from the baseline to check the hash.
static uint32_t snapshot_span(const net_event *ev)
{
    if (net_msg_peek_type(ev->data, ev->length) != NET_MSG_SNAPSHOT)
        return 0;
    net_bit_reader br;
    net_br_init(&br, ev->data, ev->length);
    net_br_u(&br, 4 + 16);
    net_br_u(&br, 32);
    net_br_u(&br, 16);
    net_br_u(&br, 32);
    uint32_t span = net_br_u(&br, 5) + 1u;
    return br.error ? 0 : span;
}

static void handle_client_event(rig *r, uint32_t i, const net_event *ev, uint32_t now_ms)
{
    cl_client *cl = r->cls[i];
    if (ev->type == NET_EVENT_CONNECT)
        cl_client_hello(cl, now_ms);
    bool snapshot = ev->type == NET_EVENT_RECEIVE && ev->channel == NET_CHANNEL_SNAPSHOT;
    if (!snapshot || !r->measuring) {
        cl_client_handle(cl, ev, now_ms);
        return;
    }
    cl_stats before, after;
    cl_client_stats(cl, &before);
    uint64_t t0 = mono_ns();
    cl_client_handle(cl, ev, now_ms);
    uint64_t t1 = mono_ns();
    cl_client_stats(cl, &after);
    double us = (double)(t1 - t0) / 1000.0;
    if (after.rollbacks > before.rollbacks) {
        samples_add(&r->handle_rollback_us, us);
        // The call steps the scene for the hash check (T - B ticks) and
        // for the rollback (the re-simulated ticks); the rollback's share
        // of the call, by ticks, estimates its time.
        uint32_t verified = snapshot_span(ev);
        uint64_t resim = after.resimulated_ticks - before.resimulated_ticks;
        r->verified_ticks += verified;
        samples_add(&r->rollback_share_us, verified + resim ? us * (double)resim / (double)(verified + resim) : 0);
    } else if (after.snapshots > before.snapshots && after.snapshots_stale == before.snapshots_stale &&
               after.snapshots_unusable == before.snapshots_unusable && after.hash_mismatches == before.hash_mismatches)
        samples_add(&r->handle_plain_us, us); // confirmed, prediction was right
}

// One pass: the network, the server's due ticks, each client's due ticks.
static void rig_step(rig *r)
{
    uint64_t now_us = rig_now_us(r);
    uint32_t now_ms = (uint32_t)(now_us / 1000u);
    if (!r->server_started) {
        r->server_started = true;
        r->next_server_us = now_us;
    }
    net_event ev;
    while (net_host_service(r->server_host, &ev, 0) != NET_EVENT_NONE)
        sv_server_handle(r->sv, &ev, now_us, r->next_server_us);
    while (now_us >= r->next_server_us) {
        if (!r->mem && now_us - r->next_server_us > r->tick_us && r->measuring)
            r->ticks_late++;
        bool snapshots = (sv_server_scene_tick(r->sv) + 1u) % sv_default_config().ticks_per_snapshot == 0;
        uint64_t c0 = thread_cpu_ns(), t0 = mono_ns();
        sv_server_tick(r->sv, now_us);
        uint64_t t1 = mono_ns(), c1 = thread_cpu_ns();
        if (r->measuring) {
            samples_add(&r->tick_ms, (double)(t1 - t0) / 1e6);
            samples_add(&r->tick_cpu_ms, (double)(c1 - c0) / 1e6);
            samples_add(snapshots ? &r->tick_snap_ms : &r->tick_nosnap_ms, (double)(c1 - c0) / 1e6);
        }
        note_motion(r);
        r->next_server_us += r->tick_us;
    }
    for (uint32_t i = 0; i < r->nbots; i++) {
        cl_client *cl = r->cls[i];
        while (net_host_service(r->hosts[i], &ev, 0) != NET_EVENT_NONE)
            handle_client_event(r, i, &ev, now_ms);
        if (cl_client_status(cl) != CL_STATUS_PLAYING)
            continue;
        if (!r->started[i]) {
            r->started[i] = true;
            r->next_us[i] = now_us;
        }
        uint32_t due = cl_client_take_catch_up(cl);
        while (now_us >= r->next_us[i]) {
            due++;
            r->next_us[i] += cl_client_tick_us(cl);
        }
        for (uint32_t k = 0; k < due; k++) {
            uint32_t tick = cl_client_predicted_tick(cl);
            sim_input cmd =
                cl_bot_command(&r->bots[i], cl_client_predicted(cl), cl_client_character(cl), &r->level, tick);
            uint8_t fire[SIM_GAME_COMMAND_MAX_BYTES];
            bool pressed = r->o->game && cl_bot_game_command(&r->bots[i], r->o->game, tick, fire, sizeof fire);
            cl_client_predict_game(cl, &cmd, pressed ? fire : NULL, now_ms);
        }
        net_host_flush(r->hosts[i]);
    }
    net_host_flush(r->server_host);
}

// Advance to `until_us` of the rig's clock.
static void rig_run_until(rig *r, uint64_t until_us)
{
    while (rig_now_us(r) < until_us) {
        if (r->mem) {
            net_memory_advance(r->mem, 1);
            rig_step(r);
        } else {
            rig_step(r);
            // Sleep until the next server tick or a millisecond, whichever first.
            uint64_t now = rig_now_us(r);
            uint64_t wake = now + 1000u;
            if (r->next_server_us < wake)
                wake = r->next_server_us;
            if (wake > now)
                sleep_ns((wake - now) * 1000u);
        }
    }
}

static uint32_t rig_playing(const rig *r)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->nbots; i++)
        k += cl_client_status(r->cls[i]) == CL_STATUS_PLAYING;
    return k;
}

// ---- one run ------------------------------------------------------------------------------

typedef struct totals {
    net_host_stats host;    // the clients' hosts, summed
    net_host_stats sv_host; // the server's host
    uint64_t datagrams_up;  // ENet: the datagrams the clients' hosts sent, summed
    cl_stats cl;
    sv_stats sv;
} totals;

static void take_totals(const rig *r, totals *t)
{
    memset(t, 0, sizeof *t);
    net_host_stats_get(r->server_host, &t->sv_host);
    for (uint32_t i = 0; i < r->nbots; i++) {
        net_host_stats h;
        net_host_stats_get(r->hosts[i], &h);
        t->host.payload_sent += h.payload_sent;
        t->host.payload_received += h.payload_received;
        t->host.wire_sent += h.wire_sent;
        t->host.wire_received += h.wire_received;
        t->host.messages_sent += h.messages_sent;
        t->host.messages_received += h.messages_received;
        t->host.sealed_forged += h.sealed_forged;
        t->host.sealed_replayed += h.sealed_replayed;
        t->host.frames_forged += h.frames_forged;
        t->host.frames_replayed += h.frames_replayed;
        uint64_t sent = 0, received = 0;
        if (net_host_enet_datagrams(r->hosts[i], &sent, &received))
            t->datagrams_up += sent;
        cl_stats s;
        cl_client_stats(r->cls[i], &s);
        for (int c = 0; c < CL_CAUSE_COUNT; c++) {
            t->cl.own_mispredictions[c] += s.own_mispredictions[c];
            t->cl.remote_mispredictions[c] += s.remote_mispredictions[c];
        }
        t->cl.rollbacks += s.rollbacks;
        t->cl.resimulated_ticks += s.resimulated_ticks;
        t->cl.resimulated_characters += s.resimulated_characters;
        t->cl.resimulated_character_ticks += s.resimulated_character_ticks;
        t->cl.island_rollbacks += s.island_rollbacks;
        t->cl.island_fallbacks += s.island_fallbacks;
        t->cl.island_retries += s.island_retries;
        t->cl.island_checks += s.island_checks;
        t->cl.island_check_differences += s.island_check_differences;
        t->cl.rollback_ns += s.rollback_ns;
        t->cl.snapshots += s.snapshots;
        t->cl.full_states += s.full_states;
        t->cl.hash_mismatches += s.hash_mismatches;
        t->cl.snapshots_unusable += s.snapshots_unusable;
        t->cl.snapshots_stale += s.snapshots_stale;
        t->cl.messages_malformed += s.messages_malformed;
        t->cl.input_packets += s.input_packets;
        t->cl.commands_sent += s.commands_sent;
        t->cl.capped_ticks += s.capped_ticks;
        t->cl.snapshot_packets_lost += s.snapshot_packets_lost;
        t->cl.snapshots_kept += s.snapshots_kept;
        t->cl.snapshots_kept_applied += s.snapshots_kept_applied;
        t->cl.snapshots_dropped += s.snapshots_dropped;
        t->cl.held_ticks += s.held_ticks;
    }
    sv_server_stats(r->sv, &t->sv);
}

static const char *verdict(bool met) { return met ? "met" : "missed"; }

// Rollback: characters re-simulated per rollback, its time as the clients
// measured it (cl_config.clock_ns), and the sync test when it ran.
static void print_island(const options *o, const cl_stats *a, const cl_stats *b, uint32_t nchar)
{
    uint64_t rollbacks = b->rollbacks - a->rollbacks;
    if (!rollbacks)
        return;
    uint64_t islands = b->island_rollbacks - a->island_rollbacks;
    double chars = (double)(b->resimulated_characters - a->resimulated_characters) / (double)rollbacks;
    double ct = (double)(b->resimulated_character_ticks - a->resimulated_character_ticks) / (double)rollbacks;
    double ticks = (double)(b->resimulated_ticks - a->resimulated_ticks) / (double)rollbacks;
    double us = (double)(b->rollback_ns - a->rollback_ns) / 1000.0 / (double)rollbacks;
    printf("   rollback %s: %.1f of %u characters re-simulated per rollback (%.1f character-ticks over %.2f ticks); "
           "on an island %llu, everyone %llu, island ticks stepped again %llu\n",
           o->full_rollback ? "re-simulating everyone (--full-rollback)" : "on islands", chars, nchar, ct, ticks,
           (unsigned long long)islands, (unsigned long long)(rollbacks - islands),
           (unsigned long long)(b->island_retries - a->island_retries));
    printf("   rollback time measured by the clients (CPU time of the thread around each rollback): %.1f us per "
           "rollback, %.1f us "
           "per re-simulated tick\n",
           us, ticks > 0 ? us / ticks : 0.0);
    if (o->island_check)
        printf("   island sync test: %llu rollbacks re-simulated in full as well, %llu character states differed\n",
               (unsigned long long)(b->island_checks - a->island_checks),
               (unsigned long long)(b->island_check_differences - a->island_check_differences));
    if (nchar >= 64 && !o->full_rollback && !o->rollback_compare)
        printf("     (the target, re-simulation per rollback at 64 moving bots at most a quarter of re-simulating "
               "everyone, is judged by --rollback-compare on the same machine)\n");
}

static int run(const options *o, uint32_t nbots, double *down_payload_out, figures *fig)
{
    rig r;
    if (!rig_init(&r, o, nbots)) {
        fprintf(stderr, "bench_net: setup failed for %u bots\n", nbots);
        rig_free(&r);
        return 1;
    }
    uint64_t cpu0 = mono_ns();
    // Warm-up: everyone playing, then the warm-up time on top.
    uint64_t connect_limit_us = 20000000u;
    while (rig_playing(&r) < nbots && rig_now_us(&r) < connect_limit_us)
        rig_run_until(&r, rig_now_us(&r) + 10000u);
    if (rig_playing(&r) < nbots) {
        fprintf(stderr, "bench_net: only %u of %u bots playing after 20 s\n", rig_playing(&r), nbots);
        rig_free(&r);
        return 1;
    }
    rig_run_until(&r, rig_now_us(&r) + (uint64_t)(o->warmup * 1e6));
    totals a, b;
    take_totals(&r, &a);
    r.measuring = true;
    uint64_t w0 = rig_now_us(&r);
    rig_run_until(&r, w0 + (uint64_t)(o->seconds * 1e6));
    uint64_t w1 = rig_now_us(&r);
    r.measuring = false;
    take_totals(&r, &b);
    double cpu_s = (double)(mono_ns() - cpu0) / 1e9;
    double secs = (double)(w1 - w0) / 1e6;

    uint32_t nchar;
    sim_scene_characters(sv_server_scene(r.sv), &nchar);
    double per = 1.0 / ((double)nbots * secs);
    double up_payload = (double)(b.host.payload_sent - a.host.payload_sent) * per;
    double up_wire = (double)(b.host.wire_sent - a.host.wire_sent) * per;
    double down_payload = (double)(b.host.payload_received - a.host.payload_received) * per;
    double down_wire = (double)(b.host.wire_received - a.host.wire_received) * per;
    double packets_up = (double)(b.cl.input_packets - a.cl.input_packets) * per;
    double datagrams_up = (double)(b.datagrams_up - a.datagrams_up) * per;
    uint64_t snap_msgs =
        (b.sv.snapshots_delta - a.sv.snapshots_delta) + (b.sv.snapshots_full_parts - a.sv.snapshots_full_parts);
    uint64_t snap_bytes = b.sv.snapshot_bytes - a.sv.snapshot_bytes;
    double snaps_per_s = (double)snap_msgs * per;
    double per_char_snap = snap_msgs ? (double)snap_bytes / ((double)nchar * (double)snap_msgs) : 0;
    double per_char_s = (double)snap_bytes * per / (double)nchar;
    // moving
    double min_share = 1.0, path = 0;
    uint32_t counted = 0;
    for (uint32_t id = 0; id < MAX_ID; id++) {
        if (!r.present_ticks[id])
            continue;
        double share = (double)r.moved_ticks[id] / (double)r.present_ticks[id];
        min_share = share < min_share ? share : min_share;
        path += r.path_m[id];
        counted++;
    }
    double speed = counted ? path / ((double)counted * secs) : 0;
    double tick_med = quantile(&r.tick_ms, 0.5), tick_p99 = quantile(&r.tick_ms, 0.99);
    double tick_max = r.tick_ms.n ? r.tick_ms.v[r.tick_ms.n - 1] : 0;
    double cpu_med = quantile(&r.tick_cpu_ms, 0.5), cpu_p99 = quantile(&r.tick_cpu_ms, 0.99);
    double cpu_max = r.tick_cpu_ms.n ? r.tick_cpu_ms.v[r.tick_cpu_ms.n - 1] : 0;
    double snap_med = quantile(&r.tick_snap_ms, 0.5), nosnap_med = quantile(&r.tick_nosnap_ms, 0.5);
    uint64_t rollbacks = b.cl.rollbacks - a.cl.rollbacks;
    uint64_t resim = b.cl.resimulated_ticks - a.cl.resimulated_ticks;
    double rb_mean = mean(&r.handle_rollback_us), plain_mean = mean(&r.handle_plain_us);
    double rb_med = quantile(&r.handle_rollback_us, 0.5), rb_p99 = quantile(&r.handle_rollback_us, 0.99);
    uint64_t own = 0, remote = 0;
    for (int c = 0; c < CL_CAUSE_COUNT; c++) {
        own += b.cl.own_mispredictions[c] - a.cl.own_mispredictions[c];
        remote += b.cl.remote_mispredictions[c] - a.cl.remote_mispredictions[c];
    }

    printf("== %u bots (%s, leash %.1f m)%s, %s, %.1f s measured after a %.1f s warm-up (%.1f s CPU in all)\n", nbots,
           cl_bot_mode_name(o->game ? CL_BOT_ARENA : o->mode), o->leash_mm / 1000.0,
           o->game ? " playing keel-arena" : "",
           o->enet ? "ENet on 127.0.0.1, real time" : "in-memory network, virtual clock", secs, o->warmup, cpu_s);
    if (!o->enet)
        printf("   link %u ms each way, jitter up to %u ms, loss %.1f%%; wire bytes estimated as in "
               "docs/transport.md\n",
               o->latency_ms, o->jitter_ms, o->loss_permille / 10.0);
    printf("   characters %u; moving: each moved in at least %.1f%% of ticks (mean horizontal speed %.2f m/s)\n", nchar,
           100.0 * min_share, speed);
    printf("   up   per client: payload %7.0f B/s  wire %7.0f B/s  (%.1f input packets/s, %.1f B payload each)\n",
           up_payload, up_wire, packets_up, packets_up > 0 ? up_payload / packets_up : 0.0);
    if (o->enet)
        printf("   up   per client: %.1f datagrams/s (%.1f beside the input packets)\n", datagrams_up,
               datagrams_up - packets_up);
    printf("   down per client: payload %7.0f B/s  wire %7.0f B/s  (%.1f snapshot messages/s)\n", down_payload,
           down_wire, snaps_per_s);
    printf("   snapshot payload per moving character: %.2f B per snapshot, %.1f B/s  (%llu delta, %llu full parts)\n",
           per_char_snap, per_char_s, (unsigned long long)(b.sv.snapshots_delta - a.sv.snapshots_delta),
           (unsigned long long)(b.sv.snapshots_full_parts - a.sv.snapshots_full_parts));
    printf("   server tick, CPU time of the thread: median %.3f ms  p99 %.3f ms  max %.3f ms  (%zu ticks; median %.3f "
           "with snapshots, %.3f without)\n",
           cpu_med, cpu_p99, cpu_max, r.tick_cpu_ms.n, snap_med, nosnap_med);
    printf("   server tick, elapsed (CLOCK_MONOTONIC, includes preemption on a busy machine): median %.3f ms  p99 "
           "%.3f ms  max %.3f ms\n",
           tick_med, tick_p99, tick_max);
    if (o->enet) {
        printf("   server ticks run more than a tick late: %llu of %zu (the one loop %s real time)\n",
               (unsigned long long)r.ticks_late, r.tick_ms.n, r.ticks_late ? "fell behind" : "kept up with");
        if (r.ticks_late * 100u > r.tick_ms.n)
            printf("   NOT REPRESENTATIVE: this process cannot run %u clients in real time (each predicts every "
                   "character); late ticks, lost connections and full states distort every figure below\n",
                   nbots);
    }
    printf("   clients playing at the end: %u of %u\n", rig_playing(&r), nbots);
    printf(
        "   client, per snapshot handled (cl_client_handle timed from outside): with a rollback %zu calls, mean %.1f "
        "us, median %.1f, p99 %.1f; without %zu calls, mean %.1f us\n",
        r.handle_rollback_us.n, rb_mean, rb_med, rb_p99, r.handle_plain_us.n, plain_mean);
    printf("   re-simulation per rollback: %.2f ticks (beside %.2f ticks of hash check per call), about %.1f us "
           "(the call's time x its share of the ticks stepped; mean with - mean without: %.1f us%s); %llu "
           "rollbacks\n",
           rollbacks ? (double)resim / (double)rollbacks : 0.0,
           r.handle_rollback_us.n ? (double)r.verified_ticks / (double)r.handle_rollback_us.n : 0.0,
           mean(&r.rollback_share_us), rb_mean - plain_mean,
           r.handle_plain_us.n < 100 ? ", too few calls without a rollback to tell" : "",
           (unsigned long long)rollbacks);
    print_island(o, &a.cl, &b.cl, nchar);
    printf("   mispredictions own %llu, remote %llu; hash mismatches %llu; full states %llu; snapshots lost %llu, "
           "unusable %llu, malformed %llu; server substituted %llu, late %llu\n",
           (unsigned long long)own, (unsigned long long)remote,
           (unsigned long long)(b.cl.hash_mismatches - a.cl.hash_mismatches),
           (unsigned long long)(b.cl.full_states - a.cl.full_states),
           (unsigned long long)(b.cl.snapshot_packets_lost - a.cl.snapshot_packets_lost),
           (unsigned long long)(b.cl.snapshots_unusable - a.cl.snapshots_unusable),
           (unsigned long long)(b.cl.messages_malformed - a.cl.messages_malformed),
           (unsigned long long)(b.sv.commands_substituted - a.sv.commands_substituted),
           (unsigned long long)(b.sv.commands_late - a.sv.commands_late));
    printf("   snapshots kept until their baseline came %llu (applied %llu, dropped %llu); server repairs %llu; "
           "ticks held (commands far too early) %llu, capped %llu\n",
           (unsigned long long)(b.cl.snapshots_kept - a.cl.snapshots_kept),
           (unsigned long long)(b.cl.snapshots_kept_applied - a.cl.snapshots_kept_applied),
           (unsigned long long)(b.cl.snapshots_dropped - a.cl.snapshots_dropped),
           (unsigned long long)(b.sv.snapshots_repair - a.sv.snapshots_repair),
           (unsigned long long)(b.cl.held_ticks - a.cl.held_ticks),
           (unsigned long long)(b.cl.capped_ticks - a.cl.capped_ticks));
    printf("   targets (1 KB = 1000 B):\n");
    printf("     upstream wire <= 2500 B/s at 32 packets/s: %.0f B/s at %.1f/s: %s\n", up_wire, packets_up,
           verdict(up_wire <= 2500.0));
    if (nbots >= 64) {
        printf("     downstream payload <= 200 B/s per moving character (6 B per snapshot): %.1f B/s, %.2f B: %s\n",
               per_char_s, per_char_snap, verdict(per_char_s <= 200.0 && per_char_snap <= 6.0));
        printf("     downstream wire <= 14000 B/s with 64 moving characters: %.0f B/s: %s\n", down_wire,
               verdict(down_wire <= 14000.0));
        printf("     server tick p99 <= 2 ms with 64 bots (CPU time): %.3f ms: %s (elapsed: %.3f ms: %s)\n", cpu_p99,
               verdict(cpu_p99 <= 2.0), tick_p99, verdict(tick_p99 <= 2.0));
    } else {
        printf("     (the downstream and tick targets are for 64 bots)\n");
    }
    if (o->secure)
        printf("   datagrams dropped (forged or replayed), server and clients: %llu\n",
               (unsigned long long)(b.host.frames_forged + b.host.frames_replayed + b.sv_host.frames_forged +
                                    b.sv_host.frames_replayed));
    fflush(stdout);
    if (fig) {
        fig->up_wire = up_wire;
        fig->packets_up = packets_up;
        fig->datagrams_up = datagrams_up;
        fig->down_payload = down_payload;
        fig->down_wire = down_wire;
        fig->per_char_s = per_char_s;
        fig->tick_cpu_p99 = cpu_p99;
        fig->tick_p99 = tick_p99;
        fig->frames_dropped =
            b.host.frames_forged + b.host.frames_replayed + b.sv_host.frames_forged + b.sv_host.frames_replayed;
        fig->playing = rig_playing(&r);
        fig->nbots = nbots;
        uint64_t rb = b.cl.rollbacks - a.cl.rollbacks;
        fig->rollback_us = rb ? (double)(b.cl.rollback_ns - a.cl.rollback_ns) / 1000.0 / (double)rb : 0;
        fig->resim_chars = rb ? (double)(b.cl.resimulated_characters - a.cl.resimulated_characters) / (double)rb : 0;
    }
    rig_free(&r);
    if (down_payload_out)
        *down_payload_out = down_payload;
    return 0;
}

// Each bot count re-simulating everyone on a rollback, then on islands:
// the rollback time per rollback as the clients measured it (CPU time),
// side by side.
static int compare_rollback(const options *o)
{
    int rc = 0;
    for (uint32_t k = 0; k < o->runs; k++) {
        options full = *o, island = *o;
        full.full_rollback = true;
        island.full_rollback = false;
        figures ff, fi;
        memset(&ff, 0, sizeof ff);
        memset(&fi, 0, sizeof fi);
        rc |= run(&full, o->bots[k], NULL, &ff);
        rc |= run(&island, o->bots[k], NULL, &fi);
        double ratio = ff.rollback_us > 0 ? fi.rollback_us / ff.rollback_us : 0;
        printf("== rollback, %u bots: everyone %.1f us per rollback, islands %.1f us (%.1f characters of %u): "
               "%.3f of it\n",
               o->bots[k], ff.rollback_us, fi.rollback_us, fi.resim_chars, o->bots[k], ratio);
        if (o->bots[k] >= 64)
            printf("     re-simulation per rollback at 64 moving bots at most a quarter of re-simulating everyone "
                   "(910 us for 5.2 ticks before islands): %.3f: %s\n",
                   ratio, verdict(ratio > 0 && ratio <= 0.25));
    }
    return rc;
}

// What sealing one datagram of `size` bytes (ENet's, before the trailer)
// costs: frame_seal and frame_open (encrypted after ENet's 4-byte header,
// authenticated whole), CPU time of this thread per datagram, ns (median of
// 5 rounds of 20,000).
static double frame_cost_ns(size_t size)
{
    static const uint8_t k1[SEAL_KEY_BYTES] = {1}, k2[SEAL_KEY_BYTES] = {2};
    frame_peer tx, rx;
    frame_start(&tx, k1, k2, 1, 0, 0);
    frame_start(&rx, k2, k1, 1, 0, 0);
    uint8_t d[1246 + NET_FRAME_BYTES];
    memset(d, 0x5a, sizeof d);
    d[0] = 0x80; // ENet's header with a sent time: 4 bytes in clear
    double best[5];
    for (int round = 0; round < 5; round++) {
        uint64_t t0 = thread_cpu_ns();
        for (int i = 0; i < 20000; i++) {
            size_t n = frame_seal(&tx, d, size);
            if (frame_open(&rx, d, n) != SEAL_OK)
                return -1;
        }
        best[round] = (double)(thread_cpu_ns() - t0) / 20000.0;
    }
    qsort(best, 5, sizeof *best, cmp_double);
    frame_stop(&tx);
    frame_stop(&rx);
    return best[2];
}

// ENet on loopback without and with secure mode, side by side: what sealing
// datagrams adds on the wire and to the server's tick, and what it costs per
// datagram.
static int compare_secure(const options *base)
{
    figures f[2][MAX_RUNS];
    memset(f, 0, sizeof f);
    int rc = 0;
    for (int secure = 0; secure < 2; secure++) {
        options o = *base;
        o.enet = true;
        o.secure = secure != 0;
        o.compare = false;
        for (uint32_t k = 0; k < o.runs; k++)
            rc |= run(&o, o.bots[k], NULL, &f[secure][k]);
    }
    printf("== secure mode beside insecure, ENet on 127.0.0.1 (each %.0f s measured)\n", base->seconds);
    printf("   %-44s %12s %12s\n", "", "insecure", "secure");
    for (uint32_t k = 0; k < base->runs; k++) {
        const figures *a = &f[0][k], *b = &f[1][k];
        printf("   %u bots: clients playing at the end        %12u %12u\n", a->nbots, a->playing, b->playing);
        printf("   up wire per client, B/s (target <= 2500)     %12.0f %12.0f  (%.1f / %.1f packets/s)\n", a->up_wire,
               b->up_wire, a->packets_up, b->packets_up);
        printf("   up datagrams per client per s                %12.1f %12.1f\n", a->datagrams_up, b->datagrams_up);
        printf("   down payload per client, B/s                 %12.0f %12.0f\n", a->down_payload, b->down_payload);
        printf("   down wire per client, B/s                    %12.0f %12.0f\n", a->down_wire, b->down_wire);
        printf("   snapshot payload per moving character, B/s   %12.1f %12.1f  (target <= 200)\n", a->per_char_s,
               b->per_char_s);
        printf("   server tick p99, CPU ms / elapsed ms         %6.3f/%-5.3f %6.3f/%-5.3f\n", a->tick_cpu_p99,
               a->tick_p99, b->tick_cpu_p99, b->tick_p99);
        printf("   datagrams dropped (not authenticated)        %12s %12llu\n", "-",
               (unsigned long long)b->frames_dropped);
        printf("   targets in secure mode: upstream wire <= 2500 B/s: %s; downstream payload <= 200 B/s per "
               "moving character: %s\n",
               verdict(b->up_wire <= 2500.0), verdict(b->per_char_s <= 200.0));
    }
    printf("   each datagram: +%u bytes (2 counter, 16 tag; keel's messages in it are not sealed one by one); seal + "
           "open, CPU time per datagram: %.0f ns at 14 B (an acknowledgement), %.0f ns at 45 B (an input's), %.0f ns "
           "at 158 B (a snapshot's), %.0f ns at 1228 B (a full one)\n",
           (unsigned)NET_FRAME_BYTES, frame_cost_ns(14), frame_cost_ns(45), frame_cost_ns(158), frame_cost_ns(1228));
    return rc;
}

// The downstream payload per client with 8 moving bots at 0 ms and at 75 ms
// each way (20 ms jitter, 5% loss each way), side by side: snapshots chain
// from the last one sent, so it should not grow with the round trip.
static int compare_latency(const options *base)
{
    options o = *base;
    o.enet = false;
    double near = 0, far = 0;
    o.latency_ms = 0, o.jitter_ms = 0, o.loss_permille = 0;
    int rc = run(&o, 8, &near, NULL);
    o.latency_ms = 75, o.jitter_ms = 20, o.loss_permille = 50;
    rc |= run(&o, 8, &far, NULL);
    double ratio = near > 0 ? far / near : 0;
    printf("== downstream payload per client, 8 moving bots: 0 ms link %.0f B/s; 150 ms round trip, 20 ms jitter, 5%% "
           "loss each way %.0f B/s: %.2fx\n",
           near, far, ratio);
    printf("   target <= 1.3x: %s\n", verdict(ratio > 0 && ratio <= 1.3));
    return rc;
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: bench_net [--enet | --secure | --secure-compare] [--bots N[,N...]] [--seconds S] [--warmup S]\n"
        "                 [--mode random|circuit]\n"
        "                 [--leash-mm MM] [--latency-ms MS] [--jitter-ms MS] [--loss-permille N] [--seed N]\n"
        "                 [--no-compare] [--full-rollback] [--island-check] [--rollback-compare] [--arena]\n"
        "defaults: in-memory network, --bots 8,64 --seconds 20 --warmup 3 --mode random --leash-mm 4000\n"
        "          --latency-ms 25 --jitter-ms 0 --loss-permille 0 --seed 1; then (in memory, unless\n"
        "          --no-compare) 8 bots at 0 ms and at 75 ms each way with 20 ms jitter and 5%% loss, side by side\n"
        "--secure: over ENet, the server in secure mode (tokens, sealed datagrams); --secure-compare: each\n"
        "          bot count over ENet insecure then secure, and a side-by-side table with the sealing cost\n"
        "--full-rollback: clients re-simulate every character on a rollback (the reference for islands);\n"
        "--island-check: clients compare every island rollback with a full re-simulation (the sync test);\n"
        "--rollback-compare: each bot count with --full-rollback, then on islands, and the ratio\n"
        "--game-wire: only what the example game's command payload adds to inputs and snapshots\n"
        "--arena: keel-arena (games/arena) on the server and the clients, every bot an arena bot\n"
        "          (cl_bot's arena mode: they fight); with a game every rollback re-simulates everyone\n");
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    o.bots[0] = 8;
    o.bots[1] = 64;
    o.runs = 2;
    o.seconds = 20;
    o.warmup = 3;
    o.mode = CL_BOT_RANDOM;
    o.leash_mm = 4000;
    o.latency_ms = 25;
    o.seed = 1;
    o.compare = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--game-wire") == 0) {
            return bench_game_wire();
        } else if (strcmp(a, "--enet") == 0) {
            o.enet = true;
        } else if (strcmp(a, "--secure") == 0) {
            o.enet = o.secure = true;
        } else if (strcmp(a, "--secure-compare") == 0) {
            o.secure_compare = true;
        } else if (strcmp(a, "--bots") == 0 && v) {
            o.runs = 0;
            char *end = NULL;
            const char *p = v;
            while (*p && o.runs < MAX_RUNS) {
                unsigned long n = strtoul(p, &end, 10);
                if (end == p || n < 1 || n > NET_MAX_CHARACTERS) {
                    usage();
                    return 2;
                }
                o.bots[o.runs++] = (uint32_t)n;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') {
                    usage();
                    return 2;
                }
            }
            i++;
        } else if (strcmp(a, "--seconds") == 0 && v) {
            o.seconds = atof(v);
            i++;
        } else if (strcmp(a, "--warmup") == 0 && v) {
            o.warmup = atof(v);
            i++;
        } else if (strcmp(a, "--mode") == 0 && v) {
            int m = cl_bot_mode_parse(v);
            if (m != CL_BOT_RANDOM && m != CL_BOT_CIRCUIT) {
                usage();
                return 2;
            }
            o.mode = (cl_bot_mode)m;
            i++;
        } else if (strcmp(a, "--leash-mm") == 0 && v) {
            o.leash_mm = (uint32_t)strtoul(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--latency-ms") == 0 && v) {
            o.latency_ms = (uint32_t)strtoul(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--jitter-ms") == 0 && v) {
            o.jitter_ms = (uint32_t)strtoul(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--loss-permille") == 0 && v) {
            o.loss_permille = (uint32_t)strtoul(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--no-compare") == 0) {
            o.compare = false;
        } else if (strcmp(a, "--arena") == 0) {
            static sim_game *arena; // lives until the process ends
            if (!arena && !(arena = sim_game_create(arena_game(), NULL))) {
                fputs("bench_net: cannot create keel-arena\n", stderr);
                return 1;
            }
            o.game = arena;
        } else if (strcmp(a, "--full-rollback") == 0) {
            o.full_rollback = true;
        } else if (strcmp(a, "--island-check") == 0) {
            o.island_check = true;
        } else if (strcmp(a, "--rollback-compare") == 0) {
            o.rollback_compare = true;
        } else if (strcmp(a, "--seed") == 0 && v) {
            o.seed = strtoull(v, NULL, 10);
            i++;
        } else {
            usage();
            return 2;
        }
    }
    if (o.seconds <= 0 || o.seconds > 600 || o.warmup < 0 || o.warmup > 60 || o.leash_mm > 100000 ||
        o.jitter_ms > 1000 || o.loss_permille > 1000 || o.latency_ms > 10000) {
        usage();
        return 2;
    }
    if (o.secure_compare)
        return compare_secure(&o);
    if (o.rollback_compare)
        return compare_rollback(&o);
    int rc = 0;
    for (uint32_t k = 0; k < o.runs; k++)
        rc |= run(&o, o.bots[k], NULL, NULL);
    if (o.compare && !o.enet)
        rc |= compare_latency(&o);
    return rc;
}
