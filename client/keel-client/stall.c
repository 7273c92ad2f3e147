// keel-client: noticing that the process stopped, and each bot's recovery
// (stall.h). MIT licence, see LICENSE.
#include "stall.h"

#include <stdio.h>

bool stall_clock_round(stall_clock *clock, uint64_t now_us)
{
    bool woke = clock->last_round_us != 0 && now_us - clock->last_round_us > STALL_MIN_US;
    clock->stopped_us = woke ? now_us - clock->last_round_us : 0;
    clock->last_round_us = now_us;
    return woke;
}

void stall_watch_wake(stall_watch *w, const stall_clock *clock, uint64_t now_us, const cl_client *cl,
                      const net_host *host)
{
    if (cl_client_status(cl) != CL_STATUS_PLAYING)
        return;
    w->stalls++;
    // A shorter stop while a recovery is followed (a starved CPU just after
    // waking) is part of that recovery: the longer stop keeps its report.
    if (w->following && clock->stopped_us <= w->stopped_us)
        return;
    cl_stats s;
    cl_client_stats(cl, &s);
    net_host_stats hs;
    net_host_stats_get(host, &hs);
    w->following = true;
    w->woke_us = now_us;
    w->stopped_us = clock->stopped_us;
    w->held_tick = cl_client_confirmed_tick(cl);
    w->predicted_at_stop = s.predicted_ticks;
    w->confirmed_after_us = w->predicting_after_us = -1;
    w->full_states = s.full_states;
    w->mismatches = s.hash_mismatches;
    w->payload = hs.payload_received;
}

void stall_watch_after(stall_watch *w, uint32_t bot, uint64_t now_us, const cl_client *cl, const net_host *host)
{
    if (!w->following)
        return;
    cl_stats s;
    cl_client_stats(cl, &s);
    uint32_t c = cl_client_confirmed_tick(cl);
    if (w->confirmed_after_us < 0 && c != NET_TICK_NONE && (w->held_tick == NET_TICK_NONE || c > w->held_tick))
        w->confirmed_after_us = (int64_t)(now_us - w->woke_us);
    if (w->predicting_after_us < 0 && s.predicted_ticks > w->predicted_at_stop + 1u)
        w->predicting_after_us = (int64_t)(now_us - w->woke_us);
    if (now_us - w->woke_us < STALL_FOLLOW_US)
        return;
    net_host_stats hs;
    net_host_stats_get(host, &hs);
    fprintf(stderr,
            "{\"stall\":1,\"bot\":%u,\"stopped_s\":%.3f,\"confirmed_after_s\":%.3f,\"predicting_after_s\":%.3f,"
            "\"full_states\":%llu,\"recovery_payload_bytes\":%llu,\"hash_mismatches\":%llu}\n",
            bot, (double)w->stopped_us / 1e6, w->confirmed_after_us < 0 ? -1.0 : (double)w->confirmed_after_us / 1e6,
            w->predicting_after_us < 0 ? -1.0 : (double)w->predicting_after_us / 1e6,
            (unsigned long long)(s.full_states - w->full_states),
            (unsigned long long)(hs.payload_received - w->payload),
            (unsigned long long)(s.hash_mismatches - w->mismatches));
    w->following = false;
}
