// keel-play: cameras, the palette and scene-to-draw-record conversion (no
// GL here, so tests link this file to predict where things are drawn). MIT
// licence, see LICENSE.
//
// The projection is the one the shaders use: a right-handed view looking
// along kp_camera_forward, a perspective of `fov` degrees vertically, and
// window pixels with a top-left origin.
#include <math.h>
#include <string.h>

#include <keel/sim_query.h>

#include "render.h"

#define KP_PI 3.14159265358979f

kp_camera kp_camera_make(float x, float y, float z, float yaw_deg, float pitch_deg)
{
    kp_camera c;
    memset(&c, 0, sizeof c);
    c.eye[0] = x;
    c.eye[1] = y;
    c.eye[2] = z;
    c.yaw = yaw_deg;
    c.pitch = pitch_deg;
    c.fov = 70.0f;
    c.znear = 0.05f;
    c.zfar = 500.0f;
    return c;
}

void kp_camera_forward(float yaw_deg, float pitch_deg, float out[3])
{
    float y = yaw_deg * KP_PI / 180.0f, p = pitch_deg * KP_PI / 180.0f;
    out[0] = -sinf(y) * cosf(p);
    out[1] = sinf(p);
    out[2] = -cosf(y) * cosf(p);
}

kp_camera kp_camera_first_person(const float feet[3], float height, float yaw_deg, float pitch_deg)
{
    return kp_camera_make(feet[0], feet[1] + 0.9f * height, feet[2], yaw_deg, pitch_deg);
}

kp_camera kp_camera_chase(const float centre[3], float yaw_deg, float pitch_deg, float distance)
{
    float f[3];
    kp_camera_forward(yaw_deg, pitch_deg, f);
    return kp_camera_make(centre[0] - f[0] * distance, centre[1] - f[1] * distance, centre[2] - f[2] * distance,
                          yaw_deg, pitch_deg);
}

static sim_fx to_fx(float v)
{
    float lim = 4000.0f; // inside the world's range (SIM_WORLD_LIMIT)
    v = v > lim ? lim : v < -lim ? -lim : v;
    return (sim_fx)lroundf(v * 65536.0f);
}

float kp_camera_chase_distance(const struct sim_world *world, const float centre[3], float yaw_deg, float pitch_deg,
                               float distance)
{
    float f[3];
    kp_camera_forward(yaw_deg, pitch_deg, f);
    sim_ray_input in;
    in.origin = sim_v3(to_fx(centre[0]), to_fx(centre[1]), to_fx(centre[2]));
    in.displacement = sim_v3(to_fx(-f[0] * distance), to_fx(-f[1] * distance), to_fx(-f[2] * distance));
    sim_ray_result res;
    memset(&res, 0, sizeof res);
    if (world && sim_world_raycast(world, &in, &res) && res.hit) {
        // a little short of the wall, so the near plane does not cut it
        distance = (float)res.fraction / 65536.0f * distance - 0.25f;
    }
    return distance < 0.3f ? 0.3f : distance;
}

bool kp_world_blocks(const struct sim_world *world, const float from[3], const float to[3])
{
    sim_ray_input in;
    in.origin = sim_v3(to_fx(from[0]), to_fx(from[1]), to_fx(from[2]));
    in.displacement = sim_v3(to_fx(to[0] - from[0]), to_fx(to[1] - from[1]), to_fx(to[2] - from[2]));
    sim_ray_result res;
    memset(&res, 0, sizeof res);
    return world && sim_world_raycast(world, &in, &res) && res.hit;
}

// The camera's basis: forward f, right r, up u (right-handed, u = r x f).
static void basis(const kp_camera *c, float f[3], float r[3], float u[3])
{
    kp_camera_forward(c->yaw, c->pitch, f);
    float y = c->yaw * KP_PI / 180.0f;
    r[0] = cosf(y);
    r[1] = 0.0f;
    r[2] = -sinf(y);
    u[0] = r[1] * f[2] - r[2] * f[1];
    u[1] = r[2] * f[0] - r[0] * f[2];
    u[2] = r[0] * f[1] - r[1] * f[0];
}

