// keel: state hashing, field by field in little-endian bytes. MIT licence, see LICENSE.
//
// A struct's fields are encoded into one small byte buffer and hashed with a
// single XXH64 call rather than chained field by field: one call per struct is
// several times faster, and the encoding is just as explicit.
#include <keel/sim_hash.h>

#include <xxhash.h>

uint64_t sim_hash_bytes(uint64_t h, const void *p, size_t n)
{
    // XXH64 reads its input as little-endian words on every machine, so a
    // byte sequence hashes the same everywhere.
    return (uint64_t)XXH64(p, n, (XXH64_hash_t)h);
}

// Little-endian writers: shifts on unsigned values, independent of the
// machine's byte order.
static uint8_t *put_u8(uint8_t *o, uint8_t v)
{
    o[0] = v;
    return o + 1;
}
static uint8_t *put_u32(uint8_t *o, uint32_t v)
{
    o[0] = (uint8_t)v;
    o[1] = (uint8_t)(v >> 8);
    o[2] = (uint8_t)(v >> 16);
    o[3] = (uint8_t)(v >> 24);
    return o + 4;
}
// Conversion of a negative int32 to uint32 is defined (modulo 2^32), so the
// bytes are the two's complement representation.
static uint8_t *put_fx(uint8_t *o, sim_fx v) { return put_u32(o, (uint32_t)v); }
static uint8_t *put_vec3(uint8_t *o, sim_vec3 v)
{
    o = put_fx(o, v.x);
    o = put_fx(o, v.y);
    return put_fx(o, v.z);
}
static uint8_t *put_feature(uint8_t *o, const sim_feature *f)
{
    o = put_u32(o, f->triangle);
    o = put_u8(o, f->type);
    return put_u8(o, f->index);
}
// A bool is stored as 0 or 1 whatever other value its byte might hold.
static uint8_t *put_bool(uint8_t *o, bool v) { return put_u8(o, v ? 1u : 0u); }

static uint64_t hash_buf(uint64_t h, const uint8_t *begin, const uint8_t *end)
{
    return sim_hash_bytes(h, begin, (size_t)(end - begin));
}

uint64_t sim_hash_u8(uint64_t h, uint8_t v) { return sim_hash_bytes(h, &v, 1); }

uint64_t sim_hash_bool(uint64_t h, bool v) { return sim_hash_u8(h, v ? 1u : 0u); }

uint64_t sim_hash_u32(uint64_t h, uint32_t v)
{
    uint8_t b[4];
    return hash_buf(h, b, put_u32(b, v));
}

uint64_t sim_hash_u64(uint64_t h, uint64_t v)
{
    uint8_t b[8];
    uint8_t *o = put_u32(b, (uint32_t)v);
    o = put_u32(o, (uint32_t)(v >> 32));
    return hash_buf(h, b, o);
}

uint64_t sim_hash_fx(uint64_t h, sim_fx v) { return sim_hash_u32(h, (uint32_t)v); }

uint64_t sim_hash_vec3(uint64_t h, sim_vec3 v)
{
    uint8_t b[12];
    return hash_buf(h, b, put_vec3(b, v));
}

uint64_t sim_hash_feature(uint64_t h, const sim_feature *f)
{
    uint8_t b[6];
    return hash_buf(h, b, put_feature(b, f));
}

uint64_t sim_hash_sweep_result(uint64_t h, const sim_sweep_result *r)
{
    uint8_t b[48];
    uint8_t *o = put_bool(b, r->hit);
    o = put_bool(o, r->start_overlap);
    o = put_fx(o, r->fraction);
    o = put_vec3(o, r->position);
    o = put_vec3(o, r->normal);
    o = put_vec3(o, r->point);
    o = put_feature(o, &r->feature);
    return hash_buf(h, b, o);
}

uint64_t sim_hash_contact(uint64_t h, const sim_contact *c)
{
    uint8_t b[34];
    uint8_t *o = put_vec3(b, c->normal);
    o = put_fx(o, c->depth);
    o = put_vec3(o, c->point);
    o = put_feature(o, &c->feature);
    return hash_buf(h, b, o);
}

uint64_t sim_hash_ray_result(uint64_t h, const sim_ray_result *r)
{
    uint8_t b[35];
    uint8_t *o = put_bool(b, r->hit);
    o = put_fx(o, r->fraction);
    o = put_vec3(o, r->point);
    o = put_vec3(o, r->normal);
    o = put_feature(o, &r->feature);
    return hash_buf(h, b, o);
}
