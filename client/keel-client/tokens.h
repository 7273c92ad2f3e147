// keel-client: connect tokens for the bots (secure mode, docs/security.md
// "The handshake"). One token from a file (--token: it joins from one
// address, so one bot), or a token per bot issued here with the backend key
// (--token-key: a test rig's bots issue their own; client id = bot number,
// the server --server:--port, valid TOKENS_LIFETIME_S from the clock).
// MIT licence, see LICENSE.
#ifndef KEEL_CLIENT_TOKENS_H
#define KEEL_CLIENT_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/net_token.h>

#define TOKENS_LIFETIME_S 300u

typedef struct token_source {
    bool from_file, from_key;
    uint64_t protocol_id;
    net_token_key key;
    uint8_t token[NET_TOKEN_BYTES];
} token_source;

/// Reads the token file or the key file (at most one is non-NULL; neither:
/// insecure). False with a message naming the file in err.
bool tokens_load(token_source *t, const char *token_file, const char *key_file, uint64_t protocol_id, char *err,
                 size_t err_size);
/// The token for bot `bot` (1..), NULL in insecure mode or (err set) when
/// issuing fails.
const uint8_t *tokens_for(token_source *t, uint32_t bot, const char *server, uint32_t port, char *err,
                          size_t err_size);
/// Wipes the key and the token.
void tokens_wipe(token_source *t);

#endif
