// keel's example game, "tag" (tag.h). MIT licence, see LICENSE.
//
// Every rule follows docs/game.md's determinism rules: fixed point only, no
// clocks, no globals that change, characters in index (id) order.
#include <stddef.h>

#include <keel/sim_angle.h>
#include <keel/sim_fx.h>

#include "tag.h"

// The health a hit takes. A variant of the game built with another
// TAG_DAMAGE differs in this one rule and keeps its identity (the settings
// bytes below still say 25): tests diff two such builds.
#ifndef TAG_DAMAGE
#define TAG_DAMAGE 25
#endif
// The game's version (tests: a build of another version is refused by name).
#ifndef TAG_VERSION
#define TAG_VERSION 1
#endif
// TAG_LEAK builds a variant that breaks a determinism rule on purpose: its
// hit count comes from a global that every run of the rule changes, so a
// tick simulated again (a rollback) reaches another state. The sync test
// must catch it, naming game.hits.

static const sim_game_field command_fields[] = {
    {"fire", SIM_GAME_BOOL, offsetof(tag_command, fire), 1, 1, 0, 1, 0, 0},
    {"dash", SIM_GAME_BOOL, offsetof(tag_command, dash), 1, 1, 0, 1, 0, 0},
    {"weapon", SIM_GAME_UINT, offsetof(tag_command, weapon), 1, 2, 0, 2, 0, 0},
    {"aim", SIM_GAME_ANGLE, offsetof(tag_command, aim), 2, 12, 0, 0, 0, 0},
    {"throw_speed", SIM_GAME_FX, offsetof(tag_command, throw_speed), 4, 21, 0, SIM_FX_INT(20), 0, 0},
};

static const sim_game_field player_fields[] = {
    {"health", SIM_GAME_INT, offsetof(tag_player, health), 2, 8, 0, 100, 0, 0},
    {"score", SIM_GAME_UINT, offsetof(tag_player, score), 2, 16, 0, 0, 0, 0},
    {"dash_ticks", SIM_GAME_UINT, offsetof(tag_player, dash_ticks), 1, 5, 0, 16, 0, 0},
    {"cooldown", SIM_GAME_UINT, offsetof(tag_player, cooldown), 1, 5, 0, 31, 0, 0},
    {"respawn_at", SIM_GAME_UINT, offsetof(tag_player, respawn_at), 4, 32, 0, 0, 0, 0},
    {"home.x", SIM_GAME_FX, offsetof(tag_player, home.x), 4, 32, 0, 0, 0, 0},
    {"home.y", SIM_GAME_FX, offsetof(tag_player, home.y), 4, 32, 0, 0, 0, 0},
    {"home.z", SIM_GAME_FX, offsetof(tag_player, home.z), 4, 32, 0, 0, 0, 0},
};

#define E(nm) (uint32_t)(offsetof(tag_state, entity[0]) + offsetof(tag_entity, nm))
static const sim_game_field state_fields[] = {
    {"clock", SIM_GAME_UINT, offsetof(tag_state, clock), 4, 32, 0, 0, 0, 0},
    {"hits", SIM_GAME_UINT, offsetof(tag_state, hits), 4, 32, 0, 0, 0, 0},
    {"last_hit", SIM_GAME_UINT, offsetof(tag_state, last_hit), 4, 32, 0, 0, 0, 0},
    {"entity.kind", SIM_GAME_UINT, E(kind), 1, 1, 0, 1, TAG_ENTITIES, sizeof(tag_entity)},
    {"entity.ttl", SIM_GAME_UINT, E(ttl), 2, 16, 0, 0, TAG_ENTITIES, sizeof(tag_entity)},
    {"entity.owner", SIM_GAME_UINT, E(owner), 4, 32, 0, 0, TAG_ENTITIES, sizeof(tag_entity)},
    {"entity.at.x", SIM_GAME_FX, E(at.x), 4, 32, 0, 0, TAG_ENTITIES, sizeof(tag_entity)},
    {"entity.at.y", SIM_GAME_FX, E(at.y), 4, 32, 0, 0, TAG_ENTITIES, sizeof(tag_entity)},
    {"entity.at.z", SIM_GAME_FX, E(at.z), 4, 32, 0, 0, TAG_ENTITIES, sizeof(tag_entity)},
};

static const tag_player player_initial = {100, 0, 0, 0, 0, {0, 0, 0}};

