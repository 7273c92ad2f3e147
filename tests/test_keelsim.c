// keel tests: the keel-sim program, run as a real process. MIT licence, see LICENSE.
//
// The program is found beside this test executable (both are built into the
// same build folder), through /proc/self/exe. Every run uses the built-in
// level, so no shared files are needed.
//
// The default run's final hash is pinned (KEELSIM_DEFAULT_FINAL_HASH). When
// movement changes on purpose, regenerate it with `build/keel-sim --quiet`
// (the defaults: built-in level, 640 ticks, 8 characters, seed 1), check that
// the change is meant, and paste the new value below.
#define _POSIX_C_SOURCE 200809L // fork, kill, nanosleep, mkstemp under -std=c11

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <keel/sim_level.h>
#include <keel/sim_world.h>

#include "../tools/keel-sim/ks_common.h"
#include "test_support.h"

/// `keel-sim --quiet` with every option at its default (see above).
#define KEELSIM_DEFAULT_FINAL_HASH "44bac69839488801"

typedef keel_test_run_result run_result;

static const char *keelsim_path(void) { return keel_test_program_path("keel-sim"); }

static int temp_file(char *name, size_t size, const char *what) { return keel_test_temp_fd(name, size, what); }

// Runs keel-sim with the given arguments (NULL-terminated). With stdin_fd >= 0
// the program reads it as its standard input. With timeout_s > 0 a run still
// going after that many seconds is killed (a guard against hangs, never a
// measure of speed) and reported with timed_out set.
static run_result run_keelsim_ex(const char *const *args, int stdin_fd, int timeout_s, bool *timed_out)
{
    keel_test_run_options o = keel_test_run_default_options();
    o.stdin_fd = stdin_fd;
    o.timeout_s = timeout_s;
    run_result r = keel_test_run(keelsim_path(), args, &o);
    if (timed_out)
        *timed_out = r.timed_out;
    return r;
}

static run_result run_keelsim(const char *const *args) { return run_keelsim_ex(args, -1, 0, NULL); }

static void run_free(run_result *r) { keel_test_run_free(r); }

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

// The final_hash line's hex digits (a pointer into s), checking its form.
static const char *final_hash_of(const char *s)
{
    const char *p = strstr(s, "final_hash ");
    cr_assert(p != NULL, "no final_hash line");
    cr_assert(p == s || p[-1] == '\n', "final_hash is not at the start of a line");
    p += strlen("final_hash ");
    for (int i = 0; i < 16; i++)
        cr_assert((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'),
                  "final_hash is not 16 lowercase hex digits");
    cr_assert_eq(p[16], '\n', "final_hash line does not end after 16 digits");
    cr_assert_eq(p[17], '\0', "final_hash is not the last line");
    return p;
}

#define RUN(...) run_keelsim((const char *const[]){__VA_ARGS__, NULL})

Test(keelsim, same_seed_same_bytes)
{
    run_result a = RUN("--level", "builtin", "--ticks", "640", "--characters", "8", "--seed", "1", "--format", "jsonl");
    run_result b = RUN("--level", "builtin", "--ticks", "640", "--characters", "8", "--seed", "1", "--format", "jsonl");
    cr_assert_eq(a.exit_code, 0, "stderr: %s", a.err);
    cr_assert_eq(b.exit_code, 0, "stderr: %s", b.err);
    cr_assert_eq(a.out_len, b.out_len);
    cr_assert(memcmp(a.out, b.out, a.out_len) == 0, "two runs with the same seed differ");
    final_hash_of(a.out);
    run_free(&a);
    run_free(&b);
}

Test(keelsim, different_seed_different_hash)
{
    run_result a = RUN("--seed", "1", "--ticks", "200", "--quiet");
    run_result b = RUN("--seed", "2", "--ticks", "200", "--quiet");
    cr_assert_eq(a.exit_code, 0, "stderr: %s", a.err);
    cr_assert_eq(b.exit_code, 0, "stderr: %s", b.err);
    cr_assert_eq(count_lines(a.out), 1, "--quiet printed more than one line: %s", a.out);
    cr_assert_str_neq(final_hash_of(a.out), final_hash_of(b.out));
    run_free(&a);
    run_free(&b);
}

Test(keelsim, final_hash_same_in_every_format)
{
    run_result j = RUN("--ticks", "100", "--format", "jsonl");
    run_result c = RUN("--ticks", "100", "--format", "csv");
    run_result q = RUN("--ticks", "100", "--quiet");
    cr_assert_eq(j.exit_code, 0);
    cr_assert_eq(c.exit_code, 0);
    cr_assert_eq(q.exit_code, 0);
    cr_assert_str_eq(final_hash_of(j.out), final_hash_of(q.out));
    cr_assert_str_eq(final_hash_of(c.out), final_hash_of(q.out));
    run_free(&j);
    run_free(&c);
    run_free(&q);
}

Test(keelsim, bad_flags_exit_2_pointing_to_help)
{
    static const char *const bad[][5] = {
        {"--bogus", NULL, NULL},
        {"--ticks", "abc", NULL},
        {"--ticks", "-5", NULL},
        {"--format", "xml", NULL},
        {"--shape", "sphere", NULL},
        {"--spawn", "1,2", NULL},
        {"--spawn", "1,2,3x", NULL},
        {"--up", "x", NULL},
        {"--rate", "0", NULL},
        {"--scale", "abc", NULL},
        {"--seed", "", NULL},
        {"--ticks", NULL, NULL},
        {"stray", NULL, NULL},
        {"--quiet=1", NULL, NULL},
        {"--mode", "ghosts", NULL},
        {"--rate", "1", NULL},
        {"--rate", "1001", NULL},
        {"--platforms=yes", NULL, NULL},
        {"--characters", "100001", NULL},
        {"--input", "", NULL},
        {"--edge-guard", "x", NULL},
        {"--mode", "probes", "--input", "x.txt", NULL},
        {"--mode", "probes", "--platforms", NULL},
        {"--mode", "probes", "--edge-guard", NULL},
        {"--input", "x.txt", "--edge-guard", NULL},
        {"--shape", "cylinders", NULL},
        {"--shape", "Cylinder", NULL},
        {"--shape", "", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r = run_keelsim(bad[i]);
        cr_assert_eq(r.exit_code, 2, "%s %s: exit %d", bad[i][0], bad[i][1] ? bad[i][1] : "", r.exit_code);
        cr_assert(strstr(r.err, "keel-sim --help lists the options") != NULL && strstr(r.err, "usage:") == NULL,
                  "%s: no pointer to --help, or the whole usage, on stderr: %s", bad[i][0], r.err);
        cr_assert_eq(r.out_len, 0u, "%s: wrote to stdout", bad[i][0]);
        run_free(&r);
    }
}

Test(keelsim, help_exits_0)
{
    run_result r = RUN("--help");
    cr_assert_eq(r.exit_code, 0);
    cr_assert(strstr(r.out, "usage:") != NULL);
    run_free(&r);
}

Test(keelsim, malformed_obj_exits_1_naming_file_and_line)
{
    char name[4096];
    int fd = temp_file(name, sizeof name, "bad_obj");
    static const char text[] = "# a triangle with a broken vertex\n"
                               "v 0 0 0\n"
                               "v 1 0 zero\n"
                               "v 0 0 1\n"
                               "f 1 2 3\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    run_result r = RUN("--level", name, "--ticks", "5");
    unlink(name);
    cr_assert_eq(r.exit_code, 1, "exit %d, stderr: %s", r.exit_code, r.err);
    char where[4200];
    snprintf(where, sizeof where, "%s:3", name);
    cr_assert(strstr(r.err, where) != NULL, "stderr does not name %s: %s", where, r.err);
    cr_assert_eq(r.out_len, 0u);
    run_free(&r);
}

Test(keelsim, missing_obj_exits_1)
{
    run_result r = RUN("--level", "/nonexistent/keel/level.obj");
    cr_assert_eq(r.exit_code, 1);
    cr_assert(strstr(r.err, "/nonexistent/keel/level.obj") != NULL, "stderr: %s", r.err);
    run_free(&r);
}

Test(keelsim, probes_jsonl_lines_parse)
{
    const unsigned ticks = 25, chars = 3;
    run_result r = RUN("--mode", "probes", "--ticks", "25", "--characters", "3", "--format", "jsonl");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.out), ticks * chars + 1);
    final_hash_of(r.out);
    char *save = NULL;
    unsigned k = 0;
    for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (k == ticks * chars) {
            cr_assert(strncmp(line, "final_hash ", 11) == 0);
            break;
        }
        size_t len = strlen(line);
        cr_assert(line[0] == '{' && line[len - 1] == '}', "not an object: %s", line);
        unsigned tick, id;
        cr_assert_eq(sscanf(line, "{\"tick\":%u,\"id\":%u,", &tick, &id), 2, "%s", line);
        cr_assert_eq(tick, k / chars + 1);
        cr_assert_eq(id, k % chars);
        static const char *const keys[] = {"\"pos\":[",      "\"vel\":[",      "\"pos_raw\":[",
                                           "\"vel_raw\":[",  "\"grounded\":",  "\"start_overlap\":",
                                           "\"respawned\":", "\"tunnelled\":", "\"hash\":\""};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            cr_assert(strstr(line, keys[i]) != NULL, "no %s in %s", keys[i], line);
        k++;
    }
    cr_assert_eq(k, ticks * chars);
    run_free(&r);
}

