// keel-sim: the stage: loading the level, building the world, choosing spawn
// points. MIT licence, see LICENSE.
#include "keel_sim.h"

#include "keel_app.h"

#include <stdlib.h>
#include <string.h>

// The walkable limit used to accept a random probe spawn: normal.y >= 0.7,
// the same test the probes use for "grounded".
#define PROBE_WALKABLE_NY SIM_FX_RATIO(7, 10)
#define PROBE_SPAWN_ATTEMPTS 256
// How far outside the level's bounds an entity may go before it respawns.
#define KS_KEEP_MARGIN SIM_FX_INT(64)

static sim_shape make_shape(int32_t type)
{
    if (type == SIM_SHAPE_BOX)
        return sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
    if (type == SIM_SHAPE_CYLINDER)
        return sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
    return sim_shape_default();
}

static int load_level(const ks_options *opt, sim_level *level, sim_map *map)
{
    sim_error err;
    memset(&err, 0, sizeof err);
    switch (opt->level_kind) {
    case KS_LEVEL_BUILTIN:
        if (sim_level_builtin(level) != 0) {
            fputs("keel-sim: cannot build the built-in level (out of memory)\n", stderr);
            return KS_EXIT_FAILURE;
        }
        return KS_EXIT_OK;
    case KS_LEVEL_GENERATED:
        if (sim_level_generate(level, opt->generate_triangles, (uint32_t)opt->seed) != 0) {
            fputs("keel-sim: cannot generate the level (out of memory)\n", stderr);
            return KS_EXIT_FAILURE;
        }
        return KS_EXIT_OK;
    case KS_LEVEL_OBJ: {
        if (keel_app_is_map(opt->level_name)) {
            // A Quake .map: its own scale (2.5 cm per unit) and Z-up axis,
            // loaded as every program loads it.
            char why[600];
            if (keel_app_load_level_map(opt->level_name, NULL, 'y', level, map, why, sizeof why) != 0) {
                fprintf(stderr, "keel-sim: %s\n", why);
                return KS_EXIT_FAILURE;
            }
            return KS_EXIT_OK;
        }
        sim_obj_options o = sim_obj_default_options();
        o.unit_scale = opt->scale;
        o.up_axis = opt->up_axis;
        if (sim_level_load_obj(opt->level_name, &o, level, &err) != 0) {
            // The loader's message already names the file and line.
            fprintf(stderr, "keel-sim: %s\n", err.message);
            return KS_EXIT_FAILURE;
        }
        return KS_EXIT_OK;
    }
    }
    return KS_EXIT_FAILURE;
}

