// keel server: clients, command buffers, the tick and snapshots.
// MIT licence, see LICENSE.
//
// Invariants: clients[] slots are either free or hold one connected peer;
// a client's character exists in the scene from the tick it joined until the
// tick after it left; history records every tick's leaves, joins and the
// command each character ran, which is all a client needs besides its
// acknowledged state to compute the server's state exactly.
#include <keel/sv_server.h>

#include <keel/sim_game.h>
#include <keel/sim_spawn.h>

#include <stdlib.h>
#include <string.h>

#include "sv_internal.h"

#define SV_COOKIE 0x73727672u
// Spawn spots found at creation: one per client, at least 64.
#define MIN_SPAWN_SPOTS 64u

sv_config sv_default_config(void)
{
    sv_config c = {0};
    c.max_clients = 64;
    c.ticks_per_snapshot = 2;
    c.max_commands_per_second = 0; // 0: 2 x tick rate + 32
    c.max_malformed_per_second = 64;
    c.max_input_packets_per_second = 0; // 0: 4 x tick rate
    c.hello_timeout_ms = 5000;
    c.platforms = false;
    c.lag_compensation_ms = 400;
    c.cookie = SV_COOKIE;
    return c;
}

// A .map's movers and water into the scene, and its spawn points (with
// their yaws) in place of the searched spots. False when out of memory or
// the scene refuses a mover.
static bool map_setup(sv_server *sv, const sim_level *level)
{
    const sim_map *map = sv->config.map;
    if (!map)
        return true;
    if (sim_map_add_to_scene(map, sv->scene, sv->settings.tick_rate, map->unit_m, SIM_MAP_FIRST_PLATFORM_ID, NULL,
                             NULL) != 0)
        return false;
    uint32_t n = sim_map_spawns(map, level, NULL, 0);
    if (n == 0)
        return true; // no spawn points: the search, as on an OBJ level
    sim_map_spawn *sp = calloc(n, sizeof *sp);
    sim_vec3 *feet = calloc(n, sizeof *feet);
    sv->spawn_yaws = calloc(n, sizeof *sv->spawn_yaws);
    if (!sp || !feet || !sv->spawn_yaws) {
        free(sp);
        free(feet);
        return false;
    }
    sim_map_spawns(map, level, sp, n);
    for (uint32_t i = 0; i < n; i++) {
        feet[i] = sp[i].feet;
        sv->spawn_yaws[i] = sp[i].yaw;
    }
    free(sp);
    free(sv->spawns);
    sv->spawns = feet;
    sv->spawn_count = n;
    return true;
}

