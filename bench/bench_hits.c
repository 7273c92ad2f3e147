// keel benchmark: hit agreement -- the share of the rail shots a shooter's
// client showed as hits that the server confirmed, and of those it showed
// as misses that the server confirmed as misses, with keel-server's lag
// compensation and without it. MIT licence, see LICENSE.
//
// One process runs the server's core (sv_server, keel-arena) and N shooting
// clients (cl_client, as keel-client) on the in-memory network (net_memory:
// a virtual clock, latency each way, 2% of the unreliable messages lost
// each way; the same seeded run every time). Each client walks at random
// (cl_bot, a 4 m leash), aims at the nearest other character of its
// predicted scene give or take up to 16 degrees, and holds the rail's fire
// button (bench/common/bench_hits.c: the rail fires every 24 ticks and
// does 1 point of 200; the deaths are counted, and the default run has none). A shot is compared tick by tick: as
// the client predicted it (its hit marker) and as the server ran it.
//
// For each round trip (0, 100, 200 ms by default) it runs compensation on
// (sv_config.lag_compensation_ms, default 400 ms) and off (0: judged against
// the characters as they are at the server's tick), and prints the shares,
// the view lags the clients sent (T - C), the shots beyond the bound, the
// ticks stepped per rebuilt view and the server's tick time (CPU).
//
//   bench_hits [--seconds S] [--clients N] [--bound MS] [--interval N] [--rtt MS[,MS...]]
//
// S: virtual seconds of play after a 2 s warm-up (default 40); N: 2..32
// (default 8). Target: 100% of both within the bound.
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/cl_bot.h>
#include <keel/cl_client.h>
#include <keel/sim_game.h>
#include <keel/sv_server.h>

#include "common/bench_hits.h"

#define MAX_RTTS 8

typedef struct options {
    double seconds;
    uint32_t clients, bound_ms, interval;
    uint32_t rtt[MAX_RTTS], rtts;
} options;

typedef struct result {
    hits_tally tally;
    sv_stats server;
    double tick_us;  // mean CPU time of a server tick
    uint32_t deaths; // on the server, over the run
} result;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static hits_watch watch;

