// keel tests: the recording format: a real scene run written and read back
// tick for tick (keyframes every 64 ticks and every tick, compressed or not,
// threaded or not), cursors from every keyframe, truncated and corrupted
// copies, newer format versions, by-name schema decoding, client records
// and the size of a recording per player-hour. MIT licence.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <keel/net_proto.h>
#include <keel/rec.h>
#include <keel/rec_verify.h>
#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "test_rec_scene.h"
#include "test_support.h"

// Internal pieces the hand-made files need (CRC, schema and header encoders).
#include "../rec/src/rec_internal.h"

static sim_level level;
static sim_world *world;
static char dir[256];

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    keel_test_dir_make(dir, sizeof dir, "rec_format");
}

static void teardown(void)
{
    keel_test_dir_remove(dir);
    keel_test_builtin_free(&level, world);
}

TestSuite(rec_format, .init = setup, .fini = teardown, .timeout = 240);

static const char *path_of(const char *name) { return keel_test_dir_file(dir, name); }

static void states_equal(const sim_char_state *a, const sim_char_state *b, uint32_t n, const char *what)
{
    uint32_t nf = 0;
    rec_state_fields(&nf);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < nf; k++)
            cr_assert_eq(rec_state_field_value(&a[i], k), rec_state_field_value(&b[i], k), "%s: character %u field %s",
                         what, i, rec_state_fields(NULL)[k].name);
}

static void tick_equal(const trs_tick *want, const rec_tick *got)
{
    cr_assert_eq(got->tick, want->tick);
    cr_assert_eq(got->leave_count, want->leave_count, "tick %u leaves", want->tick);
    for (uint32_t i = 0; i < want->leave_count; i++)
        cr_assert_eq(got->leaves[i], want->leaves[i]);
    cr_assert_eq(got->join_count, want->join_count, "tick %u joins", want->tick);
    states_equal(want->joins, got->joins, want->join_count, "join");
    cr_assert_eq(got->command_count, want->command_count, "tick %u commands", want->tick);
    for (uint32_t i = 0; i < want->command_count; i++) {
        const rec_command *a = &want->commands[i], *b = &got->commands[i];
        cr_assert_eq(b->id, a->id, "tick %u command %u id", want->tick, i);
        cr_assert(b->input.tick == a->input.tick && b->input.forward == a->input.forward &&
                      b->input.right == a->input.right && b->input.up == a->input.up &&
                      b->input.buttons == a->input.buttons && b->input.yaw == a->input.yaw &&
                      b->input.pitch == a->input.pitch,
                  "tick %u command %u differs", want->tick, i);
        cr_assert_eq(b->substituted, a->substituted, "tick %u command %u substituted", want->tick, i);
    }
    if (got->has_world_hash)
        cr_assert_eq(got->world_hash, want->world_hash, "tick %u world hash", want->tick);
    cr_assert_eq(got->char_count, want->char_count, "tick %u characters", want->tick);
    for (uint32_t i = 0; i < want->char_count; i++) {
        cr_assert_eq(got->char_ids[i], want->ids[i]);
        cr_assert_eq(got->char_hashes[i], want->hashes[i], "tick %u character %u hash", want->tick, want->ids[i]);
    }
}

// Everything a file holds against the run that wrote it.
static void check_file(rec_file *f, const trs_run *run, bool complete)
{
    rec_info info;
    rec_file_info(f, &info);
    cr_assert_eq(info.complete, complete);
    cr_assert_eq(info.first_tick, run->first_tick);
    cr_assert_eq(info.tick_count, run->tick_count);
    uint32_t t0, n0;
    const sim_char_state *init;
    cr_assert(rec_file_initial(f, &t0, &init, &n0));
    cr_assert_eq(t0, run->first_tick);
    cr_assert_eq(n0, run->initial_count);
    states_equal(run->initial, init, n0, "initial");

    rec_error err;
    rec_cursor *c = rec_cursor_create(f, run->first_tick, &err);
    cr_assert_not_null(c, "%s", err.message);
    rec_tick t;
    uint32_t i = 0;
    while (rec_cursor_next(c, &t, &err)) {
        cr_assert_lt(i, run->tick_count);
        tick_equal(&run->ticks[i], &t);
        i++;
    }
    cr_assert_str_empty(err.message, "%s", err.message);
    cr_assert_eq(i, run->tick_count);
    rec_cursor_destroy(c);
    if (run->tick_count)
        cr_assert_eq(info.last_hash, run->ticks[run->tick_count - 1].world_hash);

    // every keyframe: the state at the start of its tick, and a cursor from it
    uint32_t interval = run->cfg.keyframe_interval;
    uint32_t expect_keys = 0;
    for (uint32_t k = 0; k < run->tick_count; k++)
        if (interval && (run->ticks[k].tick + 1u) % interval == 0)
            expect_keys++;
    cr_assert_eq(rec_file_keyframe_count(f), expect_keys);
    for (uint32_t k = 0; k < rec_file_keyframe_count(f); k++) {
        uint32_t kt, kn;
        const sim_char_state *ks;
        cr_assert(rec_file_keyframe(f, k, &kt, &ks, &kn, &err), "%s", err.message);
        cr_assert_eq(rec_file_keyframe_at(f, kt), (int64_t)k);
        uint32_t idx = kt - run->first_tick; // the tick after which this is the state
        cr_assert_gt(idx, 0);
        const trs_tick *before = &run->ticks[idx - 1];
        cr_assert_eq(kn, before->char_count);
        states_equal(before->after, ks, kn, "keyframe");
        // keyframes in debug mode make this quadratic: sample them
        if (interval == 1 && k % 37 != 0 && k + 1 != rec_file_keyframe_count(f))
            continue;
        c = rec_cursor_create(f, kt, &err);
        cr_assert_not_null(c, "%s", err.message);
        uint32_t j = idx;
        while (rec_cursor_next(c, &t, &err))
            tick_equal(&run->ticks[j++], &t);
        cr_assert_str_empty(err.message, "%s", err.message);
        cr_assert_eq(j, run->tick_count);
        rec_cursor_destroy(c);
    }
}

