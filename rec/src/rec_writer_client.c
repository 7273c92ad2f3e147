// keel recordings: the writer's client records. MIT licence, see LICENSE.
//
// A client recording's records (hello, packets, predictions, catch-ups,
// confirmed hashes) go into CLOG blocks on the caller's thread, each time
// relative to the block's previous record; a block closes once it holds
// REC_CLIENT_BLOCK_BYTES. With a game (format 4 and later) a PREDICT record ends with
// the call's packed game command.
#include "rec_writer_internal.h"

// A PREDICT record's game command (a client recording with a game): u8 0
// (none given), 1 and the packed command, or 2 (it did not pack: refused).
static bool client_game_command(rec_writer *w, rec_buf *b, const rec_client_record *r)
{
    uint32_t bytes = w->h.game_command_bytes;
    if (r->game_refused) {
        rec_put_u8(b, 2);
        return true;
    }
    if (!r->game_command || bytes == 0) {
        rec_put_u8(b, 0);
        return true;
    }
    sim_game_error e;
    if (!sim_game_unpack_command(w->game, r->game_command, bytes, w->game_scratch, &e)) {
        rec_wr_fail(w, "client record %u: the game command is refused: %s%s%s", w->client_records, e.reason,
                    e.field[0] ? ", field " : "", e.field);
        return false;
    }
    rec_put_u8(b, 1);
    rec_put_bytes(b, r->game_command, bytes);
    return true;
}

bool rec_writer_client(rec_writer *w, const rec_client_record *r)
{
    if (!w || w->failed)
        return false;
    if (w->h.kind != REC_KIND_CLIENT) {
        rec_wr_fail(w, "rec_writer_client on a scene recording");
        return false;
    }
    if (r->op < REC_CLIENT_HELLO || r->op > REC_CLIENT_CONFIRMED) {
        rec_wr_fail(w, "client record %u: unknown op %d", w->client_records, (int)r->op);
        return false;
    }
    if (r->op == REC_CLIENT_EVENT && r->length && !r->data) {
        rec_wr_fail(w, "client record %u: a packet length without data", w->client_records);
        return false;
    }
    if (!w->cur) {
        w->cur = rec_wr_item_take(w, REC_T_CLOG, REC_CLIENT_BLOCK_BYTES + 256);
        if (!w->cur)
            return false;
        w->cur->buf.size = REC_BLOCK_PREFIX;
        w->block_first = w->client_records;
        w->block_count = 0;
        w->block_prev_ms = 0;
    }
    rec_buf *b = &w->cur->buf;
    rec_put_u8(b, (uint8_t)r->op);
    rec_put_svar(b, (int64_t)r->now_ms - (int64_t)w->block_prev_ms);
    w->block_prev_ms = r->now_ms;
    switch (r->op) {
    case REC_CLIENT_HELLO: break;
    case REC_CLIENT_EVENT:
        rec_put_svar(b, r->event_type);
        rec_put_u8(b, r->channel);
        rec_put_var(b, r->length);
        rec_put_bytes(b, r->data, r->length);
        break;
    case REC_CLIENT_PREDICT: {
        uint32_t nf = 0;
        const rec_field *f = rec_command_fields(&nf);
        rec_put_var(b, r->input.tick);
        for (uint32_t i = 0; i < nf; i++)
            rec_field_put(b, (uint8_t)f[i].type, f[i].width, rec_command_get(&r->input, i));
        rec_put_var(b, r->result);
        if (w->game && !client_game_command(w, b, r))
            return false;
        break;
    }
    case REC_CLIENT_CATCH_UP: rec_put_var(b, r->result); break;
    case REC_CLIENT_CONFIRMED:
        rec_put_var(b, r->tick);
        rec_put_u64(b, r->hash);
        break;
    }
    if (b->failed) {
        rec_wr_fail(w, "out of memory");
        return false;
    }
    w->client_records++;
    w->block_count++;
    if (b->size >= REC_CLIENT_BLOCK_BYTES)
        rec_wr_block_finish(w);
    return !w->failed;
}