// One session: the server and the shooters for `seconds` of virtual time
// after the warm-up (the tally counts from then on).
static void run(const options *o, const sim_game *game, const arena_settings *st, uint32_t rtt, uint32_t bound,
                result *r)
{
    sim_level level;
    if (sim_level_builtin(&level) != 0)
        exit(1);
    sim_world *world = sim_world_create(&level, NULL, NULL);
    sim_move_settings settings = sim_move_default_settings();
    net_memory *mem = net_memory_create(7);
    net_host_config hc = net_host_default_config();
    net_host *server_host = net_memory_listen(mem, "server", &hc);
    sv_config sc = sv_default_config();
    sc.game = game;
    sc.lag_compensation_ms = bound;
    sv_server *sv = sv_server_create(world, &level, &settings, &sc, server_host);
    if (!world || !server_host || !sv) {
        fprintf(stderr, "bench_hits: cannot create the server\n");
        exit(1);
    }
    const net_memory_link link = {rtt / 2u, 0, 20, 0};
    cl_config cc = cl_default_config();
    cc.game = game;
    net_host *hosts[HITS_MAX_CLIENTS];
    cl_client *cls[HITS_MAX_CLIENTS];
    cl_bot bots[HITS_MAX_CLIENTS];
    uint64_t next_us[HITS_MAX_CLIENTS] = {0};
    for (uint32_t i = 0; i < o->clients; i++) {
        hosts[i] = net_memory_connect(mem, "server", &link, &link, &hc);
        cls[i] = hosts[i] ? cl_client_create(world, &level, &settings, &cc, hosts[i]) : NULL;
        if (!cls[i]) {
            fprintf(stderr, "bench_hits: cannot create client %u\n", i);
            exit(1);
        }
        cl_bot_init(&bots[i], CL_BOT_RANDOM, 500u + i);
        bots[i].leash = SIM_FX_INT(4);
    }
    hits_watch_init(&watch, o->clients, st->rail_interval, o->bound_ms * (uint32_t)settings.tick_rate / 1000u);
    uint64_t tick_us = 1000000u / (uint64_t)settings.tick_rate, next_server_us = 0, ticks = 0, cpu_ns = 0;
    uint32_t warm_ms = 2000, end_ms = warm_ms + (uint32_t)(o->seconds * 1000.0);
    sv_stats at_warm = {0};
    for (uint32_t ms = 0; ms < end_ms; ms++) {
        if (ms == warm_ms) {
            memset(&watch.tally, 0, sizeof watch.tally);
            sv_server_stats(sv, &at_warm);
            ticks = cpu_ns = 0;
        }
        net_memory_advance(mem, 1);
        uint64_t now_us = net_memory_now(mem) * 1000u;
        uint32_t now_ms = (uint32_t)net_memory_now(mem);
        net_event ev;
        while (net_host_service(server_host, &ev, 0) != NET_EVENT_NONE)
            sv_server_handle(sv, &ev, now_us, next_server_us);
        for (; now_us >= next_server_us; next_server_us += tick_us) {
            uint64_t t0 = thread_cpu_ns();
            sv_server_tick(sv, now_us);
            cpu_ns += thread_cpu_ns() - t0;
            ticks++;
            hits_after_server_tick(&watch, sv, cls);
        }
        for (uint32_t i = 0; i < o->clients; i++) {
            cl_client *cl = cls[i];
            while (net_host_service(hosts[i], &ev, 0) != NET_EVENT_NONE) {
                if (ev.type == NET_EVENT_CONNECT)
                    cl_client_hello(cl, now_ms);
                cl_client_handle(cl, &ev, now_ms);
            }
            if (cl_client_status(cl) != CL_STATUS_PLAYING)
                continue;
            uint32_t due = cl_client_take_catch_up(cl);
            for (next_us[i] = next_us[i] ? next_us[i] : now_us; now_us >= next_us[i];
                 next_us[i] += cl_client_tick_us(cl))
                due++;
            for (uint32_t k = 0; k < due; k++) {
                uint32_t tick = cl_client_predicted_tick(cl);
                sim_input in = cl_bot_command(&bots[i], cl_client_predicted(cl), cl_client_character(cl), &level, tick);
                arena_command fire = {.fire_rail = 1};
                hits_aim(cl, tick * 31u + i, &in);
                hits_before_predict(&watch, i, cl);
                cl_client_predict_game(cl, &in, &fire, now_ms);
                hits_after_predict(&watch, i, cl);
            }
            net_host_flush(hosts[i]);
        }
        net_host_flush(server_host);
    }
    r->tally = watch.tally;
    sv_server_stats(sv, &r->server);
    // the server's lag-compensation counters over the measured window
    r->server.shots_judged -= at_warm.shots_judged;
    r->server.shots_beyond_bound -= at_warm.shots_beyond_bound;
    r->server.shots_inexact -= at_warm.shots_inexact;
    r->server.shots_unrebuilt -= at_warm.shots_unrebuilt;
    r->server.view_ticks -= at_warm.view_ticks;
    r->server.view_lag_sum -= at_warm.view_lag_sum;
    r->tick_us = ticks ? (double)cpu_ns / 1000.0 / (double)ticks : 0.0;
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(sv_server_scene(sv), &n);
    for (uint32_t i = 0; i < n; i++) {
        const arena_player *p = sim_scene_game_char(sv_server_scene(sv), cs[i].id);
        r->deaths += p ? p->deaths : 0u;
    }
    for (uint32_t i = 0; i < o->clients; i++) {
        cl_client_destroy(cls[i]);
        net_host_destroy(hosts[i]);
    }
    sv_server_destroy(sv);
    net_host_destroy(server_host);
    net_memory_destroy(mem);
    sim_world_destroy(world);
    sim_level_free(&level);
}

