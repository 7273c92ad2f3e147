// keel server: shutting down with a word to every client. MIT licence, see
// LICENSE.
//
// Invariants: once draining, no client is joined and no hello is accepted:
// every connection, joined or not, and every hello after that gets a refuse
// with NET_REFUSE_SHUTDOWN and the drain's reason, then its connection
// closed. The refuse goes on the reliable control channel ahead of the close
// (ENet delivers queued messages before a disconnect), so a client that sees
// its connection closed has the reason. The caller bounds how long it waits
// for the closes to be acknowledged (net_host_open_connections).
#include <keel/sv_server.h>

#include <string.h>

#include "sv_internal.h"

void sv_drain_refuse(sv_server *sv, uint32_t peer)
{
    sv_send_refusal(sv, peer, NET_REFUSE_SHUTDOWN, sv->drain_reason);
    sv->stats.clients_refused++;
}

void sv_server_drain(sv_server *sv, const char *reason)
{
    if (sv->draining)
        return;
    sv->draining = true;
    size_t n = 0;
    for (const char *p = reason ? reason : ""; *p && n < NET_REASON_MAX; p++)
        sv->drain_reason[n++] = *p >= 0x20 && *p <= 0x7E ? *p : '?';
    sv->drain_reason[n] = '\0';
    for (uint32_t i = 0; i < sv->config.max_clients; i++) {
        sv_client *c = &sv->clients[i];
        if (!c->used)
            continue;
        if (c->joined) {
            sv_send_refusal(sv, c->peer, NET_REFUSE_SHUTDOWN, sv->drain_reason);
            sv->stats.clients_drained++;
        } else { // said hello, not joined yet
            sv_drain_refuse(sv, c->peer);
        }
        memset(c, 0, sizeof *c);
    }
    while (sv->waiting_count) // connected, no hello yet
        sv_send_refusal(sv, sv->waiting_peer[--sv->waiting_count], NET_REFUSE_SHUTDOWN, sv->drain_reason);
    net_host_flush(sv->host);
}

bool sv_server_draining(const sv_server *sv) { return sv->draining; }
