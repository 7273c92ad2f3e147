// keel tests: the bit packer and the wire protocol (net_bits.h, net_proto.h).
// MIT licence, see LICENSE.
//
// Round trips of every message with seeded random contents and at the edges
// of their ranges, every validation failure (the encoder refuses the struct;
// where the wire can express the fault, the decoder refuses the bytes), a
// decoder fuzz (random buffers, every prefix, bit flips, random tails: a
// decoder either fails or returns a message that encodes to the very same
// bytes), message sizes, and the simulation identity.
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include <keel/net_bits.h>
#include <keel/net_proto.h>
#include <keel/sim_level.h>
#include <keel/sim_scene.h>

#include "../net/src/proto_internal.h"
#include "test_support.h"

// ---- random contents -------------------------------------------------------------------

static int8_t rnd_axis(keel_rng *r)
{
    switch (keel_rng_range(r, 0, 3)) {
    case 0: return 0;
    case 1: return 127;
    case 2: return -127;
    default: return (int8_t)keel_rng_range(r, -127, 127);
    }
}

static sim_input rnd_command(keel_rng *r, uint32_t tick)
{
    sim_input c;
    memset(&c, 0, sizeof c);
    c.tick = tick;
    c.forward = rnd_axis(r);
    c.right = rnd_axis(r);
    c.up = keel_rng_range(r, 0, 3) ? 0 : rnd_axis(r);
    c.buttons = (uint8_t)(keel_rng_range(r, 0, 1) ? 0 : keel_rng_range(r, 0, 255));
    c.yaw = (sim_angle)keel_rng_range(r, 0, 65535);
    c.pitch = (sim_angle)keel_rng_range(r, -16384, 16384);
    return c;
}

/// The next command of a character: mostly the same, sometimes turned a
/// little, sometimes anything.
static sim_input rnd_next(keel_rng *r, const sim_input *prev, uint32_t tick)
{
    sim_input c = *prev;
    c.tick = tick;
    int64_t k = keel_rng_range(r, 0, 9);
    if (k < 5)
        return c;
    if (k < 8) {
        c.yaw = (sim_angle)(c.yaw + (sim_angle)keel_rng_range(r, -400, 400));
        if (k == 7)
            c.pitch = (sim_angle)(c.pitch + (sim_angle)keel_rng_range(r, -100, 100));
        return c;
    }
    if (k == 8) {
        c.forward = rnd_axis(r);
        c.buttons ^= (uint8_t)(1u << keel_rng_range(r, 0, 7));
        return c;
    }
    return rnd_command(r, tick);
}

static sim_char_state rnd_state(keel_rng *r, uint32_t id)
{
    sim_char_state s;
    memset(&s, 0, sizeof s);
    s.id = id;
    s.flags = (uint32_t)keel_rng_range(r, 0, SIM_CHAR_KNOWN_FLAGS);
    s.move_type = (int32_t)keel_rng_range(r, 0, SIM_MOVE_TYPE_COUNT - 1);
    s.ground = (int32_t)keel_rng_range(r, 0, 2);
    sim_fx pl = SIM_MOVE_POSITION_LIMIT, vl = SIM_MOVE_MAX_SPEED;
    s.position = sim_v3(keel_rng_fx(r, -pl, pl), keel_rng_fx(r, -pl, pl), keel_rng_fx(r, -pl, pl));
    s.velocity = sim_v3(keel_rng_fx(r, -vl, vl), keel_rng_fx(r, -vl, vl), keel_rng_fx(r, -vl, vl));
    switch (keel_rng_range(r, 0, 2)) {
    case 0: break;
    case 1: s.ground_normal = sim_v3(0, SIM_FX_ONE, 0); break;
    default: s.ground_normal = sim_v3(46341, 46341, 0); break;
    }
    if (keel_rng_range(r, 0, 1))
        s.ground_velocity = sim_v3(keel_rng_fx(r, -vl, vl), 0, keel_rng_fx(r, -vl, vl));
    s.ground_object = (uint32_t)keel_rng_range(r, 0, 1) ? (uint32_t)keel_rng_range(r, 0, 0x7FFFFFFF) : 0;
    s.stuck_ticks = (uint32_t)keel_rng_range(r, 0, 2) ? 0 : (uint32_t)keel_rng_range(r, 0, UINT32_MAX);
    s.yaw = (sim_angle)keel_rng_range(r, 0, 65535);
    s.pitch = (sim_angle)keel_rng_range(r, 0, 65535);
    cr_assert(sim_char_state_check(&s, NULL));
    return s;
}

static uint32_t rnd_u32(keel_rng *r) { return (uint32_t)keel_rng_next(r); }

// ---- snapshots: a builder that follows the roster ------------------------------------

#define SNAP_MAX_JOINS 512
#define SNAP_MAX_LEAVES 512
#define SNAP_MAX_COMMANDS (NET_MAX_CHARACTERS * NET_MAX_SNAPSHOT_TICKS)

typedef struct snap_buf {
    net_snapshot s;
    net_join joins[SNAP_MAX_JOINS];
    net_leave leaves[SNAP_MAX_LEAVES];
    net_tick_command commands[SNAP_MAX_COMMANDS];
} snap_buf;

static void snap_init(snap_buf *b)
{
    memset(&b->s, 0, sizeof b->s);
    b->s.joins = b->joins;
    b->s.join_capacity = SNAP_MAX_JOINS;
    b->s.leaves = b->leaves;
    b->s.leave_capacity = SNAP_MAX_LEAVES;
    b->s.commands = b->commands;
    b->s.command_capacity = SNAP_MAX_COMMANDS;
}

typedef struct builder {
    uint32_t n;
    uint32_t ids[NET_MAX_CHARACTERS];
    sim_input prev[NET_MAX_CHARACTERS];
    bool fresh[NET_MAX_CHARACTERS]; ///< no command yet
} builder;

static int b_find(const builder *bd, uint32_t id)
{
    for (uint32_t i = 0; i < bd->n; i++)
        if (bd->ids[i] == id)
            return (int)i;
    return -1;
}

static void b_add(builder *bd, uint32_t id)
{
    uint32_t i = bd->n;
    while (i > 0 && bd->ids[i - 1] > id) {
        bd->ids[i] = bd->ids[i - 1];
        bd->prev[i] = bd->prev[i - 1];
        bd->fresh[i] = bd->fresh[i - 1];
        i--;
    }
    bd->ids[i] = id;
    memset(&bd->prev[i], 0, sizeof bd->prev[i]);
    bd->fresh[i] = true;
    bd->n++;
}

static void b_remove(builder *bd, uint32_t id)
{
    int i = b_find(bd, id);
    cr_assert(i >= 0);
    for (uint32_t k = (uint32_t)i; k + 1 < bd->n; k++) {
        bd->ids[k] = bd->ids[k + 1];
        bd->prev[k] = bd->prev[k + 1];
        bd->fresh[k] = bd->fresh[k + 1];
    }
    bd->n--;
}

typedef enum cmd_mode { CMD_RANDOM, CMD_SAME, CMD_SMALL_YAW, CMD_MIXED } cmd_mode;

static void b_commands(snap_buf *b, builder *bd, uint32_t tick, keel_rng *r, cmd_mode mode)
{
    for (uint32_t i = 0; i < bd->n; i++) {
        sim_input c;
        if (bd->fresh[i]) {
            c = rnd_command(r, tick);
        } else {
            c = bd->prev[i];
            c.tick = tick;
            if (mode == CMD_SMALL_YAW) {
                int32_t d = (int32_t)keel_rng_range(r, 1, 40);
                c.yaw = (sim_angle)(c.yaw + (sim_angle)(keel_rng_range(r, 0, 1) ? d : -d));
            } else if (mode == CMD_MIXED || mode == CMD_RANDOM) {
                c = rnd_next(r, &bd->prev[i], tick);
            }
        }
        bd->prev[i] = c;
        bd->fresh[i] = false;
        net_tick_command *tc = &b->s.commands[b->s.command_count++];
        tc->id = bd->ids[i];
        tc->command = c;
    }
}

/// A snapshot over `span` ticks ending at `tick` with `n0` characters at the
/// start; `events` in 0..100: the chance in percent of joins and leaves in a tick.
static void gen_snapshot(snap_buf *b, keel_rng *r, uint32_t tick, uint32_t span, uint32_t n0, int events, cmd_mode mode)
{
    snap_init(b);
    net_snapshot *s = &b->s;
    s->sequence = (uint16_t)rnd_u32(r);
    s->client_time_echo = (uint16_t)rnd_u32(r);
    s->echo_delay_ms = (uint16_t)rnd_u32(r);
    s->tick = tick;
    s->baseline_tick = tick - span;
    s->last_applied_tick = keel_rng_range(r, 0, 3)
                               ? tick - 1u - (uint32_t)keel_rng_range(r, 0, tick - 1u < 40 ? tick - 1u : 40)
                               : NET_TICK_NONE;
    s->substituted_mask = keel_rng_range(r, 0, 2) ? 0 : rnd_u32(r);
    s->input_margin_q8 = (int32_t)keel_rng_range(r, -(1 << 23), 1 << 23);
    s->state_hash = keel_rng_next(r);
    builder bd;
    bd.n = 0;
    uint32_t next_id = (uint32_t)keel_rng_range(r, 1, 3) == 1 ? (uint32_t)keel_rng_range(r, 1, 0x7FFFF000) : 1;
    for (uint32_t i = 0; i < n0; i++) {
        next_id += (uint32_t)(keel_rng_range(r, 0, 3) ? 0 : keel_rng_range(r, 1, 300));
        if (next_id >= 0x7FFFFFFF)
            break;
        b_add(&bd, next_id++);
    }
    for (uint32_t t = s->baseline_tick; t != tick; t++) {
        if (keel_rng_range(r, 0, 99) < events) {
            uint32_t left[8], nl = 0;
            int64_t want = keel_rng_range(r, 0, 3);
            for (int64_t k = 0; k < want && bd.n > 0; k++) {
                uint32_t id = bd.ids[keel_rng_range(r, 0, bd.n - 1)];
                b_remove(&bd, id);
                left[nl++] = id;
            }
            // sort this tick's leaves
            for (uint32_t i = 1; i < nl; i++)
                for (uint32_t j = i; j > 0 && left[j - 1] > left[j]; j--) {
                    uint32_t x = left[j];
                    left[j] = left[j - 1];
                    left[j - 1] = x;
                }
            for (uint32_t i = 0; i < nl; i++)
                s->leaves[s->leave_count++] = (net_leave){t, left[i]};
            uint32_t joined[8], nj = 0;
            want = keel_rng_range(r, nl == 0 ? 1 : 0, 3);
            for (int64_t k = 0; k < want && bd.n < NET_MAX_CHARACTERS; k++) {
                uint32_t id;
                if (nl > 0 && keel_rng_range(r, 0, 2) == 0)
                    id = left[keel_rng_range(r, 0, nl - 1)]; // a leave and a join in one tick
                else
                    id = (uint32_t)keel_rng_range(r, 1, keel_rng_range(r, 0, 1) ? 600 : 0x7FFFFFFF);
                if (b_find(&bd, id) >= 0)
                    continue;
                b_add(&bd, id);
                joined[nj++] = id;
            }
            for (uint32_t i = 1; i < nj; i++)
                for (uint32_t j = i; j > 0 && joined[j - 1] > joined[j]; j--) {
                    uint32_t x = joined[j];
                    joined[j] = joined[j - 1];
                    joined[j - 1] = x;
                }
            for (uint32_t i = 0; i < nj; i++) {
                net_join *j = &s->joins[s->join_count++];
                j->tick = t;
                j->state = rnd_state(r, joined[i]);
            }
        }
        b_commands(b, &bd, t, r, mode);
    }
    cr_assert(net_snapshot_valid(s));
}

// ---- other messages -----------------------------------------------------------------

static net_hello rnd_hello(keel_rng *r)
{
    net_hello m;
    memset(&m, 0, sizeof m);
    m.protocol_version = (uint16_t)rnd_u32(r);
    m.identity.behaviour_version = rnd_u32(r);
    m.identity.settings_digest = keel_rng_next(r);
    m.identity.level_digest = keel_rng_next(r);
    m.identity.scene_digest = keel_rng_next(r);
    m.identity.tick_rate = (uint16_t)keel_rng_range(r, SIM_MOVE_MIN_TICK_RATE, SIM_MOVE_MAX_TICK_RATE);
    m.client_time_ms = rnd_u32(r);
    return m;
}