sv_server *sv_server_create(const sim_world *world, const sim_level *level, const sim_move_settings *settings,
                            const sv_config *config, net_host *host)
{
    if (!world || !level || !host || !config || config->cookie != SV_COOKIE ||
        !sim_move_settings_check(settings, NULL) || config->max_clients < 1 ||
        config->max_clients > NET_MAX_CHARACTERS || config->ticks_per_snapshot < 1 || config->ticks_per_snapshot > 16)
        return NULL;
    sv_server *sv = calloc(1, sizeof *sv);
    if (!sv)
        return NULL;
    sv->world = world;
    sv->level = level;
    sv->settings = *settings;
    sv->config = *config;
    if (sv->config.max_commands_per_second == 0)
        sv->config.max_commands_per_second = 2u * (uint32_t)settings->tick_rate + 32u;
    if (sv->config.max_input_packets_per_second == 0)
        sv->config.max_input_packets_per_second = 4u * (uint32_t)settings->tick_rate;
    sv->host = host;
    sv->next_id = 1;
    sv->tick_us = 1000000u / (uint64_t)settings->tick_rate;
    uint32_t n = config->max_clients;
    sv->scene = sim_scene_create_game(world, settings, n, config->game);
    sv->clients = calloc(n, sizeof *sv->clients);
    sv->pending_leaves = calloc(n, sizeof *sv->pending_leaves);
    sv->waiting_capacity = 4096; // ENet's most peers
    sv->waiting_peer = calloc(sv->waiting_capacity, sizeof *sv->waiting_peer);
    sv->waiting_since_us = calloc(sv->waiting_capacity, sizeof *sv->waiting_since_us);
    sv->snap_join_cap = n * 2;
    sv->snap_leave_cap = n * 2;
    sv->snap_command_cap = n * NET_MAX_SNAPSHOT_TICKS;
    sv->snap_joins = calloc(sv->snap_join_cap, sizeof *sv->snap_joins);
    sv->snap_leaves = calloc(sv->snap_leave_cap, sizeof *sv->snap_leaves);
    sv->snap_commands = calloc(sv->snap_command_cap, sizeof *sv->snap_commands);
    sv->obs_leaves = calloc(n, sizeof *sv->obs_leaves);
    sv->obs_joins = calloc(n, sizeof *sv->obs_joins);
    sv->obs_commands = calloc(n, sizeof *sv->obs_commands);
    sv->obs_game_bytes = net_game_command_bytes(config->game);
    sv->obs_game = calloc(n ? n : 1u, sv->obs_game_bytes ? sv->obs_game_bytes : 1u);
    if (!sv->scene || !sv->clients || !sv->pending_leaves || !sv->waiting_peer || !sv->waiting_since_us ||
        !sv->snap_joins || !sv->snap_leaves || !sv->snap_commands || !sv->obs_leaves || !sv->obs_joins ||
        !sv->obs_commands || !sv->obs_game || !sv_history_init(&sv->history, n)) {
        sv_server_destroy(sv);
        return NULL;
    }
    const sim_marker *sp = sim_level_find_marker(level, "spawn");
    sv->spawn_origin = sp ? sp->position : sim_v3_zero();
    // The same search the scene's respawns use (sim_spawn.h): outward from
    // the spawn markers, or seeded open floors on a level without them.
    uint32_t cap = n > MIN_SPAWN_SPOTS ? n : MIN_SPAWN_SPOTS;
    sv->spawns = calloc(cap, sizeof *sv->spawns);
    if (!sv->spawns) {
        sv_server_destroy(sv);
        return NULL;
    }
    if (!map_setup(sv, level)) {
        sv_server_destroy(sv);
        return NULL;
    }
    if (!sv->spawn_yaws) {
        sim_spawn_settings ss = sim_spawn_default_settings(settings);
        sv->spawn_count = sim_spawn_spots(world, &ss, sv->spawns, cap);
    }
    if (config->platforms) // ids far above any character's
        sim_scene_add_area_platforms(sv->scene, level, 0x7FFF0001u, 0x7FFF0002u);
    if (!sv_lag_init(sv)) {
        sv_server_destroy(sv);
        return NULL;
    }
    // After the platforms: clients must have built the same ones.
    sv->identity = net_identity_make(settings, level, sv->scene);
    if (!net_identity_set_game(&sv->identity, config->game)) { // a payload the protocol cannot carry
        sv_server_destroy(sv);
        return NULL;
    }
    return sv;
}

void sv_server_destroy(sv_server *sv)
{
    if (!sv)
        return;
    sim_scene_destroy(sv->scene);
    free(sv->spawns);
    free(sv->spawn_yaws);
    free(sv->clients);
    free(sv->pending_leaves);
    free(sv->waiting_peer);
    free(sv->waiting_since_us);
    free(sv->snap_joins);
    free(sv->snap_leaves);
    free(sv->snap_commands);
    free(sv->obs_leaves);
    free(sv->obs_joins);
    free(sv->obs_commands);
    free(sv->obs_game);
    free(sv->save);
    sv_lag_free(sv);
    sv_history_free(&sv->history);
    free(sv);
}

uint32_t sv_server_scene_tick(const sv_server *sv) { return sim_scene_tick(sv->scene); }
const sim_scene *sv_server_scene(const sv_server *sv) { return sv->scene; }
net_sim_identity sv_server_identity(const sv_server *sv) { return sv->identity; }
const sim_move_settings *sv_server_settings(const sv_server *sv) { return &sv->settings; }

