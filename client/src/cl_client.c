// keel client: creation, sending and prediction. MIT licence, see LICENSE.
// (cl_internal.h has the invariants; cl_confirm.c what comes from the server.)
#include "cl_internal.h"

#include <keel/sim_game.h>

#include <stdlib.h>
#include <string.h>

const char *cl_cause_name(cl_cause c)
{
    static const char *const names[CL_CAUSE_COUNT] = {"substituted", "remote_command", "interaction", "unexplained",
                                                      "game_rule"};
    return c < CL_CAUSE_COUNT ? names[c] : "?";
}

cl_config cl_default_config(void)
{
    cl_config c = {0};
    c.prediction_cap = CL_DEFAULT_PREDICTION_CAP;
    c.ticks_per_packet = 2;
    c.redundancy_packets = 4;
    c.cookie = CL_COOKIE;
    return c;
}

static bool slot_init(cl_state_slot *s, bool inputs)
{
    s->tick = NET_TICK_NONE;
    s->states = calloc(NET_MAX_CHARACTERS, sizeof *s->states);
    s->inputs = inputs ? calloc(NET_MAX_CHARACTERS, sizeof *s->inputs) : NULL;
    return s->states && (!inputs || s->inputs);
}

// A .map's movers and water, with the ids the server gives them (sv_server.c).
static bool add_map(sim_scene *scene, const sim_move_settings *settings, const cl_config *config)
{
    return !config->map || sim_map_add_to_scene(config->map, scene, settings->tick_rate, config->map->unit_m,
                                                SIM_MAP_FIRST_PLATFORM_ID, NULL, NULL) == 0;
}

cl_client *cl_client_create(const sim_world *world, const sim_level *level, const sim_move_settings *settings,
                            const cl_config *config, net_host *host)
{
    if (!world || !level || !host || !config || config->cookie != CL_COOKIE ||
        !sim_move_settings_check(settings, NULL) || config->prediction_cap < 1 ||
        config->prediction_cap > CL_MAX_PREDICTION_CAP || config->ticks_per_packet < 1 ||
        config->ticks_per_packet > 8 || config->redundancy_packets < 1)
        return NULL;
    cl_client *cl = calloc(1, sizeof *cl);
    if (!cl)
        return NULL;
    cl->world = world;
    cl->level = level;
    cl->settings = *settings;
    cl->config = *config;
    cl->host = host;
    cl->confirmed = NET_TICK_NONE;
    cl->last_applied_tick = NET_TICK_NONE;
    cl->full_tick = NET_TICK_NONE;
    cl->heard_tick = NET_TICK_NONE;
    cl->clock_scale = 1.0;
    cl->nominal_tick_us = 1000000u / (uint64_t)settings->tick_rate;
    cl->game = config->game;
    cl->pred = sim_scene_create_game(world, settings, NET_MAX_CHARACTERS, cl->game);
    cl->conf = sim_scene_create_game(world, settings, NET_MAX_CHARACTERS, cl->game);
    cl->work = sim_scene_create_game(world, settings, NET_MAX_CHARACTERS, cl->game);
    cl->last_cmds = calloc(NET_MAX_CHARACTERS, sizeof *cl->last_cmds);
    cl->full_states = calloc(NET_MAX_CHARACTERS, sizeof *cl->full_states);
    cl->full_cmds = calloc(NET_MAX_CHARACTERS, sizeof *cl->full_cmds);
    cl->full_game = calloc(NET_MAX_CHARACTERS, sizeof *cl->full_game);
    if (cl->game)
        cl->full_save = malloc((size_t)NET_MAX_GAME_FULL_PARTS * NET_FULL_CHUNK_BYTES);
    cl->snap_joins = calloc(NET_MAX_CHARACTERS, sizeof *cl->snap_joins);
    cl->snap_leaves = calloc(NET_MAX_CHARACTERS, sizeof *cl->snap_leaves);
    cl->snap_cmds = calloc((size_t)NET_MAX_CHARACTERS * NET_MAX_SNAPSHOT_TICKS, sizeof *cl->snap_cmds);
    cl->changed = calloc(NET_MAX_CHARACTERS, 1);
    cl->pending = calloc(CL_PENDING, sizeof *cl->pending);
    bool ok = cl->pred && cl->conf && cl->work && cl->last_cmds && cl->full_states && cl->full_cmds && cl->full_game &&
              (cl->full_save || !cl->game) && cl->snap_joins && cl->snap_leaves && cl->snap_cmds && cl->changed &&
              cl->pending;
    for (uint32_t i = 0; ok && i < CL_PENDING; i++)
        cl->pending[i].tick = NET_TICK_NONE;
    for (uint32_t i = 0; ok && i < CL_RING; i++) {
        ok = slot_init(&cl->conf_ring[i], true) && slot_init(&cl->pred_ring[i], true);
        cl->own_ring[i].tick = NET_TICK_NONE;
    }
    // Platform ids as the server gives them (sv_server.c), far above any
    // character's; a level without a platform area has none, on both sides.
    if (ok && config->platforms) {
        sim_scene_add_area_platforms(cl->pred, level, 0x7FFF0001u, 0x7FFF0002u);
        sim_scene_add_area_platforms(cl->conf, level, 0x7FFF0001u, 0x7FFF0002u);
        sim_scene_add_area_platforms(cl->work, level, 0x7FFF0001u, 0x7FFF0002u);
    }
    ok = ok && add_map(cl->pred, settings, config) && add_map(cl->conf, settings, config) &&
         add_map(cl->work, settings, config);
    ok = ok && cl_island_init(cl);
    if (!ok) {
        cl_client_destroy(cl);
        return NULL;
    }
    // From the scene as built (platforms and water): the server refuses a
    // client whose setup differs from its own.
    cl->identity = net_identity_make(settings, level, cl->pred);
    if (!net_identity_set_game(&cl->identity, cl->game)) { // a payload the protocol cannot carry
        cl_client_destroy(cl);
        return NULL;
    }
    return cl;
}

