// keel recordings: diff, two recordings of the same session compared tick by
// tick. MIT licence, see LICENSE.
//
// Per tick, in order: the joins and leaves, the commands (two recordings of
// one session, by a server and by another build, apply the same ones), the
// world hash and every character's hash. The first tick where anything
// differs is the divergence; its root cause is the earliest of those that
// differs (events, then commands, then results). The fields are found from
// both sides' full state after the tick: a keyframe at tick + 1, or a side
// re-simulated here from its last keyframe, which counts only when it
// reproduces every recorded hash of that side on the way (then its states
// are that recording's exact values).
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/net_proto.h>

#include "rec_resim.h"

static const rec_field input_fields[] = {
    {"input.tick", REC_FIELD_U32, 4},  {"input.forward", REC_FIELD_I8, 1}, {"input.right", REC_FIELD_I8, 1},
    {"input.up", REC_FIELD_I8, 1},     {"input.buttons", REC_FIELD_U8, 1}, {"input.yaw", REC_FIELD_U16, 2},
    {"input.pitch", REC_FIELD_U16, 2},
};
#define INPUT_FIELD_COUNT ((uint32_t)(sizeof input_fields / sizeof input_fields[0]))

const rec_field *rec_input_fields(uint32_t *count)
{
    if (count)
        *count = INPUT_FIELD_COUNT;
    return input_fields;
}

int64_t rec_input_field_value(const sim_input *in, uint32_t index)
{
    switch (index) {
    case 0: return in->tick;
    case 1: return in->forward;
    case 2: return in->right;
    case 3: return in->up;
    case 4: return in->buttons;
    case 5: return in->yaw;
    case 6: return in->pitch;
    default: return 0;
    }
}

// ---- notes on the headers ---------------------------------------------------------

static void note(rec_diff_report *r, const char *fmt, ...) REC_PRINTF(2, 3);
static void note(rec_diff_report *r, const char *fmt, ...)
{
    size_t used = strlen(r->notes);
    if (used + 2 >= sizeof r->notes)
        return;
    if (used > 0)
        r->notes[used++] = '\n', r->notes[used] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes + used, sizeof r->notes - used, fmt, ap);
    va_end(ap);
}

#define SETTING(name)                            \
    {                                            \
#name, offsetof(sim_move_settings, name) \
    }
static const struct {
    const char *name;
    size_t offset;
} fx_settings[] = {
    SETTING(gravity),       SETTING(max_speed),      SETTING(crouch_speed_scale),
    SETTING(accelerate),    SETTING(air_accelerate), SETTING(air_max_speed),
    SETTING(friction),      SETTING(stop_speed),     SETTING(jump_velocity),
    SETTING(step_height),   SETTING(max_slope_cos),  SETTING(skin),
    SETTING(fly_speed),     SETTING(swim_speed),     SETTING(water_gravity_scale),
    SETTING(respawn_depth),
};
#undef SETTING

static sim_fx setting_at(const sim_move_settings *s, size_t offset)
{
    sim_fx v;
    memcpy(&v, (const char *)s + offset, sizeof v);
    return v;
}

