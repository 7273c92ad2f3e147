// keel-play: placing the characters' id labels (see labels.c). MIT licence,
// see LICENSE.
#ifndef KEEL_PLAY_LABELS_H
#define KEEL_PLAY_LABELS_H

#include <stdbool.h>
#include <stdint.h>

#include "render.h"

#define KP_MAX_LABELS 256u  ///< labels placed per frame at most (the nearest)
#define KP_LABEL_SCALE 2.0f ///< text scale of a label

typedef struct kp_label {
    uint32_t id;
    char text[12];
    float x, y;   ///< the text's top-left, window pixels
    float box[4]; ///< its box: x, y, width, height
} kp_label;

/// The labels to draw for `chars` (those with .label set, not ghosts) seen
/// by `cam` in a width x height view: wholly inside the view, clear of the
/// `keep` regions (x, y, w, h each), not behind a nearer character, not over
/// a nearer character's label. Nearest first into `out` (at most
/// min(cap, KP_MAX_LABELS)); returns how many.
uint32_t kp_labels_place(const kp_camera *cam, int width, int height, const kp_char_draw *chars, uint32_t count,
                         const float (*keep)[4], uint32_t keep_count, kp_label *out, uint32_t cap);

#endif
