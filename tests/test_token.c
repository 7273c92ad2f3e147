// keel tests: connect tokens issued, read and opened, and every refusal.
// MIT licence, see LICENSE.
//
// The layout is checked against docs/security.md's tables byte by byte (the
// header and public fields at their documented offsets; the private part's
// fields by re-sealing edited plaintext, token_fixture.c), so a backend
// written from the document writes tokens keel opens. Key files:
// test_token_key.c; the decoders under fuzzing: test_token_fuzz.c.
#include <criterion/criterion.h>
#include <string.h>

#include <keel/net_token.h>

#include "token_fixture.h"

static net_token_key key;
static net_token_params params;
static uint8_t token[NET_TOKEN_BYTES];

static void setup(void)
{
    cr_assert(net_token_key_generate(&key));
    keel_test_token_params(&params);
    const char *why = NULL;
    cr_assert(net_token_issue(&params, &key, token, &why), "%s", why);
}

TestSuite(token, .init = setup, .timeout = 120);

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static net_token_result open_at(const uint8_t *t, size_t size, uint64_t now, net_token_private *out)
{
    net_token_address server = keel_test_token_server();
    return net_token_open(t, size, &key, KEEL_TEST_PROTOCOL, now, &server, out);
}

Test(token, round_trip_gives_the_client_and_the_server_what_the_backend_wrote)
{
    net_token_public pub;
    cr_assert_eq(net_token_read_public(token, sizeof token, &pub, NULL), NET_TOKEN_OK);
    cr_assert_eq(pub.version, NET_TOKEN_VERSION);
    cr_assert_eq(pub.protocol_id, KEEL_TEST_PROTOCOL);
    cr_assert_eq(pub.create_time, KEEL_TEST_CREATE);
    cr_assert_eq(pub.expire_time, KEEL_TEST_EXPIRE);
    cr_assert_eq(pub.timeout_s, 10);
    cr_assert_eq(pub.server_count, 2);
    for (int i = 0; i < 2; i++)
        cr_assert(net_token_address_equal(&pub.servers[i], &params.servers[i]));

    net_token_private priv;
    cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_CREATE, &priv), NET_TOKEN_OK);
    cr_assert_eq(priv.client_id, 0x1122334455667788ull);
    cr_assert_eq(priv.protocol_id, KEEL_TEST_PROTOCOL);
    cr_assert_eq(priv.create_time, KEEL_TEST_CREATE);
    cr_assert_eq(priv.expire_time, KEEL_TEST_EXPIRE);
    cr_assert_eq(priv.timeout_s, 10);
    cr_assert_eq(priv.server_count, 2);
    cr_assert_eq(priv.user_data_size, 5);
    cr_assert_arr_eq(priv.user_data, "alice", 5);
    cr_assert(keel_test_zeroed(priv.user_data + 5, NET_TOKEN_MAX_USER_DATA - 5));
    // the client and the server hold the same two session keys, and they differ
    cr_assert_arr_eq(priv.client_to_server_key, pub.client_to_server_key, NET_TOKEN_KEY_BYTES);
    cr_assert_arr_eq(priv.server_to_client_key, pub.server_to_client_key, NET_TOKEN_KEY_BYTES);
    cr_assert(memcmp(pub.client_to_server_key, pub.server_to_client_key, NET_TOKEN_KEY_BYTES) != 0);

    // what a client sends (the sealed bytes alone) opens the same, at either listed server
    net_token_private again;
    net_token_address v6;
    cr_assert(net_token_address_parse("[::1]:40001", &v6));
    cr_assert_eq(net_token_open(token, NET_TOKEN_SEALED_BYTES, &key, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE, &v6, &again),
                 NET_TOKEN_OK);
    cr_assert_eq(memcmp(&again, &priv, sizeof priv), 0);
    net_token_private_wipe(&priv);
    net_token_private_wipe(&again);
}

Test(token, two_tokens_for_the_same_player_share_no_nonce_and_no_key)
{
    uint8_t other[NET_TOKEN_BYTES];
    cr_assert(net_token_issue(&params, &key, other, NULL));
    cr_assert_arr_eq(other, token, NET_TOKEN_HEADER_BYTES); // same header
    cr_assert(memcmp(other + 32, token + 32, NET_TOKEN_NONCE_BYTES) != 0);
    net_token_public a, b;
    cr_assert_eq(net_token_read_public(token, sizeof token, &a, NULL), NET_TOKEN_OK);
    cr_assert_eq(net_token_read_public(other, sizeof other, &b, NULL), NET_TOKEN_OK);
    cr_assert(memcmp(a.client_to_server_key, b.client_to_server_key, NET_TOKEN_KEY_BYTES) != 0);
    cr_assert(memcmp(a.server_to_client_key, b.server_to_client_key, NET_TOKEN_KEY_BYTES) != 0);
}