void sv_server_set_observer(sv_server *sv, sv_tick_observer fn, void *ctx)
{
    sv->observer = fn;
    sv->observer_ctx = fn ? ctx : NULL;
}

bool sv_server_fill_header(const sv_server *sv, rec_header *h)
{
    uint32_t np = sim_scene_platform_count(sv->scene), nw = sim_scene_water_count(sv->scene);
    if (np > REC_MAX_PLATFORMS || nw > REC_MAX_WATERS)
        return false;
    h->kind = REC_KIND_SCENE;
    h->settings = sv->settings;
    h->settings_digest = sv->identity.settings_digest;
    h->level.digest = sv->identity.level_digest;
    memset(h->platforms, 0, sizeof h->platforms);
    memset(h->waters, 0, sizeof h->waters);
    rec_header_set_scene(h, sv->scene); // platforms, water, the game's identity
    h->max_characters = sim_scene_capacity(sv->scene);
    h->substitutes_marked = true; // the observer's ticks mark them
    return true;
}

void sv_server_stats(const sv_server *sv, sv_stats *stats)
{
    *stats = sv->stats;
    uint32_t k = 0;
    for (uint32_t i = 0; i < sv->config.max_clients; i++)
        k += sv->clients[i].used && sv->clients[i].joined;
    stats->clients = k;
}

// ---- clients ----------------------------------------------------------------------------

static sv_client *client_of_peer(sv_server *sv, uint32_t peer)
{
    for (uint32_t i = 0; i < sv->config.max_clients; i++)
        if (sv->clients[i].used && sv->clients[i].peer == peer)
            return &sv->clients[i];
    return NULL;
}

void sv_send_refusal(sv_server *sv, uint32_t peer, net_refuse_code code, const char *reason)
{
    net_refuse r;
    memset(&r, 0, sizeof r);
    r.code = (uint8_t)code;
    size_t n = strlen(reason);
    if (n > NET_REASON_MAX)
        n = NET_REASON_MAX;
    memcpy(r.reason, reason, n);
    size_t len = net_refuse_encode(&r, sv->packet, sizeof sv->packet);
    if (len)
        net_host_send(sv->host, peer, NET_CHANNEL_CONTROL, sv->packet, len);
    net_host_flush(sv->host);
    net_host_disconnect(sv->host, peer);
}

static void send_refuse(sv_server *sv, uint32_t peer, net_refuse_code code, const char *reason)
{
    sv_send_refusal(sv, peer, code, reason);
    sv->stats.clients_refused++;
}

// The client is gone: `reason` is why its connection ended, or
// NET_DISCONNECT_NONE when the server drops it for misbehaving.
static void drop_client(sv_server *sv, sv_client *c, net_disconnect_reason reason)
{
    if (c->joined && sv->pending_leave_count < sv->config.max_clients)
        sv->pending_leaves[sv->pending_leave_count++] = c->id;
    if (reason == NET_DISCONNECT_NONE) {
        net_host_disconnect(sv->host, c->peer);
        sv->stats.clients_dropped++;
    } else if (reason == NET_DISCONNECT_TIMEOUT) {
        sv->stats.clients_timed_out++;
    } else {
        sv->stats.clients_left++;
    }
    memset(c, 0, sizeof *c);
}

// A malformed message: counted, and a client that keeps sending them is dropped.
static void malformed(sv_server *sv, sv_client *c)
{
    sv->stats.messages_malformed++;
    if (!c)
        return;
    if (sv->now_us - c->malformed_window_start_us >= 1000000u) {
        c->malformed_window_start_us = sv->now_us;
        c->malformed_in_window = 0;
    }
    if (++c->malformed_in_window > sv->config.max_malformed_per_second)
        drop_client(sv, c, NET_DISCONNECT_NONE);
}

// ---- connections that have not said hello --------------------------------------------

