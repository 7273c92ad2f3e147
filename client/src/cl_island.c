// keel client: rollback. A misprediction found at the confirmed tick C
// rebuilds the prediction up to P. Re-simulating every character costs
// (P - C) whole scene steps; most characters' predictions were right and a
// full re-simulation would give them the same states again. So the rollback
// re-simulates an island: the characters whose prediction can differ, in a
// scene of their own (`isl`, allocated with the client), and keeps the
// others' predicted states. MIT licence, see LICENSE.
//
// The island starts with the seeds: every character whose state at C
// differs from the one predicted for C, or whose command in some tick of
// [C, P) differs from the one it was predicted with (remote commands come
// from the newest snapshot). Then, tick by tick, a character outside joins
// the island when it could interact with a member during that tick. Every
// coupling of sim_scene_step between characters is contact-like (the moves
// collide with the others' start-of-tick shapes, the separation pushes
// overlapping pairs, piles and leftovers go to free spots): a character's
// step reads another only where their shapes come within a skin of each
// other, except for the free-spot search, which reaches metres away. So:
//
// - Reach: a character's shapes (standing and crouched, both) at the
//   start and the end of its tick, grown on each axis by what it can move or
//   query beyond that box in one tick: the larger of its start and end
//   speeds on that axis plus the largest change of speed a tick can bring
//   there, times dt -- horizontally the strongest acceleration towards the
//   fastest walking, air or swimming speed; vertically that, a jump (off the
//   fastest platform) and a tick of gravity; a flyer (at either end) sets
//   its velocity outright, up to fly_speed -- then a step height up and
//   down, and 0.1 m plus the fastest platform's motion per tick (skins,
//   query tolerances, separation pushes, carrying).
// - A character outside joins when its reach in the prediction (unchanged:
//   neither it nor anyone it met differs, so the prediction of it stays
//   right) meets a member's reach in the prediction (what it saw then) or in
//   the re-simulation (what it would see now). The members' re-simulated
//   reach is known only after the island's step: a character that joins then
//   enters with its predicted state at the tick's start, and the tick is
//   stepped again (cl_stats.island_retries). Joining repeats to closure.
// - A tick whose step placed someone at a free spot or left a ghost (in the
//   prediction or in the island) falls back to the full re-simulation, and so
//   does a rollback whose confirmed characters are not the predicted ones
//   (joins and leaves).
//
// A character outside the island therefore steps exactly as predicted, and
// a member exactly as in a full re-simulation (nothing outside the island
// reaches it), so the result is bit-identical to a full re-simulation:
// cl_config.island_check runs both and compares every tick (the sync test,
// cl_island_check.c, tests/test_island.c).
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"

typedef struct isl_box {
    int64_t lo[3], hi[3];
} isl_box;

struct cl_island {
    sim_scene *scene; // the island's scene (platforms and water as pred's)
    uint8_t *member;  // per character index
    uint32_t *queue;  // members whose reach is still to be compared
    sim_char_state *cur, *buf;
    isl_box *old_box, *new_box;
    uint8_t *has_new;
    // reach constants (Q16.16, int64): speed changes in a tick per axis
    // (walking, swimming, jumping) and for a flyer
    int64_t half_xz, height, dv[3], dv_fly, dt, margin, step;
    bool synced; // the scene holds exactly the members, at their states in cur
};

static sim_scene *scene_like(const cl_client *cl)
{
    sim_scene *s = sim_scene_create(cl->world, &cl->settings, NET_MAX_CHARACTERS);
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < sim_scene_platform_count(cl->pred); i++)
        if (sim_scene_add_platform(s, sim_scene_platform(cl->pred, i)) != 0) {
            sim_scene_destroy(s);
            return NULL;
        }
    for (uint32_t i = 0; i < sim_scene_water_count(cl->pred); i++)
        if (sim_scene_add_water(s, sim_scene_water(cl->pred, i)) != 0) {
            sim_scene_destroy(s);
            return NULL;
        }
    return s;
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// The fastest a platform moves along any axis in one tick, plus a unit for
// the rounding of its path.
static int64_t platform_reach(const sim_scene *s)
{
    int64_t most = 0;
    for (uint32_t i = 0; i < sim_scene_platform_count(s); i++) {
        const sim_platform_def *p = sim_scene_platform(s, i);
        for (uint32_t k = 0; k < p->point_count; k++) {
            sim_vec3 a = p->points[k], b = p->points[(k + 1) % p->point_count];
            int64_t d = max64(abs64((int64_t)b.x - a.x), max64(abs64((int64_t)b.y - a.y), abs64((int64_t)b.z - a.z)));
            most = max64(most, d / p->ticks_per_leg + 1);
        }
    }
    return most;
}

