// keel tests: recordings end to end with the real programs: keel-sim
// --record makes them, keel-replay verifies, diffs and describes them, and
// the injected-divergence build (keel-sim-diverge, keel-replay-diverge:
// sim/src/scene.c with KEEL_INJECT_DIVERGENCE flips the lowest bit of
// velocity.x of character 3 after tick 200) plays the part of a build that
// simulates differently. MIT licence, see LICENSE.
//
// The programs are found beside this test executable (/proc/self/exe).
#define _POSIX_C_SOURCE 200809L // unlink, close under -std=c11

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <keel/net_proto.h>
#include <keel/rec.h>
#include <keel/rec_verify.h>
#include <keel/sim_scene.h>

#include "test_support.h"

// ---- running programs ------------------------------------------------------------

typedef keel_test_run_result run_result;

// A file name for a recording (created empty; removed by the test).
static void temp_path(char *name, size_t size, const char *what) { close(keel_test_temp_fd(name, size, what)); }

// Run program `name` with NULL-terminated args, capturing stdout and stderr.
static run_result run(const char *name, const char *const *args)
{
    return keel_test_run(keel_test_program_path(name), args, NULL);
}

static void run_free(run_result *r) { keel_test_run_free(r); }

// Run and expect an exit code; returns the result for more checks.
static run_result expect(const char *name, const char *const *args, int code)
{
    run_result r = run(name, args);
    cr_assert_eq(r.exit_code, code, "%s %s ...: exit %d, expected %d\nstdout: %s\nstderr: %s", name,
                 args[0] ? args[0] : "", r.exit_code, code, r.out, r.err);
    return r;
}

// ---- a small JSON checker and key lookups -----------------------------------------

static const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

// The end of the JSON value at p, or NULL when it is not valid JSON.
static const char *json_value(const char *p, int depth)
{
    p = json_ws(p);
    if (depth > 64)
        return NULL;
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        bool object = *p == '{';
        p = json_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (object) {
                if (*p != '"')
                    return NULL;
                p = json_value(p, depth + 1);
                if (!p)
                    return NULL;
                p = json_ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = json_value(p, depth + 1);
            if (!p)
                return NULL;
            p = json_ws(p);
            if (*p == close)
                return p + 1;
            if (*p++ != ',')
                return NULL;
        }
    }
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++) {
            if ((unsigned char)*p < 0x20)
                return NULL;
            if (*p == '\\') {
                p++;
                if (*p == 'u') {
                    for (int i = 1; i <= 4; i++)
                        if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                            return NULL;
                    p += 4;
                } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
                    return NULL;
                }
            }
        }
        return *p == '"' ? p + 1 : NULL;
    }
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    const char *start = p;
    if (*p == '-')
        p++;
    if (!(*p >= '0' && *p <= '9'))
        return NULL;
    if (*p == '0')
        p++;
    else
        while (*p >= '0' && *p <= '9')
            p++;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p > start ? p : NULL;
}

static void assert_json(const char *text)
{
    const char *end = json_value(text, 0);
    cr_assert(end != NULL, "not valid JSON: %s", text);
    cr_assert(*json_ws(end) == '\0', "text after the JSON value: %s", end);
}

// The text right after "key": (the first occurrence).
static const char *json_at(const char *text, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    cr_assert(p != NULL, "no key %s in %s", key, text);
    return p + strlen(pat);
}

static long long json_int(const char *text, const char *key) { return strtoll(json_at(text, key), NULL, 10); }

static bool json_str_is(const char *text, const char *key, const char *want)
{
    const char *p = json_at(text, key);
    size_t n = strlen(want);
    return p[0] == '"' && strncmp(p + 1, want, n) == 0 && p[n + 1] == '"';
}

// ---- recordings ------------------------------------------------------------------

static const char *built_in_spawn = "0,0,-4"; // the built-in level's spawn marker

static void record(const char *prog, const char *path, const char *const *extra)
{
    const char *args[40] = {"--quiet", "--record", path};
    int n = 3;
    for (int i = 0; extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    run_result r = expect(prog, args, 0);
    run_free(&r);
}

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf != NULL);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static void write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f != NULL, "%s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(data, 1, size, f), size);
    cr_assert_eq(fclose(f), 0);
}

// CRC-32 (IEEE, reflected; what rec.h's chunk frames use).
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

