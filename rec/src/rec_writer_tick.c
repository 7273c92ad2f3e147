// keel recordings: the writer's scene ticks. MIT licence, see LICENSE.
//
// Each tick is encoded on the caller's thread into the current block
// buffer: leaves, joins, commands (changed fields only, against each
// character's previous command in the block) and the result's hashes. A
// block closes after REC_BLOCK_TICKS ticks or at a keyframe tick. Format 1
// keeps every tick's world hash among its commands; format 2 keeps the
// 16-bit hashes apart and ends the block with the world hash and check;
// format 3 also frames the block with varints and opens it with the
// keyframe at its first tick (compact records). The character set (ids,
// prev) stays in id order; a tick that does not match the scene after it
// fails the recording.
#include <stdlib.h>
#include <string.h>

#include "rec_writer_internal.h"

// Capacity to keep for a block of n characters (bytes a tick usually needs,
// times the ticks of a block); ticks that need more grow the buffer.
size_t rec_wr_block_reserve(uint32_t n)
{
    size_t per_tick = 32u + (size_t)n * 20u;
    size_t want = REC_BLOCK_PREFIX + per_tick * REC_BLOCK_TICKS;
    return want < ((size_t)8 << 20) ? want : ((size_t)8 << 20);
}

// ---- scene ticks -----------------------------------------------------------

// Format 3: the chunk is assembled here from its parts: the prefix
// varints, the keyframe section (when the block opens with one), the
// events' length and the events (`ev`, the buffer the ticks filled), the
// hashes and the trailer.
static void block_finish_v3(rec_writer *w, rec_item *ev)
{
    size_t need = REC_V3_PREFIX_MAX + 10 + w->key.size + 10 + ev->buf.size + w->hashes.size + REC_BLOCK_TRAILER;
    rec_item *it = rec_wr_item_take(w, REC_T_TBLK, need);
    if (it) {
        rec_put_var(&it->buf, w->block_first);
        rec_put_var(&it->buf, (uint64_t)w->block_count * 2u + (w->block_key ? REC_V3_KEY_FLAG : 0u));
        it->prefix = it->buf.size;
        it->size_field = false;
        if (w->block_key) {
            rec_put_var(&it->buf, w->key.size);
            rec_put_bytes(&it->buf, w->key.data, w->key.size);
        }
        rec_put_var(&it->buf, ev->buf.size);
        rec_put_bytes(&it->buf, ev->buf.data, ev->buf.size);
        rec_put_bytes(&it->buf, w->hashes.data, w->hashes.size);
        rec_put_u64(&it->buf, w->last_hash);
        rec_put_u64(&it->buf, w->check);
        rec_wr_item_submit(w, it);
    }
    rec_wr_item_give_back(w, ev);
}

// The block's substitutes, when it had any: a SUBS chunk right after it.
static void subs_finish(rec_writer *w)
{
    if (w->subs_count == 0)
        return;
    rec_item *it = rec_wr_item_take(w, REC_T_SUBS, 20 + w->subs.size);
    if (it) {
        it->compressible = false;
        rec_put_var(&it->buf, w->block_first);
        rec_put_var(&it->buf, w->subs_count);
        rec_put_bytes(&it->buf, w->subs.data, w->subs.size);
        rec_wr_item_submit(w, it);
    }
    w->subs.size = 0;
    w->subs_count = 0;
}

void rec_wr_block_finish(rec_writer *w)
{
    rec_item *it = w->cur;
    if (!it)
        return;
    w->cur = NULL;
    if (w->h.kind == REC_KIND_SCENE && w->h.format_version >= 3) {
        block_finish_v3(w, it);
        subs_finish(w);
        if (w->game)
            rec_wr_game_block(w, w->block_first, w->block_count);
        return;
    }
    rec_le32(it->buf.data, w->block_first);
    rec_le32(it->buf.data + 4, w->block_count);
    if (w->h.kind == REC_KIND_SCENE && w->h.format_version >= 2) {
        // events length, the events (already there), the hashes, the trailer
        rec_le32(it->buf.data + REC_BLOCK_PREFIX, (uint32_t)(it->buf.size - REC_BLOCK_PREFIX - 4));
        rec_put_bytes(&it->buf, w->hashes.data, w->hashes.size);
        rec_put_u64(&it->buf, w->last_hash);
        rec_put_u64(&it->buf, w->check);
    }
    rec_wr_item_submit(w, it);
    if (w->h.kind == REC_KIND_SCENE)
        subs_finish(w);
}

// Slot of `id` in the current set, or the insertion point with *found false.
static uint32_t set_find(const rec_writer *w, uint32_t id, bool *found)
{
    return rec_ids_find(w->ids, w->count, id, found);
}

