// keel tests: the built-in level's world, built once per test executable.
// MIT licence.
//
// Criterion runs every test in a process of its own, and more than 150 of
// them start by building the built-in level's world (33,317 triangles):
// 0.3 s of CPU each in the normal tree and 1.1 s under the sanitizers. The
// first process of an executable builds it with sim_world_create and keeps
// the result in a file beside the executable (test-cache/NAME-KEY.world);
// the others read that file back into the same arrays sim_world_create
// fills, so every test meets a world equal, byte for byte, to the one
// sim_world_create makes with this executable's code.
//
// Invariants:
// - KEY is a 64-bit hash of the executable's own file (/proc/self/exe): a
//   world is only ever read by the very code that wrote it. A rebuilt
//   executable has another key and replaces its older file.
// - A file that is short, damaged or of another layout is ignored and the
//   world is built again; a cache that cannot be written only costs time.
// - Files are written under a temporary name and renamed, so two processes
//   that start together never read half a file.
// - World building itself is tested without the cache: test_world_build
//   builds the built-in level's world with sim_world_create and pins its
//   digest.
// - KEEL_TEST_NO_WORLD_CACHE=1 turns the cache off.
#define _POSIX_C_SOURCE 200809L
#include "test_support.h"

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <xxhash.h>

#include <keel/sim_level.h>
#include <keel/sim_world.h>

#include "world_internal.h"

#define CACHE_MAGIC 0x31434c574c45454bull // "KEELWLC1"

// What a cache file starts with: the layout it was written with.
typedef struct cache_head {
    uint64_t magic, key;
    uint32_t sizes[4]; // sim_world, sim_tri, sim_aabb, sim_bvh_node
    uint32_t tri_count, node_count, level_triangles, spawn_marker_count;
} cache_head;

// load() and save() copy every field of sim_world. A field added to it must
// be added to them too: on 64-bit hosts these fail the build until it is
// (the struct's comment in sim/src/world_internal.h says so as well).
#if UINTPTR_MAX > 0xffffffffu
_Static_assert(sizeof(sim_world) == 152 && offsetof(sim_world, stats) == 56 && offsetof(sim_world, facing) == 120 &&
                   offsetof(sim_world, spawn_marker_count) == 144,
               "sim_world changed: update tests/support/world_cache.c");
#endif

static bool exe_key(uint64_t *key, char *dir, size_t dir_size, char *name, size_t name_size)
{
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = 0;
    const char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    snprintf(dir, dir_size, "%.*s/test-cache", (int)(slash - exe), exe);
    snprintf(name, name_size, "%s", slash + 1);
    FILE *f = fopen("/proc/self/exe", "rb");
    if (!f)
        return false;
    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset(st);
    static unsigned char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        XXH3_64bits_update(st, buf, got);
    bool ok = !ferror(f);
    fclose(f);
    *key = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return ok;
}

static void head_of(cache_head *h, const sim_world *w, uint64_t key)
{
    memset(h, 0, sizeof *h);
    h->magic = CACHE_MAGIC;
    h->key = key;
    h->sizes[0] = (uint32_t)sizeof(sim_world);
    h->sizes[1] = (uint32_t)sizeof(sim_tri);
    h->sizes[2] = (uint32_t)sizeof(sim_aabb);
    h->sizes[3] = (uint32_t)sizeof(sim_bvh_node);
    if (w) {
        h->tri_count = w->tri_count;
        h->node_count = w->node_count;
        h->level_triangles = w->level_triangles;
        h->spawn_marker_count = w->spawn_marker_count;
    }
}

static bool read_all(FILE *f, void *p, size_t size) { return size == 0 || fread(p, 1, size, f) == size; }

