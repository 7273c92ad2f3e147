// keel-play: the live mode's placeholder until live.c is built in. MIT
// licence, see LICENSE.
#include <stdio.h>

#include "kp.h"

int kp_live_run(kp_app *app, const kp_options *opt)
{
    (void)app;
    (void)opt;
    fputs("keel-play: live mode is not built\n", stderr);
    printf("{\"mode\":\"live\",\"error\":\"live mode is not built\"}\n");
    return KP_EXIT_FAILURE;
}
