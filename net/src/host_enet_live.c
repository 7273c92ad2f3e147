// keel: liveness and the join's pacing on the ENet host (docs/transport.md,
// "Liveness" and "Joining"). MIT licence, see LICENSE.
//
// Liveness is judged by traffic. ENet 1.3.17 judges a peer alive only by the
// acknowledgements of its own reliable commands: a reliable command (a ping
// included) unacknowledged for timeoutMinimum ends the connection, and its
// retransmission timer doubles with every resend, so after a stall of a
// couple of seconds on a lossy link two lost pings were enough to end a
// connection that was delivering 32 inputs a second. Here:
// - ENet's own limits are a backstop, ENET_LIVE_BACKSTOP x the silence limit
//   (40 s at the default 10 s): only a peer that keeps sending datagrams but
//   acknowledges no reliable command for that long is ended by ENet;
// - keel's watchdog (host_enet.c) ends a connection after timeout_ms in which
//   no datagram of it arrived. "A datagram arrived" is ENet's
//   incomingDataTotal moving: ENet adds every datagram it accepted for the
//   peer (right peer id, session and address) before reading its commands,
//   and in secure mode only datagrams that authenticated reach ENet
//   (host_enet_frame.c), so a spoofer cannot keep a connection alive. ENet
//   zeroes the totals once a second (enet_host_bandwidth_throttle): a total
//   of 0 is never taken for a datagram.
//
// The join's pacing. A client's first reliable commands (keel's hello) go in
// the datagram that acknowledges the server's VERIFY_CONNECT. When it is
// lost, the server stays in ACKNOWLEDGING_CONNECT and ENet discards every
// command of the client's until its VERIFY_CONNECT, resent after ENet's
// 500 ms starting estimate, is acknowledged; the hello's own resends, paced
// by that same estimate and doubling, are discarded meanwhile. Here:
// - a client seeds ENet's round trip with its connect's (CONNECT to
//   VERIFY_CONNECT, at most ENet's 500 ms default: a lost CONNECT makes it
//   no longer), as ENet itself does with a first acknowledgement (the
//   variance half of it): the hello's retransmission timeout is three round
//   trips, not 500 ms;
// - a server peer in ACKNOWLEDGING_CONNECT that receives a datagram (its
//   total moves: the CONNECT itself is not counted, it came from no peer)
//   has a client that missed nothing but the acknowledgement: its
//   VERIFY_CONNECT is sent again at once;
// - a joining client (no acknowledgement heard since its connect) that
//   receives a datagram from the server (a VERIFY_CONNECT sent again: the
//   server missed our acknowledgement and discarded what came with it)
//   sends its unacknowledged reliable commands again at once, right behind
//   the new acknowledgement.
// Resending "at once" moves a command's sentTime back by its timeout, so
// that ENet's next check retransmits it (and doubles its timeout, as for any
// resend). This uses ENet 1.3.17's peer and command fields, which enet.h
// declares; the Debian package is that version.
#include <enet/enet.h>
#include <enet/time.h>

#include "host_enet_impl.h"

#define ENET_LIVE_BACKSTOP 4u

void enet_live_configure(ENetPeer *peer, uint32_t limit_ms)
{
    enet_uint32 backstop = (enet_uint32)(ENET_LIVE_BACKSTOP * (uint64_t)limit_ms);
    enet_peer_timeout(peer, ENET_PEER_TIMEOUT_LIMIT, backstop, backstop);
}

void enet_live_start(enet_net_host *h, ENetPeer *peer, uint32_t i)
{
    enet_slot *s = &h->slots[i];
    enet_uint32 now = enet_time_get();
    s->heard = now;
    s->heard_total = peer->incomingDataTotal;
    if (h->base.server)
        return;
    enet_uint32 rtt = ENET_TIME_DIFFERENCE(now, h->connect_sent);
    if (rtt < 1)
        rtt = 1;
    if (rtt < ENET_PEER_DEFAULT_ROUND_TRIP_TIME) {
        peer->roundTripTime = rtt;
        peer->roundTripTimeVariance = (rtt + 1u) / 2u;
    }
    s->joining = true;
}

// Every unacknowledged reliable command of the peer is due now.
static void resend_now(ENetPeer *p, enet_uint32 now)
{
    if (enet_list_empty(&p->sentReliableCommands))
        return;
    for (ENetListIterator it = enet_list_begin(&p->sentReliableCommands); it != enet_list_end(&p->sentReliableCommands);
         it = enet_list_next(it)) {
        ENetOutgoingCommand *c = (ENetOutgoingCommand *)it;
        c->sentTime = now - c->roundTripTimeout;
    }
    p->nextTimeout = now;
}

// Whether a datagram of peer p arrived since the last look.
static bool heard_now(enet_slot *s, const ENetPeer *p)
{
    if (p->incomingDataTotal == s->heard_total)
        return false;
    s->heard_total = p->incomingDataTotal;
    return p->incomingDataTotal != 0; // ENet zeroed the total: nothing new
}

void enet_live_step(enet_net_host *h, enet_uint32 now)
{
    for (uint32_t i = 0; i < h->enet->peerCount; i++) {
        enet_slot *s = &h->slots[i];
        ENetPeer *p = &h->enet->peers[i];
        if (s->state == SLOT_FREE) {
            // A server's peer inside ENet's handshake: a datagram from it
            // means its client is connected and missed our acknowledgement.
            if (h->base.server && p->state == ENET_PEER_STATE_ACKNOWLEDGING_CONNECT && p->incomingDataTotal != 0 &&
                p->incomingDataTotal != s->heard_total) {
                s->heard_total = p->incomingDataTotal;
                resend_now(p, now);
            } else if (p->state == ENET_PEER_STATE_DISCONNECTED) {
                s->heard_total = 0;
            }
            continue;
        }
        if (s->state == SLOT_CONNECTING || !heard_now(s, p))
            continue;
        s->heard = now;
        if (s->joining) {
            if (p->lastReceiveTime != 0) // an acknowledgement came: the server is past its handshake
                s->joining = false;
            else
                resend_now(p, now);
        }
    }
}
