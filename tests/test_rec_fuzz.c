// keel tests: fuzzing the recording reader. Real recordings (scene ones in
// formats 3 and 2, compressed and plain, keyframes and debug mode; a client
// one; a game's, format 5 and 4, with its GAME chunk and its GKEY and GCMD chunks
// compressed (GKYZ, GCMZ); a game client's, with its game commands) are damaged
// -- bit flips, bytes set, truncations, chunk lengths edited, bytes inserted
// and removed, chunks dropped or repeated -- and, in most rounds, every
// chunk's CRC is recomputed afterwards so that the damage reaches the
// decoders instead of stopping at the CRC. Each copy is opened and, when it
// opens, walked completely: every tick from the start, every keyframe, a
// cursor from every keyframe, every client record. Nothing may crash or
// trip the sanitizers, and a file that opens must decode to its end (open
// decodes everything once, so a cursor never meets a fault it did not).
// KEEL_FUZZ_ROUNDS sets the number of rounds (default 20000). MIT licence.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <keel/rec.h>

#include "tag.h"
#include "test_rec_scene.h"
#include "test_support.h"

#include "../rec/src/rec_internal.h"

static sim_level level;
static sim_world *world;
static char dir[256];
static sim_game *tag; // the example game (tests/games/tag)

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    keel_test_dir_make(dir, sizeof dir, "rec_fuzz");
    tag = sim_game_create(tag_game(), NULL);
}

static void teardown(void)
{
    keel_test_dir_remove(dir);
    keel_test_builtin_free(&level, world);
    sim_game_destroy(tag);
}

TestSuite(rec_fuzz, .init = setup, .fini = teardown, .timeout = 600);

typedef struct seed_file {
    uint8_t *data;
    size_t size;
    const char *name;
} seed_file;

// format_version 0: the current one.
static seed_file scene_seed(const char *name, uint32_t interval, bool compress, uint32_t ticks, uint64_t seed,
                            uint32_t format_version)
{
    trs_config cfg = trs_default_config();
    cfg.format_version = format_version;
    cfg.ticks = ticks;
    cfg.characters = 6;
    cfg.capacity = 10;
    cfg.keyframe_interval = interval;
    cfg.compress = compress;
    cfg.seed = seed;
    cfg.substitutes = true; // SUBS chunks among the damaged
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    trs_run run;
    rec_error err;
    cr_assert(trs_record(&level, world, &cfg, path, &run, &err), "%s", err.message);
    trs_free(&run);
    seed_file s = {NULL, 0, name};
    s.data = trs_read_file(path, &s.size);
    cr_assert_not_null(s.data);
    return s;
}

// Whether a file holds a chunk of `type` (walking its frames).
static bool has_chunk(const seed_file *s, const char *type)
{
    for (size_t off = REC_MAGIC_SIZE; off + 12 <= s->size; off += 12u + rec_get_le32(s->data + off + 4))
        if (memcmp(s->data + off, type, 4) == 0)
            return true;
    return false;
}

// A recording of the example game (format 5, or 4 with its game chunks
// plain): 6 characters that walk and fire, keyframes every 8 ticks (each
// with its GKEY), 40 ticks.
static seed_file game_seed(uint32_t format)
{
    const char *name = format == 4 ? "tag-format4.rec" : "tag.rec";
    sim_move_settings S = sim_move_default_settings();
    sim_scene *scene = sim_scene_create_game(world, &S, 8, tag);
    const sim_marker *spawn = sim_level_find_marker(&level, "spawn");
    sim_vec3 base = spawn ? spawn->position : sim_v3(0, SIM_FX_INT(1), 0);
    for (uint32_t i = 0; i < 6; i++) {
        sim_char_state c = sim_char_spawn(
            i + 1, sim_v3(base.x + SIM_FX_INT((int32_t)i) - SIM_FX_INT(3), base.y, base.z), (sim_angle)(i * 10923u));
        cr_assert_eq(sim_scene_add_character(scene, &c), 0);
    }
    rec_header h = rec_default_header();
    rec_header_set_scene(&h, scene);
    h.keyframe_interval = 8;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rec_error err;
    rec_writer_config wc = rec_default_writer_config();
    wc.test_format_version = format;
    rec_writer *w = rec_writer_open(path, &h, &wc, scene, &err);
    cr_assert_not_null(w, "%s", err.message);
    rec_command cmds[6];
    uint8_t packed[6 * SIM_GAME_COMMAND_MAX_BYTES];
    size_t bytes = (sim_game_command_bits(tag) + 7u) / 8u;
    for (uint32_t k = 0; k < 40; k++) {
        uint32_t tick = sim_scene_tick(scene);
        for (uint32_t i = 0; i < 6; i++) {
            sim_input in = {.tick = tick, .forward = 127, .yaw = (sim_angle)(i * 10923u)};
            tag_command tc = {.fire = (uint8_t)((k + i) % 5 == 0), .dash = (uint8_t)(k == 20 && i == 1), .weapon = 1};
            cr_assert(sim_scene_set_command(scene, i + 1, &in, &tc, NULL));
            cr_assert_eq(sim_game_pack_command(tag, &tc, packed + i * bytes, bytes, NULL), bytes);
            cmds[i] = (rec_command){.id = i + 1, .input = in};
        }
        sim_scene_step(scene);
        rec_tick t = {.tick = tick, .command_count = 6, .commands = cmds, .game_commands = packed};
        cr_assert(rec_writer_tick(w, &t, scene));
    }
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    sim_scene_destroy(scene);
    seed_file s = {NULL, 0, name};
    s.data = trs_read_file(path, &s.size);
    cr_assert_not_null(s.data);
    // Format 5: the game's chunks compressed, so the fuzz reaches their
    // frames; format 4 (what keel wrote before) keeps them plain.
    cr_assert_eq(has_chunk(&s, REC_T_GKYZ), format == 5);
    cr_assert_eq(has_chunk(&s, REC_T_GCMZ), format == 5);
    cr_assert_eq(has_chunk(&s, REC_T_GKEY), format == 4);
    cr_assert_eq(has_chunk(&s, REC_T_GCMD), format == 4);
    return s;
}