static void waiting_remove(sv_server *sv, uint32_t peer)
{
    for (uint32_t i = 0; i < sv->waiting_count; i++) {
        if (sv->waiting_peer[i] == peer) {
            memmove(&sv->waiting_peer[i], &sv->waiting_peer[i + 1], (sv->waiting_count - i - 1) * sizeof(uint32_t));
            memmove(&sv->waiting_since_us[i], &sv->waiting_since_us[i + 1],
                    (sv->waiting_count - i - 1) * sizeof(uint64_t));
            sv->waiting_count--;
            return;
        }
    }
}

static void waiting_add(sv_server *sv, uint32_t peer)
{
    waiting_remove(sv, peer);
    if (sv->waiting_count == sv->waiting_capacity) { // cannot happen with ENet's 4095 peers
        net_host_disconnect(sv->host, sv->waiting_peer[0]);
        waiting_remove(sv, sv->waiting_peer[0]);
    }
    sv->waiting_peer[sv->waiting_count] = peer;
    sv->waiting_since_us[sv->waiting_count] = sv->now_us;
    sv->waiting_count++;
}

// Close the connections that said no hello in time: a slot is not free to hold.
static void waiting_expire(sv_server *sv)
{
    uint64_t limit = (uint64_t)sv->config.hello_timeout_ms * 1000u;
    while (sv->waiting_count && sv->now_us - sv->waiting_since_us[0] >= limit) {
        net_host_disconnect(sv->host, sv->waiting_peer[0]);
        sv->stats.hello_timeouts++;
        waiting_remove(sv, sv->waiting_peer[0]);
    }
}

static void handle_hello(sv_server *sv, uint32_t peer, const uint8_t *data, size_t len)
{
    waiting_remove(sv, peer);
    sv_client *c = client_of_peer(sv, peer);
    if (sv->draining && !c) {
        sv_drain_refuse(sv, peer);
        return;
    }
    net_hello h;
    if (!net_hello_decode(data, len, &h)) {
        uint16_t version;
        // Another version's hello need not decode as ours: refuse it as
        // another version, which says what to do, rather than as malformed.
        if (!c && net_hello_peek_version(data, len, &version) && version != NET_PROTOCOL_VERSION) {
            send_refuse(sv, peer, NET_REFUSE_PROTOCOL, "protocol version differs from the server's");
            return;
        }
        sv->stats.messages_malformed++;
        if (c)
            drop_client(sv, c, NET_DISCONNECT_NONE);
        else
            send_refuse(sv, peer, NET_REFUSE_BAD_HELLO, "malformed hello");
        return;
    }
    if (c) { // a second hello: a confused or hostile client
        sv->stats.messages_unexpected++;
        return;
    }
    if (h.protocol_version != NET_PROTOCOL_VERSION) {
        send_refuse(sv, peer, NET_REFUSE_PROTOCOL, "protocol version differs from the server's");
        return;
    }
    char msg[NET_REASON_MAX + 1];
    if (!net_identity_check(&h.identity, &sv->identity, msg, sizeof msg)) {
        send_refuse(sv, peer, NET_REFUSE_IDENTITY, msg);
        return;
    }
    for (uint32_t i = 0; i < sv->config.max_clients; i++) {
        sv_client *f = &sv->clients[i];
        if (f->used)
            continue;
        memset(f, 0, sizeof *f);
        f->used = true;
        f->peer = peer;
        f->ack_tick = NET_TICK_NONE;
        f->last_applied_tick = NET_TICK_NONE;
        sv_send_reset(&f->send);
        f->hello_time = h.client_time_ms;
        for (uint32_t k = 0; k < CMD_RING; k++)
            f->ring[k].tick = f->seen[k].tick = NET_TICK_NONE;
        return; // joins at the next tick
    }
    send_refuse(sv, peer, NET_REFUSE_FULL, "server full");
}

static int32_t clamp_margin(int64_t q8)
{
    const int64_t lim = (int64_t)1 << 23;
    return (int32_t)(q8 > lim ? lim : (q8 < -lim ? -lim : q8));
}

