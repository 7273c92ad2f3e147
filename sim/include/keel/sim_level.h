// keel: level descriptions and loaders. MIT licence, see LICENSE.
//
// A level is plain data: triangles (any soup: T-junctions, open edges and
// degenerate triangles are allowed), boxes (axis-aligned or oriented) and named
// markers (spawn points and the places tests walk to). sim_world_create turns a
// level into collision geometry. Loading happens once, before any tick, so it
// may allocate; everything it produces is fixed-point and deterministic.
#ifndef KEEL_SIM_LEVEL_H
#define KEEL_SIM_LEVEL_H

#include <stddef.h>
#include <stdint.h>

#include <keel/sim_angle.h>
#include <keel/sim_math.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An oriented box: centre, half extents along its own axes, and the three
/// unit axes (rows of the rotation; the identity gives an axis-aligned box).
typedef struct sim_box_def {
    sim_vec3 center;
    sim_vec3 half;
    sim_vec3 axis[3];
} sim_box_def;

#define SIM_MARKER_NAME_MAX 32

/// A named point: "spawn", "stairs_350_start", "ramp_40_top", ... (the feet
/// point of a character standing there; docs/levels.md lists them).
typedef struct sim_marker {
    char name[SIM_MARKER_NAME_MAX];
    sim_vec3 position;
} sim_marker;

typedef struct sim_level {
    sim_vec3 *vertices;
    uint32_t vertex_count;
    uint32_t *indices; ///< 3 vertex indices per triangle, counter-clockwise
    uint32_t triangle_count;
    sim_box_def *boxes;
    uint32_t box_count;
    sim_marker *markers;
    uint32_t marker_count;
} sim_level;

/// Error report of a loader: "path:line: what went wrong", or "path: what went
/// wrong" for errors that belong to no line (line 0). docs/formats.md lists them.
typedef struct sim_error {
    char message[512];
    uint32_t line; ///< 1-based line of the offending input, 0 when not line-specific
} sim_error;

/// How an OBJ file maps to the engine (Y-up, metres).
typedef struct sim_obj_options {
    /// Metres per file unit as a decimal string, parsed exactly ("0.12",
    /// "1", "2.54e-2"). Kept as text so no floating point is needed.
    const char *unit_scale;
    /// 'y' (default): the file is Y-up like the engine. 'z': the file is
    /// Z-up and is rotated so that file +Z becomes engine +Y.
    char up_axis;
    /// Files larger than this are refused (default 256 MiB).
    size_t max_bytes;
} sim_obj_options;

/// Defaults: unit_scale "1", up_axis 'y', max_bytes 256 MiB.
sim_obj_options sim_obj_default_options(void);

/// Load a Wavefront OBJ file (v and f lines; polygons are fan-triangulated;
/// negative indices and v/vt/vn forms accepted; other statements ignored).
/// Returns 0 on success. On failure returns -1, fills err with
/// "path:line: message" and leaves *out empty.
int sim_level_load_obj(const char *path, const sim_obj_options *options, sim_level *out, sim_error *err);

/// The same from a memory buffer; `name` stands for the path in messages.
int sim_level_parse_obj(const char *name, const char *text, size_t length, const sim_obj_options *options,
                        sim_level *out, sim_error *err);

// ---- Quake .map levels (TrenchBroom) -------------------------------------------
// docs/levels.md has the conversions and the entity mapping table.

/// How a .map file maps to the engine. Quake is Z-up in units of about an
/// inch; the engine is Y-up in metres: file (x, y, z) becomes
/// (x, z, -y) * unit_scale (a rotation, not a mirror).
typedef struct sim_map_options {
    /// Metres per Quake unit as a decimal string, parsed exactly, at most 6
    /// significant digits (default "0.025": 1 unit = 2.5 cm).
    const char *unit_scale;
    /// Files larger than this are refused (default 64 MiB).
    size_t max_bytes;
    /// Budget of the CSG union (polygon splits). When it runs out the
    /// remaining faces are kept whole (the world's buried-face test still
    /// drops most hidden ones) and sim_map.csg_complete is false. Default
    /// 2^22: 25 times what lqdm1 (389 brushes) needs.
    uint32_t csg_work_limit;
} sim_map_options;

/// Defaults: unit_scale "0.025", max_bytes 64 MiB, csg_work_limit 2^22.
sim_map_options sim_map_default_options(void);

