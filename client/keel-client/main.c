// keel-client: headless bots that connect to a keel-server, predict their
// characters and print a JSON summary at exit. MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <inttypes.h>

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/cl_record.h>
#include <keel/sim_hash.h>

#include "keel_addr.h"
#include "keel_app.h"
#include "keel_game.h"
#include "keel_opt.h"
#include "light.h"
#include "stall.h"
#include "tokens.h"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

typedef struct options {
    const char *server, *level, *scale;
    char up;
    uint32_t port, bots, light, ticks, seed, rate, connect_timeout_ms, leash_mm, ticks_per_packet, stagger;
    int mode;
    bool trace, platforms;
    const char *record;
    const char *token_file, *token_key_file; ///< secure mode (tokens.h)
    const char *token_server;                ///< --token-server: the address tokens list
    uint64_t protocol_id;
    uint32_t respawn_depth_m; ///< --respawn-depth M (the server's)
    uint32_t timeout_ms;      ///< --timeout S: net_host_config's timeout_ms
    const char *game_spec;    ///< --game NAME|PATH (app/keel_game.h; NULL: no game)
} options;

static void usage(FILE *f)
{
    fputs("usage: keel-client [options]\n"
          "Connects headless bots to a keel-server; each predicts its character and rolls back\n"
          "when a snapshot disagrees. Prints a JSON summary on stdout at exit.\n" KEEL_OPT_SYNTAX "\n"
          "  --server HOST         the server's host name or IPv4 address (default 127.0.0.1)\n"
          "  --port N              server UDP port (default 27900)\n"
          "  --bots N              bots in this process, each its own connection (default 1, max 64;\n"
          "                        0 with --light)\n"
          "  --light N             also N light clients, 0..256 (default 0): each its own connection,\n"
          "                        sending inputs and acknowledging snapshots like a bot but\n"
          "                        predicting nothing (load for a server; they walk polygons)\n"
          "  --bot MODE            random | circuit | pusher | idle | platforms | arena (default random);\n"
          "                        arena fights (with --game arena; docs/arena.md, \"Bots\"): it hunts the\n"
          "                        nearest living enemy, turns toward the nearest visible one at 360\n"
          "                        degrees a second at most, fires the rail when its aim is on it and\n"
          "                        rockets at its feet from 4.5 to 22 m, and strafes\n"
          "  --ticks N             ticks each bot plays before leaving (default 640; 0: until interrupted)\n"
          "  --stagger-ticks N     bot i plays N x i ticks more than --ticks, so that the bots leave one\n"
          "                        after another (default 0); a bot that is done leaves at once\n"
          "  --seed S              bot seed (default 1; bot i uses S + i)\n"
          "  --rate N              tick rate the server uses (default 64)\n"
          "  --respawn-depth M     the server's --respawn-depth (default 16)\n"
          "  --level builtin|PATH  the server's level (default builtin; an OBJ file or a .map)\n"
          "  --scale S             OBJ metres per unit (default 0.12)\n"
          "  --up y|z              OBJ up axis (default y)\n"
          "  --connect-timeout S   give up when not playing after S seconds (default 10); a join that\n"
          "                        ends unanswered or silent before play starts again meanwhile\n"
          "  --timeout S           a connection ends after S seconds in which nothing arrived from the\n"
          "                        server, 0.001..60 (default 10; a token's shorter timeout wins)\n"
          "  --ticks-per-packet N  an input packet every N ticks, 1..8 (default 2: 32 packets/s at 64 Hz)\n"
          "  --leash-mm N          random bots: how far from their spawn they wander (default 1000;\n"
          "                        the server spawns characters 4 m apart)\n"
          "  --trace               every 100 ms a JSON line per bot on stderr: time, input margin,\n"
          "                        round trip, confirmed and predicted ticks\n"
          "  --game NAME|PATH      play the server's game (docs/game.md): NAME linked into\n"
          "                        keel-client (tag, arena) or a PATH to a game library exporting\n"
          "                        keel_game_v1; the bots draw its commands (cl_bot_game_command)\n"
          "                        and predict them; --record records them too. Not with --light\n"
          "                        (light clients send no game commands)\n"
          "  --platforms           the built-in level's elevator and shuttle (as keel-server\n"
          "                        --platforms: a server set up otherwise refuses the client)\n"
          "  --record FILE         record the first bot's client: every call into the client\n"
          "                        library and its confirmed hashes (cl_replay_verify replays it\n"
          "                        offline; client/README.md)\n"
          "  --token FILE          secure mode: join with this connect token (keel-token issue; one\n"
          "                        token joins from one address, so --bots 1)\n"
          "  --token-key FILE      secure mode: each bot issues its own token with this backend key\n"
          "                        (client id = bot number, then the light clients'; valid 300 s;\n"
          "                        for test rigs)\n"
          "  --protocol-id N       with --token-key: the tokens' protocol id (default 0)\n"
          "  --token-server HOST:PORT\n"
          "                        with --token-key: the server's own address, as its --public says,\n"
          "                        for the tokens to list (default: --server and --port); needed\n"
          "                        through a relay, NAT or port forward (docs/relay.md)\n"
          "  --help                this help\n"
          "When the process itself stops (SIGSTOP, a starved CPU) for more than 0.2 s, each playing bot\n"
          "reports its recovery 2 s after waking as a JSON line on stderr: {\"stall\":1, \"bot\", \"stopped_s\",\n"
          "\"confirmed_after_s\", \"predicting_after_s\", \"full_states\", \"recovery_payload_bytes\",\n"
          "\"hash_mismatches\"} (times as this process measured them).\n"
          "A server that shuts down (keel-server on SIGTERM) tells its clients why: each bot prints\n"
          "\"the server shut down: REASON\", its summary's \"end\" is \"server_shutdown\", and that is no\n"
          "failure.\n"
          "Exit status: 0 played (or the server shut down); 1 refused by the server (the reason is\n"
          "printed), could not connect, lost the connection, or the recording failed; 2 bad usage;\n"
          "6 --game cannot be loaded (one line says why); 7 refused because the server runs another\n"
          "game (or none, or this client none): the refusal names both.\n",
          f);
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.server = "127.0.0.1",
                   .level = "builtin",
                   .scale = "0.12",
                   .up = 'y',
                   .port = 27900,
                   .bots = 1,
                   .ticks = 640,
                   .seed = 1,
                   .rate = 64,
                   .connect_timeout_ms = 10000,
                   .leash_mm = 1000,
                   .ticks_per_packet = 2,
                   .mode = CL_BOT_RANDOM,
                   .respawn_depth_m = KEEL_APP_RESPAWN_DEPTH_M,
                   .timeout_ms = NET_HOST_DEFAULT_TIMEOUT_MS};
    keel_opt p;
    keel_opt_init(&p, "keel-client", argc, argv, 1);
    const char *a;
    while ((a = keel_opt_next(&p))) {
        const char *v = NULL;
        bool ok = true;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--trace") == 0) {
            o->trace = true;
        } else if (strcmp(a, "--platforms") == 0) {
            o->platforms = true;
        } else if (strcmp(a, "--server") == 0 || strcmp(a, "--record") == 0 || strcmp(a, "--token") == 0 ||
                   strcmp(a, "--token-key") == 0 || strcmp(a, "--token-server") == 0 || strcmp(a, "--level") == 0 ||
                   strcmp(a, "--scale") == 0 || strcmp(a, "--game") == 0) {
            if (!(v = keel_opt_value(&p)))
                return 2;
            if (!v[0])
                return keel_opt_fail(&p, "is empty");
            *(strcmp(a, "--server") == 0      ? &o->server
              : strcmp(a, "--record") == 0    ? &o->record
              : strcmp(a, "--token") == 0     ? &o->token_file
              : strcmp(a, "--token-key") == 0 ? &o->token_key_file
              : strcmp(a, "--level") == 0     ? &o->level
              : strcmp(a, "--scale") == 0     ? &o->scale
              : strcmp(a, "--game") == 0      ? &o->game_spec
                                              : &o->token_server) = v;
        } else if (strcmp(a, "--protocol-id") == 0)
            ok = keel_opt_u64(&p, 0, UINT64_MAX, &o->protocol_id);
        else if (strcmp(a, "--up") == 0) {
            static const char *const axes[] = {"y", "z", NULL};
            int axis = keel_opt_choice(&p, axes);
            ok = axis >= 0;
            if (ok)
                o->up = axes[axis][0];
        } else if (strcmp(a, "--bot") == 0) {
            if (!(v = keel_opt_value(&p)))
                return 2;
            o->mode = cl_bot_mode_parse(v);
            if (o->mode < 0)
                return keel_opt_fail(&p, "'%s' is not random, circuit, pusher, idle, platforms or arena", v);
        } else if (strcmp(a, "--port") == 0)
            ok = keel_opt_u32(&p, 1, 65535, &o->port);
        else if (strcmp(a, "--bots") == 0)
            ok = keel_opt_u32(&p, 0, 64, &o->bots);
        else if (strcmp(a, "--light") == 0)
            ok = keel_opt_u32(&p, 0, NET_MAX_CHARACTERS, &o->light);
        else if (strcmp(a, "--ticks") == 0)
            ok = keel_opt_u32(&p, 0, 0xFFFFFFFFu, &o->ticks);
        else if (strcmp(a, "--seed") == 0)
            ok = keel_opt_u32(&p, 0, 0xFFFFFFFFu, &o->seed);
        else if (strcmp(a, "--rate") == 0)
            ok = keel_opt_u32(&p, SIM_MOVE_MIN_TICK_RATE, SIM_MOVE_MAX_TICK_RATE, &o->rate);
        else if (strcmp(a, "--respawn-depth") == 0)
            ok = keel_opt_u32(&p, 0, KEEL_APP_RESPAWN_DEPTH_MAX_M, &o->respawn_depth_m);
        else if (strcmp(a, "--connect-timeout") == 0) {
            uint64_t ms;
            ok = keel_opt_ms(&p, 1, 3600000u, &ms);
            o->connect_timeout_ms = (uint32_t)ms;
        } else if (strcmp(a, "--timeout") == 0) {
            uint64_t ms;
            ok = keel_opt_ms(&p, 1, NET_HOST_MAX_TIMEOUT_MS, &ms);
            o->timeout_ms = (uint32_t)ms;
        } else if (strcmp(a, "--leash-mm") == 0)
            ok = keel_opt_u32(&p, 100, 100000, &o->leash_mm);
        else if (strcmp(a, "--ticks-per-packet") == 0)
            ok = keel_opt_u32(&p, 1, 8, &o->ticks_per_packet);
        else if (strcmp(a, "--stagger-ticks") == 0)
            ok = keel_opt_u32(&p, 0, 1u << 20, &o->stagger);
        else
            return keel_opt_unknown(&p);
        if (!ok)
            return 2;
    }
    if (p.failed)
        return 2;
    if (o->bots == 0 && o->light == 0)
        return keel_opt_bad(&p, "--bots 0 needs --light");
    if (o->bots == 0 && o->record)
        return keel_opt_bad(&p, "--record needs a bot (--bots 0)");
    if (o->game_spec && o->light)
        return keel_opt_bad(&p, "--game does not go with --light (light clients send no game commands)");
    if (o->token_file && o->token_key_file)
        return keel_opt_bad(&p, "--token and --token-key do not go together");
    if (o->token_file && (o->bots != 1 || o->light))
        return keel_opt_bad(&p, "--token: one token joins from one address: --bots 1, no --light");
    if (o->protocol_id && !o->token_key_file)
        return keel_opt_bad(&p, "--protocol-id needs --token-key");
    if (o->token_server && !o->token_key_file)
        return keel_opt_bad(&p, "--token-server needs --token-key");
    // host names (keel_addr.h: IPv4, ENet's only family)
    static char server_ip[16];
    char err[300];
    if (!keel_addr_ipv4(o->server, server_ip, sizeof server_ip, err, sizeof err)) {
        return keel_opt_bad(&p, "--server: %s", err);
    }
    o->server = server_ip;
    if (o->token_server && o->token_server[0] != '[') { // [IPv6]:PORT as it is
        static char listed[32];
        char ip[16];
        uint32_t port;
        if (!keel_addr_resolve(o->token_server, 1, ip, sizeof ip, &port, err, sizeof err)) {
            return keel_opt_bad(&p, "--token-server: %s", err);
        }
        snprintf(listed, sizeof listed, "%s:%u", ip, (unsigned)port);
        o->token_server = listed;
    }
    return 0;
}

