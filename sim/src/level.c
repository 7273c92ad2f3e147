// keel: level data: markers, bounds, freeing and the level builder. MIT licence, see LICENSE.
#include <keel/sim_level.h>

#include <stdlib.h>
#include <string.h>

// Same cap as the OBJ loader: indices stay far from UINT32_MAX and array sizes
// in bytes fit comfortably in size_t even on 32-bit hosts.
#define LEVEL_MAX_ELEMENTS ((uint32_t)1 << 24)

void sim_level_free(sim_level *level)
{
    if (!level)
        return;
    free(level->vertices);
    free(level->indices);
    free(level->boxes);
    free(level->markers);
    memset(level, 0, sizeof *level);
}

const sim_marker *sim_level_find_marker(const sim_level *level, const char *name)
{
    if (!level || !name)
        return NULL;
    for (uint32_t i = 0; i < level->marker_count; i++) {
        if (strncmp(level->markers[i].name, name, SIM_MARKER_NAME_MAX) == 0)
            return &level->markers[i];
    }
    return NULL;
}

static int64_t abs64(sim_fx v) { return v < 0 ? -(int64_t)v : v; }

// Rounded up so the bounds never cut into an oriented box; with |axis| <= 1
// and half <= 2^28 the sum stays below 2^30.
static sim_fx box_extent(const sim_box_def *box, int axis)
{
    int64_t sum = 0;
    for (int k = 0; k < 3; k++) {
        int64_t a = abs64(sim_v3_comp(box->axis[k], axis));
        int64_t h = abs64(sim_v3_comp(box->half, k));
        sum += (a * h + 0xFFFF) >> 16;
    }
    return sim_fx_from_s64_checked(sum);
}

sim_aabb sim_level_bounds(const sim_level *level)
{
    sim_aabb b = {sim_v3_zero(), sim_v3_zero()};
    bool any = false;
    if (!level)
        return b;
    for (uint32_t i = 0; i < level->vertex_count; i++) {
        sim_aabb p = sim_aabb_of_point(level->vertices[i]);
        b = any ? sim_aabb_union(b, p) : p;
        any = true;
    }
    for (uint32_t i = 0; i < level->box_count; i++) {
        const sim_box_def *box = &level->boxes[i];
        sim_vec3 e = sim_v3(box_extent(box, 0), box_extent(box, 1), box_extent(box, 2));
        sim_aabb p = sim_aabb_expand(sim_aabb_of_point(box->center), e);
        b = any ? sim_aabb_union(b, p) : p;
        any = true;
    }
    return b;
}

// ---- builder ------------------------------------------------------------------

void sim_level_builder_init(sim_level_builder *b) { memset(b, 0, sizeof *b); }

// Doubling keeps appends amortised O(1); the cap keeps sizes well inside size_t.
static bool grow(void **array, uint32_t *capacity, uint32_t needed, size_t item)
{
    if (needed <= *capacity)
        return true;
    if (needed > LEVEL_MAX_ELEMENTS)
        return false;
    uint32_t cap = *capacity ? *capacity : 64;
    while (cap < needed)
        cap *= 2;
    void *p = realloc(*array, (size_t)cap * item);
    if (!p)
        return false;
    *array = p;
    *capacity = cap;
    return true;
}

uint32_t sim_level_builder_vertex(sim_level_builder *b, sim_vec3 p)
{
    sim_level *l = &b->level;
    if (b->failed || !grow((void **)&l->vertices, &b->vertex_capacity, l->vertex_count + 1, sizeof(sim_vec3))) {
        b->failed = true;
        return 0;
    }
    l->vertices[l->vertex_count] = p;
    return l->vertex_count++;
}

void sim_level_builder_triangle(sim_level_builder *b, uint32_t i0, uint32_t i1, uint32_t i2)
{
    sim_level *l = &b->level;
    if (b->failed)
        return;
    if (i0 >= l->vertex_count || i1 >= l->vertex_count || i2 >= l->vertex_count ||
        !grow((void **)&l->indices, &b->triangle_capacity, l->triangle_count + 1, 3 * sizeof(uint32_t))) {
        b->failed = true;
        return;
    }
    uint32_t *t = &l->indices[(size_t)l->triangle_count * 3];
    t[0] = i0;
    t[1] = i1;
    t[2] = i2;
    l->triangle_count++;
}

