// keel: the ENet host, absent. MIT licence, see LICENSE.
//
// For builds without ENet (or without sockets at all): the cross-build
// matrix (scripts/cross-check.sh, whose targets have no ENet package) and
// the browser verifier (scripts/build-web.sh: a browser gives WebAssembly no
// UDP sockets). The entry points of the ENet back end that net/src/host.c and
// the programs call answer as a host that cannot be made, so the rest of
// net/ links unchanged; host_enet*.c, the tokens, the handshake and the
// sealing (ENet or libsodium) are left out of those builds. Not part of the
// CMake build (net/CMakeLists.txt globs net/src/*.c only).
#include "host_impl.h"

static net_host *refuse(const char **error)
{
    if (error)
        *error = "this build of keel has no sockets (no ENet)";
    return NULL;
}

net_host *net_host_enet_listen(const char *address, uint16_t port, const net_host_config *config, const char **error)
{
    (void)address, (void)port, (void)config;
    return refuse(error);
}

net_host *net_host_enet_connect(const char *address, uint16_t port, const net_host_config *config, uint32_t mtu,
                                const char **error)
{
    (void)address, (void)port, (void)config, (void)mtu;
    return refuse(error);
}

uint32_t net_host_enet_peer_mtu(const net_host *host, uint32_t peer)
{
    (void)host, (void)peer;
    return 0;
}

uint32_t net_host_enet_peers_in_use(const net_host *host)
{
    (void)host;
    return 0;
}

bool net_host_enet_datagrams(const net_host *host, uint64_t *sent, uint64_t *received)
{
    (void)host, (void)sent, (void)received;
    return false;
}