typedef struct bot_run {
    net_host *host;
    cl_client *cl;
    cl_bot bot;
    uint32_t played;
    uint64_t next_us;
    bool done, clock_started;
    // How the connection went: up at connected_us (0: never), ended at
    // ended_us; a bot that is done leaves (net_host_leave) while the others
    // play on, and is finished once the leave is.
    uint64_t connected_us, ended_us;
    uint8_t end_reason; ///< the net_disconnect_reason the host reported, if any
    bool leaving, finished;
    net_leave_state leave;
    stall_watch stall; ///< the process stopped and woke: this bot's recovery
    uint32_t rejoins;  ///< joins started again (rejoin)
} bot_run;

// One step of a done bot's leave, without waiting: true once it is over.
static bool leave_step(bot_run *b, uint64_t now)
{
    if (b->finished)
        return true;
    b->leaving = true;
    b->leave = net_host_leave(b->host, 0);
    if (b->leave == NET_LEAVE_PENDING)
        return false;
    b->finished = true;
    if (b->connected_us && !b->ended_us)
        b->ended_us = now;
    return true;
}

// What ended a bot's connection, for the summary's "end".
static const char *end_name(const bot_run *b)
{
    switch (b->end_reason) {
    case NET_DISCONNECT_REFUSED_FULL: return "refused_full";
    case NET_DISCONNECT_REFUSED_ADDRESS: return "refused_address";
    case NET_DISCONNECT_UNANSWERED: return "unanswered";
    case NET_DISCONNECT_REFUSED_TOKEN: return "refused_token";
    case NET_DISCONNECT_TIMEOUT: return "timed_out";
    default: break;
    }
    if (cl_client_status(b->cl) == CL_STATUS_REFUSED)
        return cl_client_refusal_code(b->cl) == NET_REFUSE_SHUTDOWN ? "server_shutdown" : "refused";
    if (b->end_reason == NET_DISCONNECT_CLOSED)
        return "closed_by_server";
    if (b->leave == NET_LEAVE_DONE)
        return "left";
    if (b->leave == NET_LEAVE_GAVE_UP)
        return "left_unacknowledged";
    return b->connected_us ? "left" : "never_connected";
}

