// keel tests: recording a whole server session with bots on the in-memory
// network (app/keel_session.h) -- churn, pushing, platforms -- on
// the server side through its tick observer and on one client through
// cl_record; then the server recording re-simulates (rec_verify), the client
// recording replays offline (cl_replay_verify), and the client's confirmed
// hashes equal the server's world hashes at the same ticks. MIT licence, see
// LICENSE.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <keel/cl_record.h>
#include <keel/cl_replay.h>
#include <keel/rec_verify.h>
#include <keel/sim_hash.h>

#include "keel_session.h"
#include "test_support.h"

// In the sanitizer tree everything runs several times slower: a shorter
// main session there.
#ifdef KEEL_SANITIZED_BUILD
#define SESSION_TICKS 1600u
#else
#define SESSION_TICKS 4000u // a minute of play
#endif

static sim_level level;
static sim_world *world;
static char dir[256];

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    keel_test_dir_make(dir, sizeof dir, "record_session");
}

static void teardown(void)
{
    keel_test_dir_remove(dir);
    keel_test_builtin_free(&level, world);
}

TestSuite(record_session, .init = setup, .fini = teardown, .timeout = 600);

static const char *path_of(const char *name) { return keel_test_dir_file(dir, name); }

// ---- the server's recorder, and what the test watches besides ---------------------------

typedef struct server_rec {
    rec_writer *w;
    bool failed;
    uint32_t ticks;
    // what happened in the scene, to show the session has what it should
    uint32_t ticks_on_platform; // ticks in which some character stood on a moving platform
    uint32_t ticks_touching;    // ticks in which two characters touched
} server_rec;

static void observe(void *ctx, const rec_tick *t, const sim_scene *after)
{
    server_rec *r = ctx;
    if (r->w && !rec_writer_tick(r->w, t, after))
        r->failed = true;
    r->ticks++;
    uint32_t n;
    const sim_char_state *c = sim_scene_characters(after, &n);
    bool riding = false, touching = false;
    // Capsules of radius 0.4 m: centres closer than 0.82 m apart horizontally
    // at similar heights are in contact.
    const int64_t touch = (int64_t)SIM_FX_MM(820) * SIM_FX_MM(820);
    for (uint32_t i = 0; i < n; i++) {
        riding |= !sim_v3_is_zero(c[i].ground_velocity);
        for (uint32_t j = i + 1; j < n && !touching; j++) {
            sim_vec3 d = sim_v3_sub(c[i].position, c[j].position);
            if (d.y > SIM_FX_INT(1) || d.y < -SIM_FX_INT(1))
                continue;
            d.y = 0;
            touching = sim_v3_len_sq64(d) < touch;
        }
    }
    r->ticks_on_platform += riding;
    r->ticks_touching += touching;
}

