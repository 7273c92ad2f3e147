// keel: the bit packer (keel/net_bits.h). MIT licence, see LICENSE.
#include <keel/net_bits.h>

// Buffers larger than this many bytes are treated as this long, so that the
// length in bits never overflows size_t.
#define NET_BITS_MAX_BYTES (SIZE_MAX / 8u)

static uint32_t low_mask(unsigned bits) { return bits >= 32 ? UINT32_MAX : (1u << bits) - 1u; }

void net_bw_init(net_bit_writer *w, uint8_t *data, size_t capacity)
{
    if (!data)
        capacity = 0;
    if (capacity > NET_BITS_MAX_BYTES)
        capacity = NET_BITS_MAX_BYTES;
    w->data = data;
    w->capacity_bits = capacity * 8u;
    w->pos = 0;
    w->error = false;
}

void net_bw_fail(net_bit_writer *w) { w->error = true; }

void net_bw_u(net_bit_writer *w, uint32_t v, unsigned bits)
{
    if (w->error)
        return;
    if (bits > 32 || (v & ~low_mask(bits)) != 0 || bits > w->capacity_bits - w->pos) {
        w->error = true;
        return;
    }
    while (bits > 0) {
        size_t byte = w->pos >> 3;
        unsigned off = (unsigned)(w->pos & 7u);
        unsigned take = 8u - off;
        if (take > bits)
            take = bits;
        if (off == 0)
            w->data[byte] = 0;
        w->data[byte] = (uint8_t)(w->data[byte] | ((v & low_mask(take)) << off));
        v >>= take;
        bits -= take;
        w->pos += take;
    }
}

void net_bw_bool(net_bit_writer *w, bool v) { net_bw_u(w, v ? 1u : 0u, 1); }

void net_bw_u64(net_bit_writer *w, uint64_t v)
{
    net_bw_u(w, (uint32_t)(v & UINT32_MAX), 32);
    net_bw_u(w, (uint32_t)(v >> 32), 32);
}

void net_bw_s(net_bit_writer *w, int32_t v, unsigned bits)
{
    if (bits < 1 || bits > 32) {
        w->error = true;
        return;
    }
    int64_t half = (int64_t)1 << (bits - 1);
    if ((int64_t)v < -half || (int64_t)v >= half) {
        w->error = true;
        return;
    }
    net_bw_u(w, (uint32_t)v & low_mask(bits), bits);
}

void net_bw_var(net_bit_writer *w, uint32_t v, unsigned group)
{
    if (group < 1 || group > 16) {
        w->error = true;
        return;
    }
    for (;;) {
        net_bw_u(w, v & low_mask(group), group);
        v >>= group;
        net_bw_bool(w, v != 0);
        if (v == 0 || w->error)
            return;
    }
}

void net_bw_svar(net_bit_writer *w, int32_t v, unsigned group) { net_bw_var(w, net_zigzag(v), group); }

size_t net_bw_finish(const net_bit_writer *w)
{
    if (w->error)
        return 0;
    return (w->pos + 7u) / 8u;
}

void net_br_init(net_bit_reader *r, const uint8_t *data, size_t length)
{
    if (!data)
        length = 0;
    r->data = data;
    // A longer buffer cannot be a message; reading the prefix and then
    // finding bytes left over fails as trailing garbage would.
    r->error = length > NET_BITS_MAX_BYTES;
    if (length > NET_BITS_MAX_BYTES)
        length = NET_BITS_MAX_BYTES;
    r->length_bits = length * 8u;
    r->pos = 0;
}

void net_br_fail(net_bit_reader *r) { r->error = true; }

uint32_t net_br_u(net_bit_reader *r, unsigned bits)
{
    if (r->error)
        return 0;
    if (bits > 32 || bits > r->length_bits - r->pos) {
        r->error = true;
        return 0;
    }
    uint32_t v = 0;
    unsigned got = 0;
    while (got < bits) {
        size_t byte = r->pos >> 3;
        unsigned off = (unsigned)(r->pos & 7u);
        unsigned take = 8u - off;
        if (take > bits - got)
            take = bits - got;
        uint32_t part = ((uint32_t)r->data[byte] >> off) & low_mask(take);
        v |= part << got;
        got += take;
        r->pos += take;
    }
    return v;
}

bool net_br_bool(net_bit_reader *r) { return net_br_u(r, 1) != 0; }

uint64_t net_br_u64(net_bit_reader *r)
{
    uint64_t lo = net_br_u(r, 32);
    uint64_t hi = net_br_u(r, 32);
    return lo | (hi << 32);
}

int32_t net_br_s(net_bit_reader *r, unsigned bits)
{
    if (bits < 1 || bits > 32) {
        r->error = true;
        return 0;
    }
    uint32_t u = net_br_u(r, bits);
    int64_t v = (int64_t)u;
    if (u & (UINT32_C(1) << (bits - 1)))
        v -= (int64_t)1 << bits;
    return (int32_t)v; // within [-2^31, 2^31) by construction
}

uint32_t net_br_var(net_bit_reader *r, unsigned group)
{
    if (group < 1 || group > 16) {
        r->error = true;
        return 0;
    }
    uint32_t v = 0;
    for (unsigned shift = 0;; shift += group) {
        if (shift >= 32) { // a continuation past the 32nd bit
            r->error = true;
            return 0;
        }
        uint32_t part = net_br_u(r, group);
        // Bits that would land above bit 31 make the value out of range.
        if (group > 32 - shift && (part >> (32 - shift)) != 0) {
            r->error = true;
            return 0;
        }
        bool more = net_br_bool(r);
        if (r->error)
            return 0;
        if (shift > 0 && part == 0 && !more) { // non-canonical: a trailing zero group
            r->error = true;
            return 0;
        }
        v |= part << shift;
        if (!more)
            return v;
    }
}

int32_t net_br_svar(net_bit_reader *r, unsigned group) { return net_unzigzag(net_br_var(r, group)); }

bool net_br_finish(const net_bit_reader *r)
{
    if (r->error)
        return false;
    size_t used_bytes = (r->pos + 7u) / 8u;
    if (used_bytes * 8u != r->length_bits) // whole bytes left over
        return false;
    if (r->pos & 7u) {
        uint8_t last = r->data[r->pos >> 3];
        if (last >> (r->pos & 7u))
            return false; // nonzero padding
    }
    return true;
}
