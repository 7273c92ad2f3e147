// keel client: what comes from the server -- welcome, refusal, delta
// snapshots (applied in order, kept while one before them is missing), full
// states -- confirmation against the prediction, misprediction causes and
// rollback. MIT licence, see LICENSE. (cl_internal.h has the invariants.)
#include <keel/net_bits.h>
#include <keel/sim_game.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"

// ---- confirmation ---------------------------------------------------------------------------

// Keeps the confirmed state at its tick T with the commands of tick T - 1
// (last_cmds, which the snapshot or full state that confirmed T has just
// set: one per character present at T, in id order), the reference of a
// later snapshot from baseline T.
static void keep_confirmed(cl_client *cl)
{
    uint32_t t = sim_scene_tick(cl->conf), n;
    const sim_char_state *chars = sim_scene_characters(cl->conf, &n);
    cl_state_slot *s = &cl->conf_ring[t % CL_RING];
    s->tick = t;
    s->count = n;
    memcpy(s->states, chars, (size_t)n * sizeof *chars);
    s->input_count = cl->last_cmd_count;
    memcpy(s->inputs, cl->last_cmds, (size_t)cl->last_cmd_count * sizeof *cl->last_cmds);
    for (uint32_t i = 0; i < s->input_count; i++)
        s->inputs[i].command.tick = t - 1u;
    cl_save_slot(s, cl->conf);
}

// The first field of a game schema in which two structs differ, NULL when
// none does (padding never compared).
static const char *game_field_differs(const sim_game_schema *sch, const uint8_t *a, const uint8_t *b)
{
    if (!a || !b)
        return a == b ? NULL : "";
    for (uint32_t i = 0; i < sch->field_count; i++) {
        const sim_game_field *f = &sch->fields[i];
        uint32_t size = f->kind == SIM_GAME_BOOL    ? 1u
                        : f->kind == SIM_GAME_FX    ? 4u
                        : f->kind == SIM_GAME_ANGLE ? 2u
                                                    : f->size;
        uint32_t count = f->count ? f->count : 1u;
        for (uint32_t k = 0; k < count; k++) {
            size_t at = (size_t)f->offset + (size_t)k * f->stride;
            if (memcmp(a + at, b + at, size) != 0)
                return f->name;
        }
    }
    return NULL;
}

// "game." and a field's name into buf.
static const char *game_name(char *buf, size_t cap, const char *field)
{
    size_t n = strlen(field);
    if (n + 6u > cap)
        n = cap - 6u;
    memcpy(buf, "game.", 5);
    memcpy(buf + 5, field, n);
    buf[5 + n] = 0;
    return buf;
}

// With a game: the first game field of character `id` that differs between
// the prediction (restored into cl->work) and the confirmed scene, or the
// out-of-collisions mark; NULL when none.
static const char *game_char_differs(cl_client *cl, uint32_t id)
{
    const sim_game_def *def = sim_game_definition(cl->game);
    if (sim_scene_game_out(cl->work, id) != sim_scene_game_out(cl->conf, id))
        return "out";
    return game_field_differs(&def->character, sim_scene_game_char(cl->work, id), sim_scene_game_char(cl->conf, id));
}

bool cl_same_tick_command(const net_tick_command *a, const net_tick_command *b)
{
    return cl_same_command(&a->command, &b->command) && memcmp(a->game, b->game, sizeof a->game) == 0;
}

const char *cl_first_field(const sim_char_state *a, const sim_char_state *b)
{
    if (a->flags != b->flags)
        return "flags";
    if (a->move_type != b->move_type)
        return "move_type";
    if (a->ground != b->ground)
        return "ground";
    if (!sim_v3_eq(a->position, b->position))
        return "position";
    if (!sim_v3_eq(a->velocity, b->velocity))
        return "velocity";
    if (!sim_v3_eq(a->ground_normal, b->ground_normal))
        return "ground_normal";
    if (!sim_v3_eq(a->ground_velocity, b->ground_velocity))
        return "ground_velocity";
    if (a->ground_object != b->ground_object)
        return "ground_object";
    if (a->stuck_ticks != b->stuck_ticks)
        return "stuck_ticks";
    if (a->yaw != b->yaw)
        return "yaw";
    if (a->pitch != b->pitch)
        return "pitch";
    return NULL;
}

