// keel example: the smallest headless game client. MIT licence, see LICENSE.
//
//   client [ADDRESS [PORT [SECONDS]]]   (defaults 127.0.0.1, 27900, 5)
//
// Connects to a keel-server (one started with --insecure: this client has
// no connect token; net_host_config.connect_token is how a game gives it
// one), predicts its own character with a command per tick (walk forward,
// turning slowly), and once a second prints where a game
// would draw it: the smoothed pose from cl_smooth (the two newest predicted
// ticks interpolated, rollback corrections eased out). After SECONDS (or on
// Ctrl-C) it leaves the server cleanly and exits 0; 1 when it could not
// connect, was refused or lost the connection; 2 on bad arguments.
//
// The loop is the one a game runs: handle the network's events, predict the
// ticks that are due by the client's clock (cl_client_tick_us, which the
// library steers), then draw a frame. Here a frame every 16 ms prints
// nothing but reads the pose, as a renderer would.
//
// Build against an installed keel (cmake --install <build> --prefix <prefix>):
//   CMake:      find_package(keel 0.9 REQUIRED COMPONENTS client), link keel::client
//   pkg-config: cc -std=c11 examples/client.c $(pkg-config --cflags --libs keel-client) -o client
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keel/cl_client.h>
#include <keel/cl_smooth.h>

enum { FRAME_US = 16667, CONNECT_TIMEOUT_S = 10 };

