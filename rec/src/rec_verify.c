// keel recordings: verify, re-simulating a recording in this build. MIT
// licence, see LICENSE.
//
// The recording is cut at keyframes into spans. A span restores its starting
// state (the initial state or a keyframe, exactly), then for every tick
// applies the recorded leaves, joins and commands, steps, and compares the
// world hash and every character's 16-bit hash; where the recording holds a
// keyframe, the whole re-simulated state is compared with it too. One thread
// runs a single span over everything; with more, each thread takes the next
// span (in order) into its own scene and cursor, and the earliest finding
// wins. Because a keyframe is checked equal to the re-simulated state before
// anything after it counts, starting there gives what one thread would
// have: the result is the same for any number of threads.
//
// Scenes and cursors are made before the ticks run (a cursor per span);
// nothing is allocated per tick.
#define _POSIX_C_SOURCE 200809L // clock_gettime, nanosleep

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec_resim.h"

#ifndef __STDC_NO_ATOMICS__
#include <stdatomic.h>
#define VERIFY_MAX_THREADS 256u
#else
// A compiler without <stdatomic.h> (tcc): verify runs on the calling thread
// only, where plain variables do what the atomics do.
typedef unsigned atomic_uint;
typedef uint_fast64_t atomic_uint_fast64_t;
#define atomic_init(p, v) (*(p) = (v))
#define atomic_load(p) (*(p))
#define atomic_load_explicit(p, order) (*(p))
#define atomic_fetch_add(p, v) ((*(p) += (v)) - (v))
#define atomic_compare_exchange_weak(p, expected, v) \
    (*(p) == *(expected) ? (*(p) = (v), true) : (*(expected) = *(p), false))
#define VERIFY_MAX_THREADS 1u
#endif

rec_verify_config rec_default_verify_config(void)
{
    rec_verify_config c = {1, NULL, NULL};
    return c;
}

typedef struct vspan {
    uint32_t start, end; ///< ticks start .. end - 1 are verified
    int64_t keyframe;    ///< keyframe index holding the state at `start`; -1: the initial state
} vspan;

typedef struct vshared {
    rec_file *f;
    const rec_header *h;
    const sim_world *world;
    uint32_t end_tick; ///< one past the last readable tick
    vspan *spans;
    uint32_t span_count;
    atomic_uint next_span;
    atomic_uint stop_tick; ///< earliest tick with a finding so far (UINT32_MAX: none)
    atomic_uint_fast64_t ticks_done;
    atomic_uint finished;
    // Single-threaded runs report progress from inside the loop (set before
    // any thread starts and only then; threads leave it NULL).
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    uint64_t ticks_total;
} vshared;

typedef struct vworker {
    vshared *sh;
    sim_scene *scene;
    int rc;        ///< REC_EXIT_MATCH until a finding
    uint32_t tick; ///< the finding's tick
    rec_diff_report report;
    rec_error err;
    uint64_t ticks, char_ticks;
    pthread_t thread;
    bool started;
} vworker;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void note_stop(vshared *sh, uint32_t tick)
{
    unsigned cur = atomic_load(&sh->stop_tick);
    while (tick < cur && !atomic_compare_exchange_weak(&sh->stop_tick, &cur, tick)) {
    }
}

static void fail_at(vworker *w, uint32_t tick, const rec_error *err)
{
    w->rc = REC_EXIT_BAD_FILE;
    w->tick = tick;
    w->err = *err;
    if (!w->err.message[0])
        rec_fail(&w->err, 0, "", "cannot read the recording at tick %u", (unsigned)tick);
    note_stop(w->sh, tick);
}

static bool states_equal(const sim_char_state *a, const sim_char_state *b)
{
#define V3EQ(u, v) ((u).x == (v).x && (u).y == (v).y && (u).z == (v).z)
    return a->id == b->id && a->flags == b->flags && a->move_type == b->move_type && a->ground == b->ground &&
           V3EQ(a->position, b->position) && V3EQ(a->velocity, b->velocity) &&
           V3EQ(a->ground_normal, b->ground_normal) && V3EQ(a->ground_velocity, b->ground_velocity) &&
           a->ground_object == b->ground_object && a->stuck_ticks == b->stuck_ticks && a->yaw == b->yaw &&
           a->pitch == b->pitch;
#undef V3EQ
}

static bool scene_equals(const sim_scene *sc, const sim_char_state *states, uint32_t count)
{
    uint32_t n;
    const sim_char_state *c = sim_scene_characters(sc, &n);
    if (n != count)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!states_equal(&c[i], &states[i]))
            return false;
    return true;
}