static net_welcome rnd_welcome(keel_rng *r)
{
    net_welcome m;
    memset(&m, 0, sizeof m);
    m.character_id = (uint32_t)keel_rng_range(r, 1, 0x7FFFFFFF);
    m.server_tick = (uint32_t)keel_rng_range(r, 0, 0xFFFFFFFE);
    m.tick_rate = (uint16_t)keel_rng_range(r, SIM_MOVE_MIN_TICK_RATE, SIM_MOVE_MAX_TICK_RATE);
    m.ticks_per_snapshot = (uint8_t)keel_rng_range(r, 1, 16);
    m.client_time_echo = rnd_u32(r);
    return m;
}

static net_refuse rnd_refuse(keel_rng *r)
{
    net_refuse m;
    memset(&m, 0, sizeof m);
    m.code = (uint8_t)keel_rng_range(r, NET_REFUSE_PROTOCOL, NET_REFUSE_SHUTDOWN);
    int64_t len = keel_rng_range(r, 0, NET_REASON_MAX);
    for (int64_t i = 0; i < len; i++)
        m.reason[i] = (char)keel_rng_range(r, 0x20, 0x7E);
    return m;
}

static net_input rnd_input(keel_rng *r)
{
    net_input m;
    memset(&m, 0, sizeof m);
    m.sequence = (uint16_t)rnd_u32(r);
    m.client_time_ms = (uint16_t)rnd_u32(r);
    m.count = (uint8_t)keel_rng_range(r, 0, NET_MAX_INPUT_COMMANDS); // 0: a ping
    m.newest_tick =
        (uint32_t)keel_rng_range(r, m.count ? m.count - 1 : 0, keel_rng_range(r, 0, 1) ? 100000 : 0xFFFFFFFE);
    switch (keel_rng_range(r, 0, 3)) {
    case 0: m.ack_tick = NET_TICK_NONE; break;
    case 1:
        m.ack_tick = rnd_u32(r);
        if (m.ack_tick == NET_TICK_NONE)
            m.ack_tick = 0;
        break;
    default: m.ack_tick = m.newest_tick - (uint32_t)keel_rng_range(r, 0, 40); break;
    }
    if (m.ack_tick != NET_TICK_NONE && keel_rng_range(r, 0, 1))
        m.held_mask = rnd_u32(r);
    uint32_t first = m.newest_tick - (m.count ? m.count - 1u : 0u);
    for (uint32_t i = 0; i < m.count; i++)
        m.commands[i] = i == 0 ? rnd_command(r, first) : rnd_next(r, &m.commands[i - 1], first + i);
    return m;
}

static net_full_part rnd_full(keel_rng *r)
{
    net_full_part m;
    memset(&m, 0, sizeof m);
    m.sequence = (uint16_t)rnd_u32(r);
    m.client_time_echo = (uint16_t)rnd_u32(r);
    m.echo_delay_ms = (uint16_t)rnd_u32(r);
    m.tick = (uint32_t)keel_rng_range(r, 0, 0xFFFFFFFE);
    m.last_applied_tick =
        (m.tick == 0 || keel_rng_range(r, 0, 3) == 0) ? NET_TICK_NONE : (uint32_t)keel_rng_range(r, 0, m.tick - 1);
    m.input_margin_q8 = (int32_t)keel_rng_range(r, -(1 << 23), 1 << 23);
    m.state_hash = keel_rng_next(r);
    m.total_characters = (uint16_t)keel_rng_range(r, 0, NET_MAX_CHARACTERS);
    m.part_count = (uint16_t)keel_rng_range(r, 1, NET_MAX_FULL_PARTS);
    m.part = (uint16_t)keel_rng_range(r, 0, m.part_count - 1);
    m.count = (uint8_t)keel_rng_range(
        r, 0, m.total_characters < NET_FULL_PART_CHARACTERS ? m.total_characters : NET_FULL_PART_CHARACTERS);
    uint32_t id = (uint32_t)keel_rng_range(r, 1, 1000);
    for (uint32_t i = 0; i < m.count; i++) {
        m.states[i] = rnd_state(r, id);
        id += (uint32_t)keel_rng_range(r, 1, 1000);
        m.last_commands[i] = rnd_command(r, rnd_u32(r));
    }
    return m;
}

// ---- comparisons -----------------------------------------------------------------------

static bool cmd_eq(const sim_input *a, const sim_input *b)
{
    return a->tick == b->tick && a->forward == b->forward && a->right == b->right && a->up == b->up &&
           a->buttons == b->buttons && a->yaw == b->yaw && a->pitch == b->pitch;
}

