// keel tests: a game through the network loop (the example game "tag",
// tests/games/tag, linked statically): its payload in the input, snapshot
// and full-state messages, its identity in the handshake, and a session on
// the in-memory network with a virtual clock (exactly reproducible) in which
// three prediction clients shoot at each other: no hash mismatch, nothing
// unexplained, and mispredictions of game fields named and put down to a
// game rule. Counts only, no wall-clock figure. MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/net_bits.h>
#include <keel/sim_game.h>
#include <keel/sim_spawn.h>
#include <keel/sv_server.h>

#include "../net/src/proto_internal.h"
#include "play.h"
#include "tag.h"
#include "test_support.h"

static sim_game *make_tag(uint32_t version)
{
    sim_game_def d = tag_game_def();
    d.version = version;
    sim_game_error err;
    sim_game *g = sim_game_create(&d, &err);
    cr_assert_not_null(g, "tag: %s (%s)", err.reason, err.field);
    return g;
}

static uint8_t g_buf[4096];
static net_tick_command g_cmds[64], g_cmds2[512];
static net_join g_joins[16];
static net_leave g_leaves[16];

// A snapshot to decode into, with the game, into the arrays above.
static void snapshot_for_decoding(net_snapshot *s, const sim_game *g)
{
    memset(s, 0, sizeof *s);
    s->game = g;
    s->commands = g_cmds2;
    s->command_capacity = 512;
    s->joins = g_joins;
    s->join_capacity = 16;
    s->leaves = g_leaves;
    s->leave_capacity = 16;
}

// ---- the messages ---------------------------------------------------------------------

Test(game_net, input_carries_the_payload_in_its_bits_and_refuses_a_field_out_of_range)
{
    sim_game *g = make_tag(1);
    cr_assert_eq(sim_game_command_bits(g), 37u);
    cr_assert_eq(net_game_command_bytes(g), 5u);
    net_input m;
    memset(&m, 0, sizeof m);
    m.ack_tick = NET_TICK_NONE;
    m.newest_tick = 100;
    m.count = 4;
    for (uint32_t i = 0; i < 4; i++) {
        m.commands[i].tick = 97 + i;
        m.commands[i].forward = 127;
        tag_command c = {(uint8_t)(i >= 2), 0, (uint8_t)(i % 3), 0, SIM_FX_INT((int32_t)i)};
        cr_assert_eq(sim_game_pack_command(g, &c, m.game_commands[i], NET_GAME_COMMAND_BYTES, NULL), 5u);
    }
    size_t plain = net_input_encode(&m, g_buf, sizeof g_buf);
    cr_assert_gt(plain, 0u); // without a game: the payloads are not sent
    m.game = g;
    size_t with = net_input_encode(&m, g_buf, sizeof g_buf);
    cr_assert_gt(with, plain);
    // 4 payloads, each changed: 4 x (1 + 37) bits beside the commands.
    cr_assert_leq(with - plain, (4u * 38u + 7u) / 8u + 1u, "%zu bytes more", with - plain);
    net_input d;
    cr_assert(net_input_decode_game(g_buf, with, g, &d));
    cr_assert_eq(d.count, 4);
    cr_assert_eq(memcmp(d.game_commands, m.game_commands, sizeof m.game_commands), 0);
    // The same bytes without the game do not decode (trailing payload bits).
    cr_assert_not(net_input_decode(g_buf, with, &d));
    // The same payload again costs one bit.
    memcpy(m.game_commands[1], m.game_commands[0], NET_GAME_COMMAND_BYTES);
    memcpy(m.game_commands[2], m.game_commands[0], NET_GAME_COMMAND_BYTES);
    memcpy(m.game_commands[3], m.game_commands[0], NET_GAME_COMMAND_BYTES);
    size_t same = net_input_encode(&m, g_buf, sizeof g_buf);
    cr_assert_leq(same - plain, (38u + 3u + 7u) / 8u + 1u);
    // weapon (bits 2..3) = 3: out of its range 0..2. The encoder refuses it;
    // the writer puts it on the wire and the decoder refuses it.
    m.game_commands[3][0] |= 0x0C;
    cr_assert_eq(net_input_encode(&m, g_buf, sizeof g_buf), 0u);
    size_t bad = net_input_write(&m, g_buf, sizeof g_buf);
    cr_assert_gt(bad, 0u);
    cr_assert_not(net_input_decode_game(g_buf, bad, g, &d), "a payload out of range decoded");
    sim_game_destroy(g);
}

