// keel: state hashing for determinism checks. MIT licence, see LICENSE.
//
// A hash compares whole simulation states between machines (server and client,
// two runs of a test) without sending the state. Structs are never hashed as
// raw memory: padding bytes are indeterminate, and the byte order of an
// in-memory integer differs between machines. Instead every field is hashed on
// its own, encoded explicitly as little-endian bytes, so the same values give
// the same hash on every machine and compiler.
//
// Each function takes the running hash `h` and returns the new one, so calls
// chain: h = sim_hash_fx(sim_hash_u32(SIM_HASH_SEED, id), speed). Each call is
// one XXH64 (xxHash, 64-bit) of the value's encoding seeded with the running
// hash, so both the values and their order matter. The struct functions encode
// all fields into one byte string (documented per function) and hash it in one
// call, so they are not the same as chaining the field functions.
#ifndef KEEL_SIM_HASH_H
#define KEEL_SIM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include <keel/sim_query.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The starting value of every state hash: the ASCII bytes "keelhash" read as
/// a big-endian number. Changing it changes every pinned hash.
#define SIM_HASH_SEED UINT64_C(0x6B65656C68617368)

/// XXH64 of n bytes at p, seeded with h (p may be NULL when n is 0). For data
/// that is already a byte sequence (names, text); never pass a struct.
uint64_t sim_hash_bytes(uint64_t h, const void *p, size_t n);

/// One byte.
uint64_t sim_hash_u8(uint64_t h, uint8_t v);
/// A bool as one byte, 0 or 1.
uint64_t sim_hash_bool(uint64_t h, bool v);
/// 4 bytes, little-endian.
uint64_t sim_hash_u32(uint64_t h, uint32_t v);
/// 8 bytes, little-endian.
uint64_t sim_hash_u64(uint64_t h, uint64_t v);
/// The raw Q16.16 value as 4 bytes, little-endian two's complement.
uint64_t sim_hash_fx(uint64_t h, sim_fx v);
/// x, y, z as 12 bytes (each like sim_hash_fx).
uint64_t sim_hash_vec3(uint64_t h, sim_vec3 v);

/// triangle (4 bytes), type (1), index (1).
uint64_t sim_hash_feature(uint64_t h, const sim_feature *f);
/// hit (1 byte), start_overlap (1), fraction (4), position (12), normal (12),
/// point (12), feature (6): 48 bytes in declaration order.
uint64_t sim_hash_sweep_result(uint64_t h, const sim_sweep_result *r);
/// normal (12), depth (4), point (12), feature (6).
uint64_t sim_hash_contact(uint64_t h, const sim_contact *c);
/// hit (1), fraction (4), point (12), normal (12), feature (6).
uint64_t sim_hash_ray_result(uint64_t h, const sim_ray_result *r);

#ifdef __cplusplus
}
#endif

#endif