// Recompute the CRC of the chunk holding byte `at` (chunks as rec.h frames
// them: type, length, payload, CRC over the three), after checking that the
// stored CRC was right before the change was made to a copy... the caller
// checks `before` (the original bytes) for that.
static void fix_crc(uint8_t *data, const uint8_t *before, size_t size, size_t at)
{
    size_t off = REC_MAGIC_SIZE;
    while (off + 12 <= size) {
        uint32_t len = get_u32(data + off + 4);
        size_t end = off + 8 + len;
        cr_assert(end + 4 <= size, "chunk at %zu runs past the end", off);
        if (at >= off + 8 && at < end) {
            cr_assert_eq(crc32_of(before + off, 8 + len), get_u32(before + end),
                         "the test's CRC-32 is not the format's");
            put_u32(data + end, crc32_of(data + off, 8 + len));
            return;
        }
        off = end + 4;
    }
    cr_assert_fail("byte %zu is in no chunk", at);
}

// The recorded results of tick `tick`: world hash and character hashes.
static void recorded_tick(const char *path, uint32_t tick, uint64_t *world, uint32_t *ids, uint16_t *hashes,
                          uint32_t *count)
{
    rec_error err;
    rec_file *f = rec_file_open(path, &err);
    cr_assert(f != NULL, "%s: %s", path, err.message);
    rec_info info;
    rec_file_info(f, &info);
    rec_cursor *c = rec_cursor_create(f, info.first_tick, &err);
    cr_assert(c != NULL, "%s", err.message);
    rec_tick t;
    bool found = false;
    while (rec_cursor_next(c, &t, &err))
        if (t.tick == tick) {
            *world = t.world_hash;
            *count = t.char_count;
            memcpy(ids, t.char_ids, t.char_count * sizeof *ids);
            memcpy(hashes, t.char_hashes, t.char_count * sizeof *hashes);
            found = true;
            break;
        }
    cr_assert(found, "tick %u is not in %s", (unsigned)tick, path);
    rec_cursor_destroy(c);
    rec_file_close(f);
}

// ---- tests -----------------------------------------------------------------------

// Verify with 1 and with 2 threads: a match, and the same words.
static void verify_both(const char *path, const char *const *extra)
{
    const char *a1[10] = {"verify", path, "--quiet"}, *a2[10] = {"verify", path, "--quiet", "--threads", "2"};
    int n1 = 3, n2 = 5;
    for (int i = 0; extra && extra[i]; i++)
        a1[n1++] = a2[n2++] = extra[i];
    run_result one = expect("keel-replay", a1, 0);
    run_result two = expect("keel-replay", a2, 0);
    cr_assert(strstr(one.out, ": match:") != NULL, "%s", one.out);
    cr_assert_str_eq(one.out, two.out);
    run_free(&one);
    run_free(&two);
}

Test(replay, builtin_platforms_crowd_verifies)
{
    char path[4096];
    temp_path(path, sizeof path, "crowd");
    // 24 characters around one spawn point push each other; the platforms carry some.
    record("keel-sim", path,
           (const char *const[]){"--platforms", "--characters", "24", "--spawn", built_in_spawn, "--ticks", "1200",
                                 "--keyframe-interval", "50", NULL});
    verify_both(path, NULL);
    // diff of a recording with itself: a match
    run_result r = expect("keel-replay", (const char *const[]){"diff", path, path, NULL}, 0);
    cr_assert(strstr(r.out, "match:") != NULL, "%s", r.out);
    run_free(&r);
    unlink(path);
}

Test(replay, generated_level_verifies)
{
    char path[4096];
    temp_path(path, sizeof path, "generated");
    record("keel-sim", path,
           (const char *const[]){"--level", "generated", "--generate-triangles", "4000", "--seed", "77", "--characters",
                                 "16", "--ticks", "500", NULL});
    verify_both(path, NULL);
    run_result r = expect("keel-replay", (const char *const[]){"info", path, "--json", NULL}, 0);
    assert_json(r.out);
    cr_assert(strstr(r.out, "\"level\":{\"kind\":\"generated\"") != NULL, "%s", r.out);
    cr_assert_eq(json_int(r.out, "generate_triangles"), 4000);
    cr_assert_eq(json_int(r.out, "generate_seed"), 77);
    cr_assert_eq(json_int(r.out, "ticks"), 500);
    cr_assert_eq(json_int(r.out, "players"), 16);
    run_free(&r);
    unlink(path);
}

