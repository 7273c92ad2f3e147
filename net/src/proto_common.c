// keel: fields shared by several messages: commands, character states, the
// roster of a snapshot, tick offsets. MIT licence, see LICENSE.
#include <string.h>

#include "proto_internal.h"

_Static_assert(SIM_MOVE_TYPE_COUNT <= (1 << NET_MOVE_TYPE_BITS), "move type field too narrow");
_Static_assert(SIM_CHAR_KNOWN_FLAGS < (1u << NET_FLAGS_BITS), "flags field too narrow");
_Static_assert(NET_MAX_CHARACTERS < (1u << NET_COUNT_BITS), "count field too narrow");
_Static_assert(NET_MAX_FULL_PARTS < (1u << NET_PART_BITS), "part field too narrow");
_Static_assert(NET_FULL_PART_CHARACTERS < (1u << NET_PART_COUNT_BITS), "part count field too narrow");
_Static_assert(NET_MAX_SNAPSHOT_TICKS == (1u << NET_SPAN_BITS), "span field");
_Static_assert(NET_MAX_INPUT_COMMANDS < (1u << NET_INPUT_COUNT_BITS), "input count field");
_Static_assert(NET_REASON_MAX < (1u << NET_REASON_LEN_BITS), "reason length field too narrow");
_Static_assert(SIM_MOVE_MAX_TICK_RATE < (1 << NET_TICK_RATE_BITS), "tick rate field too narrow");

net_msg_type net_msg_peek_type(const uint8_t *data, size_t length)
{
    if (!data || length == 0)
        return (net_msg_type)0;
    unsigned t = data[0] & 0x0Fu;
    if (t < NET_MSG_HELLO || t > NET_MSG_FULL)
        return (net_msg_type)0;
    return (net_msg_type)t;
}

void net_expect_type(net_bit_reader *r, net_msg_type t)
{
    if (net_br_u(r, NET_TYPE_BITS) != (uint32_t)t)
        net_br_fail(r);
}

// ---- commands -----------------------------------------------------------------
//
// changed (1): 0 = the same as prev. Otherwise:
//   axes (1), then when set a mask of 4 (forward, right, up, buttons; not 0)
//   and each marked field (8 bits: int8 axes in -127..127, buttons raw);
//   yaw (1), then when set its angle delta; pitch (1), likewise.
// At least one of axes, yaw, pitch is set and every marked field differs.
// Angle delta: d = cur - prev as int16 (not 0), z = zigzag(d) - 1 in
// 0..65534, a 2-bit class c and z in 4 + 4c bits (the smallest class that holds it).

static bool axis_valid(int8_t a) { return a != INT8_MIN; }

bool net_command_valid(const sim_input *c)
{
    return axis_valid(c->forward) && axis_valid(c->right) && axis_valid(c->up);
}

static void write_angle(net_bit_writer *w, sim_angle prev, sim_angle cur)
{
    uint16_t diff = (uint16_t)(cur - prev);
    int32_t d = diff < 0x8000u ? (int32_t)diff : (int32_t)diff - 0x10000;
    uint32_t z = net_zigzag(d) - 1u; // d != 0
    unsigned c = 0;
    while (z >> (4u + 4u * c))
        c++;
    net_bw_u(w, c, 2);
    net_bw_u(w, z, 4u + 4u * c);
}

static sim_angle read_angle(net_bit_reader *r, sim_angle prev)
{
    unsigned c = net_br_u(r, 2);
    uint32_t z = net_br_u(r, 4u + 4u * c);
    if (z >= 0xFFFFu || (c > 0 && (z >> (4u * c)) == 0)) { // out of range, or not the smallest class
        net_br_fail(r);
        return prev;
    }
    int32_t d = net_unzigzag(z + 1u); // -32768 .. 32767, not 0
    return (sim_angle)((uint32_t)prev + (uint32_t)d);
}

void net_write_command(net_bit_writer *w, const sim_input *prev, const sim_input *cur)
{
    if (!net_command_valid(cur)) {
        net_bw_fail(w);
        return;
    }
    unsigned axes = (cur->forward != prev->forward ? 1u : 0u) | (cur->right != prev->right ? 2u : 0u) |
                    (cur->up != prev->up ? 4u : 0u) | (cur->buttons != prev->buttons ? 8u : 0u);
    bool yaw = cur->yaw != prev->yaw, pitch = cur->pitch != prev->pitch;
    bool changed = axes || yaw || pitch;
    net_bw_bool(w, changed);
    if (!changed)
        return;
    net_bw_bool(w, axes != 0);
    if (axes) {
        net_bw_u(w, axes, 4);
        if (axes & 1u)
            net_bw_s(w, cur->forward, 8);
        if (axes & 2u)
            net_bw_s(w, cur->right, 8);
        if (axes & 4u)
            net_bw_s(w, cur->up, 8);
        if (axes & 8u)
            net_bw_u(w, cur->buttons, 8);
    }
    net_bw_bool(w, yaw);
    if (yaw)
        write_angle(w, prev->yaw, cur->yaw);
    net_bw_bool(w, pitch);
    if (pitch)
        write_angle(w, prev->pitch, cur->pitch);
}

