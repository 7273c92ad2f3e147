// keel: a game's own commands, state, rules and move types inside the
// scene's deterministic tick. MIT licence, see LICENSE.
//
// A game describes itself in a sim_game_def: schemas of named fields for its
// command payload (sent beside each sim_input), its per-character state and
// its game-wide state; the rules the scene runs at fixed points of every
// tick; and its own move types. sim_game_create checks the definition once
// (a schema the core cannot honour is refused with a reason) and gives an
// immutable sim_game that any number of scenes share
// (sim_scene_create_game). The scene then keeps the game's state beside its
// characters: it is part of sim_scene_hash, of sim_scene_save and
// sim_scene_restore (so a rollback restores it), and state from outside is
// checked field by field, naming the field it refuses.
//
// A scene created without a game (sim_scene_create) behaves, hashes and
// saves exactly as it did before games existed.
//
// Before the first tick, the level's entities may be handed to the game
// (sim_scene_game_level, sim_scene_game_map; def.level writes what it keeps
// into the game-wide state).
//
// The order of a tick with a game (sim/src/scene_tick.c; docs/game.md):
//   1. platforms move; riders are carried;
//   2. rules.before_move_char for each character (in parallel, by work item);
//   3. rules.before_move once (serial);
//   4. separation, snapshot, each character's move (built-in or game move
//      type, in parallel), separation again;
//   5. rules.after_move_char for each character (in parallel);
//   6. rules.after_move once (serial);
//   7. respawn below the level; the tick number advances.
// Commands given with sim_scene_set_command are seen by the rules and the
// move of that tick only.
//
// Determinism rules for game code (docs/game.md): fixed point only (no
// float or double), no clocks, no globals or statics that change, no
// pointer values in results, iterate in index (id) order, and write only
// what the rule's context allows. The scene checks every effect on a
// character as it checks state from outside, and clamps game fields a rule
// left out of their range (counted by sim_scene_game_faults).
#ifndef KEEL_SIM_GAME_H
#define KEEL_SIM_GAME_H

#include <stddef.h>
#include <stdint.h>

#include <keel/sim_level.h>
#include <keel/sim_query.h>
#include <keel/sim_scene.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The version of this interface; a game built against another is refused.
/// 2: sim_game_def gained `level` (the level's entities).
/// 3: sim_game_def gained `judge` and `view_lag_field` (lag compensation).
#define SIM_GAME_ABI_VERSION 3u

/// Limits of what a game may declare (a schema beyond them is refused).
#define SIM_GAME_COMMAND_MAX_BYTES 64u  ///< the command struct's size
#define SIM_GAME_CHAR_MAX_BYTES 512u    ///< the per-character state struct
#define SIM_GAME_STATE_MAX_BYTES 65536u ///< the game-wide state struct
#define SIM_GAME_MAX_FIELDS 128u        ///< fields in one schema
#define SIM_GAME_MAX_MOVE_TYPES 16u     ///< game-defined move types
#define SIM_GAME_NAME_MAX 47u           ///< characters of a name

/// The kinds of a field. Each is stored in the game's own struct at
/// `offset` (native byte order) and written everywhere else (hash, saves,
/// the wire) by value, so no padding byte is ever read.
typedef enum sim_game_kind {
    SIM_GAME_BOOL = 1,  ///< a uint8_t, 0 or 1; 1 bit on the wire
    SIM_GAME_INT = 2,   ///< a signed integer of `size` 1, 2 or 4 bytes
    SIM_GAME_UINT = 3,  ///< an unsigned integer of `size` 1, 2 or 4 bytes
    SIM_GAME_FX = 4,    ///< a sim_fx (Q16.16) in [min, max] (raw units)
    SIM_GAME_ANGLE = 5, ///< a sim_angle; `bits` 1..16 keeps its top bits (the rest must be 0)
} sim_game_kind;

/// One named field of a schema. For an array (a table of entities, one per
/// row), `count` > 1 elements lie `stride` bytes apart from `offset`.
/// Ranges: BOOL is 0..1; INT, UINT and FX take [min, max] (both 0: the whole
/// range of `bits`); `bits` (1..32) is the field's width on the wire, and a
/// range that does not fit in it is refused. `size` is 1, 2 or 4 for INT and
/// UINT (ignored for the others: BOOL 1, FX 4, ANGLE 2).
typedef struct sim_game_field {
    const char *name; ///< unique in its schema; letters, digits, '_' and '.'
    sim_game_kind kind;
    uint32_t offset; ///< of element 0 in the struct
    uint32_t size;
    uint32_t bits;
    int64_t min, max;
    uint32_t count;  ///< elements (0 counts as 1)
    uint32_t stride; ///< bytes between elements (arrays only)
} sim_game_field;

