// keel tests and benchmarks: generated Quake .map texts. MIT licence.
// No Criterion here: bench_query builds the same level.
#include "map_city.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int map_box_brush(char *out, size_t cap, int x0, int y0, int z0, int x1, int y1, int z1, const char *tex)
{
    return snprintf(out, cap,
                    "{\n"
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // x0 (-x)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // x1 (+x)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // y0 (-y)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // y1 (+y)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // z0 (-z)
                    "( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1\n" // z1 (+z)
                    "}\n",
                    x0, 0, 0, x0, 1, 0, x0, 0, 1, tex, //
                    x1, 0, 0, x1, 0, 1, x1, 1, 0, tex, //
                    0, y0, 0, 0, y0, 1, 1, y0, 0, tex, //
                    0, y1, 0, 1, y1, 0, 0, y1, 1, tex, //
                    0, 0, z0, 1, 0, z0, 0, 1, z0, tex, //
                    0, 0, z1, 0, 1, z1, 1, 0, z1, tex);
}

size_t map_prism(char *out, size_t cap, int sides, double r, int z0, int z1)
{
    size_t n = (size_t)snprintf(out, cap, "{\n");
    for (int i = 0; i < sides; i++) {
        double a0 = 2 * 3.14159265358979 * i / sides, a1 = 2 * 3.14159265358979 * (i + 1) / sides;
        long x0 = lround(r * cos(a0)), y0 = lround(r * sin(a0)), x1 = lround(r * cos(a1)), y1 = lround(r * sin(a1));
        n += (size_t)snprintf(out + n, cap - n, "( %ld %ld %d ) ( %ld %ld %d ) ( %ld %ld %d ) w 0 0 0 1 1\n", x1, y1,
                              z1, x1, y1, z0, x0, y0, z0);
    }
    n += (size_t)snprintf(out + n, cap - n, "( 0 0 %d ) ( 1 0 %d ) ( 0 1 %d ) w 0 0 0 1 1\n", z0, z0, z0);
    n += (size_t)snprintf(out + n, cap - n, "( 0 0 %d ) ( 0 1 %d ) ( 1 0 %d ) w 0 0 0 1 1\n}\n", z1, z1, z1);
    return n;
}

// The tests' seeded generator (splitmix64, as keel_rng in test_support.c,
// which needs Criterion): the same sequence from the same seed.
static int64_t city_range(uint64_t *state, int64_t lo, int64_t hi)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (int64_t)(z % ((uint64_t)(hi - lo) + 1));
}

// An octagonal column of width w and height h standing at (x, y): a prism
// around the origin with every point of its face lines moved by (x, y).
static size_t column(char *out, size_t cap, int x, int y, int w, int h)
{
    char one[2048];
    map_prism(one, sizeof one, 8, w, -16, h);
    size_t n = 0;
    for (char *line = strtok(one, "\n"); line; line = strtok(NULL, "\n")) {
        long p[9];
        if (sscanf(line, "( %ld %ld %ld ) ( %ld %ld %ld ) ( %ld %ld %ld )", &p[0], &p[1], &p[2], &p[3], &p[4], &p[5],
                   &p[6], &p[7], &p[8]) == 9)
            n += (size_t)snprintf(out + n, cap - n,
                                  "( %ld %ld %ld ) ( %ld %ld %ld ) ( %ld %ld %ld ) column [ 1 0 0 0 ] [ 0 -1 0 0 ] "
                                  "0 1 1\n",
                                  p[0] + x, p[1] + y, p[2], p[3] + x, p[4] + y, p[5], p[6] + x, p[7] + y, p[8]);
        else
            n += (size_t)snprintf(out + n, cap - n, "%s\n", line);
    }
    return n;
}

char *map_city_text(size_t *len)
{
    uint64_t rng = 5;
    size_t cap = 4 << 20, n = 0;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    n += (size_t)snprintf(text + n, cap - n, "{\n\"classname\" \"worldspawn\"\n");
    int brushes = 0;
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++, brushes++)
            n += (size_t)map_box_brush(text + n, cap - n, -2560 + 128 * i, -2560 + 128 * j, -32, -2432 + 128 * i,
                                       -2432 + 128 * j, 0, "floor");
    for (int k = 0; k < 100; k++, brushes++) {
        int side = k % 4, at = -2560 + (k / 4) * 205;
        if (side < 2)
            n += (size_t)map_box_brush(text + n, cap - n, at, side ? 2560 : -2592, -32, at + 205, side ? 2592 : -2560,
                                       512, "wall");
        else
            n += (size_t)map_box_brush(text + n, cap - n, side == 3 ? 2560 : -2592, at, -32, side == 3 ? 2592 : -2560,
                                       at + 205, 512, "wall");
    }
    for (; brushes < MAP_CITY_BRUSHES; brushes++) {
        int x = (int)city_range(&rng, -2400, 2300), y = (int)city_range(&rng, -2400, 2300);
        int w = (int)city_range(&rng, 8, 96), h = (int)city_range(&rng, 16, 300);
        if (brushes % 3 == 0) {
            // its own func_detail entity between two func_group ones
            n += (size_t)snprintf(text + n, cap - n, "}\n{\n\"classname\" \"func_detail\"\n");
            n += column(text + n, cap - n, x, y, w, h);
            n += (size_t)snprintf(text + n, cap - n, "}\n{\n\"classname\" \"func_group\"\n");
        } else {
            n += (size_t)map_box_brush(text + n, cap - n, x, y, -8, x + w, y + w, h, "pillar");
        }
    }
    n += (size_t)snprintf(text + n, cap - n, "}\n");
    *len = n;
    return text;
}