bool cl_same_command(const sim_input *a, const sim_input *b)
{
    return a->forward == b->forward && a->right == b->right && a->up == b->up && a->buttons == b->buttons &&
           a->yaw == b->yaw && a->pitch == b->pitch;
}

// Whether a game has rules or move types (anything that can couple characters
// or move them past the reach of the built-in moves).
static bool game_has_rules(const sim_game *g)
{
    const sim_game_def *d = sim_game_definition(g);
    return d->rules.before_move_char || d->rules.before_move || d->rules.after_move_char || d->rules.after_move ||
           d->move_type_count > 0;
}

static bool near(const sim_char_state *a, const sim_char_state *b)
{
    sim_vec3 d = sim_v3_sub(a->position, b->position);
    return d.x < NEAR_DISTANCE && d.x > -NEAR_DISTANCE && d.y < NEAR_DISTANCE && d.y > -NEAR_DISTANCE &&
           d.z < NEAR_DISTANCE && d.z > -NEAR_DISTANCE;
}

static const sim_char_state *find_state(const sim_char_state *s, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && s[lo].id == id ? &s[lo] : NULL;
}

// Whether a remote character ran another command in the predicted ticks
// [T, P) than its last confirmed one (last_cmds), with which a prediction
// from T runs it.
static bool stale_commands(const cl_client *cl, uint32_t T, uint32_t P)
{
    for (uint32_t k = T; k < P; k++) {
        const cl_state_slot *ps = &cl->pred_ring[k % CL_RING];
        if (ps->tick != k)
            return true;
        for (uint32_t i = 0; i < ps->input_count; i++) {
            const net_tick_command *a = &ps->inputs[i];
            if (a->id == cl->character)
                continue;
            const net_tick_command *last = cl_find_cmd(cl->last_cmds, cl->last_cmd_count, a->id);
            if (!last || !cl_same_tick_command(last, a))
                return true;
        }
    }
    return false;
}

