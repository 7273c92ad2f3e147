// keel client: recording the calls into the client library. MIT licence, see
// LICENSE.
#include <keel/cl_record.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>

/// Records held before the character is known; a client that is welcomed
/// needs 3 or 4 (hello, connect, welcome). Past this the file is started
/// with the character unknown (0).
#define CL_RECORD_HELD 64u

typedef struct held_record {
    rec_client_record r;
    uint8_t *data;                                    // a copy of r.data
    uint8_t game_command[SIM_GAME_COMMAND_MAX_BYTES]; // a copy of r.game_command
} held_record;

struct cl_record {
    char *path;
    rec_header header;
    rec_writer_config config;
    rec_writer *w;
    bool started; // the writer was opened (or failed to open)
    bool failed;
    rec_error error;
    uint32_t confirmed; // the confirmed tick last recorded
    uint64_t count;
    held_record held[CL_RECORD_HELD];
    uint32_t held_count;
};

rec_header cl_record_default_header(const cl_client *cl)
{
    rec_header h = rec_default_header();
    const sim_scene *scene = cl_client_predicted(cl);
    net_sim_identity id = cl_client_identity(cl);
    h.kind = REC_KIND_CLIENT;
    h.settings = *cl_client_settings(cl);
    h.settings_digest = id.settings_digest;
    h.level.kind = REC_LEVEL_BUILTIN;
    h.level.digest = id.level_digest;
    rec_header_set_scene(&h, scene); // platforms, water, the game's identity
    h.max_characters = sim_scene_capacity(scene);
    h.game = cl_client_config(cl)->game; // the writer checks each game command with it
    h.keyframe_interval = 0;             // a client recording holds calls, not states
    h.client_character = 0;
    h.client_prediction_cap = cl_client_config(cl)->prediction_cap;
    snprintf(h.source, sizeof h.source, "keel-client");
    return h;
}

static void set_error(rec_error *err, const char *message)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    snprintf(err->message, sizeof err->message, "%s", message);
}

cl_record *cl_record_open(const char *path, const rec_header *header, const rec_writer_config *config, rec_error *err)
{
    if (!path || !header || header->kind != REC_KIND_CLIENT) {
        set_error(err, "cl_record_open: a path and a client header (kind REC_KIND_CLIENT) are needed");
        return NULL;
    }
    // Create the file now so that a bad path fails here, not minutes later
    // when the writer opens it.
    FILE *probe = fopen(path, "wb");
    if (!probe) {
        if (err) {
            memset(err, 0, sizeof *err);
            snprintf(err->message, sizeof err->message, "cannot create %s", path);
        }
        return NULL;
    }
    fclose(probe);
    cl_record *r = calloc(1, sizeof *r);
    size_t n = strlen(path) + 1;
    char *copy = malloc(n);
    if (!r || !copy) {
        free(r);
        free(copy);
        set_error(err, "cl_record_open: out of memory");
        return NULL;
    }
    memcpy(copy, path, n);
    r->path = copy;
    r->header = *header;
    r->config = config ? *config : rec_default_writer_config();
    r->confirmed = NET_TICK_NONE;
    return r;
}

static void write_record(cl_record *r, const rec_client_record *rec)
{
    if (r->failed || !r->w)
        return;
    if (!rec_writer_client(r->w, rec)) {
        r->failed = true;
        snprintf(r->error.message, sizeof r->error.message, "the client recording failed (see its close)");
    }
}

// Open the writer with the character as now known, and write what was held.
static void start(cl_record *r, uint32_t character)
{
    if (r->started)
        return;
    r->started = true;
    r->header.client_character = character;
    r->w = rec_writer_open_client(r->path, &r->header, &r->config, &r->error);
    if (!r->w)
        r->failed = true;
    for (uint32_t i = 0; i < r->held_count; i++) {
        write_record(r, &r->held[i].r);
        free(r->held[i].data);
    }
    r->held_count = 0;
}

static void emit(cl_record *r, const rec_client_record *rec)
{
    r->count++;
    if (r->started) {
        write_record(r, rec);
        return;
    }
    if (r->held_count == CL_RECORD_HELD)
        start(r, 0);
    if (r->started) {
        write_record(r, rec);
        return;
    }
    held_record *h = &r->held[r->held_count];
    h->r = *rec;
    h->data = NULL;
    if (rec->length > 0) {
        h->data = malloc(rec->length);
        if (!h->data) {
            r->failed = true;
            snprintf(r->error.message, sizeof r->error.message, "out of memory holding a client record");
            return;
        }
        memcpy(h->data, rec->data, rec->length);
    }
    h->r.data = h->data;
    if (rec->game_command) {
        memcpy(h->game_command, rec->game_command, r->header.game_command_bytes);
        h->r.game_command = h->game_command;
    }
    r->held_count++;
}

