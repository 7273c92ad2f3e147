// keel-sim: characters, the keel mover in a sim_scene. MIT licence, see LICENSE.
//
// Every character is a sim_char_state in one sim_scene, so characters collide
// with each other and with the optional platforms, exactly as a game server
// would run them. Their commands come either from the random walk of
// ks_common.h (one stream per character, seeded by (seed, id)) or from an
// --input file. The state hash is the scene's own (sim_scene_hash), so a run
// here can be compared with any other program that runs the same scene.
#include "keel_sim.h"

#include <keel/sim_game.h>

#include "keel_game.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_scene.h>

#include "keel_app.h"
#include "keel_jobs.h"

/// Platform ids: above every character id (the scene keeps the two apart).
#define PLATFORM_ELEVATOR (KS_MAX_CHARACTERS + 1u)
#define PLATFORM_SHUTTLE (KS_MAX_CHARACTERS + 2u)

static const char *const flag_names[] = {"grounded", "crouched", "stuck",    "jump_held", "on_steep",
                                         "ceiling",  "stepped",  "in_water", "wall"};
#define FLAG_NAME_COUNT ((int)(sizeof flag_names / sizeof flag_names[0]))

typedef struct char_stats {
    uint64_t move_type_ticks[SIM_MOVE_TYPE_COUNT];
    uint64_t grounded_ticks, stuck_ticks, jumps, respawns;
    uint32_t stuck_characters, longest_stuck;
    double seconds; ///< time spent in sim_scene_step (reporting only)
} char_stats;

typedef struct characters {
    uint32_t count;
    sim_move_settings settings;
    sim_scene *scene;
    const sim_world *world;
    sim_aabb bounds; ///< the world's
    sim_aabb keep;   ///< outside it a character is lost and respawns
    bool scripted;
    bool edge_guard;
    ks_script script;
    // Per character, indexed by id - 1.
    ks_walker *walkers;
    sim_vec3 *spawn; ///< feet
    sim_angle *spawn_yaw;
    uint8_t *respawned; ///< this tick
    uint8_t *was_stuck;
    ks_spawn_report spawn_report;
    char_stats stats;
    ks_recorder *rec; ///< --record (record.c), NULL without
    ks_sync *sync;    ///< --sync-test (synctest.c), NULL without
    keel_jobs *jobs;  ///< --threads N > 1: the scene's executor, NULL without
    // --game: the game, the seed of its commands, one command struct and
    // its packed bytes (for the recording).
    const sim_game *game;
    uint64_t seed;
    uint8_t *game_command;
    uint8_t game_packed[SIM_GAME_COMMAND_MAX_BYTES];
} characters;

static double now_s(void) { return (double)keel_app_now_us() * 1e-6; }

static void chars_destroy(void *state)
{
    characters *s = state;
    if (!s)
        return;
    if (s->scene)
        sim_scene_destroy(s->scene);
    keel_jobs_destroy(s->jobs);
    ks_script_free(&s->script);
    free(s->walkers);
    free(s->spawn);
    free(s->spawn_yaw);
    free(s->respawned);
    free(s->was_stuck);
    free(s->game_command);
    if (s->rec)
        ks_record_close(s->rec); // only after a failure elsewhere: finish closes it
    ks_sync_free(s->sync);
    free(s);
}

// The built-in level's elevator and shuttle (sim_scene_add_area_platforms),
// or a .map's movers and water (as keel-server adds them).
static int add_platforms(characters *s, const ks_stage *stage)
{
    if (stage->map.entity_count > 0) {
        if (sim_map_add_to_scene(&stage->map, s->scene, s->settings.tick_rate, stage->map.unit_m,
                                 SIM_MAP_FIRST_PLATFORM_ID, NULL, NULL) != 0) {
            fputs("keel-sim: --platforms: the scene refused a platform or water box of the map\n", stderr);
            return KS_EXIT_FAILURE;
        }
        return KS_EXIT_OK;
    }
    if (!sim_level_find_marker(&stage->level, "platform_area")) {
        fprintf(stderr, "keel-sim: --platforms: the level has no platform_area marker (the "
                        "built-in level has one)\n");
        return KS_EXIT_FAILURE;
    }
    if (sim_scene_add_area_platforms(s->scene, &stage->level, PLATFORM_ELEVATOR, PLATFORM_SHUTTLE) != 0) {
        fputs("keel-sim: --platforms: the scene refused a platform\n", stderr);
        return KS_EXIT_FAILURE;
    }
    return KS_EXIT_OK;
}

