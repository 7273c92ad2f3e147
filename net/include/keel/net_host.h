// keel: a host that exchanges messages with peers: ENet over UDP, or an
// in-memory network with a virtual clock for reproducible tests.
// MIT licence, see LICENSE.
//
// The server and the client talk to the network only through this header;
// net/src/host_enet.c and host_enet_gate.c are the only files that include
// enet.h. Both kinds of host give the same events in the same shape, so the
// server and client logic is tested bit-exactly in memory and for real over
// ENet sockets on loopback.
//
// Channels are traffic classes (docs/protocol.md): control is reliable and
// ordered; inputs and snapshots are unreliable and unsequenced, each on its
// own channel so that neither waits behind the other or behind control
// traffic. ENet settings: ENet's MTU clamped to NET_MTU + 28 (1228, so that
// any message up to NET_MTU = 1200 bytes is one datagram), the throttle set so
// that it never drops (enet_peer_throttle_configure(peer, 5000, 32, 0)), no
// bandwidth limit, at most `max_peers_per_address` peers from one address.
// Liveness is judged by traffic: a connection ends after timeout_ms (10 s by
// default) in which no datagram of it arrived, whatever ENet's retransmission
// timers say (docs/transport.md, "Liveness"). An unreliable message longer than NET_MTU is refused by
// net_host_send (ENet would silently make it reliable fragments).
//
// Ending a connection: a client leaves with net_host_leave, which sends the
// disconnect and keeps servicing the host until the server acknowledged it
// (or NET_LEAVE_MAX_MS passed), so that the server sees a leave rather than,
// seconds later, a timeout. Every DISCONNECT event says why the connection
// ended (net_disconnect_reason): left, closed by the other side, timed out,
// never answered, or refused by the server's host (no free connection, too
// many from one address) -- the server's host answers a connect it turns
// away with a small refusal datagram, so the client knows at once and why.
//
// Secure mode (net_handshake.h, opt-in through net_host_config): a server
// with a backend key lets an ENet connection start only from an address
// that showed a valid connect token and echoed a challenge; a client with a
// token runs that exchange before ENet's connect. From that connect on,
// every datagram both ways is encrypted after ENet's header and
// authenticated whole, with a replay window (NET_FRAME_BYTES).
#ifndef KEEL_NET_HOST_H
#define KEEL_NET_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/net_handshake.h>
#include <keel/net_token.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What secure mode adds to each datagram after the handshake, everything
/// after ENet's header encrypted and the whole datagram authenticated: a
/// 2-byte datagram counter and a 16-byte tag (docs/security.md,
/// "Sealed datagrams"). keel's messages get nothing more (until protocol
/// version 5 each was also sealed on its own, 18 bytes more).
#define NET_FRAME_BYTES 18u

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

/// Why a connection ended (NET_EVENT_DISCONNECT's `reason`). Both kinds of
/// host report the same reasons in the same cases.
typedef enum net_disconnect_reason {
    NET_DISCONNECT_NONE = 0, ///< not a DISCONNECT event
    NET_DISCONNECT_LEFT = 1, ///< the peer left with net_host_leave
    /// The other side closed the connection with net_host_disconnect (a
    /// server dropping or refusing a client), or a foreign ENet program
    /// disconnected with a nonzero value.
    NET_DISCONNECT_CLOSED = 2,
    /// Nothing heard from the peer for timeout_ms: it vanished (killed,
    /// crashed, destroyed without leaving) or the link failed. A foreign ENet
    /// program's disconnect carrying the value 0 is indistinguishable from it.
    NET_DISCONNECT_TIMEOUT = 3,
    /// Client: the connect was not answered within timeout_ms (nothing
    /// listening there, or the network lost every attempt).
    NET_DISCONNECT_UNANSWERED = 4,
    /// Client: the server's host turned the connect away: every connection
    /// slot is taken (max_peers).
    NET_DISCONNECT_REFUSED_FULL = 5,
    /// Client: the server's host turned the connect away: it already has
    /// max_peers_per_address connections from this client's IP address.
    NET_DISCONNECT_REFUSED_ADDRESS = 6,
    /// Client in secure mode: the server's handshake turned the token or
    /// the challenge down (net_host_handshake_refusal says why).
    NET_DISCONNECT_REFUSED_TOKEN = 7,
} net_disconnect_reason;

