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

#include "arena.h"

#define HITS_MAX_CLIENTS 32u
#define HITS_RING 256u

/// Shots whose view lag (T - C when the client fired) was within the bound,
/// and apart those beyond it.
typedef struct hits_tally {
    uint64_t shown_hits, hits_confirmed;     ///< shots shown as hits; of them, hits on the server too
    uint64_t shown_misses, misses_confirmed; ///< shown as misses; of them, misses on the server too
    uint64_t unfired;               ///< shots shown that the server did not fire (the command came late or not at all)
    uint64_t beyond, beyond_agreed; ///< shots beyond the bound; of them, the server's outcome the one shown
} hits_tally;

typedef struct hits_shot {
    uint32_t tick; ///< NET_TICK_NONE: none
    uint32_t lag;  ///< T - C as the client predicted it
    uint8_t fired, hit;
} hits_shot;

typedef struct hits_watch {
    uint32_t clients;
    int32_t rail_interval; ///< the game's (a shot restarts it)
    uint32_t bound_ticks;  ///< shots with a larger view lag count as beyond the bound
    hits_shot shown[HITS_MAX_CLIENTS][HITS_RING];
    uint32_t before_tick[HITS_MAX_CLIENTS], before_lag[HITS_MAX_CLIENTS];
    uint16_t before_hits[HITS_MAX_CLIENTS];
    uint16_t server_hits[HITS_MAX_CLIENTS];
    bool server_seen[HITS_MAX_CLIENTS];
    hits_tally tally;
} hits_watch;

/// The game the measurement runs: keel-arena with a rail that fires every 24
/// ticks and does 1 point of 200, and no spawn protection: a shot's outcome
/// rests on where the characters are, which is what lag compensation is
/// about. (A death would couple the shots: a shooter's client predicts the
/// others' shots from their last commands, so it may see a target die that
/// the server keeps alive. bench_hits counts the deaths; its default run
/// has none.)
arena_settings hits_arena_settings(void);
/// A shooter's aim: at a point beside the nearest other character of its
/// client's predicted scene, up to 0.6 m either side of its centre (drawn
/// from `salt`: a mix of hits and misses, many near a body's edge); pitch
/// level.
void hits_aim(const cl_client *cl, uint32_t salt, sim_input *in);

void hits_watch_init(hits_watch *w, uint32_t clients, int32_t rail_interval, uint32_t bound_ticks);
/// Around each cl_client_predict_game of client i.
void hits_before_predict(hits_watch *w, uint32_t i, const cl_client *cl);
void hits_after_predict(hits_watch *w, uint32_t i, const cl_client *cl);
/// After each server tick.
void hits_after_server_tick(hits_watch *w, const sv_server *sv, cl_client *const *cls);

#endif
