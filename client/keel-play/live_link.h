// keel-play live mode: the connection to a keel-server -- an ENet host and a
// cl_client driven exactly as keel-client drives its bots. MIT licence, see
// LICENSE.
//
// Invariants:
// - The simulation advances only through kp_link_pump: one cl_client_predict
//   per tick of the client's clock (cl_client_tick_us, which keeps the input
//   margin near a tick), plus the ticks cl_client_take_catch_up asks for.
//   The display's frame rate never changes how many ticks are predicted.
// - Every call into cl_client that can roll back and re-simulate
//   (cl_client_handle, cl_client_take_catch_up, cl_client_predict) is timed
//   on the monotonic clock; a call during which resimulated_ticks grew counts
//   as rollback work, the rest of the predictions as prediction work. The
//   figures are for display and the summary only.
// - The smoothing (when given) sees every state the prediction shows: it is
//   updated after the events are handled and after each predicted tick, so
//   a rollback is absorbed as a change of the ticks it already holds.
// - The link ends in exactly one way, named by kp_link_end_name: refused
//   (cl_client_refusal says why), refused by a secure server's handshake
//   (net_host_handshake_refusal says why), unreachable / timed out / closed
//   by the server (the host's disconnect reason), not playing within the connect
//   timeout (give-up: the program never waits longer than that), or left.
//   kp_link_why holds a sentence for the screen.
#ifndef KP_LIVE_LINK_H
#define KP_LIVE_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/cl_client.h>
#include <keel/cl_record.h>

typedef enum kp_link_state {
    KP_LINK_CONNECTING = 0, ///< before the first full state
    KP_LINK_PLAYING = 1,
    KP_LINK_ENDED = 2, ///< refused, lost, gave up, or left (kp_link_end_name)
} kp_link_state;

typedef struct kp_link {
    net_host *host;
    cl_client *cl;
    cl_record *rec; ///< --record: every call into the client library (NULL: none)
    /// The display smoothing, updated by kp_link_pump after the events and
    /// after each predicted tick (NULL: none); it only reads the client.
    struct cl_smooth *smooth;
    char server[64];
    uint16_t port;
    bool token; ///< joined with a connect token (a secure server's client)
    uint32_t connect_timeout_ms;
    uint32_t timeout_ms; ///< the host's silence timeout (net_host_config)
    uint64_t start_us, connected_us, playing_us, ended_us;
    uint64_t next_tick_us;
    bool clock_started;
    kp_link_state state;
    uint8_t end_reason; ///< the host's net_disconnect_reason, if it reported one
    const char *end;    ///< the summary's "end" once ended
    char why[512];      ///< the reason on screen
    /// The level file the player loaded (as given to --level), named when the
    /// server refuses it for another level; set after kp_link_open (NULL: none).
    const char *level;
    bool left; ///< kp_link_leave ran
    /// Work in this pump (microseconds) and ticks predicted by it.
    uint64_t predict_us, rollback_us, handle_us, smooth_us;
    uint32_t predicted;
    uint64_t played; ///< commands predicted (ticks played) in all
} kp_link;

/// Connect to server:port, with `connect_token` (NET_TOKEN_BYTES; the host
/// keeps its own copy) to a secure server, NULL to an insecure one. False
/// (with `why` filled) when the host cannot be made (a bad address); true
/// otherwise -- an unreachable server shows up later as the host's
/// disconnect or the give-up. `timeout_ms`: net_host_config's (the silence
/// that ends the connection).
bool kp_link_open(kp_link *l, const char *server, uint16_t port, const uint8_t *connect_token, const sim_world *world,
                  const sim_level *level, const sim_move_settings *settings, const cl_config *config,
                  uint32_t connect_timeout_ms, uint32_t timeout_ms);
/// Record the client's calls to `path` (as keel-client --record; the level
/// as given to the program). False with `why` filled when the file cannot be
/// created.
bool kp_link_record(kp_link *l, const char *path, const char *level, const char *scale, char up);
/// Close the recording, if any (its result on stderr); false when it failed.
bool kp_link_end_record(kp_link *l);
void kp_link_close(kp_link *l);

/// Handle the host's events and predict the ticks that are due at `now_us`,
/// each with the command `command` gives (called with the tick). With a
/// game, `command` also fills the game's command struct (`game_command`,
/// SIM_GAME_COMMAND_MAX_BYTES, zeroed before the call; NULL without a game).
/// Returns the state after it.
typedef sim_input (*kp_link_command_fn)(void *user, uint32_t tick, void *game_command);
kp_link_state kp_link_pump(kp_link *l, uint64_t now_us, kp_link_command_fn command, void *user);

/// Leave the server (bounded by NET_LEAVE_MAX_MS) unless the link already ended.
void kp_link_leave(kp_link *l);

/// Time since the newest predicted tick, as a fraction of a tick in [0, 1]
/// (the interpolation alpha of the frame drawn at `now_us`).
double kp_link_alpha(const kp_link *l, uint64_t now_us);

/// The status text while connecting ("connecting to ...", "syncing ...").
const char *kp_link_status_text(const kp_link *l, char *buf, size_t size);

#endif
