// keel-relay: the per-packet shaping decisions (drop? delay? duplicate?).
// MIT licence, see LICENSE.
//
// No sockets and no clock here: the caller passes the arrival time of each
// packet (microseconds on any monotonic scale that starts at 0 when the state
// is initialised) and gets back a verdict. Everything is integer arithmetic on
// a seeded generator, so the same seed, parameters and sequence of (time,
// size) give the same verdicts on every machine; tests/test_relay.c runs it
// on virtual time.
//
// Random numbers: every packet draws exactly five numbers from the packet
// stream (loss, duplication, reordering, jitter of the first copy, jitter of
// the second copy), whatever its fate, so the decision for packet i depends
// only on the seed, i and the parameters, never on what happened to earlier
// packets. Burst gaps come from a second stream and depend only on the seed
// and time. Loss, duplication, reordering and jitter do not look at time at
// all; burst gaps and the bandwidth cap do.
//
// Bit flips (--flip) come from a third stream: while flipping is on, every
// datagram of a direction draws exactly two numbers from it (whether it
// flips, which bit), so turning flips on changes no other decision, and which
// datagrams get a flipped bit depends only on the seed, the datagram's index
// and its size. Only datagrams of at least flip_min bytes, after the first
// flip_skip of the direction, are flipped, and only in their last flip_tail
// bytes (0: anywhere): the tail of a datagram that carries a keel message is
// that message's sealed part, so flips there damage sealed payloads and not
// the transport's headers.
#ifndef KEEL_RELAY_SHAPE_H
#define KEEL_RELAY_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#define SHAPE_PPM 1000000u ///< rates are in parts per million

/// One direction of a link. Times in microseconds, rates in parts per million.
typedef struct shape_params {
    uint32_t latency_us;       ///< fixed one-way delay
    uint32_t jitter_us;        ///< extra delay, uniform in [0, jitter_us]
    uint32_t loss_ppm;         ///< random loss probability
    uint32_t dup_ppm;          ///< probability that a delivered packet is sent twice
    uint32_t reorder_ppm;      ///< probability that a packet is held back
    uint32_t reorder_delay_us; ///< the extra delay of a held-back packet
    uint32_t burst_every_us;   ///< mean time between gap starts (0: no gaps)
    uint32_t burst_length_us;  ///< length of every gap (< burst_every_us)
    uint64_t rate_Bps;         ///< bandwidth cap in bytes per second (0: none)
    uint32_t rate_burst;       ///< token bucket size in bytes
    uint32_t queue_bytes;      ///< bytes that may wait for the cap before drops
    uint32_t flip_ppm;         ///< probability that a datagram gets one bit flipped
    uint32_t flip_tail;        ///< the bit is in the datagram's last flip_tail bytes (0: anywhere)
    uint32_t flip_min;         ///< only datagrams of at least this many bytes
    uint32_t flip_skip;        ///< the first flip_skip datagrams of a direction are never flipped
} shape_params;

/// The defaults: no shaping at all, reorder delay 20 ms, bucket 1500 bytes,
/// queue 64 KiB.
shape_params shape_params_default(void);

/// Checks the parameters; returns NULL when usable, else a message.
const char *shape_params_check(const shape_params *p);

typedef enum shape_fate {
    SHAPE_DELIVER = 0,
    SHAPE_DROP_RANDOM,
    SHAPE_DROP_BURST,
    SHAPE_DROP_BANDWIDTH,
} shape_fate;

typedef struct shape_verdict {
    shape_fate fate;
    int copies;        ///< 1, or 2 when duplicated (0 when dropped)
    int64_t at_us[2];  ///< delivery time of each copy
    int64_t queued_us; ///< time spent waiting for the bandwidth cap
    bool duplicated;
    bool reordered;
} shape_verdict;

typedef struct shape_rng {
    uint64_t state;
} shape_rng;

/// splitmix64
uint64_t shape_rng_next(shape_rng *r);

typedef struct shape_state {
    shape_rng packets;  ///< five draws per packet
    shape_rng gaps;     ///< the burst gap schedule
    shape_rng flips;    ///< two draws per datagram while flipping is on
    uint64_t count;     ///< packets decided so far
    uint64_t flip_seen; ///< datagrams shape_flip was asked about
    // burst gaps: the current or next gap is [gap_start, gap_end)
    int64_t gap_start, gap_end;
    bool gap_valid;
    uint32_t gap_every, gap_length; ///< parameters the schedule was drawn for
    // token bucket: tokens (bytes * 1e6) at time bucket_t, which is the
    // departure time of the last packet through it (may be in the future)
    int64_t tokens;
    int64_t bucket_t;
    bool bucket_started;
} shape_state;

/// Starts a direction's state from a seed (the relay derives one per client
/// and direction from --seed).
void shape_init(shape_state *s, uint64_t seed);

/// Decides the fate of one packet of `size` bytes arriving at `now_us`.
/// Times must not go backwards between calls.
void shape_decide(shape_state *s, const shape_params *p, int64_t now_us, uint32_t size, shape_verdict *v);

/// Whether the datagram of `size` bytes gets one bit flipped (--flip); if so
/// *bit is the bit's index from the datagram's start (bit b of byte b / 8 is
/// (1 << b % 8)). Call it once per datagram, in arrival order.
bool shape_flip(shape_state *s, const shape_params *p, uint32_t size, uint32_t *bit);

/// Whether `t_us` is inside a burst gap (advances the schedule to t_us; for
/// tests and for stats; does not consume packet draws).
bool shape_in_gap(shape_state *s, const shape_params *p, int64_t t_us);

/// Counters for one direction.
typedef struct shape_stats {
    uint64_t in, in_bytes;
    uint64_t out, out_bytes; ///< copies sent (duplicates included)
    uint64_t drop_random, drop_burst, drop_bandwidth;
    uint64_t drop_other; ///< send errors, relay queue full, unsent at exit
    uint64_t duplicated, reordered;
    uint64_t flipped; ///< datagrams given a flipped bit (before the other shaping)
} shape_stats;

/// Adds a verdict to the counters (in, drops, duplicated, reordered; the
/// caller counts out when it really sends).
void shape_count(shape_stats *st, const shape_verdict *v, uint32_t size);

/// Derives a seed for a stream: splitmix64 of seed mixed with a and b.
uint64_t shape_seed(uint64_t seed, uint64_t a, uint64_t b);

#endif