net_sim_identity cl_client_identity_for(const sim_world *world, const sim_level *level,
                                        const sim_move_settings *settings, const cl_config *config)
{
    net_sim_identity id;
    memset(&id, 0, sizeof id);
    sim_scene *scene = sim_scene_create(world, settings, 1);
    if (!scene)
        return id;
    if (config->platforms) // as cl_client_create builds its scenes
        sim_scene_add_area_platforms(scene, level, 0x7FFF0001u, 0x7FFF0002u);
    if (add_map(scene, settings, config)) {
        id = net_identity_make(settings, level, scene);
        net_identity_set_game(&id, config->game);
    }
    sim_scene_destroy(scene);
    return id;
}

void cl_client_destroy(cl_client *cl)
{
    if (!cl)
        return;
    sim_scene_destroy(cl->pred);
    sim_scene_destroy(cl->conf);
    sim_scene_destroy(cl->work);
    cl_island_free(cl);
    for (uint32_t i = 0; i < CL_RING; i++) {
        free(cl->conf_ring[i].states);
        free(cl->conf_ring[i].inputs);
        free(cl->pred_ring[i].states);
        free(cl->pred_ring[i].inputs);
        free(cl->conf_ring[i].save);
        free(cl->pred_ring[i].save);
    }
    free(cl->scratch.save);
    free(cl->full_game);
    free(cl->full_save);
    free(cl->last_cmds);
    free(cl->full_states);
    free(cl->full_cmds);
    free(cl->snap_joins);
    free(cl->snap_leaves);
    free(cl->snap_cmds);
    free(cl->changed);
    free(cl->pending);
    free(cl);
}

cl_status cl_client_status(const cl_client *cl) { return cl->status; }
const char *cl_client_refusal(const cl_client *cl) { return cl->refusal; }
net_refuse_code cl_client_refusal_code(const cl_client *cl) { return (net_refuse_code)cl->refusal_code; }
uint32_t cl_client_character(const cl_client *cl) { return cl->character; }
uint32_t cl_client_predicted_tick(const cl_client *cl) { return sim_scene_tick(cl->pred); }
uint32_t cl_client_confirmed_tick(const cl_client *cl) { return cl->confirmed; }
const sim_scene *cl_client_predicted(const cl_client *cl) { return cl->pred; }
const sim_move_settings *cl_client_settings(const cl_client *cl) { return &cl->settings; }
const cl_config *cl_client_config(const cl_client *cl) { return &cl->config; }
net_sim_identity cl_client_identity(const cl_client *cl) { return cl->identity; }
const sim_scene *cl_client_confirmed(const cl_client *cl) { return cl->conf; }

