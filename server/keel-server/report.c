// keel-server: the run's report: its tick time histograms, the handshake's
// counts and the JSON summary at the end. MIT licence, see LICENSE.
//
// The histograms are fixed in size (nothing grows with the run) and only the
// tick thread touches them.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include <keel/net_handshake.h>
#include <keel/sim_scene.h>

#include "keel_server.h"

// Every tick's time since the start, for the summary: 10 us buckets up to
// 40 ms, longer ones in the last. Fixed size: nothing grows with the run.
// Two: the wall time of each tick, and the CPU time the server's thread used
// in it (the tick's own cost, without waiting for a core on a busy machine).
#define HIST_BUCKETS 4001u
typedef struct tick_hist {
    uint32_t bucket[HIST_BUCKETS];
    uint64_t max_us;
} tick_hist;
static tick_hist tick_wall, tick_cpu;

static void hist_add(tick_hist *h, uint64_t us)
{
    uint64_t b = us / 10u;
    h->bucket[b < HIST_BUCKETS ? b : HIST_BUCKETS - 1u]++;
    h->max_us = us > h->max_us ? us : h->max_us;
}

void report_tick(uint64_t wall_us, uint64_t cpu_us)
{
    hist_add(&tick_wall, wall_us);
    hist_add(&tick_cpu, cpu_us);
}

// The time under which `permille` of the ticks ran, ms (a bucket's top).
static double hist_ms(const tick_hist *h, uint64_t ticks, uint32_t permille)
{
    uint64_t want = (ticks * permille + 999u) / 1000u, seen = 0;
    for (uint32_t b = 0; b < HIST_BUCKETS && ticks; b++)
        if ((seen += h->bucket[b]) >= want)
            return b + 1u < HIST_BUCKETS ? (double)(b + 1u) / 100.0 : (double)h->max_us / 1000.0;
    return 0;
}

static uint64_t handshake_refused(const net_host_stats *ns)
{
    uint64_t n = 0;
    for (int r = 0; r < NET_HS_REFUSAL_COUNT; r++)
        n += ns->handshake_refused[r];
    return n;
}

// The mean time the host spent on one handshake datagram, us.
static double handshake_us(const net_host_stats *ns)
{
    return ns->handshake_datagrams ? (double)ns->handshake_ns / (double)ns->handshake_datagrams / 1000.0 : 0.0;
}

// Secure mode: the handshake's counts, each refusal reason that occurred,
// what it cost, and the sealed messages dropped.
void report_handshake(FILE *f, const net_host_stats *ns)
{
    fprintf(f, "keel-server: handshake: challenges %llu, admitted %llu, refused %llu",
            (unsigned long long)ns->handshake_challenges, (unsigned long long)ns->handshake_admitted,
            (unsigned long long)handshake_refused(ns));
    const char *sep = " (";
    for (int r = 1; r < NET_HS_REFUSAL_COUNT; r++) {
        if (ns->handshake_refused[r]) {
            fprintf(f, "%s%s %llu", sep, net_hs_refusal_name((net_hs_refusal)r),
                    (unsigned long long)ns->handshake_refused[r]);
            sep = ", ";
        }
    }
    fputs(*sep == ',' ? ")\n" : "\n", f);
    fprintf(f,
            "keel-server: handshake datagrams %llu, %.2f us each; sealed messages dropped: forged %llu, "
            "replayed %llu; datagrams dropped: forged %llu, replayed %llu\n",
            (unsigned long long)ns->handshake_datagrams, handshake_us(ns), (unsigned long long)ns->sealed_forged,
            (unsigned long long)ns->sealed_replayed, (unsigned long long)ns->frames_forged,
            (unsigned long long)ns->frames_replayed);
}

uint32_t report_crowded(const sv_server *sv) { return sim_scene_last_separation(sv_server_scene(sv)).crowded; }

// With --stats-json, the last line: the whole run's counts and tick times.
void report_summary_json(const sv_server *sv, const net_host_stats *ns, double secs, bool secure)
{
    sv_stats ss;
    sv_server_stats(sv, &ss);
    printf("{\"summary\":1,\"tick\":%u,\"ticks\":%llu,\"seconds\":%.2f,\"tick_ms_median\":%.3f,"
           "\"tick_ms_p99\":%.3f,\"tick_ms_max\":%.3f,\"tick_cpu_ms_median\":%.3f,\"tick_cpu_ms_p99\":%.3f,"
           "\"tick_cpu_ms_max\":%.3f,\"joined\":%llu,\"left\":%llu,\"timed_out\":%llu,"
           "\"dropped_clients\":%llu,\"drained\":%llu,\"refused\":%llu,\"peers_refused\":%llu,\"commands\":%llu,"
           "\"late\":%llu,"
           "\"substituted\":%llu,\"snapshots\":%llu,\"repairs\":%llu,\"full_states\":%llu,\"full_state_parts\":%llu,"
           "\"snapshot_bytes\":%llu,"
           "\"in_payload_bytes\":%llu,\"out_payload_bytes\":%llu,\"in_wire_bytes\":%llu,\"out_wire_bytes\":%llu,"
           "\"handshake_challenges\":%llu,\"handshake_admitted\":%llu,\"handshake_refused\":%llu,"
           "\"handshake_rate_limited\":%llu,\"handshake_datagrams\":%llu,\"handshake_us_per_datagram\":%.3f,"
           "\"sealed_forged\":%llu,\"sealed_replayed\":%llu,\"frames_forged\":%llu,\"frames_replayed\":%llu,"
           "\"secure\":%s}\n",
           sv_server_scene_tick(sv), (unsigned long long)ss.ticks, secs, hist_ms(&tick_wall, ss.ticks, 500),
           hist_ms(&tick_wall, ss.ticks, 990), (double)tick_wall.max_us / 1000.0, hist_ms(&tick_cpu, ss.ticks, 500),
           hist_ms(&tick_cpu, ss.ticks, 990), (double)tick_cpu.max_us / 1000.0, (unsigned long long)ss.clients_joined,
           (unsigned long long)ss.clients_left, (unsigned long long)ss.clients_timed_out,
           (unsigned long long)ss.clients_dropped, (unsigned long long)ss.clients_drained,
           (unsigned long long)ss.clients_refused, (unsigned long long)ns->peers_refused,
           (unsigned long long)ss.commands_received, (unsigned long long)ss.commands_late,
           (unsigned long long)ss.commands_substituted, (unsigned long long)ss.snapshots_delta,
           (unsigned long long)ss.snapshots_repair, (unsigned long long)ss.full_states,
           (unsigned long long)ss.snapshots_full_parts, (unsigned long long)ss.snapshot_bytes,
           (unsigned long long)ns->payload_received, (unsigned long long)ns->payload_sent,
           (unsigned long long)ns->wire_received, (unsigned long long)ns->wire_sent,
           (unsigned long long)ns->handshake_challenges, (unsigned long long)ns->handshake_admitted,
           (unsigned long long)handshake_refused(ns), (unsigned long long)ns->handshake_refused[NET_HS_RATE_LIMITED],
           (unsigned long long)ns->handshake_datagrams, handshake_us(ns), (unsigned long long)ns->sealed_forged,
           (unsigned long long)ns->sealed_replayed, (unsigned long long)ns->frames_forged,
           (unsigned long long)ns->frames_replayed, secure ? "true" : "false");
    fflush(stdout);
}