// The world from `path`, or NULL when the file is absent or not this key's.
static sim_world *load(const char *path, uint64_t key)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cache_head want, h;
    head_of(&want, NULL, key);
    sim_world *w = NULL;
    if (!read_all(f, &h, sizeof h) || h.magic != want.magic || h.key != key ||
        memcmp(h.sizes, want.sizes, sizeof h.sizes) != 0)
        goto fail;
    w = calloc(1, sizeof *w);
    if (!w)
        goto fail;
    w->tri_count = h.tri_count;
    w->node_count = h.node_count;
    w->level_triangles = h.level_triangles;
    w->spawn_marker_count = h.spawn_marker_count;
    w->tris = malloc((h.tri_count ? h.tri_count : 1) * sizeof *w->tris);
    w->tri_box = malloc((h.tri_count ? h.tri_count : 1) * sizeof *w->tri_box);
    w->nodes = malloc((h.node_count ? h.node_count : 1) * sizeof *w->nodes);
    w->facing = malloc(h.level_triangles ? h.level_triangles : 1);
    w->spawn_markers = malloc((h.spawn_marker_count ? h.spawn_marker_count : 1) * sizeof *w->spawn_markers);
    if (!w->tris || !w->tri_box || !w->nodes || !w->facing || !w->spawn_markers)
        goto fail;
    if (!read_all(f, &w->def, sizeof w->def) || !read_all(f, &w->stats, sizeof w->stats) ||
        !read_all(f, w->tris, h.tri_count * sizeof *w->tris) ||
        !read_all(f, w->tri_box, h.tri_count * sizeof *w->tri_box) ||
        !read_all(f, w->nodes, h.node_count * sizeof *w->nodes) || !read_all(f, w->facing, h.level_triangles) ||
        !read_all(f, w->spawn_markers, h.spawn_marker_count * sizeof *w->spawn_markers) || fgetc(f) != EOF)
        goto fail;
    fclose(f);
    return w;
fail:
    fclose(f);
    sim_world_destroy(w);
    return NULL;
}

static bool write_all(FILE *f, const void *p, size_t size) { return size == 0 || fwrite(p, 1, size, f) == size; }

// Removes this executable's older cache files (NAME-*.world of other keys).
static void remove_stale(const char *dir, const char *name, const char *keep)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t nl = strlen(name);
    struct dirent *e;
    char path[2048];
    while ((e = readdir(d)) != NULL) {
        size_t el = strlen(e->d_name);
        if (el == nl + 1 + 16 + 6 && strncmp(e->d_name, name, nl) == 0 && e->d_name[nl] == '-' &&
            strcmp(e->d_name + el - 6, ".world") == 0 && strcmp(e->d_name, keep) != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove(path);
        }
    }
    closedir(d);
}

static void save(const char *dir, const char *name, const char *file, const sim_world *w, uint64_t key)
{
    mkdir(dir, 0777);
    char path[2048], tmp[2100];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    cache_head h;
    head_of(&h, w, key);
    bool ok = write_all(f, &h, sizeof h) && write_all(f, &w->def, sizeof w->def) &&
              write_all(f, &w->stats, sizeof w->stats) && write_all(f, w->tris, w->tri_count * sizeof *w->tris) &&
              write_all(f, w->tri_box, w->tri_count * sizeof *w->tri_box) &&
              write_all(f, w->nodes, w->node_count * sizeof *w->nodes) && write_all(f, w->facing, w->level_triangles) &&
              write_all(f, w->spawn_markers, w->spawn_marker_count * sizeof *w->spawn_markers);
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) == 0)
        remove_stale(dir, name, file);
    else
        remove(tmp);
}

sim_world *keel_test_builtin_world(sim_level *level)
{
    cr_assert_eq(sim_level_builtin(level), 0);
    const char *off = getenv("KEEL_TEST_NO_WORLD_CACHE");
    uint64_t key = 0;
    char dir[1100], name[512], file[600], path[2048];
    bool cached = !(off && off[0] == '1') && exe_key(&key, dir, sizeof dir, name, sizeof name);
    if (cached) {
        snprintf(file, sizeof file, "%s-%016llx.world", name, (unsigned long long)key);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        sim_world *w = load(path, key);
        if (w)
            return w;
    }
    sim_world *world = sim_world_create(level, NULL, NULL);
    cr_assert_not_null(world);
    if (cached)
        save(dir, name, file, world, key);
    return world;
}
