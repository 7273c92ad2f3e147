// keel tests: keel-token as a user runs it. MIT licence, see LICENSE.
//
// keygen, issue and inspect, the real program in a temporary folder; the
// token it writes opens with the library and the key file it wrote. Bad
// command lines exit 2 with the usage, bad files exit 1 naming the offset
// (tokens) or the line (key files).
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <keel/net_token.h>

#include "test_support.h"
#include "token_fixture.h"

static char dir[256];

static void setup(void) { keel_test_dir_make(dir, sizeof dir, "token_programs"); }

static void teardown(void) { keel_test_dir_remove(dir); }

TestSuite(token_programs, .init = setup, .fini = teardown, .timeout = 120);

// Runs keel-token with up to 40 arguments (NULL-terminated).
static keel_test_run_result run(const char *const *args)
{
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 30;
    return keel_test_run(keel_test_program_path("keel-token"), args, &o);
}

static void expect(const char *const *args, int code, const char *in_stderr)
{
    keel_test_run_result r = run(args);
    cr_assert_eq(r.exit_code, code, "%s ...: exit %d, expected %d; stderr: %s", args[0], r.exit_code, code, r.err);
    if (in_stderr)
        cr_assert(strstr(r.err, in_stderr), "%s ...: stderr lacks '%s': %s", args[0], in_stderr, r.err);
    if (code == 2)
        cr_assert(strstr(r.err, "keel-token --help lists the options"), "no pointer to --help: %s", r.err);
    keel_test_run_free(&r);
}

static void write_bytes(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(d, 1, n, f), n);
    fclose(f);
}

// keygen and issue the token every test starts from; its bytes in token.
static void key_and_token(uint8_t *token)
{
    const char *key = keel_test_dir_file(dir, "backend.key");
    const char *keygen[] = {"keygen", key, NULL};
    expect(keygen, 0, NULL);
    const char *tok = keel_test_dir_file(dir, "player.tok");
    const char *issue[] = {"issue",
                           "--key",
                           keel_test_dir_file(dir, "backend.key"),
                           "--client-id",
                           "7",
                           "--server",
                           "127.0.0.1:40000",
                           "--server=[::1]:40001",
                           "--now",
                           "1000000",
                           "--expires",
                           "300",
                           "--timeout",
                           "15",
                           "--protocol-id",
                           "0x4b45454c",
                           "--user-data",
                           "bob",
                           "--out",
                           tok,
                           NULL};
    expect(issue, 0, NULL);
    size_t n = 0;
    FILE *f = fopen(tok, "rb");
    cr_assert_not_null(f);
    n = fread(token, 1, NET_TOKEN_BYTES + 1, f);
    fclose(f);
    cr_assert_eq(n, NET_TOKEN_BYTES);
}

