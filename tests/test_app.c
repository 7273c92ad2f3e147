// keel tests: the programs' shared helpers (app/keel_app.c): the
// sleep until a deadline (Linux's absolute sleep and the relative loop every
// other system uses), and file names taken from Linux and Windows paths.
// MIT licence, see LICENSE.
#include <criterion/criterion.h>

#include "keel_app.h"

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
