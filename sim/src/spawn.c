// keel: the spawn search (sim_spawn.h). MIT licence, see LICENSE.
//
// Integer arithmetic only. Long vertical rays are cast in pieces of 60 m
// (one query accepts at most SIM_MAX_DISPLACEMENT per axis).
#include <keel/sim_spawn.h>

#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

#define RAY_PIECE SIM_FX_INT(60)

// ---- random streams -------------------------------------------------------------

uint64_t sim_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t sim_rng_next(sim_rng *r)
{
    r->state += UINT64_C(0x9E3779B97F4A7C15);
    return sim_rng_mix(r->state);
}

sim_rng sim_rng_for(uint64_t seed, uint32_t id, uint32_t stream)
{
    sim_rng r = {sim_rng_mix(seed ^ sim_rng_mix(((uint64_t)stream << 32 | id) + 1))};
    return r;
}

int64_t sim_rng_range(sim_rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1u;
    return lo + (int64_t)(sim_rng_next(r) % span);
}

// ---- the world's spawn data ----------------------------------------------------

static bool has_spawn_prefix(const char *name) { return strncmp(name, "spawn", 5) == 0; }

bool sim_spawn_world_init(sim_world *w, const sim_level *level)
{
    uint32_t tc = level->triangle_count;
    w->level_triangles = tc;
    w->facing = malloc(tc ? tc : 1);
    uint32_t m = 0;
    for (uint32_t i = 0; i < level->marker_count; i++)
        m += has_spawn_prefix(level->markers[i].name);
    w->spawn_markers = malloc((m ? m : 1) * sizeof *w->spawn_markers);
    if (!w->facing || !w->spawn_markers)
        return false;
    for (uint32_t i = 0; i < level->marker_count; i++)
        if (has_spawn_prefix(level->markers[i].name))
            w->spawn_markers[w->spawn_marker_count++] = level->markers[i].position;
    for (uint32_t t = 0; t < tc; t++) {
        const uint32_t *ix = &level->indices[3u * t];
        w->facing[t] = 0;
        if (ix[0] >= level->vertex_count || ix[1] >= level->vertex_count || ix[2] >= level->vertex_count)
            continue; // the world is refused further on
        sim_vec3 a = level->vertices[ix[0]], b = level->vertices[ix[1]], c = level->vertices[ix[2]];
        // The y component of (b - a) x (c - a); coordinates within the world
        // limit keep each product below 2^58.
        int64_t ux = (int64_t)b.x - a.x, uz = (int64_t)b.z - a.z;
        int64_t vx = (int64_t)c.x - a.x, vz = (int64_t)c.z - a.z;
        int64_t ny = uz * vx - ux * vz;
        w->facing[t] = (int8_t)(ny > 0 ? 1 : (ny < 0 ? -1 : 0));
    }
    return true;
}

const sim_vec3 *sim_world_spawn_markers(const sim_world *world, uint32_t *count)
{
    *count = world->spawn_marker_count;
    return world->spawn_markers;
}

// +1 when the surface hit faces up, -1 down, 0 vertical: a level triangle by
// its winding, a box face (ids past the level's triangles) by the side hit.
static int hit_facing(const sim_world *w, const sim_ray_result *r)
{
    uint32_t t = r->feature.triangle;
    if (t < w->level_triangles)
        return w->facing[t];
    return r->normal.y > 0 ? 1 : (r->normal.y < 0 ? -1 : 0);
}

// ---- settings ---------------------------------------------------------------------

sim_spawn_settings sim_spawn_default_settings(const sim_move_settings *move)
{
    sim_move_settings d = sim_move_default_settings();
    if (!move)
        move = &d;
    sim_spawn_settings s;
    memset(&s, 0, sizeof s);
    s.shape = move->stand_shape;
    s.walkable_ny = move->max_slope_cos;
    s.inset = SIM_FX_ONE;
    s.require_ceiling = false;
    s.footprint = true;
    s.ground_reach = move->step_height;
    s.attempts = 512;
    s.spacing = SIM_FX_INT(4);
    s.marker_reach = SIM_FX_INT(24);
    s.seed = 0;
    return s;
}

// ---- single spots -----------------------------------------------------------------

static bool feet_in_range(sim_vec3 p)
{
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    return p.x >= -lim && p.x <= lim && p.y >= -lim && p.y <= lim && p.z >= -lim && p.z <= lim;
}

