// keel: a game's judge of a command against its sender's view (lag
// compensation, docs/game.md "Judging a shot"), and the view-lag field the
// client fills and the server reads. MIT licence, see LICENSE.
#include <string.h>

#include "game_internal.h"

bool sim_game_judges(const sim_game *g) { return g && g->view_lag >= 0; }

uint32_t sim_game_view_lag(const sim_game *g, const void *command)
{
    if (!sim_game_judges(g))
        return 0;
    return (uint32_t)game_field_get(&g->part[SIM_GAME_PART_COMMAND].fields[g->view_lag], command, 0);
}

void sim_game_set_view_lag(const sim_game *g, void *command, uint32_t lag)
{
    if (!sim_game_judges(g))
        return;
    const game_field *f = &g->part[SIM_GAME_PART_COMMAND].fields[g->view_lag];
    game_field_set(f, command, 0, lag > f->max ? f->max : (int64_t)lag);
}

bool sim_game_judge(const sim_game *g, const sim_scene *scene, uint32_t id, const sim_input *input, void *command,
                    bool view)
{
    if (!sim_game_judges(g))
        return false;
    return g->def.judge(scene, id, input, command, view, g->def.user);
}

bool sim_game_judge_packed(const sim_game *g, const sim_scene *scene, uint32_t id, const sim_input *input,
                           uint8_t *payload, size_t size, bool view, uint32_t lag)
{
    uint8_t cmd[SIM_GAME_COMMAND_MAX_BYTES];
    if (!sim_game_judges(g) || !sim_game_unpack_command(g, payload, size, cmd, NULL))
        return false;
    bool needs = sim_game_judge(g, scene, id, input, cmd, view);
    sim_game_set_view_lag(g, cmd, view || needs ? lag : 0);
    // A judge that left a field out of range is caught by the packer: the
    // payload then stays as it came.
    uint8_t out[SIM_GAME_COMMAND_MAX_BYTES];
    size_t n = sim_game_pack_command(g, cmd, out, sizeof out, NULL);
    if (n == size)
        memcpy(payload, out, n);
    return needs;
}
