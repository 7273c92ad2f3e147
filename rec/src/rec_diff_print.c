// keel recordings: printing a diff report as text or JSON. MIT licence, see
// LICENSE.
//
// Every number is formatted from its integer with integer arithmetic: a
// Q16.16 value as six rounded decimals for people and, in JSON, as its exact
// decimal expansion (at most 16 fraction digits) beside the raw integer.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rec_resim.h"

static unsigned hex_digits(rec_field_type type)
{
    switch (type) {
    case REC_FIELD_U8:
    case REC_FIELD_I8: return 2;
    case REC_FIELD_U16: return 4;
    default: return 8;
    }
}

// The value's bits in its width (two's complement for signed fields).
static uint64_t raw_bits(rec_field_type type, int64_t v)
{
    unsigned bits = hex_digits(type) * 4u;
    return (uint64_t)v & ((UINT64_C(1) << bits) - 1u);
}

// Six decimals, rounded to nearest with ties away from zero.
static void format_fx6(char *buf, size_t size, int64_t v)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t micro = (mag * 1000000u + 32768u) >> 16;
    snprintf(buf, size, "%s%" PRIu64 ".%06" PRIu64, v < 0 && micro > 0 ? "-" : "", micro / 1000000u, micro % 1000000u);
}

// The exact decimal value of a Q16.16 number, trailing zeros dropped.
static void format_fx_exact(char *buf, size_t size, int64_t v)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    // 10^16 / 2^16 = 5^16 * 2^0 exactly (152587890625), so the fraction's
    // 16 digits are an integer product.
    uint64_t frac = (mag & 0xFFFFu) * UINT64_C(152587890625);
    char digits[17];
    snprintf(digits, sizeof digits, "%016" PRIu64, frac);
    int n = 16;
    while (n > 0 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    snprintf(buf, size, "%s%" PRIu64 "%s%s", v < 0 ? "-" : "", mag >> 16, n ? "." : "", digits);
}

void rec_format_value(char *buf, size_t size, rec_field_type type, int64_t v)
{
    char num[48];
    if (type == REC_FIELD_FX)
        format_fx6(num, sizeof num, v);
    else
        snprintf(num, sizeof num, "%" PRId64, v);
    snprintf(buf, size, "%s (0x%0*" PRIx64 ")", num, (int)hex_digits(type), raw_bits(type, v));
}

static const char *kind_name(rec_diff_kind k)
{
    switch (k) {
    case REC_DIFF_START: return "initial state";
    case REC_DIFF_EVENTS: return "joins or leaves";
    case REC_DIFF_INPUTS: return "commands";
    case REC_DIFF_STATE: return "results";
    default: return "none";
    }
}

static const char *value_kind_name(rec_value_kind k)
{
    switch (k) {
    case REC_VALUE_STATE: return "state";
    case REC_VALUE_INPUT: return "input";
    case REC_VALUE_PRESENCE: return "presence";
    case REC_VALUE_JOIN: return "join";
    case REC_VALUE_LEAVE: return "leave";
    default: return "command";
    }
}

// The tick a value line names: the divergent tick for the tick's own inputs
// and for the state right after it; for a later keyframe's state, the tick
// that state is the result of.
static uint32_t value_tick(const rec_diff_report *r, const rec_diff_value *v)
{
    if ((v->kind == REC_VALUE_STATE || v->kind == REC_VALUE_PRESENCE) && r->kind != REC_DIFF_START &&
        r->values_tick > 0)
        return r->values_tick - 1u;
    return r->div.tick;
}

