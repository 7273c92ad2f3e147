// keel: a scene's game: its state beside the characters, the rule passes,
// what a rule may read, the effects it may have and its queries.
// MIT licence, see LICENSE.
//
// A rule's context is a sim_game_tick: the scene and whose rule it is (-1:
// a serial rule, which sees everything; otherwise a per-character rule,
// which sees its own character only, because the others may be changing on
// other threads). Every effect is checked as state from outside is, and a
// refused one is counted, never applied.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>

#include "game_internal.h"
#include "scene_internal.h"

struct sim_game_tick {
    sim_scene *sc;
    int64_t own; // -1: a serial rule
};

static size_t part_size(const sim_scene *sc, sim_game_part p) { return sc->game->part[p].size; }

// ---- storage ------------------------------------------------------------------

sim_scene *sim_scene_create_game(const sim_world *world, const sim_move_settings *settings, uint32_t max_characters,
                                 const sim_game *game)
{
    sim_scene *sc = sim_scene_create(world, settings, max_characters);
    if (!sc || !game)
        return sc;
    size_t n = max_characters ? max_characters : 1;
    size_t cmd = game->part[SIM_GAME_PART_COMMAND].size, ch = game->part[SIM_GAME_PART_CHARACTER].size;
    sc->game = game;
    sc->game_cmd = calloc(n, cmd ? cmd : 1);
    sc->game_char = calloc(n, ch ? ch : 1);
    sc->game_out = calloc(n, 1);
    sc->game_char_faults = calloc(n, sizeof *sc->game_char_faults);
    sc->game_state = calloc(1, game->part[SIM_GAME_PART_STATE].size + 1);
    if (!sc->game_cmd || !sc->game_char || !sc->game_out || !sc->game_char_faults || !sc->game_state) {
        sim_scene_destroy(sc);
        return NULL;
    }
    memcpy(sc->game_state, game->state_initial, game->part[SIM_GAME_PART_STATE].size);
    return sc;
}

void scene_game_free(sim_scene *sc)
{
    free(sc->game_cmd);
    free(sc->game_char);
    free(sc->game_out);
    free(sc->game_char_faults);
    free(sc->game_state);
}

const sim_game *sim_scene_game(const sim_scene *sc) { return sc->game; }
uint64_t sim_scene_game_faults(const sim_scene *sc) { return sc->game_faults; }
const char *sim_scene_refused_field(const sim_scene *sc) { return sc->game_refused ? sc->game_refused : ""; }

static void shift(uint8_t *base, size_t size, uint32_t from, uint32_t to, uint32_t n)
{
    if (size && n)
        memmove(base + (size_t)to * size, base + (size_t)from * size, (size_t)n * size);
}

void scene_game_insert(sim_scene *sc, uint32_t at)
{
    size_t cmd = part_size(sc, SIM_GAME_PART_COMMAND), ch = part_size(sc, SIM_GAME_PART_CHARACTER);
    uint32_t tail = sc->count - at;
    shift(sc->game_cmd, cmd, at, at + 1, tail);
    shift(sc->game_char, ch, at, at + 1, tail);
    shift(sc->game_out, 1, at, at + 1, tail);
    if (cmd)
        memset(sc->game_cmd + (size_t)at * cmd, 0, cmd);
    if (ch)
        memcpy(sc->game_char + (size_t)at * ch, sc->game->char_initial, ch);
    sc->game_out[at] = 0;
}

void scene_game_erase(sim_scene *sc, uint32_t at)
{
    size_t cmd = part_size(sc, SIM_GAME_PART_COMMAND), ch = part_size(sc, SIM_GAME_PART_CHARACTER);
    uint32_t tail = sc->count - at - 1;
    shift(sc->game_cmd, cmd, at + 1, at, tail);
    shift(sc->game_char, ch, at + 1, at, tail);
    shift(sc->game_out, 1, at + 1, at, tail);
}

