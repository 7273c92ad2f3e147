// keel: a character under a game-defined move type: the same context a
// built-in move type gets (the view as its collider, the settings, the
// command), the game's tick, and the same clamps and checks after it.
// MIT licence, see LICENSE.
#include <string.h>

#include "game_internal.h"
#include "move_internal.h"
#include "scene_internal.h"

struct sim_game_move {
    sim_move_ctx m;
    const void *command;
    void *state; // the character's game state
};

sim_char_state *sim_game_move_char(sim_game_move *g) { return g->m.c; }
const sim_input *sim_game_move_input(const sim_game_move *g) { return g->m.in; }
const void *sim_game_move_command(const sim_game_move *g) { return g->command; }
const sim_move_settings *sim_game_move_settings(const sim_game_move *g) { return g->m.s; }
sim_fx sim_game_move_dt(const sim_game_move *g) { return g->m.dt; }
void *sim_game_move_state(sim_game_move *g) { return g->state; }

void sim_game_move_slide(sim_game_move *g, sim_vec3 displacement)
{
    sim_vec3 center = mover_center(&g->m);
    slide_result r;
    mover_slide(&g->m, mover_shape(&g->m), &center, &g->m.c->velocity, displacement, SLIDE_FREE, &r);
    mover_set_center(&g->m, center);
    if (r.touched_ceiling)
        g->m.c->flags |= SIM_CHAR_CEILING;
}

void sim_game_move_ground(sim_game_move *g, bool snap) { mover_ground_probe(&g->m, snap); }

static sim_fx clamp_axis(sim_fx v, sim_fx lim) { return v < -lim ? -lim : (v > lim ? lim : v); }

void scene_game_move(sim_scene *sc, uint32_t i, const sim_collider *col, const sim_input *in)
{
    const sim_game_def *d = &sc->game->def;
    size_t cmd = sc->game->part[SIM_GAME_PART_COMMAND].size;
    sim_char_state *c = &sc->chars[i];
    sim_game_move g;
    memset(&g, 0, sizeof g);
    g.m.col = col;
    g.m.s = &sc->settings;
    g.m.c = c;
    g.m.in = in;
    g.m.dt = sc->dt;
    g.command = cmd && sc->has_input[i] ? sc->game_cmd + (size_t)i * cmd : NULL;
    g.state = sc->game_char + (size_t)i * sc->game->part[SIM_GAME_PART_CHARACTER].size;
    c->yaw = in->yaw;
    c->pitch = in->pitch;
    sim_angle_forward_right(in->yaw, &g.m.forward, &g.m.right);
    c->flags &= ~(uint32_t)(SIM_CHAR_CEILING | SIM_CHAR_STEPPED | SIM_CHAR_WALL);
    move_clamp_velocity(&g.m);
    mover_depenetrate(&g.m);
    int32_t next = d->move_types[c->move_type - SIM_GAME_MOVE_FIRST].tick(&g);
    // Whatever the game's tick wrote, the state stays valid: velocity and
    // position clamped as the built-in step clamps them, an unknown next
    // move type or an invalid result turned into the air move.
    move_clamp_velocity(&g.m);
    sc->game_char_faults[i] += game_clamp(&sc->game->part[SIM_GAME_PART_CHARACTER], g.state);
    const sim_fx lim = SIM_MOVE_POSITION_LIMIT;
    c->position =
        sim_v3(clamp_axis(c->position.x, lim), clamp_axis(c->position.y, lim), clamp_axis(c->position.z, lim));
    sim_char_state probe = *c;
    probe.move_type = next;
    if (!scene_char_check(sc, &probe, NULL)) {
        sim_char_state air = *c;
        air.move_type = SIM_MOVE_AIR;
        if (!sim_char_state_check(&air, NULL)) {
            // Flags, ground or normals left invalid by the game: reset to
            // the air move's plain state at the clamped position.
            air.flags &= SIM_CHAR_KNOWN_FLAGS;
            air.ground = SIM_GROUND_NONE;
            air.ground_normal = sim_v3_zero();
            air.ground_object = 0;
        }
        *c = air;
        sc->game_char_faults[i]++; // folded into the scene's count after the moves
        return;
    }
    c->move_type = next;
}
