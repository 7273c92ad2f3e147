// keel-sim: --sync-test K, the rollback check of a characters run (what GGPO
// and GGRS call a sync test session). MIT licence, see LICENSE.
//
// The run's own scene is never touched: two more scenes with the same world,
// settings, platforms and water do the checking. Every tick:
//   1. the run's state is saved (sim_scene_save) into a ring of the last K
//      ticks and restored into the copy scene, which must then equal the run
//      (a round trip that loses or alters a field shows here);
//   2. the tick's commands and respawns go into the same ring slot;
//   3. after the run's step the copy replays that tick and must equal the
//      run again (what sim_scene_save writes is enough to go on from);
//   4. the rollback scene is restored to the state k ticks back (k from 1 to
//      K, changing every tick) and replays those k ticks from the ring; it
//      must equal the run.
// "Equal" means the same tick, the same characters, every field of
// rec_state_fields() the same, and the same sim_scene_hash. With a game the
// scenes run it too: the saved state holds its game-wide state and every
// character's game state, a tick's commands keep their game commands, every
// rollback re-simulates every character (as a client with a game does), and
// "equal" takes in every game field (and the hash covers them). All memory is
// taken at the start; a tick allocates nothing. So the two scenes are made
// once rather than fresh each tick; state a restore fails to overwrite still
// shows, because the rollback scene arrives at each restore from another
// tick than the one restored.
#include "keel_sim.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <keel/rec.h>
#include <keel/rec_verify.h>

/// A command given to the run: with a game, the game command struct given
/// with it (sim_scene_set_command), when one was.
typedef struct sync_command {
    uint32_t id;
    sim_input input;
    bool has_game;
    uint8_t game[SIM_GAME_COMMAND_MAX_BYTES];
} sync_command;

/// What one tick of the run did, enough to do it again.
typedef struct sync_slot {
    uint32_t tick; ///< the scene's tick when the state was saved
    size_t size;   ///< bytes of `state` in use
    uint8_t *state;
    sync_command *commands; ///< given before the step, in the order given
    uint32_t command_count;
    sim_char_state *joins; ///< respawns after the step: remove, then add this
    uint32_t join_count;
} sync_slot;

struct ks_sync {
    uint32_t depth;     ///< K: the deepest rollback
    uint32_t stride;    ///< coprime with depth: spreads the depths (sync_depth)
    uint32_t per_tick;  ///< commands and respawns a slot holds (the capacity)
    size_t state_bytes; ///< a slot's state buffer
    sim_scene *copy, *roll;
    sync_slot *slots; ///< depth of them, tick t in slots[t % depth]
    uint8_t *state_mem;
    sync_command *command_mem;
    sim_char_state *join_mem;
    sync_slot *now; ///< this tick's slot (between begin and end)
    uint64_t ticks, rollbacks, resimulated;
};

static uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

void ks_sync_free(ks_sync *y)
{
    if (!y)
        return;
    if (y->copy)
        sim_scene_destroy(y->copy);
    if (y->roll)
        sim_scene_destroy(y->roll);
    free(y->slots);
    free(y->state_mem);
    free(y->command_mem);
    free(y->join_mem);
    free(y);
}

// A scene like `run` without characters: the same world, settings, capacity,
// platforms, water and game (what sim_scene_restore keeps rather than restores).
static sim_scene *scene_like(const sim_scene *run, const sim_world *world, const sim_move_settings *settings)
{
    sim_scene *sc = sim_scene_create_game(world, settings, sim_scene_capacity(run), sim_scene_game(run));
    if (!sc)
        return NULL;
    for (uint32_t i = 0; i < sim_scene_platform_count(run); i++)
        if (sim_scene_add_platform(sc, sim_scene_platform(run, i)) != 0)
            goto fail;
    for (uint32_t i = 0; i < sim_scene_water_count(run); i++)
        if (sim_scene_add_water(sc, sim_scene_water(run, i)) != 0)
            goto fail;
    return sc;
fail:
    sim_scene_destroy(sc);
    return NULL;
}

