// keel programs: a server session with bots on a virtual clock. MIT licence,
// see LICENSE.
#include "keel_session.h"

#include <stdlib.h>
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/cl_light.h>
#include <keel/net_proto.h>
#include <keel/sim_game.h>
#include <keel/sim_hash.h>

#define HASH_RING 4096u

static const cl_bot_mode bot_modes[8] = {CL_BOT_PLATFORMS, CL_BOT_PUSHER,    CL_BOT_RANDOM, CL_BOT_PUSHER,
                                         CL_BOT_CIRCUIT,   CL_BOT_PLATFORMS, CL_BOT_RANDOM, CL_BOT_PUSHER};

typedef struct session_bot {
    net_host *host; // NULL while out
    bool full;      // runs the client library (else a light bot)
    cl_client *cl;
    cl_light light; // a light bot (cl_light.h): it steers by the server's scene
    cl_bot bot;
    bool started;
    uint64_t next_us;
    uint64_t join_at_ms, leave_at_ms; // leave_at_ms 0: stays
    uint32_t lives;
    uint32_t last_checked;
} session_bot;

struct keel_session {
    const sim_world *world;
    const sim_level *level;
    sim_move_settings settings;
    keel_session_config config;
    net_memory *mem;
    net_host *server_host;
    sv_server *sv;
    uint32_t end_tick;
    uint64_t next_server_us, tick_us;
    uint64_t rng;
    session_bot bots[KEEL_SESSION_MAX_BOTS];
    cl_record *rec0;
    net_sim_identity identity;
    uint32_t light_lead; // ticks a light bot's commands are sent ahead
    uint64_t server_hash[HASH_RING];
    uint32_t server_hash_tick[HASH_RING];
    keel_session_stats stats;
    cl_stats gone; // the counters of clients that have left
};

keel_session_config keel_session_default_config(void)
{
    keel_session_config c;
    memset(&c, 0, sizeof c);
    c.bots = 8;
    c.ticks = 11520;
    c.seed = 1;
    c.churn = false;
    c.platforms = true;
    c.full_clients = 1;
    c.link.latency_ms = 20;
    c.link.jitter_ms = 5;
    c.link.loss_permille = 10;
    c.link.duplicate_permille = 5;
    return c;
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t now_ms(const keel_session *s) { return net_memory_now(s->mem); }

// Bring bot i in (a new connection and a new client).
static bool bot_join(keel_session *s, uint32_t i)
{
    session_bot *b = &s->bots[i];
    net_host_config hc = net_host_default_config();
    b->host = net_memory_connect(s->mem, "server", &s->config.link, &s->config.link, &hc);
    if (!b->host)
        return false;
    b->full = i < s->config.full_clients;
    if (b->full) {
        cl_config cc = cl_default_config();
        cc.platforms = s->config.platforms;
        cc.map = s->config.map;
        cc.game = s->config.game;
        b->cl = cl_client_create(s->world, s->level, &s->settings, &cc, b->host);
        if (!b->cl) {
            net_host_destroy(b->host);
            b->host = NULL;
            return false;
        }
    } else {
        cl_config cc = cl_default_config(); // the same redundancy as a full client's
        cl_light_init(&b->light, &s->identity, cc.ticks_per_packet, cc.redundancy_packets);
    }
    cl_bot_mode mode = cl_bot_game_fights(s->config.game) ? CL_BOT_ARENA : bot_modes[i % 8u];
    cl_bot_init(&b->bot, mode, s->config.seed * 1000003u + (uint64_t)i * 64u + b->lives);
    b->started = false;
    b->last_checked = NET_TICK_NONE;
    b->lives++;
    b->leave_at_ms = 0;
    if (s->config.churn && i != 0)
        b->leave_at_ms = now_ms(s) + 8000u + next_random(&s->rng) % 22000u;
    s->stats.joins++;
    return true;
}

static void add_counts(cl_stats *to, const cl_stats *from)
{
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        to->own_mispredictions[c] += from->own_mispredictions[c];
    to->hash_mismatches += from->hash_mismatches;
    to->rollbacks += from->rollbacks;
}

// Take bot i out: said goodbye, or (silent) its host just vanishes and the
// server times it out. Back in 1 to 8 s.
static void bot_leave(keel_session *s, uint32_t i, bool silent)
{
    session_bot *b = &s->bots[i];
    if (b->cl) {
        cl_stats st;
        cl_client_stats(b->cl, &st);
        add_counts(&s->gone, &st);
    }
    if (!silent) {
        net_host_leave(b->host, 0); // the server sees a leave (the memory network never loses it)
    } else {
        s->stats.silent_leaves++;
    }
    cl_client_destroy(b->cl);
    net_host_destroy(b->host);
    b->cl = NULL;
    b->host = NULL;
    b->join_at_ms = now_ms(s) + 1000u + next_random(&s->rng) % 7000u;
    s->stats.leaves++;
}

keel_session *keel_session_create(const sim_world *world, const sim_level *level, const sim_move_settings *settings,
                                  const keel_session_config *config)
{
    if (!world || !level || !settings || !config || config->bots < 1 || config->bots > KEEL_SESSION_MAX_BOTS ||
        config->full_clients > config->bots || (config->game && config->full_clients != config->bots) ||
        !sim_move_settings_check(settings, NULL))
        return NULL;
    keel_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->world = world;
    s->level = level;
    s->settings = *settings;
    s->config = *config;
    s->rng = config->seed ^ 0x6B65656C73657373ull; // "keelsess"
    s->tick_us = 1000000u / (uint64_t)settings->tick_rate;
    // One way at worst, in ticks, and two to spare.
    uint64_t worst_ms = (uint64_t)config->link.latency_ms + config->link.jitter_ms;
    s->light_lead = (uint32_t)((worst_ms * 1000u + s->tick_us - 1u) / s->tick_us) + 2u;
    if (s->light_lead > NET_MAX_SNAPSHOT_TICKS / 2u)
        s->light_lead = NET_MAX_SNAPSHOT_TICKS / 2u;
    s->mem = net_memory_create(config->seed);
    // Room for every bot twice: a bot that left silently holds its slot
    // until the server times it out, and may be back before that.
    uint32_t max_clients = config->bots * 2u;
    if (max_clients > NET_MAX_CHARACTERS)
        max_clients = NET_MAX_CHARACTERS;
    net_host_config hc = net_host_default_config();
    hc.max_peers = max_clients + 8u;
    s->server_host = s->mem ? net_memory_listen(s->mem, "server", &hc) : NULL;
    sv_config sc = sv_default_config();
    sc.max_clients = max_clients;
    sc.platforms = config->platforms;
    sc.map = config->map;
    sc.game = config->game;
    s->sv = s->server_host ? sv_server_create(world, level, settings, &sc, s->server_host) : NULL;
    if (!s->sv) {
        keel_session_destroy(s);
        return NULL;
    }
    // Light bots simulate nothing: they say they simulate the server's scene.
    s->identity = sv_server_identity(s->sv);
    s->end_tick = sv_server_scene_tick(s->sv) + config->ticks;
    for (uint32_t i = 0; i < HASH_RING; i++)
        s->server_hash_tick[i] = NET_TICK_NONE;
    // Bot 0 now; the others over the first bots x 300 ms.
    for (uint32_t i = 1; i < config->bots; i++)
        s->bots[i].join_at_ms = 20u + (uint64_t)i * 300u + next_random(&s->rng) % 300u;
    if (config->full_clients == 0)
        s->bots[0].join_at_ms = 0;
    else if (!bot_join(s, 0)) {
        keel_session_destroy(s);
        return NULL;
    }
    return s;
}

void keel_session_destroy(keel_session *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < KEEL_SESSION_MAX_BOTS; i++) {
        cl_client_destroy(s->bots[i].cl);
        net_host_destroy(s->bots[i].host);
    }
    sv_server_destroy(s->sv);
    net_host_destroy(s->server_host);
    net_memory_destroy(s->mem);
    free(s);
}

