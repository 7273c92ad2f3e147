// keel: one part of a full snapshot (server -> client). MIT licence, see LICENSE.
//
// type, sequence (16), client_time_echo (16), echo_delay_ms (16), tick (32),
// last_applied_tick, input_margin_q8, state_hash (64), part_count - 1 (5),
// part (5), total_characters (9), count (4), then per character its exact
// state (ids increasing within the part), the tick of its last command (32)
// and that command delta-coded against zero.
// With a game (net_full_part.game): part_count - 1 and part take 8 bits
// each; each character's record ends with its last command's payload
// (against zero bytes); after the records the saved state's size (var), this
// part's offset in it (var), its length (var, 0..NET_FULL_CHUNK_BYTES) and
// its bytes.
#include <string.h>

#include "proto_internal.h"

bool net_full_part_valid(const net_full_part *m)
{
    if (m->tick == NET_TICK_NONE || (m->last_applied_tick != NET_TICK_NONE && m->last_applied_tick >= m->tick))
        return false;
    if (m->input_margin_q8 < -NET_MARGIN_LIMIT || m->input_margin_q8 > NET_MARGIN_LIMIT)
        return false;
    uint32_t max_parts = m->game ? NET_MAX_GAME_FULL_PARTS : NET_MAX_FULL_PARTS;
    if (m->part_count < 1 || m->part_count > max_parts || m->part >= m->part_count)
        return false;
    if (m->game &&
        (m->chunk_size > NET_FULL_CHUNK_BYTES || m->save_size > NET_MAX_GAME_FULL_PARTS * NET_FULL_CHUNK_BYTES ||
         m->chunk_offset > m->save_size || m->save_size - m->chunk_offset < m->chunk_size))
        return false;
    if (m->total_characters > NET_MAX_CHARACTERS || m->count > NET_FULL_PART_CHARACTERS ||
        m->count > m->total_characters)
        return false;
    for (uint32_t i = 0; i < m->count; i++) {
        if (!net_state_valid(&m->states[i]) || !net_command_valid(&m->last_commands[i]) ||
            !net_game_payload_valid(m->game, m->last_game[i]))
            return false;
        if (i > 0 && m->states[i].id <= m->states[i - 1].id)
            return false;
    }
    return true;
}

size_t net_full_part_write(const net_full_part *m, uint8_t *out, size_t capacity)
{
    net_bit_writer w;
    net_bw_init(&w, out, capacity);
    if (m->count > NET_FULL_PART_CHARACTERS || m->part_count < 1)
        return 0;
    net_write_type(&w, NET_MSG_FULL);
    net_bw_u(&w, m->sequence, 16);
    net_bw_u(&w, m->client_time_echo, 16);
    net_bw_u(&w, m->echo_delay_ms, 16);
    net_bw_u(&w, m->tick, 32);
    net_write_last_applied(&w, m->tick, m->last_applied_tick);
    net_write_margin(&w, m->input_margin_q8);
    net_bw_u64(&w, m->state_hash);
    unsigned part_bits = m->game ? NET_GAME_PART_BITS : NET_PART_BITS;
    net_bw_u(&w, m->part_count - 1u, part_bits);
    net_bw_u(&w, m->part, part_bits);
    net_bw_u(&w, m->total_characters, NET_COUNT_BITS);
    net_bw_u(&w, m->count, NET_PART_COUNT_BITS);
    sim_input zero;
    memset(&zero, 0, sizeof zero);
    static const uint8_t zero_game[NET_GAME_COMMAND_BYTES];
    for (uint32_t i = 0; i < m->count; i++) {
        net_write_state(&w, &m->states[i]);
        net_bw_u(&w, m->last_commands[i].tick, 32);
        net_write_command(&w, &zero, &m->last_commands[i]);
        net_write_game(&w, m->game, zero_game, m->last_game[i]);
    }
    if (m->game) {
        if (m->chunk_size > NET_FULL_CHUNK_BYTES)
            return 0;
        net_bw_var(&w, m->save_size, NET_VAR_GROUP);
        net_bw_var(&w, m->chunk_offset, NET_VAR_GROUP);
        net_bw_var(&w, m->chunk_size, NET_VAR_GROUP);
        for (uint32_t i = 0; i < m->chunk_size; i++)
            net_bw_u(&w, m->chunk[i], 8);
    }
    return net_bw_finish(&w);
}

size_t net_full_part_encode(const net_full_part *m, uint8_t *out, size_t capacity)
{
    return net_full_part_valid(m) ? net_full_part_write(m, out, capacity) : 0;
}

bool net_full_part_decode(const uint8_t *data, size_t length, net_full_part *m)
{
    return net_full_part_decode_game(data, length, NULL, m);
}

bool net_full_part_decode_game(const uint8_t *data, size_t length, const struct sim_game *game, net_full_part *m)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    memset(m, 0, sizeof *m);
    m->game = game;
    net_expect_type(&r, NET_MSG_FULL);
    m->sequence = (uint16_t)net_br_u(&r, 16);
    m->client_time_echo = (uint16_t)net_br_u(&r, 16);
    m->echo_delay_ms = (uint16_t)net_br_u(&r, 16);
    m->tick = net_br_u(&r, 32);
    m->last_applied_tick = net_read_last_applied(&r, m->tick);
    m->input_margin_q8 = net_read_margin(&r);
    m->state_hash = net_br_u64(&r);
    unsigned part_bits = game ? NET_GAME_PART_BITS : NET_PART_BITS;
    m->part_count = (uint16_t)(net_br_u(&r, part_bits) + 1u);
    m->part = (uint16_t)net_br_u(&r, part_bits);
    m->total_characters = (uint16_t)net_br_u(&r, NET_COUNT_BITS);
    m->count = (uint8_t)net_br_u(&r, NET_PART_COUNT_BITS);
    if (m->count > NET_FULL_PART_CHARACTERS)
        return false;
    sim_input zero;
    memset(&zero, 0, sizeof zero);
    static const uint8_t zero_game[NET_GAME_COMMAND_BYTES];
    for (uint32_t i = 0; i < m->count && !r.error; i++) {
        net_read_state(&r, &m->states[i]);
        uint32_t tick = net_br_u(&r, 32);
        net_read_command(&r, &zero, &m->last_commands[i], tick);
        net_read_game(&r, game, zero_game, m->last_game[i]);
    }
    if (game && !r.error) {
        m->save_size = net_br_var(&r, NET_VAR_GROUP);
        m->chunk_offset = net_br_var(&r, NET_VAR_GROUP);
        uint32_t n = net_br_var(&r, NET_VAR_GROUP);
        if (n > NET_FULL_CHUNK_BYTES)
            return false;
        m->chunk_size = (uint16_t)n;
        for (uint32_t i = 0; i < n && !r.error; i++)
            m->chunk[i] = (uint8_t)net_br_u(&r, 8);
    }
    return net_br_finish(&r) && net_full_part_valid(m);
}
