// keel: the in-memory network. Hosts exchange messages through per-host
// queues ordered by (delivery time, send order) on a virtual clock that only
// net_memory_advance moves. MIT licence, see LICENSE.
//
// Semantics (docs/transport.md has the table):
// - connect: the request reaches the server one `up` latency later; the server
//   reports CONNECT when it services the request and answers; the answer
//   reaches the client one `down` latency later, where the client reports
//   CONNECT. A server with max_peers connections drops the request silently,
//   like ENet, and counts it (peers_refused); the client's connect fails
//   (DISCONNECT) timeout_ms after it began, like a connect to no one. Every
//   memory client is its own address, so max_peers_per_address never applies.
// - control messages: never lost, delayed by latency + jitter, and never
//   delivered before an earlier control message of the same direction.
// - input and snapshot messages: latency + jitter each, lost with
//   loss_permille, delivered a second time (with its own jitter) with
//   duplicate_permille; jitter reorders them.
// - net_host_disconnect: the side that calls it stops reporting that peer at
//   once; the other side sees DISCONNECT (NET_DISCONNECT_CLOSED) after the
//   earlier control messages (messages already in flight to the disconnected
//   side are dropped).
// - net_host_leave: the same, with NET_DISCONNECT_LEFT; the server's host
//   acknowledges the leave when it takes it (whatever its own state), and the
//   acknowledgement reaches the client one `down` latency later (the leave is
//   then NET_LEAVE_DONE); a leave towards a server host that is gone gives up
//   NET_LEAVE_MAX_MS of virtual time after it began.
// - a host destroyed without notice: the other side sees DISCONNECT
//   (NET_DISCONNECT_TIMEOUT) its own timeout_ms later.
// - a connect to a full server: the server answers with a refusal that
//   reaches the client one `down` latency later (DISCONNECT,
//   NET_DISCONNECT_REFUSED_FULL), as the ENet host does; a connect to no one
//   fails timeout_ms after it began (NET_DISCONNECT_UNANSWERED).
// - wire figures: net_wire_message per datagram (host.c), plus one
//   acknowledgement datagram per reliable datagram, counted when delivered;
//   the handshake is not counted.
// Randomness: one generator per direction of each connection, seeded from the
// network's seed and the connection's number, so a run is the same for the
// same seed and the same calls.
#include <stdlib.h>
#include <string.h>

#include "host_impl.h"

// An item's `channel` carries the net_disconnect_reason of ITEM_DISCONNECT
// and ITEM_CONNECT_FAIL.
enum { ITEM_MESSAGE, ITEM_CONNECT, ITEM_ACCEPT, ITEM_DISCONNECT, ITEM_TIMEOUT, ITEM_CONNECT_FAIL, ITEM_LEAVE_ACK };
enum { SIDE_NONE, SIDE_CONNECTING, SIDE_OPEN, SIDE_CLOSED };

typedef struct mem_host mem_host;

typedef struct mem_dir {
    net_memory_link link;
    uint64_t rng;
    uint64_t control_at; ///< latest delivery time of a control item (keeps them ordered)
} mem_dir;

typedef struct mem_conn {
    uint32_t id;
    mem_host *client, *server; ///< NULL once that host is gone
    uint32_t slot;             ///< the server's handle for the client
    uint8_t client_state, server_state;
    mem_dir up, down; ///< client to server, server to client
} mem_conn;

typedef struct mem_item {
    uint64_t at, seq;
    mem_conn *conn;
    uint8_t kind, channel;
    uint8_t *data;
    size_t length;
} mem_item;