bool cl_island_init(cl_client *cl)
{
    cl_island *is = calloc(1, sizeof *is);
    cl->island = is;
    if (!is)
        return false;
    uint32_t n = NET_MAX_CHARACTERS;
    is->scene = scene_like(cl);
    cl->check = cl->config.island_check ? scene_like(cl) : NULL;
    is->member = calloc(n, 1);
    is->has_new = calloc(n, 1);
    is->queue = calloc(n, sizeof *is->queue);
    is->cur = calloc(n, sizeof *is->cur);
    is->buf = calloc(n, sizeof *is->buf);
    is->old_box = calloc(n, sizeof *is->old_box);
    is->new_box = calloc(n, sizeof *is->new_box);
    const sim_move_settings *s = &cl->settings;
    sim_vec3 a = s->stand_shape.half, b = s->crouch_shape.half;
    is->half_xz = max64(max64(a.x, a.z), max64(b.x, b.z));
    is->height = 2 * max64(a.y, b.y);
    is->dt = sim_move_dt(s);
    int64_t plat = platform_reach(cl->pred);
    int64_t fastest = max64(max64(s->max_speed, s->air_max_speed), s->swim_speed);
    int64_t accel = max64(s->accelerate, s->air_accelerate);
    int64_t walk = ((((accel * fastest) >> 16) + 1) * is->dt >> 16) + 1; // accel x wish speed x dt
    int64_t plat_speed = plat * s->tick_rate;
    is->dv[0] = is->dv[2] = walk;
    is->dv[1] = walk + s->jump_velocity + plat_speed + (((int64_t)s->gravity * is->dt) >> 16) + 1;
    is->dv_fly = s->fly_speed + is->dv[1];
    is->margin = SIM_FX_MM(100) + plat;
    is->step = s->step_height;
    return is->scene && (cl->check || !cl->config.island_check) && is->member && is->has_new && is->queue && is->cur &&
           is->buf && is->old_box && is->new_box;
}

void cl_island_free(cl_client *cl)
{
    cl_island *is = cl->island;
    if (!is)
        return;
    sim_scene_destroy(is->scene);
    sim_scene_destroy(cl->check);
    cl->check = NULL;
    free(is->member);
    free(is->has_new);
    free(is->queue);
    free(is->cur);
    free(is->buf);
    free(is->old_box);
    free(is->new_box);
    free(is);
    cl->island = NULL;
}

// What a character going from state a (before a tick) to state b (after
// it) can touch or query during the tick (see the top of the file).
static isl_box reach(const cl_island *is, const sim_char_state *a, const sim_char_state *b)
{
    isl_box r;
    const sim_fx pa[3] = {a->position.x, a->position.y, a->position.z};
    const sim_fx pb[3] = {b->position.x, b->position.y, b->position.z};
    const sim_fx va[3] = {a->velocity.x, a->velocity.y, a->velocity.z};
    const sim_fx vb[3] = {b->velocity.x, b->velocity.y, b->velocity.z};
    bool fly = a->move_type == SIM_MOVE_FLY || b->move_type == SIM_MOVE_FLY;
    for (int k = 0; k < 3; k++) {
        int64_t speed = max64(abs64(va[k]), abs64(vb[k])) + (fly ? is->dv_fly : is->dv[k]);
        int64_t go = ((speed * is->dt) >> 16) + is->margin + (k == 1 ? is->step : 0);
        int64_t lo = min64(pa[k], pb[k]) - go, hi = max64(pa[k], pb[k]) + go;
        r.lo[k] = k == 1 ? lo : lo - is->half_xz;
        r.hi[k] = k == 1 ? hi + is->height : hi + is->half_xz;
    }
    return r;
}

