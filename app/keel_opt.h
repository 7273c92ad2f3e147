// keel programs: one command-line option parser for every program. MIT
// licence, see LICENSE.
//
// Every keel program reads its options the same way:
//   --name value and --name=value are the same option (a value that starts
//     with "--" must be given with '=': "--record --quiet" is an error, not a
//     recording named "--quiet");
//   a flag given a value ("--quiet=1") is an error;
//   whole numbers are decimal (some options take 0x hex too), durations are
//     seconds with up to three decimals ("0.1", "2.5": milliseconds);
//   an error is one line naming the option and what it takes, then a pointer
//     to --help (never the whole usage), and the program exits with status 2.
// Arguments that do not start with "--" (keel-replay's FILE, keel-token's
// command) come back as they are. Own code (no getopt: the Windows and
// WebAssembly builds have none of glibc's getopt_long).
#ifndef KEEL_OPT_H
#define KEEL_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The line every program's --help prints about the syntax.
#define KEEL_OPT_SYNTAX                                                                               \
    "Options take their value as --name VALUE or --name=VALUE; S is seconds, with up to 3 decimals\n" \
    "(0.1); a HOST is a name or an IPv4 address.\n"

/// The parser's state over argv[first..argc-1].
typedef struct keel_opt {
    const char *program; ///< "keel-server": the prefix of every message
    int argc;
    char **argv;
    int next;                 ///< the argv index read next
    char name[64];            ///< the current option without "=value" ("--port")
    const char *inline_value; ///< what followed '=' (NULL: no '=')
    bool inline_used;         ///< the option took its "=value"
    bool failed;              ///< a message was printed: exit with status 2
} keel_opt;

/// Start at argv[first] (1, or 2 after a command word).
void keel_opt_init(keel_opt *o, const char *program, int argc, char **argv, int first);
/// The next argument: an option's name ("--port" for "--port=1" too) or an
/// argument as given (argv's own string; a name split from "=value" lives in
/// o->name until the next call). NULL at the end, or when the previous option was a flag
/// given "=value" (then o->failed, with a message).
const char *keel_opt_next(keel_opt *o);
/// The current option's value ("=value" or the next argument); NULL, with a
/// message "<program>: --x needs a value", when there is none.
const char *keel_opt_value(keel_opt *o);
/// The value as a decimal in [lo, hi]; false with a message naming the
/// option and the range.
bool keel_opt_u32(keel_opt *o, uint32_t lo, uint32_t hi, uint32_t *out);
/// The value as a decimal or 0x hex in [lo, hi]; false with a message.
bool keel_opt_u64(keel_opt *o, uint64_t lo, uint64_t hi, uint64_t *out);
/// The value as a duration in seconds with up to three decimals ("0.1"),
/// in milliseconds in [lo_ms, hi_ms]; false with a message.
bool keel_opt_ms(keel_opt *o, uint64_t lo_ms, uint64_t hi_ms, uint64_t *out_ms);
/// One of `choices` (a NULL-terminated list): its index, or -1 with a message
/// listing them.
int keel_opt_choice(keel_opt *o, const char *const *choices);
/// "<program>: <current option>: <message> (<program> --help lists the
/// options)" on stderr; sets o->failed and returns 2 (the exit status).
int keel_opt_fail(keel_opt *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/// The same for what no one option is to blame for (a combination: "--key
/// and --insecure do not go together"): the message without an option name.
int keel_opt_bad(keel_opt *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/// "<program>: unknown option '--x'" or "unexpected argument 'x'" for the
/// current argument, as keel_opt_fail; returns 2.
int keel_opt_unknown(keel_opt *o);

/// Parse seconds with up to three decimals ("5", "0.1", "2.250") into
/// milliseconds in [lo_ms, hi_ms]; false on anything else (a sign, spaces,
/// a fourth decimal, overflow).
bool keel_app_parse_ms(const char *s, uint64_t lo_ms, uint64_t hi_ms, uint64_t *out_ms);

#endif
