// keel: moving platforms: their paths, their triangles at a tick, the
// checks of a definition, and the built-in level's platform pair (shared by
// keel-sim --platforms, keel-server --platforms and the tests). MIT licence.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "world_near.h"

sim_vec3 sim_platform_position(const sim_platform_def *p, uint32_t tick)
{
    uint32_t n = p->point_count;
    if (n == 0)
        return sim_v3_zero();
    if (n > SIM_PLATFORM_MAX_POINTS)
        n = SIM_PLATFORM_MAX_POINTS;
    uint64_t move = p->ticks_per_leg ? p->ticks_per_leg : 1;
    uint64_t leg = move + p->pause_ticks;
    uint64_t phase = (uint64_t)tick % (leg * n);
    uint32_t i = (uint32_t)(phase / leg);
    uint64_t r = phase % leg;
    sim_vec3 a = p->points[i];
    if (r < p->pause_ticks)
        return a;
    // k in [0, move): k = 0 is exactly point i, and the next leg starts
    // exactly at point i + 1, so waypoints are hit without rounding.
    int64_t k = (int64_t)(r - p->pause_ticks);
    sim_vec3 b = p->points[(i + 1) % n];
    int64_t m = (int64_t)move;
    return sim_v3((sim_fx)(a.x + sim_div_round_s64(((int64_t)b.x - a.x) * k, m)),
                  (sim_fx)(a.y + sim_div_round_s64(((int64_t)b.y - a.y) * k, m)),
                  (sim_fx)(a.z + sim_div_round_s64(((int64_t)b.z - a.z) * k, m)));
}

// Faces as corner bit patterns (x, y, z bits 2, 1, 0), counter-clockwise seen
// from outside; each face is split along corners 0-2 of its row.
static const unsigned char box_face[6][4] = {
    {4, 6, 7, 5}, {0, 1, 3, 2}, {2, 3, 7, 6}, {0, 4, 5, 1}, {1, 5, 7, 3}, {0, 2, 6, 4},
};

void scene_platform_build(scene_platform *p, sim_vec3 c)
{
    sim_vec3 h = p->def.half;
    uint32_t id = SIM_FEATURE_OBJECT_BIT | p->def.id;
    for (int f = 0; f < 6; f++) {
        sim_vec3 q[4];
        for (int k = 0; k < 4; k++) {
            int b = box_face[f][k];
            q[k] = sim_v3((b & 4) ? c.x + h.x : c.x - h.x, (b & 2) ? c.y + h.y : c.y - h.y,
                          (b & 1) ? c.z + h.z : c.z - h.z);
        }
        sim_tri *t = &p->tris[2 * f];
        // Half extents of at least SIM_SHAPE_MIN_SIZE keep every face sound.
        sim_tri_init(&t[0], q[0], q[1], q[2], id, 1);
        sim_tri_init(&t[1], q[0], q[2], q[3], id, 1);
        // The diagonal is inside a flat face: sliding across it must not
        // bump. Its end vertices are real box corners and stay active.
        t[0].flags |= SIM_TRI_EDGE0_INACTIVE << 2;
        t[1].flags |= SIM_TRI_EDGE0_INACTIVE << 0;
    }
    p->bounds = (sim_aabb){sim_v3_sub(c, h), sim_v3_add(c, h)};
}

static bool fits_world(sim_vec3 c, sim_vec3 h)
{
    return sim_v3_in_world(c) && sim_v3_in_world(sim_v3_add(c, h)) && sim_v3_in_world(sim_v3_sub(c, h));
}