bool scene_char_check(const sim_scene *sc, const sim_char_state *c, const char **why)
{
    if (sc->game && c->move_type >= SIM_GAME_MOVE_FIRST &&
        c->move_type < SIM_GAME_MOVE_FIRST + (int32_t)sc->game->def.move_type_count) {
        sim_char_state copy = *c;
        copy.move_type = SIM_MOVE_AIR; // the rest is checked as for any move type
        return sim_char_state_check(&copy, why);
    }
    return sim_char_state_check(c, why);
}

uint64_t scene_game_hash(const sim_scene *sc, uint64_t h)
{
    const sim_game *g = sc->game;
    size_t ch = g->part[SIM_GAME_PART_CHARACTER].size;
    h = sim_hash_u64(h, g->digest);
    h = game_hash(&g->part[SIM_GAME_PART_STATE], sc->game_state, h);
    for (uint32_t i = 0; i < sc->count; i++) {
        h = sim_hash_u8(h, sc->game_out[i]);
        h = game_hash(&g->part[SIM_GAME_PART_CHARACTER], sc->game_char + i * ch, h);
    }
    return h;
}

// ---- from outside ----------------------------------------------------------------

static bool no_game(sim_game_error *e, const char *reason)
{
    if (e)
        *e = (sim_game_error){reason, "", -1};
    return false;
}

bool sim_scene_set_command(sim_scene *sc, uint32_t id, const sim_input *input, const void *command,
                           sim_game_error *error)
{
    if (error)
        *error = (sim_game_error){"", "", -1};
    if (!sc->game || !part_size(sc, SIM_GAME_PART_COMMAND))
        return no_game(error, "the scene's game has no command");
    int64_t i = scene_char_index(sc, id);
    if (i < 0)
        return no_game(error, "no character of that id");
    if (command && !sim_game_check(sc->game, SIM_GAME_PART_COMMAND, command, error))
        return false;
    size_t n = part_size(sc, SIM_GAME_PART_COMMAND);
    if (command)
        memcpy(sc->game_cmd + (size_t)i * n, command, n);
    else
        memset(sc->game_cmd + (size_t)i * n, 0, n);
    return sim_scene_set_input(sc, id, input);
}

const void *sim_scene_game_state(const sim_scene *sc) { return sc->game ? sc->game_state : NULL; }

const void *sim_scene_game_char(const sim_scene *sc, uint32_t id)
{
    int64_t i = sc->game ? scene_char_index(sc, id) : -1;
    return i < 0 ? NULL : sc->game_char + (size_t)i * part_size(sc, SIM_GAME_PART_CHARACTER);
}

bool sim_scene_game_out(const sim_scene *sc, uint32_t id)
{
    int64_t i = scene_char_index(sc, id);
    return i >= 0 && scene_out(sc, (uint32_t)i);
}

bool sim_scene_set_game_state(sim_scene *sc, const void *state, sim_game_error *error)
{
    if (!sc->game)
        return no_game(error, "the scene has no game");
    if (!sim_game_check(sc->game, SIM_GAME_PART_STATE, state, error))
        return false;
    memcpy(sc->game_state, state, part_size(sc, SIM_GAME_PART_STATE));
    return true;
}

bool sim_scene_set_game_char(sim_scene *sc, uint32_t id, const void *state, sim_game_error *error)
{
    if (!sc->game)
        return no_game(error, "the scene has no game");
    int64_t i = scene_char_index(sc, id);
    if (i < 0)
        return no_game(error, "no character of that id");
    if (!sim_game_check(sc->game, SIM_GAME_PART_CHARACTER, state, error))
        return false;
    size_t n = part_size(sc, SIM_GAME_PART_CHARACTER);
    memcpy(sc->game_char + (size_t)i * n, state, n);
    return true;
}

bool sim_scene_game_level(sim_scene *sc, const sim_game_level *level, sim_game_error *error)
{
    if (error)
        *error = (sim_game_error){"", "", -1};
    if (!sc->game || !sc->game->def.level)
        return true;
    size_t n = part_size(sc, SIM_GAME_PART_STATE);
    uint8_t *copy = malloc(n + 1);
    if (!copy)
        return no_game(error, "out of memory");
    memcpy(copy, sc->game_state, n);
    sim_game_level l = *level;
    if (!l.settings)
        l.settings = &sc->settings;
    sc->game->def.level(&l, copy, sc->game->def.user);
    bool ok = sim_game_check(sc->game, SIM_GAME_PART_STATE, copy, error);
    if (ok)
        memcpy(sc->game_state, copy, n);
    free(copy);
    return ok;
}

