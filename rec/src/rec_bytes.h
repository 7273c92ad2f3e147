// keel recordings: little-endian bytes and LEB128 varints, written into a
// growable buffer and read with bounds checks. MIT licence, see LICENSE.
#ifndef KEEL_REC_BYTES_H
#define KEEL_REC_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// A byte buffer that grows (doubling) when a put does not fit. The writer
/// reserves what a tick can need before encoding it, so after the first
/// blocks nothing grows. `failed` records an allocation failure; puts then
/// do nothing.
typedef struct rec_buf {
    uint8_t *data;
    size_t size, cap;
    bool failed;
} rec_buf;

bool rec_buf_reserve(rec_buf *b, size_t extra);
void rec_buf_free(rec_buf *b);
void rec_put_bytes(rec_buf *b, const void *p, size_t n);
void rec_put_u8(rec_buf *b, uint8_t v);
void rec_put_u16(rec_buf *b, uint16_t v);
void rec_put_u32(rec_buf *b, uint32_t v);
void rec_put_u64(rec_buf *b, uint64_t v);
/// Unsigned LEB128: 7 bits a byte, low first, high bit = more.
void rec_put_var(rec_buf *b, uint64_t v);
/// Signed values as zigzag LEB128 (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...).
void rec_put_svar(rec_buf *b, int64_t v);
/// A string as a varint length and its bytes.
void rec_put_str(rec_buf *b, const char *s);

static inline void rec_le32(uint8_t *o, uint32_t v)
{
    o[0] = (uint8_t)v;
    o[1] = (uint8_t)(v >> 8);
    o[2] = (uint8_t)(v >> 16);
    o[3] = (uint8_t)(v >> 24);
}
static inline uint32_t rec_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/// A bounds-checked reader over n bytes that sit at file offset `base`. The
/// first fault (running past the end, an overlong varint, a bad value a
/// caller reports with rec_rd_fail) is kept with its offset; later reads
/// return 0 and change nothing, so a decoder can read a whole record and
/// check once.
typedef struct rec_rd {
    const uint8_t *p;
    size_t n, pos;
    uint64_t base;
    const char *fault; ///< static text, NULL while fine
    uint64_t fault_at; ///< file offset of the fault
} rec_rd;

void rec_rd_init(rec_rd *r, const void *p, size_t n, uint64_t base);
void rec_rd_fail(rec_rd *r, const char *why);
static inline bool rec_rd_ok(const rec_rd *r) { return r->fault == NULL; }
static inline size_t rec_rd_left(const rec_rd *r) { return r->n - r->pos; }
static inline uint64_t rec_rd_offset(const rec_rd *r) { return r->base + r->pos; }
uint8_t rec_get_u8(rec_rd *r);
uint16_t rec_get_u16(rec_rd *r);
uint32_t rec_get_u32(rec_rd *r);
uint64_t rec_get_u64(rec_rd *r);
uint64_t rec_get_var(rec_rd *r);
/// A varint that must fit 32 bits.
uint32_t rec_get_var32(rec_rd *r);
int64_t rec_get_svar(rec_rd *r);
/// n bytes in place (NULL on a fault).
const uint8_t *rec_get_bytes(rec_rd *r, size_t n);

#endif
