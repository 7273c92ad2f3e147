// keel-arena: the level's entities into the game's tables, and the rules of
// a tick (docs/arena.md has them in order). MIT licence, see LICENSE.
//
// docs/game.md's determinism rules hold throughout: Q16.16 and integers
// only, no clocks, no state outside arena_state and arena_player,
// characters in index (id) order and every table in its own order.
#include <stddef.h>
#include <string.h>

#include <keel/sim_angle.h>
#include <keel/sim_fx.h>

#include "arena_internal.h"

#define TELEPORT_SPEED SIM_FX_INT(10) // m/s along the destination's angle
#define EXPLOSION_BACKOFF SIM_FX_MM(20)

static const arena_settings *cfg(const sim_game_tick *t) { return sim_game_user(t); }

// ---- characters -----------------------------------------------------------------

static sim_aabb char_bounds(const sim_game_tick *t, const sim_char_state *c)
{
    sim_shape sh = sim_char_shape(sim_game_settings(t), c);
    return sim_shape_bounds(sh, sim_v3(c->position.x, c->position.y + sh.half.y, c->position.z));
}

static sim_vec3 char_center(const sim_game_tick *t, const sim_char_state *c)
{
    sim_shape sh = sim_char_shape(sim_game_settings(t), c);
    return sim_v3(c->position.x, c->position.y + sh.half.y, c->position.z);
}

static sim_vec3 eye(const sim_game_tick *t, const sim_char_state *c) { return arena_eye(cfg(t), c); }

static void launch(sim_game_tick *t, uint32_t i, sim_vec3 velocity)
{
    sim_game_set_velocity(t, i, arena_capped(velocity));
    if (velocity.y > 0 && sim_game_character(t, i)->move_type == SIM_MOVE_WALK)
        sim_game_set_move_type(t, i, SIM_MOVE_AIR);
}

static uint16_t count_down(uint16_t v) { return v ? (uint16_t)(v - 1) : 0; }

// Per character, before the movement (in parallel): its timers, then the
// jump pads and teleporters its box touches.
void arena_before_char(sim_game_tick *t, uint32_t i)
{
    arena_player *p = sim_game_char(t, i);
    const arena_state *s = sim_game_state_read(t);
    const sim_char_state *c = sim_game_character(t, i);
    p->rail_ticks = count_down(p->rail_ticks);
    p->rocket_ticks = count_down(p->rocket_ticks);
    p->protect_ticks = count_down(p->protect_ticks);
    if (p->dead || !p->spawned)
        return;
    sim_aabb b = char_bounds(t, c);
    for (uint32_t k = 0; k < s->pad_count && k < ARENA_PADS; k++)
        if (sim_aabb_overlaps(b, s->pad[k].box)) {
            launch(t, i, s->pad[k].velocity);
            break;
        }
    for (uint32_t k = 0; k < s->teleport_count && k < ARENA_TELEPORTS; k++)
        if (sim_aabb_overlaps(b, s->teleport[k].box)) {
            sim_vec3 f;
            sim_angle_forward_right(s->teleport[k].yaw, &f, NULL);
            sim_game_teleport(t, i, s->teleport[k].feet, sim_v3_scale(f, TELEPORT_SPEED));
            break;
        }
}

// ---- damage, death and respawn ------------------------------------------------------

static void feed(arena_state *s, uint32_t killer, uint32_t victim, uint8_t weapon)
{
    s->feed[s->kills % ARENA_FEED] = (arena_kill){s->clock, killer, victim, weapon};
    s->kills++;
}

static int16_t add_frags(int16_t f, int d)
{
    int v = f + d;
    return (int16_t)(v > 1000 ? 1000 : (v < -1000 ? -1000 : v));
}

static void kill(sim_game_tick *t, arena_state *s, uint32_t v, uint32_t killer, uint8_t weapon)
{
    arena_player *p = sim_game_char(t, v);
    uint32_t victim = sim_game_character(t, v)->id;
    p->health = 0;
    p->dead = 1;
    p->respawn_ticks = (uint16_t)cfg(t)->respawn_ticks;
    p->deaths = (uint16_t)(p->deaths < 65535 ? p->deaths + 1 : 65535);
    sim_game_set_velocity(t, v, sim_v3_zero());
    sim_game_set_solid(t, v, false);
    int64_t k = killer && killer != victim ? sim_game_find(t, killer) : -1;
    if (killer == 0 || killer == victim) {
        p->frags = add_frags(p->frags, -1);
        p->suicides = (uint16_t)(p->suicides < 65535 ? p->suicides + 1 : 65535);
    } else if (k >= 0) {
        arena_player *q = sim_game_char(t, (uint32_t)k);
        q->frags = add_frags(q->frags, 1);
    }
    feed(s, killer, victim, weapon);
}

