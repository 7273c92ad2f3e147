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
//   of 0 is never taken for a datagram;
// - in secure mode ENet pings a connected peer only after a quarter of its
//   silence limit without an acknowledgement (2.5 s at the default 10 s; at
//   least ENet's 500 ms), not every 500 ms: its pings and their
//   acknowledgements were most of the datagrams that carry no input (about
//   4 of 36 a second up), each with its own 18-byte trailer and 28 bytes of
//   UDP/IP, and liveness no longer needs them. The quarter keeps a peer
//   that has nothing else to send heard well within the limit. Insecure
//   mode keeps ENet's 500 ms (its wire is as ENet writes it).
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
// - a server peer in ACKNOWLEDGING_CONNECT that receives a datagram from
//   its client (authenticated, in secure mode) takes it as the
//   acknowledgement of its VERIFY_CONNECT, as ENet would the lost one: the
//   client can only send it after the VERIFY_CONNECT arrived. enet_live_
//   receive (called by the intercept) puts an ACKNOWLEDGE of the
//   VERIFY_CONNECT in front of the datagram's commands, so that ENet
//   connects the peer and then reads the hello that came with it instead
//   of discarding it; the round trip that acknowledgement would show is
//   no sample (it includes the client's wait), so at the CONNECT the
//   peer's round trip goes back to ENet's starting estimate, to be
//   replaced by the next real sample. Should the datagram not take the
//   command (compressed, or no room), the VERIFY_CONNECT is sent again at
//   once instead;
// - a joining client (no acknowledgement heard since its connect) that
//   receives a datagram from the server (a VERIFY_CONNECT sent again: the
//   server missed our acknowledgement and discarded what came with it)
//   sends its unacknowledged reliable commands again at once, right behind
//   the new acknowledgement.
// A leave (net_host_leave) waits at most NET_LEAVE_MAX_MS for its
// acknowledgement: while it waits, what is unacknowledged (the DISCONNECT,
// and what goes before it) is sent again every one and a half round trips
// (+ 10 ms) rather than at ENet's doubling timeout, so that a lost
// DISCONNECT costs a round trip, not the rest of the wait.
// Resending "at once" sets a command's timeout to its age (resend_now), so
// that ENet's next check retransmits it, at most once a round trip. This uses ENet 1.3.17's peer and command fields, which enet.h
// declares; the Debian package is that version.
#include <stddef.h>
#include <string.h>

#include <enet/enet.h>
#include <enet/time.h>

#include "host_enet_impl.h"

#define ENET_LIVE_BACKSTOP 4u
#define ENET_LIVE_PING_SHARE 4u
#define ENET_LIVE_LEAVE_SLACK_MS 10u

void enet_live_configure(ENetPeer *peer, uint32_t limit_ms)
{
    enet_uint32 backstop = (enet_uint32)(ENET_LIVE_BACKSTOP * (uint64_t)limit_ms);
    enet_peer_timeout(peer, ENET_PEER_TIMEOUT_LIMIT, backstop, backstop);
}

void enet_live_sparse_pings(ENetPeer *peer, uint32_t limit_ms)
{
    enet_uint32 interval = limit_ms / ENET_LIVE_PING_SHARE;
    enet_peer_ping_interval(peer, interval > ENET_PEER_PING_INTERVAL ? interval : ENET_PEER_PING_INTERVAL);
}

void enet_live_start(enet_net_host *h, ENetPeer *peer, uint32_t i)
{
    enet_slot *s = &h->slots[i];
    enet_uint32 now = enet_time_get();
    s->heard = now;
    s->heard_total = peer->incomingDataTotal;
    if (h->base.server) {
        if (s->implied_ack) { // no sample: ENet's start, replaced by the next acknowledgement's
            peer->roundTripTime = ENET_PEER_DEFAULT_ROUND_TRIP_TIME;
            peer->roundTripTimeVariance = 0;
            peer->lastReceiveTime = 0;
        }
        s->implied_ack = false;
        return;
    }
    enet_uint32 rtt = ENET_TIME_DIFFERENCE(now, h->connect_sent);
    if (rtt < 1)
        rtt = 1;
    if (rtt < ENET_PEER_DEFAULT_ROUND_TRIP_TIME) {
        peer->roundTripTime = rtt;
        peer->roundTripTimeVariance = (rtt + 1u) / 2u;
    }
    s->joining = true;
}

// Every unacknowledged reliable command of the peer sent at least
// `min_age` ms ago is due now: its timeout becomes its age, which ENet's
// next check finds expired (it then doubles it, as for any resend). Its
// sentTime stays, and with it ENet's backstop (earliestTimeout). A command
// sent just now gets a timeout of 0, which ENet replaces by a fresh one
// from the round trip when it sends it again. At most one resend a
// min_age, so datagrams arriving faster than the acknowledgement can come
// back do not make a storm of resends.
static void resend_now(ENetPeer *p, enet_uint32 now, enet_uint32 min_age)
{
    bool any = false;
    for (ENetListIterator it = enet_list_begin(&p->sentReliableCommands); it != enet_list_end(&p->sentReliableCommands);
         it = enet_list_next(it)) {
        ENetOutgoingCommand *c = (ENetOutgoingCommand *)it;
        enet_uint32 age = ENET_TIME_DIFFERENCE(now, c->sentTime);
        if (ENET_TIME_LESS(now, c->sentTime) || age < min_age || age >= c->roundTripTimeout)
            continue; // too recent, or due anyway
        c->roundTripTimeout = age;
        any = true;
    }
    if (any)
        p->nextTimeout = now;
}

