// keel: character movement, the code server and clients both run. MIT licence.
//
// One call, sim_move_step, advances one character by one tick: a pure function
// of (collision, settings, state, input) -> new state, like Quake III's pmove
// but with no globals. The state is a plain fixed-size value; the input is a
// small integer command. Collision is injected (sim_collider), so the server
// passes its world and the other characters, a client its predicted view.
//
// A step: resolve any penetration (depenetration), run the active move type
// (walk, crouch, air, fly, swim: one file each, see sim/src/move_types.h),
// switch move type if it asks to, then probe the ground.
//
// Units: metres, seconds, Q16.16. Y is up. Ranges (docs/ranges.md): speeds are
// clamped to SIM_MOVE_MAX_SPEED (100 m/s) per axis, so one tick at 64 Hz moves
// at most 1.5625 m per axis.
#ifndef KEEL_SIM_MOVE_H
#define KEEL_SIM_MOVE_H

#include <keel/sim_angle.h>
#include <keel/sim_query.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Largest speed along any axis, m/s; velocities are clamped to it.
#define SIM_MOVE_MAX_SPEED SIM_FX_INT(100)
/// Feet positions are clamped to +-this on each axis (and the velocity along a
/// clamped axis zeroed): 4096 m less room for the largest shape and a tick's
/// motion, so nothing a character does can overflow the world's range.
#define SIM_MOVE_POSITION_LIMIT (SIM_WORLD_LIMIT - SIM_FX_INT(80))

/// Move types, generated from keel/sim_move_types.def. The numbers are part of
/// the state (and of recordings).
typedef enum sim_move_type_id {
#define SIM_MOVE_TYPE(E, name) SIM_MOVE_##E,
#include <keel/sim_move_types.def>
#undef SIM_MOVE_TYPE
    SIM_MOVE_TYPE_COUNT
} sim_move_type_id;

/// Input buttons.
enum {
    SIM_BUTTON_JUMP = 1u << 0,
    SIM_BUTTON_CROUCH = 1u << 1,
    SIM_BUTTON_FLY = 1u << 2, ///< the game grants noclip flight (spectators)
};

/// One command: what a player does during one tick (Quake's usercmd).
typedef struct sim_input {
    SIM_RETURNED_STRUCT uint32_t tick;
    int8_t forward; ///< -127..127: back..forward along the view yaw
    int8_t right;   ///< -127..127: left..right
    int8_t up;      ///< -127..127: down..up (fly and swim)
    uint8_t buttons;
    sim_angle yaw;
    sim_angle pitch;
} sim_input;

/// State flags.
enum {
    SIM_CHAR_GROUNDED = 1u << 0,  ///< standing on walkable floor
    SIM_CHAR_CROUCHED = 1u << 1,  ///< using the crouched shape
    SIM_CHAR_STUCK = 1u << 2,     ///< could not be freed from geometry this tick
    SIM_CHAR_JUMP_HELD = 1u << 3, ///< jump was held last tick (no auto-bunnyhop)
    SIM_CHAR_ON_STEEP = 1u << 4,  ///< touching ground too steep to stand on
    SIM_CHAR_CEILING = 1u << 5,   ///< touched a ceiling this tick
    SIM_CHAR_STEPPED = 1u << 6,   ///< stepped up or down this tick
    SIM_CHAR_IN_WATER = 1u << 7,  ///< centre inside a water volume
    SIM_CHAR_WALL = 1u << 8,      ///< touched a wall (too steep to stand on) this tick
    /// Set by a scene's step (never by sim_move_step, which keeps it): after
    /// the step the character overlaps another by more than SEP_LIMIT (0.73
    /// mm) because no free spot was found for it: the crowd does not fit
    /// where it stands, or the step's search budget ran out (docs/scene.md,
    /// "How many characters a spot holds"). Cleared by the next step that
    /// finds it apart from everyone.
    SIM_CHAR_CROWDED = 1u << 9,
};

/// Where a character's feet rest: the classification of the ground probe.
typedef enum sim_ground_kind {
    SIM_GROUND_NONE = 0,  ///< airborne
    SIM_GROUND_FLOOR = 1, ///< walkable
    SIM_GROUND_STEEP = 2, ///< a slope too steep to stand on
} sim_ground_kind;

/// A character: plain data, no pointers, hashed and sent field by field.
typedef struct sim_char_state {
    uint32_t id;
    uint32_t flags;
    int32_t move_type; ///< sim_move_type_id
    int32_t ground;    ///< sim_ground_kind
    sim_vec3 position; ///< feet: the bottom centre of the shape
    sim_vec3 velocity;
    sim_vec3 ground_normal;   ///< unit; zero when airborne
    sim_vec3 ground_velocity; ///< of a platform stood on (zero on static ground)
    uint32_t ground_object;   ///< platform id stood on, 0 for none/static
    uint32_t stuck_ticks;     ///< consecutive ticks stuck
    sim_angle yaw;
    sim_angle pitch;
} sim_char_state;

