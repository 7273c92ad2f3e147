// keel tests: the sync test of a game (game_sync.h). MIT licence, see LICENSE.
#include "game_sync.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#define RING 8u

uint32_t keel_test_mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    return x ^ (x >> 16);
}

sim_input keel_test_sync_input(uint32_t tick, uint32_t id, uint32_t r)
{
    sim_input in = {0};
    in.tick = tick;
    in.forward = (int8_t)((r & 3) == 0 ? 60 : 0);
    in.right = (int8_t)((r >> 2 & 3) == 1 ? -50 : 0);
    in.yaw = (sim_angle)((id <= 8 ? 0 : 0x8000) + (int32_t)((r >> 8 & 0xFF) - 128) * 16);
    return in;
}

// An executor that runs the items backwards, one at a time: another order
// than the plain loop's, so a rule that reads another character's state
// would show here.
static void backwards(void *user, uint32_t count, sim_task_fn fn, void *task)
{
    (void)user;
    for (uint32_t k = count; k-- > 0;)
        fn(task, k, k + 1);
}

void keel_test_game_sync(const keel_game_sync *g, const uint64_t *ref)
{
    // Rollback: every 5 ticks, back 1..RING-1 ticks to a saved state and
    // forward again with the same commands.
    sim_scene *b = g->make(g->user);
    size_t cap = sim_scene_state_size(b) + 64 * 1024;
    uint8_t *ring = malloc(RING * cap);
    cr_assert_not_null(ring);
    size_t sizes[RING];
    for (uint32_t t = 0; t < g->ticks; t++) {
        sizes[t % RING] = sim_scene_state_size(b);
        cr_assert_leq(sizes[t % RING], cap);
        sim_scene_save(b, ring + (t % RING) * cap);
        g->commands(b, t, g->user);
        sim_scene_step(b);
        cr_assert_eq(sim_scene_hash(b), ref[t], "tick %u", t);
        if (t % 5 == 4 && t >= RING) {
            uint32_t k = 1 + keel_test_mix(t) % (RING - 1), from = t + 1 - k;
            sim_scene_error e;
            cr_assert(sim_scene_restore(b, ring + (from % RING) * cap, sizes[from % RING], &e), "%s", e.reason);
            for (uint32_t u = from; u <= t; u++) {
                g->commands(b, u, g->user);
                sim_scene_step(b);
            }
            cr_assert_eq(sim_scene_hash(b), ref[t], "tick %u after rolling back %u", t, k);
        }
    }

    // Saved and restored into a fresh scene every tick, the per-character
    // parts run backwards in items of 3.
    sim_scene *c = g->make(g->user);
    for (uint32_t t = 0; t < g->ticks; t++) {
        sim_scene_save(c, ring);
        size_t size = sim_scene_state_size(c);
        sim_scene_destroy(c);
        c = g->fresh(g->user);
        sim_scene_set_parallel(c, backwards, NULL, 3);
        sim_scene_error e;
        cr_assert(sim_scene_restore(c, ring, size, &e), "%s", e.reason);
        g->commands(c, t, g->user);
        sim_scene_step(c);
        cr_assert_eq(sim_scene_hash(c), ref[t], "tick %u", t);
    }
    free(ring);
    sim_scene_destroy(b);
    sim_scene_destroy(c);
}