// A client recording of the example game (format 5): a GAME chunk, and
// predict records with a game command, none, or one refused.
static seed_file client_game_seed(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/client_game.rec", dir);
    sim_move_settings S = sim_move_default_settings();
    sim_scene *scene = sim_scene_create_game(world, &S, 8, tag);
    rec_header h = rec_default_header();
    rec_header_set_scene(&h, scene);
    sim_scene_destroy(scene);
    h.game = tag;
    rec_error err;
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = false;
    rec_writer *w = rec_writer_open_client(path, &h, &wc, &err);
    cr_assert_not_null(w, "%s", err.message);
    size_t bytes = (sim_game_command_bits(tag) + 7u) / 8u;
    for (uint32_t i = 0; i < 300; i++) {
        rec_client_record r;
        memset(&r, 0, sizeof r);
        r.op = i % 3 ? REC_CLIENT_PREDICT : REC_CLIENT_CONFIRMED;
        r.now_ms = i * 16u;
        r.input.tick = i;
        r.result = 1;
        r.tick = i;
        r.hash = (uint64_t)i * 0x9E3779B97F4A7C15u;
        uint8_t packed[SIM_GAME_COMMAND_MAX_BYTES];
        tag_command tc = {.fire = (uint8_t)(i % 7 == 0), .weapon = (uint8_t)(i / 32 % 3), .aim = (sim_angle)(i << 8)};
        cr_assert_eq(sim_game_pack_command(tag, &tc, packed, sizeof packed, NULL), bytes);
        r.game_command = i % 5 ? packed : NULL;
        r.game_refused = i % 11 == 0;
        cr_assert(rec_writer_client(w, &r), "record %u", i);
    }
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    seed_file s = {NULL, 0, "client_game"};
    s.data = trs_read_file(path, &s.size);
    cr_assert_not_null(s.data);
    return s;
}

static seed_file client_seed(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/client.rec", dir);
    rec_header h = rec_default_header();
    rec_error err;
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = false;
    rec_writer *w = rec_writer_open_client(path, &h, &wc, &err);
    cr_assert_not_null(w, "%s", err.message);
    keel_rng rng = {3};
    uint8_t packet[200];
    for (int i = 0; i < 400; i++) {
        rec_client_record r;
        memset(&r, 0, sizeof r);
        r.op = (rec_client_op)(1 + i % 5);
        r.now_ms = (uint32_t)(i * 16);
        if (r.op == REC_CLIENT_EVENT) {
            r.length = (uint32_t)keel_rng_range(&rng, 0, sizeof packet);
            for (uint32_t k = 0; k < r.length; k++)
                packet[k] = (uint8_t)keel_rng_range(&rng, 0, 255);
            r.data = packet;
            r.channel = 1;
            r.event_type = 2;
        }
        r.input.tick = (uint32_t)i;
        r.input.yaw = (sim_angle)(i * 100);
        r.result = (uint32_t)(i & 1);
        r.tick = (uint32_t)i;
        r.hash = keel_rng_next(&rng);
        if (r.op == REC_CLIENT_EVENT && i % 100 == 1) {
            // a big, compressible packet now and then: several blocks, some zstd
            static uint8_t big[30000];
            for (size_t k = 0; k < sizeof big; k++)
                big[k] = (uint8_t)(k % 7 + (size_t)i);
            r.data = big;
            r.length = sizeof big;
        }
        cr_assert(rec_writer_client(w, &r));
    }
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    seed_file s = {NULL, 0, "client"};
    s.data = trs_read_file(path, &s.size);
    rec_file *f = rec_file_open_memory(s.data, s.size, &err);
    cr_assert_not_null(f, "%s", err.message);
    rec_info info;
    rec_file_info(f, &info);
    cr_assert_geq(info.blocks, 2u);
    cr_assert_geq(info.compressed_blocks, 1u);
    rec_file_close(f);
    return s;
}

