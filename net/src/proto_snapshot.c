// keel: the delta snapshot (server -> client). MIT licence, see LICENSE.
//
// Header: type, sequence (16), client_time_echo (16), echo_delay_ms (16),
// tick T (32), T - B - 1 (5), last_applied_tick, substituted_mask (var),
// input_margin_q8 (svar), state_hash (64).
// Then one bit: 1 when the roster at B and each character's previous command
// come from the reference both sides hold (net_snapshot.reference); 0 when
// the characters present at the baseline B before anything happens in tick B
// follow: their count (9) and ids, sorted, gap-coded. Then tick by tick, B ..
// T - 1: one bit "joins or leaves"; when set, the leave count and the join
// count (var each, not both 0), the leaving ids (gap-coded, each present), the
// joining characters' states (ids increasing, each absent after the leaves);
// then one command per present character in id order, delta-coded against
// that character's command in the previous tick of the message (in the first
// tick against its reference command, or zero without a reference; zero in
// the tick it joined).
#include <string.h>

#include "proto_internal.h"

static bool header_valid(const net_snapshot *m)
{
    if (m->tick == NET_TICK_NONE || m->baseline_tick >= m->tick || m->tick - m->baseline_tick > NET_MAX_SNAPSHOT_TICKS)
        return false;
    if (m->last_applied_tick != NET_TICK_NONE && m->last_applied_tick >= m->tick)
        return false;
    if (m->input_margin_q8 < -NET_MARGIN_LIMIT || m->input_margin_q8 > NET_MARGIN_LIMIT)
        return false;
    if (m->join_count > m->join_capacity || m->leave_count > m->leave_capacity ||
        m->command_count > m->command_capacity)
        return false;
    if ((m->join_count && !m->joins) || (m->leave_count && !m->leaves) || (m->command_count && !m->commands))
        return false;
    return true;
}

/// Joins and leaves in (tick, id) order, strictly, every tick inside [B, T).
static bool events_sorted(const net_snapshot *m)
{
    for (uint32_t i = 0; i < m->leave_count; i++) {
        const net_leave *l = &m->leaves[i];
        if (l->tick < m->baseline_tick || l->tick >= m->tick || !net_id_valid(l->id))
            return false;
        if (i > 0 && (l->tick < l[-1].tick || (l->tick == l[-1].tick && l->id <= l[-1].id)))
            return false;
    }
    for (uint32_t i = 0; i < m->join_count; i++) {
        const net_join *j = &m->joins[i];
        if (j->tick < m->baseline_tick || j->tick >= m->tick || !net_id_valid(j->state.id))
            return false;
        if (i > 0 && (j->tick < j[-1].tick || (j->tick == j[-1].tick && j->state.id <= j[-1].state.id)))
            return false;
    }
    return true;
}

/// The characters present at B before tick B's leaves and joins, from the
/// commands of tick B: those, less tick B's joins, plus its leaves.
static bool initial_roster(const net_snapshot *m, net_roster *ro)
{
    ro->n = 0;
    uint32_t prev_id = 0;
    for (uint32_t k = 0; k < m->command_count && m->commands[k].command.tick == m->baseline_tick; k++) {
        if (m->commands[k].id <= prev_id || !net_roster_join(ro, m->commands[k].id))
            return false;
        prev_id = m->commands[k].id;
    }
    for (uint32_t i = 0; i < m->join_count && m->joins[i].tick == m->baseline_tick; i++)
        if (!net_roster_leave(ro, m->joins[i].state.id))
            return false;
    for (uint32_t i = 0; i < m->leave_count && m->leaves[i].tick == m->baseline_tick; i++)
        if (!net_roster_join(ro, m->leaves[i].id))
            return false;
    return true;
}

/// The reference (net_snapshot.reference) as the roster at B: ids valid
/// and increasing, each with its previous command.
static bool reference_roster(const net_snapshot *m, net_roster *ro)
{
    ro->n = 0;
    if (m->reference_count > NET_MAX_CHARACTERS)
        return false;
    for (uint32_t i = 0; i < m->reference_count; i++) {
        const net_tick_command *c = &m->reference[i];
        if ((i > 0 && c->id <= m->reference[i - 1].id) || !net_roster_join(ro, c->id) ||
            !net_command_valid(&c->command))
            return false;
        ro->prev[ro->n - 1u] = c->command;
        memcpy(ro->prev_game[ro->n - 1u], m->game ? c->game : (const uint8_t[NET_GAME_COMMAND_BYTES]){0},
               NET_GAME_COMMAND_BYTES);
    }
    return true;
}