static void round_trip_version(uint32_t interval, bool compress, bool threaded, uint32_t first_tick, uint32_t version)
{
    trs_config cfg = trs_default_config();
    cfg.format_version = version;
    cfg.ticks = interval == 1 ? 200 : 400;
    cfg.characters = 16;
    cfg.capacity = 24;
    cfg.keyframe_interval = interval;
    cfg.compress = compress;
    cfg.threaded = threaded;
    cfg.first_tick = first_tick;
    cfg.water = true;
    cfg.substitutes = true;
    cfg.seed = interval * 4u + compress * 2u + threaded + first_tick;
    trs_run run;
    rec_error err;
    const char *p = path_of("round.rec");
    cr_assert(trs_record(&level, world, &cfg, p, &run, &err), "%s", err.message);
    rec_file *f = rec_file_open(p, &err);
    cr_assert_not_null(f, "%s (offset %llu, chunk %s)", err.message, (unsigned long long)err.offset, err.chunk);
    const rec_header *h = rec_file_header(f);
    cr_assert_eq(h->format_version, version ? version : REC_FORMAT_VERSION_NO_GAME); // no game: format 3
    cr_assert_eq(h->keyframe_interval, interval);
    cr_assert_eq(h->platform_count, 2u);
    cr_assert_eq(h->water_count, 1u);
    cr_assert_str_eq(h->source, "test_rec");
    cr_assert_eq(h->settings_digest, net_settings_digest(&h->settings));
    check_file(f, &run, true);
    for (uint32_t i = 0; i < run.initial_count; i++)
        cr_assert_eq(rec_file_char_hash16(f, &run.initial[i]), rec_char_hash16(&run.initial[i]));
    rec_info info;
    rec_file_info(f, &info);
    cr_assert_eq(info.bytes_header + info.bytes_schema + info.bytes_initial + info.bytes_ticks + info.bytes_keyframes +
                     info.bytes_end + REC_MAGIC_SIZE,
                 info.file_bytes);
    if (compress)
        cr_assert_gt(info.compressed_blocks, 0u);
    else
        cr_assert_eq(info.compressed_blocks, 0u);
    uint64_t joins = 0, leaves = 0, substitutes = 0;
    for (uint32_t i = 0; i < run.tick_count; i++) {
        joins += run.ticks[i].join_count, leaves += run.ticks[i].leave_count;
        for (uint32_t k = 0; k < run.ticks[i].command_count; k++)
            substitutes += run.ticks[i].commands[k].substituted;
    }
    cr_assert_eq(info.substitutes, substitutes);
    cr_assert_gt(substitutes, 0u);
    cr_assert_eq(info.joins, joins);
    cr_assert_eq(info.leaves, leaves);
    cr_assert_gt(joins, 0u);
    cr_assert_gt(leaves, 0u);
    // and it re-simulates here, tick by tick (format 1 by its world hashes,
    // format 2 by its block checks)
    rec_verify_config vc = rec_default_verify_config();
    vc.threads = 2;
    rec_divergence div;
    cr_assert_eq(rec_verify(f, world, &vc, &div, NULL, &err), REC_EXIT_MATCH, "%s %s", div.detail, err.message);
    rec_file_close(f);
    trs_free(&run);
}

static void round_trip(uint32_t interval, bool compress, bool threaded, uint32_t first_tick)
{
    round_trip_version(interval, compress, threaded, first_tick, 0);
}

Test(rec_format, round_trip_keyframes_64_compressed_threaded) { round_trip(64, true, true, 0); }
Test(rec_format, round_trip_keyframes_64_plain_unthreaded) { round_trip(64, false, false, 0); }
Test(rec_format, round_trip_debug_mode_every_tick_compressed) { round_trip(1, true, false, 0); }
Test(rec_format, round_trip_debug_mode_every_tick_plain_threaded) { round_trip(1, false, true, 0); }
Test(rec_format, round_trip_without_keyframes_from_tick_1000) { round_trip(0, true, true, 1000); }
Test(rec_format, round_trip_keyframes_17_from_an_odd_tick) { round_trip(17, true, false, 5); }
// Format 1 (an 8-byte world hash every tick, among the commands): still read
// and verified.
Test(rec_format, round_trip_format_1_keyframes_64) { round_trip_version(64, true, true, 0, 1); }
Test(rec_format, round_trip_format_1_plain_from_tick_1000) { round_trip_version(0, false, false, 1000, 1); }
// Format 2 (keyframes in chunks of their own, fixed-size block prefixes):
// still read and verified, compressed (TBLZ, KEYZ) and not.
Test(rec_format, round_trip_format_2_keyframes_64) { round_trip_version(64, true, true, 0, 2); }
Test(rec_format, round_trip_format_2_debug_mode_compressed) { round_trip_version(1, true, false, 0, 2); }
Test(rec_format, round_trip_format_2_plain_keyframes_17) { round_trip_version(17, false, true, 5, 2); }

// ---- a recorded file and its chunks ----------------------------------------

typedef struct chunk_pos {
    size_t at;
    char type[5];
    uint32_t length;
} chunk_pos;

// The chunks of a well-formed file, in order.
static uint32_t chunks_of(const uint8_t *d, size_t n, chunk_pos *out, uint32_t max)
{
    uint32_t k = 0;
    size_t off = REC_MAGIC_SIZE;
    while (off + 12 <= n && k < max) {
        chunk_pos *c = &out[k++];
        c->at = off;
        memcpy(c->type, d + off, 4);
        c->type[4] = 0;
        c->length = rec_get_le32(d + off + 4);
        off += 12u + c->length;
    }
    return k;
}

static void append_chunk(rec_buf *b, const char *type, const uint8_t *payload, size_t len)
{
    uint8_t head[8];
    memcpy(head, type, 4);
    rec_le32(head + 4, (uint32_t)len);
    uint32_t crc = rec_crc32_update(rec_crc32(head, 8), payload, len);
    rec_put_bytes(b, head, 8);
    rec_put_bytes(b, payload, len);
    rec_put_u32(b, crc);
}

// One complete recording of the default run, read into memory.
static uint8_t *recorded(trs_run *run, size_t *size, bool compress)
{
    trs_config cfg = trs_default_config();
    cfg.ticks = 260;
    cfg.compress = compress;
    rec_error err;
    const char *p = path_of(compress ? "base_z.rec" : "base.rec");
    cr_assert(trs_record(&level, world, &cfg, p, run, &err), "%s", err.message);
    uint8_t *d = trs_read_file(p, size);
    cr_assert_not_null(d);
    return d;
}

// A file cut anywhere opens with the readable prefix (every tick it holds
// equal to the run's) or fails with a message; never more, never a crash.
Test(rec_format, a_truncated_file_opens_with_its_prefix_or_fails_cleanly)
{
    for (int z = 0; z < 2; z++) {
        trs_run run;
        size_t size;
        uint8_t *d = recorded(&run, &size, z == 1);
        chunk_pos ch[256];
        uint32_t nc = chunks_of(d, size, ch, 256);
        cr_assert_gt(nc, 6u);
        size_t init_end = ch[2].at + 12 + ch[2].length; // HEAD, SCHM, INIT
        uint32_t opened = 0, refused = 0;
        keel_rng rng = {99};
        for (size_t cut = 0; cut < size; cut += (cut < 400 ? 1 : (size_t)keel_rng_range(&rng, 1, 97))) {
            rec_error err;
            rec_file *f = rec_file_open_memory(d, cut, &err);
            if (!f) {
                cr_assert(err.message[0], "cut at %zu: no message", cut);
                cr_assert_lt(cut, init_end, "cut at %zu after INIT refused: %s", cut, err.message);
                refused++;
                continue;
            }
            opened++;
            rec_info info;
            rec_file_info(f, &info);
            cr_assert(!info.complete);
            cr_assert_leq(info.truncated_at, cut);
            cr_assert_leq(info.tick_count, run.tick_count);
            rec_cursor *c = rec_cursor_create(f, run.first_tick, &err);
            cr_assert_not_null(c, "%s", err.message);
            rec_tick t;
            uint32_t i = 0;
            while (rec_cursor_next(c, &t, &err))
                tick_equal(&run.ticks[i++], &t);
            cr_assert_str_empty(err.message);
            cr_assert_eq(i, info.tick_count);
            rec_cursor_destroy(c);
            rec_file_close(f);
        }
        cr_log_info("truncation (%s): %u cuts opened with a prefix, %u refused (before INIT ends)",
                    z ? "compressed" : "plain", opened, refused);
        free(d);
        trs_free(&run);
    }
}