static volatile sig_atomic_t interrupted;
static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void sleep_us(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
    nanosleep(&ts, NULL);
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *address = argc > 1 ? argv[1] : "127.0.0.1";
    uint32_t port = 27900, seconds = 5;
    if (argc > 4 || (argc > 2 && parse_u32(argv[2], 1, 65535, &port) != 0) ||
        (argc > 3 && parse_u32(argv[3], 1, 86400, &seconds) != 0)) {
        fprintf(stderr, "usage: %s [ADDRESS [PORT (1..65535) [SECONDS (1..86400)]]]\n", argv[0]);
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    // The same level and settings as the server (the built-in level at 64 Hz
    // is keel-server's default; a client set up otherwise is refused).
    sim_level level;
    if (sim_level_builtin(&level) != 0)
        return 1;
    sim_error err;
    sim_world *world = sim_world_create(&level, NULL, &err);
    if (!world) {
        fprintf(stderr, "client: %s\n", err.message);
        sim_level_free(&level);
        return 1;
    }
    sim_move_settings settings = sim_move_default_settings();
    // keel-server respawns a character that falls 16 m below the level
    // (--respawn-depth); the respawn is part of the simulation, so the
    // client's settings say the same.
    settings.respawn_depth = SIM_FX_INT(16);
    cl_config config = cl_default_config();
    net_host_config host_config = net_host_default_config();
    const char *why = NULL;
    net_host *host = net_host_connect(address, (uint16_t)port, &host_config, &why);
    cl_client *cl = host ? cl_client_create(world, &level, &settings, &config, host) : NULL;
    cl_smooth_settings smooth_settings = cl_smooth_default_settings();
    cl_smooth *smooth = cl_smooth_create(&smooth_settings, NET_MAX_CHARACTERS);
    int status = 1;
    if (!host || !cl || !smooth) {
        fprintf(stderr, "client: cannot connect to %s:%" PRIu32 ": %s\n", address, port, why ? why : "out of memory");
        goto done;
    }

    const uint64_t start = now_us();
    uint64_t next_tick = 0, next_frame = start, next_print = 0, playing_since = 0;
    sim_angle yaw = 0;
    bool connected = false;
    for (;;) {
        uint64_t now = now_us();
        uint32_t now_ms = (uint32_t)(now / 1000u);
        // 1. the network
        net_event ev;
        while (net_host_service(host, &ev, 0) != NET_EVENT_NONE) {
            if (ev.type == NET_EVENT_CONNECT)
                cl_client_hello(cl, now_ms);
            cl_client_handle(cl, &ev, now_ms);
        }
        cl_status st = cl_client_status(cl);
        if (st == CL_STATUS_REFUSED) {
            fprintf(stderr, "client: refused by the server: %s\n", cl_client_refusal(cl));
            goto done;
        }
        if (st == CL_STATUS_DISCONNECTED) {
            fprintf(stderr, "client: the connection to %s:%" PRIu32 " ended\n", address, port);
            goto done;
        }
        if (st != CL_STATUS_PLAYING) {
            if (now - start > (uint64_t)CONNECT_TIMEOUT_S * 1000000u) {
                fprintf(stderr, "client: not playing after %d s\n", CONNECT_TIMEOUT_S);
                goto done;
            }
            sleep_us(1000);
            continue;
        }
        if (!connected) {
            connected = true;
            playing_since = next_tick = now;
            next_print = now + 1000000u;
            printf("connected to %s:%" PRIu32 " as character %" PRIu32 "\n", address, port, cl_client_character(cl));
        }
        cl_smooth_update_client(smooth, cl); // what the events changed (a rollback)

        // 2. the ticks due: a command each, then the prediction
        uint32_t due = cl_client_take_catch_up(cl);
        while (now >= next_tick) {
            due++;
            next_tick += cl_client_tick_us(cl);
        }
        for (uint32_t k = 0; k < due; k++) {
            sim_input cmd;
            memset(&cmd, 0, sizeof cmd);
            cmd.forward = 127;            // walk forward...
            yaw = (sim_angle)(yaw + 64u); // ...turning a full circle every 16 s at 64 Hz
            cmd.yaw = yaw;
            cl_client_predict(cl, &cmd, now_ms);
            cl_smooth_update_client(smooth, cl);
        }
        net_host_flush(host);

        // 3. a frame: alpha is how far the clock is from the newest predicted
        // tick's start to the next
        if (now >= next_frame) {
            double tick_us = (double)cl_client_tick_us(cl);
            float alpha = (float)(1.0 - (double)(int64_t)(next_tick - now) / tick_us);
            cl_smooth_frame(smooth, (float)(now - next_frame + FRAME_US) / 1e6f, alpha);
            next_frame = now + FRAME_US;
            cl_pose pose;
            if (now >= next_print && cl_smooth_pose(smooth, cl_client_character(cl), &pose)) {
                next_print += 1000000u;
                printf("%.1f s  tick %" PRIu32 "  pos (%7.3f, %7.3f, %7.3f) m  yaw %6.1f deg  offset %.1f mm\n",
                       (double)(now - playing_since) / 1e6, pose.tick, (double)pose.position[0],
                       (double)pose.position[1], (double)pose.position[2], (double)pose.yaw * 57.29578,
                       1e3 * sqrt((double)pose.offset[0] * pose.offset[0] + (double)pose.offset[1] * pose.offset[1] +
                                  (double)pose.offset[2] * pose.offset[2]));
                fflush(stdout);
            }
        }
        if (interrupted || now - playing_since >= (uint64_t)seconds * 1000000u)
            break;
        sleep_us(1000);
    }

    // Leave: the server sees a leave, not a timeout (one round trip, 1 s at most).
    while (net_host_leave(host, 10) == NET_LEAVE_PENDING) {
    }
    cl_stats cs;
    cl_client_stats(cl, &cs);
    cl_smooth_stats ss;
    cl_smooth_stats_get(smooth, &ss);
    printf("left after %.1f s: %" PRIu64 " ticks predicted, %" PRIu64 " rollbacks, %" PRIu64
           " corrections smoothed, %" PRIu64 " snaps\n",
           (double)(now_us() - playing_since) / 1e6, cs.predicted_ticks, cs.rollbacks, ss.corrections,
           ss.snaps_spawn + ss.snaps_correction + ss.snaps_teleport);
    status = 0;

done:
    cl_smooth_destroy(smooth);
    cl_client_destroy(cl);
    net_host_destroy(host);
    sim_world_destroy(world);
    sim_level_free(&level);
    return status;
}
