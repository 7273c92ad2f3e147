// keel server: what each client is sent after a tick. MIT licence, see LICENSE.
//
// Rules:
// - A delta snapshot [B, T) carries every command run in ticks B .. T - 1
//   (and the joins and leaves among them) and the hash of the state at T; the
//   client applies it to its exact state at B. B is where the chain of
//   snapshots sent to this client ends (the previous snapshot's T), not the
//   tick the client acknowledged: each tick's commands go down once, so the
//   downstream does not grow with the round trip.
// - The client acknowledges its confirmed tick C and the later ticks it
//   already holds (snapshots it keeps until the gap before them is filled).
//   A tick in [C, chain end) that it lacks and that went out longer ago than
//   the retransmission timeout is sent again: a repair snapshot [a, b) that
//   ends where the client's holdings, the ticks still in flight, or the
//   chain begin. The timeout is the round trip the client's acknowledgements
//   show (RFC 6298's estimator, at least 3 ticks) and doubles with each
//   repair until the acknowledgement moves.
// - A full state goes when no delta can reach the client: it has
//   acknowledged nothing yet, or C is older than the history. At most one per
//   timeout and at least 0.25 s apart (1 s for a client that fell behind),
//   doubling until one is acknowledged; meanwhile the chain continues from the full state's
//   tick, so nothing waits for it.
// - The first full state waits for the client's first input (a ping that
//   goes with its hello and again with the welcome), so that its echo is a
//   round trip no retransmission has stretched.
// - A client that has sent nothing for a while (a stalled process) gets the
//   chain only, no repair and no full state -- unless it has no state at all:
//   a client waiting for its first full state sends nothing after the ping
//   on its welcome, so a lost first full state is sent again without hearing
//   from it. When a silent client speaks again it is repaired, or sent one
//   full state if it fell too far behind.
// Every snapshot tick's hash is kept in the history (sv_tick_record.hash_after),
// so a repair can end at any earlier snapshot's tick.
#include <stdlib.h>
#include <string.h>

#include "sv_internal.h"

#define RTO_MIN_TICKS 3u
#define RTO_INITIAL_US 250000u
#define FIRST_FULL_MIN_US 250000u // a client's first full state is sent again no sooner
#define RTO_MAX_US 1000000u
#define BEHIND_FULL_US 1000000u // the first full-state interval for a client that fell behind
#define SILENT_MIN_US 250000u
#define FIRST_FULL_WAIT_US 1000000u
#define REORDER_TICKS \
    2u // a later snapshot held: an earlier one sent this much before it was lost   // no input for this long (and two timeouts): the client is silent

void sv_send_reset(sv_send_state *s)
{
    memset(s, 0, sizeof *s);
    for (uint32_t i = 0; i < SEND_RING; i++)
        s->sent_tick[i] = NET_TICK_NONE;
    s->chain_end = NET_TICK_NONE;
    s->full_tick = NET_TICK_NONE;
}

static uint64_t rto_us(const sv_server *sv, const sv_send_state *s)
{
    uint64_t floor = RTO_MIN_TICKS * sv->tick_us;
    uint64_t r = s->has_rtt ? s->srtt_us + (4u * s->rttvar_us > 2u * sv->tick_us ? 4u * s->rttvar_us : 2u * sv->tick_us)
                            : RTO_INITIAL_US;
    r = r < floor ? floor : r;
    return r > RTO_MAX_US ? RTO_MAX_US : r;
}

void sv_send_acked(sv_server *sv, sv_client *c, uint32_t from, uint32_t to)
{
    sv_send_state *s = &c->send;
    if (to == NET_TICK_NONE || (from != NET_TICK_NONE && to <= from))
        return;
    s->repairs = 0;
    s->fulls = 0;
    // A round-trip sample: the last send of the tick before `to` (or of the
    // full state at `to`) until now.
    uint64_t sent = 0;
    if (s->full_tick == to)
        sent = s->full_us;
    else if (s->sent_tick[(to - 1u) % SEND_RING] == to - 1u)
        sent = s->sent_us[(to - 1u) % SEND_RING];
    if (!sent || sent > sv->now_us)
        return;
    uint64_t r = sv->now_us - sent;
    if (!s->has_rtt) {
        s->srtt_us = r;
        s->rttvar_us = r / 2u;
        s->has_rtt = true;
    } else {
        uint64_t dev = s->srtt_us > r ? s->srtt_us - r : r - s->srtt_us;
        s->rttvar_us = (3u * s->rttvar_us + dev) / 4u;
        s->srtt_us = (7u * s->srtt_us + r) / 8u;
    }
}

