// keel-token: make a backend key, issue connect tokens, inspect them.
// MIT licence, see LICENSE. See docs/security.md.
//
// A thin program over <keel/net_token.h> for development, tests and small
// backends: `issue` reads the clock (the library never does) for the token's
// create time unless --now gives one. Hand-written options like the other
// programs: "--flag value" and "--flag=value" are the same.
// Exit status: 0 done, 1 a file or token error, 2 bad command line.
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <keel/net_token.h>

#include "keel_addr.h"
#include "keel_app.h"
#include "keel_opt.h"

static void usage(FILE *f)
{
    fputs("usage: keel-token keygen FILE\n"
          "       keel-token issue --key FILE --client-id N --server HOST:PORT [--server ...]\n"
          "                        [--expires S] [--timeout S] [--user-data TEXT]\n"
          "                        [--protocol-id N] [--now T] --out FILE\n"
          "       keel-token inspect [--json] FILE\n"
          "Connect tokens: a backend key (keygen writes a new one, mode 0600, never\n"
          "over an existing file), tokens sealed with it (issue) and the part of a\n"
          "token a client reads (inspect; the session keys are not printed).\n"
          "\n"
          "  --key FILE         the backend's key file\n"
          "  --client-id N      the player's id, 0..2^64-1 (decimal or 0x hex)\n"
          "  --server HOST:PORT a server the token admits to, as the server names itself\n"
          "                     (its --public; behind a relay, NAT or port forward not the\n"
          "                     address clients dial): a host name (IPv4), A.B.C.D:PORT or\n"
          "                     [IPv6]:PORT; 1 to 32 of them\n"
          "  --expires S        seconds the token stays valid, 1..31536000 (default 300)\n"
          "  --timeout S        seconds of silence that end a connection, 1..3600\n"
          "                     (default 10)\n"
          "  --user-data TEXT   up to 256 bytes for the servers (a player name, say)\n"
          "  --protocol-id N    the game's protocol id, 0..2^64-1 (default 0)\n"
          "  --now T            the create time in Unix seconds (default: the clock)\n"
          "  --out FILE         where to write the token (1712 bytes, mode 0600)\n"
          "  --json             inspect: one JSON object instead of text\n"
          "  --help             print this help and exit\n"
          "Exit status: 0 done, 1 a file or token error, 2 bad command line.\n",
          f);
}

// "keel-token: <message>" on stderr (a command-line error points to --help).
static int vreport(int status, const char *fmt, va_list ap)
{
    fputs("keel-token: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(status == 2 ? " (keel-token --help lists the options)\n" : "\n", stderr);
    return status;
}

// A bad command line: exit status 2.
__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int status = vreport(2, fmt, ap);
    va_end(ap);
    return status;
}

// A file or token error: exit status 1.
__attribute__((format(printf, 1, 2))) static int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int status = vreport(1, fmt, ap);
    va_end(ap);
    return status;
}

static int keygen(int argc, char **argv)
{
    if (argc != 3 || strncmp(argv[2], "--", 2) == 0)
        return bad("keygen takes one FILE");
    net_token_key key;
    if (!net_token_key_generate(&key))
        return error("libsodium could not be initialised");
    char err[512];
    bool ok = net_token_key_write(argv[2], &key, err, sizeof err);
    net_token_key_wipe(&key);
    if (!ok)
        return error("%s", err);
    printf("keel-token: wrote a new key to %s\n", argv[2]);
    return 0;
}

static int write_token(const char *path, const uint8_t *token)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return error("%s: %s", path, strerror(errno));
    size_t done = 0;
    while (done < NET_TOKEN_BYTES) {
        ssize_t w = write(fd, token + done, NET_TOKEN_BYTES - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            return error("%s: %s", path, w < 0 ? strerror(e) : "nothing written");
        }
        done += (size_t)w;
    }
    if (close(fd) != 0)
        return error("%s: %s", path, strerror(errno));
    return 0;
}

// --server HOST:PORT: a name resolved (IPv4), or A.B.C.D:PORT / [IPv6]:PORT as it is
static bool server_address(const char *v, net_token_address *out, char *err, size_t err_size)
{
    if (net_token_address_parse(v, out))
        return true;
    char ip[16], text[32];
    uint32_t port;
    if (v[0] == '[' || !keel_addr_resolve(v, 1, ip, sizeof ip, &port, err, err_size))
        return false;
    snprintf(text, sizeof text, "%s:%u", ip, (unsigned)port);
    return net_token_address_parse(text, out);
}

