// keel-replay: rebuilding the level a recording names, and printing a
// reader error. keel-play builds this file too. MIT licence, see LICENSE.
//
// The digest decides: a path is only where to look first. A level whose
// digest differs from the recorded one is refused, since re-simulating on it
// would compare a different world and report divergences that are not there.
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <keel/net_proto.h>

#include "keel_app.h"
#include "replay.h"

const char *replay_program = "keel-replay";

static int build_world(const char *file, replay_level *out)
{
    sim_world_def def = sim_world_default_def();
    sim_error err;
    memset(&err, 0, sizeof err);
    out->world = sim_world_create(&out->level, &def, &err);
    if (!out->world) {
        fprintf(stderr, "%s: %s: cannot build the world of %s: %s\n", replay_program, file, out->path,
                err.message[0] ? err.message : "unknown error");
        sim_level_free(&out->level);
        sim_map_free(&out->map);
        return REC_EXIT_BAD_FILE;
    }
    return REC_EXIT_MATCH;
}

static int digest_mismatch(const char *file, const rec_header *h, const char *what, uint64_t found)
{
    fprintf(stderr,
            "%s: %s: the level %s is not the recorded one (digest %016" PRIx64 ", the recording expects "
            "%016" PRIx64 "); refusing to re-simulate on a different level\n",
            replay_program, file, what, found, h->level.digest);
    return REC_EXIT_BAD_FILE;
}

// --level given: that file and no other. It must be readable, load with the
// recorded scale and up axis, and have the recorded digest.
static int load_override(const char *file, const rec_header *h, const char *path, replay_level *out)
{
    const rec_level_ref *ref = &h->level;
    if (ref->kind != REC_LEVEL_OBJ) {
        bool builtin = ref->kind == REC_LEVEL_BUILTIN;
        if (builtin && strcmp(path, "builtin") == 0)
            return -1; // the recorded level: built as usual
        fprintf(stderr,
                "%s: %s: --level %s: the recording is of the %s level (digest %016" PRIx64
                "), not of an OBJ file; leave --level out\n",
                replay_program, file, path, builtin ? "built-in" : "generated", ref->digest);
        return REC_EXIT_BAD_FILE;
    }
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "%s: %s: --level %s: cannot read it: %s\n", replay_program, file, path, strerror(errno));
        return REC_EXIT_BAD_FILE;
    }
    const char *scale = ref->scale[0] ? ref->scale : "1";
    char up = ref->up_axis == 'z' ? 'z' : 'y', err[600];
    if (keel_app_load_level_map(path, scale, up, &out->level, &out->map, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s: --level %s: %s\n", replay_program, file, path, err);
        return REC_EXIT_BAD_FILE;
    }
    uint64_t d = net_level_digest(&out->level);
    if (d != ref->digest) {
        sim_level_free(&out->level);
        sim_map_free(&out->map);
        fprintf(stderr,
                "%s: %s: --level %s is not the recorded level: its digest is %016" PRIx64
                " (scale %s, up %c), the recording's %016" PRIx64 " (recorded path %s)\n",
                replay_program, file, path, d, scale, up, ref->digest, ref->path[0] ? ref->path : "(none)");
        return REC_EXIT_BAD_FILE;
    }
    snprintf(out->path, sizeof out->path, "%.4000s", path);
    return build_world(file, out);
}

