// keel client: a bot's game commands -- each field of a game's command
// schema drawn in its declared range. MIT licence, see LICENSE.
#include <keel/cl_bot.h>
#include <keel/sim_game.h>

#include "cl_bot_internal.h"

#include <string.h>

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The range a field takes (sim_game.h: both 0 means the whole range of its bits).
static void field_range(const sim_game_field *f, int64_t *lo, int64_t *hi)
{
    *lo = f->min;
    *hi = f->max;
    if (f->kind == SIM_GAME_BOOL) {
        *lo = 0;
        *hi = 1;
    } else if (f->min == 0 && f->max == 0) {
        uint32_t b = f->bits < 32u ? f->bits : 32u;
        if (f->kind == SIM_GAME_INT || f->kind == SIM_GAME_FX) {
            *lo = -((int64_t)1 << (b - 1u));
            *hi = ((int64_t)1 << (b - 1u)) - 1;
        } else {
            *lo = 0;
            *hi = ((int64_t)1 << b) - 1;
        }
    }
}

static void put(uint8_t *at, uint32_t size, int64_t v)
{
    if (size == 1) {
        uint8_t x = (uint8_t)(v & 0xFF);
        memcpy(at, &x, 1);
    } else if (size == 2) {
        uint16_t x = (uint16_t)(v & 0xFFFF);
        memcpy(at, &x, 2);
    } else {
        uint32_t x = (uint32_t)(v & 0xFFFFFFFF);
        memcpy(at, &x, 4);
    }
}

bool cl_bot_game_command(const cl_bot *bot, const struct sim_game *game, uint32_t tick, void *command, size_t size)
{
    if (bot->mode == CL_BOT_ARENA)
        return cl_bot_arena_game_command(bot, game, tick, command, size);
    const sim_game_def *d = game ? sim_game_definition(game) : NULL;
    if (!d || d->command.size == 0 || size < d->command.size)
        return false;
    uint8_t *out = command;
    memset(out, 0, d->command.size);
    uint64_t h = mix(bot->game_seed ^ ((uint64_t)(tick / 16u) << 20));
    for (uint32_t i = 0; i < d->command.field_count; i++) {
        const sim_game_field *f = &d->command.fields[i];
        uint32_t count = f->count ? f->count : 1u;
        for (uint32_t k = 0; k < count; k++) {
            h = mix(h + i * 131u + k);
            uint8_t *at = out + f->offset + (size_t)k * f->stride;
            if (f->kind == SIM_GAME_ANGLE) {
                uint32_t b = f->bits >= 1u && f->bits <= 16u ? f->bits : 16u;
                put(at, 2, (int64_t)((h & 0xFFFFu) & ~((1u << (16u - b)) - 1u)));
                continue;
            }
            int64_t lo, hi;
            field_range(f, &lo, &hi);
            uint64_t span = (uint64_t)(hi - lo) + 1u;
            put(at,
                f->kind == SIM_GAME_BOOL ? 1u
                : f->kind == SIM_GAME_FX ? 4u
                                         : f->size,
                lo + (int64_t)(span ? h % span : h));
        }
    }
    return sim_game_check(game, SIM_GAME_PART_COMMAND, command, NULL);
}
