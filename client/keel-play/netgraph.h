// keel-play live mode: the net graph's figures (Source's net_graph 3 and
// more). MIT licence, see LICENSE.
//
// Invariants:
// - It only reads: cl_stats, net_host_stats and the frame and work times
//   keel-play measured; nothing here feeds back into the simulation.
// - History is kept in fixed slots of KP_NG_SLOT_MS each (KP_NG_SLOTS of
//   them: the strip's last seconds), written in place: no allocation per
//   frame. A slot holds the mispredictions detected while it was current,
//   own and remote, by cause, and the frame and work times of its frames.
// - Rates "per second" are sums over the newest second of slots (a slot not
//   finished yet counts for the part of it that passed).
// - The flash: when an own-character misprediction is detected, its cause,
//   its tick and its first differing field are kept for KP_NG_FLASH_MS; the
//   character and the strip are drawn in the cause's colour meanwhile.
#ifndef KP_NETGRAPH_H
#define KP_NETGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/cl_client.h>

#define KP_NG_SLOT_MS 100u
#define KP_NG_SLOTS 60u // 6 seconds
#define KP_NG_FLASH_MS 400u

typedef struct kp_ng_slot {
    uint64_t start_us;
    uint32_t own[CL_CAUSE_COUNT], remote[CL_CAUSE_COUNT];
    uint32_t frames;
    float frame_ms_max;
    float work_ms_max;                  ///< prediction + rollback + smoothing of the worst frame
    uint32_t snaps;                     ///< corrections the smoothing snapped instead of easing
    uint64_t wire_up, wire_down;        ///< bytes on the wire
    uint64_t snapshots, snapshots_lost; ///< applied, and lost (gaps in the server's numbering)
} kp_ng_slot;

typedef struct kp_netgraph {
    kp_ng_slot slots[KP_NG_SLOTS];
    uint32_t head; ///< the current slot
    bool started;
    cl_stats last; ///< at the previous update, for the differences
    net_host_stats last_net;
    uint64_t last_us;
    // Rates over the newest second, updated once per slot.
    double up_Bps, down_Bps, loss_pct;
    double own_per_s[CL_CAUSE_COUNT], remote_per_s[CL_CAUSE_COUNT];
    double fps, frame_ms, frame_ms_max;
    // This frame's work, milliseconds.
    double predict_ms, rollback_ms, smooth_ms, handle_ms;
    // The newest own misprediction (the flash), 0 when none yet.
    uint64_t flash_until_us;
    cl_cause flash_cause;
    uint32_t flash_tick;
    const char *flash_field;
} kp_netgraph;

void kp_netgraph_init(kp_netgraph *g);
/// One frame: the client's stats and host stats now, the frame's duration and
/// work (milliseconds), snaps the smoothing made this frame.
void kp_netgraph_frame(kp_netgraph *g, uint64_t now_us, const cl_stats *s, const net_host_stats *ns, double frame_ms,
                       double predict_ms, double rollback_ms, double smooth_ms, double handle_ms, uint32_t snaps);
/// Whether an own misprediction flashes at `now_us` (its cause in *cause).
bool kp_netgraph_flashing(const kp_netgraph *g, uint64_t now_us, cl_cause *cause);

/// A cause's colour (RGB, 0..1) in the strip and the flash.
void kp_netgraph_cause_color(cl_cause cause, float rgb[3]);

/// The client's figures the graph shows besides its own.
typedef struct kp_ng_client {
    const cl_stats *stats;
    uint32_t predicted, confirmed;
    uint32_t target_lead; ///< kp_aimed_lead: the lead the client aims at
    double margin_target; ///< cl_client_margin_target
    uint32_t tick_rate;
} kp_ng_client;

struct cl_client;
/// The lead the client aims at: cl_client_target_lead (from the round trip,
/// one tick of input margin included) plus the margin it keeps beyond that
/// tick (cl_client_margin_target - 1: three input packets on a lossy link).
uint32_t kp_aimed_lead(const struct cl_client *cl);

struct kp_overlay;
/// Draw the graph in the bottom right corner of a width x height window.
/// The region it covers goes to rect (x, y, w, h).
void kp_netgraph_draw(const kp_netgraph *g, struct kp_overlay *o, int width, int height, const kp_ng_client *c,
                      uint64_t now_us, float rect[4]);

#endif
