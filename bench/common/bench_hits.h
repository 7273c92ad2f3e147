// keel benchmark: hit agreement -- whether the server confirms what a
// shooter's client showed of its own rail shots (keel-arena). Shared by
// bench_hits and tests/games/arena_lag.c. MIT licence, see LICENSE.
//
// A client shows a shot as it predicts the tick it fires in: the rail fired
// when its interval restarted, and hit when its own hit count rose in the
// predicted scene (the hit marker). After each server tick the server's
// scene says the same of every shooter; the two are compared tick by tick.
#ifndef KEEL_BENCH_HITS_H
#define KEEL_BENCH_HITS_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/cl_client.h>
#include <keel/sv_server.h>

#define HITS_MAX_CLIENTS 32u
#define HITS_RING 256u

typedef struct hits_tally {
    uint64_t shown_hits, hits_confirmed;     ///< shots shown as hits; of them, hits on the server too
    uint64_t shown_misses, misses_confirmed; ///< shown as misses; of them, misses on the server too
    uint64_t unfired; ///< shots shown that the server did not fire (the command came late or not at all)
} hits_tally;

typedef struct hits_shot {
    uint32_t tick; ///< NET_TICK_NONE: none
    uint8_t fired, hit;
} hits_shot;

typedef struct hits_watch {
    uint32_t clients;
    int32_t rail_interval; ///< the game's (a shot restarts it)
    hits_shot shown[HITS_MAX_CLIENTS][HITS_RING];
    uint32_t before_tick[HITS_MAX_CLIENTS];
    uint16_t before_hits[HITS_MAX_CLIENTS];
    uint16_t server_hits[HITS_MAX_CLIENTS];
    bool server_seen[HITS_MAX_CLIENTS];
    hits_tally tally;
} hits_watch;

void hits_watch_init(hits_watch *w, uint32_t clients, int32_t rail_interval);
/// Around each cl_client_predict_game of client i.
void hits_before_predict(hits_watch *w, uint32_t i, const cl_client *cl);
void hits_after_predict(hits_watch *w, uint32_t i, const cl_client *cl);
/// After each server tick.
void hits_after_server_tick(hits_watch *w, const sv_server *sv, cl_client *const *cls);

#endif
