// keel tests: the backend's key file (docs/security.md, "The key file").
// MIT licence, see LICENSE.
//
// Written and read back, never replaced, private to its owner; every way a
// key file can be wrong is refused with the line and column, and the key
// comes back zeroed.
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <keel/net_token.h>

#include "test_support.h"
#include "token_fixture.h"

static char dir[256];

static void setup(void) { keel_test_dir_make(dir, sizeof dir, "token_key"); }

static void teardown(void) { keel_test_dir_remove(dir); }

TestSuite(token_key, .init = setup, .fini = teardown, .timeout = 60);

static bool zeroed(const net_token_key *k) { return keel_test_zeroed(k, sizeof *k); }

#define HEX64 "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF"

Test(token_key, written_then_read_back_equal_with_mode_0600_and_never_replaced)
{
    net_token_key a, b;
    cr_assert(net_token_key_generate(&a));
    const char *path = keel_test_dir_file(dir, "backend.key");
    char err[256] = "";
    cr_assert(net_token_key_write(path, &a, err, sizeof err), "%s", err);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", (unsigned)(st.st_mode & 0777));
    cr_assert(net_token_key_read(path, &b, err, sizeof err), "%s", err);
    cr_assert(net_token_key_equal(&a, &b));

    net_token_key c;
    cr_assert(net_token_key_generate(&c));
    cr_assert(!net_token_key_write(path, &c, err, sizeof err));
    cr_assert(strstr(err, path) && strstr(err, "never replaced"), "%s", err);
    cr_assert(net_token_key_read(path, &b, err, sizeof err), "%s", err);
    cr_assert(net_token_key_equal(&a, &b), "the first key is still there");
    net_token_key_wipe(&a);
    net_token_key_wipe(&b);
    net_token_key_wipe(&c);
}

Test(token_key, the_documented_text_reads_with_comments_blank_lines_crlf_and_either_case)
{
    const char *text = "# the staging backend\r\n\n# (rotated monthly)\nkeel-token-key 1 " HEX64 "\r\n\n# end\n";
    net_token_key k;
    char err[256] = "";
    cr_assert(net_token_key_parse(text, strlen(text), &k, err, sizeof err), "%s", err);
    for (int i = 0; i < 32; i++)
        cr_assert_eq(k.bytes[i], (uint8_t)((i % 16) * 0x11), "byte %d", i);
    const char *bare = "keel-token-key 1 " HEX64; // no newline at the end
    cr_assert(net_token_key_parse(bare, strlen(bare), &k, err, sizeof err), "%s", err);
}

Test(token_key, every_wrong_file_names_its_line_and_column_and_zeroes_the_key)
{
    struct {
        const char *text;
        const char *message;
    } cases[] = {
        {"", "line 1: no key line"},
        {"# only a comment\n", "line 2: no key line"},
        {"keel-token-key 2 " HEX64 "\n", "line 1, column 16: expected"},
        {"\nkeel-token-kez 1 " HEX64 "\n", "line 2, column 14: expected"},
        {" keel-token-key 1 " HEX64 "\n", "line 1, column 1: expected"},
        {"keel-token-key 1 0011\n", "line 1, column 22: the key has 4 hex digits, 64 expected"},
        {"keel-token-key 1 00x1" HEX64 "\n", "line 1, column 20: 'x' is not a hex digit"},
        {"keel-token-key 1 " HEX64 "00\n", "line 1, column 82: unexpected '0' after the key"},
        {"keel-token-key 1 " HEX64 " # note\n", "line 1, column 82: unexpected 0x20 after the key"},
        {"keel-token-key 1 " HEX64 "\nkeel-token-key 1 " HEX64 "\n", "line 2, column 1: a second key line"},
        {"keel-token-key 1 " HEX64 "\nhello\n", "line 2, column 1: a second key line"},
        {"keel-token-key 1 \0" HEX64 "\n", "line 1, column 18: 0x00 is not a hex digit"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        net_token_key k;
        memset(&k, 0x77, sizeof k);
        char err[256] = "";
        size_t len = strlen(cases[i].text);
        if (i == sizeof cases / sizeof cases[0] - 1)
            len = 17 + 1 + 64 + 1; // the NUL is part of the file
        cr_assert(!net_token_key_parse(cases[i].text, len, &k, err, sizeof err), "case %zu read", i);
        cr_assert(strstr(err, cases[i].message), "case %zu: '%s', expected '%s'", i, err, cases[i].message);
        cr_assert(zeroed(&k), "case %zu: the key is not zeroed", i);
    }
}

Test(token_key, a_missing_or_huge_file_is_refused_with_its_name)
{
    net_token_key k;
    char err[512] = "";
    const char *missing = keel_test_dir_file(dir, "nope.key");
    cr_assert(!net_token_key_read(missing, &k, err, sizeof err));
    cr_assert(strstr(err, missing) && strstr(err, "No such file"), "%s", err);
    cr_assert(zeroed(&k));

    const char *huge = keel_test_dir_file(dir, "huge.key");
    FILE *f = fopen(huge, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 100; i++)
        fputs("# a comment line of a key file that goes on and on and on and on and on\n", f);
    fclose(f);
    cr_assert(!net_token_key_read(huge, &k, err, sizeof err));
    cr_assert(strstr(err, huge) && strstr(err, "over 4096 bytes"), "%s", err);

    const char *bad = keel_test_dir_file(dir, "bad.key");
    f = fopen(bad, "w");
    cr_assert_not_null(f);
    fputs("# fine\nkeel-token-key 1 abc\n", f);
    fclose(f);
    cr_assert(!net_token_key_read(bad, &k, err, sizeof err));
    cr_assert(strstr(err, bad) && strstr(err, "line 2, column 21"), "%s", err);
}