Test(replay, zdm2_verifies)
{
    const char *map = keel_test_level_path("sauerbraten_zdm2.obj");
    if (!map) {
        cr_log_info("sauerbraten_zdm2.obj absent: skipped");
        return;
    }
    char path[4096];
    temp_path(path, sizeof path, "zdm2");
    record("keel-sim", path,
           (const char *const[]){"--level", map, "--scale", "0.12", "--characters", "32", "--ticks", "400", NULL});
    verify_both(path, NULL);

    // The level is found by its recorded path; a different --level is
    // refused, though the recorded path holds the right one.
    const char *other = keel_test_level_path("sauerbraten_pandora.obj");
    if (other) {
        run_result r = expect("keel-replay", (const char *const[]){"verify", path, "--level", other, NULL}, 3);
        cr_expect(strstr(r.err, "--level") && strstr(r.err, "is not the recorded level"), "%s", r.err);
        run_free(&r);
    }
    unlink(path);
}

// A 40 m square floor as an OBJ file, and a short keel-sim recording on it.
static const char box_obj[] = "v -20 0 -20\nv 20 0 -20\nv 20 0 20\nv -20 0 20\nf 1 3 2\nf 1 4 3\n";

static void record_on_obj(const char *obj, const char *path)
{
    record("keel-sim", path,
           (const char *const[]){"--level", obj, "--scale", "1", "--characters", "2", "--spawn", "0,0.1,0", "--ticks",
                                 "50", NULL});
}

Test(replay, level_digest_mismatch_is_refused)
{
    // An OBJ recording whose file changed since: refused with exit 3.
    char obj[4096], path[4096];
    temp_path(obj, sizeof obj, "level");
    write_file(obj, box_obj, sizeof box_obj - 1);
    temp_path(path, sizeof path, "objrec");
    record_on_obj(obj, path);
    run_result ok = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 0);
    run_free(&ok);
    static const char moved[] = "v -20 0.5 -20\nv 20 0 -20\nv 20 0 20\nv -20 0 20\nf 1 3 2\nf 1 4 3\n";
    write_file(obj, moved, sizeof moved - 1);
    run_result r = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 3);
    cr_assert(strstr(r.err, "not the recorded one") != NULL, "%s", r.err);
    run_free(&r);
    unlink(obj);
    run_result gone = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 3);
    cr_assert(strstr(gone.err, "not found") != NULL, "%s", gone.err);
    run_free(&gone);
    unlink(path);
}

Test(replay, windows_level_path_is_found_through_levels_dir)
{
    // A recording made on Windows names its level "Z:\\maps\\box.obj". On Linux a
    // file may carry backslashes in its name: keel-sim records the level at
    // DIR/Z:\maps\box.obj, which is then removed; keel-replay finds box.obj in
    // KEEL_LEVELS_DIR by the name after the last backslash.
    char dir[4096], path[4096], win[4200], levels[4200], obj[4400];
    keel_test_dir_make(dir, sizeof dir, "winpath");
    snprintf(win, sizeof win, "%s/Z:\\maps\\box.obj", dir);
    snprintf(levels, sizeof levels, "%s/levels", dir);
    snprintf(obj, sizeof obj, "%s/box.obj", levels);
    cr_assert_eq(mkdir(levels, 0700), 0, "%s: %s", levels, strerror(errno));
    write_file(win, box_obj, sizeof box_obj - 1);
    temp_path(path, sizeof path, "winrec");
    record_on_obj(win, path);
    unlink(win);
    write_file(obj, box_obj, sizeof box_obj - 1);
    setenv("KEEL_LEVELS_DIR", levels, 1);
    run_result r = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 0);
    run_free(&r);
    unlink(obj);
    run_result gone = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 3);
    cr_assert(strstr(gone.err, "not found") != NULL, "%s", gone.err);
    run_free(&gone);
    unsetenv("KEEL_LEVELS_DIR");
    unlink(path);
    keel_test_dir_remove(dir);
}

Test(replay, corrupted_byte_is_a_bad_file)
{
    char path[4096];
    temp_path(path, sizeof path, "corrupt");
    record("keel-sim", path, (const char *const[]){"--characters", "8", "--ticks", "300", NULL});
    size_t size;
    char *data = read_file(path, &size);
    data[size / 2] ^= 0x10;
    write_file(path, data, size);
    free(data);
    run_result r = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 3);
    cr_assert(strstr(r.err, "offset ") != NULL && strstr(r.err, "chunk ") != NULL, "%s", r.err);
    run_free(&r);
    unlink(path);
}

// A format 3 tick block's prefix: first tick and ticks × 2 (+ 1 with a
// keyframe), varints.
static const uint8_t *get_var32(const uint8_t *p, uint32_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        *v |= (uint32_t)(*p & 0x7F) << shift;
        if (!(*p++ & 0x80))
            break;
    }
    return p;
}
static void block_prefix(const uint8_t *payload, uint32_t *first, uint32_t *ticks)
{
    get_var32(get_var32(payload, first), ticks);
    *ticks >>= 1;
}

