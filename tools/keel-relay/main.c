// keel-relay: a UDP link conditioner on loopback. Command-line options.
// MIT licence, see LICENSE. See docs/relay.md.
//
// Hand-written rather than getopt_long, like keel-sim: "--flag value" and
// "--flag=value" are the same. Floating point is used only to read decimal
// values, which are rounded to integer microseconds, parts per million or
// bytes before any decision is made.
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keel_addr.h"
#include "keel_opt.h"
#include "relay.h"

static void usage(FILE *f)
{
    fputs("usage: keel-relay --server ADDR:PORT [options]\n"
          "A UDP relay on loopback that shapes traffic between clients and a server:\n"
          "each client address gets its own upstream socket to the server; both\n"
          "directions get latency, jitter, loss, burst gaps, duplication, reordering\n"
          "and a bandwidth cap. Only 127.0.0.0/8 addresses are accepted.\n"
          "\n"
          "  --server HOST:PORT     where to forward (loopback only; required; HOST a name\n"
          "                         such as localhost or an IPv4 address)\n"
          "  --listen [ADDR:]PORT   where clients send (default 127.0.0.1:0, a free\n"
          "                         port; the port is printed on the first line)\n"
          "  --seed S               random seed, decimal or 0x hex (default 1)\n"
          "  --duration S           stop after S seconds (default 0: until SIGINT/SIGTERM)\n"
          "  --stats-json S         JSON lines on stdout: stats every S seconds (0: only\n"
          "                         at exit) and events; without it, text stats at exit\n"
          "  --max-clients N        client addresses served at once (default 64)\n"
          "  --client-idle S        forget a client silent for S seconds (default 60; 0 never)\n"
          "  --max-pending N        packets waiting to be delivered (default 100000)\n"
          "  --step-at S            at S seconds, set the latency to --step-latency\n"
          "  --step-latency MS      the one-way latency after --step-at (both directions)\n"
          "  --control              read commands from stdin, one a line:\n"
          "                         SETTING [up|down] VALUE (e.g. \"latency up 75\"),\n"
          "                         \"stats\" or \"quit\"; SETTING is a shaping option\n"
          "                         below without the dashes\n"
          "  --help                 print this help and exit\n"
          "\n"
          "Shaping, both directions; add -up (client to server) or -down (server to\n"
          "client) to set one, e.g. --latency-up 40. MS may have decimals, PCT is a\n"
          "percentage from 0 to 100 (resolution 0.0001):\n"
          "  --latency MS           fixed one-way delay (default 0)\n"
          "  --jitter MS            extra delay, uniform in [0, MS] per packet (default 0;\n"
          "                         it can reorder packets closer together than MS)\n"
          "  --loss PCT             random loss\n"
          "  --dup PCT              a delivered packet is sent twice (the copy gets its\n"
          "                         own jitter)\n"
          "  --reorder PCT          a packet is held back by --reorder-delay, so later\n"
          "                         ones overtake it\n"
          "  --reorder-delay MS     (default 20)\n"
          "  --burst-every MS       burst gaps: mean time between gap starts; the quiet\n"
          "                         time between gaps is uniform in [0, 2*(EVERY-LENGTH)]\n"
          "  --burst-length MS      length of each gap: everything is dropped\n"
          "  --rate BYTES           bandwidth cap in bytes per second (default 0: none)\n"
          "  --rate-burst BYTES     token bucket size (default 1500)\n"
          "  --queue BYTES          bytes that may wait for the cap; a packet that would\n"
          "                         wait longer than QUEUE/RATE is dropped (default 65536)\n"
          "  --flip PCT             a datagram gets one random bit flipped (counted as\n"
          "                         \"flipped\"), in its last --flip-tail bytes\n"
          "  --flip-tail BYTES      where the bit may be: the last BYTES (default 0: anywhere;\n"
          "                         keel's sealed messages end a datagram: 16 is the tag)\n"
          "  --flip-min BYTES       only datagrams of at least BYTES (default 0)\n"
          "  --flip-skip N          never the first N datagrams of a client's direction\n"
          "                         (default 0; e.g. to let a handshake through)\n"
          "Options are applied in order; a later one overrides an earlier one.\n"
          "Exit status: 0 done, 1 a socket error, 2 bad command line.\n",
          f);
}

