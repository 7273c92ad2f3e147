// keel recordings: little-endian bytes and varints. MIT licence, see LICENSE.
#include <stdlib.h>
#include <string.h>

#include "rec_bytes.h"

bool rec_buf_reserve(rec_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra <= b->cap - b->size)
        return true;
    size_t want = b->cap ? b->cap : 256;
    while (want - b->size < extra) {
        if (want > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        want *= 2;
    }
    uint8_t *p = realloc(b->data, want);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = want;
    return true;
}

void rec_buf_free(rec_buf *b)
{
    free(b->data);
    *b = (rec_buf){0};
}

void rec_put_bytes(rec_buf *b, const void *p, size_t n)
{
    if (n == 0 || !rec_buf_reserve(b, n))
        return;
    memcpy(b->data + b->size, p, n);
    b->size += n;
}

void rec_put_u8(rec_buf *b, uint8_t v)
{
    if (!rec_buf_reserve(b, 1))
        return;
    b->data[b->size++] = v;
}

void rec_put_u16(rec_buf *b, uint16_t v)
{
    uint8_t o[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    rec_put_bytes(b, o, 2);
}

void rec_put_u32(rec_buf *b, uint32_t v)
{
    uint8_t o[4];
    rec_le32(o, v);
    rec_put_bytes(b, o, 4);
}

void rec_put_u64(rec_buf *b, uint64_t v)
{
    uint8_t o[8];
    rec_le32(o, (uint32_t)v);
    rec_le32(o + 4, (uint32_t)(v >> 32));
    rec_put_bytes(b, o, 8);
}

void rec_put_var(rec_buf *b, uint64_t v)
{
    uint8_t o[10];
    size_t n = 0;
    do {
        uint8_t byte = (uint8_t)(v & 0x7Fu);
        v >>= 7;
        o[n++] = (uint8_t)(byte | (v ? 0x80u : 0u));
    } while (v);
    rec_put_bytes(b, o, n);
}

void rec_put_svar(rec_buf *b, int64_t v)
{
    // zigzag on the unsigned bits: no shift of a negative value
    uint64_t u = (uint64_t)v;
    rec_put_var(b, (u << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

void rec_put_str(rec_buf *b, const char *s)
{
    size_t n = strlen(s);
    rec_put_var(b, n);
    rec_put_bytes(b, s, n);
}

void rec_rd_init(rec_rd *r, const void *p, size_t n, uint64_t base)
{
    r->p = p;
    r->n = n;
    r->pos = 0;
    r->base = base;
    r->fault = NULL;
    r->fault_at = 0;
}

void rec_rd_fail(rec_rd *r, const char *why)
{
    if (r->fault)
        return;
    r->fault = why;
    r->fault_at = r->base + r->pos;
}

const uint8_t *rec_get_bytes(rec_rd *r, size_t n)
{
    if (r->fault)
        return NULL;
    if (n > r->n - r->pos) {
        rec_rd_fail(r, "runs past the end of its chunk");
        return NULL;
    }
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

uint8_t rec_get_u8(rec_rd *r)
{
    const uint8_t *p = rec_get_bytes(r, 1);
    return p ? p[0] : 0;
}

uint16_t rec_get_u16(rec_rd *r)
{
    const uint8_t *p = rec_get_bytes(r, 2);
    return p ? (uint16_t)(p[0] | p[1] << 8) : 0;
}

uint32_t rec_get_u32(rec_rd *r)
{
    const uint8_t *p = rec_get_bytes(r, 4);
    return p ? rec_get_le32(p) : 0;
}

uint64_t rec_get_u64(rec_rd *r)
{
    const uint8_t *p = rec_get_bytes(r, 8);
    return p ? (uint64_t)rec_get_le32(p) | (uint64_t)rec_get_le32(p + 4) << 32 : 0;
}

uint64_t rec_get_var(rec_rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->fault)
            return 0;
        if (r->pos >= r->n) {
            rec_rd_fail(r, "varint runs past the end of its chunk");
            return 0;
        }
        uint8_t byte = r->p[r->pos];
        uint64_t bits = byte & 0x7Fu;
        if (shift == 63 && bits > 1) {
            rec_rd_fail(r, "varint overflows 64 bits");
            return 0;
        }
        r->pos++;
        v |= bits << shift;
        if (!(byte & 0x80u))
            return v;
    }
    rec_rd_fail(r, "varint longer than 10 bytes");
    return 0;
}

uint32_t rec_get_var32(rec_rd *r)
{
    size_t at = r->pos;
    uint64_t v = rec_get_var(r);
    if (v > UINT32_MAX) {
        r->pos = at;
        rec_rd_fail(r, "varint above 32 bits");
        return 0;
    }
    return (uint32_t)v;
}

int64_t rec_get_svar(rec_rd *r)
{
    uint64_t u = rec_get_var(r);
    int64_t mag = (int64_t)(u >> 1); // at most 2^63 - 1
    return (u & 1u) ? -mag - 1 : mag;
}