struct mem_host {
    net_host base;
    net_memory *mem;
    char *name;      ///< a listener's name
    mem_item *queue; ///< binary min-heap on (at, seq)
    size_t count, cap;
    mem_conn **slots; ///< server: max_peers; client: 1
    uint32_t slot_count;
    uint8_t *held; ///< the data of the last RECEIVE event
    uint64_t wire_sent, wire_received;
    // net_memory_lose_next_control: the next control message is lost once and
    // comes `lose_retransmit_ms` later; what else goes to that peer in the
    // same millisecond (the same datagram) is lost with it.
    bool lose_control;
    uint32_t lose_retransmit_ms;
    const mem_conn *lost_conn;
    uint64_t lost_at;
    // net_memory_lose_unreliable_until: unreliable messages sent before
    // this virtual time are lost
    uint64_t lose_unreliable_until;
    bool leaving;        ///< a client that called net_host_leave
    uint8_t leave_state; ///< a net_leave_state
    uint64_t leave_deadline;
};

struct net_memory {
    uint64_t seed, now, seq;
    mem_host **hosts;
    size_t host_count, host_cap;
    mem_conn **conns;
    size_t conn_count, conn_cap;
};

static const net_host_ops memory_ops;

static mem_host *impl(net_host *host) { return (mem_host *)host; }

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool grow(void **array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*array, n * size);
    if (!p)
        return false;
    *array = p;
    *cap = n;
    return true;
}

// ---- the queue -----------------------------------------------------------------------

static bool item_before(const mem_item *a, const mem_item *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static bool push(mem_host *h, uint64_t at, mem_conn *conn, uint8_t kind, uint8_t channel, const uint8_t *data,
                 size_t length)
{
    if (!grow((void **)&h->queue, &h->cap, h->count + 1, sizeof *h->queue))
        return false;
    mem_item it;
    memset(&it, 0, sizeof it);
    it.at = at;
    it.seq = h->mem->seq++;
    it.conn = conn;
    it.kind = kind;
    it.channel = channel;
    if (length > 0) {
        it.data = malloc(length);
        if (!it.data)
            return false;
        memcpy(it.data, data, length);
        it.length = length;
    }
    size_t i = h->count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!item_before(&it, &h->queue[parent]))
            break;
        h->queue[i] = h->queue[parent];
        i = parent;
    }
    h->queue[i] = it;
    return true;
}

static mem_item pop(mem_host *h)
{
    mem_item top = h->queue[0];
    mem_item last = h->queue[--h->count];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->count)
            break;
        if (c + 1 < h->count && item_before(&h->queue[c + 1], &h->queue[c]))
            c++;
        if (!item_before(&h->queue[c], &last))
            break;
        h->queue[i] = h->queue[c];
        i = c;
    }
    if (h->count > 0)
        h->queue[i] = last;
    return top;
}

static void clear_queue(mem_host *h)
{
    for (size_t i = 0; i < h->count; i++)
        free(h->queue[i].data);
    h->count = 0;
}

// ---- connections ---------------------------------------------------------------------

static mem_host *other_side(const mem_conn *c, const mem_host *h) { return h == c->server ? c->client : c->server; }
static mem_dir *dir_from(mem_conn *c, const mem_host *h) { return h == c->server ? &c->down : &c->up; }

// Delivery time of a control item sent now from h over c.
static uint64_t control_time(net_memory *mem, mem_dir *d)
{
    uint64_t at = mem->now + d->link.latency_ms;
    if (d->link.jitter_ms)
        at += splitmix64(&d->rng) % ((uint64_t)d->link.jitter_ms + 1);
    if (at < d->control_at)
        at = d->control_at;
    d->control_at = at;
    return at;
}

// The side `h` of c closes without telling the other side: the other side
// times out.
static void vanish(mem_conn *c, mem_host *h)
{
    mem_host *o = other_side(c, h);
    if (h == c->server) {
        c->server_state = SIDE_CLOSED;
        if (o && (c->client_state == SIDE_OPEN || c->client_state == SIDE_CONNECTING))
            push(o, o->mem->now + o->base.config.timeout_ms, c, ITEM_TIMEOUT, 0, NULL, 0);
    } else {
        c->client_state = SIDE_CLOSED;
        if (o && c->server_state == SIDE_OPEN)
            push(o, o->mem->now + o->base.config.timeout_ms, c, ITEM_TIMEOUT, 0, NULL, 0);
    }
}

