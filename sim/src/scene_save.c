// keel: saving a scene's state to bytes and restoring it, with every record
// checked before anything changes. MIT licence, see LICENSE.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "game_internal.h"
#include "world_near.h"

// ---- save and restore ---------------------------------------------------------------
// Little-endian fields written one by one: the bytes are the same on every
// machine and never include struct padding.

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static uint8_t *put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *put_vec3(uint8_t *p, sim_vec3 v)
{
    p = put_u32(p, (uint32_t)v.x);
    p = put_u32(p, (uint32_t)v.y);
    return put_u32(p, (uint32_t)v.z);
}

static uint32_t get_u32(const uint8_t **p)
{
    const uint8_t *b = *p;
    *p += 4;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

static uint16_t get_u16(const uint8_t **p)
{
    const uint8_t *b = *p;
    *p += 2;
    return (uint16_t)(b[0] | (b[1] << 8));
}

// Two's complement read back without an out-of-range conversion.
static sim_fx get_fx(const uint8_t **p)
{
    uint32_t u = get_u32(p);
    return u <= 0x7FFFFFFFu ? (sim_fx)u : (sim_fx)(-(int64_t)(0xFFFFFFFFu - u) - 1);
}

static sim_vec3 get_vec3(const uint8_t **p)
{
    sim_fx x = get_fx(p);
    sim_fx y = get_fx(p);
    sim_fx z = get_fx(p);
    return sim_v3(x, y, z);
}

static bool refuse(sim_scene_error *e, const char *reason, int64_t record, size_t offset)
{
    if (e)
        *e = (sim_scene_error){reason, record, offset};
    return false;
}

// ---- the game's block -------------------------------------------------------------
// A scene with a game saves as version 2: the version 1 layout, then the
// game's digest (two u32, low half first), every element of the game-wide
// state, and per character a u32 "out of collisions" (0 or 1) and every
// element of its game state; each element a u32 (two's complement for the
// signed kinds), in schema order.

static size_t game_bytes(const sim_scene *sc, uint32_t count)
{
    if (!sc->game)
        return 0;
    const sim_game *g = sc->game;
    return 8u + 4u * (size_t)g->part[SIM_GAME_PART_STATE].elements +
           (size_t)count * 4u * (1u + g->part[SIM_GAME_PART_CHARACTER].elements);
}

static uint8_t *put_fields(uint8_t *p, const game_schema *s, const uint8_t *data)
{
    for (uint32_t i = 0; i < s->field_count; i++)
        for (uint32_t k = 0; k < s->fields[i].count; k++)
            p = put_u32(p, (uint32_t)(game_field_get(&s->fields[i], data, k) & 0xFFFFFFFF));
    return p;
}

static uint8_t *save_game(const sim_scene *sc, uint8_t *p)
{
    const sim_game *g = sc->game;
    size_t ch = g->part[SIM_GAME_PART_CHARACTER].size;
    p = put_u32(p, (uint32_t)(g->digest & 0xFFFFFFFFu));
    p = put_u32(p, (uint32_t)(g->digest >> 32));
    p = put_fields(p, &g->part[SIM_GAME_PART_STATE], sc->game_state);
    for (uint32_t i = 0; i < sc->count; i++) {
        p = put_u32(p, sc->game_out[i]);
        p = put_fields(p, &g->part[SIM_GAME_PART_CHARACTER], sc->game_char + i * ch);
    }
    return p;
}

// Reads a schema's elements at *p: checked (dst NULL) or written into dst.
static bool get_fields(sim_scene *sc, const uint8_t **p, const game_schema *s, uint8_t *dst, const uint8_t *start,
                       int64_t record, sim_scene_error *e)
{
    for (uint32_t i = 0; i < s->field_count; i++) {
        const game_field *f = &s->fields[i];
        for (uint32_t k = 0; k < f->count; k++) {
            size_t at = (size_t)(*p - start);
            uint32_t u = get_u32(p);
            int64_t v = (f->kind == SIM_GAME_INT || f->kind == SIM_GAME_FX) ? (int64_t)(int32_t)u : (int64_t)u;
            if (!game_field_valid(f, v)) {
                sc->game_refused = f->name;
                return refuse(e, "game field out of its declared range", record, at);
            }
            if (dst)
                game_field_set(f, dst, k, v);
        }
    }
    return true;
}

// The game's block at p (count characters): checked (apply false) or applied.
static bool restore_game(sim_scene *sc, const uint8_t *p, const uint8_t *start, uint32_t count, bool apply,
                         sim_scene_error *e)
{
    const sim_game *g = sc->game;
    size_t ch = g->part[SIM_GAME_PART_CHARACTER].size;
    size_t at = (size_t)(p - start);
    uint64_t lo = get_u32(&p), hi = get_u32(&p);
    if ((lo | hi << 32) != g->digest)
        return refuse(e, "saved by another game (digest)", -1, at);
    if (!get_fields(sc, &p, &g->part[SIM_GAME_PART_STATE], apply ? sc->game_state : NULL, start, -1, e))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        at = (size_t)(p - start);
        uint32_t out = get_u32(&p);
        if (out > 1)
            return refuse(e, "game out-of-collisions mark not 0 or 1", i, at);
        if (apply)
            sc->game_out[i] = (uint8_t)out;
        if (!get_fields(sc, &p, &g->part[SIM_GAME_PART_CHARACTER], apply ? sc->game_char + i * ch : NULL, start, i, e))
            return false;
    }
    return true;
}

