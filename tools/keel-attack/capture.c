// keel-attack: `capture` (a relay in front of one client that records what
// the client sends, and with --replay-after sends it again from the same
// upstream port once the client has gone quiet) and `replay` (sends a
// capture again from a new port). See attack.h and docs/attacks.md. MIT
// licence, see LICENSE.
//
// The capture file: "KEELCAP1", then one record per client-to-server
// datagram: microseconds since the first (u64 little-endian), its size (u32
// little-endian), its bytes. At most MAX_RECORDS records and MAX_BYTES bytes
// are kept (the rest is forwarded but not recorded, and counted).
//
// A replayed RESPONSE is stale (its challenge was sealed for the original
// exchange and expires after 5 s); when the server sends a fresh CHALLENGE to
// the replayed REQUEST (waited for up to 5 x NET_HS_RESEND_MS before a
// RESPONSE is due), the replay answers that one instead, as an attacker who
// sees the replies would ("responses_refreshed").
#define _DEFAULT_SOURCE // htole64, le64toh
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attack.h"

enum { MAX_RECORDS = 200000, MAX_BYTES = 64 << 20 };

static const char MAGIC[8] = {'K', 'E', 'E', 'L', 'C', 'A', 'P', '1'};

typedef struct capture {
    uint64_t *at_us;
    uint32_t *size;
    uint8_t *bytes;
    size_t *offset;
    uint32_t count;
    size_t used;
    uint64_t dropped; ///< not recorded: over the bounds
    FILE *out;        ///< capture: each record is written (and flushed) as it comes
    bool write_failed;
} capture;

static bool capture_alloc(capture *c)
{
    memset(c, 0, sizeof *c);
    c->at_us = malloc(MAX_RECORDS * sizeof *c->at_us);
    c->size = malloc(MAX_RECORDS * sizeof *c->size);
    c->offset = malloc(MAX_RECORDS * sizeof *c->offset);
    c->bytes = malloc(MAX_BYTES);
    if (!c->at_us || !c->size || !c->offset || !c->bytes) {
        fputs("keel-attack: out of memory\n", stderr);
        return false;
    }
    return true;
}

static void capture_free(capture *c)
{
    free(c->at_us);
    free(c->size);
    free(c->offset);
    free(c->bytes);
}

static void capture_add(capture *c, uint64_t at_us, const uint8_t *d, size_t n)
{
    if (c->count >= MAX_RECORDS || n > MAX_BYTES - c->used) {
        c->dropped++;
        return;
    }
    c->at_us[c->count] = at_us;
    c->size[c->count] = (uint32_t)n;
    c->offset[c->count] = c->used;
    memcpy(c->bytes + c->used, d, n);
    c->used += n;
    c->count++;
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
    uint64_t le = htole64(v);
    memcpy(p, &le, n); // the low n bytes, little-endian
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
    uint64_t le = 0;
    memcpy(&le, p, n);
    return le64toh(le);
}

// Appends the last record to the capture file, flushed, so that a replay
// can read it while the capture still runs.
static void capture_write_last(capture *c)
{
    if (!c->out || c->write_failed)
        return;
    uint32_t i = c->count - 1;
    uint8_t head[12];
    put_le(head, c->at_us[i], 8);
    put_le(head + 8, c->size[i], 4);
    c->write_failed = fwrite(head, 1, sizeof head, c->out) != sizeof head ||
                      fwrite(c->bytes + c->offset[i], 1, c->size[i], c->out) != c->size[i] || fflush(c->out) != 0;
}

static bool capture_read(capture *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "keel-attack: %s: %s\n", path, strerror(errno));
        return false;
    }
    char magic[8];
    bool ok = fread(magic, 1, sizeof magic, f) == sizeof magic && memcmp(magic, MAGIC, sizeof MAGIC) == 0;
    uint8_t head[12];
    static uint8_t d[AT_DATAGRAM_MAX];
    while (ok && fread(head, 1, sizeof head, f) == sizeof head) {
        uint64_t n = get_le(head + 8, 4);
        ok = c->count < MAX_RECORDS && n <= AT_DATAGRAM_MAX && n <= MAX_BYTES - c->used && fread(d, 1, n, f) == n;
        if (ok)
            capture_add(c, get_le(head, 8), d, n);
    }
    ok = ok && feof(f);
    fclose(f);
    if (!ok)
        fprintf(stderr, "keel-attack: %s: not a keel-attack capture (or damaged)\n", path);
    return ok;
}