// Distinct field names among the report's values, for the hint.
static void field_list(const rec_diff_report *r, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t used = 0;
    for (uint32_t i = 0; i < r->value_count; i++) {
        const char *name = rec_value_name(&r->values[i]);
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = strcmp(rec_value_name(&r->values[j]), name) == 0;
        if (seen)
            continue;
        int k = snprintf(buf + used, size - used, "%s%s", used ? " " : "", name);
        if (k < 0 || (size_t)k >= size - used)
            break;
        used += (size_t)k;
    }
}

// The re-simulated state after tick `tick` differs from the recording: by
// the hashes in `t` (when given), or else by the keyframe after it. Fill the
// report with the characters and, where the recording holds full state, the
// fields. May decode on past the span (for the hint). `check_from`: the
// first tick of a block whose 16-bit hashes all matched but whose 64-bit
// check does not (UINT32_MAX otherwise); `tick` is then the block's last.
static void diverged(vworker *w, rec_cursor *c, uint32_t tick, uint64_t recorded_hash, const rec_tick *t,
                     uint32_t check_from)
{
    vshared *sh = w->sh;
    rec_diff_report *r = &w->report;
    bool keyframe_only = t == NULL;
    memset(r, 0, sizeof *r);
    r->kind = REC_DIFF_STATE;
    r->div.tick = tick;
    r->hash_a = recorded_hash;
    r->hash_b = sim_scene_hash(w->scene);
    uint32_t differ = 0;
    if (t) {
        bool world_differs = false;
        differ = rec_resim_compare(sh->f, w->scene, t, NULL, &world_differs, r->characters, &r->character_count);
    }
    r->div.characters_differing = differ;
    r->div.character = r->character_count > 0 ? r->characters[0] : 0;
    w->rc = REC_EXIT_DIVERGED;
    w->tick = tick;
    note_stop(sh, tick);

    char extra[400] = "";
    if (check_from != UINT32_MAX) {
        // Said first, since it qualifies the tick named.
        snprintf(extra, sizeof extra,
                 "the 16-bit hashes of ticks %u to %u match, but their block's 64-bit check does not: the first "
                 "divergent tick is one of these; ",
                 (unsigned)check_from, (unsigned)tick);
    }
    size_t lead = strlen(extra);
    uint32_t after = tick + 1u;
    rec_error err = {0};
    int64_t kf = after <= sh->end_tick ? rec_resim_keyframe_at(sh->f, after) : -1;
    uint32_t kf_tick = 0, kf_count = 0;
    const sim_char_state *kf_states = NULL;
    if (kf >= 0 && rec_cursor_keyframe(c, (uint32_t)kf, &kf_tick, &kf_states, &kf_count, &err)) {
        uint32_t n;
        const sim_char_state *now = sim_scene_characters(w->scene, &n);
        uint32_t fields_differ = rec_report_add_states(r, kf_states, kf_count, now, n);
        uint32_t game_differ = rec_verify_game_values(r, sh->f, sh->world, after, w->scene);
        if (game_differ && differ == 0 && !keyframe_only) {
            // The characters' hashes match: the game's state is what differs.
            rec_report_game_characters(r, 0);
            snprintf(extra + lead, sizeof extra - lead, "the game's state differs (the characters' own match)");
        }
        r->values_exact = true;
        r->values_tick = after;
        snprintf(r->values_source, sizeof r->values_source, "the recording's keyframe at tick %u", (unsigned)after);
        if (keyframe_only) {
            r->div.characters_differing = fields_differ;
            uint32_t listed = 0;
            for (uint32_t i = 0; i < r->value_count && listed < REC_DIFF_MAX_CHARACTERS; i++)
                if (listed == 0 || r->characters[listed - 1] != r->values[i].character)
                    r->characters[listed++] = r->values[i].character;
            r->character_count = listed;
            r->div.character = listed ? r->characters[0] : 0;
            snprintf(extra + lead, sizeof extra - lead,
                     "the recorded hashes match, but the keyframe at tick %u differs from the re-simulated state",
                     (unsigned)after);
        } else if (r->value_count == 0) {
            snprintf(extra + lead, sizeof extra - lead,
                     "yet the keyframe at tick %u equals the re-simulated state: the recorded hashes disagree "
                     "with the recording's own keyframe",
                     (unsigned)after);
        } else if (differ == 0 && check_from == UINT32_MAX && !game_differ) {
            snprintf(extra + lead, sizeof extra - lead,
                     "only the world hash differs: the 16-bit character hashes collided");
        }
    } else {
        if (differ == 0 && check_from == UINT32_MAX)
            snprintf(extra + lead, sizeof extra - lead,
                     rec_file_header(sh->f)->game_name[0]
                         ? "only the world hash differs (the characters' hashes match: the game's state, or a "
                           "collision); "
                         : "only the world hash differs (the 16-bit character hashes collided); ");
        // No full state right after the tick: go on to the next keyframe and
        // name what differs there, as a hint.
        uint32_t next = rec_resim_next_keyframe(sh->f, after + 1u, sh->end_tick);
        bool reached = next != UINT32_MAX;
        rec_tick u;
        while (reached && sim_scene_tick(w->scene) < next) {
            if (!rec_cursor_next(c, &u, &err) || !rec_resim_apply(w->scene, &u, &err)) {
                reached = false;
                break;
            }
            sim_scene_step(w->scene);
        }
        int64_t idx = reached ? rec_resim_keyframe_at(sh->f, next) : -1;
        if (idx >= 0 && rec_cursor_keyframe(c, (uint32_t)idx, &kf_tick, &kf_states, &kf_count, &err)) {
            uint32_t n;
            const sim_char_state *now = sim_scene_characters(w->scene, &n);
            rec_report_add_states(r, kf_states, kf_count, now, n);
            rec_verify_game_values(r, sh->f, sh->world, next, w->scene);
            r->values_exact = false;
            r->values_tick = next;
            snprintf(r->values_source, sizeof r->values_source, "the recording's next keyframe (tick %u), a hint only",
                     (unsigned)next);
            char names[200];
            field_list(r, names, sizeof names);
            size_t used = strlen(extra);
            if (names[0])
                snprintf(extra + used, sizeof extra - used,
                         "naming the field needs a debug-mode recording (keyframe interval 1: --record-full); at "
                         "the next keyframe (tick %u) these differ: %s",
                         (unsigned)next, names);
            else
                snprintf(extra + used, sizeof extra - used,
                         "naming the field needs a debug-mode recording (keyframe interval 1: --record-full); at "
                         "the next keyframe (tick %u) the states are equal again (the difference died out)",
                         (unsigned)next);
        } else {
            size_t used = strlen(extra);
            snprintf(extra + used, sizeof extra - used,
                     "naming the field needs a debug-mode recording (keyframe interval 1: --record-full); no "
                     "keyframe follows to hint at it");
        }
    }
    rec_report_summarize(r, "recorded", "re-simulated", extra);
}