static void handle_input(sv_server *sv, sv_client *c, const uint8_t *data, size_t len, uint64_t next_tick_us)
{
    net_input in;
    if (!net_input_decode_game(data, len, sv->config.game, &in)) {
        malformed(sv, c);
        return;
    }
    if (!c->joined && in.count > 0) {
        sv->stats.messages_unexpected++;
        return;
    }
    uint32_t now_tick = sim_scene_tick(sv->scene);
    // Round-trip bookkeeping: the newest packet by sequence (wrapping). A
    // client that has said hello may ping (count 0) before it joins.
    sv->stats.input_packets++;
    c->last_input_us = sv->now_us;
    int16_t gap = c->has_sequence ? (int16_t)(uint16_t)(in.sequence - c->newest_sequence) : 1;
    if (gap > 1)
        sv->stats.input_packets_lost += (uint64_t)(gap - 1); // (a reordered one arriving later is taken back)
    if (gap < 0 && sv->stats.input_packets_lost > 0) {
        sv->stats.input_packets_lost--;
        sv->stats.input_packets_reordered++;
    }
    bool newest = !c->has_sequence || gap > 0;
    if (newest) {
        c->has_sequence = true;
        c->newest_sequence = in.sequence;
        c->client_time = in.client_time_ms;
        c->client_time_at_us = sv->now_us;
    }
    if (!c->joined)
        return;
    // The acknowledged state only moves forward, and never past now; what
    // the client holds beyond it comes with the newest packet.
    if (in.ack_tick != NET_TICK_NONE && in.ack_tick <= now_tick && in.ack_tick >= c->join_tick &&
        (c->ack_tick == NET_TICK_NONE || in.ack_tick > c->ack_tick)) {
        sv_send_acked(sv, c, c->ack_tick, in.ack_tick);
        c->ack_tick = in.ack_tick;
        c->held_mask = 0;
    }
    if (newest && in.ack_tick == c->ack_tick)
        c->held_mask = in.held_mask;
    uint32_t first_new = NET_TICK_NONE; // the oldest command this packet brought first (or late)
    for (uint32_t i = 0; i < in.count; i++) {
        uint32_t t = in.newest_tick - (in.count - 1u - i);
        sv_cmd_slot *seen = &c->seen[t % CMD_RING];
        if (seen->tick != t && (t >= now_tick ? t - now_tick <= NET_MAX_SNAPSHOT_TICKS : now_tick - t < CMD_RING)) {
            // As it came (a late one too): what the client predicted with.
            seen->tick = t;
            seen->cmd = in.commands[i];
            seen->cmd.tick = t;
            memcpy(seen->game, in.game_commands[i], sizeof seen->game);
        }
        if (t < now_tick) {
            // Already run: a redundant copy, or one that came too late
            // (counted once per tick, however many copies follow).
            uint8_t *ran = &c->ran_own[t % CMD_RING];
            if (now_tick - t >= CMD_RING || t < c->join_tick || *ran != RAN_SUBSTITUTE) {
                sv->stats.commands_duplicate++;
            } else {
                sv->stats.commands_late++;
                *ran = RAN_LATE;
                if (first_new == NET_TICK_NONE)
                    first_new = t; // late: a negative margin, which the client must hear of
            }
            continue;
        }
        if (t - now_tick > NET_MAX_SNAPSHOT_TICKS) {
            sv->stats.commands_out_of_window++;
            continue;
        }
        sv_cmd_slot *s = &c->ring[t % CMD_RING];
        if (s->tick == t) {
            sv->stats.commands_duplicate++;
            continue;
        }
        if (now_tick - c->window_start_tick >= (uint32_t)sv->settings.tick_rate) {
            c->window_start_tick = now_tick;
            c->window_commands = 0;
        }
        if (++c->window_commands > sv->config.max_commands_per_second) {
            sv->stats.commands_rate_limited++;
            continue;
        }
        s->tick = t;
        s->cmd = in.commands[i];
        s->cmd.tick = t;
        memcpy(s->game, in.game_commands[i], sizeof s->game);
        sv->stats.commands_received++;
        if (first_new == NET_TICK_NONE)
            first_new = t;
    }
    // How early commands arrive: the deadline of the oldest one this packet
    // delivered first (a packet carries several new ones when it is sent
    // every few ticks; the oldest has the least time to spare) minus now, in
    // 1/256 tick. A packet with nothing new (all copies) says nothing.
    if (first_new == NET_TICK_NONE)
        return;
    int64_t ahead_us =
        ((int64_t)first_new - (int64_t)now_tick) * (int64_t)sv->tick_us + (int64_t)next_tick_us - (int64_t)sv->now_us;
    int32_t margin = clamp_margin(ahead_us * 256 / (int64_t)sv->tick_us);
    c->margin_q8 = margin;
    if (!c->margin_seen || margin < c->margin_min_q8)
        c->margin_min_q8 = margin;
    c->margin_seen = true;
}

