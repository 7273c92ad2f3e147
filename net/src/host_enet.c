// keel: the ENet host (UDP). The only file in keel that includes enet.h.
// MIT licence, see LICENSE.
//
// docs/transport.md explains the settings; in short (ENet 1.3.17):
// - three channels, one per traffic class: control is reliable and ordered,
//   input and snapshot are unsequenced (ENET_PACKET_FLAG_UNSEQUENCED);
// - MTU NET_HOST_ENET_MTU (NET_MTU + 28) on our side, and a bigger MTU a
//   client proposes is rewritten in its CONNECT datagram before ENet reads it
//   (ENet adopts the client's value, protocol.c enet_protocol_handle_connect),
//   so both sides use it; clamped once more at the connect event;
// - enet_peer_throttle_configure(peer, 5000, 32, 0): the throttle never
//   drops; no bandwidth limit; peer timeout = config.timeout_ms, enforced by
//   ENet and by a watchdog here (ENet checks timeouts only when a reliable
//   command's doubling retransmission timer fires, which can be up to twice
//   the configured time); ENet's own limits are timeout_ms once a reliable
//   command was sent again and again unanswered, and twice that otherwise:
//   a process that was stopped (SIGSTOP) for less than 2 x timeout_ms made no
//   retransmissions, and its peer is not timed out before it reads what the
//   other side sent meanwhile (the watchdog runs only once the socket is
//   drained);
// - host->duplicatePeers = max_peers_per_address; ENet drops a connection it
//   refuses without a word, so the server's host->intercept looks at CONNECT
//   datagrams, counts the ones ENet is about to drop and answers each with a
//   refusal datagram (REFUSAL_LENGTH bytes: ENet's 2-byte header for "no
//   peer", "kref", the reason, the attempt's connect id); the client's
//   intercept takes it and its connect fails at once with the reason. The
//   answer is smaller than the CONNECT it answers (no amplification), and
//   another ENet program ignores it (a command from no peer that is not a
//   CONNECT);
// - leaving (net_host_leave): enet_peer_disconnect_later with
//   NET_DISCONNECT_DATA_LEAVE, then the host is serviced until ENet reports
//   the DISCONNECT acknowledged (ENet holds the DISCONNECT back while any
//   reliable command, a ping included, is unacknowledged) or NET_LEAVE_MAX_MS
//   passed, then the peer is reset. The DISCONNECT's 32-bit value tells the
//   other side a leave from a close (NET_DISCONNECT_DATA_CLOSE) and from a
//   timeout (ENet reports 0);
// - secure mode (net_handshake.h): the intercept keeps handshake datagrams
//   (0x7F 0xFF 'k' 'h') from ENet and hands them to handshake.c; a secure
//   server drops every CONNECT from an address it has not admitted, before
//   ENet allocates a peer; a secure client runs the exchange from
//   enet_service and calls enet_host_connect once admitted.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include <enet/enet.h>
#include <enet/time.h>

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
} enet_slot;

typedef struct refused_key {
    enet_uint32 address;
    enet_uint16 port;
    enet_uint32 connect_id;
} refused_key;

#define REFUSED_RING 32u
#define REFUSAL_MAGIC 0x6b726566u // "kref"
#define REFUSAL_LENGTH 11u       // header 2, magic 4, reason 1, connect id 4

typedef struct enet_net_host {
    net_host base;
    ENetHost *enet;
    enet_slot *slots; ///< one per ENet peer (server: max_peers; client: 1)
    ENetPacket *held; ///< the packet of the last RECEIVE event
    uint64_t wire_sent, wire_received;
    enet_uint32 last_sent_data, last_sent_packets, last_received_data, last_received_packets;
    refused_key refused[REFUSED_RING];
    unsigned refused_next, refused_count;
    uint8_t refusal;      ///< client: the reason of a refusal datagram received, not yet reported
    bool leaving;         ///< client: net_host_leave was called
    uint8_t leave_state;  ///< a net_leave_state
    enet_uint32 leave_start;
    hs_server *hs;        ///< secure server
    hs_client *hsc;       ///< secure client
    ENetAddress server;   ///< client: the server's address
} enet_net_host;

static const net_host_ops enet_ops;

static enet_net_host *impl(net_host *host) { return (enet_net_host *)host; }
static const enet_net_host *cimpl(const net_host *host) { return (const enet_net_host *)host; }

