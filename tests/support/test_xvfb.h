// keel tests: a private X server (Xvfb) per test, for programs that open a
// window (keel-play), and finding helper programs (xdotool) on PATH. MIT
// licence, see LICENSE.
//
// Usage:
//   keel_test_xvfb x;
//   if (!keel_test_xvfb_start(&x, 1600, 1000)) cr_skip_test("%s", x.why);
//   setenv("DISPLAY", x.display, 1);   // the programs started now use it
//   ...
//   keel_test_xvfb_stop(&x);
// Xvfb picks a free display number itself (-displayfd), so tests running
// in parallel never race for one; it listens on no TCP port (-nolisten tcp)
// and ends with the test process if that dies (PR_SET_PDEATHSIG).
#ifndef KEEL_TEST_XVFB_H
#define KEEL_TEST_XVFB_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct keel_test_xvfb {
    pid_t pid;
    int number;       ///< the display number
    char display[16]; ///< ":N", for DISPLAY
    char why[160];    ///< why it did not start (for cr_skip_test)
} keel_test_xvfb;

/// Start Xvfb with one screen of width x height x 24 bits and wait (at most
/// 10 s: a guard against a hang, not a speed check) until it accepts
/// connections. False with x->why filled when Xvfb is not installed or does
/// not start.
bool keel_test_xvfb_start(keel_test_xvfb *x, int width, int height);
/// Stop it (SIGTERM, then SIGKILL after 5 s) and wait for it.
void keel_test_xvfb_stop(keel_test_xvfb *x);

struct keel_test_proc;
/// For a test of keel-play in a window: skips the test (cr_skip_test) when
/// keel-play was not built, xdotool is not installed or Xvfb does not start;
/// otherwise *x runs, width x height.
void keel_test_play_need(keel_test_xvfb *x, int width, int height);
/// Starts keel-play (keel_test_proc_start) on x's display with Mesa's
/// software OpenGL, LeakSanitizer's check off for keel-play alone (Mesa's
/// llvmpipe keeps allocations to the end of the process); DISPLAY and
/// LIBGL_ALWAYS_SOFTWARE stay set for the programs the test starts later.
void keel_test_play_start(struct keel_test_proc *p, const keel_test_xvfb *x, const char *const *args);

/// The full path of `name` found on PATH, or NULL. The path is in one of
/// four static buffers that later calls reuse in turn.
const char *keel_test_which(const char *name);

#endif