static void compare_headers(rec_diff_report *r, const rec_header *a, const rec_header *b)
{
    if (a->behaviour_version != b->behaviour_version)
        note(r, "behaviour versions differ: A %u, B %u", (unsigned)a->behaviour_version,
             (unsigned)b->behaviour_version);
    if (a->settings_digest != b->settings_digest) {
        bool named = false;
        for (size_t i = 0; i < sizeof fx_settings / sizeof fx_settings[0]; i++) {
            sim_fx va = setting_at(&a->settings, fx_settings[i].offset);
            sim_fx vb = setting_at(&b->settings, fx_settings[i].offset);
            if (va == vb)
                continue;
            char ta[64], tb[64];
            rec_format_value(ta, sizeof ta, REC_FIELD_FX, va);
            rec_format_value(tb, sizeof tb, REC_FIELD_FX, vb);
            note(r, "setting %s differs: A %s, B %s", fx_settings[i].name, ta, tb);
            named = true;
        }
        if (a->settings.tick_rate != b->settings.tick_rate) {
            note(r, "tick rates differ: A %d, B %d", (int)a->settings.tick_rate, (int)b->settings.tick_rate);
            named = true;
        }
        if (!named)
            note(r, "movement settings differ (digests %016llx and %016llx)", (unsigned long long)a->settings_digest,
                 (unsigned long long)b->settings_digest);
    }
    if (a->level.digest != b->level.digest)
        note(r, "levels differ (digests %016llx and %016llx)", (unsigned long long)a->level.digest,
             (unsigned long long)b->level.digest);
    bool platforms_same = a->platform_count == b->platform_count;
    for (uint32_t i = 0; platforms_same && i < a->platform_count && i < REC_MAX_PLATFORMS; i++) {
        const sim_platform_def *p = &a->platforms[i], *q = &b->platforms[i];
        platforms_same = p->id == q->id && p->point_count == q->point_count && p->ticks_per_leg == q->ticks_per_leg &&
                         p->pause_ticks == q->pause_ticks && p->half.x == q->half.x && p->half.y == q->half.y &&
                         p->half.z == q->half.z;
        for (uint32_t k = 0; platforms_same && k < p->point_count && k < SIM_PLATFORM_MAX_POINTS; k++)
            platforms_same = p->points[k].x == q->points[k].x && p->points[k].y == q->points[k].y &&
                             p->points[k].z == q->points[k].z;
    }
    if (!platforms_same)
        note(r, "platforms differ");
    bool waters_same = a->water_count == b->water_count;
    for (uint32_t i = 0; waters_same && i < a->water_count && i < REC_MAX_WATERS; i++)
        waters_same = sim_v3_eq(a->waters[i].min, b->waters[i].min) && sim_v3_eq(a->waters[i].max, b->waters[i].max);
    if (!waters_same)
        note(r, "water boxes differ");
    if (strcmp(a->build_id, b->build_id) != 0)
        note(r, "builds: A %s (%s), B %s (%s)", a->build_id, a->source, b->build_id, b->source);
}

// ---- a side's full state after a tick -------------------------------------------------

typedef struct side {
    rec_file *f;
    const rec_header *h;
    const char *name;
    bool can_resim;
    rec_cursor *cursor;
    sim_scene *scene;
    const sim_char_state *states;
    uint32_t count;
    sim_scene *game_scene; ///< a game's recording: the scene with the game's state after the tick
    char how[64];
} side;

static void side_free(side *s)
{
    if (s->cursor)
        rec_cursor_destroy(s->cursor);
    if (s->game_scene && s->game_scene != s->scene)
        sim_scene_destroy(s->game_scene);
    if (s->scene)
        sim_scene_destroy(s->scene);
    s->cursor = NULL;
    s->scene = NULL;
    s->game_scene = NULL;
}

