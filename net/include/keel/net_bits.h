// keel: a bit packer for the wire protocol. MIT licence, see LICENSE.
//
// A writer and a reader over a caller's byte buffer. Bits go least
// significant first: bit i of the stream is bit (i % 8) of byte i / 8, and a
// field's lowest bit is written first. Only shifts and masks on unsigned
// integers are used, so the bytes are the same on every machine whatever its
// byte order.
//
// Both sides have a sticky error flag: a write that does not fit the buffer
// or a value that does not fit its field (a bug of the caller), a read past
// the end or a malformed variable-length value. After an error every call does
// nothing (reads return 0), nothing is ever read or written out of bounds, and
// the caller checks once at the end (net_bw_finish, net_br_finish).
//
// Field coders (writer net_bw_*, reader net_br_* with the same suffix):
//   u      unsigned, 0..32 bits; the value must fit (v < 2^n)
//   bool   one bit
//   u64    64 bits (low 32 first)
//   s      signed two's complement in 1..32 bits; -2^(n-1) <= v < 2^(n-1)
//   var    variable-length unsigned 32-bit: groups of `group` bits (1..16),
//          lowest first, each followed by one bit "another group follows".
//          The reader refuses non-canonical forms (a last group of zero after
//          the first, or bits above 32), so every value has exactly one
//          encoding.
//   svar   signed 32-bit: zig-zag (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...) then var.
#ifndef KEEL_NET_BITS_H
#define KEEL_NET_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct net_bit_writer {
    uint8_t *data;
    size_t capacity_bits;
    size_t pos; ///< bits written
    bool error;
} net_bit_writer;

typedef struct net_bit_reader {
    const uint8_t *data;
    size_t length_bits;
    size_t pos; ///< bits read
    bool error;
} net_bit_reader;

/// Zig-zag: signed to unsigned so that small magnitudes give small values.
static inline uint32_t net_zigzag(int32_t v)
{
    uint32_t u = (uint32_t)v;
    return (u << 1) ^ (v < 0 ? UINT32_MAX : 0u);
}
static inline int32_t net_unzigzag(uint32_t u)
{
    uint32_t x = (u >> 1) ^ (0u - (u & 1u));
    // Convert without the implementation-defined unsigned -> signed cast.
    return x <= (uint32_t)INT32_MAX ? (int32_t)x : -(int32_t)(~x) - 1;
}

/// A wrapping 32-bit difference a - b read as signed (in [-2^31, 2^31)).
static inline int32_t net_u32_as_s32(uint32_t x) { return x <= (uint32_t)INT32_MAX ? (int32_t)x : -(int32_t)(~x) - 1; }

/// Start writing into data[0 .. capacity). The bytes are written as the bits
/// reach them (no need to clear the buffer first).
void net_bw_init(net_bit_writer *w, uint8_t *data, size_t capacity);
void net_bw_u(net_bit_writer *w, uint32_t v, unsigned bits);
void net_bw_bool(net_bit_writer *w, bool v);
void net_bw_u64(net_bit_writer *w, uint64_t v);
void net_bw_s(net_bit_writer *w, int32_t v, unsigned bits);
void net_bw_var(net_bit_writer *w, uint32_t v, unsigned group);
void net_bw_svar(net_bit_writer *w, int32_t v, unsigned group);
/// Mark the writer failed (a field out of its range, found by the caller).
void net_bw_fail(net_bit_writer *w);
/// Bits written so far.
static inline size_t net_bw_bits(const net_bit_writer *w) { return w->pos; }
/// Length in bytes (the last byte zero-padded), or 0 after an error.
size_t net_bw_finish(const net_bit_writer *w);

/// Start reading data[0 .. length).
void net_br_init(net_bit_reader *r, const uint8_t *data, size_t length);
uint32_t net_br_u(net_bit_reader *r, unsigned bits);
bool net_br_bool(net_bit_reader *r);
uint64_t net_br_u64(net_bit_reader *r);
int32_t net_br_s(net_bit_reader *r, unsigned bits);
uint32_t net_br_var(net_bit_reader *r, unsigned group);
int32_t net_br_svar(net_bit_reader *r, unsigned group);
/// Mark the reader failed (a value out of its range, found by the caller).
void net_br_fail(net_bit_reader *r);
/// Bits left before the end of the buffer.
static inline size_t net_br_left(const net_bit_reader *r) { return r->length_bits - r->pos; }
/// True when nothing failed and all that is left is the zero padding of the
/// last byte: no further byte, no nonzero bit after the last field.
bool net_br_finish(const net_bit_reader *r);

#ifdef __cplusplus
}
#endif

#endif