// ---- the host functions --------------------------------------------------------------

static void account_ack(mem_conn *c, mem_host *receiver, const mem_item *it)
{
    if (it->channel != NET_CHANNEL_CONTROL)
        return;
    uint64_t ack = (uint64_t)net_wire_datagrams(NET_CHANNEL_CONTROL, it->length) * (NET_WIRE_ACK + NET_WIRE_UDP_IP);
    receiver->wire_sent += ack;
    mem_host *sender = other_side(c, receiver);
    if (sender)
        sender->wire_received += ack;
}

// The event an item makes on h, if any.
static bool deliver(mem_host *h, mem_item *it, net_event *ev)
{
    mem_conn *c = it->conn;
    bool server = h->base.server;
    uint8_t *state = server ? &c->server_state : &c->client_state;
    ev->peer = server ? c->slot : 0;
    switch (it->kind) {
    case ITEM_MESSAGE:
        if (*state != SIDE_OPEN)
            return false;
        h->wire_received += net_wire_message((net_channel)it->channel, it->length);
        account_ack(c, h, it);
        h->held = it->data;
        it->data = NULL;
        ev->type = NET_EVENT_RECEIVE;
        ev->channel = it->channel;
        ev->data = h->held;
        ev->length = it->length;
        return true;
    case ITEM_CONNECT: {
        if (!c->client || c->client_state != SIDE_CONNECTING || c->server_state != SIDE_NONE)
            return false;
        uint32_t slot = 0;
        while (slot < h->slot_count && h->slots[slot])
            slot++;
        if (slot == h->slot_count) {
            h->base.stats.peers_refused++; // answered with a refusal, as the ENet host does
            c->server_state = SIDE_CLOSED;
            push(c->client, h->mem->now + c->down.link.latency_ms, c, ITEM_CONNECT_FAIL, NET_DISCONNECT_REFUSED_FULL,
                 NULL, 0);
            return false;
        }
        h->slots[slot] = c;
        c->slot = slot;
        c->server_state = SIDE_OPEN;
        uint64_t at = h->mem->now + c->down.link.latency_ms;
        if (c->down.control_at < at)
            c->down.control_at = at;
        push(c->client, at, c, ITEM_ACCEPT, 0, NULL, 0);
        ev->type = NET_EVENT_CONNECT;
        ev->peer = slot;
        return true;
    }
    case ITEM_ACCEPT:
        if (*state != SIDE_CONNECTING)
            return false;
        *state = SIDE_OPEN;
        ev->type = NET_EVENT_CONNECT;
        return true;
    case ITEM_CONNECT_FAIL:
        if (*state != SIDE_CONNECTING)
            return false;
        vanish(c, h); // should the server have accepted, it times out
        ev->type = NET_EVENT_DISCONNECT;
        ev->reason = it->channel;
        return true;
    case ITEM_LEAVE_ACK:
        if (h->leaving && h->leave_state == NET_LEAVE_PENDING)
            h->leave_state = NET_LEAVE_DONE;
        return false;
    case ITEM_DISCONNECT:
    case ITEM_TIMEOUT:
        if (server && it->kind == ITEM_DISCONNECT && it->channel == NET_DISCONNECT_LEFT && c->client)
            push(c->client, control_time(h->mem, &c->down), c, ITEM_LEAVE_ACK, 0, NULL, 0);
        if (!server && h->leaving && h->leave_state == NET_LEAVE_PENDING && it->kind == ITEM_DISCONNECT)
            h->leave_state = NET_LEAVE_DONE; // the server closed it too: it knows
        if (*state != SIDE_OPEN && *state != SIDE_CONNECTING)
            return false;
        *state = SIDE_CLOSED;
        if (server)
            h->slots[c->slot] = NULL;
        ev->type = NET_EVENT_DISCONNECT;
        ev->reason = it->kind == ITEM_TIMEOUT ? NET_DISCONNECT_TIMEOUT : it->channel;
        return true;
    default: return false;
    }
}

