// keel client: replaying a client recording, and comparing it with the
// server's. MIT licence, see LICENSE.
#include <keel/cl_replay.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/cl_client.h>
#include <keel/net_proto.h>
#include <keel/sim_hash.h>

static int bad_file(rec_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad_file(rec_error *err, const char *fmt, ...)
{
    if (err) {
        memset(err, 0, sizeof *err);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return REC_EXIT_BAD_FILE;
}

// The next client record: false at the end, and on a damaged record, which
// also makes *result REC_EXIT_BAD_FILE and *err (when given) say why.
static bool next_record(rec_cursor *cur, rec_client_record *rec, rec_error *err, int *result)
{
    rec_error cerr;
    memset(&cerr, 0, sizeof cerr);
    if (rec_cursor_next_client(cur, rec, &cerr))
        return true;
    if (cerr.message[0]) {
        if (err)
            *err = cerr;
        *result = REC_EXIT_BAD_FILE;
    }
    return false;
}

static void clear_div(rec_divergence *div)
{
    if (div)
        memset(div, 0, sizeof *div);
}

static const char *op_name(rec_client_op op)
{
    switch (op) {
    case REC_CLIENT_HELLO: return "hello";
    case REC_CLIENT_EVENT: return "event";
    case REC_CLIENT_PREDICT: return "predict";
    case REC_CLIENT_CATCH_UP: return "catch-up";
    case REC_CLIENT_CONFIRMED: return "confirmed";
    }
    return "?";
}

static bool same_vec(sim_vec3 a, sim_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

static bool same_platform(const sim_platform_def *a, const sim_platform_def *b)
{
    if (a->id != b->id || !same_vec(a->half, b->half) || a->point_count != b->point_count ||
        a->ticks_per_leg != b->ticks_per_leg || a->pause_ticks != b->pause_ticks)
        return false;
    for (uint32_t i = 0; i < a->point_count && i < SIM_PLATFORM_MAX_POINTS; i++)
        if (!same_vec(a->points[i], b->points[i]))
            return false;
    return true;
}

cl_client *cl_replay_client_create(const rec_header *h, const sim_world *world, const sim_level *level, net_host *host,
                                   rec_error *err)
{
    if (h->kind != REC_KIND_CLIENT) {
        bad_file(err, "not a client recording (kind %s)", h->kind == REC_KIND_SCENE ? "scene" : "unknown");
        return NULL;
    }
    if (!sim_move_settings_check(&h->settings, NULL)) {
        bad_file(err, "the recording's movement settings are invalid");
        return NULL;
    }
    if (net_level_digest(level) != h->level.digest) {
        bad_file(err, "the level given is not the recording's (its digest differs)");
        return NULL;
    }
    if (h->water_count != 0 || (h->platform_count != 0 && h->platform_count != 2)) {
        bad_file(err, "the recording's scene (platforms, water) is not one the client library makes");
        return NULL;
    }
    // The game it played: rec_file_set_game checked its identity.
    if (h->game_name[0] && !h->game) {
        bad_file(err, "the recording was made with game \"%s\" version %u: replaying it needs the game (--game)",
                 h->game_name, (unsigned)h->game_version);
        return NULL;
    }
    cl_config cc = cl_default_config();
    cc.game = h->game_name[0] ? h->game : NULL;
    if (h->client_prediction_cap != 0)
        cc.prediction_cap = h->client_prediction_cap;
    cc.platforms = h->platform_count != 0;
    cl_client *cl = cl_client_create(world, level, &h->settings, &cc, host);
    if (!cl) {
        bad_file(err, "cannot make a client with the recording's settings (prediction cap out of range?)");
        return NULL;
    }
    const sim_scene *s = cl_client_predicted(cl);
    bool same = sim_scene_platform_count(s) == h->platform_count;
    for (uint32_t i = 0; same && i < h->platform_count; i++)
        same = same_platform(sim_scene_platform(s, i), &h->platforms[i]);
    if (!same) {
        cl_client_destroy(cl);
        bad_file(err, "the recording's platforms are not the level's platform pair");
        return NULL;
    }
    return cl;
}

typedef struct replay {
    cl_client *cl;
    rec_divergence *div;
    uint64_t index; // of the record being replayed (0-based, CONFIRMED ones included)
} replay;

static int diverged(replay *r, uint32_t tick, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int diverged(replay *r, uint32_t tick, const char *fmt, ...)
{
    if (r->div) {
        memset(r->div, 0, sizeof *r->div);
        r->div->found = true;
        r->div->tick = tick;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->div->detail, sizeof r->div->detail, fmt, ap);
        va_end(ap);
    }
    return REC_EXIT_DIVERGED;
}

// A recorded predict call, with its game command unpacked again (the
// client packs it as the recorder did). A call whose game command did not
// pack was refused and changed nothing: it is not made.
static bool replay_predict(cl_client *cl, const rec_client_record *rec, uint32_t *value, rec_error *err)
{
    const sim_game *game = cl_client_config(cl)->game;
    if (!game || (!rec->game_command && !rec->game_refused)) {
        *value = cl_client_predict(cl, &rec->input, rec->now_ms);
        return true;
    }
    if (rec->game_refused) {
        *value = 0;
        return true;
    }
    union {
        uint8_t bytes[SIM_GAME_COMMAND_MAX_BYTES];
        uint64_t align;
    } command;
    sim_game_error e;
    if (!sim_game_unpack_command(game, rec->game_command, (sim_game_command_bits(game) + 7u) / 8u, command.bytes, &e)) {
        bad_file(err, "a predict record's game command is refused: %s%s%s", e.reason, e.field[0] ? ", field " : "",
                 e.field);
        return false;
    }
    *value = cl_client_predict_game(cl, &rec->input, command.bytes, rec->now_ms);
    return true;
}

bool cl_replay_apply(cl_client *cl, const rec_client_record *rec, uint32_t *returned, rec_error *err)
{
    uint32_t value = 0;
    switch (rec->op) {
    case REC_CLIENT_HELLO: cl_client_hello(cl, rec->now_ms); break;
    case REC_CLIENT_EVENT: {
        if (rec->event_type < NET_EVENT_CONNECT || rec->event_type > NET_EVENT_RECEIVE) {
            bad_file(err, "a client event record of unknown type");
            return false;
        }
        net_event ev;
        memset(&ev, 0, sizeof ev);
        ev.type = (net_event_type)rec->event_type;
        ev.peer = 0;
        ev.channel = rec->channel;
        ev.data = rec->data;
        ev.length = rec->length;
        cl_client_handle(cl, &ev, rec->now_ms);
        break;
    }
    case REC_CLIENT_PREDICT:
        if (!replay_predict(cl, rec, &value, err))
            return false;
        break;
    case REC_CLIENT_CATCH_UP: value = cl_client_take_catch_up(cl); break;
    case REC_CLIENT_CONFIRMED: break;
    default: bad_file(err, "a client record of unknown kind"); return false;
    }
    if (returned)
        *returned = value;
    return true;
}

int cl_replay_verify_stats(rec_file *f, const sim_world *world, const sim_level *level, rec_divergence *div,
                           cl_replay_stats *stats, rec_error *err)
{
    clear_div(div);
    cl_replay_stats st;
    memset(&st, 0, sizeof st);
    if (err)
        memset(err, 0, sizeof *err);
    const rec_header *h = rec_file_header(f);
    net_host *host = net_host_null();
    if (!host)
        return bad_file(err, "out of memory");
    cl_client *cl = cl_replay_client_create(h, world, level, host, err);
    if (!cl) {
        net_host_destroy(host);
        return REC_EXIT_BAD_FILE;
    }
    rec_info info;
    rec_file_info(f, &info);
    rec_error cerr;
    memset(&cerr, 0, sizeof cerr);
    rec_cursor *cur = rec_cursor_create(f, info.first_tick, &cerr);
    int result = REC_EXIT_MATCH;
    if (!cur) {
        if (err)
            *err = cerr;
        result = REC_EXIT_BAD_FILE;
    }
    replay r = {cl, div, 0};
    uint32_t confirmed = cl_client_confirmed_tick(cl);
    bool changed = false; // the replay's confirmed tick moved since the last CONFIRMED record
    rec_client_record rec;
    for (; cur && result == REC_EXIT_MATCH; r.index++) {
        if (!next_record(cur, &rec, err, &result))
            break;
        if (rec.op == REC_CLIENT_CONFIRMED) {
            uint32_t got = cl_client_confirmed_tick(cl);
            uint64_t hash = sim_scene_hash(cl_client_confirmed(cl));
            if (!changed)
                result = diverged(&r, rec.tick,
                                  "record %" PRIu64 ": the recording confirms tick %u (hash %016" PRIx64
                                  ") where the replay's confirmed tick stayed at %u",
                                  r.index, rec.tick, rec.hash, got);
            else if (got != rec.tick || hash != rec.hash)
                result = diverged(&r, rec.tick,
                                  "record %" PRIu64 ": confirmed tick %u hash %016" PRIx64
                                  " in the recording, the replay confirmed tick %u hash %016" PRIx64,
                                  r.index, rec.tick, rec.hash, got, hash);
            changed = false;
            st.confirmed++;
            continue;
        }
        if (changed) {
            result = diverged(&r, confirmed,
                              "record %" PRIu64 " (%s): the replay confirmed tick %u (hash %016" PRIx64
                              ") after the call before it, the recording nothing",
                              r.index, op_name(rec.op), confirmed, sim_scene_hash(cl_client_confirmed(cl)));
            break;
        }
        st.records++;
        uint32_t p = cl_client_predicted_tick(cl), returned = 0;
        if (!cl_replay_apply(cl, &rec, &returned, err)) {
            result = REC_EXIT_BAD_FILE;
            break;
        }
        if (rec.op == REC_CLIENT_PREDICT) {
            st.predicted += returned;
            if (returned != rec.result)
                result = diverged(&r, p,
                                  "record %" PRIu64 ": predict of tick %u at %u ms returned %u in the recording, "
                                  "%u in the replay (confirmed tick %u)",
                                  r.index, p, rec.now_ms, rec.result, returned, cl_client_confirmed_tick(cl));
        } else if (rec.op == REC_CLIENT_CATCH_UP && returned != rec.result) {
            result = diverged(&r, cl_client_predicted_tick(cl),
                              "record %" PRIu64 ": take_catch_up returned %u in the recording, %u in the replay "
                              "(predicted tick %u)",
                              r.index, rec.result, returned, cl_client_predicted_tick(cl));
        }
        uint32_t now = cl_client_confirmed_tick(cl);
        if (now != confirmed) {
            confirmed = now;
            changed = true;
        }
    }
    // The last call's confirmed record is missing only from a file cut short.
    if (result == REC_EXIT_MATCH && changed && info.complete)
        result =
            diverged(&r, confirmed,
                     "after the last record the replay confirmed tick %u (hash %016" PRIx64 "), the recording nothing",
                     confirmed, sim_scene_hash(cl_client_confirmed(cl)));
    if (cur)
        rec_cursor_destroy(cur);
    cl_client_destroy(cl);
    net_host_destroy(host);
    if (stats)
        *stats = st;
    return result;
}

int cl_replay_verify(rec_file *f, const sim_world *world, const sim_level *level, rec_divergence *div, rec_error *err)
{
    return cl_replay_verify_stats(f, world, level, div, NULL, err);
}

// ---- client against server -------------------------------------------------------------

int cl_replay_compare_server(rec_file *client, rec_file *server, uint64_t *compared, rec_divergence *div,
                             rec_error *err)
{
    clear_div(div);
    if (err)
        memset(err, 0, sizeof *err);
    if (compared)
        *compared = 0;
    const rec_header *ch = rec_file_header(client), *sh = rec_file_header(server);
    if (ch->kind != REC_KIND_CLIENT || sh->kind != REC_KIND_SCENE)
        return bad_file(err, "compare a client recording with a scene (server) recording");
    if (ch->settings_digest != sh->settings_digest || ch->level.digest != sh->level.digest)
        return bad_file(err, "the two recordings are of different simulations (%s differ)",
                        ch->settings_digest != sh->settings_digest ? "settings" : "levels");
    if (strcmp(ch->game_name, sh->game_name) != 0 || ch->game_version != sh->game_version ||
        ch->game_digest != sh->game_digest)
        return bad_file(err,
                        "the two recordings are of different games (the client's \"%s\" version %u, the server's "
                        "\"%s\" version %u)",
                        ch->game_name[0] ? ch->game_name : "none", (unsigned)ch->game_version,
                        sh->game_name[0] ? sh->game_name : "none", (unsigned)sh->game_version);
    // The server's world hash of every scene tick it recorded (format 2: of
    // each tick block's last tick; known[] says which): after tick t the
    // scene is at t + 1.
    rec_info si;
    rec_file_info(server, &si);
    uint32_t base = si.first_tick + 1u;
    uint64_t *hashes = calloc((size_t)si.tick_count + 1u, sizeof *hashes);
    bool *known = calloc((size_t)si.tick_count + 1u, sizeof *known);
    if (!hashes || !known) {
        free(hashes);
        free(known);
        return bad_file(err, "out of memory");
    }
    uint32_t have = 0;
    rec_error cerr;
    memset(&cerr, 0, sizeof cerr);
    rec_cursor *cur = rec_cursor_create(server, si.first_tick, &cerr);
    int result = REC_EXIT_MATCH;
    rec_tick t;
    while (cur && have < si.tick_count && rec_cursor_next(cur, &t, &cerr)) {
        if (t.tick + 1u != base + have) {
            snprintf(cerr.message, sizeof cerr.message, "the server recording's ticks are not consecutive");
            break;
        }
        known[have] = t.has_world_hash;
        hashes[have++] = t.world_hash;
    }
    if (!cur || cerr.message[0]) {
        if (err)
            *err = cerr;
        result = REC_EXIT_BAD_FILE;
    }
    if (cur)
        rec_cursor_destroy(cur);
    cur = NULL;
    if (result == REC_EXIT_MATCH) {
        rec_info ci;
        rec_file_info(client, &ci);
        cur = rec_cursor_create(client, ci.first_tick, &cerr);
        if (!cur) {
            if (err)
                *err = cerr;
            result = REC_EXIT_BAD_FILE;
        }
    }
    rec_client_record rec;
    uint64_t n = 0;
    while (cur && result == REC_EXIT_MATCH) {
        if (!next_record(cur, &rec, err, &result))
            break;
        if (rec.op != REC_CLIENT_CONFIRMED || rec.tick == NET_TICK_NONE || rec.tick < base || rec.tick - base >= have ||
            !known[rec.tick - base])
            continue;
        n++;
        uint64_t want = hashes[rec.tick - base];
        if (want != rec.hash && div) {
            div->found = true;
            div->tick = rec.tick;
            snprintf(div->detail, sizeof div->detail,
                     "tick %u: the server's world hash %016" PRIx64 ", the client's confirmed hash %016" PRIx64,
                     rec.tick, want, rec.hash);
        }
        if (want != rec.hash)
            result = REC_EXIT_DIVERGED;
    }
    if (cur)
        rec_cursor_destroy(cur);
    free(hashes);
    free(known);
    if (compared)
        *compared = n;
    return result;
}