static double share(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static void print_row(uint32_t rtt, uint32_t bound, const result *r)
{
    const hits_tally *t = &r->tally;
    const sv_stats *s = &r->server;
    char lag[48] = "-";
    if (s->shots_judged)
        snprintf(lag, sizeof lag, "%.1f / %u", (double)s->view_lag_sum / (double)s->shots_judged, s->view_lag_max);
    char comp[16] = "off";
    if (bound)
        snprintf(comp, sizeof comp, "%u ms", bound);
    printf(
        "| %4u ms | %-6s | %5llu | %6.2f%% (%llu/%llu) | %6.2f%% (%llu/%llu) | %llu | %llu (%llu agreed) | %9s | %5.1f "
        "| %6.1f | %u |\n",
        rtt, comp, (unsigned long long)(t->shown_hits + t->shown_misses), share(t->hits_confirmed, t->shown_hits),
        (unsigned long long)t->hits_confirmed, (unsigned long long)t->shown_hits,
        share(t->misses_confirmed, t->shown_misses), (unsigned long long)t->misses_confirmed,
        (unsigned long long)t->shown_misses, (unsigned long long)t->unfired, (unsigned long long)t->beyond,
        (unsigned long long)t->beyond_agreed, lag,
        s->shots_judged ? (double)s->view_ticks / (double)s->shots_judged : 0.0, r->tick_us, r->deaths);
    fflush(stdout);
}

static void usage(FILE *f)
{
    fputs("usage: bench_hits [--seconds S] [--clients N] [--bound MS] [--interval N] [--rtt MS[,MS...]]\n"
          "  --seconds S   virtual seconds measured after a 2 s warm-up (default 40)\n"
          "  --clients N   shooters, 2..32 (default 8)\n"
          "  --bound MS    the server's lag compensation bound, 1..1000 (default 400)\n"
          "  --interval N  ticks between rail shots, 1..65535 (default 24; keel-arena's own is 96)\n"
          "  --rtt LIST    round trips in ms, 0..1000 each (default 0,100,200)\n",
          f);
}

static bool parse(int argc, char **argv, options *o)
{
    *o = (options){.seconds = 40, .clients = 8, .bound_ms = 400, .interval = 24, .rtt = {0, 100, 200}, .rtts = 3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "bench_hits: %s: unknown, or without its value\n", a);
            return false;
        }
        i++;
        if (strcmp(a, "--seconds") == 0) {
            o->seconds = strtod(v, &end);
            if (*end || o->seconds <= 0 || o->seconds > 3600) {
                fprintf(stderr, "bench_hits: --seconds %s: not in 0..3600\n", v);
                return false;
            }
        } else if (strcmp(a, "--clients") == 0 || strcmp(a, "--bound") == 0 || strcmp(a, "--interval") == 0) {
            unsigned long n = strtoul(v, &end, 10);
            bool clients = strcmp(a, "--clients") == 0, interval = strcmp(a, "--interval") == 0;
            unsigned long lo = clients ? 2 : 1, hi = clients ? HITS_MAX_CLIENTS : (interval ? 65535 : 1000);
            if (*end || n < lo || n > hi) {
                fprintf(stderr, "bench_hits: %s %s: not in %lu..%lu\n", a, v, lo, hi);
                return false;
            }
            *(clients ? &o->clients : interval ? &o->interval : &o->bound_ms) = (uint32_t)n;
        } else if (strcmp(a, "--rtt") == 0) {
            o->rtts = 0;
            for (const char *p = v; *p && o->rtts < MAX_RTTS; p = *end ? end + 1 : end) {
                unsigned long n = strtoul(p, &end, 10);
                if (end == p || n > 1000 || (*end && *end != ',')) {
                    fprintf(stderr, "bench_hits: --rtt %s: at offset %ld: not a round trip of 0..1000 ms\n", v,
                            (long)(p - v));
                    return false;
                }
                o->rtt[o->rtts++] = (uint32_t)n;
            }
        } else {
            fprintf(stderr, "bench_hits: %s: unknown option\n", a);
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    options o;
    if (!parse(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    static arena_def def;
    arena_settings st = hits_arena_settings();
    st.rail_interval = (int32_t)o.interval;
    arena_def_init(&def, &st);
    sim_game_error err;
    sim_game *game = sim_game_create(&def.def, &err);
    if (!game) {
        fprintf(stderr, "bench_hits: keel-arena: %s\n", err.reason);
        return 1;
    }
    printf("hit agreement: keel-arena's rail every %u ticks, %u shooters, %.0f s measured per row, 2%% loss each way "
           "(in-memory link)\n\n",
           o.interval, o.clients, o.seconds);
    printf("| round trip | compensation | shots within the bound | hits confirmed | misses confirmed | unfired | shots "
           "beyond the bound | view lag mean / max (ticks) | ticks per view | server tick (us CPU) | deaths |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (uint32_t k = 0; k < o.rtts; k++) {
        for (int on = 1; on >= 0; on--) {
            result r;
            memset(&r, 0, sizeof r);
            run(&o, game, &def.settings, o.rtt[k], on ? o.bound_ms : 0u, &r);
            print_row(o.rtt[k], on ? o.bound_ms : 0u, &r);
        }
    }
    printf("\ntarget: 100%% of hits and of misses confirmed within the bound\n");
    sim_game_destroy(game);
    return 0;
}