static net_event_type memory_service(net_host *host, net_event *ev, uint32_t timeout_ms)
{
    (void)timeout_ms; // never waits: only net_memory_advance moves time
    mem_host *h = impl(host);
    free(h->held);
    h->held = NULL;
    if (!h->mem)
        return NET_EVENT_NONE;
    while (h->count > 0 && h->queue[0].at <= h->mem->now) {
        mem_item it = pop(h);
        bool reported = deliver(h, &it, ev);
        free(it.data);
        if (reported)
            return ev->type;
    }
    return NET_EVENT_NONE;
}

static mem_conn *open_conn(mem_host *h, uint32_t peer)
{
    if (!h->mem || peer >= h->slot_count || !h->slots[peer])
        return NULL;
    mem_conn *c = h->slots[peer];
    return (h->base.server ? c->server_state : c->client_state) == SIDE_OPEN ? c : NULL;
}

static bool memory_send(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t length)
{
    mem_host *h = impl(host);
    mem_conn *c = open_conn(h, peer);
    if (!c)
        return false;
    mem_dir *d = dir_from(c, h);
    mem_host *to = other_side(c, h);
    h->wire_sent += net_wire_message(channel, length);
    if (channel == NET_CHANNEL_CONTROL) {
        uint64_t at = control_time(h->mem, d);
        if (h->lose_control) {
            // Lost once: the retransmission comes later, and nothing behind
            // it in this direction overtakes it.
            h->lose_control = false;
            h->lost_conn = c;
            h->lost_at = h->mem->now;
            at += h->lose_retransmit_ms;
            d->control_at = at;
        }
        return to ? push(to, at, c, ITEM_MESSAGE, (uint8_t)channel, data, length) : true;
    }
    if (h->lost_conn == c && h->lost_at == h->mem->now)
        return true; // in the datagram that was lost
    if (h->mem->now < h->lose_unreliable_until)
        return true; // sent, and lost on the way (the link's draws are not taken)
    // Always the same draws per message, whatever the link's figures.
    uint64_t lost = splitmix64(&d->rng) % 1000;
    uint64_t dup = splitmix64(&d->rng) % 1000;
    uint64_t j1 = splitmix64(&d->rng), j2 = splitmix64(&d->rng);
    if (lost < d->link.loss_permille || !to)
        return true; // sent, and lost on the way
    uint64_t span = (uint64_t)d->link.jitter_ms + 1;
    uint64_t base = h->mem->now + d->link.latency_ms;
    if (!push(to, base + j1 % span, c, ITEM_MESSAGE, (uint8_t)channel, data, length))
        return false;
    if (dup < d->link.duplicate_permille)
        push(to, base + j2 % span, c, ITEM_MESSAGE, (uint8_t)channel, data, length);
    return true;
}

static void memory_flush(net_host *host) { (void)host; }

// Closes h's side of its connection to `peer`, telling the other side why.
static void close_side(mem_host *h, uint32_t peer, net_disconnect_reason reason)
{
    if (!h->mem || peer >= h->slot_count || !h->slots[peer])
        return;
    mem_conn *c = h->slots[peer];
    uint8_t *state = h->base.server ? &c->server_state : &c->client_state;
    if (*state != SIDE_OPEN && *state != SIDE_CONNECTING)
        return;
    *state = SIDE_CLOSED;
    if (h->base.server)
        h->slots[peer] = NULL;
    mem_host *to = other_side(c, h);
    if (to)
        push(to, control_time(h->mem, dir_from(c, h)), c, ITEM_DISCONNECT, (uint8_t)reason, NULL, 0);
}

