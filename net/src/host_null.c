// keel: the null host: connected to nobody. Sends are accepted and dropped,
// service never reports anything. A client replaying a recording runs on it:
// what it would send was sent when the recording was made, and what it
// receives comes from the recording. MIT licence, see LICENSE.
#include <stdlib.h>

#include "host_impl.h"

typedef struct null_host {
    net_host base;
    uint64_t wire_sent;
} null_host;

static net_event_type null_service(net_host *host, net_event *ev, uint32_t timeout_ms)
{
    (void)host;
    (void)ev;
    (void)timeout_ms; // never waits: nothing can arrive
    return NET_EVENT_NONE;
}

static bool null_send(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t length)
{
    (void)peer;
    (void)data;
    ((null_host *)host)->wire_sent += net_wire_message(channel, length);
    return true;
}

static void null_flush(net_host *host) { (void)host; }

static void null_disconnect(net_host *host, uint32_t peer)
{
    (void)host;
    (void)peer;
}

static net_leave_state null_leave(net_host *host, uint32_t wait_ms)
{
    (void)host;
    (void)wait_ms;
    return NET_LEAVE_NOT_CONNECTED;
}

static void null_wire(const net_host *host, uint64_t *sent, uint64_t *received)
{
    *sent = ((const null_host *)host)->wire_sent;
    *received = 0;
}

static uint16_t null_port(const net_host *host)
{
    (void)host;
    return 0;
}

static void null_destroy(net_host *host) { free(host); }

static const net_host_ops null_ops = {
    null_service, null_send, null_flush, null_disconnect, null_leave, null_wire, null_port, null_destroy,
};

net_host *net_host_null(void)
{
    null_host *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    net_host_config c = net_host_default_config();
    net_host_init(&h->base, &null_ops, &c, false);
    return &h->base;
}