Test(token_programs, keygen_issue_inspect_and_the_library_opens_the_token)
{
    uint8_t token[NET_TOKEN_BYTES + 1];
    key_and_token(token);
    struct stat st;
    cr_assert_eq(stat(keel_test_dir_file(dir, "backend.key"), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(stat(keel_test_dir_file(dir, "player.tok"), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);

    const char *inspect[] = {"inspect", keel_test_dir_file(dir, "player.tok"), NULL};
    keel_test_run_result r = run(inspect);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    const char *lines[] = {"version 1",
                           "protocol id  1262830924 (0x000000004b45454c)",
                           "created      1000000 (1970-01-12T13:46:40Z)",
                           "300 s after its creation",
                           "timeout      15 s",
                           "servers      2",
                           "  127.0.0.1:40000\n",
                           "  [::1]:40001\n"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        cr_assert(strstr(r.out, lines[i]), "inspect lacks '%s':\n%s", lines[i], r.out);
    keel_test_run_free(&r);

    const char *json[] = {"inspect", "--json", keel_test_dir_file(dir, "player.tok"), NULL};
    r = run(json);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_assert_eq(keel_test_json_num(r.out, "expire_time"), 1000300.0);
    cr_assert_eq(keel_test_json_num(r.out, "timeout_s"), 15.0);
    cr_assert(strstr(r.out, "\"servers\": [\"127.0.0.1:40000\", \"[::1]:40001\"]"), "%s", r.out);
    keel_test_run_free(&r);

    net_token_key key;
    char err[256];
    cr_assert(net_token_key_read(keel_test_dir_file(dir, "backend.key"), &key, err, sizeof err), "%s", err);
    net_token_address server;
    cr_assert(net_token_address_parse("[::1]:40001", &server));
    net_token_private priv;
    cr_assert_eq(net_token_open(token, NET_TOKEN_BYTES, &key, 0x4b45454c, 1000299, &server, &priv), NET_TOKEN_OK);
    cr_assert_eq(priv.client_id, 7);
    cr_assert_eq(priv.timeout_s, 15);
    cr_assert_eq(priv.user_data_size, 3);
    cr_assert_arr_eq(priv.user_data, "bob", 3);
    cr_assert_eq(net_token_open(token, NET_TOKEN_BYTES, &key, 0x4b45454c, 1000300, &server, &priv), NET_TOKEN_EXPIRED);
    net_token_key_wipe(&key);

    const char *again[] = {"keygen", keel_test_dir_file(dir, "backend.key"), NULL};
    expect(again, 1, "never replaced");
}

Test(token_programs, bad_command_lines_print_the_usage_and_exit_2)
{
    const char *key = keel_test_dir_file(dir, "k.key");
    const char *keygen[] = {"keygen", key, NULL};
    expect(keygen, 0, NULL);
    char long_text[300];
    memset(long_text, 'n', 257);
    long_text[257] = '\0';
    const char *none[] = {NULL};
    const char *cases[][12] = {
        {"frobnicate", NULL},
        {"keygen", NULL},
        {"keygen", "a", "b", NULL},
        {"issue", "--key", key, "--client-id", "1", "--server", "127.0.0.1:1", NULL}, // no --out
        {"issue", "--key", key, "--client-id", "1", "--out", "x", NULL},              // no --server
        {"issue", "--key", key, "--server", "127.0.0.1:1", "--out", "x", NULL},       // no --client-id
        {"issue", "--key", key, "--client-id", "-1", "--server", "127.0.0.1:1", "--out", "x", NULL},
        {"issue", "--key", key, "--client-id", "1", "--server", "nosuch.invalid:80", "--out", "x", NULL},
        {"issue", "--key", key, "--client-id", "1", "--server", "127.0.0.1:1", "--expires", "0", "--out", "x"},
        {"issue", "--key", key, "--client-id", "1", "--server", "127.0.0.1:1", "--timeout", "3601", "--out", "x"},
        {"issue", "--key", key, "--client-id", "1", "--server", "127.0.0.1:1", "--user-data", long_text, "--out", "x"},
        {"issue", "--key", key, "--client-id", "1", "--server", "127.0.0.1:1", "--colour", "red", "--out", "x"},
        {"issue", "--key", key, "--client-id", "18446744073709551616", "--server", "127.0.0.1:1", "--out", "x"},
        {"inspect", NULL},
        {"inspect", "a", "b", NULL},
        {"inspect", "--yaml", "a", NULL},
    };
    expect(none, 2, "a command is needed");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(cases[i], 2, NULL);
    // 33 servers (32 are fine: the 33rd is refused)
    const char *many[80] = {"issue", "--key", key, "--client-id", "1", "--out", "x"};
    size_t n = 7;
    for (int i = 0; i < 33; i++)
        many[n++] = "--server=127.0.0.1:9";
    many[n] = NULL;
    expect(many, 2, "at most 32 servers");
}

Test(token_programs, bad_files_are_refused_with_their_offset_or_line)
{
    uint8_t token[NET_TOKEN_BYTES + 1];
    key_and_token(token);
    const char *bad = keel_test_dir_file(dir, "bad.tok");
    const char *inspect[] = {"inspect", keel_test_dir_file(dir, "bad.tok"), NULL};

    write_bytes(bad, token, 100);
    expect(inspect, 1, "offset 100: truncated");
    uint8_t t[NET_TOKEN_BYTES];
    memcpy(t, token, sizeof t);
    keel_test_le32(t + 4, 9);
    write_bytes(bad, t, sizeof t);
    expect(inspect, 1, "offset 4: bad version (version)");
    memcpy(t, token, sizeof t);
    keel_test_le32(t + 1036, 40);
    write_bytes(bad, t, sizeof t);
    expect(inspect, 1, "offset 1036: malformed (server count)");
    memcpy(t, token, sizeof t);
    t[1040 + 19 + 17] = t[1040 + 19 + 18] = 0; // the second server's port
    write_bytes(bad, t, sizeof t);
    expect(inspect, 1, "offset 1059: malformed (server slot 2)");
    const char *missing[] = {"inspect", keel_test_dir_file(dir, "nope.tok"), NULL};
    expect(missing, 1, "No such file");

    const char *key = keel_test_dir_file(dir, "bad.key");
    write_bytes(key, (const uint8_t *)"# a key\nkeel-token-key 1 12345\n", 31);
    const char *issue[] = {
        "issue", "--key", key, "--client-id", "1", "--server", "127.0.0.1:1", "--out", keel_test_dir_file(dir, "t.tok"),
        NULL};
    expect(issue, 1, "line 2, column 23: the key has 5 hex digits");
}
