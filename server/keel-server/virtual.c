// keel-server --virtual-bots: the server with keel-client bots on the
// in-memory network and a virtual clock (app/keel_session.h), run as
// fast as the CPU allows, recorded through the same observer as a real
// server. MIT licence, see LICENSE.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/cl_bot.h>
#include <keel/sim_game.h>
#include <keel/sim_hash.h>

#include "keel_app.h"
#include "keel_server.h"
#include "keel_session.h"

typedef struct score_line {
    uint32_t id;
    int64_t frags, deaths;
} score_line;

// The game's score table at the end, when its characters have "frags" and
// "deaths" fields (keel-arena's): frags down, then deaths up, then id up.
static void print_scores(const sim_scene *scene)
{
    const sim_game *g = sim_scene_game(scene);
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(scene, &n);
    const sim_game_schema *c = g ? &sim_game_definition(g)->character : NULL;
    if (!c || n == 0 || cl_bot_game_value(c, sim_scene_game_char(scene, cs[0].id), "frags", INT64_MIN) == INT64_MIN)
        return;
    score_line *lines = malloc(n * sizeof *lines);
    if (!lines)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const void *p = sim_scene_game_char(scene, cs[i].id);
        score_line l = {cs[i].id, cl_bot_game_value(c, p, "frags", 0), cl_bot_game_value(c, p, "deaths", 0)};
        uint32_t at = i;
        for (; at > 0 &&
               (lines[at - 1].frags < l.frags || (lines[at - 1].frags == l.frags && lines[at - 1].deaths > l.deaths));
             at--)
            lines[at] = lines[at - 1];
        lines[at] = l;
    }
    printf("keel-server: score table (game %s): character frags deaths\n", sim_game_name(g));
    for (uint32_t i = 0; i < n; i++)
        printf("keel-server:   %9u %5" PRId64 " %6" PRId64 "\n", lines[i].id, lines[i].frags, lines[i].deaths);
    free(lines);
}

int run_virtual(const options *o, const sim_world *world, const sim_level *level, const sim_map *map,
                const sim_move_settings *settings)
{
    keel_session_config sc = keel_session_default_config();
    sc.bots = o->virtual_bots;
    sc.ticks = o->ticks ? o->ticks : sc.ticks;
    sc.seed = o->seed;
    sc.churn = o->churn;
    sc.platforms = true;
    sc.map = map;
    sc.full_clients = o->full_clients < sc.bots ? o->full_clients : sc.bots;
    sc.game = o->game;
    if (sc.game) // light bots send no game payload
        sc.full_clients = sc.bots;
    keel_session *s = keel_session_create(world, level, settings, &sc);
    if (!s) {
        fputs("keel-server: cannot create the virtual session\n", stderr);
        return 1;
    }
    sv_server *sv = keel_session_server(s);
    recorder rec;
    if (!recorder_start(&rec, o, sv)) {
        keel_session_destroy(s);
        return 1;
    }
    uint64_t t0 = keel_app_now_us();
    // Stepped here (keel_session_run's loop) to count the scene's respawns.
    uint64_t respawns = 0;
    uint32_t last_tick = sv_server_scene_tick(sv);
    while (keel_session_step(s)) {
        uint32_t t = sv_server_scene_tick(sv);
        if (t != last_tick)
            respawns += sim_scene_last_respawns(sv_server_scene(sv));
        last_tick = t;
    }
    double secs = (double)(keel_app_now_us() - t0) / 1e6;
    keel_session_stats st;
    keel_session_stats_get(s, &st);
    double played = (double)st.ticks / (double)settings->tick_rate;
    printf("keel-server: virtual session: %u bots (%u full clients)%s, seed %u, %u ticks (%.1f s of play) in %.2f s: "
           "%.0f ticks/s, "
           "%.0f x real time; %.0f characters on average, at most %u; joins %" PRIu64 ", leaves %" PRIu64
           " (silent %" PRIu64 "); client confirmed states checked %" PRIu64 ", differing %" PRIu64
           "; own mispredictions %" PRIu64 " (unexplained %" PRIu64 "), rollbacks %" PRIu64 ", hash mismatches %" PRIu64
           "\n",
           sc.bots, sc.full_clients, sc.churn ? " with churn" : "", o->seed, st.ticks, played, secs,
           secs > 0 ? st.ticks / secs : 0.0, secs > 0 ? played / secs : 0.0,
           st.ticks ? (double)st.character_ticks / st.ticks : 0.0, st.max_characters, st.joins, st.leaves,
           st.silent_leaves, st.confirmed_checked, st.confirmed_differ, st.own_mispredictions, st.unexplained,
           st.rollbacks, st.hash_mismatches);
    sv_stats ss;
    sv_server_stats(sv, &ss);
    printf("keel-server: server: commands %" PRIu64 " (late %" PRIu64 ", duplicates %" PRIu64 "), substituted %" PRIu64
           ", clients joined %" PRIu64 ", left %" PRIu64 ", timed out %" PRIu64 ", dropped %" PRIu64 "\n",
           ss.commands_received, ss.commands_late, ss.commands_duplicate, ss.commands_substituted, ss.clients_joined,
           ss.clients_left, ss.clients_timed_out, ss.clients_dropped);
    printf("keel-server: respawned below the level: %" PRIu64 " (respawn depth %d m)\n", respawns,
           settings->respawn_depth / SIM_FX_ONE);
    print_scores(sv_server_scene(sv));
    bool recorded = recorder_finish(&rec, sv, stdout);
    printf("keel-server: final tick %u, final hash %016" PRIx64 "\n", sv_server_scene_tick(sv),
           sim_scene_hash(sv_server_scene(sv)));
    // A client that disagrees with the server is a determinism bug.
    int rc = recorded && st.confirmed_differ == 0 && st.unexplained == 0 ? 0 : 1;
    keel_session_destroy(s);
    return rc;
}