int sim_spawn_floors_at(const sim_world *world, const sim_spawn_settings *s, sim_fx x, sim_fx z, sim_spawn_floor *out,
                        int capacity)
{
    sim_aabb bounds = world->stats.bounds;
    sim_fx bottom = bounds.min.y - SIM_FX_ONE;
    sim_vec3 at = sim_v3(x, bounds.max.y + SIM_FX_ONE, z);
    int prev = 2; // 2: nothing above yet (open sky); else the facing of the last surface
    bool ceiling_above = false;
    int n = 0;
    for (int hits = 0; hits < SIM_SPAWN_MAX_HITS && at.y > bottom;) {
        sim_fx piece = at.y - bottom < RAY_PIECE ? at.y - bottom : RAY_PIECE;
        sim_ray_input in = {at, sim_v3(0, -piece, 0)};
        sim_ray_result r;
        if (!sim_world_raycast(world, &in, &r)) {
            at.y -= piece;
            continue;
        }
        hits++;
        int facing = hit_facing(world, &r);
        bool open_above = prev == 2 || prev < 0;
        if (facing > 0 && open_above && r.normal.y >= s->walkable_ny && (ceiling_above || !s->require_ceiling) &&
            n < capacity && feet_in_range(r.point)) {
            out[n].point = r.point;
            out[n].under_ceiling = ceiling_above;
            n++;
        }
        if (facing < 0)
            ceiling_above = true;
        if (facing != 0)
            prev = facing;
        // Continue just below this surface; two faces closer than a
        // millimetre count as one.
        at.y = r.point.y - SIM_FX_MM(1);
    }
    return n;
}

bool sim_spawn_fits(const sim_world *world, sim_shape shape, sim_vec3 feet)
{
    sim_overlap_input oi = {shape, sim_v3_add(feet, sim_v3(0, shape.half.y, 0)), 0};
    sim_contact c;
    return sim_world_contacts(world, &oi, &c, 1) == 0;
}

// Ground within reach under a point of the footprint: a ray from a little
// above the feet (inside the shape, which fits) down to reach below them.
static bool ground_under(const sim_world *world, const sim_spawn_settings *s, sim_vec3 feet, sim_fx dx, sim_fx dz,
                         sim_fx least_ny)
{
    sim_fx up = sim_fx_min(SIM_FX_MM(100), s->shape.half.y);
    sim_ray_input in = {sim_v3(feet.x + dx, feet.y + up, feet.z + dz), sim_v3(0, -(up + s->ground_reach), 0)};
    sim_ray_result r;
    return sim_world_raycast(world, &in, &r) && r.normal.y > least_ny;
}

bool sim_spawn_valid(const sim_world *world, const sim_spawn_settings *s, sim_vec3 feet)
{
    if (!feet_in_range(feet) || !sim_spawn_fits(world, s->shape, feet))
        return false;
    if (!s->footprint)
        return true;
    if (!ground_under(world, s, feet, 0, 0, s->walkable_ny - 1))
        return false;
    // Four points near the rim, along the diagonals.
    sim_fx ox, oz;
    if (s->shape.type == SIM_SHAPE_BOX) {
        ox = (sim_fx)((int64_t)s->shape.half.x * 9 / 10);
        oz = (sim_fx)((int64_t)s->shape.half.z * 9 / 10);
    } else {
        ox = oz = (sim_fx)((int64_t)s->shape.radius * 7 / 10);
    }
    static const int sx[4] = {1, -1, 1, -1}, sz[4] = {1, 1, -1, -1};
    for (int k = 0; k < 4; k++)
        if (!ground_under(world, s, feet, sx[k] * ox, sz[k] * oz, 0))
            return false;
    return true;
}

bool sim_spawn_search(const sim_world *world, const sim_spawn_settings *s, uint32_t id, sim_spawn_apart_fn apart,
                      const void *ctx, uint64_t *lines, sim_vec3 *feet)
{
    sim_rng rng = sim_rng_for(s->seed, id, SIM_SPAWN_STREAM);
    sim_aabb b = world->stats.bounds;
    sim_fx x0 = b.min.x + s->inset, x1 = b.max.x - s->inset;
    sim_fx z0 = b.min.z + s->inset, z1 = b.max.z - s->inset;
    if (x0 > x1)
        x0 = x1 = b.min.x + (sim_fx)(((int64_t)b.max.x - b.min.x) / 2);
    if (z0 > z1)
        z0 = z1 = b.min.z + (sim_fx)(((int64_t)b.max.z - b.min.z) / 2);
    // Lines are drawn inside the character range only.
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    x0 = sim_fx_max(x0, -lim), x1 = sim_fx_min(x1, lim);
    z0 = sim_fx_max(z0, -lim), z1 = sim_fx_min(z1, lim);
    if (x0 > x1 || z0 > z1)
        return false;
    // A sloped floor holds the shape's bottom below the hit point's height
    // on one side; lifting it a little keeps such spots usable.
    static const int32_t lift_mm[] = {5, 20, 100};
    for (uint32_t attempt = 0; attempt < s->attempts; attempt++) {
        sim_fx x = (sim_fx)sim_rng_range(&rng, x0, x1);
        sim_fx z = (sim_fx)sim_rng_range(&rng, z0, z1);
        uint64_t pick = sim_rng_next(&rng);
        if (lines)
            (*lines)++;
        sim_spawn_floor floors[SIM_SPAWN_MAX_HITS];
        int n = sim_spawn_floors_at(world, s, x, z, floors, SIM_SPAWN_MAX_HITS);
        if (n == 0)
            continue;
        // One floor of a multi-storey column, chosen by the stream.
        sim_vec3 p = floors[pick % (uint64_t)n].point;
        if (apart && !apart(ctx, p))
            continue;
        for (int l = 0; l < 3; l++) {
            sim_vec3 f = sim_v3(p.x, p.y + SIM_FX_MM(lift_mm[l]), p.z);
            if (sim_spawn_valid(world, s, f)) {
                *feet = f;
                return true;
            }
        }
    }
    return false;
}

