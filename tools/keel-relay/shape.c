// keel-relay: the per-packet shaping decisions. MIT licence, see LICENSE.
// See shape.h for the rules; integer arithmetic only, so the verdicts are the
// same on every machine.
#include "shape.h"

#include <stddef.h>

#define US_PER_S 1000000

shape_params shape_params_default(void)
{
    shape_params p = {0};
    p.reorder_delay_us = 20000;
    p.rate_burst = 1500;
    p.queue_bytes = 65536;
    return p;
}

const char *shape_params_check(const shape_params *p)
{
    if (p->loss_ppm > SHAPE_PPM || p->dup_ppm > SHAPE_PPM || p->reorder_ppm > SHAPE_PPM)
        return "a rate is above 100%";
    if (p->burst_every_us != 0 || p->burst_length_us != 0) {
        if (p->burst_every_us == 0 || p->burst_length_us == 0)
            return "burst gaps need both --burst-every and --burst-length";
        if (p->burst_length_us >= p->burst_every_us)
            return "--burst-every must be greater than --burst-length";
        if (p->burst_every_us > 0x7fffffffu)
            return "--burst-every is too long";
    }
    if (p->rate_Bps > 10000000000ull)
        return "--rate is above 10^10 bytes per second";
    if (p->rate_Bps != 0 && p->rate_burst == 0)
        return "--rate-burst must be at least 1 byte";
    if (p->flip_ppm > SHAPE_PPM)
        return "--flip is above 100%";
    return NULL;
}

