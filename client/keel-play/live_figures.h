// keel-play live mode: the figures of a run -- per-frame times, work and draw
// calls, and how the player's own drawn character moved -- for the exit
// summary and the benchmark. MIT licence, see LICENSE.
//
// Invariants:
// - Per-frame figures are kept for the newest KP_FIG_FRAMES frames in fixed
//   rings (no allocation per frame); medians and 99th percentiles are taken
//   over those at the end.
// - The pop of a frame is how far the own character's DRAWN position moved
//   beyond the motion of its prediction, both measured between this frame
//   and the previous one on the prediction as it stands now (the previous
//   frame's tick and alpha re-evaluated with cl_client_predicted_at, so a
//   rollback between the two frames is not counted as motion): with no
//   correction it is 0; with one, it is what the smoothing let through. A
//   frame whose pose snapped (spawn, teleport, a correction beyond the snap
//   distance) is counted in snaps instead, and a frame whose previous tick
//   is no longer kept is not measured. The bound a frame is judged by is
//   cl_smooth.h's: snap_distance * (1 - 2^(-dt / half_life)), the most the
//   decay of the largest offset moves the drawing in a frame of dt seconds.
#ifndef KP_LIVE_FIGURES_H
#define KP_LIVE_FIGURES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <keel/cl_smooth.h>

#define KP_FIG_FRAMES 65536u

typedef struct kp_figures {
    float frame_ms[KP_FIG_FRAMES], work_ms[KP_FIG_FRAMES];
    uint32_t draw_calls[KP_FIG_FRAMES];
    uint64_t frames; ///< frames recorded (the rings hold the newest KP_FIG_FRAMES)
    // The own character's drawing.
    bool have_prev;
    uint32_t prev_tick;
    float prev_alpha;
    float prev_drawn[3];
    float first_drawn[3];
    bool have_first;
    double distance_m; ///< path length of the drawn position (snaps left out)
    // Each figure with its own frame's: the largest pop and the bound of
    // the frame it was in; the largest pop/bound ratio and the pop and bound
    // of the frame it was in (often another frame: a long frame has a
    // larger bound).
    double largest_pop_m;     ///< the largest pop
    double pop_bound_m;       ///< the bound of largest_pop_m's frame
    double largest_pop_ratio; ///< the largest pop / bound of a frame
    double ratio_pop_m;       ///< the pop of largest_pop_ratio's frame
    double ratio_bound_m;     ///< the bound of largest_pop_ratio's frame
    uint64_t pop_frames, pop_unmeasured, snaps;
    float last_drawn[3];
} kp_figures;

void kp_figures_init(kp_figures *f);
/// One frame's times (milliseconds) and draw calls.
void kp_figures_frame(kp_figures *f, double frame_ms, double work_ms, uint32_t draw_calls);
/// The own character's pose drawn this frame (after cl_smooth_frame with
/// dt_s and alpha), measured against the client's prediction.
void kp_figures_pose(kp_figures *f, const cl_client *cl, const cl_smooth *smooth, const cl_pose *pose, float dt_s,
                     float alpha);
/// Count one measured frame: its pop and its bound (metres).
void kp_figures_pop(kp_figures *f, double pop_m, double bound_m);
/// Forget the previous pose (the own character changed, or none this frame).
void kp_figures_break(kp_figures *f);
/// The summary's figure fields, each ",\"name\":value".
void kp_figures_print(const kp_figures *f, FILE *out);

#endif