static bool enet_ready(const char **error)
{
    static bool initialised;
    if (!initialised) {
        if (enet_initialize() != 0) {
            if (error)
                *error = "enet_initialize failed";
            return false;
        }
        initialised = true;
    }
    return true;
}

// Folds ENet's 32-bit totals into the 64-bit wire counters.
static void fold_counters(enet_net_host *h)
{
    ENetHost *e = h->enet;
    h->wire_sent += (enet_uint32)(e->totalSentData - h->last_sent_data) +
                    (uint64_t)NET_WIRE_UDP_IP * (enet_uint32)(e->totalSentPackets - h->last_sent_packets);
    h->wire_received += (enet_uint32)(e->totalReceivedData - h->last_received_data) +
                        (uint64_t)NET_WIRE_UDP_IP * (enet_uint32)(e->totalReceivedPackets - h->last_received_packets);
    h->last_sent_data = e->totalSentData;
    h->last_sent_packets = e->totalSentPackets;
    h->last_received_data = e->totalReceivedData;
    h->last_received_packets = e->totalReceivedPackets;
}

static void release_held(enet_net_host *h)
{
    if (h->held) {
        enet_packet_destroy(h->held);
        h->held = NULL;
    }
}

static void configure_peer(enet_net_host *h, ENetPeer *peer)
{
    // Throttle (peer.c enet_peer_throttle, protocol.c check_outgoing_commands):
    // an unreliable packet is dropped when packetThrottleCounter (7 per packet,
    // mod 32, so 0..31) exceeds packetThrottle. packetThrottle starts at 32,
    // acceleration 32 only clamps it to the limit (32 without a bandwidth
    // limit), deceleration 0 never lowers it: nothing is ever dropped.
    enet_peer_throttle_configure(peer, 5000, ENET_PEER_PACKET_THROTTLE_SCALE, 0);
    enet_peer_timeout(peer, 0, h->base.config.timeout_ms, 2u * h->base.config.timeout_ms);
    if (peer->mtu > NET_HOST_ENET_MTU)
        peer->mtu = NET_HOST_ENET_MTU;
}

static void send_raw(enet_net_host *h, const ENetAddress *to, const uint8_t *d, size_t n)
{
    ENetBuffer b;
    b.data = (void *)d;
    b.dataLength = n;
    if (enet_socket_send(h->enet->socket, to, &b, 1) > 0)
        h->wire_sent += n + NET_WIRE_UDP_IP;
}

static bool refused_seen(enet_net_host *h, refused_key k)
{
    unsigned n = h->refused_count < REFUSED_RING ? h->refused_count : REFUSED_RING;
    for (unsigned i = 0; i < n; i++) {
        const refused_key *r = &h->refused[i];
        if (r->address == k.address && r->port == k.port && r->connect_id == k.connect_id)
            return true;
    }
    h->refused[h->refused_next] = k;
    h->refused_next = (h->refused_next + 1) % REFUSED_RING;
    h->refused_count++;
    return false;
}

// The server's answer to a CONNECT ENet is about to drop.
static void send_refusal(enet_net_host *h, const ENetAddress *to, const enet_uint8 *connect_id, uint8_t reason)
{
    enet_uint8 d[REFUSAL_LENGTH];
    d[0] = (enet_uint8)(ENET_PROTOCOL_MAXIMUM_PEER_ID >> 8);
    d[1] = (enet_uint8)(ENET_PROTOCOL_MAXIMUM_PEER_ID & 0xFF);
    for (int i = 0; i < 4; i++)
        d[2 + i] = (enet_uint8)(REFUSAL_MAGIC >> (24 - 8 * i));
    d[6] = reason;
    memcpy(d + 7, connect_id, 4);
    send_raw(h, to, d, sizeof d);
}

