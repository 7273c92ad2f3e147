// keel-attack: an attacker for keel's secure mode, on loopback only: floods
// of handshake requests, tokens that must be refused, forged sources,
// captured sessions sent again. Command line and dispatch; see attack.h for
// the rules every subcommand keeps and docs/attacks.md for the cases. MIT
// licence, see LICENSE.
//
// Hand-written options like the other programs: "--flag value" and
// "--flag=value" are the same.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attack.h"
#include "keel_app.h"
#include "keel_opt.h"

static void usage(FILE *f)
{
    fputs("usage: keel-attack flood   --server A:P --rate N --seconds S [--token FILE [--damage OFFSET]]\n"
          "                           [--source A.B.C.D]\n"
          "       keel-attack request --server A:P --token FILE [--count N] [--damage OFFSET]\n"
          "       keel-attack spoof   --server A:P --count N [--rate N] [--ports K] [--token FILE]\n"
          "       keel-attack forge   --server A:P --victim A:P [--rate N]\n"
          "       keel-attack race    --server A:P --token FILE\n"
          "       keel-attack capture --server A:P --listen PORT --seconds S [--out FILE]\n"
          "                           [--replay-after S]\n"
          "       keel-attack replay  --server A:P --in FILE\n"
          "Attacks a keel server's secure mode (docs/security.md) on loopback and prints one\n"
          "JSON line: what it sent, what came back (replies, their largest size, replies\n"
          "larger than what they answer, reply types, denial reasons). See docs/attacks.md.\n"
          "\n"
          "  flood    handshake REQUESTs at N a second for S seconds from one socket: random\n"
          "           token bytes, or --token's sent part with a fresh nonce each\n"
          "  request  a token's REQUEST from a fresh socket (N times), and its RESPONSE when\n"
          "           challenged; reports the last result (challenge, admitted, denied and\n"
          "           the reason, none)\n"
          "  spoof    REQUESTs and ENet CONNECTs from forged 127.x.y.z sources through a raw\n"
          "           socket (root or CAP_NET_RAW; exit 77 without); replies to the forged\n"
          "           addresses are counted on sockets bound to 0.0.0.0 at their ports\n"
          "  forge    ENet's own framing forged through a raw socket from a playing client's\n"
          "           address (--victim): an unsequenced-group sweep and a bandwidth limit\n"
          "           to the server, then a DISCONNECT from the server's address to the\n"
          "           client (--wait between the attacks; root or CAP_NET_RAW, exit 77 without)\n"
          "  race     the CONNECT race: the token's handshake, then plain CONNECTs forged from\n"
          "           its own address (raw socket) before its authenticated CONNECT; reports\n"
          "           whether the server's answer authenticates and names its connect id\n"
          "  capture  a relay for one client: forwards both ways through its own upstream\n"
          "           socket and records what the client sends (--out FILE); with\n"
          "           --replay-after S, once the client has been quiet S seconds, sends the\n"
          "           recording again from that same upstream port, then exits\n"
          "  replay   sends a capture again, with its original spacing, from a new port\n"
          "\n"
          "  --server A.B.C.D:PORT  the server (127.0.0.0/8 only)\n"
          "  --rate N               datagrams a second, 1..200000 (spoof: 1000, forge: 2000)\n"
          "  --seconds S            1..60\n"
          "  --count N              1..1000000 (request: default 1)\n"
          "  --source A.B.C.D       flood: send from this 127.0.0.0/8 address (default 127.0.0.1)\n"
          "  --token FILE           a connect token (keel-token issue)\n"
          "  --damage OFFSET        flip the token's byte at OFFSET (0..1031, its sent part)\n"
          "  --victim A.B.C.D:PORT  forge: the playing client's address (127.0.0.0/8)\n"
          "  --ports K              spoof: forged source ports, 1..64 (default 16)\n"
          "  --listen PORT          capture: where the client sends (0: a free port, printed on\n"
          "                         stderr as \"listening on 127.0.0.1:PORT\")\n"
          "  --out FILE, --in FILE  the capture file\n"
          "  --replay-after S       capture: 1..60 seconds of quiet before replaying\n"
          "  --wait MS              how long to wait for replies after the last datagram,\n"
          "                         0..10000 (default 500; request: per exchange, default 2000)\n"
          "  --seed S               random numbers (nonces, forged addresses; default: the system)\n"
          "  --help                 this help\n"
          "Exit status: 0 done, 1 a socket or file error, 2 bad usage, 77 spoof, forge or race not allowed.\n",
          f);
}