int replay_level_load(const char *file, const rec_header *h, const char *override, replay_level *out, bool *missing)
{
    memset(out, 0, sizeof *out);
    if (missing)
        *missing = false;
    const rec_level_ref *ref = &h->level;
    if (override && override[0]) {
        int rc = load_override(file, h, override, out);
        if (rc >= 0)
            return rc;
    }
    switch (ref->kind) {
    case REC_LEVEL_BUILTIN:
    case REC_LEVEL_GENERATED: {
        bool builtin = ref->kind == REC_LEVEL_BUILTIN;
        int rc = builtin ? sim_level_builtin(&out->level)
                         : sim_level_generate(&out->level, ref->generate_triangles, ref->generate_seed);
        if (rc != 0) {
            fprintf(stderr, "%s: %s: cannot build the %s level (out of memory)\n", replay_program, file,
                    builtin ? "built-in" : "generated");
            return REC_EXIT_BAD_FILE;
        }
        if (builtin)
            snprintf(out->path, sizeof out->path, "builtin");
        else
            snprintf(out->path, sizeof out->path, "generated (%u triangles, seed %u)",
                     (unsigned)ref->generate_triangles, (unsigned)ref->generate_seed);
        uint64_t d = net_level_digest(&out->level);
        if (d != ref->digest) {
            sim_level_free(&out->level);
            return digest_mismatch(file, h, out->path, d);
        }
        return build_world(file, out);
    }
    case REC_LEVEL_OBJ: break;
    default:
        fprintf(stderr, "%s: %s: unknown level kind %d in the header\n", replay_program, file, (int)ref->kind);
        return REC_EXIT_BAD_FILE;
    }

    // OBJ: candidates in order; the first that loads with the right digest.
    char candidates[3][4200];
    int n = 0;
    if (ref->path[0])
        snprintf(candidates[n++], sizeof candidates[0], "%s", ref->path);
    const char *dir = getenv("KEEL_LEVELS_DIR");
    if (dir && dir[0] && ref->path[0]) {
        snprintf(candidates[n++], sizeof candidates[0], "%s/%s", dir, keel_app_path_base(ref->path));
    }
    const char *scale = ref->scale[0] ? ref->scale : "1";
    char up = ref->up_axis == 'z' ? 'z' : 'y';
    bool any = false;
    uint64_t wrong = 0;
    const char *wrong_path = NULL;
    for (int i = 0; i < n; i++) {
        if (access(candidates[i], R_OK) != 0)
            continue;
        // The same file under two names is loaded once.
        bool repeat = false;
        for (int k = 0; k < i; k++)
            repeat = repeat || strcmp(candidates[k], candidates[i]) == 0;
        if (repeat)
            continue;
        any = true;
        char err[600];
        sim_level level;
        sim_map map;
        memset(&level, 0, sizeof level);
        if (keel_app_load_level_map(candidates[i], scale, up, &level, &map, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s: %s\n", replay_program, file, err);
            continue;
        }
        uint64_t d = net_level_digest(&level);
        if (d != ref->digest) {
            sim_level_free(&level);
            sim_map_free(&map);
            if (!wrong_path)
                wrong_path = candidates[i], wrong = d;
            continue;
        }
        out->level = level;
        out->map = map;
        snprintf(out->path, sizeof out->path, "%.4000s", candidates[i]);
        return build_world(file, out);
    }
    if (wrong_path)
        return digest_mismatch(file, h, wrong_path, wrong);
    if (!any && missing) {
        *missing = true;
        fprintf(stderr,
                "%s: note: %s: the recorded level %s is not found (give --level PATH or set "
                "KEEL_LEVELS_DIR): a side without a keyframe at the divergent tick cannot be re-simulated\n",
                replay_program, file, ref->path[0] ? ref->path : "(no path)");
        return REC_EXIT_MATCH;
    }
    if (!any)
        fprintf(stderr,
                "%s: %s: the recorded level %s (scale %s, up %c) is not found; give it with --level "
                "PATH or set KEEL_LEVELS_DIR\n",
                replay_program, file, ref->path[0] ? ref->path : "(no path)", scale, up);
    else
        fprintf(stderr, "%s: %s: no level could be loaded\n", replay_program, file);
    return REC_EXIT_BAD_FILE;
}

void replay_level_free(replay_level *l)
{
    if (l->world)
        sim_world_destroy(l->world);
    sim_level_free(&l->level);
    sim_map_free(&l->map);
    memset(l, 0, sizeof *l);
}

void replay_print_error(const char *file, const rec_error *err)
{
    fprintf(stderr, "%s: %s: ", replay_program, file);
    // The reader's messages name the chunk and offset themselves.
    bool named = err->chunk[0] && strstr(err->message, err->chunk) && strstr(err->message, "offset");
    if (!named && err->chunk[0])
        fprintf(stderr, "offset %" PRIu64 " (chunk %s): ", err->offset, err->chunk);
    else if (!named && err->offset > 0)
        fprintf(stderr, "offset %" PRIu64 ": ", err->offset);
    fprintf(stderr, "%s\n", err->message[0] ? err->message : "unreadable");
}

rec_file *replay_open(const char *path)
{
    // The reader says only "cannot open": the reason comes from fopen here.
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "%s: cannot open %s: %s\n", replay_program, path, strerror(errno));
        return NULL;
    }
    fclose(fp);
    rec_error err;
    memset(&err, 0, sizeof err);
    rec_file *f = rec_file_open(path, &err);
    if (!f)
        replay_print_error(path, &err);
    return f;
}