// 32 servers, 256 bytes of user data, none, the longest life
Test(token, the_limits_round_trip)
{
    params.server_count = NET_TOKEN_MAX_SERVERS;
    for (uint32_t i = 0; i < NET_TOKEN_MAX_SERVERS; i++) {
        params.servers[i] = keel_test_token_server();
        params.servers[i].port = (uint16_t)(65535 - i);
        if (i % 2)
            cr_assert(net_token_address_parse("[2001:db8::ff]:1", &params.servers[i]));
    }
    params.user_data_size = NET_TOKEN_MAX_USER_DATA;
    for (int i = 0; i < NET_TOKEN_MAX_USER_DATA; i++)
        params.user_data[i] = (uint8_t)(255 - i);
    params.create_time = 0;
    params.expire_time = UINT64_MAX;
    params.timeout_s = NET_TOKEN_MAX_TIMEOUT;
    cr_assert(net_token_issue(&params, &key, token, NULL));
    net_token_private priv;
    net_token_address last = params.servers[30];
    cr_assert_eq(net_token_open(token, sizeof token, &key, KEEL_TEST_PROTOCOL, UINT64_MAX - 1, &last, &priv),
                 NET_TOKEN_OK);
    cr_assert_eq(priv.server_count, 32);
    cr_assert_eq(priv.user_data_size, 256);
    cr_assert_arr_eq(priv.user_data, params.user_data, 256);
    for (uint32_t i = 0; i < 32; i++)
        cr_assert(net_token_address_equal(&priv.servers[i], &params.servers[i]), "server %u", i);

    params.user_data_size = 0;
    params.create_time = params.expire_time = 5; // a token that is never valid is still a token
    cr_assert(net_token_issue(&params, &key, token, NULL));
    cr_assert_eq(net_token_open(token, sizeof token, &key, KEEL_TEST_PROTOCOL, 4, &last, &priv), NET_TOKEN_OK);
    cr_assert_eq(priv.user_data_size, 0);
    cr_assert_eq(net_token_open(token, sizeof token, &key, KEEL_TEST_PROTOCOL, 5, &last, &priv), NET_TOKEN_EXPIRED);
}

Test(token, the_bytes_are_where_docs_security_md_puts_them)
{
    cr_assert_arr_eq(token, "KTOK", 4);
    cr_assert_eq(le32(token + 4), NET_TOKEN_VERSION);
    cr_assert_eq(le64(token + 8), KEEL_TEST_PROTOCOL);
    cr_assert_eq(le64(token + 16), KEEL_TEST_CREATE);
    cr_assert_eq(le64(token + 24), KEEL_TEST_EXPIRE);
    cr_assert_eq(NET_TOKEN_SEALED_BYTES, 1032);
    cr_assert_eq(NET_TOKEN_BYTES, 1712);
    const uint8_t *pub = token + 1032;
    cr_assert_eq(le32(pub + 0), 10);
    cr_assert_eq(le32(pub + 4), 2);
    const uint8_t v4[19] = {1, 127, 0, 0, 1, [17] = 0x40, [18] = 0x9c}; // 40000 = 0x9c40
    cr_assert_arr_eq(pub + 8, v4, 19);
    cr_assert_eq(pub[8 + 19], 2);
    cr_assert_eq(pub[8 + 19 + 16], 1); // ::1
    cr_assert_eq(pub[8 + 19 + 17] | pub[8 + 19 + 18] << 8, 40001);
    cr_assert(keel_test_zeroed(pub + 8 + 2 * 19, 30 * 19));
    net_token_public p;
    cr_assert_eq(net_token_read_public(token, sizeof token, &p, NULL), NET_TOKEN_OK);
    cr_assert_arr_eq(pub + 616, p.client_to_server_key, 32);
    cr_assert_arr_eq(pub + 648, p.server_to_client_key, 32);
}

