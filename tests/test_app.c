// keel tests: the programs' shared helpers (app/keel_app.c): the
// sleep until a deadline (Linux's absolute sleep and the relative loop every
// other system uses), and file names taken from Linux and Windows paths.
// MIT licence, see LICENSE.
#include <criterion/criterion.h>

#include "keel_app.h"
#include "keel_opt.h"

// Never early: each sleep returns only once keel_app_now_us has reached its
// deadline (no upper bound is asserted: a busy machine may wake it late).
static void sleeps_reach_the_deadline(void (*sleep_until)(uint64_t))
{
    for (uint64_t wait_us = 0; wait_us <= 4000u; wait_us += 500u) {
        uint64_t deadline = keel_app_now_us() + wait_us;
        sleep_until(deadline);
        uint64_t now = keel_app_now_us();
        cr_assert_geq(now, deadline, "woke %llu us before the deadline", (unsigned long long)(deadline - now));
    }
    // a deadline in the past, or long past, returns at once
    sleep_until(0);
    sleep_until(keel_app_now_us() - 1u);
}

Test(app, the_sleep_never_returns_before_its_deadline) { sleeps_reach_the_deadline(keel_app_sleep_until_us); }

Test(app, the_relative_sleep_loop_never_returns_before_its_deadline)
{
    sleeps_reach_the_deadline(keel_app_sleep_until_us_portable);
}

Test(app, the_clocks_do_not_go_back)
{
    uint64_t t = keel_app_now_us(), c = keel_app_thread_cpu_us();
    for (int i = 0; i < 1000; i++) {
        uint64_t t2 = keel_app_now_us(), c2 = keel_app_thread_cpu_us();
        cr_assert_geq(t2, t);
        cr_assert_geq(c2, c);
        t = t2, c = c2;
    }
}

Test(app, file_names_from_linux_and_windows_paths)
{
    static const struct {
        const char *path, *base;
    } cases[] = {
        {"/maps/sauerbraten_zdm2.obj", "sauerbraten_zdm2.obj"},
        {"Z:\\home\\keel\\levels\\sauerbraten_zdm2.obj", "sauerbraten_zdm2.obj"},
        {"C:/keel/levels/box.obj", "box.obj"},
        {"levels\\sub/box.obj", "box.obj"},
        {"levels/sub\\box.obj", "box.obj"},
        {"box.obj", "box.obj"},
        {"levels/", ""},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_str_eq(keel_app_path_base(cases[i].path), cases[i].base, "%s", cases[i].path);
}

// Durations on the command line (keel_opt_ms): seconds with up to three decimals.
Test(app, durations_take_fractions_of_a_second)
{
    static const struct {
        const char *text;
        int ok;
        uint64_t ms;
    } cases[] = {
        {"0.1", 1, 100},      {"5", 1, 5000},
        {"2.25", 1, 2250},    {"0.001", 1, 1},
        {"10.500", 1, 10500}, {"0.0001", 0, 0},
        {"5.", 0, 0},         {".5", 0, 0},
        {"-1", 0, 0},         {"1e3", 0, 0},
        {"", 0, 0},           {" 1", 0, 0},
        {"1 ", 0, 0},         {"99999999999999999999", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t ms = 0;
        cr_assert_eq(keel_app_parse_ms(cases[i].text, 0, UINT64_MAX, &ms), cases[i].ok, "'%s'", cases[i].text);
        if (cases[i].ok)
            cr_assert_eq(ms, cases[i].ms, "'%s': %llu ms", cases[i].text, (unsigned long long)ms);
    }
    uint64_t ms;
    cr_assert(!keel_app_parse_ms("0.5", 1000, 2000, &ms), "below the range");
    cr_assert(keel_app_parse_ms("2", 1000, 2000, &ms) && ms == 2000);
}
