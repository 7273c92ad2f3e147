// keel-play: 2D drawing over the 3D view. MIT licence, see LICENSE.
//
// In window pixels, top-left origin: filled rectangles, line strips and text
// (stb_easy_font: 7-pixel-high glyphs at scale 1). Everything between
// kp_overlay_begin and kp_overlay_end is batched into one vertex buffer and
// drawn in the order given, alpha-blended, without depth.
#ifndef KEEL_PLAY_OVERLAY_H
#define KEEL_PLAY_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_overlay kp_overlay;

kp_overlay *kp_overlay_create(void);
void kp_overlay_destroy(kp_overlay *o);

void kp_overlay_begin(kp_overlay *o, int width, int height);
void kp_overlay_rect(kp_overlay *o, float x, float y, float w, float h, const float rgba[4]);
/// A polyline through `count` points (x0, y0, x1, y1, ...), `thickness` pixels wide.
void kp_overlay_lines(kp_overlay *o, const float *xy, uint32_t count, float thickness, const float rgba[4]);
/// Text at (x, y) (its top-left), `scale` times stb_easy_font's size; '\n'
/// starts a new line. Returns the width in pixels.
float kp_overlay_text(kp_overlay *o, float x, float y, float scale, const char *text, const float rgba[4]);
/// Text with a dark box behind it (readable on any background).
float kp_overlay_text_box(kp_overlay *o, float x, float y, float scale, const char *text, const float rgba[4]);
/// Width and height in pixels `text` takes at `scale`.
float kp_overlay_text_width(const char *text, float scale);
float kp_overlay_text_height(const char *text, float scale);
/// Word-wrap `text` into `out` so that no line is wider than `max_w` pixels
/// at `scale` (measured with the font, not counted in characters): breaks at
/// spaces, a word longer than the line is cut; the '\n's given are kept.
/// Returns out.
char *kp_overlay_wrap(const char *text, float scale, float max_w, char *out, size_t size);

/// A table: lines of cells separated by '\t'. Each column starts where the
/// widest cell of the column before it ends plus a gap (measured widths: the
/// font is proportional, so spaces do not line columns up). A line without a
/// '\t' is one cell that spans the table. With `box`, a dark box behind it.
/// kp_overlay_table_size gives its width and height.
void kp_overlay_table(kp_overlay *o, float x, float y, float scale, const char *text, const float rgba[4], bool box);
void kp_overlay_table_size(const char *text, float scale, float *w, float *h);

/// Draw everything queued since kp_overlay_begin. Draw calls issued are added
/// to *draw_calls when given.
void kp_overlay_end(kp_overlay *o, uint32_t *draw_calls);

#endif
