// keel-play: the 3D view (see render.h). MIT licence, see LICENSE.
//
// One shader draws everything: positions and normals, a model matrix, a
// colour, directional plus ambient light, and (for the level) a world-space
// grid of 1 m lines. Meshes are made once: a unit cube, a unit cylinder, a
// unit sphere (capsules are a cylinder and two spheres, so the round ends
// stay round whatever the proportions). Characters are batched: each mesh
// is drawn once per pass for all of them, instanced (model matrix, colour
// and flash per instance), so a crowd costs a few draw calls, not a few per
// character. Invariant: every glDraw* call is counted in draw_calls;
// translucent things (water, ghosts) are drawn after the opaque ones with
// depth writes off.
#include "render.h"

#include <cglm/cglm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl_util.h"
#include "labels.h"
#include "overlay.h"

typedef struct kp_mesh {
    GLuint vao, vbo;
    GLsizei count; ///< vertices (triangles x 3)
} kp_mesh;

// Instances of one mesh waiting to be drawn: the mesh's vertices and an
// instance buffer of INSTANCE_FLOATS each (model matrix columns, colour, flash).
#define INSTANCE_FLOATS 24
typedef struct kp_batch {
    GLuint vao, vbo;
    float *data;
    uint32_t count, capacity;
} kp_batch;

enum { BATCH_CUBE, BATCH_CYLINDER, BATCH_SPHERE, BATCH_COUNT };

struct kp_render {
    GLuint program;
    GLint u_vp, u_model, u_color, u_flash, u_grid, u_eye, u_instanced;
    kp_mesh level, cube, cylinder, sphere;
    kp_batch batch[BATCH_COUNT];
    kp_camera cam;
    int width, height;
    uint32_t draw_calls;
    mat4 vp;
    float *map_boxes; // kp_map_boxes: a .map's entities
    uint32_t map_box_count;
};

static const char *vs_src = "#version 330 core\n"
                            "layout(location = 0) in vec3 a_pos;\n"
                            "layout(location = 1) in vec3 a_normal;\n"
                            "layout(location = 2) in vec4 i_m0;\n"
                            "layout(location = 3) in vec4 i_m1;\n"
                            "layout(location = 4) in vec4 i_m2;\n"
                            "layout(location = 5) in vec4 i_m3;\n"
                            "layout(location = 6) in vec4 i_color;\n"
                            "layout(location = 7) in vec4 i_flash;\n"
                            "uniform mat4 u_vp;\n"
                            "uniform mat4 u_model;\n"
                            "uniform vec4 u_color;\n"
                            "uniform vec4 u_flash;\n"
                            "uniform float u_instanced;\n"
                            "out vec3 v_world;\n"
                            "out vec3 v_normal;\n"
                            "out vec4 v_color;\n"
                            "out vec4 v_flash;\n"
                            "void main() {\n"
                            "  bool inst = u_instanced > 0.5;\n"
                            "  mat4 model = inst ? mat4(i_m0, i_m1, i_m2, i_m3) : u_model;\n"
                            "  vec4 w = model * vec4(a_pos, 1.0);\n"
                            "  v_world = w.xyz;\n"
                            "  v_normal = mat3(model) * a_normal;\n"
                            "  v_color = inst ? i_color : u_color;\n"
                            "  v_flash = inst ? i_flash : u_flash;\n"
                            "  gl_Position = u_vp * w;\n"
                            "}\n";
