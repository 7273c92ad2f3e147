// keel: the control messages: hello, welcome, refuse. MIT licence, see LICENSE.
#include <string.h>

#include "proto_internal.h"

static bool tick_rate_valid(uint16_t r) { return r >= SIM_MOVE_MIN_TICK_RATE && r <= SIM_MOVE_MAX_TICK_RATE; }

// ---- hello: type, protocol_version (16) first in every version, then the
// identity and the client's clock ---------------------------------------------------

bool net_hello_valid(const net_hello *m) { return tick_rate_valid(m->identity.tick_rate); }

size_t net_hello_write(const net_hello *m, uint8_t *out, size_t capacity)
{
    net_bit_writer w;
    net_bw_init(&w, out, capacity);
    net_write_type(&w, NET_MSG_HELLO);
    net_bw_u(&w, m->protocol_version, 16);
    net_bw_u(&w, m->identity.behaviour_version, 32);
    net_bw_u64(&w, m->identity.settings_digest);
    net_bw_u64(&w, m->identity.level_digest);
    net_bw_u64(&w, m->identity.scene_digest);
    net_bw_u(&w, m->identity.tick_rate, NET_TICK_RATE_BITS);
    net_bw_u(&w, m->client_time_ms, 32);
    net_write_hello_game(&w, &m->identity);
    return net_bw_finish(&w);
}

size_t net_hello_encode(const net_hello *m, uint8_t *out, size_t capacity)
{
    return net_hello_valid(m) ? net_hello_write(m, out, capacity) : 0;
}

bool net_hello_decode(const uint8_t *data, size_t length, net_hello *m)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    memset(m, 0, sizeof *m);
    net_expect_type(&r, NET_MSG_HELLO);
    m->protocol_version = (uint16_t)net_br_u(&r, 16);
    m->identity.behaviour_version = net_br_u(&r, 32);
    m->identity.settings_digest = net_br_u64(&r);
    m->identity.level_digest = net_br_u64(&r);
    m->identity.scene_digest = net_br_u64(&r);
    m->identity.tick_rate = (uint16_t)net_br_u(&r, NET_TICK_RATE_BITS);
    m->client_time_ms = net_br_u(&r, 32);
    net_read_hello_game(&r, &m->identity);
    return net_br_finish(&r) && net_hello_valid(m);
}

bool net_hello_peek_version(const uint8_t *data, size_t length, uint16_t *version)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    net_expect_type(&r, NET_MSG_HELLO);
    uint16_t v = (uint16_t)net_br_u(&r, 16);
    if (r.error)
        return false;
    *version = v;
    return true;
}

// ---- welcome ------------------------------------------------------------------------

bool net_welcome_valid(const net_welcome *m)
{
    return net_id_valid(m->character_id) && m->server_tick != NET_TICK_NONE && tick_rate_valid(m->tick_rate) &&
           m->ticks_per_snapshot >= 1 && m->ticks_per_snapshot <= 16;
}

size_t net_welcome_write(const net_welcome *m, uint8_t *out, size_t capacity)
{
    net_bit_writer w;
    net_bw_init(&w, out, capacity);
    net_write_type(&w, NET_MSG_WELCOME);
    net_bw_u(&w, m->character_id, NET_ID_BITS);
    net_bw_u(&w, m->server_tick, 32);
    net_bw_u(&w, m->tick_rate, NET_TICK_RATE_BITS);
    net_bw_u(&w, (uint32_t)(m->ticks_per_snapshot - 1u) & 0xFu, 4);
    net_bw_u(&w, m->client_time_echo, 32);
    return net_bw_finish(&w);
}

size_t net_welcome_encode(const net_welcome *m, uint8_t *out, size_t capacity)
{
    return net_welcome_valid(m) ? net_welcome_write(m, out, capacity) : 0;
}

bool net_welcome_decode(const uint8_t *data, size_t length, net_welcome *m)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    memset(m, 0, sizeof *m);
    net_expect_type(&r, NET_MSG_WELCOME);
    m->character_id = net_br_u(&r, NET_ID_BITS);
    m->server_tick = net_br_u(&r, 32);
    m->tick_rate = (uint16_t)net_br_u(&r, NET_TICK_RATE_BITS);
    m->ticks_per_snapshot = (uint8_t)(net_br_u(&r, 4) + 1u);
    m->client_time_echo = net_br_u(&r, 32);
    return net_br_finish(&r) && net_welcome_valid(m);
}

// ---- refuse: code (4), length (7), then 7 bits per character ----------------------

static bool printable(char c) { return c >= 0x20 && c <= 0x7E; }

bool net_refuse_valid(const net_refuse *m)
{
    if (m->code < NET_REFUSE_PROTOCOL || m->code > NET_REFUSE_SHUTDOWN)
        return false;
    const char *end = memchr(m->reason, '\0', sizeof m->reason);
    if (!end)
        return false;
    for (const char *p = m->reason; p < end; p++)
        if (!printable(*p))
            return false;
    return true;
}

size_t net_refuse_encode(const net_refuse *m, uint8_t *out, size_t capacity)
{
    if (!net_refuse_valid(m))
        return 0;
    size_t len = strlen(m->reason);
    net_bit_writer w;
    net_bw_init(&w, out, capacity);
    net_write_type(&w, NET_MSG_REFUSE);
    net_bw_u(&w, m->code, 4);
    net_bw_u(&w, (uint32_t)len, NET_REASON_LEN_BITS);
    for (size_t i = 0; i < len; i++)
        net_bw_u(&w, (uint8_t)m->reason[i], 7);
    return net_bw_finish(&w);
}

bool net_refuse_decode(const uint8_t *data, size_t length, net_refuse *m)
{
    net_bit_reader r;
    net_br_init(&r, data, length);
    memset(m, 0, sizeof *m);
    net_expect_type(&r, NET_MSG_REFUSE);
    m->code = (uint8_t)net_br_u(&r, 4);
    uint32_t len = net_br_u(&r, NET_REASON_LEN_BITS);
    if (len > NET_REASON_MAX)
        net_br_fail(&r);
    for (uint32_t i = 0; i < len && !r.error; i++) {
        char c = (char)net_br_u(&r, 7);
        if (!printable(c))
            net_br_fail(&r);
        m->reason[i] = c;
    }
    return net_br_finish(&r) && net_refuse_valid(m);
}
