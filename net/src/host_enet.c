// keel: the ENet host (UDP). With host_enet_gate.c (what it does with a
// datagram before ENet reads it), host_enet_frame.c (secure mode's
// authenticated datagrams) and host_enet_live.c (liveness, the join's
// pacing), the only code in keel that includes enet.h.
// MIT licence, see LICENSE.
//
// docs/transport.md explains the settings; in short (ENet 1.3.17):
// - three channels, one per traffic class: control is reliable and ordered,
//   input and snapshot are unsequenced (ENET_PACKET_FLAG_UNSEQUENCED);
// - MTU NET_HOST_ENET_MTU (NET_MTU + 28; in secure mode too: the
//   datagram's trailer comes after ENet's datagram) on our side, and a bigger MTU a
//   client proposes is rewritten in its CONNECT datagram before ENet reads it
//   (ENet adopts the client's value, protocol.c enet_protocol_handle_connect),
//   so both sides use it; clamped once more at the connect event;
// - enet_peer_throttle_configure(peer, 5000, 32, 0): the throttle never
//   drops; no bandwidth limit;
// - liveness by traffic (host_enet_live.c): a watchdog here ends a
//   connection after config.timeout_ms (or its token's shorter timeout) in
//   which no datagram of it arrived; ENet's own timeout is only a backstop
//   four times longer. The watchdog runs only once the socket is drained,
//   so a process that was stopped (SIGSTOP) reads what the other side sent
//   meanwhile before it judges a silence; a client's join is paced from its
//   connect's round trip;
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
//   enet_service and calls enet_host_connect once admitted; from that
//   CONNECT on, every datagram both ways is authenticated
//   (host_enet_frame.c).
#include <stdlib.h>
#include <string.h>

#include <enet/enet.h>
#include <enet/time.h>
#include <sodium.h>

#include "host_enet_impl.h"

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
    h->datagrams_sent += (enet_uint32)(e->totalSentPackets - h->last_sent_packets);
    h->datagrams_received += (enet_uint32)(e->totalReceivedPackets - h->last_received_packets);
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

static uint32_t peer_index(const enet_net_host *h, const ENetPeer *peer);

// How long a peer may be silent: the host's timeout_ms, or its token's
// timeout when that is shorter.
static uint32_t peer_timeout(const enet_net_host *h, uint32_t i)
{
    uint32_t t = h->slots[i].timeout_ms;
    return t && t < h->base.config.timeout_ms ? t : h->base.config.timeout_ms;
}

static void configure_peer(enet_net_host *h, ENetPeer *peer)
{
    // Throttle (peer.c enet_peer_throttle, protocol.c check_outgoing_commands):
    // an unreliable packet is dropped when packetThrottleCounter (7 per packet,
    // mod 32, so 0..31) exceeds packetThrottle. packetThrottle starts at 32,
    // acceleration 32 only clamps it to the limit (32 without a bandwidth
    // limit), deceleration 0 never lowers it: nothing is ever dropped.
    enet_peer_throttle_configure(peer, 5000, ENET_PEER_PACKET_THROTTLE_SCALE, 0);
    enet_live_configure(peer, peer_timeout(h, peer_index(h, peer)));
    if (h->frames)
        enet_live_sparse_pings(peer, peer_timeout(h, peer_index(h, peer)));
    if (peer->mtu > h->mtu)
        peer->mtu = h->mtu;
}

static uint32_t peer_index(const enet_net_host *h, const ENetPeer *peer) { return (uint32_t)(peer - h->enet->peers); }

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
    enet_live_step(h, now);
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
        enet_uint32 last = s->since; // a connect's start, a close's start
        if (s->state == SLOT_CONNECTED && ENET_TIME_LESS(last, s->heard))
            last = s->heard; // any datagram of the connection
        if (ENET_TIME_LESS(now, last) || ENET_TIME_DIFFERENCE(now, last) < peer_timeout(h, i))
            continue;
        bool report = s->state != SLOT_CLOSING;
        ev->reason = s->state == SLOT_CONNECTING ? NET_DISCONNECT_UNANSWERED : NET_DISCONNECT_TIMEOUT;
        enet_peer_reset(p);
        enet_frame_stop(h, i);
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

