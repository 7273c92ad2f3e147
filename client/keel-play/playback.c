// keel-play: a recording re-simulated for viewing (see playback.h). MIT
// licence, see LICENSE.
//
// Invariant: r->cur is positioned at the tick after the scene's, so
// kp_run_step applies exactly the recorded tick the scene is at.
#include "playback.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keel_game.h" // KEEL_EXIT_GAME_MISMATCH
#include "kp.h"
#include "rec_resim.h"

void kp_run_add_marker(kp_run *r, uint32_t tick, uint32_t id, kp_marker_kind kind)
{
    if (r->marker_count < KP_MAX_MARKERS)
        r->markers[r->marker_count++] = (kp_marker){tick, id, kind};
    else
        r->markers_dropped++;
}

// Add a character id to r->ids (kept increasing); false when out of memory.
static bool note_id(kp_run *r, uint32_t id)
{
    uint32_t lo = 0, hi = r->id_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < r->id_count && r->ids[lo] == id)
        return true;
    if (r->id_count == r->id_cap) {
        uint32_t cap = r->id_cap ? r->id_cap * 2 : 64;
        uint32_t *p = realloc(r->ids, (size_t)cap * sizeof *p);
        if (!p)
            return false;
        r->ids = p;
        r->id_cap = cap;
    }
    memmove(r->ids + lo + 1, r->ids + lo, (size_t)(r->id_count - lo) * sizeof *r->ids);
    r->ids[lo] = id;
    r->id_count++;
    return true;
}

int kp_run_check_follow(const kp_run *r, uint32_t id)
{
    if (!id || r->client)
        return 0;
    for (uint32_t i = 0; i < r->id_count; i++)
        if (r->ids[i] == id)
            return 0;
    char list[200] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < r->id_count && used + 16 < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%u", i ? ", " : "", (unsigned)r->ids[i]);
    if (used + 16 >= sizeof list)
        snprintf(list + used, sizeof list - used, ", ...");
    fprintf(stderr, "keel-play: --follow %u: %s holds no character %u (its characters: %s)\n", (unsigned)id, r->file,
            (unsigned)id, r->id_count ? list : "none");
    return KP_EXIT_USAGE;
}

// One pass over the ticks (decoding only) for the markers and the ids.
static bool scan_markers(kp_run *r)
{
    const sim_char_state *init = NULL;
    uint32_t init_count = 0;
    rec_file_initial(r->f, NULL, &init, &init_count);
    for (uint32_t i = 0; i < init_count; i++)
        if (!note_id(r, init[i].id)) {
            fputs("keel-play: out of memory\n", stderr);
            return false;
        }
    rec_error err;
    memset(&err, 0, sizeof err);
    rec_cursor *c = rec_cursor_create(r->f, r->first, &err);
    if (!c) {
        replay_print_error(r->file, &err);
        return false;
    }
    rec_tick t;
    while (rec_cursor_next(c, &t, &err)) {
        for (uint32_t i = 0; i < t.leave_count; i++, r->leaves++)
            kp_run_add_marker(r, t.tick, t.leaves[i], KP_MARK_LEAVE);
        for (uint32_t i = 0; i < t.join_count; i++, r->joins++) {
            kp_run_add_marker(r, t.tick + 1u, t.joins[i].id, KP_MARK_JOIN);
            if (!note_id(r, t.joins[i].id)) {
                rec_cursor_destroy(c);
                fputs("keel-play: out of memory\n", stderr);
                return false;
            }
        }
        for (uint32_t i = 0; i < t.command_count; i++)
            if (t.commands[i].substituted || t.commands[i].input.tick != t.tick) {
                r->substitutes++;
                kp_run_add_marker(r, t.tick, t.commands[i].id, KP_MARK_SUBSTITUTE);
            }
    }
    rec_cursor_destroy(c);
    if (err.message[0]) {
        replay_print_error(r->file, &err);
        return false;
    }
    return true;
}