// The level's triangles may face either way: its normal is turned towards
// the eye. The grid runs in the two axes across the dominant normal axis.
static const char *fs_src =
    "#version 330 core\n"
    "in vec3 v_world;\n"
    "in vec3 v_normal;\n"
    "in vec4 v_color;\n"
    "in vec4 v_flash;\n"
    "uniform float u_grid;\n"
    "uniform vec3 u_eye;\n"
    "out vec4 o_color;\n"
    "float grid(vec2 p) {\n"
    "  vec2 g = abs(fract(p - 0.5) - 0.5) / max(fwidth(p), vec2(1e-4));\n"
    "  return 1.0 - min(min(g.x, g.y), 1.0);\n"
    "}\n"
    "void main() {\n"
    "  vec3 n = normalize(v_normal);\n"
    "  vec3 base = v_color.rgb;\n"
    "  if (u_grid > 0.0) {\n"
    "    if (dot(n, u_eye - v_world) < 0.0) n = -n;\n"
    "    vec3 a = abs(n);\n"
    "    vec2 p = a.y >= a.x && a.y >= a.z ? v_world.xz : (a.x >= a.z ? v_world.zy : v_world.xy);\n"
    "    base = n.y > 0.7 ? vec3(0.74, 0.73, 0.70) : vec3(0.60, 0.61, 0.64);\n"
    "    base *= 1.0 - 0.28 * grid(p);\n"
    "  }\n"
    "  vec3 l = normalize(vec3(0.35, 0.85, 0.40));\n"
    "  float light = 0.50 + 0.50 * max(dot(n, l), 0.0);\n"
    "  vec3 c = mix(base * light, v_flash.rgb, v_flash.a);\n"
    "  o_color = vec4(c, v_color.a);\n"
    "}\n";

static void draw(kp_render *r, const kp_mesh *m)
{
    glBindVertexArray(m->vao);
    glDrawArrays(GL_TRIANGLES, 0, m->count);
    r->draw_calls++;
}

// Vertices are (position, normal): 6 floats.
static bool mesh_upload(kp_mesh *m, const float *v, size_t vertices)
{
    if (!m->vao) {
        glGenVertexArrays(1, &m->vao);
        glGenBuffers(1, &m->vbo);
    }
    glBindVertexArray(m->vao);
    glBindBuffer(GL_ARRAY_BUFFER, m->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(vertices * 6 * sizeof(float)), v, GL_STATIC_DRAW);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)0);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);
    glBindVertexArray(0);
    m->count = (GLsizei)vertices;
    return true;
}

static void mesh_free(kp_mesh *m)
{
    if (m->vao) {
        glDeleteBuffers(1, &m->vbo);
        glDeleteVertexArrays(1, &m->vao);
    }
    memset(m, 0, sizeof *m);
}

// A growing list of (position, normal) vertices.
typedef struct vbuf {
    float *v;
    size_t n, cap;
    bool failed;
} vbuf;

static void vput(vbuf *b, const float p[3], const float n[3])
{
    if (b->failed)
        return;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        float *v = realloc(b->v, cap * 6 * sizeof(float));
        if (!v) {
            b->failed = true;
            return;
        }
        b->v = v;
        b->cap = cap;
    }
    memcpy(b->v + b->n * 6, p, 3 * sizeof(float));
    memcpy(b->v + b->n * 6 + 3, n, 3 * sizeof(float));
    b->n++;
}

// A flat triangle: its face normal for all three corners.
static void vtri(vbuf *b, const float a[3], const float c1[3], const float c2[3])
{
    vec3 e1, e2, n;
    glm_vec3_sub((float *)c1, (float *)a, e1);
    glm_vec3_sub((float *)c2, (float *)a, e2);
    glm_vec3_cross(e1, e2, n);
    glm_vec3_normalize(n);
    vput(b, a, n);
    vput(b, c1, n);
    vput(b, c2, n);
}

// The 12 triangles of a box: centre, half extents, three unit axes.
static void vbox(vbuf *b, const float c[3], const float h[3], const float ax[3][3])
{
    float corner[8][3];
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) {
            float sx = (i & 1) ? 1.0f : -1.0f, sy = (i & 2) ? 1.0f : -1.0f, sz = (i & 4) ? 1.0f : -1.0f;
            corner[i][k] = c[k] + sx * h[0] * ax[0][k] + sy * h[1] * ax[1][k] + sz * h[2] * ax[2][k];
        }
    // faces as corner indices, counter-clockwise seen from outside
    static const int face[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (int f = 0; f < 6; f++) {
        vtri(b, corner[face[f][0]], corner[face[f][1]], corner[face[f][2]]);
        vtri(b, corner[face[f][0]], corner[face[f][2]], corner[face[f][3]]);
    }
}

#define SEGMENTS 24
#define RINGS 12