static rec_writer *open_server_recording(sv_server *sv, const char *path, uint32_t keyframe_interval)
{
    rec_header h = rec_default_header();
    cr_assert(sv_server_fill_header(sv, &h));
    h.keyframe_interval = keyframe_interval;
    snprintf(h.source, sizeof h.source, "test_record_session");
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = true;
    rec_error err;
    rec_writer *w = rec_writer_open(path, &h, &wc, sv_server_scene(sv), &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

static void close_writer(rec_writer *w)
{
    rec_error err;
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
}

static rec_file *open_file(const char *path)
{
    rec_error err;
    rec_file *f = rec_file_open(path, &err);
    cr_assert_not_null(f, "%s: %s at %llu", path, err.message, (unsigned long long)err.offset);
    return f;
}

static void expect_verifies(const char *path)
{
    rec_file *f = open_file(path);
    rec_verify_config vc = rec_default_verify_config();
    rec_divergence div;
    rec_verify_stats st;
    rec_error err;
    memset(&err, 0, sizeof err);
    int rc = rec_verify(f, world, &vc, &div, &st, &err);
    cr_expect_eq(rc, REC_EXIT_MATCH, "%s: verify %d: %s %s", path, rc, div.detail, err.message);
    cr_log_info("%s: verified %llu ticks, %llu character-ticks\n", path, (unsigned long long)st.ticks,
                (unsigned long long)st.character_ticks);
    rec_file_close(f);
}

// ---- the session ---------------------------------------------------------------------------

Test(record_session, eight_bots_with_churn_pushing_and_platforms_record_verify_and_replay)
{
    keel_session_config sc = keel_session_default_config();
    sc.bots = 8;
    sc.ticks = SESSION_TICKS;
    sc.seed = 3;
    sc.churn = true;
    sc.platforms = true;
    sc.full_clients = 2; // bot 0 (recorded, stays) and bot 1 (churns: its client comes and goes)
    sim_move_settings settings = sim_move_default_settings();
    keel_session *s = keel_session_create(world, &level, &settings, &sc);
    cr_assert_not_null(s);
    sv_server *sv = keel_session_server(s);
    server_rec sr;
    memset(&sr, 0, sizeof sr);
    const char *server_path = path_of("server.krec");
    sr.w = open_server_recording(sv, server_path, REC_DEFAULT_KEYFRAME_INTERVAL);
    sv_server_set_observer(sv, observe, &sr);

    rec_header ch = cl_record_default_header(keel_session_client0(s));
    cr_expect_eq(ch.kind, REC_KIND_CLIENT);
    cr_expect_eq(ch.platform_count, 2);
    rec_writer_config wc = rec_default_writer_config();
    rec_error err;
    const char *client_path = path_of("client.krec");
    cl_record *cr = cl_record_open(client_path, &ch, &wc, &err);
    cr_assert_not_null(cr, "%s", err.message);
    keel_session_record_client0(s, cr);

    keel_session_run(s);
    keel_session_stats st;
    keel_session_stats_get(s, &st);
    uint64_t final_hash = sim_scene_hash(sv_server_scene(sv));
    uint64_t client_records = cl_record_count(cr);
    cr_assert(cl_record_close(cr, &err), "%s", err.message);
    sv_server_set_observer(sv, NULL, NULL);
    close_writer(sr.w);
    cr_expect(!sr.failed);
    cr_log_info("session: %u ticks, %llu joins, %llu leaves (%llu silent), at most %u characters; %u ticks with "
                "someone on a platform, %u with two touching; confirmed %llu checked, %llu differ; own "
                "mispredictions %llu; client records %llu\n",
                st.ticks, (unsigned long long)st.joins, (unsigned long long)st.leaves,
                (unsigned long long)st.silent_leaves, st.max_characters, sr.ticks_on_platform, sr.ticks_touching,
                (unsigned long long)st.confirmed_checked, (unsigned long long)st.confirmed_differ,
                (unsigned long long)st.own_mispredictions, (unsigned long long)client_records);
    cr_expect_eq(st.ticks, SESSION_TICKS);
    cr_expect_eq(sr.ticks, SESSION_TICKS);
    cr_expect_eq(st.confirmed_differ, 0);
    cr_expect_eq(st.unexplained, 0);
    cr_expect_eq(st.hash_mismatches, 0);
    cr_expect_gt(st.confirmed_checked, SESSION_TICKS / 4u);
    // The session has what it is for: churn, pushing, riding.
    cr_expect_gt(st.leaves, 2);
    cr_expect_gt(st.joins, 8 + 2);
    cr_expect_gt(sr.ticks_on_platform, 100, "nobody rode a platform");
    cr_expect_gt(sr.ticks_touching, 100, "nobody pushed anybody");

    // The server recording: re-simulates to the same hashes.
    rec_file *sf = open_file(server_path);
    rec_info si;
    rec_file_info(sf, &si);
    cr_expect(si.complete);
    cr_expect_eq(si.tick_count, SESSION_TICKS);
    cr_expect_eq(si.last_hash, final_hash);
    cr_expect_eq(si.joins, st.joins);
    cr_expect_gt(si.leaves, 2);
    rec_file_close(sf);
    expect_verifies(server_path);

    // The client recording: replays offline to the same confirmed hashes.
    rec_file *cf = open_file(client_path);
    rec_info ci;
    rec_file_info(cf, &ci);
    cr_expect(ci.complete);
    cr_expect_eq(rec_file_header(cf)->client_character, 1, "bot 0 was the first to join");
    cl_replay_stats rs;
    rec_divergence div;
    int rc = cl_replay_verify_stats(cf, world, &level, &div, &rs, &err);
    cr_expect_eq(rc, REC_EXIT_MATCH, "client replay %d: %s %s", rc, div.detail, err.message);
    cr_expect_gt(rs.confirmed, SESSION_TICKS / 4u);
    cr_expect_gt(rs.predicted, SESSION_TICKS / 2u);
    cr_log_info("client replay: %llu calls, %llu confirmed ticks, %llu predicted\n", (unsigned long long)rs.records,
                (unsigned long long)rs.confirmed, (unsigned long long)rs.predicted);
    // ... and its confirmed hashes are the server's world hashes.
    sf = open_file(server_path);
    uint64_t compared = 0;
    rc = cl_replay_compare_server(cf, sf, &compared, &div, &err);
    cr_expect_eq(rc, REC_EXIT_MATCH, "client against server %d: %s %s", rc, div.detail, err.message);
    // The server's recording holds a world hash at the end of each tick block
    // (every 64 ticks): the confirmed ticks among those are compared.
    cr_expect_gt(compared, SESSION_TICKS / REC_BLOCK_TICKS / 4u);
    cr_expect_leq(compared, rs.confirmed);
    cr_log_info("client against server: %llu of %llu confirmed ticks compared\n", (unsigned long long)compared,
                (unsigned long long)rs.confirmed);
    rec_file_close(sf);
    rec_file_close(cf);
    keel_session_destroy(s);
}

// A session of light bots: the same seed gives the same session; a
// recording started in the middle (characters already there) verifies.
static uint64_t run_light(uint64_t seed, uint32_t ticks, const char *path, uint32_t start_at)
{
    keel_session_config sc = keel_session_default_config();
    sc.bots = 6;
    sc.ticks = ticks;
    sc.seed = seed;
    sc.churn = true;
    sc.full_clients = 0;
    sim_move_settings settings = sim_move_default_settings();
    keel_session *s = keel_session_create(world, &level, &settings, &sc);
    cr_assert_not_null(s);
    sv_server *sv = keel_session_server(s);
    server_rec sr;
    memset(&sr, 0, sizeof sr);
    while (path && sv_server_scene_tick(sv) < start_at && keel_session_step(s)) {
    }
    if (path) {
        cr_assert_eq(sv_server_scene_tick(sv), start_at);
        sr.w = open_server_recording(sv, path, 50);
        sv_server_set_observer(sv, observe, &sr);
    }
    keel_session_run(s);
    uint64_t h = sim_scene_hash(sv_server_scene(sv));
    if (path) {
        sv_server_set_observer(sv, NULL, NULL);
        close_writer(sr.w);
    }
    keel_session_destroy(s);
    return h;
}

Test(record_session, the_same_seed_gives_the_same_session_and_a_recording_may_start_mid_session)
{
    uint64_t a = run_light(11, 3000, NULL, 0);
    uint64_t b = run_light(11, 3000, path_of("mid.krec"), 1234);
    uint64_t c = run_light(12, 3000, NULL, 0);
    cr_expect_eq(a, b, "recording changed the session");
    cr_expect_neq(a, c, "another seed, the same session?");
    rec_file *f = open_file(path_of("mid.krec"));
    uint32_t first, count;
    const sim_char_state *states;
    cr_assert(rec_file_initial(f, &first, &states, &count));
    cr_expect_eq(first, 1234);
    cr_expect_gt(count, 0, "characters were there when recording started");
    rec_info info;
    rec_file_info(f, &info);
    cr_expect_eq(info.tick_count, 3000 - 1234);
    cr_expect_eq(info.last_hash, b);
    rec_file_close(f);
    expect_verifies(path_of("mid.krec"));
}

// ---- the replay finds what differs ------------------------------------------------------------

// Copy a client recording record by record, changing record `at` with `edit`.
static void copy_client_recording(const char *from, const char *to, uint64_t at, void (*edit)(rec_client_record *r))
{
    rec_file *f = open_file(from);
    rec_header h = *rec_file_header(f);
    rec_error err;
    rec_writer *w = rec_writer_open_client(to, &h, NULL, &err);
    cr_assert_not_null(w, "%s", err.message);
    rec_info info;
    rec_file_info(f, &info);
    rec_cursor *c = rec_cursor_create(f, info.first_tick, &err);
    cr_assert_not_null(c, "%s", err.message);
    rec_client_record r;
    for (uint64_t i = 0; rec_cursor_next_client(c, &r, &err); i++) {
        if (i == at)
            edit(&r);
        cr_assert(rec_writer_client(w, &r));
    }
    rec_cursor_destroy(c);
    close_writer(w);
    rec_file_close(f);
}

static void flip_hash(rec_client_record *r) { r->hash ^= 1u; }
static void flip_result(rec_client_record *r) { r->result ^= 1u; }

// The index of the `n`th record of kind `op` in a client recording.
static uint64_t nth_record(const char *path, rec_client_op op, uint32_t n, uint32_t *tick)
{
    rec_file *f = open_file(path);
    rec_info info;
    rec_file_info(f, &info);
    rec_error err;
    rec_cursor *c = rec_cursor_create(f, info.first_tick, &err);
    cr_assert_not_null(c);
    rec_client_record r;
    uint64_t found = UINT64_MAX;
    uint32_t seen = 0;
    for (uint64_t i = 0; rec_cursor_next_client(c, &r, &err); i++) {
        if (r.op == op && seen++ == n) {
            found = i;
            *tick = r.tick;
            break;
        }
    }
    rec_cursor_destroy(c);
    rec_file_close(f);
    cr_assert_neq(found, UINT64_MAX, "no record %u of kind %d", n, (int)op);
    return found;
}

static void record_small_session(const char *server_path, const char *client_path)
{
    keel_session_config sc = keel_session_default_config();
    sc.bots = 4;
    sc.ticks = 1200;
    sc.seed = 5;
    sc.full_clients = 1;
    sim_move_settings settings = sim_move_default_settings();
    keel_session *s = keel_session_create(world, &level, &settings, &sc);
    cr_assert_not_null(s);
    sv_server *sv = keel_session_server(s);
    server_rec sr;
    memset(&sr, 0, sizeof sr);
    if (server_path) {
        sr.w = open_server_recording(sv, server_path, 64);
        sv_server_set_observer(sv, observe, &sr);
    }
    rec_header ch = cl_record_default_header(keel_session_client0(s));
    rec_error err;
    cl_record *cr = cl_record_open(client_path, &ch, NULL, &err);
    cr_assert_not_null(cr, "%s", err.message);
    keel_session_record_client0(s, cr);
    keel_session_run(s);
    cr_assert(cl_record_close(cr, &err), "%s", err.message);
    if (server_path) {
        sv_server_set_observer(sv, NULL, NULL);
        close_writer(sr.w);
    }
    keel_session_destroy(s);
}

Test(record_session, a_changed_confirmed_hash_or_return_value_is_found)
{
    const char *good = path_of("good.krec");
    record_small_session(NULL, good);
    rec_file *f = open_file(good);
    rec_divergence div;
    rec_error err;
    cr_expect_eq(cl_replay_verify(f, world, &level, &div, &err), REC_EXIT_MATCH, "%s %s", div.detail, err.message);
    rec_file_close(f);

    uint32_t tick = 0;
    uint64_t at = nth_record(good, REC_CLIENT_CONFIRMED, 300, &tick);
    const char *bad = path_of("bad_hash.krec");
    copy_client_recording(good, bad, at, flip_hash);
    f = open_file(bad);
    cr_expect_eq(cl_replay_verify(f, world, &level, &div, &err), REC_EXIT_DIVERGED);
    cr_expect(div.found);
    cr_expect_eq(div.tick, tick);
    cr_expect(strstr(div.detail, "hash") != NULL, "%s", div.detail);
    cr_log_info("changed hash: %s\n", div.detail);
    rec_file_close(f);

    uint32_t unused;
    at = nth_record(good, REC_CLIENT_PREDICT, 500, &unused);
    bad = path_of("bad_result.krec");
    copy_client_recording(good, bad, at, flip_result);
    f = open_file(bad);
    cr_expect_eq(cl_replay_verify(f, world, &level, &div, &err), REC_EXIT_DIVERGED);
    cr_expect(strstr(div.detail, "predict") != NULL, "%s", div.detail);
    cr_log_info("changed return value: %s\n", div.detail);
    rec_file_close(f);
}

Test(record_session, client_and_server_recordings_of_different_sessions_disagree)
{
    const char *client = path_of("c.krec"), *server = path_of("s.krec"), *other = path_of("o.krec");
    record_small_session(server, client);
    run_light(99, 1200, other, 0); // another session, the same simulation
    rec_file *cf = open_file(client), *sf = open_file(server), *of = open_file(other);
    rec_divergence div;
    rec_error err;
    uint64_t compared = 0;
    cr_expect_eq(cl_replay_compare_server(cf, sf, &compared, &div, &err), REC_EXIT_MATCH, "%s %s", div.detail,
                 err.message);
    cr_expect_gt(compared, 4);
    cr_expect_eq(cl_replay_compare_server(cf, of, &compared, &div, &err), REC_EXIT_DIVERGED);
    cr_expect(div.found);
    cr_log_info("another session: %s\n", div.detail);
    // Kinds swapped, or a scene recording replayed as a client's: bad files.
    cr_expect_eq(cl_replay_compare_server(sf, cf, &compared, &div, &err), REC_EXIT_BAD_FILE);
    cr_expect_eq(cl_replay_verify(sf, world, &level, &div, &err), REC_EXIT_BAD_FILE);
    cr_expect(strstr(err.message, "not a client recording") != NULL, "%s", err.message);
    rec_file_close(cf);
    rec_file_close(sf);
    rec_file_close(of);
}

Test(record_session, a_client_recording_to_a_path_that_cannot_be_created_fails_at_open)
{
    keel_session_config sc = keel_session_default_config();
    sc.bots = 1;
    sc.ticks = 10;
    sim_move_settings settings = sim_move_default_settings();
    keel_session *s = keel_session_create(world, &level, &settings, &sc);
    cr_assert_not_null(s);
    rec_header ch = cl_record_default_header(keel_session_client0(s));
    rec_error err;
    cl_record *cr = cl_record_open("/nonexistent-dir/x.krec", &ch, NULL, &err);
    cr_expect_null(cr);
    cr_expect(strstr(err.message, "/nonexistent-dir/x.krec") != NULL, "%s", err.message);
    keel_session_destroy(s);
}
