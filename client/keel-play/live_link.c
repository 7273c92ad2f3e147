// keel-play live mode: the connection (see live_link.h for its invariants).
// MIT licence, see LICENSE.
#include "live_link.h"

#include <stdio.h>
#include <string.h>

#include <keel/sim_game.h>

#include "keel_app.h"

#include <keel/cl_smooth.h>

bool kp_link_open(kp_link *l, const char *server, uint16_t port, const uint8_t *connect_token, const sim_world *world,
                  const sim_level *level, const sim_move_settings *settings, const cl_config *config,
                  uint32_t connect_timeout_ms, uint32_t timeout_ms)
{
    memset(l, 0, sizeof *l);
    snprintf(l->server, sizeof l->server, "%s", server);
    l->port = port;
    l->token = connect_token != NULL;
    l->connect_timeout_ms = connect_timeout_ms;
    l->start_us = keel_app_now_us();
    net_host_config hc = net_host_default_config();
    hc.connect_token = connect_token;
    hc.timeout_ms = timeout_ms;
    l->timeout_ms = timeout_ms;
    const char *err = NULL;
    l->host = net_host_connect(server, port, &hc, &err);
    if (!l->host) {
        snprintf(l->why, sizeof l->why, "cannot connect to %s:%u: %s", server, (unsigned)port, err ? err : "?");
        l->state = KP_LINK_ENDED;
        l->end = "bad_address";
        return false;
    }
    l->cl = cl_client_create(world, level, settings, config, l->host);
    if (!l->cl) {
        snprintf(l->why, sizeof l->why, "cannot create the client (out of memory, or settings refused)");
        l->state = KP_LINK_ENDED;
        l->end = "no_client";
        return false;
    }
    return true;
}

bool kp_link_record(kp_link *l, const char *path, const char *level, const char *scale, char up)
{
    rec_header h = cl_record_default_header(l->cl);
    if (strcmp(level, "builtin") != 0) {
        h.level.kind = REC_LEVEL_OBJ;
        snprintf(h.level.path, sizeof h.level.path, "%s", level);
        snprintf(h.level.scale, sizeof h.level.scale, "%s", keel_app_level_scale(level, scale));
        h.level.up_axis = keel_app_level_up(level, up);
    }
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = true;
    rec_error err;
    l->rec = cl_record_open(path, &h, &wc, &err);
    if (!l->rec)
        snprintf(l->why, sizeof l->why, "cannot record to %s: %s", path, err.message);
    return l->rec != NULL;
}

bool kp_link_end_record(kp_link *l)
{
    bool ok = true;
    if (l->rec) {
        rec_error err;
        uint64_t calls = cl_record_count(l->rec);
        ok = cl_record_close(l->rec, &err);
        if (ok)
            fprintf(stderr, "keel-play: recorded the client: %llu records\n", (unsigned long long)calls);
        else
            fprintf(stderr, "keel-play: the recording failed: %s\n", err.message);
        l->rec = NULL;
    }
    return ok;
}

void kp_link_close(kp_link *l)
{
    kp_link_end_record(l);
    cl_client_destroy(l->cl);
    net_host_destroy(l->host);
    l->cl = NULL;
    l->host = NULL;
}

static void end_with(kp_link *l, uint64_t now, const char *end)
{
    if (l->state == KP_LINK_ENDED)
        return;
    l->state = KP_LINK_ENDED;
    l->end = end;
    l->ended_us = now;
}

// The host's disconnect, as keel-client names it in its summary, and a
// sentence for the screen.
// Why a server may not answer. A secure keel-server drops a connection
// without a connect token unanswered (it gives no reply to a client it does
// not know), so without a token that is one of the causes.
static const char *no_answer_causes(const kp_link *l)
{
    return l->token ? "no server there, or every packet lost"
                    : "no server there, every packet lost, or a secure keel-server (--key), which answers only "
                      "a client with a connect token: give --token FILE or --token-key FILE";
}