// Sends record i of a replay from `fd`; a RESPONSE is replaced by the fresh
// challenge in `fresh` (fresh[0] == 0: none).
static void replay_one(const capture *c, uint32_t i, int fd, uint8_t *fresh, at_tally *t, uint64_t *refreshed)
{
    const uint8_t *d = c->bytes + c->offset[i];
    size_t n = c->size[i];
    uint8_t reason;
    if (at_hs_type(d, n, &reason) == AT_HS_RESPONSE && fresh[0]) {
        fresh[5] = AT_HS_RESPONSE;
        d = fresh;
        n = NET_HS_RESPONSE_BYTES;
        (*refreshed)++;
    }
    at_tally_sent(t, n, send(fd, d, n, 0) == (ssize_t)n);
    if (d == fresh)
        fresh[0] = 0;
}

// Reads the server's replies on `fd`, keeping the last CHALLENGE in `fresh`.
static void read_replies(int fd, at_tally *t, uint8_t *fresh)
{
    static uint8_t buf[AT_DATAGRAM_MAX];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) >= 0 || errno == ECONNREFUSED || errno == EINTR) {
        if (n >= 0 && at_tally_reply(t, buf, (size_t)n, 0) == AT_HS_CHALLENGE)
            memcpy(fresh, buf, NET_HS_CHALLENGE_BYTES);
    }
}

// Replays the whole capture from `fd` with its original spacing, then waits
// `wait_ms` for replies (until `end_us` at most).
static void replay_all(const capture *c, int fd, uint32_t wait_ms, uint64_t end_us, at_tally *t, uint64_t *refreshed)
{
    uint8_t fresh[NET_HS_CHALLENGE_BYTES] = {0};
    const uint64_t start = at_now_us();
    for (uint32_t i = 0; i < c->count; i++) {
        uint64_t due = start + (c->at_us[i] - c->at_us[0]);
        while (at_now_us() < due && at_now_us() < end_us) {
            at_wait_readable(fd, due - at_now_us());
            read_replies(fd, t, fresh);
        }
        if (at_now_us() >= end_us)
            break;
        read_replies(fd, t, fresh);
        uint8_t reason;
        if (at_hs_type(c->bytes + c->offset[i], c->size[i], &reason) == AT_HS_RESPONSE) {
            // the replayed REQUEST's challenge may still be on its way
            for (uint64_t until = at_now_us() + NET_HS_RESEND_MS * 1000u * 5; !fresh[0] && at_now_us() < until;) {
                at_wait_readable(fd, 10000);
                read_replies(fd, t, fresh);
            }
        }
        replay_one(c, i, fd, fresh, t, refreshed);
    }
    for (uint64_t until = at_now_us() + (uint64_t)wait_ms * 1000u; at_now_us() < until && at_now_us() < end_us;) {
        at_wait_readable(fd, 10000);
        read_replies(fd, t, fresh);
    }
}