// The confirmed state moved from `from` to tick T (the conf scene); compare
// with what was predicted for T and roll back when it differs. `actual` holds
// the commands that ran in [from, T) (NULL after a full state: no labels).
static void confirm(cl_client *cl, uint32_t from, const net_snapshot *actual)
{
    uint32_t T = sim_scene_tick(cl->conf);
    uint32_t P = sim_scene_tick(cl->pred);
    keep_confirmed(cl);
    cl->confirmed = T;
    cl->confirms_since_predict++;
    if (P <= T || (int32_t)(P - T) > (int32_t)CL_RING) {
        // Not ahead (just synced, or fell behind): start over from here.
        cl->rollback_pending = false;
        cl_rollback(cl, T);
        return;
    }
    if (cl->rollback_pending) {
        // A backlog: the prediction is already known wrong and is rebuilt
        // once, from the newest confirmed state, before the next tick is
        // predicted; comparing with it again would only repeat that.
        cl->stats.confirms_coalesced++;
        return;
    }
    const cl_state_slot *pr = &cl->pred_ring[T % CL_RING];
    uint32_t nc;
    const sim_char_state *cs = sim_scene_characters(cl->conf, &nc);
    bool differ = pr->tick != T || pr->count != nc;
    for (uint32_t i = 0; i < nc && !differ; i++)
        differ = cs[i].id != pr->states[i].id || cl_first_field(&cs[i], &pr->states[i]) != NULL;
    // With a game the saved scenes hold the game's state too: compared byte
    // for byte (a save is canonical), and the prediction restored into work
    // to name the game fields that differ.
    const cl_state_slot *cr = &cl->conf_ring[T % CL_RING];
    bool game_differs = false;
    if (cl->game && !differ && pr->tick == T)
        differ = pr->save_size != cr->save_size || memcmp(pr->save, cr->save, cr->save_size) != 0;
    if (cl->game && differ && pr->tick == T && cl_restore_slot(cl, cl->work, pr)) {
        const sim_game_def *def = sim_game_definition(cl->game);
        const char *f = game_field_differs(&def->state, sim_scene_game_state(cl->work), sim_scene_game_state(cl->conf));
        if (f) {
            cl->stats.game_state_mispredictions++;
            cl->stats.last_game_field = game_name(cl->game_field, sizeof cl->game_field, f);
        }
        game_differs = true;
    }
    // A game that judges shots against the predicted scene: that scene must
    // be exactly the prediction from C the server rebuilds, so a prediction
    // made with another command of a remote character than its newest
    // confirmed one is made again, though the states agree.
    if (!differ && sim_game_judges(cl->game))
        differ = stale_commands(cl, T, P);
    if (!differ)
        return;
    if (actual && pr->tick == T) {
        // Which characters' commands differed from the ones we predicted
        // them with in [from, T), and who joined or left.
        memset(cl->changed, 0, nc);
        for (uint32_t i = 0; i < nc; i++) {
            if (!find_state(pr->states, pr->count, cs[i].id))
                cl->changed[i] = 1; // joined
        }
        for (uint32_t k = 0; k < actual->command_count; k++) {
            const net_tick_command *a = &actual->commands[k];
            if (a->command.tick < from)
                continue;
            const cl_state_slot *ps = &cl->pred_ring[a->command.tick % CL_RING];
            if (ps->tick != a->command.tick)
                continue;
            const net_tick_command *p = cl_find_cmd(ps->inputs, ps->input_count, a->id);
            if (!p || !cl_same_tick_command(p, a)) {
                const sim_char_state *c = find_state(cs, nc, a->id);
                if (c)
                    cl->changed[c - cs] = 1;
            }
        }
        bool substituted = false;
        for (uint32_t k = 0; k < 32; k++) {
            uint32_t tick = T - 1u - k;
            if (tick < from || tick >= T)
                break;
            if (cl->substituted_mask & (1u << k))
                substituted = true;
        }
        for (uint32_t i = 0; i < nc; i++) {
            const sim_char_state *p = find_state(pr->states, pr->count, cs[i].id);
            if (!p)
                continue; // joined: not a misprediction of a state we had
            const char *field = cl_first_field(&cs[i], p);
            char game_field[sizeof cl->own_field];
            if (!field && game_differs) {
                const char *g = game_char_differs(cl, cs[i].id);
                field = g ? game_name(game_field, sizeof game_field, g) : NULL;
            }
            if (!field)
                continue;
            bool own = cs[i].id == cl->character;
            cl_cause cause;
            if (own && substituted) {
                cause = CL_CAUSE_SUBSTITUTED;
            } else if (!own && cl->changed[i]) {
                cause = CL_CAUSE_REMOTE_COMMAND;
            } else {
                cause = CL_CAUSE_UNEXPLAINED;
                for (uint32_t j = 0; j < nc && cause == CL_CAUSE_UNEXPLAINED; j++) {
                    if (j == i || !cl->changed[j])
                        continue;
                    const sim_char_state *pj = find_state(pr->states, pr->count, cs[j].id);
                    if (near(&cs[i], &cs[j]) || near(p, &cs[j]) || (pj && (near(&cs[i], pj) || near(p, pj))))
                        cause = CL_CAUSE_INTERACTION;
                }
                // A character that left may have touched it in the prediction.
                for (uint32_t j = 0; j < pr->count && cause == CL_CAUSE_UNEXPLAINED; j++)
                    if (!find_state(cs, nc, pr->states[j].id) && near(p, &pr->states[j]))
                        cause = CL_CAUSE_INTERACTION;
                // A game's rules reach any character (a shot): a command that
                // changed anywhere, or a substitution of ours, explains it.
                if (cause == CL_CAUSE_UNEXPLAINED && cl->game && game_has_rules(cl->game)) {
                    bool any = substituted;
                    for (uint32_t j = 0; j < nc && !any; j++)
                        any = cl->changed[j] != 0;
                    if (any)
                        cause = CL_CAUSE_GAME_RULE;
                }
            }
            if (own) {
                cl->stats.own_mispredictions[cause]++;
                snprintf(cl->own_field, sizeof cl->own_field, "%s", field);
                cl->stats.last_own_field = cl->own_field;
                cl->stats.last_own_tick = T;
            } else {
                cl->stats.remote_mispredictions[cause]++;
            }
        }
    }
    if (cl->confirms_since_predict > 1) {
        // Several snapshots in one go (a machine or a link that fell behind):
        // the confirmation work goes on, the prediction's waits for it.
        cl->rollback_pending = true;
        cl->stats.rollbacks_deferred++;
        return;
    }
    cl_rollback(cl, P);
}