Test(rec_format, a_flipped_byte_is_a_crc_error_naming_the_chunk_and_its_offset)
{
    trs_run run;
    size_t size;
    uint8_t *d = recorded(&run, &size, true);
    chunk_pos ch[256];
    uint32_t nc = chunks_of(d, size, ch, 256);
    keel_rng rng = {5};
    for (uint32_t k = 0; k < nc; k++) {
        for (int rep = 0; rep < 4; rep++) {
            // a byte of the payload or of the CRC (a flipped type or length
            // is another chunk or a truncation; the fuzz test covers those)
            size_t at = ch[k].at + 8 + (size_t)keel_rng_range(&rng, 0, ch[k].length + 3);
            uint8_t *copy = trs_copy(d, size);
            copy[at] ^= (uint8_t)(1u << keel_rng_range(&rng, 0, 7));
            rec_error err;
            rec_file *f = rec_file_open_memory(copy, size, &err);
            cr_assert_null(f, "flip at %zu in %s accepted", at, ch[k].type);
            cr_assert_not_null(strstr(err.message, "CRC"), "%s", err.message);
            cr_assert_str_eq(err.chunk, ch[k].type);
            cr_assert_eq(err.offset, ch[k].at);
            free(copy);
        }
    }
    free(d);
    trs_free(&run);
}

// A file that says it is format version 7 (with valid CRCs): refused with
// both versions in the message.
Test(rec_format, a_newer_format_version_is_refused_with_a_clear_message)
{
    trs_run run;
    size_t size;
    uint8_t *d = recorded(&run, &size, true);
    rec_error err;
    rec_file *f = rec_file_open_memory(d, size, &err);
    cr_assert_not_null(f, "%s", err.message);
    rec_header h = *rec_file_header(f);
    rec_file_close(f);
    h.format_version = 7;
    chunk_pos ch[256];
    chunk_pos *head = &ch[0];
    chunks_of(d, size, ch, 256);
    cr_assert_str_eq(head->type, "HEAD");
    rec_buf payload = {0}, file = {0};
    rec_header_encode(&payload, &h);
    rec_put_bytes(&file, rec_magic, REC_MAGIC_SIZE);
    append_chunk(&file, "HEAD", payload.data, payload.size);
    size_t rest = head->at + 12 + head->length;
    rec_put_bytes(&file, d + rest, size - rest);
    f = rec_file_open_memory(file.data, file.size, &err);
    cr_assert_null(f);
    cr_assert_not_null(strstr(err.message, "format version 7 is newer than this build reads (5)"), "%s", err.message);
    cr_assert_str_eq(err.chunk, "HEAD");
    cr_assert_eq(err.offset, REC_MAGIC_SIZE + 8);
    rec_buf_free(&payload);
    rec_buf_free(&file);
    free(d);
    trs_free(&run);
}

// ---- by-name decoding through a file's own schema ------------------------

typedef struct fake_field {
    const char *name;
    uint8_t type, width;
} fake_field;

// A state schema with a field this build does not know ("mystery", between
// id and flags) and without one it knows (stuck_ticks); a command schema
// with an unknown "lean" and without "pitch".
static const fake_field fake_state[] = {
    {"id", REC_FIELD_U32, 4},
    {"mystery", REC_FIELD_U32, 4},
    {"flags", REC_FIELD_U32, 4},
    {"move_type", REC_FIELD_I32, 4},
    {"ground", REC_FIELD_U8, 1},
    {"position.x", REC_FIELD_FX, 4},
    {"position.y", REC_FIELD_FX, 4},
    {"position.z", REC_FIELD_FX, 4},
    {"velocity.x", REC_FIELD_FX, 4},
    {"velocity.y", REC_FIELD_FX, 4},
    {"velocity.z", REC_FIELD_FX, 4},
    {"ground_normal.x", REC_FIELD_FX, 4},
    {"ground_normal.y", REC_FIELD_FX, 4},
    {"ground_normal.z", REC_FIELD_FX, 4},
    {"ground_velocity.x", REC_FIELD_FX, 4},
    {"ground_velocity.y", REC_FIELD_FX, 4},
    {"ground_velocity.z", REC_FIELD_FX, 4},
    {"ground_object", REC_FIELD_U32, 4},
    {"yaw", REC_FIELD_U16, 2},
    {"pitch", REC_FIELD_U16, 2},
};
static const fake_field fake_command[] = {
    {"forward", REC_FIELD_I8, 1}, {"lean", REC_FIELD_I8, 1},    {"right", REC_FIELD_I8, 1},
    {"up", REC_FIELD_I8, 1},      {"buttons", REC_FIELD_U8, 1}, {"yaw", REC_FIELD_U16, 2},
};
#define FAKE_N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static void fake_schema(rec_buf *b, int kind, const fake_field *f, uint32_t n)
{
    rec_put_u8(b, (uint8_t)kind);
    rec_put_u8(b, (uint8_t)n);
    for (uint32_t i = 0; i < n; i++) {
        rec_put_u8(b, (uint8_t)strlen(f[i].name));
        rec_put_bytes(b, f[i].name, strlen(f[i].name));
        rec_put_u8(b, f[i].type);
        rec_put_u8(b, f[i].width);
    }
}

static int64_t fake_state_value(const sim_char_state *s, const char *name)
{
    if (strcmp(name, "mystery") == 0)
        return 0x12345678;
    uint32_t nf = 0;
    const rec_field *f = rec_state_fields(&nf);
    for (uint32_t i = 0; i < nf; i++)
        if (strcmp(f[i].name, name) == 0)
            return rec_state_field_value(s, i);
    return 0;
}

static void fake_state_put(rec_buf *b, const sim_char_state *s)
{
    for (uint32_t i = 0; i < FAKE_N(fake_state); i++)
        rec_field_put(b, fake_state[i].type, fake_state[i].width, fake_state_value(s, fake_state[i].name));
}