static void memory_disconnect(net_host *host, uint32_t peer) { close_side(impl(host), peer, NET_DISCONNECT_CLOSED); }

static net_leave_state memory_leave(net_host *host, uint32_t wait_ms)
{
    (void)wait_ms; // never waits: only net_memory_advance moves time
    mem_host *h = impl(host);
    if (!h->leaving) {
        mem_conn *c = h->mem ? h->slots[0] : NULL;
        if (!c || c->client_state != SIDE_OPEN) {
            close_side(h, 0, NET_DISCONNECT_LEFT); // a connect under way is abandoned
            return NET_LEAVE_NOT_CONNECTED;
        }
        h->leaving = true;
        h->leave_state = NET_LEAVE_PENDING;
        h->leave_deadline = h->mem->now + NET_LEAVE_MAX_MS;
        close_side(h, 0, NET_DISCONNECT_LEFT);
    }
    net_event ev;
    while (h->leave_state == NET_LEAVE_PENDING && memory_service(host, &ev, 0) != NET_EVENT_NONE) {
    }
    if (h->leave_state == NET_LEAVE_PENDING && (!h->mem || h->mem->now >= h->leave_deadline))
        h->leave_state = NET_LEAVE_GAVE_UP;
    return (net_leave_state)h->leave_state;
}

static void memory_wire(const net_host *host, uint64_t *sent, uint64_t *received)
{
    const mem_host *h = (const mem_host *)host;
    *sent = h->wire_sent;
    *received = h->wire_received;
}

static uint16_t memory_port(const net_host *host)
{
    (void)host;
    return 0;
}

static void memory_destroy(net_host *host)
{
    mem_host *h = impl(host);
    net_memory *mem = h->mem;
    if (mem) {
        for (uint32_t i = 0; i < h->slot_count; i++) {
            mem_conn *c = h->slots[i];
            if (!c)
                continue;
            uint8_t st = h->base.server ? c->server_state : c->client_state;
            if (st == SIDE_OPEN || st == SIDE_CONNECTING)
                vanish(c, h);
        }
        for (size_t i = 0; i < mem->conn_count; i++) {
            if (mem->conns[i]->client == h)
                mem->conns[i]->client = NULL;
            if (mem->conns[i]->server == h)
                mem->conns[i]->server = NULL;
        }
        for (size_t i = 0; i < mem->host_count; i++) {
            if (mem->hosts[i] == h) {
                mem->hosts[i] = mem->hosts[--mem->host_count];
                break;
            }
        }
    }
    clear_queue(h);
    free(h->queue);
    free(h->slots);
    free(h->held);
    free(h->name);
    free(h);
}

static const net_host_ops memory_ops = {
    memory_service, memory_send, memory_flush, memory_disconnect,
    memory_leave,   memory_wire, memory_port,  memory_destroy,
};

// ---- the network ---------------------------------------------------------------------

net_memory *net_memory_create(uint64_t seed)
{
    net_memory *mem = calloc(1, sizeof *mem);
    if (mem)
        mem->seed = seed;
    return mem;
}

void net_memory_destroy(net_memory *mem)
{
    if (!mem)
        return;
    // Hosts still alive are detached: they report nothing more and their
    // destroy only frees them.
    for (size_t i = 0; i < mem->host_count; i++) {
        mem_host *h = mem->hosts[i];
        clear_queue(h);
        memset(h->slots, 0, h->slot_count * sizeof *h->slots);
        h->mem = NULL;
    }
    for (size_t i = 0; i < mem->conn_count; i++)
        free(mem->conns[i]);
    free(mem->conns);
    free(mem->hosts);
    free(mem);
}

uint64_t net_memory_now(const net_memory *mem) { return mem ? mem->now : 0; }

void net_memory_lose_next_control(net_host *host, uint32_t retransmit_ms)
{
    if (!host || host->ops != &memory_ops)
        return;
    mem_host *h = impl(host);
    h->lose_control = true;
    h->lose_retransmit_ms = retransmit_ms;
}