static int bad(const char *fmt, const char *a, const char *b)
{
    fputs("keel-attack: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputs(" (keel-attack --help lists the options)\n", stderr);
    return 2;
}

typedef struct command {
    const char *name;
    const char *allowed;  ///< options it takes, each " name "
    const char *required; ///< options it must have
    int (*run)(const at_options *);
} command;

static const command COMMANDS[] = {
    {"flood", " server rate seconds token damage wait seed source ", " server rate seconds ", at_flood},
    {"request", " server token count damage wait seed ", " server token ", at_request},
    {"spoof", " server count rate ports token wait seed ", " server count ", at_spoof},
    {"forge", " server victim rate wait ", " server victim ", at_forge_framing},
    {"race", " server token wait seed ", " server token ", at_race},
    {"capture", " server listen seconds out replay-after wait ", " server listen seconds ", at_capture},
    {"replay", " server in wait ", " server in ", at_replay},
};

static bool listed(const char *list, const char *name)
{
    char key[40];
    snprintf(key, sizeof key, " %s ", name);
    return strstr(list, key) != NULL;
}

// One option's value into *o; false when it is not valid.
static bool set_option(at_options *o, const char *name, const char *v)
{
    uint32_t u;
    uint64_t u64;
    if (strcmp(name, "server") == 0) {
        o->server_text = v;
        return at_parse_loopback(v, &o->server);
    }
    if (strcmp(name, "victim") == 0)
        return at_parse_loopback(v, &o->victim);
    if (strcmp(name, "source") == 0) {
        char text[40];
        snprintf(text, sizeof text, "%s:1", v);
        return strlen(v) < 32 && at_parse_loopback(text, &o->source);
    }
    if (strcmp(name, "token") == 0 || strcmp(name, "in") == 0 || strcmp(name, "out") == 0) {
        *(name[0] == 't' ? &o->token_file : name[0] == 'i' ? &o->in_file : &o->out_file) = v;
        return v[0] != 0;
    }
    if (strcmp(name, "damage") == 0) {
        if (!keel_app_parse_u32(v, 0, NET_TOKEN_SEALED_BYTES - 1, &u))
            return false;
        o->damage = u;
        return true;
    }
    if (strcmp(name, "seed") == 0) {
        if (!keel_app_parse_u64(v, 1, UINT64_MAX, &u64))
            return false;
        o->seed = u64;
        return true;
    }
    static const struct {
        const char *name;
        uint32_t lo, hi;
        size_t at;
    } NUMBERS[] = {
        {"rate", 1, AT_MAX_RATE, offsetof(at_options, rate)},
        {"seconds", 1, AT_MAX_SECONDS, offsetof(at_options, seconds)},
        {"count", 1, AT_MAX_COUNT, offsetof(at_options, count)},
        {"listen", 0, 65535, offsetof(at_options, listen_port)},
        {"ports", 1, 64, offsetof(at_options, ports)},
        {"wait", 0, 10000, offsetof(at_options, wait_ms)},
        {"replay-after", 1, AT_MAX_SECONDS, offsetof(at_options, replay_after_s)},
    };
    for (size_t i = 0; i < sizeof NUMBERS / sizeof NUMBERS[0]; i++) {
        if (strcmp(name, NUMBERS[i].name) == 0) {
            if (!keel_app_parse_u32(v, NUMBERS[i].lo, NUMBERS[i].hi, &u))
                return false;
            memcpy((char *)o + NUMBERS[i].at, &u, sizeof u);
            return true;
        }
    }
    return false;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc < 2)
        return bad("a subcommand is needed%s%s", "", "");
    const command *cmd = NULL;
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0)
            cmd = &COMMANDS[i];
    if (!cmd)
        return bad("unknown subcommand '%s'%s", argv[1], "");
    at_options o;
    memset(&o, 0, sizeof o);
    o.damage = -1;
    o.count = 1;
    o.rate = strcmp(cmd->name, "spoof") == 0 ? 1000 : strcmp(cmd->name, "forge") == 0 ? 2000 : 0;
    o.ports = 16;
    o.wait_ms = strcmp(cmd->name, "request") == 0 ? 2000 : 500;
    char seen[256] = " ";
    keel_opt p; // the programs' shared parser (keel_opt.h): --name value, --name=value
    keel_opt_init(&p, "keel-attack", argc, argv, 2);
    const char *a;
    while ((a = keel_opt_next(&p))) {
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        char name[32];
        size_t n = strlen(a);
        if (strncmp(a, "--", 2) != 0 || n - 2 >= sizeof name)
            return bad("unexpected argument '%s'%s", a, "");
        memcpy(name, a + 2, n - 2);
        name[n - 2] = '\0';
        if (!listed(cmd->allowed, name))
            return bad("%s takes no --%s", cmd->name, name);
        const char *v = keel_opt_value(&p);
        if (!v)
            return 2; // "keel-attack: --x: needs a value"
        if (!set_option(&o, name, v))
            return bad("bad --%s '%s'", name, v);
        if (strlen(seen) + strlen(name) + 2 < sizeof seen) {
            strcat(seen, name);
            strcat(seen, " ");
        }
    }
    if (p.failed)
        return 2;
    for (const char *r = cmd->required + 1; *r;) {
        const char *end = strchr(r, ' ');
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(end - r), r);
        if (!listed(seen, name))
            return bad("%s needs --%s", cmd->name, name);
        r = end + 1;
    }
    if (o.damage >= 0 && !o.token_file)
        return bad("--damage needs --token%s%s", "", "");
    if ((uint64_t)o.rate * o.seconds > AT_MAX_COUNT)
        return bad("more than %s datagrams%s", "1000000", "");
    return cmd->run(&o);
}