Test(rec_format, records_decode_by_field_name_through_the_files_schema)
{
    rec_header h = rec_default_header();
    h.format_version = 1; // the layout built by hand below: a world hash every tick
    h.max_characters = 8;
    h.keyframe_interval = 2;
    sim_char_state a = sim_char_spawn(3, sim_v3(SIM_FX_INT(1), SIM_FX_INT(2), SIM_FX_INT(3)), 1234);
    a.stuck_ticks = 9; // the file has no such field: reads as 0
    a.velocity = sim_v3(SIM_FX_INT(-5), SIM_FX_ONE / 3, 7);
    a.flags = SIM_CHAR_GROUNDED | SIM_CHAR_WALL;
    a.move_type = SIM_MOVE_WALK;
    a.ground = SIM_GROUND_FLOOR;
    a.ground_normal = sim_v3(0, SIM_FX_ONE, 0);
    a.pitch = 777;
    sim_char_state b = sim_char_spawn(8, sim_v3(SIM_FX_INT(-1), 0, SIM_FX_INT(40)), 65000);

    rec_buf file = {0}, p = {0};
    rec_put_bytes(&file, rec_magic, REC_MAGIC_SIZE);
    rec_header_encode(&p, &h);
    append_chunk(&file, "HEAD", p.data, p.size);
    p.size = 0;
    rec_put_u8(&p, 3); // a third record kind this build does not know, first
    fake_schema(&p, 9, fake_command, 2);
    fake_schema(&p, 1, fake_state, FAKE_N(fake_state));
    fake_schema(&p, 2, fake_command, FAKE_N(fake_command));
    append_chunk(&file, "SCHM", p.data, p.size);
    p.size = 0;
    rec_put_u32(&p, 10);
    rec_put_u32(&p, 2);
    fake_state_put(&p, &a);
    fake_state_put(&p, &b);
    append_chunk(&file, "INIT", p.data, p.size);
    // two ticks, implicit commands: mask bits 1 + field index
    p.size = 0;
    rec_put_u32(&p, 10);
    rec_put_u32(&p, 2);
    for (int k = 0; k < 2; k++) {
        rec_put_var(&p, 0); // leaves
        rec_put_var(&p, 0); // joins
        rec_put_u8(&p, 0);  // one command per character
        // character 3: forward 100, lean -5 (unknown), yaw 4000
        rec_put_var(&p, k == 0 ? (1u << 1 | 1u << 2 | 1u << 6) : 0);
        if (k == 0) {
            rec_put_u8(&p, 100);
            rec_put_u8(&p, (uint8_t)(int8_t)-5);
            rec_put_svar(&p, 4000); // an angle: its change from the previous command (0 at block start)
        }
        // character 8: right -7, buttons 1; tick one earlier
        rec_put_var(&p, k == 0 ? (1u | 1u << 3 | 1u << 5) : 0);
        if (k == 0) {
            rec_put_svar(&p, -1);
            rec_put_u8(&p, (uint8_t)(int8_t)-7);
            rec_put_u8(&p, 1);
        }
        rec_put_u64(&p, 0xABCDEF00u + (uint64_t)k);
        rec_put_u16(&p, 0x1111);
        rec_put_u16(&p, 0x2222);
    }
    append_chunk(&file, "TBLK", p.data, p.size);
    p.size = 0;
    rec_put_u32(&p, 12);
    rec_put_u32(&p, 2);
    fake_state_put(&p, &a);
    fake_state_put(&p, &b);
    append_chunk(&file, "KEYF", p.data, p.size);
    p.size = 0;
    rec_put_u32(&p, 11);
    rec_put_u64(&p, 0xABCDEF01u);
    rec_put_u32(&p, 2);
    rec_put_u64(&p, 0);
    rec_put_u64(&p, 0);
    rec_put_u32(&p, 2);
    rec_put_u32(&p, 0);
    append_chunk(&file, "ENDR", p.data, p.size);

    rec_error err;
    rec_file *f = rec_file_open_memory(file.data, file.size, &err);
    cr_assert_not_null(f, "%s (offset %llu, %s)", err.message, (unsigned long long)err.offset, err.chunk);
    uint32_t t0, n;
    const sim_char_state *s;
    cr_assert(rec_file_initial(f, &t0, &s, &n));
    cr_assert_eq(t0, 10u);
    cr_assert_eq(n, 2u);
    sim_char_state want = a;
    want.stuck_ticks = 0;
    states_equal(&want, &s[0], 1, "initial a");
    states_equal(&b, &s[1], 1, "initial b");
    rec_cursor *c = rec_cursor_create(f, 10, &err);
    cr_assert_not_null(c, "%s", err.message);
    rec_tick t;
    for (int k = 0; k < 2; k++) {
        cr_assert(rec_cursor_next(c, &t, &err), "%s", err.message);
        cr_assert_eq(t.tick, 10u + (uint32_t)k);
        cr_assert_eq(t.command_count, 2u);
        const sim_input *i3 = &t.commands[0].input, *i8 = &t.commands[1].input;
        cr_assert_eq(t.commands[0].id, 3u);
        cr_assert(i3->forward == 100 && i3->right == 0 && i3->yaw == 4000 && i3->pitch == 0 && i3->tick == t.tick);
        cr_assert_eq(t.commands[1].id, 8u);
        // the tick offset is per command, not carried over: tick 11 runs at 11
        cr_assert(i8->right == -7 && i8->buttons == 1 && i8->tick == (k == 0 ? 9u : 11u));
        cr_assert_eq(t.world_hash, 0xABCDEF00u + (uint64_t)k);
        cr_assert(t.char_count == 2 && t.char_hashes[0] == 0x1111 && t.char_hashes[1] == 0x2222);
    }
    cr_assert_not(rec_cursor_next(c, &t, &err));
    cr_assert_str_empty(err.message);
    rec_cursor_destroy(c);
    cr_assert_eq(rec_file_keyframe_count(f), 1u);
    uint32_t kt;
    cr_assert(rec_file_keyframe(f, 0, &kt, &s, &n, &err), "%s", err.message);
    cr_assert_eq(kt, 12u);
    states_equal(&want, &s[0], 1, "keyframe a");
    // hashed the file's way: stuck_ticks is not in it, "mystery" hashes as 0
    cr_assert_eq(rec_file_char_hash16(f, &a), rec_file_char_hash16(f, &want));
    rec_file_close(f);
    rec_buf_free(&p);
    rec_buf_free(&file);
}

// ---- client records -----------------------------------------------------------

