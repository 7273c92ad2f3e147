// keel-server --agones: the Agones SDK sidecar's lifecycle (agones.c;
// docs/operations.md, "Agones"). MIT licence, see LICENSE.
#ifndef KEEL_SERVER_AGONES_H
#define KEEL_SERVER_AGONES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Seconds between health pings. Agones marks a GameServer Unhealthy when no
/// ping arrived in failureThreshold consecutive periods of periodSeconds;
/// deploy/agones/ uses periodSeconds 5 and failureThreshold 3, so a ping
/// every 2 s lands at least twice in every period and only a loop stalled for
/// about 15 s gets the server replaced.
#define AGONES_HEALTH_PERIOD_MS 2000u
/// No ping while the tick loop has not ticked for this long (as /healthz).
#define AGONES_STALE_US 1000000u
/// GET /gameserver every this long until the state is Allocated.
#define AGONES_POLL_MS 1000u
/// The player count label is written at most this often.
#define AGONES_LABEL_MS 1000u
/// Give up (and exit 1) when the sidecar has not accepted Ready for this long.
#define AGONES_READY_TIMEOUT_MS 60000u
/// A requested POST /shutdown is retried (backoff 50 ms doubling to 1 s) for
/// this long while the sidecar does not accept it; agones_stop waits for it,
/// so a drain plus this plus one call stays well inside Kubernetes' 30 s.
#define AGONES_SHUTDOWN_TIMEOUT_MS 10000u
/// A label the sidecar refused is tried again after this, doubling on each
/// failure up to AGONES_LABEL_BACKOFF_MAX_MS (back to the start on success).
#define AGONES_LABEL_BACKOFF_MS 250u
#define AGONES_LABEL_BACKOFF_MAX_MS 8000u
/// Each HTTP call gives up after this long (the SDK thread's bound, not the tick loop's).
#define AGONES_CALL_TIMEOUT_MS 2000u

typedef struct agones agones;

/// What the SDK thread did (counts since the start).
typedef struct agones_counts {
    uint64_t ready_tries;    ///< POST /ready attempts until one succeeded
    uint64_t health_sent;    ///< POST /health that succeeded
    uint64_t health_skipped; ///< periods without a ping: the tick loop was stalled
    uint64_t labels_set;     ///< PUT /metadata/label that succeeded
    uint64_t polls;          ///< GET /gameserver that succeeded
    uint64_t errors;         ///< calls that failed (no sidecar, a non-2xx answer)
    uint64_t ready_failures, health_failures, label_failures, poll_failures, shutdown_failures; ///< errors by call
    uint64_t shutdown_tries; ///< POST /shutdown attempts
    bool shutdown_sent;      ///< POST /shutdown succeeded
} agones_counts;

/// Whether this keel-server was built with libcurl.
bool agones_available(void);
/// Whether `v` is a valid Kubernetes label value: at most 63 characters of
/// [A-Za-z0-9_.-], starting and ending with a letter or digit (or empty).
bool agones_label_value_valid(const char *v);
/// Start the SDK thread against http://localhost:$AGONES_SDK_HTTP_PORT (default
/// 9358): it sends POST /ready at once, retrying with a backoff of 50 ms
/// doubling up to 2 s for AGONES_READY_TIMEOUT_MS. `sim_label` (a valid
/// label value) is written as the label keel-sim once Ready. NULL (the reason
/// printed) when it cannot start.
agones *agones_start(const char *sim_label);

/// --public agones, before the socket opens: the GameServer's address and
/// first port as "ADDR:PORT" (what clients reach, which connect tokens list),
/// from GET /gameserver, retried every 200 ms for up to
/// AGONES_READY_TIMEOUT_MS or until *stop. False (the reason printed) when
/// there is none.
bool agones_public_address(char *out, size_t size, volatile sig_atomic_t *stop);

// The tick thread's side: atomics only, never waits.
/// After each tick: the loop is alive at `now_us` (keel_app_now_us) with `players` joined.
void agones_tick(agones *a, uint64_t now_us, uint32_t players);
/// Ready was accepted by the sidecar.
bool agones_ready(const agones *a);
/// Ready was given up (AGONES_READY_TIMEOUT_MS without an answer).
bool agones_ready_failed(const agones *a);
/// The GameServer's state was seen as Allocated.
bool agones_allocated(const agones *a);
/// The GameServer's state as keel-server knows it: "Starting" (Ready not yet
/// accepted), "Ready", "Allocated", "Shutdown" (the shutdown call accepted).
const char *agones_state(const agones *a);
/// Ask for POST /shutdown (sent by the SDK thread; agones_stop waits for it).
void agones_request_shutdown(agones *a);
void agones_get_counts(const agones *a, agones_counts *c);

/// Stop the SDK thread (after sending a requested shutdown, each call bounded
/// by AGONES_CALL_TIMEOUT_MS) and free everything; the final counts in
/// *counts when given. NULL does nothing.
void agones_stop(agones *a, agones_counts *counts);

#endif