Test(replay, changed_recorded_hash_names_tick_and_character)
{
    char path[4096];
    temp_path(path, sizeof path, "hash");
    record("keel-sim", path, (const char *const[]){"--characters", "8", "--ticks", "400", "--no-compress", NULL});
    const uint32_t tick = 300;
    uint64_t world;
    uint32_t ids[64], count;
    uint16_t hashes[64];
    recorded_tick(path, tick, &world, ids, hashes, &count);
    cr_assert(count >= 5);

    // The tick's character hashes: in the hash section of its block (the
    // TBLK that holds it), which ends 16 bytes (world hash, check) before
    // the payload does; every tick here has the same characters.
    size_t size;
    uint8_t *data = (uint8_t *)read_file(path, &size);
    uint8_t *before = malloc(size);
    cr_assert(before != NULL);
    memcpy(before, data, size);
    (void)world;
    size_t h = SIZE_MAX;
    for (size_t off = REC_MAGIC_SIZE; off + 12 <= size;) {
        uint32_t len = get_u32(data + off + 4);
        const uint8_t *pl = data + off + 8;
        uint32_t first, ticks;
        block_prefix(pl, &first, &ticks);
        if (memcmp(data + off, "TBLK", 4) == 0 && first <= tick && tick < first + ticks) {
            size_t hashes_at = off + 8 + len - 16 - 2u * (size_t)ticks * count;
            h = hashes_at + 2u * ((size_t)(tick - first) * count + 4u); // character index 4
        }
        off += 12u + len;
    }
    cr_assert(h != SIZE_MAX, "tick %u's block is not in the file (compressed?)", (unsigned)tick);
    cr_assert_eq(data[h] | data[h + 1] << 8, hashes[4]);
    data[h] ^= 1u;
    fix_crc(data, before, size, h);
    write_file(path, data, size);
    free(data);
    free(before);

    run_result r = expect("keel-replay", (const char *const[]){"verify", path, "--json", NULL}, 1);
    assert_json(r.out);
    cr_assert_eq(json_int(r.out, "tick"), tick, "%s", r.out);
    cr_assert_eq(json_int(r.out, "character"), ids[4], "%s", r.out);
    cr_assert_eq(json_int(r.out, "characters_differing"), 1, "%s", r.out);
    run_free(&r);
    // The same with two threads.
    run_result r2 = expect("keel-replay", (const char *const[]){"verify", path, "--json", "--threads", "2", NULL}, 1);
    cr_assert_eq(json_int(r2.out, "tick"), tick, "%s", r2.out);
    cr_assert_eq(json_int(r2.out, "character"), ids[4], "%s", r2.out);
    run_free(&r2);
    unlink(path);
}

// A block whose 16-bit hashes all match but whose 64-bit check does not
// (here: the recorded check changed) is named by its last tick, saying that
// the divergence lies somewhere in the block.
Test(replay, changed_block_check_names_the_block)
{
    char path[4096];
    temp_path(path, sizeof path, "check");
    record("keel-sim", path, (const char *const[]){"--characters", "8", "--ticks", "400", "--no-compress", NULL});
    size_t size;
    uint8_t *data = (uint8_t *)read_file(path, &size);
    uint8_t *before = malloc(size);
    cr_assert(before != NULL);
    memcpy(before, data, size);
    size_t at = SIZE_MAX;
    for (size_t off = REC_MAGIC_SIZE; off + 12 <= size;) {
        uint32_t len = get_u32(data + off + 4);
        uint32_t first, ticks;
        block_prefix(data + off + 8, &first, &ticks);
        if (memcmp(data + off, "TBLK", 4) == 0 && first == 256)
            at = off + 8 + len - 8; // the block's check: the payload's last 8 bytes
        off += 12u + len;
    }
    cr_assert(at != SIZE_MAX, "no TBLK starting at tick 256");
    data[at] ^= 1u;
    fix_crc(data, before, size, at);
    write_file(path, data, size);
    free(data);
    free(before);
    for (int threads = 1; threads <= 2; threads++) {
        run_result r =
            expect("keel-replay",
                   (const char *const[]){"verify", path, "--json", "--threads", threads == 1 ? "1" : "2", NULL}, 1);
        assert_json(r.out);
        cr_assert_eq(json_int(r.out, "tick"), 319, "%s", r.out);
        cr_assert(strstr(r.out, "ticks 256 to 319 match, but their block's 64-bit check does not") != NULL, "%s",
                  r.out);
        run_free(&r);
    }
    unlink(path);
}

