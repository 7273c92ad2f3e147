// keel: the platform pair of the built-in level's platform area, shared by
// keel-sim --platforms, keel-server --platforms and the tests. MIT licence.
#include <keel/sim_scene.h>

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
