// keel server: what ran in each recent tick, for delta snapshots.
// MIT licence, see LICENSE.
//
// A ring of SV_HISTORY_TICKS records, one per tick: the leaves and joins at
// its start and every character's command in id order. A delta snapshot from
// baseline B to T is the records of ticks B .. T - 1, so the ring must hold
// NET_MAX_SNAPSHOT_TICKS of them besides the ticks not yet sent.
#ifndef KEEL_SV_HISTORY_H
#define KEEL_SV_HISTORY_H

#include <keel/net_proto.h>

#define SV_HISTORY_TICKS 64u

typedef struct sv_tick_record {
    uint32_t tick; ///< NET_TICK_NONE when unused
    uint32_t join_count, leave_count, command_count;
    /// sim_scene_hash of the state after this tick (at tick + 1) when it was
    /// computed (the ticks snapshots fall on); a snapshot may end at tick + 1
    /// only with it.
    bool has_hash_after;
    uint64_t hash_after;
    net_join *joins;            ///< capacity: max characters
    net_leave *leaves;          ///< capacity: max characters
    net_tick_command *commands; ///< capacity: max characters
} sv_tick_record;

typedef struct sv_history {
    uint32_t capacity; ///< characters per record
    sv_tick_record records[SV_HISTORY_TICKS];
} sv_history;

bool sv_history_init(sv_history *h, uint32_t max_characters);
void sv_history_free(sv_history *h);
/// The record of `tick`, emptied for writing.
sv_tick_record *sv_history_begin(sv_history *h, uint32_t tick);
/// The record of `tick`, or NULL when it is no longer (or not yet) held.
const sv_tick_record *sv_history_find(const sv_history *h, uint32_t tick);

#endif
