// keel tests: a private X server per test (see test_xvfb.h). MIT licence,
// see LICENSE.
#define _DEFAULT_SOURCE // prctl's PR_SET_PDEATHSIG, kill, waitpid, pipe2

#include "test_xvfb.h"

#include <criterion/criterion.h>

#include "test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *keel_test_which(const char *name)
{
    static char bufs[4][4096];
    static int turn;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        char *out = bufs[turn];
        if (len > 0 && len < 3000) {
            snprintf(out, sizeof bufs[0], "%.*s/%s", (int)len, path, name);
            if (access(out, X_OK) == 0) {
                turn = (turn + 1) % 4;
                return out;
            }
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return NULL;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

bool keel_test_xvfb_start(keel_test_xvfb *x, int width, int height)
{
    memset(x, 0, sizeof *x);
    x->pid = -1;
    const char *xvfb = keel_test_which("Xvfb");
    if (!xvfb) {
        snprintf(x->why, sizeof x->why, "Xvfb is not installed (apt-get install xvfb; scripts/setup.sh)");
        return false;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(x->why, sizeof x->why, "pipe: %s", strerror(errno));
        return false;
    }
    char fd_arg[16], screen[64];
    snprintf(fd_arg, sizeof fd_arg, "%d", fds[1]);
    snprintf(screen, sizeof screen, "%dx%dx24", width, height);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(x->why, sizeof x->why, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        // Ends with the test (a crashed test leaves no server behind).
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        close(fds[0]);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO); // Xvfb's start-up chatter
        }
        const char *argv[] = {xvfb, "-displayfd", fd_arg, "-screen", "0", screen, "-nolisten", "tcp", "-noreset", NULL};
        execv(xvfb, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    x->pid = pid;
    // Xvfb writes the display number and a newline once it accepts clients.
    char buf[32];
    size_t got = 0;
    long deadline = now_ms() + 10000;
    while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
        long left = deadline - now_ms();
        struct pollfd p = {fds[0], POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t n = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    buf[got] = '\0';
    char *end = NULL;
    long number = strtol(buf, &end, 10);
    if (got == 0 || end == buf || *end != '\n' || number < 0) {
        snprintf(x->why, sizeof x->why, "Xvfb did not start (no display number within 10 s)");
        keel_test_xvfb_stop(x);
        return false;
    }
    x->number = (int)number;
    snprintf(x->display, sizeof x->display, ":%d", x->number);
    return true;
}

void keel_test_xvfb_stop(keel_test_xvfb *x)
{
    if (x->pid <= 0)
        return;
    kill(x->pid, SIGTERM);
    int status;
    for (int i = 0; i < 500; i++) { // 5 s
        if (waitpid(x->pid, &status, WNOHANG) == x->pid) {
            x->pid = -1;
            return;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(x->pid, SIGKILL);
    waitpid(x->pid, &status, 0);
    x->pid = -1;
}

void keel_test_play_need(keel_test_xvfb *x, int width, int height)
{
    if (!keel_test_program_find("keel-play"))
        cr_skip_test("keel-play is not built (scripts/setup.sh installs its packages)");
    if (!keel_test_which("xdotool"))
        cr_skip_test("xdotool is not installed (scripts/setup.sh installs it)");
    if (!keel_test_xvfb_start(x, width, height))
        cr_skip_test("%s", x->why);
}

void keel_test_play_start(struct keel_test_proc *p, const keel_test_xvfb *x, const char *const *args)
{
    const char *old = getenv("ASAN_OPTIONS");
    char *saved = old ? strdup(old) : NULL;
    char asan[512];
    snprintf(asan, sizeof asan, "%s%sdetect_leaks=0", old ? old : "", old && *old ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    setenv("DISPLAY", x->display, 1);
    setenv("LIBGL_ALWAYS_SOFTWARE", "1", 1);
    keel_test_proc_start(p, "keel-play", args);
    if (saved)
        setenv("ASAN_OPTIONS", saved, 1);
    else
        unsetenv("ASAN_OPTIONS");
    free(saved);
}