/// A struct described field by field. Bytes no field covers are padding:
/// never hashed, saved or sent.
typedef struct sim_game_schema {
    uint32_t size; ///< sizeof the struct (0: no such struct)
    const sim_game_field *fields;
    uint32_t field_count;
} sim_game_schema;

typedef struct sim_game_tick sim_game_tick;

/// A rule run for the whole scene (serial): it may read every character and
/// its game state, write the game-wide state and any character's game state,
/// and change characters through the sim_game_* effects below.
typedef void (*sim_game_rule_fn)(sim_game_tick *t);
/// A rule run for character `index` (in parallel with the others, on the
/// scene's executor): it may read its own character, its own command and the
/// game-wide state (read-only: sim_game_state_read), write its own game state
/// (sim_game_char) and apply effects to its own character only. It must not
/// read other characters (they may be moving on another thread).
typedef void (*sim_game_char_rule_fn)(sim_game_tick *t, uint32_t index);

/// Rules by their place in the tick (NULL: none; a scene with no rules runs
/// no rule pass at all). Declaring a rule per character is what runs it in
/// the step's parallel part.
typedef struct sim_game_rules {
    sim_game_char_rule_fn before_move_char;
    sim_game_rule_fn before_move;
    sim_game_char_rule_fn after_move_char;
    sim_game_rule_fn after_move;
} sim_game_rules;

typedef struct sim_game_move sim_game_move;

/// A game-defined move type. Its id is SIM_GAME_MOVE_FIRST + its index in
/// sim_game_def.move_types; a character gets it through sim_game_set_move_type
/// (or a restore). `tick` advances the character one tick (it may change
/// the state through sim_game_move_char and the sim_game_move_* helpers) and
/// returns the move type of the next tick: its own id to stay, a built-in id
/// (SIM_MOVE_WALK, ...) or another game move type's.
typedef struct sim_game_move_type {
    const char *name;
    int32_t (*tick)(sim_game_move *m);
} sim_game_move_type;

/// The id of the first game-defined move type (the built-in ids 0..4 never
/// change).
#define SIM_GAME_MOVE_FIRST 16

/// A level's entity as a game receives it (sim_game_def.level): a Quake .map
/// entity (keel/sim_level.h's sim_map_entity) in engine coordinates (Y-up,
/// metres). The pointers are valid during the call only.
typedef struct sim_game_entity {
    const char *classname; ///< "" when it has none
    int32_t role;          ///< its sim_map_role: SIM_MAP_ROLE_SPAWN, _PUSH, _TELEPORT, _ITEM, ...
    bool has_origin;
    sim_vec3 origin; ///< its "origin" (a spawn point's is 24 units above the feet, as in Quake)
    sim_fx angle;    ///< "angle" (or the yaw of "angles") in degrees, Q16.16; 0 when absent
    sim_aabb bounds; ///< of its brushes (trigger_push, trigger_teleport), else origin..origin
    /// The origin of the first entity whose "targetname" is this one's
    /// "target" (a trigger_push's target_position, a trigger_teleport's
    /// info_teleport_destination), and that entity's "angle".
    bool has_target;
    sim_vec3 target;
    sim_fx target_angle;
    const sim_map_key *keys; ///< every key as written, in file order
    uint32_t key_count;
} sim_game_entity;

/// A level given to a game: its entities in file order, the metres per level
/// unit (for keys in level units, such as a trigger_push's "speed") and the
/// scene's movement settings (gravity, tick rate).
typedef struct sim_game_level {
    const sim_game_entity *entities;
    uint32_t entity_count;
    sim_fx unit_m;
    const sim_move_settings *settings;
} sim_game_level;

/// Receives a level's entities once, before the first tick
/// (sim_scene_game_level; sim_map_add_to_scene calls it for a .map level),
/// and writes what the game keeps of them (spawn points, jump pads, items)
/// into `state`, the game-wide state, which then is hashed, saved and
/// restored like the rest of it. `user` is sim_game_def.user. It must be
/// deterministic as a rule is.
typedef void (*sim_game_level_fn)(const sim_game_level *level, void *state, void *user);