// Why a bot's connection is gone, in a sentence for stderr.
static void report_lost(const bot_run *b, uint32_t bot, const options *o, double timeout_s)
{
    switch (b->end_reason) {
    case NET_DISCONNECT_REFUSED_ADDRESS:
        fprintf(stderr,
                "keel-client: bot %u refused by the server: it already has as many connections from this "
                "address as it allows (keel-server --max-per-address)\n",
                bot);
        break;
    case NET_DISCONNECT_REFUSED_FULL:
        fprintf(stderr, "keel-client: bot %u refused by the server: every connection slot is taken\n", bot);
        break;
    case NET_DISCONNECT_UNANSWERED:
        fprintf(stderr,
                "keel-client: bot %u: no answer from %s:%u within %g s (no server there, or every packet "
                "lost)\n",
                bot, o->server, o->port, timeout_s);
        break;
    case NET_DISCONNECT_REFUSED_TOKEN:
        fprintf(stderr, "keel-client: bot %u refused by the server's handshake: %s\n", bot,
                net_hs_refusal_name(net_host_handshake_refusal(b->host)));
        break;
    case NET_DISCONNECT_CLOSED: fprintf(stderr, "keel-client: bot %u: the server closed the connection\n", bot); break;
    default:
        fprintf(stderr, "keel-client: bot %u lost the connection: nothing heard from the server for %g s\n", bot,
                timeout_s);
        break;
    }
}

