// keel-arena: its schemas, settings and definition (arena.h). The rules are
// in arena_rules.c. MIT licence, see LICENSE.
#include <stddef.h>
#include <string.h>

#include <keel/sim_fx.h>

#include "arena_internal.h"

// The settings with their defaults, in the order of arena_settings (each a
// 32-bit value; Q16.16 ones as raw units).
#define ARENA_SETTINGS(X)           \
    X(health_start, 100)            \
    X(health_max, 100)              \
    X(armour_max, 100)              \
    X(armour_absorb_pct, 66)        \
    X(respawn_ticks, 128)           \
    X(protect_ticks, 96)            \
    X(match_ticks, 19200)           \
    X(frag_limit, 20)               \
    X(rail_damage, 80)              \
    X(rail_interval, 96)            \
    X(rail_range, SIM_FX_INT(80))   \
    X(rocket_direct, 100)           \
    X(rocket_splash, 100)           \
    X(rocket_radius, SIM_FX_INT(3)) \
    X(rocket_speed, SIM_FX_INT(20)) \
    X(rocket_interval, 51)          \
    X(rocket_ttl, 320)              \
    X(self_damage_pct, 50)          \
    X(knockback, SIM_FX_ONE / 8)    \
    X(health_pickup, 25)            \
    X(armour_pickup, 50)            \
    X(pickup_respawn, 1280)         \
    X(eye_height, SIM_FX_MM(1600))  \
    X(eye_height_crouched, SIM_FX_MM(900))

#define ARENA_VALUE(name, v) .name = (v),
#define ARENA_BYTES(name, v)                                                                                           \
    (uint8_t)((uint32_t)(v)&0xFFu), (uint8_t)(((uint32_t)(v) >> 8) & 0xFFu), (uint8_t)(((uint32_t)(v) >> 16) & 0xFFu), \
        (uint8_t)(((uint32_t)(v) >> 24) & 0xFFu),
#define ARENA_PUT(name, v) put32(out, &k, (uint32_t)s->name);

static const arena_settings default_settings = {ARENA_SETTINGS(ARENA_VALUE)};
// The digest's bytes: every setting as 4 bytes, least significant first, so
// that the game has one identity on every machine.
static const uint8_t default_bytes[sizeof(arena_settings)] = {ARENA_SETTINGS(ARENA_BYTES)};

arena_settings arena_default_settings(void) { return default_settings; }

static void put32(uint8_t *out, size_t *k, uint32_t v)
{
    for (int b = 0; b < 4; b++)
        out[(*k)++] = (uint8_t)((v >> (8 * b)) & 0xFFu);
}

static void settings_bytes(const arena_settings *s, uint8_t *out)
{
    size_t k = 0;
    ARENA_SETTINGS(ARENA_PUT)
}

// ---- schemas ------------------------------------------------------------------

static const sim_game_field command_fields[] = {
    {"fire_rail", SIM_GAME_BOOL, offsetof(arena_command, fire_rail), 1, 1, 0, 1, 0, 0},
    {"fire_rocket", SIM_GAME_BOOL, offsetof(arena_command, fire_rocket), 1, 1, 0, 1, 0, 0},
    {"view_lag", SIM_GAME_UINT, offsetof(arena_command, view_lag), 1, 6, 0, 63, 0, 0},
    {"judged", SIM_GAME_BOOL, offsetof(arena_command, judged), 1, 1, 0, 1, 0, 0},
    {"rail_hit", SIM_GAME_UINT, offsetof(arena_command, rail_hit), 4, 32, 0, 0, 0, 0},
};

#define P(f) offsetof(arena_player, f)
static const sim_game_field player_fields[] = {
    {"health", SIM_GAME_INT, P(health), 2, 8, 0, 200, 0, 0},
    {"armour", SIM_GAME_INT, P(armour), 2, 8, 0, 200, 0, 0},
    {"frags", SIM_GAME_INT, P(frags), 2, 11, -1000, 1000, 0, 0},
    {"deaths", SIM_GAME_UINT, P(deaths), 2, 16, 0, 0, 0, 0},
    {"suicides", SIM_GAME_UINT, P(suicides), 2, 16, 0, 0, 0, 0},
    {"hits", SIM_GAME_UINT, P(hits), 2, 16, 0, 0, 0, 0},
    {"dead", SIM_GAME_BOOL, P(dead), 1, 1, 0, 1, 0, 0},
    {"spawned", SIM_GAME_BOOL, P(spawned), 1, 1, 0, 1, 0, 0},
    {"respawn_ticks", SIM_GAME_UINT, P(respawn_ticks), 2, 16, 0, 0, 0, 0},
    {"protect_ticks", SIM_GAME_UINT, P(protect_ticks), 2, 16, 0, 0, 0, 0},
    {"rail_ticks", SIM_GAME_UINT, P(rail_ticks), 2, 16, 0, 0, 0, 0},
    {"rocket_ticks", SIM_GAME_UINT, P(rocket_ticks), 2, 16, 0, 0, 0, 0},
    {"last_attacker", SIM_GAME_UINT, P(last_attacker), 4, 32, 0, 0, 0, 0},
    {"home.x", SIM_GAME_FX, P(home.x), 4, 32, 0, 0, 0, 0},
    {"home.y", SIM_GAME_FX, P(home.y), 4, 32, 0, 0, 0, 0},
    {"home.z", SIM_GAME_FX, P(home.z), 4, 32, 0, 0, 0, 0},
};

