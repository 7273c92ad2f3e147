// keel: what the ENet host does with a datagram before ENet reads it
// (host->intercept): a server clamps a CONNECT's MTU, answers a CONNECT ENet
// is about to drop with a refusal datagram, and in secure mode answers the
// handshake and drops every CONNECT from an address not admitted; a client
// takes refusals and runs its side of the handshake. host_enet.c's opening
// comment explains the refusal datagram, net_handshake.h the handshake.
// MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "host_enet_impl.h"

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

// Secure server: the ENet peer, other than `except` (its address, port and
// connect id), that holds `client_id` (-1: none): a connected one by its
// slot, one whose connect is under way by the admission its CONNECT bound.
// A connect under way from except's own address and port is that client's
// own earlier attempt (its VERIFY_CONNECT lost, the join started again):
// with `reset` it is reset, and never reported.
static long client_id_holder(enet_net_host *h, uint64_t client_id, const refused_key *except, bool reset)
{
    for (size_t i = 0; i < h->enet->peerCount; i++) {
        ENetPeer *p = &h->enet->peers[i];
        bool same_address = p->address.host == except->address && p->address.port == except->port;
        if (p->state == ENET_PEER_STATE_DISCONNECTED || (same_address && p->connectID == except->connect_id))
            continue;
        uint64_t id = 0;
        uint32_t timeout_s;
        uint8_t c2s[32], s2c[32];
        bool connected = h->slots[i].has_client_id, known = connected;
        if (known)
            id = h->slots[i].client_id;
        else
            known = hs_server_session(h->hs, (hs_addr){p->address.host, p->address.port}, p->connectID, &id, &timeout_s,
                                      c2s, s2c);
        sodium_memzero(c2s, sizeof c2s);
        sodium_memzero(s2c, sizeof s2c);
        if (!known || id != client_id)
            continue;
        if (!connected && same_address && h->slots[i].state == SLOT_FREE) {
            if (reset) {
                enet_peer_reset(p);
                enet_frame_stop(h, (uint32_t)i);
            }
            continue;
        }
        return (long)i;
    }
    return -1;
}

