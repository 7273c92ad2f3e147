// keel server: the tick history ring. MIT licence, see LICENSE.
#include "sv_history.h"

#include <stdlib.h>

bool sv_history_init(sv_history *h, uint32_t max_characters)
{
    h->capacity = max_characters ? max_characters : 1;
    for (uint32_t i = 0; i < SV_HISTORY_TICKS; i++) {
        sv_tick_record *r = &h->records[i];
        r->tick = NET_TICK_NONE;
        r->join_count = r->leave_count = r->command_count = 0;
        r->joins = calloc(h->capacity, sizeof *r->joins);
        r->leaves = calloc(h->capacity, sizeof *r->leaves);
        r->commands = calloc(h->capacity, sizeof *r->commands);
        if (!r->joins || !r->leaves || !r->commands)
            return false;
    }
    return true;
}

void sv_history_free(sv_history *h)
{
    for (uint32_t i = 0; i < SV_HISTORY_TICKS; i++) {
        free(h->records[i].joins);
        free(h->records[i].leaves);
        free(h->records[i].commands);
    }
}

sv_tick_record *sv_history_begin(sv_history *h, uint32_t tick)
{
    sv_tick_record *r = &h->records[tick % SV_HISTORY_TICKS];
    r->tick = tick;
    r->join_count = r->leave_count = r->command_count = 0;
    r->has_hash_after = false;
    r->hash_after = 0;
    return r;
}

const sv_tick_record *sv_history_find(const sv_history *h, uint32_t tick)
{
    const sv_tick_record *r = &h->records[tick % SV_HISTORY_TICKS];
    return r->tick == tick && tick != NET_TICK_NONE ? r : NULL;
}
