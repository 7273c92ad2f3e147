// keel-server: the dedicated server. MIT licence, see LICENSE.
//
// A fixed tick loop against absolute deadlines (tick k runs at start + k / rate
// seconds, computed from k, so the clock never drifts), the network serviced
// in between, a stats line every few seconds; a recording of every tick with
// --record (record.c). With --virtual-bots, no sockets: a session with bots on
// a virtual clock (virtual.c). A server with sockets starts only in a mode
// chosen on its command line: secure (--key: connect tokens and the
// handshake) or --insecure; its first line, its stats lines and its closing
// line say which.
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sv_server.h>

#include "keel_addr.h"
#include "keel_app.h"
#include "keel_game.h"
#include "keel_opt.h"
#include "keel_server.h"

static volatile sig_atomic_t stop_requested; // the signal that asked, or 0
static void on_signal(int sig) { stop_requested = sig; }

// The longest a drain waits for the clients to acknowledge the close after
// being told (docs/operations.md): well inside Kubernetes' 30 s grace period.
#define DRAIN_MAX_MS 2000u

// With --metrics: the counters for the HTTP thread (metrics.c), after each
// tick and while draining. Never waits.
static void publish(metrics *m, metrics_snapshot *s, const sv_server *sv, const net_host *host, const recorder *rec)
{
    if (!m)
        return;
    s->alive_us = keel_app_now_us();
    s->draining = sv_server_draining(sv);
    sv_server_stats(sv, &s->sv);
    net_host_stats_get(host, &s->net);
    s->recording_ticks = rec->ticks;
    s->recording_failed = rec->failed;
    s->crowded = report_crowded(sv);
    size_t queued;
    if (rec->w && rec_writer_pending(rec->w, &queued)) // else the last look stands
        s->recording_queue_bytes = queued;
    metrics_publish(m, s);
}

// Shut down with a word to every client (sv_server_drain), then keep
// servicing the host, without ticking, until each connection's close is
// acknowledged or DRAIN_MAX_MS passed.
static void drain(sv_server *sv, net_host *host, FILE *text, metrics *m, metrics_snapshot *ms, const recorder *rec,
                  const char *over)
{
    char over_why[80];
    snprintf(over_why, sizeof over_why, "server shutting down (%s)", over ? over : "its run is over");
    const char *why = stop_requested == SIGTERM  ? "server shutting down (SIGTERM)"
                      : stop_requested == SIGINT ? "server shutting down (SIGINT)"
                                                 : over_why;
    uint32_t open = net_host_open_connections(host);
    sv_server_drain(sv, why);
    publish(m, ms, sv, host, rec); // /readyz: 503 from now on
    const uint64_t t0 = keel_app_now_us();
    uint64_t now = t0;
    while (net_host_open_connections(host) && now - t0 < DRAIN_MAX_MS * 1000u) {
        net_event ev;
        if (net_host_service(host, &ev, 10) != NET_EVENT_NONE)
            sv_server_handle(sv, &ev, keel_app_now_us(), keel_app_now_us());
        now = keel_app_now_us();
        publish(m, ms, sv, host, rec);
    }
    uint32_t left = net_host_open_connections(host);
    fprintf(text, "keel-server: drained: told %u connections \"%s\"; %s after %.0f ms (bound %u ms)\n", open, why,
            left ? "some not closed" : "all closed", (double)(now - t0) / 1000.0, DRAIN_MAX_MS);
}

