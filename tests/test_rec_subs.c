// keel tests: substituted commands in recordings (rec_command.substituted,
// stored in SUBS chunks and announced by the header's substitutes_marked):
// a server session's recording marks exactly the substitutes its server
// counted; a file without its SUBS chunks (what a reader that predates
// them sees, since readers skip chunk types they do not know) still opens
// and verifies; a SUBS chunk that names a character without a command, or
// stands anywhere but after its block, is an error naming its offset. The
// round trips in every format are test_rec_format's. MIT licence.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/rec.h>
#include <keel/rec_verify.h>

#include "keel_session.h"
#include "test_rec_scene.h"
#include "test_support.h"

// The CRC and the header's encoder, for the hand-made files.
#include "../rec/src/rec_internal.h"

static trs_fixture fx;

static void setup(void) { trs_fixture_make(&fx, "rec_subs"); }
static void teardown(void) { trs_fixture_free(&fx); }

TestSuite(rec_subs, .init = setup, .fini = teardown, .timeout = 240);

static rec_file *open_ok(const void *data, size_t size)
{
    rec_error err;
    rec_file *f = rec_file_open_memory(data, size, &err);
    cr_assert_not_null(f, "%s (offset %llu, chunk %s)", err.message, (unsigned long long)err.offset, err.chunk);
    return f;
}

static void expect_verifies(rec_file *f)
{
    rec_verify_config vc = rec_default_verify_config();
    rec_divergence div;
    rec_error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(rec_verify(f, fx.world, &vc, &div, NULL, &err), REC_EXIT_MATCH, "%s %s", div.detail, err.message);
}

// Commands marked substituted, counted through a cursor.
static uint64_t marked_commands(const rec_file *f)
{
    rec_info info;
    rec_file_info(f, &info);
    rec_error err;
    rec_cursor *c = rec_cursor_create(f, info.first_tick, &err);
    cr_assert_not_null(c, "%s", err.message);
    rec_tick t;
    uint64_t n = 0;
    while (rec_cursor_next(c, &t, &err))
        for (uint32_t i = 0; i < t.command_count; i++)
            n += t.commands[i].substituted;
    cr_assert_str_empty(err.message, "%s", err.message);
    rec_cursor_destroy(c);
    return n;
}

// ---- a server session -------------------------------------------------------------

static void observe(void *ctx, const rec_tick *t, const sim_scene *after) { cr_assert(rec_writer_tick(ctx, t, after)); }

// Light bots on a link that loses one message in five: their commands go
// missing now and then, and the server runs substitutes. Its recording marks
// every one of them: before the marks it held them as own commands (a
// substitute's input.tick is the tick it ran in), and no reader could count
// them.
Test(rec_subs, a_server_session_marks_every_substitute_its_server_ran)
{
    keel_session_config sc = keel_session_default_config();
    sc.bots = 4;
    sc.full_clients = 0;
    sc.ticks = 640;
    sc.seed = 5;
    sc.link.loss_permille = 200;
    sim_move_settings settings = sim_move_default_settings();
    keel_session *s = keel_session_create(fx.world, &fx.level, &settings, &sc);
    cr_assert_not_null(s);
    sv_server *sv = keel_session_server(s);
    rec_header h = rec_default_header();
    cr_assert(sv_server_fill_header(sv, &h));
    cr_assert(h.substitutes_marked);
    snprintf(h.source, sizeof h.source, "test_rec_subs");
    rec_writer_config wc = rec_default_writer_config();
    rec_error err;
    const char *path = keel_test_dir_file(fx.dir, "session.krec");
    rec_writer *w = rec_writer_open(path, &h, &wc, sv_server_scene(sv), &err);
    cr_assert_not_null(w, "%s", err.message);
    sv_server_set_observer(sv, observe, w);
    keel_session_run(s);
    sv_server_set_observer(sv, NULL, NULL);
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    sv_stats ss;
    sv_server_stats(sv, &ss);
    keel_session_destroy(s);

    size_t size = 0;
    uint8_t *data = trs_read_file(path, &size);
    cr_assert_not_null(data);
    rec_file *f = open_ok(data, size);
    rec_info info;
    rec_file_info(f, &info);
    cr_log_info("server: %llu substitutes in %u ticks; recording: %llu marked\n",
                (unsigned long long)ss.commands_substituted, info.tick_count, (unsigned long long)info.substitutes);
    cr_assert_gt(ss.commands_substituted, 0u, "the link lost no command: nothing to mark");
    cr_expect_eq(info.substitutes, ss.commands_substituted);
    cr_expect_eq(marked_commands(f), ss.commands_substituted);
    cr_expect(rec_file_header(f)->substitutes_marked);
    expect_verifies(f);
    rec_file_close(f);
    free(data);
}

