// keel-play: watch mode, `keel-play --replay FILE`. MIT licence, see LICENSE.
//
// Opens a scene recording (keel-server, keel-sim) as keel-replay does -- the
// same reader, level rebuilding and exit codes -- and plays it in the
// viewer loop (watch.c).
#include "kp.h"
#include "watch.h"

int kp_replay_run(kp_app *app, const kp_options *opt)
{
    kp_run run;
    int rc = kp_run_open(&run, opt->files[0], opt->level, NULL, NULL, opt->game);
    if (rc != 0)
        return rc;
    rc = kp_run_check_follow(&run, opt->follow);
    if (rc == 0)
        rc = kp_watch_loop(app, opt, &run, NULL);
    kp_run_close(&run);
    return rc;
}
