// keel recordings: rebuilding and driving a scene from a recording, and
// collecting the differences of two states. MIT licence, see LICENSE.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rec_resim.h"

int rec_fail(rec_error *err, uint64_t offset, const char *chunk, const char *fmt, ...)
{
    if (!err)
        return REC_EXIT_BAD_FILE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->offset = offset;
    snprintf(err->chunk, sizeof err->chunk, "%s", chunk ? chunk : "");
    return REC_EXIT_BAD_FILE;
}

sim_scene *rec_resim_scene_create(const rec_header *h, const sim_world *world, rec_error *err)
{
    const char *why = NULL;
    if (!sim_move_settings_check(&h->settings, &why)) {
        rec_fail(err, 0, "HEAD", "the recorded movement settings are refused: %s", why ? why : "?");
        return NULL;
    }
    if (h->max_characters == 0 || h->max_characters > REC_MAX_CHARACTERS) {
        rec_fail(err, 0, "HEAD", "max_characters %u is outside 1..%u", (unsigned)h->max_characters,
                 (unsigned)REC_MAX_CHARACTERS);
        return NULL;
    }
    if (h->game_name[0] && !h->game) {
        rec_fail(err, 0, REC_T_GAME,
                 "the recording was made with game \"%s\" version %u: re-simulating it needs the game (--game)",
                 h->game_name, (unsigned)h->game_version);
        return NULL;
    }
    sim_scene *sc = sim_scene_create_game(world, &h->settings, h->max_characters, h->game_name[0] ? h->game : NULL);
    if (!sc) {
        rec_fail(err, 0, "", "out of memory creating a scene for %u characters", (unsigned)h->max_characters);
        return NULL;
    }
    // Header order is the order the recorder's scene held them in (id order
    // there); the scene sorts by id anyway.
    for (uint32_t i = 0; i < h->platform_count && i < REC_MAX_PLATFORMS; i++)
        if (sim_scene_add_platform(sc, &h->platforms[i]) != 0) {
            rec_fail(err, 0, "HEAD", "the scene refuses recorded platform %u (id %u)", (unsigned)i,
                     (unsigned)h->platforms[i].id);
            sim_scene_destroy(sc);
            return NULL;
        }
    for (uint32_t i = 0; i < h->water_count && i < REC_MAX_WATERS; i++)
        if (sim_scene_add_water(sc, h->waters[i]) != 0) {
            rec_fail(err, 0, "HEAD", "the scene refuses recorded water box %u", (unsigned)i);
            sim_scene_destroy(sc);
            return NULL;
        }
    return sc;
}

bool rec_resim_restore(sim_scene *scene, uint32_t tick, const sim_char_state *states, uint32_t count, const char *what,
                       rec_error *err)
{
    sim_scene_error se;
    if (sim_scene_restore_states(scene, tick, states, count, &se))
        return true;
    if (se.record >= 0)
        rec_fail(err, 0, "", "%s (tick %u): character record %lld (id %u) is refused: %s", what, (unsigned)tick,
                 (long long)se.record, (unsigned)states[se.record].id, se.reason);
    else
        rec_fail(err, 0, "", "%s (tick %u) is refused: %s", what, (unsigned)tick, se.reason);
    return false;
}

bool rec_resim_apply(sim_scene *scene, const rec_tick *t, rec_error *err)
{
    if (sim_scene_tick(scene) != t->tick) {
        rec_fail(err, 0, "", "tick %u follows tick %u: ticks are missing", (unsigned)t->tick,
                 (unsigned)sim_scene_tick(scene) - 1u);
        return false;
    }
    for (uint32_t i = 0; i < t->leave_count; i++)
        if (!sim_scene_remove_character(scene, t->leaves[i])) {
            rec_fail(err, 0, "", "tick %u: character %u leaves but is not in the scene", (unsigned)t->tick,
                     (unsigned)t->leaves[i]);
            return false;
        }
    for (uint32_t i = 0; i < t->join_count; i++)
        if (sim_scene_add_character(scene, &t->joins[i]) != 0) {
            const char *why = NULL;
            bool valid = sim_char_state_check(&t->joins[i], &why);
            rec_fail(err, 0, "", "tick %u: the scene refuses joining character %u: %s", (unsigned)t->tick,
                     (unsigned)t->joins[i].id, valid ? "id taken or the scene is full" : why);
            return false;
        }
    const sim_game *game = sim_scene_game(scene);
    if (t->game_commands && game)
        return rec_resim_apply_game(scene, game, t, err);
    for (uint32_t i = 0; i < t->command_count; i++)
        if (!sim_scene_set_input(scene, t->commands[i].id, &t->commands[i].input)) {
            rec_fail(err, 0, "", "tick %u: a command for character %u, which is not in the scene", (unsigned)t->tick,
                     (unsigned)t->commands[i].id);
            return false;
        }
    return true;
}

