// keel programs: addresses on the command line (HOST:PORT), host names
// resolved. MIT licence, see LICENSE.
//
// Every networked keel program (keel-server's --bind and --metrics,
// keel-client, keel-play, keel-relay, keel-token) takes a host as a name
// ("localhost", "game.example.org") or a dotted IPv4 address, resolved with
// getaddrinfo. The transport is ENet 1.3, whose addresses are IPv4 only
// (ENetAddress holds a 32-bit host): an IPv6 address, or a name with only
// IPv6 addresses, is refused with a message saying so. (Connect tokens can
// list IPv6 servers: keel-token takes [IPv6]:PORT as it is.)
#ifndef KEEL_ADDR_H
#define KEEL_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Split "HOST:PORT" or "[IPv6]:PORT" into the host (without brackets) and a
/// port in [lo_port, 65535]. False with a message in err ("'x' has no :PORT").
bool keel_addr_split(const char *text, uint32_t lo_port, char *host, size_t host_size, uint32_t *port, char *err,
                     size_t err_size);
/// Resolve `host` (a name or a dotted IPv4 address) to its first IPv4
/// address, written dotted ("127.0.0.1") into `dotted` (16 bytes are enough).
/// False with a message in err naming the host.
bool keel_addr_ipv4(const char *host, char *dotted, size_t dotted_size, char *err, size_t err_size);
/// keel_addr_split, then keel_addr_ipv4 on the host: "localhost:27900" gives
/// "127.0.0.1" and 27900. False with a message in err.
bool keel_addr_resolve(const char *text, uint32_t lo_port, char *dotted, size_t dotted_size, uint32_t *port, char *err,
                       size_t err_size);

#endif
