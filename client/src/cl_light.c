// keel client: light clients (the protocol without the simulation; the
// invariants are in cl_light.h). MIT licence, see LICENSE.
#include <keel/cl_light.h>

#include <string.h>

void cl_light_init(cl_light *l, const net_sim_identity *identity, uint32_t ticks_per_packet,
                   uint32_t redundancy_packets)
{
    memset(l, 0, sizeof *l);
    l->identity = *identity;
    l->ticks_per_packet = ticks_per_packet < 1 ? 1 : (ticks_per_packet > 8 ? 8 : ticks_per_packet);
    uint32_t repeat = l->ticks_per_packet * (redundancy_packets < 1 ? 1 : redundancy_packets);
    if (repeat > NET_MAX_INPUT_COMMANDS)
        repeat = NET_MAX_INPUT_COMMANDS;
    if (repeat > CL_LIGHT_RING / 2u)
        repeat = CL_LIGHT_RING / 2u;
    l->repeat = repeat;
    l->status = CL_LIGHT_CONNECTING;
    l->sent_newest = NET_TICK_NONE;
    l->ack = NET_TICK_NONE;
    l->full_tick = NET_TICK_NONE;
    for (uint32_t i = 0; i < CL_LIGHT_RING; i++)
        l->confirmed[i] = NET_TICK_NONE;
    for (uint32_t i = 0; i < CL_LIGHT_HELD; i++)
        l->held_tick[i] = NET_TICK_NONE;
    l->lead_adjust = 1;
}

void cl_light_hello(cl_light *l, net_host *host, uint32_t now_ms)
{
    net_hello h;
    memset(&h, 0, sizeof h);
    h.protocol_version = NET_PROTOCOL_VERSION;
    h.identity = l->identity;
    h.client_time_ms = now_ms;
    size_t len = net_hello_encode(&h, l->packet, sizeof l->packet);
    if (len)
        net_host_send(host, 0, NET_CHANNEL_CONTROL, l->packet, len);
}

static bool confirmed(const cl_light *l, uint32_t tick)
{
    return tick != NET_TICK_NONE && l->confirmed[tick % CL_LIGHT_RING] == tick;
}

static void confirm(cl_light *l, uint32_t tick)
{
    l->ack = tick;
    l->confirmed[tick % CL_LIGHT_RING] = tick;
}

// The acknowledgement, as cl_client keeps it: a snapshot [base, tick) (base
// NET_TICK_NONE: a full state received whole) confirms its tick when the
// client confirmed its baseline; a later one is kept until it does (the
// oldest gaps first: when every slot is taken, the newest baseline goes),
// and kept ones are confirmed in turn as the gaps fill.
static void note_snapshot(cl_light *l, uint32_t base, uint32_t tick)
{
    if (l->ack != NET_TICK_NONE && tick <= l->ack)
        return;
    bool usable = base == NET_TICK_NONE || (confirmed(l, base) && base <= l->ack);
    if (!usable) {
        if (l->ack == NET_TICK_NONE || base > l->ack) {
            uint32_t slot = CL_LIGHT_HELD, newest = CL_LIGHT_HELD;
            for (uint32_t i = 0; i < CL_LIGHT_HELD; i++) {
                if (l->held_tick[i] == tick && l->held_base[i] == base)
                    return; // a copy
                if (l->held_tick[i] == NET_TICK_NONE)
                    slot = slot < CL_LIGHT_HELD ? slot : i;
                else if (newest == CL_LIGHT_HELD || l->held_base[i] > l->held_base[newest])
                    newest = i;
            }
            if (slot == CL_LIGHT_HELD && newest < CL_LIGHT_HELD && l->held_base[newest] > base)
                slot = newest;
            if (slot < CL_LIGHT_HELD) {
                l->held_base[slot] = base;
                l->held_tick[slot] = tick;
                l->stats.snapshots_held++;
            }
        }
        return; // (from a baseline it never confirmed: of no use)
    }
    confirm(l, tick);
    for (bool again = true; again;) { // the kept ones this reaches, newest first
        again = false;
        uint32_t best = CL_LIGHT_HELD;
        for (uint32_t i = 0; i < CL_LIGHT_HELD; i++) {
            if (l->held_tick[i] == NET_TICK_NONE)
                continue;
            if (l->held_tick[i] <= l->ack)
                l->held_tick[i] = NET_TICK_NONE;
            else if (confirmed(l, l->held_base[i]) && (best == CL_LIGHT_HELD || l->held_tick[i] > l->held_tick[best]))
                best = i;
        }
        if (best < CL_LIGHT_HELD) {
            confirm(l, l->held_tick[best]);
            l->held_tick[best] = NET_TICK_NONE;
            again = true;
        }
    }
}

