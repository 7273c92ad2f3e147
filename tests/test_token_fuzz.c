// keel tests: the connect-token decoders under damaged input. MIT licence, see LICENSE.
//
// Bounded and reproducible (a fixed seed; KEEL_FUZZ_ROUNDS changes the count,
// KEEL_FUZZ_VERBOSE=1 prints how often each refusal came): tokens from three
// seeds are damaged (bits and bytes changed, fields set to extremes, cut,
// lengthened, spliced, or replaced by random bytes) and handed to
// net_token_read_public and net_token_open. Neither may crash or read out of
// bounds (ASan and UBSan in the sanitizer tree), every answer is a known
// result, a refusal leaves its output zeroed, and what is accepted is in its
// ranges. net_token_open accepts only the undamaged sealed bytes. The private
// part's decoder is fuzzed behind the tag too: plaintext damaged and sealed
// again (token_fixture.c), as only a backend could. Key files the same way.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <keel/net_token.h>

#include "test_support.h"
#include "token_fixture.h"

TestSuite(token_fuzz, .timeout = 300);

enum { SEEDS = 3, CAP = NET_TOKEN_BYTES + 512 };

static net_token_key key;
static uint8_t seeds[SEEDS][NET_TOKEN_BYTES];
static net_token_address seed_server[SEEDS];
static uint64_t results[2][NET_TOKEN_RESULT_COUNT]; // [read_public, open]

static void make_seeds(void)
{
    cr_assert(net_token_key_generate(&key));
    net_token_params p;
    keel_test_token_params(&p);
    cr_assert(net_token_issue(&p, &key, seeds[0], NULL));
    seed_server[0] = p.servers[0];
    p.server_count = NET_TOKEN_MAX_SERVERS;
    for (uint32_t i = 0; i < p.server_count; i++) {
        cr_assert(net_token_address_parse(i % 3 ? "192.168.1.20:7777" : "[fe80::1]:7000", &p.servers[i]));
        p.servers[i].port = (uint16_t)(p.servers[i].port + i);
    }
    p.user_data_size = NET_TOKEN_MAX_USER_DATA;
    memset(p.user_data, 'x', sizeof p.user_data);
    cr_assert(net_token_issue(&p, &key, seeds[1], NULL));
    seed_server[1] = p.servers[31];
    p.server_count = 1;
    p.user_data_size = 0;
    p.timeout_s = NET_TOKEN_MAX_TIMEOUT;
    cr_assert(net_token_issue(&p, &key, seeds[2], NULL));
    seed_server[2] = p.servers[0];
}

// The offsets of the documented fields: header, public part, private part.
static const size_t FIELDS[] = {0, 4, 8, 16, 24, 1032, 1036, 1040, 1040 + 19, 1040 + 31 * 19};
static const size_t PLAIN_FIELDS[] = {0, 8, 16, 20, 88, 92, 92 + 17, 92 + 19, 700, 956};

static void put_extreme(keel_rng *rng, uint8_t *at, size_t room)
{
    static const uint64_t values[] = {
        0, 1, 2, 32, 33, 256, 257, 3600, 3601, 0xffffffffu, UINT64_MAX, KEEL_TEST_CREATE, KEEL_TEST_EXPIRE};
    uint64_t v = keel_rng_range(rng, 0, 3) ? values[keel_rng_range(rng, 0, 12)] : keel_rng_next(rng);
    size_t width = keel_rng_range(rng, 0, 1) ? 4 : 8;
    if (width > room)
        width = room;
    for (size_t i = 0; i < width; i++)
        at[i] = (uint8_t)(v >> (8 * i));
}