uint64_t shape_rng_next(shape_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t shape_seed(uint64_t seed, uint64_t a, uint64_t b)
{
    shape_rng r = {seed ^ (a * 0xd6e8feb86659fd93ull) ^ (b * 0xa0761d6478bd642full)};
    return shape_rng_next(&r);
}

// Uniform integer in [0, n] for n < 2^32, from the top 32 bits of a draw.
static uint64_t uniform_upto(uint64_t draw, uint64_t n) { return ((draw >> 32) * (n + 1)) >> 32; }

// True with probability ppm / 10^6.
static bool chance(uint64_t draw, uint32_t ppm) { return uniform_upto(draw, SHAPE_PPM - 1) < ppm; }

void shape_init(shape_state *s, uint64_t seed)
{
    s->packets.state = shape_seed(seed, 1, 0);
    s->gaps.state = shape_seed(seed, 2, 0);
    s->flips.state = shape_seed(seed, 3, 0);
    s->count = 0;
    s->flip_seen = 0;
    s->gap_start = s->gap_end = 0;
    s->gap_valid = false;
    s->gap_every = s->gap_length = 0;
    s->tokens = 0;
    s->bucket_t = 0;
    s->bucket_started = false;
}

// The time from the end of one gap to the start of the next: uniform in
// [0, 2 * (every - length)], so gap starts are `every` apart on average.
static int64_t next_gap_offset(shape_state *s, const shape_params *p)
{
    uint64_t spread = 2ull * (p->burst_every_us - p->burst_length_us);
    return (int64_t)uniform_upto(shape_rng_next(&s->gaps), spread);
}

bool shape_in_gap(shape_state *s, const shape_params *p, int64_t t_us)
{
    if (p->burst_every_us == 0 || p->burst_length_us == 0)
        return false;
    if (s->gap_valid && (s->gap_every != p->burst_every_us || s->gap_length != p->burst_length_us)) {
        // Parameters changed at run time: a new schedule from now.
        s->gap_valid = false;
        s->gap_end = t_us;
    }
    if (!s->gap_valid) {
        s->gap_every = p->burst_every_us;
        s->gap_length = p->burst_length_us;
        s->gap_start = s->gap_end + next_gap_offset(s, p);
        s->gap_end = s->gap_start + p->burst_length_us;
        s->gap_valid = true;
    }
    while (t_us >= s->gap_end) {
        s->gap_start = s->gap_end + next_gap_offset(s, p);
        s->gap_end = s->gap_start + p->burst_length_us;
    }
    return t_us >= s->gap_start;
}

// Tokens (bytes * 10^6) after `dt` microseconds of refill at `rate` bytes per
// second, capped at `cap`.
static int64_t refill(int64_t tokens, int64_t dt, int64_t rate, int64_t cap)
{
    if (tokens >= cap)
        return cap;
    if (dt <= 0)
        return tokens;
    int64_t need = cap - tokens;
    if (dt >= need / rate + 1)
        return cap;
    int64_t t = tokens + dt * rate;
    return t < cap ? t : cap;
}

// The bandwidth stage: a token bucket feeding a FIFO. Returns false when the
// packet must be dropped, else sets *depart.
static bool bandwidth(shape_state *s, const shape_params *p, int64_t now, uint32_t size, int64_t *depart)
{
    if (p->rate_Bps == 0) {
        *depart = now;
        return true;
    }
    int64_t rate = (int64_t)p->rate_Bps;
    int64_t bucket = (int64_t)p->rate_burst * US_PER_S;
    int64_t cost = (int64_t)size * US_PER_S;
    int64_t cap = bucket > cost ? bucket : cost; // a packet larger than the bucket still fits
    if (!s->bucket_started) {
        s->tokens = bucket;
        s->bucket_t = now;
        s->bucket_started = true;
    }
    int64_t start = now > s->bucket_t ? now : s->bucket_t; // first in, first out
    int64_t tok = refill(s->tokens, start - s->bucket_t, rate, cap);
    int64_t wait = 0;
    if (tok < cost)
        wait = (cost - tok + rate - 1) / rate;
    int64_t t = wait > 0 ? refill(tok, wait, rate, cap) : tok;
    int64_t dep = start + wait;
    // Bytes of link time this packet waits for (those ahead of it and its own
    // missing tokens): beyond the queue it is dropped.
    if (dep > now && (dep - now) * rate > (int64_t)p->queue_bytes * US_PER_S)
        return false;
    s->tokens = t - cost;
    s->bucket_t = dep;
    *depart = dep;
    return true;
}

void shape_decide(shape_state *s, const shape_params *p, int64_t now_us, uint32_t size, shape_verdict *v)
{
    uint64_t d_loss = shape_rng_next(&s->packets);
    uint64_t d_dup = shape_rng_next(&s->packets);
    uint64_t d_reorder = shape_rng_next(&s->packets);
    uint64_t d_jit0 = shape_rng_next(&s->packets);
    uint64_t d_jit1 = shape_rng_next(&s->packets);
    s->count++;

    v->fate = SHAPE_DELIVER;
    v->copies = 0;
    v->at_us[0] = v->at_us[1] = 0;
    v->queued_us = 0;
    v->duplicated = false;
    v->reordered = false;

    if (shape_in_gap(s, p, now_us)) {
        v->fate = SHAPE_DROP_BURST;
        return;
    }
    if (chance(d_loss, p->loss_ppm)) {
        v->fate = SHAPE_DROP_RANDOM;
        return;
    }
    int64_t depart;
    if (!bandwidth(s, p, now_us, size, &depart)) {
        v->fate = SHAPE_DROP_BANDWIDTH;
        return;
    }
    v->queued_us = depart - now_us;
    int64_t base = depart + p->latency_us;
    v->reordered = chance(d_reorder, p->reorder_ppm);
    v->at_us[0] =
        base + (int64_t)uniform_upto(d_jit0, p->jitter_us) + (v->reordered ? (int64_t)p->reorder_delay_us : 0);
    v->copies = 1;
    if (chance(d_dup, p->dup_ppm)) {
        v->duplicated = true;
        v->at_us[1] = base + (int64_t)uniform_upto(d_jit1, p->jitter_us);
        v->copies = 2;
    }
}

void shape_count(shape_stats *st, const shape_verdict *v, uint32_t size)
{
    st->in++;
    st->in_bytes += size;
    switch (v->fate) {
    case SHAPE_DROP_RANDOM: st->drop_random++; break;
    case SHAPE_DROP_BURST: st->drop_burst++; break;
    case SHAPE_DROP_BANDWIDTH: st->drop_bandwidth++; break;
    case SHAPE_DELIVER:
        st->duplicated += v->duplicated;
        st->reordered += v->reordered;
        break;
    }
}

bool shape_flip(shape_state *s, const shape_params *p, uint32_t size, uint32_t *bit)
{
    if (p->flip_ppm == 0)
        return false;
    uint64_t d_flip = shape_rng_next(&s->flips), d_bit = shape_rng_next(&s->flips);
    uint64_t index = s->flip_seen++;
    if (index < p->flip_skip || size == 0 || size < p->flip_min || !chance(d_flip, p->flip_ppm))
        return false;
    uint32_t tail = p->flip_tail == 0 || p->flip_tail > size ? size : p->flip_tail;
    *bit = (size - tail) * 8u + (uint32_t)uniform_upto(d_bit, (uint64_t)tail * 8u - 1u);
    return true;
}