#define S(f) offsetof(arena_state, f)
// Columns of a table of the game-wide state: table `t`, member `m`.
#define VEC(nm, t, m, count)                                                                                           \
    {nm ".x", SIM_GAME_FX, offsetof(arena_state, t[0].m.x), 4, 32, 0, 0, count, sizeof(((arena_state *)0)->t[0])},     \
        {nm ".y", SIM_GAME_FX, offsetof(arena_state, t[0].m.y), 4, 32, 0, 0, count, sizeof(((arena_state *)0)->t[0])}, \
    {                                                                                                                  \
        nm ".z", SIM_GAME_FX, offsetof(arena_state, t[0].m.z), 4, 32, 0, 0, count, sizeof(((arena_state *)0)->t[0])    \
    }
#define COLUMN(nm, kind, t, m, size, bits, lo, hi, count)                                                    \
    {                                                                                                        \
        nm, kind, offsetof(arena_state, t[0].m), size, bits, lo, hi, count, sizeof(((arena_state *)0)->t[0]) \
    }

static const sim_game_field state_fields[] = {
    {"clock", SIM_GAME_UINT, S(clock), 4, 32, 0, 0, 0, 0},
    {"ended", SIM_GAME_BOOL, S(ended), 1, 1, 0, 1, 0, 0},
    {"end_tick", SIM_GAME_UINT, S(end_tick), 4, 32, 0, 0, 0, 0},
    {"kills", SIM_GAME_UINT, S(kills), 4, 32, 0, 0, 0, 0},
    {"spawn_count", SIM_GAME_UINT, S(spawn_count), 2, 6, 0, ARENA_SPAWNS, 0, 0},
    {"pad_count", SIM_GAME_UINT, S(pad_count), 2, 4, 0, ARENA_PADS, 0, 0},
    {"teleport_count", SIM_GAME_UINT, S(teleport_count), 2, 4, 0, ARENA_TELEPORTS, 0, 0},
    {"item_count", SIM_GAME_UINT, S(item_count), 2, 6, 0, ARENA_ITEMS, 0, 0},
    VEC("spawn.feet", spawn, feet, ARENA_SPAWNS),
    COLUMN("spawn.yaw", SIM_GAME_ANGLE, spawn, yaw, 2, 16, 0, 0, ARENA_SPAWNS),
    VEC("pad.min", pad, box.min, ARENA_PADS),
    VEC("pad.max", pad, box.max, ARENA_PADS),
    VEC("pad.velocity", pad, velocity, ARENA_PADS),
    VEC("teleport.min", teleport, box.min, ARENA_TELEPORTS),
    VEC("teleport.max", teleport, box.max, ARENA_TELEPORTS),
    VEC("teleport.feet", teleport, feet, ARENA_TELEPORTS),
    COLUMN("teleport.yaw", SIM_GAME_ANGLE, teleport, yaw, 2, 16, 0, 0, ARENA_TELEPORTS),
    COLUMN("item.kind", SIM_GAME_UINT, item, kind, 1, 2, 0, 2, ARENA_ITEMS),
    COLUMN("item.respawn", SIM_GAME_UINT, item, respawn, 2, 16, 0, 0, ARENA_ITEMS),
    VEC("item.at", item, at, ARENA_ITEMS),
    COLUMN("rocket.live", SIM_GAME_BOOL, rocket, live, 1, 1, 0, 1, ARENA_ROCKETS),
    COLUMN("rocket.ttl", SIM_GAME_UINT, rocket, ttl, 2, 16, 0, 0, ARENA_ROCKETS),
    COLUMN("rocket.owner", SIM_GAME_UINT, rocket, owner, 4, 32, 0, 0, ARENA_ROCKETS),
    VEC("rocket.at", rocket, at, ARENA_ROCKETS),
    VEC("rocket.velocity", rocket, velocity, ARENA_ROCKETS),
    COLUMN("score.id", SIM_GAME_UINT, score, id, 4, 32, 0, 0, ARENA_SCORES),
    COLUMN("score.frags", SIM_GAME_INT, score, frags, 2, 11, -1000, 1000, ARENA_SCORES),
    COLUMN("score.deaths", SIM_GAME_UINT, score, deaths, 2, 16, 0, 0, ARENA_SCORES),
    COLUMN("feed.tick", SIM_GAME_UINT, feed, tick, 4, 32, 0, 0, ARENA_FEED),
    COLUMN("feed.killer", SIM_GAME_UINT, feed, killer, 4, 32, 0, 0, ARENA_FEED),
    COLUMN("feed.victim", SIM_GAME_UINT, feed, victim, 4, 32, 0, 0, ARENA_FEED),
    COLUMN("feed.weapon", SIM_GAME_UINT, feed, weapon, 1, 2, 0, 2, ARENA_FEED),
};
#define COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const arena_player player_initial = {.health = 100};