static void mutate(keel_rng *rng, uint8_t *d, size_t *n)
{
    switch (keel_rng_range(rng, 0, 7)) {
    case 0: // a few bits
    case 1:
        for (int i = (int)keel_rng_range(rng, 1, 4); i > 0 && *n; i--)
            d[keel_rng_range(rng, 0, (int64_t)*n - 1)] ^= (uint8_t)(1u << keel_rng_range(rng, 0, 7));
        break;
    case 2: // a byte set
        if (*n)
            d[keel_rng_range(rng, 0, (int64_t)*n - 1)] = (uint8_t)keel_rng_range(rng, 0, 255);
        break;
    case 3: { // a field set to an extreme
        size_t at = FIELDS[keel_rng_range(rng, 0, sizeof FIELDS / sizeof FIELDS[0] - 1)];
        if (at < *n)
            put_extreme(rng, d + at, *n - at);
        break;
    }
    case 4: { // cut, often right around the two sizes that count
        static const int64_t near[] = {0, 31, 32, 56, NET_TOKEN_SEALED_BYTES, NET_TOKEN_BYTES};
        int64_t to = keel_rng_range(rng, 0, 1) ? near[keel_rng_range(rng, 0, 5)] + keel_rng_range(rng, -1, 1)
                                               : keel_rng_range(rng, 0, (int64_t)*n);
        if (to >= 0 && (size_t)to < *n)
            *n = (size_t)to;
        break;
    }
    case 5: // lengthened with random bytes
        while (*n < CAP && keel_rng_range(rng, 0, 7))
            d[(*n)++] = (uint8_t)keel_rng_range(rng, 0, 255);
        break;
    case 6: { // a span from another seed spliced in at the same place
        const uint8_t *other = seeds[keel_rng_range(rng, 0, SEEDS - 1)];
        size_t at = (size_t)keel_rng_range(rng, 0, NET_TOKEN_BYTES - 1);
        size_t len = (size_t)keel_rng_range(rng, 1, 200);
        if (at + len > NET_TOKEN_BYTES)
            len = NET_TOKEN_BYTES - at;
        if (at + len <= *n)
            memcpy(d + at, other + at, len);
        break;
    }
    default: // random bytes, keeping the magic and version now and then
        *n = (size_t)keel_rng_range(rng, 0, CAP);
        for (size_t i = 0; i < *n; i++)
            d[i] = (uint8_t)keel_rng_range(rng, 0, 255);
        if (*n >= 8 && keel_rng_range(rng, 0, 1))
            memcpy(d, "KTOK\1\0\0\0", 8);
        break;
    }
}

static void check_address(const net_token_address *a)
{
    cr_assert(a->family == NET_TOKEN_IPV4 || a->family == NET_TOKEN_IPV6);
    cr_assert_neq(a->port, 0);
    if (a->family == NET_TOKEN_IPV4)
        cr_assert(keel_test_zeroed(a->ip + 4, 12));
}

static void check_private(const net_token_private *p)
{
    cr_assert(p->create_time <= p->expire_time);
    cr_assert(p->timeout_s >= 1 && p->timeout_s <= NET_TOKEN_MAX_TIMEOUT);
    cr_assert(p->server_count >= 1 && p->server_count <= NET_TOKEN_MAX_SERVERS);
    cr_assert_leq(p->user_data_size, NET_TOKEN_MAX_USER_DATA);
    for (uint32_t i = 0; i < p->server_count; i++)
        check_address(&p->servers[i]);
}

static void decode(const uint8_t *d, size_t n, int s)
{
    net_token_public pub;
    size_t at = 0;
    net_token_result r = net_token_read_public(d, n, &pub, &at);
    cr_assert_lt((unsigned)r, NET_TOKEN_RESULT_COUNT);
    results[0][r]++;
    if (r == NET_TOKEN_OK) {
        cr_assert_eq(n, NET_TOKEN_BYTES);
        cr_assert(pub.create_time <= pub.expire_time);
        cr_assert(pub.timeout_s >= 1 && pub.timeout_s <= NET_TOKEN_MAX_TIMEOUT);
        cr_assert(pub.server_count >= 1 && pub.server_count <= NET_TOKEN_MAX_SERVERS);
        for (uint32_t i = 0; i < pub.server_count; i++)
            check_address(&pub.servers[i]);
    } else {
        cr_assert(keel_test_zeroed(&pub, sizeof pub));
        cr_assert(at < NET_TOKEN_BYTES || at == n, "offset %zu of %zu bytes", at, n);
    }
    net_token_private priv;
    r = net_token_open(d, n, &key, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE, &seed_server[s], &priv);
    cr_assert_lt((unsigned)r, NET_TOKEN_RESULT_COUNT);
    results[1][r]++;
    if (r == NET_TOKEN_OK) {
        cr_assert(n == NET_TOKEN_SEALED_BYTES || n == NET_TOKEN_BYTES);
        cr_assert_eq(memcmp(d, seeds[s], NET_TOKEN_SEALED_BYTES), 0, "damaged sealed bytes opened");
        check_private(&priv);
    } else {
        cr_assert(keel_test_zeroed(&priv, sizeof priv));
    }
}

typedef struct plain_ctx {
    keel_rng *rng;
} plain_ctx;

static void damage_plain(uint8_t *plain, void *ctx)
{
    keel_rng *rng = ((plain_ctx *)ctx)->rng;
    for (int i = (int)keel_rng_range(rng, 1, 3); i > 0; i--) {
        if (keel_rng_range(rng, 0, 1)) {
            size_t at = PLAIN_FIELDS[keel_rng_range(rng, 0, sizeof PLAIN_FIELDS / sizeof PLAIN_FIELDS[0] - 1)];
            put_extreme(rng, plain + at, NET_TOKEN_PRIVATE_BYTES - at);
        } else {
            plain[keel_rng_range(rng, 0, NET_TOKEN_PRIVATE_BYTES - 1)] ^= (uint8_t)keel_rng_range(rng, 1, 255);
        }
    }
}