Test(keelsim, probes_csv_rows_parse)
{
    const unsigned ticks = 25, chars = 3;
    run_result r = RUN("--mode", "probes", "--ticks", "25", "--characters", "3", "--format", "csv");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.out), 1 + ticks * chars + 1);
    final_hash_of(r.out);
    char *save = NULL;
    char *header = strtok_r(r.out, "\n", &save);
    cr_assert(strncmp(header, "tick,id,x,y,z,vx,vy,vz,", 23) == 0, "header: %s", header);
    size_t fields = 1;
    for (const char *c = header; *c; c++)
        fields += *c == ',';
    for (unsigned k = 0; k < ticks * chars; k++) {
        char *line = strtok_r(NULL, "\n", &save);
        cr_assert(line != NULL);
        size_t n = 1;
        for (const char *c = line; *c; c++)
            n += *c == ',';
        cr_assert_eq(n, fields, "row has %zu fields, header %zu: %s", n, fields, line);
        unsigned tick, id;
        cr_assert_eq(sscanf(line, "%u,%u,", &tick, &id), 2);
        cr_assert_eq(tick, k / chars + 1);
        cr_assert_eq(id, k % chars);
    }
    cr_assert(strncmp(strtok_r(NULL, "\n", &save), "final_hash ", 11) == 0);
    run_free(&r);
}

// A probe's motion depends only on the seed and its id: the first three
// probes of an eight-probe run move exactly like a three-probe run.
Test(keelsim, probes_do_not_depend_on_count)
{
    run_result a = RUN("--mode", "probes", "--ticks", "60", "--characters", "3", "--format", "csv");
    run_result b = RUN("--mode", "probes", "--ticks", "60", "--characters", "8", "--format", "csv");
    cr_assert_eq(a.exit_code, 0);
    cr_assert_eq(b.exit_code, 0);
    char *sa = NULL, *sb = NULL;
    strtok_r(a.out, "\n", &sa);
    strtok_r(b.out, "\n", &sb);
    for (unsigned t = 0; t < 60; t++) {
        for (unsigned i = 0; i < 8; i++) {
            char *lb = strtok_r(NULL, "\n", &sb);
            cr_assert(lb != NULL);
            if (i >= 3)
                continue;
            char *la = strtok_r(NULL, "\n", &sa);
            cr_assert(la != NULL);
            // Compare everything but the last field, the whole-state hash.
            char *ca = strrchr(la, ','), *cb = strrchr(lb, ',');
            cr_assert(ca && cb);
            *ca = *cb = '\0';
            cr_assert_str_eq(la, lb, "tick %u probe %u", t + 1, i);
        }
    }
    run_free(&a);
    run_free(&b);
}

Test(keelsim, probes_use_spawn_points)
{
    run_result r = RUN("--mode", "probes", "--ticks", "1", "--characters", "2", "--spawn", "1.5,0,2.25", "--spawn",
                       "-3,0,-4", "--format", "csv");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    char *save = NULL;
    strtok_r(r.out, "\n", &save);
    // Feet at the point: the capsule's centre is 0.9 m plus the 5 mm skin up.
    static const int expect[2][3] = {{98304, 59310, 147456}, {-196608, 59310, -262144}};
    for (int i = 0; i < 2; i++) {
        char *line = strtok_r(NULL, "\n", &save);
        cr_assert(line != NULL);
        int tick, id, raw[3];
        // Skip the six decimal columns; the raw ones are exact.
        cr_assert_eq(sscanf(line, "%d,%d,%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%d,%d,%d", &tick, &id, &raw[0],
                            &raw[1], &raw[2]),
                     5, "%s", line);
        // The first tick moves a probe well under a millimetre (65 raw).
        for (int k = 0; k < 3; k++)
            cr_assert(abs(raw[k] - expect[i][k]) < 65, "probe %d axis %d: %d, want about %d", i, k, raw[k],
                      expect[i][k]);
    }
    run_free(&r);
}

Test(keelsim, zero_ticks_prints_only_the_hash)
{
    run_result r = RUN("--ticks", "0");
    cr_assert_eq(r.exit_code, 0);
    cr_assert_eq(count_lines(r.out), 1);
    final_hash_of(r.out);
    run_free(&r);
}

Test(keelsim, generated_level_and_box_run)
{
    for (int probes = 0; probes < 2; probes++) {
        run_result r = RUN("--mode", probes ? "probes" : "characters", "--level", "generated", "--generate-triangles",
                           "2000", "--shape", "box", "--ticks", "30", "--quiet");
        cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
        final_hash_of(r.out);
        run_free(&r);
    }
}