/// The collision a mover sees: the world, other characters, platforms. The
/// caller provides it; sim_collider_world() gives one for a static world.
typedef struct sim_collider {
    void *ctx;
    bool (*sweep)(void *ctx, const sim_sweep_input *in, sim_sweep_result *out);
    int (*contacts)(void *ctx, const sim_overlap_input *in, sim_contact *out, int capacity);
    bool (*raycast)(void *ctx, const sim_ray_input *in, sim_ray_result *out);
    /// Whether a point lies in water (NULL: no water anywhere).
    bool (*in_water)(void *ctx, sim_vec3 point);
} sim_collider;

/// Hits on objects that are not part of the static world (platforms, other
/// characters) carry this bit in sim_feature.triangle, the object id below it.
#define SIM_FEATURE_OBJECT_BIT 0x80000000u

/// A collider for a static world alone.
sim_collider sim_collider_world(const sim_world *world);

/// Movement settings, Quake III's feel in metres (1 Quake unit = 2.5 cm).
typedef struct sim_move_settings {
    int32_t tick_rate;            ///< ticks per second (default 64: dt = 1/64 is exact)
    sim_shape stand_shape;        ///< default capsule radius 0.4 m, height 1.8 m
    sim_shape crouch_shape;       ///< default capsule radius 0.4 m, height 1.0 m
    sim_fx gravity;               ///< m/s^2 (default 20)
    sim_fx max_speed;             ///< ground speed (default 8 m/s)
    sim_fx crouch_speed_scale;    ///< (default 0.25)
    sim_fx accelerate;            ///< ground acceleration factor (default 10)
    sim_fx air_accelerate;        ///< (default 1)
    sim_fx air_max_speed;         ///< wish speed cap in the air (default 8 m/s)
    sim_fx friction;              ///< (default 6)
    sim_fx stop_speed;            ///< below this, friction acts as if at it (default 2.5 m/s)
    sim_fx jump_velocity;         ///< (default 6.75 m/s: apex about 1.14 m)
    sim_fx step_height;           ///< highest step climbed, and snapped down (default 0.35 m)
    sim_fx max_slope_cos;         ///< walkable when normal.y >= this (default: cosine of 45 degrees)
    sim_fx skin;                  ///< gap kept to geometry (default 5 mm)
    int32_t max_slide_iterations; ///< collide-and-slide rounds (default 4, at least 4)
    int32_t depen_iterations;     ///< Gauss-Seidel sweeps over contacts (default 8)
    sim_fx fly_speed;             ///< (default 10 m/s)
    sim_fx swim_speed;            ///< (default 4 m/s)
    sim_fx water_gravity_scale;   ///< (default 0.1)
    /// Respawn below the level (sim_scene.h, "Respawning"): a character
    /// whose feet fall more than this below the world's lowest point is put
    /// back on one of the scene's spawn spots. 0 (the default) is off;
    /// 0..1024 m. keel-server turns it on (docs/server.md).
    sim_fx respawn_depth;
    uint32_t cookie; ///< set by sim_move_default_settings; checked
} sim_move_settings;

sim_move_settings sim_move_default_settings(void);

/// Tick rates the mover supports. Below 2 Hz a fall at the speed cap moves
/// more than one query may (64 m per axis); docs/ranges.md has the rest.
#define SIM_MOVE_MIN_TICK_RATE 2
#define SIM_MOVE_MAX_TICK_RATE 1000

/// Whether every setting lies in its documented range (docs/ranges.md) and
/// the struct came from sim_move_default_settings. On false, *reason (when
/// given) names the first offending field. sim_scene_create and
/// sim_move_step refuse settings that fail this.
bool sim_move_settings_check(const sim_move_settings *s, const char **reason);

/// dt of the settings' tick rate in Q16.16 (1/64 s is 1024 exactly); a rate
/// outside the supported range is clamped into it.
sim_fx sim_move_dt(const sim_move_settings *s);

/// A new character standing at `feet` (no contact checks: the first step
/// resolves a spawn inside geometry).
sim_char_state sim_char_spawn(uint32_t id, sim_vec3 feet, sim_angle yaw);

/// The shape a state uses (standing or crouched) and its centre.
sim_shape sim_char_shape(const sim_move_settings *s, const sim_char_state *c);
sim_vec3 sim_char_center(const sim_move_settings *s, const sim_char_state *c);

/// Flags a state may carry; any other bit makes it invalid.
#define SIM_CHAR_KNOWN_FLAGS 0x3FFu

/// Whether a state could have come from the simulation: a known move type
/// and ground kind, known flags, position within SIM_MOVE_POSITION_LIMIT,
/// velocities within SIM_MOVE_MAX_SPEED per axis, a ground normal that is zero
/// or unit (within 1/256), a ground object id below SIM_FEATURE_OBJECT_BIT.
/// Every state sim_move_step produces passes. On false, *reason (when given)
/// names the first offending field.
bool sim_char_state_check(const sim_char_state *state, const char **reason);

/// Advance one character by one tick. `state` is read and written. Returns
/// false, and leaves the state as it was, when the settings or the state
/// fail their checks (sim_move_settings_check, sim_char_state_check).
bool sim_move_step(const sim_collider *col, const sim_move_settings *s, sim_char_state *state, const sim_input *input);

/// Name of a move type ("walk", ...), "?" when out of range.
const char *sim_move_type_name(int32_t id);

/// Hash every field of the state (see sim_hash.h).
uint64_t sim_hash_char(uint64_t h, const sim_char_state *c);

#ifdef __cplusplus
}
#endif

#endif