// The round trip to pace resends by: ENet's smoothed one, or the lowest of
// its last throttle interval when smaller (a stall inflates the smoothed
// one for a while).
static enet_uint32 pace_rtt(const ENetPeer *p)
{
    enet_uint32 rtt = p->roundTripTime;
    if (p->lastRoundTripTime != 0 && p->lastRoundTripTime < rtt)
        rtt = p->lastRoundTripTime;
    return rtt;
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
            enet_leave_expire(h, i, now);
            // A server's peer inside ENet's handshake: a datagram from it
            // means its client is connected and missed our acknowledgement.
            if (h->base.server && p->state == ENET_PEER_STATE_ACKNOWLEDGING_CONNECT && p->incomingDataTotal != 0 &&
                p->incomingDataTotal != s->heard_total) {
                s->heard_total = p->incomingDataTotal;
                resend_now(p, now, 0); // (one datagram of the client's: it waits for our answer)
            } else if (p->state == ENET_PEER_STATE_DISCONNECTED) {
                s->heard_total = 0;
                s->implied_ack = false;
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
                resend_now(p, now, pace_rtt(p)); // (what arrives while the acknowledgement is on its way)
        }
    }
}

// The server's VERIFY_CONNECT to peer p, sent at least once and not
// acknowledged (NULL: none).
static const ENetOutgoingCommand *verify_connect(ENetPeer *p)
{
    ENetList *lists[2] = {&p->sentReliableCommands, &p->outgoingCommands};
    for (int k = 0; k < 2; k++) {
        for (ENetListIterator it = enet_list_begin(lists[k]); it != enet_list_end(lists[k]); it = enet_list_next(it)) {
            const ENetOutgoingCommand *c = (const ENetOutgoingCommand *)it;
            if ((c->command.header.command & ENET_PROTOCOL_COMMAND_MASK) == ENET_PROTOCOL_COMMAND_VERIFY_CONNECT &&
                c->sendAttempts > 0)
                return c;
        }
    }
    return NULL;
}

int enet_live_receive(enet_net_host *h, ENetHost *e)
{
    enet_uint8 *d = e->receivedData;
    size_t n = e->receivedDataLength;
    if (!h->base.server || n < 2 || d != e->packetData[0])
        return 0;
    unsigned id = (unsigned)((d[0] << 8) | d[1]);
    unsigned peer_id = id & ENET_PROTOCOL_MAXIMUM_PEER_ID;
    unsigned session = (id & ENET_PROTOCOL_HEADER_SESSION_MASK) >> ENET_PROTOCOL_HEADER_SESSION_SHIFT;
    if (peer_id >= e->peerCount || (id & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED))
        return 0;
    ENetPeer *p = &e->peers[peer_id];
    size_t header = (id & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? sizeof(ENetProtocolHeader)
                                                               : offsetof(ENetProtocolHeader, sentTime);
    ENetProtocolAcknowledge ack;
    if (p->state != ENET_PEER_STATE_ACKNOWLEDGING_CONNECT || p->address.host != e->receivedAddress.host ||
        p->address.port != e->receivedAddress.port || session != p->incomingSessionID || n < header ||
        n + sizeof ack > sizeof e->packetData[0])
        return 0;
    const ENetOutgoingCommand *vc = verify_connect(p);
    if (!vc)
        return 0;
    // ENet puts acknowledgements first: one of the VERIFY_CONNECT there is
    // the usual case, and ENet takes it with its round trip.
    for (size_t at = header;
         at + sizeof ack <= n && (d[at] & ENET_PROTOCOL_COMMAND_MASK) == ENET_PROTOCOL_COMMAND_ACKNOWLEDGE;
         at += sizeof ack) {
        memcpy(&ack, d + at, sizeof ack);
        if (ack.header.channelID == 0xFF &&
            ENET_NET_TO_HOST_16(ack.receivedReliableSequenceNumber) == vc->reliableSequenceNumber)
            return 0;
    }
    memset(&ack, 0, sizeof ack);
    ack.header.command = ENET_PROTOCOL_COMMAND_ACKNOWLEDGE;
    ack.header.channelID = 0xFF;
    ack.receivedReliableSequenceNumber = ENET_HOST_TO_NET_16(vc->reliableSequenceNumber);
    ack.receivedSentTime = ENET_HOST_TO_NET_16((enet_uint16)(vc->sentTime & 0xFFFFu));
    memmove(d + header + sizeof ack, d + header, n - header);
    memcpy(d + header, &ack, sizeof ack);
    e->receivedDataLength = n + sizeof ack;
    h->slots[peer_id].implied_ack = true;
    return 0;
}

void enet_live_leave_step(ENetPeer *p, enet_uint32 now)
{
    enet_uint32 rtt = pace_rtt(p);
    resend_now(p, now, rtt + rtt / 2u + ENET_LIVE_LEAVE_SLACK_MS);
}
