// keel-server: recording through the server's tick observer. MIT licence, see
// LICENSE.
//
// The observer hands each tick to a threaded rec_writer: encoding happens on
// the tick loop's thread (cheap), compression and the disk on the writer's,
// so the loop never waits on the disk. A writer that fails (the disk is full,
// it fell behind) ends the recording, never the serving. A file that exists
// is never truncated (a restarted container would lose the recording of the
// match that crashed): the name is claimed with fopen's exclusive mode "x"
// first, and a taken one gives way to STEM-N.EXT.
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <keel/sim_hash.h>

#include "keel_app.h"
#include "keel_server.h"

static void on_tick(void *ctx, const rec_tick *tick, const sim_scene *after)
{
    recorder *r = ctx;
    if (r->failed)
        return;
    if (rec_writer_tick(r->w, tick, after)) {
        r->ticks++;
        return;
    }
    r->failed = true;
    fprintf(stderr,
            "keel-server: the recording to %s failed at tick %u (see below at the end); serving on "
            "without it\n",
            r->path, tick->tick);
}

// Create r->path_buf, a file that did not exist: `path` itself or, when it
// exists, STEM-N.EXT (the extension is what follows the base name's last
// dot). False (the reason printed) when none can be created.
static bool claim_name(recorder *r, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    int stem = dot && dot != (slash ? slash + 1 : path) ? (int)(dot - path) : (int)strlen(path);
    const char *ext = path + stem;
    for (unsigned n = 0; n <= RECORDER_MAX_NAMES; n++) {
        int len = n == 0 ? snprintf(r->path_buf, sizeof r->path_buf, "%s", path)
                         : snprintf(r->path_buf, sizeof r->path_buf, "%.*s-%u%s", stem, path, n, ext);
        if (len < 0 || (size_t)len >= sizeof r->path_buf) {
            fprintf(stderr, "keel-server: cannot record to %s: the path is too long\n", path);
            return false;
        }
        FILE *f = fopen(r->path_buf, "wbx"); // C11: fails when the file exists
        if (f) {
            fclose(f);
            if (n)
                fprintf(stderr, "keel-server: %s exists (an earlier run's recording, kept): recording to %s instead\n",
                        path, r->path_buf);
            r->path = r->path_buf;
            return true;
        }
        if (errno != EEXIST) {
            fprintf(stderr, "keel-server: cannot record to %s: %s\n", r->path_buf, strerror(errno));
            return false;
        }
    }
    fprintf(stderr, "keel-server: cannot record to %s: it and its names -1 to -%u all exist\n", path,
            RECORDER_MAX_NAMES);
    return false;
}

bool recorder_start(recorder *r, const options *o, sv_server *sv)
{
    memset(r, 0, sizeof *r);
    if (!o->record)
        return true;
    r->path = o->record;
    rec_header h = rec_default_header();
    if (!sv_server_fill_header(sv, &h)) {
        fprintf(stderr, "keel-server: cannot record: the scene has more platforms or water than a recording holds\n");
        return false;
    }
    if (strcmp(o->level, "builtin") == 0) {
        h.level.kind = REC_LEVEL_BUILTIN;
    } else {
        h.level.kind = REC_LEVEL_OBJ;
        snprintf(h.level.path, sizeof h.level.path, "%s", o->level);
        snprintf(h.level.scale, sizeof h.level.scale, "%s", keel_app_level_scale(o->level, o->scale));
        h.level.up_axis = keel_app_level_up(o->level, o->up);
        if (strlen(o->level) >= sizeof h.level.path) {
            fprintf(stderr, "keel-server: cannot record: the level path is longer than %zu bytes\n",
                    sizeof h.level.path - 1);
            return false;
        }
    }
    h.keyframe_interval = o->record_full ? 1u : o->keyframe_interval;
    h.compress = !o->no_compress;
    snprintf(h.source, sizeof h.source, "keel-server");
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = true;
    rec_error err;
    memset(&err, 0, sizeof err);
    if (!claim_name(r, o->record))
        return false;
    r->w = rec_writer_open(r->path, &h, &wc, sv_server_scene(sv), &err);
    if (!r->w) {
        fprintf(stderr, "keel-server: cannot record to %s: %s\n", r->path, err.message);
        remove(r->path); // the empty file claim_name made
        return false;
    }
    sv_server_set_observer(sv, on_tick, r);
    return true;
}

bool recorder_finish(recorder *r, sv_server *sv, FILE *text)
{
    if (!r->w)
        return true;
    sv_server_set_observer(sv, NULL, NULL);
    rec_error err;
    memset(&err, 0, sizeof err);
    bool ok = rec_writer_close(r->w, &err);
    r->w = NULL;
    uint64_t hash = sim_scene_hash(sv_server_scene(sv));
    if (ok && !r->failed) {
        fprintf(text, "keel-server: recorded %" PRIu64 " ticks to %s, final tick %u, final hash %016" PRIx64 "\n",
                r->ticks, r->path, sv_server_scene_tick(sv), hash);
        return true;
    }
    fprintf(stderr,
            "keel-server: the recording to %s failed: %s (%" PRIu64 " ticks handed to the writer; final tick %u, final "
            "hash %016" PRIx64 ")\n",
            r->path, err.message[0] ? err.message : "the writer stopped", r->ticks, sv_server_scene_tick(sv), hash);
    return false;
}