static sim_fx clamp_keep(int64_t v)
{
    const int64_t lim = SIM_MOVE_POSITION_LIMIT;
    return (sim_fx)(v < -lim ? -lim : (v > lim ? lim : v));
}

static void *chars_create(const ks_stage *stage, const ks_options *opt, ks_script *script)
{
    characters *s = calloc(1, sizeof *s);
    uint32_t n = opt->characters;
    size_t slots = n ? n : 1;
    if (!s) {
        ks_script_free(script);
        goto oom;
    }
    s->count = n;
    s->script = *script;
    memset(script, 0, sizeof *script);
    s->world = stage->world;
    s->bounds = stage->stats.bounds;
    s->scripted = opt->input_path != NULL;
    s->edge_guard = opt->edge_guard;
    s->settings = ks_settings_make(opt);
    s->spawn = calloc(slots, sizeof *s->spawn);
    s->spawn_yaw = calloc(slots, sizeof *s->spawn_yaw);
    s->respawned = calloc(slots, 1);
    s->was_stuck = calloc(slots, 1);
    s->walkers = s->scripted ? NULL : calloc(slots, sizeof *s->walkers);
    // A recording's scene holds at least one character (its header says so).
    s->game = opt->game;
    s->seed = opt->seed;
    if (s->game && !(s->game_command = calloc(1, SIM_GAME_COMMAND_MAX_BYTES)))
        goto oom;
    s->scene = sim_scene_create_game(stage->world, &s->settings, opt->record_path && n == 0 ? 1 : n, s->game);
    if (!s->spawn || !s->spawn_yaw || !s->respawned || !s->was_stuck || (!s->scripted && !s->walkers) || !s->scene)
        goto oom;

    if (opt->platforms && add_platforms(s, stage) != KS_EXIT_OK)
        goto fail;
    // Without --platforms a .map's entities still reach the game (its spawn
    // points, jump pads, items): --platforms hands them over with the movers.
    if (!opt->platforms && s->game && stage->map.entity_count > 0) {
        sim_game_error ge;
        if (!sim_scene_game_map(s->scene, &stage->map, &ge)) {
            fprintf(stderr, "keel-sim: --game: the game refused the level's entities: %s%s%s\n", ge.reason,
                    ge.field[0] ? ", field " : "", ge.field);
            goto fail;
        }
    }
    if (opt->threads > 1) {
        s->jobs = keel_jobs_create(opt->threads);
        if (!s->jobs) {
            fprintf(stderr, "keel-sim: --threads %u: cannot start the threads\n", (unsigned)opt->threads);
            goto fail;
        }
        sim_scene_set_parallel(s->scene, keel_jobs_parallel_for, s->jobs, 0);
    }

    // Lost: 64 m outside the level (and the spawn points), like the probes.
    sim_aabb b = stage->stats.triangle_count > 0 ? stage->stats.bounds : sim_aabb_of_point(sim_v3_zero());
    if (!ks_stage_character_spawns(stage, s->settings.stand_shape, s->settings.max_slope_cos, opt->random_spawns, n,
                                   s->spawn, &s->spawn_report))
        goto oom;
    for (uint32_t i = 0; i < n; i++)
        b = sim_aabb_union(b, sim_aabb_of_point(s->spawn[i]));
    const int64_t margin = SIM_FX_INT(64);
    s->keep.min = sim_v3(clamp_keep((int64_t)b.min.x - margin), clamp_keep((int64_t)b.min.y - margin),
                         clamp_keep((int64_t)b.min.z - margin));
    s->keep.max = sim_v3(clamp_keep((int64_t)b.max.x + margin), clamp_keep((int64_t)b.max.y + margin),
                         clamp_keep((int64_t)b.max.z + margin));

    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = i + 1;
        ks_rng facing = ks_rng_for(opt->seed, id, KS_STREAM_FACING);
        s->spawn_yaw[i] = (sim_angle)ks_rng_range(&facing, 0, 65535);
        sim_char_state c = sim_char_spawn(id, s->spawn[i], s->spawn_yaw[i]);
        if (sim_scene_add_character(s->scene, &c) != 0) {
            fprintf(stderr, "keel-sim: the scene refused character %u\n", (unsigned)id);
            goto fail;
        }
        if (s->walkers)
            s->walkers[i] = ks_walker_init(opt->seed, id);
    }
    if (opt->record_path && !(s->rec = ks_record_open(stage, opt, s->scene, &s->settings)))
        goto fail;
    if (opt->sync_depth && !(s->sync = ks_sync_open(s->scene, stage->world, &s->settings, opt->sync_depth)))
        goto fail;
    return s;