Test(game_net, snapshot_and_full_state_carry_payloads_and_the_saved_scene)
{
    sim_game *g = make_tag(1);
    static net_tick_command cmds[6];
    for (uint32_t k = 0; k < 6; k++) {
        cmds[k].id = 1 + k % 2;
        cmds[k].command.tick = 10 + k / 2;
        tag_command c = {(uint8_t)(k % 2), 0, 1, (sim_angle)(k << 12), 0};
        sim_game_pack_command(g, &c, cmds[k].game, NET_GAME_COMMAND_BYTES, NULL);
    }
    net_snapshot s;
    memset(&s, 0, sizeof s);
    s.tick = 13;
    s.baseline_tick = 10;
    s.last_applied_tick = NET_TICK_NONE;
    s.commands = cmds;
    s.command_count = s.command_capacity = 6;
    s.game = g;
    size_t n = net_snapshot_encode(&s, g_buf, sizeof g_buf);
    cr_assert_gt(n, 0u);
    net_snapshot d;
    snapshot_for_decoding(&d, g);
    cr_assert(net_snapshot_decode(g_buf, n, &d));
    cr_assert_eq(d.command_count, 6u);
    for (uint32_t k = 0; k < 6; k++)
        cr_assert_eq(memcmp(g_cmds2[k].game, cmds[k].game, NET_GAME_COMMAND_BYTES), 0, "command %u", k);

    net_full_part p;
    memset(&p, 0, sizeof p);
    p.game = g;
    p.tick = 50;
    p.last_applied_tick = NET_TICK_NONE;
    p.part_count = 40; // more than a full state without a game may have
    p.part = 39;
    p.total_characters = 1;
    p.count = 1;
    p.states[0] = sim_char_spawn(7, sim_v3(0, 0, 0), 0);
    p.last_commands[0].tick = 49;
    p.last_game[0][0] = 1; // fire
    p.save_size = 40u * NET_FULL_CHUNK_BYTES;
    p.chunk_offset = 39u * NET_FULL_CHUNK_BYTES;
    p.chunk_size = NET_FULL_CHUNK_BYTES;
    for (uint32_t i = 0; i < NET_FULL_CHUNK_BYTES; i++)
        p.chunk[i] = (uint8_t)(i * 7u);
    n = net_full_part_encode(&p, g_buf, sizeof g_buf);
    cr_assert_gt(n, 0u);
    cr_assert_leq(n, NET_MTU);
    net_full_part q;
    cr_assert(net_full_part_decode_game(g_buf, n, g, &q));
    cr_assert_eq(q.part, 39);
    cr_assert_eq(q.chunk_offset, p.chunk_offset);
    cr_assert_eq(memcmp(q.chunk, p.chunk, NET_FULL_CHUNK_BYTES), 0);
    cr_assert_eq(q.last_game[0][0], 1);
    cr_assert_not(net_full_part_decode(g_buf, n, &q), "decoded without the game");
    p.chunk_offset = p.save_size - 1u; // a chunk past the end
    cr_assert_eq(net_full_part_encode(&p, g_buf, sizeof g_buf), 0u);
    sim_game_destroy(g);
}

// ---- the handshake ----------------------------------------------------------------------