static void run_span(vworker *w, const vspan *sp)
{
    vshared *sh = w->sh;
    rec_error err = {0};
    rec_cursor *c = rec_cursor_create(sh->f, sp->start, &err);
    if (!c) {
        fail_at(w, sp->start, &err);
        return;
    }
    uint32_t tick = 0, count = 0;
    const sim_char_state *states = NULL;
    bool ok = sp->keyframe < 0 ? rec_file_initial(sh->f, &tick, &states, &count)
                               : rec_cursor_keyframe(c, (uint32_t)sp->keyframe, &tick, &states, &count, &err);
    if (!ok) {
        if (!err.message[0])
            rec_fail(&err, 0, "INIT", "the recording holds no initial state");
        fail_at(w, sp->start, &err);
        goto done;
    }
    if (tick != sp->start) {
        rec_fail(&err, 0, sp->keyframe < 0 ? "INIT" : "KEYF", "the state to start from is of tick %u, not %u",
                 (unsigned)tick, (unsigned)sp->start);
        fail_at(w, sp->start, &err);
        goto done;
    }
    if (!rec_resim_restore(w->scene, tick, states, count, sp->keyframe < 0 ? "the initial state" : "a keyframe",
                           &err)) {
        snprintf(err.chunk, sizeof err.chunk, "%s", sp->keyframe < 0 ? "INIT" : "KEYF");
        fail_at(w, sp->start, &err);
        goto done;
    }
    if (!rec_resim_restore_game(w->scene, sh->f, tick, &err)) {
        fail_at(w, sp->start, &err);
        goto done;
    }

    uint32_t next_kf = rec_resim_next_keyframe(sh->f, sp->start + 1u, sp->end);
    uint64_t pending = 0, check = 0;
    uint32_t block_first = sp->start;
    for (uint32_t at = sp->start; at < sp->end; at++) {
        if ((at & 63u) == 0 && atomic_load_explicit(&sh->stop_tick, memory_order_relaxed) < at)
            break; // something earlier was found: this span no longer counts
        rec_tick t;
        if (!rec_cursor_next(c, &t, &err)) {
            if (err.message[0])
                fail_at(w, at, &err);
            break; // the readable end
        }
        if (!rec_resim_apply(w->scene, &t, &err)) {
            snprintf(err.chunk, sizeof err.chunk, "TBLK");
            fail_at(w, at, &err);
            break;
        }
        sim_scene_step(w->scene);
        w->ticks++;
        w->char_ticks += t.char_count;
        if (t.block_start)
            block_first = t.tick;
        bool check_only = false;
        if (rec_resim_differs(sh->f, w->scene, &t, &check, &check_only)) {
            diverged(w, c, t.tick, t.world_hash, &t, check_only ? block_first : UINT32_MAX);
            break;
        }
        uint64_t recorded_hash = t.world_hash;
        if (at + 1u == next_kf) {
            // A keyframe: the whole state must be the re-simulated one. (The
            // cursor's tick arrays are not used past this point.)
            int64_t idx = rec_resim_keyframe_at(sh->f, next_kf);
            uint32_t kt, kn;
            const sim_char_state *ks;
            if (idx < 0 || !rec_cursor_keyframe(c, (uint32_t)idx, &kt, &ks, &kn, &err)) {
                fail_at(w, next_kf, &err);
                break;
            }
            if (!scene_equals(w->scene, ks, kn)) {
                diverged(w, c, at, recorded_hash, NULL, UINT32_MAX);
                break;
            }
            next_kf = rec_resim_next_keyframe(sh->f, next_kf + 1u, sp->end);
        }
        if (++pending == 256) {
            atomic_fetch_add(&sh->ticks_done, pending);
            pending = 0;
            if (sh->progress)
                sh->progress(sh->progress_ctx, atomic_load(&sh->ticks_done), sh->ticks_total);
        }
    }
    atomic_fetch_add(&sh->ticks_done, pending);
done:
    rec_cursor_destroy(c);
}