ks_sync *ks_sync_open(const sim_scene *run, const sim_world *world, const sim_move_settings *settings, uint32_t depth)
{
    ks_sync *y = calloc(1, sizeof *y);
    if (!y)
        goto oom;
    y->depth = depth;
    // About 0.62 K, the first value coprime with K: within every K ticks
    // each depth 1..K comes once, in an order that jumps around.
    y->stride = (depth * 618u + 999u) / 1000u;
    while (gcd(y->stride, depth) != 1)
        y->stride++;
    y->copy = scene_like(run, world, settings);
    y->roll = scene_like(run, world, settings);
    if (!y->copy || !y->roll)
        goto oom;
    // A saved state is a header and a fixed record per character: the empty
    // copy gives the header, the run (all its characters added) the records.
    uint32_t cap = sim_scene_capacity(run), count;
    sim_scene_characters(run, &count);
    size_t header = sim_scene_state_size(y->copy);
    size_t record = count ? (sim_scene_state_size(run) - header) / count : 0;
    y->state_bytes = header + record * cap;
    if (y->state_bytes < sim_scene_state_size(run))
        y->state_bytes = sim_scene_state_size(run);
    y->per_tick = cap ? cap : 1;
    y->slots = calloc(depth, sizeof *y->slots);
    y->state_mem = calloc(depth, y->state_bytes);
    y->command_mem = calloc((size_t)depth * y->per_tick, sizeof *y->command_mem);
    y->join_mem = calloc((size_t)depth * y->per_tick, sizeof *y->join_mem);
    if (!y->slots || !y->state_mem || !y->command_mem || !y->join_mem)
        goto oom;
    for (uint32_t i = 0; i < depth; i++) {
        y->slots[i].state = y->state_mem + (size_t)i * y->state_bytes;
        y->slots[i].commands = y->command_mem + (size_t)i * y->per_tick;
        y->slots[i].joins = y->join_mem + (size_t)i * y->per_tick;
        y->slots[i].tick = UINT32_MAX; // empty
    }
    return y;
oom:
    fputs("keel-sim: --sync-test: out of memory\n", stderr);
    ks_sync_free(y);
    return NULL;
}

// ---- comparing a scene with the run ------------------------------------------------

static void put_value(FILE *f, const rec_field *field, int64_t v)
{
    if (field->type == REC_FIELD_FX) {
        char buf[32];
        ks_format_fx_exact(buf, sizeof buf, (sim_fx)v);
        fprintf(f, "%s (raw %" PRId64 ")", buf, v);
    } else {
        fprintf(f, "%" PRId64, v);
    }
}

/// Most differing fields listed after a mismatch.
#define SHOW_FIELDS 8

static bool same_state(const sim_char_state *a, const sim_char_state *b, uint32_t nfields)
{
    for (uint32_t k = 0; k < nfields; k++)
        if (rec_state_field_value(a, k) != rec_state_field_value(b, k))
            return false;
    return true;
}

// The game fields of two structs of `schema` that differ (at most `show`
// printed as "  WHO game.FIELD[k]: run V, WHAT V"); their count.
static uint32_t game_struct_difference(const sim_game_schema *schema, const void *a, const void *b, const char *who,
                                       const char *what, uint32_t show)
{
    uint32_t differ = 0;
    for (uint32_t i = 0; a && b && i < schema->field_count; i++) {
        const sim_game_field *fd = &schema->fields[i];
        uint32_t count = fd->count ? fd->count : 1u;
        for (uint32_t k = 0; k < count; k++) {
            int64_t va = rec_game_field_value(fd, a, k), vb = rec_game_field_value(fd, b, k);
            if (va == vb)
                continue;
            if (differ++ >= show)
                continue;
            char index[16] = "";
            if (count > 1)
                snprintf(index, sizeof index, "[%" PRIu32 "]", k);
            rec_field f = {fd->name, fd->kind == SIM_GAME_FX ? REC_FIELD_FX : REC_FIELD_I32, 4};
            fprintf(stderr, "  %sgame.%s%s: run ", who, fd->name, index);
            put_value(stderr, &f, va);
            fprintf(stderr, ", %s ", what);
            put_value(stderr, &f, vb);
            fputc('\n', stderr);
        }
    }
    return differ;
}

// With a game: the game fields of the run and `other` that differ, the
// game-wide state's first and then each character's (both scenes hold the
// same characters), and whether each is out of collisions; at most `show`
// printed (`what` names `other`). Their count (0 without a game).
static uint32_t game_difference(const sim_scene *run, const sim_scene *other, const char *what, uint32_t show)
{
    const sim_game *game = sim_scene_game(run);
    if (!game)
        return 0;
    const sim_game_def *d = sim_game_definition(game);
    uint32_t differ =
        game_struct_difference(&d->state, sim_scene_game_state(run), sim_scene_game_state(other), "", what, show);
    uint32_t n;
    const sim_char_state *c = sim_scene_characters(run, &n);
    for (uint32_t i = 0; i < n; i++) {
        char who[32];
        snprintf(who, sizeof who, "character %" PRIu32 " ", c[i].id);
        uint32_t left = differ < show ? show - differ : 0;
        differ += game_struct_difference(&d->character, sim_scene_game_char(run, c[i].id),
                                         sim_scene_game_char(other, c[i].id), who, what, left);
        bool oa = sim_scene_game_out(run, c[i].id), ob = sim_scene_game_out(other, c[i].id);
        if (oa != ob && differ++ < show)
            fprintf(stderr, "  %sgame.out: run %d, %s %d\n", who, oa, what, ob);
    }
    return differ;
}