// Recompute the CRC of every chunk whose frame fits in the file.
static void fix_crcs(uint8_t *d, size_t n)
{
    size_t off = REC_MAGIC_SIZE;
    while (off + 12 <= n) {
        uint32_t len = rec_get_le32(d + off + 4);
        if ((uint64_t)len + 12 > n - off)
            break;
        rec_le32(d + off + 8 + len, rec_crc32(d + off, 8 + (size_t)len));
        off += 12u + len;
    }
}

typedef struct chunk_span {
    size_t at;
    uint32_t len;
} chunk_span;

static uint32_t spans_of(const uint8_t *d, size_t n, chunk_span *out, uint32_t max)
{
    uint32_t k = 0;
    size_t off = REC_MAGIC_SIZE;
    while (off + 12 <= n && k < max) {
        uint32_t len = rec_get_le32(d + off + 4);
        if ((uint64_t)len + 12 > n - off)
            break;
        out[k].at = off;
        out[k].len = len;
        k++;
        off += 12u + len;
    }
    return k;
}

// One mutation of buf (size *n, capacity cap).
static void mutate(keel_rng *rng, uint8_t *d, size_t *n, size_t cap)
{
    chunk_span sp[512];
    uint32_t ns = spans_of(d, *n, sp, 512);
    int kind = (int)keel_rng_range(rng, 0, 8);
    if (*n == 0)
        return;
    switch (kind) {
    case 0: { // bit flip
        size_t at = (size_t)keel_rng_range(rng, 0, (int64_t)*n - 1);
        d[at] ^= (uint8_t)(1u << keel_rng_range(rng, 0, 7));
        break;
    }
    case 1: { // a byte set to something interesting
        static const uint8_t vals[] = {0x00, 0xFF, 0x7F, 0x80, 0x01, 0x40, 0xFE};
        size_t at = (size_t)keel_rng_range(rng, 0, (int64_t)*n - 1);
        d[at] = keel_rng_range(rng, 0, 1) ? vals[keel_rng_range(rng, 0, 6)] : (uint8_t)keel_rng_range(rng, 0, 255);
        break;
    }
    case 2: // truncation
        *n = (size_t)keel_rng_range(rng, 0, (int64_t)*n);
        break;
    case 3: { // a chunk's length edited (and the rest of the file shifted under it)
        if (!ns)
            break;
        chunk_span *c = &sp[keel_rng_range(rng, 0, ns - 1)];
        uint32_t len = c->len;
        int64_t delta =
            keel_rng_range(rng, 0, 3) == 0 ? keel_rng_range(rng, -100000, 100000) : keel_rng_range(rng, -9, 9);
        int64_t nl = (int64_t)len + delta;
        if (keel_rng_range(rng, 0, 9) == 0)
            nl = (int64_t)keel_rng_range(rng, 0, 0xFFFFFFFFll);
        if (nl < 0)
            nl = 0;
        rec_le32(d + c->at + 4, (uint32_t)nl);
        break;
    }
    case 4: { // payload bytes changed inside one chunk (decoder food once CRCs are fixed)
        if (!ns)
            break;
        chunk_span *c = &sp[keel_rng_range(rng, 0, ns - 1)];
        if (!c->len)
            break;
        int count = (int)keel_rng_range(rng, 1, 4);
        for (int i = 0; i < count; i++) {
            size_t at = c->at + 8 + (size_t)keel_rng_range(rng, 0, c->len - 1);
            d[at] = keel_rng_range(rng, 0, 2) ? (uint8_t)(d[at] + keel_rng_range(rng, -2, 2))
                                              : (uint8_t)keel_rng_range(rng, 0, 255);
        }
        break;
    }
    case 5: { // bytes inserted into or removed from a payload, its length kept true
        if (!ns)
            break;
        chunk_span *c = &sp[keel_rng_range(rng, 0, ns - 1)];
        size_t at = c->at + 8 + (size_t)keel_rng_range(rng, 0, c->len);
        if (keel_rng_range(rng, 0, 1) && *n + 8 <= cap) {
            uint32_t k = (uint32_t)keel_rng_range(rng, 1, 8);
            memmove(d + at + k, d + at, *n - at);
            for (uint32_t i = 0; i < k; i++)
                d[at + i] = (uint8_t)keel_rng_range(rng, 0, 255);
            *n += k;
            rec_le32(d + c->at + 4, c->len + k);
        } else {
            uint32_t k = (uint32_t)keel_rng_range(rng, 1, 8);
            if (at + k > c->at + 8 + c->len)
                break;
            memmove(d + at, d + at + k, *n - at - k);
            *n -= k;
            rec_le32(d + c->at + 4, c->len - k);
        }
        break;
    }
    case 6: { // a chunk dropped
        if (ns < 2)
            break;
        chunk_span *c = &sp[keel_rng_range(rng, 0, ns - 1)];
        size_t whole = 12u + c->len;
        memmove(d + c->at, d + c->at + whole, *n - c->at - whole);
        *n -= whole;
        break;
    }
    case 7: { // a chunk repeated right after itself
        if (!ns)
            break;
        chunk_span *c = &sp[keel_rng_range(rng, 0, ns - 1)];
        size_t whole = 12u + c->len;
        if (*n + whole > cap)
            break;
        memmove(d + c->at + whole, d + c->at, *n - c->at);
        *n += whole;
        break;
    }
    default: { // a chunk's type changed to another known one
        if (!ns)
            break;
        static const char *types[] = {"HEAD", "SCHM", "INIT", "KEYF", "KEYZ", "TBLK",
                                      "TBLZ", "CLOG", "CLGZ", "ENDR", "XXXX"};
        chunk_span *c = &sp[keel_rng_range(rng, 0, ns - 1)];
        memcpy(d + c->at, types[keel_rng_range(rng, 0, 10)], 4);
        break;
    }
    }
}