int kp_run_open(kp_run *r, const char *file, const char *level_override, const sim_level *level, const sim_world *world,
                const sim_game *game)
{
    memset(r, 0, sizeof *r);
    r->file = file;
    rec_error err;
    memset(&err, 0, sizeof err);
    r->f = replay_open(file);
    if (!r->f) {
        return REC_EXIT_BAD_FILE;
    }
    if (game && !rec_file_set_game(r->f, game, &err)) { // before anything re-simulates
        fprintf(stderr, "keel-play: %s: %s\n", file, err.message);
        kp_run_close(r);
        return KEEL_EXIT_GAME_MISMATCH;
    }
    r->h = rec_file_header(r->f);
    rec_file_info(r->f, &r->info);
    r->client = r->h->kind == REC_KIND_CLIENT;
    if (r->client && world) {
        fprintf(stderr, "keel-play: %s: a client recording: diff compares scene recordings\n", file);
        kp_run_close(r);
        return REC_EXIT_BAD_FILE;
    }
    if (!world) {
        int rc = replay_level_load(file, r->h, level_override, &r->lv, NULL);
        if (rc != REC_EXIT_MATCH) {
            kp_run_close(r);
            return rc;
        }
        world = r->lv.world;
        level = &r->lv.level;
    }
    r->world = world;
    r->level = level;
    r->markers = calloc(KP_MAX_MARKERS, sizeof *r->markers);
    if (r->client) {
        int rc = r->markers ? kp_run_client_open(r) : REC_EXIT_BAD_FILE;
        if (rc != 0)
            kp_run_close(r);
        return rc;
    }
    r->scene = r->markers ? rec_resim_scene_create(r->h, world, &err) : NULL;
    if (!r->scene) {
        if (r->markers)
            replay_print_error(file, &err);
        else
            fputs("keel-play: out of memory\n", stderr);
        kp_run_close(r);
        return REC_EXIT_BAD_FILE;
    }
    r->view = r->scene;
    uint32_t tick = 0;
    const sim_char_state *states = NULL;
    uint32_t count = 0;
    if (!rec_file_initial(r->f, &tick, &states, &count)) {
        fprintf(stderr, "keel-play: %s: no initial state\n", file);
        kp_run_close(r);
        return REC_EXIT_BAD_FILE;
    }
    r->first = tick;
    r->last = tick + r->info.tick_count;
    if (!scan_markers(r) || !kp_run_seek(r, r->first)) {
        kp_run_close(r);
        return REC_EXIT_BAD_FILE;
    }
    r->substitutes_marked = r->h->substitutes_marked || r->substitutes > 0 || strcmp(r->h->source, "keel-server") != 0;
    if (!r->substitutes_marked)
        fprintf(stderr,
                "keel-play: %s: note: this keel-server recording predates substitution marks (its server "
                "recorded a substitute as the tick's own command), so no substitution markers are shown and "
                "\"substitutes\" is not a count\n",
                file);
    if (!r->info.complete)
        fprintf(stderr, "keel-play: %s: truncated at offset %llu (no end chunk): showing the %u readable ticks\n", file,
                (unsigned long long)r->info.truncated_at, (unsigned)r->info.tick_count);
    return 0;
}

void kp_run_close(kp_run *r)
{
    kp_run_client_close(r);
    if (r->cur)
        rec_cursor_destroy(r->cur);
    if (r->scene)
        sim_scene_destroy(r->scene);
    replay_level_free(&r->lv);
    if (r->f)
        rec_file_close(r->f);
    free(r->markers);
    free(r->ids);
    memset(r, 0, sizeof *r);
}

uint32_t kp_run_tick(const kp_run *r) { return sim_scene_tick(r->view); }

// The newest keyframe at or before `tick`: its index (and *at its tick),
// or -1 for the initial state.
static int64_t keyframe_before(const kp_run *r, uint32_t tick, uint32_t *at)
{
    uint32_t ki = r->h->keyframe_interval;
    *at = r->first;
    if (ki == 0 || rec_file_keyframe_count(r->f) == 0)
        return -1;
    for (uint32_t k = tick - tick % ki; k > r->first; k -= ki) {
        int64_t i = rec_file_keyframe_at(r->f, k);
        if (i >= 0) {
            *at = k;
            return i;
        }
        if (k < ki)
            break;
    }
    return -1;
}

bool kp_run_seek(kp_run *r, uint32_t tick)
{
    if (r->client)
        return kp_run_client_seek(r, tick);
    if (tick < r->first)
        tick = r->first;
    if (tick > r->last)
        tick = r->last;
    rec_error err;
    memset(&err, 0, sizeof err);
    uint32_t at;
    int64_t k = keyframe_before(r, tick, &at);
    // Going forward with no keyframe in between: just keep stepping.
    bool restart = !r->cur || kp_run_tick(r) > tick || at > kp_run_tick(r);
    if (restart) {
        uint32_t start = 0, count = 0;
        const sim_char_state *states = NULL;
        bool ok = k >= 0 ? rec_file_keyframe(r->f, (uint32_t)k, &start, &states, &count, &err)
                         : rec_file_initial(r->f, &start, &states, &count);
        if (!ok ||
            !rec_resim_restore(r->scene, start, states, count, k >= 0 ? "a keyframe" : "the initial state", &err) ||
            !rec_resim_restore_game(r->scene, r->f, start, &err)) {
            replay_print_error(r->file, &err);
            return false;
        }
        if (r->cur)
            rec_cursor_destroy(r->cur);
        r->cur = rec_cursor_create(r->f, start, &err);
        if (!r->cur) {
            replay_print_error(r->file, &err);
            return false;
        }
    }
    while (kp_run_tick(r) < tick)
        if (!kp_run_step(r))
            return false;
    return true;
}

bool kp_run_step(kp_run *r)
{
    if (r->client)
        return kp_run_client_step(r);
    if (kp_run_tick(r) >= r->last)
        return false;
    rec_error err;
    memset(&err, 0, sizeof err);
    rec_tick t;
    if (!rec_cursor_next(r->cur, &t, &err) || !rec_resim_apply(r->scene, &t, &err)) {
        if (!err.message[0])
            snprintf(err.message, sizeof err.message, "the recording ends before tick %u", (unsigned)kp_run_tick(r));
        replay_print_error(r->file, &err);
        return false;
    }
    sim_scene_step(r->scene);
    return true;
}
