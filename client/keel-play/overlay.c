// keel-play: 2D drawing over the 3D view (see overlay.h). MIT licence, see
// LICENSE.
//
// Invariant: between begin and end, `verts` holds triangles (x, y, r, g, b,
// a per vertex) in window pixels in the order they were queued; end uploads
// them in one buffer and draws them with one call, so what is queued later
// is drawn on top.
#include "overlay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gl_util.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop

#define FLOATS_PER_VERTEX 6

struct kp_overlay {
    GLuint program, vao, vbo;
    GLint u_size;
    float *verts;
    size_t count, capacity; ///< vertices
    int width, height;
};

static const char *vs_src = "#version 330 core\n"
                            "layout(location = 0) in vec2 a_pos;\n"
                            "layout(location = 1) in vec4 a_color;\n"
                            "uniform vec2 u_size;\n"
                            "out vec4 v_color;\n"
                            "void main() {\n"
                            "  vec2 ndc = vec2(a_pos.x / u_size.x * 2.0 - 1.0, 1.0 - a_pos.y / u_size.y * 2.0);\n"
                            "  gl_Position = vec4(ndc, 0.0, 1.0);\n"
                            "  v_color = a_color;\n"
                            "}\n";
static const char *fs_src = "#version 330 core\n"
                            "in vec4 v_color;\n"
                            "out vec4 o_color;\n"
                            "void main() { o_color = v_color; }\n";

kp_overlay *kp_overlay_create(void)
{
    kp_overlay *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->program = kp_gl_program("overlay", vs_src, fs_src);
    if (!o->program) {
        free(o);
        return NULL;
    }
    o->u_size = glGetUniformLocation(o->program, "u_size");
    glGenVertexArrays(1, &o->vao);
    glGenBuffers(1, &o->vbo);
    glBindVertexArray(o->vao);
    glBindBuffer(GL_ARRAY_BUFFER, o->vbo);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, FLOATS_PER_VERTEX * sizeof(float), (void *)0);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, FLOATS_PER_VERTEX * sizeof(float), (void *)(2 * sizeof(float)));
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);
    glBindVertexArray(0);
    return o;
}

void kp_overlay_destroy(kp_overlay *o)
{
    if (!o)
        return;
    glDeleteBuffers(1, &o->vbo);
    glDeleteVertexArrays(1, &o->vao);
    glDeleteProgram(o->program);
    free(o->verts);
    free(o);
}

void kp_overlay_begin(kp_overlay *o, int width, int height)
{
    o->count = 0;
    o->width = width;
    o->height = height;
}

static float *reserve(kp_overlay *o, size_t vertices)
{
    if (o->count + vertices > o->capacity) {
        size_t cap = o->capacity ? o->capacity : 4096;
        while (cap < o->count + vertices)
            cap *= 2;
        float *v = realloc(o->verts, cap * FLOATS_PER_VERTEX * sizeof(float));
        if (!v)
            return NULL;
        o->verts = v;
        o->capacity = cap;
    }
    float *p = o->verts + o->count * FLOATS_PER_VERTEX;
    o->count += vertices;
    return p;
}

static void put(float *p, float x, float y, const float c[4])
{
    p[0] = x;
    p[1] = y;
    memcpy(p + 2, c, 4 * sizeof(float));
}

// A quad as two triangles: corners a, b, c, d in order around it.
static void quad(kp_overlay *o, const float a[2], const float b[2], const float c[2], const float d[2],
                 const float rgba[4])
{
    float *p = reserve(o, 6);
    if (!p)
        return;
    put(p, a[0], a[1], rgba);
    put(p + 6, b[0], b[1], rgba);
    put(p + 12, c[0], c[1], rgba);
    put(p + 18, a[0], a[1], rgba);
    put(p + 24, c[0], c[1], rgba);
    put(p + 30, d[0], d[1], rgba);
}

void kp_overlay_rect(kp_overlay *o, float x, float y, float w, float h, const float rgba[4])
{
    float a[2] = {x, y}, b[2] = {x + w, y}, c[2] = {x + w, y + h}, d[2] = {x, y + h};
    quad(o, a, b, c, d, rgba);
}

