// keel-sim: --input files, one command per line. MIT licence, see LICENSE.
//
// The format (docs/formats.md, "keel-sim input files") is the fields of
// sim_input in order, as decimal integers:
//
//     tick character forward right up yaw pitch buttons
//
// It is validated strictly and completely before the run starts, so a typo
// is reported with its line instead of quietly driving a character wrong.
#include "keel_sim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define FIELDS 8
/// Longest line accepted, not counting the newline (like the OBJ loader).
#define MAX_LINE 65536
/// Longest field echoed in a message; longer ones end in "...".
#define ECHO_MAX 40

static const char *const field_names[FIELDS] = {"tick", "character", "forward", "right",
                                                "up",   "yaw",       "pitch",   "buttons"};

// Ranges per field. Angles accept negative values too (-16384 is 49152, a
// quarter turn clockwise): that is how a downward pitch is usually written.
static const int64_t field_lo[FIELDS] = {0, 1, -127, -127, -127, -32768, -32768, 0};
static const int64_t field_hi[FIELDS] = {
    UINT32_MAX, 0 /* characters */, 127, 127, 127, 65535, 65535, SIM_BUTTON_JUMP | SIM_BUTTON_CROUCH | SIM_BUTTON_FLY};

typedef struct reader {
    const char *path;
    uint32_t line;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail(const reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->line > 0)
        fprintf(stderr, "keel-sim: %s:%u: ", r->path, (unsigned)r->line);
    else
        fprintf(stderr, "keel-sim: %s: ", r->path);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return KS_EXIT_FAILURE;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Strict decimal integer: optional sign, then digits and nothing else. Huge
// values saturate at 10^18, which every range check then rejects.
static bool parse_int(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (i == n)
        return false;
    const int64_t cap = INT64_C(1000000000000000000);
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v >= cap / 10 ? cap : v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

static int by_tick_then_id(const void *a, const void *b)
{
    const ks_command *x = a, *y = b;
    if (x->input.tick != y->input.tick)
        return x->input.tick < y->input.tick ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

// One line (without its newline): blank, a comment, or a command appended to
// *out. Returns KS_EXIT_OK or the error status after reporting it.
static int parse_line(reader *r, const char *text, size_t len, uint32_t characters, uint32_t *last_tick,
                      uint32_t *last_line, ks_script *out, size_t *cap)
{
    const char *tok[FIELDS + 1];
    size_t tok_len[FIELDS + 1];
    int n = 0;
    size_t i = 0;
    for (;;) {
        while (i < len && is_space(text[i]))
            i++;
        if (i == len || text[i] == '#')
            break;
        size_t start = i;
        while (i < len && !is_space(text[i]) && text[i] != '#')
            i++;
        if (n <= FIELDS) {
            tok[n] = text + start;
            tok_len[n] = i - start;
        }
        n++;
    }
    if (n == 0)
        return KS_EXIT_OK;
    if (n != FIELDS)
        return fail(r,
                    "expected %d fields (tick character forward right up yaw pitch buttons), "
                    "found %d",
                    FIELDS, n);
    int64_t v[FIELDS];
    for (int f = 0; f < FIELDS; f++) {
        // Values are echoed as typed (parse_int saturates huge ones), cut
        // short after ECHO_MAX bytes.
        int shown = tok_len[f] > ECHO_MAX ? ECHO_MAX : (int)tok_len[f];
        const char *more = tok_len[f] > ECHO_MAX ? "..." : "";
        if (!parse_int(tok[f], tok_len[f], &v[f]))
            return fail(r, "%s: '%.*s%s' is not a decimal integer", field_names[f], shown, tok[f], more);
        int64_t hi = f == 1 ? (int64_t)characters : field_hi[f];
        if (f == 1 && (v[f] < 1 || v[f] > hi)) {
            if (characters == 0)
                return fail(r, "unknown character %.*s%s (the run has no characters)", shown, tok[f], more);
            return fail(r, "unknown character %.*s%s (the run has characters 1 to %u)", shown, tok[f], more,
                        (unsigned)characters);
        }
        if (v[f] < field_lo[f] || v[f] > hi)
            return fail(r, "%s %.*s%s is out of range (%lld to %lld)", field_names[f], shown, tok[f], more,
                        (long long)field_lo[f], (long long)hi);
    }
    uint32_t tick = (uint32_t)v[0], id = (uint32_t)v[1];
    if (last_line[id - 1] != 0 && tick <= last_tick[id - 1])
        return fail(r,
                    "tick %u for character %u is not after its previous command (tick %u on "
                    "line %u)",
                    (unsigned)tick, (unsigned)id, (unsigned)last_tick[id - 1], (unsigned)last_line[id - 1]);
    last_tick[id - 1] = tick;
    last_line[id - 1] = r->line;

    if (out->count == *cap) {
        size_t grown = *cap ? *cap * 2 : 256;
        ks_command *c = realloc(out->commands, grown * sizeof *c);
        if (!c)
            return fail(r, "out of memory");
        out->commands = c;
        *cap = grown;
    }
    ks_command *c = &out->commands[out->count++];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->input.tick = tick;
    c->input.forward = (int8_t)v[2];
    c->input.right = (int8_t)v[3];
    c->input.up = (int8_t)v[4];
    // Negative angles wrap around the turn: the value modulo 65536.
    c->input.yaw = (sim_angle)(uint32_t)(v[5] & 0xFFFF);
    c->input.pitch = (sim_angle)(uint32_t)(v[6] & 0xFFFF);
    c->input.buttons = (uint8_t)v[7];
    return KS_EXIT_OK;
}

int ks_script_load(const char *path, uint32_t characters, ks_script *out)
{
    memset(out, 0, sizeof *out);
    reader r = {path, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(&r, "cannot open: %s", strerror(errno));
    char *line = malloc(MAX_LINE + 1);
    // Per character (index id - 1): tick and line of its last command, for
    // the order check; line 0 means none yet.
    uint32_t *last_tick = calloc(characters ? characters : 1, sizeof *last_tick);
    uint32_t *last_line = calloc(characters ? characters : 1, sizeof *last_line);
    size_t cap = 0;
    int rc = KS_EXIT_OK;
    if (!line || !last_tick || !last_line) {
        rc = fail(&r, "out of memory");
        goto done;
    }
    // A NUL byte or an over-long line is reported as soon as it is read, not
    // at the end of its line: /dev/zero or an endless stream without a
    // newline must not keep the reader waiting.
    bool first_line = true;
    for (;;) {
        size_t len = 0;
        int ch = EOF;
        while ((ch = getc(f)) != EOF && ch != '\n') {
            if (ch == '\0') {
                r.line++;
                rc = fail(&r, "NUL byte in the line");
                goto done;
            }
            if (len == MAX_LINE) {
                r.line++;
                rc = fail(&r, "line longer than %d bytes", MAX_LINE);
                goto done;
            }
            line[len++] = (char)ch;
            // A UTF-8 byte-order mark before the first line is not part of it.
            if (first_line && len == 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0)
                len = 0, first_line = false;
        }
        first_line = false;
        if (ch == EOF && len == 0) {
            if (ferror(f))
                rc = fail(&r, "cannot read: %s", strerror(errno));
            break; // the end, or a last line that was empty
        }
        r.line++;
        rc = parse_line(&r, line, len, characters, last_tick, last_line, out, &cap);
        if (rc != KS_EXIT_OK || ch == EOF)
            break;
    }
done:
    free(line);
    free(last_tick);
    free(last_line);
    fclose(f);
    if (rc != KS_EXIT_OK) {
        ks_script_free(out);
        return rc;
    }
    // Stable order is not needed: (tick, id) is unique after the checks.
    if (out->count > 1)
        qsort(out->commands, out->count, sizeof *out->commands, by_tick_then_id);
    return KS_EXIT_OK;
}

void ks_script_free(ks_script *script)
{
    free(script->commands);
    memset(script, 0, sizeof *script);
}
