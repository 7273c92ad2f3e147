// keel server: lag compensation -- a shot judged against the view its
// shooter's client had when it fired, rebuilt exactly (docs/arena.md, "Lag
// compensation"; docs/game.md, "Judging a shot"). MIT licence, see LICENSE.
//
// The client predicts tick T from its confirmed state C: the server's state
// at C, its own commands for C .. T-1, every other character its command of
// tick C-1 (what the snapshot that confirmed C carried). Its command for T
// says T - C (the game's view-lag field). The server keeps its state after
// each of the last lag_ticks + 1 steps and every client's commands as they
// came, so it runs the same prediction in a scene of its own and hands the
// game's judge that view. The outcome goes into the command's payload, which
// the tick then runs, the snapshots carry and the recording keeps: every
// peer and every verification applies the same hit without a rebuild.
#include <keel/sim_game.h>
#include <keel/sim_level.h>

#include <stdlib.h>
#include <string.h>

#include "sv_internal.h"

bool sv_lag_init(sv_server *sv)
{
    uint32_t ms = sv->config.lag_compensation_ms > 1000u ? 1000u : sv->config.lag_compensation_ms;
    uint32_t ticks = (uint32_t)((uint64_t)ms * (uint64_t)sv->settings.tick_rate / 1000u);
    if (!sim_game_judges(sv->config.game) || ticks == 0)
        return true; // off: sv->lag_ticks stays 0
    sv->lag_ticks = ticks > 63u ? 63u : ticks;
    sv->lag_ring = sv->lag_ticks + 1u;
    sv->lag_tick = calloc(sv->lag_ring, sizeof *sv->lag_tick);
    sv->lag_save = calloc(sv->lag_ring, sizeof *sv->lag_save);
    sv->lag_size = calloc(sv->lag_ring, sizeof *sv->lag_size);
    sv->lag_cap = calloc(sv->lag_ring, sizeof *sv->lag_cap);
    sv->view = sim_scene_create_game(sv->world, &sv->settings, sv->config.max_clients, sv->config.game);
    if (!sv->lag_tick || !sv->lag_save || !sv->lag_size || !sv->lag_cap || !sv->view)
        return false;
    for (uint32_t i = 0; i < sv->lag_ring; i++)
        sv->lag_tick[i] = NET_TICK_NONE;
    // The same platforms and water as the server's scene (sv_server_create).
    const sim_map *map = sv->config.map;
    if (map && sim_map_add_to_scene(map, sv->view, sv->settings.tick_rate, map->unit_m, SIM_MAP_FIRST_PLATFORM_ID, NULL,
                                    NULL) != 0)
        return false;
    if (sv->config.platforms)
        sim_scene_add_area_platforms(sv->view, sv->level, 0x7FFF0001u, 0x7FFF0002u);
    return true;
}

void sv_lag_free(sv_server *sv)
{
    for (uint32_t i = 0; sv->lag_save && i < sv->lag_ring; i++)
        free(sv->lag_save[i]);
    free(sv->lag_save);
    free(sv->lag_tick);
    free(sv->lag_size);
    free(sv->lag_cap);
    sim_scene_destroy(sv->view);
}

void sv_lag_keep(sv_server *sv)
{
    if (!sv->lag_ticks)
        return;
    uint32_t t = sim_scene_tick(sv->scene);
    uint32_t k = t % sv->lag_ring;
    size_t size = sim_scene_state_size(sv->scene);
    if (size > sv->lag_cap[k]) {
        // Grows with the characters, never per tick once they are there.
        uint8_t *b = realloc(sv->lag_save[k], size);
        if (!b) {
            sv->lag_tick[k] = NET_TICK_NONE;
            return;
        }
        sv->lag_save[k] = b;
        sv->lag_cap[k] = size;
    }
    sim_scene_save(sv->scene, sv->lag_save[k]);
    sv->lag_size[k] = size;
    sv->lag_tick[k] = t;
}

// The command of `id` in record r at or after *at (both in id order: a
// cursor that only moves forward), or NULL.
static const net_tick_command *next_command(const sv_tick_record *r, uint32_t *at, uint32_t id)
{
    while (*at < r->command_count && r->commands[*at].id < id)
        (*at)++;
    return *at < r->command_count && r->commands[*at].id == id ? &r->commands[*at] : NULL;
}