Test(game_net, hello_carries_the_game_and_a_refusal_names_it)
{
    sim_game *g1 = make_tag(1), *g2 = make_tag(2);
    sim_move_settings st = sim_move_default_settings();
    sim_level lv;
    cr_assert_eq(sim_level_builtin(&lv), 0);
    net_sim_identity none = net_identity_make(&st, &lv, NULL), a = none, b = none;
    cr_assert(net_identity_set_game(&a, g1));
    cr_assert(net_identity_set_game(&b, g2));
    cr_assert_str_eq(a.game_name, "tag");
    // No game: the hello is the one without games (no trailer).
    net_hello h;
    memset(&h, 0, sizeof h);
    h.protocol_version = NET_PROTOCOL_VERSION;
    h.identity = none;
    h.client_time_ms = 1234;
    size_t plain = net_hello_encode(&h, g_buf, sizeof g_buf);
    cr_assert_eq(plain, 36u);
    h.identity = a;
    size_t with = net_hello_encode(&h, g_buf, sizeof g_buf);
    cr_assert_gt(with, plain);
    net_hello d;
    cr_assert(net_hello_decode(g_buf, with, &d));
    cr_assert_str_eq(d.identity.game_name, "tag");
    cr_assert_eq(d.identity.game_version, 1u);
    cr_assert_eq(d.identity.game_digest, sim_game_digest(g1));
    char why[NET_REASON_MAX + 1];
    cr_assert(net_identity_check(&a, &a, why, sizeof why));
    cr_assert_not(net_identity_check(&b, &a, why, sizeof why));
    cr_assert_str_eq(why, "game tag 2 differs from the server's tag 1");
    cr_assert_not(net_identity_check(&none, &a, why, sizeof why));
    cr_assert_str_eq(why, "game none differs from the server's tag");
    cr_assert(net_identity_check(&none, &none, why, sizeof why));
    sim_level_free(&lv);
    sim_game_destroy(g1);
    sim_game_destroy(g2);
}

// ---- a session (tests/support/play.h) -----------------------------------------------------

#define CLIENTS 3u
#ifdef KEEL_SANITIZED_BUILD
#define SESSION_MS 2500u
#else
#define SESSION_MS 4000u
#endif

// A bot walks about, looks at the next bot's character and fires in bursts
// that change every 20 ticks (so remote fire commands change and their
// shots are mispredicted until confirmed); its other game fields are drawn
// in range (cl_bot_game_command), without the dash (it would carry the bots
// out of sight).
static void tag_command_of(play *p, uint32_t i, uint32_t tick, sim_input *in, void *command)
{
    tag_command *tc = command;
    cr_assert(cl_bot_game_command(&p->bots[i], p->game, tick, tc, sizeof *tc));
    tc->dash = 0;
    tc->aim = 0;
    tc->fire = (uint8_t)(((tick / 20u) + i) % 2u);
    const sim_scene *pred = cl_client_predicted(p->cls[i]);
    const sim_char_state *me = sim_scene_find(pred, cl_client_character(p->cls[i]));
    const sim_char_state *them = sim_scene_find(pred, cl_client_character(p->cls[(i + 1) % p->nbots]));
    if (me && them) {
        in->yaw = sim_spawn_yaw_toward(them->position.x - me->position.x, them->position.z - me->position.z);
        in->pitch = 0;
    }
}

static void start(play *p, sim_game *server_game, sim_game *client_game)
{
    const net_memory_link link = {30, 10, 20, 0};
    play_init_game(p, CLIENTS, CL_BOT_RANDOM, &link, 35, server_game, client_game);
    p->game_command = tag_command_of;
    for (uint32_t i = 0; i < CLIENTS; i++)
        p->bots[i].leash = SIM_FX_INT(3);
}

