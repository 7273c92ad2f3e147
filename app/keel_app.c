// keel programs: shared helpers. MIT licence, see LICENSE.
//
// The clock is CLOCK_MONOTONIC everywhere (MinGW-w64's winpthreads and
// Emscripten have it too). Sleeping until a deadline differs by system:
//   Linux: clock_nanosleep on the absolute deadline, so a wake-up is never
//     early and a preemption between reading the clock and sleeping costs
//     nothing;
//   elsewhere: relative sleeps in a loop that reads the clock again after
//     each one, until the deadline has passed (MinGW-w64's clock_nanosleep
//     fails at once on CLOCK_MONOTONIC, and Emscripten ignores
//     TIMER_ABSTIME, so neither can take the absolute deadline);
//   Windows: the first call raises the process's timer resolution to 1 ms
//     (timeBeginPeriod, taken from winmm.dll at run time: no link library),
//     which also makes ENet's waits 1 ms grained instead of 15.6 ms, and each
//     sleep waits on a high-resolution waitable timer (Windows 10 1803 and
//     later; else Sleep in whole milliseconds, rounded up). A 64 Hz loop then
//     wakes within about a millisecond of its deadlines, as on Linux.
//     Loading winmm.dll takes time (about 130 ms under Wine), so a loop with
//     absolute deadlines calls keel_app_sleep_until_us(0) before it takes its
//     start time: its first tick is then not late, nor the next ones bunched.
#define _POSIX_C_SOURCE 200809L
#include "keel_app.h"

#include <keel/sim_world.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(_WIN32)
#include <windows.h>
#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif
#endif

int keel_app_is_map(const char *name)
{
    size_t n = strlen(name);
    if (n < 4 || name[n - 4] != '.')
        return 0;
    const char *e = name + n - 3;
    return (e[0] == 'm' || e[0] == 'M') && (e[1] == 'a' || e[1] == 'A') && (e[2] == 'p' || e[2] == 'P');
}

const char *keel_app_level_scale(const char *name, const char *scale)
{
    return keel_app_is_map(name) ? "0.025" : scale;
}

char keel_app_level_up(const char *name, char up) { return keel_app_is_map(name) ? 'z' : up; }

int keel_app_load_level(const char *name, const char *scale, char up, sim_level *out, char *err, size_t err_size)
{
    return keel_app_load_level_map(name, scale, up, out, NULL, err, err_size);
}

int keel_app_load_level_map(const char *name, const char *scale, char up, sim_level *out, sim_map *map, char *err,
                            size_t err_size)
{
    if (map)
        memset(map, 0, sizeof *map);
    if (keel_app_is_map(name)) {
        sim_error e;
        if (sim_level_load_map(name, NULL, out, map, &e) != 0) {
            snprintf(err, err_size, "%s", e.message);
            return -1;
        }
        return 0;
    }
    if (strcmp(name, "builtin") == 0) {
        if (sim_level_builtin(out) != 0) {
            snprintf(err, err_size, "cannot build the built-in level (out of memory)");
            return -1;
        }
        return 0;
    }
    sim_obj_options o = sim_obj_default_options();
    o.unit_scale = scale;
    o.up_axis = up;
    sim_error e;
    if (sim_level_load_obj(name, &o, out, &e) != 0) {
        snprintf(err, err_size, "%s", e.message);
        return -1;
    }
    return 0;
}

sim_world *keel_app_load_world(const char *program, const char *name, const char *scale, char up, sim_level *level,
                               sim_map *map)
{
    char err[600];
    if (keel_app_load_level_map(name, scale, up, level, map, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", program, err);
        return NULL;
    }
    sim_error werr;
    sim_world *world = sim_world_create(level, NULL, &werr);
    if (!world) {
        fprintf(stderr, "%s: %s\n", program, werr.message);
        sim_level_free(level);
        sim_map_free(map);
    }
    return world;
}

uint64_t keel_app_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t keel_app_thread_cpu_us(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0; // no per-thread CPU clock on this system
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#if defined(_WIN32)
static void timer_resolution_1ms(void)
{
    static int period_set; // the programs sleep on one thread
    if (!period_set) {
        period_set = 1;
        HMODULE winmm = LoadLibraryA("winmm.dll");
        FARPROC f = winmm ? GetProcAddress(winmm, "timeBeginPeriod") : NULL;
        if (f)
            ((UINT(WINAPI *)(UINT))(void (*)(void))f)(1);
    }
}

static void sleep_for_us(uint64_t us)
{
    timer_resolution_1ms();
    HANDLE timer = CreateWaitableTimerExW(NULL, NULL, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, TIMER_ALL_ACCESS);
    if (timer) {
        LARGE_INTEGER due;
        due.QuadPart = -(LONGLONG)(us * 10u); // relative, in 100 ns units
        if (SetWaitableTimer(timer, &due, 0, NULL, NULL, FALSE))
            WaitForSingleObject(timer, INFINITE);
        CloseHandle(timer);
        return;
    }
    Sleep((DWORD)((us + 999u) / 1000u));
}
#else
static void sleep_for_us(uint64_t us)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1000000u);
    ts.tv_nsec = (long)(us % 1000000u) * 1000L;
    nanosleep(&ts, NULL); // interrupted or not, the caller reads the clock again
}
#endif

void keel_app_sleep_until_us_portable(uint64_t deadline_us)
{
    for (;;) {
        uint64_t now = keel_app_now_us();
        if (now >= deadline_us)
            return;
        uint64_t left = deadline_us - now;
        sleep_for_us(left < 1000000u ? left : 1000000u);
    }
}

void keel_app_sleep_until_us(uint64_t deadline_us)
{
#if defined(_WIN32)
    timer_resolution_1ms(); // even when the deadline has passed: see the opening comment
#endif
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_us / 1000000u);
    ts.tv_nsec = (long)(deadline_us % 1000000u) * 1000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
#else
    keel_app_sleep_until_us_portable(deadline_us);
#endif
}

const char *keel_app_path_base(const char *path)
{
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    return base;
}

int keel_app_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s)
        return 0;
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s)
        return 0;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a' + 10);
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = (unsigned)(*p - 'A' + 10);
        else
            return 0;
        if (v > (UINT64_MAX - d) / base)
            return 0; // overflow
        v = v * base + d;
    }
    if (v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int keel_app_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (!s || !*s || strlen(s) > 10)
        return 0;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10u + (uint64_t)(*p - '0');
    }
    if (v < lo || v > hi)
        return 0;
    *out = (uint32_t)v;
    return 1;
}