int at_capture(const at_options *o)
{
    capture c;
    if (!capture_alloc(&c)) {
        capture_free(&c);
        return 1;
    }
    int lfd = at_udp_socket(0x7F000001u, (uint16_t)o->listen_port, NULL);
    int up = lfd < 0 ? -1 : at_udp_socket(0x7F000001u, 0, &o->server);
    if (up < 0) {
        if (lfd >= 0)
            close(lfd);
        capture_free(&c);
        return 1;
    }
    if (o->out_file) {
        c.out = fopen(o->out_file, "wb");
        if (!c.out || fwrite(MAGIC, 1, sizeof MAGIC, c.out) != sizeof MAGIC || fflush(c.out) != 0) {
            fprintf(stderr, "keel-attack: cannot write %s: %s\n", o->out_file, strerror(errno));
            if (c.out)
                fclose(c.out);
            close(lfd);
            close(up);
            capture_free(&c);
            return 1;
        }
    }
    fprintf(stderr, "keel-attack: capture listening on 127.0.0.1:%u, upstream port %u, server %s\n",
            (unsigned)at_local_port(lfd), (unsigned)at_local_port(up), o->server_text);
    fflush(stderr);
    static uint8_t buf[AT_DATAGRAM_MAX];
    struct sockaddr_in client = {0};
    bool have_client = false, replayed = false;
    uint64_t down = 0, down_bytes = 0, others = 0, refreshed = 0, last_client = 0;
    at_tally session = {0}, rt = {0};
    const uint64_t start = at_now_us(), end = start + (uint64_t)o->seconds * 1000000u;
    while (at_now_us() < end && !replayed) {
        if (o->replay_after_s && c.count > 0 && at_now_us() - last_client >= (uint64_t)o->replay_after_s * 1000000u) {
            fprintf(stderr, "keel-attack: the client is quiet; replaying %u datagrams from upstream port %u\n", c.count,
                    (unsigned)at_local_port(up));
            replay_all(&c, up, o->wait_ms, end, &rt, &refreshed);
            replayed = true;
            break;
        }
        struct pollfd p[2] = {{lfd, POLLIN, 0}, {up, POLLIN, 0}};
        poll(p, 2, 10);
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n;
        while ((n = recvfrom(lfd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl)) >= 0) {
            if (!have_client) {
                client = from;
                have_client = true;
            }
            if (from.sin_addr.s_addr != client.sin_addr.s_addr || from.sin_port != client.sin_port) {
                others++; // one client only
            } else {
                last_client = at_now_us();
                uint32_t before = c.count;
                capture_add(&c, last_client - start, buf, (size_t)n);
                if (c.count > before)
                    capture_write_last(&c);
                at_tally_sent(&session, (size_t)n, send(up, buf, (size_t)n, 0) == n);
            }
            fl = sizeof from;
        }
        while ((n = recv(up, buf, sizeof buf, 0)) >= 0 || errno == ECONNREFUSED || errno == EINTR) {
            if (n < 0 || !have_client)
                continue;
            down++;
            down_bytes += (uint64_t)n;
            sendto(lfd, buf, (size_t)n, 0, (const struct sockaddr *)&client, sizeof client);
        }
    }
    close(lfd);
    close(up);
    bool ok = !c.out || (fclose(c.out) == 0 && !c.write_failed);
    if (!ok)
        fprintf(stderr, "keel-attack: cannot write %s\n", o->out_file);
    // the replay's tally is the line's; the session's in its own fields
    at_json_begin("capture", o, &rt);
    at_json_u64("captured", c.count);
    at_json_u64("captured_bytes", c.used);
    at_json_u64("not_recorded", c.dropped);
    at_json_u64("forwarded_up", session.sent);
    at_json_u64("forwarded_down", down);
    at_json_u64("forwarded_down_bytes", down_bytes);
    at_json_u64("other_clients_datagrams", others);
    at_json_u64("replayed", replayed ? 1 : 0);
    at_json_u64("responses_refreshed", refreshed);
    at_json_end();
    capture_free(&c);
    return ok ? 0 : 1;
}

int at_replay(const at_options *o)
{
    capture c;
    if (!capture_alloc(&c) || !capture_read(&c, o->in_file)) {
        capture_free(&c);
        return 1;
    }
    int fd = at_udp_socket(0x7F000001u, 0, &o->server);
    if (fd < 0) {
        capture_free(&c);
        return 1;
    }
    at_tally t = {0};
    uint64_t refreshed = 0;
    const uint64_t start = at_now_us();
    replay_all(&c, fd, o->wait_ms, start + (uint64_t)AT_MAX_SECONDS * 1000000u, &t, &refreshed);
    uint16_t port = at_local_port(fd);
    close(fd);
    at_json_begin("replay", o, &t);
    at_json_u64("records", c.count);
    at_json_u64("from_port", port);
    at_json_u64("responses_refreshed", refreshed);
    at_json_f("seconds", (double)(at_now_us() - start) / 1e6);
    at_json_end();
    capture_free(&c);
    return 0;
}