// ---- the chunks --------------------------------------------------------------------

// A recorded run with substitutes, read into memory.
static uint8_t *recorded(size_t *size)
{
    trs_config cfg = trs_default_config();
    cfg.ticks = 200;
    cfg.substitutes = true;
    trs_run run;
    rec_error err;
    const char *p = keel_test_dir_file(fx.dir, "subs.rec");
    cr_assert(trs_record(&fx.level, fx.world, &cfg, p, &run, &err), "%s", err.message);
    trs_free(&run);
    uint8_t *d = trs_read_file(p, size);
    cr_assert_not_null(d);
    return d;
}

// The file's chunks in order: offset and framed size of each, and whether
// it is a SUBS chunk.
typedef struct span {
    size_t at, size;
    bool subs;
} span;

static uint32_t spans_of(const uint8_t *d, size_t n, span *out, uint32_t max)
{
    uint32_t k = 0;
    for (size_t off = REC_MAGIC_SIZE; off + REC_CHUNK_OVERHEAD <= n && k < max; k++) {
        out[k].at = off;
        out[k].size = REC_CHUNK_OVERHEAD + rec_get_le32(d + off + 4);
        out[k].subs = memcmp(d + off, REC_T_SUBS, 4) == 0;
        off += out[k].size;
    }
    return k;
}

// A copy of the file with its chunks in the order `order` gives (indices
// into spans; -1 ends), a chunk `extra` (framed) put in before index `at`.
static rec_buf rebuilt(const uint8_t *d, const span *sp, const int *order, const rec_buf *extra, int at)
{
    rec_buf b = {0};
    rec_put_bytes(&b, d, REC_MAGIC_SIZE);
    for (int i = 0; order[i] >= 0; i++) {
        if (extra && order[i] == at)
            rec_put_bytes(&b, extra->data, extra->size);
        rec_put_bytes(&b, d + sp[order[i]].at, sp[order[i]].size);
    }
    return b;
}

static void framed(rec_buf *b, const char *type, const rec_buf *payload)
{
    uint8_t head[8];
    memcpy(head, type, 4);
    rec_le32(head + 4, (uint32_t)payload->size);
    rec_put_bytes(b, head, 8);
    rec_put_bytes(b, payload->data, payload->size);
    rec_put_u32(b, rec_crc32_update(rec_crc32(head, 8), payload->data, payload->size));
}

#define MAX_SPANS 256

Test(rec_subs, a_file_without_its_subs_chunks_reads_as_before_the_marks)
{
    size_t size = 0;
    uint8_t *d = recorded(&size);
    rec_file *f = open_ok(d, size);
    rec_info full;
    rec_file_info(f, &full);
    cr_assert_gt(full.substitutes, 0u);
    cr_assert_eq(marked_commands(f), full.substitutes);
    rec_file_close(f);

    span sp[MAX_SPANS];
    uint32_t n = spans_of(d, size, sp, MAX_SPANS);
    cr_assert_lt(n, MAX_SPANS);
    int order[MAX_SPANS + 1], k = 0, subs = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (sp[i].subs)
            subs++;
        else
            order[k++] = (int)i;
    }
    order[k] = -1;
    cr_assert_gt(subs, 0);
    rec_buf b = rebuilt(d, sp, order, NULL, -1);
    f = open_ok(b.data, b.size);
    rec_info bare;
    rec_file_info(f, &bare);
    cr_expect_eq(bare.substitutes, 0u);
    cr_expect_eq(marked_commands(f), 0u);
    cr_expect_eq(bare.tick_count, full.tick_count);
    cr_expect_eq(bare.last_hash, full.last_hash);
    cr_expect(bare.complete);
    expect_verifies(f);
    rec_file_close(f);
    rec_buf_free(&b);
    free(d);
}