Test(game_net, a_session_predicts_the_game_and_names_its_mispredictions, .timeout = 300)
{
    sim_game *game = make_tag(1);
    static play p;
    start(&p, game, game);
    for (uint32_t ms = 0; ms < SESSION_MS; ms++)
        play_ms(&p, true);
    const tag_state *st = sim_scene_game_state(sv_server_scene(p.sv));
    cr_assert_not_null(st);
    sv_stats ss;
    sv_server_stats(p.sv, &ss);
    cr_log_info(
        "server: tick %u, clock %u, %u hits; %llu full states in %llu parts, %llu malformed, %llu substituted\n",
        sv_server_scene_tick(p.sv), st->clock, st->hits, (unsigned long long)ss.full_states,
        (unsigned long long)ss.snapshots_full_parts, (unsigned long long)ss.messages_malformed,
        (unsigned long long)ss.commands_substituted);
    cr_expect_gt(st->hits, 0u, "nobody was hit");
    cr_expect_eq(ss.messages_malformed, 0u);
    uint64_t game_rule = 0, game_fields = 0, named = 0;
    for (uint32_t i = 0; i < CLIENTS; i++) {
        cl_stats s;
        cl_client_stats(p.cls[i], &s);
        cr_expect_eq(cl_client_status(p.cls[i]), CL_STATUS_PLAYING, "client %u not playing", i);
        cr_log_info("client %u: %llu rollbacks (%llu fallbacks), own %llu/%llu/%llu/%llu/%llu (substituted/remote/"
                    "interaction/unexplained/game rule), last own field %s, game-wide %llu (%s)\n",
                    i, (unsigned long long)s.rollbacks, (unsigned long long)s.island_fallbacks,
                    (unsigned long long)s.own_mispredictions[0], (unsigned long long)s.own_mispredictions[1],
                    (unsigned long long)s.own_mispredictions[2], (unsigned long long)s.own_mispredictions[3],
                    (unsigned long long)s.own_mispredictions[4], s.last_own_field ? s.last_own_field : "-",
                    (unsigned long long)s.game_state_mispredictions, s.last_game_field ? s.last_game_field : "-");
        game_rule += s.own_mispredictions[CL_CAUSE_GAME_RULE] + s.remote_mispredictions[CL_CAUSE_GAME_RULE];
        game_fields += s.game_state_mispredictions;
        named += (s.last_own_field && strncmp(s.last_own_field, "game.", 5) == 0) +
                 (s.last_game_field && strncmp(s.last_game_field, "game.", 5) == 0);
        cr_expect_eq(s.island_rollbacks, 0u, "an island rollback with a game");
    }
    cl_stats t;
    play_totals(&p, &t);
    cr_expect_eq(t.hash_mismatches, 0u, "hash mismatches");
    cr_expect_eq(t.own_mispredictions[CL_CAUSE_UNEXPLAINED] + t.remote_mispredictions[CL_CAUSE_UNEXPLAINED], 0u,
                 "unexplained mispredictions");
    // Every confirmed state the harness saw equals the server's (its hash
    // covers the game's state).
    cr_expect_gt(p.confirmed_checked, 100u);
    cr_expect_eq(p.confirmed_differ, 0u);
    cr_expect_gt(game_rule, 0u, "no misprediction put down to a game rule");
    cr_expect_gt(game_fields, 0u, "no game-wide field mispredicted");
    cr_expect_gt(named, 0u, "no game field named (\"game.health\")");
    play_free(&p);
    sim_game_destroy(game);
}

Test(game_net, a_client_with_another_version_of_the_game_is_refused_naming_it, .timeout = 60)
{
    sim_game *game = make_tag(1), *other = make_tag(2);
    static play p;
    start(&p, game, other);
    for (uint32_t ms = 0; ms < 500; ms++)
        play_ms(&p, true);
    for (uint32_t i = 0; i < CLIENTS; i++) {
        cr_expect_eq(cl_client_status(p.cls[i]), CL_STATUS_REFUSED);
        cr_expect_eq(cl_client_refusal_code(p.cls[i]), NET_REFUSE_IDENTITY);
        cr_expect_str_eq(cl_client_refusal(p.cls[i]), "game tag 2 differs from the server's tag 1");
    }
    play_free(&p);
    sim_game_destroy(game);
    sim_game_destroy(other);
}

// ---- fuzzing the decoders with a game ----------------------------------------------------

#ifdef KEEL_SANITIZED_BUILD
#define FUZZ_ROUNDS 3000u
#else
#define FUZZ_ROUNDS 30000u
#endif