sim_angle sim_spawn_yaw_toward(sim_fx dx, sim_fx dz)
{
    sim_angle best = 0;
    int64_t best_dot = INT64_MIN;
    for (uint32_t k = 0; k < 256; k++) {
        sim_angle a = (sim_angle)(k << 8);
        int64_t dot = -(int64_t)sim_angle_sin(a) * dx - (int64_t)sim_angle_cos(a) * dz;
        if (dot > best_dot) {
            best_dot = dot;
            best = a;
        }
    }
    return best;
}

// How far the level lets one see from `feet` along yaw a: the fraction of
// SIM_SPAWN_VIEW_REACH the shorter of the two sight lines runs.
static sim_fx view_fraction(const sim_world *world, sim_vec3 feet, sim_angle a)
{
    static const int32_t height_mm[2] = {500, 1500};
    sim_vec3 d = sim_v3_scale(sim_angle_dir(a, 0), SIM_SPAWN_VIEW_REACH);
    sim_fx least = SIM_FX_ONE;
    for (int i = 0; i < 2; i++) {
        sim_ray_input in = {sim_v3(feet.x, feet.y + SIM_FX_MM(height_mm[i]), feet.z), d};
        sim_ray_result r;
        if (sim_world_raycast(world, &in, &r) && r.fraction < least)
            least = r.fraction;
        else if (!r.hit && r.fraction == 0)
            return 0; // refused: the line leaves the world's range
    }
    return least;
}

sim_angle sim_spawn_yaw_open(const sim_world *world, sim_vec3 feet, sim_fx dx, sim_fx dz)
{
    sim_angle best = 0;
    sim_fx best_view = -1;
    int64_t best_dot = INT64_MIN;
    for (uint32_t k = 0; k < SIM_SPAWN_VIEW_DIRECTIONS; k++) {
        sim_angle a = (sim_angle)(k * (65536u / SIM_SPAWN_VIEW_DIRECTIONS));
        sim_fx view = view_fraction(world, feet, a);
        int64_t dot = -(int64_t)sim_angle_sin(a) * dx - (int64_t)sim_angle_cos(a) * dz;
        if (view > best_view || (view == best_view && dot > best_dot)) {
            best = a;
            best_view = view;
            best_dot = dot;
        }
    }
    return best;
}

// ---- lists of spots ---------------------------------------------------------------

typedef struct spot_list {
    sim_vec3 *points;
    uint32_t count;
    int64_t spacing_sq;
} spot_list;

static bool list_apart(const void *ctx, sim_vec3 p)
{
    const spot_list *l = (const spot_list *)ctx;
    for (uint32_t i = 0; i < l->count; i++) {
        sim_vec3 a = l->points[i];
        int64_t dx = (int64_t)a.x - p.x, dz = (int64_t)a.z - p.z, dy = (int64_t)a.y - p.y;
        if (dy < SIM_FX_INT(2) && dy > -SIM_FX_INT(2) && dx * dx + dz * dz < l->spacing_sq)
            return false;
    }
    return true;
}

// Cell k of a square spiral around (0, 0): k = 0 is the centre; ring r
// (cells at Chebyshev distance r) holds 8r cells and starts at k = (2r - 1)^2.
void sim_spawn_spiral_cell(uint32_t k, int32_t *dx, int32_t *dz)
{
    *dx = *dz = 0;
    if (k == 0)
        return;
    uint32_t r = 1;
    while ((uint64_t)(2 * r + 1) * (2 * r + 1) <= k)
        r++;
    uint32_t idx = k - (2 * r - 1) * (2 * r - 1);
    int32_t side = (int32_t)(idx / (2 * r)), off = (int32_t)(idx % (2 * r)), R = (int32_t)r;
    switch (side) {
    case 0: *dx = R, *dz = -R + 1 + off; break;
    case 1: *dx = R - 1 - off, *dz = R; break;
    case 2: *dx = -R, *dz = R - 1 - off; break;
    default: *dx = -R + 1 + off, *dz = -R; break;
    }
}