static void put_command(rec_buf *b, uint32_t tick, const sim_input *in, sim_input *prev)
{
    uint32_t nf = 0;
    const rec_field *f = rec_command_fields(&nf);
    uint64_t mask = 0;
    if (in->tick != tick)
        mask |= REC_CMD_TICK_BIT;
    for (uint32_t i = 0; i < nf; i++)
        if (rec_command_get(in, i) != rec_command_get(prev, i))
            mask |= (uint64_t)1 << (i + 1);
    rec_put_var(b, mask);
    if (mask & REC_CMD_TICK_BIT)
        rec_put_svar(b, (int64_t)in->tick - (int64_t)tick);
    for (uint32_t i = 0; i < nf; i++) {
        if (!(mask & ((uint64_t)1 << (i + 1))))
            continue;
        int64_t v = rec_command_get(in, i);
        if (rec_command_field_is_angle(f[i].type, f[i].width))
            // A turning player changes its yaw by about the same amount every
            // tick: the wrapped difference repeats, and zstd takes repeats.
            rec_put_svar(b, rec_angle_delta(rec_command_get(prev, i), v));
        else
            rec_field_put(b, (uint8_t)f[i].type, f[i].width, v);
    }
    *prev = *in;
}

bool rec_writer_tick(rec_writer *w, const rec_tick *t, const sim_scene *after)
{
    if (!w || w->failed)
        return false;
    if (w->h.kind != REC_KIND_SCENE) {
        rec_wr_fail(w, "rec_writer_tick on a client recording");
        return false;
    }
    if (t->tick != w->next_tick) {
        rec_wr_fail(w, "tick %u recorded where tick %u was next", t->tick, w->next_tick);
        return false;
    }
    if (sim_scene_tick(after) != t->tick + 1u) {
        rec_wr_fail(w, "tick %u: the scene after it is at tick %u (expected %u)", t->tick, sim_scene_tick(after),
                    t->tick + 1u);
        return false;
    }
    if ((t->leave_count && !t->leaves) || (t->join_count && !t->joins) || (t->command_count && !t->commands)) {
        rec_wr_fail(w, "tick %u: a count without its array", t->tick);
        return false;
    }
    if (t->command_count > w->h.max_characters || t->join_count > w->h.max_characters ||
        t->leave_count > w->h.max_characters) {
        rec_wr_fail(w, "tick %u: more events than max_characters", t->tick);
        return false;
    }
    if (!w->cur) {
        w->cur = rec_wr_item_take(w, REC_T_TBLK, rec_wr_block_reserve(w->h.max_characters));
        if (!w->cur)
            return false;
        w->cur->buf.size = REC_BLOCK_PREFIX; // filled in by rec_wr_block_finish
        if (w->h.format_version >= 2)
            w->cur->buf.size += 4; // the events' length, likewise
        w->block_key = false;
        if (w->h.format_version >= 3) {
            w->cur->buf.size = 0; // the events only: block_finish_v3 puts the rest around them
            w->key.size = 0;
            w->block_key = w->key_pending;
            w->key_pending = false;
            if (w->block_key) {
                rec_put_var(&w->key, w->key_count);
                for (uint32_t i = 0; i < w->key_count; i++)
                    rec_state_encode_compact(&w->key, &w->key_states[i]);
                if (w->key.failed) {
                    rec_wr_fail(w, "out of memory");
                    return false;
                }
            }
        }
        w->hashes.size = 0;
        w->check = REC_CHECK_SEED;
        w->block_first = t->tick;
        w->block_count = 0;
        for (uint32_t i = 0; i < w->count; i++)
            memset(&w->prev[i], 0, sizeof w->prev[i]);
    }
    rec_buf *b = &w->cur->buf;
    size_t need = 64 + (size_t)t->leave_count * 5 + (size_t)t->join_count * 80 + (size_t)t->command_count * 20 +
                  (size_t)(w->count + t->join_count) * 2;
    if (!rec_buf_reserve(b, need)) {
        rec_wr_fail(w, "out of memory");
        return false;
    }

    // leaves
    rec_put_var(b, t->leave_count);
    for (uint32_t i = 0; i < t->leave_count; i++) {
        bool found;
        uint32_t at = set_find(w, t->leaves[i], &found);
        if (!found) {
            rec_wr_fail(w, "tick %u: leave of character %u, which is not in the scene", t->tick, t->leaves[i]);
            return false;
        }
        memmove(w->ids + at, w->ids + at + 1, (size_t)(w->count - at - 1) * sizeof *w->ids);
        memmove(w->prev + at, w->prev + at + 1, (size_t)(w->count - at - 1) * sizeof *w->prev);
        w->count--;
        rec_put_var(b, t->leaves[i]);
    }
    // joins
    rec_put_var(b, t->join_count);
    for (uint32_t i = 0; i < t->join_count; i++) {
        const sim_char_state *j = &t->joins[i];
        const char *why = NULL;
        bool found;
        uint32_t at = set_find(w, j->id, &found);
        if (j->id == 0 || (j->id & SIM_FEATURE_OBJECT_BIT) || found) {
            rec_wr_fail(w, "tick %u: join of character %u, which is 0, too large or already in the scene", t->tick,
                        j->id);
            return false;
        }
        if (!rec_char_check(w->h.format_version, j, &why)) {
            rec_wr_fail(w, "tick %u: joining character %u: %s", t->tick, j->id, why);
            return false;
        }
        if (w->count >= w->h.max_characters) {
            rec_wr_fail(w, "tick %u: more than max_characters (%u) characters", t->tick, w->h.max_characters);
            return false;
        }
        memmove(w->ids + at + 1, w->ids + at, (size_t)(w->count - at) * sizeof *w->ids);
        memmove(w->prev + at + 1, w->prev + at, (size_t)(w->count - at) * sizeof *w->prev);
        w->ids[at] = j->id;
        memset(&w->prev[at], 0, sizeof w->prev[at]);
        w->count++;
        if (!rec_wr_seen_add(w, j->id)) {
            rec_wr_fail(w, "out of memory");
            return false;
        }
        rec_state_encode(b, j);
    }
    // commands: one per character in id order needs no ids
    bool implicit = t->command_count == w->count;
    for (uint32_t i = 0; implicit && i < t->command_count; i++)
        implicit = t->commands[i].id == w->ids[i];
    rec_put_u8(b, implicit ? 0 : 1);
    if (implicit) {
        for (uint32_t i = 0; i < t->command_count; i++)
            put_command(b, t->tick, &t->commands[i].input, &w->prev[i]);
    } else {
        rec_put_var(b, t->command_count);
        uint32_t last = 0;
        for (uint32_t i = 0; i < t->command_count; i++) {
            uint32_t id = t->commands[i].id;
            bool found;
            uint32_t at = set_find(w, id, &found);
            if (!found || (i > 0 && id <= last)) {
                rec_wr_fail(w, "tick %u: command for character %u, %s", t->tick, id,
                            found ? "out of id order" : "which is not in the scene");
                return false;
            }
            rec_put_var(b, id - last);
            last = id;
            put_command(b, t->tick, &t->commands[i].input, &w->prev[at]);
        }
    }
    // the substitutes among them (checked against the set above)
    for (uint32_t i = 0; i < t->command_count; i++) {
        if (!t->commands[i].substituted)
            continue;
        if (!rec_buf_reserve(&w->subs, 10)) {
            rec_wr_fail(w, "out of memory");
            return false;
        }
        rec_put_var(&w->subs, t->tick - w->block_first);
        rec_put_var(&w->subs, t->commands[i].id);
        w->subs_count++;
    }
    // the result: the world hash and one short hash per character
    uint32_t n = 0;
    const sim_char_state *c = sim_scene_characters(after, &n);
    if (n != w->count) {
        rec_wr_fail(w, "tick %u: the scene after it has %u characters, the recorded events give %u", t->tick, n,
                    w->count);
        return false;
    }
    uint64_t hash = sim_scene_hash(after);
    bool v1 = w->h.format_version < 2;
    if (v1)
        rec_put_u64(b, hash); // format 1: every tick's world hash, among its commands
    rec_buf *hb = v1 ? b : &w->hashes;
    if (!rec_buf_reserve(hb, (size_t)n * 2)) {
        rec_wr_fail(w, "out of memory");
        return false;
    }
    w->check = rec_check_mix(w->check, n);
    for (uint32_t i = 0; i < n; i++) {
        if (c[i].id != w->ids[i]) {
            rec_wr_fail(w, "tick %u: the scene after it holds character %u where the recorded events give %u", t->tick,
                        c[i].id, w->ids[i]);
            return false;
        }
        uint64_t h64 = rec_char_hash64(&c[i]);
        w->check = rec_check_mix(w->check, h64);
        hb->data[hb->size++] = (uint8_t)h64;
        hb->data[hb->size++] = (uint8_t)(h64 >> 8);
    }
    if (w->game && !rec_wr_game_tick(w, t, hash))
        return false;
    if (!v1 && !rec_buf_reserve(b, REC_BLOCK_TRAILER + w->hashes.size)) {
        rec_wr_fail(w, "out of memory");
        return false;
    }
    if (b->failed) {
        rec_wr_fail(w, "out of memory");
        return false;
    }
    w->block_count++;
    w->ticks++;
    w->joins += t->join_count;
    w->leaves += t->leave_count;
    w->last_hash = hash;
    w->last_tick = t->tick;
    w->any_tick = true;
    w->next_tick = t->tick + 1u;

    uint32_t ki = w->h.keyframe_interval;
    bool keyframe = ki != 0 && w->next_tick % ki == 0;
    if (keyframe || w->block_count >= REC_BLOCK_TICKS)
        rec_wr_block_finish(w);
    if (keyframe) {
        for (uint32_t i = 0; i < n; i++) {
            const char *why = NULL;
            if (!rec_char_check(w->h.format_version, &c[i], &why)) {
                rec_wr_fail(w, "tick %u: character %u after it: %s", t->tick, c[i].id, why);
                return false;
            }
        }
        if (w->game)
            rec_wr_game_key(w, after);
        if (w->h.format_version >= 3) {
            // into the block that starts at its tick (or, when none follows,
            // a KEYF chunk of its own at close)
            memcpy(w->key_states, c, (size_t)n * sizeof *c);
            w->key_count = n;
            w->key_tick = w->next_tick;
            w->key_pending = true;
        } else {
            rec_wr_put_states_chunk(w, REC_T_KEYF, w->next_tick, c, n);
        }
    }
    return !w->failed;
}