// The client's side: a refusal of the connect under way (from the server's
// address, with this attempt's connect id) is kept for enet_service to
// report. Returns 1 when the datagram was a refusal (ENet skips it).
static int take_refusal_datagram(enet_net_host *h, ENetHost *e)
{
    const enet_uint8 *d = e->receivedData;
    if (e->receivedDataLength != REFUSAL_LENGTH || d[0] != (ENET_PROTOCOL_MAXIMUM_PEER_ID >> 8) ||
        d[1] != (ENET_PROTOCOL_MAXIMUM_PEER_ID & 0xFF))
        return 0;
    enet_uint32 magic = ((enet_uint32)d[2] << 24) | ((enet_uint32)d[3] << 16) | ((enet_uint32)d[4] << 8) | d[5];
    if (magic != REFUSAL_MAGIC)
        return 0;
    const ENetPeer *p = &e->peers[0];
    if (h->slots[0].state == SLOT_CONNECTING && e->receivedAddress.host == p->address.host &&
        e->receivedAddress.port == p->address.port && memcmp(d + 7, &p->connectID, 4) == 0 &&
        (d[6] == NET_DISCONNECT_REFUSED_FULL || d[6] == NET_DISCONNECT_REFUSED_ADDRESS))
        h->refusal = d[6];
    return 1;
}

// A handshake datagram: a secure server answers it, a secure client moves
// its exchange on; other hosts drop it.
static void handshake_datagram(enet_net_host *h, ENetHost *e)
{
    if (h->hsc) {
        if (e->receivedAddress.host == h->server.host && e->receivedAddress.port == h->server.port)
            hs_client_take(h->hsc, e->receivedData, e->receivedDataLength);
        return;
    }
    if (!h->hs)
        return;
    uint8_t reply[HS_MAX_DATAGRAM];
    hs_outcome o;
    hs_addr from = {e->receivedAddress.host, e->receivedAddress.port};
    size_t n = hs_server_receive(h->hs, e->receivedData, e->receivedDataLength, from, (uint64_t)time(NULL),
                                 hs_clock_ms(), reply, &o);
    h->base.stats.handshake_refused[o.refusal] += o.refusal != NET_HS_OK;
    h->base.stats.handshake_challenges += o.challenged;
    h->base.stats.handshake_admitted += o.admitted;
    if (n > 0)
        send_raw(h, &e->receivedAddress, reply, n);
}

