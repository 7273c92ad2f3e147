// keel: the backend's token key, in memory and in its file. MIT licence, see LICENSE.
//
// The key file is text (docs/security.md, "The key file"):
//   # any comment lines
//   keel-token-key 1 <64 hex digits>
// Blank lines and lines starting with '#' are skipped anywhere; exactly one
// key line; a '\r' before a newline is allowed. Errors name the line and
// column. Buffers that held the key (the file's text, hex digits) are wiped
// with sodium_memzero, and so is *key on every error.
#define _POSIX_C_SOURCE 200809L

#include <keel/net_token.h>

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "token_internal.h"

#define KEY_PREFIX "keel-token-key 1 "
enum { KEY_HEX = 2 * NET_TOKEN_KEY_BYTES, FILE_MAX = 4096 };

bool net_token_key_generate(net_token_key *key)
{
    if (!net_token_crypto_ready()) {
        memset(key, 0, sizeof *key);
        return false;
    }
    randombytes_buf(key->bytes, sizeof key->bytes);
    return true;
}

void net_token_key_wipe(net_token_key *key) { sodium_memzero(key, sizeof *key); }

bool net_token_key_equal(const net_token_key *a, const net_token_key *b)
{
    return sodium_memcmp(a->bytes, b->bytes, sizeof a->bytes) == 0;
}

__attribute__((format(printf, 3, 4))) static bool fail(char *err, size_t err_size, const char *fmt, ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A character for a message: itself when printable, else its code.
static const char *shown(char c, char buf[8])
{
    unsigned char u = (unsigned char)c;
    if (u >= 0x21 && u < 0x7f)
        snprintf(buf, 8, "'%c'", c);
    else
        snprintf(buf, 8, "0x%02x", u);
    return buf;
}

// One key line of `len` characters (without its newline) into *key.
static bool parse_key_line(const char *s, size_t len, unsigned line, net_token_key *key, char *err, size_t err_size)
{
    char c[8];
    size_t plen = sizeof KEY_PREFIX - 1;
    for (size_t i = 0; i < plen; i++)
        if (i >= len || s[i] != KEY_PREFIX[i])
            return fail(err, err_size, "line %u, column %zu: expected \"" KEY_PREFIX "\" and 64 hex digits", line,
                        i + 1);
    size_t n = 0;
    while (n < KEY_HEX && plen + n < len && is_hex(s[plen + n]))
        n++;
    if (n < KEY_HEX && plen + n < len)
        return fail(err, err_size, "line %u, column %zu: %s is not a hex digit", line, plen + n + 1,
                    shown(s[plen + n], c));
    if (n != KEY_HEX)
        return fail(err, err_size, "line %u, column %zu: the key has %zu hex digits, 64 expected", line, plen + n + 1,
                    n);
    if (plen + n < len)
        return fail(err, err_size, "line %u, column %zu: unexpected %s after the key", line, plen + n + 1,
                    shown(s[plen + n], c));
    size_t bin_len = 0;
    if (sodium_hex2bin(key->bytes, sizeof key->bytes, s + plen, KEY_HEX, NULL, &bin_len, NULL) != 0 ||
        bin_len != sizeof key->bytes)
        return fail(err, err_size, "line %u, column %zu: the key is not 64 hex digits", line, plen + 1);
    return true;
}

static bool parse(const char *text, size_t size, net_token_key *key, char *err, size_t err_size)
{
    bool have = false;
    unsigned line = 1;
    for (size_t at = 0; at < size; line++) {
        const char *nl = memchr(text + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (text + at)) : size - at;
        const char *s = text + at;
        at += len + (nl ? 1 : 0);
        if (len && s[len - 1] == '\r')
            len--;
        if (len == 0 || s[0] == '#')
            continue;
        if (have)
            return fail(err, err_size, "line %u, column 1: a second key line (a key file holds one key)", line);
        if (!parse_key_line(s, len, line, key, err, err_size))
            return false;
        have = true;
    }
    if (!have)
        return fail(err, err_size, "line %u: no key line (\"" KEY_PREFIX "\" and 64 hex digits)", line);
    return true;
}

bool net_token_key_parse(const char *text, size_t size, net_token_key *key, char *err, size_t err_size)
{
    if (!net_token_crypto_ready()) {
        net_token_key_wipe(key);
        return fail(err, err_size, "libsodium could not be initialised");
    }
    bool ok = parse(text, size, key, err, err_size);
    if (!ok)
        net_token_key_wipe(key);
    return ok;
}

bool net_token_key_read(const char *path, net_token_key *key, char *err, size_t err_size)
{
    net_token_key_wipe(key);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, err_size, "%s: %s", path, strerror(errno));
    char buf[FILE_MAX + 1];
    size_t n = 0;
    bool read_error = false;
    while (n < sizeof buf) {
        ssize_t got = read(fd, buf + n, sizeof buf - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            read_error = true;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    int saved = errno;
    close(fd);
    bool ok;
    if (read_error) {
        ok = fail(err, err_size, "%s: %s", path, strerror(saved));
    } else if (n > FILE_MAX) {
        ok = fail(err, err_size, "%s: over %d bytes: not a key file", path, FILE_MAX);
    } else {
        char msg[192] = "";
        ok = net_token_key_parse(buf, n, key, msg, sizeof msg);
        if (!ok)
            fail(err, err_size, "%s: %s", path, msg);
    }
    sodium_memzero(buf, sizeof buf);
    return ok;
}

bool net_token_key_write(const char *path, const net_token_key *key, char *err, size_t err_size)
{
    if (!net_token_crypto_ready())
        return fail(err, err_size, "libsodium could not be initialised");
    char text[256];
    char hex[KEY_HEX + 1];
    sodium_bin2hex(hex, sizeof hex, key->bytes, sizeof key->bytes);
    int len = snprintf(
        text, sizeof text,
        "# keel connect-token key: whoever holds it can issue tokens. Keep it secret.\n" KEY_PREFIX "%s\n", hex);
    sodium_memzero(hex, sizeof hex);
    bool ok = true;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        ok = fail(err, err_size, "%s: %s%s", path, strerror(errno),
                  errno == EEXIST ? " (a key file is never replaced: remove it first)" : "");
    } else {
        size_t done = 0;
        while (ok && done < (size_t)len) {
            ssize_t w = write(fd, text + done, (size_t)len - done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                ok = fail(err, err_size, "%s: %s", path, w < 0 ? strerror(errno) : "nothing written");
            else
                done += (size_t)w;
        }
        if (close(fd) != 0 && ok)
            ok = fail(err, err_size, "%s: %s", path, strerror(errno));
        if (!ok)
            unlink(path);
    }
    sodium_memzero(text, sizeof text);
    return ok;
}
