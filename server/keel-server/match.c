// keel-server: the match lifecycle around the tick loop (--agones,
// --match-seconds, --empty-seconds; docs/operations.md, "Agones"). MIT
// licence, see LICENSE.
//
// Before the tick loop, with --agones, match_begin starts the SDK thread
// (agones.c) and waits for the sidecar to accept Ready: the socket already
// listens but is not serviced, so no player joins before Agones knows the
// server is Ready (their connection attempts wait in the socket's queue).
// After each tick, match_after_tick decides whether the run is over; it only
// reads atomics and counts ticks, so it never waits. The match clock of
// --match-seconds starts when the GameServer is Allocated (with --agones) or
// at the first tick (without); --empty-seconds ends a run that had players
// once they have all been gone that long; --join-seconds ends a match that
// no player joined within that long of its start. All three count ticks, so a stalled
// loop does not shorten a match. match_end asks Agones to shut the
// GameServer down when the server ended on its own (not on a signal: then
// Kubernetes is stopping it already) and prints what the SDK thread did.
//
// The test hook --test-stall-after-ticks N --test-stall-seconds S stops the
// tick loop once, after tick N, for S seconds (health pings and /healthz
// must notice); it prints the wall-clock (CLOCK_REALTIME) edges of the stall
// so a test can compare them with the sidecar's log.
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keel_app.h"
#include "keel_server.h"

static uint64_t realtime_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// A duration (milliseconds) in ticks at `rate`, rounded up: never early.
static uint64_t ms_ticks(uint64_t ms, uint32_t rate) { return (ms * rate + 999u) / 1000u; }

static uint32_t players(const sv_server *sv)
{
    sv_stats s;
    sv_server_stats(sv, &s);
    return s.clients;
}

void match_publish(const match *m, metrics_snapshot *ms)
{
    ms->agones = m->sdk != NULL;
    if (!m->sdk)
        return;
    ms->agones_state = agones_state(m->sdk);
    agones_get_counts(m->sdk, &ms->agones_counts);
}

bool match_begin(match *m, const options *o, sv_server *sv, FILE *text, volatile sig_atomic_t *stop, metrics *mx,
                 metrics_snapshot *ms)
{
    memset(m, 0, sizeof *m);
    m->o = o;
    m->text = text;
    ms->ready = !o->agones;
    if (!o->agones)
        return true;
    // The simulation's identity as a label value: protocol, behaviour, tick
    // rate and one digest of the settings, level and scene.
    net_sim_identity id = sv_server_identity(sv);
    uint64_t digest = id.settings_digest ^ (id.level_digest * 31u) ^ (id.scene_digest * 961u);
    char label[64];
    snprintf(label, sizeof label, "p%u-b%u-%uhz-%016" PRIx64, (unsigned)NET_PROTOCOL_VERSION,
             (unsigned)id.behaviour_version, (unsigned)id.tick_rate, digest);
    m->sdk = agones_start(label);
    if (!m->sdk)
        return false;
    fprintf(text, "keel-server: agones: waiting for the SDK sidecar to accept Ready (keel-sim=%s)\n", label);
    fflush(text);
    while (!agones_ready(m->sdk) && !*stop) {
        if (agones_ready_failed(m->sdk)) {
            fprintf(stderr,
                    "keel-server: agones: the SDK sidecar did not accept Ready within %u s "
                    "(AGONES_SDK_HTTP_PORT=%s)\n",
                    AGONES_READY_TIMEOUT_MS / 1000u,
                    getenv("AGONES_SDK_HTTP_PORT") ? getenv("AGONES_SDK_HTTP_PORT") : "");
            agones_stop(m->sdk, NULL);
            m->sdk = NULL;
            return false;
        }
        // alive (/healthz: liveness does not depend on the sidecar), not ready (/readyz 503)
        ms->alive_us = keel_app_now_us();
        match_publish(m, ms);
        metrics_publish(mx, ms);
        keel_app_sleep_until_us(keel_app_now_us() + 20000u);
    }
    if (*stop)
        return true;  // signalled while waiting: the loop ends at once and drains
    ms->ready = true; // /readyz 200 from the next publication on
    agones_counts c;
    agones_get_counts(m->sdk, &c);
    fprintf(text, "keel-server: agones: Ready accepted after %" PRIu64 " tries; players may join; the match %s\n",
            c.ready_tries,
            o->match_ms ? "clock starts when the GameServer is Allocated" : "has no time limit (--match-seconds)");
    if (o->stats_json)
        printf("{\"event\":\"agones_ready\",\"tries\":%" PRIu64 ",\"clients\":%u}\n", c.ready_tries, players(sv));
    fflush(NULL);
    return true;
}