/// Judges a command against the view its sender had when it made it: lag
/// compensation, docs/game.md "Judging a shot". Called in two ways, both
/// deterministic as a rule is:
/// - `view` false: `scene` is a scene at the command's tick (before it
///   runs: the server's, or the client's prediction). Clear the command's
///   outcome fields (the rules then judge as things are at the tick) and
///   return whether the command needs its sender's view (it shoots now).
/// - `view` true (only after a first call returned true): `scene` is the
///   view, the scene at the command's tick as the sender's client predicted
///   it. Write the outcome fields (what the shot hits in it); the return
///   value is ignored.
/// `id` is the sender's character and `input` its movement command for that
/// tick (its aim). It may read `scene` only through the public sim_scene and
/// sim_game functions, and write only `command`.
typedef bool (*sim_game_judge_fn)(const sim_scene *scene, uint32_t id, const sim_input *input, void *command, bool view,
                                  void *user);

/// What a game is. Every pointer must stay valid while the sim_game lives.
typedef struct sim_game_def {
    uint32_t abi_version; ///< SIM_GAME_ABI_VERSION
    const char *name;     ///< 1..SIM_GAME_NAME_MAX characters: letters, digits, '_', '-', '.'
    uint32_t version;
    sim_game_schema command;   ///< payload beside sim_input (size 0: none)
    sim_game_schema character; ///< per-character state
    sim_game_schema state;     ///< game-wide state (entity tables are array fields)
    /// The initial per-character and game-wide state (NULL: all zero), and
    /// the game's settings as bytes that go into its digest (NULL: none).
    const void *character_initial;
    const void *state_initial;
    const void *settings;
    size_t settings_size;
    sim_game_rules rules;
    const sim_game_move_type *move_types;
    uint32_t move_type_count;
    void *user;              ///< passed back by sim_game_user: constant data only (never state)
    sim_game_level_fn level; ///< the level's entities into the game-wide state (NULL: ignored)
    /// Lag compensation (both or neither; NULL: none, every command is
    /// judged at its tick): the judge, and the name of a command field (a
    /// UINT of 1 byte whose range starts at 0) that carries how many ticks
    /// past its confirmed tick the sender's view was predicted (T - C),
    /// clamped to the field's maximum. keel's client fills it; keel's server
    /// rebuilds the view from it (sv_config.lag_compensation_ms bounds it).
    sim_game_judge_fn judge;
    const char *view_lag_field;
} sim_game_def;

/// Why a definition, a state or a command was refused.
typedef struct sim_game_error {
    const char *reason; ///< static text; "" when nothing was refused
    const char *field;  ///< the field's name (the game's string), "" for none
    int64_t element;    ///< the element of an array field, or the character index; -1 for none
} sim_game_error;

typedef struct sim_game sim_game;

/// A zeroed definition with abi_version set.
sim_game_def sim_game_default_def(void);

/// Checks `def` and builds the game; NULL with *error filled (when given) if
/// the definition cannot be honoured: wrong ABI version, a bad name, a
/// struct too large, a field outside its struct, fields that overlap, a bad
/// kind, size or bit width, a range that does not fit its bits, an initial
/// state out of range, too many move types or one without a tick.
sim_game *sim_game_create(const sim_game_def *def, sim_game_error *error);
void sim_game_destroy(sim_game *game);

/// Identity: name, version and a digest of every schema, the initial
/// states, the move types' names and the settings bytes.
const char *sim_game_name(const sim_game *game);
uint32_t sim_game_version(const sim_game *game);
uint64_t sim_game_digest(const sim_game *game);
const sim_game_def *sim_game_definition(const sim_game *game);

/// Which schema a check or a packer works on.
typedef enum sim_game_part {
    SIM_GAME_PART_COMMAND = 0,
    SIM_GAME_PART_CHARACTER = 1,
    SIM_GAME_PART_STATE = 2,
} sim_game_part;

/// Whether every field of a struct of `part` lies in its declared range;
/// false names the first field out of range in *error.
bool sim_game_check(const sim_game *game, sim_game_part part, const void *data, sim_game_error *error);