// keel-sim's per-tick JSON lines: the hash line of `tick` (1-based, keel-sim's
// count) and a character's row.
static const char *hash_line(const char *out, unsigned tick)
{
    char pat[64];
    snprintf(pat, sizeof pat, "{\"tick\":%u,\"hash\":", tick);
    const char *p = strstr(out, pat);
    cr_assert(p != NULL, "no hash line for tick %u", tick);
    return p;
}

static const char *char_row(const char *out, unsigned tick, unsigned id)
{
    char pat[64];
    snprintf(pat, sizeof pat, "{\"tick\":%u,\"id\":%u,", tick, id);
    const char *p = strstr(out, pat);
    cr_assert(p != NULL, "no row for tick %u character %u", tick, id);
    return p;
}

// The exact decimal text of vel[1] in a keel-sim row.
static void row_vel_y(const char *row, char *buf, size_t size)
{
    const char *p = strstr(row, "\"vel\":[");
    cr_assert(p != NULL);
    p = strchr(p, ',') + 1;
    size_t n = strcspn(p, ",");
    snprintf(buf, size, "%.*s", (int)n, p);
}

// Write `from` again with header settings `settings` (digest recomputed)
// but the states and hashes `from` holds: the normal recording made to
// claim a changed setting.
static void rewrite_with_settings(const char *from, const char *to, const sim_move_settings *settings)
{
    rec_error err;
    rec_file *f = rec_file_open(from, &err);
    cr_assert(f != NULL, "%s", err.message);
    rec_header h = *rec_file_header(f);
    cr_assert_eq(h.level.kind, REC_LEVEL_BUILTIN);
    sim_level level;
    cr_assert_eq(sim_level_builtin(&level), 0);
    sim_world *world = sim_world_create(&level, NULL, NULL);
    cr_assert(world != NULL);
    sim_scene *scene = sim_scene_create(world, &h.settings, h.max_characters);
    cr_assert(scene != NULL);
    uint32_t tick, count;
    const sim_char_state *states;
    cr_assert(rec_file_initial(f, &tick, &states, &count));
    cr_assert(sim_scene_restore_states(scene, tick, states, count, NULL));
    h.settings = *settings;
    h.settings_digest = net_settings_digest(settings);
    rec_writer_config cfg = rec_default_writer_config();
    rec_writer *w = rec_writer_open(to, &h, &cfg, scene, &err);
    cr_assert(w != NULL, "%s", err.message);
    rec_cursor *c = rec_cursor_create(f, tick, &err);
    cr_assert(c != NULL);
    rec_tick t;
    while (rec_cursor_next(c, &t, &err)) {
        for (uint32_t i = 0; i < t.leave_count; i++)
            cr_assert(sim_scene_remove_character(scene, t.leaves[i]));
        for (uint32_t i = 0; i < t.join_count; i++)
            cr_assert_eq(sim_scene_add_character(scene, &t.joins[i]), 0);
        for (uint32_t i = 0; i < t.command_count; i++)
            cr_assert(sim_scene_set_input(scene, t.commands[i].id, &t.commands[i].input));
        sim_scene_step(scene);
        cr_assert(rec_writer_tick(w, &t, scene));
    }
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    rec_cursor_destroy(c);
    sim_scene_destroy(scene);
    sim_world_destroy(world);
    sim_level_free(&level);
    rec_file_close(f);
}