static void usage(FILE *f)
{
    fputs("usage: keel-server [options]\n"
          "Runs the authoritative simulation and serves it to keel clients over ENet (UDP).\n"
          "It needs --key FILE (secure: connect tokens required) or --insecure (any client).\n" KEEL_OPT_SYNTAX "\n"
          "  --port N              UDP port (default 27900; 0 picks a free one and prints it)\n"
          "  --bind HOST           address or host name to listen on, IPv4 (default 0.0.0.0: every\n"
          "                        interface)\n"
          "  --rate N              ticks per second, 2..1000 (default 64)\n"
          "  --snapshot-ticks N    a snapshot every N ticks, 1..16 (default 2)\n"
          "  --respawn-depth M     a character whose feet fall M metres below the level's lowest\n"
          "                        point is respawned on a spawn spot, 0..1024 (default 16; 0: off;\n"
          "                        clients must use the same)\n"
          "  --max-clients N       1..256 (default 64)\n"
          "  --max-per-address N   connections from one IP address, 1..256 (default 4; bots on\n"
          "                        one machine need more)\n"
          "  --timeout S           end a connection after S seconds in which nothing arrived from\n"
          "                        it, 0.001..60 (default 10; with --key a token's shorter timeout\n"
          "                        wins)\n"
          "  --level builtin|PATH  level (default builtin; PATH is an OBJ file or a Quake .map:\n"
          "                        its movers, water and spawn points are used)\n"
          "  --scale S             OBJ metres per unit (default 0.12; OBJ only)\n"
          "  --up y|z              OBJ up axis (default y; OBJ only)\n"
          "  --platforms           the built-in level's elevator and shuttle\n"
          "  --game NAME|PATH      run a game (docs/game.md): NAME linked into keel-server (tag, arena) or\n"
          "                        a PATH to a game library exporting keel_game_v1; clients must\n"
          "                        run the same game (name, version, digest) or are refused naming\n"
          "                        it; recordings hold the game's commands. A game that cannot be\n"
          "                        loaded: one line and exit 6\n"
          "  --lag-compensation MS a game that judges shots (arena) judges each against the view\n"
          "                        its shooter's client had, rebuilt at most MS ms back, 0..1000\n"
          "                        (default 400; 0: against the present; docs/arena.md)\n"
          "  --duration S          stop after S seconds (default 0: until interrupted)\n"
          "  --ticks N             stop after N ticks (default 0: no limit)\n"
          "  --stats-interval S    seconds between stats lines, e.g. 0.1 (default 5; 0: none)\n"
          "  --stats-json          stats as JSON lines on stdout (text goes to stderr), and at exit\n"
          "                        a summary line {\"summary\":1,...}: the whole run's tick times\n"
          "                        (median, p99, max) and counts\n"
          "  --quiet               no stats lines, only the summary\n"
          "  --help                this help\n"
          "  --metrics HOST:PORT   serve Prometheus metrics (GET /metrics), /healthz (200 while the\n"
          "                        tick loop runs) and /readyz (200 while accepting players, 503\n"
          "                        while draining) over HTTP on this IPv4 address (PORT 0: a free\n"
          "                        one, printed); docs/operations.md lists the metrics\n"
          "Fleets (docs/operations.md, \"Agones\"):\n"
          "  --agones              run under Agones: POST /ready to the SDK sidecar (REST, port\n"
          "                        $AGONES_SDK_HTTP_PORT, default 9358) before serving, health pings\n"
          "                        every 2 s while the tick loop runs, labels keel-players and\n"
          "                        keel-sim, and POST /shutdown when the match ends\n"
          "  --match-seconds S     end the match S seconds after it started: with --agones when the\n"
          "                        GameServer is Allocated, else at the first tick (default 0: never)\n"
          "  --empty-seconds S     end S seconds after the last player left (once there were players)\n"
          "  --join-seconds S      end the match when no player joined within S seconds of its\n"
          "                        start (Allocated with --agones, else the first tick; default 0:\n"
          "                        never; the image sets 60)\n"
          "  --test-stall-after-ticks N, --test-stall-seconds S\n"
          "                        (tests) stop the tick loop once, after tick N, for S seconds\n"
          "Stopping (docs/operations.md): on SIGTERM or SIGINT, and at the end of --duration or\n"
          "--ticks, it drains: the ticks stop, every client is told \"server shutting down\" (a\n"
          "refuse with code 5) and its connection closed, hellos meanwhile are refused the same\n"
          "way; it waits at most 2 s for the closes to be acknowledged, finishes the recording\n"
          "and exits 0.\n"
          "Security (docs/security.md, \"Modes\"; one of --key and --insecure is required):\n"
          "  --key FILE            secure mode: only clients with a connect token sealed with this\n"
          "                        backend key (keel-token keygen) and a challenge get a connection\n"
          "  --public HOST:PORT    this server's own address as tokens list it (default: --bind and\n"
          "                        --port; needed with --key when binding 0.0.0.0); 'agones': the\n"
          "                        GameServer's address and first port, asked of the SDK sidecar\n"
          "  --protocol-id N       the protocol id tokens must carry, 0..2^64-1 (default 0)\n"
          "  --insecure            no handshake: any client may connect (a LAN, development)\n"
          "Recording (docs/replay.md; check one with keel-replay verify FILE):\n"
          "  --record FILE         record every tick (what it applied and the hashes it reached);\n"
          "                        an existing FILE is kept: then STEM-1.EXT, STEM-2.EXT, ...\n"
          "  --keyframe-interval N a full-state keyframe every N ticks (default 64; 0: none)\n"
          "  --record-full         debug mode: a keyframe every tick\n"
          "  --no-compress         no zstd compression of the tick blocks\n"
          "A session with bots, no sockets (for tests and the cross-build matrix):\n"
          "  --virtual-bots N      N bots (1..64) on the in-memory network and a virtual clock, as\n"
          "                        fast as the CPU allows; prints the final hash (--ticks: default\n"
          "                        11520, 3 minutes at 64 Hz; platforms are on)\n"
          "  --full-clients K      how many of them run the client library, predicting and checking\n"
          "                        their confirmed states (default 1); the others are light bots\n"
          "                        that steer by the server's scene (much cheaper; with --game\n"
          "                        all are full clients: light bots send no game commands); no\n"
          "                        sockets, so neither --key nor --insecure is needed\n"
          "  --seed S              the session's seed (default 1)\n"
          "  --churn               bots leave and rejoin (one in four without a word)\n"
          "With a game whose command has fire buttons (--game arena) the virtual bots fight\n"
          "(keel-client --bot arena) and the game's score table is printed at the end.\n",
          f);
    if (!metrics_available())
        fputs("This keel-server was built without libmicrohttpd: --metrics is not available.\n", f);
    if (!agones_available())
        fputs("This keel-server was built without libcurl: --agones is not available.\n", f);
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.bind = "0.0.0.0",
                   .level = "builtin",
                   .scale = "0.12",
                   .up = 'y',
                   .port = 27900,
                   .rate = 64,
                   .snapshot_ticks = 2,
                   .max_clients = 64,
                   .stats_ms = 5000,
                   .per_address = 4,
                   .keyframe_interval = REC_DEFAULT_KEYFRAME_INTERVAL,
                   .full_clients = 1,
                   .seed = 1,
                   .respawn_depth_m = KEEL_APP_RESPAWN_DEPTH_M,
                   .timeout_ms = NET_HOST_DEFAULT_TIMEOUT_MS,
                   .lag_ms = 400};
    keel_opt p;
    keel_opt_init(&p, "keel-server", argc, argv, 1);
    const char *a;
    while ((a = keel_opt_next(&p))) {
        const char *v;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--stats-json") == 0) {
            o->stats_json = true;
        } else if (strcmp(a, "--platforms") == 0) {
            o->platforms = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--record-full") == 0) {
            o->record_full = true;
        } else if (strcmp(a, "--no-compress") == 0) {
            o->no_compress = true;
        } else if (strcmp(a, "--churn") == 0) {
            o->churn = true;
        } else if (strcmp(a, "--insecure") == 0) {
            o->insecure = true;
        } else if (strcmp(a, "--agones") == 0) {
            o->agones = true;
        } else if (strcmp(a, "--key") == 0 || strcmp(a, "--public") == 0 || strcmp(a, "--record") == 0 ||
                   strcmp(a, "--game") == 0) {
            if (!(v = keel_opt_value(&p)))
                return 2;
            if (!v[0])
                return keel_opt_fail(&p, "is empty");
            *(strcmp(a, "--key") == 0      ? &o->key_file
              : strcmp(a, "--record") == 0 ? &o->record
              : strcmp(a, "--game") == 0   ? &o->game_spec
                                           : &o->public_address) = v;
        } else if (strcmp(a, "--protocol-id") == 0) {
            if (!keel_opt_u64(&p, 0, UINT64_MAX, &o->protocol_id))
                return 2;
        } else if (strcmp(a, "--metrics") == 0) {
            static char host[256];
            if (!(v = keel_opt_value(&p)))
                return 2;
            char err[160];
            if (!keel_addr_split(v, 0, host, sizeof host, &o->metrics_port, err, sizeof err))
                return keel_opt_fail(&p, "%s", err);
            o->metrics_host = host;
        } else if (strcmp(a, "--duration") == 0 || strcmp(a, "--stats-interval") == 0 ||
                   strcmp(a, "--match-seconds") == 0 || strcmp(a, "--empty-seconds") == 0 ||
                   strcmp(a, "--join-seconds") == 0 || strcmp(a, "--test-stall-seconds") == 0 ||
                   strcmp(a, "--timeout") == 0) {
            uint64_t lo = 0, hi = 86400000ull * 365u, *dst = &o->duration_ms, timeout_ms = 0;
            if (strcmp(a, "--stats-interval") == 0) {
                dst = &o->stats_ms;
            } else if (strcmp(a, "--match-seconds") == 0) {
                dst = &o->match_ms;
            } else if (strcmp(a, "--empty-seconds") == 0) {
                dst = &o->empty_ms;
            } else if (strcmp(a, "--join-seconds") == 0) {
                dst = &o->join_ms;
            } else if (strcmp(a, "--test-stall-seconds") == 0) {
                lo = 1;
                hi = 60000;
                dst = &o->stall_ms;
            } else if (strcmp(a, "--timeout") == 0) {
                lo = 1;
                hi = NET_HOST_MAX_TIMEOUT_MS;
                dst = &timeout_ms;
            }
            if (!keel_opt_ms(&p, lo, hi, dst))
                return 2;
            if (dst == &timeout_ms)
                o->timeout_ms = (uint32_t)timeout_ms;
        } else if (strcmp(a, "--port") == 0 || strcmp(a, "--rate") == 0 || strcmp(a, "--snapshot-ticks") == 0 ||
                   strcmp(a, "--respawn-depth") == 0 || strcmp(a, "--max-clients") == 0 ||
                   strcmp(a, "--max-per-address") == 0 || strcmp(a, "--ticks") == 0 ||
                   strcmp(a, "--keyframe-interval") == 0 || strcmp(a, "--virtual-bots") == 0 ||
                   strcmp(a, "--seed") == 0 || strcmp(a, "--full-clients") == 0 ||
                   strcmp(a, "--test-stall-after-ticks") == 0 || strcmp(a, "--lag-compensation") == 0) {
            uint32_t lo = 0, hi = 65535, *dst = &o->port;
            if (strcmp(a, "--rate") == 0) {
                lo = SIM_MOVE_MIN_TICK_RATE;
                hi = SIM_MOVE_MAX_TICK_RATE;
                dst = &o->rate;
            } else if (strcmp(a, "--lag-compensation") == 0) {
                hi = 1000;
                dst = &o->lag_ms;
            } else if (strcmp(a, "--respawn-depth") == 0) {
                hi = KEEL_APP_RESPAWN_DEPTH_MAX_M;
                dst = &o->respawn_depth_m;
            } else if (strcmp(a, "--snapshot-ticks") == 0) {
                lo = 1;
                hi = 16;
                dst = &o->snapshot_ticks;
            } else if (strcmp(a, "--max-clients") == 0) {
                lo = 1;
                hi = NET_MAX_CHARACTERS;
                dst = &o->max_clients;
            } else if (strcmp(a, "--max-per-address") == 0) {
                lo = 1;
                hi = NET_MAX_CHARACTERS;
                dst = &o->per_address;
            } else if (strcmp(a, "--ticks") == 0) {
                hi = 0xFFFFFFFFu;
                dst = &o->ticks;
            } else if (strcmp(a, "--keyframe-interval") == 0) {
                hi = 1u << 24;
                dst = &o->keyframe_interval;
            } else if (strcmp(a, "--virtual-bots") == 0) {
                lo = 1;
                hi = 64;
                dst = &o->virtual_bots;
            } else if (strcmp(a, "--seed") == 0) {
                hi = 0xFFFFFFFFu;
                dst = &o->seed;
            } else if (strcmp(a, "--full-clients") == 0) {
                hi = 64;
                dst = &o->full_clients;
            } else if (strcmp(a, "--test-stall-after-ticks") == 0) {
                lo = 1;
                hi = 0xFFFFFFFFu;
                dst = &o->stall_after;
            }
            if (!keel_opt_u32(&p, lo, hi, dst))
                return 2;
        } else if (strcmp(a, "--bind") == 0 || strcmp(a, "--level") == 0 || strcmp(a, "--scale") == 0) {
            if (!(v = keel_opt_value(&p)))
                return 2;
            *(strcmp(a, "--bind") == 0 ? &o->bind : strcmp(a, "--level") == 0 ? &o->level : &o->scale) = v;
        } else if (strcmp(a, "--up") == 0) {
            static const char *const axes[] = {"y", "z", NULL};
            int axis = keel_opt_choice(&p, axes);
            if (axis < 0)
                return 2;
            o->up = axes[axis][0];
        } else {
            return keel_opt_unknown(&p);
        }
    }
    if (p.failed)
        return 2;
    // host names (keel_addr.h: IPv4, ENet's only family)
    static char bind_ip[16], metrics_ip[16], public_text[32];
    char err[300];
    if (!keel_addr_ipv4(o->bind, bind_ip, sizeof bind_ip, err, sizeof err))
        return keel_opt_bad(&p, "--bind: %s", err);
    o->bind = bind_ip;
    if (o->metrics_host) {
        if (!keel_addr_ipv4(o->metrics_host, metrics_ip, sizeof metrics_ip, err, sizeof err))
            return keel_opt_bad(&p, "--metrics: %s", err);
        o->metrics_host = metrics_ip;
    }
    if (o->public_address && strcmp(o->public_address, "agones") != 0 && o->public_address[0] != '[') {
        char ip[16];
        uint32_t port;
        if (!keel_addr_resolve(o->public_address, 1, ip, sizeof ip, &port, err, sizeof err))
            return keel_opt_bad(&p, "--public: %s", err);
        snprintf(public_text, sizeof public_text, "%s:%u", ip, (unsigned)port);
        o->public_address = public_text;
    }
    if (o->key_file && o->insecure)
        return keel_opt_bad(&p, "--key and --insecure do not go together");
    if (!o->key_file && (o->public_address || o->protocol_id))
        return keel_opt_bad(&p, "--public and --protocol-id need --key");
    if (o->key_file && !o->public_address && strcmp(o->bind, "0.0.0.0") == 0)
        return keel_opt_bad(&p, "--key on --bind 0.0.0.0 needs --public ADDR:PORT (the address tokens list)");
    if (o->key_file && o->virtual_bots)
        return keel_opt_bad(&p, "--key does not go with --virtual-bots (no sockets)");
    if (o->virtual_bots && (o->agones || o->match_ms || o->empty_ms || o->join_ms || o->stall_after))
        return keel_opt_bad(
            &p, "--virtual-bots does not go with --agones, --match-seconds, --empty-seconds, --join-seconds or "
                "a test stall");
    if (o->public_address && strcmp(o->public_address, "agones") == 0 && !o->agones)
        return keel_opt_bad(&p, "--public agones needs --agones");
    if (!o->stall_after != !o->stall_ms)
        return keel_opt_bad(&p, "--test-stall-after-ticks needs --test-stall-seconds (and the reverse)");
    if (!o->key_file && !o->insecure && !o->virtual_bots) {
        fputs("keel-server: no mode chosen: pass --key FILE for secure mode (clients need connect tokens; make\n"
              "a key with 'keel-token keygen FILE'), or --insecure to let any client connect (a LAN, development)\n"
              "(keel-server --help lists the options)\n",
              stderr);
        return 2;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#define TICK_SAMPLES 65536u

// A .map level's entities (its movers, water and spawn points); empty for
// other levels.
static sim_map level_map;

// A start that failed once the server was made: everything freed (the
// sanitizer build reports no leak for it either), exit code 1.
static int give_up(metrics *m, recorder *rec, sv_server *sv, net_host *host, sim_world *world, sim_level *level,
                   FILE *text)
{
    metrics_stop(m);
    recorder_finish(rec, sv, text);
    sv_server_destroy(sv);
    net_host_destroy(host);
    sim_world_destroy(world);
    sim_level_free(level);
    sim_map_free(&level_map);
    return 1;
}

// --game: loaded before the level (a missing library is quicker to find),
// unloaded at exit, after every scene.
static keel_game the_game;
static void unload_game(void) { keel_game_unload(&the_game); }

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (o.game_spec) {
        if ((rc = keel_game_load_or_report("keel-server", o.game_spec, &the_game)) != 0)
            return rc;
        atexit(unload_game);
        o.game = the_game.game;
        keel_game_describe("keel-server", &the_game);
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    sim_level level;
    sim_world *world = keel_app_load_world("keel-server", o.level, o.scale, o.up, &level, &level_map);
    if (!world)
        return 1;
    sim_move_settings settings = sim_move_default_settings();
    settings.tick_rate = (int32_t)o.rate;
    settings.respawn_depth = SIM_FX_INT((int32_t)o.respawn_depth_m);
    if (o.virtual_bots) {
        rc = run_virtual(&o, world, &level, level_map.entity_count ? &level_map : NULL, &settings);
        sim_world_destroy(world);
        sim_level_free(&level);
        sim_map_free(&level_map);
        return rc;
    }
    net_host_config hc = net_host_default_config();
    hc.max_peers = o.max_clients + 8; // room to refuse politely
    hc.max_peers_per_address = o.per_address;
    hc.timeout_ms = o.timeout_ms;
    const char *why = NULL;
    net_token_key key;
    if (o.key_file) {
        char err[256];
        if (!net_token_key_read(o.key_file, &key, err, sizeof err)) {
            fprintf(stderr, "keel-server: --key: %s\n", err);
            sim_world_destroy(world);
            sim_level_free(&level);
            sim_map_free(&level_map);
            return 1;
        }
        hc.token_key = &key;
        hc.protocol_id = o.protocol_id;
        hc.public_address = o.public_address;
        static char from_agones[96];
        if (o.public_address && strcmp(o.public_address, "agones") == 0) {
            if (!agones_public_address(from_agones, sizeof from_agones, &stop_requested)) {
                net_token_key_wipe(&key);
                sim_world_destroy(world);
                sim_level_free(&level);
                sim_map_free(&level_map);
                if (!stop_requested)
                    return 1; // the reason printed
                // Stopped before serving anyone: nothing to drain, nothing failed.
                fprintf(stderr,
                        "keel-server: agones: %s while waiting for the GameServer's address: stopped before "
                        "serving\n",
                        stop_requested == SIGINT ? "SIGINT" : "SIGTERM");
                return 0;
            }
            hc.public_address = o.public_address = from_agones;
        }
    }
    net_host *host = net_host_listen(o.bind, (uint16_t)o.port, &hc, &why);
    if (o.key_file)
        net_token_key_wipe(&key); // the host keeps its own copy
    if (!host) {
        fprintf(stderr, "keel-server: cannot listen on %s:%u: %s\n", o.bind, o.port, why ? why : "?");
        sim_world_destroy(world);
        sim_level_free(&level);
        sim_map_free(&level_map);
        return 1;
    }
    sv_config cfg = sv_default_config();
    cfg.max_clients = o.max_clients;
    cfg.ticks_per_snapshot = o.snapshot_ticks;
    cfg.platforms = o.platforms;
    cfg.lag_compensation_ms = o.lag_ms;
    cfg.map = level_map.entity_count ? &level_map : NULL;
    cfg.game = o.game;
    sv_server *sv = sv_server_create(world, &level, &settings, &cfg, host);
    recorder rec;
    if (!sv || !recorder_start(&rec, &o, sv)) {
        // Everything is freed on the way out, so the sanitizer build reports
        // no leak for a refused start either.
        if (!sv)
            fputs("keel-server: cannot create the server\n", stderr);
        sv_server_destroy(sv);
        net_host_destroy(host);
        sim_world_destroy(world);
        sim_level_free(&level);
        sim_map_free(&level_map);
        return 1;
    }
    FILE *text = o.stats_json ? stderr : stdout;
    metrics *m = NULL;
    static metrics_snapshot ms; // the tick thread's copy, published after each tick
    if (o.metrics_host) {
        m = metrics_start(o.metrics_host, &o.metrics_port);
        if (!m)
            return give_up(NULL, &rec, sv, host, world, &level, text);
        ms.tick_rate = o.rate;
        ms.secure = o.key_file != NULL;
        ms.recording = o.record != NULL;
        ms.recording_path = rec.path; // lives until main returns
    }
    // The mode is said first, and again on every stats line and at the end.
    const char *mode = o.key_file ? "secure" : "INSECURE", *mode_json = o.key_file ? "true" : "false";
    if (o.key_file)
        fprintf(text, "keel-server: secure (connect tokens required, key %s%s%s)\n", o.key_file,
                o.public_address ? ", public address " : "", o.public_address ? o.public_address : "");
    else
        fputs("keel-server: INSECURE: any client may connect (--insecure)\n", text);
    fprintf(text, "keel-server: %s, %u triangles, %u Hz, snapshot every %u ticks, listening on %s:%u\n", o.level,
            level.triangle_count, o.rate, o.snapshot_ticks, o.bind, (unsigned)net_host_port(host));
    if (m)
        fprintf(text, "keel-server: metrics on http://%s:%u/metrics (and /healthz, /readyz)\n", o.metrics_host,
                o.metrics_port);
    if (o.stats_json) // the ports, for programs (--port 0 and --metrics HOST:0 pick free ones)
        printf("{\"listening\":\"%s\",\"port\":%u,\"metrics_port\":%u,\"secure\":%s,\"timeout_ms\":%u}\n", o.bind,
               (unsigned)net_host_port(host), m ? o.metrics_port : 0u, mode_json, o.timeout_ms);
    fflush(NULL);
    publish(m, &ms, sv, host, &rec);
    match mt;
    if (!match_begin(&mt, &o, sv, text, &stop_requested, m, &ms))
        return give_up(m, &rec, sv, host, world, &level, text);
    static uint64_t samples[TICK_SAMPLES];
    uint32_t nsamples = 0;
    keel_app_sleep_until_us(0); // the timer's set-up (Windows) before the first deadline
    const uint64_t start = keel_app_now_us();
    uint64_t k = 0, last_stats = start;
    net_host_stats last_net = {0};
    sv_stats last_sv = {0};
    const char *over = NULL; // why the run ended on its own (the match lifecycle)
    for (;;) {
        uint64_t deadline = start + k * 1000000u / o.rate;
        // Service the network until this tick's deadline.
        for (;;) {
            uint64_t now = keel_app_now_us();
            if (now >= deadline)
                break;
            net_event ev;
            uint64_t wait_ms = (deadline - now) / 1000u;
            if (net_host_service(host, &ev, (uint32_t)(wait_ms > 1 ? wait_ms - 1 : 0)) != NET_EVENT_NONE)
                sv_server_handle(sv, &ev, keel_app_now_us(), deadline);
            else if (wait_ms <= 1)
                keel_app_sleep_until_us(deadline);
        }
        if (stop_requested || over || (o.duration_ms && keel_app_now_us() - start >= o.duration_ms * 1000u) ||
            (o.ticks && k >= o.ticks))
            break;
        uint64_t t0 = keel_app_now_us(), c0 = keel_app_thread_cpu_us();
        sv_server_tick(sv, keel_app_now_us());
        uint64_t t1 = keel_app_now_us(), c1 = keel_app_thread_cpu_us();
        if (nsamples < TICK_SAMPLES)
            samples[nsamples++] = t1 - t0;
        report_tick(t1 - t0, c1 - c0);
        k++;
        over = match_after_tick(&mt, k, sv);
        if (m) {
            match_publish(&mt, &ms);
            ms.ticks++;
            ms.tick_us_sum += t1 - t0;
            uint32_t b = metrics_tick_bucket(t1 - t0);
            if (b < METRICS_TICK_BUCKETS)
                ms.tick_buckets[b]++;
            ms.overruns += t1 > start + k * 1000000u / o.rate; // ended after the next tick's deadline
            publish(m, &ms, sv, host, &rec);
        }
        if (o.stats_ms && !o.quiet && t1 - last_stats >= o.stats_ms * 1000u) {
            double secs = (double)(t1 - last_stats) / 1e6;
            qsort(samples, nsamples, sizeof samples[0], cmp_u64);
            double med = nsamples ? (double)samples[nsamples / 2] / 1000.0 : 0;
            double p99 = nsamples ? (double)samples[(nsamples * 99u) / 100u] / 1000.0 : 0;
            net_host_stats ns;
            net_host_stats_get(host, &ns);
            sv_stats ss;
            sv_server_stats(sv, &ss);
            double in_p = (double)(ns.payload_received - last_net.payload_received) / secs;
            double out_p = (double)(ns.payload_sent - last_net.payload_sent) / secs;
            double in_w = (double)(ns.wire_received - last_net.wire_received) / secs;
            double out_w = (double)(ns.wire_sent - last_net.wire_sent) / secs;
            uint64_t subst = ss.commands_substituted - last_sv.commands_substituted;
            uint64_t dropped = (ss.commands_late - last_sv.commands_late) +
                               (ss.commands_out_of_window - last_sv.commands_out_of_window) +
                               (ss.commands_rate_limited - last_sv.commands_rate_limited);
            uint64_t malformed = ss.messages_malformed - last_sv.messages_malformed;
            // JSON: every count is for this interval, like the rates. The
            // fields after "malformed" break "dropped_commands" down and add
            // what the text line leaves out (hostile traffic,
            // docs/hostile.md); "peers_refused" counts connection attempts
            // the transport turned away (no free slot, too many from one
            // address).
#define KEEL_DELTA(field) (unsigned long long)(ss.field - last_sv.field)
            if (o.stats_json)
                printf("{\"t\":%.1f,\"tick\":%u,\"clients\":%u,\"tick_ms_median\":%.3f,\"tick_ms_p99\":%.3f,"
                       "\"in_payload_Bps\":%.0f,\"out_payload_Bps\":%.0f,\"in_wire_Bps\":%.0f,\"out_wire_Bps\":%.0f,"
                       "\"substituted\":%llu,\"dropped_commands\":%llu,\"malformed\":%llu,"
                       "\"commands\":%llu,\"duplicates\":%llu,\"late\":%llu,\"out_of_window\":%llu,"
                       "\"rate_limited\":%llu,\"unexpected\":%llu,\"joined\":%llu,\"left\":%llu,\"timed_out\":%llu,"
                       "\"dropped_clients\":%llu,\"refused\":%llu,\"peers_refused\":%llu,"
                       "\"packets_rate_limited\":%llu,\"hello_timeouts\":%llu,\"input_packets_lost\":%llu,"
                       "\"snapshots\":%llu,\"repairs\":%llu,\"full_states\":%llu,\"crowded\":%u,\"secure\":%s}\n",
                       (double)(t1 - start) / 1e6, sv_server_scene_tick(sv), ss.clients, med, p99, in_p, out_p, in_w,
                       out_w, (unsigned long long)subst, (unsigned long long)dropped, (unsigned long long)malformed,
                       KEEL_DELTA(commands_received), KEEL_DELTA(commands_duplicate), KEEL_DELTA(commands_late),
                       KEEL_DELTA(commands_out_of_window), KEEL_DELTA(commands_rate_limited),
                       KEEL_DELTA(messages_unexpected), KEEL_DELTA(clients_joined), KEEL_DELTA(clients_left),
                       KEEL_DELTA(clients_timed_out), KEEL_DELTA(clients_dropped), KEEL_DELTA(clients_refused),
                       (unsigned long long)(ns.peers_refused - last_net.peers_refused),
                       KEEL_DELTA(packets_rate_limited), KEEL_DELTA(hello_timeouts), KEEL_DELTA(input_packets_lost),
                       KEEL_DELTA(snapshots_delta), KEEL_DELTA(snapshots_repair), KEEL_DELTA(full_states),
                       report_crowded(sv), mode_json);
#undef KEEL_DELTA
            else
                printf(
                    "t %6.1f s  tick %u  clients %u  tick ms median %.3f p99 %.3f  in %.0f B/s (wire %.0f)  out %.0f "
                    "B/s (wire %.0f)  substituted %llu  dropped %llu  malformed %llu  crowded %u  %s\n",
                    (double)(t1 - start) / 1e6, sv_server_scene_tick(sv), ss.clients, med, p99, in_p, in_w, out_p,
                    out_w, (unsigned long long)subst, (unsigned long long)dropped, (unsigned long long)malformed,
                    report_crowded(sv), mode);
            fflush(stdout);
            last_net = ns;
            last_sv = ss;
            last_stats = t1;
            nsamples = 0;
        }
    }
    match_end(&mt, stop_requested != 0);
    drain(sv, host, text, m, &ms, &rec, over);
    match_finish(&mt);
    metrics_stop(m);
    sv_stats ss;
    sv_server_stats(sv, &ss);
    net_host_stats end_net;
    net_host_stats_get(host, &end_net);
    fprintf(text,
            "keel-server: stopped at tick %u: %llu ticks, clients joined %llu, left %llu, dropped %llu, refused %llu; "
            "commands %llu (duplicates %llu, late %llu, out of window %llu, rate limited %llu, substituted %llu); "
            "input packets %llu (lost %llu, reordered %llu); malformed %llu, unexpected %llu; connection attempts "
            "refused by the host %llu; clients timed out %llu, drained by the shutdown %llu; %s\n",
            sv_server_scene_tick(sv), (unsigned long long)ss.ticks, (unsigned long long)ss.clients_joined,
            (unsigned long long)ss.clients_left, (unsigned long long)ss.clients_dropped,
            (unsigned long long)ss.clients_refused, (unsigned long long)ss.commands_received,
            (unsigned long long)ss.commands_duplicate, (unsigned long long)ss.commands_late,
            (unsigned long long)ss.commands_out_of_window, (unsigned long long)ss.commands_rate_limited,
            (unsigned long long)ss.commands_substituted, (unsigned long long)ss.input_packets,
            (unsigned long long)ss.input_packets_lost, (unsigned long long)ss.input_packets_reordered,
            (unsigned long long)ss.messages_malformed, (unsigned long long)ss.messages_unexpected,
            (unsigned long long)end_net.peers_refused, (unsigned long long)ss.clients_timed_out,
            (unsigned long long)ss.clients_drained, mode);
    if (o.key_file)
        report_handshake(text, &end_net);
    if (o.stats_json) // the same totals, for programs, and the tick times
        report_summary_json(sv, &end_net, (double)(keel_app_now_us() - start) / 1e6, o.key_file != NULL);
    rc = recorder_finish(&rec, sv, text) ? 0 : 1;
    sv_server_destroy(sv);
    net_host_destroy(host);
    sim_world_destroy(world);
    sim_level_free(&level);
    sim_map_free(&level_map);
    return rc;
}