// After a restore of count characters: no commands, no faults pending.
static void game_restored(sim_scene *sc, uint32_t count)
{
    size_t cmd = sc->game->part[SIM_GAME_PART_COMMAND].size;
    if (cmd)
        memset(sc->game_cmd, 0, (size_t)(count ? count : 1) * cmd);
    memset(sc->game_char_faults, 0, (count ? count : 1) * sizeof *sc->game_char_faults);
}

// ---- the scene ---------------------------------------------------------------------

size_t sim_scene_state_size(const sim_scene *sc)
{
    return HEADER_BYTES + (size_t)sc->count * CHAR_BYTES + game_bytes(sc, sc->count);
}

void sim_scene_save(const sim_scene *sc, void *buffer)
{
    uint8_t *p = buffer;
    p = put_u32(p, SCENE_MAGIC);
    p = put_u32(p, sc->game ? SCENE_VERSION_GAME : SCENE_VERSION);
    p = put_u32(p, sc->tick);
    p = put_u32(p, sc->count);
    for (uint32_t i = 0; i < sc->count; i++) {
        const sim_char_state *c = &sc->chars[i];
        p = put_u32(p, c->id);
        p = put_u32(p, c->flags);
        p = put_u32(p, (uint32_t)c->move_type);
        p = put_u32(p, (uint32_t)c->ground);
        p = put_vec3(p, c->position);
        p = put_vec3(p, c->velocity);
        p = put_vec3(p, c->ground_normal);
#ifdef KEEL_INJECT_SAVE_FAULT
        // A deliberate fault, compiled only into a test program
        // (keel-sim-savefault): a save that leaves out the platform velocity,
        // as a serialiser that takes it for derived might. keel-sim
        // --sync-test must name it.
        p = put_vec3(p, sim_v3_zero());
#else
        p = put_vec3(p, c->ground_velocity);
#endif
        p = put_u32(p, c->ground_object);
        p = put_u32(p, c->stuck_ticks);
        p = put_u16(p, c->yaw);
        p = put_u16(p, c->pitch);
    }
    if (sc->game)
        save_game(sc, p);
}

static sim_char_state read_char(const uint8_t **p)
{
    sim_char_state c = {0};
    c.id = get_u32(p);
    c.flags = get_u32(p);
    c.move_type = (int32_t)get_fx(p);
    c.ground = (int32_t)get_fx(p);
    c.position = get_vec3(p);
    c.velocity = get_vec3(p);
    c.ground_normal = get_vec3(p);
    c.ground_velocity = get_vec3(p);
    c.ground_object = get_u32(p);
    c.stuck_ticks = get_u32(p);
    c.yaw = get_u16(p);
    c.pitch = get_u16(p);
    return c;
}