// The client's view at tick t predicted from tick `from` into sv->view;
// false when the state at `from` or the commands of `from` - 1 are no
// longer held. *exact false when one of the shooter's own commands never
// came (the server's command of that tick stands in for it).
static bool rebuild(sv_server *sv, const sv_client *c, uint32_t from, uint32_t t, bool *exact)
{
    uint32_t k = from % sv->lag_ring;
    const sv_tick_record *before = sv_history_find(&sv->history, from - 1u);
    if (sv->lag_tick[k] != from || !before || !sim_scene_restore(sv->view, sv->lag_save[k], sv->lag_size[k], NULL))
        return false;
    *exact = true;
    for (uint32_t tick = from; tick < t; tick++) {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(sv->view, &n);
        const sv_tick_record *ran = sv_history_find(&sv->history, tick);
        uint32_t at = 0, own_at = 0;
        for (uint32_t i = 0; i < n; i++) {
            sim_input cmd;
            const uint8_t *game = NULL;
            const net_tick_command *last = NULL;
            const sv_cmd_slot *s = &c->seen[tick % CMD_RING];
            if (chars[i].id == c->id && s->tick == tick) {
                cmd = s->cmd;
                game = s->game;
            } else if (chars[i].id == c->id) {
                *exact = false;
                last = ran ? next_command(ran, &own_at, c->id) : NULL;
            } else {
                last = next_command(before, &at, chars[i].id);
            }
            if (last) {
                cmd = last->command;
                game = last->game;
            } else if (!game) { // (as the client: stand still, looking where it looks)
                memset(&cmd, 0, sizeof cmd);
                cmd.yaw = chars[i].yaw;
                cmd.pitch = chars[i].pitch;
            }
            cmd.tick = tick;
            static const uint8_t zero[NET_GAME_COMMAND_BYTES];
            net_set_command(sv->view, chars[i].id, &cmd, game ? game : zero);
        }
        sim_scene_step(sv->view);
        sv->stats.view_ticks++;
    }
    return true;
}

void sv_lag_judge(sv_server *sv, const sv_client *c, uint32_t t, const sim_input *cmd, uint8_t *payload, bool own)
{
    const sim_game *g = sv->config.game;
    size_t bytes = net_game_command_bytes(g);
    if (!sim_game_judges(g) || bytes == 0)
        return;
    // Whatever the client wrote of an outcome is cleared: the server judges.
    bool needs = sim_game_judge_packed(g, sv->scene, c->id, cmd, payload, bytes, false, 0);
    if (!needs || !own || !sv->lag_ticks)
        return; // judged at the present by the rules
    uint8_t unpacked[SIM_GAME_COMMAND_MAX_BYTES];
    uint32_t lag = 0;
    if (sim_game_unpack_command(g, payload, bytes, unpacked, NULL))
        lag = sim_game_view_lag(g, unpacked);
    const sv_cmd_slot *s = &c->seen[t % CMD_RING];
    if (s->tick == t && sim_game_unpack_command(g, s->game, bytes, unpacked, NULL))
        lag = sim_game_view_lag(g, unpacked); // (the lag as the client sent it)
    sv->stats.view_lag_sum += lag;
    sv->stats.view_lag_max = lag > sv->stats.view_lag_max ? lag : sv->stats.view_lag_max;
    if (lag > sv->lag_ticks) {
        lag = sv->lag_ticks;
        sv->stats.shots_beyond_bound++;
    }
    // Never from before the client's character existed: the first state
    // that holds it is join_tick + 1.
    if (t - lag <= c->join_tick)
        lag = t > c->join_tick ? t - c->join_tick - 1u : 0u;
    bool exact = true;
    if (!rebuild(sv, c, t - lag, t, &exact)) {
        sv->stats.shots_unrebuilt++;
        return;
    }
    sv->stats.shots_judged++;
    if (!exact)
        sv->stats.shots_inexact++;
    sim_game_judge_packed(g, sv->view, c->id, cmd, payload, bytes, true, lag);
}
