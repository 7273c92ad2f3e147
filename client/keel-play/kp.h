// keel-play: the options of every mode and the modes' entry points. MIT
// licence, see LICENSE.
//
// keel-play is a viewer: it reads scenes (recordings, or a live client's
// prediction) and draws them with OpenGL 3.3. It never writes a scene that
// matters, so floats are fine here. main.c parses the options of all modes
// into one kp_options, opens the window (app.h) and calls one mode:
//   watch  kp_replay_run  --replay FILE     (replay.c)
//   diff   kp_diff_run    --diff A B        (diff.c)
//   live   kp_live_run    --connect ...     (live.c, or live_stub.c)
// Every mode prints one JSON summary line on stdout at exit.
#ifndef KEEL_PLAY_KP_H
#define KEEL_PLAY_KP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct kp_app kp_app;

typedef enum kp_mode {
    KP_MODE_NONE = 0,
    KP_MODE_REPLAY = 1,
    KP_MODE_DIFF = 2,
    KP_MODE_LIVE = 3,
} kp_mode;

/// Exit codes. A bad recording gives keel-replay's own code (REC_EXIT_BAD_FILE, 3).
enum {
    KP_EXIT_OK = 0,
    KP_EXIT_FAILURE = 1, ///< no window, a live connection that failed, a screenshot not written
    KP_EXIT_USAGE = 2,
    KP_EXIT_BAD_FILE = 3, ///< = REC_EXIT_BAD_FILE
};

#define KP_DEFAULT_PORT 27900u
#define KP_DEFAULT_WIDTH 1280
#define KP_DEFAULT_HEIGHT 720

typedef struct kp_options {
    kp_mode mode;
    // ---- window (all modes) ----
    int width, height; ///< --size WxH (default 1280x720)
    bool fullscreen;   ///< --fullscreen (F11 toggles)
    bool vsync;        ///< on unless --no-vsync
    // ---- capture (all modes) ----
    const char *screenshot; ///< --screenshot FILE.png: written after `frames` frames, then quit
    uint32_t frames;        ///< --frames N: quit after N frames (0: run until closed; with
                            ///< --screenshot and no --frames: 3)
    bool has_at_tick;
    uint32_t at_tick; ///< --at-tick N: replay/diff start paused at tick N; live: the
                      ///< screenshot waits until the predicted tick reaches N
    bool has_camera;  ///< --camera X,Y,Z,YAW,PITCH: a fixed free camera
    float camera[5];  ///< eye in metres, yaw and pitch in degrees (yaw 0 looks
                      ///< along -z, 90 along -x; pitch > 0 looks up)
    // ---- watch and diff ----
    const char *files[2]; ///< --replay FILE; --diff A B
    const char *level;    ///< --level PATH: the OBJ to re-simulate on (as keel-replay)
    float speed;          ///< --speed X: initial playback speed (1/4..8, default 1)
    bool paused;          ///< --paused: start paused
    uint32_t follow;      ///< --follow ID: follow this character (0: the first)
    // ---- live (as keel-client: the level and world must match the server's) ----
    char host[256]; ///< --connect HOST:PORT (default 127.0.0.1:27900)
    uint32_t port;
    const char *name;            ///< --name N (default "player")
    float sensitivity;           ///< --sensitivity X: degrees per mouse count (default 0.15)
    bool platforms;              ///< --platforms (as keel-server --platforms)
    uint32_t rate;               ///< --rate N: the server's tick rate (default 64)
    uint32_t respawn_depth_m;    ///< --respawn-depth M: the server's (default KEEL_APP_RESPAWN_DEPTH_M)
    const char *live_level;      ///< --level builtin|PATH in live mode (default builtin)
    const char *scale;           ///< --scale S: OBJ metres per unit (default 0.12)
    char up;                     ///< --up y|z (default y)
    uint64_t connect_timeout_ms; ///< --connect-timeout S (default 10 s)
    uint32_t timeout_ms;         ///< --timeout S: net_host_config's (default NET_HOST_DEFAULT_TIMEOUT_MS)
    uint32_t ticks_per_packet;   ///< --ticks-per-packet N (default 2)
    const char *record;          ///< --record FILE: record the client (cl_record)
    bool third_person;           ///< --chase: a chase camera instead of first person
    /// --game: the game of the recordings (watch, diff) or the server (live)
    /// (keel/sim_game.h; NULL: none). Live, the mouse buttons set the
    /// command's BOOL fields (game_panel.h); a HUD for the game when
    /// keel-play has one (game_hud.h), the schema's fields otherwise.
    const struct sim_game *game;
    const char *game_spec;  ///< --game NAME|PATH (app/keel_game.h), loaded by main into `game`
    uint32_t aim_at;        ///< --aim-at ID: live, the view keeps turning to character ID (scripts, tests)
    uint64_t quit_after_ms; ///< --quit-after S: leave S seconds after play began (0: never)
    // ---- live, secure mode (as keel-client; docs/security.md) ----
    const char *token_file; ///< --token FILE: join with this connect token (keel-token issue)
    const char *token_key;  ///< --token-key FILE: issue a token with this backend key
    char token_server[32];  ///< --token-server HOST:PORT, resolved ("": the address connected to)
    uint64_t protocol_id;   ///< --protocol-id N: with --token-key, the token's protocol id (default 0)
    uint32_t client_id;     ///< --client-id N: with --token-key, the token's client id (default 1)
    bool has_client_id, has_protocol_id;
} kp_options;

/// Defaults of every field (the values above).
void kp_options_defaults(kp_options *o);

/// Parse the command line. 0 to run; -1 after --help (exit 0); otherwise an
/// exit code (KP_EXIT_USAGE after printing the problem and the usage).
int kp_options_parse(int argc, char **argv, kp_options *o);

/// The modes. Each runs its loop on the open app and returns the exit code;
/// each prints its JSON summary line on stdout before returning.
int kp_replay_run(kp_app *app, const kp_options *opt);
int kp_diff_run(kp_app *app, const kp_options *opt);
int kp_live_run(kp_app *app, const kp_options *opt);

/// How many frames a capture run lasts: opt->frames, or 3 with --screenshot
/// and no --frames, or 0 (until closed).
uint32_t kp_frames_limit(const kp_options *opt);

#endif
