// keel-replay: client recordings. MIT licence, see LICENSE.
//
// A client recording (REC_KIND_CLIENT) holds the calls made into the client
// library, not scene ticks. Every subcommand that meets one comes here.
#include "replay.h"

int replay_client(const char *command, const char *file, rec_file *f)
{
    (void)command;
    (void)f;
    fprintf(stderr, "keel-replay: %s: client recordings: not supported by this build yet\n", file);
    return REC_EXIT_BAD_FILE;
}
