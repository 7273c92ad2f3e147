// keel: what the two kinds of host share (net/src/host.c) and the hooks the
// tests use. Private to net/ and tests/. MIT licence, see LICENSE.
#ifndef KEEL_NET_HOST_IMPL_H
#define KEEL_NET_HOST_IMPL_H

#include <keel/net_host.h>
#include <keel/net_proto.h>

/// ENet's MTU (the UDP payload, ENet's headers included): a NET_MTU message
/// plus ENet's largest per-datagram overhead (a 4-byte protocol header and a
/// 24-byte fragment command), so that a message of NET_MTU bytes is never
/// fragmented: enet_peer_send fragments above mtu - 4 - 24 (peer.c). An IP
/// datagram is then at most 1228 + 28 = 1256 bytes, below IPv6's 1280.
#define NET_HOST_ENET_MTU (NET_MTU + 28u)
/// Secure mode uses the same MTU: the datagram's trailer (NET_FRAME_BYTES)
/// comes after ENet's datagram, an IP datagram of at most 1274 bytes.
/// Longest message either kind of host sends or accepts (ENet's
/// host->maximumPacketSize; reliable messages above NET_MTU go as fragments).
#define NET_HOST_MAX_MESSAGE 65536u
/// ENet caps a host at 4095 peers (ENET_PROTOCOL_MAXIMUM_PEER_ID).
#define NET_HOST_MAX_PEERS 4095u

/// The 32-bit values ENet's DISCONNECT carries: a keel leave, and a keel
/// host's net_host_disconnect. Anything else nonzero is a foreign program's
/// close; 0 is what ENet reports for a timeout.
#define NET_DISCONNECT_DATA_LEAVE 0x6b6c6561u // "klea"
#define NET_DISCONNECT_DATA_CLOSE 0x6b636c6fu // "kclo"

/// Estimated per-datagram figures (the in-memory host uses them; ENet's
/// real counters report the same quantities).
#define NET_WIRE_UDP_IP 28u     ///< IPv4 header 20 + UDP header 8
#define NET_WIRE_UNRELIABLE 10u ///< ENet header 2 (no sent time) + SEND_UNSEQUENCED 8
#define NET_WIRE_RELIABLE 10u   ///< ENet header 4 (sent time) + SEND_RELIABLE 6
#define NET_WIRE_FRAGMENT 28u   ///< ENet header 4 + SEND_FRAGMENT 24, per fragment
#define NET_WIRE_ACK 12u        ///< ENet header 4 + ACKNOWLEDGE 8, per reliable datagram

typedef struct net_host_ops {
    net_event_type (*service)(net_host *host, net_event *event, uint32_t timeout_ms);
    bool (*send)(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t length);
    void (*flush)(net_host *host);
    void (*disconnect)(net_host *host, uint32_t peer);
    net_leave_state (*leave)(net_host *host, uint32_t wait_ms);
    void (*wire)(const net_host *host, uint64_t *sent, uint64_t *received);
    uint16_t (*port)(const net_host *host);
    void (*destroy)(net_host *host);
} net_host_ops;

struct net_host {
    const net_host_ops *ops;
    net_host_config config;
    net_host_stats stats; ///< all but the wire figures, which ops->wire gives
    bool server;
};

/// NULL when the configuration is valid (config NULL means the defaults),
/// otherwise why not. *out receives the configuration to use.
const char *net_host_config_check(const net_host_config *config, net_host_config *out);
/// Fills the common part of a new host.
void net_host_init(net_host *host, const net_host_ops *ops, const net_host_config *config, bool server);

/// The wire size of one message of `length` bytes on `channel`: ENet's
/// headers and UDP/IP per datagram (fragments above NET_MTU for control).
uint64_t net_wire_message(net_channel channel, size_t length);
/// The number of datagrams a message takes (1, or its fragments).
uint32_t net_wire_datagrams(net_channel channel, size_t length);

// host_enet.c's functions behind net_host_listen / net_host_connect; the
// configuration has been checked.
net_host *net_host_enet_listen(const char *address, uint16_t port, const net_host_config *config, const char **error);
/// `propose_mtu` is NET_HOST_ENET_MTU, or another value in tests of the
/// server's clamp (a client proposing a bigger MTU).
net_host *net_host_enet_connect(const char *address, uint16_t port, const net_host_config *config, uint32_t propose_mtu,
                                const char **error);

// ---- test hooks ----------------------------------------------------------------
/// The MTU ENet uses towards `peer` (0 when unknown or not an ENet host).
uint32_t net_host_enet_peer_mtu(const net_host *host, uint32_t peer);
/// How long an ENet host's connected peer may be silent, ms (0 when unknown).
uint32_t net_host_enet_peer_timeout(const net_host *host, uint32_t peer);
/// The datagrams an ENet host's socket sent and received that ENet counted
/// (the handshake's and the leave's echoes are not). False for other hosts.
bool net_host_enet_datagrams(const net_host *host, uint64_t *sent, uint64_t *received);
/// How many of an ENet host's peers are not DISCONNECTED (slots ENet spent,
/// half-open handshakes included); 0 for other hosts.
uint32_t net_host_enet_peers_in_use(const net_host *host);

#endif
