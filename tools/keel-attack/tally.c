// keel-attack: the counts of what was sent and what came back, and the one
// JSON line every subcommand prints. See attack.h. MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>

#include "attack.h"

void at_tally_sent(at_tally *t, size_t n, bool ok)
{
    if (!ok) {
        t->send_errors++;
        return;
    }
    t->sent++;
    t->sent_bytes += n;
    if (t->sent_min == 0 || n < t->sent_min)
        t->sent_min = n;
    if (n > t->sent_max)
        t->sent_max = n;
}

uint8_t at_tally_reply(at_tally *t, const uint8_t *d, size_t n, size_t answered)
{
    uint8_t reason = 0, type = at_hs_type(d, n, &reason);
    t->replies++;
    t->reply_bytes += n;
    if (n > t->reply_max)
        t->reply_max = n;
    if (answered && n > answered)
        t->larger++;
    t->types[type]++;
    if (type == AT_HS_DENIED)
        t->reasons[reason]++;
    return type;
}

uint64_t at_drain(int fd, at_tally *t, size_t answered)
{
    static uint8_t buf[AT_DATAGRAM_MAX];
    uint64_t got = 0;
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == ECONNREFUSED || errno == EINTR)
                continue; // an ICMP error for an earlier send
            return got;
        }
        at_tally_reply(t, buf, (size_t)n, answered);
        got++;
    }
}

const char *at_type_name(uint8_t type)
{
    static const char *const names[AT_HS_TYPES] = {"other", "request", "challenge", "response", "admitted", "denied"};
    return type < AT_HS_TYPES ? names[type] : "other";
}

static const char *sep = "";

void at_json_begin(const char *attack, const at_options *o, const at_tally *t)
{
    printf("{\"attack\":\"%s\",\"server\":\"%s\",\"sent\":%llu,\"sent_bytes\":%llu,\"sent_min\":%llu,"
           "\"sent_max\":%llu,\"send_errors\":%llu,\"replies\":%llu,\"reply_bytes\":%llu,\"reply_max\":%llu,"
           "\"replies_larger\":%llu,\"reply_types\":{",
           attack, o->server_text ? o->server_text : "", (unsigned long long)t->sent, (unsigned long long)t->sent_bytes,
           (unsigned long long)t->sent_min, (unsigned long long)t->sent_max, (unsigned long long)t->send_errors,
           (unsigned long long)t->replies, (unsigned long long)t->reply_bytes, (unsigned long long)t->reply_max,
           (unsigned long long)t->larger);
    const char *s = "";
    for (uint8_t k = 0; k < AT_HS_TYPES; k++) {
        if (t->types[k]) {
            printf("%s\"%s\":%llu", s, at_type_name(k), (unsigned long long)t->types[k]);
            s = ",";
        }
    }
    printf("},\"reasons\":{");
    s = "";
    for (int r = 0; r < 256; r++) {
        if (t->reasons[r]) {
            printf("%s\"%s\":%llu", s, net_hs_refusal_name((net_hs_refusal)r), (unsigned long long)t->reasons[r]);
            s = ",";
        }
    }
    printf("}");
    sep = ",";
}

void at_json_u64(const char *key, uint64_t v) { printf("%s\"%s\":%llu", sep, key, (unsigned long long)v); }

void at_json_str(const char *key, const char *v)
{
    printf("%s\"%s\":\"", sep, key);
    for (const char *c = v; *c; c++) {
        if (*c == '"' || *c == '\\')
            putchar('\\');
        if ((unsigned char)*c >= 0x20)
            putchar(*c);
    }
    putchar('"');
}

void at_json_f(const char *key, double v) { printf("%s\"%s\":%.3f", sep, key, v); }

void at_json_end(void)
{
    printf("}\n");
    fflush(stdout);
}
