// keel: secure mode's sealed datagrams on the ENet host (frame.h has the
// layout and the invariants; docs/transport.md why it is done this way).
// Once the handshake admitted a client, every datagram between it and the
// server is encrypted after ENet's header and carries a trailer that
// authenticates it whole: ENet's framing (acknowledgements, pings,
// disconnects, bandwidth and throttle commands, sequence and
// unsequenced-group numbers) and keel's messages in it, which are not
// sealed one by one:
// - receiving: host->intercept (host_enet_gate.c) calls enet_frame_receive
//   and enet_frame_admit before ENet parses a datagram; one that does not
//   authenticate, or was seen before, is dropped and counted
//   (frames_forged, frames_replayed) and touches no peer; one that does is
//   decrypted in ENet's receive buffer, in place;
// - sending: ENet 1.3 has no outgoing hook, so keel defines
//   enet_socket_send itself. Debian's libenet.so calls it through its PLT
//   (not -Bsymbolic, default visibility), so the definition in the program
//   (keel_net is a static library, and the program exports the symbol)
//   comes first in the lookup and every datagram ENet sends passes here;
//   the real one is found with dlsym(RTLD_NEXT). A socket of no secure host
//   passes through untouched. enet_frame_init refuses secure mode when the
//   interposition is not in effect (libenet's own function would be
//   called), rather than sending datagrams in clear.
// MIT licence, see LICENSE.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "host_enet_impl.h"

// frame.c tells ENet's header length from its first byte (frame_clear_bytes)
_Static_assert(ENET_PROTOCOL_HEADER_FLAG_SENT_TIME == 0x8000 && sizeof(ENetProtocolHeader) == 4 &&
                   offsetof(ENetProtocolHeader, sentTime) == 2,
               "ENet's protocol header as frame.c reads it");

typedef int (*socket_send_fn)(ENetSocket, const ENetAddress *, const ENetBuffer *, size_t);

static pthread_once_t next_once = PTHREAD_ONCE_INIT;
static socket_send_fn next_send; ///< libenet's enet_socket_send

// Secure hosts by socket, for enet_socket_send, which ENet calls with the
// socket alone: a table by descriptor below REGISTRY_FDS (one look-up
// however many hosts a process has), a list for the others.
enum { REGISTRY_FDS = 1024 };
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static enet_net_host *by_socket[REGISTRY_FDS];
static enet_net_host *registry;

static void find_next_send(void)
{
    void *p = dlsym(RTLD_NEXT, "enet_socket_send");
    memcpy(&next_send, &p, sizeof next_send);
}

static enet_net_host *registered(ENetSocket socket)
{
    pthread_mutex_lock(&registry_lock);
    enet_net_host *h = socket >= 0 && socket < REGISTRY_FDS ? by_socket[socket] : registry;
    while (h && h->enet->socket != socket)
        h = h->frame_next;
    pthread_mutex_unlock(&registry_lock);
    return h;
}

bool enet_frame_init(enet_net_host *h, uint32_t peers, const char **error)
{
    pthread_once(&next_once, find_next_send);
    socket_send_fn mine = enet_socket_send;
    void *mine_p, *first = dlsym(RTLD_DEFAULT, "enet_socket_send");
    memcpy(&mine_p, &mine, sizeof mine_p);
    if (!next_send || first != mine_p) {
        if (error)
            *error = "secure mode: ENet's datagrams do not pass through keel's enet_socket_send (keel_net must be "
                     "linked statically into the program, ahead of a shared libenet)";
        return false;
    }
    h->frames = calloc(peers, sizeof *h->frames);
    h->left_frames = h->base.server ? calloc(peers, sizeof *h->left_frames) : NULL;
    h->frame_buffer = malloc(ENET_PROTOCOL_MAXIMUM_MTU + NET_FRAME_BYTES);
    if (!h->frames || !h->frame_buffer || (h->base.server && !h->left_frames)) {
        free(h->frames);
        free(h->left_frames);
        free(h->frame_buffer);
        h->frames = NULL;
        h->left_frames = NULL;
        h->frame_buffer = NULL;
        if (error)
            *error = "out of memory";
        return false;
    }
    h->frame_count = peers;
    ENetSocket fd = h->enet->socket;
    pthread_mutex_lock(&registry_lock);
    if (fd >= 0 && fd < REGISTRY_FDS) {
        by_socket[fd] = h; // frame_next stays NULL
    } else {
        h->frame_next = registry;
        registry = h;
    }
    pthread_mutex_unlock(&registry_lock);
    return true;
}