// --shape cylinder: both modes run, the same twice, and the shape changes the
// run. (Seed 2: with seed 1 a capsule's and a cylinder's probes end the 200
// ticks in the same states: the one place they differed was a capsule
// stopped 5 mm early at a wall, where the sweep no longer stops it.)
Test(keelsim, cylinder_shape_runs)
{
    for (int probes = 0; probes < 2; probes++) {
        const char *mode = probes ? "probes" : "characters";
        run_result c = RUN("--mode", mode, "--shape", "cylinder", "--ticks", "200", "--seed", "2", "--quiet");
        run_result again = RUN("--mode", mode, "--shape", "cylinder", "--ticks", "200", "--seed", "2", "--quiet");
        run_result cap = RUN("--mode", mode, "--shape", "capsule", "--ticks", "200", "--seed", "2", "--quiet");
        run_result box = RUN("--mode", mode, "--shape", "box", "--ticks", "200", "--seed", "2", "--quiet");
        cr_assert_eq(c.exit_code, 0, "%s: stderr: %s", mode, c.err);
        cr_assert_eq(box.exit_code, 0, "%s: stderr: %s", mode, box.err);
        cr_assert_str_eq(final_hash_of(c.out), final_hash_of(again.out));
        cr_assert_str_neq(final_hash_of(c.out), final_hash_of(cap.out), "%s: the cylinder ran as a capsule", mode);
        cr_assert_str_neq(final_hash_of(c.out), final_hash_of(box.out), "%s: the cylinder ran as a box", mode);
        run_free(&c);
        run_free(&again);
        run_free(&cap);
        run_free(&box);
    }
}

// ---- the characters mode -----------------------------------------------------------

// Writes `text` (length n) to a new temporary file; the caller unlinks it.
static void write_temp(char *name, size_t size, const char *what, const char *text, size_t n)
{
    int fd = temp_file(name, size, what);
    cr_assert_eq(write(fd, text, n), (ssize_t)n, "write %s: %s", name, strerror(errno));
    close(fd);
}

// The line of `out` for (tick, id), or NULL; writes it into buf.
static const char *char_line(const char *out, unsigned tick, unsigned id, char *buf, size_t size)
{
    char key[64];
    snprintf(key, sizeof key, "{\"tick\":%u,\"id\":%u,", tick, id);
    const char *p = strstr(out, key);
    if (!p)
        return NULL;
    const char *end = strchr(p, '\n');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    cr_assert(n < size);
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

// Three numbers of a JSON array value "key":[a,b,c] in a line, as doubles
// (only to compare with tolerances; the text itself is exact).
static void json_vec(const char *line, const char *key, double v[3])
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":[", key);
    const char *p = strstr(line, k);
    cr_assert(p != NULL, "no %s in %s", key, line);
    cr_assert_eq(sscanf(p + strlen(k), "%lf,%lf,%lf", &v[0], &v[1], &v[2]), 3, "%s", line);
}

Test(keelsim, characters_are_the_default_mode)
{
    run_result r = RUN("--ticks", "2", "--characters", "2");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    char buf[1024];
    const char *line = char_line(r.out, 1, 1, buf, sizeof buf);
    cr_assert(line != NULL, "no row for tick 1, character 1: %s", r.out);
    static const char *const keys[] = {"\"pos\":[",           "\"vel\":[",   "\"move\":\"",    "\"grounded\":",
                                       "\"ground_normal\":[", "\"flags\":[", "\"flags_raw\":", "\"respawned\":"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert(strstr(line, keys[i]) != NULL, "no %s in %s", keys[i], line);
    run_free(&r);
}

// Two characters, three ticks: per tick a row per character in id order,
// then the tick's hash line; then final_hash, equal to the last tick's hash.
Test(keelsim, characters_jsonl_layout)
{
    run_result r = RUN("--ticks", "3", "--characters", "2", "--format", "jsonl");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.out), 3 * 3 + 1, "%s", r.out);
    char *save = NULL, last_hash[17] = "";
    unsigned k = 0;
    for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), k++) {
        if (k == 9) {
            cr_assert(strncmp(line, "final_hash ", 11) == 0, "%s", line);
            cr_assert_str_eq(line + 11, last_hash);
            break;
        }
        unsigned tick, id;
        size_t len = strlen(line);
        cr_assert(line[0] == '{' && line[len - 1] == '}', "not an object: %s", line);
        if (k % 3 == 2) {
            cr_assert_eq(sscanf(line, "{\"tick\":%u,\"hash\":\"%16[0-9a-f]\"}", &tick, last_hash), 2, "%s", line);
            cr_assert_eq(tick, k / 3 + 1);
        } else {
            cr_assert_eq(sscanf(line, "{\"tick\":%u,\"id\":%u,", &tick, &id), 2, "%s", line);
            cr_assert_eq(tick, k / 3 + 1);
            cr_assert_eq(id, k % 3 + 1);
        }
    }
    run_free(&r);
}

Test(keelsim, characters_csv_layout)
{
    run_result r = RUN("--ticks", "3", "--characters", "2", "--format", "csv");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.out), 1 + 3 * 3 + 1, "%s", r.out);
    char *save = NULL;
    char *header = strtok_r(r.out, "\n", &save);
    cr_assert_str_eq(header, "tick,id,x,y,z,vx,vy,vz,move,grounded,nx,ny,nz,flags,flags_raw,respawned");
    for (unsigned k = 0; k < 9; k++) {
        char *line = strtok_r(NULL, "\n", &save);
        cr_assert(line != NULL);
        if (k % 3 == 2) {
            unsigned tick;
            char hash[17];
            cr_assert_eq(sscanf(line, "# tick %u hash %16[0-9a-f]", &tick, hash), 2, "%s", line);
            cr_assert_eq(tick, k / 3 + 1);
            continue;
        }
        size_t fields = 1;
        for (const char *c = line; *c; c++)
            fields += *c == ',';
        cr_assert_eq(fields, 16, "%s", line);
        unsigned tick, id;
        cr_assert_eq(sscanf(line, "%u,%u,", &tick, &id), 2);
        cr_assert_eq(tick, k / 3 + 1);
        cr_assert_eq(id, k % 3 + 1);
    }
    cr_assert(strncmp(strtok_r(NULL, "\n", &save), "final_hash ", 11) == 0);
    run_free(&r);
}

Test(keelsim, characters_default_run_final_hash_is_pinned)
{
    run_result r = RUN("--quiet");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    const char *h = final_hash_of(r.out);
    cr_assert(strncmp(h, KEELSIM_DEFAULT_FINAL_HASH, 16) == 0,
              "default run: final_hash %.16s, pinned %s (if movement changed on purpose, update "
              "KEELSIM_DEFAULT_FINAL_HASH)",
              h, KEELSIM_DEFAULT_FINAL_HASH);
    run_free(&r);
}

// Positions are printed exactly: a character standing still at a spawn
// point given in decimals keeps exactly those decimals.
Test(keelsim, characters_positions_are_exact)
{
    char name[4096];
    write_temp(name, sizeof name, "empty_input", "# nobody moves\n", 15);
    run_result r = RUN("--characters", "1", "--spawn", "1.5,0,-2.25", "--input", name, "--ticks", "3");
    unlink(name);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    char buf[1024];
    const char *line = char_line(r.out, 3, 1, buf, sizeof buf);
    cr_assert(line != NULL, "%s", r.out);
    cr_assert(strstr(line, "\"pos\":[1.5,0,-2.25]") != NULL, "%s", line);
    cr_assert(strstr(line, "\"move\":\"walk\"") != NULL, "%s", line);
    run_free(&r);
}