/// The command payload's width on the wire, in bits (the sum of its fields').
uint32_t sim_game_command_bits(const sim_game *game);
/// Packs a command struct into ceil(bits / 8) bytes of `out` (`capacity`
/// bytes), fields in schema order, each in its bits, least significant bit
/// first; the bits beyond the last field are 0. Refuses a command with a
/// field out of range (naming it) or a too small buffer. Returns the bytes
/// written, 0 when refused.
size_t sim_game_pack_command(const sim_game *game, const void *command, uint8_t *out, size_t capacity,
                             sim_game_error *error);
/// Unpacks exactly ceil(bits / 8) bytes (`size` must be that) into a command
/// struct (padding bytes zeroed). Untrusted input: a field out of its range,
/// nonzero bits after the last field or a wrong size is refused with a
/// reason; `command` is then zeroed.
bool sim_game_unpack_command(const sim_game *game, const uint8_t *in, size_t size, void *command,
                             sim_game_error *error);

/// Whether the game judges commands against their sender's view (it has a
/// judge and a view-lag field).
bool sim_game_judges(const sim_game *game);
/// The view-lag field of a command struct (0 for a game that does not
/// judge), and written (clamped to the field's range).
uint32_t sim_game_view_lag(const sim_game *game, const void *command);
void sim_game_set_view_lag(const sim_game *game, void *command, uint32_t lag);
/// The game's judge on a command struct (see sim_game_judge_fn); false, and
/// nothing changed, for a game that does not judge.
bool sim_game_judge(const sim_game *game, const sim_scene *scene, uint32_t id, const sim_input *input, void *command,
                    bool view);
/// sim_game_judge on a packed payload (sim_game_pack_command's bytes,
/// `size` of them): unpacked, judged and packed again, the view lag set to
/// `lag` when the command needs a view or is judged in one (else 0).
/// Returns whether it needs one (with `view` false); false too when the
/// payload does not unpack (it is then unchanged).
bool sim_game_judge_packed(const sim_game *game, const sim_scene *scene, uint32_t id, const sim_input *input,
                           uint8_t *payload, size_t size, bool view, uint32_t lag);

// ---- the scene with a game --------------------------------------------------

/// sim_scene_create with a game (which must outlive the scene; NULL: no game,
/// exactly sim_scene_create). The game-wide state starts as the game's
/// initial state; each added character gets the initial character state.
sim_scene *sim_scene_create_game(const sim_world *world, const sim_move_settings *settings, uint32_t max_characters,
                                 const sim_game *game);
/// The scene's game (NULL for none).
const sim_game *sim_scene_game(const sim_scene *scene);

/// sim_scene_set_input plus the game's command struct (NULL: all zero); the
/// command is checked against its schema. False when the id is unknown, the
/// scene has no game command, or a field is out of range (*error names it).
bool sim_scene_set_command(sim_scene *scene, uint32_t id, const sim_input *input, const void *command,
                           sim_game_error *error);

/// Gives the scene's game a level: its `level` rule writes what it keeps of
/// the entities into a copy of the game-wide state, which is checked field
/// by field and becomes the scene's (refused, naming the field, when one is
/// out of its range; the state is then unchanged). Call it once, before the
/// first tick, where every peer does (a client that joins gets the state with
/// the scene's). True with nothing done when the scene has no game or the
/// game no level rule.
bool sim_scene_game_level(sim_scene *scene, const sim_game_level *level, sim_game_error *error);
/// sim_scene_game_level with a loaded .map's entities (unit_m and the
/// targets from the map; the settings the scene's). sim_map_add_to_scene
/// calls it, so keel's programs hand a .map level to their game.
bool sim_scene_game_map(sim_scene *scene, const sim_map *map, sim_game_error *error);

/// The game-wide state and a character's game state (by id) as they are
/// between steps (NULL when there is none).
const void *sim_scene_game_state(const sim_scene *scene);
const void *sim_scene_game_char(const sim_scene *scene, uint32_t id);
/// Whether a character is out of collisions (sim_game_set_solid).
bool sim_scene_game_out(const sim_scene *scene, uint32_t id);

/// State from outside: the game-wide state, or a character's game state.
/// Checked field by field before anything changes (*error names the field).
bool sim_scene_set_game_state(sim_scene *scene, const void *state, sim_game_error *error);
bool sim_scene_set_game_char(sim_scene *scene, uint32_t id, const void *state, sim_game_error *error);

/// The game field the last sim_scene_restore refused ("" when it refused
/// none: the reason of its sim_scene_error then says why). Its offset and
/// record are the sim_scene_error's.
const char *sim_scene_refused_field(const sim_scene *scene);

