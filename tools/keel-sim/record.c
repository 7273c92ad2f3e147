// keel-sim: --record, a scene recording of the characters run. MIT licence,
// see LICENSE.
//
// A respawn happens after a tick's step (and after its hash is recorded), so
// it goes into the recording as the next tick's leave and join: the same
// state at the same point.
#include "keel_sim.h"

#include "keel_app.h"

#include <stdlib.h>
#include <string.h>

#include <keel/net_proto.h>
#include <keel/rec.h>
#include <keel/sim_game.h>

struct ks_recorder {
    rec_writer *w;
    const char *path;
    bool failed;
    rec_command *commands; ///< this tick's, in id order
    uint32_t command_count;
    uint8_t *game_commands; ///< with --game: this tick's packed game commands, in the same order
    uint32_t game_bytes;    ///< of one (0: no game command)
    uint32_t *leaves;       ///< respawns waiting for the next tick's record
    sim_char_state *joins;
    uint32_t pending;
    uint32_t capacity;
};

// The level as a recording names it (keel-replay rebuilds it from this).
static rec_level_ref level_ref(const ks_stage *stage, const ks_options *opt)
{
    rec_level_ref ref;
    memset(&ref, 0, sizeof ref);
    ref.up_axis = 'y';
    switch (opt->level_kind) {
    case KS_LEVEL_BUILTIN: ref.kind = REC_LEVEL_BUILTIN; break;
    case KS_LEVEL_GENERATED:
        ref.kind = REC_LEVEL_GENERATED;
        ref.generate_triangles = opt->generate_triangles;
        ref.generate_seed = (uint32_t)opt->seed; // what ks_stage_load generated it from
        break;
    case KS_LEVEL_OBJ:
        ref.kind = REC_LEVEL_OBJ;
        snprintf(ref.path, sizeof ref.path, "%s", opt->level_name); // length checked with the options
        snprintf(ref.scale, sizeof ref.scale, "%s", keel_app_level_scale(opt->level_name, opt->scale));
        ref.up_axis = keel_app_level_up(opt->level_name, opt->up_axis);
        break;
    }
    ref.digest = net_level_digest(&stage->level);
    return ref;
}

static void recorder_free(ks_recorder *r)
{
    free(r->commands);
    free(r->leaves);
    free(r->joins);
    free(r->game_commands);
    free(r);
}

ks_recorder *ks_record_open(const ks_stage *stage, const ks_options *opt, const sim_scene *scene,
                            const sim_move_settings *settings)
{
    ks_recorder *r = calloc(1, sizeof *r);
    uint32_t cap = sim_scene_capacity(scene);
    size_t slots = cap ? cap : 1;
    if (r) {
        r->commands = calloc(slots, sizeof *r->commands);
        r->leaves = calloc(slots, sizeof *r->leaves);
        r->joins = calloc(slots, sizeof *r->joins);
    }
    if (!r || !r->commands || !r->leaves || !r->joins) {
        fputs("keel-sim: out of memory\n", stderr);
        if (r)
            recorder_free(r);
        return NULL;
    }
    r->capacity = cap;
    r->path = opt->record_path;
    const sim_game *game = sim_scene_game(scene);
    r->game_bytes = game ? (sim_game_command_bits(game) + 7u) / 8u : 0u;
    if (r->game_bytes && !(r->game_commands = calloc(slots, r->game_bytes))) {
        fputs("keel-sim: out of memory\n", stderr);
        recorder_free(r);
        return NULL;
    }
    rec_header h = rec_default_header();
    h.settings = *settings;
    h.settings_digest = net_settings_digest(settings);
    h.level = level_ref(stage, opt);
    rec_header_set_scene(&h, scene); // platforms, water boxes, capacity
    h.keyframe_interval = opt->keyframe_interval;
    h.compress = opt->record_compress;
    snprintf(h.source, sizeof h.source, "keel-sim");
    rec_writer_config cfg = rec_default_writer_config();
    rec_error err;
    memset(&err, 0, sizeof err);
    r->w = rec_writer_open(opt->record_path, &h, &cfg, scene, &err);
    if (!r->w) {
        fprintf(stderr, "keel-sim: --record %s: %s\n", opt->record_path, err.message);
        recorder_free(r);
        return NULL;
    }
    return r;
}

void ks_record_command(ks_recorder *r, uint32_t id, const sim_input *in, const uint8_t *game_command)
{
    if (r->command_count >= r->capacity)
        return;
    if (r->game_bytes && game_command)
        memcpy(r->game_commands + (size_t)r->command_count * r->game_bytes, game_command, r->game_bytes);
    r->commands[r->command_count++] = (rec_command){.id = id, .input = *in};
}

void ks_record_tick(ks_recorder *r, uint32_t tick, const sim_scene *after)
{
    if (!r->failed) {
        rec_tick t;
        memset(&t, 0, sizeof t);
        t.tick = tick;
        t.leave_count = t.join_count = r->pending; // leaves first, then joins, both in id order
        t.leaves = r->leaves;
        t.joins = r->joins;
        t.command_count = r->command_count;
        t.commands = r->commands;
        t.game_commands = r->game_bytes ? r->game_commands : NULL;
        r->failed = !rec_writer_tick(r->w, &t, after);
    }
    r->pending = 0;
    r->command_count = 0;
}

void ks_record_respawn(ks_recorder *r, const sim_char_state *joined)
{
    if (r->pending < r->capacity) {
        r->leaves[r->pending] = joined->id;
        r->joins[r->pending++] = *joined;
    }
}

int ks_record_close(ks_recorder *r)
{
    rec_error err;
    memset(&err, 0, sizeof err);
    bool ok = rec_writer_close(r->w, &err) && !r->failed;
    if (!ok)
        fprintf(stderr, "keel-sim: --record %s: %s\n", r->path, err.message[0] ? err.message : "the recording failed");
    recorder_free(r);
    return ok ? KS_EXIT_OK : KS_EXIT_FAILURE;
}