// Per character, before the movement (in parallel): its own state only.
static void before_char(sim_game_tick *t, uint32_t i)
{
    tag_player *p = sim_game_char(t, i);
    const sim_char_state *c = sim_game_character(t, i);
    const tag_command *cmd = sim_game_command(t, i);
    if (p->cooldown)
        p->cooldown--;
    if (p->home.x == 0 && p->home.y == 0 && p->home.z == 0)
        p->home = c->position; // first tick: remember the start
    if (cmd && cmd->dash && p->dash_ticks == 0 && c->move_type == SIM_MOVE_WALK && !p->respawn_at) {
        p->dash_ticks = 16;
        sim_game_set_move_type(t, i, TAG_MOVE_DASH);
    }
}

static void mark(tag_state *s, uint32_t owner, sim_vec3 at)
{
    for (uint32_t k = 0; k < TAG_ENTITIES; k++)
        if (s->entity[k].kind == 0) {
            s->entity[k] = (tag_entity){1, 32, owner, at};
            return;
        }
}

static void shoot(sim_game_tick *t, tag_state *s, uint32_t i)
{
    const sim_char_state *c = sim_game_character(t, i);
    tag_player *p = sim_game_char(t, i);
    const tag_command *cmd = sim_game_command(t, i);
    if (!cmd || !cmd->fire || p->cooldown || p->respawn_at)
        return;
    p->cooldown = 8;
    sim_vec3 f, r;
    sim_angle_forward_right((sim_angle)(c->yaw + cmd->aim), &f, &r);
    sim_ray_input ray = {sim_v3_add(c->position, sim_v3(0, SIM_FX_MM(1500), 0)), sim_v3_scale(f, SIM_FX_INT(20))};
    sim_ray_result hit;
    uint32_t who = 0;
    if (!sim_game_raycast(t, &ray, c->id, &hit, &who) || who == 0)
        return;
    int64_t j = sim_game_find(t, who);
    tag_player *q = sim_game_char(t, (uint32_t)j);
    s->hits++;
    s->last_hit = who;
    mark(s, c->id, hit.point);
    q->health = (int16_t)(q->health > TAG_DAMAGE ? q->health - TAG_DAMAGE : 0);
    if (q->health == 0) {
        q->respawn_at = s->clock + 128;
        p->score++;
        sim_game_set_solid(t, (uint32_t)j, false);
    }
}

// Once, after the movement: shots, marks, respawns, the clock.
static void after(sim_game_tick *t)
{
    tag_state *s = sim_game_state(t);
    s->clock++;
#ifdef TAG_LEAK
    static uint32_t leak; // what a rule must never do: state outside the game's
    s->hits = leak++;
#endif
    for (uint32_t i = 0; i < sim_game_char_count(t); i++)
        shoot(t, s, i);
    for (uint32_t k = 0; k < TAG_ENTITIES; k++)
        if (s->entity[k].kind && --s->entity[k].ttl == 0)
            s->entity[k] = (tag_entity){0, 0, 0, {0, 0, 0}};
    for (uint32_t i = 0; i < sim_game_char_count(t); i++) {
        tag_player *p = sim_game_char(t, i);
        if (p->respawn_at && p->respawn_at <= s->clock) {
            p->respawn_at = 0;
            p->health = 100;
            sim_game_set_solid(t, i, true);
            sim_game_teleport(t, i, p->home, sim_v3_zero());
        }
    }
}

// The dash: along the view at 12 m/s for dash_ticks ticks, then the air
// move (which lands on the ground as usual).
static int32_t dash_tick(sim_game_move *m)
{
    sim_char_state *c = sim_game_move_char(m);
    tag_player *p = sim_game_move_state(m);
    if (p->dash_ticks == 0)
        return SIM_MOVE_AIR;
    p->dash_ticks--;
    sim_vec3 f, r;
    sim_angle_forward_right(c->yaw, &f, &r);
    c->velocity = sim_v3_scale(f, SIM_FX_INT(12));
    sim_game_move_slide(m, sim_v3_scale(c->velocity, sim_game_move_dt(m)));
    sim_game_move_ground(m, false);
    return p->dash_ticks ? TAG_MOVE_DASH : SIM_MOVE_AIR;
}

static const sim_game_move_type move_types[] = {{"dash", dash_tick}};
static const uint8_t settings[4] = {25, 8, 128, 16}; // damage, cooldown, respawn ticks, dash ticks

static const sim_game_def definition = {
    .abi_version = SIM_GAME_ABI_VERSION,
    .name = "tag",
    .version = TAG_VERSION,
    .command = {sizeof(tag_command), command_fields, 5},
    .character = {sizeof(tag_player), player_fields, 8},
    .state = {sizeof(tag_state), state_fields, 9},
    .character_initial = &player_initial,
    .settings = settings,
    .settings_size = sizeof settings,
    .rules = {.before_move_char = before_char, .after_move = after},
    .move_types = move_types,
    .move_type_count = 1,
};

const sim_game_def *tag_game(void) { return &definition; }

sim_game_def tag_game_def(void) { return definition; }