#define ARENA_DEF(user_, bytes_)                                                                                 \
    {                                                                                                            \
        .abi_version = SIM_GAME_ABI_VERSION, .name = "arena", .version = 2,                                      \
        .command = {sizeof(arena_command), command_fields, COUNT(command_fields)},                               \
        .character = {sizeof(arena_player), player_fields, COUNT(player_fields)},                                \
        .state = {sizeof(arena_state), state_fields, COUNT(state_fields)}, .character_initial = &player_initial, \
        .settings = (bytes_), .settings_size = sizeof(arena_settings),                                           \
        .rules = {.before_move_char = arena_before_char, .after_move = arena_after}, .user = (user_),            \
        .level = arena_level, .judge = arena_judge, .view_lag_field = "view_lag",                                \
    }

// The default game's settings, as the rules read them (constant: sim_game_user).
static arena_settings default_user = {ARENA_SETTINGS(ARENA_VALUE)};
static const sim_game_def definition = ARENA_DEF(&default_user, default_bytes);

const sim_game_def *arena_game(void) { return &definition; }

static int32_t clamp32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Every setting into the range the rules are written for (arena.h).
static arena_settings clamped(arena_settings s)
{
    s.health_start = clamp32(s.health_start, 1, 200);
    s.health_max = clamp32(s.health_max, 1, 200);
    s.armour_max = clamp32(s.armour_max, 0, 200);
    s.armour_absorb_pct = clamp32(s.armour_absorb_pct, 0, 100);
    s.respawn_ticks = clamp32(s.respawn_ticks, 1, 65535);
    s.protect_ticks = clamp32(s.protect_ticks, 0, 65535);
    s.match_ticks = clamp32(s.match_ticks, 0, INT32_MAX);
    s.frag_limit = clamp32(s.frag_limit, 0, 1000);
    s.rail_damage = clamp32(s.rail_damage, 0, 1000);
    s.rail_interval = clamp32(s.rail_interval, 1, 65535);
    s.rail_range = clamp32(s.rail_range, 0, SIM_FX_INT(1000));
    s.rocket_direct = clamp32(s.rocket_direct, 0, 1000);
    s.rocket_splash = clamp32(s.rocket_splash, 0, 1000);
    s.rocket_radius = clamp32(s.rocket_radius, SIM_FX_MM(10), SIM_FX_INT(100));
    s.rocket_speed = clamp32(s.rocket_speed, SIM_FX_MM(10), ARENA_SPEED_CAP);
    s.rocket_interval = clamp32(s.rocket_interval, 1, 65535);
    s.rocket_ttl = clamp32(s.rocket_ttl, 1, 65535);
    s.self_damage_pct = clamp32(s.self_damage_pct, 0, 100);
    s.knockback = clamp32(s.knockback, 0, SIM_FX_ONE);
    s.health_pickup = clamp32(s.health_pickup, 0, 200);
    s.armour_pickup = clamp32(s.armour_pickup, 0, 200);
    s.pickup_respawn = clamp32(s.pickup_respawn, 0, 65535);
    s.eye_height = clamp32(s.eye_height, 0, SIM_FX_INT(3));
    s.eye_height_crouched = clamp32(s.eye_height_crouched, 0, SIM_FX_INT(3));
    return s;
}

void arena_def_init(arena_def *a, const arena_settings *settings)
{
    memset(a, 0, sizeof *a);
    a->settings = clamped(settings ? *settings : default_settings);
    settings_bytes(&a->settings, a->settings_bytes);
    const sim_game_def d = ARENA_DEF(&a->settings, a->settings_bytes);
    a->def = d;
}