static void *worker_main(void *arg)
{
    vworker *w = arg;
    vshared *sh = w->sh;
    for (;;) {
        unsigned i = atomic_fetch_add(&sh->next_span, 1u);
        if (i >= sh->span_count)
            break;
        if (sh->spans[i].start > atomic_load(&sh->stop_tick))
            break; // spans come in order: every later one starts later still
        run_span(w, &sh->spans[i]);
        if (w->rc != REC_EXIT_MATCH)
            break;
    }
    atomic_fetch_add(&sh->finished, 1u);
    return NULL;
}

// Cut [first, end) at keyframes into spans of about `target` ticks.
static uint32_t make_spans(const rec_file *f, uint32_t first, uint32_t end, uint64_t target, vspan *out,
                           uint32_t capacity)
{
    uint32_t n = 0;
    vspan cur = {first, end, -1};
    if (target > 0 && capacity > 1 && end > first + 1u) {
        for (uint32_t k = rec_resim_next_keyframe(f, first + 1u, end - 1u); k != UINT32_MAX;
             k = rec_resim_next_keyframe(f, k + 1u, end - 1u)) {
            if ((uint64_t)(k - cur.start) < target || n + 2 > capacity)
                continue;
            cur.end = k;
            out[n++] = cur;
            cur = (vspan){k, end, rec_resim_keyframe_at(f, k)};
        }
    }
    out[n++] = cur;
    return n;
}

// The calling thread while workers run: report progress now and then.
static void progress_wait(vshared *sh, uint32_t workers, const rec_verify_config *cfg)
{
    while (atomic_load(&sh->finished) < workers) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (cfg->progress)
            cfg->progress(cfg->progress_ctx, atomic_load(&sh->ticks_done), sh->ticks_total);
    }
}

