// keel: recording a client: every call into the client library that decides
// its results, so that cl_replay.h can run the same calls offline and check
// that they reach the same confirmed states. MIT licence, see LICENSE.
//
// The wrappers call the client library and record the call: its clock value,
// the event with the packet's bytes, the command, and what predict and
// take_catch_up returned. After each call whose result changed the confirmed
// tick, a REC_CLIENT_CONFIRMED record holds that tick and the hash of the
// confirmed scene (sim_scene_hash): what the server's recording holds for the
// same tick.
//
// Every call into the library that changes it must go through a wrapper
// while recording (the queries -- status, ticks, scenes, stats -- change
// nothing and need none). With `rec` NULL a wrapper is the plain call, so a
// game can keep one code path.
//
// The header names the character the client played, which the welcome only
// tells after a few calls: the records until then (a handful: the hello, the
// connection, the welcome) are held in memory and the file is written from
// the moment the character is known (or the client was refused, or closes).
// The file is created at cl_record_open, so a path that cannot be written
// fails there.
#ifndef KEEL_CL_RECORD_H
#define KEEL_CL_RECORD_H

#include <keel/cl_client.h>
#include <keel/rec.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cl_record cl_record;

/// A header for recording `cl`: kind REC_KIND_CLIENT, its settings and their
/// digest, the level's digest (level.kind REC_LEVEL_BUILTIN: set kind, path,
/// scale and up axis for an OBJ or generated level), the platforms its
/// scenes hold, its prediction cap, source "keel-client"; the rest as
/// rec_default_header.
rec_header cl_record_default_header(const cl_client *cl);

/// Start recording to `path` (created now). `header->client_character` is
/// filled in when the character is known. NULL with *err on failure.
cl_record *cl_record_open(const char *path, const rec_header *header, const rec_writer_config *config, rec_error *err);

/// The client library's calls, recorded (plain calls when `rec` is NULL).
void cl_record_hello(cl_record *rec, cl_client *cl, uint32_t now_ms);
void cl_record_handle(cl_record *rec, cl_client *cl, const net_event *event, uint32_t now_ms);
bool cl_record_predict(cl_record *rec, cl_client *cl, const sim_input *command, uint32_t now_ms);
/// cl_client_predict_game, recorded: the game command goes into the record
/// packed (sim_game_pack_command; NULL: none). cl_record_predict is this
/// with NULL.
bool cl_record_predict_game(cl_record *rec, cl_client *cl, const sim_input *command, const void *game_command,
                            uint32_t now_ms);
uint32_t cl_record_take_catch_up(cl_record *rec, cl_client *cl);

/// False once the recording has failed (the writer fell behind, a write
/// failed); the client carries on unrecorded, cl_record_close says why.
bool cl_record_ok(const cl_record *rec);
/// Records written so far (held ones included).
uint64_t cl_record_count(const cl_record *rec);

/// Finish the file (ENDR) and free the recorder. False with *err when
/// anything failed on the way.
bool cl_record_close(cl_record *rec, rec_error *err);

#ifdef __cplusplus
}
#endif

#endif
