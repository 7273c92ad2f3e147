// keel tests: the collider of a move with nobody and no platform near its
// step box (sim/src/scene_alone.c) answers every query exactly as the full
// view does: sweeps, contacts and rays inside the step box from the world's
// neighbourhood, and those that leave it (and may meet the other character
// or the platform beyond) from the view. MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <string.h>

#include <keel/sim_level.h>
#include <keel/sim_world.h>

#include "scene_internal.h"
#include "test_support.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Du;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33) % n;
}

static bool same_v3(sim_vec3 a, sim_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
static bool same_feature(sim_feature a, sim_feature b)
{
    return a.triangle == b.triangle && a.type == b.type && a.index == b.index;
}
static bool same_sweep(const sim_sweep_result *a, const sim_sweep_result *b)
{
    return a->hit == b->hit && a->start_overlap == b->start_overlap && a->fraction == b->fraction &&
           same_v3(a->position, b->position) && same_v3(a->normal, b->normal) && same_v3(a->point, b->point) &&
           same_feature(a->feature, b->feature);
}
static bool same_contact(const sim_contact *a, const sim_contact *b)
{
    return same_v3(a->normal, b->normal) && a->depth == b->depth && same_v3(a->point, b->point) &&
           same_feature(a->feature, b->feature);
}
static bool same_ray(const sim_ray_result *a, const sim_ray_result *b)
{
    return a->hit == b->hit && a->fraction == b->fraction && same_v3(a->point, b->point) &&
           same_v3(a->normal, b->normal) && same_feature(a->feature, b->feature);
}

static sim_fx around(sim_fx range) { return (sim_fx)rnd(2u * (uint32_t)range + 1u) - range; }

Test(scene_alone, same_answers_as_the_view)
{
    sim_level level;
    sim_world *world = keel_test_generated_world(&level, 7000, 1);
    sim_aabb lb = sim_world_get_stats(world).bounds;
    sim_move_settings s = sim_move_default_settings();
    sim_scene *sc = sim_scene_create(world, &s, 4);
    cr_assert_not_null(sc);
    sim_vec3 mid = sim_v3((sim_fx)(((int64_t)lb.min.x + lb.max.x) / 2), lb.min.y + SIM_FX_INT(1),
                          (sim_fx)(((int64_t)lb.min.z + lb.max.z) / 2));
    // The other character and a platform a few metres away: outside the
    // step box, within reach of the longer queries.
    sim_char_state me = sim_char_spawn(1, mid, 0),
                   other = sim_char_spawn(2, sim_v3_add(mid, sim_v3(SIM_FX_INT(3), 0, 0)), 0);
    cr_assert_eq(sim_scene_add_character(sc, &me), 0);
    cr_assert_eq(sim_scene_add_character(sc, &other), 0);
    sim_platform_def p = {0};
    p.id = 100;
    p.half = sim_v3(SIM_FX_INT(1), SIM_FX_MM(200), SIM_FX_INT(1));
    p.point_count = 1;
    p.points[0] = sim_v3_add(mid, sim_v3(0, 0, -SIM_FX_INT(4)));
    p.ticks_per_leg = 1;
    cr_assert_eq(sim_scene_add_platform(sc, &p), 0);

    sim_collider view = sim_scene_collider(sc, 1); // builds the platforms and the snapshot
    scene_view *v = view.ctx;
    sim_aabb step = sim_near_step_box(&s, sim_scene_find(sc, 1));
    static sim_near near;
    sim_near_gather(&near, world, step);
    v->near = &near;
    cr_assert_not(sim_aabb_overlaps(step, sc->bodies[1].bounds), "the other character is near");
    cr_assert_not(sim_aabb_overlaps(step, sc->platforms[0].bounds), "the platform is near");
    sim_collider alone = scene_alone_collider(v);

    sim_shape shape = sim_char_shape(&s, sim_scene_find(sc, 1));
    sim_vec3 center = sim_char_center(&s, sim_scene_find(sc, 1));
    uint32_t inside = 0, outside = 0, hits = 0;
    for (uint32_t k = 0; k < 3000; k++) {
        // Mostly short motions from near the centre (inside the step box);
        // one in four long enough to leave it.
        bool far = k % 4 == 3;
        sim_fx reach = far ? SIM_FX_INT(6) : SIM_FX_MM(50);
        sim_vec3 at = sim_v3_add(center, sim_v3(around(SIM_FX_MM(30)), around(SIM_FX_MM(30)), around(SIM_FX_MM(30))));
        sim_vec3 d = sim_v3(around(reach), around(reach), around(reach));
        if (k % 50 == 0)
            d = sim_v3_zero();
        sim_sweep_input in = {shape, at, d, k % 7 == 0 ? SIM_SWEEP_LEVEL_ONLY : 0};
        sim_sweep_result a, b;
        bool ha = alone.sweep(alone.ctx, &in, &a), hb = view.sweep(view.ctx, &in, &b);
        cr_assert_eq(ha, hb, "sweep %u: hit", k);
        cr_assert(same_sweep(&a, &b), "sweep %u: result", k);
        hits += ha;

        sim_overlap_input oi = {shape, sim_v3_add(at, far ? d : sim_v3_zero()), (sim_fx)rnd(SIM_FX_MM(300))};
        sim_contact ca[4], cb[4];
        int na = alone.contacts(alone.ctx, &oi, ca, 4), nb = view.contacts(view.ctx, &oi, cb, 4);
        cr_assert_eq(na, nb, "contacts %u: count", k);
        for (int n = 0; n < na && n < 4; n++)
            cr_assert(same_contact(&ca[n], &cb[n]), "contacts %u: contact %d", k, n);

        sim_ray_input ri = {at, d};
        sim_ray_result ra, rb;
        cr_assert_eq(alone.raycast(alone.ctx, &ri, &ra), view.raycast(view.ctx, &ri, &rb), "ray %u: hit", k);
        cr_assert(same_ray(&ra, &rb), "ray %u: result", k);

        sim_aabb box =
            sim_aabb_expand(sim_aabb_union(sim_shape_bounds(shape, at), sim_shape_bounds(shape, sim_v3_add(at, d))),
                            sim_v3(SIM_FX_MM(10), SIM_FX_MM(10), SIM_FX_MM(10)));
        if (scene_box_inside(box, step))
            inside++;
        else
            outside++;
    }
    cr_assert(inside > 1000 && outside > 500, "inside %u, outside %u", inside, outside);
    cr_assert(hits > 100, "hits %u", hits);
    v->near = NULL;
    sim_scene_destroy(sc);
    keel_test_builtin_free(&level, world);
}
