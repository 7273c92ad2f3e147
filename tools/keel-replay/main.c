// keel-replay: verify, diff and describe recordings. MIT licence, see LICENSE.
//
//   keel-replay verify FILE [--threads N] [--level PATH] [--quiet] [--json] [--partial]
//   keel-replay diff A B|--resim [--json] [--level PATH] [--threads N]
//   keel-replay info FILE [--json]
//
// Exit codes (REC_EXIT_* in rec.h): 0 match, 1 divergence, 2 usage, 3 a bad
// or unusable file (corrupt, truncated before anything useful, another
// format version, a level that is not the recorded one).
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keel_app.h"
#include "keel_game.h"
#include "keel_opt.h"
#include "replay.h"

#include <keel/net_proto.h>

static void usage(FILE *f)
{
    fputs("usage: keel-replay COMMAND [options]\n"
          "Re-simulates keel recordings in this build and compares them.\n"
          "\n"
          "  verify FILE [--threads N] [--level PATH] [--quiet] [--json] [--partial]\n"
          "      re-simulate FILE and compare every tick's hashes (and every keyframe)\n"
          "      with the recorded ones; name the first divergent tick, character and,\n"
          "      with full state (debug-mode recordings: --record-full), the field\n"
          "      A client recording (keel-client --record) is replayed call by call\n"
          "      and every confirmed state's hash compared with the recorded one\n"
          "  diff A B [--json] [--level PATH]\n"
          "      compare two recordings of the same session tick by tick; a client\n"
          "      recording and its server's: the client's confirmed hashes against the\n"
          "      server's world hashes of the same ticks\n"
          "  diff A --resim [--json] [--level PATH] [--threads N]\n"
          "      compare A with a fresh re-simulation here (verify, diff's output)\n"
          "  info FILE [--json]\n"
          "      the header, length, players, sizes and the last hash (a client\n"
          "      recording: of its last confirmed state)\n"
          "  --help\n"
          "\n"
          "  --threads N   verify keyframe-to-keyframe spans on N threads (1 to 256, default 1;\n"
          "                the result is the same for any N)\n"
          "  --level PATH  the OBJ or .map file to re-simulate on (its digest must be the\n"
          "                recorded one, or it is an error); without it the recorded path, then\n"
          "                $KEEL_LEVELS_DIR/<file name>, the first with the recorded digest\n"
          "  --game NAME|PATH  the game a recording was made with (docs/game.md): a game\n"
          "                linked into keel-replay (tag, arena) or a game library's path; a\n"
          "                recording of another game (name, version, digest) is refused\n"
          "  --quiet       verify: print only the result line\n"
          "  --json        one JSON object on stdout\n"
          "  --partial     verify: accept a truncated recording (no end chunk: a crash or a\n"
          "                copy cut short) and check its readable prefix; without it a\n"
          "                truncated recording is a bad file (exit 3) after that check\n"
          "\n"
          "exit codes:\n"
          "  0  match (verify: every tick reproduced; diff: equal as far as both go)\n"
          "  1  divergence (the first divergent tick is printed)\n"
          "  2  usage: a bad command or option\n"
          "  3  a bad file: unreadable, corrupt (the offset and chunk are named), truncated\n"
          "     (verify without --partial), another format version, or not the recorded level\n"
          "  6  --game: the game cannot be loaded (no such library or name, no keel_game_v1,\n"
          "     another ABI version, a definition keel refuses)\n"
          "  7  the recording was made with another game than --game's, or with one and\n"
          "     no --game was given\n",
          f);
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int
usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("keel-replay: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (keel-replay --help lists the options)\n", stderr);
    return REC_EXIT_USAGE;
}

typedef struct args {
    const char *command;
    const char *files[2];
    int file_count;
    bool resim;
    uint32_t threads;
    const char *level;
    const char *game;
    bool quiet, json, partial;
    bool seen_threads, seen_level, seen_game;
} args;

// --game, loaded once before any recording is opened.
static keel_game replay_game;

// Give a recording (a scene's or a client's) its game (rec_file_set_game):
// 0, or KEEL_EXIT_GAME_MISMATCH after saying why, naming both games.
static int attach_game(const char *file, rec_file *f)
{
    rec_error err;
    memset(&err, 0, sizeof err);
    if (rec_file_set_game(f, replay_game.game, &err))
        return 0;
    fprintf(stderr, "keel-replay: %s: %s\n", file, err.message);
    return KEEL_EXIT_GAME_MISMATCH;
}