static void lost(kp_link *l, uint64_t now)
{
    double timeout_s = l->timeout_ms / 1000.0;
    switch (l->end_reason) {
    case NET_DISCONNECT_REFUSED_ADDRESS:
        snprintf(l->why, sizeof l->why, "refused by the server: too many connections from this address");
        end_with(l, now, "refused_address");
        return;
    case NET_DISCONNECT_REFUSED_FULL:
        snprintf(l->why, sizeof l->why, "refused by the server: every connection slot is taken");
        end_with(l, now, "refused_full");
        return;
    case NET_DISCONNECT_REFUSED_TOKEN:
        snprintf(l->why, sizeof l->why, "refused by the server's handshake: %s",
                 net_hs_refusal_name(net_host_handshake_refusal(l->host)));
        end_with(l, now, "refused_token");
        return;
    case NET_DISCONNECT_UNANSWERED:
        snprintf(l->why, sizeof l->why, "no answer from %s:%u within %g s (%s)", l->server, (unsigned)l->port,
                 timeout_s, no_answer_causes(l));
        end_with(l, now, "unanswered");
        return;
    case NET_DISCONNECT_CLOSED:
        snprintf(l->why, sizeof l->why, "the server closed the connection");
        end_with(l, now, "closed_by_server");
        return;
    default:
        snprintf(l->why, sizeof l->why, "lost the connection: nothing heard from the server for %g s", timeout_s);
        end_with(l, now, "timed_out");
        return;
    }
}

// Whether resimulated_ticks grew since `before`.
static uint64_t resimulated(const cl_client *cl)
{
    cl_stats s;
    cl_client_stats(cl, &s);
    return s.resimulated_ticks;
}

// Predict one tick, its time counted as prediction or rollback work.
static void predict_one(kp_link *l, kp_link_command_fn command, void *user, uint32_t now_ms)
{
    uint32_t tick = cl_client_predicted_tick(l->cl);
    bool game = cl_client_config(l->cl)->game != NULL;
    union {
        uint8_t bytes[SIM_GAME_COMMAND_MAX_BYTES];
        uint64_t align; // for any field of the game's struct
    } gc;
    memset(&gc, 0, sizeof gc);
    sim_input cmd = command(user, tick, game ? gc.bytes : NULL);
    uint64_t r0 = resimulated(l->cl), t0 = keel_app_now_us();
    bool ok = cl_record_predict_game(l->rec, l->cl, &cmd, game ? gc.bytes : NULL, now_ms);
    uint64_t dt = keel_app_now_us() - t0;
    if (resimulated(l->cl) != r0)
        l->rollback_us += dt;
    else
        l->predict_us += dt;
    if (ok) {
        l->predicted++;
        l->played++;
    }
}

// Hand the prediction as it stands to the smoothing (when there is one):
// after the events (a rollback then changes ticks it already holds, which it
// absorbs at the last frame's alpha) and after each predicted tick.
static void smooth_update(kp_link *l)
{
    if (!l->smooth)
        return;
    uint64_t t0 = keel_app_now_us();
    cl_smooth_update_client(l->smooth, l->cl);
    l->smooth_us += keel_app_now_us() - t0;
}