// Which ticks past the confirmed one the kept snapshots hold (net_input.held_mask).
static uint32_t held_mask(const cl_light *l)
{
    uint32_t mask = 0;
    for (uint32_t i = 0; i < CL_LIGHT_HELD; i++)
        mask |= net_held_bits(l->ack, l->held_base[i], l->held_tick[i]);
    return mask;
}

// The round trip and the input margin the server reports with every
// snapshot steer the clock (cl_light_target_tick).
static void note_server(cl_light *l, uint32_t echo, uint16_t delay_ms, int32_t margin_q8, uint32_t now_ms)
{
    double rtt = (double)(uint16_t)(now_ms - echo) - (double)delay_ms; // the echo is 16 bits
    if (echo && rtt >= 0 && rtt < 10000) {
        // The first echo replaces the welcome's estimate, which a
        // retransmitted hello or welcome stretches (Karn's rule).
        l->rtt_ms = l->rtt_from_echo ? l->rtt_ms * 0.9 + rtt * 0.1 : rtt;
        l->rtt_from_echo = true;
    }
    if (l->ack != NET_TICK_NONE && l->ack < l->hold_until)
        return;          // measured before the last change took effect
    if (margin_q8 < 0) { // late: a tick more than was missing, at once
        l->lead_adjust += (-margin_q8 + 255) / 256 + 1;
        l->hold_until = l->next_tick;
        l->margin_reports = 0;
        return;
    }
    if (l->margin_reports == 0 || margin_q8 < l->margin_low_q8)
        l->margin_low_q8 = margin_q8;
    if (++l->margin_reports < 32u)
        return;
    if (l->margin_low_q8 > 3 * 256 && l->lead_adjust > -4)
        l->lead_adjust--; // early all along: one tick less
    l->margin_reports = 0;
    l->hold_until = l->next_tick;
}

static void handle_snapshot(cl_light *l, const net_event *ev, uint32_t now_ms)
{
    net_msg_type type = net_msg_peek_type(ev->data, ev->length);
    if (type == NET_MSG_SNAPSHOT) {
        net_snapshot s;
        memset(&s, 0, sizeof s);
        if (!net_snapshot_peek(ev->data, ev->length, &s)) {
            l->stats.messages_malformed++;
            return;
        }
        l->stats.snapshots++;
        note_server(l, s.client_time_echo, s.echo_delay_ms, s.input_margin_q8, now_ms);
        note_snapshot(l, s.baseline_tick, s.tick);
        return;
    }
    net_full_part *p = &l->part;
    if (type != NET_MSG_FULL || !net_full_part_decode(ev->data, ev->length, p) || p->part >= 64u) {
        l->stats.messages_malformed++;
        return;
    }
    note_server(l, p->client_time_echo, p->echo_delay_ms, p->input_margin_q8, now_ms);
    if (p->tick != l->full_tick) {
        l->full_tick = p->tick;
        l->full_parts = 0;
    }
    l->full_parts |= (uint64_t)1 << p->part;
    uint64_t all = p->part_count >= 64u ? ~(uint64_t)0 : ((uint64_t)1 << p->part_count) - 1u;
    if ((l->full_parts & all) == all && (l->ack == NET_TICK_NONE || p->tick > l->ack)) {
        l->stats.full_states++;
        note_snapshot(l, NET_TICK_NONE, p->tick);
    }
}

