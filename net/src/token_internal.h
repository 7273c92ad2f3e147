// keel: what the connect-token sources share. MIT licence, see LICENSE.
#ifndef KEEL_NET_TOKEN_INTERNAL_H
#define KEEL_NET_TOKEN_INTERNAL_H

#include <stdbool.h>

/// sodium_init, checked (true when libsodium is ready; cheap after the first call).
bool net_token_crypto_ready(void);

#endif
