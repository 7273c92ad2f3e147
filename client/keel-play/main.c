// keel-play: watch recordings, compare two, play live. MIT licence, see LICENSE.
//
// Parses the options of every mode (kp.h), opens the window (app.h) and
// hands it to the mode. Bad flags print the usage and exit 2; a window that
// cannot be opened exits 1 with a message naming DISPLAY; a bad recording
// exits 3 as keel-replay does.
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/net_host.h>

#include "app.h"
#include "keel_addr.h"
#include "keel_app.h"
#include "keel_opt.h"
#include "keel_game.h"
#include "kp.h"
#include "replay.h" // keel-replay's replay_program

static void usage(FILE *f)
{
    fputs("usage: keel-play --replay FILE [options]\n"
          "       keel-play --diff A B [options]\n"
          "       keel-play --connect HOST:PORT [options]\n"
          "Draws keel scenes with OpenGL: a recording played back (watch), two recordings of\n"
          "one session over each other from their first divergent tick (diff), or a live\n"
          "client playing on a keel-server (live). Prints a JSON summary line at exit.\n" KEEL_OPT_SYNTAX "\n"
          "watch and diff:\n"
          "  --replay FILE         a recording (keel-server, keel-sim or keel-client --record)\n"
          "  --diff A B            two scene recordings: B drawn as ghosts over A\n"
          "  --level PATH          the OBJ or .map level to re-simulate on (otherwise the\n"
          "                        recorded path, then $KEEL_LEVELS_DIR/<file name>; as keel-replay)\n"
          "  --speed X             playback speed, 0.25 to 8 (default 1)\n"
          "  --paused              start paused\n"
          "  --follow ID           follow character ID (default: the first)\n"
          "the game (all modes):\n"
          "  --game NAME|PATH      the recording's or the server's game (docs/game.md): NAME linked\n"
          "                        into keel-play (tag, arena) or a PATH to a game library exporting\n"
          "                        keel_game_v1. Its fields are shown (G); live, the left and right\n"
          "                        mouse buttons set the command's first and second BOOL fields\n"
          "                        (arena: fire_rail, fire_rocket); arena has a HUD (docs/arena.md).\n"
          "                        A game that cannot be loaded: exit 6; not the recording's: exit 7\n"
          "live (the level and world options must match the server's, as keel-client's):\n"
          "  --connect HOST:PORT   the server: a host name or IPv4 address (default 127.0.0.1:27900)\n"
          "  --name N              the player's name (default player)\n"
          "  --sensitivity X       degrees per mouse count (default 0.15)\n"
          "  --platforms           the built-in level's elevator and shuttle (keel-server --platforms)\n"
          "  --rate N              the server's tick rate (default 64)\n"
          "  --respawn-depth M     the server's --respawn-depth (default 16)\n"
          "  --level builtin|PATH  the server's level (default builtin; an OBJ file or a .map)\n"
          "  --scale S             OBJ metres per unit (default 0.12)\n"
          "  --up y|z              OBJ up axis (default y)\n"
          "  --connect-timeout S   give up when not playing after S seconds (default 10)\n"
          "  --timeout S           the connection ends after S seconds in which nothing arrived from\n"
          "                        the server, 0.001..60 (default 10; a token's shorter timeout wins)\n"
          "  --ticks-per-packet N  an input packet every N ticks, 1..8 (default 2)\n"
          "  --record FILE         record the client (keel-replay verify replays it)\n"
          "  --aim-at ID           the view keeps turning to character ID (scripts, tests; not the mouse)\n"
          "  --chase               a chase camera instead of first person\n"
          "  --quit-after S        leave the server S seconds after play began (scripts, tests)\n"
          "live, secure mode (a keel-server --key; docs/security.md):\n"
          "  --token FILE          join with this connect token (keel-token issue)\n"
          "  --token-key FILE      issue a token with this backend key (development, test rigs):\n"
          "                        for --connect's address, valid 300 s\n"
          "  --client-id N         with --token-key: the token's client id, 1..2^32-1 (default 1)\n"
          "  --protocol-id N       with --token-key: the token's protocol id (default 0)\n"
          "  --token-server HOST:PORT  with --token-key: the server's own address (its --public) for\n"
          "                        the token to list (default: --connect's); through a relay, NAT\n"
          "                        or port forward (docs/relay.md)\n"
          "window and capture (all modes):\n"
          "  --size WxH            window size in pixels (default 1280x720)\n"
          "  --fullscreen          start fullscreen (F11 toggles)\n"
          "  --no-vsync            do not wait for the display's refresh\n"
          "  --screenshot FILE     write the last frame as a PNG, then quit (after --frames\n"
          "                        frames, default 3)\n"
          "  --frames N            quit after N frames\n"
          "  --at-tick N           watch/diff: start paused at tick N; live: the screenshot\n"
          "                        waits for the predicted tick N\n"
          "  --camera X,Y,Z,YAW,PITCH  a fixed camera: eye in metres, yaw and pitch in degrees\n"
          "                        (yaw 0 looks along -z, 90 along -x; pitch > 0 looks up)\n"
          "  --help                this help\n"
          "\n"
          "exit codes: 0 done (the player left, or the server shut down); 1 no window (is DISPLAY set?),\n"
          "a failed connection or screenshot; 2 bad usage; 3 a bad recording (as keel-replay);\n"
          "6 --game cannot be loaded; 7 the recording's game is another (or none).\n",
          f);
}