uint32_t rec_resim_compare(const rec_file *f, const sim_scene *scene, const rec_tick *t, uint64_t *check,
                           bool *world_differs, uint32_t *ids, uint32_t *id_count)
{
    *world_differs = t->has_world_hash && sim_scene_hash(scene) != t->world_hash;
    uint32_t n;
    const sim_char_state *c = sim_scene_characters(scene, &n);
    uint64_t k = check ? (t->block_start ? REC_CHECK_SEED : *check) : 0;
    k = rec_check_mix(k, n);
    uint32_t differ = 0, listed = 0;
    uint32_t i = 0, j = 0;
    // Both lists are in id order: a merge finds the characters on one side
    // only as well as those whose hashes differ.
    while (i < n || j < t->char_count) {
        uint32_t id;
        bool same;
        if (j >= t->char_count || (i < n && c[i].id < t->char_ids[j])) {
            k = rec_check_mix(k, rec_file_char_hash64(f, &c[i]));
            id = c[i++].id, same = false;
        } else if (i >= n || t->char_ids[j] < c[i].id) {
            id = t->char_ids[j++], same = false;
        } else {
            id = c[i].id;
            uint64_t h = rec_file_char_hash64(f, &c[i]);
            k = rec_check_mix(k, h);
            same = (uint16_t)h == t->char_hashes[j];
            i++, j++;
        }
        if (same)
            continue;
        if (ids && listed < REC_DIFF_MAX_CHARACTERS)
            ids[listed++] = id;
        differ++;
    }
    if (check)
        *check = k;
    if (id_count)
        *id_count = listed;
    return differ;
}

void rec_report_add_value(rec_diff_report *r, uint32_t character, rec_value_kind kind, uint32_t field, int64_t a,
                          int64_t b)
{
    if (r->value_count >= REC_DIFF_MAX_VALUES) {
        r->values_truncated = true;
        return;
    }
    r->values[r->value_count++] = (rec_diff_value){character, kind, field, a, b, "", REC_FIELD_I32};
}

uint32_t rec_report_add_states(rec_diff_report *r, const sim_char_state *a, uint32_t a_count, const sim_char_state *b,
                               uint32_t b_count)
{
    uint32_t nfields;
    rec_state_fields(&nfields);
    uint32_t differ = 0, i = 0, j = 0;
    while (i < a_count || j < b_count) {
        if (j >= b_count || (i < a_count && a[i].id < b[j].id)) {
            rec_report_add_value(r, a[i++].id, REC_VALUE_PRESENCE, 0, 1, 0);
            differ++;
            continue;
        }
        if (i >= a_count || b[j].id < a[i].id) {
            rec_report_add_value(r, b[j++].id, REC_VALUE_PRESENCE, 0, 0, 1);
            differ++;
            continue;
        }
        bool any = false;
        for (uint32_t k = 0; k < nfields; k++) {
            int64_t va = rec_state_field_value(&a[i], k), vb = rec_state_field_value(&b[j], k);
            if (va != vb) {
                rec_report_add_value(r, a[i].id, REC_VALUE_STATE, k, va, vb);
                any = true;
            }
        }
        differ += any;
        i++, j++;
    }
    return differ;
}

const char *rec_value_name(const rec_diff_value *v)
{
    uint32_t n;
    if (v->kind == REC_VALUE_GAME)
        return v->name;
    if (v->kind == REC_VALUE_STATE) {
        const rec_field *f = rec_state_fields(&n);
        return v->field < n ? f[v->field].name : "?";
    }
    if (v->kind == REC_VALUE_INPUT) {
        const rec_field *f = rec_input_fields(&n);
        return v->field < n ? f[v->field].name : "?";
    }
    switch (v->kind) {
    case REC_VALUE_JOIN: return "joins";
    case REC_VALUE_LEAVE: return "leaves";
    case REC_VALUE_COMMAND: return "command";
    default: return "present";
    }
}

