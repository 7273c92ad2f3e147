// keel-sim: loading the level, building the world, choosing spawn points.
// MIT licence, see LICENSE.
#include "keel_sim.h"

#include <stdlib.h>
#include <string.h>

// The walkable limit used to accept a random spawn: normal.y >= 0.7, the
// same test the probes use for "grounded".
#define KS_WALKABLE_NY SIM_FX_RATIO(7, 10)
#define KS_SPAWN_ATTEMPTS 256
// One query accepts at most SIM_MAX_DISPLACEMENT per axis; longer drops are
// cast in pieces of this length.
#define KS_RAY_PIECE SIM_FX_INT(60)
// How far outside the level's bounds an entity may go before it respawns.
#define KS_KEEP_MARGIN SIM_FX_INT(64)

static sim_shape make_shape(int32_t type)
{
    if (type == SIM_SHAPE_BOX)
        return sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
    return sim_shape_default();
}

static int load_level(const ks_options *opt, sim_level *level)
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

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static sim_fx clamp_keep(int64_t v)
{
    const int64_t lim = (int64_t)SIM_WORLD_LIMIT - SIM_FX_INT(128);
    return (sim_fx)(v < -lim ? -lim : (v > lim ? lim : v));
}

int ks_scene_load(ks_scene *scene, const ks_options *opt)
{
    memset(scene, 0, sizeof *scene);
    scene->shape = make_shape(opt->shape_type);
    // dt = 1/rate rounded to nearest; exact for rates that divide 65536 (64 Hz).
    scene->dt = (sim_fx)sim_div_round_s64(SIM_FX_ONE, opt->rate);
    scene->seed = opt->seed;

    int rc = load_level(opt, &scene->level);
    if (rc != KS_EXIT_OK)
        return rc;

    sim_world_def def = sim_world_default_def();
    sim_error err;
    memset(&err, 0, sizeof err);
    scene->world = sim_world_create(&scene->level, &def, &err);
    if (!scene->world) {
        fprintf(stderr, "keel-sim: %s: cannot build the world: %s\n", opt->level_name,
                err.message[0] ? err.message : "unknown error");
        ks_scene_free(scene);
        return KS_EXIT_FAILURE;
    }
    scene->stats = sim_world_get_stats(scene->world);

    if (opt->spawn_count > 0) {
        scene->fixed_spawns = malloc(sizeof(sim_vec3) * opt->spawn_count);
        if (!scene->fixed_spawns)
            goto oom;
        memcpy(scene->fixed_spawns, opt->spawns, sizeof(sim_vec3) * opt->spawn_count);
        scene->fixed_spawn_count = opt->spawn_count;
    } else {
        // Markers keep the level's order, which is the file's order.
        uint32_t n = 0;
        for (uint32_t i = 0; i < scene->level.marker_count; i++)
            n += has_prefix(scene->level.markers[i].name, "spawn");
        if (n > 0) {
            scene->fixed_spawns = malloc(sizeof(sim_vec3) * n);
            if (!scene->fixed_spawns)
                goto oom;
            for (uint32_t i = 0; i < scene->level.marker_count; i++)
                if (has_prefix(scene->level.markers[i].name, "spawn"))
                    scene->fixed_spawns[scene->fixed_spawn_count++] =
                        scene->level.markers[i].position;
        }
    }

    // A world with no triangles has an empty (zero) bounds box; the margin
    // still gives room to fall before respawning.
    sim_aabb b = scene->stats.triangle_count > 0 ? scene->stats.bounds
                                                 : sim_aabb_of_point(sim_v3_zero());
    for (uint32_t i = 0; i < scene->fixed_spawn_count; i++)
        b = sim_aabb_union(b, sim_aabb_of_point(scene->fixed_spawns[i]));
    scene->keep_bounds.min = sim_v3(clamp_keep((int64_t)b.min.x - KS_KEEP_MARGIN),
                                    clamp_keep((int64_t)b.min.y - KS_KEEP_MARGIN),
                                    clamp_keep((int64_t)b.min.z - KS_KEEP_MARGIN));
    scene->keep_bounds.max = sim_v3(clamp_keep((int64_t)b.max.x + KS_KEEP_MARGIN),
                                    clamp_keep((int64_t)b.max.y + KS_KEEP_MARGIN),
                                    clamp_keep((int64_t)b.max.z + KS_KEEP_MARGIN));
    return KS_EXIT_OK;

oom:
    fputs("keel-sim: out of memory\n", stderr);
    ks_scene_free(scene);
    return KS_EXIT_FAILURE;
}

void ks_scene_free(ks_scene *scene)
{
    free(scene->fixed_spawns);
    if (scene->world)
        sim_world_destroy(scene->world);
    sim_level_free(&scene->level);
    memset(scene, 0, sizeof *scene);
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

static sim_vec3 feet_to_center(const ks_scene *scene, sim_vec3 feet)
{
    return sim_v3_add(feet, sim_v3(0, sim_fx_add(scene->shape.half.y, KS_SKIN), 0));
}

// A seeded random point on walkable ground where the shape fits: random x, z
// inside the level's bounds, a ray straight down from above the top.
static sim_vec3 random_spawn_center(const ks_scene *scene, uint32_t id)
{
    ks_rng rng = ks_rng_for(scene->seed, id, KS_STREAM_SPAWN);
    sim_aabb b = scene->stats.bounds;
    sim_fx top = sim_fx_add(b.max.y, SIM_FX_ONE), bottom = sim_fx_sub(b.min.y, SIM_FX_ONE);
    for (int attempt = 0; attempt < KS_SPAWN_ATTEMPTS && scene->stats.triangle_count > 0;
         attempt++) {
        sim_fx x = (sim_fx)ks_rng_range(&rng, b.min.x, b.max.x);
        sim_fx z = (sim_fx)ks_rng_range(&rng, b.min.z, b.max.z);
        sim_ray_result hit;
        if (!ray_down(scene->world, sim_v3(x, top, z), bottom, &hit))
            continue;
        // The ray reports the face normal facing its origin, i.e. upwards here.
        if (hit.normal.y < KS_WALKABLE_NY)
            continue;
        sim_vec3 center = feet_to_center(scene, hit.point);
        sim_overlap_input oi = {scene->shape, center, 0};
        sim_contact c;
        if (sim_world_contacts(scene->world, &oi, &c, 1) == 0)
            return center;
    }
    // Nothing found (an empty or all-steep level): drop in above the middle.
    sim_vec3 mid = sim_v3(b.min.x + (sim_fx)(((int64_t)b.max.x - b.min.x) / 2), top,
                          b.min.z + (sim_fx)(((int64_t)b.max.z - b.min.z) / 2));
    return feet_to_center(scene, mid);
}

sim_vec3 ks_scene_spawn_center(const ks_scene *scene, uint32_t id)
{
    if (scene->fixed_spawn_count > 0)
        return feet_to_center(scene, scene->fixed_spawns[id % scene->fixed_spawn_count]);
    return random_spawn_center(scene, id);
}