// After every call: the confirmed tick if it changed, and the start of the
// file once the character is known (or will never be).
static void after_call(cl_record *r, cl_client *cl)
{
    uint32_t c = cl_client_confirmed_tick(cl);
    if (c != r->confirmed) {
        r->confirmed = c;
        rec_client_record rec;
        memset(&rec, 0, sizeof rec);
        rec.op = REC_CLIENT_CONFIRMED;
        rec.tick = c;
        rec.hash = sim_scene_hash(cl_client_confirmed(cl));
        emit(r, &rec);
    }
    cl_status st = cl_client_status(cl);
    if (!r->started && (cl_client_character(cl) != 0 || st == CL_STATUS_REFUSED || st == CL_STATUS_DISCONNECTED))
        start(r, cl_client_character(cl));
}

void cl_record_hello(cl_record *r, cl_client *cl, uint32_t now_ms)
{
    cl_client_hello(cl, now_ms);
    if (!r)
        return;
    rec_client_record rec;
    memset(&rec, 0, sizeof rec);
    rec.op = REC_CLIENT_HELLO;
    rec.now_ms = now_ms;
    emit(r, &rec);
    after_call(r, cl);
}

void cl_record_handle(cl_record *r, cl_client *cl, const net_event *ev, uint32_t now_ms)
{
    cl_client_handle(cl, ev, now_ms);
    if (!r)
        return;
    rec_client_record rec;
    memset(&rec, 0, sizeof rec);
    rec.op = REC_CLIENT_EVENT;
    rec.now_ms = now_ms;
    rec.event_type = (int32_t)ev->type;
    rec.channel = ev->channel;
    if (ev->type == NET_EVENT_RECEIVE && ev->data) {
        rec.data = ev->data;
        // Longer than any message a host delivers (NET_HOST_MAX_MESSAGE).
        rec.length = ev->length > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)ev->length;
    }
    emit(r, &rec);
    after_call(r, cl);
}

bool cl_record_predict(cl_record *r, cl_client *cl, const sim_input *command, uint32_t now_ms)
{
    return cl_record_predict_game(r, cl, command, NULL, now_ms);
}

bool cl_record_predict_game(cl_record *r, cl_client *cl, const sim_input *command, const void *game_command,
                            uint32_t now_ms)
{
    bool ok = cl_client_predict_game(cl, command, game_command, now_ms);
    if (!r)
        return ok;
    rec_client_record rec;
    memset(&rec, 0, sizeof rec);
    rec.op = REC_CLIENT_PREDICT;
    rec.now_ms = now_ms;
    rec.input = *command;
    rec.result = ok ? 1u : 0u;
    // The game command as the client packs it (what the replay unpacks and
    // gives again); one that does not pack was refused by the call.
    const sim_game *game = cl_client_config(cl)->game;
    uint8_t packed[SIM_GAME_COMMAND_MAX_BYTES];
    if (game && game_command) {
        if (sim_game_pack_command(game, game_command, packed, sizeof packed, NULL))
            rec.game_command = packed;
        else
            rec.game_refused = true;
    }
    emit(r, &rec);
    after_call(r, cl);
    return ok;
}

uint32_t cl_record_take_catch_up(cl_record *r, cl_client *cl)
{
    uint32_t n = cl_client_take_catch_up(cl);
    if (!r)
        return n;
    rec_client_record rec;
    memset(&rec, 0, sizeof rec);
    rec.op = REC_CLIENT_CATCH_UP;
    rec.result = n;
    emit(r, &rec);
    after_call(r, cl);
    return n;
}

bool cl_record_ok(const cl_record *r) { return r && !r->failed; }
uint64_t cl_record_count(const cl_record *r) { return r ? r->count : 0; }

bool cl_record_close(cl_record *r, rec_error *err)
{
    if (!r)
        return true;
    start(r, 0); // nothing said who we were: the file anyway
    bool ok = !r->failed;
    rec_error e = r->error;
    if (r->w) {
        rec_error we;
        memset(&we, 0, sizeof we);
        if (!rec_writer_close(r->w, &we)) {
            ok = false;
            e = we; // the writer's own account of what failed
        }
    }
    if (!ok && err)
        *err = e;
    free(r->path);
    free(r);
    return ok;
}