// The private part's documented fields, read through re-sealing.
static void check_plain(uint8_t *plain, void *ctx)
{
    const net_token_public *p = ctx;
    cr_assert_eq(le64(plain + 0), 0x1122334455667788ull);
    cr_assert_eq(le64(plain + 8), KEEL_TEST_EXPIRE);
    cr_assert_eq(le32(plain + 16), 10);
    cr_assert_eq(le32(plain + 20), 5);
    cr_assert_arr_eq(plain + 24, p->client_to_server_key, 32);
    cr_assert_arr_eq(plain + 56, p->server_to_client_key, 32);
    cr_assert_eq(le32(plain + 88), 2);
    cr_assert_eq(plain[92], 1);
    cr_assert_eq(plain[92 + 19], 2);
    cr_assert_arr_eq(plain + 700, "alice", 5);
    cr_assert(keel_test_zeroed(plain + 705, 960 - 705));
}

Test(token, the_private_part_is_where_docs_security_md_puts_it)
{
    net_token_public p;
    cr_assert_eq(net_token_read_public(token, sizeof token, &p, NULL), NET_TOKEN_OK);
    keel_test_token_reseal(token, &key, check_plain, &p);
}

Test(token, expired_at_and_after_the_expiry_and_not_before)
{
    net_token_private priv;
    cr_assert_eq(open_at(token, sizeof token, 0, &priv), NET_TOKEN_OK); // before creation: clocks differ
    cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_EXPIRE - 1, &priv), NET_TOKEN_OK);
    cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_EXPIRE, &priv), NET_TOKEN_EXPIRED);
    cr_assert(keel_test_zeroed(&priv, sizeof priv));
    cr_assert_eq(open_at(token, sizeof token, UINT64_MAX, &priv), NET_TOKEN_EXPIRED);
}

Test(token, a_server_not_in_the_list_is_refused)
{
    net_token_private priv;
    const char *others[] = {"127.0.0.1:40001", "127.0.0.2:40000", "[::1]:40000", "[::ffff:127.0.0.1]:40000",
                            "[::2]:40001"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        net_token_address a;
        cr_assert(net_token_address_parse(others[i], &a), "%s", others[i]);
        cr_assert_eq(net_token_open(token, sizeof token, &key, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE, &a, &priv),
                     NET_TOKEN_WRONG_SERVER, "%s", others[i]);
        cr_assert(keel_test_zeroed(&priv, sizeof priv), "%s: the refused token's secrets stay behind", others[i]);
    }
    cr_assert_eq(net_token_open(token, sizeof token, &key, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE, NULL, &priv),
                 NET_TOKEN_WRONG_SERVER);
}

Test(token, another_protocol_is_refused)
{
    net_token_private priv;
    net_token_address s = keel_test_token_server();
    cr_assert_eq(net_token_open(token, sizeof token, &key, KEEL_TEST_PROTOCOL + 1, KEEL_TEST_CREATE, &s, &priv),
                 NET_TOKEN_WRONG_PROTOCOL);
}

Test(token, another_key_fails_the_tag)
{
    net_token_private priv;
    net_token_key other;
    cr_assert(net_token_key_generate(&other));
    cr_assert(!net_token_key_equal(&other, &key));
    net_token_address s = keel_test_token_server();
    cr_assert_eq(net_token_open(token, sizeof token, &other, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE, &s, &priv),
                 NET_TOKEN_TAG);
    for (int bit = 0; bit < 256; bit += 37) { // one bit off is as wrong as another key
        other = key;
        other.bytes[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        cr_assert_eq(net_token_open(token, sizeof token, &other, KEEL_TEST_PROTOCOL, KEEL_TEST_CREATE, &s, &priv),
                     NET_TOKEN_TAG, "bit %d", bit);
        cr_assert(keel_test_zeroed(&priv, sizeof priv));
    }
    net_token_key_wipe(&other);
}

// What one bit flipped in the sealed bytes must give: the header's checks for
// the fields read before the tag, the tag for everything else.
static net_token_result expected_for_flip(size_t at, const uint8_t *t)
{
    if (at < 4)
        return NET_TOKEN_BAD_MAGIC;
    if (at < 8)
        return NET_TOKEN_BAD_VERSION;
    if (at < 16)
        return NET_TOKEN_WRONG_PROTOCOL;
    uint64_t create = le64(t + 16), expire = le64(t + 24);
    if (KEEL_TEST_CREATE >= expire)
        return NET_TOKEN_EXPIRED;
    if (create > expire)
        return NET_TOKEN_MALFORMED;
    return NET_TOKEN_TAG;
}

Test(token, any_bit_flipped_in_the_sealed_bytes_is_refused_and_never_opens)
{
    uint8_t t[NET_TOKEN_BYTES];
    net_token_private priv;
    unsigned tags = 0, header = 0;
    for (size_t at = 0; at < NET_TOKEN_SEALED_BYTES; at++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(t, token, sizeof t);
            t[at] ^= (uint8_t)(1u << bit);
            net_token_result want = expected_for_flip(at, t);
            net_token_result got = open_at(t, sizeof t, KEEL_TEST_CREATE, &priv);
            cr_assert_eq(got, want, "byte %zu bit %d: %s, expected %s", at, bit, net_token_result_name(got),
                         net_token_result_name(want));
            cr_assert(keel_test_zeroed(&priv, sizeof priv));
            if (got == NET_TOKEN_TAG)
                tags++;
            else
                header++;
        }
    }
    cr_log_info("token: %u one-bit flips in the sealed bytes: %u fail the tag, %u the header's checks", tags + header,
                tags, header);
    cr_assert_geq(tags, 8 * (1032 - 32)); // every bit of the nonce and the ciphertext, and the create time's
}

