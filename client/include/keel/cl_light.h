// keel: light clients -- the client's side of the protocol without the
// simulation, for load: many of them in one process cost the server what as
// many real players cost it. MIT licence, see LICENSE.
//
// A light client speaks the protocol as cl_client does: a hello with the
// simulation identity, inputs with the same redundancy (a packet every
// ticks_per_packet ticks carrying the last ticks_per_packet x
// redundancy_packets commands), and acknowledgements, so the server sends it
// delta snapshots against a baseline it holds, as to a real client. It
// predicts nothing: it never decodes the commands of a snapshot, checks no
// hash and keeps no scene. Its commands come from the caller, one per tick,
// in tick order: cl_light_command stores the command for the next tick.
//
// Invariants:
// - Commands are made for consecutive ticks first_tick .. next_tick - 1; the
//   ring holds the newest CL_LIGHT_RING of them, and an input packet carries
//   only a contiguous run ending at the newest (never a tick before
//   first_tick). cl_light_skip_to moves next_tick (and first_tick) forward,
//   never back.
// - The acknowledgement is what a cl_client would say (protocol 3): ack is
//   the confirmed tick C -- a full state received whole, then every delta
//   snapshot whose baseline is a tick it confirmed (within the last
//   CL_LIGHT_RING) -- and held_mask the ticks past C of the snapshots it
//   keeps (at most CL_LIGHT_HELD) until the one before them comes. It
//   decodes only their headers. ack only grows. note_snapshot in cl_light.c
//   decides it; it_holds and held_mask go with it.
// - Its clock (cl_light_target_tick) estimates the server's tick from the
//   welcome and the round trip, and leads it by the round trip plus a
//   margin that follows the input margin the server reports: late commands
//   (a negative margin) move it forward at once; a margin above three ticks
//   for 32 reports in a row takes one tick back.
// - No allocation: the struct is the whole state (about 5 KB).
#ifndef KEEL_CL_LIGHT_H
#define KEEL_CL_LIGHT_H

#include <keel/net_host.h>
#include <keel/net_proto.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CL_LIGHT_RING 64u
#define CL_LIGHT_HELD 32u

typedef enum cl_light_status {
    CL_LIGHT_CONNECTING = 0, ///< waiting for the welcome
    CL_LIGHT_PLAYING = 1,    ///< welcomed: making and sending commands
    CL_LIGHT_REFUSED = 2,    ///< the server refused (cl_light.refusal says why)
    CL_LIGHT_DISCONNECTED = 3,
} cl_light_status;

typedef struct cl_light_stats {
    uint64_t snapshots, full_states; ///< received (full states: whole)
    uint64_t snapshots_held;         ///< kept until the one before them came
    uint64_t input_packets, commands_sent;
    uint64_t messages_malformed;
} cl_light_stats;

typedef struct cl_light {
    net_sim_identity identity;
    uint32_t ticks_per_packet; ///< 1..8
    uint32_t repeat;           ///< commands per packet at most: ticks_per_packet x redundancy_packets
    cl_light_status status;
    char refusal[NET_REASON_MAX + 1];
    uint8_t refusal_code; ///< net_refuse_code (NET_REFUSE_SHUTDOWN: the server shut down)
    uint32_t character;
    uint32_t first_tick, next_tick; ///< see the invariants
    uint32_t sent_newest;           ///< newest tick sent, NET_TICK_NONE before any
    uint16_t sequence;
    uint32_t ack;                                                ///< the confirmed tick, or NET_TICK_NONE
    uint32_t confirmed[CL_LIGHT_RING];                           ///< ticks confirmed (slot tick % CL_LIGHT_RING)
    uint32_t held_base[CL_LIGHT_HELD], held_tick[CL_LIGHT_HELD]; ///< kept snapshots; tick NET_TICK_NONE: free
    uint32_t full_tick;                                          ///< the full state being received in parts
    uint64_t full_parts;                                         ///< its parts seen (bit i: part i)
    // clock
    uint32_t welcome_tick, welcome_ms, tick_rate;
    double rtt_ms;           ///< the welcome's estimate, then smoothed echoes
    bool rtt_from_echo;      ///< rtt_ms comes from echoes (the welcome's is no sample)
    int32_t lead_adjust;     ///< ticks added to the lead by the margin steering
    int32_t margin_low_q8;   ///< lowest margin of the current window of reports
    uint32_t margin_reports; ///< reports in the current window
    uint32_t hold_until;     ///< margins before the ack passes this are stale
    cl_light_stats stats;
    sim_input ring[CL_LIGHT_RING];
    net_full_part part; ///< scratch for decoding full-state parts
    uint8_t packet[NET_MTU];
} cl_light;

/// A light client with `identity` (the server's, or cl_client_identity of a
/// client set up like it); `ticks_per_packet` 1..8 and `redundancy_packets`
/// >= 1 as in cl_config (the commands per packet are capped at
/// NET_MAX_INPUT_COMMANDS and CL_LIGHT_RING / 2).
void cl_light_init(cl_light *l, const net_sim_identity *identity, uint32_t ticks_per_packet,
                   uint32_t redundancy_packets);
/// Send the hello (once the host reports NET_EVENT_CONNECT).
void cl_light_hello(cl_light *l, net_host *host, uint32_t now_ms);
/// Handle one event: the welcome starts play at the tick after the server's,
/// a refusal or a disconnect ends it, snapshots move the acknowledgement.
void cl_light_handle(cl_light *l, const net_event *event, uint32_t now_ms);
/// Make no commands for ticks before `tick` (the next one is for `tick`).
void cl_light_skip_to(cl_light *l, uint32_t tick);
/// The newest tick the client should hold a command for at `now_ms`: the
/// server's estimated tick plus the lead. A client that fell more than
/// NET_MAX_SNAPSHOT_TICKS behind it skips the ticks in between.
uint32_t cl_light_target_tick(cl_light *l, uint32_t now_ms);
/// Store `command` as the one for next_tick (its tick field is set), advance.
void cl_light_command(cl_light *l, const sim_input *command);
/// Send an input packet when ticks_per_packet new commands are waiting (or
/// none was sent yet): the newest commands, as many as `repeat`.
void cl_light_send(cl_light *l, net_host *host, uint32_t now_ms);

#ifdef __cplusplus
}
#endif

#endif
