// keel-play: the viewer loop of watch and diff mode. MIT licence, see LICENSE.
//
// Plays run A (and, in diff mode, run B alongside at the same tick, drawn as
// translucent ghosts), with the controls of docs/keel-play.md: play/pause,
// speed, single ticks, a timeline with markers to seek on, following a
// character or a free-fly camera, help, screenshots. Prints the JSON summary
// line at exit.
#ifndef KEEL_PLAY_WATCH_H
#define KEEL_PLAY_WATCH_H

#include "app.h"
#include "playback.h"

/// What diff mode adds: the second run, and where the runs part.
typedef struct kp_watch_diff {
    kp_run *b;
    bool found;
    uint32_t tick;      ///< the first divergent tick (the states after it differ)
    uint32_t show_tick; ///< the tick the view starts at (tick + 1: the state after it)
    uint32_t character; ///< the character to look at (0: none)
    char kind[16];      ///< "state", "inputs", "events", "start"
    char line[600];     ///< the differing field and values, for the overlay
    char notes[512];    ///< rec_diff's notes on the headers ('\n'-separated), for the overlay
    uint32_t note_count;
} kp_watch_diff;

/// Run the loop until quit (window closed, Esc, --frames reached). Returns
/// the exit code (KP_EXIT_FAILURE when a screenshot could not be written or
/// the recording could not be re-simulated).
int kp_watch_loop(kp_app *app, const kp_options *opt, kp_run *a, const kp_watch_diff *diff);

#endif