// A join that ended before the bot played (unanswered, silent, or closed
// by the server before its welcome) starts again from scratch, with a new
// connection, while --connect-timeout allows; refusals are final, and the
// recorded bot is not tried again (its recording began with the first).
static bool rejoin(bot_run *b, uint32_t bot, const options *o, net_host_config hc, token_source *tokens,
                   const sim_world *world, const sim_level *level, const sim_move_settings *settings,
                   const cl_config *cc)
{
    if (b->clock_started || (bot == 1 && o->record) ||
        (b->end_reason != NET_DISCONNECT_UNANSWERED && b->end_reason != NET_DISCONNECT_TIMEOUT &&
         b->end_reason != NET_DISCONNECT_CLOSED) ||
        cl_client_status(b->cl) == CL_STATUS_REFUSED)
        return false;
    char err[256];
    const char *why = NULL;
    hc.connect_token = tokens_for(tokens, bot, o->server, o->port, err, sizeof err);
    net_host *host = net_host_connect(o->server, (uint16_t)o->port, &hc, &why);
    cl_client *cl = host ? cl_client_create(world, level, settings, cc, host) : NULL;
    if (!cl) {
        net_host_destroy(host);
        return false;
    }
    fprintf(stderr, "keel-client: bot %u: the join ended (%s) before play; joining again\n", bot,
            net_disconnect_reason_name((net_disconnect_reason)b->end_reason));
    cl_client_destroy(b->cl);
    net_host_destroy(b->host);
    b->cl = cl;
    b->host = host;
    b->connected_us = b->ended_us = 0;
    b->end_reason = 0;
    b->rejoins++;
    return true;
}

// A start that failed: free what was made (the first `made` bots) and exit 1,
// so the sanitizer build reports no leak for it either.
// A .map level's entities (its movers and water); empty for other levels.
static sim_map level_map;

static int give_up(bot_run *bots, uint32_t made, cl_record *rec, sim_world *world, sim_level *level, light_set *lights)
{
    light_destroy(lights);
    if (rec)
        cl_record_close(rec, NULL);
    for (uint32_t i = 0; i < made; i++) {
        cl_client_destroy(bots[i].cl);
        net_host_destroy(bots[i].host);
    }
    free(bots);
    sim_world_destroy(world);
    sim_level_free(level);
    sim_map_free(&level_map);
    return 1;
}

// --game: loaded before the level (a missing library is quicker to find),
// unloaded at exit, after every client's scenes.
static keel_game the_game;
static void unload_game(void) { keel_game_unload(&the_game); }

