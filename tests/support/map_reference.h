// keel tests: a Quake .map read in double, apart from the loader, for reference figures. MIT licence.
#ifndef KEEL_MAP_REFERENCE_H
#define KEEL_MAP_REFERENCE_H

#include <stdint.h>

/// One solid brush: its planes (outward unit normals, n . p = d, Quake units).
typedef struct map_ref_brush {
    int planes;
    double n[64][3];
    double d[64];
    double min[3], max[3];
} map_ref_brush;

typedef struct map_ref {
    map_ref_brush *brushes;
    int count;
} map_ref;

/// The solid brushes of a TrenchBroom-written .map (worldspawn, func_detail,
/// func_detail_wall, func_group, func_wall; no liquid, hint or origin faces).
/// Assumes one brace, key pair or face per line. Returns 0 or -1.
int map_ref_read(const char *text, map_ref *out);

/// The area (square units) of the union's surface, estimated by sampling
/// each brush face with `per_unit2` random points per square unit (at least
/// 64 per face): a sample counts when just outside it no solid brush is,
/// and the first brush just inside it is the face's own.
double map_ref_union_area(const map_ref *r, double per_unit2, uint64_t seed);

/// The sum of the brushes' face areas (square units), union or not.
double map_ref_total_area(const map_ref *r);

void map_ref_free(map_ref *r);

#endif