const sim_char_state *cl_client_predicted_at(const cl_client *cl, uint32_t tick, uint32_t *count)
{
    *count = 0;
    uint32_t p = sim_scene_tick(cl->pred);
    if (cl->confirmed == NET_TICK_NONE || cl->rollback_pending || tick < cl->confirmed || tick > p ||
        p - tick > CL_RING)
        return NULL;
    if (tick == p)
        return sim_scene_characters(cl->pred, count);
    const cl_state_slot *s = &cl->pred_ring[tick % CL_RING];
    if (s->tick != tick)
        return NULL;
    *count = s->count;
    return s->states;
}

void cl_client_stats(const cl_client *cl, cl_stats *stats)
{
    *stats = cl->stats;
    // Only round trips measured on echoes of unreliable inputs (Karn's rule:
    // the welcome's may include a retransmission of the hello or welcome,
    // and serves only as the estimate until the first echo).
    stats->rtt_ms = cl->rtt_from_echo ? cl->rtt_ms : 0.0;
    stats->input_margin_q8 = cl->margin_q8;
    stats->clock_scale = cl->clock_scale;
}

uint32_t cl_client_target_lead(const cl_client *cl)
{
    // The confirmed state is half a round trip old when it arrives, and a
    // command sent now needs another half to reach the server: a whole
    // round trip, plus a tick of margin and one of slack.
    // A quarter more than the round trip measured, for jitter: the first
    // estimate is one sample.
    double rtt_ticks = cl->rtt_ms * 1000.0 / (double)cl->nominal_tick_us * 1.25;
    uint32_t lead = (uint32_t)rtt_ticks + 3u;
    uint32_t cap =
        cl->config.prediction_cap < NET_MAX_SNAPSHOT_TICKS ? cl->config.prediction_cap : NET_MAX_SNAPSHOT_TICKS;
    return lead > cap ? cap : lead;
}

uint64_t cl_client_tick_us(const cl_client *cl) { return (uint64_t)((double)cl->nominal_tick_us * cl->clock_scale); }

// ---- sending ------------------------------------------------------------------------

void cl_client_hello(cl_client *cl, uint32_t now_ms)
{
    net_hello h;
    memset(&h, 0, sizeof h);
    h.protocol_version = NET_PROTOCOL_VERSION;
    h.identity = cl->identity;
    h.client_time_ms = now_ms;
    size_t len = net_hello_encode(&h, cl->packet, sizeof cl->packet);
    if (len)
        net_host_send(cl->host, 0, NET_CHANNEL_CONTROL, cl->packet, len);
    cl_send_ping(cl, now_ms);
}

// Which ticks past the confirmed one the kept snapshots hold (net_input.held_mask).
static uint32_t held_mask(const cl_client *cl)
{
    uint32_t mask = 0;
    for (uint32_t i = 0; i < CL_PENDING; i++)
        mask |= net_held_bits(cl->confirmed, cl->pending[i].baseline, cl->pending[i].tick);
    return mask;
}

static void send_input(cl_client *cl, net_input *in, uint32_t now_ms)
{
    in->sequence = cl->input_sequence++;
    in->client_time_ms = (uint16_t)now_ms;
    in->ack_tick = cl->confirmed;
    in->held_mask = held_mask(cl);
    size_t len = net_input_encode(in, cl->packet, sizeof cl->packet);
    if (len && net_host_send(cl->host, 0, NET_CHANNEL_INPUT, cl->packet, len)) {
        cl->stats.input_packets++;
        cl->stats.commands_sent += in->count;
    }
}