static int8_t read_axis(net_bit_reader *r, int8_t prev)
{
    int32_t v = net_br_s(r, 8);
    if (v == INT8_MIN || v == prev)
        net_br_fail(r);
    return (int8_t)v;
}

void net_read_command(net_bit_reader *r, const sim_input *prev, sim_input *cur, uint32_t tick)
{
    *cur = *prev;
    cur->tick = tick;
    if (!net_br_bool(r))
        return;
    bool any = false;
    if (net_br_bool(r)) {
        unsigned axes = net_br_u(r, 4);
        if (axes == 0)
            net_br_fail(r);
        if (axes & 1u)
            cur->forward = read_axis(r, prev->forward);
        if (axes & 2u)
            cur->right = read_axis(r, prev->right);
        if (axes & 4u)
            cur->up = read_axis(r, prev->up);
        if (axes & 8u) {
            cur->buttons = (uint8_t)net_br_u(r, 8);
            if (cur->buttons == prev->buttons)
                net_br_fail(r);
        }
        any = true;
    }
    if (net_br_bool(r)) {
        cur->yaw = read_angle(r, prev->yaw);
        any = true;
    }
    if (net_br_bool(r)) {
        cur->pitch = read_angle(r, prev->pitch);
        any = true;
    }
    if (!any)
        net_br_fail(r); // "changed" with nothing changed
}

// ---- character states: every field exact ------------------------------------------
//
// id (31), flags (10), move_type (4), ground (2), position, velocity,
// ground_normal, ground_velocity (3 x 32 each, raw Q16.16), ground_object
// (31), stuck_ticks (var), yaw (16), pitch (16).

bool net_state_valid(const sim_char_state *s) { return net_id_valid(s->id) && sim_char_state_check(s, NULL); }

static void write_vec(net_bit_writer *w, sim_vec3 v)
{
    net_bw_s(w, v.x, 32);
    net_bw_s(w, v.y, 32);
    net_bw_s(w, v.z, 32);
}

static sim_vec3 read_vec(net_bit_reader *r)
{
    sim_vec3 v;
    v.x = net_br_s(r, 32);
    v.y = net_br_s(r, 32);
    v.z = net_br_s(r, 32);
    return v;
}

void net_write_state(net_bit_writer *w, const sim_char_state *s)
{
    // Widths first: a value that does not fit its field cannot be written at all.
    if (s->move_type < 0 || s->move_type >= (1 << NET_MOVE_TYPE_BITS) || s->ground < 0 ||
        s->ground >= (1 << NET_GROUND_BITS)) {
        net_bw_fail(w);
        return;
    }
    net_bw_u(w, s->id, NET_ID_BITS);
    net_bw_u(w, s->flags, NET_FLAGS_BITS);
    net_bw_u(w, (uint32_t)s->move_type, NET_MOVE_TYPE_BITS);
    net_bw_u(w, (uint32_t)s->ground, NET_GROUND_BITS);
    write_vec(w, s->position);
    write_vec(w, s->velocity);
    write_vec(w, s->ground_normal);
    write_vec(w, s->ground_velocity);
    net_bw_u(w, s->ground_object, NET_ID_BITS);
    net_bw_var(w, s->stuck_ticks, NET_VAR_GROUP);
    net_bw_u(w, s->yaw, 16);
    net_bw_u(w, s->pitch, 16);
}

void net_read_state(net_bit_reader *r, sim_char_state *s)
{
    memset(s, 0, sizeof *s);
    s->id = net_br_u(r, NET_ID_BITS);
    s->flags = net_br_u(r, NET_FLAGS_BITS);
    s->move_type = (int32_t)net_br_u(r, NET_MOVE_TYPE_BITS);
    s->ground = (int32_t)net_br_u(r, NET_GROUND_BITS);
    s->position = read_vec(r);
    s->velocity = read_vec(r);
    s->ground_normal = read_vec(r);
    s->ground_velocity = read_vec(r);
    s->ground_object = net_br_u(r, NET_ID_BITS);
    s->stuck_ticks = net_br_var(r, NET_VAR_GROUP);
    s->yaw = (sim_angle)net_br_u(r, 16);
    s->pitch = (sim_angle)net_br_u(r, 16);
    if (!r->error && !net_state_valid(s))
        net_br_fail(r);
}