static bool meet(const isl_box *a, const isl_box *b)
{
    return a->lo[0] <= b->hi[0] && b->lo[0] <= a->hi[0] && a->lo[1] <= b->hi[1] && b->lo[1] <= a->hi[1] &&
           a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
}

// Close the island over one tick: `queue` holds the `q` members whose reach
// is still to be compared with the characters outside; a character that
// meets one joins (its state at the tick's start is the predicted one, os)
// and is compared in turn. Returns how many joined.
static uint32_t close_island(cl_island *is, uint32_t n, const sim_char_state *os, uint32_t q)
{
    uint32_t joined = 0;
    while (q > 0) {
        uint32_t i = is->queue[--q];
        for (uint32_t j = 0; j < n; j++) {
            if (is->member[j])
                continue;
            if (meet(&is->old_box[j], &is->old_box[i]) || (is->has_new[i] && meet(&is->old_box[j], &is->new_box[i]))) {
                is->member[j] = 1;
                is->has_new[j] = 0;
                is->cur[j] = os[j];
                is->queue[q++] = j;
                joined++;
            }
        }
    }
    return joined;
}

// Step the island's scene through tick t from the members' states in cur
// (restored into it unless it holds them already). False when the step
// placed someone at a free spot or left a ghost.
static bool step_island(cl_client *cl, uint32_t t, uint32_t n)
{
    cl_island *is = cl->island;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (is->member[i])
            is->buf[k++] = is->cur[i];
    if (!is->synced && !sim_scene_restore_states(is->scene, t, is->buf, k, NULL))
        return false;
    is->synced = false;
    for (uint32_t i = 0; i < n; i++) {
        if (!is->member[i])
            continue;
        sim_input cmd;
        cl_command_for(cl, t, &is->cur[i], &cmd, NULL);
        sim_scene_set_input(is->scene, is->cur[i].id, &cmd);
    }
    sim_scene_step(is->scene);
    cl->stats.resimulated_character_ticks += k;
    sim_scene_separation sep = sim_scene_last_separation(is->scene);
    return sep.relocated == 0 && sep.unresolved == 0;
}

// The island's tick t, stepped until nobody joins after the step; then its
// states and commands written into pred_ring[t] and cur advanced to t + 1.
static bool island_tick(cl_client *cl, uint32_t t, uint32_t n, const sim_char_state *oe)
{
    cl_island *is = cl->island;
    cl_state_slot *slot = &cl->pred_ring[t % CL_RING];
    const sim_char_state *os = slot->states;
    uint32_t q = 0;
    for (uint32_t i = 0; i < n; i++) {
        is->old_box[i] = reach(is, &os[i], &oe[i]);
        is->has_new[i] = 0;
        if (is->member[i])
            is->queue[q++] = i;
    }
    if (close_island(is, n, os, q) > 0)
        is->synced = false;
    for (;;) {
        if (!step_island(cl, t, n))
            return false;
        uint32_t count;
        const sim_char_state *ne = sim_scene_characters(is->scene, &count);
        q = 0;
        for (uint32_t i = 0, k = 0; i < n; i++) {
            if (!is->member[i])
                continue;
            is->new_box[i] = reach(is, &is->cur[i], &ne[k++]);
            is->has_new[i] = 1;
            is->queue[q++] = i;
        }
        if (close_island(is, n, os, q) == 0)
            break;
        cl->stats.island_retries++;
    }
    uint32_t count;
    const sim_char_state *ne = sim_scene_characters(is->scene, &count);
    for (uint32_t i = 0, k = 0; i < n; i++) {
        if (!is->member[i])
            continue;
        slot->states[i] = is->cur[i];
        cl_command_for(cl, t, &is->cur[i], &slot->inputs[i].command, NULL);
        is->cur[i] = ne[k++];
    }
    slot->placed = false;
    is->synced = true; // the step's result is cur
    return true;
}