static bool make_meshes(kp_render *r)
{
    static const float id_axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    static const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    vbuf b = {0};
    vbox(&b, zero, one, id_axes);
    bool ok = !b.failed && mesh_upload(&r->cube, b.v, b.n);
    b.n = 0;
    // cylinder: radius 1, y in [-1, 1], smooth sides, flat caps
    for (int i = 0; i < SEGMENTS; i++) {
        float a0 = 2.0f * GLM_PIf * (float)i / SEGMENTS, a1 = 2.0f * GLM_PIf * (float)(i + 1) / SEGMENTS;
        float p00[3] = {sinf(a0), -1, cosf(a0)}, p01[3] = {sinf(a0), 1, cosf(a0)};
        float p10[3] = {sinf(a1), -1, cosf(a1)}, p11[3] = {sinf(a1), 1, cosf(a1)};
        float n0[3] = {sinf(a0), 0, cosf(a0)}, n1[3] = {sinf(a1), 0, cosf(a1)};
        vput(&b, p00, n0), vput(&b, p10, n1), vput(&b, p11, n1);
        vput(&b, p00, n0), vput(&b, p11, n1), vput(&b, p01, n0);
        float top[3] = {0, 1, 0}, bottom[3] = {0, -1, 0}, up[3] = {0, 1, 0}, down[3] = {0, -1, 0};
        vput(&b, top, up), vput(&b, p01, up), vput(&b, p11, up);
        vput(&b, bottom, down), vput(&b, p10, down), vput(&b, p00, down);
    }
    ok = ok && !b.failed && mesh_upload(&r->cylinder, b.v, b.n);
    b.n = 0;
    // sphere: radius 1 (its normals are its positions)
    for (int j = 0; j < RINGS; j++)
        for (int i = 0; i < SEGMENTS; i++) {
            float t0 = GLM_PIf * (float)j / RINGS, t1 = GLM_PIf * (float)(j + 1) / RINGS;
            float a0 = 2.0f * GLM_PIf * (float)i / SEGMENTS, a1 = 2.0f * GLM_PIf * (float)(i + 1) / SEGMENTS;
            float p[4][3] = {{sinf(t0) * sinf(a0), cosf(t0), sinf(t0) * cosf(a0)},
                             {sinf(t1) * sinf(a0), cosf(t1), sinf(t1) * cosf(a0)},
                             {sinf(t1) * sinf(a1), cosf(t1), sinf(t1) * cosf(a1)},
                             {sinf(t0) * sinf(a1), cosf(t0), sinf(t0) * cosf(a1)}};
            vput(&b, p[0], p[0]), vput(&b, p[1], p[1]), vput(&b, p[2], p[2]);
            vput(&b, p[0], p[0]), vput(&b, p[2], p[2]), vput(&b, p[3], p[3]);
        }
    ok = ok && !b.failed && mesh_upload(&r->sphere, b.v, b.n);
    free(b.v);
    const kp_mesh *meshes[BATCH_COUNT] = {&r->cube, &r->cylinder, &r->sphere};
    for (int i = 0; ok && i < BATCH_COUNT; i++) {
        kp_batch *k = &r->batch[i];
        glGenVertexArrays(1, &k->vao);
        glGenBuffers(1, &k->vbo);
        glBindVertexArray(k->vao);
        glBindBuffer(GL_ARRAY_BUFFER, meshes[i]->vbo);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)0);
        glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
        glEnableVertexAttribArray(0);
        glEnableVertexAttribArray(1);
        glBindBuffer(GL_ARRAY_BUFFER, k->vbo);
        for (GLuint a = 0; a < 6; a++) {
            glVertexAttribPointer(2 + a, 4, GL_FLOAT, GL_FALSE, INSTANCE_FLOATS * sizeof(float),
                                  (void *)(a * 4 * sizeof(float)));
            glVertexAttribDivisor(2 + a, 1);
            glEnableVertexAttribArray(2 + a);
        }
        glBindVertexArray(0);
    }
    return ok;
}

