// keel tests: connect tokens to test with. MIT licence.
#include "token_fixture.h"

#include <criterion/criterion.h>
#include <sodium.h>
#include <string.h>

bool keel_test_zeroed(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= b[i];
    return acc == 0;
}

void keel_test_token_params(net_token_params *p)
{
    memset(p, 0, sizeof *p);
    p->protocol_id = KEEL_TEST_PROTOCOL;
    p->create_time = KEEL_TEST_CREATE;
    p->expire_time = KEEL_TEST_EXPIRE;
    p->timeout_s = 10;
    p->client_id = 0x1122334455667788ull;
    p->server_count = 2;
    cr_assert(net_token_address_parse("127.0.0.1:40000", &p->servers[0]));
    cr_assert(net_token_address_parse("[::1]:40001", &p->servers[1]));
    p->user_data_size = 5;
    memcpy(p->user_data, "alice", 5);
}

net_token_address keel_test_token_server(void)
{
    net_token_address a;
    cr_assert(net_token_address_parse("127.0.0.1:40000", &a));
    return a;
}

void keel_test_token_reseal(uint8_t *token, const net_token_key *key, void (*edit)(uint8_t *plain, void *ctx),
                            void *ctx)
{
    const size_t nonce = NET_TOKEN_HEADER_BYTES, sealed = nonce + NET_TOKEN_NONCE_BYTES;
    uint8_t plain[NET_TOKEN_PRIVATE_BYTES];
    unsigned long long n = 0;
    cr_assert_eq(crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &n, NULL, token + sealed,
                                                            NET_TOKEN_PRIVATE_BYTES + NET_TOKEN_TAG_BYTES, token,
                                                            NET_TOKEN_HEADER_BYTES, token + nonce, key->bytes),
                 0, "the token does not open");
    cr_assert_eq(n, NET_TOKEN_PRIVATE_BYTES);
    edit(plain, ctx);
    crypto_aead_xchacha20poly1305_ietf_encrypt(token + sealed, &n, plain, sizeof plain, token, NET_TOKEN_HEADER_BYTES,
                                               NULL, token + nonce, key->bytes);
}