static bool has_prefix(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

// The probes' keep box ends 64 m inside SIM_WORLD_LIMIT (16 m past the
// character range): a probe spawned anywhere in the range (its centre about
// a metre above its feet) starts inside it, and a tick's motion from inside
// (at most 50 m, at 1 Hz) stays within the world.
static sim_fx clamp_keep(int64_t v)
{
    const int64_t lim = (int64_t)SIM_WORLD_LIMIT - SIM_FX_INT(64);
    return (sim_fx)(v < -lim ? -lim : (v > lim ? lim : v));
}

int ks_stage_load(ks_stage *stage, const ks_options *opt)
{
    memset(stage, 0, sizeof *stage);
    stage->shape = make_shape(opt->shape_type);
    // dt = 1/rate rounded to nearest; exact for rates that divide 65536 (64 Hz).
    stage->dt = (sim_fx)sim_div_round_s64(SIM_FX_ONE, opt->rate);
    stage->seed = opt->seed;

    int rc = load_level(opt, &stage->level, &stage->map);
    if (rc != KS_EXIT_OK)
        return rc;

    sim_world_def def = sim_world_default_def();
    sim_error err;
    memset(&err, 0, sizeof err);
    stage->world = sim_world_create(&stage->level, &def, &err);
    if (!stage->world) {
        fprintf(stderr, "keel-sim: %s: cannot build the world: %s\n", opt->level_name,
                err.message[0] ? err.message : "unknown error");
        ks_stage_free(stage);
        return KS_EXIT_FAILURE;
    }
    stage->stats = sim_world_get_stats(stage->world);

    if (opt->spawn_count > 0) {
        stage->fixed_spawns = malloc(sizeof(sim_vec3) * opt->spawn_count);
        if (!stage->fixed_spawns)
            goto oom;
        memcpy(stage->fixed_spawns, opt->spawns, sizeof(sim_vec3) * opt->spawn_count);
        stage->fixed_spawn_count = opt->spawn_count;
    } else if (!opt->random_spawns) {
        // Markers keep the level's order, which is the file's order.
        uint32_t n = 0;
        for (uint32_t i = 0; i < stage->level.marker_count; i++)
            n += has_prefix(stage->level.markers[i].name, "spawn");
        if (n > 0) {
            stage->fixed_spawns = malloc(sizeof(sim_vec3) * n);
            if (!stage->fixed_spawns)
                goto oom;
            for (uint32_t i = 0; i < stage->level.marker_count; i++)
                if (has_prefix(stage->level.markers[i].name, "spawn"))
                    stage->fixed_spawns[stage->fixed_spawn_count++] = stage->level.markers[i].position;
        }
    }

    // A world with no triangles has an empty (zero) bounds box; the margin
    // still gives room to fall before respawning.
    sim_aabb b = stage->stats.triangle_count > 0 ? stage->stats.bounds : sim_aabb_of_point(sim_v3_zero());
    for (uint32_t i = 0; i < stage->fixed_spawn_count; i++)
        b = sim_aabb_union(b, sim_aabb_of_point(stage->fixed_spawns[i]));
    stage->keep_bounds.min =
        sim_v3(clamp_keep((int64_t)b.min.x - KS_KEEP_MARGIN), clamp_keep((int64_t)b.min.y - KS_KEEP_MARGIN),
               clamp_keep((int64_t)b.min.z - KS_KEEP_MARGIN));
    stage->keep_bounds.max =
        sim_v3(clamp_keep((int64_t)b.max.x + KS_KEEP_MARGIN), clamp_keep((int64_t)b.max.y + KS_KEEP_MARGIN),
               clamp_keep((int64_t)b.max.z + KS_KEEP_MARGIN));
    return KS_EXIT_OK;

oom:
    fputs("keel-sim: out of memory\n", stderr);
    ks_stage_free(stage);
    return KS_EXIT_FAILURE;
}

void ks_stage_free(ks_stage *stage)
{
    free(stage->fixed_spawns);
    if (stage->world)
        sim_world_destroy(stage->world);
    sim_level_free(&stage->level);
    sim_map_free(&stage->map);
    memset(stage, 0, sizeof *stage);
}

// First hit straight down from `top` to `bottom` (both on the same vertical).
static bool ray_down(const sim_world *w, sim_vec3 top, sim_fx bottom, sim_ray_result *hit)
{
    sim_vec3 at = top;
    while (at.y > bottom) {
        sim_fx piece = sim_fx_min(KS_RAY_PIECE, sim_fx_sub(at.y, bottom));
        sim_ray_input in = {at, sim_v3(0, -piece, 0)};
        if (sim_world_raycast(w, &in, hit))
            return true;
        at.y = sim_fx_sub(at.y, piece);
    }
    return false;
}

static sim_vec3 feet_to_center(const ks_stage *stage, sim_vec3 feet)
{
    return sim_v3_add(feet, sim_v3(0, sim_fx_add(stage->shape.half.y, KS_SKIN), 0));
}

// A seeded random point on walkable ground where the shape fits: random x, z
// inside the level's bounds, a ray straight down from above the top.
static sim_vec3 random_spawn_center(const ks_stage *stage, uint32_t id)
{
    ks_rng rng = ks_rng_for(stage->seed, id, KS_STREAM_SPAWN);
    sim_aabb b = stage->stats.bounds;
    sim_fx top = sim_fx_add(b.max.y, SIM_FX_ONE), bottom = sim_fx_sub(b.min.y, SIM_FX_ONE);
    for (int attempt = 0; attempt < PROBE_SPAWN_ATTEMPTS && stage->stats.triangle_count > 0; attempt++) {
        sim_fx x = (sim_fx)ks_rng_range(&rng, b.min.x, b.max.x);
        sim_fx z = (sim_fx)ks_rng_range(&rng, b.min.z, b.max.z);
        sim_ray_result hit;
        if (!ray_down(stage->world, sim_v3(x, top, z), bottom, &hit))
            continue;
        // The ray reports the face normal facing its origin, i.e. upwards here.
        if (hit.normal.y < PROBE_WALKABLE_NY || !ks_feet_in_range(hit.point))
            continue;
        sim_vec3 center = feet_to_center(stage, hit.point);
        sim_overlap_input oi = {stage->shape, center, 0};
        sim_contact c;
        if (sim_world_contacts(stage->world, &oi, &c, 1) == 0)
            return center;
    }
    // Nothing found (an empty or all-steep level): drop in above the middle,
    // inside the character range.
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    sim_vec3 mid = sim_v3(b.min.x + (sim_fx)(((int64_t)b.max.x - b.min.x) / 2), top,
                          b.min.z + (sim_fx)(((int64_t)b.max.z - b.min.z) / 2));
    mid = sim_v3(sim_fx_clamp(mid.x, -lim, lim), sim_fx_clamp(mid.y, -lim, lim), sim_fx_clamp(mid.z, -lim, lim));
    return feet_to_center(stage, mid);
}

sim_vec3 ks_stage_probe_spawn(const ks_stage *stage, uint32_t id)
{
    if (stage->fixed_spawn_count > 0)
        return feet_to_center(stage, stage->fixed_spawns[id % stage->fixed_spawn_count]);
    return random_spawn_center(stage, id);
}

// ---- character spawns ------------------------------------------------------------

/// Characters placed at random start at least this far apart (capsule
/// diameter 0.8 m), like tests/test_soak.c.
#define KS_CHARACTER_SPACING SIM_FX_MM(1200)
/// After this many characters in a row find no floor, the level counts as
/// full and later characters go straight above it (overflow_spot).
#define KS_SPAWN_FULL_AFTER 16u

// Where a character goes when the seeded search finds nothing (an empty,
// all-steep or full level): 1 m above the top of the level, on a square
// spiral of KS_CHARACTER_SPACING around the middle, skipping spots too close
// to a character already placed. The first is right above the middle.
static sim_vec3 overflow_spot(const ks_stage *stage, ks_spawn_grid *grid, uint32_t *next_cell)
{
    sim_aabb b = stage->stats.bounds;
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    sim_vec3 mid = sim_v3(b.min.x + (sim_fx)(((int64_t)b.max.x - b.min.x) / 2), sim_fx_min(b.max.y + SIM_FX_ONE, lim),
                          b.min.z + (sim_fx)(((int64_t)b.max.z - b.min.z) / 2));
    mid.x = sim_fx_clamp(mid.x, -lim, lim);
    mid.z = sim_fx_clamp(mid.z, -lim, lim);
    // Bounded: KS_MAX_CHARACTERS spots and the cells skipped for placed
    // characters fit in a few hundred rings, far inside the range.
    for (uint32_t guard = 0; guard < 4u * KS_MAX_CHARACTERS + 1000u; guard++) {
        uint32_t k = (*next_cell)++;
        int32_t dx = 0, dz = 0;
        if (k > 0)
            sim_spawn_spiral_cell(k, &dx, &dz);
        int64_t x = (int64_t)mid.x + (int64_t)dx * KS_CHARACTER_SPACING;
        int64_t z = (int64_t)mid.z + (int64_t)dz * KS_CHARACTER_SPACING;
        if (x < -lim || x > lim || z < -lim || z > lim)
            continue;
        sim_vec3 p = sim_v3((sim_fx)x, mid.y, (sim_fx)z);
        if (ks_spawn_grid_apart(grid, p))
            return p;
    }
    return mid;
}

bool ks_stage_character_spawns(const ks_stage *stage, sim_shape shape, sim_fx walkable_ny, bool random_spawns,
                               uint32_t count, sim_vec3 *out, ks_spawn_report *report)
{
    memset(report, 0, sizeof *report);
    (void)random_spawns; // already applied: the stage then holds no markers
    uint32_t n = stage->fixed_spawn_count;
    if (n > 0) {
        // Entity i uses point i mod n, all of a point's repeats on the point
        // itself, as a server with one spawn point does: the scene's
        // separation moves them to the nearest free spots in its first step
        // (a fixed spiral put some inside walls, stuck for good).
        for (uint32_t i = 0; i < count; i++)
            out[i] = stage->fixed_spawns[i % n];
        return true;
    }
    // Seeded floors: inside rooms (under a ceiling) when the level has any,
    // like the soak test on the real maps, else floors open to the sky. The
    // choice is made by character 1, so it is the same for everyone. When
    // the rooms are full (a character finds no room spot in all its tries),
    // that character and every later one use open floors as well; so
    // character i's spot still depends only on the characters below it.
    ks_spawn_area area = {&stage->level, stage->world, stage->stats.bounds, shape, walkable_ny, SIM_FX_ONE, true};
    bool any = stage->stats.triangle_count > 0;
    report->seeded = true;
    // The characters placed so far, in a grid: each line's spacing check
    // looks at the few nearby points only, so placing N characters takes
    // time proportional to N.
    ks_spawn_grid grid;
    if (!ks_spawn_grid_init(&grid, KS_CHARACTER_SPACING, count))
        return false;
    sim_vec3 probe;
    if (any && count > 0 && !ks_spawn_find_grid(&area, stage->seed, 1, &grid, &probe))
        area.require_ceiling = false;
    uint32_t misses = 0, next_cell = 0;
    for (uint32_t i = 0; i < count; i++) {
        bool found = false;
        if (any && !report->full) {
            found = ks_spawn_find_grid(&area, stage->seed, i + 1, &grid, &out[i]);
            if (!found && area.require_ceiling) {
                area.require_ceiling = false;
                found = ks_spawn_find_grid(&area, stage->seed, i + 1, &grid, &out[i]);
            }
            // Many characters in a row finding nothing: the level is full.
            // Searching on for every later one would cost the full number of
            // lines each, for nothing.
            misses = found ? 0 : misses + 1;
            if (misses == KS_SPAWN_FULL_AFTER)
                report->full = true;
        }
        if (found) {
            report->on_floor++;
        } else {
            out[i] = overflow_spot(stage, &grid, &next_cell);
            report->overflow++;
        }
        ks_spawn_grid_add(&grid, out[i]);
    }
    report->lines = grid.lines;
    report->compared = grid.compared;
    ks_spawn_grid_free(&grid);
    return true;
}