void sv_server_handle(sv_server *sv, const net_event *ev, uint64_t now_us, uint64_t next_tick_us)
{
    sv->now_us = now_us;
    switch (ev->type) {
    case NET_EVENT_CONNECT:
        waiting_add(sv, ev->peer); // nothing until its hello, and not for long
        break;
    case NET_EVENT_DISCONNECT: {
        waiting_remove(sv, ev->peer);
        sv_client *c = client_of_peer(sv, ev->peer);
        if (c)
            drop_client(sv, c,
                        ev->reason == NET_DISCONNECT_NONE ? NET_DISCONNECT_LEFT : (net_disconnect_reason)ev->reason);
        break;
    }
    case NET_EVENT_RECEIVE: {
        sv_client *c = client_of_peer(sv, ev->peer);
        net_msg_type type = net_msg_peek_type(ev->data, ev->length);
        if (ev->channel == NET_CHANNEL_CONTROL && type == NET_MSG_HELLO)
            handle_hello(sv, ev->peer, ev->data, ev->length);
        else if (ev->channel == NET_CHANNEL_INPUT && type == NET_MSG_INPUT && c) {
            // A flood is cut off before it is even decoded.
            if (now_us - c->packet_window_start_us >= 1000000u) {
                c->packet_window_start_us = now_us;
                c->packets_in_window = 0;
            }
            if (++c->packets_in_window > sv->config.max_input_packets_per_second)
                sv->stats.packets_rate_limited++;
            else
                handle_input(sv, c, ev->data, ev->length, next_tick_us);
        } else if (!c && type != NET_MSG_INPUT)
            malformed(sv, NULL);
        else if (!c)
            sv->stats.messages_unexpected++;
        else
            malformed(sv, c);
        break;
    }
    default: break;
    }
}

// ---- the tick ---------------------------------------------------------------------------------

// The spawn for a joining character: the first spawn spot that no
// character stands on (within a body width and 2 m in height); all taken:
// spot id mod count (sim_scene_place_character then finds the nearest free
// place); no spots at all (an empty level): the spawn marker or the origin.
// *yaw: a .map spawn point's own; else the most open view (sim_spawn_yaw_open).
static sim_vec3 spawn_point(sv_server *sv, uint32_t id, sim_angle *yaw)
{
    sim_vec3 feet = sv->spawn_origin;
    uint32_t k = sv->spawn_count;
    if (sv->spawn_count > 0) {
        k = sim_scene_free_spot(sv->scene, sv->spawns, sv->spawn_count, 0, 0);
        k = k < sv->spawn_count ? k : id % sv->spawn_count;
        feet = sv->spawns[k];
    }
    if (sv->spawn_yaws && k < sv->spawn_count) {
        *yaw = sv->spawn_yaws[k];
    } else {
        // Into the open: along the longest clear view from the spot (not at
        // the wall or the ramp that may stand before a spawn marker), of
        // those clear to 32 m the one nearest the middle of the level.
        sim_aabb b = sim_world_get_stats(sv->world).bounds;
        int64_t mx = ((int64_t)b.min.x + b.max.x) / 2, mz = ((int64_t)b.min.z + b.max.z) / 2;
        *yaw = sim_spawn_yaw_open(sv->world, feet, (sim_fx)((mx - feet.x) / 2), (sim_fx)((mz - feet.z) / 2));
    }
    return feet;
}