// One character record of a restore: its id in order and its state valid.
static bool check_record(const sim_scene *sc, const sim_char_state *c, uint32_t *last, uint32_t i, size_t at,
                         sim_scene_error *error)
{
    const char *why = NULL;
    if (c->id == 0 || (c->id & SIM_FEATURE_OBJECT_BIT))
        return refuse(error, "character id 0 or not below 2^31", i, at);
    if (c->id <= *last)
        return refuse(error, "character ids not increasing", i, at);
    if (scene_find_platform((sim_scene *)sc, c->id))
        return refuse(error, "character id is a platform's", i, at);
    if (!scene_char_check(sc, c, &why))
        return refuse(error, why, i, at);
    *last = c->id;
    return true;
}

bool sim_scene_restore_states(sim_scene *sc, uint32_t tick, const sim_char_state *states, uint32_t count,
                              sim_scene_error *error)
{
    if (error)
        *error = (sim_scene_error){"", -1, 0};
    if (count > sc->max_chars)
        return refuse(error, "more characters than the scene holds", -1, 0);
    uint32_t last = 0;
    for (uint32_t i = 0; i < count; i++)
        if (!check_record(sc, &states[i], &last, i, 0, error))
            return false;
    for (uint32_t i = 0; i < count; i++) {
        sc->chars[i] = states[i];
        sc->has_input[i] = 0;
    }
    if (sc->game) {
        // Characters from states alone: each gets the initial game state.
        size_t ch = sc->game->part[SIM_GAME_PART_CHARACTER].size;
        for (uint32_t i = 0; i < count; i++) {
            if (ch)
                memcpy(sc->game_char + i * ch, sc->game->char_initial, ch);
            sc->game_out[i] = 0;
        }
        game_restored(sc, count);
    }
    sc->count = count;
    sc->tick = tick;
    sc->sep_clean = false;
    sc->reloc_valid = false; // indices shift: the last step's relocations are gone
    return true;
}

bool sim_scene_restore(sim_scene *sc, const void *buffer, size_t size, sim_scene_error *error)
{
    if (error)
        *error = (sim_scene_error){"", -1, 0};
    sc->game_refused = "";
    if (!buffer || size < HEADER_BYTES)
        return refuse(error, "shorter than the 16-byte header", -1, 0);
    const uint8_t *p = buffer;
    if (get_u32(&p) != SCENE_MAGIC)
        return refuse(error, "not a saved scene (magic)", -1, 0);
    // Without a game, exactly the checks of before games: only version 1.
    uint32_t version = get_u32(&p);
    if (sc->game && version == SCENE_VERSION)
        return refuse(error, "saved without a game, and this scene has one", -1, 4);
    if (version != (sc->game ? SCENE_VERSION_GAME : SCENE_VERSION))
        return refuse(error, "unknown version", -1, 4);
    uint32_t tick = get_u32(&p);
    uint32_t count = get_u32(&p);
    if (count > sc->max_chars)
        return refuse(error, "more characters than the scene holds", -1, 12);
    if (size != HEADER_BYTES + (size_t)count * CHAR_BYTES + game_bytes(sc, count))
        return refuse(error, "size does not match the character count", -1, 12);
    // Check every record before changing anything: a bad buffer leaves the
    // scene as it was.
    const uint8_t *q = p;
    uint32_t last = 0;
    for (uint32_t i = 0; i < count; i++) {
        sim_char_state c = read_char(&q);
        if (!check_record(sc, &c, &last, i, HEADER_BYTES + (size_t)i * CHAR_BYTES, error))
            return false;
    }
    if (sc->game && !restore_game(sc, q, buffer, count, false, error))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        sc->chars[i] = read_char(&p);
        sc->has_input[i] = 0;
    }
    if (sc->game) {
        restore_game(sc, p, buffer, count, true, NULL);
        game_restored(sc, count);
    }
    sc->count = count;
    sc->tick = tick;
    sc->sep_clean = false;
    sc->reloc_valid = false; // indices shift: the last step's relocations are gone
    return true;
}
