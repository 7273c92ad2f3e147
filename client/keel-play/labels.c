// keel-play: where the characters' id labels go. MIT licence, see LICENSE.
//
// A label is the id above a character's head, in a box. It is left out when
// its box would not lie wholly inside the view, would cover a kept-out
// region (the HUD, the timeline, the net graph: labels never overdraw
// them), when a nearer character stands between the eye and the point it
// names, or when a nearer character's label already took its place (in a
// crowd the nearest ones are shown, not a heap of boxes run together). No
// GL here: the placement is computed, then drawn by kp_render_labels.
#include "labels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop

static bool overlap(const float a[4], const float b[4])
{
    return a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3];
}

// Whether the segment from `from` to `to` passes through the box centre +-
// half (slab test).
static bool segment_hits_box(const float from[3], const float to[3], const float centre[3], const float half[3])
{
    float t0 = 0.0f, t1 = 1.0f;
    for (int k = 0; k < 3; k++) {
        float d = to[k] - from[k], lo = centre[k] - half[k], hi = centre[k] + half[k];
        if (fabsf(d) < 1e-6f) {
            if (from[k] < lo || from[k] > hi)
                return false;
            continue;
        }
        float a = (lo - from[k]) / d, b = (hi - from[k]) / d;
        if (a > b) {
            float t = a;
            a = b;
            b = t;
        }
        t0 = a > t0 ? a : t0;
        t1 = b < t1 ? b : t1;
        if (t0 > t1)
            return false;
    }
    return true;
}

static float dist2(const float a[3], const float b[3])
{
    float d = 0;
    for (int k = 0; k < 3; k++)
        d += (a[k] - b[k]) * (a[k] - b[k]);
    return d;
}

uint32_t kp_labels_place(const kp_camera *cam, int width, int height, const kp_char_draw *chars, uint32_t count,
                         const float (*keep)[4], uint32_t keep_count, kp_label *out, uint32_t cap)
{
    // Candidates nearest first (insertion into `out`, at most cap of them).
    uint32_t n = 0;
    cap = cap < KP_MAX_LABELS ? cap : KP_MAX_LABELS;
    float d2[KP_MAX_LABELS];
    for (uint32_t i = 0; i < count && cap; i++) {
        const kp_char_draw *c = &chars[i];
        if (!c->label || c->ghost)
            continue;
        kp_label l;
        memset(&l, 0, sizeof l);
        l.id = c->id;
        float top[3] = {c->centre[0], c->centre[1] + c->half[1] + 0.3f, c->centre[2]}, x, y;
        if (!kp_camera_project(cam, width, height, top, &x, &y))
            continue;
        snprintf(l.text, sizeof l.text, "%u", (unsigned)c->id);
        float w = (float)stb_easy_font_width(l.text) * KP_LABEL_SCALE;
        l.x = x - w * 0.5f;
        l.y = y - 14.0f;
        // the box kp_overlay_text_box draws around it
        l.box[0] = l.x - 3.0f * KP_LABEL_SCALE;
        l.box[1] = l.y - 2.0f * KP_LABEL_SCALE;
        l.box[2] = w + 6.0f * KP_LABEL_SCALE;
        l.box[3] = (float)stb_easy_font_height(l.text) * KP_LABEL_SCALE + 3.0f * KP_LABEL_SCALE;
        if (l.box[0] < 0 || l.box[1] < 0 || l.box[0] + l.box[2] > (float)width || l.box[1] + l.box[3] > (float)height)
            continue; // clipped to the view: whole or not at all
        bool covered = false;
        for (uint32_t k = 0; k < keep_count && !covered; k++)
            covered = overlap(l.box, keep[k]);
        // a nearer character between the eye and the labelled point
        float dc = dist2(cam->eye, c->centre);
        for (uint32_t j = 0; j < count && !covered; j++)
            if (j != i && !chars[j].ghost && dist2(cam->eye, chars[j].centre) < dc)
                covered = segment_hits_box(cam->eye, top, chars[j].centre, chars[j].half);
        if (covered)
            continue;
        uint32_t at = n < cap ? n : cap - 1;
        if (n == cap && dc >= d2[cap - 1])
            continue; // farther than every one kept
        while (at > 0 && d2[at - 1] > dc) {
            if (at < cap) {
                out[at] = out[at - 1];
                d2[at] = d2[at - 1];
            }
            at--;
        }
        out[at] = l;
        d2[at] = dc;
        if (n < cap)
            n++;
    }
    // Nearest first, each kept only where no nearer one's box is.
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool free_spot = true;
        for (uint32_t k = 0; k < kept && free_spot; k++)
            free_spot = !overlap(out[i].box, out[k].box);
        if (free_spot)
            out[kept++] = out[i];
    }
    return kept;
}