// An input without commands: an acknowledgement, and a clock for the server
// to echo (a round-trip sample that no retransmission can stretch).
void cl_send_ping(cl_client *cl, uint32_t now_ms)
{
    net_input in;
    memset(&in, 0, sizeof in);
    in.newest_tick = cl->confirmed == NET_TICK_NONE ? 0 : cl->confirmed;
    send_input(cl, &in, now_ms);
}

static void send_inputs(cl_client *cl, uint32_t now_ms)
{
    uint32_t newest = sim_scene_tick(cl->pred) - 1u;
    // Every command the server has not run as ours yet, and at least the
    // last redundancy_packets packets' worth.
    uint32_t want = cl->config.ticks_per_packet * cl->config.redundancy_packets;
    if (cl->last_applied_tick != NET_TICK_NONE && newest - cl->last_applied_tick > want)
        want = newest - cl->last_applied_tick;
    if (want > NET_MAX_INPUT_COMMANDS)
        want = NET_MAX_INPUT_COMMANDS;
    net_input in;
    memset(&in, 0, sizeof in);
    uint32_t count = 0;
    for (uint32_t k = want; k > 0; k--) {
        uint32_t t = newest - (k - 1u);
        const cl_own_slot *o = &cl->own_ring[t % CL_RING];
        if (o->tick != t || t < cl->live_tick) { // (before live_tick: too late by design)
            count = 0;                           // only a contiguous run ending at the newest
            continue;
        }
        memcpy(in.game_commands[count], o->game, sizeof o->game);
        in.commands[count++] = o->cmd;
    }
    in.game = cl->game;
    // (none to send before live_tick: the packet still acknowledges)
    in.newest_tick = newest;
    in.count = (uint8_t)count;
    send_input(cl, &in, now_ms);
}

// ---- prediction ---------------------------------------------------------------------------