// `amount` of damage from `attacker` (an id; 0: the world) to character v.
static void damage(sim_game_tick *t, arena_state *s, uint32_t v, uint32_t attacker, int32_t amount, uint8_t weapon)
{
    arena_player *p = sim_game_char(t, v);
    uint32_t victim = sim_game_character(t, v)->id;
    if (p->dead || s->ended || p->protect_ticks || amount <= 0)
        return;
    int32_t absorbed = amount * cfg(t)->armour_absorb_pct / 100;
    if (absorbed > p->armour)
        absorbed = p->armour;
    p->armour = (int16_t)(p->armour - absorbed);
    int32_t health = p->health - (amount - absorbed);
    if (attacker != victim) {
        p->last_attacker = attacker;
        int64_t a = sim_game_find(t, attacker);
        if (a >= 0) {
            arena_player *q = sim_game_char(t, (uint32_t)a);
            q->hits = (uint16_t)(q->hits + 1u);
        }
    }
    p->health = (int16_t)(health > 0 ? health : 0);
    if (health <= 0)
        kill(t, s, v, attacker, weapon);
}

// The spawn point farthest from the nearest other living character (ties:
// the first); with nobody else alive, one chosen by the clock and the id.
static void respawn(sim_game_tick *t, arena_state *s, uint32_t i)
{
    arena_player *p = sim_game_char(t, i);
    const sim_char_state *c = sim_game_character(t, i);
    sim_vec3 feet = p->home;
    uint32_t n = s->spawn_count < ARENA_SPAWNS ? s->spawn_count : ARENA_SPAWNS;
    if (n) {
        uint32_t best = (s->clock + c->id) % n;
        int64_t best_d = -1;
        for (uint32_t k = 0; k < n; k++) {
            int64_t nearest = INT64_MAX;
            for (uint32_t j = 0; j < sim_game_char_count(t); j++) {
                const arena_player *q = sim_game_char(t, j);
                if (j == i || q->dead)
                    continue;
                sim_vec3 d = sim_v3_sub(sim_game_character(t, j)->position, s->spawn[k].feet);
                int64_t d2 = (int64_t)(((uint64_t)sim_v3_len_sq64(d)) >> 16);
                nearest = d2 < nearest ? d2 : nearest;
            }
            if (nearest != INT64_MAX && nearest > best_d) {
                best_d = nearest;
                best = k;
            }
        }
        feet = s->spawn[best].feet;
    }
    const arena_settings *st = cfg(t);
    p->dead = 0;
    p->health = (int16_t)st->health_start;
    p->armour = 0;
    p->protect_ticks = (uint16_t)st->protect_ticks;
    p->last_attacker = 0;
    sim_game_set_solid(t, i, true);
    sim_game_teleport(t, i, feet, sim_v3_zero());
}

// ---- weapons ------------------------------------------------------------------------

// The rail: judged against the shooter's view when the command says so
// (arena_judge.c: `rail_hit` is what it hit there), else a ray against the
// characters as they are now.
static void rail(sim_game_tick *t, arena_state *s, uint32_t i, const arena_command *cmd)
{
    const sim_char_state *c = sim_game_character(t, i);
    if (cmd->judged) {
        int64_t j = cmd->rail_hit && cmd->rail_hit != c->id ? sim_game_find(t, cmd->rail_hit) : -1;
        if (j >= 0)
            damage(t, s, (uint32_t)j, c->id, cfg(t)->rail_damage, ARENA_WEAPON_RAIL);
        return;
    }
    sim_ray_input ray = {eye(t, c), sim_v3_scale(sim_angle_dir(c->yaw, c->pitch), cfg(t)->rail_range)};
    sim_ray_result hit;
    uint32_t who = 0;
    if (sim_game_raycast(t, &ray, c->id, &hit, &who) && who) {
        int64_t j = sim_game_find(t, who);
        if (j >= 0)
            damage(t, s, (uint32_t)j, c->id, cfg(t)->rail_damage, ARENA_WEAPON_RAIL);
    }
}