/// What an entity is to keel (docs/levels.md, "Quake .map entities").
typedef enum sim_map_role {
    SIM_MAP_ROLE_OTHER = 0,       ///< unknown classname: kept with its keys, listed in sim_map.unknown
    SIM_MAP_ROLE_WORLD,           ///< worldspawn: its brushes are solid
    SIM_MAP_ROLE_SOLID,           ///< func_detail, func_group, func_wall, ...: brushes merged into the world
    SIM_MAP_ROLE_DECORATION,      ///< func_illusionary, func_detail_illusionary: no collision
    SIM_MAP_ROLE_SPAWN,           ///< info_player_start / info_player_deathmatch: a spawn point
    SIM_MAP_ROLE_PLATFORM,        ///< func_plat, func_train, func_door: a mover (not in the static world)
    SIM_MAP_ROLE_PATH,            ///< path_corner
    SIM_MAP_ROLE_PUSH,            ///< trigger_push: a jump pad volume
    SIM_MAP_ROLE_TELEPORT,        ///< trigger_teleport
    SIM_MAP_ROLE_TELEPORT_TARGET, ///< info_teleport_destination
    SIM_MAP_ROLE_TRIGGER,         ///< other trigger_* volumes
    SIM_MAP_ROLE_WATER,           ///< func_water
    SIM_MAP_ROLE_ITEM,            ///< item_*, weapon_*, ammo_*: points handed to the game
    SIM_MAP_ROLE_LIGHT,           ///< light*: ignored by the simulation
} sim_map_role;

/// One "key" "value" pair, as written (escapes are not interpreted).
typedef struct sim_map_key {
    const char *key;
    const char *value;
} sim_map_key;

/// Brush contents, from the entity and the texture names.
typedef enum sim_map_contents {
    SIM_MAP_SOLID = 0, ///< collision surface (world, detail, clip, sky)
    SIM_MAP_LIQUID,    ///< a texture starting with '*' (water, slime, lava) or func_water
    SIM_MAP_NONSOLID,  ///< decoration, triggers, hint and origin brushes
    SIM_MAP_MOVER,     ///< brushes of func_plat / func_train / func_door
} sim_map_contents;

typedef struct sim_map_brush {
    uint32_t entity; ///< index into sim_map.entities
    uint32_t line;   ///< line of its opening brace
    uint32_t face_count;
    sim_map_contents contents;
    sim_aabb bounds; ///< engine coordinates
} sim_map_brush;

typedef struct sim_map_entity {
    const char *classname; ///< "" when the entity has none
    sim_map_role role;
    uint32_t line;                     ///< line of its opening brace
    uint32_t first_key, key_count;     ///< into sim_map.keys
    uint32_t first_brush, brush_count; ///< into sim_map.brushes
    bool has_origin;
    sim_vec3 origin; ///< "origin" in engine coordinates
    sim_fx yaw;      ///< "angle" (or the yaw of "angles") in degrees, Q16.16; 0 when absent
    sim_aabb bounds; ///< of its brushes (brush entities), else origin..origin
} sim_map_entity;

/// Everything in a .map besides the collision triangles.
typedef struct sim_map {
    sim_map_entity *entities;
    uint32_t entity_count;
    sim_map_key *keys;
    uint32_t key_count;
    sim_map_brush *brushes;
    uint32_t brush_count;
    uint32_t face_count;        ///< face lines in the file
    uint32_t solid_brush_count; ///< brushes that make the static world
    uint32_t csg_fragments;     ///< face pieces that survive the union
    uint64_t csg_work;          ///< point classifications the union made (csg_work_limit caps them)
    bool csg_complete;          ///< false when csg_work_limit ran out
    const char **unknown;       ///< unknown classnames, each once, in file order
    uint32_t unknown_count;
    /// The metres per unit it was loaded with, in Q16.16 rounded to nearest
    /// (1638 for the default 0.025): what sim_map_add_to_scene takes.
    sim_fx unit_m;
    char *strings; ///< storage of every string above
} sim_map;

/// Load a Quake .map (standard or Valve 220 format). The static world (solid
/// brushes after a CSG union: no face inside another solid or between two)
/// goes into *level as triangles; spawn points become markers
/// "spawn_start", "spawn_dm" and "spawn_coop" at the feet (24 units below
/// the entity origin). `map` (may be NULL) receives entities and brushes.
/// Returns 0, or -1 with "path:line: message" naming the brush or entity.
int sim_level_load_map(const char *path, const sim_map_options *options, sim_level *out, sim_map *map, sim_error *err);

/// The same from a memory buffer; `name` stands for the path in messages.
int sim_level_parse_map(const char *name, const char *text, size_t length, const sim_map_options *options,
                        sim_level *out, sim_map *map, sim_error *err);

/// The value of `key` in entity `e`, or NULL.
const char *sim_map_value(const sim_map *map, const sim_map_entity *e, const char *key);

struct sim_scene;

/// Adds what moves and what is water to a scene: each liquid brush as a water
/// box, each func_plat (up and down by "height" at "speed", 3 s pauses) and
/// func_train (along its path_corner chain at "speed", pausing the first
/// corner's "wait"; at most SIM_PLATFORM_MAX_POINTS corners) as a platform
/// with ids from first_platform_id. tick_rate as in sim_move_settings,
/// unit_m the metres per unit the map was loaded with (Q16.16). docs/levels.md
/// has the details. A scene with a game gets the map's entities too
/// (sim_scene_game_map, keel/sim_game.h). Returns 0, or -1 when the scene
/// refused one, or its game the entities (the rest are added); the counts
/// added go to *platforms and *water (may be NULL).
int sim_map_add_to_scene(const sim_map *map, struct sim_scene *scene, int32_t tick_rate, sim_fx unit_m,
                         uint32_t first_platform_id, uint32_t *platforms, uint32_t *water);

