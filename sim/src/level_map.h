// keel: Quake .map loader, what the parser hands to the brush geometry. MIT licence, see LICENSE.
//
// Units inside the loader: points are Quake units in Q8 fixed point (1/256
// unit), within +-MAP_COORD_LIMIT; plane normals are unit vectors in Q30;
// a plane's offset d = n . p is in Q38 (Q30 times Q8). Every product below
// fits 64 bits because points the geometry makes stay within 2^28 (Q8).
#ifndef KEEL_LEVEL_MAP_H
#define KEEL_LEVEL_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/sim_level.h>

/// Plane points and origins: at most 2^16 Quake units from the origin
/// (1,638 m at the default scale), in Q8.
#define MAP_COORD_LIMIT ((int64_t)1 << 24)
/// Faces of one brush (TrenchBroom's cylinders and spheres stay far below).
#define MAP_MAX_FACES 64
#define MAP_MAX_ELEMENTS ((uint32_t)1 << 22)

typedef struct map_plane {
    int64_t n[3]; ///< unit normal, Q30, pointing out of the brush
    int64_t d;    ///< n . p for p on the plane, Q38
} map_plane;

/// Face texture flags that decide a brush's contents.
enum { MAP_TEX_LIQUID = 1, MAP_TEX_HINT = 2, MAP_TEX_ORIGIN = 4, MAP_TEX_OTHER = 8 };

typedef struct map_face {
    map_plane plane;
    uint32_t line;
} map_face;

typedef struct map_brush_src {
    uint32_t first_face, face_count;
    uint32_t entity, index; ///< the entity and the brush's number in it (TrenchBroom's "// brush N")
    uint32_t line;
    uint32_t textures; ///< MAP_TEX_* of any face; MAP_TEX_ORIGIN only when all faces are origin
    sim_map_contents contents;
} map_brush_src;

typedef struct map_key_ref {
    uint32_t key, value; ///< offsets into the string pool
} map_key_ref;

typedef struct map_entity_src {
    uint32_t line, index;
    uint32_t first_key, key_count;
    uint32_t first_brush, brush_count;
} map_entity_src;

/// What the parser read.
typedef struct map_source {
    const map_face *faces;
    map_brush_src *brushes;
    uint32_t brush_count;
    const map_entity_src *entities;
    uint32_t entity_count;
    const map_key_ref *keys;
    uint32_t key_count;
    char *pool; ///< NUL-terminated strings; map_finish takes ownership
    size_t pool_len;
} map_source;

/// Entities into keel's terms, the world built, markers placed: fills *out
/// and *map (may be NULL). Returns 0, or -1 with err set and both empty.
int map_finish(const char *name, map_source *src, uint64_t scale_m, int64_t scale_e, uint32_t work_limit,
               sim_level *out, sim_map *map, sim_error *err);

/// Builds the static world from the solid brushes and fills each brush's
/// bounds. scale_m/scale_e: metres per unit as m * 10^e. Returns 0, or -1
/// with err set (name:line: entity E, brush B: ...).
int map_build_world(const char *name, const map_face *faces, map_brush_src *brushes, uint32_t brush_count,
                    uint64_t scale_m, int64_t scale_e, uint32_t work_limit, sim_level_builder *b, sim_map *map,
                    sim_error *err);

/// Q8 Quake units (Z-up) to engine raw units (Y-up); false when beyond the
/// world limit.
bool map_to_engine(const int64_t q[3], uint64_t scale_m, int64_t scale_e, sim_vec3 *out);

#endif