bool scene_platform_valid(const sim_platform_def *p)
{
    if (p->id == 0 || (p->id & SIM_FEATURE_OBJECT_BIT))
        return false;
    if (p->point_count < 1 || p->point_count > SIM_PLATFORM_MAX_POINTS || p->ticks_per_leg < 1)
        return false;
    const sim_fx lo = SIM_SHAPE_MIN_SIZE, hi = SIM_FX_INT(1024);
    sim_vec3 h = p->half;
    if (h.x < lo || h.y < lo || h.z < lo || h.x > hi || h.y > hi || h.z > hi)
        return false;
    for (uint32_t i = 0; i < p->point_count; i++)
        if (!sim_v3_in_world(p->points[i]) || !fits_world(p->points[i], h))
            return false;
    // At most 16 m per tick on each axis: a tick's motion must fit one sweep.
    int64_t limit = (int64_t)p->ticks_per_leg * SIM_FX_INT(16);
    for (uint32_t i = 0; i < p->point_count; i++) {
        sim_vec3 a = p->points[i], b = p->points[(i + 1) % p->point_count];
        int64_t d[3] = {(int64_t)b.x - a.x, (int64_t)b.y - a.y, (int64_t)b.z - a.z};
        for (int k = 0; k < 3; k++)
            if (d[k] > limit || d[k] < -limit)
                return false;
    }
    return true;
}

static sim_fx clamp_speed(int64_t v)
{
    return v > SIM_MOVE_MAX_SPEED ? SIM_MOVE_MAX_SPEED : (v < -SIM_MOVE_MAX_SPEED ? -SIM_MOVE_MAX_SPEED : (sim_fx)v);
}

// Platforms at `tick`; with `motion`, at tick + 1 with the motion in between.
void scene_build_platforms(sim_scene *sc, uint32_t tick, bool motion)
{
    int64_t rate = sc->settings.tick_rate < 1 ? 1 : sc->settings.tick_rate;
    for (uint32_t i = 0; i < sc->platform_count; i++) {
        scene_platform *p = &sc->platforms[i];
        sim_vec3 at = sim_platform_position(&p->def, tick);
        p->delta = sim_v3_zero();
        if (motion) {
            sim_vec3 next = sim_platform_position(&p->def, tick + 1u);
            // tick + 1 wraps to 0 after 2^32 - 1, where the path restarts at
            // phase 0: the platform jumps there. A jump is not a motion: it
            // carries nobody and has no velocity; characters it lands on are
            // pushed out by their depenetration like any overlap.
            if (tick != UINT32_MAX)
                p->delta = sim_v3_sub(next, at);
            at = next;
        }
        p->velocity =
            sim_v3(clamp_speed(p->delta.x * rate), clamp_speed(p->delta.y * rate), clamp_speed(p->delta.z * rate));
        scene_platform_build(p, at);
    }
}

// An elevator and a shuttle in the 6 m x 6 m patch around the marker: both
// 1.5 m x 0.2 m x 1.5 m with their tops 0.3 m above the floor at rest (a
// step up, so walking characters get on), on opposite halves of the patch.
int sim_scene_add_area_platforms(sim_scene *scene, const sim_level *level, uint32_t elevator_id, uint32_t shuttle_id)
{
    const sim_marker *m = sim_level_find_marker(level, "platform_area");
    if (!m)
        return -1;
    sim_vec3 a = m->position;
    sim_vec3 half = sim_v3(SIM_FX_MM(750), SIM_FX_MM(100), SIM_FX_MM(750));
    sim_platform_def elevator = {0};
    elevator.id = elevator_id;
    elevator.half = half;
    elevator.points[0] = sim_v3_add(a, sim_v3(-SIM_FX_MM(1500), SIM_FX_MM(200), 0));
    elevator.points[1] = sim_v3_add(a, sim_v3(-SIM_FX_MM(1500), SIM_FX_MM(3200), 0));
    elevator.point_count = 2;
    elevator.ticks_per_leg = 192; // 3 m in 3 s at 64 Hz
    elevator.pause_ticks = 64;
    sim_platform_def shuttle = {0};
    shuttle.id = shuttle_id;
    shuttle.half = half;
    shuttle.points[0] = sim_v3_add(a, sim_v3(SIM_FX_MM(1500), SIM_FX_MM(200), -SIM_FX_INT(2)));
    shuttle.points[1] = sim_v3_add(a, sim_v3(SIM_FX_MM(1500), SIM_FX_MM(200), SIM_FX_INT(2)));
    shuttle.point_count = 2;
    shuttle.ticks_per_leg = 128; // 4 m in 2 s at 64 Hz
    shuttle.pause_ticks = 32;
    if (sim_scene_add_platform(scene, &elevator) != 0 || sim_scene_add_platform(scene, &shuttle) != 0)
        return -1;
    return 0;
}