/// Effects the scene refused and game fields it clamped since creation.
uint64_t sim_scene_game_faults(const sim_scene *scene);

// ---- inside a rule -----------------------------------------------------------

/// The tick being computed (the scene's tick before the step).
uint32_t sim_game_tick_number(const sim_game_tick *t);
const sim_scene *sim_game_scene(const sim_game_tick *t);
/// The scene's movement settings (tick rate, gravity, shapes) and its tick
/// length in seconds (1 / tick_rate, Q16.16).
const sim_move_settings *sim_game_settings(const sim_game_tick *t);
sim_fx sim_game_dt(const sim_game_tick *t);
void *sim_game_user(const sim_game_tick *t);

/// The characters, in id order (index 0..count-1), as they are at this point
/// of the tick, with their commands (the game command is NULL without one).
uint32_t sim_game_char_count(const sim_game_tick *t);
const sim_char_state *sim_game_character(const sim_game_tick *t, uint32_t index);
const sim_input *sim_game_input(const sim_game_tick *t, uint32_t index);
const void *sim_game_command(const sim_game_tick *t, uint32_t index);
/// The index of a character id (-1: none).
int64_t sim_game_find(const sim_game_tick *t, uint32_t id);

/// Game state: the game-wide state (writable in serial rules only: NULL in a
/// per-character rule) and read-only; a character's game state (writable).
void *sim_game_state(sim_game_tick *t);
const void *sim_game_state_read(const sim_game_tick *t);
void *sim_game_char(sim_game_tick *t, uint32_t index);

/// Effects on character `index`, each checked: false (and counted in
/// sim_scene_game_faults) when refused -- a position outside the character
/// range, a velocity above SIM_MOVE_MAX_SPEED on an axis, an unknown move
/// type, another character than its own in a per-character rule.
/// Teleport: feet at `position`, velocity as given, off the ground.
bool sim_game_teleport(sim_game_tick *t, uint32_t index, sim_vec3 position, sim_vec3 velocity);
bool sim_game_set_velocity(sim_game_tick *t, uint32_t index, sim_vec3 velocity);
bool sim_game_set_move_type(sim_game_tick *t, uint32_t index, int32_t move_type);
/// Out of collisions (solid false: nobody collides with it, it does not
/// move, rays pass it) and back in (solid true).
bool sim_game_set_solid(sim_game_tick *t, uint32_t index, bool solid);

/// A ray against the world, the platforms (at the scene's tick) and the
/// characters as they are now (sim_scene_raycast; out-of-collision
/// characters and `ignore_id` are passed through). Serial rules only (false
/// in a per-character rule).
bool sim_game_raycast(const sim_game_tick *t, const sim_ray_input *in, uint32_t ignore_id, sim_ray_result *out,
                      uint32_t *hit_character_id);
/// A shape swept from `center` by `displacement` against the world, the
/// platforms (where the tick being computed takes them) and the characters
/// as they are now, as a character's move sweeps (sim_query.h's order of
/// hits); *hit_character_id is the character hit (0: none). Serial rules
/// only. It rebuilds the scene's snapshot of the characters: O(characters).
bool sim_game_shape_cast(const sim_game_tick *t, sim_shape shape, sim_vec3 center, sim_vec3 displacement,
                         uint32_t ignore_id, sim_sweep_result *out, uint32_t *hit_character_id);

// ---- inside a game move type ---------------------------------------------------

/// The character being moved (writable: it is checked and clamped after the
/// tick), its command and game command, the settings, the tick length.
sim_char_state *sim_game_move_char(sim_game_move *m);
const sim_input *sim_game_move_input(const sim_game_move *m);
const void *sim_game_move_command(const sim_game_move *m);
/// The character's own game state (writable; clamped into its ranges after
/// the moves, like a rule's writes).
void *sim_game_move_state(sim_game_move *m);
const sim_move_settings *sim_game_move_settings(const sim_game_move *m);
sim_fx sim_game_move_dt(const sim_game_move *m);
/// Collide and slide the character by `displacement` through the same view
/// a built-in move type uses (world, platforms, other characters), clipping
/// its velocity against what it meets; no step-up and no ground logic.
void sim_game_move_slide(sim_game_move *m, sim_vec3 displacement);
/// Probe the ground below (snap: stay on stairs and slopes within a step).
void sim_game_move_ground(sim_game_move *m, bool snap);

#ifdef __cplusplus
}
#endif

#endif
