// keel programs: shared helpers. MIT licence, see LICENSE.
#define _POSIX_C_SOURCE 200809L
#include "keel_app.h"

#include <keel/sim_world.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int keel_app_load_level(const char *name, const char *scale, char up, sim_level *out, char *err, size_t err_size)
{
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

sim_world *keel_app_load_world(const char *program, const char *name, const char *scale, char up, sim_level *level)
{
    char err[600];
    if (keel_app_load_level(name, scale, up, level, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", program, err);
        return NULL;
    }
    sim_error werr;
    sim_world *world = sim_world_create(level, NULL, &werr);
    if (!world) {
        fprintf(stderr, "%s: %s\n", program, werr.message);
        sim_level_free(level);
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
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void keel_app_sleep_until_us(uint64_t deadline_us)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_us / 1000000u);
    ts.tv_nsec = (long)(deadline_us % 1000000u) * 1000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
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
