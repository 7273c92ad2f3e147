// keel: a checked game definition (game.c) and what the scene reads of it.
// MIT licence, see LICENSE.
#ifndef KEEL_GAME_INTERNAL_H
#define KEEL_GAME_INTERNAL_H

#include <keel/sim_game.h>

// One field as checked: defaults filled in, sizes known.
typedef struct game_field {
    const char *name;
    sim_game_kind kind;
    uint32_t offset, esize, bits, count, stride;
    int64_t min, max;
} game_field;

typedef struct game_schema {
    uint32_t size;
    uint32_t field_count;
    uint32_t elements; // sum of the fields' counts
    uint32_t bits;     // sum of count * bits
    game_field *fields;
} game_schema;

struct sim_game {
    sim_game_def def;
    game_schema part[3]; // by sim_game_part
    uint8_t *char_initial;
    uint8_t *state_initial;
    uint64_t digest;
    bool per_char_rules; // before_move_char or after_move_char
    int32_t view_lag;    // the command field def.view_lag_field names (-1: the game does not judge)
};

/// Element k of field f in struct `base`, as a value (every kind fits in
/// 32 bits); and written back (the value must be in the field's range).
int64_t game_field_get(const game_field *f, const uint8_t *base, uint32_t k);
void game_field_set(const game_field *f, uint8_t *base, uint32_t k, int64_t v);

/// Whether v lies in field f's range (an angle: also a multiple of its quantum).
bool game_field_valid(const game_field *f, int64_t v);

/// Clamps every field of `data` into its range; returns how many were out.
uint32_t game_clamp(const game_schema *s, uint8_t *data);

/// Hashes every field's value of `data` in schema order.
uint64_t game_hash(const game_schema *s, const uint8_t *data, uint64_t h);

#endif
