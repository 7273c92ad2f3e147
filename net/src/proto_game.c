// keel: a game's part of the protocol: its command payload on the wire and
// its name, version and digest in the simulation identity. MIT licence, see
// LICENSE.
//
// A payload is what sim_game_pack_command makes of a game's command struct:
// its fields in schema order, each in its bits, least significant bit first.
// On the wire it goes as one bit "the same as the previous command's" (0) or
// 1 and exactly sim_game_command_bits bits. Without a game nothing is
// written at all: every message is encoded as before games existed.
#include <stdio.h>
#include <string.h>

#include <keel/sim_game.h>

#include "proto_internal.h"

size_t net_game_command_bytes(const struct sim_game *game)
{
    if (!game)
        return 0;
    return ((size_t)sim_game_command_bits(game) + 7u) / 8u;
}

bool net_game_payload_valid(const struct sim_game *game, const uint8_t *payload)
{
    size_t n = net_game_command_bytes(game);
    if (n == 0)
        return true;
    if (n > NET_GAME_COMMAND_BYTES)
        return false;
    for (size_t i = n; i < NET_GAME_COMMAND_BYTES; i++)
        if (payload[i] != 0)
            return false;
    uint8_t command[SIM_GAME_COMMAND_MAX_BYTES];
    return sim_game_unpack_command(game, payload, n, command, NULL);
}

void net_write_game(net_bit_writer *w, const struct sim_game *game, const uint8_t *prev, const uint8_t *cur)
{
    uint32_t bits = game ? sim_game_command_bits(game) : 0;
    if (bits == 0)
        return;
    if (bits > 8u * NET_GAME_COMMAND_BYTES) {
        net_bw_fail(w);
        return;
    }
    bool changed = memcmp(prev, cur, NET_GAME_COMMAND_BYTES) != 0;
    net_bw_bool(w, changed);
    if (!changed)
        return;
    for (uint32_t b = 0; b < bits; b += 8) {
        uint32_t n = bits - b < 8u ? bits - b : 8u;
        net_bw_u(w, cur[b / 8u] & ((1u << n) - 1u), n);
    }
}

void net_read_game(net_bit_reader *r, const struct sim_game *game, const uint8_t *prev, uint8_t *cur)
{
    uint32_t bits = game ? sim_game_command_bits(game) : 0;
    if (bits == 0) {
        memset(cur, 0, NET_GAME_COMMAND_BYTES);
        return;
    }
    if (bits > 8u * NET_GAME_COMMAND_BYTES) {
        net_br_fail(r);
        return;
    }
    if (!net_br_bool(r)) {
        memmove(cur, prev, NET_GAME_COMMAND_BYTES);
        return;
    }
    uint8_t v[NET_GAME_COMMAND_BYTES] = {0};
    for (uint32_t b = 0; b < bits; b += 8) {
        uint32_t n = bits - b < 8u ? bits - b : 8u;
        v[b / 8u] = (uint8_t)net_br_u(r, n);
    }
    // Canonical (a changed payload differs) and in range, field by field.
    if (r->error || memcmp(v, prev, sizeof v) == 0 || !net_game_payload_valid(game, v))
        net_br_fail(r);
    memcpy(cur, v, sizeof v);
}

bool net_set_command(struct sim_scene *scene, uint32_t id, const sim_input *input, const uint8_t *payload)
{
    const sim_game *game = sim_scene_game(scene);
    size_t n = net_game_command_bytes(game);
    if (n == 0 || n > NET_GAME_COMMAND_BYTES)
        return sim_scene_set_input(scene, id, input);
    uint8_t command[SIM_GAME_COMMAND_MAX_BYTES];
    if (!sim_game_unpack_command(game, payload, n, command, NULL))
        return false;
    return sim_scene_set_command(scene, id, input, command, NULL);
}

// ---- identity --------------------------------------------------------------------

bool net_identity_set_game(net_sim_identity *id, const struct sim_game *game)
{
    memset(id->game_name, 0, sizeof id->game_name);
    id->game_version = 0;
    id->game_digest = 0;
    if (!game)
        return true;
    const char *name = sim_game_name(game);
    size_t n = strlen(name);
    if (n >= sizeof id->game_name)
        n = sizeof id->game_name - 1u;
    memcpy(id->game_name, name, n);
    id->game_version = sim_game_version(game);
    id->game_digest = sim_game_digest(game);
    return net_game_command_bytes(game) <= NET_GAME_COMMAND_BYTES;
}

bool net_identity_check(const net_sim_identity *client, const net_sim_identity *server, char *reason, size_t capacity)
{
    const char *why = NULL;
    if (!net_identity_equal(client, server, &why)) {
        const char *pre = "simulation differs from the server's: ";
        if (strcmp(why, "game differs") != 0) {
            snprintf(reason, capacity, "%s%s", pre, why);
            return false;
        }
        const char *cn = client->game_name[0] ? client->game_name : "none";
        const char *sn = server->game_name[0] ? server->game_name : "none";
        if (!client->game_name[0] || !server->game_name[0])
            snprintf(reason, capacity, "game %s differs from the server's %s", cn, sn);
        else if (strcmp(cn, sn) != 0 || client->game_version != server->game_version)
            snprintf(reason, capacity, "game %s %u differs from the server's %s %u", cn, (unsigned)client->game_version,
                     sn, (unsigned)server->game_version);
        else
            snprintf(reason, capacity, "game %s %u differs from the server's %s %u (its schemas or settings)", cn,
                     (unsigned)client->game_version, sn, (unsigned)server->game_version);
        return false;
    }
    if (capacity)
        reason[0] = 0;
    return true;
}

// The hello's game: after the last field of the hello without a game, one
// bit 1, the name's length (6 bits, 1..47), each character (7 bits), the
// version (32) and the digest (64). Without a game nothing follows: the
// padding bits of the last byte are 0.
void net_write_hello_game(net_bit_writer *w, const net_sim_identity *id)
{
    size_t n = 0;
    while (n < sizeof id->game_name - 1u && id->game_name[n])
        n++;
    if (n == 0)
        return;
    net_bw_bool(w, true);
    net_bw_u(w, (uint32_t)n, 6);
    for (size_t i = 0; i < n; i++)
        net_bw_u(w, (uint8_t)id->game_name[i] & 0x7Fu, 7);
    net_bw_u(w, id->game_version, 32);
    net_bw_u64(w, id->game_digest);
}

void net_read_hello_game(net_bit_reader *r, net_sim_identity *id)
{
    // No game: nothing but the last byte's padding (net_br_finish checks it).
    if (net_br_left(r) < 8u)
        return;
    if (!net_br_bool(r)) {
        net_br_fail(r); // a byte more than a hello without a game needs
        return;
    }
    uint32_t n = net_br_u(r, 6);
    if (n == 0 || n >= sizeof id->game_name) {
        net_br_fail(r);
        return;
    }
    for (uint32_t i = 0; i < n && !r->error; i++) {
        char c = (char)net_br_u(r, 7);
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                  c == '.';
        if (!ok)
            net_br_fail(r);
        id->game_name[i] = c;
    }
    id->game_version = net_br_u(r, 32);
    id->game_digest = net_br_u64(r);
}