static void client_round_trip(bool compress, bool threaded)
{
    rec_header h = rec_default_header();
    h.compress = compress;
    h.client_character = 7;
    h.client_prediction_cap = 32;
    snprintf(h.source, sizeof h.source, "keel-client");
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = threaded;
    rec_error err;
    const char *p = path_of("client.rec");
    rec_writer *w = rec_writer_open_client(p, &h, &wc, &err);
    cr_assert_not_null(w, "%s", err.message);
    enum { N = 3000 };
    static rec_client_record recs[N];
    static uint8_t packets[N][300];
    static uint8_t big[100000];
    keel_rng rng = {compress * 2u + threaded + 11u};
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)keel_rng_range(&rng, 0, 255);
    uint32_t now = 1000;
    for (int i = 0; i < N; i++) {
        rec_client_record *r = &recs[i];
        memset(r, 0, sizeof *r);
        r->op = (rec_client_op)keel_rng_range(&rng, 1, 5);
        now += (uint32_t)keel_rng_range(&rng, 0, 20);
        r->now_ms = i == 17 ? 5 : now; // a clock that goes back once
        switch (r->op) {
        case REC_CLIENT_EVENT:
            r->event_type = (int32_t)keel_rng_range(&rng, 0, 3);
            r->channel = (uint8_t)keel_rng_range(&rng, 0, 2);
            if (i == 1234) {
                r->data = big; // larger than a client block
                r->length = sizeof big;
            } else {
                r->length = (uint32_t)keel_rng_range(&rng, 0, 300);
                for (uint32_t k = 0; k < r->length; k++)
                    packets[i][k] = (uint8_t)keel_rng_range(&rng, 0, 255);
                r->data = r->length ? packets[i] : NULL;
            }
            break;
        case REC_CLIENT_PREDICT:
            r->input.tick = (uint32_t)i;
            r->input.forward = (int8_t)keel_rng_range(&rng, -127, 127);
            r->input.right = (int8_t)keel_rng_range(&rng, -127, 127);
            r->input.up = (int8_t)keel_rng_range(&rng, -127, 127);
            r->input.buttons = (uint8_t)keel_rng_range(&rng, 0, 7);
            r->input.yaw = (sim_angle)keel_rng_range(&rng, 0, 65535);
            r->input.pitch = (sim_angle)keel_rng_range(&rng, 0, 65535);
            r->result = (uint32_t)keel_rng_range(&rng, 0, 1);
            break;
        case REC_CLIENT_CATCH_UP: r->result = (uint32_t)keel_rng_range(&rng, 0, 100); break;
        case REC_CLIENT_CONFIRMED:
            r->tick = (uint32_t)keel_rng_range(&rng, 0, 1000000);
            r->hash = keel_rng_next(&rng);
            break;
        default: break;
        }
        cr_assert(rec_writer_client(w, r), "record %d", i);
    }
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    rec_file *f = rec_file_open(p, &err);
    cr_assert_not_null(f, "%s (offset %llu, %s)", err.message, (unsigned long long)err.offset, err.chunk);
    rec_info info;
    rec_file_info(f, &info);
    cr_assert(info.complete);
    cr_assert_eq(info.client_records, (uint32_t)N);
    cr_assert_geq(info.blocks, 2u);
    cr_assert_eq(rec_file_header(f)->kind, REC_KIND_CLIENT);
    cr_assert_eq(rec_file_header(f)->client_character, 7u);
    cr_assert_eq(rec_file_header(f)->client_prediction_cap, 32u);
    cr_assert_str_eq(rec_file_header(f)->source, "keel-client");
    cr_assert_not(rec_file_initial(f, NULL, NULL, NULL));
    rec_cursor *c = rec_cursor_create(f, 0, &err);
    cr_assert_not_null(c, "%s", err.message);
    rec_client_record r;
    int i = 0;
    while (rec_cursor_next_client(c, &r, &err)) {
        const rec_client_record *want = &recs[i];
        cr_assert_eq(r.op, want->op, "record %d", i);
        cr_assert_eq(r.now_ms, want->now_ms, "record %d", i);
        cr_assert_eq(r.event_type, want->event_type);
        cr_assert_eq(r.channel, want->channel);
        cr_assert_eq(r.length, want->length, "record %d", i);
        if (want->length)
            cr_assert_eq(memcmp(r.data, want->data, want->length), 0);
        cr_assert(memcmp(&r.input.tick, &want->input.tick, sizeof r.input.tick) == 0 &&
                  r.input.forward == want->input.forward && r.input.right == want->input.right &&
                  r.input.up == want->input.up && r.input.buttons == want->input.buttons &&
                  r.input.yaw == want->input.yaw && r.input.pitch == want->input.pitch);
        cr_assert_eq(r.result, want->result);
        cr_assert_eq(r.tick, want->tick);
        cr_assert_eq(r.hash, want->hash);
        i++;
    }
    cr_assert_str_empty(err.message, "%s", err.message);
    cr_assert_eq(i, N);
    rec_cursor_destroy(c);
    rec_file_close(f);
}

Test(rec_format, client_records_round_trip_compressed_threaded) { client_round_trip(true, true); }
Test(rec_format, client_records_round_trip_plain) { client_round_trip(false, false); }

// ---- the writer refuses what it cannot record -------------------------------

Test(rec_format, the_writer_fails_a_tick_whose_scene_does_not_match_its_events)
{
    sim_move_settings S = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(world, &S, 8);
    sim_char_state c = sim_char_spawn(1, sim_level_find_marker(&level, "spawn")->position, 0);
    cr_assert_eq(sim_scene_add_character(scene, &c), 0);
    rec_header h = rec_default_header();
    h.max_characters = 8;
    rec_error err;
    rec_writer *w = rec_writer_open(path_of("bad.rec"), &h, NULL, scene, &err);
    cr_assert_not_null(w, "%s", err.message);
    // a character added behind the recorder's back
    sim_char_state c2 = sim_char_spawn(2, c.position, 0);
    cr_assert_eq(sim_scene_add_character(scene, &c2), 0);
    sim_scene_step(scene);
    rec_tick t = {.tick = 0};
    cr_assert_not(rec_writer_tick(w, &t, scene));
    cr_assert_not(rec_writer_close(w, &err));
    cr_assert_not_null(strstr(err.message, "characters"), "%s", err.message);
    // the file still opens: the prefix before the failure
    rec_file *f = rec_file_open(path_of("bad.rec"), &err);
    cr_assert_not_null(f, "%s", err.message);
    rec_info info;
    rec_file_info(f, &info);
    cr_assert_not(info.complete);
    cr_assert_eq(info.tick_count, 0u);
    rec_file_close(f);

    // a writer with no room for what is waiting fails instead of blocking
    rec_writer_config wc = rec_default_writer_config();
    wc.max_pending_bytes = 16;
    w = rec_writer_open(path_of("behind.rec"), &h, &wc, scene, &err);
    cr_assert_null(w);
    cr_assert_not_null(strstr(err.message, "fell behind"), "%s", err.message);
    sim_scene_destroy(scene);
}

// ---- size and cost ---------------------------------------------------------------

