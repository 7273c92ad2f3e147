// keel example: the loop a game writes around keel::sim. MIT licence, see LICENSE.
//
// Load a level, build its world, create a scene, add characters, then every
// tick: give each character its command, step, read the states. Two players
// on the built-in level (docs/levels.md): one walks up the 20-degree ramp and
// on over the 100 mm stairs, the other runs, jumps and veers right. The output
// is the same on every machine (fixed point throughout).
//
// Build against an installed keel (cmake --install <build> --prefix <prefix>):
//   CMake:      cmake -S examples -B build-ex -DCMAKE_PREFIX_PATH=<prefix>
//               cmake --build build-ex && build-ex/walk
//   pkg-config: export PKG_CONFIG_PATH=<prefix>/lib/pkgconfig
//               cc -std=c11 examples/walk.c $(pkg-config --cflags --libs keel-sim) -o walk
#include <inttypes.h>
#include <stdio.h>

#include <keel/sim_scene.h>
#include <keel/sim_version.h>

enum { TICKS = 192, PRINT_EVERY = 64, RUNNER = 1, CLIMBER = 2 };

// Fixed point to metres for printing only (never for simulating).
static double metres(sim_fx v) { return (double)v / 65536.0; }

// What a player does on a tick: in a game this comes from the keyboard or
// the network; here it is scripted.
static sim_input command_for(uint32_t id, uint32_t tick)
{
    sim_input in = {.tick = tick};
    if (id == CLIMBER) {
        in.forward = 127;        // full speed ahead...
        in.yaw = SIM_ANGLE_HALF; // ...facing +z, up the ramp
    } else {
        in.forward = 127;
        in.right = tick < 96 ? 0 : 64; // veer right after 1.5 s
        if (tick == 32)
            in.buttons = SIM_BUTTON_JUMP;
    }
    return in;
}

static int spawn(sim_scene *scene, const sim_level *level, uint32_t id, const char *marker)
{
    const sim_marker *m = sim_level_find_marker(level, marker);
    if (!m)
        return -1;
    sim_char_state c = sim_char_spawn(id, m->position, 0);
    return sim_scene_add_character(scene, &c);
}

int main(void)
{
    // The headers this program was compiled with against the library it runs with.
    uint32_t lib = sim_version();
    printf("keel %s (headers %s)\n", sim_version_string(), KEEL_VERSION_STRING);
    if (lib >> 8 != KEEL_VERSION >> 8) { // major and minor must match before 1.0
        fprintf(stderr, "walk: library %s does not match headers %s\n", sim_version_string(), KEEL_VERSION_STRING);
        return 1;
    }

    // A level is plain data; the world is its collision geometry (immutable,
    // can be shared by any number of scenes).
    sim_level level;
    if (sim_level_builtin(&level) != 0)
        return 1;
    sim_world_def world_def = sim_world_default_def();
    sim_error err;
    sim_world *world = sim_world_create(&level, &world_def, &err);
    if (!world) {
        fprintf(stderr, "walk: %s\n", err.message);
        sim_level_free(&level);
        return 1;
    }

    // The scene holds every character; settings are Quake-like defaults at 64 Hz.
    sim_move_settings settings = sim_move_default_settings();
    sim_scene *scene = sim_scene_create(world, &settings, 8);
    int status = 1;
    if (!scene || spawn(scene, &level, RUNNER, "spawn") != 0 || spawn(scene, &level, CLIMBER, "ramp_20_start") != 0)
        goto done;

    // The game loop: commands in, one step, states out.
    for (uint32_t i = 0; i < TICKS; i++) {
        uint32_t tick = sim_scene_tick(scene);
        for (uint32_t id = RUNNER; id <= CLIMBER; id++) {
            sim_input in = command_for(id, tick);
            sim_scene_set_input(scene, id, &in);
        }
        sim_scene_step(scene);

        if (sim_scene_tick(scene) % PRINT_EVERY == 0) {
            uint32_t count;
            const sim_char_state *chars = sim_scene_characters(scene, &count);
            for (uint32_t k = 0; k < count; k++) {
                const sim_char_state *c = &chars[k];
                printf("tick %3" PRIu32 "  id %" PRIu32 "  %-5s  pos (%7.3f, %6.3f, %7.3f)%s\n", sim_scene_tick(scene),
                       c->id, sim_move_type_name(c->move_type), metres(c->position.x), metres(c->position.y),
                       metres(c->position.z), (c->flags & SIM_CHAR_GROUNDED) ? "  grounded" : "");
            }
        }
    }
    // The hash of the whole state: equal hashes on server and client (or two
    // machines) mean equal states, bit for bit.
    printf("scene hash %016" PRIx64 "\n", sim_scene_hash(scene));
    status = 0;

done:
    sim_scene_destroy(scene);
    sim_world_destroy(world);
    sim_level_free(&level);
    return status;
}