// A refusal because the server runs another game (net's reason: "game A
// differs from the server's B").
static bool game_refused(const char *reason)
{
    return strncmp(reason, "game ", 5) == 0 || strstr(reason, ": game ") != NULL;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (o.game_spec) {
        if ((rc = keel_game_load_or_report("keel-client", o.game_spec, &the_game)) != 0)
            return rc;
        atexit(unload_game);
        keel_game_describe("keel-client", &the_game);
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    sim_level level;
    sim_world *world = keel_app_load_world("keel-client", o.level, o.scale, o.up, &level, &level_map);
    if (!world)
        return 1;
    sim_move_settings settings = sim_move_default_settings();
    settings.tick_rate = (int32_t)o.rate;
    settings.respawn_depth = SIM_FX_INT((int32_t)o.respawn_depth_m);
    bot_run *bots = calloc(o.bots, sizeof *bots);
    net_host_config hc = net_host_default_config();
    hc.timeout_ms = o.timeout_ms;
    cl_config cc = cl_default_config();
    cc.ticks_per_packet = o.ticks_per_packet;
    cc.platforms = o.platforms;
    cc.map = level_map.entity_count ? &level_map : NULL;
    cc.game = the_game.game;
    cl_record *rec = NULL;
    bool rec_failed_reported = false;
    token_source tokens;
    char token_err[256];
    if (!tokens_load(&tokens, o.token_file, o.token_key_file, o.protocol_id, token_err, sizeof token_err) ||
        !tokens_list_server(&tokens, o.token_server, token_err, sizeof token_err)) {
        fprintf(stderr, "keel-client: %s\n", token_err);
        return give_up(bots, 0, rec, world, &level, NULL);
    }
    for (uint32_t i = 0; i < o.bots; i++) {
        const char *why = NULL;
        hc.connect_token = tokens_for(&tokens, i + 1, o.server, o.port, token_err, sizeof token_err);
        if (!hc.connect_token && (o.token_file || o.token_key_file)) {
            fprintf(stderr, "keel-client: %s\n", token_err);
            tokens_wipe(&tokens);
            return give_up(bots, i, rec, world, &level, NULL);
        }
        bots[i].host = net_host_connect(o.server, (uint16_t)o.port, &hc, &why);
        if (!bots[i].host) {
            fprintf(stderr, "keel-client: cannot connect to %s:%u: %s\n", o.server, o.port, why ? why : "?");
            tokens_wipe(&tokens);
            return give_up(bots, i, rec, world, &level, NULL);
        }
        bots[i].cl = cl_client_create(world, &level, &settings, &cc, bots[i].host);
        if (!bots[i].cl) {
            fputs("keel-client: cannot create the client\n", stderr);
            return give_up(bots, i + 1, rec, world, &level, NULL);
        }
        cl_bot_init(&bots[i].bot, (cl_bot_mode)o.mode, (uint64_t)o.seed + i);
        bots[i].bot.leash = SIM_FX_MM((int64_t)o.leash_mm);
        if (i == 0 && o.record) {
            rec_header h = cl_record_default_header(bots[0].cl);
            if (strcmp(o.level, "builtin") != 0) {
                h.level.kind = REC_LEVEL_OBJ;
                snprintf(h.level.path, sizeof h.level.path, "%s", o.level);
                snprintf(h.level.scale, sizeof h.level.scale, "%s", keel_app_level_scale(o.level, o.scale));
                h.level.up_axis = keel_app_level_up(o.level, o.up);
            }
            rec_writer_config wc = rec_default_writer_config();
            wc.threaded = true;
            rec_error err;
            rec = cl_record_open(o.record, &h, &wc, &err);
            if (!rec) {
                fprintf(stderr, "keel-client: cannot record to %s: %s\n", o.record, err.message);
                return give_up(bots, i + 1, rec, world, &level, NULL);
            }
        }
    }
    light_set *lights = NULL;
    if (o.light) { // light client i has client id bots + i + 1
        net_sim_identity id = cl_client_identity_for(world, &level, &settings, &cc);
        lights = light_create(o.light, o.server, (uint16_t)o.port, &id, cc.ticks_per_packet, cc.redundancy_packets,
                              o.ticks, o.seed + o.bots, o.connect_timeout_ms, &tokens, o.bots + 1);
        if (lights)
            light_set_timeout(lights, o.timeout_ms);
    }
    if (o.light) {
        if (!lights) {
            fputs("keel-client: out of memory for the light clients\n", stderr);
            tokens_wipe(&tokens);
            return give_up(bots, o.bots, rec, world, &level, NULL);
        }
    }
    const uint64_t start = keel_app_now_us();
    uint64_t next_trace = start;
    int status = 0;
    stall_clock stall_clk = {0, 0};
    for (;;) {
        uint64_t now = keel_app_now_us();
        uint32_t now_ms = (uint32_t)(now / 1000u);
        bool all_done = true;
        bool woke = stall_clock_round(&stall_clk, now);
        for (uint32_t i = 0; i < o.bots; i++) {
            bot_run *b = &bots[i];
            if (b->done) {
                // Done before the others: it keeps servicing its connection
                // until its leave is acknowledged (or gives up).
                if (!leave_step(b, now))
                    all_done = false;
                continue;
            }
            cl_record *r = i == 0 ? rec : NULL; // the first bot is the recorded one
            if (woke)
                stall_watch_wake(&b->stall, &stall_clk, now, b->cl, b->host);
            net_event ev;
            while (net_host_service(b->host, &ev, 0) != NET_EVENT_NONE) {
                if (ev.type == NET_EVENT_CONNECT) {
                    b->connected_us = now;
                    cl_record_hello(r, b->cl, now_ms);
                } else if (ev.type == NET_EVENT_DISCONNECT) {
                    b->end_reason = ev.reason;
                    b->ended_us = now;
                }
                cl_record_handle(r, b->cl, &ev, now_ms);
            }
            if (r && !rec_failed_reported && !cl_record_ok(r)) {
                rec_failed_reported = true;
                fprintf(stderr, "keel-client: the recording to %s failed; playing on without it\n", o.record);
            }
            cl_status st = cl_client_status(b->cl);
            if (st == CL_STATUS_REFUSED && cl_client_refusal_code(b->cl) == NET_REFUSE_SHUTDOWN) {
                // The session is over: not a failure of the bot's.
                fprintf(stderr, "keel-client: bot %u: the server shut down: %s\n", i + 1, cl_client_refusal(b->cl));
                b->done = true;
                continue;
            }
            if (st == CL_STATUS_REFUSED) {
                // A level that differs: say which file this client loaded.
                bool other_level = strstr(cl_client_refusal(b->cl), "level differs") != NULL;
                fprintf(stderr, "keel-client: refused by the server: %s%s%s%s\n", cl_client_refusal(b->cl),
                        other_level ? " (this client's level: " : "", other_level ? o.level : "",
                        other_level ? ")" : "");
                status |= game_refused(cl_client_refusal(b->cl)) ? KEEL_EXIT_GAME_MISMATCH : 1;
                b->done = true;
                continue;
            }
            if (st == CL_STATUS_DISCONNECTED && now - start < (uint64_t)o.connect_timeout_ms * 1000u &&
                rejoin(b, i + 1, &o, hc, &tokens, world, &level, &settings, &cc)) {
                all_done = false;
                continue;
            }
            if (st == CL_STATUS_DISCONNECTED) {
                report_lost(b, i + 1, &o, hc.timeout_ms / 1000.0);
                status = 1;
                b->done = true;
                continue;
            }
            if (st != CL_STATUS_PLAYING) {
                if (now - start > (uint64_t)o.connect_timeout_ms * 1000u) {
                    cl_stats cs;
                    cl_client_stats(b->cl, &cs);
                    fprintf(stderr,
                            "keel-client: bot %u not playing after %.3f s (%s; full states %llu, messages "
                            "malformed %llu)\n",
                            i + 1, (double)o.connect_timeout_ms / 1000.0,
                            st == CL_STATUS_CONNECTING ? "no welcome yet" : "welcomed, no full state yet",
                            (unsigned long long)cs.full_states, (unsigned long long)cs.messages_malformed);
                    status = 1;
                    b->done = true;
                } else {
                    all_done = false;
                }
                continue;
            }
            if (!b->clock_started) {
                b->clock_started = true;
                b->next_us = now;
            }
            uint32_t due = cl_record_take_catch_up(r, b->cl);
            while (now >= b->next_us) {
                due++;
                b->next_us += cl_client_tick_us(b->cl);
            }
            for (uint32_t k = 0; k < due && !b->done; k++) {
                uint32_t tick = cl_client_predicted_tick(b->cl);
                sim_input cmd =
                    cl_bot_command(&b->bot, cl_client_predicted(b->cl), cl_client_character(b->cl), &level, tick);
                bool predicted;
                if (cc.game) { // the game's command too
                    uint8_t game_command[SIM_GAME_COMMAND_MAX_BYTES];
                    bool drawn = cl_bot_game_command(&b->bot, cc.game, tick, game_command, sizeof game_command);
                    predicted = cl_record_predict_game(r, b->cl, &cmd, drawn ? game_command : NULL, now_ms);
                } else {
                    predicted = cl_record_predict(r, b->cl, &cmd, now_ms);
                }
                if (predicted && o.ticks && ++b->played >= (uint64_t)o.ticks + (uint64_t)o.stagger * i)
                    b->done = true;
            }
            net_host_flush(b->host);
            stall_watch_after(&b->stall, i + 1, now, b->cl, b->host);
            all_done = false; // a bot done now leaves in the next rounds
        }
        if (o.trace && now >= next_trace) {
            next_trace = now + 100000u; // after a stop: once, not once per period missed
            for (uint32_t i = 0; i < o.bots; i++) {
                if (cl_client_status(bots[i].cl) != CL_STATUS_PLAYING)
                    continue;
                cl_stats s;
                cl_client_stats(bots[i].cl, &s);
                fprintf(stderr,
                        "{\"trace\":1,\"t\":%.2f,\"bot\":%u,\"margin_ticks\":%.2f,\"rtt_ms\":%.1f,\"confirmed\":%u,"
                        "\"predicted\":%u,\"own_mispredictions\":%llu}\n",
                        (double)(now - start) / 1e6, i + 1, s.input_margin_q8 / 256.0, s.rtt_ms,
                        cl_client_confirmed_tick(bots[i].cl), cl_client_predicted_tick(bots[i].cl),
                        (unsigned long long)(s.own_mispredictions[0] + s.own_mispredictions[1] +
                                             s.own_mispredictions[2] + s.own_mispredictions[3]));
            }
        }
        if (lights && light_step(lights, now))
            all_done = false;
        if (all_done || stop_requested)
            break;
        keel_app_sleep_until_us(keel_app_now_us() + 1000u);
    }
    // Interrupted, or done: every bot still connected leaves, all at once
    // (each leave ends within NET_LEAVE_MAX_MS).
    for (bool pending = true; pending;) {
        pending = false;
        uint64_t now = keel_app_now_us();
        for (uint32_t i = 0; i < o.bots; i++)
            pending |= !leave_step(&bots[i], now);
        if (pending)
            keel_app_sleep_until_us(keel_app_now_us() + 1000u);
    }
    if (rec) {
        uint64_t calls = cl_record_count(rec);
        uint32_t ct = cl_client_confirmed_tick(bots[0].cl);
        uint64_t hash = sim_scene_hash(cl_client_confirmed(bots[0].cl));
        rec_error err;
        if (cl_record_close(rec, &err)) {
            fprintf(stderr,
                    "keel-client: recorded bot 1 to %s: %" PRIu64 " records, confirmed tick %u, hash %016" PRIx64 "\n",
                    o.record, calls, ct, hash);
        } else {
            fprintf(stderr, "keel-client: the recording to %s failed: %s\n", o.record, err.message);
            status = 1;
        }
    }
    double secs = (double)(keel_app_now_us() - start) / 1e6;
    // The summary: per bot, then totals.
    printf("{\"bots\":[");
    cl_stats total;
    memset(&total, 0, sizeof total);
    double rtt_sum = 0, margin_sum = 0, up_wire = 0, down_wire = 0, down_payload = 0;
    uint64_t rollbacks = 0, resim = 0, sealed_forged = 0, sealed_replayed = 0, frames_forged = 0, frames_replayed = 0;
    for (uint32_t i = 0; i < o.bots; i++) {
        cl_stats s;
        cl_client_stats(bots[i].cl, &s);
        net_host_stats ns;
        net_host_stats_get(bots[i].host, &ns);
        // Rates are over the time the bot was connected, and 0 for a
        // connection shorter than 1 s (a refusal's handshake over 2 ms is no
        // rate); the byte totals are there for those.
        double conn = bots[i].connected_us ? (double)(bots[i].ended_us - bots[i].connected_us) / 1e6 : 0;
        double per = conn >= 1.0 ? 1.0 / conn : 0;
        printf("%s{\"character\":%u,\"mode\":\"%s\",\"ticks\":%u,\"end\":\"%s\",\"connected_seconds\":%.2f,"
               "\"rejoins\":%u,\"rtt_ms\":%.1f,\"input_margin_ticks\":%.2f,\"own_mispredictions\":{",
               i ? "," : "", cl_client_character(bots[i].cl), cl_bot_mode_name((cl_bot_mode)o.mode), bots[i].played,
               end_name(&bots[i]), conn, bots[i].rejoins, s.rtt_ms, s.input_margin_q8 / 256.0);
        for (int c = 0; c < CL_CAUSE_COUNT; c++)
            printf("%s\"%s\":%llu", c ? "," : "", cl_cause_name((cl_cause)c),
                   (unsigned long long)s.own_mispredictions[c]);
        printf("},\"remote_mispredictions\":{");
        for (int c = 0; c < CL_CAUSE_COUNT; c++)
            printf("%s\"%s\":%llu", c ? "," : "", cl_cause_name((cl_cause)c),
                   (unsigned long long)s.remote_mispredictions[c]);
        printf("},\"rollbacks\":%llu,\"resimulated_ticks\":%llu,\"snapshots\":%llu,\"full_states\":%llu,"
               "\"hash_mismatches\":%llu,\"snapshot_packets_lost\":%llu,\"snapshots_kept\":%llu,"
               "\"snapshots_dropped\":%llu,\"held_ticks\":%llu,\"capped_ticks\":%llu,\"rollbacks_deferred\":%llu,"
               "\"confirms_coalesced\":%llu,\"up_wire_bytes\":%llu,"
               "\"down_wire_bytes\":%llu,\"up_payload_Bps\":%.0f,\"up_wire_Bps\":%.0f,"
               "\"down_payload_Bps\":%.0f,\"down_wire_Bps\":%.0f,\"sealed_forged\":%llu,\"sealed_replayed\":%llu,"
               "\"frames_forged\":%llu,\"frames_replayed\":%llu}",
               (unsigned long long)s.rollbacks, (unsigned long long)s.resimulated_ticks,
               (unsigned long long)s.snapshots, (unsigned long long)s.full_states,
               (unsigned long long)s.hash_mismatches, (unsigned long long)s.snapshot_packets_lost,
               (unsigned long long)s.snapshots_kept, (unsigned long long)s.snapshots_dropped,
               (unsigned long long)s.held_ticks, (unsigned long long)s.capped_ticks,
               (unsigned long long)s.rollbacks_deferred, (unsigned long long)s.confirms_coalesced,
               (unsigned long long)ns.wire_sent, (unsigned long long)ns.wire_received, ns.payload_sent * per,
               ns.wire_sent * per, ns.payload_received * per, ns.wire_received * per,
               (unsigned long long)ns.sealed_forged, (unsigned long long)ns.sealed_replayed,
               (unsigned long long)ns.frames_forged, (unsigned long long)ns.frames_replayed);
        sealed_forged += ns.sealed_forged;
        sealed_replayed += ns.sealed_replayed;
        frames_forged += ns.frames_forged;
        frames_replayed += ns.frames_replayed;
        for (int c = 0; c < CL_CAUSE_COUNT; c++) {
            total.own_mispredictions[c] += s.own_mispredictions[c];
            total.remote_mispredictions[c] += s.remote_mispredictions[c];
        }
        total.hash_mismatches += s.hash_mismatches;
        rtt_sum += s.rtt_ms;
        margin_sum += s.input_margin_q8 / 256.0;
        up_wire += ns.wire_sent * per;
        down_wire += ns.wire_received * per;
        down_payload += ns.payload_received * per;
        rollbacks += s.rollbacks;
        resim += s.resimulated_ticks;
    }
    printf("],");
    if (lights) {
        light_summary(lights, secs, stdout);
        status |= light_status(lights);
    }
    printf("\"seconds\":%.2f,\"own_mispredictions\":{", secs);
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        printf("%s\"%s\":%llu", c ? "," : "", cl_cause_name((cl_cause)c),
               (unsigned long long)total.own_mispredictions[c]);
    printf("},\"hash_mismatches\":%llu,\"sealed_forged\":%llu,\"sealed_replayed\":%llu,\"frames_forged\":%llu,"
           "\"frames_replayed\":%llu,\"status\":%d}\n",
           (unsigned long long)total.hash_mismatches, (unsigned long long)sealed_forged,
           (unsigned long long)sealed_replayed, (unsigned long long)frames_forged, (unsigned long long)frames_replayed,
           status);
    uint64_t own = 0, remote = 0;
    for (int c = 0; c < CL_CAUSE_COUNT; c++) {
        own += total.own_mispredictions[c];
        remote += total.remote_mispredictions[c];
    }
    double nb = o.bots ? o.bots : 1;
    fprintf(stderr,
            "keel-client: %u bots, %.1f s: own-character mispredictions %llu (substituted %llu, remote command %llu, "
            "interaction %llu, unexplained %llu), remote ones %llu; %llu rollbacks re-simulated %llu ticks; hash "
            "mismatches %llu; per bot: round trip %.1f ms, input margin %.2f ticks, up %.0f B/s on the wire, down "
            "%.0f B/s payload (%.0f wire)\n",
            o.bots, secs, (unsigned long long)own, (unsigned long long)total.own_mispredictions[0],
            (unsigned long long)total.own_mispredictions[1], (unsigned long long)total.own_mispredictions[2],
            (unsigned long long)total.own_mispredictions[3], (unsigned long long)remote, (unsigned long long)rollbacks,
            (unsigned long long)resim, (unsigned long long)total.hash_mismatches, rtt_sum / nb, margin_sum / nb,
            up_wire / nb, down_payload / nb, down_wire / nb);
    tokens_wipe(&tokens); // kept for the joins started again
    for (uint32_t i = 0; i < o.bots; i++) {
        cl_client_destroy(bots[i].cl);
        net_host_destroy(bots[i].host);
    }
    light_destroy(lights);
    free(bots);
    sim_world_destroy(world);
    sim_level_free(&level);
    sim_map_free(&level_map);
    return status;
}
