// keel client: the sync test of island rollback (cl_config.island_check):
// after a rollback done on an island (cl_island.c), the full re-simulation
// from the confirmed tick C, in a scene of its own (cl->check), compared
// with what the island left in pred_ring and the predicted scene at every
// tick of [C, P], states and commands. Differences are counted in
// cl_stats.island_check_differences: a bug in the island's reach if ever
// nonzero. It runs outside the rollback's timing. MIT licence, see LICENSE.
#include "cl_internal.h"

static uint64_t differences(const sim_char_state *a, uint32_t an, const sim_char_state *b, uint32_t bn)
{
    if (an != bn)
        return an > bn ? an : bn;
    uint64_t d = 0;
    for (uint32_t i = 0; i < an; i++)
        d += a[i].id != b[i].id || cl_first_field(&a[i], &b[i]) != NULL;
    return d;
}

// The sync test: the full re-simulation from C, compared with what the
// island left in pred_ring and pred at every tick of [C, P].
void cl_island_check(cl_client *cl, uint32_t P)
{
    sim_scene *f = cl->check;
    uint32_t C = sim_scene_tick(cl->conf), n;
    const sim_char_state *cs = sim_scene_characters(cl->conf, &n);
    sim_scene_restore_states(f, C, cs, n, NULL);
    uint64_t d = 0;
    for (uint32_t t = C; t < P; t++) {
        const cl_state_slot *s = &cl->pred_ring[t % CL_RING];
        const sim_char_state *chars = sim_scene_characters(f, &n);
        d += differences(chars, n, s->states, s->tick == t ? s->count : 0);
        for (uint32_t i = 0; i < n; i++) {
            sim_input cmd;
            cl_command_for(cl, t, &chars[i], &cmd, NULL);
            d += i >= s->input_count || !cl_same_command(&cmd, &s->inputs[i].command);
            sim_scene_set_input(f, chars[i].id, &cmd);
        }
        sim_scene_step(f);
    }
    uint32_t pn;
    const sim_char_state *pe = sim_scene_characters(cl->pred, &pn);
    const sim_char_state *fe = sim_scene_characters(f, &n);
    d += differences(fe, n, pe, pn);
    cl->stats.island_checks++;
    cl->stats.island_check_differences += d;
}
