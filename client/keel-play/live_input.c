// keel-play live mode: keys and mouse to the player's command (see
// live_input.h for its invariants). MIT licence, see LICENSE.
#include "live_input.h"

#include "game_panel.h" // KP_GAME_BUTTON_*

#include <math.h>

sim_angle kp_angle_from_deg(double deg)
{
    double turns = deg / 360.0;
    turns -= floor(turns);
    long v = lround(turns * 65536.0);
    return (sim_angle)(v & 0xFFFF);
}

double kp_angle_to_deg(sim_angle a) { return (int16_t)a * (360.0 / 65536.0); }

void kp_controls_init(kp_controls *c, double sensitivity, double yaw_deg)
{
    *c = (kp_controls){0};
    c->sensitivity = sensitivity;
    c->yaw_deg = yaw_deg;
    c->netgraph = true;
}

void kp_controls_capture(kp_controls *c, bool on) { c->captured = on; }

static void key_down(kp_controls *c, SDL_Keycode k)
{
    switch (k) {
    case SDLK_ESCAPE:
        if (c->captured)
            kp_controls_capture(c, false);
        else
            c->quit = true;
        break;
    case SDLK_v: c->fly = !c->fly; break;
    case SDLK_t:
    case SDLK_F3: c->chase = !c->chase; break;
    case SDLK_n:
    case SDLK_F2: c->netgraph = !c->netgraph; break;
    case SDLK_F1: c->help = !c->help; break;
    case SDLK_g: c->game_panel = !c->game_panel; break;
    case SDLK_F12: c->screenshots++; break;
    default: break;
    }
}

bool kp_controls_event(kp_controls *c, const SDL_Event *e)
{
    switch (e->type) {
    case SDL_QUIT: c->quit = true; return true;
    case SDL_KEYDOWN:
        if (e->key.keysym.sym == SDLK_TAB)
            c->players = true;
        if (e->key.keysym.scancode == SDL_SCANCODE_SPACE && !e->key.repeat)
            c->jump_latched = true;
        if (!e->key.repeat)
            key_down(c, e->key.keysym.sym);
        return true;
    case SDL_KEYUP:
        if (e->key.keysym.sym == SDLK_TAB)
            c->players = false;
        return true;
    case SDL_MOUSEBUTTONDOWN:
        if (!c->captured)
            kp_controls_capture(c, true);
        else
            c->fire_latched |= e->button.button == SDL_BUTTON_LEFT     ? KP_GAME_BUTTON_LEFT
                               : e->button.button == SDL_BUTTON_RIGHT  ? KP_GAME_BUTTON_RIGHT
                               : e->button.button == SDL_BUTTON_MIDDLE ? KP_GAME_BUTTON_MIDDLE
                                                                       : 0u;
        return true;
    case SDL_MOUSEMOTION:
        if (!c->captured)
            return true;
        // Right turns clockwise seen from above: yaw decreases (sim_angle.h).
        c->yaw_deg -= e->motion.xrel * c->sensitivity;
        c->yaw_deg = fmod(c->yaw_deg, 360.0);
        c->pitch_deg -= e->motion.yrel * c->sensitivity;
        if (c->pitch_deg > 89.0)
            c->pitch_deg = 89.0;
        if (c->pitch_deg < -89.0)
            c->pitch_deg = -89.0;
        return true;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_FOCUS_LOST) {
            c->keys_ignored = true;
            if (c->captured)
                kp_controls_capture(c, false);
        } else if (e->window.event == SDL_WINDOWEVENT_FOCUS_GAINED) {
            c->keys_ignored = false;
        }
        return true;
    default: return false;
    }
}

uint32_t kp_controls_fire(kp_controls *c)
{
    uint32_t b = c->fire_latched;
    c->fire_latched = 0;
    if (!c->captured || c->keys_ignored)
        return 0;
    Uint32 held = SDL_GetMouseState(NULL, NULL);
    if (held & SDL_BUTTON_LMASK)
        b |= KP_GAME_BUTTON_LEFT;
    if (held & SDL_BUTTON_RMASK)
        b |= KP_GAME_BUTTON_RIGHT;
    if (held & SDL_BUTTON_MMASK)
        b |= KP_GAME_BUTTON_MIDDLE;
    return b;
}

sim_input kp_controls_command(kp_controls *c, uint32_t tick)
{
    sim_input in = {0};
    in.tick = tick;
    in.yaw = kp_angle_from_deg(c->yaw_deg);
    in.pitch = kp_angle_from_deg(c->pitch_deg);
    if (c->fly)
        in.buttons |= SIM_BUTTON_FLY;
    if (c->keys_ignored)
        return in;
    const Uint8 *k = SDL_GetKeyboardState(NULL);
    int fwd = (k[SDL_SCANCODE_W] ? 127 : 0) - (k[SDL_SCANCODE_S] ? 127 : 0);
    int right = (k[SDL_SCANCODE_D] ? 127 : 0) - (k[SDL_SCANCODE_A] ? 127 : 0);
    bool jump = k[SDL_SCANCODE_SPACE] || c->jump_latched;
    c->jump_latched = false;
    bool crouch = k[SDL_SCANCODE_LCTRL] || k[SDL_SCANCODE_RCTRL] || k[SDL_SCANCODE_C];
    in.forward = (int8_t)fwd;
    in.right = (int8_t)right;
    // Up and down: flying and swimming take them as an axis, walking as
    // buttons.
    in.up = (int8_t)((jump ? 127 : 0) - (crouch ? 127 : 0));
    if (jump)
        in.buttons |= SIM_BUTTON_JUMP;
    if (crouch)
        in.buttons |= SIM_BUTTON_CROUCH;
    return in;
}