// ---- the messages ------------------------------------------------------------------------

static uint16_t echo_delay_ms(const sv_server *sv, const sv_client *c)
{
    if (!c->has_sequence)
        return 0;
    uint64_t ms = (sv->now_us - c->client_time_at_us) / 1000u;
    return (uint16_t)(ms > 65535u ? 65535u : ms);
}

static int32_t take_margin(sv_client *c)
{
    int32_t m = c->margin_seen ? c->margin_min_q8 : c->margin_q8;
    c->margin_seen = false;
    c->margin_q8 = m;
    return m;
}

// Bit k: a substitute ran for this client at tick t - 1 - k (t <= now).
static uint32_t substituted_mask(const sv_client *c, uint32_t now, uint32_t t)
{
    uint32_t back = now - t; // substituted_bits' bit 0 is tick now - 1
    if (back >= 64)
        return 0;
    uint64_t bits = c->substituted_bits >> back;
    // Only ticks since the join count; before it nothing was substituted.
    uint32_t span = t - c->join_tick;
    if (span < 32)
        bits &= ((uint64_t)1 << span) - 1u;
    return (uint32_t)bits;
}

static void mark_sent(sv_server *sv, sv_client *c, uint32_t a, uint32_t b)
{
    for (uint32_t k = a; k != b; k++) {
        c->send.sent_tick[k % SEND_RING] = k;
        c->send.sent_us[k % SEND_RING] = sv->now_us;
    }
}

// With a game, the scene's saved state (sim_scene_save: the characters and
// the game's state) in sv->save, grown as needed; its size, 0 when it does
// not fit the parts a full state can have.
static size_t save_scene(sv_server *sv)
{
    size_t size = sim_scene_state_size(sv->scene);
    if (size > (size_t)NET_MAX_GAME_FULL_PARTS * NET_FULL_CHUNK_BYTES)
        return 0;
    if (size > sv->save_cap) {
        uint8_t *b = realloc(sv->save, size);
        if (!b)
            return 0;
        sv->save = b;
        sv->save_cap = size;
    }
    sim_scene_save(sv->scene, sv->save);
    return size;
}

// Part p's characters, each with the command it ran last.
static void fill_part(net_full_part *part, uint32_t p, const sim_char_state *chars, uint32_t n,
                      const sv_tick_record *prev)
{
    part->part = (uint16_t)p;
    part->count = 0;
    for (uint32_t i = p * NET_FULL_PART_CHARACTERS; i < n && part->count < NET_FULL_PART_CHARACTERS; i++) {
        part->states[part->count] = chars[i];
        memset(&part->last_commands[part->count], 0, sizeof part->last_commands[0]);
        memset(part->last_game[part->count], 0, sizeof part->last_game[0]);
        if (prev) {
            for (uint32_t k = 0; k < prev->command_count; k++)
                if (prev->commands[k].id == chars[i].id) {
                    part->last_commands[part->count] = prev->commands[k].command;
                    memcpy(part->last_game[part->count], prev->commands[k].game, sizeof part->last_game[0]);
                }
        }
        part->count++;
    }
}