sv_server *keel_session_server(keel_session *s) { return s->sv; }
cl_client *keel_session_client0(keel_session *s) { return s->bots[0].cl; }

void keel_session_record_client0(keel_session *s, cl_record *rec) { s->rec0 = rec; }

static void server_ticked(keel_session *s)
{
    uint32_t t = sv_server_scene_tick(s->sv);
    const sim_scene *scene = sv_server_scene(s->sv);
    s->server_hash[t % HASH_RING] = sim_scene_hash(scene);
    s->server_hash_tick[t % HASH_RING] = t;
    uint32_t n;
    sim_scene_characters(scene, &n);
    s->stats.ticks++;
    s->stats.character_ticks += n;
    if (n > s->stats.max_characters)
        s->stats.max_characters = n;
}

// ---- light bots ----------------------------------------------------------------------------

// Commands up to the server's tick plus the lead, made from the server's
// scene (cl_light sends them with the redundancy of a full client).
static void light_play(keel_session *s, session_bot *b, uint32_t now)
{
    cl_light *lb = &b->light;
    const sim_scene *scene = sv_server_scene(s->sv);
    uint32_t server_tick = sv_server_scene_tick(s->sv);
    cl_light_skip_to(lb, server_tick); // (fell behind: cannot happen unless the lead is 0)
    uint32_t target = server_tick + s->light_lead;
    while (lb->next_tick <= target) {
        sim_input cmd = cl_bot_command(&b->bot, scene, lb->character, s->level, lb->next_tick);
        cl_light_command(lb, &cmd);
    }
    cl_light_send(lb, b->host, now);
}

static void light_ms(keel_session *s, uint32_t i, uint32_t now)
{
    session_bot *b = &s->bots[i];
    cl_light *lb = &b->light;
    net_event ev;
    while (net_host_service(b->host, &ev, 0) != NET_EVENT_NONE) {
        if (ev.type == NET_EVENT_CONNECT) {
            cl_light_hello(lb, b->host, now);
            continue;
        }
        bool welcome = lb->status == CL_LIGHT_CONNECTING;
        cl_light_handle(lb, &ev, now);
        if (lb->status == CL_LIGHT_REFUSED || lb->status == CL_LIGHT_DISCONNECTED) {
            bot_leave(s, i, false);
            return;
        }
        if (welcome && lb->status == CL_LIGHT_PLAYING) // from the tick after the server's
            cl_light_skip_to(lb, sv_server_scene_tick(s->sv) + 1u);
    }
    if (lb->status == CL_LIGHT_PLAYING)
        light_play(s, b, now);
    net_host_flush(b->host);
}