typedef struct fuzz_stats {
    uint64_t rounds, opened, refused, ticks, keyframes, cursors, client_records, games;
} fuzz_stats;

// KEEL_FUZZ_VERBOSE=1: which refusals the rounds met (the message with its
// numbers blanked), to see that the damage reaches the decoders.
#define REASONS 128
static char reason_text[REASONS][96];
static uint64_t reason_count[REASONS];
static bool verbose;

static void reason_note(const char *msg)
{
    char key[96];
    size_t k = 0;
    for (const char *p = msg; *p && k + 1 < sizeof key; p++) {
        if (*p >= '0' && *p <= '9') {
            if (k == 0 || key[k - 1] != '#')
                key[k++] = '#';
        } else if (!((*p >= 'a' && *p <= 'f') && k && key[k - 1] == '#')) {
            key[k++] = *p;
        }
    }
    key[k] = 0;
    for (int i = 0; i < REASONS; i++) {
        if (reason_count[i] && strcmp(reason_text[i], key) == 0) {
            reason_count[i]++;
            return;
        }
        if (!reason_count[i]) {
            snprintf(reason_text[i], sizeof reason_text[i], "%s", key);
            reason_count[i] = 1;
            return;
        }
    }
}

// Open and walk everything. A file that opens must decode to its end.
static void walk(const uint8_t *d, size_t n, fuzz_stats *st)
{
    rec_error err;
    rec_file *f = rec_file_open_memory(d, n, &err);
    if (!f) {
        cr_assert(err.message[0], "refused without a message");
        st->refused++;
        if (verbose)
            reason_note(err.message);
        return;
    }
    st->opened++;
    rec_info info;
    rec_file_info(f, &info);
    const rec_header *h = rec_file_header(f);
    if (h->kind == REC_KIND_CLIENT) {
        rec_cursor *c = rec_cursor_create(f, 0, &err);
        cr_assert_not_null(c, "%s", err.message);
        rec_client_record r;
        uint32_t i = 0;
        while (rec_cursor_next_client(c, &r, &err))
            i++;
        cr_assert_str_empty(err.message, "an opened client file failed: %s", err.message);
        cr_assert_eq(i, info.client_records);
        st->client_records += i;
        rec_cursor_destroy(c);
        rec_file_close(f);
        return;
    }
    if (h->game_name[0]) {
        // A game's recording: the game is taken only when its identity is
        // the recording's; every saved state found is a save of the game.
        if (rec_file_set_game(f, tag, &err))
            st->games++;
        const uint8_t *gs;
        size_t gn;
        if (rec_file_game_state(f, info.first_tick, &gs, &gn))
            cr_assert(gn >= 16);
    }
    uint32_t first;
    cr_assert(rec_file_initial(f, &first, NULL, NULL));
    rec_cursor *c = rec_cursor_create(f, first, &err);
    cr_assert_not_null(c, "%s", err.message);
    rec_tick t;
    uint32_t i = 0;
    while (rec_cursor_next(c, &t, &err)) {
        cr_assert_eq(t.tick, first + i);
        i++;
    }
    cr_assert_str_empty(err.message, "an opened file failed at tick %u: %s", first + i, err.message);
    cr_assert_eq(i, info.tick_count);
    st->ticks += i;
    rec_cursor_destroy(c);
    uint32_t nk = rec_file_keyframe_count(f);
    for (uint32_t k = 0; k < nk; k++) {
        uint32_t kt, kn;
        const sim_char_state *ks;
        cr_assert(rec_file_keyframe(f, k, &kt, &ks, &kn, &err), "%s", err.message);
        st->keyframes++;
        if (k % 3 != 0)
            continue;
        c = rec_cursor_create(f, kt, &err);
        cr_assert_not_null(c, "%s", err.message);
        while (rec_cursor_next(c, &t, &err))
            ;
        cr_assert_str_empty(err.message, "%s", err.message);
        st->cursors++;
        rec_cursor_destroy(c);
    }
    rec_file_close(f);
}