static void send_full(sv_server *sv, sv_client *c, uint32_t now, uint64_t hash)
{
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(sv->scene, &n);
    const sv_tick_record *prev = sv_history_find(&sv->history, now - 1u);
    net_full_part part;
    memset(&part, 0, sizeof part);
    part.client_time_echo = (uint16_t)c->client_time;
    part.echo_delay_ms = echo_delay_ms(sv, c);
    part.tick = now;
    part.last_applied_tick = c->last_applied_tick;
    part.input_margin_q8 = take_margin(c);
    part.state_hash = hash;
    part.total_characters = (uint16_t)n;
    uint32_t parts = n == 0 ? 1 : (n + NET_FULL_PART_CHARACTERS - 1) / NET_FULL_PART_CHARACTERS;
    // With a game the saved scene goes along in pieces: first in the room the
    // characters' parts leave below NET_MTU, then in parts of its own.
    size_t save_size = 0;
    uint16_t room[(NET_MAX_CHARACTERS + NET_FULL_PART_CHARACTERS - 1) / NET_FULL_PART_CHARACTERS];
    if (sv->config.game) {
        part.game = sv->config.game;
        save_size = save_scene(sv);
        if (save_size == 0)
            return; // too large for a full state: the client cannot join (docs/game.md)
        part.save_size = (uint32_t)save_size;
        part.part_count = NET_MAX_GAME_FULL_PARTS;
        size_t placed = 0;
        for (uint32_t p = 0; p < parts; p++) {
            fill_part(&part, p, chars, n, prev);
            size_t len = net_full_part_encode(&part, sv->packet, sizeof sv->packet);
            size_t free_bytes = len && len + 16u < NET_MTU ? NET_MTU - len - 16u : 0u; // 16: the piece's sizes
            room[p] = (uint16_t)(free_bytes < NET_FULL_CHUNK_BYTES ? free_bytes : NET_FULL_CHUNK_BYTES);
            placed += room[p];
        }
        if (placed < save_size)
            parts += (uint32_t)((save_size - placed + NET_FULL_CHUNK_BYTES - 1u) / NET_FULL_CHUNK_BYTES);
        if (parts > NET_MAX_GAME_FULL_PARTS)
            return;
    }
    part.part_count = (uint16_t)parts;
    size_t at = 0;
    for (uint32_t p = 0; p < parts; p++) {
        part.sequence = c->snapshot_sequence++;
        fill_part(&part, p, chars, n, prev);
        if (save_size) {
            size_t len = part.count ? room[p] : NET_FULL_CHUNK_BYTES;
            len = len < save_size - at ? len : save_size - at;
            part.chunk_offset = (uint32_t)at;
            part.chunk_size = (uint16_t)len;
            memcpy(part.chunk, sv->save + at, len);
            at += len;
        }
        size_t len = net_full_part_encode(&part, sv->packet, sizeof sv->packet);
        if (len && net_host_send(sv->host, c->peer, NET_CHANNEL_SNAPSHOT, sv->packet, len)) {
            sv->stats.snapshots_full_parts++;
            sv->stats.snapshot_bytes += len;
        }
    }
    sv->stats.full_states++;
    c->send.full_tick = now;
    c->send.full_us = sv->now_us;
    c->send.fulls++;
    c->send.chain_end = now;
}

// The state hash at tick t (t <= now), when it was computed.
static bool hash_at(const sv_server *sv, uint32_t t, uint32_t now, uint64_t now_hash, uint64_t *hash)
{
    if (t == now) {
        *hash = now_hash;
        return true;
    }
    const sv_tick_record *r = sv_history_find(&sv->history, t - 1u);
    if (!r || !r->has_hash_after)
        return false;
    *hash = r->hash_after;
    return true;
}

// Whether [b, t) can go as a delta: within the span, after the join, every
// record held and the hash at t known.
static bool deliverable(const sv_server *sv, const sv_client *c, uint32_t b, uint32_t t, uint32_t now,
                        uint64_t now_hash)
{
    uint64_t h;
    if (b == NET_TICK_NONE || b >= t || t > now || t - b > NET_MAX_SNAPSHOT_TICKS || b < c->join_tick ||
        !hash_at(sv, t, now, now_hash, &h))
        return false;
    for (uint32_t k = b; k < t; k++)
        if (!sv_history_find(&sv->history, k))
            return false;
    return true;
}

