// keel: the ENet host's private parts, shared by host_enet.c (the host),
// host_enet_gate.c (what it does with datagrams before ENet reads them:
// refusals and secure mode's handshake), host_enet_frame.c (secure mode's
// authenticated datagrams) and host_enet_live.c (liveness, the join's
// pacing). Private to net/src; these are the only files in keel that
// include enet.h. MIT licence, see LICENSE.
#ifndef KEEL_NET_HOST_ENET_IMPL_H
#define KEEL_NET_HOST_ENET_IMPL_H

#include <enet/enet.h>

#include "frame.h"
#include "handshake.h"
#include "host_impl.h"

enum { SLOT_FREE = 0, SLOT_CONNECTING, SLOT_CONNECTED, SLOT_CLOSING };

typedef struct enet_slot {
    uint8_t state;
    enet_uint32 since; ///< enet_time_get() when the state began
    /// For a free slot whose ENet peer is inside a handshake it never
    /// finishes (a half-open connection): when that was first seen, + 1 (0:
    /// not seen). Such a peer holds a slot and its address's quota.
    enet_uint32 half_open_since;
    bool has_client_id; ///< secure server: client_id is the peer's token's
    uint64_t client_id;
    /// Secure mode: the token's timeout when shorter than the host's
    /// timeout_ms (0: the host's).
    uint32_t timeout_ms;
    /// Liveness (host_enet_live.c): when a datagram of the connection was
    /// last seen to arrive, and ENet's incomingDataTotal then.
    enet_uint32 heard, heard_total;
    /// Client: the join is under way (no acknowledgement heard since the
    /// connect): a datagram from the server sends the unacknowledged
    /// reliable commands again at once.
    bool joining;
    /// Server: a datagram from the peer in ENet's handshake was taken as the
    /// acknowledgement of its VERIFY_CONNECT (enet_live_receive).
    bool implied_ack;
    /// Server: the client's peer id, kept at the CONNECT (ENet forgets it
    /// when it resets the peer).
    enet_uint16 remote_peer_id;
    /// Server: the client left (its leave was counted) at left_at, from
    /// left_address, in ENet's sessions left_session_in/out: for
    /// NET_LEAVE_MAX_MS its DISCONNECT sent again is acknowledged again,
    /// left_echoes times at most (host_enet_leave.c).
    bool left;
    uint8_t left_session_in, left_session_out, left_echoes;
    enet_uint32 left_at;
    ENetAddress left_address;
} enet_slot;

typedef struct refused_key {
    enet_uint32 address;
    enet_uint16 port;
    enet_uint32 connect_id;
} refused_key;

#define REFUSED_RING 32u
#define REFUSAL_MAGIC 0x6b726566u // "kref"
#define REFUSAL_LENGTH 11u        // header 2, magic 4, reason 1, connect id 4

typedef struct enet_net_host {
    net_host base;
    ENetHost *enet;
    enet_slot *slots; ///< one per ENet peer (server: max_peers; client: 1)
    ENetPacket *held; ///< the packet of the last RECEIVE event
    uint64_t wire_sent, wire_received;
    uint64_t datagrams_sent, datagrams_received; ///< ENet's, folded (net_host_enet_datagrams)
    enet_uint32 last_sent_data, last_sent_packets, last_received_data, last_received_packets;
    refused_key refused[REFUSED_RING];
    unsigned refused_next, refused_count;
    uint8_t refusal;     ///< client: the reason of a refusal datagram received, not yet reported
    bool leaving;        ///< client: net_host_leave was called
    uint8_t leave_state; ///< a net_leave_state
    enet_uint32 leave_start;
    hs_server *hs;            ///< secure server
    hs_client *hsc;           ///< secure client
    ENetAddress server;       ///< client: the server's address
    enet_uint32 connect_sent; ///< client: enet_time_get() at ENet's connect
    uint32_t mtu;             ///< the largest MTU a peer gets (NET_HOST_ENET_MTU, or the secure one)
    /// Secure mode: one datagram state per ENet peer (host_enet_frame.c), a
    /// buffer for the datagram being sent, the next secure host.
    frame_peer *frames;
    /// Secure server: the datagram state of each peer's last connection
    /// when its client left, for the leave's echo (host_enet_leave.c).
    frame_peer *left_frames;
    uint32_t frame_count;
    uint32_t frame_hint; ///< the peer enet_socket_send matched last
    uint8_t *frame_buffer;
    struct enet_net_host *frame_next;
} enet_net_host;

// host_enet.c
/// ENet's connect to the server (at once, or once the handshake admitted
/// the client). False when ENet has no free peer.
bool enet_start_connect(enet_net_host *h);

