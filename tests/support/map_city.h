// keel tests and benchmarks: generated Quake .map texts (brushes as text). MIT licence.
#ifndef KEEL_MAP_CITY_H
#define KEEL_MAP_CITY_H

#include <stddef.h>

/// A box brush from (x0,y0,z0) to (x1,y1,z1) in Quake units, standard format,
/// every face textured `tex`, into out[0 .. cap). Returns snprintf's count.
int map_box_brush(char *out, size_t cap, int x0, int y0, int z0, int x1, int y1, int z1, const char *tex);

/// A prism of `sides` faces around the z axis (plus top and bottom), radius
/// r units, from z0 to z1, standard format, into out[0 .. cap). Returns the
/// characters written.
size_t map_prism(char *out, size_t cap, int sides, double r, int z0, int z1);

/// The brushes map_city_text writes: a zdm2-sized level.
#define MAP_CITY_BRUSHES 3000

/// A generated level of MAP_CITY_BRUSHES brushes (the same text every time):
/// a floor of 40 x 40 tiles, walls around it, and 1,300 pillars and octagonal
/// columns of random sizes standing on it, some overlapping each other, every
/// third one a func_detail entity between two func_group ones. A malloc'ed
/// text (its length into *len), NULL when memory runs out.
char *map_city_text(size_t *len);

#endif
