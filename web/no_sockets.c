// keel in the browser: the real-socket host is absent. MIT licence, see LICENSE.
//
// The page's build (scripts/build-web.sh) has no ENet: a browser gives a
// WebAssembly module no UDP sockets, and the verifier never opens a
// connection. The two entry points of the ENet back end that net/src/host.c
// calls answer as a host that cannot be made, so the rest of net/ links
// unchanged (host_enet*.c, the tokens, the handshake and the sealing,
// which need ENet or libsodium, are not built).
#include "host_impl.h"

static net_host *refuse(const char **error)
{
    if (error)
        *error = "keel's browser build has no sockets (no ENet)";
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