// The rollback put off by a backlog, before the prediction is used.
void cl_settle(cl_client *cl)
{
    cl->confirms_since_predict = 0;
    if (!cl->rollback_pending)
        return;
    cl->rollback_pending = false;
    cl_rollback(cl, sim_scene_tick(cl->pred));
}

// The commands each character ran in the last tick of the snapshot, for
// predicting the others.
static void keep_last_commands(cl_client *cl, const net_snapshot *s)
{
    uint32_t last_tick = s->tick - 1u, k = 0;
    for (uint32_t i = 0; i < s->command_count; i++)
        if (s->commands[i].command.tick == last_tick && k < NET_MAX_CHARACTERS)
            cl->last_cmds[k++] = s->commands[i];
    cl->last_cmd_count = k;
}

double cl_client_margin_target(const cl_client *cl)
{
    double target = 1.0;
    if (cl->seen_snapshots < 64 || cl->lost_snapshots > 0.005 * (cl->seen_snapshots + cl->lost_snapshots))
        target += 3.0 * cl->config.ticks_per_packet;
    return target;
}

static void note_server(cl_client *cl, uint16_t sequence, uint32_t echo, uint16_t delay_ms, uint32_t last_applied,
                        int32_t margin, uint32_t now_ms)
{
    if (cl->has_snap_sequence) {
        int16_t gap = (int16_t)(uint16_t)(sequence - cl->snap_sequence);
        if (gap > 1) {
            cl->stats.snapshot_packets_lost += (uint64_t)(gap - 1);
            cl->lost_snapshots += gap - 1;
        }
        if (gap > 0) {
            cl->snap_sequence = sequence;
            cl->seen_snapshots += 1;
            if (cl->seen_snapshots > 512) {
                cl->seen_snapshots /= 2;
                cl->lost_snapshots /= 2;
            }
        }
    } else {
        cl->has_snap_sequence = true;
        cl->snap_sequence = sequence;
    }
    if (echo) {
        // The echo of an unreliable input: the first one replaces the
        // welcome's sample, which a retransmitted hello or welcome stretches.
        double rtt = (double)(uint16_t)(now_ms - echo) - (double)delay_ms; // the echo is 16 bits
        if (rtt >= 0 && rtt < 10000) {
            bool first = !cl->rtt_from_echo;
            cl->rtt_ms = cl->has_rtt && !first ? cl->rtt_ms * 0.9 + rtt * 0.1 : rtt;
            cl->has_rtt = true;
            cl->rtt_from_echo = true;
            if (first && cl->status == CL_STATUS_PLAYING && cl->live_tick > sim_scene_tick(cl->pred)) {
                // Control was held back for a round trip that was too long:
                // our commands from the next tick on can arrive in time.
                uint32_t live = sim_scene_tick(cl->pred) + cl_client_target_lead(cl);
                if (live < cl->live_tick)
                    cl->live_tick = sim_scene_tick(cl->pred);
            }
        }
    }
    if (last_applied != NET_TICK_NONE &&
        (cl->last_applied_tick == NET_TICK_NONE || last_applied > cl->last_applied_tick))
        cl->last_applied_tick = last_applied;
    cl->margin_q8 = margin;
    cl->has_margin = true;
    // Margins measured before the last catch-up took effect are stale: they
    // neither steer the clock nor start another catch-up until the confirmed
    // tick has passed the ticks predicted by then.
    bool hold = cl->catch_up_hold != 0 && (cl->confirmed == NET_TICK_NONE || cl->confirmed < cl->catch_up_hold);
    if (hold) {
        cl->clock_scale = 1.0;
        return;
    }
    if (margin < 0) {
        cl->hold = 0;
        // Commands arrive late (latency jumped): predict the missing ticks at
        // once, to a margin of about one tick.
        uint32_t behind = (uint32_t)((-margin + 255) / 256) + 1u;
        if (behind > cl->catch_up)
            cl->catch_up = behind;
        cl->catch_up_hold = sim_scene_tick(cl->pred) + behind + cl_client_target_lead(cl);
        cl->margin_count = 0;
        cl->clock_scale = 1.0;
        return;
    }
    cl->margins[cl->margin_count++ % 32u] = margin;
    int32_t low = margin;
    for (uint32_t i = 0; i < 32u && i < cl->margin_count; i++)
        low = cl->margins[i] < low ? cl->margins[i] : low;
    // Otherwise keep the lowest margin of the last 32 reports near one tick,
    // so that jitter too leaves every command a tick early: up to 2% faster
    // or slower. On a lossy link (judged by the snapshots that went missing;
    // a link is taken as lossy until 64 snapshots have shown otherwise) the
    // target grows by three input packets: a command then still arrives in
    // time when the three packets that carry it first are all lost.
    double err_ticks = (double)low / 256.0 - cl_client_margin_target(cl);
    if (err_ticks > 4.0 && cl->margin_count >= 4 && cl->hold == 0) {
        // Far ahead (every margin of the last reports is): stop predicting
        // for the excess at once instead of drifting back at 2%; the margins
        // measured before that takes effect are stale.
        cl->hold = (uint32_t)(err_ticks - 1.0);
        cl->catch_up_hold = sim_scene_tick(cl->pred) + cl->hold + cl_client_target_lead(cl);
        cl->margin_count = 0;
        cl->clock_scale = 1.0;
        return;
    }
    double scale = 1.0 + err_ticks * 0.01;
    cl->clock_scale = scale < 0.98 ? 0.98 : (scale > 1.02 ? 1.02 : scale);
}