Test(replay, changed_setting_diverges_at_the_first_jump)
{
    char normal[4096], changed[4096], patched[4096];
    temp_path(normal, sizeof normal, "normal");
    temp_path(changed, sizeof changed, "changed");
    temp_path(patched, sizeof patched, "patched");
    // Recorded in debug mode (every tick's full state); keel-sim's rows give
    // the expected tick, character and values independently.
    run_result a = expect("keel-sim", (const char *const[]){"--record", normal, "--record-full", NULL}, 0);
    run_result b = expect(
        "keel-sim", (const char *const[]){"--record", changed, "--record-full", "--set", "jump_velocity=7.0", NULL}, 0);
    // keel-sim's tick k is the state after k steps: the recording's tick k - 1.
    unsigned first = 0;
    for (unsigned k = 1; k <= 640 && !first; k++) {
        const char *ha = hash_line(a.out, k), *hb = hash_line(b.out, k);
        size_t n = strcspn(ha, "\n");
        if (n != strcspn(hb, "\n") || strncmp(ha, hb, n) != 0)
            first = k;
    }
    cr_assert(first > 0, "the changed setting changed nothing");
    unsigned id = 0;
    char vy_a[40] = "", vy_b[40] = "";
    for (unsigned c = 1; c <= 8 && !id; c++) {
        const char *ra = char_row(a.out, first, c), *rb = char_row(b.out, first, c);
        size_t n = strcspn(ra, "\n");
        if (n != strcspn(rb, "\n") || strncmp(ra, rb, n) != 0) {
            id = c;
            row_vel_y(ra, vy_a, sizeof vy_a);
            row_vel_y(rb, vy_b, sizeof vy_b);
        }
    }
    cr_assert(id > 0);
    cr_assert(strcmp(vy_a, vy_b) != 0, "velocity.y is the same: %s", vy_a);

    run_result d = expect("keel-replay", (const char *const[]){"diff", normal, changed, "--json", NULL}, 1);
    assert_json(d.out);
    cr_assert_eq(json_int(d.out, "tick"), first - 1, "%s", d.out);
    cr_assert_eq(json_int(d.out, "character"), id, "%s", d.out);
    cr_assert(json_str_is(d.out, "kind", "results"), "%s", d.out);
    cr_assert(strstr(d.out, "jump_velocity") != NULL, "the header note names the setting: %s", d.out);
    // velocity.y with both values, as keel-sim printed them
    const char *f = strstr(d.out, "\"field\":\"velocity.y\"");
    cr_assert(f != NULL, "velocity.y not among the fields: %s", d.out);
    char want[128];
    snprintf(want, sizeof want, "\"decimal\":%s}", vy_a);
    const char *va = strstr(f, "\"a\":");
    cr_assert(va && strncmp(strstr(va, "\"decimal\":"), want, strlen(want)) == 0, "A's value is not %s: %s", vy_a, f);
    snprintf(want, sizeof want, "\"decimal\":%s}", vy_b);
    const char *vb = strstr(f, "\"b\":");
    cr_assert(vb && strncmp(strstr(vb, "\"decimal\":"), want, strlen(want)) == 0, "B's value is not %s: %s", vy_b, f);
    run_free(&d);
    // the text form names the same
    run_result dt = expect("keel-replay", (const char *const[]){"diff", normal, changed, NULL}, 1);
    char line[96];
    snprintf(line, sizeof line, "tick %u character %u velocity.y: ", first - 1, id);
    cr_assert(strstr(dt.out, line) != NULL, "%s", dt.out);
    run_free(&dt);

    // Each verifies on its own (the header carries its settings) ...
    run_result v1 = expect("keel-replay", (const char *const[]){"verify", changed, "--quiet", NULL}, 0);
    run_free(&v1);
    // ... and the normal one claiming the changed setting diverges there.
    sim_move_settings s = sim_move_default_settings();
    s.jump_velocity = SIM_FX_RATIO(7, 1);
    rewrite_with_settings(normal, patched, &s);
    run_result v2 = expect("keel-replay", (const char *const[]){"verify", patched, "--json", NULL}, 1);
    assert_json(v2.out);
    cr_assert_eq(json_int(v2.out, "tick"), first - 1, "%s", v2.out);
    cr_assert_eq(json_int(v2.out, "character"), id, "%s", v2.out);
    cr_assert(strstr(v2.out, "\"field\":\"velocity.y\"") != NULL, "%s", v2.out);
    run_free(&v2);

    run_free(&a);
    run_free(&b);
    unlink(normal);
    unlink(changed);
    unlink(patched);
}