oom:
    fputs("keel-sim: out of memory\n", stderr);
fail:
    chars_destroy(s);
    return NULL;
}

static bool inside(sim_aabb b, sim_vec3 p)
{
    return p.x >= b.min.x && p.x <= b.max.x && p.y >= b.min.y && p.y <= b.max.y && p.z >= b.min.z && p.z <= b.max.z;
}

// The command a character runs this tick, given to the scene and, when
// recording or sync testing, kept for the tick's record or re-simulation
// (calls come in id order).
static void give(characters *s, uint32_t id, const sim_input *in)
{
    const uint8_t *packed = NULL;
    const void *given = NULL; // the game command the scene took
    if (s->game) {
        // The game's command: seeded values in the fields' ranges
        // (keel_game_command_fill). Should the schema refuse one, the
        // command whose packed bytes are all 0 (every field at its minimum).
        sim_game_error err;
        size_t bytes = (sim_game_command_bits(s->game) + 7u) / 8u;
        if (!keel_game_command_fill(s->game, s->seed, in->tick, id, s->game_command) ||
            !sim_game_pack_command(s->game, s->game_command, s->game_packed, sizeof s->game_packed, &err)) {
            memset(s->game_packed, 0, sizeof s->game_packed);
            sim_game_unpack_command(s->game, s->game_packed, bytes, s->game_command, &err);
        }
        if (sim_game_command_bits(s->game) && sim_scene_set_command(s->scene, id, in, s->game_command, &err))
            given = s->game_command;
        else
            sim_scene_set_input(s->scene, id, in);
        packed = s->game_packed;
    } else {
        sim_scene_set_input(s->scene, id, in);
    }
    if (s->rec)
        ks_record_command(s->rec, id, in, packed);
    if (s->sync)
        ks_sync_command(s->sync, id, in, given);
}

static void give_commands(characters *s)
{
    uint32_t t = sim_scene_tick(s->scene);
    if (s->scripted) {
        // Characters without a command this tick get the scene's empty one:
        // no movement, the same view direction.
        ks_script *sc = &s->script;
        while (sc->next < sc->count && sc->commands[sc->next].input.tick < t)
            sc->next++;
        for (; sc->next < sc->count && sc->commands[sc->next].input.tick == t; sc->next++) {
            const ks_command *cmd = &sc->commands[sc->next];
            const sim_char_state *c = sim_scene_find(s->scene, cmd->id);
            if (c && (cmd->input.buttons & SIM_BUTTON_JUMP) && (c->flags & SIM_CHAR_GROUNDED) &&
                !(c->flags & SIM_CHAR_JUMP_HELD))
                s->stats.jumps++;
            give(s, cmd->id, &cmd->input);
        }
        return;
    }
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(s->scene, &n);
    for (uint32_t i = 0; i < n; i++) {
        const sim_char_state *c = &chars[i];
        sim_input in = ks_walker_next(&s->walkers[c->id - 1], t);
        if (s->edge_guard)
            ks_guard_edges(s->world, s->bounds, c, &in);
        if ((in.buttons & SIM_BUTTON_JUMP) && (c->flags & SIM_CHAR_GROUNDED) && !(c->flags & SIM_CHAR_JUMP_HELD))
            s->stats.jumps++;
        give(s, c->id, &in);
    }
}

