// keel-arena: the rail shot judged against the shooter's view (lag
// compensation; docs/arena.md, "Lag compensation"). MIT licence, see LICENSE.
//
// keel calls the judge on the shooter's client, against its predicted scene
// when it makes the command, and on the server, against that view rebuilt
// exactly; the outcome travels in the command (judged, rail_hit), so every
// peer and every recording applies the same hit.
#include <keel/sim_angle.h>
#include <keel/sim_fx.h>

#include "arena_internal.h"

sim_vec3 arena_eye(const arena_settings *st, const sim_char_state *c)
{
    sim_fx h = (c->flags & SIM_CHAR_CROUCHED) ? st->eye_height_crouched : st->eye_height;
    return sim_v3(c->position.x, c->position.y + h, c->position.z);
}

bool arena_judge(const sim_scene *scene, uint32_t id, const sim_input *input, void *command, bool view, void *user)
{
    const arena_settings *st = user;
    arena_command *cmd = command;
    const sim_char_state *c = sim_scene_find(scene, id);
    if (!view) {
        cmd->judged = 0;
        cmd->rail_hit = 0;
        const arena_player *p = sim_scene_game_char(scene, id);
        const arena_state *s = sim_scene_game_state(scene);
        // Whether the rail may fire at this tick (conservative: its interval
        // counts down once before the shot, and a respawn comes before it).
        return c && p && s && cmd->fire_rail && !s->ended && p->rail_ticks <= 1 && (!p->dead || p->respawn_ticks <= 1);
    }
    cmd->judged = 1;
    cmd->rail_hit = 0;
    if (!c)
        return false;
    // From the eyes where the view shows the shooter, along the aim of the
    // command; the first surface or living character.
    sim_ray_input ray = {arena_eye(st, c), sim_v3_scale(sim_angle_dir(input->yaw, input->pitch), st->rail_range)};
    sim_ray_result hit;
    uint32_t who = 0;
    if (sim_scene_raycast(scene, &ray, id, &hit, &who) && who)
        cmd->rail_hit = who;
    return false;
}
