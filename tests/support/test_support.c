// keel tests: shared helpers. MIT licence.
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include <keel/sim_level.h>
#include <keel/sim_move.h>
#include <keel/sim_world.h>

const char *keel_test_levels_dir(void)
{
    static char dir[1024];
    const char *env = getenv("KEEL_LEVELS_DIR");
    const char *cand = env && env[0] ? env : KEEL_SHARED_LEVELS_DIR;
    struct stat st;
    if (stat(cand, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "note: shared levels folder %s is absent; tests on the real maps are skipped\n", cand);
        return NULL;
    }
    snprintf(dir, sizeof dir, "%s", cand);
    return dir;
}

const char *keel_test_level_path(const char *file)
{
    static char path[1200];
    const char *dir = keel_test_levels_dir();
    if (!dir)
        return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "note: %s is absent; skipped\n", path);
        return NULL;
    }
    return path;
}

// keel_test_builtin_world: world_cache.c

sim_world *keel_test_generated_world(sim_level *level, uint32_t triangles, uint32_t seed)
{
    cr_assert_eq(sim_level_generate(level, triangles, seed), 0);
    sim_world_def def = sim_world_default_def();
    sim_error err;
    memset(&err, 0, sizeof err);
    sim_world *world = sim_world_create(level, &def, &err);
    cr_assert_not_null(world, "%s", err.message);
    return world;
}

sim_world *keel_test_room_world(sim_level *level, int32_t x0, int32_t z0, int32_t x1, int32_t z1, int32_t height,
                                const sim_vec3 *block_min, const sim_vec3 *block_max)
{
    sim_level_builder b;
    sim_level_builder_init(&b);
    sim_fx y0 = 0, y1 = height;
#define P(x, y, z) sim_v3(x, y, z)
    sim_level_builder_quad(&b, P(x0, y0, z0), P(x0, y0, z1), P(x1, y0, z1), P(x1, y0, z0)); // floor
    sim_level_builder_quad(&b, P(x0, y1, z0), P(x1, y1, z0), P(x1, y1, z1), P(x0, y1, z1)); // ceiling
    sim_level_builder_quad(&b, P(x0, y0, z0), P(x1, y0, z0), P(x1, y1, z0), P(x0, y1, z0));
    sim_level_builder_quad(&b, P(x0, y0, z1), P(x0, y1, z1), P(x1, y1, z1), P(x1, y0, z1));
    sim_level_builder_quad(&b, P(x0, y0, z0), P(x0, y1, z0), P(x0, y1, z1), P(x0, y0, z1));
    sim_level_builder_quad(&b, P(x1, y0, z0), P(x1, y0, z1), P(x1, y1, z1), P(x1, y1, z0));
#undef P
    if (block_min && block_max)
        sim_level_builder_aabox(&b, *block_min, *block_max);
    cr_assert_eq(sim_level_builder_finish(&b, level), 0);
    sim_world *world = sim_world_create(level, NULL, NULL);
    cr_assert_not_null(world);
    return world;
}

void keel_test_builtin_free(sim_level *level, sim_world *world)
{
    sim_world_destroy(world);
    sim_level_free(level);
}

uint64_t keel_rng_next(keel_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t keel_rng_range(keel_rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    if (span == 0)
        return (int64_t)keel_rng_next(r);
    return lo + (int64_t)(keel_rng_next(r) % span);
}

sim_fx keel_rng_fx(keel_rng *r, sim_fx lo, sim_fx hi) { return (sim_fx)keel_rng_range(r, lo, hi); }

uint32_t keel_test_crossings(const sim_world *world, const sim_move_settings *s, const sim_char_state *before,
                             const sim_char_state *after, uint32_t count, int64_t *first)
{
    uint32_t crossed = 0;
    for (uint32_t i = 0; i < count; i++) {
        const sim_char_state *a = &before[i], *b = &after[i];
        if (a->id != b->id || a->move_type == SIM_MOVE_FLY || b->move_type == SIM_MOVE_FLY)
            continue;
        sim_vec3 from = sim_char_center(s, a), to = sim_char_center(s, b);
        if (sim_v3_eq(from, to))
            continue;
        sim_ray_input ray = {from, sim_v3_sub(to, from)};
        sim_ray_result rr;
        if (sim_world_raycast(world, &ray, &rr)) {
            if (crossed == 0 && first)
                *first = i;
            crossed++;
        }
    }
    return crossed;
}

void keel_test_mutate(keel_rng *r, char *text, size_t *len, size_t cap, const char *alphabet, size_t alphabet_len,
                      int ops)
{
    size_t n = *len;
    for (int k = 0; k < ops; k++) {
        int op = (int)keel_rng_range(r, 0, 3);
        size_t at = n ? (size_t)keel_rng_range(r, 0, (int64_t)n - 1) : 0;
        char c = alphabet[keel_rng_range(r, 0, (int64_t)alphabet_len - 1)];
        if (op == 0 && n) {
            text[at] = c;
        } else if (op == 1 && n + 1 < cap) {
            memmove(text + at + 1, text + at, n - at);
            text[at] = c;
            n++;
        } else if (op == 2 && n) {
            memmove(text + at, text + at + 1, n - at - 1);
            n--;
        } else if (op == 3 && n && 2 * n < cap) {
            size_t n2 = (size_t)keel_rng_range(r, 1, (int64_t)(n - at));
            // The segment [at, at + n2) stays in place and is copied after itself.
            memmove(text + at + n2, text + at, n - at);
            n += n2;
        }
    }
    *len = n;
}