void net_memory_lose_unreliable_for(net_host *host, uint32_t ms)
{
    if (!host || host->ops != &memory_ops)
        return;
    mem_host *h = impl(host);
    h->lose_unreliable_until = h->mem ? h->mem->now + ms : 0;
}

void net_memory_advance(net_memory *mem, uint32_t ms)
{
    if (mem)
        mem->now += ms;
}

static mem_host *new_host(net_memory *mem, const net_host_config *config, bool server)
{
    net_host_config c;
    if (!mem || net_host_config_check(config, &c) || c.token_key || c.connect_token)
        return NULL; // secure mode is the ENet host's
    if (!grow((void **)&mem->hosts, &mem->host_cap, mem->host_count + 1, sizeof *mem->hosts))
        return NULL;
    mem_host *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->slot_count = server ? c.max_peers : 1;
    h->slots = calloc(h->slot_count, sizeof *h->slots);
    if (!h->slots) {
        free(h);
        return NULL;
    }
    net_host_init(&h->base, &memory_ops, &c, server);
    h->mem = mem;
    mem->hosts[mem->host_count++] = h;
    return h;
}

static mem_host *find_listener(net_memory *mem, const char *name)
{
    for (size_t i = 0; i < mem->host_count; i++) {
        mem_host *h = mem->hosts[i];
        if (h->name && strcmp(h->name, name) == 0)
            return h;
    }
    return NULL;
}

net_host *net_memory_listen(net_memory *mem, const char *name, const net_host_config *config)
{
    if (!mem || !name || find_listener(mem, name))
        return NULL;
    size_t n = strlen(name) + 1;
    char *copy = malloc(n);
    if (!copy)
        return NULL;
    memcpy(copy, name, n);
    mem_host *h = new_host(mem, config, true);
    if (!h) {
        free(copy);
        return NULL;
    }
    h->name = copy;
    return &h->base;
}

static bool link_valid(const net_memory_link *l)
{
    return l->latency_ms <= 60000 && l->jitter_ms <= 60000 && l->loss_permille <= 1000 && l->duplicate_permille <= 1000;
}

net_host *net_memory_connect(net_memory *mem, const char *name, const net_memory_link *up, const net_memory_link *down,
                             const net_host_config *config)
{
    net_memory_link none;
    memset(&none, 0, sizeof none);
    if (!mem || !name)
        return NULL;
    if (!up)
        up = &none;
    if (!down)
        down = &none;
    if (!link_valid(up) || !link_valid(down))
        return NULL;
    if (!grow((void **)&mem->conns, &mem->conn_cap, mem->conn_count + 1, sizeof *mem->conns))
        return NULL;
    mem_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    mem_host *h = new_host(mem, config, false);
    if (!h) {
        free(c);
        return NULL;
    }
    c->id = (uint32_t)mem->conn_count;
    mem->conns[mem->conn_count++] = c;
    c->client = h;
    c->server = find_listener(mem, name);
    c->client_state = SIDE_CONNECTING;
    c->server_state = SIDE_NONE;
    c->up.link = *up;
    c->down.link = *down;
    c->up.rng = mem->seed ^ (0x5851f42d4c957f2dull * (2ull * c->id + 1));
    c->down.rng = mem->seed ^ (0x5851f42d4c957f2dull * (2ull * c->id + 2));
    h->slots[0] = c;
    if (c->server) { // the request takes exactly one latency
        c->up.control_at = mem->now + up->latency_ms;
        push(c->server, c->up.control_at, c, ITEM_CONNECT, 0, NULL, 0);
    }
    push(h, mem->now + h->base.config.timeout_ms, c, ITEM_CONNECT_FAIL, NET_DISCONNECT_UNANSWERED, NULL, 0);
    return &h->base;
}
