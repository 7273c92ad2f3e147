// keel-client: noticing that the process itself stopped (SIGSTOP, a starved
// CPU, a laptop lid) and reporting how each bot recovered. MIT licence, see
// LICENSE.
//
// The main loop calls stall_watch_frame every round with the real clock. A
// round that starts more than STALL_MIN_US after the previous one is a stop
// of that length; from then on, each playing bot's recovery is followed on
// the times this process measures: how long until its confirmed tick moves
// past the one it held when it stopped, how long until it is predicting again,
// and the full states and payload bytes it received from the moment it woke
// until 2 s later. One JSON line per bot and stop goes to stderr then:
//   {"stall":1,"bot":B,"stopped_s":S,"confirmed_after_s":C,"predicting_after_s":P,
//    "full_states":F,"recovery_payload_bytes":N,"hash_mismatches":H}
// (C and P are -1 when it did not happen within the 2 s). A stop that ends
// while a longer one's recovery is followed (a busy machine starving the
// process again just after it woke) is counted but not reported on its own:
// it is part of that recovery. A longer one replaces the one followed.
#ifndef KEEL_CLIENT_STALL_H
#define KEEL_CLIENT_STALL_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/cl_client.h>
#include <keel/net_host.h>

#define STALL_MIN_US 200000u
#define STALL_FOLLOW_US 2000000u

typedef struct stall_watch {
    bool following;
    uint64_t woke_us, stopped_us;
    uint32_t held_tick;         // confirmed tick when it stopped
    uint64_t predicted_at_stop; // cl_stats.predicted_ticks then
    int64_t confirmed_after_us, predicting_after_us;
    uint64_t full_states, payload, mismatches; // at waking
    uint64_t stalls;                           // stops seen
} stall_watch;

typedef struct stall_clock {
    uint64_t last_round_us; // 0 before the first round
    uint64_t stopped_us;    // the stop that ended at this round, 0 if none
} stall_clock;

/// Once per round of the main loop, before the bots run: whether the process
/// just woke from a stop (clock->stopped_us says how long).
bool stall_clock_round(stall_clock *clock, uint64_t now_us);
/// For each bot before it runs a round that woke from a stop: its figures then.
void stall_watch_wake(stall_watch *w, const stall_clock *clock, uint64_t now_us, const cl_client *cl,
                      const net_host *host);
/// For each bot after it ran a round: follows a recovery and reports it.
void stall_watch_after(stall_watch *w, uint32_t bot, uint64_t now_us, const cl_client *cl, const net_host *host);

#endif