// ---- full clients ------------------------------------------------------------------------------

// One bot's millisecond: its events, then the ticks its clock says are due.
static void bot_ms(keel_session *s, uint32_t i, uint64_t now_us, uint32_t now)
{
    session_bot *b = &s->bots[i];
    cl_record *rec = i == 0 && !s->config.game ? s->rec0 : NULL; // (no game commands in client recordings)
    cl_client *cl = b->cl;
    net_event ev;
    while (net_host_service(b->host, &ev, 0) != NET_EVENT_NONE) {
        if (ev.type == NET_EVENT_CONNECT)
            cl_record_hello(rec, cl, now);
        cl_record_handle(rec, cl, &ev, now);
    }
    cl_status st = cl_client_status(cl);
    if (st == CL_STATUS_REFUSED || st == CL_STATUS_DISCONNECTED) {
        if (i != 0) // bot 0 keeps its (recorded) client to the end
            bot_leave(s, i, false);
        return;
    }
    if (st != CL_STATUS_PLAYING)
        return;
    uint32_t c = cl_client_confirmed_tick(cl);
    if (c != b->last_checked && s->server_hash_tick[c % HASH_RING] == c) {
        b->last_checked = c;
        s->stats.confirmed_checked++;
        if (sim_scene_hash(cl_client_confirmed(cl)) != s->server_hash[c % HASH_RING])
            s->stats.confirmed_differ++;
    }
    if (!b->started) {
        b->started = true;
        b->next_us = now_us;
    }
    uint32_t due = cl_record_take_catch_up(rec, cl);
    while (now_us >= b->next_us) {
        due++;
        b->next_us += cl_client_tick_us(cl);
    }
    for (uint32_t k = 0; k < due; k++) {
        uint32_t tick = cl_client_predicted_tick(cl);
        sim_input cmd = cl_bot_command(&b->bot, cl_client_predicted(cl), cl_client_character(cl), s->level, tick);
        if (!s->config.game) {
            cl_record_predict(rec, cl, &cmd, now);
            continue;
        }
        uint8_t game_command[SIM_GAME_COMMAND_MAX_BYTES];
        bool drawn = cl_bot_game_command(&b->bot, s->config.game, tick, game_command, sizeof game_command);
        cl_record_predict_game(rec, cl, &cmd, drawn ? game_command : NULL, now); // NULL: all zero
    }
    net_host_flush(b->host);
}

bool keel_session_step(keel_session *s)
{
    if (sv_server_scene_tick(s->sv) >= s->end_tick)
        return false;
    net_memory_advance(s->mem, 1);
    uint64_t ms = now_ms(s);
    uint64_t now_us = ms * 1000u;
    uint32_t now = (uint32_t)ms;
    if (s->next_server_us == 0)
        s->next_server_us = now_us;
    net_event ev;
    while (net_host_service(s->server_host, &ev, 0) != NET_EVENT_NONE)
        sv_server_handle(s->sv, &ev, now_us, s->next_server_us);
    while (now_us >= s->next_server_us && sv_server_scene_tick(s->sv) < s->end_tick) {
        sv_server_tick(s->sv, now_us);
        server_ticked(s);
        s->next_server_us += s->tick_us;
    }
    for (uint32_t i = 0; i < s->config.bots; i++) {
        session_bot *b = &s->bots[i];
        if (!b->host) {
            if (ms >= b->join_at_ms && !bot_join(s, i))
                b->join_at_ms = ms + 1000u; // out of memory: try again later
            continue;
        }
        if (b->leave_at_ms && ms >= b->leave_at_ms) {
            bot_leave(s, i, next_random(&s->rng) % 4u == 0);
            continue;
        }
        if (b->full)
            bot_ms(s, i, now_us, now);
        else
            light_ms(s, i, now);
    }
    net_host_flush(s->server_host);
    return sv_server_scene_tick(s->sv) < s->end_tick;
}

void keel_session_run(keel_session *s)
{
    while (keel_session_step(s)) {
    }
}

void keel_session_stats_get(const keel_session *s, keel_session_stats *out)
{
    *out = s->stats;
    cl_stats sum = s->gone;
    for (uint32_t i = 0; i < s->config.bots; i++) {
        if (!s->bots[i].cl)
            continue;
        cl_stats st;
        cl_client_stats(s->bots[i].cl, &st);
        add_counts(&sum, &st);
    }
    out->own_mispredictions = 0;
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        out->own_mispredictions += sum.own_mispredictions[c];
    out->unexplained = sum.own_mispredictions[CL_CAUSE_UNEXPLAINED];
    out->hash_mismatches = sum.hash_mismatches;
    out->rollbacks = sum.rollbacks;
}
