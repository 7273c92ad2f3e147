// keel-replay: declarations shared by the tool's files. MIT licence, see LICENSE.
#ifndef KEEL_REPLAY_TOOL_H
#define KEEL_REPLAY_TOOL_H

#include <stdbool.h>
#include <stdio.h>

#include <keel/rec.h>
#include <keel/rec_verify.h>
#include <keel/sim_level.h>
#include <keel/sim_world.h>

/// A level and its world, rebuilt from a recording's level reference.
typedef struct replay_level {
    sim_level level;
    sim_map map; ///< a .map level's entities (empty for others; keel-play draws them)
    sim_world *world;
    char path[4200]; ///< the file loaded (OBJ or .map), or "builtin" / "generated"
} replay_level;

/// Rebuild the level a header names and check its digest. `override`
/// (--level), when given, is the only file tried: one that cannot be read or
/// has another digest is an error naming the flag (and both digests); "builtin"
/// for a recording of the built-in level. Otherwise OBJ files are looked
/// for at the recorded path, then $KEEL_LEVELS_DIR/<basename>; the first one
/// found whose digest matches is used. REC_EXIT_MATCH (0) on success; REC_EXIT_BAD_FILE with a
/// message on stderr when no matching level is found (a different level is
/// refused: it would re-simulate something else).
/// With `missing` given, an OBJ level found nowhere is not an error: it
/// returns REC_EXIT_MATCH with *missing set and no world (diff goes on
/// without re-simulating).
int replay_level_load(const char *file, const rec_header *h, const char *override, replay_level *out, bool *missing);
void replay_level_free(replay_level *l);

/// The program named at the start of the messages above and below
/// ("keel-replay"; keel-play sets its own name).
extern const char *replay_program;

/// Print "PROGRAM: FILE: offset N (chunk XXXX): message" on stderr.
void replay_print_error(const char *file, const rec_error *err);

/// Open a recording (rec_file_open); NULL with the reason on stderr (a file
/// that cannot be opened: strerror's words).
rec_file *replay_open(const char *path);

/// `info`: the header and the counts, as text or JSON.
int replay_info(const char *file, rec_file *f, bool json);

/// Client recordings (REC_KIND_CLIENT): verify re-runs the client library on
/// the recorded calls; diff compares a client's confirmed hashes with a
/// server recording's world hashes. (info reads them like any recording.)
int replay_client_verify(const char *file, rec_file *f, const char *level_override, bool json);
int replay_client_diff(const char *client_name, rec_file *client, const char *server_name, rec_file *server, bool json);

#endif
