// keel benchmark: hit agreement (bench_hits.h). MIT licence, see LICENSE.
#include "bench_hits.h"

#include <string.h>

#include <keel/sim_game.h>
#include <keel/sim_spawn.h>

#include "arena.h"

arena_settings hits_arena_settings(void)
{
    arena_settings s = arena_default_settings();
    s.rail_interval = 24;
    s.rail_damage = 1;
    s.health_start = s.health_max = 200;
    s.protect_ticks = 0;
    return s;
}

void hits_aim(const cl_client *cl, uint32_t salt, sim_input *in)
{
    const sim_scene *pred = cl_client_predicted(cl);
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(pred, &n);
    const sim_char_state *me = sim_scene_find(pred, cl_client_character(cl));
    const sim_char_state *them = NULL;
    int64_t best = INT64_MAX;
    for (uint32_t k = 0; me && k < n; k++) {
        int64_t dx = cs[k].position.x - me->position.x, dz = cs[k].position.z - me->position.z;
        int64_t d = dx * dx + dz * dz;
        if (cs[k].id != me->id && d < best) {
            best = d;
            them = &cs[k];
        }
    }
    if (!them)
        return;
    // A point beside the target's centre, up to 0.6 m either side (in
    // steps of 7.5 cm): near the edge of a body, where where the target
    // really is decides the hit.
    int32_t offset = (int32_t)(sim_rng_mix(salt) % 17u) - 8;
    sim_vec3 to = sim_v3_normalize(sim_v3(them->position.x - me->position.x, 0, them->position.z - me->position.z));
    sim_vec3 side = sim_v3_scale(sim_v3(-to.z, 0, to.x), SIM_FX_MM(75) * offset);
    in->yaw =
        sim_spawn_yaw_toward(them->position.x + side.x - me->position.x, them->position.z + side.z - me->position.z);
    in->pitch = 0;
}

void hits_watch_init(hits_watch *w, uint32_t clients, int32_t rail_interval, uint32_t bound_ticks)
{
    memset(w, 0, sizeof *w);
    w->bound_ticks = bound_ticks;
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
    w->before_lag[i] = p ? cl_client_predicted_tick(cl) - cl_client_confirmed_tick(cl) : 0;
}

void hits_after_predict(hits_watch *w, uint32_t i, const cl_client *cl)
{
    uint32_t t = w->before_tick[i];
    const arena_player *p = player(cl_client_predicted(cl), cl_client_character(cl));
    if (t == NET_TICK_NONE || !p || cl_client_predicted_tick(cl) != t + 1u)
        return; // not predicted (held or capped)
    hits_shot *s = &w->shown[i][t % HITS_RING];
    s->tick = t;
    s->lag = w->before_lag[i];
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
        if (w->server_seen[i] && s->tick == t && s->fired && s->lag > w->bound_ticks) {
            w->tally.beyond++;
            w->tally.beyond_agreed += fired && hit == s->hit;
        } else if (w->server_seen[i] && s->tick == t && s->fired) {
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