// The tick just run, as a recording takes it: the history record in the
// recording's types.
static void notify_observer(sv_server *sv, const sv_tick_record *r)
{
    rec_tick t;
    memset(&t, 0, sizeof t);
    t.tick = r->tick;
    for (uint32_t i = 0; i < r->leave_count; i++)
        sv->obs_leaves[i] = r->leaves[i].id;
    for (uint32_t i = 0; i < r->join_count; i++)
        sv->obs_joins[i] = r->joins[i].state;
    for (uint32_t i = 0; i < r->command_count; i++) {
        sv->obs_commands[i].id = r->commands[i].id;
        sv->obs_commands[i].input = r->commands[i].command;
        sv->obs_commands[i].substituted = false;
        if (sv->obs_game_bytes) // the payload as it came: packed by the game's schema
            memcpy(sv->obs_game + (size_t)i * sv->obs_game_bytes, r->commands[i].game, sv->obs_game_bytes);
    }
    // The substitutes this tick ran (the recording marks them: a substitute
    // holds the tick it ran in, like an own command).
    for (uint32_t i = 0; i < sv->config.max_clients; i++) {
        const sv_client *c = &sv->clients[i];
        if (!c->used || !c->joined || c->ran_own[r->tick % CMD_RING] != RAN_SUBSTITUTE)
            continue;
        uint32_t at = rec_command_find(sv->obs_commands, r->command_count, c->id);
        if (at < r->command_count)
            sv->obs_commands[at].substituted = true;
    }
    t.leave_count = r->leave_count;
    t.join_count = r->join_count;
    t.command_count = r->command_count;
    t.leaves = sv->obs_leaves;
    t.joins = sv->obs_joins;
    t.commands = sv->obs_commands;
    t.game_commands = sv->obs_game_bytes ? sv->obs_game : NULL;
    sv->observer(sv->observer_ctx, &t, sv->scene);
}