kp_render *kp_render_create(void)
{
    kp_render *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->program = kp_gl_program("scene", vs_src, fs_src);
    if (!r->program || !make_meshes(r)) {
        if (!r->program)
            fputs("keel-play: cannot make the renderer\n", stderr);
        kp_render_destroy(r);
        return NULL;
    }
    r->u_vp = glGetUniformLocation(r->program, "u_vp");
    r->u_model = glGetUniformLocation(r->program, "u_model");
    r->u_color = glGetUniformLocation(r->program, "u_color");
    r->u_flash = glGetUniformLocation(r->program, "u_flash");
    r->u_grid = glGetUniformLocation(r->program, "u_grid");
    r->u_eye = glGetUniformLocation(r->program, "u_eye");
    r->u_instanced = glGetUniformLocation(r->program, "u_instanced");
    return r;
}

void kp_render_destroy(kp_render *r)
{
    if (!r)
        return;
    mesh_free(&r->level);
    free(r->map_boxes);
    mesh_free(&r->cube);
    mesh_free(&r->cylinder);
    mesh_free(&r->sphere);
    for (int i = 0; i < BATCH_COUNT; i++) {
        if (r->batch[i].vao) {
            glDeleteBuffers(1, &r->batch[i].vbo);
            glDeleteVertexArrays(1, &r->batch[i].vao);
        }
        free(r->batch[i].data);
    }
    if (r->program)
        glDeleteProgram(r->program);
    free(r);
}

static float fx(sim_fx v) { return (float)v / 65536.0f; }

static void v3(sim_vec3 v, float out[3])
{
    out[0] = fx(v.x);
    out[1] = fx(v.y);
    out[2] = fx(v.z);
}

bool kp_render_upload_level(kp_render *r, const sim_level *level)
{
    vbuf b = {0};
    for (uint32_t t = 0; t < level->triangle_count; t++) {
        float p[3][3];
        for (int k = 0; k < 3; k++)
            v3(level->vertices[level->indices[3 * t + k]], p[k]);
        vtri(&b, p[0], p[1], p[2]);
    }
    for (uint32_t i = 0; i < level->box_count; i++) {
        const sim_box_def *d = &level->boxes[i];
        float c[3], h[3], ax[3][3];
        v3(d->center, c);
        v3(d->half, h);
        for (int k = 0; k < 3; k++)
            v3(d->axis[k], ax[k]);
        vbox(&b, c, h, ax);
    }
    bool ok = !b.failed && mesh_upload(&r->level, b.v, b.n);
    free(b.v);
    if (!ok)
        fputs("keel-play: out of memory uploading the level\n", stderr);
    return ok;
}

bool kp_render_upload_map(kp_render *r, const sim_map *map)
{
    free(r->map_boxes);
    r->map_box_count = kp_map_boxes(map, &r->map_boxes);
    return r->map_boxes || !map || map->entity_count == 0;
}

void kp_render_begin(kp_render *r, const kp_camera *cam, int width, int height)
{
    r->cam = *cam;
    if (r->cam.pitch > 89.0f)
        r->cam.pitch = 89.0f;
    if (r->cam.pitch < -89.0f)
        r->cam.pitch = -89.0f;
    r->width = width;
    r->height = height;
    r->draw_calls = 0;
    vec3 f, centre, up = {0, 1, 0}, eye = {r->cam.eye[0], r->cam.eye[1], r->cam.eye[2]};
    kp_camera_forward(r->cam.yaw, r->cam.pitch, f);
    glm_vec3_add(eye, f, centre);
    mat4 view, proj;
    glm_lookat(eye, centre, up, view);
    glm_perspective(glm_rad(r->cam.fov), (float)width / (float)(height > 0 ? height : 1), r->cam.znear, r->cam.zfar,
                    proj);
    glm_mat4_mul(proj, view, r->vp);
    glEnable(GL_DEPTH_TEST);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    glUseProgram(r->program);
    glUniformMatrix4fv(r->u_vp, 1, GL_FALSE, (const float *)r->vp);
    glUniform3f(r->u_eye, eye[0], eye[1], eye[2]);
    glUniform4f(r->u_flash, 0, 0, 0, 0);
    glUniform1f(r->u_grid, 0.0f);
    glUniform1f(r->u_instanced, 0.0f);
}