const char *match_after_tick(match *m, uint64_t k, const sv_server *sv)
{
    const options *o = m->o;
    uint32_t n = 0;
    if (m->sdk || o->empty_ms || o->join_ms) {
        n = players(sv);
        agones_tick(m->sdk, keel_app_now_us(), n);
    }
    if (!m->started && agones_allocated(m->sdk)) {
        m->started = true;
        m->start_tick = k;
        if (m->sdk) {
            fprintf(m->text, "keel-server: agones: Allocated at tick %" PRIu64 ": the match starts\n", k);
            if (o->stats_json)
                printf("{\"event\":\"agones_allocated\",\"tick\":%" PRIu64 ",\"clients\":%u}\n", k, n);
            fflush(NULL);
        }
    }
    if (o->stall_after && k == o->stall_after) {
        agones_counts c;
        agones_get_counts(m->sdk, &c);
        fprintf(m->text, "keel-server: test stall: the tick loop stops for %.3f s after tick %" PRIu64 "\n",
                (double)o->stall_ms / 1000.0, k);
        if (o->stats_json)
            printf("{\"event\":\"stall_begin\",\"tick\":%" PRIu64 ",\"wall_ms\":%" PRIu64 ",\"health_sent\":%" PRIu64
                   ",\"health_skipped\":%" PRIu64 "}\n",
                   k, realtime_ms(), c.health_sent, c.health_skipped);
        fflush(NULL);
        keel_app_sleep_until_us(keel_app_now_us() + o->stall_ms * 1000u);
        agones_get_counts(m->sdk, &c);
        fprintf(m->text, "keel-server: test stall over\n");
        if (o->stats_json)
            printf("{\"event\":\"stall_end\",\"tick\":%" PRIu64 ",\"wall_ms\":%" PRIu64 ",\"health_sent\":%" PRIu64
                   ",\"health_skipped\":%" PRIu64 "}\n",
                   k, realtime_ms(), c.health_sent, c.health_skipped);
        fflush(NULL);
    }
    if (o->match_ms && m->started && k - m->start_tick >= ms_ticks(o->match_ms, o->rate))
        return "its match is over";
    m->had_players |= n > 0;
    // A match nobody joined (a failed allocation, players who never came)
    // ends too, or an Allocated GameServer would stay forever.
    if (o->join_ms && m->started && !m->had_players && k - m->start_tick >= ms_ticks(o->join_ms, o->rate))
        return "no player joined";
    if (o->empty_ms) {
        m->empty_ticks = m->had_players && n == 0 ? m->empty_ticks + 1 : 0;
        if (m->empty_ticks >= ms_ticks(o->empty_ms, o->rate))
            return "every player left";
    }
    return NULL;
}

void match_end(match *m, bool by_signal)
{
    if (m->sdk && !by_signal)
        agones_request_shutdown(m->sdk);
}

void match_finish(match *m)
{
    if (!m->sdk)
        return;
    agones_counts c;
    bool ready = agones_ready(m->sdk);
    agones_stop(m->sdk, &c); // sends a requested shutdown first
    m->sdk = NULL;
    fprintf(m->text,
            "keel-server: agones: Ready %s %" PRIu64 " tries; health pings %" PRIu64 " (skipped while the tick "
            "loop stalled %" PRIu64 "); labels set %" PRIu64 "; GameServer reads %" PRIu64 "; failed calls %" PRIu64
            "; shutdown %s\n",
            ready ? "accepted after" : "never accepted, in", c.ready_tries, c.health_sent, c.health_skipped,
            c.labels_set, c.polls, c.errors, c.shutdown_sent ? "sent" : "not sent");
    if (m->o->stats_json)
        printf("{\"agones\":1,\"ready\":%s,\"ready_tries\":%" PRIu64 ",\"health_sent\":%" PRIu64
               ",\"health_skipped\":%" PRIu64 ",\"labels_set\":%" PRIu64 ",\"polls\":%" PRIu64 ",\"errors\":%" PRIu64
               ",\"allocated\":%s,"
               "\"shutdown_sent\":%s,\"shutdown_tries\":%" PRIu64 ",\"label_failures\":%" PRIu64 "}\n",
               ready ? "true" : "false", c.ready_tries, c.health_sent, c.health_skipped, c.labels_set, c.polls,
               c.errors, m->started ? "true" : "false", c.shutdown_sent ? "true" : "false", c.shutdown_tries,
               c.label_failures);
    fflush(NULL);
}