// ---- the rule passes ------------------------------------------------------------

static void each_items(void *task, uint32_t begin, uint32_t end)
{
    sim_scene *sc = task;
    uint32_t from, to;
    scene_item_range(sc, begin, end, &from, &to);
    for (uint32_t i = from; i < to; i++) {
        sim_game_tick t = {sc, (int64_t)i};
        sc->game_each(&t, i);
    }
}

void scene_game_fold_faults(sim_scene *sc)
{
    for (uint32_t i = 0; i < sc->count; i++) {
        sc->game_faults += sc->game_char_faults[i];
        sc->game_char_faults[i] = 0;
    }
}

void scene_game_rules(sim_scene *sc, bool after)
{
    const sim_game_rules *r = &sc->game->def.rules;
    sim_game_char_rule_fn each = after ? r->after_move_char : r->before_move_char;
    sim_game_rule_fn all = after ? r->after_move : r->before_move;
    if (!each && !all)
        return;
    if (each) {
        sc->game_each = each;
        scene_run_items(sc, each_items);
        sc->game_each = NULL;
        scene_game_fold_faults(sc);
    }
    if (all) {
        sim_game_tick t = {sc, -1};
        all(&t);
    }
    // A rule that left a field out of its range: clamped, counted.
    const sim_game *g = sc->game;
    size_t ch = g->part[SIM_GAME_PART_CHARACTER].size;
    sc->game_faults += game_clamp(&g->part[SIM_GAME_PART_STATE], sc->game_state);
    for (uint32_t i = 0; i < sc->count; i++)
        sc->game_faults += game_clamp(&g->part[SIM_GAME_PART_CHARACTER], sc->game_char + i * ch);
    // Effects may have moved characters: the next separation pass looks
    // (on a clean scene it changes nothing, so this costs time only).
    sc->sep_clean = false;
}

// ---- inside a rule: reading ------------------------------------------------------

static bool mine(const sim_game_tick *t, uint32_t index)
{
    return index < t->sc->count && (t->own < 0 || (int64_t)index == t->own);
}

uint32_t sim_game_tick_number(const sim_game_tick *t) { return t->sc->tick; }
const sim_scene *sim_game_scene(const sim_game_tick *t) { return t->sc; }
void *sim_game_user(const sim_game_tick *t) { return t->sc->game->def.user; }
const sim_move_settings *sim_game_settings(const sim_game_tick *t) { return &t->sc->settings; }
sim_fx sim_game_dt(const sim_game_tick *t) { return t->sc->dt; }
uint32_t sim_game_char_count(const sim_game_tick *t) { return t->sc->count; }

const sim_char_state *sim_game_character(const sim_game_tick *t, uint32_t index)
{
    return mine(t, index) ? &t->sc->chars[index] : NULL;
}

const sim_input *sim_game_input(const sim_game_tick *t, uint32_t index)
{
    return mine(t, index) && t->sc->has_input[index] ? &t->sc->inputs[index] : NULL;
}

const void *sim_game_command(const sim_game_tick *t, uint32_t index)
{
    size_t n = part_size(t->sc, SIM_GAME_PART_COMMAND);
    return n && mine(t, index) && t->sc->has_input[index] ? t->sc->game_cmd + index * n : NULL;
}

int64_t sim_game_find(const sim_game_tick *t, uint32_t id)
{
    int64_t i = scene_char_index(t->sc, id);
    return i >= 0 && mine(t, (uint32_t)i) ? i : -1;
}

void *sim_game_state(sim_game_tick *t) { return t->own < 0 ? t->sc->game_state : NULL; }
const void *sim_game_state_read(const sim_game_tick *t) { return t->sc->game_state; }