// Sees every datagram before ENet. Handshake datagrams: handshake_datagram.
// On a client: take_refusal_datagram. On a
// server, for a CONNECT (a datagram from no peer):
// clamps the proposed MTU in place, and counts the connection as refused when
// ENet is about to drop it (the same test as enet_protocol_handle_connect:
// no free peer, or duplicatePeers peers already from that address), once per
// connection attempt (the client retransmits its CONNECT), and answers every
// such CONNECT with a refusal datagram. Returns 0: ENet processes the
// datagram as usual.
static int ENET_CALLBACK intercept(ENetHost *e, ENetEvent *event)
{
    (void)event;
    enet_net_host *h = (enet_net_host *)e->peers[0].data;
    if (!h || e->receivedDataLength < 2)
        return 0;
    if (hs_is_handshake(e->receivedData, e->receivedDataLength)) {
        handshake_datagram(h, e);
        return 1; // never ENet's
    }
    if (!h->base.server)
        return take_refusal_datagram(h, e);
    enet_uint8 *d = e->receivedData;
    enet_uint16 peer_id = (enet_uint16)((d[0] << 8) | d[1]);
    if ((peer_id & 0x0FFF) != ENET_PROTOCOL_MAXIMUM_PEER_ID || (peer_id & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED))
        return 0;
    size_t header = (peer_id & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? sizeof(ENetProtocolHeader)
                                                                     : offsetof(ENetProtocolHeader, sentTime);
    if (e->receivedDataLength < header + sizeof(ENetProtocolConnect))
        return 0;
    enet_uint8 *cmd = d + header;
    if ((cmd[0] & ENET_PROTOCOL_COMMAND_MASK) != ENET_PROTOCOL_COMMAND_CONNECT)
        return 0;

    enet_uint32 mtu;
    memcpy(&mtu, cmd + offsetof(ENetProtocolConnect, mtu), sizeof mtu);
    if (ENET_NET_TO_HOST_32(mtu) > NET_HOST_ENET_MTU) {
        mtu = ENET_HOST_TO_NET_32(NET_HOST_ENET_MTU);
        memcpy(cmd + offsetof(ENetProtocolConnect, mtu), &mtu, sizeof mtu);
    }

    refused_key k;
    memset(&k, 0, sizeof k);
    k.address = e->receivedAddress.host;
    k.port = e->receivedAddress.port;
    memcpy(&k.connect_id, cmd + offsetof(ENetProtocolConnect, connectID), sizeof k.connect_id);
    bool free_peer = false;
    size_t same_address = 0;
    for (size_t i = 0; i < e->peerCount; i++) {
        const ENetPeer *p = &e->peers[i];
        if (p->state == ENET_PEER_STATE_DISCONNECTED) {
            free_peer = true;
        } else if (p->state != ENET_PEER_STATE_CONNECTING && p->address.host == k.address) {
            if (p->address.port == k.port && p->connectID == k.connect_id)
                return 0; // a retransmission of an accepted CONNECT
            same_address++;
        }
    }
    uint64_t client_id;
    if (h->hs && !hs_server_admits(h->hs, (hs_addr){k.address, k.port}, k.connect_id, hs_clock_ms(), &client_id)) {
        h->base.stats.handshake_refused[NET_HS_UNADMITTED]++;
        return 1; // dropped before ENet allocates a peer
    }
    if (free_peer && same_address < e->duplicatePeers)
        return 0;
    if (!refused_seen(h, k))
        h->base.stats.peers_refused++;
    send_refusal(h, &e->receivedAddress, cmd + offsetof(ENetProtocolConnect, connectID),
                 same_address >= e->duplicatePeers ? NET_DISCONNECT_REFUSED_ADDRESS : NET_DISCONNECT_REFUSED_FULL);
    return 0;
}

static uint32_t peer_index(const enet_net_host *h, const ENetPeer *peer)
{
    return (uint32_t)(peer - h->enet->peers);
}

// The ENet peer behind a handle, when it is connected.
static ENetPeer *connected_peer(enet_net_host *h, uint32_t peer)
{
    if (peer >= h->enet->peerCount || h->slots[peer].state != SLOT_CONNECTED)
        return NULL;
    return &h->enet->peers[peer];
}

// Peers not heard from for timeout_ms: reset them; a DISCONNECT event for
// the first connected or connecting one.
static bool watchdog(enet_net_host *h, net_event *ev)
{
    enet_uint32 now = enet_time_get();
    for (uint32_t i = 0; i < h->enet->peerCount; i++) {
        enet_slot *s = &h->slots[i];
        ENetPeer *p = &h->enet->peers[i];
        if (s->state == SLOT_FREE) {
            // A handshake that never completes is dropped after the timeout,
            // silently (keel never saw the peer), so that connection attempts
            // cannot hold slots and address quotas for ENet's ~30 s.
            if (p->state == ENET_PEER_STATE_DISCONNECTED || p->state == ENET_PEER_STATE_ZOMBIE) {
                s->half_open_since = 0;
            } else if (s->half_open_since == 0) {
                s->half_open_since = now + 1u;
            } else if (ENET_TIME_DIFFERENCE(now, s->half_open_since - 1u) >= h->base.config.timeout_ms &&
                       !ENET_TIME_LESS(now, s->half_open_since - 1u)) {
                enet_peer_reset(p);
                s->half_open_since = 0;
            }
            continue;
        }
        s->half_open_since = 0;
        enet_uint32 last = s->since;
        if (s->state == SLOT_CONNECTED && p->lastReceiveTime != 0 && ENET_TIME_LESS(last, p->lastReceiveTime))
            last = p->lastReceiveTime;
        if (ENET_TIME_LESS(now, last) || ENET_TIME_DIFFERENCE(now, last) < h->base.config.timeout_ms)
            continue;
        bool report = s->state != SLOT_CLOSING;
        ev->reason = s->state == SLOT_CONNECTING ? NET_DISCONNECT_UNANSWERED : NET_DISCONNECT_TIMEOUT;
        enet_peer_reset(p);
        s->state = SLOT_FREE;
        if (!report && h->leaving && h->leave_state == NET_LEAVE_PENDING)
            h->leave_state = NET_LEAVE_GAVE_UP;
        if (report) {
            ev->peer = i;
            return true;
        }
    }
    return false;
}

// An ENet event in keel's terms; false when it is not reported.
static bool translate(enet_net_host *h, ENetEvent *e, net_event *ev)
{
    uint32_t i = peer_index(h, e->peer);
    enet_slot *s = &h->slots[i];
    switch (e->type) {
    case ENET_EVENT_TYPE_CONNECT:
        if (h->base.server ? s->state != SLOT_FREE : s->state != SLOT_CONNECTING) {
            enet_peer_reset(e->peer); // not expected: forget it
            s->state = SLOT_FREE;
            return false;
        }
        s->state = SLOT_CONNECTED;
        s->since = enet_time_get();
        s->has_client_id = h->hs && hs_server_client_id(h->hs, (hs_addr){e->peer->address.host, e->peer->address.port},
                                                         e->peer->connectID, &s->client_id);
        configure_peer(h, e->peer);
        ev->type = NET_EVENT_CONNECT;
        ev->peer = i;
        return true;
    case ENET_EVENT_TYPE_DISCONNECT: {
        uint8_t was = s->state;
        s->state = SLOT_FREE;
        if (was == SLOT_CLOSING && h->leaving && h->leave_state == NET_LEAVE_PENDING)
            h->leave_state = NET_LEAVE_DONE; // acknowledged (or the server closed it too)
        if (was != SLOT_CONNECTED && was != SLOT_CONNECTING)
            return false;
        ev->type = NET_EVENT_DISCONNECT;
        ev->peer = i;
        if (was == SLOT_CONNECTING)
            ev->reason = NET_DISCONNECT_UNANSWERED;
        else if (e->data == NET_DISCONNECT_DATA_LEAVE)
            ev->reason = NET_DISCONNECT_LEFT;
        else
            ev->reason = e->data == 0 ? NET_DISCONNECT_TIMEOUT : NET_DISCONNECT_CLOSED;
        return true;
    }
    case ENET_EVENT_TYPE_RECEIVE:
        if (s->state != SLOT_CONNECTED || e->channelID >= NET_CHANNEL_COUNT) {
            enet_packet_destroy(e->packet);
            return false;
        }
        h->held = e->packet;
        ev->type = NET_EVENT_RECEIVE;
        ev->peer = i;
        ev->channel = e->channelID;
        ev->data = e->packet->data;
        ev->length = e->packet->dataLength;
        return true;
    case ENET_EVENT_TYPE_NONE:
        break;
    }
    return false;
}

static bool start_connect(enet_net_host *h);

// A secure client's exchange: sends what is due, starts ENet's connect once
// admitted, turns a denial into a refusal. True while it is under way.
static bool handshake_step(enet_net_host *h)
{
    hs_client *c = h->hsc;
    if (!c || h->slots[0].state != SLOT_CONNECTING)
        return false;
    size_t n;
    const uint8_t *d = hs_client_due(c, hs_clock_ms(), &n);
    if (d)
        send_raw(h, &h->server, d, n);
    if (c->phase == HS_PHASE_ADMITTED && start_connect(h))
        c->phase = HS_PHASE_CONNECT;
    if (c->phase == HS_PHASE_DENIED && !h->refusal)
        h->refusal = NET_DISCONNECT_REFUSED_TOKEN;
    return c->phase == HS_PHASE_REQUEST || c->phase == HS_PHASE_RESPONSE;
}

static net_event_type enet_service(net_host *host, net_event *ev, uint32_t timeout_ms)
{
    enet_net_host *h = impl(host);
    release_held(h);
    enet_uint32 start = enet_time_get();
    for (;;) {
        enet_uint32 elapsed = ENET_TIME_DIFFERENCE(enet_time_get(), start);
        enet_uint32 wait = elapsed >= timeout_ms ? 0 : timeout_ms - elapsed;
        if (wait > 50)
            wait = 50; // the watchdog runs at least every 50 ms
        if (handshake_step(h) && wait > 10)
            wait = 10; // resends and the next step on time
        ENetEvent e;
        int r = enet_host_service(h->enet, &e, wait);
        fold_counters(h);
        if (r > 0) {
            if (translate(h, &e, ev))
                return ev->type;
            continue;
        }
        handshake_step(h);
        if (h->refusal && h->slots[0].state == SLOT_CONNECTING) {
            enet_peer_reset(&h->enet->peers[0]);
            h->slots[0].state = SLOT_FREE;
            ev->type = NET_EVENT_DISCONNECT;
            ev->peer = 0;
            ev->reason = h->refusal;
            h->refusal = 0;
            return ev->type;
        }
        // Everything received so far is processed: now a silence is real.
        if (watchdog(h, ev)) {
            ev->type = NET_EVENT_DISCONNECT;
            return ev->type;
        }
        if (r < 0 || ENET_TIME_DIFFERENCE(enet_time_get(), start) >= timeout_ms)
            return NET_EVENT_NONE;
    }
}

static bool enet_send(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t length)
{
    enet_net_host *h = impl(host);
    ENetPeer *p = connected_peer(h, peer);
    if (!p)
        return false;
    // Unreliable: unsequenced, and should the peer's MTU be below ours (a
    // foreign client proposing less), fragments stay unreliable.
    enet_uint32 flags = channel == NET_CHANNEL_CONTROL
                            ? ENET_PACKET_FLAG_RELIABLE
                            : ENET_PACKET_FLAG_UNSEQUENCED | ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT;
    ENetPacket *packet = enet_packet_create(data, length, flags);
    if (!packet)
        return false;
    if (enet_peer_send(p, (enet_uint8)channel, packet) < 0) {
        enet_packet_destroy(packet);
        return false;
    }
    return true;
}

static void enet_flush(net_host *host)
{
    enet_net_host *h = impl(host);
    enet_host_flush(h->enet);
    fold_counters(h);
}

static void enet_disconnect(net_host *host, uint32_t peer)
{
    enet_net_host *h = impl(host);
    if (peer >= h->enet->peerCount)
        return;
    enet_slot *s = &h->slots[peer];
    ENetPeer *p = &h->enet->peers[peer];
    if (s->state == SLOT_CONNECTED) {
        // Queued messages go first, then the disconnect; ENet's DISCONNECT
        // event for it is not reported.
        enet_peer_disconnect_later(p, NET_DISCONNECT_DATA_CLOSE);
        s->state = p->state == ENET_PEER_STATE_DISCONNECTED ? SLOT_FREE : SLOT_CLOSING;
        s->since = enet_time_get();
    } else if (s->state == SLOT_CONNECTING) {
        enet_peer_disconnect(p, NET_DISCONNECT_DATA_CLOSE); // not connected yet: ENet resets the peer at once
        s->state = SLOT_FREE;
    }
}

static net_leave_state enet_leave(net_host *host, uint32_t wait_ms)
{
    enet_net_host *h = impl(host);
    enet_slot *s = &h->slots[0];
    ENetPeer *p = &h->enet->peers[0];
    if (!h->leaving) {
        if (s->state != SLOT_CONNECTED) {
            if (s->state == SLOT_CONNECTING) { // abandoned: ENet sends a DISCONNECT once and resets the peer
                enet_peer_disconnect(p, NET_DISCONNECT_DATA_LEAVE);
                s->state = SLOT_FREE;
            }
            return NET_LEAVE_NOT_CONNECTED;
        }
        h->leaving = true;
        h->leave_state = NET_LEAVE_PENDING;
        h->leave_start = enet_time_get();
        enet_peer_disconnect_later(p, NET_DISCONNECT_DATA_LEAVE);
        s->state = p->state == ENET_PEER_STATE_DISCONNECTED ? SLOT_FREE : SLOT_CLOSING;
        s->since = h->leave_start;
    }
    release_held(h);
    enet_uint32 start = enet_time_get();
    while (h->leave_state == NET_LEAVE_PENDING) {
        enet_uint32 now = enet_time_get();
        enet_uint32 spent = ENET_TIME_DIFFERENCE(now, h->leave_start);
        if (spent >= NET_LEAVE_MAX_MS || s->state == SLOT_FREE) {
            enet_peer_reset(p);
            s->state = SLOT_FREE;
            h->leave_state = NET_LEAVE_GAVE_UP;
            break;
        }
        enet_uint32 elapsed = ENET_TIME_DIFFERENCE(now, start);
        enet_uint32 wait = elapsed >= wait_ms ? 0 : wait_ms - elapsed;
        if (wait > NET_LEAVE_MAX_MS - spent)
            wait = NET_LEAVE_MAX_MS - spent;
        ENetEvent e;
        int r = enet_host_service(h->enet, &e, wait);
        fold_counters(h);
        if (r > 0) {
            net_event ignored;
            memset(&ignored, 0, sizeof ignored);
            translate(h, &e, &ignored); // only the closing peer's DISCONNECT matters
            release_held(h);
            continue;
        }
        if (r < 0 || ENET_TIME_DIFFERENCE(enet_time_get(), start) >= wait_ms)
            break;
    }
    return (net_leave_state)h->leave_state;
}

static void enet_wire(const net_host *host, uint64_t *sent, uint64_t *received)
{
    const enet_net_host *h = cimpl(host);
    const ENetHost *e = h->enet;
    *sent = h->wire_sent + (enet_uint32)(e->totalSentData - h->last_sent_data) +
            (uint64_t)NET_WIRE_UDP_IP * (enet_uint32)(e->totalSentPackets - h->last_sent_packets);
    *received = h->wire_received + (enet_uint32)(e->totalReceivedData - h->last_received_data) +
                (uint64_t)NET_WIRE_UDP_IP * (enet_uint32)(e->totalReceivedPackets - h->last_received_packets);
}

static uint16_t enet_port(const net_host *host)
{
    const enet_net_host *h = cimpl(host);
    if (h->base.server)
        return h->enet->address.port;
    ENetAddress a;
    if (enet_socket_get_address(h->enet->socket, &a) < 0)
        return 0;
    return a.port;
}

static void enet_destroy(net_host *host)
{
    enet_net_host *h = impl(host);
    release_held(h);
    enet_host_destroy(h->enet); // resets every peer without notice
    hs_server_destroy(h->hs);
    if (h->hsc)
        hs_client_wipe(h->hsc); // the token's sent part
    free(h->hsc);
    free(h->slots);
    free(h);
}

static const net_host_ops enet_ops = {
    enet_service, enet_send, enet_flush, enet_disconnect, enet_leave, enet_wire, enet_port, enet_destroy,
};

static enet_net_host *create(const net_host_config *config, bool server, const ENetAddress *bind,
                             size_t peers, uint32_t mtu, const char **error)
{
    enet_net_host *h = calloc(1, sizeof *h);
    enet_slot *slots = calloc(peers, sizeof *slots);
    if (!h || !slots) {
        free(h);
        free(slots);
        if (error)
            *error = "out of memory";
        return NULL;
    }
    ENetHost *e = enet_host_create(bind, peers, NET_CHANNEL_COUNT, 0, 0);
    if (!e) {
        free(h);
        free(slots);
        if (error)
            *error = server ? "cannot bind the address and port (in use?)" : "cannot create the client socket";
        return NULL;
    }
    net_host_init(&h->base, &enet_ops, config, server);
    h->enet = e;
    h->slots = slots;
    enet_host_bandwidth_limit(e, 0, 0);
    e->mtu = mtu;
    e->maximumPacketSize = NET_HOST_MAX_MESSAGE;
    for (size_t i = 0; i < e->peerCount; i++) {
        e->peers[i].mtu = mtu; // peers were reset with the default MTU
        e->peers[i].data = h;
    }
    if (server)
        e->duplicatePeers = config->max_peers_per_address;
    e->intercept = intercept;
    return h;
}

static bool parse_address(const char *address, uint16_t port, ENetAddress *out, const char **error)
{
    memset(out, 0, sizeof *out);
    if (!address || enet_address_set_host_ip(out, address) != 0) {
        if (error)
            *error = "not a dotted IPv4 address";
        return false;
    }
    out->port = port;
    return true;
}

// Secure mode on a new server host: its address as clients reach it, the
// handshake's state.
static bool secure_server(enet_net_host *h, const net_host_config *c, const char *address, const char **error)
{
    char text[64];
    if (!c->public_address) {
        if (strcmp(address, "0.0.0.0") == 0) {
            if (error)
                *error = "secure mode on 0.0.0.0 needs public_address (how clients reach the server)";
            return false;
        }
        snprintf(text, sizeof text, "%s:%u", address, (unsigned)h->enet->address.port);
    }
    net_token_address self;
    if (!net_token_address_parse(c->public_address ? c->public_address : text, &self)) {
        if (error)
            *error = "public_address is not A.B.C.D:PORT or [IPv6]:PORT";
        return false;
    }
    h->hs = hs_server_create(c->token_key, c->protocol_id, &self, c->max_peers);
    if (!h->hs) {
        if (error)
            *error = "cannot set up the handshake (out of memory, or libsodium failed)";
        return false;
    }
    h->base.config.token_key = NULL; // copied: the caller's may go
    h->base.config.public_address = NULL;
    return true;
}

net_host *net_host_enet_listen(const char *address, uint16_t port, const net_host_config *config,
                               const char **error)
{
    net_host_config c;
    const char *why = net_host_config_check(config, &c);
    if (why) {
        if (error)
            *error = why;
        return NULL;
    }
    ENetAddress a;
    if (!enet_ready(error) || !parse_address(address, port, &a, error))
        return NULL;
    enet_net_host *h = create(&c, true, &a, c.max_peers, NET_HOST_ENET_MTU, error);
    if (h && c.token_key && !secure_server(h, &c, address, error)) {
        enet_destroy(&h->base);
        return NULL;
    }
    return h ? &h->base : NULL;
}

// ENet's connect to the server (at once, or once the handshake admitted us).
static bool start_connect(enet_net_host *h)
{
    ENetPeer *p = enet_host_connect(h->enet, &h->server, NET_CHANNEL_COUNT, 0);
    if (!p)
        return false;
    enet_peer_timeout(p, 0, h->base.config.timeout_ms, 2u * h->base.config.timeout_ms);
    return true;
}

net_host *net_host_enet_connect(const char *address, uint16_t port, const net_host_config *config,
                                uint32_t propose_mtu, const char **error)
{
    net_host_config c;
    const char *why = net_host_config_check(config, &c);
    if (why) {
        if (error)
            *error = why;
        return NULL;
    }
    ENetAddress a;
    if (!enet_ready(error) || !parse_address(address, port, &a, error))
        return NULL;
    if (port == 0) {
        if (error)
            *error = "port 0";
        return NULL;
    }
    if (propose_mtu < ENET_PROTOCOL_MINIMUM_MTU || propose_mtu > ENET_PROTOCOL_MAXIMUM_MTU) {
        if (error)
            *error = "MTU out of ENet's range";
        return NULL;
    }
    enet_net_host *h = create(&c, false, NULL, 1, propose_mtu, error);
    if (!h)
        return NULL;
    h->server = a;
    if (c.connect_token) {
        h->hsc = malloc(sizeof *h->hsc);
        if (!h->hsc || !hs_client_start(h->hsc, c.connect_token)) {
            enet_destroy(&h->base);
            if (error)
                *error = "cannot start the handshake (out of memory, or libsodium failed)";
            return NULL;
        }
        h->base.config.connect_token = NULL; // copied
    } else if (!start_connect(h)) {
        enet_destroy(&h->base);
        if (error)
            *error = "enet_host_connect failed";
        return NULL;
    }
    h->slots[0].state = SLOT_CONNECTING;
    h->slots[0].since = enet_time_get();
    return &h->base;
}

uint32_t net_host_enet_peer_mtu(const net_host *host, uint32_t peer)
{
    if (!host || host->ops != &enet_ops)
        return 0;
    const enet_net_host *h = cimpl(host);
    if (peer >= h->enet->peerCount || h->slots[peer].state == SLOT_FREE)
        return 0;
    return h->enet->peers[peer].mtu;
}

uint32_t net_host_enet_peers_in_use(const net_host *host)
{
    if (!host || host->ops != &enet_ops)
        return 0;
    const enet_net_host *h = cimpl(host);
    uint32_t n = 0;
    for (size_t i = 0; i < h->enet->peerCount; i++)
        n += h->enet->peers[i].state != ENET_PEER_STATE_DISCONNECTED;
    return n;
}

net_hs_refusal net_host_handshake_refusal(const net_host *host)
{
    if (!host || host->ops != &enet_ops || !cimpl(host)->hsc || cimpl(host)->hsc->phase != HS_PHASE_DENIED)
        return NET_HS_OK;
    return (net_hs_refusal)cimpl(host)->hsc->refusal;
}

bool net_host_peer_client_id(const net_host *host, uint32_t peer, uint64_t *client_id)
{
    if (!host || host->ops != &enet_ops)
        return false;
    const enet_net_host *h = cimpl(host);
    if (!h->hs || peer >= h->enet->peerCount || h->slots[peer].state == SLOT_FREE || !h->slots[peer].has_client_id)
        return false;
    if (client_id)
        *client_id = h->slots[peer].client_id;
    return true;
}
