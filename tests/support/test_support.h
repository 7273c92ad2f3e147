// keel tests: shared helpers (levels folder lookup, reference math). MIT licence.
#ifndef KEEL_TEST_SUPPORT_H
#define KEEL_TEST_SUPPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/sim_math.h>

/// Folder holding the shared real maps (../shared/levels beside the checkout,
/// or $KEEL_LEVELS_DIR). Returns NULL when absent, after printing a skip note.
const char *keel_test_levels_dir(void);

/// Full path of a shared map ("sauerbraten_zdm2.obj"), or NULL (with a skip
/// note printed) when the folder or the file is absent. Static buffer.
const char *keel_test_level_path(const char *file);

/// Deterministic test random numbers (splitmix64).
typedef struct keel_rng {
    uint64_t state;
} keel_rng;
uint64_t keel_rng_next(keel_rng *r);
/// Uniform integer in [lo, hi].
int64_t keel_rng_range(keel_rng *r, int64_t lo, int64_t hi);
/// Uniform sim_fx in [lo, hi].
sim_fx keel_rng_fx(keel_rng *r, sim_fx lo, sim_fx hi);

struct sim_world;
struct sim_move_settings;
struct sim_char_state;

/// The surface-crossing check of the crowd and soak tests: how many of the
/// `count` characters moved their centre through a triangle of the static
/// world between `before` and `after` (the same characters in the same order,
/// as sim_scene_characters gives them when none was added or removed). A
/// free shape's centre stays at least its half width from geometry, so a
/// centre path that crosses a surface went through it. Noclip flyers (before
/// or after) are left out. When `first` is given, it receives the index of
/// the first crossing (unchanged when there is none).
uint32_t keel_test_crossings(const struct sim_world *world, const struct sim_move_settings *s,
                             const struct sim_char_state *before, const struct sim_char_state *after,
                             uint32_t count, int64_t *first);

static inline double keel_fx_to_d(sim_fx v) { return (double)v / 65536.0; }

#endif