/// Walks the ticks as the decoder will, checking that the commands follow
/// the roster; writes the body when `w` is given. `values` also checks each
/// join state and command.
static bool walk(const net_snapshot *m, net_bit_writer *w, bool values)
{
    if (!events_sorted(m))
        return false;
    net_roster ro;
    if (!initial_roster(m, &ro))
        return false;
    if (m->reference) {
        // The receiver knows the roster at B: it must be the same one.
        net_roster ref;
        if (!reference_roster(m, &ref) || ref.n != ro.n)
            return false;
        for (uint32_t i = 0; i < ro.n; i++) {
            if (ref.ids[i] != ro.ids[i])
                return false;
            ro.prev[i] = ref.prev[i];
            memcpy(ro.prev_game[i], ref.prev_game[i], NET_GAME_COMMAND_BYTES);
        }
    }
    if (w) {
        net_bw_bool(w, m->reference != NULL);
        if (!m->reference) {
            net_bw_u(w, ro.n, NET_COUNT_BITS);
            for (uint32_t i = 0; i < ro.n; i++)
                net_write_id_gap(w, i ? ro.ids[i - 1] : 0, ro.ids[i]);
        }
    }
    uint32_t li = 0, ji = 0, k = 0;
    for (uint32_t t = m->baseline_tick; t != m->tick; t++) {
        uint32_t l0 = li, j0 = ji;
        while (li < m->leave_count && m->leaves[li].tick == t)
            li++;
        while (ji < m->join_count && m->joins[ji].tick == t)
            ji++;
        if (w) {
            net_bw_bool(w, li != l0 || ji != j0);
            if (li != l0 || ji != j0) {
                net_bw_var(w, li - l0, NET_VAR_GROUP);
                net_bw_var(w, ji - j0, NET_VAR_GROUP);
            }
        }
        for (uint32_t i = l0; i < li; i++) {
            if (!net_roster_leave(&ro, m->leaves[i].id))
                return false;
            if (w)
                net_write_id_gap(w, i > l0 ? m->leaves[i - 1].id : 0, m->leaves[i].id);
        }
        for (uint32_t i = j0; i < ji; i++) {
            if (!net_roster_join(&ro, m->joins[i].state.id) || (values && !net_state_valid(&m->joins[i].state)))
                return false;
            if (w)
                net_write_state(w, &m->joins[i].state);
        }
        for (uint32_t i = 0; i < ro.n; i++, k++) {
            if (k >= m->command_count)
                return false;
            const net_tick_command *c = &m->commands[k];
            if (c->id != ro.ids[i] || c->command.tick != t ||
                (values && (!net_command_valid(&c->command) || !net_game_payload_valid(m->game, c->game))))
                return false;
            if (w) {
                net_write_command(w, &ro.prev[i], &c->command);
                net_write_game(w, m->game, ro.prev_game[i], c->game);
            }
            ro.prev[i] = c->command;
            if (m->game)
                memcpy(ro.prev_game[i], c->game, NET_GAME_COMMAND_BYTES);
        }
    }
    return k == m->command_count;
}

bool net_snapshot_valid(const net_snapshot *m) { return header_valid(m) && walk(m, NULL, true); }

static void write_header(net_bit_writer *w, const net_snapshot *m)
{
    net_write_type(w, NET_MSG_SNAPSHOT);
    net_bw_u(w, m->sequence, 16);
    net_bw_u(w, m->client_time_echo, 16);
    net_bw_u(w, m->echo_delay_ms, 16);
    net_bw_u(w, m->tick, 32);
    uint32_t span = m->tick - m->baseline_tick;
    if (span < 1 || span > NET_MAX_SNAPSHOT_TICKS)
        net_bw_fail(w);
    net_bw_u(w, (span - 1u) & (NET_MAX_SNAPSHOT_TICKS - 1u), NET_SPAN_BITS);
    net_write_last_applied(w, m->tick, m->last_applied_tick);
    net_bw_var(w, m->substituted_mask, NET_VAR_GROUP);
    net_write_margin(w, m->input_margin_q8);
    net_bw_u64(w, m->state_hash);
}

size_t net_snapshot_write(const net_snapshot *m, uint8_t *out, size_t capacity)
{
    net_bit_writer w;
    net_bw_init(&w, out, capacity);
    write_header(&w, m);
    if (w.error || !walk(m, &w, false))
        return 0;
    return net_bw_finish(&w);
}

