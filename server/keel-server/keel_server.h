// keel-server: what its source files share. MIT licence, see LICENSE.
#ifndef KEEL_SERVER_PROGRAM_H
#define KEEL_SERVER_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/rec.h>
#include <keel/sv_server.h>

typedef struct options {
    const char *bind, *level, *scale;
    char up;
    uint32_t port, rate, snapshot_ticks, max_clients, duration_s, stats_s, per_address;
    bool stats_json, platforms, quiet;
    uint32_t ticks; ///< stop after this many ticks (0: no limit)
    // recording
    const char *record;
    uint32_t keyframe_interval;
    bool record_full, no_compress;
    // the virtual session
    uint32_t virtual_bots;
    uint32_t full_clients; ///< of the virtual bots, how many run the client library
    uint32_t seed;
    bool churn;
    // secure mode (docs/security.md, "The handshake")
    const char *key_file;       ///< --key: the backend key; NULL: insecure
    const char *public_address; ///< --public: how clients reach this server
    uint64_t protocol_id;       ///< --protocol-id
    bool insecure;              ///< --insecure (the default for now, said explicitly)
} options;

/// The recording of a server through its tick observer.
typedef struct recorder {
    const char *path;
    rec_writer *w;
    bool failed;   ///< reported once on stderr; the server serves on
    uint64_t ticks;
} recorder;

/// Open `o->record` (nothing when NULL) and attach the observer. Prints the
/// reason and returns false when the file cannot be opened.
bool recorder_start(recorder *r, const options *o, sv_server *sv);
/// Detach, finish the file (ENDR) and print where it went, the ticks and the
/// final hash. False when the recording failed at any point.
bool recorder_finish(recorder *r, sv_server *sv, FILE *text);

/// keel-server --virtual-bots: the session on a virtual clock (virtual.c).
int run_virtual(const options *o, const struct sim_world *world, const sim_level *level,
                const sim_move_settings *settings);

#endif