static bool v3_eq(sim_vec3 a, sim_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

static bool state_eq(const sim_char_state *a, const sim_char_state *b)
{
    return a->id == b->id && a->flags == b->flags && a->move_type == b->move_type && a->ground == b->ground &&
           v3_eq(a->position, b->position) && v3_eq(a->velocity, b->velocity) &&
           v3_eq(a->ground_normal, b->ground_normal) && v3_eq(a->ground_velocity, b->ground_velocity) &&
           a->ground_object == b->ground_object && a->stuck_ticks == b->stuck_ticks && a->yaw == b->yaw &&
           a->pitch == b->pitch;
}

static bool snapshot_eq(const net_snapshot *a, const net_snapshot *b)
{
    if (a->sequence != b->sequence || a->client_time_echo != b->client_time_echo ||
        a->echo_delay_ms != b->echo_delay_ms || a->tick != b->tick || a->baseline_tick != b->baseline_tick ||
        a->last_applied_tick != b->last_applied_tick || a->substituted_mask != b->substituted_mask ||
        a->input_margin_q8 != b->input_margin_q8 || a->state_hash != b->state_hash || a->join_count != b->join_count ||
        a->leave_count != b->leave_count || a->command_count != b->command_count)
        return false;
    for (uint32_t i = 0; i < a->join_count; i++)
        if (a->joins[i].tick != b->joins[i].tick || !state_eq(&a->joins[i].state, &b->joins[i].state))
            return false;
    for (uint32_t i = 0; i < a->leave_count; i++)
        if (a->leaves[i].tick != b->leaves[i].tick || a->leaves[i].id != b->leaves[i].id)
            return false;
    for (uint32_t i = 0; i < a->command_count; i++)
        if (a->commands[i].id != b->commands[i].id || !cmd_eq(&a->commands[i].command, &b->commands[i].command))
            return false;
    return true;
}

static bool full_eq(const net_full_part *a, const net_full_part *b)
{
    if (a->sequence != b->sequence || a->client_time_echo != b->client_time_echo ||
        a->echo_delay_ms != b->echo_delay_ms || a->tick != b->tick || a->last_applied_tick != b->last_applied_tick ||
        a->input_margin_q8 != b->input_margin_q8 || a->state_hash != b->state_hash || a->part != b->part ||
        a->part_count != b->part_count || a->total_characters != b->total_characters || a->count != b->count)
        return false;
    for (uint32_t i = 0; i < a->count; i++)
        if (!state_eq(&a->states[i], &b->states[i]) || !cmd_eq(&a->last_commands[i], &b->last_commands[i]))
            return false;
    return true;
}

static bool input_eq(const net_input *a, const net_input *b)
{
    if (a->sequence != b->sequence || a->client_time_ms != b->client_time_ms || a->ack_tick != b->ack_tick ||
        a->held_mask != b->held_mask || a->newest_tick != b->newest_tick || a->count != b->count)
        return false;
    for (uint32_t i = 0; i < a->count; i++)
        if (!cmd_eq(&a->commands[i], &b->commands[i]))
            return false;
    return true;
}

static bool hello_eq(const net_hello *a, const net_hello *b)
{
    return a->protocol_version == b->protocol_version &&
           a->identity.behaviour_version == b->identity.behaviour_version &&
           a->identity.settings_digest == b->identity.settings_digest &&
           a->identity.level_digest == b->identity.level_digest &&
           a->identity.scene_digest == b->identity.scene_digest && a->identity.tick_rate == b->identity.tick_rate &&
           a->client_time_ms == b->client_time_ms;
}

static bool welcome_eq(const net_welcome *a, const net_welcome *b)
{
    return a->character_id == b->character_id && a->server_tick == b->server_tick && a->tick_rate == b->tick_rate &&
           a->ticks_per_snapshot == b->ticks_per_snapshot && a->client_time_echo == b->client_time_echo;
}

static bool refuse_eq(const net_refuse *a, const net_refuse *b)
{
    return a->code == b->code && strcmp(a->reason, b->reason) == 0;
}

// ---- one decoder interface for the fuzz ---------------------------------------------

#define BUF_MAX 65536
static uint8_t g_buf[BUF_MAX], g_buf2[BUF_MAX];
static snap_buf g_snap, g_snap2;

/// Decode as `type`; on success re-encode into out and return the length;
/// return 0 when the decoder refused. Re-encoding a decoded message must work.
static size_t decode_reencode(net_msg_type type, const uint8_t *data, size_t n, uint8_t *out)
{
    size_t len = 0;
    switch (type) {
    case NET_MSG_HELLO: {
        net_hello m;
        if (!net_hello_decode(data, n, &m))
            return 0;
        len = net_hello_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_WELCOME: {
        net_welcome m;
        if (!net_welcome_decode(data, n, &m))
            return 0;
        len = net_welcome_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_REFUSE: {
        net_refuse m;
        if (!net_refuse_decode(data, n, &m))
            return 0;
        len = net_refuse_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_INPUT: {
        net_input m;
        if (!net_input_decode(data, n, &m))
            return 0;
        len = net_input_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_SNAPSHOT: {
        snap_init(&g_snap2);
        // smaller capacities than the generator's, so that "more than fits" is exercised
        g_snap2.s.join_capacity = 8;
        g_snap2.s.leave_capacity = 8;
        if (!net_snapshot_decode(data, n, &g_snap2.s))
            return 0;
        len = net_snapshot_encode(&g_snap2.s, out, BUF_MAX);
        break;
    }
    case NET_MSG_FULL: {
        net_full_part m;
        if (!net_full_part_decode(data, n, &m))
            return 0;
        len = net_full_part_encode(&m, out, BUF_MAX);
        break;
    }
    default: cr_assert_fail("type %d", (int)type);
    }
    cr_assert(len > 0, "a decoded message of type %d does not encode again", (int)type);
    return len;
}

/// Every decoder on these bytes: each refuses, or gives back exactly them.
static void check_all_decoders(const uint8_t *data, size_t n)
{
    for (int t = NET_MSG_HELLO; t <= NET_MSG_FULL; t++) {
        size_t len = decode_reencode((net_msg_type)t, data, n, g_buf2);
        if (len) {
            cr_assert_eq(len, n, "type %d: decoded %zu bytes, re-encoded %zu", t, n, len);
            cr_assert(memcmp(g_buf2, data, n) == 0, "type %d: re-encoding differs", t);
            cr_assert_eq(net_msg_peek_type(data, n), (net_msg_type)t);
        }
    }
}

/// A valid message of `type`, encoded into out; returns its length.
static size_t rnd_message(keel_rng *r, net_msg_type type, uint8_t *out)
{
    size_t n = 0;
    switch (type) {
    case NET_MSG_HELLO: {
        net_hello m = rnd_hello(r);
        n = net_hello_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_WELCOME: {
        net_welcome m = rnd_welcome(r);
        n = net_welcome_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_REFUSE: {
        net_refuse m = rnd_refuse(r);
        n = net_refuse_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_INPUT: {
        net_input m = rnd_input(r);
        n = net_input_encode(&m, out, BUF_MAX);
        break;
    }
    case NET_MSG_SNAPSHOT: {
        uint32_t span = (uint32_t)keel_rng_range(r, 1, keel_rng_range(r, 0, 3) ? 4 : NET_MAX_SNAPSHOT_TICKS);
        gen_snapshot(&g_snap, r, (uint32_t)keel_rng_range(r, span, 5000), span, (uint32_t)keel_rng_range(r, 0, 12), 30,
                     CMD_MIXED);
        n = net_snapshot_encode(&g_snap.s, out, BUF_MAX);
        break;
    }
    case NET_MSG_FULL: {
        net_full_part m = rnd_full(r);
        n = net_full_part_encode(&m, out, BUF_MAX);
        break;
    }
    default: break;
    }
    cr_assert(n > 0);
    return n;
}

// ---- the bit packer -----------------------------------------------------------------------

Test(net_bits, lsb_first_layout)
{
    uint8_t b[4] = {0xEE, 0xEE, 0xEE, 0xEE};
    net_bit_writer w;
    net_bw_init(&w, b, sizeof b);
    net_bw_u(&w, 1, 1);
    net_bw_u(&w, 5, 3);      // 101
    net_bw_u(&w, 0xABC, 12); // crosses two byte boundaries
    net_bw_bool(&w, true);
    cr_assert_eq(net_bw_finish(&w), 3);
    cr_assert_eq(b[0], 0xCB); // 1 | 101 << 1 | C << 4
    cr_assert_eq(b[1], 0xAB);
    cr_assert_eq(b[2], 0x01);
    cr_assert_eq(b[3], 0xEE); // untouched
    net_bit_reader r;
    net_br_init(&r, b, 3);
    cr_assert_eq(net_br_u(&r, 1), 1);
    cr_assert_eq(net_br_u(&r, 3), 5);
    cr_assert_eq(net_br_u(&r, 12), 0xABC);
    cr_assert(net_br_bool(&r));
    cr_assert(net_br_finish(&r));
}

Test(net_bits, random_round_trip)
{
    keel_rng rng = {11};
    static uint8_t buf[4096];
    for (int iter = 0; iter < 200; iter++) {
        uint64_t seed = keel_rng_next(&rng);
        keel_rng a = {seed};
        net_bit_writer w;
        net_bw_init(&w, buf, sizeof buf);
        for (int i = 0; i < 200; i++) {
            switch (keel_rng_range(&a, 0, 5)) {
            case 0: {
                unsigned n = (unsigned)keel_rng_range(&a, 0, 32);
                net_bw_u(&w, n == 32 ? rnd_u32(&a) : rnd_u32(&a) & ((1u << n) - 1u), n);
                break;
            }
            case 1: net_bw_u64(&w, keel_rng_next(&a)); break;
            case 2: {
                unsigned n = (unsigned)keel_rng_range(&a, 1, 32);
                int64_t h = (int64_t)1 << (n - 1);
                net_bw_s(&w, (int32_t)keel_rng_range(&a, -h, h - 1), n);
                break;
            }
            case 3: {
                uint32_t v = rnd_u32(&a) >> keel_rng_range(&a, 0, 31);
                net_bw_var(&w, v, (unsigned)keel_rng_range(&a, 1, 16));
                break;
            }
            case 4: {
                int32_t v = net_u32_as_s32(rnd_u32(&a)) / ((int32_t)1 << keel_rng_range(&a, 0, 30));
                net_bw_svar(&w, v, (unsigned)keel_rng_range(&a, 1, 16));
                break;
            }
            default: net_bw_bool(&w, keel_rng_range(&a, 0, 1)); break;
            }
        }
        size_t n = net_bw_finish(&w);
        cr_assert(n > 0);
        keel_rng b = {seed};
        net_bit_reader r;
        net_br_init(&r, buf, n);
        for (int i = 0; i < 200; i++) {
            switch (keel_rng_range(&b, 0, 5)) {
            case 0: {
                unsigned k = (unsigned)keel_rng_range(&b, 0, 32);
                uint32_t v = k == 32 ? rnd_u32(&b) : rnd_u32(&b) & ((1u << k) - 1u);
                cr_assert_eq(net_br_u(&r, k), v);
                break;
            }
            case 1: cr_assert_eq(net_br_u64(&r), keel_rng_next(&b)); break;
            case 2: {
                unsigned k = (unsigned)keel_rng_range(&b, 1, 32);
                int64_t h = (int64_t)1 << (k - 1);
                int32_t v = (int32_t)keel_rng_range(&b, -h, h - 1);
                cr_assert_eq(net_br_s(&r, k), v);
                break;
            }
            case 3: {
                uint32_t v = rnd_u32(&b) >> keel_rng_range(&b, 0, 31);
                cr_assert_eq(net_br_var(&r, (unsigned)keel_rng_range(&b, 1, 16)), v);
                break;
            }
            case 4: {
                int32_t v = net_u32_as_s32(rnd_u32(&b)) / ((int32_t)1 << keel_rng_range(&b, 0, 30));
                cr_assert_eq(net_br_svar(&r, (unsigned)keel_rng_range(&b, 1, 16)), v);
                break;
            }
            default: cr_assert_eq(net_br_bool(&r), (bool)keel_rng_range(&b, 0, 1)); break;
            }
        }
        cr_assert(net_br_finish(&r));
    }
}

Test(net_bits, writer_overflow_is_sticky_and_in_bounds)
{
    uint8_t b[3] = {0xEE, 0xEE, 0xEE};
    net_bit_writer w;
    net_bw_init(&w, b, 2);
    net_bw_u(&w, 0x3FFF, 14);
    cr_assert(!w.error);
    net_bw_u(&w, 7, 3); // 17 bits in 16
    cr_assert(w.error);
    net_bw_u(&w, 1, 1); // would fit, but the error is sticky
    cr_assert_eq(net_bw_bits(&w), 14);
    cr_assert_eq(net_bw_finish(&w), 0);
    cr_assert_eq(b[2], 0xEE);
    net_bw_init(&w, NULL, 0);
    net_bw_u(&w, 0, 0); // zero bits fit anywhere
    cr_assert(!w.error);
    net_bw_bool(&w, false);
    cr_assert(w.error);
}

Test(net_bits, writer_refuses_values_wider_than_their_field)
{
    uint8_t b[16];
    net_bit_writer w;
    net_bw_init(&w, b, sizeof b);
    net_bw_u(&w, 16, 4);
    cr_assert(w.error);
    net_bw_init(&w, b, sizeof b);
    net_bw_u(&w, 1, 33);
    cr_assert(w.error);
    net_bw_init(&w, b, sizeof b);
    net_bw_s(&w, 8, 4); // 4 bits: -8..7
    cr_assert(w.error);
    net_bw_init(&w, b, sizeof b);
    net_bw_s(&w, -9, 4);
    cr_assert(w.error);
    net_bw_init(&w, b, sizeof b);
    net_bw_s(&w, -8, 4);
    net_bw_s(&w, 7, 4);
    net_bw_s(&w, INT32_MIN, 32);
    net_bw_s(&w, INT32_MAX, 32);
    cr_assert(!w.error);
    net_bw_var(&w, 1, 0);
    cr_assert(w.error);
}

Test(net_bits, reader_underflow_is_sticky)
{
    uint8_t b[2] = {0xFF, 0x01};
    net_bit_reader r;
    net_br_init(&r, b, 2);
    cr_assert_eq(net_br_u(&r, 9), 0x1FF);
    cr_assert_eq(net_br_u(&r, 8), 0); // 8 bits past 7 left
    cr_assert(r.error);
    cr_assert_eq(net_br_u(&r, 1), 0);
    cr_assert(!net_br_finish(&r));
    net_br_init(&r, NULL, 0);
    cr_assert_eq(net_br_u(&r, 1), 0);
    cr_assert(r.error);
}

Test(net_bits, padding_must_be_zero_and_nothing_may_follow)
{
    uint8_t b[2] = {0x05, 0x00};
    net_bit_reader r;
    net_br_init(&r, b, 1);
    net_br_u(&r, 3);
    cr_assert(net_br_finish(&r));
    b[0] = 0x0D; // a 1 in the padding
    net_br_init(&r, b, 1);
    net_br_u(&r, 3);
    cr_assert(!net_br_finish(&r));
    b[0] = 0x05; // a whole byte more
    net_br_init(&r, b, 2);
    net_br_u(&r, 3);
    cr_assert(!net_br_finish(&r));
    net_br_init(&r, b, 1);
    net_br_u(&r, 8);
    cr_assert(net_br_finish(&r));
}

Test(net_bits, var_is_canonical)
{
    uint8_t b[16];
    net_bit_writer w;
    net_bit_reader r;
    // sizes: (group + 1) bits per group
    static const struct {
        uint32_t v;
        unsigned group;
        size_t bits;
    } sizes[] = {
        {0, 4, 5},    {15, 4, 5},          {16, 4, 10},         {255, 4, 10},
        {256, 4, 15}, {UINT32_MAX, 4, 40}, {UINT32_MAX, 7, 40}, {UINT32_MAX, 16, 34},
        {0, 1, 2},    {UINT32_MAX, 1, 64}, {1u << 31, 3, 44},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        net_bw_init(&w, b, sizeof b);
        net_bw_var(&w, sizes[i].v, sizes[i].group);
        cr_assert_eq(net_bw_bits(&w), sizes[i].bits, "var %u group %u", sizes[i].v, sizes[i].group);
        net_br_init(&r, b, net_bw_finish(&w));
        cr_assert_eq(net_br_var(&r, sizes[i].group), sizes[i].v);
        cr_assert(net_br_finish(&r));
    }
    // 3 then a trailing zero group: 0011 1 0000 0
    net_bw_init(&w, b, sizeof b);
    net_bw_u(&w, 3, 4);
    net_bw_bool(&w, true);
    net_bw_u(&w, 0, 4);
    net_bw_bool(&w, false);
    net_br_init(&r, b, net_bw_finish(&w));
    net_br_var(&r, 4);
    cr_assert(r.error);
    // bits above 32: group 16 twice, then a third group
    net_bw_init(&w, b, sizeof b);
    net_bw_u(&w, 1, 16);
    net_bw_bool(&w, true);
    net_bw_u(&w, 1, 16);
    net_bw_bool(&w, true);
    net_bw_u(&w, 1, 16);
    net_bw_bool(&w, false);
    net_br_init(&r, b, net_bw_finish(&w));
    net_br_var(&r, 16);
    cr_assert(r.error);
    // group 7: the fifth group holds 4 bits; a fifth bit is out of range
    net_bw_init(&w, b, sizeof b);
    for (int i = 0; i < 4; i++) {
        net_bw_u(&w, 0x7F, 7);
        net_bw_bool(&w, true);
    }
    net_bw_u(&w, 0x1F, 7);
    net_bw_bool(&w, false);
    net_br_init(&r, b, net_bw_finish(&w));
    net_br_var(&r, 7);
    cr_assert(r.error);
}

Test(net_bits, zigzag_edges)
{
    cr_assert_eq(net_zigzag(0), 0);
    cr_assert_eq(net_zigzag(-1), 1);
    cr_assert_eq(net_zigzag(1), 2);
    cr_assert_eq(net_zigzag(INT32_MAX), UINT32_MAX - 1u);
    cr_assert_eq(net_zigzag(INT32_MIN), UINT32_MAX);
    static const int32_t v[] = {0, 1, -1, 2, -2, 1000, -1000, INT32_MAX, INT32_MIN, INT32_MIN + 1};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cr_assert_eq(net_unzigzag(net_zigzag(v[i])), v[i]);
    cr_assert_eq(net_u32_as_s32(0xFFFFFFFFu), -1);
    cr_assert_eq(net_u32_as_s32(0x80000000u), INT32_MIN);
}

// ---- round trips ---------------------------------------------------------------------------

Test(net_proto, round_trip_control_messages)
{
    keel_rng rng = {21};
    for (int i = 0; i < 2000; i++) {
        net_hello h = rnd_hello(&rng), h2;
        size_t n = net_hello_encode(&h, g_buf, BUF_MAX);
        cr_assert(n > 0 && net_hello_decode(g_buf, n, &h2) && hello_eq(&h, &h2));
        cr_assert_eq(net_msg_peek_type(g_buf, n), NET_MSG_HELLO);
        uint16_t v = 0;
        cr_assert(net_hello_peek_version(g_buf, n, &v) && v == h.protocol_version);
        net_welcome w = rnd_welcome(&rng), w2;
        n = net_welcome_encode(&w, g_buf, BUF_MAX);
        cr_assert(n > 0 && net_welcome_decode(g_buf, n, &w2) && welcome_eq(&w, &w2));
        cr_assert_eq(net_msg_peek_type(g_buf, n), NET_MSG_WELCOME);
        net_refuse f = rnd_refuse(&rng), f2;
        n = net_refuse_encode(&f, g_buf, BUF_MAX);
        cr_assert(n > 0 && net_refuse_decode(g_buf, n, &f2) && refuse_eq(&f, &f2));
        cr_assert_eq(net_msg_peek_type(g_buf, n), NET_MSG_REFUSE);
    }
    cr_assert_eq(net_msg_peek_type(g_buf, 0), 0);
    cr_assert_eq(net_msg_peek_type(NULL, 0), 0);
    uint8_t unknown[1] = {0x0F};
    cr_assert_eq(net_msg_peek_type(unknown, 1), 0);
}

Test(net_proto, round_trip_input)
{
    keel_rng rng = {22};
    for (int i = 0; i < 3000; i++) {
        net_input m = rnd_input(&rng), m2;
        size_t n = net_input_encode(&m, g_buf, BUF_MAX);
        cr_assert(n > 0);
        cr_assert(net_input_decode(g_buf, n, &m2));
        cr_assert(input_eq(&m, &m2));
        cr_assert_eq(net_msg_peek_type(g_buf, n), NET_MSG_INPUT);
    }
}

Test(net_proto, round_trip_snapshot)
{
    keel_rng rng = {23};
    for (int i = 0; i < 400; i++) {
        uint32_t span = (uint32_t)keel_rng_range(&rng, 1, NET_MAX_SNAPSHOT_TICKS);
        uint32_t tick = (uint32_t)keel_rng_range(&rng, span, keel_rng_range(&rng, 0, 1) ? 100 : 0xFFFFFFFE);
        gen_snapshot(&g_snap, &rng, tick, span, (uint32_t)keel_rng_range(&rng, 0, 80), (int)keel_rng_range(&rng, 0, 60),
                     CMD_RANDOM);
        size_t n = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
        cr_assert(n > 0);
        snap_init(&g_snap2);
        cr_assert(net_snapshot_decode(g_buf, n, &g_snap2.s));
        cr_assert(snapshot_eq(&g_snap.s, &g_snap2.s));
        cr_assert_eq(net_msg_peek_type(g_buf, n), NET_MSG_SNAPSHOT);
    }
}

Test(net_proto, round_trip_full_part)
{
    keel_rng rng = {24};
    for (int i = 0; i < 2000; i++) {
        net_full_part m = rnd_full(&rng), m2;
        size_t n = net_full_part_encode(&m, g_buf, BUF_MAX);
        cr_assert(n > 0);
        cr_assert(n <= NET_MTU, "a full part of %u characters takes %zu bytes", m.count, n);
        cr_assert(net_full_part_decode(g_buf, n, &m2));
        cr_assert(full_eq(&m, &m2));
        cr_assert_eq(net_msg_peek_type(g_buf, n), NET_MSG_FULL);
    }
}

// ---- boundaries ---------------------------------------------------------------------------

Test(net_proto, boundary_values)
{
    keel_rng rng = {31};
    // hello / welcome at the ends of their ranges
    net_hello h = rnd_hello(&rng), h2;
    static const uint16_t rates[] = {SIM_MOVE_MIN_TICK_RATE, SIM_MOVE_MAX_TICK_RATE};
    for (int i = 0; i < 2; i++) {
        h.identity.tick_rate = rates[i];
        h.protocol_version = i ? 0xFFFF : 0;
        h.identity.settings_digest = i ? UINT64_MAX : 0;
        h.identity.scene_digest = i ? 0 : UINT64_MAX;
        size_t n = net_hello_encode(&h, g_buf, BUF_MAX);
        cr_assert(n > 0 && net_hello_decode(g_buf, n, &h2) && hello_eq(&h, &h2));
    }
    net_welcome w = rnd_welcome(&rng), w2;
    w.character_id = 1, w.ticks_per_snapshot = 1, w.server_tick = 0;
    size_t n = net_welcome_encode(&w, g_buf, BUF_MAX);
    cr_assert(n > 0 && net_welcome_decode(g_buf, n, &w2) && welcome_eq(&w, &w2));
    w.character_id = 0x7FFFFFFF, w.ticks_per_snapshot = 16, w.server_tick = 0xFFFFFFFE;
    n = net_welcome_encode(&w, g_buf, BUF_MAX);
    cr_assert(n > 0 && net_welcome_decode(g_buf, n, &w2) && welcome_eq(&w, &w2));
    // refuse: empty and longest reason
    net_refuse f, f2;
    memset(&f, 0, sizeof f);
    f.code = NET_REFUSE_FULL;
    n = net_refuse_encode(&f, g_buf, BUF_MAX);
    cr_assert(n > 0 && net_refuse_decode(g_buf, n, &f2) && refuse_eq(&f, &f2));
    memset(f.reason, '~', NET_REASON_MAX);
    f.reason[NET_REASON_MAX] = 0;
    n = net_refuse_encode(&f, g_buf, BUF_MAX);
    cr_assert(n > 0 && net_refuse_decode(g_buf, n, &f2) && refuse_eq(&f, &f2));
    // input: 1 and 32 commands, oldest tick 0, newest tick NET_TICK_NONE - 1, extreme commands, acks
    net_input in, in2;
    memset(&in, 0, sizeof in);
    for (int c = 0; c < 2; c++) {
        in.count = c ? NET_MAX_INPUT_COMMANDS : 1;
        static const uint32_t newest[] = {0, 31, 0xFFFFFFFE};
        for (int k = 0; k < 3; k++) {
            in.newest_tick = newest[k];
            if (in.newest_tick < in.count - 1u)
                continue;
            static const uint32_t acks[] = {NET_TICK_NONE, 0, 0xFFFFFFFE, 0x80000000u};
            for (int a = 0; a < 4; a++) {
                in.ack_tick = acks[a];
                for (uint32_t i = 0; i < in.count; i++) {
                    sim_input *cm = &in.commands[i];
                    cm->tick = in.newest_tick - (in.count - 1u) + i;
                    cm->forward = (i & 1) ? 127 : -127;
                    cm->right = (i & 2) ? -127 : 127;
                    cm->up = (int8_t)(i & 4 ? 0 : 127);
                    cm->buttons = (uint8_t)(i * 37u);
                    cm->yaw = (sim_angle)(i & 1 ? 0x8000 : 0); // a half turn: the largest difference
                    cm->pitch = (sim_angle)(i & 2 ? 0x7FFF : 0x8001);
                }
                n = net_input_encode(&in, g_buf, BUF_MAX);
                cr_assert(n > 0);
                cr_assert(net_input_decode(g_buf, n, &in2) && input_eq(&in, &in2));
            }
        }
    }
    // snapshot: span 1 and 32 ending at the baseline 0 and at the largest tick, 256 characters
    static const uint32_t spans[] = {1, NET_MAX_SNAPSHOT_TICKS};
    for (int s = 0; s < 2; s++) {
        static const uint32_t ticks[2] = {0, 0xFFFFFFFEu};
        for (int t = 0; t < 2; t++) {
            uint32_t tick = t ? ticks[1] : spans[s];
            gen_snapshot(&g_snap, &rng, tick, spans[s], NET_MAX_CHARACTERS, 0, CMD_RANDOM);
            g_snap.s.input_margin_q8 = t ? -(1 << 23) : (1 << 23);
            g_snap.s.last_applied_tick = t ? 0 : tick - 1u;
            g_snap.s.substituted_mask = UINT32_MAX;
            n = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
            cr_assert(n > 0);
            snap_init(&g_snap2);
            cr_assert(net_snapshot_decode(g_buf, n, &g_snap2.s));
            cr_assert(snapshot_eq(&g_snap.s, &g_snap2.s));
            // exactly the capacity it needs
            g_snap2.s.command_capacity = g_snap.s.command_count;
            cr_assert(net_snapshot_decode(g_buf, n, &g_snap2.s));
            g_snap2.s.command_capacity = g_snap.s.command_count - 1u;
            cr_assert(!net_snapshot_decode(g_buf, n, &g_snap2.s));
        }
    }
    // the largest ids
    snap_init(&g_snap);
    g_snap.s.tick = 1;
    g_snap.s.last_applied_tick = NET_TICK_NONE;
    g_snap.s.command_count = 2;
    g_snap.commands[0].id = 1;
    g_snap.commands[1].id = 0x7FFFFFFF;
    memset(&g_snap.commands[0].command, 0, sizeof(sim_input));
    memset(&g_snap.commands[1].command, 0, sizeof(sim_input));
    n = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
    cr_assert(n > 0);
    snap_init(&g_snap2);
    cr_assert(net_snapshot_decode(g_buf, n, &g_snap2.s) && snapshot_eq(&g_snap.s, &g_snap2.s));
    // an empty scene over 32 ticks
    snap_init(&g_snap);
    g_snap.s.tick = 40;
    g_snap.s.baseline_tick = 8;
    g_snap.s.last_applied_tick = NET_TICK_NONE;
    n = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
    cr_assert(n > 0);
    cr_assert(net_snapshot_decode(g_buf, n, &g_snap2.s) && snapshot_eq(&g_snap.s, &g_snap2.s));
    // full part: the last part of the largest scene, 12 characters at the edges of their ranges
    net_full_part fp = rnd_full(&rng), fp2;
    fp.total_characters = NET_MAX_CHARACTERS;
    fp.part_count = NET_MAX_FULL_PARTS;
    fp.part = NET_MAX_FULL_PARTS - 1;
    fp.count = NET_FULL_PART_CHARACTERS;
    fp.tick = 0xFFFFFFFE;
    fp.last_applied_tick = 0xFFFFFFFD;
    for (uint32_t i = 0; i < fp.count; i++) {
        sim_char_state *st = &fp.states[i];
        *st = rnd_state(&rng, 0x7FFFFFFF - (NET_FULL_PART_CHARACTERS - 1u) + i);
        sim_fx pl = SIM_MOVE_POSITION_LIMIT;
        st->position = sim_v3(pl, -pl, pl);
        st->velocity = sim_v3(SIM_MOVE_MAX_SPEED, -SIM_MOVE_MAX_SPEED, 0);
        st->flags = SIM_CHAR_KNOWN_FLAGS;
        st->move_type = SIM_MOVE_TYPE_COUNT - 1;
        st->ground = SIM_GROUND_STEEP;
        st->ground_object = 0x7FFFFFFF;
        st->stuck_ticks = UINT32_MAX;
        fp.last_commands[i] = rnd_command(&rng, UINT32_MAX);
        fp.last_commands[i].yaw = 0x8000; // the longest angle code
        fp.last_commands[i].buttons = 0xFF;
    }
    n = net_full_part_encode(&fp, g_buf, BUF_MAX);
    cr_assert(n > 0 && n <= NET_MTU, "%zu bytes", n);
    cr_log_info("largest full part: %zu bytes (NET_MTU %u)\n", n, NET_MTU);
    cr_assert(net_full_part_decode(g_buf, n, &fp2) && full_eq(&fp, &fp2));
    // every message refuses a buffer one byte too small
    cr_assert_eq(net_full_part_encode(&fp, g_buf, n - 1), 0);
}

// ---- validation failures -----------------------------------------------------------------

/// The struct fails to encode; if the unchecked writer can still put it on
/// the wire, the decoder refuses those bytes. Returns whether it was on the wire.
#define EXPECT_REFUSED(kind, m, decoded)                                                 \
    do {                                                                                 \
        cr_assert_eq(net_##kind##_encode(&(m), g_buf, BUF_MAX), 0, "%s: encoded", what); \
        size_t wn = net_##kind##_write(&(m), g_buf, BUF_MAX);                            \
        if (wn) {                                                                        \
            on_wire++;                                                                   \
            cr_assert(!net_##kind##_decode(g_buf, wn, &(decoded)), "%s: decoded", what); \
        }                                                                                \
    } while (0)

Test(net_proto, control_validation_failures)
{
    keel_rng rng = {41};
    int on_wire = 0;
    const char *what;
    net_hello h, hd;
    what = "hello tick rate 1";
    h = rnd_hello(&rng), h.identity.tick_rate = 1;
    EXPECT_REFUSED(hello, h, hd);
    what = "hello tick rate 1001";
    h.identity.tick_rate = 1001;
    EXPECT_REFUSED(hello, h, hd);
    net_welcome w, wd;
    what = "welcome id 0";
    w = rnd_welcome(&rng), w.character_id = 0;
    EXPECT_REFUSED(welcome, w, wd);
    what = "welcome id 2^31";
    w = rnd_welcome(&rng), w.character_id = 0x80000000u;
    EXPECT_REFUSED(welcome, w, wd);
    what = "welcome tick none";
    w = rnd_welcome(&rng), w.server_tick = NET_TICK_NONE;
    EXPECT_REFUSED(welcome, w, wd);
    what = "welcome tick rate 0";
    w = rnd_welcome(&rng), w.tick_rate = 0;
    EXPECT_REFUSED(welcome, w, wd);
    what = "welcome tick rate 1023";
    w = rnd_welcome(&rng), w.tick_rate = 1023;
    EXPECT_REFUSED(welcome, w, wd);
    what = "welcome 0 ticks per snapshot";
    w = rnd_welcome(&rng), w.ticks_per_snapshot = 0;
    cr_assert_eq(net_welcome_encode(&w, g_buf, BUF_MAX), 0);
    w.ticks_per_snapshot = 17;
    cr_assert_eq(net_welcome_encode(&w, g_buf, BUF_MAX), 0);
    // refuse: the encoder has no unchecked writer; build the bits by hand
    net_refuse f = rnd_refuse(&rng), fd;
    f.code = 0;
    cr_assert_eq(net_refuse_encode(&f, g_buf, BUF_MAX), 0);
    f.code = NET_REFUSE_SHUTDOWN + 1;
    cr_assert_eq(net_refuse_encode(&f, g_buf, BUF_MAX), 0);
    f = rnd_refuse(&rng);
    strcpy(f.reason, "tab\there");
    cr_assert_eq(net_refuse_encode(&f, g_buf, BUF_MAX), 0);
    strcpy(f.reason, "del\x7F");
    cr_assert_eq(net_refuse_encode(&f, g_buf, BUF_MAX), 0);
    memset(f.reason, 'x', sizeof f.reason); // no terminating NUL
    cr_assert_eq(net_refuse_encode(&f, g_buf, BUF_MAX), 0);
    static const struct {
        unsigned code, len, ch;
    } bad[] = {
        {0, 1, 'a'}, {6, 1, 'a'}, {15, 1, 'a'}, {1, 1, 0x1F}, {1, 1, 0x7F}, {1, 1, 0}, {1, 121, 'a'}, {1, 127, 'a'},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        net_bit_writer bw;
        net_bw_init(&bw, g_buf, BUF_MAX);
        net_bw_u(&bw, NET_MSG_REFUSE, 4);
        net_bw_u(&bw, bad[i].code, 4);
        net_bw_u(&bw, bad[i].len, 7);
        for (unsigned k = 0; k < bad[i].len; k++)
            net_bw_u(&bw, bad[i].ch, 7);
        cr_assert(!net_refuse_decode(g_buf, net_bw_finish(&bw), &fd), "refuse case %zu decoded", i);
    }
    // and the hand-made bits of a good one decode (the layout above is right)
    {
        net_bit_writer bw;
        net_bw_init(&bw, g_buf, BUF_MAX);
        net_bw_u(&bw, NET_MSG_REFUSE, 4);
        net_bw_u(&bw, 2, 4);
        net_bw_u(&bw, 2, 7);
        net_bw_u(&bw, 'o', 7);
        net_bw_u(&bw, 'k', 7);
        cr_assert(net_refuse_decode(g_buf, net_bw_finish(&bw), &fd) && strcmp(fd.reason, "ok") == 0 && fd.code == 2);
    }
    // wrong type, and trailing bytes
    net_hello hv = rnd_hello(&rng);
    size_t n = net_hello_encode(&hv, g_buf, BUF_MAX);
    cr_assert(!net_welcome_decode(g_buf, n, &wd));
    g_buf[n] = 0;
    cr_assert(!net_hello_decode(g_buf, n + 1, &hd));
    cr_assert(on_wire >= 5);
}

Test(net_proto, input_validation_failures)
{
    keel_rng rng = {42};
    int on_wire = 0;
    const char *what;
    net_input m, d, base = rnd_input(&rng);
    base.count = 4;
    base.newest_tick = 1000;
    for (uint32_t i = 0; i < 4; i++)
        base.commands[i].tick = 997 + i;
    cr_assert(net_input_encode(&base, g_buf, BUF_MAX) > 0);
    what = "held ticks without an acknowledged one";
    m = base, m.ack_tick = NET_TICK_NONE, m.held_mask = 6;
    EXPECT_REFUSED(input, m, d);
    what = "count 33";
    m = base, m.count = 33;
    EXPECT_REFUSED(input, m, d);
    what = "newest tick none";
    m = base, m.newest_tick = NET_TICK_NONE;
    for (uint32_t i = 0; i < 4; i++)
        m.commands[i].tick = NET_TICK_NONE - 3 + i;
    EXPECT_REFUSED(input, m, d);
    what = "oldest tick below 0";
    m = base, m.newest_tick = 2;
    for (uint32_t i = 0; i < 4; i++)
        m.commands[i].tick = (uint32_t)(-1 + (int)i);
    EXPECT_REFUSED(input, m, d);
    what = "command tick not implied";
    m = base, m.commands[2].tick++;
    cr_assert_eq(net_input_encode(&m, g_buf, BUF_MAX), 0);
    what = "axis -128";
    m = base, m.commands[1].forward = -128;
    EXPECT_REFUSED(input, m, d);
    m = base, m.commands[0].right = -128;
    cr_assert_eq(net_input_encode(&m, g_buf, BUF_MAX), 0);
    m = base, m.commands[3].up = -128;
    cr_assert_eq(net_input_encode(&m, g_buf, BUF_MAX), 0);
    // by hand: ack equal to NET_TICK_NONE through the difference form, and
    // non-canonical command codes
    for (int c = 0; c < 6; c++) {
        net_bit_writer bw;
        net_bw_init(&bw, g_buf, BUF_MAX);
        net_bw_u(&bw, NET_MSG_INPUT, 4);
        net_bw_u(&bw, 1, 16);
        net_bw_u(&bw, 2, 16);   // client time
        net_bw_u(&bw, 100, 32); // newest
        net_bw_u(&bw, 1, 6);    // one command
        net_bw_bool(&bw, false);
        net_bw_svar(&bw, c == 0 ? 101 : 3, 4); // ack 100 - 101 = NET_TICK_NONE
        net_bw_bool(&bw, false);               // nothing held
        switch (c) {
        case 0: net_bw_bool(&bw, false); break; // fine command, bad ack
        case 1:
            net_bw_bool(&bw, true);
            net_bw_bool(&bw, false);
            net_bw_bool(&bw, false);
            net_bw_bool(&bw, false);
            break; // changed, nothing
        case 2:
            net_bw_bool(&bw, true);
            net_bw_bool(&bw, true);
            net_bw_u(&bw, 0, 4);
            net_bw_bool(&bw, false);
            net_bw_bool(&bw, false);
            break; // empty mask
        case 3:
            net_bw_bool(&bw, true);
            net_bw_bool(&bw, true);
            net_bw_u(&bw, 1, 4);
            net_bw_s(&bw, 0, 8);
            net_bw_bool(&bw, false);
            net_bw_bool(&bw, false);
            break; // forward "changed" to its old value
        case 4:
            net_bw_bool(&bw, true);
            net_bw_bool(&bw, false);
            net_bw_bool(&bw, true);
            net_bw_u(&bw, 1, 2);
            net_bw_u(&bw, 5, 8);
            net_bw_bool(&bw, false);
            break; // angle not in its smallest class
        default:
            net_bw_bool(&bw, true);
            net_bw_bool(&bw, false);
            net_bw_bool(&bw, true);
            net_bw_u(&bw, 3, 2);
            net_bw_u(&bw, 0xFFFF, 16);
            net_bw_bool(&bw, false);
            break; // angle code out of range
        }
        cr_assert(!net_input_decode(g_buf, net_bw_finish(&bw), &d), "hand-made input %d decoded", c);
    }
    { // the same layout with a good command decodes
        net_bit_writer bw;
        net_bw_init(&bw, g_buf, BUF_MAX);
        net_bw_u(&bw, NET_MSG_INPUT, 4);
        net_bw_u(&bw, 1, 16);
        net_bw_u(&bw, 2, 16);
        net_bw_u(&bw, 100, 32);
        net_bw_u(&bw, 1, 6);
        net_bw_bool(&bw, false);
        net_bw_svar(&bw, 3, 4);
        net_bw_bool(&bw, false);
        net_bw_bool(&bw, true);
        net_bw_bool(&bw, false);
        net_bw_bool(&bw, true);
        net_bw_u(&bw, 0, 2);
        net_bw_u(&bw, 5, 4);
        net_bw_bool(&bw, false);
        size_t len = net_bw_finish(&bw);
        cr_assert(net_input_decode(g_buf, len, &d));
        cr_assert_eq(d.ack_tick, 97);
        cr_assert_eq(d.commands[0].yaw, (sim_angle)net_unzigzag(6));
    }
    cr_assert(on_wire >= 2);
}

static void base_snapshot(snap_buf *b)
{
    // B = 100, T = 104; present at B: 3, 5, 9. Tick 101: 5 leaves, 7 joins.
    // Tick 102: 5 joins again. Tick 103: 3 leaves and joins again.
    keel_rng rng = {99};
    snap_init(b);
    net_snapshot *s = &b->s;
    s->tick = 104;
    s->baseline_tick = 100;
    s->last_applied_tick = 102;
    s->input_margin_q8 = 300;
    builder bd;
    bd.n = 0;
    b_add(&bd, 3), b_add(&bd, 5), b_add(&bd, 9);
    b_commands(b, &bd, 100, &rng, CMD_MIXED);
    s->leaves[s->leave_count++] = (net_leave){101, 5};
    b_remove(&bd, 5);
    s->joins[s->join_count++] = (net_join){101, rnd_state(&rng, 7)};
    b_add(&bd, 7);
    b_commands(b, &bd, 101, &rng, CMD_MIXED);
    s->joins[s->join_count++] = (net_join){102, rnd_state(&rng, 5)};
    b_add(&bd, 5);
    b_commands(b, &bd, 102, &rng, CMD_MIXED);
    s->leaves[s->leave_count++] = (net_leave){103, 3};
    b_remove(&bd, 3);
    s->joins[s->join_count++] = (net_join){103, rnd_state(&rng, 3)};
    b_add(&bd, 3);
    b_commands(b, &bd, 103, &rng, CMD_MIXED);
    cr_assert_eq(s->command_count, 3 + 3 + 4 + 4);
    cr_assert(net_snapshot_valid(s));
}

Test(net_proto, snapshot_validation_failures)
{
    static snap_buf base, m;
    int on_wire = 0;
    const char *what = "base";
    base_snapshot(&base);
    cr_assert(net_snapshot_encode(&base.s, g_buf, BUF_MAX) > 0);
    snap_init(&g_snap2);
    for (int c = 0;; c++) {
        m = base;
        snap_init(&m);
        m.s = base.s;
        m.s.joins = m.joins, m.s.leaves = m.leaves, m.s.commands = m.commands;
        net_snapshot *s = &m.s;
        switch (c) {
        case 0:
            what = "tick none";
            s->tick = NET_TICK_NONE;
            s->baseline_tick = NET_TICK_NONE - 4;
            break;
        case 1:
            what = "span 0";
            s->baseline_tick = 104;
            break;
        case 2:
            what = "span 33";
            s->baseline_tick = 104 - 33;
            break;
        case 3:
            what = "baseline after tick";
            s->baseline_tick = 105;
            break;
        case 4:
            what = "last applied at tick";
            s->last_applied_tick = 104;
            break;
        case 5:
            what = "margin above 2^23";
            s->input_margin_q8 = (1 << 23) + 1;
            break;
        case 6:
            what = "margin below -2^23";
            s->input_margin_q8 = -(1 << 23) - 1;
            break;
        case 7:
            what = "join tick before baseline";
            m.joins[0].tick = 99;
            break;
        case 8:
            what = "join tick at T";
            m.joins[2].tick = 104;
            break;
        case 9:
            what = "leave tick at T";
            m.leaves[1].tick = 104;
            break;
        case 10:
            what = "leave tick before baseline";
            m.leaves[0].tick = 99;
            break;
        case 11:
            what = "join id 0";
            m.joins[0].state.id = 0;
            break;
        case 12:
            what = "join id 2^31";
            m.joins[0].state.id = 0x80000000u;
            break;
        case 13:
            what = "join velocity";
            m.joins[1].state.velocity.y = SIM_MOVE_MAX_SPEED + 1;
            break;
        case 14:
            what = "join move type";
            m.joins[1].state.move_type = SIM_MOVE_TYPE_COUNT;
            break;
        case 15:
            what = "join ground normal";
            m.joins[1].state.ground_normal = sim_v3(SIM_FX_ONE / 2, 0, 0);
            break;
        case 16:
            what = "join position";
            m.joins[2].state.position.x = SIM_MOVE_POSITION_LIMIT + 1;
            break;
        case 17:
            what = "join ground kind";
            m.joins[2].state.ground = 3;
            break;
        case 18:
            what = "join flags";
            m.joins[2].state.flags = SIM_CHAR_KNOWN_FLAGS + 1u; // the first unknown bit
            break;
        case 19:
            what = "joins out of order";
            {
                net_join t = m.joins[0];
                m.joins[0] = m.joins[1];
                m.joins[1] = t;
            }
            break;
        case 20:
            what = "leaves out of order";
            {
                net_leave t = m.leaves[0];
                m.leaves[0] = m.leaves[1];
                m.leaves[1] = t;
            }
            break;
        case 21:
            what = "leave of an absent id";
            m.leaves[0].id = 4;
            break;
        case 22:
            what = "join of a present id";
            m.joins[0].state.id = 9;
            break;
        case 23:
            what = "a command missing";
            s->command_count--;
            break;
        case 24:
            what = "a command too many";
            m.commands[s->command_count] = m.commands[s->command_count - 1];
            s->command_count++;
            break;
        case 25:
            what = "command id not the roster's";
            m.commands[5].id = 8;
            break;
        case 26:
            what = "command tick";
            m.commands[4].command.tick = 102;
            break;
        case 27:
            what = "command axis -128";
            m.commands[6].command.forward = -128;
            break;
        case 28:
            what = "first tick out of order";
            {
                net_tick_command t = m.commands[0];
                m.commands[0] = m.commands[1];
                m.commands[1] = t;
            }
            break;
        case 29:
            what = "first tick duplicate id";
            m.commands[1].id = 3;
            break;
        case 30:
            what = "command count above capacity";
            s->command_capacity = s->command_count - 1;
            break;
        case 31:
            what = "join count above capacity";
            s->join_capacity = 2;
            break;
        case 32:
            what = "leave count above capacity";
            s->leave_capacity = 1;
            break;
        case 33:
            what = "join without its command";
            m.joins[0].tick = 100;
            break;
        case 34:
            what = "null commands";
            s->commands = NULL;
            break;
        default: what = NULL; break;
        }
        if (!what)
            break;
        cr_assert(!net_snapshot_valid(s), "%s: valid", what);
        cr_assert_eq(net_snapshot_encode(s, g_buf, BUF_MAX), 0, "%s: encoded", what);
        // capacities belong to the caller, not to the bytes: no wire form
        size_t wn = (c >= 30 && c <= 32) || c == 34 ? 0 : net_snapshot_write(s, g_buf, BUF_MAX);
        if (wn) {
            on_wire++;
            snap_init(&g_snap2);
            cr_assert(!net_snapshot_decode(g_buf, wn, &g_snap2.s), "%s: decoded", what);
        }
    }
    // more than NET_MAX_CHARACTERS present: 256 at the baseline and one joins
    keel_rng rng = {43};
    snap_init(&m);
    m.s.tick = 10, m.s.baseline_tick = 9, m.s.last_applied_tick = NET_TICK_NONE;
    builder bd;
    bd.n = 0;
    for (uint32_t i = 0; i < NET_MAX_CHARACTERS; i++)
        b_add(&bd, 1 + i);
    b_commands(&m, &bd, 9, &rng, CMD_RANDOM);
    cr_assert(net_snapshot_valid(&m.s));
    m.s.joins[m.s.join_count++] = (net_join){9, rnd_state(&rng, 1000)};
    m.commands[m.s.command_count].id = 1000;
    m.commands[m.s.command_count++].command = rnd_command(&rng, 9);
    cr_assert(!net_snapshot_valid(&m.s));
    cr_assert_eq(net_snapshot_encode(&m.s, g_buf, BUF_MAX), 0);
    // by hand: 257 at the baseline, and a join over the cap
    net_bit_writer bw;
    net_bw_init(&bw, g_buf, BUF_MAX);
    net_bw_u(&bw, NET_MSG_SNAPSHOT, 4);
    net_bw_u(&bw, 0, 16);
    net_bw_u(&bw, 0, 16);
    net_bw_u(&bw, 0, 16);
    net_bw_u(&bw, 10, 32);
    net_bw_u(&bw, 0, 5);
    net_bw_bool(&bw, true);
    net_bw_var(&bw, 0, 4);
    net_bw_svar(&bw, 0, 4);
    net_bw_u64(&bw, 0);
    net_bw_bool(&bw, false); // an explicit roster
    net_bw_u(&bw, 257, 9);
    for (int i = 0; i < 257; i++)
        net_bw_bool(&bw, false);
    for (int i = 0; i < 257; i++)
        net_bw_bool(&bw, false);
    snap_init(&g_snap2);
    cr_assert(!net_snapshot_decode(g_buf, net_bw_finish(&bw), &g_snap2.s));
    // by hand: structural faults the writer cannot make. B = 9, T = 10, ids 1, 2 present.
    for (int c = 0; c < 6; c++) {
        net_bw_init(&bw, g_buf, BUF_MAX);
        net_bw_u(&bw, NET_MSG_SNAPSHOT, 4);
        net_bw_u(&bw, 0, 16);
        net_bw_u(&bw, 0, 16);
        net_bw_u(&bw, 0, 16);
        net_bw_u(&bw, 10, 32);
        net_bw_u(&bw, 0, 5);
        net_bw_bool(&bw, true);
        net_bw_var(&bw, 0, 4);
        net_bw_svar(&bw, 0, 4);
        net_bw_u64(&bw, 0);
        net_bw_bool(&bw, false); // an explicit roster
        net_bw_u(&bw, 2, 9);
        net_bw_bool(&bw, false);
        net_bw_bool(&bw, false); // ids 1, 2
        sim_char_state st = rnd_state(&rng, 2);
        switch (c) {
        case 0: break; // fine: no events, two unchanged commands
        case 1:
            net_bw_bool(&bw, true);
            net_bw_var(&bw, 0, 4);
            net_bw_var(&bw, 0, 4);
            break; // events, none
        case 2:
            net_bw_bool(&bw, true);
            net_bw_var(&bw, 1, 4);
            net_bw_var(&bw, 0, 4);
            net_bw_bool(&bw, true);
            net_bw_var(&bw, 1, 4);
            break; // leave of 3, absent
        case 3:
            net_bw_bool(&bw, true);
            net_bw_var(&bw, 0, 4);
            net_bw_var(&bw, 1, 4);
            net_write_state(&bw, &st);
            break; // join of 2, present
        case 4:
            net_bw_bool(&bw, true);
            net_bw_var(&bw, 3, 4);
            net_bw_var(&bw, 0, 4);
            break; // three leaves of two present
        default:
            st.id = 5;
            net_bw_bool(&bw, true);
            net_bw_var(&bw, 0, 4);
            net_bw_var(&bw, 2, 4);
            net_write_state(&bw, &st);
            st.id = 4;
            net_write_state(&bw, &st);
            break; // joins 5, 4
        }
        uint32_t present = c == 0 ? 2 : 3;
        for (uint32_t i = 0; i < present; i++)
            net_bw_bool(&bw, false);
        snap_init(&g_snap2);
        bool ok = net_snapshot_decode(g_buf, net_bw_finish(&bw), &g_snap2.s);
        cr_assert_eq(ok, c == 0, "hand-made snapshot %d", c);
    }
    cr_log_info("snapshot validation: %d faulty snapshots put on the wire and refused\n", on_wire);
    cr_assert(on_wire >= 5);
}

Test(net_proto, full_part_validation_failures)
{
    keel_rng rng = {44};
    int on_wire = 0;
    const char *what;
    net_full_part base = rnd_full(&rng), m, d;
    base.count = 3, base.total_characters = 30, base.part_count = 3, base.part = 1, base.tick = 500;
    base.last_applied_tick = 499;
    for (uint32_t i = 0; i < 3; i++) {
        base.states[i] = rnd_state(&rng, 10 + i);
        base.last_commands[i] = rnd_command(&rng, 498);
    }
    cr_assert(net_full_part_encode(&base, g_buf, BUF_MAX) > 0);
    what = "tick none";
    m = base, m.tick = NET_TICK_NONE;
    m.last_applied_tick = NET_TICK_NONE;
    EXPECT_REFUSED(full_part, m, d);
    what = "last applied at tick";
    m = base, m.last_applied_tick = 500;
    EXPECT_REFUSED(full_part, m, d);
    what = "margin";
    m = base, m.input_margin_q8 = -(1 << 23) - 1;
    EXPECT_REFUSED(full_part, m, d);
    what = "part count 0";
    m = base, m.part_count = 0, m.part = 0;
    EXPECT_REFUSED(full_part, m, d);
    what = "part count 23";
    m = base, m.part_count = NET_MAX_FULL_PARTS + 1;
    EXPECT_REFUSED(full_part, m, d);
    what = "part = part count";
    m = base, m.part = 3;
    EXPECT_REFUSED(full_part, m, d);
    what = "total 257";
    m = base, m.total_characters = 257;
    EXPECT_REFUSED(full_part, m, d);
    what = "count above total";
    m = base, m.total_characters = 2;
    EXPECT_REFUSED(full_part, m, d);
    what = "count 13";
    m = base, m.count = 13, m.total_characters = 200;
    EXPECT_REFUSED(full_part, m, d);
    what = "ids out of order";
    m = base, m.states[2].id = 10;
    EXPECT_REFUSED(full_part, m, d);
    what = "id 0";
    m = base, m.states[0].id = 0;
    EXPECT_REFUSED(full_part, m, d);
    what = "velocity";
    m = base, m.states[1].velocity.x = -SIM_MOVE_MAX_SPEED - 1;
    EXPECT_REFUSED(full_part, m, d);
    what = "ground velocity";
    m = base, m.states[1].ground_velocity.z = SIM_MOVE_MAX_SPEED + 1;
    EXPECT_REFUSED(full_part, m, d);
    what = "ground object";
    m = base, m.states[1].ground_object = 0x80000000u;
    EXPECT_REFUSED(full_part, m, d);
    what = "move type";
    m = base, m.states[0].move_type = 7;
    EXPECT_REFUSED(full_part, m, d);
    what = "move type negative";
    m = base, m.states[0].move_type = -1;
    EXPECT_REFUSED(full_part, m, d);
    what = "ground normal";
    m = base, m.states[0].ground_normal = sim_v3(0, SIM_FX_ONE + 300, 0);
    EXPECT_REFUSED(full_part, m, d);
    what = "command axis";
    m = base, m.last_commands[2].up = -128;
    EXPECT_REFUSED(full_part, m, d);
    cr_log_info("full part validation: %d faulty parts put on the wire and refused\n", on_wire);
    cr_assert(on_wire >= 11);
}

// ---- decoder fuzz ---------------------------------------------------------------------------

Test(net_proto, fuzz_decoders)
{
    keel_rng rng = {51};
    static uint8_t msg[BUF_MAX], mut[BUF_MAX];
    long decoded_mutants = 0, tried = 0;
    for (int round = 0; round < 60; round++) {
        for (int t = NET_MSG_HELLO; t <= NET_MSG_FULL; t++) {
            size_t n = rnd_message(&rng, (net_msg_type)t, msg);
            check_all_decoders(msg, n); // the message itself decodes back to itself
            cr_assert(decode_reencode((net_msg_type)t, msg, n, g_buf2) == n || t == NET_MSG_SNAPSHOT);
            // every prefix (in the first rounds; afterwards a few)
            for (size_t k = 0; k < n; k++) {
                if (round >= 4 && keel_rng_range(&rng, 0, 15))
                    continue;
                cr_assert_eq(decode_reencode((net_msg_type)t, msg, k, g_buf2), 0, "type %d: prefix %zu of %zu decoded",
                             t, k, n);
                tried++;
            }
            // bit flips
            for (int f = 0; f < 40; f++) {
                memcpy(mut, msg, n);
                int flips = (int)keel_rng_range(&rng, 1, 3);
                for (int k = 0; k < flips; k++) {
                    size_t bit = (size_t)keel_rng_range(&rng, 0, (int64_t)n * 8 - 1);
                    mut[bit / 8] ^= (uint8_t)(1u << (bit % 8));
                }
                long before = decoded_mutants;
                for (int u = NET_MSG_HELLO; u <= NET_MSG_FULL; u++)
                    if (decode_reencode((net_msg_type)u, mut, n, g_buf2))
                        decoded_mutants++;
                if (decoded_mutants != before)
                    check_all_decoders(mut, n);
                tried++;
            }
            // random tails after a valid prefix
            for (int f = 0; f < 20; f++) {
                size_t keep = (size_t)keel_rng_range(&rng, 0, (int64_t)n);
                size_t len = keep + (size_t)keel_rng_range(&rng, 0, 64);
                memcpy(mut, msg, keep);
                for (size_t k = keep; k < len; k++)
                    mut[k] = (uint8_t)keel_rng_next(&rng);
                check_all_decoders(mut, len);
                tried++;
            }
        }
    }
    // random buffers, each with every type in its first 4 bits
    for (int i = 0; i < 3000; i++) {
        size_t len = (size_t)keel_rng_range(&rng, 0, keel_rng_range(&rng, 0, 1) ? 40 : 1500);
        for (size_t k = 0; k < len; k++)
            mut[k] = (uint8_t)keel_rng_next(&rng);
        if (len) {
            mut[0] = (uint8_t)((mut[0] & 0xF0u) | (uint32_t)keel_rng_range(&rng, 0, 15));
            // zero runs make the variable-length and "unchanged" codes likely
            if (keel_rng_range(&rng, 0, 1))
                for (size_t k = 1; k < len; k++)
                    if (keel_rng_range(&rng, 0, 2))
                        mut[k] = 0;
        }
        check_all_decoders(mut, len);
        tried++;
    }
    cr_log_info("fuzz: %ld mutated buffers, %ld mutants decoded (and re-encoded to the same bytes)\n", tried,
                decoded_mutants);
}

// ---- sizes --------------------------------------------------------------------------------------

static size_t snapshot_size(keel_rng *r, uint32_t chars, uint32_t span, cmd_mode mode)
{
    gen_snapshot(&g_snap, r, 1000, span, chars, 0, mode);
    g_snap.s.last_applied_tick = 998;
    g_snap.s.substituted_mask = 0;
    g_snap.s.input_margin_q8 = 2 * 256;
    size_t n = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
    cr_assert(n > 0);
    return n;
}

Test(net_proto, message_sizes)
{
    keel_rng r1 = {61}, r2 = {61}, r3 = {61}, r4 = {61};
    size_t one = snapshot_size(&r1, 64, 1, CMD_SAME);
    size_t a = snapshot_size(&r2, 64, 2, CMD_SAME);
    size_t b = snapshot_size(&r3, 64, 2, CMD_SMALL_YAW);
    size_t c = snapshot_size(&r4, 64, 10, CMD_MIXED);
    keel_rng r5 = {62};
    size_t empty = snapshot_size(&r5, 0, 2, CMD_SAME);
    fprintf(stderr, "net sizes: delta snapshot header alone (no characters, 2 ticks): %zu bytes\n", empty);
    fprintf(stderr, "net sizes: 64 characters x 1 tick (first tick: full commands against zero): %zu bytes\n", one);
    fprintf(stderr,
            "net sizes: (a) 64 characters x 2 ticks, second tick unchanged: %zu bytes (+%zu bytes = %.2f "
            "bits/character for the second tick)\n",
            a, a - one, (double)(a - one) * 8.0 / 64.0);
    fprintf(stderr,
            "net sizes: (b) 64 characters x 2 ticks, yaw +-1..40 units every tick: %zu bytes (+%zu = %.2f "
            "bits/character for the second tick)\n",
            b, b - one, (double)(b - one) * 8.0 / 64.0);
    fprintf(stderr,
            "net sizes: (c) 64 characters x 10 ticks, mixed (50%% same, 30%% turn, 10%% move/buttons, 10%% new): %zu "
            "bytes (%.2f bits/character/tick after the first)\n",
            c, (double)(c - one) * 8.0 / (64.0 * 9.0));
    cr_assert(a - one <= 64 / 8 + 1, "an unchanged tick costs one bit per character");
    cr_assert(b - one <= 64 * 14 / 8 + 1, "a small turn costs at most 14 bits");
    // an input packet of 8 commands with small changes
    keel_rng r = {63};
    net_input in;
    memset(&in, 0, sizeof in);
    in.sequence = 777, in.client_time_ms = 12345, in.newest_tick = 5000, in.ack_tick = 4990, in.count = 8;
    in.commands[0] = rnd_command(&r, 4993);
    for (uint32_t i = 1; i < 8; i++) {
        in.commands[i] = in.commands[i - 1];
        in.commands[i].tick++;
        in.commands[i].yaw = (sim_angle)(in.commands[i].yaw + (sim_angle)keel_rng_range(&r, -300, 300));
        if (i == 4)
            in.commands[i].forward = 0;
    }
    size_t n = net_input_encode(&in, g_buf, BUF_MAX);
    in.count = 1, in.newest_tick = 4993;
    size_t n1 = net_input_encode(&in, g_buf, BUF_MAX);
    fprintf(stderr,
            "net sizes: input of 8 commands (yaw +-300 units each tick, one axis change): %zu bytes (1 command: %zu)\n",
            n, n1);
    cr_assert(n > 0 && n < 40);
}

// ---- identity -------------------------------------------------------------------------------------

Test(net_identity, same_inputs_same_identity)
{
    sim_move_settings s = sim_move_default_settings();
    sim_level lv;
    cr_assert_eq(sim_level_builtin(&lv), 0);
    net_sim_identity a = net_identity_make(&s, &lv, NULL), b = net_identity_make(&s, &lv, NULL);
    const char *why = NULL;
    cr_assert(net_identity_equal(&a, &b, &why));
    cr_assert_str_empty(why);
    cr_assert_eq(a.behaviour_version, NET_BEHAVIOUR_VERSION);
    cr_assert_eq(a.tick_rate, 64);
    // the cookie does not count, the markers do not count
    sim_move_settings s2 = s;
    s2.cookie ^= 1;
    cr_assert_eq(net_settings_digest(&s2), a.settings_digest);
    if (lv.marker_count) {
        sim_level l2 = lv;
        sim_marker mk[64];
        uint32_t mc = lv.marker_count < 64 ? lv.marker_count : 64;
        memcpy(mk, lv.markers, mc * sizeof mk[0]);
        mk[0].position.x += 1;
        l2.markers = mk, l2.marker_count = mc;
        cr_assert_eq(net_level_digest(&l2), a.level_digest);
    }
    // pinned: the digests are part of the protocol (a change refuses old builds)
    cr_log_info("default settings digest %016llx, builtin level digest %016llx\n",
                (unsigned long long)a.settings_digest, (unsigned long long)a.level_digest);
    sim_level_free(&lv);
}

Test(net_identity, every_setting_and_vertex_changes_the_digest)
{
    sim_move_settings s = sim_move_default_settings();
    uint64_t d0 = net_settings_digest(&s);
    // every field but the cookie, one at a time
    for (int f = 0;; f++) {
        sim_move_settings t = s;
        switch (f) {
        case 0: t.tick_rate++; break;
        case 1: t.stand_shape.type ^= 1; break;
        case 2: t.stand_shape.radius++; break;
        case 3: t.stand_shape.half.x++; break;
        case 4: t.stand_shape.half.y++; break;
        case 5: t.stand_shape.half.z++; break;
        case 6: t.crouch_shape.type ^= 1; break;
        case 7: t.crouch_shape.radius++; break;
        case 8: t.crouch_shape.half.x++; break;
        case 9: t.crouch_shape.half.y++; break;
        case 10: t.crouch_shape.half.z++; break;
        case 11: t.gravity++; break;
        case 12: t.max_speed++; break;
        case 13: t.crouch_speed_scale++; break;
        case 14: t.accelerate++; break;
        case 15: t.air_accelerate++; break;
        case 16: t.air_max_speed++; break;
        case 17: t.friction++; break;
        case 18: t.stop_speed++; break;
        case 19: t.jump_velocity++; break;
        case 20: t.step_height++; break;
        case 21: t.max_slope_cos++; break;
        case 22: t.skin++; break;
        case 23: t.max_slide_iterations++; break;
        case 24: t.depen_iterations++; break;
        case 25: t.fly_speed++; break;
        case 26: t.swim_speed++; break;
        case 27: t.water_gravity_scale++; break;
        case 28: t.respawn_depth++; break;
        default: f = -1; break;
        }
        if (f < 0)
            break;
        cr_assert_neq(net_settings_digest(&t), d0, "setting %d does not change the digest", f);
    }
    sim_level lv;
    cr_assert_eq(sim_level_builtin(&lv), 0);
    cr_assert(lv.vertex_count > 0 && lv.triangle_count > 0 && lv.box_count > 0);
    uint64_t l0 = net_level_digest(&lv);
    lv.vertices[lv.vertex_count / 2].y += 1;
    uint64_t l1 = net_level_digest(&lv);
    cr_assert_neq(l1, l0, "one vertex moved by one raw unit");
    lv.vertices[lv.vertex_count / 2].y -= 1;
    cr_assert_eq(net_level_digest(&lv), l0);
    uint32_t tmp = lv.indices[0];
    lv.indices[0] = lv.indices[1], lv.indices[1] = tmp;
    cr_assert_neq(net_level_digest(&lv), l0, "triangle winding");
    lv.indices[1] = lv.indices[0], lv.indices[0] = tmp;
    lv.boxes[0].axis[2].z -= 1;
    cr_assert_neq(net_level_digest(&lv), l0, "box axis");
    lv.boxes[0].axis[2].z += 1;
    lv.box_count--;
    cr_assert_neq(net_level_digest(&lv), l0, "one box fewer");
    lv.box_count++;
    cr_assert_eq(net_level_digest(&lv), l0);

    net_sim_identity a = net_identity_make(&s, &lv, NULL), b = a;
    const char *why;
    b.behaviour_version++;
    cr_assert(!net_identity_equal(&a, &b, &why));
    cr_assert_str_eq(why, "behaviour version differs");
    b = a, b.tick_rate = 60;
    cr_assert(!net_identity_equal(&a, &b, &why));
    cr_assert_str_eq(why, "tick rate differs");
    sim_move_settings t = s;
    t.jump_velocity++;
    b = net_identity_make(&t, &lv, NULL);
    cr_assert(!net_identity_equal(&a, &b, &why));
    cr_assert_str_eq(why, "settings differ");
    lv.vertices[0].x++;
    b = net_identity_make(&s, &lv, NULL);
    cr_assert(!net_identity_equal(&a, &b, &why));
    cr_assert_str_eq(why, "level differs");
    cr_assert(!net_identity_equal(&a, &b, NULL));
    sim_level_free(&lv);
}

// ---- the scene digest: platforms and water -------------------------------------------------

Test(net_proto, hello_layout_of_version_2)
{
    cr_assert_eq(NET_PROTOCOL_VERSION, 6u); // the hello did not change in versions 3 to 6
    keel_rng rng = {77};
    net_hello h = rnd_hello(&rng);
    h.protocol_version = NET_PROTOCOL_VERSION;
    cr_assert_eq(net_hello_encode(&h, g_buf, BUF_MAX), 36u, "the hello is 36 bytes (docs/protocol.md)");
    // A version 1 hello (no scene digest, 28 bytes) does not decode, but its
    // version can still be read, so the server refuses it as another version.
    net_bit_writer w;
    net_bw_init(&w, g_buf, BUF_MAX);
    net_bw_u(&w, NET_MSG_HELLO, 4);
    net_bw_u(&w, 1, 16);
    net_bw_u(&w, h.identity.behaviour_version, 32);
    net_bw_u64(&w, h.identity.settings_digest);
    net_bw_u64(&w, h.identity.level_digest);
    net_bw_u(&w, h.identity.tick_rate, 10);
    net_bw_u(&w, h.client_time_ms, 32);
    size_t n = net_bw_finish(&w);
    cr_assert_eq(n, 28u);
    net_hello d;
    cr_assert(!net_hello_decode(g_buf, n, &d));
    uint16_t v = 0;
    cr_assert(net_hello_peek_version(g_buf, n, &v) && v == 1);
    cr_assert(!net_hello_peek_version(g_buf, 2, &v), "20 bits are needed");
    g_buf[0] = (uint8_t)((g_buf[0] & 0xF0u) | NET_MSG_WELCOME);
    cr_assert(!net_hello_peek_version(g_buf, n, &v), "not a hello");
}

typedef struct scene_setup {
    sim_platform_def platforms[4];
    uint32_t platform_count;
    sim_aabb waters[4];
    uint32_t water_count;
} scene_setup;

static uint64_t setup_digest(const sim_world *world, const scene_setup *su)
{
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, 4);
    cr_assert_not_null(sc);
    for (uint32_t i = 0; i < su->platform_count; i++)
        cr_assert_eq(sim_scene_add_platform(sc, &su->platforms[i]), 0, "platform %u refused", i);
    for (uint32_t i = 0; i < su->water_count; i++)
        cr_assert_eq(sim_scene_add_water(sc, su->waters[i]), 0, "water %u refused", i);
    uint64_t d = net_scene_digest(sc);
    sim_scene_destroy(sc);
    return d;
}

Test(net_identity, the_scene_digest_covers_every_platform_field_and_water_box)
{
    sim_level lv;
    cr_assert_eq(sim_level_builtin(&lv), 0);
    sim_world *world = sim_world_create(&lv, NULL, NULL);
    cr_assert_not_null(world);
    sim_move_settings s = sim_move_default_settings();

    // nothing: a fixed digest, the same as no scene at all
    scene_setup none = {0};
    uint64_t d_none = setup_digest(world, &none);
    cr_assert_eq(d_none, net_scene_digest(NULL));
    // XXH64(8 zero bytes: two zero counts, SIM_HASH_SEED), pinned: it is part of the protocol
    cr_log_info("empty scene digest %016llx\n", (unsigned long long)d_none);
    cr_assert_eq(d_none, 0xa147f0f460fedfe5ull, "empty scene digest %016llx", (unsigned long long)d_none);

    // the built-in pair, as keel-server --platforms builds it, plus water
    sim_scene *area = sim_scene_create(world, &s, 4);
    cr_assert_eq(sim_scene_add_area_platforms(area, &lv, 0x7FFF0001u, 0x7FFF0002u), 0);
    scene_setup base = {0};
    base.platform_count = sim_scene_platform_count(area);
    cr_assert_eq(base.platform_count, 2);
    for (uint32_t i = 0; i < base.platform_count; i++)
        base.platforms[i] = *sim_scene_platform(area, i);
    uint64_t d_area = net_scene_digest(area);
    sim_scene_destroy(area);
    cr_assert_neq(d_area, d_none, "platforms change the digest");
    cr_assert_eq(setup_digest(world, &base), d_area, "equal setups, equal digests");
    base.water_count = 2;
    base.waters[0] = (sim_aabb){sim_v3(SIM_FX_INT(-3), SIM_FX_INT(-2), SIM_FX_INT(-3)),
                                sim_v3(SIM_FX_INT(3), SIM_FX_INT(1), SIM_FX_INT(3))};
    base.waters[1] =
        (sim_aabb){sim_v3(SIM_FX_INT(10), 0, SIM_FX_INT(10)), sim_v3(SIM_FX_INT(12), SIM_FX_INT(2), SIM_FX_INT(14))};
    uint64_t d0 = setup_digest(world, &base);
    cr_assert_neq(d0, d_area, "water changes the digest");
    cr_assert_eq(setup_digest(world, &base), d0);

    // the order platforms are added in does not count (the scene keeps id order)
    scene_setup rev = base;
    rev.platforms[0] = base.platforms[1], rev.platforms[1] = base.platforms[0];
    cr_assert_eq(setup_digest(world, &rev), d0);
    // unused waypoint slots do not count
    scene_setup junk = base;
    junk.platforms[0].points[SIM_PLATFORM_MAX_POINTS - 1].x = SIM_FX_INT(5);
    cr_assert_eq(setup_digest(world, &junk), d0);

    // every field of either platform, one at a time
    for (uint32_t k = 0; k < 2; k++) {
        for (int f = 0;; f++) {
            scene_setup t = base;
            sim_platform_def *p = &t.platforms[k];
            switch (f) {
            case 0: p->id ^= 0x100u; break;
            case 1: p->half.x++; break;
            case 2: p->half.y++; break;
            case 3: p->half.z++; break;
            case 4: p->points[0].x++; break;
            case 5: p->points[0].y++; break;
            case 6: p->points[0].z++; break;
            case 7: p->points[1].x--; break;
            case 8: p->points[1].y--; break;
            case 9: p->points[1].z--; break;
            case 10: p->point_count++; break; // a third point at the zero it was
            case 11: p->point_count--; break;
            case 12: p->ticks_per_leg++; break;
            case 13: p->pause_ticks++; break;
            default: f = -1; break;
            }
            if (f < 0)
                break;
            cr_assert_neq(setup_digest(world, &t), d0, "platform %u field %d does not change the digest", k, f);
        }
    }
    // every coordinate of either water box, their order, one box fewer
    for (uint32_t k = 0; k < 2; k++) {
        for (int c = 0; c < 6; c++) {
            scene_setup t = base;
            sim_vec3 *corner = c < 3 ? &t.waters[k].min : &t.waters[k].max;
            sim_fx grow = c < 3 ? -1 : 1; // min <= max still
            if (c % 3 == 0)
                corner->x += grow;
            else if (c % 3 == 1)
                corner->y += grow;
            else
                corner->z += grow;
            cr_assert_neq(setup_digest(world, &t), d0, "water %u coordinate %d does not change the digest", k, c);
        }
    }
    scene_setup swapped = base;
    swapped.waters[0] = base.waters[1], swapped.waters[1] = base.waters[0];
    cr_assert_neq(setup_digest(world, &swapped), d0, "water order counts");
    scene_setup fewer = base;
    fewer.water_count = 1;
    cr_assert_neq(setup_digest(world, &fewer), d0);
    fewer = base;
    fewer.platform_count = 1;
    cr_assert_neq(setup_digest(world, &fewer), d0);
    // in the identity, with the reason the server sends
    net_sim_identity a = net_identity_make(&s, &lv, NULL), b = a;
    b.scene_digest = d_area;
    const char *why = NULL;
    cr_assert(!net_identity_equal(&a, &b, &why));
    cr_assert_str_eq(why, "platforms or water differ (server and client must both use --platforms or neither)");
    cr_assert_leq(strlen("simulation differs from the server's: ") + strlen(why), NET_REASON_MAX,
                  "the refusal carries the whole reason");
    b = a;
    cr_assert(net_identity_equal(&a, &b, &why));
    sim_world_destroy(world);
    sim_level_free(&lv);
}

// ---- the reference: what the receiver already knows of the baseline ---------------------------

// The roster at B (characters running tick B, less its joins, plus its
// leaves) with the commands of tick B, each changed a little or not, as the
// commands of tick B - 1 the receiver would hold.
static uint32_t make_reference(const net_snapshot *s, net_tick_command *ref, keel_rng *r, bool differ)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->command_count && s->commands[k].command.tick == s->baseline_tick; k++) {
        bool joined = false;
        for (uint32_t j = 0; j < s->join_count; j++)
            joined |= s->joins[j].tick == s->baseline_tick && s->joins[j].state.id == s->commands[k].id;
        if (joined)
            continue;
        ref[n] = s->commands[k];
        ref[n].command.tick = s->baseline_tick - 1u;
        if (differ && keel_rng_range(r, 0, 1))
            ref[n].command.yaw = (sim_angle)(ref[n].command.yaw + 7u);
        n++;
    }
    for (uint32_t l = 0; l < s->leave_count && s->leaves[l].tick == s->baseline_tick; l++) {
        uint32_t at = 0;
        while (at < n && ref[at].id < s->leaves[l].id)
            at++;
        memmove(&ref[at + 1], &ref[at], (n - at) * sizeof ref[0]);
        memset(&ref[at], 0, sizeof ref[at]);
        ref[at].id = s->leaves[l].id;
        ref[at].command.tick = s->baseline_tick - 1u;
        n++;
    }
    return n;
}

Test(net_proto, snapshot_with_a_reference_round_trips_and_is_small)
{
    static net_tick_command ref[NET_MAX_CHARACTERS * 2];
    keel_rng r = {71};
    for (int round = 0; round < 300; round++) {
        gen_snapshot(&g_snap, &r, 1000, (uint32_t)keel_rng_range(&r, 1, 8), (uint32_t)keel_rng_range(&r, 0, 64), 2,
                     CMD_MIXED);
        uint32_t n = make_reference(&g_snap.s, ref, &r, round % 2 == 0);
        g_snap.s.reference = ref;
        g_snap.s.reference_count = n;
        size_t len = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
        cr_assert(len > 0, "round %d: not encoded", round);
        snap_init(&g_snap2);
        cr_assert_not(net_snapshot_decode(g_buf, len, &g_snap2.s), "decoded without the reference");
        g_snap2.s.reference = ref;
        g_snap2.s.reference_count = n;
        cr_assert(net_snapshot_decode(g_buf, len, &g_snap2.s), "round %d: not decoded", round);
        cr_assert(snapshot_eq(&g_snap.s, &g_snap2.s), "round %d: differs", round);
        if (n > 0) {
            // a reference with another roster is refused by the encoder
            g_snap.s.reference_count = n - 1;
            cr_assert_eq(net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX), 0);
        }
    }
    // sizes: 64 characters, 2 ticks, nothing changed since B - 1
    keel_rng r2 = {61};
    gen_snapshot(&g_snap, &r2, 1000, 2, 64, 0, CMD_SAME);
    g_snap.s.last_applied_tick = 998;
    g_snap.s.input_margin_q8 = 2 * 256;
    uint32_t n = make_reference(&g_snap.s, ref, &r2, false);
    g_snap.s.reference = ref;
    g_snap.s.reference_count = n;
    size_t same = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
    keel_rng r3 = {61};
    gen_snapshot(&g_snap, &r3, 1000, 2, 64, 0, CMD_SMALL_YAW);
    g_snap.s.last_applied_tick = 998;
    g_snap.s.input_margin_q8 = 2 * 256;
    n = make_reference(&g_snap.s, ref, &r3, true);
    g_snap.s.reference = ref;
    g_snap.s.reference_count = n;
    size_t turning = net_snapshot_encode(&g_snap.s, g_buf, BUF_MAX);
    fprintf(stderr,
            "net sizes: with a reference, 64 characters x 2 ticks unchanged: %zu bytes (%.2f per character); "
            "turning: %zu bytes (%.2f per character)\n",
            same, same / 64.0, turning, turning / 64.0);
    cr_assert(same > 0 && turning > 0);
}

// net_held_bits is the tick-by-tick loop it replaces, over every span near
// the acknowledged tick and across the 32-bit wrap.
Test(net_proto, held_bits_are_the_ticks_of_the_kept_snapshot)
{
    static const uint32_t acks[] = {0, 100, 0xFFFFFFF0u, NET_TICK_NONE};
    for (uint32_t a = 0; a < 4; a++) {
        uint32_t c = acks[a];
        for (uint32_t db = 0; db < 48; db++) {
            for (uint32_t dt = db + 1; dt < 50; dt++) {
                uint32_t b = c - 4u + db, t = c - 4u + dt, want = 0;
                if (c != NET_TICK_NONE && t > c && t != NET_TICK_NONE && b < t)
                    for (uint32_t k = b > c ? b : c; k < t && k - c < 32u; k++)
                        want |= 1u << (k - c);
                cr_assert_eq(net_held_bits(c, b, t), want, "ack %u, [%u, %u)", c, b, t);
            }
        }
        cr_assert_eq(net_held_bits(c, 5, NET_TICK_NONE), 0);
    }
}