// Secure mode, at a CONNECT: a server's peer gets the token's client id
// and timeout from the handshake's admission, a client's the token's
// timeout. (The session's keys are the datagrams', host_enet_frame.c.)
static void start_session(enet_net_host *h, ENetPeer *peer, uint32_t i)
{
    enet_slot *s = &h->slots[i];
    if (h->hs) {
        uint8_t c2s[32], s2c[32];
        uint32_t timeout_s = 0;
        s->has_client_id = hs_server_session(h->hs, (hs_addr){peer->address.host, peer->address.port}, peer->connectID,
                                             &s->client_id, &timeout_s, c2s, s2c);
        s->timeout_ms = timeout_s * 1000u;
        sodium_memzero(c2s, sizeof c2s);
        sodium_memzero(s2c, sizeof s2c);
    } else if (h->hsc) {
        s->timeout_ms = h->hsc->timeout_s * 1000u;
        hs_client_wipe(h->hsc); // the keys are copied (enet_frame_start_client); the handshake is over
        h->hsc->phase = HS_PHASE_CONNECT;
    }
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
        s->remote_peer_id = e->peer->outgoingPeerID;
        start_session(h, e->peer, i);
        configure_peer(h, e->peer);
        enet_live_start(h, e->peer, i);
        ev->type = NET_EVENT_CONNECT;
        ev->peer = i;
        return true;
    case ENET_EVENT_TYPE_DISCONNECT: {
        uint8_t was = s->state;
        s->state = SLOT_FREE;
        s->has_client_id = false;
        s->timeout_ms = 0;
        s->joining = false;
        if (h->base.server && was == SLOT_CONNECTED && e->data == NET_DISCONNECT_DATA_LEAVE)
            enet_leave_keep(h, i, e->peer, enet_time_get()); // its acknowledgement may be lost
        else
            enet_frame_stop(h, i); // ENet has reset the peer: it sends nothing more
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
    case ENET_EVENT_TYPE_NONE: break;
    }
    return false;
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
        if (enet_gate_handshake_step(h) && wait > 10)
            wait = 10; // resends and the next step on time
        ENetEvent e;
        int r = enet_host_service(h->enet, &e, wait);
        fold_counters(h);
        if (r > 0) {
            if (translate(h, &e, ev))
                return ev->type;
            continue;
        }
        enet_gate_handshake_step(h);
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
        if (wait > 10)
            wait = 10; // the resends below on time
        enet_live_leave_step(p, now);
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
    enet_frame_free(h);         // before the socket closes: enet_socket_send forgets it
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

static enet_net_host *create(const net_host_config *config, bool server, const ENetAddress *bind, size_t peers,
                             uint32_t mtu, const char **error)
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
    // the largest MTU a peer may use (a client adopts the server's answer up to it)
    h->mtu = server ? mtu : NET_HOST_ENET_MTU;
    e->maximumPacketSize = NET_HOST_MAX_MESSAGE;
    for (size_t i = 0; i < e->peerCount; i++) {
        e->peers[i].mtu = mtu; // peers were reset with the default MTU
        e->peers[i].data = h;
    }
    if (server)
        e->duplicatePeers = config->max_peers_per_address;
    e->intercept = enet_gate_intercept;
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

net_host *net_host_enet_listen(const char *address, uint16_t port, const net_host_config *config, const char **error)
{
    net_host_config c;
    const char *why = net_host_config_check(config, &c);
    if (!why && c.connect_token)
        why = "connect_token is a connecting host's (a server takes token_key)";
    if (why) {
        if (error)
            *error = why;
        return NULL;
    }
    ENetAddress a;
    if (!enet_ready(error) || !parse_address(address, port, &a, error))
        return NULL;
    enet_net_host *h = create(&c, true, &a, c.max_peers, NET_HOST_ENET_MTU, error);
    if (h && c.token_key && !enet_gate_secure_server(h, &c, address, error)) {
        enet_destroy(&h->base);
        return NULL;
    }
    return h ? &h->base : NULL;
}

bool enet_start_connect(enet_net_host *h)
{
    ENetPeer *p = enet_host_connect(h->enet, &h->server, NET_CHANNEL_COUNT, 0);
    if (!p)
        return false;
    enet_live_configure(p, h->base.config.timeout_ms); // the watchdog bounds the connect
    h->connect_sent = enet_time_get();
    enet_frame_start_client(h, p); // secure mode: the CONNECT is the first authenticated datagram
    return true;
}

net_host *net_host_enet_connect(const char *address, uint16_t port, const net_host_config *config, uint32_t propose_mtu,
                                const char **error)
{
    net_host_config c;
    const char *why = net_host_config_check(config, &c);
    if (!why && (c.token_key || c.public_address))
        why = "token_key and public_address are a listening host's (a client takes connect_token)";
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
    net_token_public pub;
    if (c.connect_token && net_token_read_public(c.connect_token, NET_TOKEN_BYTES, &pub, NULL) != NET_TOKEN_OK) {
        if (error)
            *error = "connect_token is not a connect token (keel-token inspect tells why)";
        return NULL;
    }
    enet_net_host *h = create(&c, false, NULL, 1, propose_mtu, error);
    if (!h)
        return NULL;
    h->server = a;
    if (c.connect_token) {
        h->hsc = malloc(sizeof *h->hsc);
        if (!h->hsc || !hs_client_start(h->hsc, c.connect_token) || sodium_init() < 0) {
            enet_destroy(&h->base);
            if (error)
                *error = "cannot start the handshake (out of memory, or libsodium failed)";
            return NULL;
        }
        if (!enet_frame_init(h, 1, error)) {
            enet_destroy(&h->base);
            return NULL;
        }
        h->base.config.connect_token = NULL; // copied
    } else if (!enet_start_connect(h)) {
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

uint32_t net_host_enet_peer_timeout(const net_host *host, uint32_t peer)
{
    if (!host || host->ops != &enet_ops)
        return 0;
    const enet_net_host *h = cimpl(host);
    if (peer >= h->enet->peerCount || h->slots[peer].state != SLOT_CONNECTED)
        return 0;
    return peer_timeout(h, peer);
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

bool net_host_enet_datagrams(const net_host *host, uint64_t *sent, uint64_t *received)
{
    if (!host || host->ops != &enet_ops)
        return false;
    const enet_net_host *h = cimpl(host);
    const ENetHost *e = h->enet;
    *sent = h->datagrams_sent + (enet_uint32)(e->totalSentPackets - h->last_sent_packets);
    *received = h->datagrams_received + (enet_uint32)(e->totalReceivedPackets - h->last_received_packets);
    return true;
}