// The state after tick `tick` of side s: its keyframe at tick + 1, or a
// re-simulation here that reproduces its hashes. False when neither works
// (s->how says why).
static bool side_state_after(side *s, const sim_world *world, uint32_t tick, uint32_t first)
{
    rec_error err = {0};
    uint32_t after = tick + 1u;
    int64_t idx = rec_resim_keyframe_at(s->f, after);
    uint32_t kt;
    if (idx >= 0) {
        s->cursor = rec_cursor_create(s->f, first, &err);
        if (s->cursor && rec_cursor_keyframe(s->cursor, (uint32_t)idx, &kt, &s->states, &s->count, &err)) {
            snprintf(s->how, sizeof s->how, "%s's keyframe", s->name);
            if (s->h->game) {
                // The game's state: the scene saved at the same tick (GKEY).
                s->game_scene = rec_resim_scene_create(s->h, world, &err);
                if (s->game_scene && !rec_resim_restore_game(s->game_scene, s->f, after, &err)) {
                    sim_scene_destroy(s->game_scene);
                    s->game_scene = NULL;
                }
            }
            return true;
        }
        side_free(s);
    }
    if (!s->can_resim || !world) {
        snprintf(s->how, sizeof s->how, "%s has no keyframe at tick %u and cannot be re-simulated here", s->name,
                 (unsigned)after);
        return false;
    }
    // From the last keyframe at or before the tick, else the initial state.
    uint32_t every = s->h->keyframe_interval;
    uint32_t start = first;
    int64_t start_idx = -1;
    if (every > 0 && rec_file_keyframe_count(s->f) > 0)
        for (uint32_t k = tick / every * every; k > first; k -= every) {
            int64_t i = rec_file_keyframe_at(s->f, k);
            if (i >= 0) {
                start = k, start_idx = i;
                break;
            }
            if (k < every)
                break;
        }
    s->scene = rec_resim_scene_create(s->h, world, &err);
    s->cursor = s->scene ? rec_cursor_create(s->f, start, &err) : NULL;
    const sim_char_state *st = NULL;
    uint32_t n = 0, t0 = 0;
    bool ok = s->cursor && (start_idx < 0 ? rec_file_initial(s->f, &t0, &st, &n)
                                          : rec_cursor_keyframe(s->cursor, (uint32_t)start_idx, &t0, &st, &n, &err));
    ok = ok && rec_resim_restore(s->scene, t0, st, n, "the starting state", &err);
    ok = ok && rec_resim_restore_game(s->scene, s->f, t0, &err);
    if (!ok) {
        snprintf(s->how, sizeof s->how, "%s cannot be re-simulated here", s->name);
        side_free(s);
        return false;
    }
    uint64_t check = 0;
    for (uint32_t at = start; at <= tick; at++) {
        rec_tick t;
        bool check_only = false;
        if (!rec_cursor_next(s->cursor, &t, &err) || !rec_resim_apply(s->scene, &t, &err)) {
            snprintf(s->how, sizeof s->how, "%s cannot be re-simulated here", s->name);
            side_free(s);
            return false;
        }
        sim_scene_step(s->scene);
        if (rec_resim_differs(s->f, s->scene, &t, &check, &check_only)) {
            snprintf(s->how, sizeof s->how, "this build does not reproduce %s (from tick %u)", s->name, (unsigned)at);
            side_free(s);
            return false;
        }
    }
    s->states = sim_scene_characters(s->scene, &s->count);
    s->game_scene = sim_scene_game(s->scene) ? s->scene : NULL;
    snprintf(s->how, sizeof s->how, "%s re-simulated here from tick %u", s->name, (unsigned)start);
    return true;
}

// ---- comparing one tick ------------------------------------------------------------

// Leaves and joins: values for characters that leave or join on one side
// only, and the differing fields of a character joining on both.
static bool compare_events(rec_diff_report *r, const rec_tick *a, const rec_tick *b)
{
    uint32_t before = r->value_count;
    bool truncated = r->values_truncated;
    // Leaves, by id (the recorders write them in id order; a merge of
    // unsorted lists still finds any difference, just less neatly).
    uint32_t i = 0, j = 0;
    while (i < a->leave_count || j < b->leave_count) {
        if (j >= b->leave_count || (i < a->leave_count && a->leaves[i] < b->leaves[j]))
            rec_report_add_value(r, a->leaves[i++], REC_VALUE_LEAVE, 0, 1, 0);
        else if (i >= a->leave_count || b->leaves[j] < a->leaves[i])
            rec_report_add_value(r, b->leaves[j++], REC_VALUE_LEAVE, 0, 0, 1);
        else
            i++, j++;
    }
    i = j = 0;
    while (i < a->join_count || j < b->join_count) {
        if (j >= b->join_count || (i < a->join_count && a->joins[i].id < b->joins[j].id)) {
            rec_report_add_value(r, a->joins[i++].id, REC_VALUE_JOIN, 0, 1, 0);
        } else if (i >= a->join_count || b->joins[j].id < a->joins[i].id) {
            rec_report_add_value(r, b->joins[j++].id, REC_VALUE_JOIN, 0, 0, 1);
        } else {
            rec_report_add_states(r, &a->joins[i], 1, &b->joins[j], 1);
            i++, j++;
        }
    }
    return r->value_count != before || r->values_truncated != truncated;
}

