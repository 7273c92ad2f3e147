// keel: replaying a client recording (cl_record.h) offline, and comparing
// it with the server's recording. MIT licence, see LICENSE.
//
// verify: a client made as the recording's header says (settings, the
// prediction cap, the platforms), on a host connected to nobody
// (net_host_null), is given the recorded calls in order -- the hello, every
// event with its packet, every command, every catch-up -- and must return
// what the recorded client returned and reach the same confirmed ticks with
// the same hashes. This is the client's own determinism check, per build:
// rollbacks, re-simulation and the snapshot decoding all run again.
//
// compare_server: a client's confirmed state at tick C is the server's state
// at C, so its recorded hash must equal the server recording's world hash
// after tick C - 1.
#ifndef KEEL_CL_REPLAY_H
#define KEEL_CL_REPLAY_H

#include <keel/cl_client.h>
#include <keel/rec_verify.h>
#include <keel/sim_level.h>
#include <keel/sim_world.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cl_replay_stats {
    uint64_t records;   ///< calls replayed (CONFIRMED records not counted)
    uint64_t confirmed; ///< confirmed ticks checked
    uint64_t predicted; ///< predict calls that advanced
} cl_replay_stats;

/// Replay client recording `f` on `world`, built from `level` (the one the
/// header names: its digest is checked). REC_EXIT_MATCH; REC_EXIT_DIVERGED
/// with *div filled (the first record that differs: the confirmed tick with
/// the expected and the replayed hash, or a call's return value);
/// REC_EXIT_BAD_FILE with *err (not a client recording, another level or
/// settings, a malformed record). div->tick is the confirmed tick that
/// differs (a scene tick: the state after tick - 1), or for a call's return
/// value the tick being predicted. `stats` may be NULL.
int cl_replay_verify(rec_file *f, const sim_world *world, const sim_level *level, rec_divergence *div, rec_error *err);
int cl_replay_verify_stats(rec_file *f, const sim_world *world, const sim_level *level, rec_divergence *div,
                           cl_replay_stats *stats, rec_error *err);

/// The client a client recording's header describes (settings, prediction
/// cap, platforms) on `host` (net_host_null() for a replay), for `world`
/// built from `level` (its digest is checked). NULL with *err when the
/// header asks for a client this library cannot make.
cl_client *cl_replay_client_create(const rec_header *h, const sim_world *world, const sim_level *level, net_host *host,
                                   rec_error *err);

/// Make one recorded call on the client (hello, an event with its packet, a
/// predict, a catch-up; a CONFIRMED record is an expected output and does
/// nothing). *returned (when given) is what the call returned: predict 0 or
/// 1, catch-up its ticks, 0 otherwise. False with *err for a record of an
/// unknown kind or event type. verify is this call in a loop, with checks.
bool cl_replay_apply(cl_client *cl, const rec_client_record *rec, uint32_t *returned, rec_error *err);

/// Every confirmed hash in `client` (a client recording) against the world
/// hash `server` (a scene recording of the same simulation) holds for that
/// tick; ticks the server recording does not cover are skipped. *compared
/// (may be NULL) receives how many were compared. REC_EXIT_MATCH,
/// REC_EXIT_DIVERGED (*div: the first tick whose hashes differ) or
/// REC_EXIT_BAD_FILE (*err: not a client and a scene recording, different
/// settings or level, a malformed file).
int cl_replay_compare_server(rec_file *client, rec_file *server, uint64_t *compared, rec_divergence *div,
                             rec_error *err);

#ifdef __cplusplus
}
#endif

#endif
