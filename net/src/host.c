// keel: the part of net_host.h both kinds of host share: the configuration,
// the checks every send goes through, the statistics, and the dispatch to
// the kind's functions (host_enet.c, host_memory.c). MIT licence, see LICENSE.
#include <string.h>

#include "host_impl.h"

#define NET_HOST_COOKIE 0x6e657431u // "net1"

net_host_config net_host_default_config(void)
{
    net_host_config c;
    memset(&c, 0, sizeof c); // secure mode off
    c.max_peers = 64;
    c.max_peers_per_address = 4;
    c.timeout_ms = NET_HOST_DEFAULT_TIMEOUT_MS;
    c.cookie = NET_HOST_COOKIE;
    return c;
}

const char *net_host_config_check(const net_host_config *config, net_host_config *out)
{
    net_host_config c = config ? *config : net_host_default_config();
    if (c.cookie != NET_HOST_COOKIE)
        return "configuration not initialised with net_host_default_config";
    if (c.max_peers < 1 || c.max_peers > NET_HOST_MAX_PEERS)
        return "max_peers must be 1 to 4095";
    if (c.max_peers_per_address < 1)
        return "max_peers_per_address must be at least 1";
    if (c.timeout_ms < 1 || c.timeout_ms > NET_HOST_MAX_TIMEOUT_MS)
        return "timeout_ms must be 1 to 60000";
    if (c.token_key && c.connect_token)
        return "token_key (a server's) and connect_token (a client's) together";
    *out = c;
    return NULL;
}

void net_host_init(net_host *host, const net_host_ops *ops, const net_host_config *config, bool server)
{
    memset(host, 0, sizeof *host);
    host->ops = ops;
    host->config = *config;
    host->server = server;
}

uint32_t net_wire_datagrams(net_channel channel, size_t length)
{
    if (channel != NET_CHANNEL_CONTROL || length <= NET_MTU)
        return 1;
    return (uint32_t)((length + NET_MTU - 1) / NET_MTU);
}

uint64_t net_wire_message(net_channel channel, size_t length)
{
    if (channel != NET_CHANNEL_CONTROL)
        return (uint64_t)length + NET_WIRE_UNRELIABLE + NET_WIRE_UDP_IP;
    uint32_t n = net_wire_datagrams(channel, length);
    if (n == 1)
        return (uint64_t)length + NET_WIRE_RELIABLE + NET_WIRE_UDP_IP;
    return (uint64_t)length + (uint64_t)n * (NET_WIRE_FRAGMENT + NET_WIRE_UDP_IP);
}

net_host *net_host_listen(const char *address, uint16_t port, const net_host_config *config, const char **error)
{
    return net_host_enet_listen(address, port, config, error);
}

net_host *net_host_connect(const char *address, uint16_t port, const net_host_config *config, const char **error)
{
    return net_host_enet_connect(address, port, config, NET_HOST_ENET_MTU, error);
}

net_event_type net_host_service(net_host *host, net_event *event, uint32_t timeout_ms)
{
    net_event scratch;
    if (!event)
        event = &scratch;
    memset(event, 0, sizeof *event);
    if (!host)
        return NET_EVENT_NONE;
    net_event_type t = host->ops->service(host, event, timeout_ms);
    event->type = t;
    if (t == NET_EVENT_RECEIVE) {
        host->stats.messages_received++;
        host->stats.payload_received += event->length;
    }
    return t;
}

bool net_host_send(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t length)
{
    if (!host || (unsigned)channel >= NET_CHANNEL_COUNT || (!data && length > 0))
        return false;
    if (channel != NET_CHANNEL_CONTROL && length > NET_MTU) {
        host->stats.refused_oversize++;
        return false;
    }
    if (length > NET_HOST_MAX_MESSAGE)
        return false;
    if (!host->ops->send(host, peer, channel, data, length))
        return false;
    host->stats.messages_sent++;
    host->stats.payload_sent += length;
    return true;
}

void net_host_flush(net_host *host)
{
    if (host)
        host->ops->flush(host);
}

void net_host_disconnect(net_host *host, uint32_t peer)
{
    if (host)
        host->ops->disconnect(host, peer);
}

net_leave_state net_host_leave(net_host *host, uint32_t wait_ms)
{
    if (!host || host->server)
        return NET_LEAVE_NOT_CONNECTED;
    return host->ops->leave(host, wait_ms);
}

const char *net_disconnect_reason_name(net_disconnect_reason reason)
{
    switch (reason) {
    case NET_DISCONNECT_NONE: return "none";
    case NET_DISCONNECT_LEFT: return "left";
    case NET_DISCONNECT_CLOSED: return "closed by the other side";
    case NET_DISCONNECT_TIMEOUT: return "timed out";
    case NET_DISCONNECT_UNANSWERED: return "connect not answered";
    case NET_DISCONNECT_REFUSED_FULL: return "refused: the server has no free connection";
    case NET_DISCONNECT_REFUSED_ADDRESS: return "refused: the server has too many connections from this address";
    case NET_DISCONNECT_REFUSED_TOKEN: return "refused: the server's handshake turned the token down";
    }
    return "unknown";
}

void net_host_stats_get(const net_host *host, net_host_stats *stats)
{
    if (!stats)
        return;
    memset(stats, 0, sizeof *stats);
    if (!host)
        return;
    *stats = host->stats;
    host->ops->wire(host, &stats->wire_sent, &stats->wire_received);
}

uint32_t net_host_open_connections(const net_host *host) { return net_host_enet_peers_in_use(host); }

uint16_t net_host_port(const net_host *host) { return host ? host->ops->port(host) : 0; }

void net_host_destroy(net_host *host)
{
    if (host)
        host->ops->destroy(host);
}