// 0 to run, else an exit code (usage or help).
static int parse(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->threads = 1;
    if (argc < 2)
        return usage_error("a command is needed (verify, diff or info)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return -1;
    }
    a->command = argv[1];
    bool verify = strcmp(a->command, "verify") == 0, diff = strcmp(a->command, "diff") == 0,
         info = strcmp(a->command, "info") == 0;
    if (!verify && !diff && !info)
        return usage_error("unknown command '%s' (verify, diff or info)", a->command);
    int want = diff ? 2 : 1;
    keel_opt p; // the programs' shared parser (keel_opt.h): --name value, --name=value
    keel_opt_init(&p, "keel-replay", argc, argv, 2);
    const char *arg;
    while ((arg = keel_opt_next(&p))) {
        if (strcmp(arg, "--help") == 0) {
            usage(stdout);
            return -1;
        }
        if (diff && strcmp(arg, "--resim") == 0) {
            if (a->file_count != 1 || a->resim)
                return usage_error("%s comes in place of B: diff A --resim", arg);
            a->resim = true;
            a->file_count++;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (a->file_count >= want)
                return usage_error("unexpected argument '%s'", arg);
            a->files[a->file_count++] = arg;
            continue;
        }
        const char *name = arg + 2;
        size_t len = strlen(name);
        const char *value = p.inline_value;
        p.inline_used = true; // a flag given a value is refused below, by name
#define IS(opt) (len == strlen(opt) && strncmp(name, opt, len) == 0)
        if (IS("quiet") || IS("json") || IS("partial")) {
            if (value)
                return usage_error("option %s takes no value", arg);
            if ((IS("quiet") || IS("partial")) && !verify)
                return usage_error("%s applies to verify only", arg);
            bool *flag = IS("quiet") ? &a->quiet : IS("json") ? &a->json : &a->partial;
            if (*flag && !IS("quiet"))
                return usage_error("option %s is given twice", arg);
            *flag = true;
            continue;
        }
        if (!IS("threads") && !IS("level") && !IS("game"))
            return usage_error("unknown option '%s'", arg);
        if (info && !IS("game"))
            return usage_error("info takes no option %s (only --json and --game)", arg);
        if (!value && !(value = keel_opt_value(&p)))
            return REC_EXIT_USAGE; // "keel-replay: --x: needs a value"
        if (IS("game")) {
            if (a->seen_game)
                return usage_error("option %s is given twice", arg);
            a->seen_game = true;
            if (!value[0])
                return usage_error("--game needs a game's name or a library's path");
            a->game = value;
            continue;
        }
        if (IS("threads")) {
            if (a->seen_threads)
                return usage_error("option %s is given twice", arg);
            a->seen_threads = true;
            if (!keel_app_parse_u32(value, 1, 256, &a->threads))
                return usage_error("bad --threads '%s' (1 to 256)", value);
        } else {
            if (a->seen_level)
                return usage_error("option %s is given twice", arg);
            a->seen_level = true;
            if (!value[0])
                return usage_error("--level needs a path");
            a->level = value;
        }
#undef IS
    }
    if (a->file_count < want)
        return diff ? usage_error("diff needs two recordings (A B, or A --resim)")
                    : usage_error("%s needs a recording", a->command);
    if (diff && a->seen_threads && !a->resim)
        return usage_error("--threads applies to verify and diff --resim");
    return 0;
}

// A progress bar on stderr when it is a terminal and the file is long.
typedef struct progress {
    const char *file;
    uint64_t last_percent;
} progress;

