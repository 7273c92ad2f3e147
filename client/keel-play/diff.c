// keel-play: diff mode (placeholder). MIT licence, see LICENSE.
#include <stdio.h>

#include "kp.h"

int kp_diff_run(kp_app *app, const kp_options *opt)
{
    (void)app;
    (void)opt;
    fputs("keel-play: diff mode is not written yet\n", stderr);
    return KP_EXIT_FAILURE;
}