/// A short English phrase for a reason ("left", "timed out", ...).
const char *net_disconnect_reason_name(net_disconnect_reason reason);

typedef struct net_event {
    net_event_type type;
    uint32_t peer; ///< the host's handle for the peer (the client's server is peer 0)
    uint8_t channel;
    uint8_t reason; ///< a net_disconnect_reason for DISCONNECT, else NET_DISCONNECT_NONE
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
    /// Secure server: handshake datagrams and CONNECTs turned away, by
    /// reason (net_handshake.h); challenges sent; addresses admitted.
    uint64_t handshake_refused[NET_HS_REFUSAL_COUNT];
    uint64_t handshake_challenges, handshake_admitted;
    /// Secure server: handshake datagrams received, and the time spent on
    /// them (CLOCK_MONOTONIC around each, ns): the cost of a flood.
    uint64_t handshake_datagrams, handshake_ns;
    /// Secure mode before protocol version 6: received messages dropped
    /// because their own seal did not authenticate, or was replayed. Secure
    /// hosts no longer seal each message (the datagram is: frames_*), so
    /// these stay 0; kept for the reports that print them.
    uint64_t sealed_forged, sealed_replayed;
    /// Secure mode: received datagrams dropped before ENet read them
    /// because they did not authenticate (forged, damaged, from no
    /// session), or because the datagram replay window had seen them or
    /// they were too old for it (docs/security.md, "Sealed datagrams").
    uint64_t frames_forged, frames_replayed;
    /// ENet server: a client's DISCONNECT sent again after its leave was
    /// counted (the acknowledgement lost), acknowledged again.
    uint64_t leaves_acknowledged_again;
} net_host_stats;

/// net_host_config.timeout_ms: the default silence that ends a connection
/// (netcode.io's), and the largest accepted.
#define NET_HOST_DEFAULT_TIMEOUT_MS 10000u
#define NET_HOST_MAX_TIMEOUT_MS 60000u

typedef struct net_host_config {
    uint32_t max_peers;             ///< default 64
    uint32_t max_peers_per_address; ///< default 4
    /// The silence that ends a connection: nothing heard from the peer for
    /// this long (any datagram of the connection counts; in secure mode
    /// only authenticated ones). Default NET_HOST_DEFAULT_TIMEOUT_MS, 1 to
    /// NET_HOST_MAX_TIMEOUT_MS; in secure mode a connection whose token has a
    /// shorter timeout uses that one, on both sides. Also the bound of a
    /// client's connect (NET_DISCONNECT_UNANSWERED).
    uint32_t timeout_ms;
    uint32_t cookie; ///< set by net_host_default_config
    /// Secure mode (net_handshake.h), ENet hosts only; off by default.
    /// Server: the backend key (copied at creation) turns it on; tokens must
    /// carry protocol_id and list public_address ("A.B.C.D:PORT", how
    /// clients reach the server; NULL: the listening address and port,
    /// which then must not be 0.0.0.0).
    const net_token_key *token_key;
    uint64_t protocol_id;
    const char *public_address;
    /// Client: a whole connect token (NET_TOKEN_BYTES, copied at creation)
    /// turns it on; its sent part goes to the server before ENet connects.
    const uint8_t *connect_token;
} net_host_config;

net_host_config net_host_default_config(void);

typedef struct net_host net_host;

/// A server host bound to `address` (dotted IPv4, e.g. "127.0.0.1") and port.
/// NULL on failure (bad address, port in use); *error (when given) says why.
net_host *net_host_listen(const char *address, uint16_t port, const net_host_config *config, const char **error);
/// A client host connecting to a server; the connection is up at the first
/// NET_EVENT_CONNECT (or fails with NET_EVENT_DISCONNECT).
net_host *net_host_connect(const char *address, uint16_t port, const net_host_config *config, const char **error);