static void progress_show(void *ctx, uint64_t done, uint64_t total)
{
    progress *p = ctx;
    uint64_t percent = total ? done * 100u / total : 100u;
    if (percent == p->last_percent)
        return;
    p->last_percent = percent;
    char bar[41];
    uint64_t filled = percent * 40u / 100u;
    for (uint64_t i = 0; i < 40; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[40] = '\0';
    fprintf(stderr, "\rkeel-replay: %s [%s] %3" PRIu64 "%%", p->file, bar, percent);
    fflush(stderr);
}

static void truncated_note(const char *file, const rec_info *in)
{
    if (!in->complete)
        fprintf(stderr,
                "keel-replay: %s: truncated at offset %" PRIu64 " (no end chunk): checking the %u readable ticks\n",
                file, in->truncated_at, (unsigned)in->tick_count);
}

// verify: a recording without its end chunk is not a whole recording. Its
// readable prefix has been checked (rc); unless --partial, that is a bad file.
static int truncated_verdict(const args *a, const char *file, const rec_info *in, int rc)
{
    if (in->complete || a->partial || rc != REC_EXIT_MATCH)
        return rc;
    fprintf(stderr,
            "keel-replay: %s: truncated at offset %" PRIu64 " of %" PRIu64 " bytes (no end chunk: a crash or a "
            "copy cut short); the readable prefix matches, but the recording is incomplete (--partial accepts "
            "it)\n",
            file, in->truncated_at, in->file_bytes);
    return REC_EXIT_BAD_FILE;
}

static int run_resim(const args *a, bool as_diff)
{
    const char *file = a->files[0];
    rec_file *f = replay_open(file);
    if (!f)
        return REC_EXIT_BAD_FILE;
    const rec_header *h = rec_file_header(f);
    rec_info in;
    rec_file_info(f, &in);
    int rc = attach_game(file, f);
    if (rc != 0) {
        rec_file_close(f);
        return rc;
    }
    if (h->kind == REC_KIND_CLIENT) {
        rc = as_diff ? (fprintf(stderr, "keel-replay: diff --resim: %s is a client recording; use verify\n", file),
                        REC_EXIT_USAGE)
                     : truncated_verdict(a, file, &in, replay_client_verify(file, f, a->level, a->json));
        rec_file_close(f);
        return rc;
    }
    replay_level lv;
    rc = replay_level_load(file, h, a->level, &lv, NULL);
    if (rc != REC_EXIT_MATCH) {
        rec_file_close(f);
        return rc;
    }
    truncated_note(file, &in);
    if (h->behaviour_version != NET_BEHAVIOUR_VERSION)
        fprintf(stderr,
                "keel-replay: %s: note: recorded by behaviour version %u, this build is version %u: the "
                "simulation changed on purpose between them, so a divergence is expected (docs/golden.md)\n",
                file, (unsigned)h->behaviour_version, (unsigned)NET_BEHAVIOUR_VERSION);

    rec_verify_config cfg = rec_default_verify_config();
    cfg.threads = a->threads;
    progress p = {file, UINT64_MAX};
    bool bar = !a->quiet && !a->json && isatty(STDERR_FILENO) && in.tick_count >= 20000u;
    if (bar) {
        cfg.progress = progress_show;
        cfg.progress_ctx = &p;
    }
    rec_diff_report *r = malloc(sizeof *r);
    if (!r) {
        fputs("keel-replay: out of memory\n", stderr);
        replay_level_free(&lv);
        rec_file_close(f);
        return REC_EXIT_BAD_FILE;
    }
    rec_verify_stats st;
    rec_error err;
    memset(&err, 0, sizeof err);
    // Emscripten has no process CPU clock: the figure is then left out.
    struct timespec cpu0, cpu1;
    bool have_cpu = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0) == 0;
    rc = rec_diff_resim(f, lv.world, &cfg, r, &st, &err);
    have_cpu = have_cpu && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1) == 0;
    double cpu_s = have_cpu ? (double)(cpu1.tv_sec - cpu0.tv_sec) + (double)(cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9 : 0.0;
    if (bar)
        fputs("\r\033[K", stderr);
    const char *name_b = as_diff ? "this build" : "re-simulated";
    const char *name_a = as_diff ? file : "recorded";
    if (rc == REC_EXIT_BAD_FILE) {
        replay_print_error(file, &err);
    } else if (a->json) {
        rec_diff_print_json(stdout, r, name_a, name_b);
    } else if (as_diff || rc == REC_EXIT_DIVERGED) {
        if (!as_diff)
            printf("keel-replay: %s: ", file);
        rec_diff_print_text(stdout, r, name_a, name_b);
    } else {
        printf("keel-replay: %s: match: %u ticks, %" PRIu64 " character-ticks reproduced%s; last hash %016" PRIx64 "\n",
               file, (unsigned)in.tick_count, st.character_ticks,
               in.complete ? "" : " (the readable prefix of a truncated file)", in.last_hash);
    }
    if (!a->quiet && !a->json && rc != REC_EXIT_BAD_FILE && st.elapsed_ns > 0) {
        double s = (double)st.elapsed_ns * 1e-9;
        // Wall time for the user; CPU time gives the rate per core, which
        // other work on the machine does not dilute.
        fprintf(stderr,
                "keel-replay: %" PRIu64 " ticks, %" PRIu64 " character-ticks in %.3f s on %u thread%s: %.0f "
                "character-ticks/s",
                st.ticks, st.character_ticks, s, (unsigned)st.threads, st.threads == 1 ? "" : "s",
                (double)st.character_ticks / s);
        if (cpu_s > 0)
            fprintf(stderr, " (%.0f per CPU-second)", (double)st.character_ticks / cpu_s);
        fputc('\n', stderr);
    }
    free(r);
    replay_level_free(&lv);
    rec_file_close(f);
    return as_diff ? rc : truncated_verdict(a, file, &in, rc);
}

