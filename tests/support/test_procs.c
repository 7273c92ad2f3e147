// keel tests: programs running in the background while a test talks to them
// (test_support.h, "background programs"). MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L // fork, kill, nanosleep, waitpid under -std=c11

#include "test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#define MAX_PROC_ARGS 64

static int tmp_counter;

void keel_test_proc_start(keel_test_proc *p, const char *program, const char *const *args)
{
    keel_test_proc_start_path(p, keel_test_program_path(program), args);
}

void keel_test_proc_start_path(keel_test_proc *p, const char *path, const char *const *args)
{
    memset(p, 0, sizeof *p);
    snprintf(p->out, sizeof p->out, "/tmp/keel-proc-%d-%d.out", (int)getpid(), tmp_counter);
    snprintf(p->err, sizeof p->err, "/tmp/keel-proc-%d-%d.err", (int)getpid(), tmp_counter++);
    char *argv[MAX_PROC_ARGS];
    int n = 0;
    argv[n++] = (char *)path; // execv takes char *const[]; not modified
    for (int i = 0; args[i] && n < MAX_PROC_ARGS - 1; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    fflush(NULL);
    p->pid = fork();
    cr_assert(p->pid >= 0);
    if (p->pid == 0) {
        int o = open(p->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(p->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        execv(path, argv);
        _exit(127);
    }
}

void keel_test_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

bool keel_test_proc_wait(keel_test_proc *p, long ms)
{
    for (long waited = 0; !p->done; waited += 20) {
        int st;
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid) {
            p->done = true;
            p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        if (waited >= ms)
            return false;
        keel_test_sleep_ms(20);
    }
    return true;
}

void keel_test_proc_kill(keel_test_proc *p, int sig)
{
    if (!p->done) {
        kill(p->pid, sig);
        keel_test_proc_wait(p, 5000);
    }
}

void keel_test_proc_cleanup(keel_test_proc *p)
{
    keel_test_proc_kill(p, SIGKILL);
    unlink(p->out);
    unlink(p->err);
}

void keel_test_loopback(struct sockaddr_in *a, uint16_t port)
{
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a->sin_port = htons(port);
}

unsigned keel_test_wait_port(const char *file)
{
    for (int i = 0; i < 500; i++) {
        char *s = keel_test_read_file(file);
        char *at = strstr(s, "listening on 127.0.0.1:");
        unsigned port = 0;
        if (at)
            port = (unsigned)strtoul(at + strlen("listening on 127.0.0.1:"), NULL, 10);
        free(s);
        if (port)
            return port;
        keel_test_sleep_ms(20);
    }
    cr_assert_fail("no port in %s", file);
    return 0;
}

bool keel_test_wait_text(const char *file, const char *needle, long ms)
{
    for (long waited = 0;; waited += 20) {
        char *s = keel_test_read_file(file);
        bool found = strstr(s, needle) != NULL;
        free(s);
        if (found)
            return true;
        if (waited >= ms)
            return false;
        keel_test_sleep_ms(20);
    }
}

double keel_test_json_num(const char *s, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(s, pat);
    cr_assert_not_null(at, "no %s in the summary: %s", key, s);
    return strtod(at + strlen(pat), NULL);
}
