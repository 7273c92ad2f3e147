// keel client: headless bots. MIT licence, see LICENSE.
#include <keel/cl_bot.h>

#include "cl_bot_internal.h"

#include <math.h>
#include <string.h>

static const char *const mode_names[CL_BOT_MODE_COUNT] = {"random", "circuit", "pusher", "idle", "platforms", "arena"};

int cl_bot_mode_parse(const char *name)
{
    for (int i = 0; i < CL_BOT_MODE_COUNT; i++)
        if (strcmp(name, mode_names[i]) == 0)
            return i;
    return -1;
}

const char *cl_bot_mode_name(cl_bot_mode m) { return m < CL_BOT_MODE_COUNT ? mode_names[m] : "?"; }

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void cl_bot_init(cl_bot *bot, cl_bot_mode mode, uint64_t seed)
{
    memset(bot, 0, sizeof *bot);
    bot->mode = mode;
    bot->rng = seed;
    bot->leash = SIM_FX_INT(1);
    bot->game_seed = seed ^ 0x67616D65u;
}

// The binary yaw whose forward vector (-sin, 0, -cos) points along (dx, dz).
static sim_angle yaw_toward(double dx, double dz)
{
    double a = atan2(-dx, -dz);
    long v = lround(a / (2.0 * 3.14159265358979323846) * 65536.0);
    return (sim_angle)(((v % 65536) + 65536) % 65536);
}

static const char *const circuit[] = {
    "stairs_100_start", "stairs_100_top", "stairs_200_start", "stairs_200_top", "stairs_300_start",
    "stairs_300_top",   "ramp_20_start",  "ramp_20_top",      "ramp_40_start",  "ramp_40_top",
};
#define CIRCUIT_LEN (sizeof circuit / sizeof circuit[0])

static double fx(sim_fx v) { return (double)v / 65536.0; }

// Walk onto platform `waypoint`, ride it for 1.5 to 4.5 s, then the next one;
// give up on one not reached within 10 s (an elevator at the top is a wall).
static bool platform_command(cl_bot *bot, const sim_scene *scene, const sim_char_state *me, uint32_t tick,
                             sim_input *in)
{
    uint32_t count = sim_scene_platform_count(scene);
    if (count == 0)
        return false;
    const sim_platform_def *p = sim_scene_platform(scene, bot->waypoint % count);
    sim_vec3 at = sim_platform_position(p, sim_scene_tick(scene));
    double dx = fx(at.x - me->position.x), dz = fx(at.z - me->position.z);
    double d2 = dx * dx + dz * dz;
    double hx = fx(p->half.x) - 0.35, hz = fx(p->half.z) - 0.35;
    bool on = dx * dx < hx * hx && dz * dz < hz * hz && me->position.y >= at.y;
    if (on && !bot->riding) {
        bot->riding = true;
        bot->next_change = tick + 96u + (uint32_t)(next(&bot->rng) % 192u);
    }
    if (tick >= bot->next_change && (bot->riding || bot->next_change != 0)) {
        bot->waypoint++;
        bot->riding = false;
        bot->next_change = tick + 640u;
        return true; // stand this tick; head for the next one from the next
    }
    if (bot->next_change == 0)
        bot->next_change = tick + 640u;
    if (bot->riding && on)
        return true; // ride: stand still, carried
    in->yaw = yaw_toward(dx, dz);
    in->forward = d2 < 2.25 ? 50 : 127;
    // Hop onto a platform top above the step height.
    if (d2 < 2.0 && fx(at.y + p->half.y - me->position.y) > 0.3 && (tick & 1u) == 0)
        in->buttons = SIM_BUTTON_JUMP;
    return true;
}

sim_input cl_bot_command(cl_bot *bot, const sim_scene *scene, uint32_t self, const sim_level *level, uint32_t tick)
{
    sim_input in;
    memset(&in, 0, sizeof in);
    in.tick = tick;
    const sim_char_state *me = sim_scene_find(scene, self);
    if (!me)
        return in;
    in.yaw = me->yaw;
    switch (bot->mode) {
    case CL_BOT_RANDOM: {
        if (!bot->has_home) {
            bot->home = me->position;
            bot->has_home = true;
        }
        double dx = fx(bot->home.x - me->position.x), dz = fx(bot->home.z - me->position.z);
        double far = fx(bot->leash);
        if (dx * dx + dz * dz > far * far) {
            in.yaw = yaw_toward(dx, dz); // back toward home
            in.forward = 60;
            bot->next_change = tick; // and pick a new heading once there
        } else if (tick >= bot->next_change) {
            uint64_t r = next(&bot->rng);
            bot->current.yaw = (sim_angle)(r & 0xFFFF);
            bot->current.forward = (int8_t)(20 + (int)((r >> 16) % 60));
            bot->current.buttons = ((r >> 32) % 8) == 0 ? SIM_BUTTON_JUMP : 0;
            bot->next_change = tick + 32u + (uint32_t)((r >> 40) % 64u);
            in.yaw = bot->current.yaw;
            in.forward = bot->current.forward;
            in.buttons = bot->current.buttons;
        } else {
            in.yaw = bot->current.yaw;
            in.forward = bot->current.forward;
        }
        break;
    }
    case CL_BOT_CIRCUIT: {
        const sim_marker *m = sim_level_find_marker(level, circuit[bot->waypoint % CIRCUIT_LEN]);
        if (!m)
            break;
        double dx = fx(m->position.x - me->position.x), dz = fx(m->position.z - me->position.z);
        if (dx * dx + dz * dz < 1.0) {
            bot->waypoint++;
            m = sim_level_find_marker(level, circuit[bot->waypoint % CIRCUIT_LEN]);
            if (!m)
                break;
            dx = fx(m->position.x - me->position.x);
            dz = fx(m->position.z - me->position.z);
        }
        in.yaw = yaw_toward(dx, dz);
        in.forward = 127;
        break;
    }
    case CL_BOT_PUSHER: {
        uint32_t n;
        const sim_char_state *chars = sim_scene_characters(scene, &n);
        double best = 1e30, bx = 0, bz = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (chars[i].id == self)
                continue;
            double dx = fx(chars[i].position.x - me->position.x), dz = fx(chars[i].position.z - me->position.z);
            double d = dx * dx + dz * dz;
            if (d < best) {
                best = d;
                bx = dx;
                bz = dz;
            }
        }
        if (best < 1e30) {
            in.yaw = yaw_toward(bx, bz);
            in.forward = 127;
        }
        break;
    }
    case CL_BOT_PLATFORMS:
        if (!platform_command(bot, scene, me, tick, &in)) {
            bot->mode = CL_BOT_RANDOM; // no platforms here: wander instead
            return cl_bot_command(bot, scene, self, level, tick);
        }
        break;
    case CL_BOT_ARENA: return cl_bot_arena_command(bot, scene, me, tick);
    default: break;
    }
    return in;
}