static void expect_refused(const rec_buf *b, size_t subs_at, const char *why)
{
    rec_error err;
    rec_file *f = rec_file_open_memory(b->data, b->size, &err);
    cr_assert_null(f, "a bad SUBS chunk was accepted (%s)", why);
    char want[64];
    snprintf(want, sizeof want, "SUBS chunk at offset %zu", subs_at);
    cr_expect(strstr(err.message, want) && strstr(err.message, why), "%s", err.message);
    cr_expect_str_eq(err.chunk, "SUBS");
    cr_expect_eq(err.offset, (uint64_t)subs_at);
}

Test(rec_subs, a_subs_chunk_out_of_place_or_naming_no_command_is_an_error)
{
    size_t size = 0;
    uint8_t *d = recorded(&size);
    span sp[MAX_SPANS];
    uint32_t n = spans_of(d, size, sp, MAX_SPANS);
    int first = -1;
    for (uint32_t i = 0; i < n && first < 0; i++)
        if (sp[i].subs)
            first = (int)i;
    cr_assert_geq(first, 3); // HEAD, SCHM, INIT, a block: then its SUBS
    int order[MAX_SPANS + 1], k = 0;

    // the first SUBS chunk moved before its block
    for (uint32_t i = 0; i < n; i++)
        if ((int)i != first)
            order[k++] = (int)i;
    order[k] = -1;
    rec_buf moved = {0};
    rec_put_bytes(&moved, d + sp[first].at, sp[first].size);
    rec_buf b = rebuilt(d, sp, order, &moved, first - 1);
    expect_refused(&b, sp[first - 1].at, "does not follow the tick block it names");
    rec_buf_free(&b);

    // in its place, one naming a character no command of its tick belongs to
    rec_rd r;
    rec_rd_init(&r, d + sp[first].at + 8, sp[first].size - REC_CHUNK_OVERHEAD, 0);
    uint32_t block_first = rec_get_var32(&r);
    rec_buf payload = {0}, bad = {0};
    rec_put_var(&payload, block_first);
    rec_put_var(&payload, 1); // one entry: the block's first tick, character 4000
    rec_put_var(&payload, 0);
    rec_put_var(&payload, 4000);
    framed(&bad, REC_T_SUBS, &payload);
    b = rebuilt(d, sp, order, &bad, first + 1);
    expect_refused(&b, sp[first].at, "names a character that ran no command");
    rec_buf_free(&b);
    rec_buf_free(&payload);
    rec_buf_free(&bad);
    rec_buf_free(&moved);
    free(d);
}

static bool holds(const rec_buf *b, const char *text)
{
    size_t n = strlen(text);
    for (size_t i = 0; i + n <= b->size; i++)
        if (memcmp(b->data + i, text, n) == 0)
            return true;
    return false;
}

// The header announces the marks only when there are some to announce: a
// recorder that keeps none writes the bytes it wrote before the entry existed.
Test(rec_subs, the_header_says_whether_substitutes_are_marked)
{
    rec_header h = rec_default_header();
    cr_assert_not(h.substitutes_marked);
    rec_buf b = {0};
    rec_header_encode(&b, &h);
    cr_expect_not(holds(&b, "substitutes_marked"));
    rec_header g;
    rec_error err;
    cr_assert(rec_header_decode(b.data, b.size, 0, &g, &err), "%s", err.message);
    cr_expect_not(g.substitutes_marked);
    h.substitutes_marked = true;
    b.size = 0;
    rec_header_encode(&b, &h);
    cr_expect(holds(&b, "substitutes_marked"));
    cr_assert(rec_header_decode(b.data, b.size, 0, &g, &err), "%s", err.message);
    cr_expect(g.substitutes_marked);
    rec_buf_free(&b);
}
