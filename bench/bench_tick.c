// keel benchmark: how evenly a fixed-rate loop ticks on this system. MIT
// licence, see LICENSE.
//
// keel-server's tick loop, without the network and the simulation: tick k is
// due at start + k / rate (absolute deadlines, so a late tick never shifts
// the ones after it) and the loop sleeps until each deadline with
// keel_app_sleep_until_us, the programs' own sleep (clock_nanosleep on the
// absolute deadline on Linux; on Windows relative sleeps on a high-resolution
// waitable timer with the timer resolution raised to 1 ms; see keel_app.c).
// It prints the period it achieved between wake-ups (mean, median, p99,
// max) against the target, how late the wake-ups were, and how many were
// more than 1 ms late. A figure, never a test: nothing here judges a time.
//
//   bench_tick [--ticks N] [--rate HZ]   (default 640 ticks at 64 Hz: 10 s)
//
// The arrays are allocated before the first tick; the loop allocates nothing.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keel_app.h"

#if defined(__EMSCRIPTEN__)
#define TICK_SYSTEM "emscripten"
#elif defined(_WIN32)
#define TICK_SYSTEM "windows"
#elif defined(__linux__)
#define TICK_SYSTEM "linux"
#else
#define TICK_SYSTEM "other"
#endif

static int usage(void)
{
    fputs("usage: bench_tick [--ticks N] [--rate HZ]\n"
          "  --ticks N   ticks to run, 16..1000000 (default 640)\n"
          "  --rate HZ   ticks per second, 2..1000 (default 64; the period is 1/HZ)\n",
          stderr);
    return 2;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

// The value at fraction q of the sorted array (q in [0, 1]).
static uint64_t quantile(const uint64_t *sorted, uint32_t n, double q)
{
    uint32_t i = (uint32_t)(q * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
    uint32_t ticks = 640, rate = 64;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--ticks") == 0) {
            if (!keel_app_parse_u32(argv[++i], 16, 1000000, &ticks))
                return usage();
        } else if (i + 1 < argc && strcmp(argv[i], "--rate") == 0) {
            if (!keel_app_parse_u32(argv[++i], 2, 1000, &rate))
                return usage();
        } else {
            return usage();
        }
    }
    uint64_t *period = malloc(ticks * sizeof *period), *late = malloc(ticks * sizeof *late);
    if (!period || !late) {
        fputs("bench_tick: out of memory\n", stderr);
        return 1;
    }
    keel_app_sleep_until_us(0); // the timer's set-up (Windows), as keel-server does
    const uint64_t start = keel_app_now_us();
    uint64_t prev = start, sum = 0, late_1ms = 0;
    for (uint32_t k = 1; k <= ticks; k++) {
        uint64_t deadline = start + (uint64_t)k * 1000000u / rate;
        keel_app_sleep_until_us(deadline);
        uint64_t now = keel_app_now_us();
        period[k - 1] = now - prev;
        late[k - 1] = now - deadline;
        late_1ms += late[k - 1] > 1000u;
        sum += now - prev;
        prev = now;
    }
    qsort(period, ticks, sizeof *period, cmp_u64);
    qsort(late, ticks, sizeof *late, cmp_u64);
    double ms = 1e-3;
    printf("bench_tick: %s, %u Hz (period %.3f ms), %u ticks: period mean %.3f ms, median %.3f, p99 %.3f, max %.3f; "
           "wake-up late by median %.3f ms, p99 %.3f, max %.3f; %" PRIu64 " ticks more than 1 ms late\n",
           TICK_SYSTEM, rate, 1000.0 / rate, ticks, (double)sum / ticks * ms, (double)quantile(period, ticks, 0.5) * ms,
           (double)quantile(period, ticks, 0.99) * ms, (double)period[ticks - 1] * ms,
           (double)quantile(late, ticks, 0.5) * ms, (double)quantile(late, ticks, 0.99) * ms,
           (double)late[ticks - 1] * ms, late_1ms);
    free(period);
    free(late);
    return 0;
}