static bool held_by_a_peer(void *context, uint64_t client_id, hs_addr from)
{
    refused_key none = {from.host, from.port, 0};
    return client_id_holder(context, client_id, &none, false) >= 0;
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
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint8_t reply[HS_MAX_DATAGRAM];
    hs_outcome o;
    hs_addr from = {e->receivedAddress.host, e->receivedAddress.port};
    size_t n = hs_server_receive(h->hs, e->receivedData, e->receivedDataLength, from, (uint64_t)time(NULL),
                                 (uint64_t)t0.tv_sec * 1000u + (uint64_t)t0.tv_nsec / 1000000u, reply, &o);
    h->base.stats.handshake_refused[o.refusal] += o.refusal != NET_HS_OK;
    h->base.stats.handshake_challenges += o.challenged;
    h->base.stats.handshake_admitted += o.admitted;
    if (n > 0)
        send_raw(h, &e->receivedAddress, reply, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    h->base.stats.handshake_datagrams++;
    h->base.stats.handshake_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
}

// Sees every datagram before ENet. Handshake datagrams: handshake_datagram.
// On a client: take_refusal_datagram, then in secure mode every other
// datagram must authenticate (enet_frame_receive decrypts it in place and
// strips its trailer). On a server, a datagram from a peer: in secure mode
// the same; for a CONNECT (a datagram from no peer): in secure mode dropped
// unless it opens with the key of an admission of its address and holds a
// CONNECT whose connect id that admission accepts (a retransmission of an
// accepted CONNECT passes), which binds the admission (enet_frame_admit);
// clamps the proposed MTU in place; counts
// the connection as refused when ENet is about to drop it (the same test as
// enet_protocol_handle_connect: no free peer, or duplicatePeers peers
// already from that address), once per connection attempt (the client
// retransmits its CONNECT), and answers every such CONNECT with a refusal
// datagram. In secure mode any other datagram from no peer is dropped.
// Returns 1 for what ENet must skip (handshake and refusal datagrams, an
// unadmitted CONNECT, what does not authenticate), else 0: ENet processes
// the datagram.
int ENET_CALLBACK enet_gate_intercept(ENetHost *e, ENetEvent *event)
{
    (void)event;
    enet_net_host *h = (enet_net_host *)e->peers[0].data;
    if (!h || e->receivedDataLength < 2)
        return h && h->frames ? enet_frame_drop(h, SEAL_FORGED) : 0;
    if (hs_is_handshake(e->receivedData, e->receivedDataLength)) {
        handshake_datagram(h, e);
        return 1; // never ENet's
    }
    if (!h->base.server) {
        if (take_refusal_datagram(h, e))
            return 1;
        return h->frames ? enet_frame_receive(h, e) : 0;
    }
    enet_uint8 *d = e->receivedData;
    enet_uint16 peer_id = (enet_uint16)((d[0] << 8) | d[1]);
    if ((peer_id & 0x0FFF) != ENET_PROTOCOL_MAXIMUM_PEER_ID) {
        int skip = enet_leave_echo(h, e); // (from a client that left)
        if (!skip && h->frames)
            skip = enet_frame_receive(h, e);
        return skip ? skip : enet_live_receive(h, e); // (authenticated first)
    }
    size_t header = (peer_id & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? sizeof(ENetProtocolHeader)
                                                                    : offsetof(ENetProtocolHeader, sentTime);
    enet_uint8 *cmd = d + header;
    if (peer_id & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED)
        return h->frames ? enet_frame_drop(h, SEAL_FORGED) : 0;
    refused_key k;
    memset(&k, 0, sizeof k);
    k.address = e->receivedAddress.host;
    k.port = e->receivedAddress.port;
    if (h->hs) {
        // sealed: opened (in place, trailer dropped) with an admission's key
        uint64_t client_id;
        if (!enet_frame_admit(h, e, &k.connect_id, &client_id))
            return 1;                                        // dropped before ENet allocates a peer
        if (client_id_holder(h, client_id, &k, true) >= 0) { // two admissions of one client id raced: the first wins
            h->base.stats.handshake_refused[NET_HS_CLIENT_CONNECTED]++;
            return 1;
        }
    } else {
        if (e->receivedDataLength < header + sizeof(ENetProtocolConnect) ||
            (cmd[0] & ENET_PROTOCOL_COMMAND_MASK) != ENET_PROTOCOL_COMMAND_CONNECT)
            return h->frames ? enet_frame_drop(h, SEAL_FORGED) : 0;
        memcpy(&k.connect_id, cmd + offsetof(ENetProtocolConnect, connectID), sizeof k.connect_id);
    }

    enet_uint32 mtu;
    memcpy(&mtu, cmd + offsetof(ENetProtocolConnect, mtu), sizeof mtu);
    if (ENET_NET_TO_HOST_32(mtu) > h->mtu) {
        mtu = ENET_HOST_TO_NET_32(h->mtu);
        memcpy(cmd + offsetof(ENetProtocolConnect, mtu), &mtu, sizeof mtu);
    }

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
    if (free_peer && same_address < e->duplicatePeers)
        return 0;
    if (!refused_seen(h, k))
        h->base.stats.peers_refused++;
    send_refusal(h, &e->receivedAddress, cmd + offsetof(ENetProtocolConnect, connectID),
                 same_address >= e->duplicatePeers ? NET_DISCONNECT_REFUSED_ADDRESS : NET_DISCONNECT_REFUSED_FULL);
    return 0;
}

bool enet_gate_handshake_step(enet_net_host *h)
{
    hs_client *c = h->hsc;
    if (!c || h->slots[0].state != SLOT_CONNECTING)
        return false;
    size_t n;
    const uint8_t *d = hs_client_due(c, hs_clock_ms(), &n);
    if (d)
        send_raw(h, &h->server, d, n);
    if (c->phase == HS_PHASE_ADMITTED && enet_start_connect(h))
        c->phase = HS_PHASE_CONNECT;
    if (c->phase == HS_PHASE_DENIED && !h->refusal)
        h->refusal = NET_DISCONNECT_REFUSED_TOKEN;
    return c->phase == HS_PHASE_REQUEST || c->phase == HS_PHASE_RESPONSE;
}

bool enet_gate_secure_server(enet_net_host *h, const net_host_config *c, const char *address, const char **error)
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
    if (!h->hs || sodium_init() < 0) {
        if (error)
            *error = "cannot set up the handshake (out of memory, or libsodium failed)";
        return false;
    }
    hs_server_set_held(h->hs, held_by_a_peer, h);
    if (!enet_frame_init(h, c->max_peers, error))
        return false;
    h->base.config.token_key = NULL; // copied: the caller's may go
    h->base.config.public_address = NULL;
    return true;
}