rec_field_type rec_value_type(const rec_diff_value *v)
{
    uint32_t n;
    if (v->kind == REC_VALUE_GAME)
        return v->type;
    if (v->kind == REC_VALUE_STATE) {
        const rec_field *f = rec_state_fields(&n);
        return v->field < n ? f[v->field].type : REC_FIELD_I32;
    }
    if (v->kind == REC_VALUE_INPUT) {
        const rec_field *f = rec_input_fields(&n);
        return v->field < n ? f[v->field].type : REC_FIELD_I32;
    }
    return REC_FIELD_U8;
}

// Append to a fixed buffer, keeping it terminated (truncates quietly).
static void append(char *buf, size_t size, const char *fmt, ...) REC_PRINTF(3, 4);
static void append(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

void rec_report_summarize(rec_diff_report *r, const char *name_a, const char *name_b, const char *extra)
{
    rec_divergence *d = &r->div;
    d->found = r->kind != REC_DIFF_NONE;
    d->field_known = false;
    d->field[0] = '\0';
    d->recorded = d->other = 0;
    if (r->value_count > 0) {
        const rec_diff_value *v = &r->values[0];
        if (d->character == 0 || r->kind != REC_DIFF_STATE)
            d->character = v->character;
        // The first value of the first differing character (values are in
        // character order, so it is values[0] unless that character's values
        // were not found at this tick).
        for (uint32_t i = 0; i < r->value_count; i++)
            if (r->values[i].character == d->character) {
                v = &r->values[i];
                break;
            }
        if (r->values_exact || r->kind != REC_DIFF_STATE) {
            d->field_known = true;
            snprintf(d->field, sizeof d->field, "%s", rec_value_name(v));
            d->recorded = v->a;
            d->other = v->b;
        }
    }
    d->detail[0] = '\0';
    if (!d->found) {
        append(d->detail, sizeof d->detail, "%s and %s match over %u ticks", name_a, name_b,
               (unsigned)r->ticks_compared);
        return;
    }
    static const char *const kinds[] = {"", "initial states", "joins or leaves", "commands", "results"};
    append(d->detail, sizeof d->detail, "tick %u: %s differ", (unsigned)d->tick, kinds[r->kind]);
    if (d->characters_differing > 0) {
        append(d->detail, sizeof d->detail, "; %u character%s", (unsigned)d->characters_differing,
               d->characters_differing == 1 ? "" : "s");
        for (uint32_t i = 0; i < r->character_count && i < 8; i++)
            append(d->detail, sizeof d->detail, "%s%u", i == 0 ? " (" : " ", (unsigned)r->characters[i]);
        if (r->character_count > 0)
            append(d->detail, sizeof d->detail, "%s)", d->characters_differing > 8 ? " ..." : "");
    }
    if (d->field_known) {
        char va[64], vb[64];
        rec_field_type type = REC_FIELD_I32;
        for (uint32_t i = 0; i < r->value_count; i++)
            if (r->values[i].character == d->character) {
                type = rec_value_type(&r->values[i]);
                break;
            }
        rec_format_value(va, sizeof va, type, d->recorded);
        rec_format_value(vb, sizeof vb, type, d->other);
        append(d->detail, sizeof d->detail, "; first: character %u %s: %s %s vs %s %s", (unsigned)d->character,
               d->field, va, name_a, vb, name_b);
    }
    if (extra && extra[0])
        append(d->detail, sizeof d->detail, "; %s", extra);
}

uint32_t rec_resim_next_keyframe(const rec_file *f, uint32_t from, uint32_t to)
{
    uint32_t every = rec_file_header(f)->keyframe_interval;
    if (every == 0 || rec_file_keyframe_count(f) == 0 || from > to)
        return UINT32_MAX;
    // Keyframes fall on multiples of the interval.
    uint64_t k = ((uint64_t)from + every - 1u) / every * every;
    for (; k <= to; k += every)
        if (rec_file_keyframe_at(f, (uint32_t)k) >= 0)
            return (uint32_t)k;
    return UINT32_MAX;
}
