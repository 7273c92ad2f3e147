// keel programs: HOST:PORT and host names (keel_addr.h). MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include "keel_addr.h"

#include <stdio.h>
#include <string.h>

#include "keel_app.h"

#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

bool keel_addr_split(const char *text, uint32_t lo_port, char *host, size_t host_size, uint32_t *port, char *err,
                     size_t err_size)
{
    const char *colon = text ? strrchr(text, ':') : NULL;
    if (!colon || colon == text) {
        snprintf(err, err_size, "'%s' is not HOST:PORT", text ? text : "");
        return false;
    }
    const char *h = text;
    size_t n = (size_t)(colon - text);
    if (text[0] == '[') { // [IPv6]:PORT
        if (n < 3 || text[n - 1] != ']') {
            snprintf(err, err_size, "'%s' is not HOST:PORT or [IPv6]:PORT", text);
            return false;
        }
        h = text + 1;
        n -= 2;
    }
    if (n >= host_size) {
        snprintf(err, err_size, "the host in '%s' is too long", text);
        return false;
    }
    if (!keel_app_parse_u32(colon + 1, lo_port, 65535, port)) {
        snprintf(err, err_size, "'%s': the port is not a whole number in %u..65535", text, (unsigned)lo_port);
        return false;
    }
    memcpy(host, h, n);
    host[n] = '\0';
    return true;
}

static int lookup(const char *host, int family, struct addrinfo **out)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = family;
    hints.ai_socktype = SOCK_DGRAM;
    return getaddrinfo(host, NULL, &hints, out);
}

bool keel_addr_ipv4(const char *host, char *dotted, size_t dotted_size, char *err, size_t err_size)
{
#if defined(_WIN32)
    static bool started;
    if (!started) {
        WSADATA wsa;
        if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
            snprintf(err, err_size, "cannot resolve '%s': Winsock did not start", host);
            return false;
        }
        started = true;
    }
#endif
    if (!host[0]) {
        snprintf(err, err_size, "no host given");
        return false;
    }
    struct addrinfo *list = NULL;
    int rc = lookup(host, AF_INET, &list);
    if (rc != 0 || !list) {
        struct addrinfo *any = NULL;
        bool v6 = lookup(host, AF_UNSPEC, &any) == 0 && any;
        if (any)
            freeaddrinfo(any);
        if (v6 || strchr(host, ':'))
            snprintf(err, err_size, "'%s' has no IPv4 address: ENet 1.3, keel's transport, carries IPv4 only", host);
        else
            snprintf(err, err_size, "cannot resolve '%s': %s", host, rc ? gai_strerror(rc) : "no address");
        return false;
    }
    const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)list->ai_addr;
    const unsigned char *b = (const unsigned char *)&sin->sin_addr;
    snprintf(dotted, dotted_size, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
    freeaddrinfo(list);
    return true;
}

bool keel_addr_resolve(const char *text, uint32_t lo_port, char *dotted, size_t dotted_size, uint32_t *port, char *err,
                       size_t err_size)
{
    char host[256];
    return keel_addr_split(text, lo_port, host, sizeof host, port, err, err_size) &&
           keel_addr_ipv4(host, dotted, dotted_size, err, err_size);
}