// The delta snapshot [b, t) (deliverable); `main` takes the margin report.
// False when it does not fit one datagram.
static bool send_delta(sv_server *sv, sv_client *c, uint32_t b, uint32_t t, uint32_t now, uint64_t now_hash, bool main)
{
    net_snapshot s;
    memset(&s, 0, sizeof s);
    s.sequence = c->snapshot_sequence;
    s.client_time_echo = (uint16_t)c->client_time;
    s.echo_delay_ms = echo_delay_ms(sv, c);
    s.tick = t;
    s.baseline_tick = b;
    s.last_applied_tick =
        c->last_applied_tick != NET_TICK_NONE && c->last_applied_tick < t ? c->last_applied_tick : NET_TICK_NONE;
    s.substituted_mask = substituted_mask(c, now, t);
    s.input_margin_q8 = main ? take_margin(c) : c->margin_q8;
    hash_at(sv, t, now, now_hash, &s.state_hash);
    s.joins = sv->snap_joins;
    s.join_capacity = sv->snap_join_cap;
    s.leaves = sv->snap_leaves;
    s.leave_capacity = sv->snap_leave_cap;
    s.commands = sv->snap_commands;
    s.command_capacity = sv->snap_command_cap;
    s.game = sv->config.game;
    for (uint32_t k = b; k < t; k++) {
        const sv_tick_record *r = sv_history_find(&sv->history, k);
        for (uint32_t i = 0; i < r->leave_count && s.leave_count < s.leave_capacity; i++)
            s.leaves[s.leave_count++] = r->leaves[i];
        for (uint32_t i = 0; i < r->join_count && s.join_count < s.join_capacity; i++)
            s.joins[s.join_count++] = r->joins[i];
        for (uint32_t i = 0; i < r->command_count && s.command_count < s.command_capacity; i++)
            s.commands[s.command_count++] = r->commands[i];
    }
    // The reference: the commands every character present at B ran in tick
    // B - 1, which the client holds with its state at B (the snapshot or full
    // state that gave it that state carried them). With it the roster is not
    // sent and first commands are coded against those instead of against
    // zero. Without the record of B - 1, or should the roster not match it,
    // the snapshot goes without.
    const sv_tick_record *ref = b > 0 ? sv_history_find(&sv->history, b - 1u) : NULL;
    if (ref) {
        s.reference = ref->commands;
        s.reference_count = ref->command_count;
    }
    size_t len = net_snapshot_encode(&s, sv->packet, sizeof sv->packet);
    if (!len && s.reference) {
        s.reference = NULL;
        s.reference_count = 0;
        len = net_snapshot_encode(&s, sv->packet, sizeof sv->packet);
    }
    if (!len) {
        if (main) { // the report goes with whatever is sent instead
            c->margin_seen = true;
            c->margin_min_q8 = s.input_margin_q8;
        }
        return false;
    }
    c->snapshot_sequence++;
    if (net_host_send(sv->host, c->peer, NET_CHANNEL_SNAPSHOT, sv->packet, len)) {
        sv->stats.snapshots_delta++;
        sv->stats.snapshot_bytes += len;
    }
    mark_sent(sv, c, b, t);
    return true;
}

// ---- choosing what to send -------------------------------------------------------------------

static bool lacks(const sv_client *c, uint32_t k)
{
    uint32_t d = k - c->ack_tick;
    return !(d < 32 && (c->held_mask >> d) & 1u);
}

// A tick is due again when the client lacks it and either its last send
// is older than the timeout, or it went out at least REORDER_TICKS before a
// tick the client holds (that one arrived, so this one was lost: a repair
// one round trip after the loss instead of one timeout later).
static bool due(const sv_server *sv, const sv_client *c, uint32_t k, uint64_t timeout, uint64_t held_sent_us)
{
    const sv_send_state *s = &c->send;
    if (!lacks(c, k))
        return false;
    if (s->sent_tick[k % SEND_RING] != k)
        return true;
    uint64_t sent = s->sent_us[k % SEND_RING];
    return sv->now_us - sent >= timeout || sent + REORDER_TICKS * sv->tick_us <= held_sent_us;
}

// The newest send time of a tick the client holds past its confirmed one (0: none).
static uint64_t held_sent(const sv_client *c)
{
    uint64_t newest = 0;
    for (uint32_t d = 0; d < 32; d++) {
        uint32_t k = c->ack_tick + d;
        if (((c->held_mask >> d) & 1u) && c->send.sent_tick[k % SEND_RING] == k &&
            c->send.sent_us[k % SEND_RING] > newest)
            newest = c->send.sent_us[k % SEND_RING];
    }
    return newest;
}

