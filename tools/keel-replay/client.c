// keel-replay: client recordings. MIT licence, see LICENSE.
//
// A client recording (REC_KIND_CLIENT) holds the calls made into the client
// library, not scene ticks: verify re-runs the client library on them
// (cl_replay_verify), and diff compares its confirmed hashes with a server's
// recording of the same session (cl_replay_compare_server).
#include "replay.h"

#include <inttypes.h>
#include <string.h>

#include <keel/cl_replay.h>

static void print_result(const char *file, int rc, const rec_divergence *div, bool json, const char *what,
                         uint64_t count)
{
    if (json) {
        printf("{\"result\":\"%s\",\"kind\":\"client\",\"%s\":%" PRIu64, rc == REC_EXIT_MATCH ? "match" : "diverged",
               what, count);
        if (rc == REC_EXIT_DIVERGED) {
            printf(",\"tick\":%u,\"detail\":\"", (unsigned)div->tick);
            for (const char *c = div->detail; *c; c++) {
                if (*c == '"' || *c == '\\')
                    putchar('\\');
                putchar(*c >= 32 ? *c : ' ');
            }
            putchar('"');
        }
        puts("}");
    } else if (rc == REC_EXIT_MATCH) {
        printf("keel-replay: %s: match: %" PRIu64 " %s\n", file, count, what);
    } else {
        printf("keel-replay: %s: diverged at tick %u: %s\n", file, (unsigned)div->tick, div->detail);
    }
}

int replay_client_verify(const char *file, rec_file *f, const char *level_override, bool json)
{
    replay_level lv;
    int rc = replay_level_load(file, rec_file_header(f), level_override, &lv, NULL);
    if (rc != REC_EXIT_MATCH)
        return rc;
    rec_divergence div;
    rec_error err;
    memset(&div, 0, sizeof div);
    memset(&err, 0, sizeof err);
    cl_replay_stats st;
    memset(&st, 0, sizeof st);
    rc = cl_replay_verify_stats(f, lv.world, &lv.level, &div, &st, &err);
    if (rc == REC_EXIT_BAD_FILE)
        replay_print_error(file, &err);
    else
        print_result(file, rc, &div, json, "confirmed ticks reproduced by the client library", st.confirmed);
    replay_level_free(&lv);
    return rc;
}

int replay_client_diff(const char *client_name, rec_file *client, const char *server_name, rec_file *server, bool json)
{
    if (rec_file_header(server)->kind == REC_KIND_CLIENT) {
        fprintf(stderr, "keel-replay: diff of two client recordings: compare each with the server's recording\n");
        return REC_EXIT_USAGE;
    }
    rec_divergence div;
    rec_error err;
    memset(&div, 0, sizeof div);
    memset(&err, 0, sizeof err);
    uint64_t compared = 0;
    int rc = cl_replay_compare_server(client, server, &compared, &div, &err);
    if (rc == REC_EXIT_BAD_FILE) {
        replay_print_error(client_name, &err);
        return rc;
    }
    char what[600];
    snprintf(what, sizeof what, "confirmed hashes equal to %.500s's world hashes", server_name);
    print_result(client_name, rc, &div, json, json ? "compared" : what, compared);
    return rc;
}