// The seeds: a state at C or a command in [C, P) that differs from the
// prediction. The commands are compared as they follow from the predicted
// states (a character without a command keeps looking where it looks): for
// a character outside the island those states stay right.
static void seed(cl_client *cl, uint32_t C, uint32_t P, uint32_t n, const sim_char_state *cs)
{
    cl_island *is = cl->island;
    const cl_state_slot *first = &cl->pred_ring[C % CL_RING];
    for (uint32_t i = 0; i < n; i++)
        is->member[i] = cl_first_field(&cs[i], &first->states[i]) != NULL;
    for (uint32_t t = C; t < P; t++) {
        const cl_state_slot *s = &cl->pred_ring[t % CL_RING];
        for (uint32_t i = 0; i < n; i++) {
            if (is->member[i])
                continue;
            sim_input cmd;
            cl_command_for(cl, t, &s->states[i], &cmd, NULL);
            is->member[i] = !cl_same_command(&cmd, &s->inputs[i].command);
        }
    }
}

// Whether the prediction of [C, P) can be rebuilt on an island: every tick
// predicted with the confirmed characters and nobody placed at a free spot.
static bool island_possible(const cl_client *cl, uint32_t C, uint32_t P, uint32_t n, const sim_char_state *cs)
{
    uint32_t pn;
    sim_scene_characters(cl->pred, &pn);
    // With a game every rollback is a full one: a rule may reach any
    // character (a shot, a teleport) and the game's state is the scene's.
    if (cl->config.full_rollback || cl->game || P <= C || P - C > CL_RING || pn != n)
        return false;
    for (uint32_t t = C; t < P; t++) {
        const cl_state_slot *s = &cl->pred_ring[t % CL_RING];
        if (s->tick != t || s->count != n || s->input_count != n || s->placed)
            return false;
        for (uint32_t i = 0; i < n; i++)
            if (s->states[i].id != cs[i].id)
                return false;
    }
    return true;
}

static bool island_rollback(cl_client *cl, uint32_t P)
{
    cl_island *is = cl->island;
    uint32_t C = sim_scene_tick(cl->conf), n;
    const sim_char_state *cs = sim_scene_characters(cl->conf, &n);
    if (!island_possible(cl, C, P, n, cs))
        return false;
    seed(cl, C, P, n, cs);
    is->synced = false;
    memcpy(is->cur, cs, (size_t)n * sizeof *cs);
    const sim_char_state *pe = sim_scene_characters(cl->pred, &n);
    for (uint32_t t = C; t < P; t++) {
        const sim_char_state *oe = t + 1u < P ? cl->pred_ring[(t + 1u) % CL_RING].states : pe;
        if (!island_tick(cl, t, n, oe))
            return false;
    }
    uint32_t members = 0;
    for (uint32_t i = 0; i < n; i++) {
        members += is->member[i];
        is->buf[i] = is->member[i] ? is->cur[i] : pe[i];
    }
    if (!sim_scene_restore_states(cl->pred, P, is->buf, n, NULL))
        return false;
    cl->stats.resimulated_characters += members;
    cl->stats.resimulated_ticks += P - C;
    cl->stats.predicted_ticks += P - C; // as a full re-simulation counts them
    cl->stats.island_rollbacks++;
    return true;
}

static void full_rollback(cl_client *cl, uint32_t to)
{
    uint32_t n;
    sim_scene_characters(cl->conf, &n);
    cl_copy_scene(cl, cl->pred, cl->conf);
    cl->stats.resimulated_characters += n;
    while (sim_scene_tick(cl->pred) < to) {
        cl_predict_one(cl);
        cl->stats.resimulated_ticks++;
        cl->stats.resimulated_character_ticks += n;
    }
}

void cl_rollback(cl_client *cl, uint32_t to)
{
    uint64_t start = cl->config.clock_ns ? cl->config.clock_ns() : 0;
    cl->stats.rollbacks++;
    bool island = island_rollback(cl, to);
    if (!island) {
        if (!cl->config.full_rollback && to > sim_scene_tick(cl->conf))
            cl->stats.island_fallbacks++;
        full_rollback(cl, to);
    }
    if (cl->config.clock_ns)
        cl->stats.rollback_ns += cl->config.clock_ns() - start;
    if (island && cl->config.island_check)
        cl_island_check(cl, to);
}