static void rnd_payload(keel_rng *r, const sim_game *g, uint8_t out[NET_GAME_COMMAND_BYTES])
{
    tag_command c = {(uint8_t)keel_rng_range(r, 0, 1), (uint8_t)keel_rng_range(r, 0, 1),
                     (uint8_t)keel_rng_range(r, 0, 2), (sim_angle)(keel_rng_range(r, 0, 4095) << 4),
                     keel_rng_fx(r, 0, SIM_FX_INT(20))};
    memset(out, 0, NET_GAME_COMMAND_BYTES);
    cr_assert_eq(sim_game_pack_command(g, &c, out, NET_GAME_COMMAND_BYTES, NULL), 5u);
}

static sim_input rnd_cmd(keel_rng *r, uint32_t tick)
{
    sim_input c;
    memset(&c, 0, sizeof c);
    c.tick = tick;
    if (keel_rng_range(r, 0, 1)) {
        c.forward = (int8_t)keel_rng_range(r, -127, 127);
        c.yaw = (sim_angle)keel_rng_range(r, 0, 65535);
    }
    return c;
}

// A valid message of a game (kind 0 input, 1 snapshot, 2 full part, 3 hello).
static size_t rnd_game_message(keel_rng *r, const sim_game *g, int kind, uint8_t *out, size_t cap)
{
    if (kind == 0) {
        net_input m;
        memset(&m, 0, sizeof m);
        m.game = g;
        m.ack_tick = NET_TICK_NONE;
        m.count = (uint8_t)keel_rng_range(r, 0, 8);
        m.newest_tick = (uint32_t)keel_rng_range(r, 8, 100000);
        for (uint32_t i = 0; i < m.count; i++) {
            m.commands[i] = rnd_cmd(r, m.newest_tick - m.count + 1u + i);
            if (i > 0 && keel_rng_range(r, 0, 1))
                memcpy(m.game_commands[i], m.game_commands[i - 1], NET_GAME_COMMAND_BYTES);
            else
                rnd_payload(r, g, m.game_commands[i]);
        }
        return net_input_encode(&m, out, cap);
    }
    if (kind == 1) {
        net_snapshot s;
        memset(&s, 0, sizeof s);
        s.game = g;
        uint32_t span = (uint32_t)keel_rng_range(r, 1, 4), chars = (uint32_t)keel_rng_range(r, 1, 4);
        s.tick = (uint32_t)keel_rng_range(r, 10, 100000);
        s.baseline_tick = s.tick - span;
        s.last_applied_tick = NET_TICK_NONE;
        s.commands = g_cmds;
        s.command_capacity = 64;
        for (uint32_t t = 0; t < span; t++)
            for (uint32_t c = 0; c < chars; c++) {
                net_tick_command *tc = &g_cmds[s.command_count++];
                tc->id = 1 + c * 3;
                tc->command = rnd_cmd(r, s.baseline_tick + t);
                if (t > 0 && keel_rng_range(r, 0, 1))
                    memcpy(tc->game, g_cmds[s.command_count - 1 - chars].game, NET_GAME_COMMAND_BYTES);
                else
                    rnd_payload(r, g, tc->game);
            }
        return net_snapshot_encode(&s, out, cap);
    }
    if (kind == 2) {
        net_full_part p;
        memset(&p, 0, sizeof p);
        p.game = g;
        p.tick = (uint32_t)keel_rng_range(r, 1, 100000);
        p.last_applied_tick = NET_TICK_NONE;
        p.part_count = (uint16_t)keel_rng_range(r, 1, NET_MAX_GAME_FULL_PARTS);
        p.part = (uint16_t)keel_rng_range(r, 0, p.part_count - 1);
        p.total_characters = 2;
        p.count = (uint8_t)keel_rng_range(r, 0, 2);
        for (uint32_t i = 0; i < p.count; i++) {
            p.states[i] = sim_char_spawn(1 + i, sim_v3(0, 0, 0), 0);
            p.last_commands[i] = rnd_cmd(r, p.tick - 1u);
            rnd_payload(r, g, p.last_game[i]);
        }
        p.save_size = (uint32_t)keel_rng_range(r, 0, 3000);
        p.chunk_offset = (uint32_t)keel_rng_range(r, 0, p.save_size);
        uint32_t left = p.save_size - p.chunk_offset;
        p.chunk_size = (uint16_t)keel_rng_range(r, 0, left < 64 ? left : 64);
        for (uint32_t i = 0; i < p.chunk_size; i++)
            p.chunk[i] = (uint8_t)keel_rng_next(r);
        return net_full_part_encode(&p, out, cap);
    }
    net_hello h;
    memset(&h, 0, sizeof h);
    h.protocol_version = NET_PROTOCOL_VERSION;
    h.identity.tick_rate = 64;
    h.identity.settings_digest = keel_rng_next(r);
    cr_assert(net_identity_set_game(&h.identity, g));
    h.identity.game_version = (uint32_t)keel_rng_next(r);
    return net_hello_encode(&h, out, cap);
}

