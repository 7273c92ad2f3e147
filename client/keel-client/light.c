// keel-client: light clients for load (--light N). MIT licence, see LICENSE.
//
// Each light client is its own ENet connection and a cl_light (the protocol
// without the simulation): to the server it is a player like any other. It
// has no scene to look at, so it walks blind: a polygon of its own (6 to 12
// sides, each walked for 0.4 to 0.9 s at 30 to 70% of full speed, a jump at
// the start of every third), so that its command changes about as often as a
// random cl_bot's, and it stays near its spawn for any length of run.
// Clients connect 20 ms apart.
#include "light.h"

#include <stdlib.h>
#include <string.h>

#include "keel_app.h"

typedef struct light_client {
    net_host *host; // NULL before it connects
    cl_light cl;
    uint32_t played; // commands made
    uint16_t turn;   // yaw per side
    int8_t forward;
    uint32_t side; // ticks per side
    bool done, failed;
    bool leaving, left; // done: leaving (net_host_leave) until the server saw it or it gave up
} light_client;

struct light_set {
    uint32_t count, ticks, connect_timeout_ms;
    const char *server;
    uint16_t port;
    uint64_t start_us;
    int status;
    uint32_t shut_down; // clients the server's shutdown ended
    light_client *clients;
    token_source tokens; ///< secure mode: the key the clients issue tokens with
    uint32_t first_id;   ///< client i's token names client id first_id + i
    uint32_t timeout_ms; ///< net_host_config's (0: its default)
};

light_set *light_create(uint32_t count, const char *server, uint16_t port, const net_sim_identity *identity,
                        uint32_t ticks_per_packet, uint32_t redundancy_packets, uint32_t ticks, uint64_t seed,
                        uint32_t connect_timeout_ms, const token_source *tokens, uint32_t first_client_id)
{
    light_set *ls = calloc(1, sizeof *ls);
    light_client *c = calloc(count, sizeof *c);
    if (!ls || !c) {
        free(ls);
        free(c);
        return NULL;
    }
    *ls = (light_set){count, ticks, connect_timeout_ms, server, port, keel_app_now_us(), 0, 0,
                      c,     {0},   first_client_id,    0};
    if (tokens)
        ls->tokens = *tokens;
    for (uint32_t i = 0; i < count; i++) {
        cl_light_init(&c[i].cl, identity, ticks_per_packet, redundancy_packets);
        uint64_t r = (seed + i + 1u) * 0x9E3779B97F4A7C15ull;
        r ^= r >> 29;
        r *= 0xBF58476D1CE4E5B9ull;
        r ^= r >> 32;
        uint32_t sides = 6u + (uint32_t)(r % 7u);
        c[i].turn = (uint16_t)((r >> 16) & 1u ? 65536u / sides : 65536u - 65536u / sides);
        c[i].forward = (int8_t)(38 + (r >> 24) % 52u);
        c[i].side = 24u + (uint32_t)((r >> 40) % 33u);
    }
    return ls;
}

static sim_input walk(const light_client *c, uint32_t tick)
{
    sim_input in;
    memset(&in, 0, sizeof in);
    uint32_t side = tick / c->side;
    in.yaw = (sim_angle)(uint16_t)(side * c->turn);
    in.forward = c->forward;
    if (tick % c->side == 0 && side % 3u == 0)
        in.buttons = SIM_BUTTON_JUMP;
    return in;
}

static void fail(light_set *ls, light_client *c, uint32_t i, const char *what, const char *why)
{
    fprintf(stderr, "keel-client: light client %u %s%s%s\n", i + 1, what, why ? ": " : "", why ? why : "");
    c->failed = c->done = true;
    ls->status = 1;
}

static void step_one(light_set *ls, uint32_t i, uint64_t now_us)
{
    light_client *c = &ls->clients[i];
    uint32_t now_ms = (uint32_t)(now_us / 1000u);
    if (c->leaving) {
        c->left = net_host_leave(c->host, 0) != NET_LEAVE_PENDING;
        return;
    }
    net_event ev;
    while (net_host_service(c->host, &ev, 0) != NET_EVENT_NONE) {
        if (ev.type == NET_EVENT_CONNECT && !c->done)
            cl_light_hello(&c->cl, c->host, now_ms);
        else
            cl_light_handle(&c->cl, &ev, now_ms);
    }
    if (c->done)
        return;
    if (c->cl.status != CL_LIGHT_PLAYING) {
        if (c->cl.status == CL_LIGHT_REFUSED && c->cl.refusal_code == NET_REFUSE_SHUTDOWN) {
            if (ls->shut_down++ == 0) // said once for all of them
                fprintf(stderr, "keel-client: light clients: the server shut down: %s\n", c->cl.refusal);
            c->done = true;
            // Serviced until the connection is closed, as a bot is: the
            // server's drain waits for this side's acknowledgement.
            c->leaving = true;
            c->left = net_host_leave(c->host, 0) != NET_LEAVE_PENDING;
        } else if (c->cl.status == CL_LIGHT_REFUSED) {
            fail(ls, c, i, "refused by the server", c->cl.refusal);
        } else if (c->cl.status == CL_LIGHT_DISCONNECTED) {
            fail(ls, c, i, "lost the connection", NULL);
        } else if (now_us - ls->start_us > (uint64_t)ls->connect_timeout_ms * 1000u) {
            fail(ls, c, i, "not playing after the connect timeout", NULL);
        }
        return;
    }
    uint32_t target = cl_light_target_tick(&c->cl, now_ms);
    while (c->cl.next_tick <= target && !c->done) {
        sim_input cmd = walk(c, c->cl.next_tick);
        cl_light_command(&c->cl, &cmd);
        c->done = ls->ticks && ++c->played >= ls->ticks;
    }
    cl_light_send(&c->cl, c->host, now_ms);
    net_host_flush(c->host);
    if (c->done) { // played its ticks: leaves while the others play on
        c->leaving = true;
        c->left = net_host_leave(c->host, 0) != NET_LEAVE_PENDING;
    }
}