static void set_model(kp_render *r, const float t[3], const float s[3])
{
    mat4 m = GLM_MAT4_IDENTITY_INIT;
    glm_translate(m, (float *)t);
    glm_scale(m, (float *)s);
    glUniformMatrix4fv(r->u_model, 1, GL_FALSE, (const float *)m);
}

void kp_render_level(kp_render *r)
{
    if (!r->level.count)
        return;
    static const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    glUseProgram(r->program);
    set_model(r, zero, one);
    glUniform4f(r->u_color, 1, 1, 1, 1);
    glUniform1f(r->u_grid, 1.0f);
    draw(r, &r->level);
    glUniform1f(r->u_grid, 0.0f);
}

static void translucent(bool on)
{
    if (on) {
        glEnable(GL_BLEND);
        glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
        glDepthMask(GL_FALSE);
    } else {
        glDisable(GL_BLEND);
        glDepthMask(GL_TRUE);
    }
}

void kp_render_box(kp_render *r, const float centre[3], const float half[3], const float rgba[4])
{
    glUseProgram(r->program);
    bool see_through = rgba[3] < 1.0f;
    translucent(see_through);
    set_model(r, centre, half);
    glUniform4fv(r->u_color, 1, rgba);
    draw(r, &r->cube);
    if (see_through)
        translucent(false);
}

// Queue one instance of a batch's mesh at t scaled by sc.
static void instance(kp_render *r, int which, const float t[3], const float sc[3], const float color[4],
                     const float flash[4])
{
    kp_batch *k = &r->batch[which];
    if (k->count == k->capacity) {
        uint32_t cap = k->capacity ? k->capacity * 2u : 256u;
        float *d = realloc(k->data, (size_t)cap * INSTANCE_FLOATS * sizeof(float));
        if (!d)
            return; // out of memory: this one is not drawn
        k->data = d;
        k->capacity = cap;
    }
    float *d = k->data + (size_t)k->count++ * INSTANCE_FLOATS;
    memset(d, 0, 16 * sizeof(float)); // model matrix, column-major: scale, then translate
    d[0] = sc[0];
    d[5] = sc[1];
    d[10] = sc[2];
    d[12] = t[0];
    d[13] = t[1];
    d[14] = t[2];
    d[15] = 1.0f;
    memcpy(d + 16, color, 4 * sizeof(float));
    memcpy(d + 20, flash, 4 * sizeof(float));
}

// Draw every queued instance, one call per mesh.
static void flush(kp_render *r)
{
    const kp_mesh *meshes[BATCH_COUNT] = {&r->cube, &r->cylinder, &r->sphere};
    glUniform1f(r->u_instanced, 1.0f);
    for (int i = 0; i < BATCH_COUNT; i++) {
        kp_batch *k = &r->batch[i];
        if (!k->count)
            continue;
        glBindBuffer(GL_ARRAY_BUFFER, k->vbo);
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)k->count * INSTANCE_FLOATS * sizeof(float)), k->data,
                     GL_STREAM_DRAW);
        glBindVertexArray(k->vao);
        glDrawArraysInstanced(GL_TRIANGLES, 0, meshes[i]->count, (GLsizei)k->count);
        r->draw_calls++;
        k->count = 0;
    }
    glUniform1f(r->u_instanced, 0.0f);
}

