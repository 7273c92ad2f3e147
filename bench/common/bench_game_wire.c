// keel benchmark: what a game's command payload costs on the wire. The
// example game "tag" (tests/games/tag: fire, dash, weapon, aim, throw speed:
// 37 bits) beside the same messages without a game: an input packet of 8
// commands (2 ticks per packet x 4 packets of redundancy, keel-client's
// default) and a delta snapshot of 64 characters over 2 ticks with the
// reference (the common case), with payloads that change every command and
// with payloads that repeat. A payload costs its schema's bits plus one
// "changed" bit, or one bit when it repeats the one before it. Sizes only:
// deterministic, no clock. MIT licence, see LICENSE.
#include "bench_game_wire.h"

#include <stdio.h>
#include <string.h>

#include <keel/net_proto.h>
#include <keel/sim_game.h>

#include "tag.h"

#define CHARS 64u
#define TICKS 2u

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// A command as a random-walking bot gives it, and a tag payload that is
// different for every (id, tick) when `change`, else the same for the id.
static void command(const sim_game *g, uint32_t id, uint32_t tick, bool change, sim_input *in, uint8_t *payload)
{
    uint64_t h = mix(id * 1000003ull + (change ? tick : 0));
    memset(in, 0, sizeof *in);
    in->tick = tick;
    in->forward = 127;
    in->yaw = (sim_angle)(id * 4096u + tick * 64u);
    tag_command c = {(uint8_t)(h & 1u), (uint8_t)((h >> 1) & 1u), (uint8_t)((h >> 2) % 3u),
                     (sim_angle)(((h >> 8) & 0xFFFu) << 4), (sim_fx)((h >> 20) % (uint64_t)SIM_FX_INT(20))};
    memset(payload, 0, NET_GAME_COMMAND_BYTES);
    sim_game_pack_command(g, &c, payload, NET_GAME_COMMAND_BYTES, NULL);
}

static size_t input_bytes(const sim_game *g, bool change)
{
    static uint8_t buf[NET_MTU];
    net_input m;
    memset(&m, 0, sizeof m);
    m.ack_tick = 990;
    m.newest_tick = 1007;
    m.count = 8;
    for (uint32_t i = 0; i < m.count; i++)
        command(g, 1, 1000 + i, change, &m.commands[i], m.game_commands[i]);
    size_t plain = net_input_encode(&m, buf, sizeof buf);
    m.game = g;
    size_t with = net_input_encode(&m, buf, sizeof buf);
    return plain && with ? with - plain : 0;
}

static size_t snapshot_bytes(const sim_game *g, bool change, size_t *plain_out)
{
    static net_tick_command ref[CHARS], cmds[CHARS * TICKS];
    static uint8_t buf[8192];
    for (uint32_t i = 0; i < CHARS; i++) {
        ref[i].id = i + 1;
        command(g, i + 1, 999, change, &ref[i].command, ref[i].game);
        for (uint32_t t = 0; t < TICKS; t++) {
            net_tick_command *c = &cmds[t * CHARS + i];
            c->id = i + 1;
            command(g, i + 1, 1000 + t, change, &c->command, c->game);
        }
    }
    net_snapshot s;
    memset(&s, 0, sizeof s);
    s.tick = 1000 + TICKS;
    s.baseline_tick = 1000;
    s.last_applied_tick = NET_TICK_NONE;
    s.commands = cmds;
    s.command_count = s.command_capacity = CHARS * TICKS;
    s.reference = ref;
    s.reference_count = CHARS;
    size_t plain = net_snapshot_encode(&s, buf, sizeof buf);
    s.game = g;
    size_t with = net_snapshot_encode(&s, buf, sizeof buf);
    *plain_out = plain;
    return plain && with ? with - plain : 0;
}

int bench_game_wire(void)
{
    sim_game_def def = tag_game_def();
    sim_game_error err;
    sim_game *g = sim_game_create(&def, &err);
    if (!g) {
        fprintf(stderr, "bench_net: the tag game: %s\n", err.reason);
        return 1;
    }
    uint32_t bits = sim_game_command_bits(g);
    printf("== a game's command payload on the wire: tag, %u bits (%zu bytes packed); sizes only\n", bits,
           net_game_command_bytes(g));
    size_t in_change = input_bytes(g, true), in_same = input_bytes(g, false);
    printf("   input packet, 8 commands: +%zu B with payloads that change every command (%.1f bits each; "
           "bound %u + 1), +%zu B with a repeating payload (bound: %u + 1 bits for the first, 1 for each other: "
           "%u bits)\n",
           in_change, in_change * 8.0 / 8.0, bits, in_same, bits, bits + 8u);
    size_t plain = 0, sn_change = snapshot_bytes(g, true, &plain), sn_same = snapshot_bytes(g, false, &plain);
    printf("   delta snapshot, %u characters x %u ticks (%zu B without a game): +%zu B when every payload "
           "changes (%.1f bits per command), +%zu B when they repeat (%.2f bits per command)\n",
           CHARS, TICKS, plain, sn_change, sn_change * 8.0 / (CHARS * TICKS), sn_same, sn_same * 8.0 / (CHARS * TICKS));
    bool met = in_change * 8u <= 8u * (bits + 1u) + 7u && in_same * 8u <= bits + 8u + 7u &&
               sn_change * 8u <= CHARS * TICKS * (bits + 1u) + 7u && sn_same * 8u <= CHARS * TICKS + 7u;
    printf("   target (only its bits: the schema's bits + 1 when it changes, 1 bit when it repeats): %s\n",
           met ? "met" : "missed");
    sim_game_destroy(g);
    return met ? 0 : 1;
}