// True when `other` holds exactly the run's state: the same tick, the same
// characters with every field the same, and the same state hash.
static bool same_as_run(const sim_scene *run, const sim_scene *other)
{
    uint32_t n, m, nfields;
    const sim_char_state *a = sim_scene_characters(run, &n);
    const sim_char_state *b = sim_scene_characters(other, &m);
    rec_state_fields(&nfields);
    if (sim_scene_tick(run) != sim_scene_tick(other) || n != m)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (a[i].id != b[i].id || !same_state(&a[i], &b[i], nfields))
            return false;
    return game_difference(run, other, "", 0) == 0 && sim_scene_hash(run) == sim_scene_hash(other);
}

// What differs between the run and `other` (called "what" in the lines): the
// tick, characters present in one only, and the first SHOW_FIELDS differing
// fields with both values, then counts and both state hashes.
static void print_difference(const sim_scene *run, const sim_scene *other, const char *what)
{
    uint32_t n, m, nfields;
    const sim_char_state *a = sim_scene_characters(run, &n);
    const sim_char_state *b = sim_scene_characters(other, &m);
    const rec_field *fields = rec_state_fields(&nfields);
    uint32_t shown = 0, differ = 0;
    if (sim_scene_tick(run) != sim_scene_tick(other))
        fprintf(stderr, "  scene tick: run %" PRIu32 ", %s %" PRIu32 "\n", sim_scene_tick(run), what,
                sim_scene_tick(other));
    for (uint32_t i = 0, j = 0; i < n || j < m;) {
        if (j >= m || (i < n && a[i].id < b[j].id)) {
            if (shown++ < SHOW_FIELDS)
                fprintf(stderr, "  character %" PRIu32 ": in the run, missing %s\n", a[i].id, what);
            differ++, i++;
            continue;
        }
        if (i >= n || b[j].id < a[i].id) {
            if (shown++ < SHOW_FIELDS)
                fprintf(stderr, "  character %" PRIu32 ": %s only, not in the run\n", b[j].id, what);
            differ++, j++;
            continue;
        }
        bool any = false;
        for (uint32_t k = 0; k < nfields; k++) {
            int64_t va = rec_state_field_value(&a[i], k), vb = rec_state_field_value(&b[j], k);
            if (va == vb)
                continue;
            any = true;
            if (shown++ < SHOW_FIELDS) {
                fprintf(stderr, "  character %" PRIu32 " %s: run ", a[i].id, fields[k].name);
                put_value(stderr, &fields[k], va);
                fprintf(stderr, ", %s ", what);
                put_value(stderr, &fields[k], vb);
                fputc('\n', stderr);
            }
        }
        differ += any;
        i++, j++;
    }
    uint32_t game = n == m && differ == 0 ? game_difference(run, other, what, SHOW_FIELDS - shown) : 0;
    shown += game;
    if (shown > SHOW_FIELDS)
        fprintf(stderr, "  ... %" PRIu32 " more differences\n", shown - SHOW_FIELDS);
    if (differ)
        fprintf(stderr, "  %" PRIu32 " of %" PRIu32 " characters differ\n", differ, n);
    else if (game)
        fprintf(stderr, "  every character field is the same; %" PRIu32 " game field%s differ%s\n", game,
                game == 1 ? "" : "s", game == 1 ? "s" : "");
    else if (sim_scene_tick(run) == sim_scene_tick(other))
        fputs("  every character field is the same, yet the state hashes differ\n", stderr);
    fprintf(stderr, "  state hash: run %016" PRIx64 ", %s %016" PRIx64 "\n", sim_scene_hash(run), what,
            sim_scene_hash(other));
}

// ---- the run's ticks ---------------------------------------------------------------

bool ks_sync_begin(ks_sync *y, const sim_scene *run)
{
    uint32_t t = sim_scene_tick(run);
    sync_slot *s = &y->slots[t % y->depth];
    y->now = s;
    s->tick = t;
    s->command_count = s->join_count = 0;
    s->size = sim_scene_state_size(run);
    if (s->size > y->state_bytes) {
        // Not reached in keel-sim (respawns keep the count), kept honest.
        fprintf(stderr, "keel-sim: --sync-test: the scene's state outgrew its buffer at tick %" PRIu32 "\n", t);
        return false;
    }
    sim_scene_save(run, s->state);
    sim_scene_error err = {"", 0, 0};
    if (!sim_scene_restore(y->copy, s->state, s->size, &err)) {
        fprintf(stderr,
                "keel-sim: sync test failed at tick %" PRIu32 ": sim_scene_restore refused what "
                "sim_scene_save wrote: %s (record %" PRId64 ", offset %zu)\n",
                t, err.reason, err.record, err.offset);
        return false;
    }
    if (same_as_run(run, y->copy))
        return true;
    fprintf(stderr,
            "keel-sim: sync test failed at tick %" PRIu32 " (rollback depth 0): the scene restored "
            "from sim_scene_save differs from the run before any step:\n",
            t);
    print_difference(run, y->copy, "restored");
    return false;
}

