// keel: a game command packed by its schema: each field in its bits, least
// significant bit first, fields in schema order. MIT licence, see LICENSE.
#include <string.h>

#include "game_internal.h"

uint32_t sim_game_command_bits(const sim_game *g) { return g->part[SIM_GAME_PART_COMMAND].bits; }

static size_t command_bytes(const sim_game *g) { return (g->part[SIM_GAME_PART_COMMAND].bits + 7u) / 8u; }

// A field's value as its wire code (0 .. 2^bits - 1) and back.
static uint32_t encode(const game_field *f, int64_t v)
{
    if (f->kind == SIM_GAME_ANGLE)
        return (uint32_t)(v >> (16 - f->bits));
    return (uint32_t)((uint64_t)(v - f->min) & 0xFFFFFFFFu);
}

static int64_t decode(const game_field *f, uint32_t code)
{
    if (f->kind == SIM_GAME_ANGLE)
        return (int64_t)code << (16 - f->bits);
    return f->min + (int64_t)code;
}

size_t sim_game_pack_command(const sim_game *g, const void *command, uint8_t *out, size_t capacity,
                             sim_game_error *error)
{
    const game_schema *s = &g->part[SIM_GAME_PART_COMMAND];
    size_t n = command_bytes(g);
    if (!sim_game_check(g, SIM_GAME_PART_COMMAND, command, error))
        return 0;
    if (capacity < n) {
        if (error)
            *error = (sim_game_error){"buffer smaller than the command's bytes", "", -1};
        return 0;
    }
    memset(out, 0, n);
    uint64_t at = 0;
    for (uint32_t i = 0; i < s->field_count; i++) {
        const game_field *f = &s->fields[i];
        for (uint32_t k = 0; k < f->count; k++) {
            uint32_t code = encode(f, game_field_get(f, command, k));
            for (uint32_t b = 0; b < f->bits; b++, at++)
                out[at >> 3] |= (uint8_t)(((code >> b) & 1u) << (at & 7));
        }
    }
    return n;
}

bool sim_game_unpack_command(const sim_game *g, const uint8_t *in, size_t size, void *command, sim_game_error *error)
{
    const game_schema *s = &g->part[SIM_GAME_PART_COMMAND];
    size_t n = command_bytes(g);
    uint8_t *dst = command;
    if (s->size)
        memset(dst, 0, s->size);
    if (error)
        *error = (sim_game_error){"", "", -1};
    if (size != n || (n && !in)) {
        if (error)
            error->reason = "command payload size differs from the schema's";
        return false;
    }
    uint64_t at = 0;
    for (uint32_t i = 0; i < s->field_count; i++) {
        const game_field *f = &s->fields[i];
        for (uint32_t k = 0; k < f->count; k++) {
            uint32_t code = 0;
            for (uint32_t b = 0; b < f->bits; b++, at++)
                code |= (uint32_t)((in[at >> 3] >> (at & 7)) & 1u) << b;
            int64_t v = decode(f, code);
            if (!game_field_valid(f, v)) {
                if (s->size)
                    memset(dst, 0, s->size);
                if (error)
                    *error =
                        (sim_game_error){"field out of its declared range", f->name, f->count > 1 ? (int64_t)k : -1};
                return false;
            }
            game_field_set(f, dst, k, v);
        }
    }
    for (; at < 8 * (uint64_t)n; at++)
        if ((in[at >> 3] >> (at & 7)) & 1u) {
            if (s->size)
                memset(dst, 0, s->size);
            if (error)
                error->reason = "nonzero bits after the command's last field";
            return false;
        }
    return true;
}