static int issue(int argc, char **argv)
{
    static net_token_params p; // (large: not on the stack)
    memset(&p, 0, sizeof p);
    const char *key_path = NULL, *out_path = NULL;
    uint64_t expires = 300, timeout = 10, now = 0;
    bool have_client = false, have_now = false;
    keel_opt o;
    keel_opt_init(&o, "keel-token", argc, argv, 2);
    const char *a;
    while ((a = keel_opt_next(&o))) {
        const char *v;
        if (strcmp(a, "--key") == 0 || strcmp(a, "--out") == 0) {
            if (!(v = keel_opt_value(&o)))
                return 2;
            *(strcmp(a, "--key") == 0 ? &key_path : &out_path) = v;
        } else if (strcmp(a, "--client-id") == 0) {
            if (!keel_opt_u64(&o, 0, UINT64_MAX, &p.client_id))
                return 2;
            have_client = true;
        } else if (strcmp(a, "--protocol-id") == 0) {
            if (!keel_opt_u64(&o, 0, UINT64_MAX, &p.protocol_id))
                return 2;
        } else if (strcmp(a, "--server") == 0) {
            if (!(v = keel_opt_value(&o)))
                return 2;
            if (p.server_count == NET_TOKEN_MAX_SERVERS)
                return keel_opt_fail(&o, "at most %d servers", NET_TOKEN_MAX_SERVERS);
            char err[300] = "";
            if (!server_address(v, &p.servers[p.server_count], err, sizeof err))
                return keel_opt_fail(&o, "'%s' is not HOST:PORT or [IPv6]:PORT (port 1..65535)%s%s", v,
                                     err[0] ? ": " : "", err);
            p.server_count++;
        } else if (strcmp(a, "--expires") == 0) {
            if (!keel_opt_u64(&o, 1, 31536000, &expires))
                return 2;
        } else if (strcmp(a, "--timeout") == 0) {
            if (!keel_opt_u64(&o, 1, NET_TOKEN_MAX_TIMEOUT, &timeout))
                return 2;
        } else if (strcmp(a, "--now") == 0) {
            if (!keel_opt_u64(&o, 0, UINT64_MAX - 31536000, &now))
                return 2;
            have_now = true;
        } else if (strcmp(a, "--user-data") == 0) {
            if (!(v = keel_opt_value(&o)))
                return 2;
            size_t n = strlen(v);
            if (n > NET_TOKEN_MAX_USER_DATA)
                return keel_opt_fail(&o, "%zu bytes, at most %d", n, NET_TOKEN_MAX_USER_DATA);
            memcpy(p.user_data, v, n);
            p.user_data_size = (uint32_t)n;
        } else {
            return keel_opt_unknown(&o);
        }
    }
    if (o.failed)
        return 2;
    if (!key_path)
        return bad("issue needs --key FILE");
    if (!have_client)
        return bad("issue needs --client-id N");
    if (p.server_count == 0)
        return bad("issue needs at least one --server HOST:PORT");
    if (!out_path)
        return bad("issue needs --out FILE");
    if (!have_now) {
        time_t t = time(NULL);
        now = t > 0 ? (uint64_t)t : 0;
    }
    p.create_time = now;
    p.expire_time = now + expires;
    p.timeout_s = (uint32_t)timeout;

    net_token_key key;
    char err[512];
    if (!net_token_key_read(key_path, &key, err, sizeof err))
        return error("%s", err);
    uint8_t token[NET_TOKEN_BYTES];
    const char *why = NULL;
    bool ok = net_token_issue(&p, &key, token, &why);
    net_token_key_wipe(&key);
    if (!ok)
        return error("cannot issue: %s", why);
    int rc = write_token(out_path, token);
    memset(token, 0, sizeof token);
    if (rc == 0)
        printf("keel-token: wrote a token for client %llu to %s (expires at %llu, in %llu s)\n",
               (unsigned long long)p.client_id, out_path, (unsigned long long)p.expire_time,
               (unsigned long long)expires);
    return rc;
}