Test(token, the_public_part_is_not_authenticated_but_read_with_its_ranges)
{
    // (the server opens the sealed bytes only: a changed public part changes nothing there)
    net_token_private priv;
    uint8_t changed[NET_TOKEN_BYTES];
    memcpy(changed, token, sizeof changed);
    for (size_t i = NET_TOKEN_SEALED_BYTES; i < NET_TOKEN_BYTES; i++)
        changed[i] ^= 0xa5;
    cr_assert_eq(open_at(changed, sizeof changed, KEEL_TEST_CREATE, &priv), NET_TOKEN_OK);
    net_token_private_wipe(&priv);
    net_token_public pub;
    size_t at = 0;
    struct {
        size_t offset;
        uint32_t value;
        size_t bad;
    } cases[] = {
        {1032, 0, 1032},  {1032, 3601, 1032},   {1036, 0, 1036},
        {1036, 33, 1036}, {1036, 1, 1040 + 19}, // the second slot is used but the count says one
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t t[NET_TOKEN_BYTES];
        memcpy(t, token, sizeof t);
        keel_test_le32(t + cases[i].offset, cases[i].value);
        cr_assert_eq(net_token_read_public(t, sizeof t, &pub, &at), NET_TOKEN_MALFORMED, "case %zu", i);
        cr_assert_eq(at, cases[i].bad, "case %zu: offset %zu", i, at);
        cr_assert(keel_test_zeroed(&pub, sizeof pub));
    }
    uint8_t slot[3][19] = {{3, 1, 2, 3, 4, [17] = 1}, {1, 1, 2, 3, 4, [17] = 0}, {1, 1, 2, 3, 4, 5, [17] = 1}};
    for (int i = 0; i < 3; i++) { // family 3, port 0, IPv4 with bytes after its 4
        uint8_t t[NET_TOKEN_BYTES];
        memcpy(t, token, sizeof t);
        memcpy(t + 1040 + 19, slot[i], 19);
        cr_assert_eq(net_token_read_public(t, sizeof t, &pub, &at), NET_TOKEN_MALFORMED, "slot %d", i);
        cr_assert_eq(at, 1040 + 19);
    }
}

Test(token, a_wrong_version_or_magic_is_refused_before_anything_else)
{
    net_token_private priv;
    net_token_public pub;
    size_t at = 99;
    for (uint32_t v = 0; v < 4; v++) {
        if (v == NET_TOKEN_VERSION)
            continue;
        keel_test_le32(token + 4, v);
        cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_CREATE, &priv), NET_TOKEN_BAD_VERSION);
        cr_assert_eq(net_token_read_public(token, sizeof token, &pub, &at), NET_TOKEN_BAD_VERSION);
        cr_assert_eq(at, 4);
    }
    memcpy(token, "KTOL", 4);
    cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_CREATE, &priv), NET_TOKEN_BAD_MAGIC);
    cr_assert_eq(net_token_read_public(token, sizeof token, &pub, &at), NET_TOKEN_BAD_MAGIC);
    cr_assert_eq(at, 0);
}

