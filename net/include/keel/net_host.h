// keel: a host that exchanges messages with peers: ENet over UDP, or an
// in-memory network with a virtual clock for reproducible tests.
// MIT licence, see LICENSE.
//
// The server and the client talk to the network only through this header;
// net/src/host_enet.c is the only file that includes enet.h. Both kinds of
// host give the same events in the same shape, so the server and client
// logic is tested bit-exactly in memory and for real over ENet sockets on
// loopback.
//
// Channels are traffic classes (docs/protocol.md): control is reliable and
// ordered; inputs and snapshots are unreliable and unsequenced, each on its
// own channel so that neither waits behind the other or behind control
// traffic. ENet settings: ENet's MTU clamped to NET_MTU + 28 (1228, so that
// any message up to NET_MTU = 1200 bytes is one datagram), the throttle set so
// that it never drops (enet_peer_throttle_configure(peer, 5000, 32, 0)), no
// bandwidth limit, peer timeout 5 s, at most `max_peers_per_address` peers
// from one address. An unreliable message longer than NET_MTU is refused by
// net_host_send (ENet would silently make it reliable fragments).
#ifndef KEEL_NET_HOST_H
#define KEEL_NET_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum net_channel {
    NET_CHANNEL_CONTROL = 0,  ///< reliable, ordered
    NET_CHANNEL_INPUT = 1,    ///< unreliable
    NET_CHANNEL_SNAPSHOT = 2, ///< unreliable
    NET_CHANNEL_COUNT = 3,
} net_channel;

typedef enum net_event_type {
    NET_EVENT_NONE = 0,
    NET_EVENT_CONNECT = 1,    ///< a peer connected (server) / the connection is up (client)
    NET_EVENT_DISCONNECT = 2, ///< a peer left or timed out
    NET_EVENT_RECEIVE = 3,    ///< a message; data valid until the next call on the host
} net_event_type;

typedef struct net_event {
    net_event_type type;
    uint32_t peer;  ///< the host's handle for the peer (the client's server is peer 0)
    uint8_t channel;
    const uint8_t *data;
    size_t length;
} net_event;

/// Wire accounting: payload is what keel handed over or received; wire adds
/// ENet's and UDP/IP's headers (estimated per datagram for the in-memory host
/// with the same figures, so both report alike).
typedef struct net_host_stats {
    uint64_t payload_sent, payload_received;
    uint64_t wire_sent, wire_received;
    uint64_t messages_sent, messages_received;
    uint64_t refused_oversize; ///< unreliable sends above NET_MTU
    uint64_t peers_refused;    ///< connections refused (full, too many from one address)
} net_host_stats;

typedef struct net_host_config {
    uint32_t max_peers;             ///< default 64
    uint32_t max_peers_per_address; ///< default 4
    uint32_t timeout_ms;            ///< default 5000, at most 5000
    uint32_t cookie;                ///< set by net_host_default_config
} net_host_config;

net_host_config net_host_default_config(void);

typedef struct net_host net_host;

/// A server host bound to `address` (dotted IPv4, e.g. "127.0.0.1") and port.
/// NULL on failure (bad address, port in use); *error (when given) says why.
net_host *net_host_listen(const char *address, uint16_t port, const net_host_config *config,
                          const char **error);
/// A client host connecting to a server; the connection is up at the first
/// NET_EVENT_CONNECT (or fails with NET_EVENT_DISCONNECT).
net_host *net_host_connect(const char *address, uint16_t port, const net_host_config *config,
                           const char **error);

/// The next event, waiting up to `timeout_ms` for one (0: poll). Returns
/// the event type (NET_EVENT_NONE when nothing happened).
net_event_type net_host_service(net_host *host, net_event *event, uint32_t timeout_ms);
/// Queue a message; false when the peer is unknown, the channel invalid, or
/// an unreliable message exceeds NET_MTU. Sent at the next service or flush.
bool net_host_send(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t length);
void net_host_flush(net_host *host);
/// Disconnect a peer (its events stop; the other side sees a disconnect).
void net_host_disconnect(net_host *host, uint32_t peer);
void net_host_stats_get(const net_host *host, net_host_stats *stats);
/// The port a listening host is bound to (useful with port 0).
uint16_t net_host_port(const net_host *host);
void net_host_destroy(net_host *host);

/// A host connected to nobody: every send is accepted and dropped, service
/// never reports an event. For replaying a client's recorded calls
/// (cl_replay.h). NULL when memory runs out.
net_host *net_host_null(void);

// ---- the in-memory network -------------------------------------------------------------
// Hosts on one net_memory network exchange messages through queues, with a
// virtual clock that only net_memory_advance moves. Per-direction latency,
// loss, duplication and reordering come from a seeded generator, so a run is
// the same every time for the same seed. Unreliable messages may be lost;
// control messages arrive in order, after the latency.

typedef struct net_memory net_memory;

typedef struct net_memory_link {
    uint32_t latency_ms;   ///< one way
    uint32_t jitter_ms;    ///< uniform in [0, jitter] added to each message
    uint32_t loss_permille;       ///< unreliable messages dropped
    uint32_t duplicate_permille;  ///< unreliable messages delivered twice
} net_memory_link;

net_memory *net_memory_create(uint64_t seed);
void net_memory_destroy(net_memory *mem);
/// The virtual time, ms.
uint64_t net_memory_now(const net_memory *mem);
void net_memory_advance(net_memory *mem, uint32_t ms);
/// The next control message `host` (a memory host) sends is lost once and
/// arrives `retransmit_ms` later than it would have, as a reliable message
/// whose datagram was lost and sent again; the unreliable messages the host
/// sends to the same peer in the same virtual millisecond are lost with it.
/// For tests of a lost hello or welcome. Other hosts: nothing happens.
void net_memory_lose_next_control(net_host *host, uint32_t retransmit_ms);
/// A listening host at a name (any string; one per name).
net_host *net_memory_listen(net_memory *mem, const char *name, const net_host_config *config);
/// A host connected to the listening host `name`; `up` and `down` shape the
/// two directions (client to server, server to client).
net_host *net_memory_connect(net_memory *mem, const char *name, const net_memory_link *up,
                             const net_memory_link *down, const net_host_config *config);

#endif
