// keel tests: temporary files and folders, and reading files whole. MIT licence.
#define _POSIX_C_SOURCE 200809L // mkstemp, getpid under -std=c11

#include "test_support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <criterion/criterion.h>

int keel_test_temp_fd(char *name, size_t size, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(name, size, "%s/keel_%s_XXXXXX", dir && dir[0] ? dir : "/tmp", what);
    int fd = mkstemp(name);
    cr_assert(fd >= 0, "mkstemp %s: %s", name, strerror(errno));
    return fd;
}

char *keel_test_read_fd(int fd, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    cr_assert(buf != NULL);
    lseek(fd, 0, SEEK_SET); // fails, harmlessly, on a pipe
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            cr_assert(buf != NULL);
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        cr_assert(k >= 0, "read: %s", strerror(errno));
        if (k == 0)
            break;
        n += (size_t)k;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *keel_test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
        s[0] = 0;
    fclose(f);
    return s;
}

void keel_test_dir_make(char *dir, size_t size, const char *what)
{
    // The pid keeps two runs of the same test (two build trees) apart.
    snprintf(dir, size, "/tmp/keel_test_%s_%ld", what, (long)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

void keel_test_dir_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        cr_log_info("could not remove %s", dir);
}

const char *keel_test_dir_file(const char *dir, const char *name)
{
    static char paths[4][512];
    static unsigned next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}