Test(token, truncated_and_overlong_buffers_are_refused_by_size)
{
    net_token_private priv;
    net_token_public pub;
    uint8_t big[NET_TOKEN_BYTES + 1];
    memcpy(big, token, sizeof token);
    big[NET_TOKEN_BYTES] = 0;
    const size_t short_sizes[] = {0, 1, 4, 31, 32, 56, NET_TOKEN_SEALED_BYTES - 1};
    for (size_t i = 0; i < sizeof short_sizes / sizeof short_sizes[0]; i++)
        cr_assert_eq(open_at(big, short_sizes[i], KEEL_TEST_CREATE, &priv), NET_TOKEN_TRUNCATED, "%zu", short_sizes[i]);
    const size_t odd_sizes[] = {NET_TOKEN_SEALED_BYTES + 1, NET_TOKEN_BYTES - 1, NET_TOKEN_BYTES + 1};
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(open_at(big, odd_sizes[i], KEEL_TEST_CREATE, &priv), NET_TOKEN_BAD_SIZE, "%zu", odd_sizes[i]);
    big[0] = 'X'; // the size is judged before the magic
    cr_assert_eq(open_at(big, NET_TOKEN_SEALED_BYTES + 1, KEEL_TEST_CREATE, &priv), NET_TOKEN_BAD_SIZE);
    cr_assert_eq(open_at(big, NET_TOKEN_SEALED_BYTES - 1, KEEL_TEST_CREATE, &priv), NET_TOKEN_TRUNCATED);
    big[0] = 'K';
    size_t at = 0;
    cr_assert_eq(net_token_read_public(big, NET_TOKEN_SEALED_BYTES, &pub, &at), NET_TOKEN_TRUNCATED);
    cr_assert_eq(at, NET_TOKEN_SEALED_BYTES);
    cr_assert_eq(net_token_read_public(big, NET_TOKEN_BYTES - 1, &pub, &at), NET_TOKEN_TRUNCATED);
    cr_assert_eq(net_token_read_public(big, NET_TOKEN_BYTES + 1, &pub, &at), NET_TOKEN_BAD_SIZE);
    cr_assert_eq(at, NET_TOKEN_BYTES + 1);
}

Test(token, a_create_time_after_the_expiry_is_malformed)
{
    keel_test_le64(token + 16, KEEL_TEST_EXPIRE + 1);
    net_token_private priv;
    net_token_public pub;
    size_t at = 0;
    cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_CREATE, &priv), NET_TOKEN_MALFORMED);
    cr_assert_eq(net_token_read_public(token, sizeof token, &pub, &at), NET_TOKEN_MALFORMED);
    cr_assert_eq(at, 16);
}

// ---- a private part only a backend could have written wrong ------------------------

typedef struct plain_edit {
    size_t at;
    uint8_t bytes[8];
    size_t n;
} plain_edit;

static void apply_edit(uint8_t *plain, void *ctx)
{
    const plain_edit *e = ctx;
    memcpy(plain + e->at, e->bytes, e->n);
}

Test(token, a_sealed_private_part_out_of_its_ranges_is_malformed)
{
    const plain_edit edits[] = {
        {8, {1}, 1},            // its expiry differs from the header's
        {16, {0, 0, 0, 0}, 4},  // timeout 0
        {16, {0x11, 0x0e}, 2},  // timeout 3601
        {20, {0x01, 0x01}, 2},  // user data 257 bytes
        {88, {0}, 4},           // no server
        {88, {33}, 4},          // 33 servers
        {88, {1}, 4},           // one server, but the second slot is used
        {92, {3}, 1},           // family 3
        {92 + 17, {0, 0}, 2},   // port 0
        {92 + 10, {7}, 1},      // IPv4 with a byte after its 4
        {92 + 2 * 19, {1}, 1},  // an unused slot not zero
        {705, {1}, 1},          // user data after its size not zero
        {956, {0, 0, 0, 1}, 4}, // the reserved bytes
    };
    net_token_private priv;
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        uint8_t t[NET_TOKEN_BYTES];
        memcpy(t, token, sizeof t);
        keel_test_token_reseal(t, &key, apply_edit, (void *)&edits[i]);
        cr_assert_eq(open_at(t, sizeof t, KEEL_TEST_CREATE, &priv), NET_TOKEN_MALFORMED, "edit %zu at %zu", i,
                     edits[i].at);
        cr_assert(keel_test_zeroed(&priv, sizeof priv), "edit %zu", i);
    }
    // and the re-sealing itself changes nothing when nothing is edited
    plain_edit none = {0, {0}, 0};
    keel_test_token_reseal(token, &key, apply_edit, &none);
    cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_CREATE, &priv), NET_TOKEN_OK);
    net_token_private_wipe(&priv);
}

