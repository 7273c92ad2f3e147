// keel: what move types share: the per-step context, the move-type interface
// and the mover building blocks. MIT licence, see LICENSE.
//
// A move type is a unit with four entries (enter, tick, exit, name); its tick
// returns the id of the move type to run next tick (itself to stay). All of
// them work on one sim_move_ctx, zeroed and filled by sim_move_step, so no
// state hides anywhere else (Quake III zeroes its locals for the same reason).
#ifndef KEEL_MOVE_INTERNAL_H
#define KEEL_MOVE_INTERNAL_H

#include <keel/sim_move.h>

typedef struct sim_move_ctx {
    const sim_collider *col;
    const sim_move_settings *s;
    sim_char_state *c;
    const sim_input *in;
    sim_fx dt;
    sim_vec3 forward; ///< horizontal unit vectors from the input's yaw
    sim_vec3 right;
    bool jump_pressed; ///< pressed this tick (not held from the last)
} sim_move_ctx;

typedef struct sim_move_type {
    const char *name;
    void (*enter)(sim_move_ctx *m, int32_t from);
    /// Advance one tick; returns the move type for the next tick.
    int32_t (*tick)(sim_move_ctx *m);
    void (*exit)(sim_move_ctx *m, int32_t to);
} sim_move_type;

#define SIM_MOVE_TYPE(E, name) extern const sim_move_type sim_move_type_##name;
#include <keel/sim_move_types.def>
#undef SIM_MOVE_TYPE

// ---- building blocks (mover.c) ----------------------------------------------

sim_shape mover_shape(const sim_move_ctx *m);
sim_vec3 mover_center(const sim_move_ctx *m);
void mover_set_center(sim_move_ctx *m, sim_vec3 center);

/// Sweep the character's shape from `center` by `d` through the collider.
bool mover_sweep(const sim_move_ctx *m, sim_shape shape, sim_vec3 center, sim_vec3 d, sim_sweep_result *r);

/// Deepest penetration (depth) of `shape` at `center`; 0 when free.
sim_fx mover_overlap(const sim_move_ctx *m, sim_shape shape, sim_vec3 center);

typedef enum slide_mode {
    SLIDE_GROUND = 0, ///< walking: planes clip normally
    SLIDE_AIR = 1,    ///< airborne: steep edges below clip only horizontally (legs clip)
    SLIDE_FREE = 2,   ///< swimming and the like: planes clip normally, no ground logic
} slide_mode;

typedef struct slide_result {
    int planes;         ///< planes touched
    bool blocked_steep; ///< a plane that is not walkable floor stopped part of the motion
    /// Of those, one that could be a step: any of the level's, or an object
    /// (a platform, another character) touched no higher than a step above
    /// the feet. An object is convex: touched higher, it rises above
    /// anything the step-up reaches, and the step-up cannot pass it.
    bool blocked_riser;
    bool touched_ceiling;
    bool landed;  ///< touched walkable floor (air mode)
    bool climbed; ///< ground mode: walkable ground (a nosing, a ramp's foot) turned the motion upward
    sim_vec3 floor_normal;
} slide_result;

/// Collide and slide: move the centre by `d`, clipping `d` and `*velocity`
/// against each plane met (seams between two, stop at three).
void mover_slide(const sim_move_ctx *m, sim_shape shape, sim_vec3 *center, sim_vec3 *velocity, sim_vec3 d,
                 slide_mode mode, slide_result *out);

/// Resolve penetrations of the current shape (Gauss-Seidel over all contacts,
/// then the escape policy when that fails). Sets or clears SIM_CHAR_STUCK.
void mover_depenetrate(sim_move_ctx *m);

/// Probe the ground below; `snap` allows moving down by up to the step height
/// to stay on stairs and slopes. Sets ground, ground_normal, GROUNDED.
void mover_ground_probe(sim_move_ctx *m, bool snap);

/// Walk-style move of the centre by `d` with step-up: tries a plain slide and,
/// when a riser blocks it, up-over-down; keeps whichever goes further.
void mover_walk_move(sim_move_ctx *m, sim_vec3 d);

/// What carries the character at a downward hit: the unit normal of the face
/// it rests on and that face's height under the contact. For a hit on an
/// edge or corner (a rounded bottom on a step's nosing) this is the top face
/// beyond the edge, not the edge's leaning normal.
sim_vec3 mover_support(const sim_move_ctx *m, const sim_sweep_result *r, sim_fx *height);

bool mover_walkable(const sim_move_ctx *m, sim_vec3 normal);

// ---- Quake-style acceleration (move.c) --------------------------------------

/// Wish velocity on the horizontal plane from the input axes (m/s).
sim_vec3 move_wish_horizontal(const sim_move_ctx *m, sim_fx max_speed);
/// Wish velocity along the 3-D view direction plus the up axis.
sim_vec3 move_wish_3d(const sim_move_ctx *m, sim_fx max_speed);
void move_accelerate(sim_move_ctx *m, sim_vec3 wish_velocity, sim_fx accel);
void move_friction(sim_move_ctx *m, sim_fx friction, bool horizontal_only);
/// Clamp each velocity component to +-SIM_MOVE_MAX_SPEED.
void move_clamp_velocity(sim_move_ctx *m);

/// Try to take the crouched (true) or standing (false) shape; returns whether
/// the character now has it. Standing up is refused when it would overlap.
bool move_set_crouched(sim_move_ctx *m, bool crouched);

/// Move a shape's centre by `corr`, swept against the level and the platforms
/// (SIM_SWEEP_LEVEL_ONLY: other characters do not stop it): a plane met
/// clips what is left (up to three), and the centre stays a skin short of
/// it. Depenetration and the scene's separation push this way, so a push
/// never takes a character through a wall or a floor. Returns the centre.
sim_vec3 mover_push_swept(const sim_collider *col, sim_fx skin, sim_shape shape, sim_vec3 center, sim_vec3 corr);

/// sim_move_step for settings the caller has already checked with
/// sim_move_settings_check and never changes after (a scene checks its
/// copy once, when it is created): the state is still checked.
bool move_step_checked_settings(const sim_collider *col, const sim_move_settings *s, sim_char_state *c,
                                const sim_input *in);

#endif
