// keel tests: sim_scene_restore fed random and mutated buffers. MIT licence.
//
// Snapshots and recordings reach sim_scene_restore from the
// network and from files, so it must refuse anything out of range with a
// reason and accept only states the scene can step without a check firing or
// undefined behaviour. Each round takes a real saved scene (characters
// walking, riding and pushing), damages it in one of several ways (random
// bytes, fields set to edge values, bit flips, truncation, a random tail),
// restores it and, when accepted, steps the scene and checks every state.
//
// CMake builds this file twice in a sanitizer tree (scripts/test.sh's
// build-asan/): as test_restore_fuzz with KEEL_CHECKS on (no check may
// fire) and as test_restore_fuzz_nochecks against a copy of the core built
// without checks (UBSan must find no undefined behaviour). It uses no test
// support library, so that copy is the only core it links.
// KEEL_FUZZ_ROUNDS sets the number of rounds (default 20,000).
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_scene.h>

#define M(x) ((sim_fx)((x)*65536))

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n) { return (uint32_t)(next(s) % n); }

enum { N = 12, HEADER = 16, RECORD = 76 };

Test(restore_fuzz, random_and_mutated_buffers_are_refused_or_step_cleanly, .timeout = 600)
{
    sim_level level;
    cr_assert_eq(sim_level_builtin(&level), 0);
    sim_world *world = sim_world_create(&level, NULL, NULL);
    cr_assert_not_null(world);
    sim_move_settings S = sim_move_default_settings();
    const sim_marker *area = sim_level_find_marker(&level, "platform_area");
    cr_assert_not_null(area);
    sim_vec3 a = area->position;

    sim_scene *src = sim_scene_create(world, &S, N), *dst = sim_scene_create(world, &S, N);
    sim_platform_def e = {0};
    e.id = 7000;
    e.half = sim_v3(M(1.5), M(1) / 4, M(1.5));
    e.points[0] = sim_v3_add(a, sim_v3(0, -M(1) / 4, 0));
    e.points[1] = sim_v3_add(a, sim_v3(0, M(7) / 4, 0));
    e.point_count = 2;
    e.ticks_per_leg = 128;
    e.pause_ticks = 32;
    cr_assert_eq(sim_scene_add_platform(src, &e), 0);
    cr_assert_eq(sim_scene_add_platform(dst, &e), 0);
    for (uint32_t i = 0; i < N; i++) {
        sim_vec3 p = sim_v3_add(a, sim_v3(M(-2) + (sim_fx)(i % 4) * M(1), 0, M(-2) + (sim_fx)(i / 4) * M(1)));
        sim_char_state c = sim_char_spawn(i + 1, p, (sim_angle)(i * 5000u));
        cr_assert_eq(sim_scene_add_character(src, &c), 0);
    }
    uint64_t rng = 0xF0221123u;
    const char *env = getenv("KEEL_FUZZ_ROUNDS");
    int rounds = env && atoi(env) > 0 ? atoi(env) : 20000;
    size_t cap = HEADER + (size_t)(N + 2) * RECORD;
    uint8_t *good = malloc(cap), *buf = malloc(cap);
    uint64_t accepted = 0, refused = 0, steps = 0;
    static const uint32_t edges[] = {0,           1,           0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0x00010000u,
                                     0xFFFF0000u, 0x0FB00000u, 0xF0500000u, 0x00640000u, 0xFF9C0000u, 0x00008000u};
    for (int round = 0; round < rounds; round++) {
        // a fresh source state every 50 rounds: the scene moves on
        if (round % 50 == 0) {
            for (int t = 0; t < 7; t++) {
                for (uint32_t id = 1; id <= N; id++) {
                    sim_input in = {0};
                    in.tick = sim_scene_tick(src);
                    in.forward = (int8_t)(below(&rng, 255) - 127);
                    in.right = (int8_t)(below(&rng, 255) - 127);
                    in.yaw = (sim_angle)below(&rng, 65536);
                    in.buttons = below(&rng, 8) == 0 ? SIM_BUTTON_JUMP : 0;
                    sim_scene_set_input(src, id, &in);
                }
                sim_scene_step(src);
            }
        }
        size_t size = sim_scene_state_size(src);
        sim_scene_save(src, good);
        memcpy(buf, good, size);
        switch (below(&rng, 6)) {
        case 0: // random bytes after a valid header
            for (size_t i = HEADER; i < size; i++)
                buf[i] = (uint8_t)next(&rng);
            break;
        case 1: // one to three 32-bit fields set to an edge value
            for (uint32_t k = below(&rng, 3) + 1; k > 0; k--) {
                size_t at = HEADER + 4 * (size_t)below(&rng, (uint32_t)(size - HEADER) / 4);
                uint32_t v = edges[below(&rng, sizeof edges / sizeof edges[0])];
                for (int b = 0; b < 4; b++)
                    buf[at + (size_t)b] = (uint8_t)(v >> (8 * b));
            }
            break;
        case 2: // bit flips anywhere, header included
            for (uint32_t k = below(&rng, 4) + 1; k > 0; k--) {
                size_t at = below(&rng, (uint32_t)size);
                buf[at] ^= (uint8_t)(1u << below(&rng, 8));
            }
            break;
        case 3: // truncated
            size = below(&rng, (uint32_t)size);
            break;
        case 4: // a count that claims more records, with a random tail
            buf[12] = (uint8_t)(N + 1 + below(&rng, 2));
            for (size_t i = size; i < cap; i++)
                buf[i] = (uint8_t)next(&rng);
            size = HEADER + (size_t)buf[12] * RECORD;
            if (size > cap)
                size = cap;
            break;
        default: // a wholly random buffer
            for (size_t i = 0; i < size; i++)
                buf[i] = (uint8_t)next(&rng);
            break;
        }
        sim_scene_error err;
        uint64_t before = sim_scene_hash(dst);
        if (!sim_scene_restore(dst, buf, size, &err)) {
            refused++;
            cr_assert(err.reason && err.reason[0], "round %d: refused without a reason", round);
            cr_assert_eq(sim_scene_hash(dst), before, "round %d: a refused restore changed the scene", round);
            continue;
        }
        accepted++;
        for (int t = 0; t < 3; t++, steps++) {
            sim_scene_step(dst);
            uint32_t n;
            const sim_char_state *chars = sim_scene_characters(dst, &n);
            for (uint32_t i = 0; i < n; i++) {
                const char *why;
                cr_assert(sim_char_state_check(&chars[i], &why), "round %d: stepped into a bad state: %s", round, why);
            }
        }
    }
    cr_log_info("restore fuzz: %d rounds, %llu accepted (%llu scene steps), %llu refused\n", rounds,
                (unsigned long long)accepted, (unsigned long long)steps, (unsigned long long)refused);
    cr_expect_gt(accepted, (uint64_t)rounds / 20, "too few accepted buffers to exercise the steps");
    free(good);
    free(buf);
    sim_scene_destroy(src);
    sim_scene_destroy(dst);
    sim_world_destroy(world);
    sim_level_free(&level);
}