// Apply snapshot `s` (decoded, its baseline confirmed): the server's state
// at T from the baseline and the commands; false when it cannot be used.
static bool apply_snapshot(cl_client *cl, const net_snapshot *s)
{
    const cl_state_slot *base = &cl->conf_ring[s->baseline_tick % CL_RING];
    // The server's state at T: the baseline advanced through the commands.
    if (base->tick != s->baseline_tick || !cl_restore_slot(cl, cl->work, base)) {
        cl->stats.snapshots_unusable++;
        return false;
    }
    uint32_t ji = 0, li = 0, ci = 0;
    for (uint32_t t = s->baseline_tick; t < s->tick; t++) {
        for (; li < s->leave_count && s->leaves[li].tick == t; li++)
            sim_scene_remove_character(cl->work, s->leaves[li].id);
        for (; ji < s->join_count && s->joins[ji].tick == t; ji++)
            sim_scene_add_character(cl->work, &s->joins[ji].state);
        for (; ci < s->command_count && s->commands[ci].command.tick == t; ci++)
            net_set_command(cl->work, s->commands[ci].id, &s->commands[ci].command, s->commands[ci].game);
        sim_scene_step(cl->work);
    }
    if (sim_scene_hash(cl->work) != s->state_hash) {
        // Not what the server has: a determinism bug or a corrupted packet
        // that decoded. Acknowledging nothing new brings a repair.
        cl->stats.hash_mismatches++;
        return false;
    }
    uint32_t from = cl->confirmed;
    cl_copy_scene(cl, cl->conf, cl->work);
    cl->substituted_mask = s->substituted_mask;
    keep_last_commands(cl, s);
    confirm(cl, from, s);
    return true;
}

// Decode a snapshot whose baseline is confirmed (with that baseline's
// reference) and apply it.
static bool decode_and_apply(cl_client *cl, const uint8_t *data, size_t len, uint32_t baseline)
{
    net_snapshot *s = &cl->snap;
    memset(s, 0, sizeof *s);
    s->joins = cl->snap_joins;
    s->join_capacity = NET_MAX_CHARACTERS;
    s->leaves = cl->snap_leaves;
    s->leave_capacity = NET_MAX_CHARACTERS;
    s->commands = cl->snap_cmds;
    s->command_capacity = NET_MAX_CHARACTERS * NET_MAX_SNAPSHOT_TICKS;
    s->game = cl->game;
    // The reference for its baseline: the commands of tick B - 1 kept with
    // the confirmed state at B (the server sends it without one when it has
    // no record of B - 1; then it goes unused).
    const cl_state_slot *ref = &cl->conf_ring[baseline % CL_RING];
    if (ref->tick == baseline) {
        s->reference = ref->inputs;
        s->reference_count = ref->input_count;
    }
    if (!net_snapshot_decode(data, len, s)) {
        if (!s->reference)
            cl->stats.snapshots_unusable++; // made with a reference we do not have: its baseline is gone
        else
            cl->stats.messages_malformed++;
        return false;
    }
    return apply_snapshot(cl, s);
}