size_t net_snapshot_encode(const net_snapshot *m, uint8_t *out, size_t capacity)
{
    return net_snapshot_valid(m) ? net_snapshot_write(m, out, capacity) : 0;
}

// The fixed-width header (everything before the roster bit).
static bool read_header(net_bit_reader *r, net_snapshot *m)
{
    m->join_count = m->leave_count = m->command_count = 0;
    net_expect_type(r, NET_MSG_SNAPSHOT);
    m->sequence = (uint16_t)net_br_u(r, 16);
    m->client_time_echo = (uint16_t)net_br_u(r, 16);
    m->echo_delay_ms = (uint16_t)net_br_u(r, 16);
    m->tick = net_br_u(r, 32);
    uint32_t span = net_br_u(r, NET_SPAN_BITS) + 1u;
    if (m->tick == NET_TICK_NONE || m->tick < span)
        net_br_fail(r);
    m->baseline_tick = m->tick - span;
    m->last_applied_tick = net_read_last_applied(r, m->tick);
    m->substituted_mask = net_br_var(r, NET_VAR_GROUP);
    m->input_margin_q8 = net_read_margin(r);
    m->state_hash = net_br_u64(r);
    return !r->error && m->input_margin_q8 >= -NET_MARGIN_LIMIT && m->input_margin_q8 <= NET_MARGIN_LIMIT;
}

bool net_snapshot_peek(const uint8_t *data, size_t length, net_snapshot *m)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    return read_header(&r, m);
}

bool net_snapshot_decode(const uint8_t *data, size_t length, net_snapshot *m)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    if (!read_header(&r, m))
        return false;

    net_roster ro;
    ro.n = 0;
    if (net_br_bool(&r)) {
        if (!m->reference || !reference_roster(m, &ro))
            return false;
    } else {
        // an explicit roster: the reference, if any, is not what was used
        uint32_t n0 = net_br_u(&r, NET_COUNT_BITS);
        if (n0 > NET_MAX_CHARACTERS)
            return false;
        for (uint32_t i = 0; i < n0 && !r.error; i++) {
            uint32_t id = net_read_id_gap(&r, i ? ro.ids[i - 1] : 0);
            if (!r.error && !net_roster_join(&ro, id))
                return false;
        }
    }
    for (uint32_t t = m->baseline_tick; t != m->tick && !r.error; t++) {
        if (net_br_bool(&r)) {
            uint32_t leaves = net_br_var(&r, NET_VAR_GROUP);
            uint32_t joins = net_br_var(&r, NET_VAR_GROUP);
            if (r.error || (leaves == 0 && joins == 0) || leaves > ro.n)
                return false;
            if (leaves > m->leave_capacity - m->leave_count || joins > m->join_capacity - m->join_count)
                return false;
            for (uint32_t i = 0; i < leaves && !r.error; i++) {
                net_leave *l = &m->leaves[m->leave_count];
                l->tick = t;
                l->id = net_read_id_gap(&r, i ? l[-1].id : 0);
                if (r.error || !net_roster_leave(&ro, l->id))
                    return false;
                m->leave_count++;
            }
            for (uint32_t i = 0; i < joins && !r.error; i++) {
                net_join *j = &m->joins[m->join_count];
                j->tick = t;
                net_read_state(&r, &j->state);
                if (r.error || (i > 0 && j->state.id <= j[-1].state.id) || !net_roster_join(&ro, j->state.id))
                    return false;
                m->join_count++;
            }
        }
        if (ro.n > m->command_capacity - m->command_count)
            return false;
        for (uint32_t i = 0; i < ro.n && !r.error; i++) {
            net_tick_command *c = &m->commands[m->command_count++];
            c->id = ro.ids[i];
            net_read_command(&r, &ro.prev[i], &c->command, t);
            net_read_game(&r, m->game, ro.prev_game[i], c->game);
            ro.prev[i] = c->command;
            memcpy(ro.prev_game[i], c->game, NET_GAME_COMMAND_BYTES);
        }
    }
    if (!net_br_finish(&r))
        return false;
    // Validate what was read; the reference only shaped the decoding.
    const net_tick_command *ref = m->reference;
    uint32_t ref_count = m->reference_count;
    m->reference = NULL;
    m->reference_count = 0;
    bool ok = net_snapshot_valid(m);
    m->reference = ref;
    m->reference_count = ref_count;
    return ok;
}