// ---- small fields -----------------------------------------------------------------

// none (1); else T - 1 - last as var.
void net_write_last_applied(net_bit_writer *w, uint32_t tick, uint32_t last)
{
    bool none = last == NET_TICK_NONE;
    net_bw_bool(w, none);
    if (none)
        return;
    if (last >= tick) {
        net_bw_fail(w);
        return;
    }
    net_bw_var(w, tick - 1u - last, NET_VAR_GROUP);
}

uint32_t net_read_last_applied(net_bit_reader *r, uint32_t tick)
{
    if (net_br_bool(r))
        return NET_TICK_NONE;
    uint32_t back = net_br_var(r, NET_VAR_GROUP);
    if (tick == 0 || back > tick - 1u) {
        net_br_fail(r);
        return NET_TICK_NONE;
    }
    return tick - 1u - back;
}

void net_write_margin(net_bit_writer *w, int32_t margin)
{
    if (margin < -NET_MARGIN_LIMIT || margin > NET_MARGIN_LIMIT) {
        net_bw_fail(w);
        return;
    }
    net_bw_svar(w, margin, NET_VAR_GROUP);
}

int32_t net_read_margin(net_bit_reader *r)
{
    int32_t m = net_br_svar(r, NET_VAR_GROUP);
    if (m < -NET_MARGIN_LIMIT || m > NET_MARGIN_LIMIT) {
        net_br_fail(r);
        return 0;
    }
    return m;
}

// gap = id - prev - 1: one bit 0 for a gap of 0 (consecutive ids), else a
// bit 1 and gap - 1 as var.
void net_write_id_gap(net_bit_writer *w, uint32_t prev, uint32_t id)
{
    if (id <= prev || !net_id_valid(id)) {
        net_bw_fail(w);
        return;
    }
    uint32_t gap = id - prev - 1u;
    net_bw_bool(w, gap != 0);
    if (gap)
        net_bw_var(w, gap - 1u, NET_VAR_GROUP);
}

uint32_t net_read_id_gap(net_bit_reader *r, uint32_t prev)
{
    uint32_t gap = 0;
    if (net_br_bool(r)) {
        uint32_t g = net_br_var(r, NET_VAR_GROUP);
        if (g == UINT32_MAX) {
            net_br_fail(r);
            return 0;
        }
        gap = g + 1u;
    }
    // prev < 2^31 and gap < 2^32: the sum fits 64 bits.
    uint64_t id = (uint64_t)prev + gap + 1u;
    if (r->error || id >= (UINT64_C(1) << NET_ID_BITS)) {
        net_br_fail(r);
        return 0;
    }
    return (uint32_t)id;
}

// ---- roster ------------------------------------------------------------------------

static uint32_t roster_find(const net_roster *ro, uint32_t id)
{
    uint32_t lo = 0, hi = ro->n; // first index with ids[i] >= id
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (ro->ids[mid] < id)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

bool net_roster_leave(net_roster *ro, uint32_t id)
{
    uint32_t i = roster_find(ro, id);
    if (i >= ro->n || ro->ids[i] != id)
        return false;
    memmove(&ro->ids[i], &ro->ids[i + 1u], (size_t)(ro->n - i - 1u) * sizeof ro->ids[0]);
    memmove(&ro->prev[i], &ro->prev[i + 1u], (size_t)(ro->n - i - 1u) * sizeof ro->prev[0]);
    memmove(&ro->prev_game[i], &ro->prev_game[i + 1u], (size_t)(ro->n - i - 1u) * sizeof ro->prev_game[0]);
    ro->n--;
    return true;
}

bool net_roster_join(net_roster *ro, uint32_t id)
{
    if (!net_id_valid(id) || ro->n >= NET_MAX_CHARACTERS)
        return false;
    uint32_t i = roster_find(ro, id);
    if (i < ro->n && ro->ids[i] == id)
        return false;
    memmove(&ro->ids[i + 1u], &ro->ids[i], (size_t)(ro->n - i) * sizeof ro->ids[0]);
    memmove(&ro->prev[i + 1u], &ro->prev[i], (size_t)(ro->n - i) * sizeof ro->prev[0]);
    memmove(&ro->prev_game[i + 1u], &ro->prev_game[i], (size_t)(ro->n - i) * sizeof ro->prev_game[0]);
    ro->ids[i] = id;
    memset(&ro->prev[i], 0, sizeof ro->prev[i]);
    memset(&ro->prev_game[i], 0, sizeof ro->prev_game[i]);
    ro->n++;
    return true;
}