Test(replay, injected_divergence_is_named)
{
#ifdef KEEL_SANITIZED_BUILD
    cr_skip_test("the injected-divergence build is made in the normal tree only (tests/CMakeLists.txt)");
#endif
    char normal[4096], diverged[4096], sparse[4096];
    temp_path(normal, sizeof normal, "inj_normal");
    temp_path(diverged, sizeof diverged, "inj_diverged");
    temp_path(sparse, sizeof sparse, "inj_sparse");
    record("keel-sim", normal, (const char *const[]){"--record-full", "--ticks", "300", NULL});
    record("keel-sim-diverge", diverged, (const char *const[]){"--record-full", "--ticks", "300", NULL});
    record("keel-sim", sparse, (const char *const[]){"--ticks", "300", NULL});

    // The diverging build re-simulating a normal debug-mode recording.
    run_result v = expect("keel-replay-diverge", (const char *const[]){"verify", normal, NULL}, 1);
    cr_assert(strstr(v.out, "tick 200 character 3 velocity.x: ") != NULL, "%s", v.out);
    run_free(&v);
    run_result vj =
        expect("keel-replay-diverge", (const char *const[]){"verify", normal, "--json", "--threads", "2", NULL}, 1);
    assert_json(vj.out);
    cr_assert_eq(json_int(vj.out, "tick"), 200);
    cr_assert_eq(json_int(vj.out, "character"), 3);
    cr_assert(json_str_is(vj.out, "field", "velocity.x"), "%s", vj.out);
    // the lowest bit: raw values one apart
    const char *f = strstr(vj.out, "\"fields\":[");
    cr_assert(f != NULL);
    long long ra = json_int(f, "raw"), rb = json_int(strstr(f, "\"b\":"), "raw");
    cr_assert_eq(ra ^ rb, 1, "%lld vs %lld", ra, rb);
    run_free(&vj);

    // The normal build verifies both of its own; the diverging build's own
    // recording verifies in the diverging build.
    run_result ok = expect("keel-replay", (const char *const[]){"verify", normal, "--quiet", NULL}, 0);
    run_free(&ok);
    run_result ok2 = expect("keel-replay-diverge", (const char *const[]){"verify", diverged, "--quiet", NULL}, 0);
    run_free(&ok2);

    // Recordings of both builds: diff names the same tick, character and field.
    run_result d = expect("keel-replay", (const char *const[]){"diff", normal, diverged, "--json", NULL}, 1);
    assert_json(d.out);
    cr_assert_eq(json_int(d.out, "tick"), 200);
    cr_assert_eq(json_int(d.out, "character"), 3);
    cr_assert(json_str_is(d.out, "field", "velocity.x"), "%s", d.out);
    run_free(&d);
    // and a re-simulation in the diverging build does too
    run_result dr = expect("keel-replay-diverge", (const char *const[]){"diff", normal, "--resim", "--json", NULL}, 1);
    cr_assert_eq(json_int(dr.out, "tick"), 200);
    cr_assert(json_str_is(dr.out, "field", "velocity.x"), "%s", dr.out);
    run_free(&dr);

    // Without full state at tick 201 the field is not named, and the
    // output says what would name it.
    run_result s = expect("keel-replay-diverge", (const char *const[]){"verify", sparse, NULL}, 1);
    cr_assert(strstr(s.out, "tick 200") != NULL && strstr(s.out, "debug-mode recording") != NULL, "%s", s.out);
    run_free(&s);
    unlink(normal);
    unlink(diverged);
    unlink(sparse);
}

Test(replay, truncated_file)
{
    char path[4096];
    temp_path(path, sizeof path, "trunc");
    record("keel-sim", path, (const char *const[]){"--characters", "8", "--ticks", "600", NULL});
    size_t size;
    char *data = read_file(path, &size);
    write_file(path, data, size * 2 / 3);
    free(data);
    run_result i = expect("keel-replay", (const char *const[]){"info", path, NULL}, 0);
    cr_assert(strstr(i.out, "truncated at offset") != NULL, "%s", i.out);
    run_free(&i);
    run_result j = expect("keel-replay", (const char *const[]){"info", path, "--json", NULL}, 0);
    assert_json(j.out);
    cr_assert(strstr(j.out, "\"complete\":false") != NULL, "%s", j.out);
    long long ticks = json_int(j.out, "ticks");
    cr_assert(ticks > 0 && ticks < 600, "%lld", ticks);
    long long cut_at = json_int(j.out, "truncated_at");
    run_free(&j);
    // verify checks the readable prefix, then fails: the end is missing,
    // and the message names where the file stops
    char offset[64];
    snprintf(offset, sizeof offset, "truncated at offset %lld of %zu bytes", cut_at, size * 2 / 3);
    run_result v = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 3);
    cr_assert(strstr(v.err, offset) != NULL && strstr(v.out, "truncated") != NULL, "%s%s", v.out, v.err);
    run_free(&v);
    // --partial accepts the readable prefix
    run_result p = expect("keel-replay", (const char *const[]){"verify", path, "--partial", NULL}, 0);
    cr_assert(strstr(p.err, "truncated") != NULL && strstr(p.out, "truncated") != NULL, "%s%s", p.out, p.err);
    run_free(&p);
    unlink(path);
}