static void push(sim_game_tick *t, uint32_t j, sim_vec3 dir, int32_t points)
{
    const sim_char_state *c = sim_game_character(t, j);
    sim_fx speed = (sim_fx)((int64_t)cfg(t)->knockback * points);
    launch(t, j, sim_v3_add(c->velocity, sim_v3_scale(dir, speed)));
}

// A rocket explodes at `at`: `direct` (an id, 0: none) takes the direct
// hit's damage and a push along `heading`; every other living character
// whose centre is within the radius and seen from `at` takes splash damage
// falling linearly to 0 at the radius, and a push away from `at` (the
// shooter a share of the damage, all of the push: a rocket jump).
static void explode(sim_game_tick *t, arena_state *s, sim_vec3 at, uint32_t owner, uint32_t direct, sim_vec3 heading)
{
    const arena_settings *st = cfg(t);
    if (direct) {
        int64_t j = sim_game_find(t, direct);
        if (j >= 0) {
            damage(t, s, (uint32_t)j, owner, st->rocket_direct, ARENA_WEAPON_ROCKET);
            if (!((const arena_player *)sim_game_char(t, (uint32_t)j))->dead)
                push(t, (uint32_t)j, sim_v3_normalize(heading), st->rocket_direct);
        }
    }
    for (uint32_t j = 0; j < sim_game_char_count(t); j++) {
        const sim_char_state *c = sim_game_character(t, j);
        const arena_player *p = sim_game_char(t, j);
        if (c->id == direct || p->dead || !p->spawned)
            continue;
        sim_vec3 to = sim_v3_sub(char_center(t, c), at);
        sim_fx dist;
        sim_vec3 dir = sim_v3_normalize_len(to, &dist);
        if (dist >= st->rocket_radius)
            continue;
        sim_ray_input ray = {at, to};
        sim_ray_result hit;
        uint32_t who = 0;
        if (sim_game_raycast(t, &ray, 0, &hit, &who) && who == 0)
            continue; // the world is in between
        int32_t points = (int32_t)((int64_t)st->rocket_splash * (st->rocket_radius - dist) / st->rocket_radius);
        bool self = c->id == owner;
        damage(t, s, j, owner, self ? points * st->self_damage_pct / 100 : points, ARENA_WEAPON_ROCKET);
        if (sim_v3_is_zero(dir))
            dir = sim_v3_up();
        if (!p->dead)
            push(t, j, dir, points);
    }
}

static void fire_rocket(sim_game_tick *t, arena_state *s, uint32_t i)
{
    const sim_char_state *c = sim_game_character(t, i);
    for (uint32_t k = 0; k < ARENA_ROCKETS; k++)
        if (!s->rocket[k].live) {
            sim_vec3 v = sim_v3_scale(sim_angle_dir(c->yaw, c->pitch), cfg(t)->rocket_speed);
            s->rocket[k] = (arena_rocket){1, (uint16_t)cfg(t)->rocket_ttl, c->id, eye(t, c), v};
            return;
        }
    // a full table: no rocket (the interval still runs)
}

// One tick of rocket k: a ray along this tick's flight against the world,
// the platforms and the characters (its shooter aside); it explodes where
// the ray hits, or where it is when its time runs out.
static void fly(sim_game_tick *t, arena_state *s, uint32_t k)
{
    arena_rocket *r = &s->rocket[k];
    sim_vec3 step = sim_v3_scale(r->velocity, sim_game_dt(t));
    sim_ray_input ray = {r->at, step};
    sim_ray_result hit;
    uint32_t who = 0;
    if (sim_game_raycast(t, &ray, r->owner, &hit, &who) && hit.hit) {
        arena_rocket done = *r;
        *r = (arena_rocket){0, 0, 0, {0, 0, 0}, {0, 0, 0}};
        sim_vec3 at = sim_v3_sub(hit.point, sim_v3_scale(sim_v3_normalize(step), EXPLOSION_BACKOFF));
        explode(t, s, at, done.owner, who, done.velocity);
        return;
    }
    r->at = sim_v3_add(r->at, step);
    if (--r->ttl == 0) {
        arena_rocket done = *r;
        *r = (arena_rocket){0, 0, 0, {0, 0, 0}, {0, 0, 0}};
        explode(t, s, done.at, done.owner, 0, done.velocity);
    }
}

// ---- pickups and the match ------------------------------------------------------------