Test(token_fuzz, damaged_tokens_are_refused_cleanly_and_only_whole_ones_open)
{
    uint64_t rounds = 20000;
    const char *env = getenv("KEEL_FUZZ_ROUNDS");
    if (env && *env)
        rounds = strtoull(env, NULL, 10);
    make_seeds();
    for (int s = 0; s < SEEDS; s++) {
        net_token_private priv;
        cr_assert_eq(net_token_open(seeds[s], NET_TOKEN_BYTES, &key, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE,
                                    &seed_server[s], &priv),
                     NET_TOKEN_OK, "seed %d", s);
    }
    keel_rng rng = {20261125};
    uint8_t buf[CAP];
    uint64_t behind_tag = 0, behind_tag_open = 0;
    for (uint64_t round = 0; round < rounds; round++) {
        int s = (int)keel_rng_range(&rng, 0, SEEDS - 1);
        memcpy(buf, seeds[s], NET_TOKEN_BYTES);
        size_t n = NET_TOKEN_BYTES;
        if (keel_rng_range(&rng, 0, 4) == 0) { // behind the tag
            plain_ctx ctx = {&rng};
            keel_test_token_reseal(buf, &key, damage_plain, &ctx);
            net_token_private priv;
            net_token_result r =
                net_token_open(buf, n, &key, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE, &seed_server[s], &priv);
            cr_assert(r == NET_TOKEN_OK || r == NET_TOKEN_MALFORMED || r == NET_TOKEN_WRONG_SERVER, "%s",
                      net_token_result_name(r));
            if (r == NET_TOKEN_OK)
                check_private(&priv), behind_tag_open++;
            else
                cr_assert(keel_test_zeroed(&priv, sizeof priv));
            behind_tag++;
            continue;
        }
        for (int m = (int)keel_rng_range(&rng, 1, 3); m > 0; m--)
            mutate(&rng, buf, &n);
        decode(buf, n, s);
    }
    cr_log_info("token fuzz: %llu rounds, %llu of them behind the tag (%llu opened); read_public: %llu read; "
                "open: %llu opened, %llu failed the tag",
                (unsigned long long)rounds, (unsigned long long)behind_tag, (unsigned long long)behind_tag_open,
                (unsigned long long)results[0][NET_TOKEN_OK], (unsigned long long)results[1][NET_TOKEN_OK],
                (unsigned long long)results[1][NET_TOKEN_TAG]);
    if (getenv("KEEL_FUZZ_VERBOSE"))
        for (int r = 0; r < NET_TOKEN_RESULT_COUNT; r++)
            cr_log_info("%-22s read_public %7llu  open %7llu", net_token_result_name((net_token_result)r),
                        (unsigned long long)results[0][r], (unsigned long long)results[1][r]);
    net_token_key_wipe(&key);
}

Test(token_fuzz, damaged_key_files_are_refused_with_a_line)
{
    static const char good[] = "# backend key\nkeel-token-key 1 "
                               "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
    keel_rng rng = {77};
    char buf[256], err[256];
    unsigned read = 0, refused = 0;
    for (int round = 0; round < 5000; round++) {
        size_t n = sizeof good - 1;
        memcpy(buf, good, n);
        for (int m = (int)keel_rng_range(&rng, 1, 3); m > 0; m--) {
            int64_t kind = keel_rng_range(&rng, 0, 3);
            if (kind == 0 && n)
                n = (size_t)keel_rng_range(&rng, 0, (int64_t)n - 1);
            else if (kind == 1 && n < sizeof buf)
                buf[n++] = (char)keel_rng_range(&rng, 0, 255);
            else if (n)
                buf[keel_rng_range(&rng, 0, (int64_t)n - 1)] =
                    kind == 2 ? (char)keel_rng_range(&rng, 0, 255) : "0aF#\n\r \0g"[keel_rng_range(&rng, 0, 9)];
        }
        net_token_key k;
        err[0] = '\0';
        if (net_token_key_parse(buf, n, &k, err, sizeof err)) {
            read++;
        } else {
            refused++;
            cr_assert(strncmp(err, "line ", 5) == 0, "'%s'", err);
            cr_assert(keel_test_zeroed(&k, sizeof k));
        }
    }
    cr_log_info("key file fuzz: 5000 rounds, %u read, %u refused", read, refused);
    cr_assert_gt(read, 0);
    cr_assert_gt(refused, 0);
}
