// keel recordings: re-simulating a game's recording (its commands and
// state) and naming the game fields that differ. MIT licence, see LICENSE.
#include <stdio.h>
#include <string.h>

#include "rec_resim.h"

bool rec_resim_restore_game(sim_scene *scene, const rec_file *f, uint32_t tick, rec_error *err)
{
    const sim_game *game = sim_scene_game(scene);
    if (!game)
        return true;
    const uint8_t *data = NULL;
    size_t size = 0;
    if (!rec_file_game_state(f, tick, &data, &size)) {
        rec_fail(err, 0, REC_T_GKEY, "the recording holds no game state at tick %u", (unsigned)tick);
        return false;
    }
    sim_scene_error se;
    if (!sim_scene_restore(scene, data, size, &se)) {
        const char *field = sim_scene_refused_field(scene);
        rec_fail(err, 0, REC_T_GKEY, "the game state at tick %u is refused: %s%s%s (record %lld, offset %zu)",
                 (unsigned)tick, se.reason, field[0] ? ", field " : "", field, (long long)se.record, se.offset);
        return false;
    }
    return true;
}

bool rec_resim_apply_game(sim_scene *scene, const sim_game *game, const rec_tick *t, rec_error *err)
{
    // A command struct of the game's (at most SIM_GAME_COMMAND_MAX_BYTES),
    // aligned for any field.
    union {
        uint8_t bytes[SIM_GAME_COMMAND_MAX_BYTES];
        uint64_t align;
    } cmd;
    size_t bytes = (sim_game_command_bits(game) + 7u) / 8u;
    for (uint32_t i = 0; i < t->command_count; i++) {
        sim_game_error ge = {"", "", -1};
        uint32_t id = t->commands[i].id;
        if (!sim_game_unpack_command(game, t->game_commands + (size_t)i * bytes, bytes, cmd.bytes, &ge)) {
            rec_fail(err, 0, REC_T_GCMD, "tick %u: the game command of character %u is refused: %s%s%s",
                     (unsigned)t->tick, (unsigned)id, ge.reason, ge.field[0] ? ", field " : "", ge.field);
            return false;
        }
        if (!sim_scene_set_command(scene, id, &t->commands[i].input, cmd.bytes, &ge)) {
            rec_fail(err, 0, "", "tick %u: a command for character %u, which is not in the scene", (unsigned)t->tick,
                     (unsigned)id);
            return false;
        }
    }
    return true;
}

int64_t rec_game_field_value(const sim_game_field *fd, const void *data, uint32_t k)
{
    const uint8_t *base = data;
    const uint8_t *p = base + fd->offset + (size_t)k * ((fd->count > 1) ? fd->stride : 0u);
    switch (fd->kind) {
    case SIM_GAME_BOOL: return p[0];
    case SIM_GAME_ANGLE: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case SIM_GAME_FX: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: break;
    }
    bool sign = fd->kind == SIM_GAME_INT;
    if (fd->size == 1) {
        uint8_t u;
        memcpy(&u, p, 1);
        return sign ? (int64_t)(int8_t)u : (int64_t)u;
    }
    if (fd->size == 2) {
        uint16_t u;
        memcpy(&u, p, 2);
        return sign ? (int64_t)(int16_t)u : (int64_t)u;
    }
    uint32_t u;
    memcpy(&u, p, 4);
    return sign ? (int64_t)(int32_t)u : (int64_t)u;
}

static void add_game_value(rec_diff_report *r, uint32_t character, uint32_t field, const sim_game_field *fd, uint32_t k,
                           int64_t a, int64_t b, const char *prefix)
{
    uint32_t before = r->value_count;
    rec_report_add_value(r, character, REC_VALUE_GAME, field, a, b);
    if (r->value_count == before)
        return;
    rec_diff_value *v = &r->values[before];
    if (fd && fd->count > 1)
        snprintf(v->name, sizeof v->name, "%s%s[%u]", prefix, fd->name, (unsigned)k);
    else
        snprintf(v->name, sizeof v->name, "%s%s", prefix, fd ? fd->name : "out");
    v->type = fd && fd->kind == SIM_GAME_FX ? REC_FIELD_FX : REC_FIELD_I32;
}

uint32_t rec_report_add_game_struct(rec_diff_report *r, uint32_t character, const sim_game_schema *s, const void *a,
                                    const void *b, const char *prefix)
{
    uint32_t added = 0;
    if (!a || !b)
        return 0;
    for (uint32_t i = 0; i < s->field_count; i++) {
        const sim_game_field *fd = &s->fields[i];
        uint32_t count = fd->count ? fd->count : 1u;
        for (uint32_t k = 0; k < count; k++) {
            int64_t va = rec_game_field_value(fd, a, k), vb = rec_game_field_value(fd, b, k);
            if (va != vb) {
                add_game_value(r, character, i, fd, k, va, vb, prefix);
                added++;
            }
        }
    }
    return added;
}

uint32_t rec_report_add_game(rec_diff_report *r, const sim_scene *a, const sim_scene *b)
{
    const sim_game *game = sim_scene_game(a);
    if (!game || !sim_scene_game(b))
        return 0;
    const sim_game_def *d = sim_game_definition(game);
    // Characters first, in id order (as the report's values are), then the
    // game-wide state under character 0 ahead of them all.
    uint32_t added =
        rec_report_add_game_struct(r, 0, &d->state, sim_scene_game_state(a), sim_scene_game_state(b), "game.");
    uint32_t na, nb;
    const sim_char_state *ca = sim_scene_characters(a, &na);
    const sim_char_state *cb = sim_scene_characters(b, &nb);
    uint32_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (ca[i].id < cb[j].id) {
            i++;
        } else if (cb[j].id < ca[i].id) {
            j++;
        } else {
            uint32_t id = ca[i].id;
            added += rec_report_add_game_struct(r, id, &d->character, sim_scene_game_char(a, id),
                                                sim_scene_game_char(b, id), "game.");
            bool oa = sim_scene_game_out(a, id), ob = sim_scene_game_out(b, id);
            if (oa != ob) {
                add_game_value(r, id, 0, NULL, 0, oa, ob, "game.");
                added++;
            }
            i++, j++;
        }
    }
    return added;
}

uint32_t rec_verify_game_values(rec_diff_report *r, const rec_file *f, const sim_world *world, uint32_t tick,
                                const sim_scene *now)
{
    const uint8_t *data;
    size_t size;
    if (!sim_scene_game(now) || !rec_file_game_state(f, tick, &data, &size))
        return 0;
    rec_error err = {0};
    sim_scene *recorded = rec_resim_scene_create(rec_file_header(f), world, &err);
    uint32_t added = 0;
    if (recorded && rec_resim_restore_game(recorded, f, tick, &err))
        added = rec_report_add_game(r, recorded, now);
    if (recorded)
        sim_scene_destroy(recorded);
    return added;
}

void rec_report_game_characters(rec_diff_report *r, uint32_t from)
{
    uint32_t listed = 0;
    for (uint32_t i = from; i < r->value_count && listed < REC_DIFF_MAX_CHARACTERS; i++) {
        uint32_t id = r->values[i].character;
        bool seen = id == 0;
        for (uint32_t k = 0; k < listed && !seen; k++)
            seen = r->characters[k] == id;
        if (!seen)
            r->characters[listed++] = id;
    }
    r->character_count = listed;
    r->div.characters_differing = listed;
    r->div.character = listed ? r->characters[0] : 0;
}
