// keel recordings: the writer's chunks of a game (formats 4 and 5): GAME, GKEY and
// GCMD (rec.h); the output compresses the last two (GKYZ, GCMZ) when that
// pays, as it does tick blocks. MIT licence, see LICENSE.
#include <stdlib.h>
#include <string.h>

#include "rec_writer_internal.h"

void rec_wr_game_identity(rec_writer *w)
{
    rec_item *it = rec_wr_item_take(w, REC_T_GAME, 128);
    if (it) {
        rec_put_str(&it->buf, w->h.game_name);
        rec_put_u32(&it->buf, w->h.game_version);
        rec_put_u64(&it->buf, w->h.game_digest);
        rec_put_u32(&it->buf, w->h.game_command_bytes);
        rec_wr_item_submit(w, it);
    }
}

void rec_wr_game_open(rec_writer *w, const sim_scene *initial)
{
    rec_wr_game_identity(w);
    rec_wr_game_key(w, initial);
}

void rec_wr_game_key(rec_writer *w, const sim_scene *scene)
{
    size_t n = sim_scene_state_size(scene);
    rec_item *it = rec_wr_item_take(w, REC_T_GKEY, 4 + n);
    if (!it)
        return;
    it->prefix = 4; // the tick, then the saved scene (GKYZ: compressed, the frame declaring its size)
    it->size_field = false;
    it->compressible = w->h.format_version >= 5; // format 4 writes GKEY plain
    rec_put_u32(&it->buf, sim_scene_tick(scene));
    if (!rec_buf_reserve(&it->buf, n)) {
        rec_wr_item_give_back(w, it);
        rec_wr_fail(w, "out of memory");
        return;
    }
    sim_scene_save(scene, it->buf.data + it->buf.size);
    it->buf.size += n;
    rec_wr_item_submit(w, it);
}

bool rec_wr_game_tick(rec_writer *w, const rec_tick *t, uint64_t hash)
{
    uint32_t bytes = w->h.game_command_bytes;
    bool has = t->game_commands != NULL && bytes > 0 && t->command_count > 0;
    rec_buf *b = &w->game_ticks;
    if (w->block_count == 0)
        b->size = 0; // the block's first tick
    if (!rec_buf_reserve(b, 9 + (size_t)(has ? t->command_count : 0) * bytes)) {
        rec_wr_fail(w, "out of memory");
        return false;
    }
    rec_put_u64(b, hash);
    rec_put_u8(b, has ? 1 : 0);
    if (!has)
        return true;
    // Each packed command must be one the game takes (a replay applies it).
    for (uint32_t i = 0; i < t->command_count; i++) {
        sim_game_error e;
        const uint8_t *p = t->game_commands + (size_t)i * bytes;
        if (!sim_game_unpack_command(w->game, p, bytes, w->game_scratch, &e)) {
            rec_wr_fail(w, "tick %u: the game command of character %u is refused: %s%s%s", t->tick, t->commands[i].id,
                        e.reason, e.field[0] ? ", field " : "", e.field);
            return false;
        }
        rec_put_bytes(b, p, bytes);
    }
    return true;
}

void rec_wr_game_block(rec_writer *w, uint32_t first, uint32_t count)
{
    rec_item *it = rec_wr_item_take(w, REC_T_GCMD, 8 + w->game_ticks.size);
    if (!it)
        return;
    it->prefix = 8; // first tick and count, then the ticks (GCMZ: compressed)
    it->size_field = false;
    it->compressible = w->h.format_version >= 5; // format 4 writes GCMD plain
    rec_put_u32(&it->buf, first);
    rec_put_u32(&it->buf, count);
    rec_put_bytes(&it->buf, w->game_ticks.data, w->game_ticks.size);
    w->game_ticks.size = 0;
    rec_wr_item_submit(w, it);
}
