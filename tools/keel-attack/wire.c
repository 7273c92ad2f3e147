// keel-attack: datagram layouts, addresses, sockets and the clock. See
// attack.h. MIT licence, see LICENSE.
//
// The layouts, written from their documentation:
//   handshake header  7F FF 'k' 'h' | version | type, then the client's
//                     8-byte nonce; a REQUEST carries a token's sent part
//                     (NET_TOKEN_SEALED_BYTES) after it; a DENIED one reason
//                     byte; each type has one size (NET_HS_*_BYTES)
//   ENet CONNECT      (enet/protocol.h, big-endian) protocol header: peer id
//                     u16 (0xFFF: no peer yet, | 0x8000: a sent time
//                     follows), sent time u16; command header: command u8
//                     (2 | 0x80, acknowledge), channel u8 (0xFF), reliable
//                     sequence u16 (1); then outgoing peer id u16, incoming
//                     and outgoing session ids u8 u8, and u32s: MTU, window
//                     size, channel count, incoming and outgoing bandwidth,
//                     throttle interval, acceleration, deceleration, connect
//                     id, data
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "attack.h"

uint64_t at_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void at_sleep_until_us(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000u), (long)(t % 1000000u) * 1000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

uint64_t at_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t at_seed(uint64_t seed)
{
    if (seed)
        return seed;
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
        s = at_now_us() ^ ((uint64_t)getpid() << 32);
    return s;
}

void at_rand_fill(uint64_t *state, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = at_rand(state);
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(out + i, &v, k);
    }
}

bool at_parse_loopback(const char *text, struct sockaddr_in *out)
{
    memset(out, 0, sizeof *out);
    const char *colon = strrchr(text, ':');
    char host[32];
    if (!colon || colon == text || (size_t)(colon - text) >= sizeof host)
        return false;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end = NULL;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (errno || !colon[1] || *end || colon[1] < '0' || colon[1] > '9' || port < 1 || port > 65535)
        return false;
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
        return false;
    return (ntohl(out->sin_addr.s_addr) >> 24) == 127;
}

bool at_read_token(const char *path, uint8_t token[NET_TOKEN_BYTES], char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return false;
    }
    uint8_t extra;
    size_t n = fread(token, 1, NET_TOKEN_BYTES, f);
    bool longer = n == NET_TOKEN_BYTES && fread(&extra, 1, 1, f) == 1;
    fclose(f);
    net_token_public pub;
    size_t at = 0;
    net_token_result r =
        n == NET_TOKEN_BYTES && !longer ? net_token_read_public(token, n, &pub, &at) : NET_TOKEN_BAD_SIZE;
    if (r != NET_TOKEN_OK) {
        snprintf(err, err_size, "%s: not a connect token (%s, offset %zu)", path, net_token_result_name(r), at);
        return false;
    }
    return true;
}

void at_hs_header(uint8_t *out, uint8_t type, const uint8_t nonce[AT_HS_NONCE])
{
    const uint8_t head[AT_HS_HEADER] = {0x7F, 0xFF, 'k', 'h', NET_HS_VERSION, type};
    memcpy(out, head, sizeof head);
    memcpy(out + sizeof head, nonce, AT_HS_NONCE);
}

_Static_assert(AT_HS_BODY + NET_TOKEN_SEALED_BYTES == NET_HS_REQUEST_BYTES, "the request's layout");

size_t at_hs_request(uint8_t out[NET_HS_REQUEST_BYTES], const uint8_t nonce[AT_HS_NONCE], const uint8_t *sent,
                     uint64_t *rng)
{
    at_hs_header(out, AT_HS_REQUEST, nonce);
    if (sent)
        memcpy(out + AT_HS_BODY, sent, NET_TOKEN_SEALED_BYTES);
    else
        at_rand_fill(rng, out + AT_HS_BODY, NET_TOKEN_SEALED_BYTES);
    return NET_HS_REQUEST_BYTES;
}

uint8_t at_hs_type(const uint8_t *d, size_t n, uint8_t *reason)
{
    static const size_t sizes[AT_HS_TYPES] = {0,
                                              NET_HS_REQUEST_BYTES,
                                              NET_HS_CHALLENGE_BYTES,
                                              NET_HS_RESPONSE_BYTES,
                                              NET_HS_ADMITTED_BYTES,
                                              NET_HS_DENIED_BYTES};
    *reason = 0;
    if (n < AT_HS_BODY || d[0] != 0x7F || d[1] != 0xFF || d[2] != 'k' || d[3] != 'h' || d[4] != NET_HS_VERSION ||
        d[5] == 0 || d[5] >= AT_HS_TYPES || n != sizes[d[5]])
        return 0;
    if (d[5] == AT_HS_DENIED)
        *reason = d[AT_HS_BODY];
    return d[5];
}

static void put_be(uint8_t *p, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

size_t at_enet_connect(uint8_t out[AT_ENET_CONNECT_BYTES], uint32_t connect_id)
{
    memset(out, 0, AT_ENET_CONNECT_BYTES);
    put_be(out + 0, 0x8000u | 0x0FFFu, 2); // sent time follows; peer id 0xFFF
    put_be(out + 2, (uint16_t)at_now_us(), 2);
    out[4] = 2 | 0x80; // CONNECT, acknowledge
    out[5] = 0xFF;     // channel
    put_be(out + 6, 1, 2);
    put_be(out + 8, 0, 2); // outgoing peer id
    out[10] = 0xFF;        // incoming session id
    out[11] = 0xFF;        // outgoing session id
    const uint32_t fields[10] = {1392, 32768, 2, 0, 0, 5000, 2, 2, connect_id, 0};
    for (int i = 0; i < 10; i++)
        put_be(out + 12 + 4 * i, fields[i], 4);
    return AT_ENET_CONNECT_BYTES;
}

int at_udp_socket(uint32_t bind_ip, uint16_t port, const struct sockaddr_in *to)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "keel-attack: socket: %s\n", strerror(errno));
        return -1;
    }
    int big = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct sockaddr_in local;
    memset(&local, 0, sizeof local);
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(bind_ip);
    local.sin_port = htons(port);
    if (bind(fd, (struct sockaddr *)&local, sizeof local) != 0 ||
        (to && connect(fd, (const struct sockaddr *)to, sizeof *to) != 0)) {
        fprintf(stderr, "keel-attack: socket on port %u: %s\n", (unsigned)port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

uint16_t at_local_port(int fd)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return 0;
    return ntohs(a.sin_port);
}

bool at_wait_readable(int fd, uint64_t us)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, (int)((us + 999) / 1000)) > 0;
}
