// keel: what the text level loaders share (decimal numbers, messages, files). MIT licence, see LICENSE.
#ifndef KEEL_LEVEL_TEXT_H
#define KEEL_LEVEL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <keel/sim_level.h>

/// The syntax of one number: sign, integer digits, fraction digits, exponent.
typedef struct level_decimal {
    bool negative;
    const char *int_digits;
    size_t int_len;
    const char *frac_digits;
    size_t frac_len;
    int64_t exponent;
} level_decimal;

/// A scale as mantissa * 10^exponent, mantissa in [1, 10^12).
typedef struct level_scale {
    uint64_t mantissa;
    int64_t exponent;
} level_scale;

/// [+-]? digits? ('.' digits?)? ([eE] [+-]? digits)? with at least one
/// mantissa digit, and nothing else (no hex, "inf" or "nan").
bool level_decimal_parse(const char *s, size_t len, level_decimal *d);
/// A positive decimal with at most 12 significant digits.
bool level_scale_parse(const char *text, level_scale *sc);
/// value * scale in Q16.16 raw units, rounded to nearest (ties away from
/// zero); false when the magnitude exceeds SIM_WORLD_LIMIT.
bool level_decimal_to_raw(const level_decimal *d, const level_scale *sc, sim_fx *out);
/// "name:line: what" (or "name: what" for line 0) into err (may be NULL).
void level_set_error(const char *name, sim_error *err, uint32_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/// A token for messages: at most 24 bytes, non-printable bytes as '?'.
const char *level_quote(const char *s, size_t len, char buf[32]);
/// What every text loader checks first: clears err, empties *out (which
/// must be given), refuses a missing, empty or too large text, and skips a
/// UTF-8 byte-order mark. 0, or -1 with err set.
int level_text_begin(const char *name, sim_error *err, sim_level *out, const char **text, size_t *length,
                     size_t max_bytes);
/// Reads a whole file (at most max_bytes) into a malloc'd buffer.
int level_read_file(const char *path, size_t max_bytes, char **text, size_t *length, sim_error *err);

#endif