bool relay_is_loopback(const struct sockaddr_in *a)
{
    return a->sin_family == AF_INET && (ntohl(a->sin_addr.s_addr) >> 24) == 127;
}

// Strict decimal number: optional fraction, no sign, no exponent, no spaces.
static bool parse_decimal(const char *s, double lo, double hi, double *out)
{
    if (!s[0])
        return false;
    int digits = 0, dots = 0;
    for (const char *c = s; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digits++;
        else if (*c == '.' && dots == 0)
            dots++;
        else
            return false;
    }
    if (digits == 0)
        return false;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    int base = 10;
    const char *d = s;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        d = s + 2;
    }
    if (!d[0])
        return false;
    for (const char *c = d; *c; c++) {
        bool ok = (*c >= '0' && *c <= '9') || (base == 16 && ((*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F')));
        if (!ok)
            return false;
    }
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(d, &end, base);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = (uint64_t)v;
    return true;
}

// Rounds a non-negative value to the nearest integer (no libm needed).
static long long round_nonneg(double v) { return (long long)(v + 0.5); }

// Milliseconds (decimals allowed) to microseconds, up to 30 minutes.
static bool parse_ms(const char *s, uint32_t *us)
{
    double v;
    if (!parse_decimal(s, 0.0, 1800000.0, &v))
        return false;
    *us = (uint32_t)round_nonneg(v * 1000.0);
    return true;
}

static bool parse_seconds(const char *s, int64_t *us)
{
    double v;
    if (!parse_decimal(s, 0.0, 1e9, &v))
        return false;
    *us = (int64_t)round_nonneg(v * 1e6);
    return true;
}

static bool parse_pct(const char *s, uint32_t *ppm)
{
    double v;
    if (!parse_decimal(s, 0.0, 100.0, &v))
        return false;
    *ppm = (uint32_t)round_nonneg(v * 10000.0);
    return true;
}

typedef enum unit { U_MS, U_PCT, U_BYTES32, U_BYTES64 } unit;

typedef struct setting {
    const char *key;
    unit u;
    size_t offset;
} setting;

static const setting SETTINGS[] = {
    {"latency", U_MS, offsetof(shape_params, latency_us)},
    {"jitter", U_MS, offsetof(shape_params, jitter_us)},
    {"loss", U_PCT, offsetof(shape_params, loss_ppm)},
    {"dup", U_PCT, offsetof(shape_params, dup_ppm)},
    {"reorder", U_PCT, offsetof(shape_params, reorder_ppm)},
    {"reorder-delay", U_MS, offsetof(shape_params, reorder_delay_us)},
    {"burst-every", U_MS, offsetof(shape_params, burst_every_us)},
    {"burst-length", U_MS, offsetof(shape_params, burst_length_us)},
    {"rate", U_BYTES64, offsetof(shape_params, rate_Bps)},
    {"rate-burst", U_BYTES32, offsetof(shape_params, rate_burst)},
    {"queue", U_BYTES32, offsetof(shape_params, queue_bytes)},
    {"flip", U_PCT, offsetof(shape_params, flip_ppm)},
    {"flip-tail", U_BYTES32, offsetof(shape_params, flip_tail)},
    {"flip-min", U_BYTES32, offsetof(shape_params, flip_min)},
    {"flip-skip", U_BYTES32, offsetof(shape_params, flip_skip)},
};

static const setting *find_setting(const char *key)
{
    for (size_t i = 0; i < sizeof SETTINGS / sizeof SETTINGS[0]; i++)
        if (strcmp(SETTINGS[i].key, key) == 0)
            return &SETTINGS[i];
    return NULL;
}

bool relay_setting(shape_params p[2], const char *key, unsigned dirs, const char *value, char *err, size_t errlen)
{
    const setting *s = find_setting(key);
    if (!s) {
        snprintf(err, errlen, "unknown setting '%s'", key);
        return false;
    }
    uint32_t v32 = 0;
    uint64_t v64 = 0;
    bool ok = false;
    const char *what = "";
    switch (s->u) {
    case U_MS:
        ok = parse_ms(value, &v32);
        what = "milliseconds from 0 to 1800000";
        break;
    case U_PCT:
        ok = parse_pct(value, &v32);
        what = "a percentage from 0 to 100";
        break;
    case U_BYTES32:
        ok = parse_u64(value, 0, UINT32_MAX, &v64);
        v32 = (uint32_t)v64;
        what = "bytes, up to 4294967295";
        break;
    case U_BYTES64:
        ok = parse_u64(value, 0, 10000000000ull, &v64);
        what = "bytes per second, up to 10^10";
        break;
    }
    if (!ok) {
        snprintf(err, errlen, "%s: '%s' is not valid (%s)", key, value, what);
        return false;
    }
    for (int d = 0; d < 2; d++) {
        if (!(dirs & (1u << d)))
            continue;
        char *field = (char *)&p[d] + s->offset;
        if (s->u == U_BYTES64)
            memcpy(field, &v64, sizeof v64);
        else
            memcpy(field, &v32, sizeof v32);
    }
    return true;
}

// "A.B.C.D:PORT", or "PORT" when allow_bare_port (address 127.0.0.1).
static bool parse_addr(const char *s, bool allow_bare_port, bool allow_port0, struct sockaddr_in *out)
{
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    const char *colon = strrchr(s, ':');
    const char *port_s = s;
    char host[64] = "127.0.0.1";
    if (colon) {
        size_t n = (size_t)(colon - s);
        if (n == 0 || n >= sizeof host)
            return false;
        memcpy(host, s, n);
        host[n] = '\0';
        port_s = colon + 1;
    } else if (!allow_bare_port) {
        return false;
    }
    uint64_t port;
    if (!parse_u64(port_s, allow_port0 ? 0 : 1, 65535, &port))
        return false;
    char dotted[16], err[300]; // a host name or an IPv4 address (keel_addr.h)
    if (!keel_addr_ipv4(host, dotted, sizeof dotted, err, sizeof err) ||
        inet_pton(AF_INET, dotted, &out->sin_addr) != 1)
        return false;
    out->sin_port = htons((uint16_t)port);
    return true;
}

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("keel-relay: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (keel-relay --help lists the options)\n", stderr);
    return 2;
}

static bool is_option(const char *name)
{
    static const char *const names[] = {"server",      "listen",      "seed",        "duration", "stats-json",
                                        "max-clients", "client-idle", "max-pending", "step-at",  "step-latency"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

int main(int argc, char **argv)
{
    relay_config c;
    memset(&c, 0, sizeof c);
    c.listen_addr.sin_family = AF_INET;
    c.listen_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c.dir[0] = c.dir[1] = shape_params_default();
    c.seed = 1;
    c.max_clients = 64;
    c.client_idle_us = 60 * 1000000LL;
    c.max_pending = 100000;
    bool have_server = false, have_step_latency = false;
    char err[256];

    keel_opt p; // the programs' shared parser (keel_opt.h): --name value, --name=value
    keel_opt_init(&p, "keel-relay", argc, argv, 1);
    const char *arg;
    while ((arg = keel_opt_next(&p))) {
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0)
            return bad("unexpected argument '%s'", arg);
        char name[64];
        const char *value = NULL;
        size_t n = strlen(arg);
        if (n - 2 >= sizeof name)
            return bad("unknown option '%s'", arg);
        memcpy(name, arg + 2, n - 2);
        name[n - 2] = '\0';
        if (strcmp(name, "control") == 0) {
            c.control = true; // (keel_opt refuses "--control=x")
            continue;
        }
        // Shaping settings, with an optional -up / -down suffix.
        unsigned dirs = 3;
        char key[64];
        snprintf(key, sizeof key, "%s", name);
        size_t kl = strlen(key);
        if (kl > 3 && strcmp(key + kl - 3, "-up") == 0) {
            dirs = 1;
            key[kl - 3] = '\0';
        } else if (kl > 5 && strcmp(key + kl - 5, "-down") == 0) {
            dirs = 2;
            key[kl - 5] = '\0';
        }
        if (!find_setting(key) && !is_option(name))
            return bad("unknown option '--%s'", name);
        if (!(value = keel_opt_value(&p)))
            return 2; // "keel-relay: --x: needs a value"
        if (find_setting(key)) {
            if (!relay_setting(c.dir, key, dirs, value, err, sizeof err))
                return bad("--%s", err);
            continue;
        }
        uint64_t u;
        if (strcmp(name, "server") == 0) {
            if (!parse_addr(value, false, false, &c.server_addr))
                return bad("--server: '%s' is not HOST:PORT (a name or an IPv4 address)", value);
            if (!relay_is_loopback(&c.server_addr))
                return bad("--server: %s is not a loopback address (127.0.0.0/8); keel-relay "
                           "only sends on loopback",
                           value);
            have_server = true;
        } else if (strcmp(name, "listen") == 0) {
            if (!parse_addr(value, true, true, &c.listen_addr))
                return bad("--listen: '%s' is not [HOST:]PORT (a name or an IPv4 address)", value);
            if (!relay_is_loopback(&c.listen_addr))
                return bad("--listen: %s is not a loopback address (127.0.0.0/8)", value);
        } else if (strcmp(name, "seed") == 0) {
            if (!parse_u64(value, 0, UINT64_MAX, &c.seed))
                return bad("--seed: '%s' is not a number", value);
        } else if (strcmp(name, "duration") == 0) {
            if (!parse_seconds(value, &c.duration_us))
                return bad("--duration: '%s' is not seconds", value);
        } else if (strcmp(name, "stats-json") == 0) {
            if (!parse_seconds(value, &c.stats_every_us))
                return bad("--stats-json: '%s' is not seconds", value);
            c.stats_json = true;
        } else if (strcmp(name, "max-clients") == 0) {
            if (!parse_u64(value, 1, 4096, &u))
                return bad("--max-clients: '%s' is not a number from 1 to 4096", value);
            c.max_clients = (uint32_t)u;
        } else if (strcmp(name, "client-idle") == 0) {
            if (!parse_seconds(value, &c.client_idle_us))
                return bad("--client-idle: '%s' is not seconds", value);
        } else if (strcmp(name, "max-pending") == 0) {
            if (!parse_u64(value, 1, 10000000, &u))
                return bad("--max-pending: '%s' is not a number from 1 to 10000000", value);
            c.max_pending = (uint32_t)u;
        } else if (strcmp(name, "step-at") == 0) {
            if (!parse_seconds(value, &c.step_at_us))
                return bad("--step-at: '%s' is not seconds", value);
            c.step = true;
        } else if (strcmp(name, "step-latency") == 0) {
            uint32_t us;
            if (!parse_ms(value, &us))
                return bad("--step-latency: '%s' is not milliseconds", value);
            c.step_latency_us[0] = c.step_latency_us[1] = us;
            have_step_latency = true;
        } else {
            return bad("unknown option '--%s'", name);
        }
    }
    if (p.failed)
        return 2;
    if (!have_server)
        return bad("--server is required");
    if (c.step != have_step_latency)
        return bad("--step-at and --step-latency go together");
    for (int d = 0; d < 2; d++) {
        const char *msg = shape_params_check(&c.dir[d]);
        if (msg)
            return bad("%s (%s)", msg, d == RELAY_UP ? "up" : "down");
    }
    return relay_run(&c);
}