static int run_diff(const args *a)
{
    if (a->resim)
        return run_resim(a, true);
    rec_file *fa = replay_open(a->files[0]);
    if (!fa)
        return REC_EXIT_BAD_FILE;
    rec_file *fb = replay_open(a->files[1]);
    if (!fb) {
        rec_file_close(fa);
        return REC_EXIT_BAD_FILE;
    }
    const rec_header *ha = rec_file_header(fa), *hb = rec_file_header(fb);
    int rc = attach_game(a->files[0], fa);
    rc = rc ? rc : attach_game(a->files[1], fb);
    if (rc == 0 && (ha->kind == REC_KIND_CLIENT || hb->kind == REC_KIND_CLIENT)) {
        bool a_client = ha->kind == REC_KIND_CLIENT;
        rc = replay_client_diff(a->files[a_client ? 0 : 1], a_client ? fa : fb, a->files[a_client ? 1 : 0],
                                a_client ? fb : fa, a->json);
        rec_file_close(fa);
        rec_file_close(fb);
        return rc;
    }
    if (rc != 0) {
        rec_file_close(fa);
        rec_file_close(fb);
        return rc;
    }
    rec_info ia, ib;
    rec_file_info(fa, &ia);
    rec_file_info(fb, &ib);
    // The level is needed only to re-simulate a side that has no keyframe
    // at the divergent tick; without it diff still compares everything
    // recorded. A level that is found but differs is refused all the same.
    replay_level lv;
    bool missing = false;
    rc = replay_level_load(a->files[0], ha, a->level, &lv, &missing);
    if (rc != REC_EXIT_MATCH) {
        rec_file_close(fa);
        rec_file_close(fb);
        return rc;
    }
    truncated_note(a->files[0], &ia);
    truncated_note(a->files[1], &ib);
    rec_diff_report *r = malloc(sizeof *r);
    rec_error err;
    memset(&err, 0, sizeof err);
    rc = r ? rec_diff(fa, fb, lv.world, r, &err) : REC_EXIT_BAD_FILE;
    if (!r)
        fputs("keel-replay: out of memory\n", stderr);
    else if (rc == REC_EXIT_BAD_FILE)
        replay_print_error(strstr(err.message, "(B)") ? a->files[1] : a->files[0], &err);
    else if (a->json)
        rec_diff_print_json(stdout, r, a->files[0], a->files[1]);
    else
        rec_diff_print_text(stdout, r, a->files[0], a->files[1]);
    free(r);
    replay_level_free(&lv);
    rec_file_close(fa);
    rec_file_close(fb);
    return rc;
}

static int run_info(const args *a)
{
    rec_file *f = replay_open(a->files[0]);
    if (!f)
        return REC_EXIT_BAD_FILE;
    int rc = a->game ? attach_game(a->files[0], f) : 0;
    rc = rc ? rc : replay_info(a->files[0], f, a->json);
    rec_file_close(f);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    int rc = parse(argc, argv, &a);
    if (rc == -1)
        return REC_EXIT_MATCH;
    if (rc != 0)
        return rc;
    if (a.game) {
        rc = keel_game_load_or_report("keel-replay", a.game, &replay_game);
        if (rc != 0)
            return rc;
        if (!a.quiet && !a.json)
            keel_game_describe("keel-replay", &replay_game);
    }
    if (strcmp(a.command, "verify") == 0)
        rc = run_resim(&a, false);
    else if (strcmp(a.command, "diff") == 0)
        rc = run_diff(&a);
    else
        rc = run_info(&a);
    keel_game_unload(&replay_game);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("keel-replay: error writing the output\n", stderr);
        return rc == REC_EXIT_MATCH ? REC_EXIT_BAD_FILE : rc;
    }
    return rc;
}