// The game commands of one character on both sides (packed, `bytes` each):
// the fields that differ, by name when the game is at hand.
static void compare_game_command(rec_diff_report *r, const sim_game *game, uint32_t id, const uint8_t *pa,
                                 const uint8_t *pb, uint32_t bytes)
{
    uint32_t before = r->value_count;
    if ((pa == NULL) != (pb == NULL)) {
        rec_report_add_value(r, id, REC_VALUE_GAME, 0, pa != NULL, pb != NULL);
        if (r->value_count > before)
            snprintf(r->values[before].name, sizeof r->values[0].name, "game.command");
        return;
    }
    if (!pa || memcmp(pa, pb, bytes) == 0)
        return;
    union {
        uint8_t b[SIM_GAME_COMMAND_MAX_BYTES];
        uint64_t align;
    } ca, cb;
    const sim_game_def *d = game ? sim_game_definition(game) : NULL;
    if (!d || !sim_game_unpack_command(game, pa, bytes, ca.b, NULL) ||
        !sim_game_unpack_command(game, pb, bytes, cb.b, NULL)) {
        rec_report_add_value(r, id, REC_VALUE_GAME, 0, 1, 0);
        if (r->value_count > before)
            snprintf(r->values[before].name, sizeof r->values[0].name, "game.command (packed)");
        return;
    }
    rec_report_add_game_struct(r, id, &d->command, ca.b, cb.b, "game.command.");
}

static bool compare_commands(rec_diff_report *r, const rec_tick *a, const rec_tick *b, const sim_game *game,
                             uint32_t game_bytes)
{
    uint32_t before = r->value_count;
    bool truncated = r->values_truncated;
    uint32_t i = 0, j = 0;
    while (i < a->command_count || j < b->command_count) {
        const rec_command *ca = i < a->command_count ? &a->commands[i] : NULL;
        const rec_command *cb = j < b->command_count ? &b->commands[j] : NULL;
        if (!cb || (ca && ca->id < cb->id)) {
            rec_report_add_value(r, ca->id, REC_VALUE_COMMAND, 0, 1, 0);
            i++;
        } else if (!ca || cb->id < ca->id) {
            rec_report_add_value(r, cb->id, REC_VALUE_COMMAND, 0, 0, 1);
            j++;
        } else {
            for (uint32_t k = 0; k < INPUT_FIELD_COUNT; k++) {
                int64_t va = rec_input_field_value(&ca->input, k), vb = rec_input_field_value(&cb->input, k);
                if (va != vb)
                    rec_report_add_value(r, ca->id, REC_VALUE_INPUT, k, va, vb);
            }
            if (game_bytes && (a->game_commands || b->game_commands))
                compare_game_command(r, game, ca->id,
                                     a->game_commands ? a->game_commands + (size_t)i * game_bytes : NULL,
                                     b->game_commands ? b->game_commands + (size_t)j * game_bytes : NULL, game_bytes);
            i++, j++;
        }
    }
    return r->value_count != before || r->values_truncated != truncated;
}

// Characters whose recorded results differ after the tick (by id).
static uint32_t compare_results(rec_diff_report *r, const rec_tick *a, const rec_tick *b)
{
    uint32_t differ = 0, i = 0, j = 0;
    while (i < a->char_count || j < b->char_count) {
        uint32_t id;
        if (j >= b->char_count || (i < a->char_count && a->char_ids[i] < b->char_ids[j])) {
            id = a->char_ids[i++];
        } else if (i >= a->char_count || b->char_ids[j] < a->char_ids[i]) {
            id = b->char_ids[j++];
        } else {
            bool same = a->char_hashes[i] == b->char_hashes[j];
            id = a->char_ids[i];
            i++, j++;
            if (same)
                continue;
        }
        if (r->character_count < REC_DIFF_MAX_CHARACTERS)
            r->characters[r->character_count++] = id;
        differ++;
    }
    return differ;
}

// Why the results differ though no character's 16-bit hash does: the world
// hashes, or (from `check_from`, not UINT32_MAX) the blocks' 64-bit checks.
static void collided_text(char *out, size_t size, uint32_t check_from, uint32_t tick)
{
    if (check_from == UINT32_MAX)
        snprintf(out, size, "only the world hashes differ: the 16-bit character hashes collided");
    else
        snprintf(out, size,
                 "the 16-bit hashes of ticks %u to %u match, but their blocks' 64-bit checks do not: the first "
                 "divergent tick is one of these",
                 (unsigned)check_from, (unsigned)tick);
}