Test(rec_fuzz, damaged_recordings_never_crash_and_decode_to_their_end_when_they_open)
{
    uint64_t rounds = 20000;
    verbose = getenv("KEEL_FUZZ_VERBOSE") != NULL;
    const char *env = getenv("KEEL_FUZZ_ROUNDS");
    if (env && *env)
        rounds = strtoull(env, NULL, 10);
    // format 3 (keyframes inside blocks, a trailing KEYF in debug mode) and
    // format 2 (keyframes in chunks of their own)
    enum { SEEDS = 10 };
    seed_file seeds[SEEDS];
    seeds[0] = scene_seed("k16z.rec", 16, true, 150, 1, 0);
    seeds[1] = scene_seed("k16.rec", 16, false, 150, 2, 0);
    seeds[2] = scene_seed("debug.rec", 1, false, 40, 3, 0);
    seeds[3] = scene_seed("nokey.rec", 0, true, 100, 4, 0);
    seeds[4] = client_seed();
    seeds[5] = scene_seed("debugz.rec", 1, true, 40, 5, 0);
    seeds[6] = scene_seed("k16z-format2.rec", 16, true, 150, 6, 2);
    seeds[7] = game_seed(5);
    seeds[8] = client_game_seed();
    seeds[9] = game_seed(4);
    size_t cap = 0;
    for (int s = 0; s < SEEDS; s++) {
        cr_assert_not_null(seeds[s].data);
        if (seeds[s].size > cap)
            cap = seeds[s].size;
        fuzz_stats st0 = {0};
        walk(seeds[s].data, seeds[s].size, &st0);
        cr_assert_eq(st0.opened, 1u, "seed %s does not open", seeds[s].name);
    }
    cap = cap * 2 + 4096;
    uint8_t *buf = malloc(cap);
    keel_rng rng = {20240601};
    fuzz_stats st = {0};
    for (uint64_t r = 0; r < rounds; r++) {
        const seed_file *s = &seeds[keel_rng_range(&rng, 0, SEEDS - 1)];
        memcpy(buf, s->data, s->size);
        size_t n = s->size;
        int muts = (int)keel_rng_range(&rng, 1, 3);
        for (int m = 0; m < muts; m++)
            mutate(&rng, buf, &n, cap);
        if (keel_rng_range(&rng, 0, 9) < 8)
            fix_crcs(buf, n);
        walk(buf, n, &st);
        st.rounds++;
    }
    cr_log_info("rec fuzz: %llu rounds: %llu opened, %llu refused; walked %llu ticks, %llu keyframes, %llu keyframe "
                "cursors, %llu client records, %llu game recordings given their game",
                (unsigned long long)st.rounds, (unsigned long long)st.opened, (unsigned long long)st.refused,
                (unsigned long long)st.ticks, (unsigned long long)st.keyframes, (unsigned long long)st.cursors,
                (unsigned long long)st.client_records, (unsigned long long)st.games);
    for (int i = 0; verbose && i < REASONS && reason_count[i]; i++)
        cr_log_info("%8llu  %s", (unsigned long long)reason_count[i], reason_text[i]);
    free(buf);
    for (int s = 0; s < SEEDS; s++)
        free(seeds[s].data);
}
