// keel-client: light clients for load (--light N). MIT licence, see LICENSE.
#ifndef KEEL_CLIENT_LIGHT_H
#define KEEL_CLIENT_LIGHT_H

#include <stdio.h>

#include <keel/cl_light.h>

#include "tokens.h"

typedef struct light_set light_set;

/// `count` light clients (cl_light.h) of `server`:`port` with `identity`:
/// they connect 20 ms apart, each plays `ticks` ticks (0: until the process
/// is stopped) with commands from a seeded walk (seed + index), then leaves.
/// In secure mode (`tokens` from a key) client i joins with a token it
/// issues for client id first_client_id + i; the set keeps a copy of the
/// key and wipes it in light_destroy. NULL when out of memory.
light_set *light_create(uint32_t count, const char *server, uint16_t port, const net_sim_identity *identity,
                        uint32_t ticks_per_packet, uint32_t redundancy_packets, uint32_t ticks, uint64_t seed,
                        uint32_t connect_timeout_ms, const token_source *tokens, uint32_t first_client_id);
/// The silence that ends each client's connection (net_host_config's
/// timeout_ms; NET_HOST_DEFAULT_TIMEOUT_MS until set), for connections
/// made from now on.
void light_set_timeout(light_set *ls, uint32_t timeout_ms);
/// One pass at `now_us` (the process clock): each client's events, its
/// commands up to its target tick and its input packets. True while any
/// client still plays or connects.
bool light_step(light_set *ls, uint64_t now_us);
/// 0, or 1 when a client was refused, could not connect or lost the
/// connection (said on stderr when it happened).
int light_status(const light_set *ls);
/// The "light" member of keel-client's summary (with a trailing comma), for
/// a run of `secs` seconds.
void light_summary(const light_set *ls, double secs, FILE *out);
/// Leaves (net_host_leave) on every connection still open, at most about
/// NET_LEAVE_MAX_MS in all, and frees everything.
void light_destroy(light_set *ls);

#endif