// A --level that is not the recorded level is an error naming the flag and
// both digests, even when the recorded path holds the right one (it was
// used instead, silently); a --level that cannot be read says why.
Test(replay, a_level_flag_that_is_not_the_recorded_level_is_an_error)
{
    char rec[4096], a[4096], b[4096];
    temp_path(rec, sizeof rec, "lvrec");
    temp_path(a, sizeof a, "lva");
    temp_path(b, sizeof b, "lvb");
    static const char other_obj[] = "v -20 0 -20\nv 20 0 -20\nv 20 0 20\nv -20 0 20\nv 0 2 0\nf 1 3 2\nf 1 4 3\n";
    write_file(a, box_obj, sizeof box_obj - 1);
    write_file(b, other_obj, sizeof other_obj - 1);
    record_on_obj(a, rec);
    run_result ok = expect("keel-replay", (const char *const[]){"verify", rec, "--level", a, NULL}, 0);
    run_free(&ok);
    run_result v = expect("keel-replay", (const char *const[]){"verify", rec, "--level", b, NULL}, 3);
    cr_expect(strstr(v.err, "--level") && strstr(v.err, b) &&
                  strstr(v.err, "is not the recorded level: its digest is") && strstr(v.err, "the recording's"),
              "%s", v.err);
    run_free(&v);
    run_result m =
        expect("keel-replay", (const char *const[]){"verify", rec, "--level", "/nonexistent/x.obj", NULL}, 3);
    cr_expect(strstr(m.err, "--level /nonexistent/x.obj: cannot read it: No such file"), "%s", m.err);
    run_free(&m);
    unlink(rec);
    unlink(a);
    unlink(b);
}

Test(replay, client_recordings_are_dispatched)
{
    char path[4096];
    temp_path(path, sizeof path, "client");
    rec_header h = rec_default_header();
    h.kind = REC_KIND_CLIENT;
    h.client_character = 1;
    rec_writer_config cfg = rec_default_writer_config();
    rec_error err;
    rec_writer *w = rec_writer_open_client(path, &h, &cfg, &err);
    cr_assert(w != NULL, "%s", err.message);
    rec_client_record r = {0};
    r.op = REC_CLIENT_HELLO;
    cr_assert(rec_writer_client(w, &r));
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    // verify re-runs the client library on the calls (cl_replay_verify):
    // a hello alone confirms nothing, and that matches.
    run_result v = expect("keel-replay", (const char *const[]){"verify", path, NULL}, 0);
    cr_assert(strstr(v.out, "confirmed ticks reproduced by the client library") != NULL, "%s%s", v.out, v.err);
    run_free(&v);
    run_result i = expect("keel-replay", (const char *const[]){"info", path, NULL}, 0);
    cr_assert(strstr(i.out, "client recording") != NULL, "%s", i.out);
    run_free(&i);
    unlink(path);
}

Test(replay, usage_errors)
{
    static const char *const bad[][6] = {
        {NULL},
        {"frobnicate", NULL},
        {"verify", NULL},
        {"verify", "x.krec", "--threads", "0", NULL},
        {"verify", "x.krec", "--bogus", NULL},
        {"diff", "a.krec", NULL},
        {"diff", "a.krec", "b.krec", "c.krec", NULL},
        {"info", "x.krec", "--threads", "2", NULL},
        {"info", "x.krec", "--quiet", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r = expect("keel-replay", bad[i], 2);
        cr_assert(strstr(r.err, "keel-replay --help lists the options") != NULL, "%s", r.err);
        run_free(&r);
    }
    run_result h = expect("keel-replay", (const char *const[]){"--help", NULL}, 0);
    cr_assert(strstr(h.out, "exit codes") != NULL && strstr(h.out, "3  a bad file") != NULL, "%s", h.out);
    run_free(&h);
    run_result missing = expect("keel-replay", (const char *const[]){"verify", "/nonexistent/x.krec", NULL}, 3);
    run_free(&missing);

    static const char *const sim_bad[][6] = {
        {"--mode", "probes", "--record", "/tmp/x.krec", NULL},
        {"--set", "warp_speed=9", NULL},
        {"--set", "jump_velocity", NULL},
        {"--set", "jump_velocity=fast", NULL},
        {"--keyframe-interval", "8", NULL},
        {"--record-full", NULL},
        {"--record", "/tmp/x.krec", "--characters", "5000", NULL},
    };
    for (size_t i = 0; i < sizeof sim_bad / sizeof sim_bad[0]; i++) {
        run_result r = expect("keel-sim", sim_bad[i], 2);
        cr_assert(strstr(r.err, "keel-sim --help lists the options") != NULL, "%s", r.err);
        run_free(&r);
    }
}