void sv_server_tick(sv_server *sv, uint64_t now_us)
{
    sv->now_us = now_us;
    waiting_expire(sv);
    uint32_t t = sim_scene_tick(sv->scene);
    sv_tick_record *rec = sv_history_begin(&sv->history, t);
    // Leaves, then joins, at the start of the tick. The leaves in id order
    // (they came in the order the connections ended; a snapshot lists them
    // by id, and one that holds two out of order cannot be encoded).
    for (uint32_t i = 1; i < sv->pending_leave_count; i++) {
        uint32_t id = sv->pending_leaves[i], k = i;
        for (; k > 0 && sv->pending_leaves[k - 1] > id; k--)
            sv->pending_leaves[k] = sv->pending_leaves[k - 1];
        sv->pending_leaves[k] = id;
    }
    for (uint32_t i = 0; i < sv->pending_leave_count; i++) {
        if (sim_scene_remove_character(sv->scene, sv->pending_leaves[i])) {
            rec->leaves[rec->leave_count].tick = t;
            rec->leaves[rec->leave_count].id = sv->pending_leaves[i];
            rec->leave_count++;
        }
    }
    sv->pending_leave_count = 0;
    for (uint32_t i = 0; i < sv->config.max_clients; i++) {
        sv_client *c = &sv->clients[i];
        if (!c->used || c->joined)
            continue;
        uint32_t id = sv->next_id++;
        sim_angle yaw = 0;
        sim_vec3 feet = spawn_point(sv, id, &yaw);
        sim_char_state st = sim_char_spawn(id, feet, yaw);
        // The nearest free spot to the spawn point (not inside whoever
        // stands there); the join carries where it went.
        if (sim_scene_place_character(sv->scene, &st, &st.position) < 0) {
            send_refuse(sv, c->peer, NET_REFUSE_FULL, "no room for a character");
            memset(c, 0, sizeof *c);
            continue;
        }
        c->joined = true;
        c->id = id;
        c->join_tick = t;
        c->join_us = sv->now_us;
        c->window_start_tick = t;
        rec->joins[rec->join_count].tick = t;
        rec->joins[rec->join_count].state = st;
        rec->join_count++;
        net_welcome w = {0};
        w.character_id = id;
        w.server_tick = t;
        w.tick_rate = (uint16_t)sv->settings.tick_rate;
        w.ticks_per_snapshot = (uint8_t)sv->config.ticks_per_snapshot;
        w.client_time_echo = c->hello_time;
        size_t len = net_welcome_encode(&w, sv->packet, sizeof sv->packet);
        if (len)
            net_host_send(sv->host, c->peer, NET_CHANNEL_CONTROL, sv->packet, len);
        sv->stats.clients_joined++;
    }
    // Commands: the client's own for this tick, or its last one again.
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(sv->scene, &n);
    for (uint32_t i = 0; i < sv->config.max_clients; i++) {
        sv_client *c = &sv->clients[i];
        if (!c->used || !c->joined)
            continue;
        sv_cmd_slot *s = &c->ring[t % CMD_RING];
        sim_input cmd;
        bool own = s->tick == t;
        if (own) {
            cmd = s->cmd;
            c->last_cmd = cmd;
            memcpy(c->last_game, s->game, sizeof c->last_game);
            c->last_applied_tick = t;
        } else {
            cmd = c->last_cmd;
            cmd.tick = t;
            sv->stats.commands_substituted++;
        }
        // A game that judges shots: the outcome into the payload (sv_lag.c),
        // which the tick runs and the history and the recording keep.
        sv_lag_judge(sv, c, t, &cmd, c->last_game, own);
        s->tick = NET_TICK_NONE;
        c->ran_own[t % CMD_RING] = own ? RAN_OWN : RAN_SUBSTITUTE;
        c->substituted_bits = (c->substituted_bits << 1) | (own ? 0u : 1u);
        net_set_command(sv->scene, c->id, &cmd, c->last_game); // checked by the decoder
    }
    // The history holds what every character ran, in id order; characters
    // without a client (none today) run the empty command the scene gives them.
    for (uint32_t i = 0; i < n; i++) {
        net_tick_command *tc = &rec->commands[rec->command_count++];
        tc->id = chars[i].id;
        memset(&tc->command, 0, sizeof tc->command);
        memset(tc->game, 0, sizeof tc->game);
        tc->command.tick = t;
        tc->command.yaw = chars[i].yaw;
        tc->command.pitch = chars[i].pitch;
    }
    for (uint32_t i = 0; i < sv->config.max_clients; i++) {
        sv_client *c = &sv->clients[i];
        if (!c->used || !c->joined)
            continue;
        for (uint32_t k = 0; k < rec->command_count; k++) {
            if (rec->commands[k].id == c->id) {
                rec->commands[k].command = c->last_cmd;
                rec->commands[k].command.tick = t;
                memcpy(rec->commands[k].game, c->last_game, sizeof c->last_game);
                break;
            }
        }
    }
    sim_scene_step(sv->scene);
    sv_lag_keep(sv);
    sv->stats.ticks++;
    if (sv->observer)
        notify_observer(sv, rec);
    uint32_t now = t + 1u;
    if (now % sv->config.ticks_per_snapshot == 0) {
        bool any = false;
        uint64_t hash = 0;
        for (uint32_t i = 0; i < sv->config.max_clients; i++) {
            sv_client *c = &sv->clients[i];
            if (!c->used || !c->joined)
                continue;
            if (!any) {
                hash = sim_scene_hash(sv->scene);
                rec->has_hash_after = true;
                rec->hash_after = hash;
            }
            any = true;
            sv_send_snapshot(sv, c, hash);
        }
    }
    net_host_flush(sv->host);
}