const net_tick_command *cl_find_cmd(const net_tick_command *cmds, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmds[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cmds[lo].id == id ? &cmds[lo] : NULL;
}

// The command character `c` runs at tick t in the prediction: ours from
// own_ring, every other character its last confirmed command (none: stand
// still, looking where it looks).
void cl_command_for(const cl_client *cl, uint32_t t, const sim_char_state *c, sim_input *out, uint8_t *game)
{
    const cl_own_slot *own = &cl->own_ring[t % CL_RING];
    const net_tick_command *last = cl_find_cmd(cl->last_cmds, cl->last_cmd_count, c->id);
    const uint8_t *g = NULL;
    if (c->id == cl->character && own->tick == t) {
        *out = own->cmd;
        g = own->game;
    } else if (last) {
        *out = last->command;
        g = last->game;
    } else {
        memset(out, 0, sizeof *out);
        out->yaw = c->yaw;
        out->pitch = c->pitch;
    }
    out->tick = t;
    if (game) {
        if (g)
            memcpy(game, g, NET_GAME_COMMAND_BYTES);
        else
            memset(game, 0, NET_GAME_COMMAND_BYTES);
    }
}

bool cl_save_slot(cl_state_slot *slot, const sim_scene *scene)
{
    if (!sim_scene_game(scene))
        return true;
    size_t size = sim_scene_state_size(scene);
    if (size > slot->save_cap) {
        // Grows with the characters seen, never per tick once they are.
        uint8_t *b = realloc(slot->save, size);
        if (!b) {
            slot->save_size = 0;
            return false;
        }
        slot->save = b;
        slot->save_cap = size;
    }
    sim_scene_save(scene, slot->save);
    slot->save_size = size;
    return true;
}

bool cl_restore_slot(const cl_client *cl, sim_scene *scene, const cl_state_slot *slot)
{
    if (cl->game)
        return slot->save_size > 0 && sim_scene_restore(scene, slot->save, slot->save_size, NULL);
    return sim_scene_restore_states(scene, slot->tick, slot->states, slot->count, NULL);
}

bool cl_copy_scene(cl_client *cl, sim_scene *dst, const sim_scene *src)
{
    if (cl->game)
        return cl_save_slot(&cl->scratch, src) && sim_scene_restore(dst, cl->scratch.save, cl->scratch.save_size, NULL);
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(src, &n);
    return sim_scene_restore_states(dst, sim_scene_tick(src), chars, n, NULL);
}

// Run one predicted tick with cl_command_for's commands; keep the state
// before, the commands, and whether the step placed anyone at a free spot.
void cl_predict_one(cl_client *cl)
{
    uint32_t t = sim_scene_tick(cl->pred);
    cl_state_slot *slot = &cl->pred_ring[t % CL_RING];
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(cl->pred, &n);
    slot->tick = t;
    slot->count = n;
    memcpy(slot->states, chars, (size_t)n * sizeof *chars);
    slot->input_count = n;
    cl_save_slot(slot, cl->pred);
    for (uint32_t i = 0; i < n; i++) {
        net_tick_command *tc = &slot->inputs[i];
        tc->id = chars[i].id;
        cl_command_for(cl, t, &chars[i], &tc->command, tc->game);
        net_set_command(cl->pred, tc->id, &tc->command, tc->game);
    }
    sim_scene_step(cl->pred);
    sim_scene_separation sep = sim_scene_last_separation(cl->pred);
    slot->placed = sep.relocated != 0 || sep.unresolved != 0;
    cl->stats.predicted_ticks++;
}

bool cl_client_predict(cl_client *cl, const sim_input *command, uint32_t now_ms)
{
    return cl_client_predict_game(cl, command, NULL, now_ms);
}

bool cl_client_predict_game(cl_client *cl, const sim_input *command, const void *game_command, uint32_t now_ms)
{
    if (cl->status != CL_STATUS_PLAYING)
        return false;
    uint8_t payload[NET_GAME_COMMAND_BYTES] = {0};
    if (game_command && net_game_command_bytes(cl->game) > 0 &&
        !sim_game_pack_command(cl->game, game_command, payload, sizeof payload, NULL))
        return false;
    cl_settle(cl);
    uint32_t p = sim_scene_tick(cl->pred);
    // Far ahead of the newest tick the server has named (a process that
    // stopped wakes with many ticks due): commands that early would fall
    // outside the server's window; let the ticks pass until it is near.
    bool ahead = cl->heard_tick != NET_TICK_NONE && p > cl->heard_tick &&
                 p - cl->heard_tick > cl_client_target_lead(cl) + AHEAD_SLACK_TICKS;
    bool held = cl->hold > 0 || ahead;
    if (held || p - cl->confirmed >= cl->config.prediction_cap) {
        // Commands arrive far earlier than needed (after a stall, or a lead
        // taken from a round trip that was too long), or the prediction is
        // at its cap: let this tick pass. The server still hears from us at
        // the usual rate: what we hold is what repairs the gap.
        if (cl->hold > 0)
            cl->hold--;
        if (held)
            cl->stats.held_ticks++;
        else
            cl->stats.capped_ticks++;
        if (++cl->idle_ticks % cl->config.ticks_per_packet == 0)
            cl_send_ping(cl, now_ms);
        return false;
    }
    // A game that judges shots: a shot judged against the predicted scene,
    // the view the player sees, which the server rebuilds from the lag
    // (docs/game.md, "Judging a shot").
    size_t bytes = net_game_command_bytes(cl->game);
    if (p >= cl->live_tick && sim_game_judges(cl->game) &&
        sim_game_judge_packed(cl->game, cl->pred, cl->character, command, payload, bytes, false, 0))
        sim_game_judge_packed(cl->game, cl->pred, cl->character, command, payload, bytes, true, p - cl->confirmed);
    cl_own_slot *o = &cl->own_ring[p % CL_RING];
    o->tick = p;
    o->cmd = p < cl->live_tick ? cl->substitute_cmd : *command;
    o->cmd.tick = p;
    memcpy(o->game, p < cl->live_tick ? cl->substitute_game : payload, sizeof o->game);
    cl_predict_one(cl);
    if ((p + 1u) % cl->config.ticks_per_packet == 0)
        send_inputs(cl, now_ms);
    return true;
}

uint32_t cl_client_take_catch_up(cl_client *cl)
{
    cl_settle(cl);
    uint32_t n = cl->catch_up;
    cl->catch_up = 0;
    return n;
}
