// keel-play: a client recording re-run on the client library for viewing
// (see playback.h). MIT licence, see LICENSE.
//
// Invariants: r->cl is the client after r->records calls of the file, made
// in order through r->cur; r->view is its predicted scene. A seek back
// starts over from the first call (a client recording has no keyframes).
// The first pass (at open) runs the whole file to find the range of
// predicted ticks and the own mispredictions, then starts over.
#include <stdio.h>
#include <string.h>

#include <keel/cl_client.h>
#include <keel/cl_replay.h>
#include <keel/net_host.h>

#include "playback.h"

static void stop(kp_run *r)
{
    if (r->cur)
        rec_cursor_destroy(r->cur);
    if (r->cl)
        cl_client_destroy(r->cl);
    if (r->host)
        net_host_destroy(r->host);
    r->cur = NULL;
    r->cl = NULL;
    r->host = NULL;
    r->view = NULL;
    r->records = 0;
}

// Playing: a character and the first full state in (the predicted scene
// before that is an empty one at tick 0).
static bool playing(const kp_run *r)
{
    return r->cl && cl_client_character(r->cl) && cl_client_status(r->cl) >= CL_STATUS_PLAYING;
}

// A fresh client before the first call.
static bool restart(kp_run *r)
{
    stop(r);
    rec_error err;
    memset(&err, 0, sizeof err);
    r->host = net_host_null();
    r->cl = r->host ? cl_replay_client_create(r->h, r->world, r->level, r->host, &err) : NULL;
    r->cur = r->cl ? rec_cursor_create(r->f, r->info.first_tick, &err) : NULL;
    if (!r->cur) {
        if (!r->host)
            snprintf(err.message, sizeof err.message, "out of memory");
        replay_print_error(r->file, &err);
        stop(r);
        return false;
    }
    r->view = cl_client_predicted(r->cl);
    return true;
}

// The next call; false at the end (fault: *fault set, message printed).
static bool next(kp_run *r, bool *fault)
{
    rec_error err;
    memset(&err, 0, sizeof err);
    rec_client_record rec;
    *fault = false;
    if (!rec_cursor_next_client(r->cur, &rec, &err) || !cl_replay_apply(r->cl, &rec, NULL, &err)) {
        if (err.message[0]) {
            replay_print_error(r->file, &err);
            *fault = true;
        }
        return false;
    }
    r->records++;
    return true;
}

int kp_run_client_open(kp_run *r)
{
    if (!restart(r))
        return REC_EXIT_BAD_FILE;
    // The first pass: the tick range, and a marker per own misprediction.
    bool fault = false, started = false;
    uint64_t seen[CL_CAUSE_COUNT] = {0};
    while (next(r, &fault)) {
        uint32_t t = cl_client_predicted_tick(r->cl);
        if (!playing(r) || t == NET_TICK_NONE)
            continue;
        if (!started)
            r->first = t, started = true;
        if (t > r->last)
            r->last = t;
        cl_stats st;
        cl_client_stats(r->cl, &st);
        for (int c = 0; c < CL_CAUSE_COUNT; c++)
            for (; seen[c] < st.own_mispredictions[c]; seen[c]++)
                kp_run_add_marker(r, t, cl_client_character(r->cl), (kp_marker_kind)(KP_MARK_MISS_SUBSTITUTED + c));
    }
    memcpy(r->own_mispredictions, seen, sizeof seen);
    if (fault || !started) {
        if (!fault)
            fprintf(stderr, "keel-play: %s: the client never played (no character in the recording)\n", r->file);
        return REC_EXIT_BAD_FILE;
    }
    if (!r->info.complete)
        fprintf(stderr, "keel-play: %s: truncated at offset %llu (no end chunk): showing the readable calls\n", r->file,
                (unsigned long long)r->info.truncated_at);
    return kp_run_client_seek(r, r->first) ? 0 : REC_EXIT_BAD_FILE;
}

void kp_run_client_close(kp_run *r) { stop(r); }

bool kp_run_client_seek(kp_run *r, uint32_t tick)
{
    if (tick < r->first)
        tick = r->first;
    if (tick > r->last)
        tick = r->last;
    if ((!playing(r) || kp_run_tick(r) > tick) && !restart(r))
        return false;
    bool fault = false;
    while (!playing(r) || kp_run_tick(r) < tick)
        if (!next(r, &fault))
            return !fault;
    return true;
}

bool kp_run_client_step(kp_run *r)
{
    uint32_t t = kp_run_tick(r);
    if (t >= r->last)
        return false;
    return kp_run_client_seek(r, t + 1u);
}