void rec_diff_print_text(FILE *out, const rec_diff_report *r, const char *name_a, const char *name_b)
{
    const char *notes = r->notes;
    while (*notes) {
        size_t n = strcspn(notes, "\n");
        fprintf(out, "note: %.*s\n", (int)n, notes);
        notes += n + (notes[n] == '\n');
    }
    if (r->kind == REC_DIFF_NONE) {
        fprintf(out, "match: %s and %s agree over %u ticks (last world hash %016" PRIx64 ")\n", name_a, name_b,
                (unsigned)r->ticks_compared, r->hash_a);
        return;
    }
    fprintf(out, "diverged (%s vs %s): %s\n", name_a, name_b, r->div.detail);
    if (r->value_count > 0 && r->values_source[0])
        fprintf(out, "%s from %s:\n", r->values_exact ? "values" : "hint: values", r->values_source);
    for (uint32_t i = 0; i < r->value_count; i++) {
        const rec_diff_value *v = &r->values[i];
        char va[64], vb[64];
        rec_field_type type = rec_value_type(v);
        rec_format_value(va, sizeof va, type, v->a);
        rec_format_value(vb, sizeof vb, type, v->b);
        fprintf(out, "%stick %u character %u %s: %s vs %s\n",
                r->values_exact || v->kind != REC_VALUE_STATE ? "" : "hint: ", (unsigned)value_tick(r, v),
                (unsigned)v->character, rec_value_name(v), va, vb);
    }
    if (r->values_truncated)
        fprintf(out, "(more values differ than listed)\n");
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static void json_value(FILE *out, rec_field_type type, int64_t v)
{
    char dec[48];
    if (type == REC_FIELD_FX)
        format_fx_exact(dec, sizeof dec, v);
    else
        snprintf(dec, sizeof dec, "%" PRId64, v);
    fprintf(out, "{\"raw\":%" PRId64 ",\"hex\":\"0x%0*" PRIx64 "\",\"decimal\":%s}", v, (int)hex_digits(type),
            raw_bits(type, v), dec);
}

void rec_diff_print_json(FILE *out, const rec_diff_report *r, const char *name_a, const char *name_b)
{
    fprintf(out, "{\"result\":\"%s\",\"a\":", r->kind == REC_DIFF_NONE ? "match" : "diverged");
    json_string(out, name_a);
    fputs(",\"b\":", out);
    json_string(out, name_b);
    fprintf(out, ",\"ticks_a\":%u,\"ticks_b\":%u,\"ticks_compared\":%u", (unsigned)r->ticks_a, (unsigned)r->ticks_b,
            (unsigned)r->ticks_compared);
    fputs(",\"notes\":[", out);
    const char *notes = r->notes;
    for (bool first = true; *notes; first = false) {
        size_t n = strcspn(notes, "\n");
        char line[sizeof r->notes];
        snprintf(line, sizeof line, "%.*s", (int)n, notes);
        if (!first)
            fputc(',', out);
        json_string(out, line);
        notes += n + (notes[n] == '\n');
    }
    fputc(']', out);
    if (r->kind == REC_DIFF_NONE) {
        fprintf(out, ",\"hash\":\"%016" PRIx64 "\"}\n", r->hash_a);
        return;
    }
    fprintf(out, ",\"kind\":\"%s\",\"tick\":%u,\"hash_a\":\"%016" PRIx64 "\",\"hash_b\":\"%016" PRIx64 "\"",
            kind_name(r->kind), (unsigned)r->div.tick, r->hash_a, r->hash_b);
    fprintf(out, ",\"characters_differing\":%u,\"characters\":[", (unsigned)r->div.characters_differing);
    for (uint32_t i = 0; i < r->character_count; i++)
        fprintf(out, "%s%u", i ? "," : "", (unsigned)r->characters[i]);
    fprintf(out, "],\"character\":%u,\"field\":", (unsigned)r->div.character);
    if (r->div.field_known)
        json_string(out, r->div.field);
    else
        fputs("null", out);
    fprintf(out, ",\"values_exact\":%s,\"values_tick\":%u,\"values_source\":", r->values_exact ? "true" : "false",
            (unsigned)r->values_tick);
    json_string(out, r->values_source);
    fputs(",\"fields\":[", out);
    for (uint32_t i = 0; i < r->value_count; i++) {
        const rec_diff_value *v = &r->values[i];
        rec_field_type type = rec_value_type(v);
        fprintf(out, "%s{\"tick\":%u,\"character\":%u,\"kind\":\"%s\",\"field\":", i ? "," : "",
                (unsigned)value_tick(r, v), (unsigned)v->character, value_kind_name(v->kind));
        json_string(out, rec_value_name(v));
        fputs(",\"a\":", out);
        json_value(out, type, v->a);
        fputs(",\"b\":", out);
        json_value(out, type, v->b);
        fputc('}', out);
    }
    fprintf(out, "],\"values_truncated\":%s,\"detail\":", r->values_truncated ? "true" : "false");
    json_string(out, r->div.detail);
    fputs("}\n", out);
}