// Decodes as `kind` with the game; a message that decodes encodes again to
// exactly the same bytes (every encoding is canonical).
static void check_game_decoder(const sim_game *g, int kind, const uint8_t *data, size_t n)
{
    static uint8_t again[4096];
    size_t len = 0;
    if (kind == 0) {
        net_input m;
        if (!net_input_decode_game(data, n, g, &m))
            return;
        for (uint32_t i = 0; i < m.count; i++)
            cr_assert(net_game_payload_valid(g, m.game_commands[i]), "a payload out of range decoded");
        len = net_input_encode(&m, again, sizeof again);
    } else if (kind == 1) {
        net_snapshot s;
        snapshot_for_decoding(&s, g);
        if (!net_snapshot_decode(data, n, &s))
            return;
        len = net_snapshot_encode(&s, again, sizeof again);
    } else if (kind == 2) {
        net_full_part p;
        if (!net_full_part_decode_game(data, n, g, &p))
            return;
        len = net_full_part_encode(&p, again, sizeof again);
    } else {
        net_hello h;
        if (!net_hello_decode(data, n, &h))
            return;
        len = net_hello_encode(&h, again, sizeof again);
    }
    cr_assert_eq(len, n, "kind %d: decoded %zu bytes, encoded %zu", kind, n, len);
    cr_assert_eq(memcmp(again, data, n), 0, "kind %d: not canonical", kind);
}

Test(game_net, fuzz_the_decoders_with_a_game)
{
    sim_game *g = make_tag(1);
    keel_rng r = {35};
    static uint8_t buf[4096];
    uint64_t decoded = 0;
    for (uint32_t round = 0; round < FUZZ_ROUNDS; round++) {
        int kind = (int)(round % 4u);
        size_t n = rnd_game_message(&r, g, kind, buf, sizeof buf);
        cr_assert_gt(n, 0u, "kind %d: a valid message did not encode", kind);
        check_game_decoder(g, kind, buf, n);
        decoded++;
        // Mutations: bit flips, a cut, a byte more, random bytes.
        int op = (int)keel_rng_range(&r, 0, 3);
        if (op == 0) {
            for (int k = (int)keel_rng_range(&r, 1, 3); k > 0; k--)
                buf[keel_rng_range(&r, 0, (int64_t)n - 1)] ^= (uint8_t)(1u << keel_rng_range(&r, 0, 7));
        } else if (op == 1) {
            n = (size_t)keel_rng_range(&r, 0, (int64_t)n - 1);
        } else if (op == 2) {
            buf[n++] = (uint8_t)keel_rng_next(&r);
        } else {
            for (size_t i = 1; i < n; i++)
                buf[i] = (uint8_t)keel_rng_next(&r);
        }
        for (int k = 0; k < 4; k++)
            check_game_decoder(g, k, buf, n);
    }
    cr_log_info("%llu game messages fuzzed\n", (unsigned long long)decoded);
    sim_game_destroy(g);
}