// "keel-play: <what> <arg>" and the usage on stderr; the usage exit code.
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "keel-play: %s%s%s (keel-play --help lists the options)\n", what, arg ? " " : "", arg ? arg : "");
    return KP_EXIT_USAGE;
}

void kp_options_defaults(kp_options *o)
{
    memset(o, 0, sizeof *o);
    o->width = KP_DEFAULT_WIDTH;
    o->height = KP_DEFAULT_HEIGHT;
    o->vsync = true;
    o->speed = 1.0f;
    snprintf(o->host, sizeof o->host, "127.0.0.1");
    o->port = KP_DEFAULT_PORT;
    o->name = "player";
    o->sensitivity = 0.15f;
    o->rate = 64;
    o->respawn_depth_m = KEEL_APP_RESPAWN_DEPTH_M;
    o->live_level = "builtin";
    o->scale = "0.12";
    o->up = 'y';
    o->connect_timeout_ms = 10000;
    o->timeout_ms = NET_HOST_DEFAULT_TIMEOUT_MS;
    o->ticks_per_packet = 2;
    o->client_id = 1;
}

uint32_t kp_frames_limit(const kp_options *opt)
{
    if (opt->frames)
        return opt->frames;
    return opt->screenshot ? 3u : 0u;
}

static bool parse_float(const char *s, float lo, float hi, float *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static bool parse_size(const char *s, int *w, int *h)
{
    uint32_t a, b;
    const char *x = s ? strchr(s, 'x') : NULL;
    if (!x || x - s > 15)
        return false;
    char first[16];
    memcpy(first, s, (size_t)(x - s));
    first[x - s] = '\0';
    if (!keel_app_parse_u32(first, 64, 16384, &a) || !keel_app_parse_u32(x + 1, 64, 16384, &b))
        return false;
    *w = (int)a;
    *h = (int)b;
    return true;
}

static bool parse_camera(const char *s, float out[5])
{
    char buf[256];
    if (!s || strlen(s) >= sizeof buf)
        return false;
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == 5)
            return false;
        float lim = n < 3 ? 4096.0f : 360.0f;
        if (!parse_float(tok, -lim, lim, &out[n]))
            return false;
        n++;
    }
    return n == 5 && out[4] >= -90.0f && out[4] <= 90.0f;
}