// Whether the standing shape, lifted by the step height, sweeps from `from`
// to `to` (feet points) without touching the level.
static bool reachable(const sim_world *world, const sim_spawn_settings *s, sim_vec3 from, sim_vec3 to)
{
    sim_fx lift = s->shape.half.y + s->ground_reach + SIM_FX_MM(10);
    sim_vec3 a = sim_v3(from.x, from.y + lift, from.z), b = sim_v3(to.x, to.y + lift, to.z);
    sim_vec3 d = sim_v3_sub(b, a);
    if (sim_v3_is_zero(d))
        return true;
    sim_sweep_input in;
    memset(&in, 0, sizeof in);
    in.shape = s->shape;
    in.start = a;
    in.displacement = d;
    sim_sweep_result r;
    return !sim_world_sweep(world, &in, &r);
}

// The spots around one marker, ring by ring, appended to the list.
static void spots_around(const sim_world *world, const sim_spawn_settings *s, sim_vec3 marker, spot_list *l,
                         uint32_t capacity)
{
    sim_fx step = s->spacing > SIM_FX_MM(100) ? s->spacing : SIM_FX_MM(100);
    int64_t rings = (int64_t)s->marker_reach / step;
    uint64_t cells = (uint64_t)(2 * rings + 1) * (uint64_t)(2 * rings + 1);
    static const int32_t lift_mm[] = {5, 20, 100};
    for (uint64_t k = 0; k < cells && l->count < capacity; k++) {
        int32_t dx, dz;
        sim_spawn_spiral_cell((uint32_t)k, &dx, &dz);
        int64_t x = (int64_t)marker.x + (int64_t)dx * step, z = (int64_t)marker.z + (int64_t)dz * step;
        int64_t top = (int64_t)marker.y + SIM_FX_ONE;
        if (x < -SIM_MOVE_POSITION_LIMIT || x > SIM_MOVE_POSITION_LIMIT || z < -SIM_MOVE_POSITION_LIMIT ||
            z > SIM_MOVE_POSITION_LIMIT || top > SIM_MOVE_POSITION_LIMIT)
            continue;
        sim_ray_input in = {sim_v3((sim_fx)x, (sim_fx)top, (sim_fx)z), sim_v3(0, -SIM_FX_INT(5), 0)};
        sim_ray_result r;
        if (!sim_world_raycast(world, &in, &r) || hit_facing(world, &r) <= 0 || r.normal.y < s->walkable_ny)
            continue;
        if (!list_apart(l, r.point))
            continue;
        for (int i = 0; i < 3; i++) {
            sim_vec3 f = sim_v3(r.point.x, r.point.y + SIM_FX_MM(lift_mm[i]), r.point.z);
            if (sim_spawn_valid(world, s, f) && reachable(world, s, marker, f)) {
                l->points[l->count++] = f;
                break;
            }
        }
    }
}

uint32_t sim_spawn_spots(const sim_world *world, const sim_spawn_settings *s, sim_vec3 *out, uint32_t capacity)
{
    spot_list l = {out, 0, (int64_t)s->spacing * s->spacing};
    for (uint32_t m = 0; m < world->spawn_marker_count && l.count < capacity; m++)
        spots_around(world, s, world->spawn_markers[m], &l, capacity);
    if (l.count > 0 || capacity == 0)
        return l.count;
    // No markers: the seeded search, inside rooms first when there are any
    // (decided by spot 1, so the choice is the same for every spot). Spot 1
    // stands in for a marker: the spots around it come first, so players
    // start together; the seeded search fills the rest.
    sim_spawn_settings t = *s;
    t.require_ceiling = true;
    sim_vec3 anchor;
    if (!sim_spawn_search(world, &t, 1, NULL, NULL, NULL, &anchor)) {
        t.require_ceiling = s->require_ceiling;
        if (!sim_spawn_search(world, &t, 1, NULL, NULL, NULL, &anchor))
            return 0;
    }
    spots_around(world, s, anchor, &l, capacity);
    if (l.count == 0)
        out[l.count++] = anchor;
    for (uint32_t i = 1; l.count < capacity && i <= capacity; i++) {
        bool found = sim_spawn_search(world, &t, i + 1, list_apart, &l, NULL, &out[l.count]);
        if (!found && t.require_ceiling && !s->require_ceiling) {
            t.require_ceiling = false; // the rooms are full: open floors too
            found = sim_spawn_search(world, &t, i + 1, list_apart, &l, NULL, &out[l.count]);
        }
        if (!found)
            break;
        l.count++;
    }
    return l.count;
}