kp_link_state kp_link_pump(kp_link *l, uint64_t now, kp_link_command_fn command, void *user)
{
    l->predict_us = l->rollback_us = l->handle_us = l->smooth_us = 0;
    l->predicted = 0;
    if (l->state == KP_LINK_ENDED || l->left)
        return l->state;
    uint32_t now_ms = (uint32_t)(now / 1000u);
    net_event ev;
    for (;;) {
        uint64_t t0 = keel_app_now_us();
        if (net_host_service(l->host, &ev, 0) == NET_EVENT_NONE)
            break;
        if (ev.type == NET_EVENT_CONNECT) {
            l->connected_us = now;
            cl_record_hello(l->rec, l->cl, now_ms);
        } else if (ev.type == NET_EVENT_DISCONNECT) {
            l->end_reason = ev.reason;
        }
        uint64_t r0 = resimulated(l->cl);
        uint64_t t1 = keel_app_now_us();
        cl_record_handle(l->rec, l->cl, &ev, now_ms);
        uint64_t dt = keel_app_now_us() - t1;
        l->handle_us += t1 - t0;
        if (resimulated(l->cl) != r0)
            l->rollback_us += dt;
        else
            l->handle_us += dt;
    }
    cl_status st = cl_client_status(l->cl);
    if (st == CL_STATUS_REFUSED) {
        // A draining server (SIGTERM) refuses everyone with
        // NET_REFUSE_SHUTDOWN: an end, not a fault of the player's.
        if (cl_client_refusal_code(l->cl) == NET_REFUSE_SHUTDOWN) {
            snprintf(l->why, sizeof l->why, "match over: %s", cl_client_refusal(l->cl));
            end_with(l, now, "server_shutdown");
        } else {
            // A level that differs: say which file this player loaded (as
            // keel-client does).
            const char *reason = cl_client_refusal(l->cl);
            bool other_level = l->level && strstr(reason, "level differs") != NULL;
            snprintf(l->why, sizeof l->why, "refused by the server: %s%s%s%s", reason,
                     other_level ? " (this player's level: " : "", other_level ? l->level : "", other_level ? ")" : "");
            end_with(l, now, "refused");
        }
        return l->state;
    }
    if (st == CL_STATUS_DISCONNECTED) {
        lost(l, now);
        return l->state;
    }
    if (st != CL_STATUS_PLAYING) {
        if (now - l->start_us > (uint64_t)l->connect_timeout_ms * 1000u) {
            if (l->connected_us)
                snprintf(l->why, sizeof l->why, "not playing after %.1f s: %s:%u does not answer as a keel-server",
                         l->connect_timeout_ms / 1000.0, l->server, (unsigned)l->port);
            else
                snprintf(l->why, sizeof l->why, "no answer from %s:%u within %.1f s (%s)", l->server, (unsigned)l->port,
                         l->connect_timeout_ms / 1000.0, no_answer_causes(l));
            end_with(l, now, l->connected_us ? "gave_up" : "never_connected");
        }
        return l->state;
    }
    if (!l->clock_started) {
        l->clock_started = true;
        l->next_tick_us = now;
        l->playing_us = now;
        l->state = KP_LINK_PLAYING;
        fprintf(stderr, "keel-play: playing as character %u on %s:%u\n", cl_client_character(l->cl), l->server,
                (unsigned)l->port);
    }
    uint64_t r0 = resimulated(l->cl), t0 = keel_app_now_us();
    uint32_t due = cl_record_take_catch_up(l->rec, l->cl);
    uint64_t dt = keel_app_now_us() - t0;
    if (resimulated(l->cl) != r0)
        l->rollback_us += dt;
    smooth_update(l);
    while (now >= l->next_tick_us) {
        due++;
        l->next_tick_us += cl_client_tick_us(l->cl);
    }
    for (uint32_t k = 0; k < due; k++) {
        predict_one(l, command, user, now_ms);
        smooth_update(l);
    }
    net_host_flush(l->host);
    return l->state;
}

void kp_link_leave(kp_link *l)
{
    if (!l->host || l->left)
        return;
    l->left = true;
    uint64_t now = keel_app_now_us();
    if (l->state == KP_LINK_ENDED)
        return;
    if (!l->connected_us) { // nothing to leave: the connection never came up
        snprintf(l->why, sizeof l->why, "quit before %s:%u answered", l->server, (unsigned)l->port);
        end_with(l, now, "never_connected");
        return;
    }
    net_leave_state st;
    while ((st = net_host_leave(l->host, 0)) == NET_LEAVE_PENDING)
        keel_app_sleep_until_us(keel_app_now_us() + 1000u);
    snprintf(l->why, sizeof l->why, "left the server");
    end_with(l, now, st == NET_LEAVE_DONE ? "left" : "left_unacknowledged");
}

double kp_link_alpha(const kp_link *l, uint64_t now)
{
    if (!l->clock_started)
        return 1.0;
    uint64_t tick = cl_client_tick_us(l->cl);
    uint64_t last = l->next_tick_us - tick; // when the newest tick was predicted
    if (now <= last)
        return 0.0;
    double a = (double)(now - last) / (double)tick;
    return a > 1.0 ? 1.0 : a;
}

const char *kp_link_status_text(const kp_link *l, char *buf, size_t size)
{
    if (l->state == KP_LINK_ENDED)
        snprintf(buf, size, "%s", l->why);
    else if (!l->cl || cl_client_status(l->cl) == CL_STATUS_CONNECTING)
        snprintf(buf, size, "connecting to %s:%u ...", l->server, (unsigned)l->port);
    else
        snprintf(buf, size, "connected to %s:%u, waiting for the first full state ...", l->server, (unsigned)l->port);
    return buf;
}