// The field a read_public offset points at, for messages.
static void field_name(size_t offset, char *buf, size_t size)
{
    const size_t pub = NET_TOKEN_SEALED_BYTES;
    if (offset == 0)
        snprintf(buf, size, "magic");
    else if (offset == 4)
        snprintf(buf, size, "version");
    else if (offset == 16)
        snprintf(buf, size, "create time (after the expiry)");
    else if (offset == pub)
        snprintf(buf, size, "timeout");
    else if (offset == pub + 4)
        snprintf(buf, size, "server count");
    else if (offset >= pub + 8 && offset < pub + 8 + 19 * NET_TOKEN_MAX_SERVERS)
        snprintf(buf, size, "server slot %zu", (offset - pub - 8) / 19 + 1);
    else
        snprintf(buf, size, "field");
}

static void utc(uint64_t t, char *buf, size_t size)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (t > (uint64_t)253402300799ull || !gmtime_r(&tt, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, size, "beyond year 9999");
}

static int inspect(int argc, char **argv)
{
    bool json = false;
    const char *path = NULL;
    keel_opt o;
    keel_opt_init(&o, "keel-token", argc, argv, 2);
    const char *a;
    while ((a = keel_opt_next(&o))) {
        if (strcmp(a, "--json") == 0)
            json = true;
        else if (strncmp(a, "--", 2) == 0 || path)
            return keel_opt_unknown(&o);
        else
            path = a;
    }
    if (o.failed)
        return 2;
    if (!path)
        return bad("inspect needs a FILE");
    FILE *f = fopen(path, "rb");
    if (!f)
        return error("%s: %s", path, strerror(errno));
    uint8_t data[NET_TOKEN_BYTES + 1];
    size_t n = fread(data, 1, sizeof data, f);
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error)
        return error("%s: read error", path);
    net_token_public pub;
    size_t at = 0;
    net_token_result r = net_token_read_public(data, n, &pub, &at);
    memset(data, 0, sizeof data);
    if (r == NET_TOKEN_TRUNCATED || r == NET_TOKEN_BAD_SIZE)
        return error("%s: offset %zu: %s: %s bytes, a token has %d", path, at, net_token_result_name(r),
                     n > NET_TOKEN_BYTES ? "more than 1712" : "fewer", NET_TOKEN_BYTES);
    if (r != NET_TOKEN_OK) {
        char field[64];
        field_name(at, field, sizeof field);
        return error("%s: offset %zu: %s (%s)", path, at, net_token_result_name(r), field);
    }
    char created[32], expires[32], addr[64];
    utc(pub.create_time, created, sizeof created);
    utc(pub.expire_time, expires, sizeof expires);
    if (json) {
        printf("{\"version\": %u, \"protocol_id\": %llu, \"create_time\": %llu, \"expire_time\": %llu, "
               "\"timeout_s\": %u, \"servers\": [",
               pub.version, (unsigned long long)pub.protocol_id, (unsigned long long)pub.create_time,
               (unsigned long long)pub.expire_time, pub.timeout_s);
        for (uint32_t i = 0; i < pub.server_count; i++) {
            net_token_address_format(&pub.servers[i], addr, sizeof addr);
            printf("%s\"%s\"", i ? ", " : "", addr);
        }
        printf("]}\n");
    } else {
        printf("keel connect token, version %u\n", pub.version);
        printf("protocol id  %llu (0x%016llx)\n", (unsigned long long)pub.protocol_id,
               (unsigned long long)pub.protocol_id);
        printf("created      %llu (%s)\n", (unsigned long long)pub.create_time, created);
        printf("expires      %llu (%s, %llu s after its creation)\n", (unsigned long long)pub.expire_time, expires,
               (unsigned long long)(pub.expire_time - pub.create_time));
        printf("timeout      %u s\n", pub.timeout_s);
        printf("servers      %u\n", pub.server_count);
        for (uint32_t i = 0; i < pub.server_count; i++) {
            net_token_address_format(&pub.servers[i], addr, sizeof addr);
            printf("  %s\n", addr);
        }
        printf("session keys (not shown), client id and user data are sealed\n");
    }
    memset(&pub, 0, sizeof pub);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return bad("a command is needed");
    const char *cmd = argv[1];
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
    if (strcmp(cmd, "keygen") == 0)
        return keygen(argc, argv);
    if (strcmp(cmd, "issue") == 0)
        return issue(argc, argv);
    if (strcmp(cmd, "inspect") == 0)
        return inspect(argc, argv);
    return bad("unknown command '%s'", cmd);
}