static int chars_step(void *state, const ks_stage *stage)
{
    (void)stage;
    characters *s = state;
    uint32_t tick = sim_scene_tick(s->scene);
    if (s->sync && !ks_sync_begin(s->sync, s->scene))
        return KS_EXIT_FAILURE;
    give_commands(s);
    double t0 = now_s();
    sim_scene_step(s->scene);
    s->stats.seconds += now_s() - t0;
    if (s->rec)
        ks_record_tick(s->rec, tick, s->scene); // before the respawns below

    // A character that fell off the level starts again at its spawn point:
    // a lost character would otherwise fall for the rest of the run.
    memset(s->respawned, 0, s->count ? s->count : 1);
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(s->scene, &n);
    for (uint32_t i = 0; i < n; i++)
        if (!inside(s->keep, chars[i].position))
            s->respawned[chars[i].id - 1] = 1;
    for (uint32_t i = 0; i < s->count; i++) {
        if (!s->respawned[i])
            continue;
        uint32_t id = i + 1;
        sim_char_state c = sim_char_spawn(id, s->spawn[i], s->spawn_yaw[i]);
        sim_scene_remove_character(s->scene, id);
        // At the nearest free spot to the spawn point, not inside whoever
        // stands on it (where it went is what is recorded).
        sim_scene_place_character(s->scene, &c, &c.position);
        s->stats.respawns++;
        if (s->rec)
            ks_record_respawn(s->rec, &c);
        if (s->sync)
            ks_sync_respawn(s->sync, &c);
    }
    if (s->sync && !ks_sync_end(s->sync, s->scene))
        return KS_EXIT_FAILURE;

    chars = sim_scene_characters(s->scene, &n);
    char_stats *st = &s->stats;
    for (uint32_t i = 0; i < n; i++) {
        const sim_char_state *c = &chars[i];
        if (c->move_type >= 0 && c->move_type < SIM_MOVE_TYPE_COUNT)
            st->move_type_ticks[c->move_type]++;
        if (c->flags & SIM_CHAR_GROUNDED)
            st->grounded_ticks++;
        if (c->flags & SIM_CHAR_STUCK) {
            st->stuck_ticks++;
            if (!s->was_stuck[c->id - 1]) {
                s->was_stuck[c->id - 1] = 1;
                st->stuck_characters++;
            }
            if (c->stuck_ticks > st->longest_stuck)
                st->longest_stuck = c->stuck_ticks;
        }
    }
    return KS_EXIT_OK;
}

static uint64_t chars_hash(const void *state, uint64_t tick)
{
    (void)tick; // the scene hashes its own tick
    const characters *s = state;
    return sim_scene_hash(s->scene);
}

static void put_vec(FILE *f, sim_vec3 v, bool json)
{
    char x[24], y[24], z[24];
    ks_format_fx_exact(x, sizeof x, v.x);
    ks_format_fx_exact(y, sizeof y, v.y);
    ks_format_fx_exact(z, sizeof z, v.z);
    fprintf(f, json ? "[%s,%s,%s]" : "%s,%s,%s", x, y, z);
}

// Flag names, a JSON array's items or joined by '|' for CSV; bits without a name
// (added to the mover later) appear as "bit<n>".
static void put_flags(FILE *f, uint32_t flags, bool json)
{
    bool first = true;
    for (int b = 0; b < 32; b++) {
        if (!(flags >> b & 1u))
            continue;
        if (!first)
            fputc(json ? ',' : '|', f);
        first = false;
        if (json)
            fputc('"', f);
        if (b < FLAG_NAME_COUNT)
            fputs(flag_names[b], f);
        else
            fprintf(f, "bit%d", b);
        if (json)
            fputc('"', f);
    }
}

static void chars_write_header(const void *state, const ks_writer *w)
{
    (void)state;
    if (w->format == KS_FORMAT_CSV)
        fputs("tick,id,x,y,z,vx,vy,vz,move,grounded,nx,ny,nz,flags,flags_raw,respawned\n", w->f);
}

