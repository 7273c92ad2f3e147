// keel's client programs: their connect tokens; see tokens.h. MIT licence, see
// LICENSE.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tokens.h"

static bool read_token(token_source *t, const char *path, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: cannot open it", path);
        return false;
    }
    uint8_t extra;
    size_t n = fread(t->token, 1, sizeof t->token, f);
    bool longer = n == sizeof t->token && fread(&extra, 1, 1, f) == 1;
    fclose(f);
    if (n != sizeof t->token || longer) {
        snprintf(err, err_size, "%s: not a connect token (%s than %d bytes)", path, longer ? "longer" : "shorter",
                 NET_TOKEN_BYTES);
        return false;
    }
    net_token_public pub;
    size_t at = 0;
    net_token_result r = net_token_read_public(t->token, sizeof t->token, &pub, &at);
    if (r != NET_TOKEN_OK) {
        snprintf(err, err_size, "%s: not a usable connect token (offset %zu: %s)", path, at, net_token_result_name(r));
        return false;
    }
    return true;
}

bool tokens_load(token_source *t, const char *token_file, const char *key_file, uint64_t protocol_id, char *err,
                 size_t err_size)
{
    memset(t, 0, sizeof *t);
    t->protocol_id = protocol_id;
    if (token_file) {
        t->from_file = read_token(t, token_file, err, err_size);
        return t->from_file;
    }
    if (key_file) {
        t->from_key = net_token_key_read(key_file, &t->key, err, err_size);
        return t->from_key;
    }
    return true;
}

const uint8_t *tokens_for(token_source *t, uint32_t bot, const char *server, uint32_t port, char *err, size_t err_size)
{
    if (t->from_file)
        return t->token;
    if (!t->from_key)
        return NULL;
    net_token_params p;
    memset(&p, 0, sizeof p);
    p.protocol_id = t->protocol_id;
    p.create_time = (uint64_t)time(NULL);
    p.expire_time = p.create_time + TOKENS_LIFETIME_S;
    p.timeout_s = 10;
    p.client_id = bot;
    p.server_count = 1;
    char text[64];
    snprintf(text, sizeof text, "%s:%u", server, (unsigned)port);
    if (t->listed)
        p.servers[0] = t->listed_address;
    else if (!net_token_address_parse(text, &p.servers[0])) {
        snprintf(err, err_size, "cannot issue a token for '%s'", text);
        return NULL;
    }
    const char *why = NULL;
    if (!net_token_issue(&p, &t->key, t->token, &why)) {
        snprintf(err, err_size, "cannot issue a token: %s", why ? why : "libsodium failed");
        return NULL;
    }
    return t->token;
}

bool tokens_list_server(token_source *t, const char *address, char *err, size_t err_size)
{
    t->listed = false;
    if (!address)
        return true;
    if (!net_token_address_parse(address, &t->listed_address)) {
        snprintf(err, err_size, "--token-server: '%s' is not A.B.C.D:PORT or [IPv6]:PORT", address);
        return false;
    }
    t->listed = true;
    return true;
}

void tokens_wipe(token_source *t)
{
    net_token_key_wipe(&t->key);
    memset(t->token, 0, sizeof t->token); // a token is a password until it expires
}
