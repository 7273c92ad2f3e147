// keel programs: the shared option parser (keel_opt.h). MIT licence, see LICENSE.
#include "keel_opt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "keel_app.h"

void keel_opt_init(keel_opt *o, const char *program, int argc, char **argv, int first)
{
    memset(o, 0, sizeof *o);
    o->program = program;
    o->argc = argc;
    o->argv = argv;
    o->next = first;
}

static int vfail(keel_opt *o, const char *name, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", o->program);
    if (name && name[0])
        fprintf(stderr, "%s: ", name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (%s --help lists the options)\n", o->program);
    o->failed = true;
    return 2;
}

int keel_opt_fail(keel_opt *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(o, o->name, fmt, ap);
    va_end(ap);
    return rc;
}

int keel_opt_bad(keel_opt *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(o, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int keel_opt_unknown(keel_opt *o)
{
    const char *what = strncmp(o->name, "--", 2) == 0 ? "unknown option" : "unexpected argument";
    return keel_opt_bad(o, "%s '%s'", what, o->name);
}

const char *keel_opt_next(keel_opt *o)
{
    if (o->failed)
        return NULL;
    if (o->inline_value && !o->inline_used) {
        keel_opt_fail(o, "takes no value (given '%s')", o->inline_value);
        return NULL;
    }
    o->inline_value = NULL;
    o->inline_used = false;
    if (o->next >= o->argc) {
        o->name[0] = '\0';
        return NULL;
    }
    const char *arg = o->argv[o->next++];
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n >= sizeof o->name)
        n = sizeof o->name - 1; // too long for any option: unknown either way
    memcpy(o->name, arg, n);
    o->name[n] = '\0';
    if (!eq)
        return arg; // (an argument such as a file name stays valid after the next call)
    o->inline_value = eq + 1;
    return o->name;
}

const char *keel_opt_value(keel_opt *o)
{
    if (o->inline_value) {
        o->inline_used = true;
        return o->inline_value;
    }
    if (o->next < o->argc && strncmp(o->argv[o->next], "--", 2) != 0)
        return o->argv[o->next++];
    keel_opt_fail(o, "needs a value");
    return NULL;
}

bool keel_opt_u32(keel_opt *o, uint32_t lo, uint32_t hi, uint32_t *out)
{
    const char *v = keel_opt_value(o);
    if (!v)
        return false;
    if (keel_app_parse_u32(v, lo, hi, out))
        return true;
    keel_opt_fail(o, "'%s' is not a whole number in %u..%u", v, (unsigned)lo, (unsigned)hi);
    return false;
}

bool keel_opt_u64(keel_opt *o, uint64_t lo, uint64_t hi, uint64_t *out)
{
    const char *v = keel_opt_value(o);
    if (!v)
        return false;
    if (keel_app_parse_u64(v, lo, hi, out))
        return true;
    keel_opt_fail(o, "'%s' is not a whole number (decimal or 0x hex) in %llu..%llu", v, (unsigned long long)lo,
                  (unsigned long long)hi);
    return false;
}

bool keel_opt_ms(keel_opt *o, uint64_t lo_ms, uint64_t hi_ms, uint64_t *out_ms)
{
    const char *v = keel_opt_value(o);
    if (!v)
        return false;
    if (keel_app_parse_ms(v, lo_ms, hi_ms, out_ms))
        return true;
    keel_opt_fail(o, "'%s' is not a number of seconds in %llu.%03u..%llu.%03u (up to 3 decimals)", v,
                  (unsigned long long)(lo_ms / 1000u), (unsigned)(lo_ms % 1000u), (unsigned long long)(hi_ms / 1000u),
                  (unsigned)(hi_ms % 1000u));
    return false;
}

int keel_opt_choice(keel_opt *o, const char *const *choices)
{
    const char *v = keel_opt_value(o);
    if (!v)
        return -1;
    char list[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (strcmp(v, choices[i]) == 0)
            return i;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
    }
    keel_opt_fail(o, "'%s' is not one of %s", v, list);
    return -1;
}

bool keel_app_parse_ms(const char *s, uint64_t lo_ms, uint64_t hi_ms, uint64_t *out_ms)
{
    if (!s || !(*s >= '0' && *s <= '9'))
        return false;
    uint64_t whole = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (whole > (UINT64_MAX / 1000u - 9u) / 10u)
            return false; // overflow (of the milliseconds below)
        whole = whole * 10u + (uint64_t)(*s - '0');
    }
    uint64_t frac = 0;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return false; // "5." is not a number
        for (uint64_t scale = 100; *s >= '0' && *s <= '9'; s++, scale /= 10u) {
            if (scale == 0)
                return false; // a fourth decimal: finer than a millisecond
            frac += scale * (uint64_t)(*s - '0');
        }
    }
    if (*s)
        return false;
    uint64_t ms = whole * 1000u + frac;
    if (ms < lo_ms || ms > hi_ms)
        return false;
    *out_ms = ms;
    return true;
}