static void chars_write_tick(const void *state, const ks_writer *w, uint64_t tick, uint64_t hash)
{
    const characters *s = state;
    FILE *f = w->f;
    bool json = w->format == KS_FORMAT_JSONL;
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(s->scene, &n);
    for (uint32_t i = 0; i < n; i++) {
        const sim_char_state *c = &chars[i];
        bool grounded = (c->flags & SIM_CHAR_GROUNDED) != 0;
        bool respawned = s->respawned[c->id - 1] != 0;
        if (json) {
            fprintf(f, "{\"tick\":%" PRIu64 ",\"id\":%" PRIu32 ",\"pos\":", tick, c->id);
            put_vec(f, c->position, true);
            fputs(",\"vel\":", f);
            put_vec(f, c->velocity, true);
            fprintf(f, ",\"move\":\"%s\",\"grounded\":%s,\"ground_normal\":", sim_move_type_name(c->move_type),
                    grounded ? "true" : "false");
            put_vec(f, c->ground_normal, true);
            fputs(",\"flags\":[", f);
            put_flags(f, c->flags, true);
            fprintf(f, "],\"flags_raw\":%" PRIu32 ",\"respawned\":%s}\n", c->flags, respawned ? "true" : "false");
        } else {
            fprintf(f, "%" PRIu64 ",%" PRIu32 ",", tick, c->id);
            put_vec(f, c->position, false);
            fputc(',', f);
            put_vec(f, c->velocity, false);
            fprintf(f, ",%s,%d,", sim_move_type_name(c->move_type), grounded ? 1 : 0);
            put_vec(f, c->ground_normal, false);
            fputc(',', f);
            put_flags(f, c->flags, false);
            fprintf(f, ",%" PRIu32 ",%d\n", c->flags, respawned ? 1 : 0);
        }
    }
    if (json)
        fprintf(f, "{\"tick\":%" PRIu64 ",\"hash\":\"%016" PRIx64 "\"}\n", tick, hash);
    else
        fprintf(f, "# tick %" PRIu64 " hash %016" PRIx64 "\n", tick, hash);
}

static void chars_summary(const void *state, FILE *f)
{
    const characters *s = state;
    const char_stats *st = &s->stats;
    uint64_t total = 0;
    for (int t = 0; t < SIM_MOVE_TYPE_COUNT; t++)
        total += st->move_type_ticks[t];
    fprintf(f, "%s input; character-ticks", s->scripted ? "scripted" : "random");
    for (int t = 0; t < SIM_MOVE_TYPE_COUNT; t++)
        fprintf(f, " %s %" PRIu64, sim_move_type_name(t), st->move_type_ticks[t]);
    fprintf(f,
            "; grounded %" PRIu64 ", jumps %" PRIu64 ", stuck %" PRIu64 " (%" PRIu32 " characters, longest %" PRIu32
            " ticks), respawns %" PRIu64,
            st->grounded_ticks, st->jumps, st->stuck_ticks, st->stuck_characters, st->longest_stuck, st->respawns);
    const ks_spawn_report *sp = &s->spawn_report;
    if (sp->seeded)
        fprintf(f,
                "; spawns %" PRIu32 " on floors, %" PRIu32 " above the level%s (%" PRIu64 " lines cast, %" PRIu64
                " points compared)",
                sp->on_floor, sp->overflow, sp->full ? " (full)" : "", sp->lines, sp->compared);
    if (st->seconds > 0 && total > 0)
        fprintf(f, "; %.0f character-ticks/s in sim_scene_step on %u thread%s", (double)total / st->seconds,
                s->jobs ? (unsigned)keel_jobs_threads(s->jobs) : 1u, s->jobs ? "s" : "");
    fputc('\n', f);
}

static int chars_finish(void *state, bool completed)
{
    characters *s = state;
    // The sync test's verdict is the point of a --sync-test run: printed
    // even with --quiet (a mismatch was printed where it happened).
    if (s->sync && completed)
        ks_sync_summary(s->sync, stderr);
    int rc = s->rec ? ks_record_close(s->rec) : KS_EXIT_OK;
    s->rec = NULL;
    return rc;
}

const ks_mode ks_mode_characters = {
    .name = "characters",
    .create = chars_create,
    .step = chars_step,
    .hash = chars_hash,
    .write_header = chars_write_header,
    .write_tick = chars_write_tick,
    .summary = chars_summary,
    .finish = chars_finish,
    .destroy = chars_destroy,
};