// HOST or HOST:PORT, the host a name or an IPv4 address (keel_addr.h)
static bool parse_connect(keel_opt *p, const char *s, kp_options *o)
{
    char text[300], err[300];
    snprintf(text, sizeof text, strchr(s, ':') ? "%s" : "%s:%u", s, (unsigned)o->port);
    char ip[16];
    if (!keel_addr_resolve(text, 1, ip, sizeof ip, &o->port, err, sizeof err)) {
        keel_opt_fail(p, "%s", err);
        return false;
    }
    snprintf(o->host, sizeof o->host, "%s", ip);
    return true;
}

// --token-server HOST:PORT ([IPv6]:PORT as it is)
static bool parse_token_server(keel_opt *p, const char *s, kp_options *o)
{
    char ip[16], err[300];
    uint32_t port;
    if (s[0] == '[') {
        snprintf(o->token_server, sizeof o->token_server, "%s", s);
        return strlen(s) < sizeof o->token_server;
    }
    if (!keel_addr_resolve(s, 1, ip, sizeof ip, &port, err, sizeof err)) {
        keel_opt_fail(p, "%s", err);
        return false;
    }
    snprintf(o->token_server, sizeof o->token_server, "%s:%u", ip, (unsigned)port);
    return true;
}

// Options that take a value; the rest are flags.
static const char *const valued[] = {"--replay",
                                     "--level",
                                     "--speed",
                                     "--follow",
                                     "--connect",
                                     "--name",
                                     "--sensitivity",
                                     "--rate",
                                     "--respawn-depth",
                                     "--scale",
                                     "--up",
                                     "--connect-timeout",
                                     "--timeout",
                                     "--ticks-per-packet",
                                     "--record",
                                     "--game",
                                     "--aim-at",
                                     "--size",
                                     "--screenshot",
                                     "--frames",
                                     "--at-tick",
                                     "--camera",
                                     "--quit-after",
                                     "--token",
                                     "--token-key",
                                     "--client-id",
                                     "--protocol-id",
                                     "--token-server",
                                     NULL};

static bool takes_value(const char *a)
{
    for (int i = 0; valued[i]; i++)
        if (strcmp(a, valued[i]) == 0)
            return true;
    return false;
}

static int set_mode(kp_options *o, kp_mode m, const char *arg)
{
    if (o->mode != KP_MODE_NONE && o->mode != m)
        return usage_error("only one of --replay, --diff and --connect may be given:", arg);
    if (o->mode == m)
        return usage_error("an option is given twice:", arg);
    o->mode = m;
    return 0;
}