// Whether a snapshot [b, t) can be applied now: its baseline is confirmed
// and it brings a newer state.
static bool applicable(const cl_client *cl, uint32_t b, uint32_t t)
{
    return cl->status == CL_STATUS_PLAYING && t > cl->confirmed && b <= cl->confirmed &&
           cl->conf_ring[b % CL_RING].tick == b;
}

// Apply the kept snapshots that the confirmed state now reaches, oldest
// baseline first; forget those it has passed.
static void drain_pending(cl_client *cl)
{
    for (;;) {
        cl_pending *best = NULL;
        for (uint32_t i = 0; i < CL_PENDING; i++) {
            cl_pending *p = &cl->pending[i];
            if (p->tick == NET_TICK_NONE)
                continue;
            if (cl->confirmed != NET_TICK_NONE && p->tick <= cl->confirmed) {
                p->tick = NET_TICK_NONE; // passed by another snapshot or a full state
                continue;
            }
            if (applicable(cl, p->baseline, p->tick) && (!best || p->tick > best->tick))
                best = p;
        }
        if (!best)
            return;
        uint32_t b = best->baseline;
        best->tick = NET_TICK_NONE;
        cl->stats.snapshots_kept_applied++;
        decode_and_apply(cl, best->data, best->length, b);
    }
}

// Keep a snapshot that cannot be applied yet; when every slot is taken, the
// one with the newest baseline goes (the oldest gaps are filled first).
static void keep_pending(cl_client *cl, const uint8_t *data, size_t len, uint32_t b, uint32_t t)
{
    cl_pending *free_slot = NULL, *newest = NULL;
    for (uint32_t i = 0; i < CL_PENDING; i++) {
        cl_pending *p = &cl->pending[i];
        if (p->tick == NET_TICK_NONE) {
            free_slot = free_slot ? free_slot : p;
            continue;
        }
        if (p->baseline == b && p->tick == t)
            return; // a copy
        if (!newest || p->baseline > newest->baseline)
            newest = p;
    }
    cl_pending *slot = free_slot;
    if (!slot) {
        cl->stats.snapshots_dropped++;
        if (newest->baseline <= b)
            return;
        slot = newest;
    }
    slot->baseline = b;
    slot->tick = t;
    slot->length = len;
    memcpy(slot->data, data, len);
    cl->stats.snapshots_kept++;
}

static void handle_snapshot(cl_client *cl, const uint8_t *data, size_t len, uint32_t now_ms)
{
    net_snapshot h;
    if (!net_snapshot_peek(data, len, &h)) {
        cl->stats.messages_malformed++;
        return;
    }
    note_server(cl, h.sequence, h.client_time_echo, h.echo_delay_ms, h.last_applied_tick, h.input_margin_q8, now_ms);
    cl->stats.snapshots++;
    if (cl->heard_tick == NET_TICK_NONE || h.tick > cl->heard_tick)
        cl->heard_tick = h.tick;
    if (cl->status == CL_STATUS_REFUSED || cl->status == CL_STATUS_DISCONNECTED ||
        (cl->confirmed != NET_TICK_NONE && h.tick <= cl->confirmed)) {
        cl->stats.snapshots_stale++;
        return;
    }
    if (!applicable(cl, h.baseline_tick, h.tick)) {
        if (cl->confirmed != NET_TICK_NONE && h.baseline_tick < cl->confirmed) {
            cl->stats.snapshots_unusable++; // from a baseline we never confirmed
            return;
        }
        keep_pending(cl, data, len, h.baseline_tick, h.tick);
        return;
    }
    if (decode_and_apply(cl, data, len, h.baseline_tick))
        drain_pending(cl);
}

