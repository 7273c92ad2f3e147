// keel-relay: the UDP relay (sockets, the schedule of delayed packets, stats).
// MIT licence, see LICENSE.
#ifndef KEEL_RELAY_RELAY_H
#define KEEL_RELAY_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include "shape.h"

enum { RELAY_UP = 0, RELAY_DOWN = 1 }; ///< client to server, server to client

typedef struct relay_config {
    struct sockaddr_in listen_addr; ///< loopback; port 0 picks a free one
    struct sockaddr_in server_addr; ///< loopback only
    shape_params dir[2];            ///< RELAY_UP, RELAY_DOWN
    uint64_t seed;
    int64_t duration_us;    ///< 0: until SIGINT or SIGTERM
    bool stats_json;        ///< JSON lines on stdout
    int64_t stats_every_us; ///< 0: only at exit
    bool step;              ///< --step-at given
    int64_t step_at_us;
    uint32_t step_latency_us[2];
    uint32_t max_clients;
    int64_t client_idle_us; ///< 0: clients are never forgotten
    uint32_t max_pending;   ///< packets waiting for their delivery time
    bool control;           ///< commands from stdin
} relay_config;

/// Runs until --duration or a signal; returns the exit code (0, or 1 when a
/// socket cannot be set up).
int relay_run(relay_config *c);

/// Applies one shaping setting (`key` is an option name without "--" and
/// without the -up/-down suffix, such as "latency") to the directions in
/// `dirs` (bit 0 up, bit 1 down). Returns false with a message in err when
/// the key or the value is not valid. Shared by the options and the
/// --control commands.
bool relay_setting(shape_params p[2], const char *key, unsigned dirs, const char *value, char *err, size_t errlen);

/// Whether an IPv4 address (network byte order) is in 127.0.0.0/8.
bool relay_is_loopback(const struct sockaddr_in *a);

#endif