// The first run of ticks in [C, chain end) the client lacks and that are due
// again: [*a, *b), ending at a tick whose hash is known. False when there is
// none.
static bool find_repair(const sv_server *sv, const sv_client *c, uint32_t now, uint64_t now_hash, uint32_t *a,
                        uint32_t *b)
{
    const sv_send_state *s = &c->send;
    uint32_t shift = s->repairs < 4 ? s->repairs : 4;
    uint64_t timeout = rto_us(sv, s) << shift;
    timeout = timeout > RTO_MAX_US ? RTO_MAX_US : timeout;
    uint64_t held_us = held_sent(c);
    uint32_t k = c->ack_tick;
    while (k < s->chain_end && !due(sv, c, k, timeout, held_us))
        k++;
    if (k >= s->chain_end)
        return false;
    uint32_t e = k + 1u;
    while (e < s->chain_end && e - k < NET_MAX_SNAPSHOT_TICKS && due(sv, c, e, timeout, held_us))
        e++;
    uint64_t h;
    while (e > k && !hash_at(sv, e, now, now_hash, &h))
        e--;
    if (e == k)
        return false;
    *a = k;
    *b = e;
    return true;
}

void sv_send_snapshot(sv_server *sv, sv_client *c, uint64_t hash)
{
    sv_send_state *s = &c->send;
    uint32_t now = sim_scene_tick(sv->scene), C = c->ack_tick;
    uint64_t rto = rto_us(sv, s);
    uint64_t quiet = 2u * rto > SILENT_MIN_US ? 2u * rto : SILENT_MIN_US;
    bool silent = c->last_input_us != 0 && sv->now_us - c->last_input_us >= quiet;
    if (s->chain_end != NET_TICK_NONE && s->chain_end > now)
        s->chain_end = NET_TICK_NONE;
    // C is usable when every tick after it is still in the history.
    bool usable = C != NET_TICK_NONE && C >= c->join_tick && C <= now && now - C < SV_HISTORY_TICKS &&
                  (C == now || sv_history_find(&sv->history, C));
    if (usable) {
        if (s->chain_end == NET_TICK_NONE || s->chain_end < C)
            s->chain_end = C;
        uint32_t a, b;
        if (!silent && find_repair(sv, c, now, hash, &a, &b)) {
            s->repairs++;
            sv->stats.snapshots_repair++;
            if (b == s->chain_end && deliverable(sv, c, a, now, now, hash)) {
                // The gap runs into the new ticks: one message for both.
                if (send_delta(sv, c, a, now, now, hash, true)) {
                    s->chain_end = now;
                    return;
                }
            } else if (deliverable(sv, c, a, b, now, hash)) {
                send_delta(sv, c, a, b, now, hash, false);
            }
        }
        if (s->chain_end == now)
            return;
        if (deliverable(sv, c, s->chain_end, now, now, hash) && send_delta(sv, c, s->chain_end, now, now, hash, true)) {
            s->chain_end = now;
            return;
        }
        // The chain cannot go on (too much since its end): from C, or a full state.
        if (deliverable(sv, c, C, now, now, hash) && send_delta(sv, c, C, now, now, hash, true)) {
            s->chain_end = now;
            return;
        }
        send_full(sv, c, now, hash);
        return;
    }
    // No delta reaches the client's state: a full state, rate-limited; the
    // chain goes on from the last one meanwhile.
    uint64_t floor = C == NET_TICK_NONE ? FIRST_FULL_MIN_US : BEHIND_FULL_US;
    uint64_t interval = rto > floor ? rto : floor;
    uint32_t shift = s->fulls == 0 ? 0 : (s->fulls - 1u < 3u ? s->fulls - 1u : 3u);
    interval <<= shift;
    bool full_due = s->full_tick == NET_TICK_NONE || sv->now_us - s->full_us >= interval || s->fulls == 0;
    // The first full state waits for an input of the client's (it sends one
    // with its hello and another on the welcome), so that the echo in it
    // gives a round trip that no retransmission of the hello has stretched
    // (a second at the most).
    bool heard = c->has_sequence || sv->now_us - c->join_us >= FIRST_FULL_WAIT_US;
    // A client without any state yet is never silent here: until its first
    // full state it sends nothing after the ping on the welcome, so a first
    // full state that was lost must be sent again without hearing from it
    // (at the backed-off interval: at most one every 2 s).
    if (full_due && (!silent || C == NET_TICK_NONE) && heard) {
        send_full(sv, c, now, hash);
        return;
    }
    if (s->chain_end != NET_TICK_NONE && s->chain_end < now && deliverable(sv, c, s->chain_end, now, now, hash) &&
        send_delta(sv, c, s->chain_end, now, now, hash, true))
        s->chain_end = now;
}
