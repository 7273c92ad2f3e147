// keel: what the connect-token sources share. MIT licence, see LICENSE.
#ifndef KEEL_NET_TOKEN_INTERNAL_H
#define KEEL_NET_TOKEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/net_token.h>

/// sodium_init, checked (true when libsodium is ready; cheap after the first call).
bool net_token_crypto_ready(void);

/// The checks of a token's sent part (`size` bytes, NET_TOKEN_SEALED_BYTES
/// or a whole token) that read only its clear header: size, magic, version,
/// protocol id, expiry at `now`, create time not after expiry. No key and no
/// crypto: what net_token_open checks first, for a server to run before it
/// spends anything on a request.
net_token_result net_token_check_clear(const uint8_t *data, size_t size, uint64_t protocol_id, uint64_t now);

#endif