/// The marker a .map level carries its entities' digest in (the last
/// marker; no OBJ marker can be named so: '#' starts an OBJ comment).
#define SIM_LEVEL_ENTITY_MARKER "#entities"

/// A .map level's sim_map_digest (its entities and brushes, which its
/// triangles do not show), carried by its SIM_LEVEL_ENTITY_MARKER marker:
/// the marker's position holds it (x the low 32 bits, y the high 32 bits,
/// z 0; not a place). 0 for other levels. net_level_digest covers it, so a
/// simulation identity or a recording tells apart two .map files that
/// differ only in their entities.
uint64_t sim_level_entity_digest(const sim_level *level);

/// The platform id keel's programs give a map's first mover (sim_map_add_to_scene's
/// first_platform_id in keel-server, its clients and keel-sim): far above
/// any character's id and apart from the built-in level's 0x7FFF0001/2.
#define SIM_MAP_FIRST_PLATFORM_ID 0x7FFF0100u

/// A spawn point of a map: the feet point (a spawn marker of the level) and
/// the yaw the entity's "angle" gives (Quake's angle 0 looks along +X, 90
/// along the file's +Y: keel's yaw is the angle less a quarter turn).
typedef struct sim_map_spawn {
    sim_vec3 feet;
    sim_angle yaw;
} sim_map_spawn;

/// The spawn points players start at in a deathmatch, in file order: the
/// info_player_deathmatch entities, or when the map has none its
/// info_player_start and info_player_coop ones. `level` is the level the
/// map was loaded with (its spawn markers give the feet points). Writes at
/// most `capacity` and returns how many the map has (0: none, the caller
/// searches for spots as on an OBJ level).
uint32_t sim_map_spawns(const sim_map *map, const sim_level *level, sim_map_spawn *out, uint32_t capacity);

/// A digest of the entities (roles, keys, origins, yaws) and the brushes
/// (entity, contents, bounds), for a simulation identity to cover what the
/// level's triangles do not. The same on every build; NULL gives the digest
/// of an empty map.
uint64_t sim_map_digest(const sim_map *map);

void sim_map_free(sim_map *map);

/// The built-in test level (see docs/levels.md for its layout and markers).
int sim_level_builtin(sim_level *out);

/// A generated level with at least `triangle_count` triangles (rolling
/// terrain plus scattered boxes), for benchmarks. Deterministic in `seed`.
int sim_level_generate(sim_level *out, uint32_t triangle_count, uint32_t seed);

/// Find a marker by name; NULL when absent.
const sim_marker *sim_level_find_marker(const sim_level *level, const char *name);

/// Bounds of all vertices and boxes.
sim_aabb sim_level_bounds(const sim_level *level);

void sim_level_free(sim_level *level);

// ---- building levels in code ------------------------------------------------
// Used by the built-in and generated levels; also handy for tests. Failures
// (out of memory, more than 2^24 vertices or triangles, a marker name that
// does not fit) are sticky: later calls do nothing and finish reports -1, so
// callers check once at the end.

typedef struct sim_level_builder {
    sim_level level;
    uint32_t vertex_capacity, triangle_capacity, box_capacity, marker_capacity;
    bool failed;
} sim_level_builder;

void sim_level_builder_init(sim_level_builder *b);
/// Appends a vertex and returns its index (0 after a failure).
uint32_t sim_level_builder_vertex(sim_level_builder *b, sim_vec3 p);
/// A triangle from existing vertex indices (each must be < vertex_count).
void sim_level_builder_triangle(sim_level_builder *b, uint32_t i0, uint32_t i1, uint32_t i2);
/// A triangle from three new vertices.
void sim_level_builder_tri(sim_level_builder *b, sim_vec3 p0, sim_vec3 p1, sim_vec3 p2);
/// Quad p0 p1 p2 p3 (in order around its edge) as triangles (p0,p1,p2) and (p0,p2,p3).
void sim_level_builder_quad(sim_level_builder *b, sim_vec3 p0, sim_vec3 p1, sim_vec3 p2, sim_vec3 p3);
void sim_level_builder_box(sim_level_builder *b, sim_box_def box);
/// Axis-aligned box from its min and max corners. The max corner is kept
/// exactly; where min + max is odd in raw units, min moves down by one unit.
void sim_level_builder_aabox(sim_level_builder *b, sim_vec3 min, sim_vec3 max);
void sim_level_builder_marker(sim_level_builder *b, const char *name, sim_vec3 position);
/// Moves the result into *out (arrays trimmed to size) and returns 0; after a
/// failure frees everything, leaves *out empty and returns -1.
int sim_level_builder_finish(sim_level_builder *b, sim_level *out);

#ifdef __cplusplus
}
#endif

#endif