void *sim_game_char(sim_game_tick *t, uint32_t index)
{
    return mine(t, index) ? t->sc->game_char + index * part_size(t->sc, SIM_GAME_PART_CHARACTER) : NULL;
}

// ---- inside a rule: effects --------------------------------------------------------

static bool fault(sim_game_tick *t)
{
    if (t->own >= 0)
        t->sc->game_char_faults[t->own]++;
    else
        t->sc->game_faults++;
    return false;
}

static bool within(sim_vec3 v, sim_fx lim)
{
    return v.x >= -lim && v.x <= lim && v.y >= -lim && v.y <= lim && v.z >= -lim && v.z <= lim;
}

bool sim_game_teleport(sim_game_tick *t, uint32_t index, sim_vec3 position, sim_vec3 velocity)
{
    if (!mine(t, index) || !within(position, SIM_MOVE_POSITION_LIMIT) || !within(velocity, SIM_MOVE_MAX_SPEED))
        return fault(t);
    sim_char_state *c = &t->sc->chars[index];
    c->position = position;
    c->velocity = velocity;
    c->ground = SIM_GROUND_NONE;
    c->ground_normal = sim_v3_zero();
    c->ground_velocity = sim_v3_zero();
    c->ground_object = 0;
    c->stuck_ticks = 0;
    c->flags &= ~(uint32_t)(SIM_CHAR_GROUNDED | SIM_CHAR_ON_STEEP | SIM_CHAR_STUCK);
    return true;
}

bool sim_game_set_velocity(sim_game_tick *t, uint32_t index, sim_vec3 velocity)
{
    if (!mine(t, index) || !within(velocity, SIM_MOVE_MAX_SPEED))
        return fault(t);
    t->sc->chars[index].velocity = velocity;
    return true;
}

bool sim_game_set_move_type(sim_game_tick *t, uint32_t index, int32_t move_type)
{
    if (!mine(t, index))
        return fault(t);
    sim_char_state c = t->sc->chars[index];
    c.move_type = move_type;
    if (!scene_char_check(t->sc, &c, NULL))
        return fault(t);
    t->sc->chars[index].move_type = move_type;
    return true;
}

bool sim_game_set_solid(sim_game_tick *t, uint32_t index, bool solid)
{
    if (!mine(t, index))
        return fault(t);
    t->sc->game_out[index] = solid ? 0 : 1;
    return true;
}

// ---- inside a rule: queries ---------------------------------------------------------

bool sim_game_raycast(const sim_game_tick *t, const sim_ray_input *in, uint32_t ignore_id, sim_ray_result *out,
                      uint32_t *hit_character_id)
{
    if (hit_character_id)
        *hit_character_id = 0;
    if (t->own >= 0) {
        *out = (sim_ray_result){0};
        return false;
    }
    return sim_scene_raycast(t->sc, in, ignore_id, out, hit_character_id);
}

bool sim_game_shape_cast(const sim_game_tick *t, sim_shape shape, sim_vec3 center, sim_vec3 displacement,
                         uint32_t ignore_id, sim_sweep_result *out, uint32_t *hit_character_id)
{
    if (hit_character_id)
        *hit_character_id = 0;
    *out = (sim_sweep_result){0};
    if (t->own >= 0)
        return false;
    sim_scene *sc = t->sc;
    // The snapshot from the characters as they are now (the step has no
    // further use for the last one at a rule's point of the tick).
    scene_build_bodies(sc, false);
    int64_t self = scene_char_index(sc, ignore_id);
    scene_view v = {sc, self, 0, true, NULL, NULL};
    sim_sweep_input in = {shape, center, displacement, 0};
    if (!scene_view_sweep(&v, &in, out))
        return false;
    uint32_t f = out->feature.triangle;
    if ((f & SIM_FEATURE_OBJECT_BIT) && hit_character_id && scene_char_index(sc, f & ~SIM_FEATURE_OBJECT_BIT) >= 0)
        *hit_character_id = f & ~SIM_FEATURE_OBJECT_BIT;
    return true;
}
