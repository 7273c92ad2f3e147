// keel: a leave's acknowledgement sent again on the ENet host (docs/transport.md,
// "Leaving"). MIT licence, see LICENSE.
//
// A client leaves with a DISCONNECT (net_host_leave); the server's ENet
// counts the leave, acknowledges the DISCONNECT once and resets the peer at
// once. When that one acknowledgement is lost, the client sends its
// DISCONNECT again (host_enet_live.c paces it), but ENet drops a datagram
// for a peer it has reset: the client's leave ends unacknowledged after
// NET_LEAVE_MAX_MS although the server counted it. Here the server keeps,
// for NET_LEAVE_MAX_MS after it counted a leave (the client stops sending
// it by then), what an acknowledgement needs: the client's address, its
// peer id, ENet's two session ids and, in secure mode, the connection's
// datagram state (its keys, its counter, its window). A datagram for that
// peer id from that address, in that session, while ENet has given the
// peer to no one else, that holds the leave's DISCONNECT (the leave's value
// NET_DISCONNECT_DATA_LEAVE, to be acknowledged) is answered with an ENet
// datagram holding the ACKNOWLEDGE of that DISCONNECT, as ENet would have
// sent it: the client's ENet then ends the connection as acknowledged.
// - The answer (2 + 8 bytes, + NET_FRAME_BYTES in secure mode) is smaller
//   than the DISCONNECT's datagram (4 + 8 at least), goes only to the
//   address that left, at most ENET_LEAVE_ECHOES times.
// - Secure mode: the datagram must open with the connection's keys
//   and pass its replay window (else it is counted as frames_forged or
//   frames_replayed, as before); the answer carries the connection's next
//   datagram counter, so no (key, nonce) pair is used twice.
// - Insecure mode: ENet's framing is not authenticated anyway; a spoofer
//   who knows the address, peer id and session of a client that just left
//   can make the server send that client a few 10-byte acknowledgements.
// This uses ENet 1.3.17's wire layout (protocol.h) and peer fields.
#include <stddef.h>
#include <string.h>

#include <enet/enet.h>
#include <enet/time.h>

#include "host_enet_impl.h"

#define ENET_LEAVE_ECHOES 8u

void enet_leave_keep(enet_net_host *h, uint32_t i, const ENetPeer *p, enet_uint32 now)
{
    enet_slot *s = &h->slots[i];
    s->left = true;
    s->left_at = now;
    s->left_address = p->address; // (ENet's reset keeps the address and the sessions)
    s->left_session_in = p->incomingSessionID;
    s->left_session_out = p->outgoingSessionID;
    s->left_echoes = 0;
    enet_frame_retire(h, i);
}

void enet_leave_expire(enet_net_host *h, uint32_t i, enet_uint32 now)
{
    enet_slot *s = &h->slots[i];
    if (!s->left)
        return;
    if (h->enet->peers[i].state == ENET_PEER_STATE_DISCONNECTED &&
        ENET_TIME_DIFFERENCE(now, s->left_at) < (enet_uint32)NET_LEAVE_MAX_MS)
        return;
    s->left = false;
    enet_frame_forget_left(h, i);
}

// The DISCONNECT of a leave in ENet commands d[at .. n): its reliable
// sequence number, network order (false: none).
static bool find_leave(const enet_uint8 *d, size_t at, size_t n, enet_uint16 *sequence)
{
    while (at + sizeof(ENetProtocolCommandHeader) <= n) {
        enet_uint8 command = d[at] & ENET_PROTOCOL_COMMAND_MASK;
        size_t size = enet_protocol_command_size(command);
        if (size == 0 || at + size > n)
            return false;
        ENetProtocol c;
        memcpy(&c, d + at, size);
        if (command == ENET_PROTOCOL_COMMAND_DISCONNECT && c.header.channelID == 0xFF &&
            (d[at] & ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE) &&
            ENET_NET_TO_HOST_32(c.disconnect.data) == NET_DISCONNECT_DATA_LEAVE) {
            *sequence = c.header.reliableSequenceNumber;
            return true;
        }
        at += size;
        switch (command) { // the commands that carry data after them
        case ENET_PROTOCOL_COMMAND_SEND_RELIABLE: at += ENET_NET_TO_HOST_16(c.sendReliable.dataLength); break;
        case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE: at += ENET_NET_TO_HOST_16(c.sendUnreliable.dataLength); break;
        case ENET_PROTOCOL_COMMAND_SEND_UNSEQUENCED: at += ENET_NET_TO_HOST_16(c.sendUnsequenced.dataLength); break;
        case ENET_PROTOCOL_COMMAND_SEND_FRAGMENT:
        case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE_FRAGMENT:
            at += ENET_NET_TO_HOST_16(c.sendFragment.dataLength);
            break;
        default: break;
        }
    }
    return false;
}

int enet_leave_echo(enet_net_host *h, ENetHost *e)
{
    enet_uint8 *d = e->receivedData; // (opened in place in secure mode)
    size_t n = e->receivedDataLength;
    unsigned id = (unsigned)((d[0] << 8) | d[1]);
    unsigned i = id & ENET_PROTOCOL_MAXIMUM_PEER_ID;
    unsigned session = (id & ENET_PROTOCOL_HEADER_SESSION_MASK) >> ENET_PROTOCOL_HEADER_SESSION_SHIFT;
    if (i >= e->peerCount)
        return 0;
    enet_slot *s = &h->slots[i];
    if (!s->left || e->peers[i].state != ENET_PEER_STATE_DISCONNECTED ||
        e->receivedAddress.host != s->left_address.host || e->receivedAddress.port != s->left_address.port ||
        session != s->left_session_in)
        return 0;
    if (h->frames) {
        seal_result r = enet_frame_open_left(h, i, d, n);
        if (r != SEAL_OK)
            return enet_frame_drop(h, r);
        n -= NET_FRAME_BYTES;
    }
    // a DISCONNECT to acknowledge comes with its sent time, uncompressed
    if (!(id & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) || (id & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED) ||
        n < sizeof(ENetProtocolHeader))
        return 1;
    enet_uint16 sequence, sent_time;
    memcpy(&sent_time, d + offsetof(ENetProtocolHeader, sentTime), sizeof sent_time);
    if (!find_leave(d, sizeof(ENetProtocolHeader), n, &sequence) || s->left_echoes >= ENET_LEAVE_ECHOES)
        return 1;
    s->left_echoes++;
    // ENet's acknowledgement, as enet_protocol_send_acknowledgements writes it
    enet_uint8 out[2 + sizeof(ENetProtocolAcknowledge) + NET_FRAME_BYTES];
    enet_uint16 header = ENET_HOST_TO_NET_16(
        (enet_uint16)(s->remote_peer_id | (s->left_session_out << ENET_PROTOCOL_HEADER_SESSION_SHIFT)));
    ENetProtocolAcknowledge ack;
    memset(&ack, 0, sizeof ack);
    ack.header.command = ENET_PROTOCOL_COMMAND_ACKNOWLEDGE;
    ack.header.channelID = 0xFF;
    ack.header.reliableSequenceNumber = sequence;
    ack.receivedReliableSequenceNumber = sequence;
    ack.receivedSentTime = sent_time;
    memcpy(out, &header, 2);
    memcpy(out + 2, &ack, sizeof ack);
    enet_frame_send_left(h, i, &e->receivedAddress, out, 2 + sizeof ack);
    h->base.stats.leaves_acknowledged_again++;
    return 1;
}
