// keel tests: running the real programs built beside a test. MIT licence.
#define _POSIX_C_SOURCE 200809L // fork, kill, nanosleep, setrlimit under -std=c11

#include "test_support.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

const char *keel_test_program_find(const char *name)
{
    // Several buffers: a test often holds the paths of two or three programs.
    static char paths[4][4200];
    static unsigned next;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0, "cannot read /proc/self/exe: %s", strerror(errno));
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    cr_assert(slash != NULL);
    *slash = '\0';
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", exe, name);
    return access(path, X_OK) == 0 ? path : NULL;
}

const char *keel_test_program_path(const char *name)
{
    const char *path = keel_test_program_find(name);
    if (!path)
        cr_assert_fail("%s is not built: it is missing beside this test (build it in the same build folder)", name);
    return path;
}

keel_test_run_options keel_test_run_default_options(void)
{
    keel_test_run_options o = {.stdin_fd = -1, .timeout_s = 0, .file_limit = 0};
    return o;
}

// Waits for pid; with timeout_s > 0 polls every 10 ms and kills it at the
// limit (a guard against hangs, never a measure of speed).
static int run_wait(pid_t pid, int timeout_s, bool *timed_out)
{
    int status = 0;
    *timed_out = false;
    if (timeout_s <= 0) {
        while (waitpid(pid, &status, 0) < 0)
            cr_assert(errno == EINTR, "waitpid: %s", strerror(errno));
        return status;
    }
    for (long waited_ms = 0;; waited_ms += 10) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        cr_assert(got >= 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (got == pid)
            return status;
        if (waited_ms >= 1000L * timeout_s) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0)
                cr_assert(errno == EINTR, "waitpid: %s", strerror(errno));
            *timed_out = true;
            return status;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

keel_test_run_result keel_test_run(const char *program, const char *const *args, const keel_test_run_options *options)
{
    keel_test_run_options o = options ? *options : keel_test_run_default_options();
    const char *argv[64];
    int argc = 0;
    argv[argc++] = program;
    for (int i = 0; args[i]; i++) {
        cr_assert(argc < 63);
        argv[argc++] = args[i];
    }
    argv[argc] = NULL;

    // The output goes to unlinked temporary files: a pipe would need a reader
    // running beside the program, and a file has no size limit to hang on.
    char out_name[4096], err_name[4096];
    int out_fd = keel_test_temp_fd(out_name, sizeof out_name, "out");
    int err_fd = keel_test_temp_fd(err_name, sizeof err_name, "err");
    unlink(out_name);
    unlink(err_name);

    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
            _exit(126);
        if (o.stdin_fd >= 0 && dup2(o.stdin_fd, STDIN_FILENO) < 0)
            _exit(126);
        if (o.file_limit > 0) {
            // Writes beyond the cap fail as on a full disk instead of killing.
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit rl = {(rlim_t)o.file_limit, (rlim_t)o.file_limit};
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        // execv takes char *const[]; the strings are not modified.
        execv(program, (char *const *)argv);
        _exit(127);
    }
    keel_test_run_result r;
    int status = run_wait(pid, o.timeout_s, &r.timed_out);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = keel_test_read_fd(out_fd, &r.out_len);
    r.err = keel_test_read_fd(err_fd, &r.err_len);
    close(out_fd);
    close(err_fd);
    cr_assert(r.exit_code != 127, "cannot execute %s", program);
    return r;
}

void keel_test_run_free(keel_test_run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
