// keel: the input message (client -> server commands). MIT licence, see LICENSE.
//
// type, sequence (16), client_time_ms (16), newest_tick (32), count (6,
// 0..32), ack_tick (1 bit "none", else newest_tick - ack_tick as a wrapping
// signed svar), held_mask (1 bit "none", else 32 bits), then the commands
// oldest first, each delta-coded against the one before it (the first
// against an all-zero command); their ticks are implied. An input with no
// command is a ping and an acknowledgement (before the client plays, or
// between its commands).
#include <string.h>

#include "proto_internal.h"

bool net_input_valid(const net_input *m)
{
    if (m->count > NET_MAX_INPUT_COMMANDS || m->newest_tick == NET_TICK_NONE ||
        (m->count > 0 && m->newest_tick < (uint32_t)m->count - 1u))
        return false;
    if (m->held_mask != 0 && m->ack_tick == NET_TICK_NONE)
        return false;
    uint32_t first = m->newest_tick - (m->count ? (uint32_t)m->count - 1u : 0u);
    for (uint32_t i = 0; i < m->count; i++)
        if (m->commands[i].tick != first + i || !net_command_valid(&m->commands[i]) ||
            !net_game_payload_valid(m->game, m->game_commands[i]))
            return false;
    return true;
}

size_t net_input_write(const net_input *m, uint8_t *out, size_t capacity)
{
    net_bit_writer w;
    net_bw_init(&w, out, capacity);
    if (m->count > NET_MAX_INPUT_COMMANDS)
        return 0;
    net_write_type(&w, NET_MSG_INPUT);
    net_bw_u(&w, m->sequence, 16);
    net_bw_u(&w, m->client_time_ms, 16);
    net_bw_u(&w, m->newest_tick, 32);
    net_bw_u(&w, m->count, NET_INPUT_COUNT_BITS);
    net_bw_bool(&w, m->ack_tick == NET_TICK_NONE);
    if (m->ack_tick != NET_TICK_NONE)
        net_bw_svar(&w, net_u32_as_s32(m->newest_tick - m->ack_tick), NET_VAR_GROUP);
    net_bw_bool(&w, m->held_mask != 0);
    if (m->held_mask != 0)
        net_bw_u(&w, m->held_mask, 32);
    sim_input prev;
    memset(&prev, 0, sizeof prev);
    static const uint8_t zero[NET_GAME_COMMAND_BYTES];
    for (uint32_t i = 0; i < m->count; i++) {
        net_write_command(&w, &prev, &m->commands[i]);
        net_write_game(&w, m->game, i ? m->game_commands[i - 1] : zero, m->game_commands[i]);
        prev = m->commands[i];
    }
    return net_bw_finish(&w);
}

size_t net_input_encode(const net_input *m, uint8_t *out, size_t capacity)
{
    return net_input_valid(m) ? net_input_write(m, out, capacity) : 0;
}

bool net_input_decode(const uint8_t *data, size_t length, net_input *m)
{
    return net_input_decode_game(data, length, NULL, m);
}

bool net_input_decode_game(const uint8_t *data, size_t length, const struct sim_game *game, net_input *m)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    memset(m, 0, sizeof *m);
    m->game = game;
    net_expect_type(&r, NET_MSG_INPUT);
    m->sequence = (uint16_t)net_br_u(&r, 16);
    m->client_time_ms = (uint16_t)net_br_u(&r, 16);
    m->newest_tick = net_br_u(&r, 32);
    m->count = (uint8_t)net_br_u(&r, NET_INPUT_COUNT_BITS);
    if (net_br_bool(&r)) {
        m->ack_tick = NET_TICK_NONE;
    } else {
        int32_t d = net_br_svar(&r, NET_VAR_GROUP);
        m->ack_tick = m->newest_tick - (uint32_t)d;
        if (m->ack_tick == NET_TICK_NONE) // that one has its own, shorter form
            net_br_fail(&r);
    }
    if (net_br_bool(&r)) {
        m->held_mask = net_br_u(&r, 32);
        if (m->held_mask == 0) // that one has its own, shorter form
            net_br_fail(&r);
    }
    if (m->count > NET_MAX_INPUT_COMMANDS || m->newest_tick == NET_TICK_NONE ||
        (m->count > 0 && m->newest_tick < (uint32_t)m->count - 1u))
        net_br_fail(&r);
    uint32_t first = m->newest_tick - (m->count ? (uint32_t)m->count - 1u : 0u);
    sim_input prev;
    memset(&prev, 0, sizeof prev);
    static const uint8_t zero[NET_GAME_COMMAND_BYTES];
    for (uint32_t i = 0; i < m->count && !r.error; i++) {
        net_read_command(&r, &prev, &m->commands[i], first + i);
        net_read_game(&r, game, i ? m->game_commands[i - 1] : zero, m->game_commands[i]);
        prev = m->commands[i];
    }
    return net_br_finish(&r) && net_input_valid(m);
}

uint32_t net_held_bits(uint32_t ack, uint32_t baseline, uint32_t tick)
{
    if (ack == NET_TICK_NONE || tick == NET_TICK_NONE || tick <= ack)
        return 0;
    uint32_t lo = baseline > ack ? baseline - ack : 0u;
    uint32_t hi = tick - ack < 32u ? tick - ack : 32u;
    if (lo >= hi)
        return 0;
    uint32_t width = hi - lo;
    return (width >= 32u ? 0xFFFFFFFFu : (1u << width) - 1u) << lo;
}