// 64 ticks of full forward input at yaw a quarter turn (looking along -X)
// take a character about 8 m along -X on the built-in floor (a little less:
// it starts from rest), and nowhere else.
Test(keelsim, input_file_drives_a_character)
{
    static char text[64 * 40 + 128];
    size_t n = (size_t)snprintf(text, sizeof text, "# walk along -X for one second\n\n");
    for (int t = 0; t < 64; t++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%d 1 127 0 0 16384 0 0   # forward\r\n", t);
    char name[4096];
    write_temp(name, sizeof name, "walk_input", text, n);
    run_result r = RUN("--characters", "2", "--spawn", "0,0,0", "--spawn", "5,0,2.5", "--input", name, "--ticks", "64");
    run_result again =
        RUN("--characters", "2", "--spawn", "0,0,0", "--spawn", "5,0,2.5", "--input", name, "--ticks", "64");
    unlink(name);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_assert_eq(again.out_len, r.out_len);
    cr_assert(memcmp(again.out, r.out, r.out_len) == 0, "two scripted runs differ");
    char buf[1024];
    double p[3], q[3];
    json_vec(char_line(r.out, 64, 1, buf, sizeof buf), "pos", p);
    cr_assert(p[0] < -7.0 && p[0] > -8.0, "x %.6f, expected about -7.5", p[0]);
    cr_assert(p[1] > -0.001 && p[1] < 0.01 && p[2] > -0.001 && p[2] < 0.001, "y %.6f z %.6f", p[1], p[2]);
    // Character 2 has no commands: it stands where it was put.
    json_vec(char_line(r.out, 64, 2, buf, sizeof buf), "pos", q);
    cr_assert(q[0] == 5.0 && q[2] == 2.5, "character 2 moved: %.6f %.6f", q[0], q[2]);
    run_free(&r);
    run_free(&again);
}

// Every class of error in an input file: exit 1, "file:line:" on stderr,
// nothing on stdout.
Test(keelsim, malformed_input_files_exit_1_naming_file_and_line)
{
    static const struct {
        const char *text;
        unsigned line;
        const char *what;
    } bad[] = {
        {"0 1 127 0 0 0 0\n", 1, "expected 8 fields"},
        {"# ok\n0 1 127 0 0 0 0 0 0\n", 2, "expected 8 fields"},
        {"0 1 127 0 0 0 0 0 # fine\n\n1 1 12x 0 0 0 0 0\n", 3, "not a decimal integer"},
        {"0 1 1.5 0 0 0 0 0\n", 1, "not a decimal integer"},
        {"0 1 128 0 0 0 0 0\n", 1, "out of range"},
        {"0 1 0 -128 0 0 0 0\n", 1, "out of range"},
        {"0 1 0 0 0 65536 0 0\n", 1, "out of range"},
        {"0 1 0 0 0 0 -32769 0\n", 1, "out of range"},
        {"0 1 0 0 0 0 0 8\n", 1, "out of range"},
        {"-1 1 0 0 0 0 0 0\n", 1, "out of range"},
        {"4294967296 1 0 0 0 0 0 0\n", 1, "out of range"},
        {"0 3 0 0 0 0 0 0\n", 1, "unknown character"},
        {"0 0 0 0 0 0 0 0\n", 1, "unknown character"},
        {"5 1 0 0 0 0 0 0\n5 2 0 0 0 0 0 0\n5 1 0 0 0 0 0 0\n", 3, "not after"},
        {"5 1 0 0 0 0 0 0\n4 1 0 0 0 0 0 0\n", 2, "not after"},
        {"0 1 0 0 0 0 0 0\n1 1 0 0\0 0 0 0 0\n", 2, "NUL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        // The text may hold a NUL byte: its length comes from the last newline.
        size_t n = strlen(bad[i].text);
        if (strstr(bad[i].what, "NUL"))
            n = (size_t)(strrchr(bad[i].text + n + 1, '\n') - bad[i].text) + 1;
        char name[4096];
        write_temp(name, sizeof name, "bad_input", bad[i].text, n);
        run_result r = RUN("--characters", "2", "--input", name, "--ticks", "10");
        unlink(name);
        cr_assert_eq(r.exit_code, 1, "case %zu: exit %d, stderr: %s", i, r.exit_code, r.err);
        char where[4200];
        snprintf(where, sizeof where, "%s:%u: ", name, bad[i].line);
        cr_assert(strstr(r.err, where) != NULL, "case %zu: stderr does not name %s: %s", i, where, r.err);
        cr_assert(strstr(r.err, bad[i].what) != NULL, "case %zu: stderr does not say '%s': %s", i, bad[i].what, r.err);
        cr_assert_eq(r.out_len, 0u, "case %zu wrote to stdout", i);
        run_free(&r);
    }
}

// A NUL byte or an over-long line is reported as soon as it is read, with
// file:line and exit 1: a file of NULs without a newline, /dev/zero (endless
// NULs) and an endless stream without a newline through a pipe. The endless
// ones used to hang; each run is killed after 60 s, which counts as a failure.
Test(keelsim, input_nul_and_endless_lines_reported_at_once)
{
    // 1 MiB of NULs, no newline.
    size_t n = (size_t)1 << 20;
    char *zeros = calloc(n, 1);
    cr_assert_not_null(zeros);
    char name[4096];
    write_temp(name, sizeof name, "nul_input", zeros, n);
    free(zeros);
    bool timed_out;
    run_result r = run_keelsim_ex((const char *const[]){"--input", name, "--ticks", "1", NULL}, -1, 60, &timed_out);
    unlink(name);
    cr_assert(!timed_out, "a file of NULs: keel-sim did not finish");
    cr_assert_eq(r.exit_code, 1, "exit %d, stderr: %s", r.exit_code, r.err);
    char where[4200];
    snprintf(where, sizeof where, "%s:1: NUL byte", name);
    cr_assert(strstr(r.err, where) != NULL, "stderr: %s", r.err);
    cr_assert_eq(r.out_len, 0u);
    run_free(&r);

    r = run_keelsim_ex((const char *const[]){"--input", "/dev/zero", "--ticks", "1", NULL}, -1, 60, &timed_out);
    cr_assert(!timed_out, "--input /dev/zero: keel-sim did not finish");
    cr_assert_eq(r.exit_code, 1, "exit %d, stderr: %s", r.exit_code, r.err);
    cr_assert(strstr(r.err, "/dev/zero:1: NUL byte") != NULL, "stderr: %s", r.err);
    run_free(&r);

    // An endless line of 'x' through a pipe: a writer process that stops
    // when the reader is gone.
    int fds[2];
    cr_assert_eq(pipe(fds), 0, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t writer = fork();
    cr_assert(writer >= 0, "fork: %s", strerror(errno));
    if (writer == 0) {
        close(fds[0]);
        signal(SIGPIPE, SIG_DFL);
        char block[4096];
        memset(block, 'x', sizeof block);
        for (;;)
            if (write(fds[1], block, sizeof block) < 0)
                _exit(0);
    }
    close(fds[1]);
    r = run_keelsim_ex((const char *const[]){"--input", "/dev/stdin", "--ticks", "1", NULL}, fds[0], 60, &timed_out);
    close(fds[0]);
    kill(writer, SIGKILL);
    waitpid(writer, NULL, 0);
    cr_assert(!timed_out, "an endless line: keel-sim did not finish");
    cr_assert_eq(r.exit_code, 1, "exit %d, stderr: %s", r.exit_code, r.err);
    cr_assert(strstr(r.err, "/dev/stdin:1: line longer than 65536 bytes") != NULL, "stderr: %s", r.err);
    cr_assert_eq(r.out_len, 0u);
    run_free(&r);
}

// Values out of range are echoed as typed, not as the saturated number.
Test(keelsim, input_values_echoed_as_typed)
{
    static const struct {
        const char *text;
        const char *what;
    } bad[] = {
        {"0 99999999999999999999 0 0 0 0 0 0\n",
         ":1: unknown character 99999999999999999999 (the run has characters 1 to 2)"},
        {"0 +0003 0 0 0 0 0 0\n", ":1: unknown character +0003 ("},
        {"0 1 0 0 0 123456789012345678901234567890 0 0\n",
         ":1: yaw 123456789012345678901234567890 is out of range (-32768 to 65535)"},
        {"0 1 0 0 0 0 0 1234567890123456789012345678901234567890123456789\n",
         ":1: buttons 1234567890123456789012345678901234567890... is out of range (0 to 7)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[4096];
        write_temp(name, sizeof name, "echo_input", bad[i].text, strlen(bad[i].text));
        run_result r = RUN("--characters", "2", "--input", name, "--ticks", "1");
        unlink(name);
        cr_assert_eq(r.exit_code, 1, "case %zu: exit %d", i, r.exit_code);
        cr_assert(strstr(r.err, bad[i].what) != NULL, "case %zu: stderr lacks '%s': %s", i, bad[i].what, r.err);
        run_free(&r);
    }
}

// A UTF-8 byte-order mark before the first line is skipped: the file drives
// the character exactly like the same file without it.
Test(keelsim, input_byte_order_mark_is_skipped)
{
    static const char plain[] = "0 1 127 0 0 16384 0 0\n1 1 127 0 0 16384 0 1\n";
    static const char bom[] = "\xEF\xBB\xBF"
                              "0 1 127 0 0 16384 0 0\n1 1 127 0 0 16384 0 1\n";
    char a_name[4096], b_name[4096];
    write_temp(a_name, sizeof a_name, "plain_input", plain, sizeof plain - 1);
    write_temp(b_name, sizeof b_name, "bom_input", bom, sizeof bom - 1);
    run_result a = RUN("--characters", "1", "--input", a_name, "--ticks", "8", "--format", "csv");
    run_result b = RUN("--characters", "1", "--input", b_name, "--ticks", "8", "--format", "csv");
    unlink(a_name);
    unlink(b_name);
    cr_assert_eq(a.exit_code, 0, "stderr: %s", a.err);
    cr_assert_eq(b.exit_code, 0, "stderr: %s", b.err);
    cr_assert_eq(a.out_len, b.out_len);
    cr_assert(memcmp(a.out, b.out, a.out_len) == 0, "the byte-order mark changed the run");
    run_free(&a);
    run_free(&b);
}

Test(keelsim, missing_input_file_exits_1)
{
    run_result r = RUN("--input", "/nonexistent/keel/input.txt");
    cr_assert_eq(r.exit_code, 1);
    cr_assert(strstr(r.err, "/nonexistent/keel/input.txt") != NULL, "stderr: %s", r.err);
    cr_assert_eq(r.out_len, 0u);
    run_free(&r);
}

// Random inputs are drawn per character from (seed, id): character 1 moves
// exactly the same whether or not character 2 exists (35 m away, too far to
// meet in 120 ticks at 8 m/s).
Test(keelsim, random_input_does_not_depend_on_the_count)
{
    run_result a =
        RUN("--ticks", "120", "--characters", "1", "--spawn", "0,0,0", "--spawn", "25,0,-25", "--format", "csv");
    run_result b =
        RUN("--ticks", "120", "--characters", "2", "--spawn", "0,0,0", "--spawn", "25,0,-25", "--format", "csv");
    cr_assert_eq(a.exit_code, 0, "stderr: %s", a.err);
    cr_assert_eq(b.exit_code, 0, "stderr: %s", b.err);
    // Character 1's rows of each run, in order.
    char *rows[2][120];
    run_result *runs[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        char *save = NULL;
        unsigned n = 0;
        for (char *line = strtok_r(runs[k]->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            unsigned tick, id;
            if (sscanf(line, "%u,%u,", &tick, &id) == 2 && id == 1) {
                cr_assert(n < 120);
                rows[k][n++] = line;
            }
        }
        cr_assert_eq(n, 120);
    }
    for (unsigned t = 0; t < 120; t++)
        cr_assert_str_eq(rows[0][t], rows[1][t], "tick %u", t + 1);
    run_free(&a);
    run_free(&b);
}

// The elevator carries a character standing on it up to its top stop.
Test(keelsim, platforms_carry_characters)
{
    char name[4096];
    write_temp(name, sizeof name, "still_input", "", 0);
    // The elevator's top rests 0.3 m above the floor at the platform_area
    // marker (0, 0, -24) minus 1.5 m in x; it rises 3 m after a 1 s pause.
    run_result r =
        RUN("--characters", "1", "--spawn", "-1.5,0.3,-24", "--input", name, "--ticks", "256", "--platforms");
    run_result none =
        RUN("--characters", "1", "--level", "generated", "--generate-triangles", "500", "--platforms", "--ticks", "1");
    unlink(name);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    char buf[1024];
    double p[3];
    json_vec(char_line(r.out, 256, 1, buf, sizeof buf), "pos", p);
    cr_assert(p[1] > 3.2 && p[1] < 3.4, "feet at y %.6f after the elevator's climb", p[1]);
    cr_assert_eq(none.exit_code, 1, "a level without platform_area: exit %d", none.exit_code);
    cr_assert(strstr(none.err, "platform_area") != NULL, "stderr: %s", none.err);
    run_free(&r);
    run_free(&none);
}

Test(keelsim, other_tick_rates_run)
{
    run_result r = RUN("--rate", "30", "--ticks", "60", "--quiet");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    final_hash_of(r.out);
    run_free(&r);
}

// ---- limits ----------------------------------------------------------------------

// Writes an OBJ level to a temporary file; the caller unlinks it.
static void write_obj(char *name, size_t size, const char *text)
{
    write_temp(name, size, "level_obj", text, strlen(text));
}

// The tick-t rows of a CSV run: y of the feet and the respawned flag.
static unsigned csv_rows_at(const char *out, unsigned t, double *max_y, unsigned *respawned)
{
    unsigned rows = 0;
    *max_y = -1e30;
    *respawned = 0;
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned tick, id, resp;
        double x, y;
        if (sscanf(line, "%u,%u,%lf,%lf,", &tick, &id, &x, &y) != 4 || tick != t)
            continue;
        const char *last = strchr(line, '\n');
        const char *comma = last ? last : line + strlen(line);
        while (comma > line && comma[-1] != ',')
            comma--;
        cr_assert_eq(sscanf(comma, "%u", &resp), 1);
        rows++;
        if (y > *max_y)
            *max_y = y;
        *respawned += resp;
    }
    return rows;
}

// Geometry may lie up to 4096 m out, characters only up to 4016 m (the
// mover's clamp): the seeded spawn search never picks a floor beyond that.
// Half the level is a floor at y 4090, half a floor at y 0: every character
// starts on the low one. A level that is only the high floor puts them above
// the middle at the range's edge, where they fall instead of respawning every
// tick.
Test(keelsim, spawn_search_stays_in_the_character_range)
{
    static const char both[] = "v -10 4090 -10\nv 0 4090 -10\nv 0 4090 10\nv -10 4090 10\n"
                               "v 0 0 -10\nv 10 0 -10\nv 10 0 10\nv 0 0 10\n"
                               "f 1 4 3 2\nf 5 8 7 6\n";
    static const char high[] = "v -10 4090 -10\nv 0 4090 -10\nv 0 4090 10\nv -10 4090 10\n"
                               "f 1 4 3 2\n";
    char name[4096];
    write_obj(name, sizeof name, both);
    run_result r = RUN("--level", name, "--scale", "1", "--characters", "16", "--ticks", "3", "--format", "csv");
    unlink(name);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    double max_y;
    unsigned respawned;
    cr_assert_eq(csv_rows_at(r.out, 3, &max_y, &respawned), 16);
    cr_assert(max_y < 1.0, "a character spawned on the floor at 4090 m (feet at y %.3f)", max_y);
    cr_assert_eq(respawned, 0);
    run_free(&r);

    write_obj(name, sizeof name, high);
    r = RUN("--level", name, "--scale", "1", "--characters", "4", "--ticks", "10", "--format", "csv");
    unlink(name);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    for (unsigned t = 1; t <= 10; t++) {
        cr_assert_eq(csv_rows_at(r.out, t, &max_y, &respawned), 4);
        cr_assert_eq(respawned, 0, "tick %u: %u characters respawned", t, respawned);
        cr_assert(max_y <= 4016.0, "tick %u: feet at y %.3f", t, max_y);
    }
    run_free(&r);
}

// --spawn accepts the whole character range and nothing beyond, and says
// which coordinate is out and what the range is.
Test(keelsim, spawn_points_outside_the_character_range_refused)
{
    static const struct {
        const char *spawn;
        const char *what;
    } bad[] = {
        {"0,4090,0", "bad --spawn '0,4090,0': y 4090 is outside the character range (-4016 to 4016 m)"},
        {"-4016.00001,0,0", "x -4016.00001 is outside the character range (-4016 to 4016 m)"},
        {"0,0,99999999999999999999", "z 99999999999999999999 is outside the character range"},
        {"1,2", "three coordinates"},
        {"1,2,3x", "z '3x' is not a decimal number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r = RUN("--spawn", bad[i].spawn, "--ticks", "1");
        cr_assert_eq(r.exit_code, 2, "%s: exit %d", bad[i].spawn, r.exit_code);
        cr_assert(strstr(r.err, bad[i].what) != NULL, "%s: stderr lacks '%s': %s", bad[i].spawn, bad[i].what, r.err);
        cr_assert(strstr(r.err, "--help lists the options") != NULL, "%s", r.err);
        cr_assert_eq(r.out_len, 0u);
        run_free(&r);
    }
    // The edges of the range: characters and probes start there and are not
    // lost at once (they fall; nothing is below them).
    static const char *const modes[] = {"characters", "probes"};
    for (int m = 0; m < 2; m++) {
        run_result r = RUN("--mode", modes[m], "--spawn", "4016,4016,-4016", "--spawn", "-4016,-4016,4016",
                           "--characters", "2", "--ticks", "3", "--format", "csv");
        cr_assert_eq(r.exit_code, 0, "%s: stderr: %s", modes[m], r.err);
        unsigned rows = 0;
        for (const char *line = r.out; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            unsigned tick, id;
            if (sscanf(line, "%u,%u,", &tick, &id) != 2)
                continue;
            rows++;
            // respawned is the last field (characters) or the third from the end (probes).
            const char *end = strchr(line, '\n');
            const char *f = end;
            for (int k = 0; k < (m == 0 ? 1 : 3); k++) {
                f--;
                while (f > line && f[-1] != ',')
                    f--;
            }
            cr_assert(f[0] == '0', "%s: tick %u entity %u respawned: %.*s", modes[m], tick, id, (int)(end - line),
                      line);
        }
        cr_assert_eq(rows, 6, "%s: %s", modes[m], r.out);
        run_free(&r);
    }
}

// The seeded spawn search keeps the taken spots in a grid: the same spots as
// checking every earlier character (ks_spawn_find), with work per character
// that does not grow with their number. Checked on the built-in level past
// its capacity (about 1,800 spots), so misses are compared too.
Test(keelsim, spawn_grid_finds_what_the_linear_search_finds)
{
    sim_level level;
    cr_assert_eq(sim_level_builtin(&level), 0);
    sim_world *world = sim_world_create(&level, NULL, NULL);
    cr_assert_not_null(world);
    sim_move_settings s = sim_move_default_settings();
    ks_spawn_area area = {&level,     world, sim_world_get_stats(world).bounds, s.stand_shape, s.max_slope_cos,
                          SIM_FX_ONE, false};
    const uint32_t n = 1900;
    const sim_fx spacing = SIM_FX_MM(1200);
    sim_vec3 *linear = calloc(n, sizeof *linear);
    cr_assert_not_null(linear);
    ks_spawn_grid grid;
    cr_assert(ks_spawn_grid_init(&grid, spacing, n));
    uint32_t taken = 0, misses = 0;
    for (uint32_t id = 1; id <= n; id++) {
        sim_vec3 a = sim_v3_zero(), b = sim_v3_zero();
        bool fa = ks_spawn_find(&area, 77, id, linear, taken, spacing, &a);
        bool fb = ks_spawn_find_grid(&area, 77, id, &grid, &b);
        cr_assert_eq(fa, fb, "character %u: found %d by the linear search, %d by the grid", id, fa, fb);
        if (!fa) {
            misses++;
            continue;
        }
        cr_assert(sim_v3_eq(a, b), "character %u: different spots", id);
        linear[taken++] = a;
        ks_spawn_grid_add(&grid, b);
    }
    cr_assert_gt(misses, 0, "the level did not fill up: raise n");
    cr_assert_gt(taken, 1000);
    // A handful of comparisons per line cast, never all the points taken.
    cr_assert_leq(grid.compared, 16 * grid.lines, "%llu points compared in %llu lines",
                  (unsigned long long)grid.compared, (unsigned long long)grid.lines);
    ks_spawn_grid_free(&grid);
    free(linear);
    sim_world_destroy(world);
    sim_level_free(&level);
}

// 20,000 characters with seeded spawns on the built-in level (ten times its
// room) start and run a tick. The work of the search is counted, not timed:
// the summary's lines cast and points compared stay within a fixed number
// per character (the old search compared every earlier character: about
// 2 x 10^8 comparisons here, and took minutes).
Test(keelsim, many_characters_start_with_linear_work)
{
    run_result r = RUN("--random-spawns", "--characters", "20000", "--ticks", "1", "--format", "csv");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    double max_y;
    unsigned respawned;
    cr_assert_eq(csv_rows_at(r.out, 1, &max_y, &respawned), 20000);
    final_hash_of(r.out);
    const char *sp = strstr(r.err, "; spawns ");
    cr_assert_not_null(sp, "no spawn counts in the summary: %s", r.err);
    unsigned on_floor, above;
    unsigned long long lines, compared;
    cr_assert_eq(sscanf(sp,
                        "; spawns %u on floors, %u above the level (full) (%llu lines cast, %llu "
                        "points compared)",
                        &on_floor, &above, &lines, &compared),
                 4, "summary: %s", sp);
    cr_assert_eq(on_floor + above, 20000);
    cr_assert_gt(on_floor, 1000);
    cr_assert_leq(lines, 20ull * 20000, "%llu lines cast", lines);
    cr_assert_leq(compared, 50ull * 20000, "%llu points compared", compared);
    run_free(&r);
}

// The summary accounts for every triangle of the level: kept, degenerate, or
// a face buried where two solids touch. Two closed unit cubes side by side
// share a face (2 triangles each side, buried), and one face is degenerate.
Test(keelsim, summary_counts_dropped_triangles)
{
    static const char cubes[] =
        "v 0 0 0\nv 0 0 1\nv 0 1 0\nv 0 1 1\nv 1 0 0\nv 1 0 1\nv 1 1 0\nv 1 1 1\n"
        "v 1 0 0\nv 1 0 1\nv 1 1 0\nv 1 1 1\nv 2 0 0\nv 2 0 1\nv 2 1 0\nv 2 1 1\n"
        "f 5 7 8 6\nf 1 2 4 3\nf 3 4 8 7\nf 1 5 6 2\nf 2 6 8 4\nf 1 3 7 5\n"
        "f 13 15 16 14\nf 9 10 12 11\nf 11 12 16 15\nf 9 13 14 10\nf 10 14 16 12\nf 9 11 15 13\n"
        "f 1 1 2\n";
    char name[4096];
    write_obj(name, sizeof name, cubes);
    run_result r = RUN("--level", name, "--scale", "1", "--characters", "1", "--ticks", "1");
    unlink(name);
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.err, ": 20 triangles (1 degenerate, 4 buried faces dropped); ") != NULL, "summary: %s", r.err);
    run_free(&r);
}

// A level whose triangles all become degenerate at the scale is an error
// (exit 1, the loader's message), like a file without faces.
Test(keelsim, level_with_only_degenerate_triangles_exits_1)
{
    char name[4096];
    write_obj(name, sizeof name, "v 0 0 0\nv 100 0 0\nv 0 0 100\nf 1 2 3\n");
    run_result r = RUN("--level", name, "--scale", "0.000001", "--ticks", "1");
    run_result ok = RUN("--level", name, "--scale", "0.01", "--ticks", "1", "--quiet");
    unlink(name);
    cr_assert_eq(r.exit_code, 1, "exit %d, stderr: %s", r.exit_code, r.err);
    char expect[4300];
    snprintf(expect, sizeof expect,
             "keel-sim: %s: no triangles left: the only triangle is degenerate at unit_scale "
             "'0.000001'",
             name);
    cr_assert(strstr(r.err, expect) != NULL, "stderr: %s", r.err);
    cr_assert_eq(r.out_len, 0u);
    cr_assert_eq(ok.exit_code, 0, "stderr: %s", ok.err);
    run_free(&r);
    run_free(&ok);
}

// Command-line mistakes are usage errors (exit 2, one line on stderr pointing
// to --help) that say what is wrong.
Test(keelsim, command_line_mistakes_are_named)
{
    char obj[4096];
    write_obj(obj, sizeof obj, "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n");
    const struct {
        const char *args[6];
        const char *what;
    } bad[] = {
        {{"--foo", NULL}, "unknown option '--foo'"},
        {{"--foo=1", NULL}, "unknown option '--foo'"},
        {{"--", NULL}, "unknown option '--'"},
        {{"--ticks", "5", "--", NULL}, "unknown option '--'"},
        {{"--level", obj, "--scale", "0", NULL}, "bad --scale '0' (a positive decimal"},
        {{"--level", obj, "--scale", "0.000", NULL}, "bad --scale '0.000'"},
        {{"--level", obj, "--scale", "1234567890123", NULL}, "at most 12 significant digits"},
        {{"--level", obj, "--scale", "0.1000000000001", NULL}, "at most 12 significant digits"},
        {{"--scale", "0.12", NULL}, "--scale applies to OBJ files only; --level builtin has no scale"},
        {{"--level", "generated", "--scale", "1", NULL}, "--level generated has no scale"},
        {{"--up", "z", NULL}, "--up applies to OBJ files only"},
        {{"--generate-triangles", "500", NULL}, "--generate-triangles applies to --level generated"},
        {{"--ticks", "5", "--ticks", "6", NULL}, "option --ticks is given more than once"},
        {{"--quiet", "--quiet", NULL}, "option --quiet is given more than once"},
        {{"--level=builtin", "--level", "generated", NULL}, "option --level is given more than once"},
        {{"--characters", "99999999999999999999", NULL}, "bad --characters '99999999999999999999'"},
        {{"--sync-test", "0", NULL}, "bad --sync-test '0' (the deepest rollback: 1 to 32 ticks)"},
        {{"--sync-test=33", NULL}, "bad --sync-test '33'"},
        {{"--sync-test", "deep", NULL}, "bad --sync-test 'deep'"},
        {{"--mode", "probes", "--sync-test", NULL}, "--sync-test need --mode characters"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r = run_keelsim(bad[i].args);
        cr_assert_eq(r.exit_code, 2, "case %zu (%s): exit %d, stderr: %s", i, bad[i].args[0], r.exit_code, r.err);
        cr_assert(strstr(r.err, bad[i].what) != NULL, "case %zu: stderr lacks '%s': %s", i, bad[i].what, r.err);
        cr_assert(strstr(r.err, "keel-sim --help lists the options") != NULL, "case %zu: no pointer to --help", i);
        cr_assert_eq(r.out_len, 0u);
        run_free(&r);
    }
    // Still fine: 12 significant digits, zeros around them, an exponent,
    // and --spawn repeated.
    static const char *const good_scales[] = {"0.123456789012", "000.1200000", "1.2e-1", "120E-3"};
    for (size_t i = 0; i < sizeof good_scales / sizeof good_scales[0]; i++) {
        run_result r = RUN("--level", obj, "--scale", good_scales[i], "--ticks", "1", "--quiet");
        cr_assert_eq(r.exit_code, 0, "--scale %s: exit %d, stderr: %s", good_scales[i], r.exit_code, r.err);
        run_free(&r);
    }
    run_result r = RUN("--spawn", "0,0,0", "--spawn", "5,0,2.5", "--characters", "2", "--ticks", "1", "--quiet");
    cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
    run_free(&r);
    unlink(obj);
}

// ---- --sync-test ------------------------------------------------------------------

// The number after `key` in `text` (0 when absent).
static unsigned long long number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

// A sync test that passed: exit 0, the verdict line with `ticks` ticks
// checked, and the same final hash as the run without the check.
static void expect_sync_pass(const run_result *r, const char *const *plain_args, unsigned ticks)
{
    cr_assert_eq(r->exit_code, 0, "exit %d, stderr: %s", r->exit_code, r->err);
    const char *line = strstr(r->err, "keel-sim: sync test passed: ");
    cr_assert(line != NULL, "no verdict on stderr: %s", r->err);
    cr_assert_eq(number_after(line, "passed: "), ticks, "%s", line);
    cr_assert(number_after(line, "copies, ") == ticks, "a rollback every tick: %s", line);
    run_result plain = run_keelsim(plain_args);
    cr_assert_eq(plain.exit_code, 0, "stderr: %s", plain.err);
    cr_assert_str_eq(final_hash_of(r->out), final_hash_of(plain.out), "--sync-test changed the run");
    run_free(&plain);
}

#define CROWD "--platforms", "--characters", "48", "--spawn", "0,0.3,-24", "--ticks", "1200"

// 48 characters from one spawn point at the platforms, pushing each other,
// riding, falling off the level and respawning: every tick's rollback of 1 to
// 16 ticks re-simulates to the run's state.
Test(keelsim, sync_test_passes_on_a_crowd_at_the_platforms)
{
    run_result r = RUN(CROWD, "--sync-test", "16", "--format", "csv");
    expect_sync_pass(&r, (const char *const[]){CROWD, "--quiet", NULL}, 1200);
    cr_log_info("keelsim: crowd: %s", strstr(r.err, "keel-sim: sync test"));
    // The ring carried respawns (keel-sim's remove + add) into re-simulations.
    cr_assert(number_after(r.err, "respawns ") > 0, "no respawn to re-simulate: %s", r.err);
    const char *line = strstr(r.err, "keel-sim: sync test passed");
    cr_assert(strstr(line, "rollbacks of 1 to 16 ticks") != NULL, "%s", line);
    run_free(&r);
}

Test(keelsim, sync_test_passes_on_the_generated_level_with_other_settings)
{
    run_result r = RUN("--level", "generated", "--generate-triangles", "4000", "--characters", "48", "--ticks", "600",
                       "--shape", "box", "--set", "jump_velocity=7", "--sync-test=32", "--quiet");
    expect_sync_pass(&r,
                     (const char *const[]){"--level", "generated", "--generate-triangles", "4000", "--characters", "48",
                                           "--ticks", "600", "--shape", "box", "--set", "jump_velocity=7", "--quiet",
                                           NULL},
                     600);
    run_free(&r);
}

Test(keelsim, sync_test_passes_on_zdm2)
{
    const char *map = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!map) {
        cr_log_info("sauerbraten_zdm2.obj absent: skipped");
        return;
    }
    run_result r =
        RUN("--level", map, "--scale", "0.12", "--characters", "48", "--ticks", "300", "--sync-test", "--quiet");
    expect_sync_pass(&r,
                     (const char *const[]){"--level", map, "--scale", "0.12", "--characters", "48", "--ticks", "300",
                                           "--quiet", NULL},
                     300);
    run_free(&r);
}

// Scripted input with --record: the recording is the run's, byte for byte
// the same as without the check.
Test(keelsim, sync_test_with_input_file_and_record)
{
    char input[4096], a[4096], b[4096];
    static const char text[] = "1 1 127 0 0 0 0 1\n5 2 -127 30 0 100 0 2\n9 1 0 0 0 0 0 0\n"
                               "40 3 90 -90 0 30000 0 1\n";
    write_temp(input, sizeof input, "sync_input", text, sizeof text - 1);
    close(temp_file(a, sizeof a, "sync_rec_a"));
    close(temp_file(b, sizeof b, "sync_rec_b"));
    run_result plain =
        RUN("--input", input, "--characters", "3", "--ticks", "300", "--platforms", "--record", a, "--quiet");
    run_result sync = RUN("--input", input, "--characters", "3", "--ticks", "300", "--platforms", "--record", b,
                          "--quiet", "--sync-test", "5");
    cr_assert_eq(plain.exit_code, 0, "stderr: %s", plain.err);
    cr_assert_eq(sync.exit_code, 0, "stderr: %s", sync.err);
    cr_assert_str_eq(final_hash_of(plain.out), final_hash_of(sync.out));
    cr_assert(strstr(sync.err, "sync test passed: 300 ticks checked") != NULL, "%s", sync.err);
    int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
    cr_assert(fa >= 0 && fb >= 0);
    size_t na, nb;
    char *ra = keel_test_read_fd(fa, &na), *rb = keel_test_read_fd(fb, &nb);
    cr_assert(na > 0 && na == nb && memcmp(ra, rb, na) == 0, "the recordings differ (%zu, %zu bytes)", na, nb);
    free(ra);
    free(rb);
    close(fa);
    close(fb);
    unlink(a);
    unlink(b);
    unlink(input);
    run_free(&plain);
    run_free(&sync);
}

// keel-sim-savefault: sim_scene_save writes ground_velocity as zero
// (KEEL_INJECT_SAVE_FAULT). The crowd that passes above fails as soon as a
// character stands on a moving platform, naming character and field.
Test(keelsim, sync_test_names_a_field_the_save_leaves_out)
{
    const char *exe = keel_test_program_find("keel-sim-savefault");
    if (!exe) {
        cr_log_info("keel-sim-savefault is not built: skipped");
        return;
    }
    run_result r = keel_test_run(exe, (const char *const[]){CROWD, "--sync-test", "16", NULL}, NULL);
    cr_assert_eq(r.exit_code, 1, "exit %d, stderr: %s", r.exit_code, r.err);
    cr_log_info("keelsim: savefault: %s", r.err);
    cr_assert(strstr(r.err, "keel-sim: sync test failed at tick ") != NULL, "%s", r.err);
    cr_assert(strstr(r.err, "(rollback depth 0)") != NULL, "%s", r.err);
    cr_assert(strstr(r.err, " ground_velocity.") != NULL, "the field is not named: %s", r.err);
    cr_assert(strstr(r.err, "  character ") != NULL, "the character is not named: %s", r.err);
    cr_assert(strstr(r.out, "final_hash") == NULL, "a failed check printed a final hash");
    cr_assert(strstr(r.err, "sync test passed") == NULL);
    run_free(&r);

    // One character riding the elevator, which starts up after a 64-tick pause.
    char input[4096];
    write_temp(input, sizeof input, "rider_input", "", 0);
    run_result one =
        keel_test_run(exe,
                      (const char *const[]){"--characters", "1", "--spawn", "-1.5,0.3,-24", "--input", input, "--ticks",
                                            "256", "--platforms", "--sync-test", "--quiet", NULL},
                      NULL);
    unlink(input);
    cr_assert_eq(one.exit_code, 1, "exit %d, stderr: %s", one.exit_code, one.err);
    cr_assert(strstr(one.err, "  character 1 ground_velocity.y: run ") != NULL, "%s", one.err);
    unsigned long long at = number_after(one.err, "failed at tick ");
    cr_assert(at > 64 && at < 80, "caught at tick %llu, not when the elevator starts", at);
    run_free(&one);
}

// What the sync test cannot see: a change that every run of one build makes
// the same way. keel-sim-diverge flips a velocity bit in every step that
// ends at tick 201, re-simulations included; its run differs from keel-sim's
// but agrees with itself. (keel-replay verify of a recording made by the
// other build finds it: tests/test_replay.c.)
Test(keelsim, sync_test_does_not_see_a_per_build_difference)
{
    const char *exe = keel_test_program_find("keel-sim-diverge");
    if (!exe) {
        cr_log_info("keel-sim-diverge is not built: skipped");
        return;
    }
    const char *const args[] = {"--characters", "8", "--ticks", "201", "--sync-test", "--quiet", NULL};
    run_result d = keel_test_run(exe, args, NULL);
    run_result n = run_keelsim(args);
    cr_assert_eq(d.exit_code, 0, "exit %d, stderr: %s", d.exit_code, d.err);
    cr_assert_eq(n.exit_code, 0, "exit %d, stderr: %s", n.exit_code, n.err);
    cr_assert_str_neq(final_hash_of(d.out), final_hash_of(n.out), "the injected divergence changed nothing");
    run_free(&d);
    run_free(&n);
}