void enet_frame_free(enet_net_host *h)
{
    if (!h->frames)
        return;
    ENetSocket fd = h->enet->socket;
    pthread_mutex_lock(&registry_lock);
    if (fd >= 0 && fd < REGISTRY_FDS && by_socket[fd] == h) {
        by_socket[fd] = NULL;
    } else {
        enet_net_host **link = &registry;
        while (*link && *link != h)
            link = &(*link)->frame_next;
        if (*link)
            *link = h->frame_next;
    }
    pthread_mutex_unlock(&registry_lock);
    sodium_memzero(h->frames, h->frame_count * sizeof *h->frames);
    free(h->frames);
    if (h->left_frames)
        sodium_memzero(h->left_frames, h->frame_count * sizeof *h->left_frames);
    free(h->left_frames);
    free(h->frame_buffer);
    h->frames = NULL;
    h->left_frames = NULL;
    h->frame_buffer = NULL;
    h->frame_count = 0;
}

void enet_frame_stop(enet_net_host *h, uint32_t peer)
{
    if (h->frames && peer < h->frame_count)
        frame_stop(&h->frames[peer]);
}

void enet_frame_retire(enet_net_host *h, uint32_t peer)
{
    if (!h->left_frames || peer >= h->frame_count)
        return;
    h->left_frames[peer] = h->frames[peer];
    frame_stop(&h->frames[peer]);
}

void enet_frame_forget_left(enet_net_host *h, uint32_t peer)
{
    if (h->left_frames && peer < h->frame_count)
        frame_stop(&h->left_frames[peer]);
}

seal_result enet_frame_open_left(enet_net_host *h, uint32_t peer, uint8_t *d, size_t n)
{
    if (!h->left_frames || peer >= h->frame_count)
        return SEAL_FORGED;
    return frame_open(&h->left_frames[peer], d, n);
}

void enet_frame_send_left(enet_net_host *h, uint32_t peer, const ENetAddress *to, uint8_t *d, size_t n)
{
    pthread_once(&next_once, find_next_send);
    if (!next_send)
        return;
    if (h->frames) {
        if (!h->left_frames || peer >= h->frame_count || !h->left_frames[peer].on)
            return;
        n = frame_seal(&h->left_frames[peer], d, n);
    }
    ENetBuffer b = {.data = d, .dataLength = n};
    if (next_send(h->enet->socket, to, &b, 1) > 0)
        h->wire_sent += n + NET_WIRE_UDP_IP;
}

void enet_frame_start_client(enet_net_host *h, const ENetPeer *p)
{
    if (h->frames && h->hsc)
        frame_start(&h->frames[0], h->hsc->c2s, h->hsc->s2c, p->connectID, p->address.host, p->address.port);
}

// The datagram state of ENet peer i for its current connection: a server
// starts it at the first datagram of the connection (VERIFY_CONNECT) with
// the keys of the admission its CONNECT bound; a client's was started with
// its connect. NULL when there are none.
static frame_peer *peer_frame(enet_net_host *h, uint32_t i)
{
    const ENetPeer *p = &h->enet->peers[i];
    frame_peer *f = &h->frames[i];
    if (f->on && f->connect_id == p->connectID && f->host == p->address.host && f->port == p->address.port)
        return f;
    if (!h->hs)
        return NULL;
    uint8_t c2s[SEAL_KEY_BYTES], s2c[SEAL_KEY_BYTES];
    uint64_t client_id;
    uint32_t timeout_s;
    bool found = hs_server_session(h->hs, (hs_addr){p->address.host, p->address.port}, p->connectID, &client_id,
                                   &timeout_s, c2s, s2c);
    if (found)
        frame_start(f, s2c, c2s, p->connectID, p->address.host, p->address.port);
    sodium_memzero(c2s, sizeof c2s);
    sodium_memzero(s2c, sizeof s2c);
    return found ? f : NULL;
}

// The peer a datagram ENet sends to `to` belongs to: the header's peer id
// (and session, once the other side gave one) is the peer's outgoing one.
// ENet sends to its peers in order, so the search starts at the peer
// matched last (one step a datagram, however many peers).
static frame_peer *send_frame(enet_net_host *h, const ENetAddress *to, const uint8_t *d)
{
    unsigned id = (unsigned)((d[0] << 8) | d[1]);
    unsigned peer_id = id & ENET_PROTOCOL_MAXIMUM_PEER_ID;
    unsigned session = (id & ENET_PROTOCOL_HEADER_SESSION_MASK) >> ENET_PROTOCOL_HEADER_SESSION_SHIFT;
    uint32_t count = h->frame_count < h->enet->peerCount ? h->frame_count : (uint32_t)h->enet->peerCount;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t i = (h->frame_hint + k) % count;
        const ENetPeer *p = &h->enet->peers[i];
        if (p->state == ENET_PEER_STATE_DISCONNECTED || p->address.host != to->host || p->address.port != to->port ||
            p->outgoingPeerID != peer_id ||
            (peer_id != ENET_PROTOCOL_MAXIMUM_PEER_ID && p->outgoingSessionID != session))
            continue;
        h->frame_hint = i;
        return peer_frame(h, i);
    }
    return NULL;
}