void cl_light_handle(cl_light *l, const net_event *ev, uint32_t now_ms)
{
    if (ev->type == NET_EVENT_DISCONNECT) {
        if (l->status != CL_LIGHT_REFUSED)
            l->status = CL_LIGHT_DISCONNECTED;
        return;
    }
    if (ev->type != NET_EVENT_RECEIVE)
        return;
    if (ev->channel == NET_CHANNEL_SNAPSHOT) {
        handle_snapshot(l, ev, now_ms);
        return;
    }
    net_msg_type type = net_msg_peek_type(ev->data, ev->length);
    net_welcome w;
    net_refuse r;
    if (ev->channel == NET_CHANNEL_CONTROL && type == NET_MSG_WELCOME && net_welcome_decode(ev->data, ev->length, &w) &&
        l->status == CL_LIGHT_CONNECTING) {
        l->status = CL_LIGHT_PLAYING;
        l->character = w.character_id;
        l->welcome_tick = w.server_tick;
        l->welcome_ms = now_ms;
        l->tick_rate = w.tick_rate ? w.tick_rate : 64u;
        double rtt = (double)(uint32_t)(now_ms - w.client_time_echo);
        l->rtt_ms = rtt >= 0 && rtt < 10000 ? rtt : 0;
        l->first_tick = l->next_tick = w.server_tick + 1u;
    } else if (ev->channel == NET_CHANNEL_CONTROL && type == NET_MSG_REFUSE &&
               net_refuse_decode(ev->data, ev->length, &r)) {
        memcpy(l->refusal, r.reason, sizeof l->refusal);
        l->refusal_code = r.code;
        l->status = CL_LIGHT_REFUSED;
    } else {
        l->stats.messages_malformed++;
    }
}

void cl_light_skip_to(cl_light *l, uint32_t tick)
{
    if (tick > l->next_tick)
        l->first_tick = l->next_tick = tick;
}

uint32_t cl_light_target_tick(cl_light *l, uint32_t now_ms)
{
    // The server's tick now: the welcome's, half a round trip old when it
    // arrived, advanced by the time since.
    double ms = (double)(uint32_t)(now_ms - l->welcome_ms) + l->rtt_ms * 0.5;
    uint32_t server = l->welcome_tick + (uint32_t)(ms * (double)l->tick_rate / 1000.0);
    // A command must reach the server before its tick runs: half a round
    // trip, the wait for the packet that carries it, and the margin.
    int64_t lead =
        (int64_t)(l->rtt_ms * 0.5 * (double)l->tick_rate / 1000.0 + 1.0) + l->ticks_per_packet + l->lead_adjust;
    if (lead < 1)
        lead = 1;
    if (lead > NET_MAX_SNAPSHOT_TICKS / 2)
        lead = NET_MAX_SNAPSHOT_TICKS / 2;
    uint32_t target = server + (uint32_t)lead;
    if (target > l->next_tick + NET_MAX_SNAPSHOT_TICKS) // stalled: what is past is lost anyway
        cl_light_skip_to(l, target - (uint32_t)lead);
    return target;
}

void cl_light_command(cl_light *l, const sim_input *command)
{
    sim_input *c = &l->ring[l->next_tick % CL_LIGHT_RING];
    *c = *command;
    c->tick = l->next_tick++;
}

void cl_light_send(cl_light *l, net_host *host, uint32_t now_ms)
{
    if (l->next_tick == l->first_tick)
        return; // no command yet
    uint32_t newest = l->next_tick - 1u;
    if (l->sent_newest != NET_TICK_NONE && newest - l->sent_newest < l->ticks_per_packet)
        return;
    net_input in;
    memset(&in, 0, sizeof in);
    uint32_t count = newest - l->first_tick + 1u;
    if (count > l->repeat)
        count = l->repeat;
    for (uint32_t k = 0; k < count; k++)
        in.commands[k] = l->ring[(newest - count + 1u + k) % CL_LIGHT_RING];
    in.sequence = l->sequence++;
    in.client_time_ms = (uint16_t)now_ms;
    in.ack_tick = l->ack;
    in.held_mask = held_mask(l);
    in.newest_tick = newest;
    in.count = (uint8_t)count;
    size_t len = net_input_encode(&in, l->packet, sizeof l->packet);
    if (len && net_host_send(host, 0, NET_CHANNEL_INPUT, l->packet, len)) {
        l->stats.input_packets++;
        l->stats.commands_sent += count;
    }
    l->sent_newest = newest;
}