// Bot-like input at 64 Hz (heading changes about once a second, a jump now
// and then), measured over two minutes (15 s under the sanitizers, where the
// figures are only a smoke test) and scaled to an hour. The target is about
// 1 MB per player-hour for a multi-player session without keyframes.
Test(rec_format, size_per_player_hour, .timeout = 600)
{
    const uint32_t players[] = {1, 8, 32};
    const uint32_t seconds = KEEL_TEST_SIZE(2 * 60, 15), ticks = 64 * seconds;
    for (int pi = 0; pi < 3; pi++) {
        for (int mode = 0; mode < 4; mode++) {
            trs_config cfg = trs_default_config();
            cfg.ticks = ticks;
            cfg.characters = players[pi];
            cfg.capacity = players[pi];
            cfg.bot = true;
            cfg.churn = false;
            cfg.light = true;
            cfg.compress = mode != 1;
            cfg.keyframe_interval = mode == 2 ? 64 : mode == 3 ? 1 : 0;
            cfg.threaded = true;
            cfg.seed = 100 + (uint64_t)pi;
            trs_run run;
            rec_error err;
            const char *p = path_of("size.rec");
            cr_assert(trs_record(&level, world, &cfg, p, &run, &err), "%s", err.message);
            struct timespec o0, o1;
            clock_gettime(CLOCK_MONOTONIC, &o0);
            rec_file *f = rec_file_open(p, &err);
            clock_gettime(CLOCK_MONOTONIC, &o1);
            cr_assert_not_null(f, "%s", err.message);
            rec_info info;
            rec_file_info(f, &info);
            rec_file_close(f);
            double open_ns = (double)(o1.tv_sec - o0.tv_sec) * 1e9 + (double)(o1.tv_nsec - o0.tv_nsec);
            double hours = (double)ticks / (64.0 * 3600.0);
            double per_hour = (double)(info.bytes_ticks + info.bytes_keyframes) / hours / players[pi];
            cr_log_info(
                "size: %2u player%s, %-32s %8.0f kB per player-hour (ticks %llu B, keyframes %llu B, "
                "fixed %llu B); rec_writer_tick %.0f ns, rec_file_open %.0f ns per character-tick",
                players[pi], players[pi] == 1 ? " " : "s",
                mode == 0   ? "compressed, no keyframes:"
                : mode == 1 ? "plain, no keyframes:"
                : mode == 2 ? "compressed, keyframes 64:"
                            : "compressed, every tick (debug):",
                per_hour / 1000.0, (unsigned long long)info.bytes_ticks, (unsigned long long)info.bytes_keyframes,
                (unsigned long long)(info.bytes_header + info.bytes_schema + info.bytes_initial + info.bytes_end),
                (double)run.writer_ns / (double)run.character_ticks, open_ns / (double)run.character_ticks);
            trs_free(&run);
        }
    }
}

// ---- the header --------------------------------------------------------------

Test(rec_format, every_header_field_survives_encoding)
{
    rec_header h = rec_default_header();
    cr_assert_str_eq(h.build_id, rec_build_id());
    cr_assert_gt(strlen(rec_build_id()), 4u);
    // It names the architecture and the system (a Windows and a Linux x86-64
    // build differ by them).
    cr_assert(strstr(rec_build_id(), "unknown-arch") == NULL, "%s", rec_build_id());
#if defined(__linux__)
    cr_assert(strstr(rec_build_id(), " linux") != NULL, "%s", rec_build_id());
#endif
#if defined(__x86_64__) && defined(__linux__)
    cr_assert(strstr(rec_build_id(), " x86_64 linux") != NULL, "%s", rec_build_id());
#endif
    cr_assert_neq(h.level.digest, 0u);
    h.settings.gravity = SIM_FX_INT(15);
    h.settings.crouch_shape = sim_shape_box(SIM_FX_MM(300), SIM_FX_MM(450), SIM_FX_MM(350));
    h.settings_digest = net_settings_digest(&h.settings);
    h.kind = REC_KIND_CLIENT;
    h.level.kind = REC_LEVEL_OBJ;
    snprintf(h.level.path, sizeof h.level.path, "/maps/some map.obj");
    snprintf(h.level.scale, sizeof h.level.scale, "0.0254");
    h.level.up_axis = 'z';
    h.level.generate_triangles = 5000;
    h.level.generate_seed = 0xFFFFFFFFu;
    h.level.digest = 0x8000000000000001ull;
    h.platform_count = REC_MAX_PLATFORMS;
    for (uint32_t i = 0; i < h.platform_count; i++) {
        sim_platform_def *p = &h.platforms[i];
        p->id = 1000 + i;
        p->half = sim_v3(SIM_FX_INT(1), -SIM_FX_INT(2) + (sim_fx)i, SIM_FX_INT(3));
        p->point_count = 1 + i % SIM_PLATFORM_MAX_POINTS;
        for (uint32_t k = 0; k < p->point_count; k++)
            p->points[k] = sim_v3((sim_fx)(k * 7777 + i), -(sim_fx)(k * 31), INT32_MIN + (sim_fx)k);
        p->ticks_per_leg = 1 + i;
        p->pause_ticks = i * 3;
    }
    h.water_count = 3;
    for (uint32_t i = 0; i < 3; i++)
        h.waters[i] = (sim_aabb){sim_v3(-(sim_fx)i, 0, INT32_MIN), sim_v3((sim_fx)i, INT32_MAX, 5)};
    h.max_characters = REC_MAX_CHARACTERS;
    h.keyframe_interval = 0;
    h.compress = false;
    snprintf(h.source, sizeof h.source, "0123456789012345678901234567890");
    h.client_character = 77;
    h.client_prediction_cap = 129;
    rec_buf b = {0};
    rec_header_encode(&b, &h);
    rec_header g;
    rec_error err;
    cr_assert(rec_header_decode(b.data, b.size, 100, &g, &err), "%s", err.message);
    cr_assert_eq(g.format_version, h.format_version);
    cr_assert_eq(g.behaviour_version, h.behaviour_version);
    cr_assert_eq(g.kind, h.kind);
    cr_assert_eq(net_settings_digest(&g.settings), net_settings_digest(&h.settings));
    cr_assert_eq(g.settings.cookie, h.settings.cookie);
    cr_assert_eq(g.settings_digest, h.settings_digest);
    cr_assert_eq(g.level.kind, h.level.kind);
    cr_assert_str_eq(g.level.path, h.level.path);
    cr_assert_str_eq(g.level.scale, h.level.scale);
    cr_assert_eq(g.level.up_axis, 'z');
    cr_assert_eq(g.level.generate_triangles, h.level.generate_triangles);
    cr_assert_eq(g.level.generate_seed, h.level.generate_seed);
    cr_assert_eq(g.level.digest, h.level.digest);
    cr_assert_eq(g.platform_count, h.platform_count);
    for (uint32_t i = 0; i < h.platform_count; i++) {
        const sim_platform_def *p = &h.platforms[i], *q = &g.platforms[i];
        cr_assert(p->id == q->id && sim_v3_eq(p->half, q->half) && p->point_count == q->point_count &&
                  p->ticks_per_leg == q->ticks_per_leg && p->pause_ticks == q->pause_ticks);
        for (uint32_t k = 0; k < p->point_count; k++)
            cr_assert(sim_v3_eq(p->points[k], q->points[k]));
    }
    cr_assert_eq(g.water_count, 3u);
    for (uint32_t i = 0; i < 3; i++)
        cr_assert(sim_v3_eq(g.waters[i].min, h.waters[i].min) && sim_v3_eq(g.waters[i].max, h.waters[i].max));
    cr_assert_eq(g.max_characters, h.max_characters);
    cr_assert_eq(g.keyframe_interval, 0u);
    cr_assert_eq(g.compress, false);
    cr_assert_str_eq(g.build_id, h.build_id);
    cr_assert_str_eq(g.source, h.source);
    cr_assert_eq(g.client_character, 77u);
    cr_assert_eq(g.client_prediction_cap, 129u);

    // entries this build does not know are skipped; a wrong digest is refused
    rec_buf c = {0};
    rec_put_u8(&c, 9);
    rec_put_bytes(&c, "new.thing", 9);
    rec_put_u8(&c, 42); // a type from the future
    rec_put_var(&c, 3);
    rec_put_bytes(&c, "abc", 3);
    rec_put_bytes(&c, b.data, b.size);
    cr_assert(rec_header_decode(c.data, c.size, 0, &g, &err), "%s", err.message);
    h.settings_digest ^= 1;
    b.size = 0;
    rec_header_encode(&b, &h);
    cr_assert_not(rec_header_decode(b.data, b.size, 100, &g, &err));
    cr_assert_not_null(strstr(err.message, "settings digest"), "%s", err.message);
    cr_assert_str_eq(err.chunk, "HEAD");
    rec_buf_free(&b);
    rec_buf_free(&c);
}