int enet_socket_send(ENetSocket socket, const ENetAddress *address, const ENetBuffer *buffers, size_t count)
{
    pthread_once(&next_once, find_next_send);
    if (!next_send)
        return -1;
    enet_net_host *h = address ? registered(socket) : NULL;
    if (!h)
        return next_send(socket, address, buffers, count);
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        n += buffers[i].dataLength;
    if (n > ENET_PROTOCOL_MAXIMUM_MTU)
        return (int)n; // larger than any ENet datagram: not sent
    uint8_t *d = h->frame_buffer;
    for (size_t i = 0, at = 0; i < count; at += buffers[i].dataLength, i++)
        memcpy(d + at, buffers[i].data, buffers[i].dataLength);
    // handshake datagrams, and a server's refusals (from no peer), go as they are
    if (n < 2 || hs_is_handshake(d, n) ||
        (h->base.server && (((d[0] << 8) | d[1]) & ENET_PROTOCOL_MAXIMUM_PEER_ID) == ENET_PROTOCOL_MAXIMUM_PEER_ID))
        return next_send(socket, address, buffers, count);
    frame_peer *f = send_frame(h, address, d);
    if (!f)
        return (int)n; // no session with that peer: nothing goes
    ENetBuffer b = {.data = d, .dataLength = frame_seal(f, d, n)};
    return next_send(socket, address, &b, 1);
}

int enet_frame_drop(enet_net_host *h, int result)
{
    h->base.stats.frames_forged += result != SEAL_REPLAYED;
    h->base.stats.frames_replayed += result == SEAL_REPLAYED;
    return 1;
}

int enet_frame_receive(enet_net_host *h, ENetHost *e)
{
    enet_uint8 *d = e->receivedData; // (ENet's own receive buffer: opened in place)
    size_t n = e->receivedDataLength;
    const ENetAddress *from = &e->receivedAddress;
    frame_peer *f = NULL;
    if (h->base.server) {
        unsigned peer_id = (unsigned)((d[0] << 8) | d[1]) & ENET_PROTOCOL_MAXIMUM_PEER_ID;
        const ENetPeer *p = peer_id < h->frame_count ? &e->peers[peer_id] : NULL;
        if (p && p->state != ENET_PEER_STATE_DISCONNECTED && p->address.host == from->host &&
            p->address.port == from->port)
            f = peer_frame(h, peer_id);
    } else if (from->host == h->server.host && from->port == h->server.port) {
        f = &h->frames[0];
    }
    seal_result r = f ? frame_open(f, d, n) : SEAL_FORGED;
    if (r != SEAL_OK)
        return enet_frame_drop(h, r);
    e->receivedDataLength = n - NET_FRAME_BYTES;
    return 0;
}

typedef struct connect_check {
    enet_uint8 *d;
    size_t n;
    unsigned candidates; ///< admissions of the address tried
} connect_check;

// An admission's key: true when it opens the CONNECT (decrypted in place)
// and what it holds is a CONNECT, whose connect id is then *connect_id.
static bool open_connect(const uint8_t c2s[32], void *context, uint32_t *connect_id)
{
    connect_check *c = context;
    c->candidates++;
    if (!frame_open_with(c2s, c->d, c->n))
        return false;
    size_t n = c->n - NET_FRAME_BYTES, header = frame_clear_bytes(c->d, n);
    const enet_uint8 *cmd = c->d + header;
    if (n < header + sizeof(ENetProtocolConnect) ||
        (cmd[0] & ENET_PROTOCOL_COMMAND_MASK) != ENET_PROTOCOL_COMMAND_CONNECT)
        return false; // (only the admission's client could have sent it)
    memcpy(connect_id, cmd + offsetof(ENetProtocolConnect, connectID), sizeof *connect_id);
    return true;
}

bool enet_frame_admit(enet_net_host *h, ENetHost *e, enet_uint32 *connect_id, uint64_t *client_id)
{
    connect_check c = {e->receivedData, e->receivedDataLength, 0};
    if (hs_server_admits_open(h->hs, (hs_addr){e->receivedAddress.host, e->receivedAddress.port}, hs_clock_ms(),
                              client_id, connect_id, open_connect, &c)) {
        e->receivedDataLength -= NET_FRAME_BYTES; // opened: ENet reads it without the trailer
        return true;
    }
    if (c.candidates == 0)
        h->base.stats.handshake_refused[NET_HS_UNADMITTED]++; // no admission for the address
    else
        enet_frame_drop(h, SEAL_FORGED); // an admitted address, but not its key
    return false;
}