// ---- issuing, names, addresses, wiping -------------------------------------------

Test(token, out_of_range_parameters_are_refused_by_name)
{
    net_token_params p;
    const char *why;
#define REFUSED(change, words)                                                        \
    do {                                                                              \
        keel_test_token_params(&p);                                                   \
        change;                                                                       \
        why = NULL;                                                                   \
        memset(token, 0xee, sizeof token);                                            \
        cr_assert(!net_token_issue(&p, &key, token, &why), "%s", #change);            \
        cr_assert(why &&strstr(why, words), "%s: %s", #change, why ? why : "(none)"); \
        cr_assert(keel_test_zeroed(token, sizeof token));                             \
    } while (0)
    REFUSED(p.expire_time = p.create_time - 1, "expire_time");
    REFUSED(p.timeout_s = 0, "timeout_s");
    REFUSED(p.timeout_s = NET_TOKEN_MAX_TIMEOUT + 1, "timeout_s");
    REFUSED(p.server_count = 0, "server_count");
    REFUSED(p.server_count = NET_TOKEN_MAX_SERVERS + 1, "server_count");
    REFUSED(p.servers[1].port = 0, "server address");
    REFUSED(p.servers[0].family = 7, "server address");
    REFUSED(p.servers[0].ip[9] = 1, "server address");
    REFUSED(p.user_data_size = NET_TOKEN_MAX_USER_DATA + 1, "user_data_size");
#undef REFUSED
}

Test(token, every_result_has_its_own_name)
{
    for (int i = 0; i < NET_TOKEN_RESULT_COUNT; i++) {
        const char *a = net_token_result_name((net_token_result)i);
        cr_assert_str_neq(a, "unknown");
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(a, net_token_result_name((net_token_result)j));
    }
    cr_assert_str_eq(net_token_result_name(NET_TOKEN_EXPIRED), "expired");
    cr_assert_str_eq(net_token_result_name(NET_TOKEN_RESULT_COUNT), "unknown");
    cr_assert_str_eq(net_token_result_name((net_token_result)-1), "unknown");
}

Test(token, addresses_parse_and_format_both_ways)
{
    const char *good[] = {"127.0.0.1:1", "10.1.2.3:65535", "[::1]:40001", "[2001:db8::1]:443"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        net_token_address a;
        char back[64];
        cr_assert(net_token_address_parse(good[i], &a), "%s", good[i]);
        net_token_address_format(&a, back, sizeof back);
        cr_assert_str_eq(back, good[i]);
    }
    const char *bad[] = {"",        "1.2.3.4",      "1.2.3.4:0",   "1.2.3.4:65536", ":80",
                         "host:80", "1.2.3.4:80x",  "1.2.3.4:+80", "[::1]:",        "[::1]80",
                         "::1:80",  "[1.2.3.4]:80", "1.2.3:80",    "[::1:80",       "1.2.3.4:000080"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        net_token_address a;
        memset(&a, 0x5a, sizeof a);
        cr_assert(!net_token_address_parse(bad[i], &a), "'%s' parsed", bad[i]);
        cr_assert(keel_test_zeroed(&a, sizeof a), "'%s'", bad[i]);
    }
    net_token_address odd = {.family = 9, .port = 5};
    char text[64];
    net_token_address_format(&odd, text, sizeof text);
    cr_assert_str_eq(text, "?:5");
}

Test(token, wiping_leaves_zeros)
{
    net_token_private priv;
    cr_assert_eq(open_at(token, sizeof token, KEEL_TEST_CREATE, &priv), NET_TOKEN_OK);
    cr_assert(!keel_test_zeroed(priv.client_to_server_key, 32));
    net_token_private_wipe(&priv);
    cr_assert(keel_test_zeroed(&priv, sizeof priv));
    net_token_key k = key;
    net_token_key_wipe(&k);
    cr_assert(keel_test_zeroed(&k, sizeof k));
    cr_assert(!net_token_key_equal(&k, &key));
}