void kp_overlay_lines(kp_overlay *o, const float *xy, uint32_t count, float thickness, const float rgba[4])
{
    float half = thickness * 0.5f;
    for (uint32_t i = 0; i + 1 < count; i++) {
        float x0 = xy[2 * i], y0 = xy[2 * i + 1], x1 = xy[2 * i + 2], y1 = xy[2 * i + 3];
        float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
        if (len <= 0.0f)
            continue;
        float nx = -dy / len * half, ny = dx / len * half;
        float a[2] = {x0 + nx, y0 + ny}, b[2] = {x1 + nx, y1 + ny}, c[2] = {x1 - nx, y1 - ny},
              d[2] = {x0 - nx, y0 - ny};
        quad(o, a, b, c, d, rgba);
    }
}

float kp_overlay_text_width(const char *text, float scale) { return (float)stb_easy_font_width((char *)text) * scale; }

float kp_overlay_text_height(const char *text, float scale)
{
    return (float)stb_easy_font_height((char *)text) * scale;
}

// One line of text (no '\n', at most 200 characters) at (x, y).
static void text_line(kp_overlay *o, float x, float y, float scale, const char *line, const float rgba[4])
{
    // stb_easy_font writes quads of 4 vertices (x, y, z, colour: 16 bytes
    // each), a handful per glyph: 1 KiB per character is ample for a line
    // of at most 200 (it stops at the buffer's end rather than overrun it).
    static float buf[200 * 1024 / sizeof(float)];
    unsigned char col[4] = {255, 255, 255, 255};
    int quads = stb_easy_font_print(0.0f, 0.0f, (char *)line, col, buf, (int)sizeof buf);
    for (int q = 0; q < quads; q++) {
        const float *v = buf + q * 16;
        float c[4][2];
        for (int k = 0; k < 4; k++) {
            c[k][0] = x + v[k * 4] * scale;
            c[k][1] = y + v[k * 4 + 1] * scale;
        }
        quad(o, c[0], c[1], c[2], c[3], rgba);
    }
}

float kp_overlay_text(kp_overlay *o, float x, float y, float scale, const char *text, const float rgba[4])
{
    // Line by line, each cut to 200 characters, 12 pixels apart at scale 1
    // (stb_easy_font's line height).
    char line[201];
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, "\n");
        size_t n = len > 200 ? 200 : len;
        memcpy(line, p, n);
        line[n] = '\0';
        text_line(o, x, y, scale, line, rgba);
        if (!p[len])
            break;
        p += len + 1;
        y += 12.0f * scale;
    }
    return kp_overlay_text_width(text, scale);
}

float kp_overlay_text_box(kp_overlay *o, float x, float y, float scale, const char *text, const float rgba[4])
{
    static const float back[4] = {0.0f, 0.0f, 0.0f, 0.6f};
    float w = kp_overlay_text_width(text, scale), h = kp_overlay_text_height(text, scale);
    kp_overlay_rect(o, x - 3.0f * scale, y - 2.0f * scale, w + 6.0f * scale, h + 3.0f * scale, back);
    return kp_overlay_text(o, x, y, scale, text, rgba);
}

char *kp_overlay_wrap(const char *text, float scale, float max_w, char *out, size_t size)
{
    size_t n = 0;
    char line[512];
    size_t ln = 0; // the current output line, for measuring
    if (size == 0)
        return out;
    for (const char *p = text; *p && n + 1 < size;) {
        if (*p == '\n') {
            out[n++] = *p++;
            ln = 0;
            continue;
        }
        // the next word with the spaces before it
        size_t sp = strspn(p, " "), wl = strcspn(p + sp, " \n");
        size_t take = ln == 0 ? wl : sp + wl; // no spaces at a line's start
        const char *from = ln == 0 ? p + sp : p;
        if (ln + take >= sizeof line)
            take = sizeof line - 1 - ln;
        memcpy(line + ln, from, take);
        line[ln + take] = '\0';
        if (ln > 0 && kp_overlay_text_width(line, scale) > max_w) {
            out[n++] = '\n'; // the word starts the next line
            ln = 0;
            p += sp;
            continue;
        }
        // a word wider than a whole line: cut where it fits
        size_t cut = take;
        while (ln == 0 && cut > 1 && kp_overlay_text_width(line, scale) > max_w)
            line[--cut] = '\0';
        if (n + cut >= size)
            cut = size - 1 - n;
        memcpy(out + n, from, cut);
        n += cut;
        ln += cut;
        p = from + cut;
        if (cut < take && ln == cut && n + 1 < size) { // cut: go on on the next line
            out[n++] = '\n';
            ln = 0;
        }
    }
    out[n] = '\0';
    return out;
}

