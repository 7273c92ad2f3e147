// keel's client programs (keel-client, keel-play): their connect tokens
// (secure mode, docs/security.md "The handshake"). One token from a file
// (--token: it joins from one address, so one connection), or a token per
// connection issued here with the backend key (--token-key: a test rig's or
// a developer's clients issue their own; the client id is the caller's --
// keel-client's bot number, keel-play's --client-id --, the server the one
// connected to, valid TOKENS_LIFETIME_S from the clock). The key stays in
// memory only until tokens_wipe. MIT licence, see LICENSE.
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
    bool listed;                      ///< tokens_list_server was given an address
    net_token_address listed_address; ///< ... this one
} token_source;

/// Reads the token file or the key file (at most one is non-NULL; neither:
/// insecure). False with a message naming the file in err.
bool tokens_load(token_source *t, const char *token_file, const char *key_file, uint64_t protocol_id, char *err,
                 size_t err_size);
/// Tokens issued with the key list `address` ("A.B.C.D:PORT" or
/// "[IPv6]:PORT", numeric: the server's own address, its --public) instead of
/// the address connected to (a relay's, a NAT's or a port forward's). NULL
/// keeps the default. False with a message in err.
bool tokens_list_server(token_source *t, const char *address, char *err, size_t err_size);
/// The token for client id `bot` (keel-client: the bot, 1..), NULL in insecure mode or (err set) when
/// issuing fails.
const uint8_t *tokens_for(token_source *t, uint32_t bot, const char *server, uint32_t port, char *err, size_t err_size);
/// Wipes the key and the token.
void tokens_wipe(token_source *t);

#endif