static bool take(const arena_settings *st, arena_player *p, uint8_t kind)
{
    if (kind == ARENA_ITEM_HEALTH && p->health < st->health_max) {
        int32_t h = p->health + st->health_pickup;
        p->health = (int16_t)(h > st->health_max ? st->health_max : h);
        return true;
    }
    if (kind == ARENA_ITEM_ARMOUR && p->armour < st->armour_max) {
        int32_t a = p->armour + st->armour_pickup;
        p->armour = (int16_t)(a > st->armour_max ? st->armour_max : a);
        return true;
    }
    return false;
}

static void pickups(sim_game_tick *t, arena_state *s)
{
    uint32_t n = s->item_count < ARENA_ITEMS ? s->item_count : ARENA_ITEMS;
    for (uint32_t k = 0; k < n; k++) {
        arena_item *it = &s->item[k];
        if (it->respawn) {
            it->respawn--;
            continue;
        }
        for (uint32_t i = 0; it->kind && i < sim_game_char_count(t); i++) {
            arena_player *p = sim_game_char(t, i);
            sim_aabb b = char_bounds(t, sim_game_character(t, i));
            if (p->dead || !p->spawned || !sim_aabb_overlaps(b, sim_aabb_of_point(it->at)))
                continue;
            if (take(cfg(t), p, it->kind)) {
                it->respawn = (uint16_t)cfg(t)->pickup_respawn;
                break;
            }
        }
    }
}

// Whether line a goes above line b: frags down, deaths up, id up.
static bool above(arena_score a, arena_score b)
{
    if (a.frags != b.frags)
        return a.frags > b.frags;
    if (a.deaths != b.deaths)
        return a.deaths < b.deaths;
    return a.id < b.id;
}

static void end_match(sim_game_tick *t, arena_state *s)
{
    s->ended = 1;
    s->end_tick = s->clock;
    uint32_t n = 0;
    for (uint32_t i = 0; i < sim_game_char_count(t) && n < ARENA_SCORES; i++) {
        const arena_player *p = sim_game_char(t, i);
        arena_score line = {sim_game_character(t, i)->id, p->frags, p->deaths};
        uint32_t at = n++;
        for (; at > 0 && above(line, s->score[at - 1]); at--)
            s->score[at] = s->score[at - 1];
        s->score[at] = line;
    }
    for (uint32_t k = 0; k < ARENA_ROCKETS; k++)
        s->rocket[k] = (arena_rocket){0, 0, 0, {0, 0, 0}, {0, 0, 0}};
}

// Once, after the movement: the clock, newcomers, respawns, shots, rockets,
// pickups, the match's end (docs/arena.md, "The tick").
void arena_after(sim_game_tick *t)
{
    arena_state *s = sim_game_state(t);
    const arena_settings *st = cfg(t);
    uint32_t n = sim_game_char_count(t);
    if (!s->ended)
        s->clock++;
    for (uint32_t i = 0; i < n; i++) {
        arena_player *p = sim_game_char(t, i);
        if (!p->spawned) {
            p->spawned = 1;
            p->home = sim_game_character(t, i)->position;
            p->health = (int16_t)st->health_start;
            p->protect_ticks = (uint16_t)st->protect_ticks;
        } else if (p->dead && (p->respawn_ticks = count_down(p->respawn_ticks)) == 0) {
            respawn(t, s, i);
        }
    }
    for (uint32_t i = 0; i < n && !s->ended; i++) {
        arena_player *p = sim_game_char(t, i);
        const arena_command *cmd = sim_game_command(t, i);
        if (!cmd || p->dead)
            continue;
        if (cmd->fire_rail && p->rail_ticks == 0) {
            p->rail_ticks = (uint16_t)st->rail_interval;
            p->protect_ticks = 0;
            rail(t, s, i, cmd);
        }
        if (cmd->fire_rocket && p->rocket_ticks == 0 && !p->dead) {
            p->rocket_ticks = (uint16_t)st->rocket_interval;
            p->protect_ticks = 0;
            fire_rocket(t, s, i);
        }
    }
    for (uint32_t k = 0; k < ARENA_ROCKETS; k++)
        if (s->rocket[k].live)
            fly(t, s, k);
    pickups(t, s);
    if (s->ended)
        return;
    bool limit = false;
    for (uint32_t i = 0; i < n && st->frag_limit > 0; i++)
        limit = limit || ((const arena_player *)sim_game_char(t, i))->frags >= st->frag_limit;
    if (limit || (st->match_ticks > 0 && s->clock >= (uint32_t)st->match_ticks))
        end_match(t, s);
}