int rec_diff_resim(rec_file *f, const sim_world *world, const rec_verify_config *config, rec_diff_report *report,
                   rec_verify_stats *stats, rec_error *err)
{
    rec_verify_config cfg = config ? *config : rec_default_verify_config();
    rec_error local_err;
    if (!err)
        err = &local_err;
    memset(err, 0, sizeof *err);
    memset(report, 0, sizeof *report);
    if (stats)
        memset(stats, 0, sizeof *stats);
    const rec_header *h = rec_file_header(f);
    if (h->kind != REC_KIND_SCENE)
        return rec_fail(err, 0, "HEAD", "not a scene recording (kind %d): verify re-simulates scenes only",
                        (int)h->kind);
    rec_info info;
    rec_file_info(f, &info);
    report->ticks_a = report->ticks_b = info.tick_count;
    uint32_t first = info.first_tick;
    uint64_t end64 = (uint64_t)first + info.tick_count;
    if (end64 > UINT32_MAX)
        return rec_fail(err, 0, "INIT", "ticks run past 2^32 - 1");
    uint32_t end = (uint32_t)end64;

    uint32_t threads = cfg.threads < 1 ? 1 : (cfg.threads > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : cfg.threads);
    uint32_t capacity = threads > 1 ? threads * 4u + 2u : 1u;
    uint64_t target = threads > 1 ? (info.tick_count + threads * 4u - 1u) / (threads * 4u) : 0;
    vspan *spans = calloc(capacity, sizeof *spans);
    vshared sh = {0};
    sh.f = f;
    sh.h = h;
    sh.world = world;
    sh.end_tick = end;
    sh.ticks_total = info.tick_count;
    atomic_init(&sh.next_span, 0u);
    atomic_init(&sh.stop_tick, UINT32_MAX);
    atomic_init(&sh.ticks_done, 0u);
    atomic_init(&sh.finished, 0u);
    if (!spans)
        return rec_fail(err, 0, "", "out of memory");
    sh.spans = spans;
    sh.span_count = make_spans(f, first, end, target, spans, capacity);
    uint32_t workers = threads < sh.span_count ? threads : sh.span_count;
    vworker *w = calloc(workers, sizeof *w);
    if (!w) {
        free(spans);
        return rec_fail(err, 0, "", "out of memory");
    }
    int rc = REC_EXIT_MATCH;
    for (uint32_t i = 0; i < workers; i++) {
        w[i].sh = &sh;
        w[i].scene = rec_resim_scene_create(h, world, err);
        if (!w[i].scene) {
            rc = REC_EXIT_BAD_FILE;
            break;
        }
    }

    uint64_t t0 = now_ns();
    uint32_t ran_on = 1;
    if (rc == REC_EXIT_MATCH) {
        if (workers == 1) {
            sh.progress = cfg.progress;
            sh.progress_ctx = cfg.progress_ctx;
            worker_main(&w[0]);
        } else {
            uint32_t started = 0;
            for (uint32_t i = 0; i < workers; i++) {
                if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
                    break;
                w[i].started = true;
                started++;
            }
            if (started == 0) {
                worker_main(&w[0]); // no threads to be had: this one does it all
            } else {
                ran_on = started;
                progress_wait(&sh, started, &cfg);
                for (uint32_t i = 0; i < workers; i++)
                    if (w[i].started)
                        pthread_join(w[i].thread, NULL);
            }
        }
        if (cfg.progress)
            cfg.progress(cfg.progress_ctx, atomic_load(&sh.ticks_done), sh.ticks_total);
    }
    uint64_t elapsed = now_ns() - t0;

    // The earliest finding of any worker (they cover the spans in order).
    const vworker *best = NULL;
    for (uint32_t i = 0; i < workers && rc == REC_EXIT_MATCH; i++)
        if (w[i].rc != REC_EXIT_MATCH &&
            (!best || w[i].tick < best->tick || (w[i].tick == best->tick && w[i].rc == REC_EXIT_BAD_FILE)))
            best = &w[i];
    uint64_t ticks = 0, char_ticks = 0;
    for (uint32_t i = 0; i < workers; i++) {
        ticks += w[i].ticks;
        char_ticks += w[i].char_ticks;
    }
    if (rc == REC_EXIT_MATCH && best) {
        rc = best->rc;
        if (rc == REC_EXIT_BAD_FILE) {
            *err = best->err;
        } else {
            *report = best->report;
            report->ticks_a = report->ticks_b = info.tick_count;
            report->ticks_compared = best->tick - first;
        }
    } else if (rc == REC_EXIT_MATCH) {
        report->ticks_compared = info.tick_count;
        report->hash_a = report->hash_b = info.last_hash;
        rec_report_summarize(report, "recorded", "re-simulated", "");
    }
    if (stats) {
        stats->ticks = ticks;
        stats->character_ticks = char_ticks;
        stats->elapsed_ns = elapsed;
        stats->threads = ran_on;
    }
    for (uint32_t i = 0; i < workers; i++)
        if (w[i].scene)
            sim_scene_destroy(w[i].scene);
    free(w);
    free(spans);
    return rc;
}

int rec_verify(rec_file *f, const sim_world *world, const rec_verify_config *config, rec_divergence *div,
               rec_verify_stats *stats, rec_error *err)
{
    rec_diff_report *r = malloc(sizeof *r);
    if (!r)
        return rec_fail(err, 0, "", "out of memory");
    int rc = rec_diff_resim(f, world, config, r, stats, err);
    if (div)
        *div = r->div;
    free(r);
    return rc;
}