void light_set_timeout(light_set *ls, uint32_t timeout_ms) { ls->timeout_ms = timeout_ms; }

bool light_step(light_set *ls, uint64_t now_us)
{
    bool active = false;
    for (uint32_t i = 0; i < ls->count; i++) {
        light_client *c = &ls->clients[i];
        if (!c->host && !c->done) {
            active = true;
            if (now_us < ls->start_us + (uint64_t)i * 20000u)
                continue;
            const char *why = NULL;
            net_host_config hc = net_host_default_config();
            if (ls->timeout_ms)
                hc.timeout_ms = ls->timeout_ms;
            char err[256];
            hc.connect_token = tokens_for(&ls->tokens, ls->first_id + i, ls->server, ls->port, err, sizeof err);
            if (!hc.connect_token && ls->tokens.from_key) {
                fail(ls, c, i, "cannot issue a token", err);
                continue;
            }
            c->host = net_host_connect(ls->server, ls->port, &hc, &why);
            if (!c->host) {
                fail(ls, c, i, "cannot connect", why);
                continue;
            }
        }
        if (c->host)
            step_one(ls, i, now_us);
        active |= !c->done || (c->leaving && !c->left);
    }
    return active;
}

int light_status(const light_set *ls) { return ls->status; }

void light_summary(const light_set *ls, double secs, FILE *out)
{
    uint32_t played = 0, finished = 0, failed = 0, closed = 0, min_ticks = 0xFFFFFFFFu;
    cl_light_stats sum;
    memset(&sum, 0, sizeof sum);
    net_host_stats ns, tot;
    memset(&tot, 0, sizeof tot);
    for (uint32_t i = 0; i < ls->count; i++) {
        const light_client *c = &ls->clients[i];
        played += c->played > 0;
        finished += c->done && !c->failed;
        failed += c->failed;
        closed += c->left;
        min_ticks = c->played < min_ticks ? c->played : min_ticks;
        sum.snapshots += c->cl.stats.snapshots;
        sum.full_states += c->cl.stats.full_states;
        sum.input_packets += c->cl.stats.input_packets;
        sum.commands_sent += c->cl.stats.commands_sent;
        sum.messages_malformed += c->cl.stats.messages_malformed;
        if (!c->host)
            continue;
        net_host_stats_get(c->host, &ns);
        tot.payload_sent += ns.payload_sent;
        tot.payload_received += ns.payload_received;
        tot.wire_sent += ns.wire_sent;
        tot.wire_received += ns.wire_received;
    }
    double per = ls->count && secs > 0 ? 1.0 / ((double)ls->count * secs) : 0;
    fprintf(out,
            "\"light\":{\"clients\":%u,\"played\":%u,\"finished\":%u,\"failed\":%u,\"server_shutdown\":%u,"
            "\"closed\":%u,\"ticks_min\":%u,"
            "\"snapshots\":%llu,\"full_states\":%llu,\"input_packets\":%llu,\"commands_sent\":%llu,"
            "\"malformed\":%llu,\"up_payload_Bps\":%.0f,\"up_wire_Bps\":%.0f,\"down_payload_Bps\":%.0f,"
            "\"down_wire_Bps\":%.0f},",
            ls->count, played, finished, failed, ls->shut_down, closed, ls->count ? min_ticks : 0,
            (unsigned long long)sum.snapshots, (unsigned long long)sum.full_states,
            (unsigned long long)sum.input_packets, (unsigned long long)sum.commands_sent,
            (unsigned long long)sum.messages_malformed, (double)tot.payload_sent * per, (double)tot.wire_sent * per,
            (double)tot.payload_received * per, (double)tot.wire_received * per);
}

void light_destroy(light_set *ls)
{
    if (!ls)
        return;
    // Every connection still open leaves at once, all in parallel: at most
    // NET_LEAVE_MAX_MS (and a little) in all.
    uint64_t until = keel_app_now_us() + (NET_LEAVE_MAX_MS + 100u) * 1000u;
    for (bool pending = true; pending && keel_app_now_us() < until;) {
        pending = false;
        for (uint32_t i = 0; i < ls->count; i++) {
            light_client *c = &ls->clients[i];
            if (c->host && !c->left)
                c->left = net_host_leave(c->host, 0) != NET_LEAVE_PENDING;
            pending |= c->host && !c->left;
        }
        if (pending)
            keel_app_sleep_until_us(keel_app_now_us() + 1000u);
    }
    for (uint32_t i = 0; i < ls->count; i++)
        net_host_destroy(ls->clients[i].host);
    tokens_wipe(&ls->tokens);
    free(ls->clients);
    free(ls);
}