// host_enet_live.c
/// ENet's own timeout for a connected peer whose silence limit is
/// `limit_ms`: a backstop far beyond it, so that only keel's silence timer
/// ends a connection that still delivers datagrams.
void enet_live_configure(ENetPeer *peer, uint32_t limit_ms);
/// Secure mode, a connected peer whose silence limit is `limit_ms`: ENet
/// pings it only after a quarter of that limit without an acknowledgement
/// (at least ENet's 500 ms), not every 500 ms: liveness is judged by any
/// datagram, and the pings are most of the datagrams that carry no input.
void enet_live_sparse_pings(ENetPeer *peer, uint32_t limit_ms);
/// At a connection's start (CONNECT): the silence timer starts; a client
/// seeds ENet's round trip from its connect's.
void enet_live_start(enet_net_host *h, ENetPeer *peer, uint32_t i);
/// Once the socket is drained: notes which peers were heard from, and
/// paces the join (a server resends its VERIFY_CONNECT to a client that
/// shows it missed the acknowledgement; a client resends its first
/// reliable commands to a server that shows it missed them).
void enet_live_step(enet_net_host *h, enet_uint32 now);
/// host->intercept, server, a datagram from a peer that ENet will read (in
/// secure mode, once it authenticated): from a peer still in ENet's
/// handshake, an ACKNOWLEDGE of its VERIFY_CONNECT is put in front of its
/// commands. Returns 0 (ENet reads it).
int enet_live_receive(enet_net_host *h, ENetHost *e);
/// A client's leave under way: its unacknowledged commands (the DISCONNECT)
/// are sent again every one and a half round trips.
void enet_live_leave_step(ENetPeer *p, enet_uint32 now);

// host_enet_gate.c
/// ENet's host->intercept: sees every datagram before ENet.
int ENET_CALLBACK enet_gate_intercept(ENetHost *e, ENetEvent *event);
/// A secure client's exchange: sends what is due, starts ENet's connect once
/// admitted, turns a denial into a refusal. True while it is under way.
bool enet_gate_handshake_step(enet_net_host *h);
/// Secure mode on a new server host (config->token_key set): its address as
/// clients reach it (public_address, or `address` and the bound port), the
/// handshake's state. False with *error set.
bool enet_gate_secure_server(enet_net_host *h, const net_host_config *config, const char *address, const char **error);

// host_enet_frame.c (frame.h: the layout)
/// Secure mode on a new host: a datagram state per peer; the host's socket
/// is known to enet_socket_send from now on. False with *error set (out of
/// memory, or keel's enet_socket_send is not the one libenet calls).
bool enet_frame_init(enet_net_host *h, uint32_t peers, const char **error);
/// Forgets the host's socket and wipes every datagram state (no-op when
/// not secure).
void enet_frame_free(enet_net_host *h);
/// Wipes the datagram state of ENet peer `peer` (its connection ended).
void enet_frame_stop(enet_net_host *h, uint32_t peer);
/// A secure client's connect: its datagrams from the CONNECT on carry the
/// handshake's session keys.
void enet_frame_start_client(enet_net_host *h, const ENetPeer *p);
/// host->intercept, secure mode, a datagram from a peer (a client: any but a
/// refusal): opens it in place and strips its trailer. 0: ENet reads it; 1:
/// dropped and counted.
int enet_frame_receive(enet_net_host *h, ENetHost *e);
/// A secure server's CONNECT (trailer included in e->receivedDataLength):
/// true when it opens with the key of an admission of its address, holds a
/// CONNECT, and that admission binds (hs_server_admits_open) its connect id
/// (*connect_id); the datagram is then in clear without its trailer. Else
/// counted (no admission: handshake_refused[NET_HS_UNADMITTED]; no key
/// opens it: frames_forged). *client_id receives the admission's client id.
bool enet_frame_admit(enet_net_host *h, ENetHost *e, enet_uint32 *connect_id, uint64_t *client_id);
/// Counts a dropped datagram (a seal_result) and returns 1 (ENet skips it).
int enet_frame_drop(enet_net_host *h, int result);
/// Secure server: the datagram state of peer `peer`, whose client left,
/// moves to left_frames (its connection's is wiped as by enet_frame_stop).
void enet_frame_retire(enet_net_host *h, uint32_t peer);
/// Wipes the datagram state enet_frame_retire kept for `peer`.
void enet_frame_forget_left(enet_net_host *h, uint32_t peer);
/// Secure server: opens a datagram from the client that left `peer` with
/// the state kept, in place (the trailer included in n; window moved as
/// frame_open).
seal_result enet_frame_open_left(enet_net_host *h, uint32_t peer, uint8_t *d, size_t n);
/// Sends ENet datagram d[0 .. n) to `to` as peer `peer`'s connection that
/// its client left: in secure mode with a trailer from the state kept (d
/// has room for it). Counted in the wire bytes.
void enet_frame_send_left(enet_net_host *h, uint32_t peer, const ENetAddress *to, uint8_t *d, size_t n);

// host_enet_leave.c
/// Server: the client of peer i left (ENet reported its DISCONNECT with
/// NET_DISCONNECT_DATA_LEAVE and reset the peer): its acknowledgement may
/// be lost, so what the echo needs is kept for NET_LEAVE_MAX_MS.
void enet_leave_keep(enet_net_host *h, uint32_t i, const ENetPeer *p, enet_uint32 now);
/// Server: forgets peer i's leave once NET_LEAVE_MAX_MS passed or ENet
/// gave the peer to another connection (called from enet_live_step).
void enet_leave_expire(enet_net_host *h, uint32_t i, enet_uint32 now);
/// host->intercept, server, a datagram for peer id i of a client that left
/// it: a DISCONNECT of its leave sent again (its acknowledgement was lost)
/// is acknowledged again. 0: not such a datagram (ENet reads it as usual);
/// 1: taken (ENet skips it; in secure mode one that does not authenticate
/// with the connection's keys is counted as forged or replayed).
int enet_leave_echo(enet_net_host *h, ENetHost *e);

#endif
