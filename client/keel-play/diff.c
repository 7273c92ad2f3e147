// keel-play: diff mode, `keel-play --diff A B`. MIT licence, see LICENSE.
//
// Both scene recordings are re-simulated side by side at the same tick, B's
// characters drawn as translucent ghosts over A's (A's flash red where B
// differs). The first divergent tick, character and field come from
// rec_diff -- what `keel-replay diff` prints -- and the view starts paused
// at the state after that tick, following that character, with the field
// and both values in the overlay. Exit code 0 whether or not they differ
// (the summary's "diverged" says); 3 for a bad recording, as keel-replay.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/rec_verify.h>

#include "kp.h"
#include "watch.h"

static const char *kind_name(rec_diff_kind k)
{
    switch (k) {
    case REC_DIFF_START: return "start";
    case REC_DIFF_EVENTS: return "events";
    case REC_DIFF_INPUTS: return "inputs";
    case REC_DIFF_STATE: return "state";
    default: return "none";
    }
}

// The type of a field by name (state fields, then "input." ones).
static rec_field_type field_type(const char *name)
{
    uint32_t n;
    const rec_field *f = rec_state_fields(&n);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0)
            return f[i].type;
    f = rec_input_fields(&n);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0 || (strncmp(name, "input.", 6) == 0 && strcmp(f[i].name, name + 6) == 0))
            return f[i].type;
    return REC_FIELD_I32;
}

static void describe(const rec_diff_report *r, kp_watch_diff *d, const char *a, const char *b)
{
    const rec_divergence *v = &r->div;
    if (!v->found) {
        snprintf(d->line, sizeof d->line, "%s and %s are equal over %u ticks", a, b, (unsigned)r->ticks_compared);
        return;
    }
    if (v->field_known) {
        char va[64], vb[64];
        rec_field_type t = field_type(v->field);
        rec_format_value(va, sizeof va, t, v->recorded);
        rec_format_value(vb, sizeof vb, t, v->other);
        snprintf(d->line, sizeof d->line, "tick %u, character %u (%u differ):\n%s %s in A vs %s in B (ghosts)",
                 (unsigned)v->tick, (unsigned)v->character, (unsigned)v->characters_differing, v->field, va, vb);
    } else {
        snprintf(d->line, sizeof d->line, "tick %u, character %u:\n%.500s", (unsigned)v->tick, (unsigned)v->character,
                 v->detail);
    }
}

// The level a header names, for messages.
static void level_text(char *out, size_t size, const rec_level_ref *l)
{
    if (l->kind == REC_LEVEL_BUILTIN)
        snprintf(out, size, "the built-in level");
    else if (l->kind == REC_LEVEL_GENERATED)
        snprintf(out, size, "a generated level (%u triangles, seed %u)", (unsigned)l->generate_triangles,
                 (unsigned)l->generate_seed);
    else
        snprintf(out, size, "%s", l->path);
}

int kp_diff_run(kp_app *app, const kp_options *opt)
{
    kp_run a, b;
    int rc = kp_run_open(&a, opt->files[0], opt->level, NULL, NULL, opt->game);
    if (rc != 0)
        return rc;
    const rec_header *hb = NULL;
    rec_error err;
    memset(&err, 0, sizeof err);
    {
        // B re-simulates on A's world when its level is the same one.
        rec_file *peek = replay_open(opt->files[1]);
        if (!peek) {
            kp_run_close(&a);
            return REC_EXIT_BAD_FILE;
        }
        hb = rec_file_header(peek);
        bool same = hb->level.digest == a.h->level.digest;
        if (!same) {
            // B's characters would be drawn on a level they never walked.
            char la[300], lb[300];
            level_text(la, sizeof la, &a.h->level);
            level_text(lb, sizeof lb, &hb->level);
            fprintf(stderr,
                    "keel-play: --diff: the recordings are of different levels (A %s: %s, digest %016llx; B %s: %s, "
                    "digest %016llx): B cannot be drawn on A's level; compare them with keel-replay diff\n",
                    opt->files[0], la, (unsigned long long)a.h->level.digest, opt->files[1], lb,
                    (unsigned long long)hb->level.digest);
            rec_file_close(peek);
            kp_run_close(&a);
            return KP_EXIT_USAGE;
        }
        rec_file_close(peek);
        rc = kp_run_open(&b, opt->files[1], NULL, a.level, a.world, opt->game);
    }
    if (rc != 0) {
        kp_run_close(&a);
        return rc;
    }
    rc = kp_run_check_follow(&a, opt->follow);
    if (rc != 0) {
        kp_run_close(&b);
        kp_run_close(&a);
        return rc;
    }
    rec_diff_report *report = calloc(1, sizeof *report);
    if (!report) {
        fputs("keel-play: out of memory\n", stderr);
        kp_run_close(&b);
        kp_run_close(&a);
        return KP_EXIT_FAILURE;
    }
    rc = rec_diff(a.f, b.f, a.world, report, &err);
    if (rc == REC_EXIT_BAD_FILE) {
        replay_print_error(strstr(err.message, "(B)") ? opt->files[1] : opt->files[0], &err);
    } else {
        kp_watch_diff d;
        memset(&d, 0, sizeof d);
        d.b = &b;
        d.found = rc == REC_EXIT_DIVERGED;
        d.tick = report->div.tick;
        d.show_tick = report->kind == REC_DIFF_START ? a.first : report->div.tick + 1u;
        d.character = report->div.character     ? report->div.character
                      : report->character_count ? report->characters[0]
                                                : 0;
        snprintf(d.kind, sizeof d.kind, "%s", kind_name(report->kind));
        describe(report, &d, opt->files[0], opt->files[1]);
        // keel-replay diff's notes (header differences), on stderr and on screen
        snprintf(d.notes, sizeof d.notes, "%s", report->notes);
        for (const char *n = report->notes; *n;) {
            size_t len = strcspn(n, "\n");
            fprintf(stderr, "keel-play: note: %.*s\n", (int)len, n);
            d.note_count++;
            n += len + (n[len] == '\n');
        }
        if (d.found)
            fprintf(stderr, "keel-play: first divergence (%s): %s\n", d.kind, report->div.detail);
        rc = kp_watch_loop(app, opt, &a, &d);
    }
    free(report);
    kp_run_close(&b);
    kp_run_close(&a);
    return rc;
}