static void apply_full(cl_client *cl, uint32_t received_ms, uint32_t now_ms);

static void handle_full(cl_client *cl, const uint8_t *data, size_t len, uint32_t now_ms)
{
    net_full_part p;
    if (!net_full_part_decode_game(data, len, cl->game, &p)) {
        cl->stats.messages_malformed++;
        return;
    }
    note_server(cl, p.sequence, p.client_time_echo, p.echo_delay_ms, p.last_applied_tick, p.input_margin_q8, now_ms);
    // Before the welcome too: when the welcome was lost and comes again,
    // the full state sent with it is ready.
    if (cl->status == CL_STATUS_REFUSED || cl->status == CL_STATUS_DISCONNECTED)
        return;
    if (cl->heard_tick == NET_TICK_NONE || p.tick > cl->heard_tick)
        cl->heard_tick = p.tick;
    if (cl->confirmed != NET_TICK_NONE && p.tick <= cl->confirmed) {
        cl->stats.snapshots_stale++;
        return;
    }
    if (cl->full_ready && p.tick <= cl->full_tick)
        return; // the one assembled already, or older
    if (p.tick != cl->full_tick || p.part_count != cl->full_part_count || p.state_hash != cl->full_hash) {
        if (cl->full_tick != NET_TICK_NONE && p.tick < cl->full_tick)
            return; // an older full state than the one being assembled
        cl->full_ready = false;
        cl->full_tick = p.tick;
        cl->full_part_count = p.part_count;
        cl->full_total = p.total_characters;
        cl->full_hash = p.state_hash;
        cl->full_received = 0;
        cl->full_save_size = p.save_size;
        memset(cl->full_parts_seen, 0, sizeof cl->full_parts_seen);
    }
    if (cl->game && p.save_size != cl->full_save_size)
        return;
    if (p.part >= MAX_PARTS || (cl->full_parts_seen[p.part / 32] & (1u << (p.part % 32))))
        return;
    uint32_t first = (uint32_t)p.part * NET_FULL_PART_CHARACTERS;
    if (p.count > 0 && first + p.count > cl->full_total)
        return;
    cl->full_parts_seen[p.part / 32] |= 1u << (p.part % 32);
    for (uint32_t i = 0; i < p.count; i++) {
        cl->full_states[first + i] = p.states[i];
        cl->full_cmds[first + i] = p.last_commands[i];
        memcpy(cl->full_game[first + i], p.last_game[i], sizeof cl->full_game[0]);
    }
    if (cl->game && p.chunk_size) // (the decoder checked that it lies inside save_size)
        memcpy(cl->full_save + p.chunk_offset, p.chunk, p.chunk_size);
    if (++cl->full_received < cl->full_part_count)
        return;
    // With a game the saved scene (the game's state with the characters),
    // checked field by field by sim_scene_restore: its characters must be
    // the ones the parts name.
    bool ok = cl->game ? sim_scene_restore(cl->work, cl->full_save, cl->full_save_size, NULL) &&
                             sim_scene_tick(cl->work) == p.tick
                       : sim_scene_restore_states(cl->work, p.tick, cl->full_states, cl->full_total, NULL);
    if (ok && cl->game) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(cl->work, &n);
        ok = n == cl->full_total;
        for (uint32_t i = 0; ok && i < n; i++)
            ok = chars[i].id == cl->full_states[i].id;
    }
    if (!ok || sim_scene_hash(cl->work) != p.state_hash) {
        cl->stats.hash_mismatches++;
        cl->full_tick = NET_TICK_NONE;
        return;
    }
    if (cl->status == CL_STATUS_CONNECTING) {
        cl->full_ready = true; // applied when the welcome comes
        cl->full_ready_ms = now_ms;
        return;
    }
    apply_full(cl, now_ms, now_ms);
}