// A recording closed before any tick, and one whose scene is empty for a
// while (every character leaves, later one joins).
Test(rec_format, empty_recordings_and_empty_scenes_round_trip)
{
    sim_move_settings S = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(world, &S, 4);
    rec_header h = rec_default_header();
    h.max_characters = 4;
    h.keyframe_interval = 8;
    rec_error err;
    rec_writer *w = rec_writer_open(path_of("empty.rec"), &h, NULL, scene, &err);
    cr_assert_not_null(w, "%s", err.message);
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    rec_file *f = rec_file_open(path_of("empty.rec"), &err);
    cr_assert_not_null(f, "%s", err.message);
    rec_info info;
    rec_file_info(f, &info);
    cr_assert(info.complete);
    cr_assert_eq(info.tick_count, 0u);
    cr_assert_eq(info.last_hash, 0u);
    rec_cursor *c = rec_cursor_create(f, 0, &err);
    rec_tick t;
    cr_assert_not(rec_cursor_next(c, &t, &err));
    cr_assert_str_empty(err.message);
    rec_cursor_destroy(c);
    rec_file_close(f);

    sim_char_state a = sim_char_spawn(5, sim_level_find_marker(&level, "spawn")->position, 0);
    cr_assert_eq(sim_scene_add_character(scene, &a), 0);
    w = rec_writer_open(path_of("empty2.rec"), &h, NULL, scene, &err);
    cr_assert_not_null(w, "%s", err.message);
    uint64_t hashes[40];
    for (uint32_t k = 0; k < 40; k++) {
        rec_tick r = {.tick = sim_scene_tick(scene)};
        uint32_t leave = 5;
        sim_char_state j = sim_char_spawn(9, a.position, 100);
        if (k == 3) {
            r.leave_count = 1;
            r.leaves = &leave;
            sim_scene_remove_character(scene, 5);
        }
        if (k == 30) {
            r.join_count = 1;
            r.joins = &j;
            sim_scene_add_character(scene, &j);
        }
        sim_scene_step(scene);
        hashes[k] = sim_scene_hash(scene);
        cr_assert(rec_writer_tick(w, &r, scene));
    }
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    f = rec_file_open(path_of("empty2.rec"), &err);
    cr_assert_not_null(f, "%s", err.message);
    rec_file_info(f, &info);
    cr_assert(info.complete && info.tick_count == 40 && info.players == 2 && info.joins == 1 && info.leaves == 1);
    cr_assert_eq(rec_file_keyframe_count(f), 5u);
    for (uint32_t k = 0; k < rec_file_keyframe_count(f); k++) {
        uint32_t kt, kn;
        cr_assert(rec_file_keyframe(f, k, &kt, NULL, &kn, &err), "%s", err.message);
        cr_assert_eq(kn, kt <= 3 ? 1u : kt <= 30 ? 0u : 1u, "keyframe at %u", kt);
        c = rec_cursor_create(f, kt, &err);
        cr_assert_not_null(c, "%s", err.message);
        uint32_t i = kt;
        while (rec_cursor_next(c, &t, &err)) {
            if (t.has_world_hash)
                cr_assert_eq(t.world_hash, hashes[i]);
            cr_assert_eq(t.command_count, 0u);
            i++;
        }
        cr_assert_eq(i, 40u);
        rec_cursor_destroy(c);
    }
    rec_file_close(f);
    sim_scene_destroy(scene);
}

// Many characters and big events: 600 join in one tick, 300 leave in
// another, so block buffers grow past their first size; with and without
// the thread.
Test(rec_format, a_thousand_characters_with_mass_joins_and_leaves_round_trip)
{
    for (int threaded = 0; threaded < 2; threaded++) {
        sim_move_settings S = sim_move_default_settings();
        const uint32_t cap = 1200;
        sim_scene *scene = sim_scene_create(world, &S, cap);
        uint32_t next_id = 1;
        for (uint32_t i = 0; i < 400; i++) {
            sim_char_state c = sim_char_spawn(
                next_id++,
                sim_v3(SIM_FX_INT((int32_t)(i % 40) * 3 - 60), SIM_FX_INT(200), SIM_FX_INT((int32_t)(i / 40) * 3 - 60)),
                (sim_angle)(i * 997));
            cr_assert_eq(sim_scene_add_character(scene, &c), 0);
        }
        rec_header h = rec_default_header();
        rec_header_set_scene(&h, scene);
        h.keyframe_interval = 32;
        rec_writer_config wc = rec_default_writer_config();
        wc.threaded = threaded == 1;
        rec_error err;
        rec_writer *w = rec_writer_open(path_of("crowd.rec"), &h, &wc, scene, &err);
        cr_assert_not_null(w, "%s", err.message);
        enum { TICKS = 80 };
        static uint64_t hashes[TICKS];
        static uint32_t counts[TICKS];
        sim_char_state *joins = calloc(cap, sizeof *joins);
        uint32_t *leaves = calloc(cap, sizeof *leaves);
        rec_command *cmds = calloc(cap, sizeof *cmds);
        for (uint32_t k = 0; k < TICKS; k++) {
            rec_tick t = {.tick = sim_scene_tick(scene), .leaves = leaves, .joins = joins, .commands = cmds};
            if (k == 10) {
                for (uint32_t i = 0; i < 600; i++)
                    joins[t.join_count++] = sim_char_spawn(next_id++,
                                                           sim_v3(SIM_FX_INT((int32_t)(i % 30) * 3 + 70),
                                                                  SIM_FX_INT(300), SIM_FX_INT((int32_t)(i / 30) * 3)),
                                                           0);
                for (uint32_t i = 0; i < t.join_count; i++)
                    cr_assert_eq(sim_scene_add_character(scene, &joins[i]), 0);
            }
            if (k == 40) {
                uint32_t n = 0;
                const sim_char_state *cs = sim_scene_characters(scene, &n);
                for (uint32_t i = 0; i < n && t.leave_count < 300; i += 3)
                    leaves[t.leave_count++] = cs[i].id;
                for (uint32_t i = 0; i < t.leave_count; i++)
                    cr_assert(sim_scene_remove_character(scene, leaves[i]));
            }
            uint32_t n = 0;
            const sim_char_state *cs = sim_scene_characters(scene, &n);
            for (uint32_t i = 0; i < n; i++) {
                cmds[i].id = cs[i].id;
                cmds[i].input = (sim_input){
                    .tick = t.tick, .forward = (int8_t)((i + k) % 255 - 127), .yaw = (sim_angle)(k * 300 + i)};
                sim_scene_set_input(scene, cmds[i].id, &cmds[i].input);
            }
            t.command_count = n;
            sim_scene_step(scene);
            hashes[k] = sim_scene_hash(scene);
            sim_scene_characters(scene, &counts[k]);
            cr_assert(rec_writer_tick(w, &t, scene), "tick %u", t.tick);
        }
        cr_assert(rec_writer_close(w, &err), "%s", err.message);
        rec_file *f = rec_file_open(path_of("crowd.rec"), &err);
        cr_assert_not_null(f, "%s", err.message);
        rec_info info;
        rec_file_info(f, &info);
        cr_assert(info.complete);
        cr_assert_eq(info.tick_count, (uint32_t)TICKS);
        cr_assert_eq(info.players, 1000u);
        cr_assert_eq(info.max_characters_seen, 1000u);
        cr_assert_eq(info.joins, 600u);
        cr_assert_eq(info.leaves, 300u);
        rec_cursor *c = rec_cursor_create(f, 0, &err);
        rec_tick t;
        uint32_t k = 0;
        while (rec_cursor_next(c, &t, &err)) {
            if (t.has_world_hash)
                cr_assert_eq(t.world_hash, hashes[k]);
            cr_assert_eq(t.char_count, counts[k]);
            cr_assert_eq(t.command_count, t.char_count);
            k++;
        }
        cr_assert_str_empty(err.message, "%s", err.message);
        cr_assert_eq(k, (uint32_t)TICKS);
        rec_cursor_destroy(c);
        rec_file_close(f);
        free(joins);
        free(leaves);
        free(cmds);
        sim_scene_destroy(scene);
    }
}

