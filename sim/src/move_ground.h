// keel: the walking logic shared by the walk and crouch move types, and the
// airborne logic shared by air and a jump. MIT licence, see LICENSE.
#ifndef KEEL_MOVE_GROUND_H
#define KEEL_MOVE_GROUND_H

#include "move_internal.h"

/// One tick on the ground with the current shape; returns the next move type.
int32_t move_ground_tick(sim_move_ctx *m, bool crouched);
/// One tick in the air; returns the next move type.
int32_t move_air_tick(sim_move_ctx *m);

#endif