// The assembled full state (full_tick, checked), received at `received_ms`.
static void apply_full(cl_client *cl, uint32_t received_ms, uint32_t now_ms)
{
    uint32_t tick = cl->full_tick;
    cl->full_ready = false;
    if (cl->game)
        cl_copy_scene(cl, cl->conf, cl->work); // the full state as handle_full checked it
    else
        sim_scene_restore_states(cl->conf, tick, cl->full_states, cl->full_total, NULL);
    for (uint32_t i = 0; i < cl->full_total; i++) {
        cl->last_cmds[i].id = cl->full_states[i].id;
        cl->last_cmds[i].command = cl->full_cmds[i];
        memcpy(cl->last_cmds[i].game, cl->full_game[i], sizeof cl->full_game[i]);
    }
    cl->last_cmd_count = cl->full_total;
    cl->stats.full_states++;
    cl->full_tick = NET_TICK_NONE;
    bool first_sync = cl->status == CL_STATUS_SYNCING;
    cl->status = CL_STATUS_PLAYING;
    uint32_t from = cl->confirmed == NET_TICK_NONE ? tick : cl->confirmed;
    confirm(cl, from, NULL);
    if (first_sync) {
        // The server has run on since the full state arrived (it waited for
        // a retransmitted welcome): those ticks too.
        uint32_t waited = (uint32_t)((uint64_t)(uint32_t)(now_ms - received_ms) * 1000u / cl->nominal_tick_us);
        cl->catch_up = cl_client_target_lead(cl) + waited;
        // Commands for the ticks the server runs before ours can arrive are
        // lost: it repeats the last one it had (none yet for a new
        // character: the one the full state names).
        double rtt_ticks = cl->rtt_ms * 1000.0 / (double)cl->nominal_tick_us * 1.25;
        cl->live_tick = tick + waited + (uint32_t)rtt_ticks + 2u;
        const net_tick_command *mine = cl_find_cmd(cl->last_cmds, cl->last_cmd_count, cl->character);
        memset(&cl->substitute_cmd, 0, sizeof cl->substitute_cmd);
        memset(cl->substitute_game, 0, sizeof cl->substitute_game);
        if (mine) {
            cl->substitute_cmd = mine->command;
            memcpy(cl->substitute_game, mine->game, sizeof cl->substitute_game);
        }
    }
    drain_pending(cl);
}

void cl_client_handle(cl_client *cl, const net_event *ev, uint32_t now_ms)
{
    if (ev->type == NET_EVENT_DISCONNECT) {
        if (cl->status != CL_STATUS_REFUSED)
            cl->status = CL_STATUS_DISCONNECTED;
        return;
    }
    if (ev->type != NET_EVENT_RECEIVE)
        return;
    net_msg_type type = net_msg_peek_type(ev->data, ev->length);
    if (ev->channel == NET_CHANNEL_CONTROL && type == NET_MSG_WELCOME) {
        net_welcome w;
        if (!net_welcome_decode(ev->data, ev->length, &w) || cl->status != CL_STATUS_CONNECTING) {
            cl->stats.messages_malformed++;
            return;
        }
        cl->character = w.character_id;
        cl->ticks_per_snapshot = w.ticks_per_snapshot;
        // The welcome's round trip includes any retransmission of the hello
        // or the welcome: used only until an echo gives a better one.
        double rtt = (double)(uint32_t)(now_ms - w.client_time_echo);
        if (rtt >= 0 && rtt < 10000 && !cl->rtt_from_echo) {
            cl->rtt_ms = rtt;
            cl->has_rtt = true;
        }
        cl->status = CL_STATUS_SYNCING;
        cl_send_ping(cl, now_ms);
        if (cl->full_ready)
            apply_full(cl, cl->full_ready_ms, now_ms);
    } else if (ev->channel == NET_CHANNEL_CONTROL && type == NET_MSG_REFUSE) {
        net_refuse r;
        if (!net_refuse_decode(ev->data, ev->length, &r)) {
            cl->stats.messages_malformed++;
            return;
        }
        memcpy(cl->refusal, r.reason, sizeof cl->refusal);
        cl->refusal_code = r.code;
        cl->status = CL_STATUS_REFUSED;
    } else if (ev->channel == NET_CHANNEL_SNAPSHOT && type == NET_MSG_SNAPSHOT) {
        handle_snapshot(cl, ev->data, ev->length, now_ms);
    } else if (ev->channel == NET_CHANNEL_SNAPSHOT && type == NET_MSG_FULL) {
        handle_full(cl, ev->data, ev->length, now_ms);
    } else {
        cl->stats.messages_malformed++;
    }
}