// rec_state_encode_raw spells the schema table out for speed: the same bytes.
// Format 3's keyframe records (a mask of the fields that are not 0, then
// those as varints) give back every state, from all zeros to every field at
// its extremes, and a record cut short or holding a value its field cannot
// take is a fault.
Test(rec_format, compact_state_records_round_trip_and_refuse_bad_values)
{
    keel_rng rng = {78};
    rec_schema sc;
    rec_schema_native(&sc, REC_SCHEMA_STATE);
    uint32_t nf = 0;
    const rec_field *f = rec_state_fields(&nf);
    for (int r = 0; r < 3000; r++) {
        sim_char_state s;
        memset(&s, 0, sizeof s);
        for (uint32_t i = 0; i < nf; i++) {
            int64_t v;
            switch (keel_rng_range(&rng, 0, 3)) {
            case 0: v = 0; break;
            case 1: v = (int64_t)keel_rng_range(&rng, 0, 300) - 150; break;
            case 2:
                v = (int64_t)(int32_t)((uint32_t)keel_rng_range(&rng, 0, 0xFFFF) << 16 |
                                       (uint32_t)keel_rng_range(&rng, 0, 0xFFFF));
                break;
            default: v = keel_rng_range(&rng, 0, 1) ? INT32_MIN : INT32_MAX; break;
            }
            // cut to the field's width as a record stores it (sign-extended when signed)
            rec_buf w = {0};
            rec_field_put(&w, (uint8_t)f[i].type, f[i].width, v);
            rec_rd wr;
            rec_rd_init(&wr, w.data, w.size, 0);
            cr_assert(rec_state_set(&s, i, rec_field_get(&wr, (uint8_t)f[i].type, f[i].width)), "field %u", i);
            rec_buf_free(&w);
        }
        rec_buf b = {0};
        rec_state_encode_compact(&b, &s);
        rec_rd rd;
        rec_rd_init(&rd, b.data, b.size, 0);
        sim_char_state back;
        cr_assert(rec_state_decode_compact(&rd, &sc, &back), "%s", rd.fault);
        cr_assert_eq(rd.pos, b.size);
        for (uint32_t i = 0; i < nf; i++)
            cr_assert_eq(rec_state_get(&back, i), rec_state_get(&s, i), "field %u", i);
        // cut short anywhere: a fault, never a crash
        rec_rd_init(&rd, b.data, b.size - 1u, 0);
        cr_assert_not(rec_state_decode_compact(&rd, &sc, &back));
        rec_buf_free(&b);
    }
    // a mask naming a field past the schema, a u16 field of 65536, an angle out of range
    const uint8_t past[] = {0x80, 0x80, 0x80, 0x04};                  // bit 23
    const uint8_t flags_big[] = {0x02, 0x80, 0x80, 0x80, 0x80, 0x10}; // flags = 2^32
    const uint8_t yaw_big[] = {0x80, 0x80, 0x10, 0x80, 0x80, 0x04};   // yaw: zigzag 65536 = 32768
    const uint8_t *bad[] = {past, flags_big, yaw_big};
    const size_t bad_n[] = {sizeof past, sizeof flags_big, sizeof yaw_big};
    for (int i = 0; i < 3; i++) {
        rec_rd rd;
        rec_rd_init(&rd, bad[i], bad_n[i], 100);
        sim_char_state back;
        cr_assert_not(rec_state_decode_compact(&rd, &sc, &back), "case %d", i);
        cr_assert_not_null(rd.fault);
    }
}

Test(rec_format, the_state_encoder_matches_the_schema_table)
{
    keel_rng rng = {77};
    uint32_t nf = 0;
    const rec_field *f = rec_state_fields(&nf);
    for (int r = 0; r < 2000; r++) {
        sim_char_state s;
        uint8_t bytes[sizeof s];
        for (size_t i = 0; i < sizeof s; i++)
            bytes[i] = (uint8_t)keel_rng_range(&rng, 0, 255);
        memcpy(&s, bytes, sizeof s);
        s.flags &= SIM_CHAR_KNOWN_FLAGS;
        s.move_type = (int32_t)keel_rng_range(&rng, 0, SIM_MOVE_TYPE_COUNT - 1);
        s.ground = (int32_t)keel_rng_range(&rng, 0, 2);
        uint8_t fast[128];
        size_t n = rec_state_encode_raw(fast, &s);
        rec_buf b = {0};
        for (uint32_t i = 0; i < nf; i++)
            rec_field_put(&b, (uint8_t)f[i].type, f[i].width, rec_state_field_value(&s, i));
        cr_assert_eq(n, b.size);
        cr_assert_eq(memcmp(fast, b.data, n), 0);
        rec_buf_free(&b);
    }
}