static int parse_one(keel_opt *p, kp_options *o, const char *a, const char *v, bool *live_only, bool *file_only)
{
    bool ok = true;
    uint64_t ms;
    if (strcmp(a, "--replay") == 0) {
        int rc = set_mode(o, KP_MODE_REPLAY, a);
        if (rc)
            return rc;
        o->files[0] = v;
        ok = v[0] != '\0';
    } else if (strcmp(a, "--connect") == 0) {
        int rc = set_mode(o, KP_MODE_LIVE, a);
        if (rc)
            return rc;
        if (!parse_connect(p, v, o))
            return KP_EXIT_USAGE;
    } else if (strcmp(a, "--level") == 0) {
        o->level = v;
        o->live_level = v;
        ok = v[0] != '\0';
    } else if (strcmp(a, "--speed") == 0) {
        ok = parse_float(v, 0.25f, 8.0f, &o->speed);
        *file_only = true;
    } else if (strcmp(a, "--follow") == 0) {
        ok = keel_app_parse_u32(v, 1, 0x7FFFFFFFu, &o->follow);
        *file_only = true;
    } else if (strcmp(a, "--name") == 0) {
        o->name = v;
        ok = v[0] != '\0' && strlen(v) < 64;
        *live_only = true;
    } else if (strcmp(a, "--sensitivity") == 0) {
        ok = parse_float(v, 0.001f, 10.0f, &o->sensitivity);
        *live_only = true;
    } else if (strcmp(a, "--rate") == 0) {
        ok = keel_app_parse_u32(v, 2, 1000, &o->rate);
        *live_only = true;
    } else if (strcmp(a, "--respawn-depth") == 0) {
        ok = keel_app_parse_u32(v, 0, KEEL_APP_RESPAWN_DEPTH_MAX_M, &o->respawn_depth_m);
        *live_only = true;
    } else if (strcmp(a, "--scale") == 0) {
        o->scale = v;
        ok = v[0] != '\0';
        *live_only = true;
    } else if (strcmp(a, "--up") == 0) {
        ok = strcmp(v, "y") == 0 || strcmp(v, "z") == 0;
        o->up = v[0];
        *live_only = true;
    } else if (strcmp(a, "--connect-timeout") == 0) {
        ok = keel_app_parse_ms(v, 1, 3600000u, &ms);
        o->connect_timeout_ms = ms;
        *live_only = true;
    } else if (strcmp(a, "--timeout") == 0) {
        if (!keel_app_parse_ms(v, 1, NET_HOST_MAX_TIMEOUT_MS, &ms))
            return keel_opt_fail(p, "'%s' is not a number of seconds in 0.001..60.000 (up to 3 decimals)", v);
        o->timeout_ms = (uint32_t)ms;
        *live_only = true;
    } else if (strcmp(a, "--quit-after") == 0) {
        ok = keel_app_parse_ms(v, 1, 1000000000u, &ms);
        o->quit_after_ms = ms;
        *live_only = true;
    } else if (strcmp(a, "--ticks-per-packet") == 0) {
        ok = keel_app_parse_u32(v, 1, 8, &o->ticks_per_packet);
        *live_only = true;
    } else if (strcmp(a, "--record") == 0) {
        o->record = v;
        ok = v[0] != '\0';
        *live_only = true;
    } else if (strcmp(a, "--game") == 0) {
        o->game_spec = v;
        ok = v[0] != '\0';
    } else if (strcmp(a, "--aim-at") == 0) {
        ok = keel_app_parse_u32(v, 1, 0x7FFFFFFFu, &o->aim_at);
        *live_only = true;
    } else if (strcmp(a, "--token") == 0 || strcmp(a, "--token-key") == 0) {
        *(strcmp(a, "--token") == 0 ? &o->token_file : &o->token_key) = v;
        ok = v[0] != '\0';
        *live_only = true;
    } else if (strcmp(a, "--client-id") == 0) {
        ok = keel_app_parse_u32(v, 1, 0xFFFFFFFFu, &o->client_id);
        o->has_client_id = *live_only = true;
    } else if (strcmp(a, "--protocol-id") == 0) {
        ok = keel_app_parse_u64(v, 0, UINT64_MAX, &o->protocol_id);
        o->has_protocol_id = *live_only = true;
    } else if (strcmp(a, "--token-server") == 0) {
        if (!parse_token_server(p, v, o))
            return KP_EXIT_USAGE;
        *live_only = true;
    } else if (strcmp(a, "--size") == 0) {
        ok = parse_size(v, &o->width, &o->height);
    } else if (strcmp(a, "--screenshot") == 0) {
        o->screenshot = v;
        ok = v[0] != '\0';
    } else if (strcmp(a, "--frames") == 0) {
        ok = keel_app_parse_u32(v, 1, 100000000u, &o->frames);
    } else if (strcmp(a, "--at-tick") == 0) {
        ok = keel_app_parse_u32(v, 0, 0xFFFFFFFFu, &o->at_tick);
        o->has_at_tick = true;
    } else if (strcmp(a, "--camera") == 0) {
        ok = parse_camera(v, o->camera);
        o->has_camera = true;
    }
    if (!ok)
        return keel_opt_fail(p, "bad value '%s'", v);
    return 0;
}

