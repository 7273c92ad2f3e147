// keel tests: connect tokens to test with (token_fixture.c). MIT licence.
#ifndef KEEL_TEST_TOKEN_FIXTURE_H
#define KEEL_TEST_TOKEN_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/net_token.h>

enum { KEEL_TEST_PROTOCOL = 0x4b45454c, KEEL_TEST_CREATE = 1000000, KEEL_TEST_EXPIRE = 1000300 };

/// The tests' token: protocol KEEL_TEST_PROTOCOL, created KEEL_TEST_CREATE,
/// expiring KEEL_TEST_EXPIRE, timeout 10 s, client 0x1122334455667788,
/// servers 127.0.0.1:40000 and [::1]:40001, user data "alice".
void keel_test_token_params(net_token_params *p);
/// The first server of those params (127.0.0.1:40000).
net_token_address keel_test_token_server(void);

/// Opens a token's sealed part with `key` (failing the test if it does not
/// open), lets `edit` change the 960 plaintext bytes, and seals them again
/// under the same nonce: a token only a backend could have written, for the
/// checks that come after the tag.
void keel_test_token_reseal(uint8_t *token, const net_token_key *key, void (*edit)(uint8_t *plain, void *ctx),
                            void *ctx);

/// Every one of the n bytes at p is zero (a wiped secret, a refused output).
bool keel_test_zeroed(const void *p, size_t n);

static inline void keel_test_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void keel_test_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

#endif
