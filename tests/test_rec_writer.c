// keel tests: the recording writer's threads and failed starts. A threaded
// writer that cannot start its thread (forced with test_no_thread) writes on
// the caller's thread: the file is byte for byte the one the background
// thread writes, and the one an unthreaded writer writes. An open that fails
// after creating its file removes it again. MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L // access
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "test_rec_scene.h"

static trs_fixture fx;
static void setup(void) { trs_fixture_make(&fx, "rec_writer"); }
static void teardown(void) { trs_fixture_free(&fx); }
TestSuite(rec_writer, .init = setup, .fini = teardown, .timeout = 240);

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    cr_assert_geq(n, 0);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)n + 1);
    cr_assert_not_null(data);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

// The same run (seed, joins, leaves, platforms, keyframes, compression)
// recorded by the three kinds of writer.
Test(rec_writer, the_fallback_writes_the_threaded_writers_bytes)
{
    static const struct {
        const char *name;
        bool threaded, no_thread;
    } kinds[] = {{"threaded.rec", true, false}, {"fallback.rec", true, true}, {"unthreaded.rec", false, false}};
    char *data[3];
    size_t size[3];
    for (int k = 0; k < 3; k++) {
        trs_config cfg = trs_default_config();
        cfg.ticks = 700;
        cfg.capacity = 24;
        cfg.threaded = kinds[k].threaded;
        cfg.no_thread = kinds[k].no_thread;
        cfg.water = true;
        cfg.seed = 7;
        trs_run run;
        rec_error err;
        char path[512];
        snprintf(path, sizeof path, "%s", keel_test_dir_file(fx.dir, kinds[k].name));
        cr_assert(trs_record(&fx.level, fx.world, &cfg, path, &run, &err), "%s: %s", kinds[k].name, err.message);
        trs_free(&run);
        data[k] = slurp(path, &size[k]);
        rec_file *f = rec_file_open(path, &err);
        cr_assert_not_null(f, "%s: %s", kinds[k].name, err.message);
        rec_info info;
        rec_file_info(f, &info);
        cr_assert(info.complete, "%s", kinds[k].name);
        cr_assert_eq(info.tick_count, 700u);
        cr_assert_gt(info.compressed_blocks, 0u);
        rec_file_close(f);
    }
    for (int k = 1; k < 3; k++) {
        cr_assert_eq(size[k], size[0], "%s: %zu bytes, threaded %zu", kinds[k].name, size[k], size[0]);
        cr_assert_eq(memcmp(data[k], data[0], size[0]), 0, "%s differs from the threaded writer's file", kinds[k].name);
    }
    for (int k = 0; k < 3; k++)
        free(data[k]);
}

// A scene of one character at the spawn point, and its header.
static sim_scene *one_character_scene(rec_header *h)
{
    sim_move_settings S = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(fx.world, &S, 8);
    sim_char_state c = sim_char_spawn(1, sim_level_find_marker(&fx.level, "spawn")->position, 0);
    cr_assert_eq(sim_scene_add_character(scene, &c), 0);
    *h = rec_default_header();
    h->max_characters = 8;
    return scene;
}

// test_no_thread is what a system without threads does: the open succeeds
// and says it is not threaded.
Test(rec_writer, a_writer_without_its_thread_says_so)
{
    rec_header h;
    sim_scene *scene = one_character_scene(&h);
    for (int forced = 0; forced < 2; forced++) {
        rec_writer_config wc = rec_default_writer_config();
        wc.test_no_thread = forced == 1;
        rec_error err;
        rec_writer *w = rec_writer_open(keel_test_dir_file(fx.dir, "one.rec"), &h, &wc, scene, &err);
        cr_assert_not_null(w, "%s", err.message);
        cr_assert_eq(rec_writer_threaded(w), forced == 0);
        cr_assert(rec_writer_close(w, &err), "%s", err.message);
    }
    rec_writer_config wc = rec_default_writer_config();
    wc.threaded = false;
    rec_error err;
    rec_writer *w = rec_writer_open(keel_test_dir_file(fx.dir, "one.rec"), &h, &wc, scene, &err);
    cr_assert_not_null(w, "%s", err.message);
    cr_assert_not(rec_writer_threaded(w));
    size_t queued = 1;
    cr_assert(rec_writer_pending(w, &queued)); // nobody else holds its lock
    cr_expect_eq(queued, 0, "a writer without its thread queues nothing");
    cr_assert(rec_writer_close(w, &err), "%s", err.message);
    sim_scene_destroy(scene);
}

// Opens that fail after the file was created (the header's chunks already
// over the pending limit, an initial character that fails its checks, with
// and without the thread) leave no file.
Test(rec_writer, a_failed_open_leaves_no_file)
{
    rec_header h;
    sim_scene *scene = one_character_scene(&h);
    for (int forced = 0; forced < 2; forced++) {
        const char *path = keel_test_dir_file(fx.dir, "behind.rec");
        rec_writer_config wc = rec_default_writer_config();
        wc.max_pending_bytes = 16;
        wc.test_no_thread = forced == 1;
        rec_error err;
        rec_writer *w = rec_writer_open(path, &h, &wc, scene, &err);
        if (forced == 0) {
            cr_assert_null(w);
            cr_assert_not_null(strstr(err.message, "fell behind"), "%s", err.message);
        } else {
            // on the caller's thread nothing waits: the limit cannot be reached
            cr_assert_not_null(w, "%s", err.message);
            cr_assert(rec_writer_close(w, &err), "%s", err.message);
            remove(path);
        }
        cr_assert_neq(access(path, F_OK), 0, "%s is left behind", path);
    }
    // An initial state that fails sim_char_state_check (the scene was
    // changed behind its back), found after HEAD and SCHM were written.
    uint32_t n = 0;
    sim_char_state *cs = (sim_char_state *)sim_scene_characters(scene, &n);
    cr_assert_eq(n, 1u);
    cs[0].flags |= ~(uint32_t)SIM_CHAR_KNOWN_FLAGS;
    for (int forced = 0; forced < 2; forced++) {
        const char *path = keel_test_dir_file(fx.dir, "bad_state.rec");
        rec_writer_config wc = rec_default_writer_config();
        wc.test_no_thread = forced == 1;
        rec_error err;
        cr_assert_null(rec_writer_open(path, &h, &wc, scene, &err));
        cr_assert_not_null(strstr(err.message, "initial character"), "%s", err.message);
        cr_assert_neq(access(path, F_OK), 0, "%s is left behind", path);
    }
    sim_scene_destroy(scene);
}
