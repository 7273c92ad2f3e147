// keel: a host's secure mode after the handshake: every message to or from
// a peer sealed with its session's keys (seal.h has the layout and the
// invariants). host.c reaches it only through net_host.sealing, so the hosts
// and the library built without libsodium never link it. MIT licence, see
// LICENSE.
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "host_impl.h"
#include "seal.h"

static bool open_event(net_host *host, net_event *event);
static const uint8_t *seal_out(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t *length);
static const net_host_sealing sealing = {seal_out, open_event};

bool net_host_seal_init(net_host *host, uint32_t peers)
{
    if (sodium_init() < 0)
        return false;
    host->seals = calloc(peers, sizeof *host->seals);
    host->seal_buffer = malloc(NET_HOST_MAX_MESSAGE + NET_SEAL_BYTES);
    host->open_buffer = malloc(NET_HOST_MAX_MESSAGE);
    if (!host->seals || !host->seal_buffer || !host->open_buffer) {
        net_host_seal_free(host);
        return false;
    }
    host->seal_count = peers;
    host->sealing = &sealing;
    return true;
}

void net_host_seal_start(net_host *host, uint32_t peer, const uint8_t send_key[32], const uint8_t recv_key[32])
{
    if (peer < host->seal_count)
        seal_start(&host->seals[peer], send_key, recv_key);
}

void net_host_seal_stop(net_host *host, uint32_t peer)
{
    if (peer < host->seal_count)
        seal_stop(&host->seals[peer]);
}

void net_host_seal_free(net_host *host)
{
    if (host->seals)
        sodium_memzero(host->seals, host->seal_count * sizeof *host->seals);
    free(host->seals);
    free(host->seal_buffer);
    free(host->open_buffer);
    host->seals = NULL;
    host->seal_buffer = NULL;
    host->open_buffer = NULL;
    host->seal_count = 0;
    host->sealing = NULL;
}

static const uint8_t *seal_out(net_host *host, uint32_t peer, net_channel channel, const uint8_t *data, size_t *length)
{
    if (peer >= host->seal_count || !host->seals[peer].on)
        return NULL;
    *length = seal_message(&host->seals[peer], channel, data, *length, host->seal_buffer);
    return host->seal_buffer;
}

// Opens a received message in place of the event's data. False (counted)
// when it must be dropped.
static bool open_event(net_host *host, net_event *event)
{
    if (event->peer >= host->seal_count || !host->seals[event->peer].on) {
        host->stats.sealed_forged++; // no session with that peer: nothing opens
        return false;
    }
    size_t n = 0;
    seal_result r = seal_open(&host->seals[event->peer], (net_channel)event->channel, event->data, event->length,
                              host->open_buffer, &n);
    if (r != SEAL_OK) {
        host->stats.sealed_forged += r == SEAL_FORGED;
        host->stats.sealed_replayed += r == SEAL_REPLAYED;
        return false;
    }
    event->data = host->open_buffer;
    event->length = n;
    return true;
}