#define TABLE_COLUMNS 8
#define TABLE_GAP 10.0f // pixels at scale 1 between columns

// The cell of line p (len bytes) that starts at `at`, copied into cell (cut
// to its size); returns its length in the line.
static size_t table_cell(const char *p, size_t len, size_t at, char *cell, size_t size)
{
    size_t cl = strcspn(p + at, "\t\n");
    if (at + cl > len)
        cl = len - at;
    size_t k = cl < size ? cl : size - 1;
    memcpy(cell, p + at, k);
    cell[k] = '\0';
    return cl;
}

// The widths of the table's columns (a line without '\t' counts for none)
// and of its widest spanning line.
static void table_columns(const char *text, float scale, float col[TABLE_COLUMNS], float *span, uint32_t *lines)
{
    memset(col, 0, TABLE_COLUMNS * sizeof *col);
    *span = 0;
    *lines = 0;
    char cell[256];
    for (const char *p = text; *p || *lines == 0;) {
        size_t len = strcspn(p, "\n");
        bool cells = memchr(p, '\t', len) != NULL;
        uint32_t c = 0;
        for (size_t at = 0; at <= len && c < TABLE_COLUMNS; c++) {
            size_t cl = table_cell(p, len, at, cell, sizeof cell);
            float w = kp_overlay_text_width(cell, scale);
            if (!cells)
                *span = w > *span ? w : *span;
            else if (w > col[c])
                col[c] = w;
            at += cl + 1;
            if (!cells)
                break;
        }
        ++*lines;
        if (!p[len])
            break;
        p += len + 1;
    }
}

void kp_overlay_table_size(const char *text, float scale, float *w, float *h)
{
    float col[TABLE_COLUMNS], span;
    uint32_t lines;
    table_columns(text, scale, col, &span, &lines);
    float cw = 0;
    for (int c = 0; c < TABLE_COLUMNS; c++)
        cw += col[c] > 0 ? col[c] + (c ? TABLE_GAP * scale : 0) : 0;
    *w = cw > span ? cw : span;
    *h = kp_overlay_text_height(text, scale);
}

void kp_overlay_table(kp_overlay *o, float x, float y, float scale, const char *text, const float rgba[4], bool box)
{
    float col[TABLE_COLUMNS], span;
    uint32_t lines;
    table_columns(text, scale, col, &span, &lines);
    if (box) {
        static const float back[4] = {0.0f, 0.0f, 0.0f, 0.6f};
        float w, h;
        kp_overlay_table_size(text, scale, &w, &h);
        kp_overlay_rect(o, x - 3.0f * scale, y - 2.0f * scale, w + 6.0f * scale, h + 3.0f * scale, back);
    }
    char cell[256];
    for (const char *p = text;;) {
        size_t len = strcspn(p, "\n");
        float cx = x;
        uint32_t c = 0;
        for (size_t at = 0; at <= len && c < TABLE_COLUMNS; c++) {
            size_t cl = table_cell(p, len, at, cell, sizeof cell);
            text_line(o, cx, y, scale, cell, rgba);
            cx += col[c] + TABLE_GAP * scale;
            at += cl + 1;
        }
        if (!p[len])
            break;
        p += len + 1;
        y += 12.0f * scale;
    }
}

void kp_overlay_end(kp_overlay *o, uint32_t *draw_calls)
{
    if (o->count == 0)
        return;
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(o->program);
    glUniform2f(o->u_size, (float)o->width, (float)o->height);
    glBindVertexArray(o->vao);
    glBindBuffer(GL_ARRAY_BUFFER, o->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(o->count * FLOATS_PER_VERTEX * sizeof(float)), o->verts, GL_STREAM_DRAW);
    glDrawArrays(GL_TRIANGLES, 0, (GLsizei)o->count);
    glBindVertexArray(0);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
    if (draw_calls)
        ++*draw_calls;
    o->count = 0;
}