/// The next event, waiting up to `timeout_ms` for one (0: poll). Returns
/// the event type (NET_EVENT_NONE when nothing happened).
net_event_type net_host_service(net_host *host, net_event *event, uint32_t timeout_ms);
/// Queue a message; false when the peer is unknown, the channel invalid, or
/// an unreliable message exceeds NET_MTU. Sent at the next service or flush.
bool net_host_send(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t length);
void net_host_flush(net_host *host);
/// Disconnect a peer (its events stop; the other side sees a disconnect with
/// NET_DISCONNECT_CLOSED once the messages queued before it were delivered).
/// Returns at once: a host destroyed right after may never send it (use
/// net_host_leave on a client).
void net_host_disconnect(net_host *host, uint32_t peer);

/// The longest a leave waits for its acknowledgement.
#define NET_LEAVE_MAX_MS 1000u

typedef enum net_leave_state {
    NET_LEAVE_PENDING = 0, ///< the disconnect is sent, not acknowledged yet
    NET_LEAVE_DONE = 1,    ///< the server acknowledged it: it saw the leave
    /// NET_LEAVE_MAX_MS passed without an acknowledgement: the connection is
    /// reset (the server may still have seen the leave, or will time out).
    NET_LEAVE_GAVE_UP = 2,
    NET_LEAVE_NOT_CONNECTED = 3, ///< nothing to leave (never connected, or closed already)
} net_leave_state;

/// A client's graceful close of its connection (peer 0). The first call
/// queues the disconnect behind the messages already queued (its other side
/// reports NET_DISCONNECT_LEFT); every call services the host for up to
/// `wait_ms` (0: without waiting), so that acknowledgements and
/// retransmissions go on, and returns how the leave stands. Messages that
/// arrive meanwhile are dropped and no event is reported. Call it until it
/// returns something other than NET_LEAVE_PENDING, then destroy the host:
///   while (net_host_leave(host, 10) == NET_LEAVE_PENDING) {}
/// takes one round trip on a working link and at most NET_LEAVE_MAX_MS
/// otherwise. The in-memory host's time is virtual: it never waits, and its
/// clock (net_memory_advance) decides the NET_LEAVE_MAX_MS bound. The null
/// host returns NET_LEAVE_NOT_CONNECTED. On a server host: NOT_CONNECTED.
net_leave_state net_host_leave(net_host *host, uint32_t wait_ms);
void net_host_stats_get(const net_host *host, net_host_stats *stats);
/// ENet host: the connections not fully closed yet, those it closed itself
/// (net_host_disconnect) until their close is acknowledged or they time out
/// included; a server that closed every connection services the host until
/// this is 0. 0 for the other hosts.
uint32_t net_host_open_connections(const net_host *host);
/// Client in secure mode: why the server's handshake refused it (NET_HS_OK
/// when it did not, or for any other host).
net_hs_refusal net_host_handshake_refusal(const net_host *host);
/// Secure server: the client id of a connected peer's token. False for an
/// unknown peer or a host not in secure mode.
bool net_host_peer_client_id(const net_host *host, uint32_t peer, uint64_t *client_id);
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
    uint32_t latency_ms;         ///< one way
    uint32_t jitter_ms;          ///< uniform in [0, jitter] added to each message
    uint32_t loss_permille;      ///< unreliable messages dropped
    uint32_t duplicate_permille; ///< unreliable messages delivered twice
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
/// Every unreliable message `host` (a memory host) sends, to any peer, in
/// the next `ms` virtual milliseconds is lost (a burst of loss in one
/// direction; the link's own loss applies again afterwards). Other hosts:
/// nothing happens.
void net_memory_lose_unreliable_for(net_host *host, uint32_t ms);
/// A listening host at a name (any string; one per name).
net_host *net_memory_listen(net_memory *mem, const char *name, const net_host_config *config);
/// A host connected to the listening host `name`; `up` and `down` shape the
/// two directions (client to server, server to client).
net_host *net_memory_connect(net_memory *mem, const char *name, const net_memory_link *up, const net_memory_link *down,
                             const net_host_config *config);

#ifdef __cplusplus
}
#endif

#endif