static void queue_character(kp_render *r, const kp_char_draw *in)
{
    // A ghost is a shell 3% larger, so where it coincides with the solid
    // character it is seen over it instead of fighting it for depth.
    kp_char_draw g = *in;
    const kp_char_draw *c = in;
    if (in->ghost) {
        g.radius *= 1.03f;
        for (int k = 0; k < 3; k++)
            g.half[k] *= 1.03f;
        c = &g;
    }
    float color[4] = {c->color[0], c->color[1], c->color[2], c->ghost ? 0.38f : c->color[3]};
    if (c->shape == KP_SHAPE_BOX) {
        instance(r, BATCH_CUBE, c->centre, c->half, color, c->flash);
    } else if (c->shape == KP_SHAPE_CYLINDER) {
        float s[3] = {c->radius, c->half[1], c->radius};
        instance(r, BATCH_CYLINDER, c->centre, s, color, c->flash);
    } else {
        float seg = c->half[1] - c->radius;
        if (seg < 0.0f)
            seg = 0.0f;
        float s[3] = {c->radius, seg, c->radius}, rs[3] = {c->radius, c->radius, c->radius};
        if (seg > 0.0f)
            instance(r, BATCH_CYLINDER, c->centre, s, color, c->flash);
        for (int end = -1; end <= 1; end += 2) {
            float p[3] = {c->centre[0], c->centre[1] + (float)end * seg, c->centre[2]};
            instance(r, BATCH_SPHERE, p, rs, color, c->flash);
        }
    }
    // a visor: where it looks, at eye height, a darker block sticking out
    static const float no_flash[4] = {0, 0, 0, 0};
    float f[3];
    kp_camera_forward(c->yaw, c->pitch, f);
    float eye_y = c->centre[1] + c->half[1] * 0.7f, reach = c->radius * 0.85f;
    float p[3] = {c->centre[0] + f[0] * reach, eye_y + f[1] * reach, c->centre[2] + f[2] * reach};
    float s[3] = {c->radius * 0.35f, c->radius * 0.15f, c->radius * 0.35f};
    float dark[4] = {c->color[0] * 0.35f, c->color[1] * 0.35f, c->color[2] * 0.35f, color[3]};
    instance(r, BATCH_CUBE, p, s, dark, no_flash);
}

void kp_render_characters(kp_render *r, const kp_char_draw *chars, uint32_t count)
{
    glUseProgram(r->program);
    for (int pass = 0; pass < 2; pass++) { // solid ones first, then ghosts
        translucent(pass == 1);
        for (uint32_t i = 0; i < count; i++)
            if (chars[i].ghost == (pass == 1))
                queue_character(r, &chars[i]);
        flush(r);
    }
    translucent(false);
}

void kp_render_scene_objects(kp_render *r, const sim_scene *scene)
{
    static const float platform[4] = {0.52f, 0.47f, 0.40f, 1.0f}, water[4] = {0.15f, 0.40f, 0.85f, 0.35f};
    uint32_t tick = sim_scene_tick(scene);
    for (uint32_t i = 0; i < sim_scene_platform_count(scene); i++) {
        const sim_platform_def *p = sim_scene_platform(scene, i);
        float c[3], h[3];
        v3(sim_platform_position(p, tick), c);
        v3(p->half, h);
        kp_render_box(r, c, h, platform);
    }
    for (uint32_t i = 0; i < sim_scene_water_count(scene); i++) {
        sim_aabb w = sim_scene_water(scene, i);
        float lo[3], hi[3], c[3], h[3];
        v3(w.min, lo);
        v3(w.max, hi);
        for (int k = 0; k < 3; k++) {
            c[k] = (lo[k] + hi[k]) * 0.5f;
            h[k] = (hi[k] - lo[k]) * 0.5f;
        }
        kp_render_box(r, c, h, water);
    }
    for (uint32_t i = 0; i < r->map_box_count; i++) {
        const float *b = r->map_boxes + (size_t)i * KP_MAP_BOX_FLOATS;
        kp_render_box(r, b, b + 3, b + 6);
    }
}

void kp_render_labels(kp_render *r, kp_overlay *o, const kp_char_draw *chars, uint32_t count, const float (*keep)[4],
                      uint32_t keep_count)
{
    static const float white[4] = {1, 1, 1, 1};
    static kp_label placed[KP_MAX_LABELS]; // the frame's labels (one renderer draws at a time)
    uint32_t n = kp_labels_place(&r->cam, r->width, r->height, chars, count, keep, keep_count, placed, KP_MAX_LABELS);
    for (uint32_t i = 0; i < n; i++)
        kp_overlay_text_box(o, placed[i].x, placed[i].y, KP_LABEL_SCALE, placed[i].text, white);
}

void kp_render_end(kp_render *r)
{
    (void)r;
    glBindVertexArray(0);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
}

uint32_t kp_render_draw_calls(const kp_render *r) { return r->draw_calls; }

const kp_camera *kp_render_camera(const kp_render *r) { return &r->cam; }
