// keel benchmark: hit agreement (bench_hits.h). MIT licence, see LICENSE.
#include "bench_hits.h"

#include <string.h>

#include <keel/sim_game.h>

#include "arena.h"

void hits_watch_init(hits_watch *w, uint32_t clients, int32_t rail_interval)
{
    memset(w, 0, sizeof *w);
    w->clients = clients < HITS_MAX_CLIENTS ? clients : HITS_MAX_CLIENTS;
    w->rail_interval = rail_interval;
    for (uint32_t i = 0; i < HITS_MAX_CLIENTS; i++) {
        w->before_tick[i] = NET_TICK_NONE;
        for (uint32_t k = 0; k < HITS_RING; k++)
            w->shown[i][k].tick = NET_TICK_NONE;
    }
}

static const arena_player *player(const sim_scene *scene, uint32_t id)
{
    return id ? sim_scene_game_char(scene, id) : NULL;
}

void hits_before_predict(hits_watch *w, uint32_t i, const cl_client *cl)
{
    const arena_player *p = player(cl_client_predicted(cl), cl_client_character(cl));
    w->before_tick[i] = p ? cl_client_predicted_tick(cl) : NET_TICK_NONE;
    w->before_hits[i] = p ? p->hits : 0;
}

void hits_after_predict(hits_watch *w, uint32_t i, const cl_client *cl)
{
    uint32_t t = w->before_tick[i];
    const arena_player *p = player(cl_client_predicted(cl), cl_client_character(cl));
    if (t == NET_TICK_NONE || !p || cl_client_predicted_tick(cl) != t + 1u)
        return; // not predicted (held or capped)
    hits_shot *s = &w->shown[i][t % HITS_RING];
    s->tick = t;
    s->fired = p->rail_ticks == (uint16_t)w->rail_interval;
    s->hit = p->hits != w->before_hits[i];
}

void hits_after_server_tick(hits_watch *w, const sv_server *sv, cl_client *const *cls)
{
    const sim_scene *scene = sv_server_scene(sv);
    uint32_t t = sim_scene_tick(scene) - 1u; // the tick just run
    for (uint32_t i = 0; i < w->clients; i++) {
        const arena_player *p = player(scene, cl_client_character(cls[i]));
        if (!p)
            continue;
        bool fired = p->rail_ticks == (uint16_t)w->rail_interval;
        bool hit = w->server_seen[i] && p->hits != w->server_hits[i];
        const hits_shot *s = &w->shown[i][t % HITS_RING];
        if (w->server_seen[i] && s->tick == t && s->fired) {
            if (!fired)
                w->tally.unfired++;
            if (s->hit) {
                w->tally.shown_hits++;
                w->tally.hits_confirmed += fired && hit;
            } else {
                w->tally.shown_misses++;
                w->tally.misses_confirmed += fired && !hit;
            }
        }
        w->server_hits[i] = p->hits;
        w->server_seen[i] = true;
    }
}