// A slot holds one command and one respawn per character (the capacity):
// never more in keel-sim. Were one dropped, the replay would differ from the
// run and be reported, not pass unseen.
void ks_sync_command(ks_sync *y, uint32_t id, const sim_input *in, const void *game_command)
{
    sync_slot *s = y->now;
    if (!s || s->command_count >= y->per_tick)
        return;
    sync_command *c = &s->commands[s->command_count++];
    c->id = id;
    c->input = *in;
    c->has_game = game_command != NULL;
    if (game_command)
        memcpy(c->game, game_command, sizeof c->game);
}

void ks_sync_respawn(ks_sync *y, const sim_char_state *joined)
{
    sync_slot *s = y->now;
    if (s && s->join_count < y->per_tick)
        s->joins[s->join_count++] = *joined;
}

// One tick of the run again, on another scene: its commands, the step, its
// respawns. (A refused command or add leaves the scene different from the
// run, which the comparison then reports.)
static void replay(sim_scene *sc, const sync_slot *s)
{
    for (uint32_t i = 0; i < s->command_count; i++) {
        const sync_command *c = &s->commands[i];
        if (!c->has_game || !sim_scene_set_command(sc, c->id, &c->input, c->game, NULL))
            sim_scene_set_input(sc, c->id, &c->input);
    }
    sim_scene_step(sc);
    for (uint32_t i = 0; i < s->join_count; i++) {
        sim_scene_remove_character(sc, s->joins[i].id);
        sim_scene_add_character(sc, &s->joins[i]);
    }
}

// The rollback depth after the run's tick t (0-based): every depth 1..K once
// in each K ticks, in an order that moves by `stride`, and never further back
// than the first tick.
static uint32_t sync_depth(const ks_sync *y, uint32_t t)
{
    uint32_t k = 1u + (uint32_t)(((uint64_t)(t % y->depth) * y->stride + t / y->depth) % y->depth);
    return k > t + 1u ? t + 1u : k;
}

bool ks_sync_end(ks_sync *y, const sim_scene *run)
{
    sync_slot *s = y->now;
    y->now = NULL;
    uint32_t after = sim_scene_tick(run), t = s->tick;

    // The copy restored before the step takes the same step.
    replay(y->copy, s);
    if (!same_as_run(run, y->copy)) {
        fprintf(stderr,
                "keel-sim: sync test failed at tick %" PRIu32 " (rollback depth 1, the save/restore "
                "copy): a scene restored from sim_scene_save at tick %" PRIu32
                " and stepped with the same commands differs from the run:\n",
                after, t);
        print_difference(run, y->copy, "copy");
        return false;
    }

    // Roll back k ticks and come forward again.
    uint32_t k = sync_depth(y, t);
    const sync_slot *from = &y->slots[(t + 1u - k) % y->depth];
    sim_scene_error err = {"", 0, 0};
    if (from->tick != t + 1u - k || !sim_scene_restore(y->roll, from->state, from->size, &err)) {
        fprintf(stderr, "keel-sim: sync test failed at tick %" PRIu32 ": cannot roll back %" PRIu32 " ticks: %s\n",
                after, k, err.reason[0] ? err.reason : "the ring lost the state");
        return false;
    }
    for (uint32_t j = t + 1u - k; j <= t; j++)
        replay(y->roll, &y->slots[j % y->depth]);
    y->ticks++;
    y->rollbacks++;
    y->resimulated += k;
    if (same_as_run(run, y->roll))
        return true;
    fprintf(stderr,
            "keel-sim: sync test failed at tick %" PRIu32 " (rollback depth %" PRIu32 "): restored to tick %" PRIu32
            " and re-simulated %" PRIu32
            " ticks with the run's commands and respawns, the state differs from the run:\n",
            after, k, t + 1u - k, k);
    print_difference(run, y->roll, "re-simulated");
    return false;
}

void ks_sync_summary(const ks_sync *y, FILE *f)
{
    fprintf(f,
            "keel-sim: sync test passed: %" PRIu64 " ticks checked, %" PRIu64 " save/restore copies, %" PRIu64
            " rollbacks of 1 to %" PRIu32 " ticks, %" PRIu64 " ticks re-simulated\n",
            y->ticks, y->ticks, y->rollbacks, y->depth, y->resimulated);
}