int rec_diff(rec_file *a, rec_file *b, const sim_world *world, rec_diff_report *report, rec_error *err)
{
    rec_error local_err;
    if (!err)
        err = &local_err;
    memset(err, 0, sizeof *err);
    memset(report, 0, sizeof *report);
    rec_diff_report *r = report;
    const rec_header *ha = rec_file_header(a), *hb = rec_file_header(b);
    if (ha->kind != REC_KIND_SCENE || hb->kind != REC_KIND_SCENE)
        return rec_fail(err, 0, "HEAD", "%s is not a scene recording (kind %d): diff compares scene recordings",
                        ha->kind != REC_KIND_SCENE ? "A" : "B",
                        (int)(ha->kind != REC_KIND_SCENE ? ha->kind : hb->kind));
    compare_headers(r, ha, hb);
    rec_info ia, ib;
    rec_file_info(a, &ia);
    rec_file_info(b, &ib);
    r->ticks_a = ia.tick_count;
    r->ticks_b = ib.tick_count;

    side sa = {a, ha, "A", world != NULL, NULL, NULL, NULL, 0, NULL, ""};
    side sb = {b, hb, "B", world != NULL && hb->level.digest == ha->level.digest, NULL, NULL, NULL, 0, NULL, ""};
    rec_cursor *ca = NULL, *cb = NULL;
    int rc = REC_EXIT_MATCH;
    uint32_t diverged_at = 0;

    // The initial states.
    uint32_t ta0 = 0, tb0 = 0, na = 0, nb = 0;
    const sim_char_state *sta = NULL, *stb = NULL;
    if (!rec_file_initial(a, &ta0, &sta, &na))
        return rec_fail(err, 0, "INIT", "A holds no initial state");
    if (!rec_file_initial(b, &tb0, &stb, &nb))
        return rec_fail(err, 0, "INIT", "B holds no initial state");
    if (ta0 != tb0 || rec_report_add_states(r, sta, na, stb, nb) > 0 || r->values_truncated) {
        r->kind = REC_DIFF_START;
        r->div.tick = ta0;
        r->values_exact = true;
        r->values_tick = ta0;
        snprintf(r->values_source, sizeof r->values_source, "the initial states");
        for (uint32_t i = 0; i < r->value_count && r->character_count < REC_DIFF_MAX_CHARACTERS; i++)
            if (r->character_count == 0 || r->characters[r->character_count - 1] != r->values[i].character)
                r->characters[r->character_count++] = r->values[i].character;
        r->div.characters_differing = r->character_count;
        char extra[96] = "";
        if (ta0 != tb0)
            snprintf(extra, sizeof extra, "A starts at tick %u, B at tick %u", (unsigned)ta0, (unsigned)tb0);
        rec_report_summarize(r, "A", "B", extra);
        return REC_EXIT_DIVERGED;
    }

    ca = rec_cursor_create(a, ta0, err);
    if (!ca) {
        rc = REC_EXIT_BAD_FILE;
        goto done;
    }
    cb = rec_cursor_create(b, tb0, err);
    if (!cb) {
        snprintf(err->message + strlen(err->message), sizeof err->message - strlen(err->message), " (B)");
        rc = REC_EXIT_BAD_FILE;
        goto done;
    }
    uint32_t first_a = ta0, first_b = tb0, check_from = UINT32_MAX;
    for (;;) {
        rec_tick t, u;
        rec_error ea = {0}, eb = {0};
        bool more_a = rec_cursor_next(ca, &t, &ea);
        if (!more_a && ea.message[0]) {
            *err = ea;
            rc = REC_EXIT_BAD_FILE;
            goto done;
        }
        bool more_b = more_a && rec_cursor_next(cb, &u, &eb);
        if (!more_b && eb.message[0]) {
            *err = eb;
            snprintf(err->message + strlen(err->message), sizeof err->message - strlen(err->message), " (B)");
            rc = REC_EXIT_BAD_FILE;
            goto done;
        }
        if (!more_a || !more_b)
            break;
        if (t.tick != u.tick) {
            r->kind = REC_DIFF_START;
            r->div.tick = t.tick;
            char extra[96];
            snprintf(extra, sizeof extra, "A's next tick is %u, B's %u", (unsigned)t.tick, (unsigned)u.tick);
            rec_report_summarize(r, "A", "B", extra);
            rc = REC_EXIT_DIVERGED;
            goto done;
        }
        bool events = compare_events(r, &t, &u);
        bool inputs = compare_commands(r, &t, &u, ha->game,
                                       ha->game_command_bytes == hb->game_command_bytes ? ha->game_command_bytes : 0);
        uint32_t differ = compare_results(r, &t, &u);
        // World hashes where both sides hold one (format 2: a block's last
        // tick); block checks where both blocks cover the same ticks.
        first_a = t.block_start ? t.tick : first_a;
        first_b = u.block_start ? u.tick : first_b;
        bool worlds = t.has_world_hash && u.has_world_hash && t.world_hash != u.world_hash;
        bool checks = t.has_block_check && u.has_block_check && first_a == first_b && t.block_check != u.block_check;
        if (!events && !inputs && differ == 0 && !worlds && !checks) {
            r->ticks_compared++;
            if (t.has_world_hash && u.has_world_hash) {
                r->hash_a = t.world_hash;
                r->hash_b = u.world_hash;
            }
            continue;
        }
        if (!events && !inputs && differ == 0 && !worlds)
            check_from = first_a;
        r->kind = events ? REC_DIFF_EVENTS : inputs ? REC_DIFF_INPUTS : REC_DIFF_STATE;
        r->div.tick = t.tick;
        r->div.characters_differing = differ;
        r->div.character = r->character_count > 0 ? r->characters[0] : 0;
        r->hash_a = t.world_hash;
        r->hash_b = u.world_hash;
        diverged_at = t.tick;
        rc = REC_EXIT_DIVERGED;
        break;
    }
    rec_cursor_destroy(ca);
    rec_cursor_destroy(cb);
    ca = cb = NULL;

    if (rc == REC_EXIT_MATCH) {
        if (r->ticks_a != r->ticks_b)
            note(r, "A has %u ticks, B %u: compared the first %u", (unsigned)r->ticks_a, (unsigned)r->ticks_b,
                 (unsigned)r->ticks_compared);
        rec_report_summarize(r, "A", "B", "");
        goto done;
    }

    // The fields: both sides' state after the divergent tick.
    char extra[256] = "";
    bool have_a = side_state_after(&sa, world, diverged_at, ta0);
    bool have_b = have_a && side_state_after(&sb, world, diverged_at, tb0);
    if (have_a && have_b) {
        uint32_t before = r->value_count;
        uint32_t differ = rec_report_add_states(r, sa.states, sa.count, sb.states, sb.count);
        uint32_t game_values =
            sa.game_scene && sb.game_scene ? rec_report_add_game(r, sa.game_scene, sb.game_scene) : 0;
        if (r->kind == REC_DIFF_STATE && r->div.characters_differing == 0 && differ == 0 && game_values > 0) {
            // Only the game's state differs: its characters are the divergence's.
            rec_report_game_characters(r, before);
            snprintf(extra, sizeof extra, "the game's state differs (the characters' own match)");
        }
        r->values_exact = true;
        r->values_tick = diverged_at + 1u;
        snprintf(r->values_source, sizeof r->values_source, "%s and %s", sa.how, sb.how);
        if (r->kind == REC_DIFF_STATE && r->div.characters_differing == 0 && !extra[0]) {
            // Only the world hashes differed: the 16-bit hashes collided.
            r->div.characters_differing = differ;
            for (uint32_t i = before; i < r->value_count && r->character_count < REC_DIFF_MAX_CHARACTERS; i++)
                if (r->character_count == 0 || r->characters[r->character_count - 1] != r->values[i].character)
                    r->characters[r->character_count++] = r->values[i].character;
            r->div.character = r->character_count ? r->characters[0] : 0;
            collided_text(extra, sizeof extra, check_from, diverged_at);
        }
    } else {
        snprintf(extra, sizeof extra,
                 "naming the fields needs both states after tick %u: %s (record with --record-full)",
                 (unsigned)diverged_at, have_a ? sb.how : sa.how);
        if (r->kind == REC_DIFF_STATE && r->div.characters_differing == 0) {
            size_t used = strlen(extra);
            snprintf(extra + used, sizeof extra - used, "; ");
            used = strlen(extra);
            collided_text(extra + used, sizeof extra - used, check_from, diverged_at);
        }
    }
    rec_report_summarize(r, "A", "B", extra);

done:
    if (ca)
        rec_cursor_destroy(ca);
    if (cb)
        rec_cursor_destroy(cb);
    side_free(&sa);
    side_free(&sb);
    return rc;
}