bool kp_camera_project(const kp_camera *cam, int w, int h, const float world[3], float *x, float *y)
{
    float f[3], r[3], u[3];
    basis(cam, f, r, u);
    float d[3] = {world[0] - cam->eye[0], world[1] - cam->eye[1], world[2] - cam->eye[2]};
    float zf = d[0] * f[0] + d[1] * f[1] + d[2] * f[2];
    float xr = d[0] * r[0] + d[1] * r[1] + d[2] * r[2];
    float yu = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
    if (zf < cam->znear || zf > cam->zfar)
        return false;
    float t = tanf(cam->fov * KP_PI / 360.0f);
    float aspect = (float)w / (float)(h > 0 ? h : 1);
    float nx = xr / (zf * t * aspect), ny = yu / (zf * t);
    *x = (nx * 0.5f + 0.5f) * (float)w;
    *y = (0.5f - ny * 0.5f) * (float)h;
    return true;
}

// 12 saturated hues 30 degrees apart, in an order where neighbours differ
// a lot (id 1, 2, 3 get red, cyan-blue, yellow-green...).
static const float palette[12][3] = {
    {0.95f, 0.15f, 0.15f}, {0.10f, 0.45f, 0.95f}, {0.55f, 0.95f, 0.10f}, {0.85f, 0.15f, 0.95f},
    {0.95f, 0.75f, 0.05f}, {0.05f, 0.90f, 0.85f}, {0.95f, 0.45f, 0.05f}, {0.35f, 0.15f, 0.95f},
    {0.10f, 0.90f, 0.35f}, {0.95f, 0.10f, 0.55f}, {0.05f, 0.70f, 0.95f}, {0.80f, 0.95f, 0.05f},
};

uint32_t kp_palette_size(void) { return 12u; }

void kp_palette_entry(uint32_t i, float rgb[3]) { memcpy(rgb, palette[i % 12u], sizeof palette[0]); }

void kp_character_color(uint32_t id, float rgb[3]) { kp_palette_entry(id == 0 ? 0 : (id - 1u) % 12u, rgb); }

static float m(sim_fx v) { return (float)v / 65536.0f; }

uint32_t kp_render_records_from_states(const sim_char_state *states, uint32_t count, const sim_move_settings *settings,
                                       kp_char_draw *out, uint32_t capacity)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < count && n < capacity; i++) {
        const sim_char_state *c = &states[i];
        kp_char_draw *d = &out[n++];
        memset(d, 0, sizeof *d);
        sim_shape s = sim_char_shape(settings, c);
        d->id = c->id;
        d->feet[0] = m(c->position.x);
        d->feet[1] = m(c->position.y);
        d->feet[2] = m(c->position.z);
        d->half[0] = m(s.half.x);
        d->half[1] = m(s.half.y);
        d->half[2] = m(s.half.z);
        d->centre[0] = d->feet[0];
        d->centre[1] = d->feet[1] + d->half[1];
        d->centre[2] = d->feet[2];
        d->yaw = (float)c->yaw * 360.0f / 65536.0f;
        d->pitch = (float)(int16_t)c->pitch * 360.0f / 65536.0f;
        d->shape = s.type == SIM_SHAPE_BOX        ? KP_SHAPE_BOX
                   : s.type == SIM_SHAPE_CYLINDER ? KP_SHAPE_CYLINDER
                                                  : KP_SHAPE_CAPSULE;
        d->radius = s.type == SIM_SHAPE_BOX ? d->half[0] : m(s.radius);
        d->crouched = (c->flags & SIM_CHAR_CROUCHED) != 0;
        kp_character_color(c->id, d->color);
        d->color[3] = 1.0f;
        d->label = true;
    }
    return n;
}

uint32_t kp_render_records_from_scene(const sim_scene *scene, const sim_move_settings *settings, kp_char_draw *out,
                                      uint32_t capacity)
{
    uint32_t count = 0;
    const sim_char_state *states = sim_scene_characters(scene, &count);
    return kp_render_records_from_states(states, count, settings, out, capacity);
}