void sim_level_builder_tri(sim_level_builder *b, sim_vec3 p0, sim_vec3 p1, sim_vec3 p2)
{
    uint32_t i0 = sim_level_builder_vertex(b, p0);
    uint32_t i1 = sim_level_builder_vertex(b, p1);
    uint32_t i2 = sim_level_builder_vertex(b, p2);
    sim_level_builder_triangle(b, i0, i1, i2);
}

void sim_level_builder_quad(sim_level_builder *b, sim_vec3 p0, sim_vec3 p1, sim_vec3 p2, sim_vec3 p3)
{
    uint32_t i0 = sim_level_builder_vertex(b, p0);
    uint32_t i1 = sim_level_builder_vertex(b, p1);
    uint32_t i2 = sim_level_builder_vertex(b, p2);
    uint32_t i3 = sim_level_builder_vertex(b, p3);
    sim_level_builder_triangle(b, i0, i1, i2);
    sim_level_builder_triangle(b, i0, i2, i3);
}

void sim_level_builder_box(sim_level_builder *b, sim_box_def box)
{
    sim_level *l = &b->level;
    if (b->failed || !grow((void **)&l->boxes, &b->box_capacity, l->box_count + 1, sizeof(sim_box_def))) {
        b->failed = true;
        return;
    }
    l->boxes[l->box_count++] = box;
}

void sim_level_builder_aabox(sim_level_builder *b, sim_vec3 min, sim_vec3 max)
{
    // Centre and half extents from the exact sums; odd raw sums round the
    // centre down and the half up, so the box covers at least min..max.
    sim_box_def box;
    int64_t c[3], h[3];
    for (int k = 0; k < 3; k++) {
        int64_t lo = sim_v3_comp(min, k), hi = sim_v3_comp(max, k);
        c[k] = sim_div_floor_s64(lo + hi, 2);
        h[k] = hi - c[k];
    }
    box.center = sim_v3((sim_fx)c[0], (sim_fx)c[1], (sim_fx)c[2]);
    box.half = sim_v3((sim_fx)h[0], (sim_fx)h[1], (sim_fx)h[2]);
    box.axis[0] = sim_v3(SIM_FX_ONE, 0, 0);
    box.axis[1] = sim_v3(0, SIM_FX_ONE, 0);
    box.axis[2] = sim_v3(0, 0, SIM_FX_ONE);
    sim_level_builder_box(b, box);
}

void sim_level_builder_marker(sim_level_builder *b, const char *name, sim_vec3 position)
{
    sim_level *l = &b->level;
    size_t len = name ? strlen(name) : SIM_MARKER_NAME_MAX;
    if (b->failed || len == 0 || len >= SIM_MARKER_NAME_MAX ||
        !grow((void **)&l->markers, &b->marker_capacity, l->marker_count + 1, sizeof(sim_marker))) {
        b->failed = true;
        return;
    }
    sim_marker *m = &l->markers[l->marker_count++];
    memset(m->name, 0, sizeof m->name);
    memcpy(m->name, name, len);
    m->position = position;
}

// Shrinking a block never fails in practice; when it does, the bigger block
// is still valid, so keep it.
static void *trim(void *p, size_t bytes)
{
    if (!p || bytes == 0)
        return p;
    void *q = realloc(p, bytes);
    return q ? q : p;
}

int sim_level_builder_finish(sim_level_builder *b, sim_level *out)
{
    if (b->failed || !out) {
        sim_level_free(&b->level);
        sim_level_builder_init(b);
        if (out)
            memset(out, 0, sizeof *out);
        return -1;
    }
    sim_level *l = &b->level;
    l->vertices = trim(l->vertices, (size_t)l->vertex_count * sizeof(sim_vec3));
    l->indices = trim(l->indices, (size_t)l->triangle_count * 3 * sizeof(uint32_t));
    l->boxes = trim(l->boxes, (size_t)l->box_count * sizeof(sim_box_def));
    l->markers = trim(l->markers, (size_t)l->marker_count * sizeof(sim_marker));
    *out = *l;
    sim_level_builder_init(b);
    return 0;
}