int kp_options_parse(int argc, char **argv, kp_options *o)
{
    kp_options_defaults(o);
    const char *live_flag = NULL, *file_flag = NULL;
    keel_opt p;
    keel_opt_init(&p, "keel-play", argc, argv, 1);
    const char *a;
    while ((a = keel_opt_next(&p))) {
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return -1;
        }
        if (strcmp(a, "--fullscreen") == 0) {
            o->fullscreen = true;
        } else if (strcmp(a, "--no-vsync") == 0) {
            o->vsync = false;
        } else if (strcmp(a, "--paused") == 0) {
            o->paused = true;
            file_flag = a;
        } else if (strcmp(a, "--platforms") == 0) {
            o->platforms = true;
            live_flag = a;
        } else if (strcmp(a, "--chase") == 0) {
            o->third_person = true;
            live_flag = a;
        } else if (strcmp(a, "--diff") == 0) {
            int rc = set_mode(o, KP_MODE_DIFF, a);
            if (rc)
                return rc;
            if (p.inline_value || p.next + 1 >= argc || strncmp(argv[p.next], "--", 2) == 0 ||
                strncmp(argv[p.next + 1], "--", 2) == 0)
                return usage_error("--diff needs two recordings: --diff A B", NULL);
            o->files[0] = argv[p.next++];
            o->files[1] = argv[p.next++];
        } else if (takes_value(a)) {
            const char *v = keel_opt_value(&p);
            if (!v)
                return KP_EXIT_USAGE;
            bool lo = false, fo = false;
            int rc = parse_one(&p, o, a, v, &lo, &fo);
            if (rc)
                return rc;
            if (lo)
                live_flag = a;
            if (fo)
                file_flag = a;
        } else {
            return keel_opt_unknown(&p);
        }
    }
    if (p.failed)
        return KP_EXIT_USAGE;
    if (o->mode == KP_MODE_NONE)
        return usage_error("one of --replay FILE, --diff A B or --connect HOST:PORT is needed", NULL);
    if (live_flag && o->mode != KP_MODE_LIVE)
        return usage_error("an option of live mode (--connect) only:", live_flag);
    if (file_flag && o->mode == KP_MODE_LIVE)
        return usage_error("an option of --replay and --diff only:", file_flag);
    if (o->token_file && o->token_key)
        return usage_error("one of --token and --token-key, not both", NULL);
    if ((o->has_client_id || o->has_protocol_id || o->token_server[0]) && !o->token_key)
        return usage_error(o->has_client_id     ? "--client-id"
                           : o->has_protocol_id ? "--protocol-id"
                                                : "--token-server",
                           "needs --token-key");
    if (o->mode != KP_MODE_LIVE)
        o->live_level = "builtin";
    else
        o->level = NULL;
    return 0;
}

int main(int argc, char **argv)
{
    replay_program = "keel-play"; // the recording's messages (tools/keel-replay/level.c)
    kp_options opt;
    int rc = kp_options_parse(argc, argv, &opt);
    if (rc == -1)
        return KP_EXIT_OK;
    if (rc != 0)
        return rc;
    keel_game game = {0}; // before the window: a missing library is one line
    if (opt.game_spec) {
        if ((rc = keel_game_load_or_report("keel-play", opt.game_spec, &game)) != 0)
            return rc;
        opt.game = game.game;
        keel_game_describe("keel-play", &game);
    }
    kp_app app;
    rc = kp_app_open(&app, &opt);
    if (rc != 0) {
        keel_game_unload(&game);
        return rc;
    }
    switch (opt.mode) {
    case KP_MODE_REPLAY: rc = kp_replay_run(&app, &opt); break;
    case KP_MODE_DIFF: rc = kp_diff_run(&app, &opt); break;
    case KP_MODE_LIVE: rc = kp_live_run(&app, &opt); break;
    default: rc = KP_EXIT_USAGE; break;
    }
    kp_app_close(&app);
    keel_game_unload(&game); // after the live client's scenes
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("keel-play: error writing the output\n", stderr);
        return rc == KP_EXIT_OK ? KP_EXIT_FAILURE : rc;
    }
    return rc;
}
