// keel-play live mode: the net graph's figures (see netgraph.h for its
// invariants). MIT licence, see LICENSE.
#include "netgraph.h"

#include <stdio.h>
#include <string.h>

#include "overlay.h"

void kp_netgraph_init(kp_netgraph *g) { memset(g, 0, sizeof *g); }

void kp_netgraph_cause_color(cl_cause cause, float rgb[3])
{
    static const float colors[CL_CAUSE_COUNT][3] = {
        {1.00f, 0.75f, 0.10f}, // substituted: amber
        {0.25f, 0.65f, 1.00f}, // remote command: blue
        {0.75f, 0.40f, 1.00f}, // interaction: violet
        {1.00f, 0.15f, 0.15f}, // unexplained: red
        {0.20f, 1.00f, 0.80f}, // game rule: teal
    };
    memcpy(rgb, colors[(unsigned)cause < CL_CAUSE_COUNT ? cause : CL_CAUSE_UNEXPLAINED], sizeof colors[0]);
}

static uint64_t own_total(const cl_stats *s)
{
    uint64_t n = 0;
    for (int c = 0; c < CL_CAUSE_COUNT; c++)
        n += s->own_mispredictions[c];
    return n;
}

// Rates over the newest second of slots: the finished ones before the current
// slot plus the part of the current one that passed.
static void rates(kp_netgraph *g, uint64_t now)
{
    const uint32_t per_second = 1000u / KP_NG_SLOT_MS;
    double span = 0, up = 0, down = 0, snaps = 0, lost = 0, frames = 0, frame_max = 0;
    double own[CL_CAUSE_COUNT] = {0}, remote[CL_CAUSE_COUNT] = {0};
    for (uint32_t k = 0; k <= per_second; k++) {
        const kp_ng_slot *sl = &g->slots[(g->head + KP_NG_SLOTS - k) % KP_NG_SLOTS];
        if (!sl->start_us)
            break;
        double len = k == 0 ? (double)(now - sl->start_us) / 1e6 : KP_NG_SLOT_MS / 1000.0;
        if (k == per_second) // only the part of the oldest one that the current one does not cover
            len = KP_NG_SLOT_MS / 1000.0 - (double)(now - g->slots[g->head].start_us) / 1e6;
        if (len <= 0)
            continue;
        double w = k == per_second ? len / (KP_NG_SLOT_MS / 1000.0) : 1.0;
        span += len;
        up += sl->wire_up * w;
        down += sl->wire_down * w;
        snaps += sl->snapshots * w;
        lost += sl->snapshots_lost * w;
        frames += sl->frames * w;
        if (sl->frame_ms_max > frame_max)
            frame_max = sl->frame_ms_max;
        for (int c = 0; c < CL_CAUSE_COUNT; c++) {
            own[c] += sl->own[c] * w;
            remote[c] += sl->remote[c] * w;
        }
    }
    if (span <= 0)
        return;
    g->up_Bps = up / span;
    g->down_Bps = down / span;
    g->loss_pct = snaps + lost > 0 ? 100.0 * lost / (snaps + lost) : 0;
    g->fps = frames / span;
    g->frame_ms_max = frame_max;
    for (int c = 0; c < CL_CAUSE_COUNT; c++) {
        g->own_per_s[c] = own[c] / span;
        g->remote_per_s[c] = remote[c] / span;
    }
}

void kp_netgraph_frame(kp_netgraph *g, uint64_t now, const cl_stats *s, const net_host_stats *ns, double frame_ms,
                       double predict_ms, double rollback_ms, double smooth_ms, double handle_ms, uint32_t snaps)
{
    if (!g->started) {
        g->started = true;
        g->last = *s;
        g->last_net = *ns;
        g->head = 0;
        g->slots[0].start_us = now;
    }
    kp_ng_slot *sl = &g->slots[g->head];
    if (now - sl->start_us >= KP_NG_SLOT_MS * 1000u) {
        // Next slot; a pause longer than a slot leaves empty ones between.
        uint64_t start = sl->start_us;
        do {
            start += KP_NG_SLOT_MS * 1000u;
            g->head = (g->head + 1) % KP_NG_SLOTS;
            memset(&g->slots[g->head], 0, sizeof g->slots[0]);
            g->slots[g->head].start_us = start;
        } while (now - start >= KP_NG_SLOT_MS * 1000u && now - start < (uint64_t)KP_NG_SLOTS * KP_NG_SLOT_MS * 1000u);
        if (now - start >= KP_NG_SLOT_MS * 1000u)
            g->slots[g->head].start_us = now; // a pause longer than the whole strip
        sl = &g->slots[g->head];
    }
    if (own_total(s) != own_total(&g->last) && s->last_own_field) {
        for (int c = 0; c < CL_CAUSE_COUNT; c++)
            if (s->own_mispredictions[c] != g->last.own_mispredictions[c])
                g->flash_cause = (cl_cause)c;
        g->flash_until_us = now + KP_NG_FLASH_MS * 1000u;
        g->flash_tick = s->last_own_tick;
        g->flash_field = s->last_own_field;
    }
    for (int c = 0; c < CL_CAUSE_COUNT; c++) {
        sl->own[c] += (uint32_t)(s->own_mispredictions[c] - g->last.own_mispredictions[c]);
        sl->remote[c] += (uint32_t)(s->remote_mispredictions[c] - g->last.remote_mispredictions[c]);
    }
    sl->wire_up += ns->wire_sent - g->last_net.wire_sent;
    sl->wire_down += ns->wire_received - g->last_net.wire_received;
    sl->snapshots += s->snapshots - g->last.snapshots;
    sl->snapshots_lost += s->snapshot_packets_lost - g->last.snapshot_packets_lost;
    sl->frames++;
    sl->snaps += snaps;
    if (frame_ms > sl->frame_ms_max)
        sl->frame_ms_max = (float)frame_ms;
    double work = predict_ms + rollback_ms + smooth_ms;
    if (work > sl->work_ms_max)
        sl->work_ms_max = (float)work;
    g->frame_ms = frame_ms;
    g->predict_ms = predict_ms;
    g->rollback_ms = rollback_ms;
    g->smooth_ms = smooth_ms;
    g->handle_ms = handle_ms;
    g->last = *s;
    g->last_net = *ns;
    g->last_us = now;
    rates(g, now);
}

bool kp_netgraph_flashing(const kp_netgraph *g, uint64_t now, cl_cause *cause)
{
    if (!g->flash_until_us || now >= g->flash_until_us)
        return false;
    if (cause)
        *cause = g->flash_cause;
    return true;
}

// ---- drawing ---------------------------------------------------------------

static const float white[4] = {0.92f, 0.92f, 0.92f, 1.0f};
static const float dim[4] = {0.65f, 0.65f, 0.65f, 1.0f};
static const float panel[4] = {0.0f, 0.0f, 0.0f, 0.55f};

static void color4(cl_cause c, float a, float out[4])
{
    kp_netgraph_cause_color(c, out);
    out[3] = a;
}

#define NG_TEXT_SCALE 1.5f
#define NG_WIDTH 420.0f
#define NG_STRIP_H 48.0f

// The strip: one column per slot, oldest on the left; a column's height is the
// slot's mispredictions (own and remote, stacked by cause, 4 px each, capped
// at the strip's height); below it a thin line of the slot's worst frame
// time (1 px per 2 ms).
static void strip(const kp_netgraph *g, kp_overlay *o, float x, float y, float w, uint64_t now)
{
    const float col = w / KP_NG_SLOTS;
    kp_overlay_rect(o, x, y, w, NG_STRIP_H, panel);
    cl_cause flash;
    bool flashing = kp_netgraph_flashing(g, now, &flash);
    if (flashing) {
        float f[4];
        color4(flash, 0.35f, f);
        kp_overlay_rect(o, x, y, w, NG_STRIP_H, f);
    }
    float frame_line[2 * KP_NG_SLOTS];
    uint32_t n = 0;
    for (uint32_t k = 0; k < KP_NG_SLOTS; k++) {
        // k = 0 is the oldest slot.
        const kp_ng_slot *sl = &g->slots[(g->head + 1 + k) % KP_NG_SLOTS];
        if (!sl->start_us)
            continue;
        float cx = x + k * col, base = y + NG_STRIP_H;
        for (int c = 0; c < CL_CAUSE_COUNT; c++) {
            uint32_t count = sl->own[c] + sl->remote[c];
            if (!count)
                continue;
            float h = 4.0f * count;
            if (h > base - y)
                h = base - y;
            float rgba[4];
            color4((cl_cause)c, sl->own[c] ? 1.0f : 0.6f, rgba);
            kp_overlay_rect(o, cx, base - h, col > 2 ? col - 1 : col, h, rgba);
            base -= h;
        }
        float fy = y + NG_STRIP_H + 2 + sl->frame_ms_max / 2.0f;
        if (fy > y + NG_STRIP_H + 26)
            fy = y + NG_STRIP_H + 26;
        frame_line[2 * n] = cx + col / 2;
        frame_line[2 * n + 1] = fy;
        n++;
    }
    if (n > 1)
        kp_overlay_lines(o, frame_line, n, 1.0f, dim);
}

uint32_t kp_aimed_lead(const cl_client *cl)
{
    double extra = cl_client_margin_target(cl) - 1.0;
    return cl_client_target_lead(cl) + (extra > 0 ? (uint32_t)(extra + 0.5) : 0u);
}

void kp_netgraph_draw(const kp_netgraph *g, kp_overlay *o, int width, int height, const kp_ng_client *c, uint64_t now,
                      float rect[4])
{
    const cl_stats *s = c->stats;
    char text[1024];
    snprintf(text, sizeof text,
             "fps %.0f  frame %.1f ms (max %.1f)\n"
             "work/frame: predict %.2f  rollback %.2f  smooth %.2f  net %.2f ms\n"
             "rtt %.0f ms  lead %d ticks (target %u)  margin %.2f ticks (target %.0f)  clock x%.4f\n"
             "predicted %u  confirmed %u\n"
             "up %.1f kB/s  down %.1f kB/s  loss %.1f%%  snapshots lost %llu\n"
             "mispredictions/s own: subst %.1f  remote %.1f  inter %.1f  unexpl %.1f  game %.1f\n"
             "                 remote chars: %.1f  %.1f  %.1f  %.1f  %.1f\n"
             "total own: %llu %llu %llu %llu %llu  rollbacks %llu  hash mismatches %llu",
             g->fps, g->frame_ms, g->frame_ms_max, g->predict_ms, g->rollback_ms, g->smooth_ms, g->handle_ms, s->rtt_ms,
             (int)(c->predicted - c->confirmed), c->target_lead, s->input_margin_q8 / 256.0, c->margin_target,
             s->clock_scale, c->predicted, c->confirmed, g->up_Bps / 1000.0, g->down_Bps / 1000.0, g->loss_pct,
             (unsigned long long)s->snapshot_packets_lost, g->own_per_s[0], g->own_per_s[1], g->own_per_s[2],
             g->own_per_s[3], g->own_per_s[CL_CAUSE_GAME_RULE], g->remote_per_s[0], g->remote_per_s[1],
             g->remote_per_s[2], g->remote_per_s[3], g->remote_per_s[CL_CAUSE_GAME_RULE],
             (unsigned long long)s->own_mispredictions[0], (unsigned long long)s->own_mispredictions[1],
             (unsigned long long)s->own_mispredictions[2], (unsigned long long)s->own_mispredictions[3],
             (unsigned long long)s->own_mispredictions[CL_CAUSE_GAME_RULE], (unsigned long long)s->rollbacks,
             (unsigned long long)s->hash_mismatches);
    char last[160] = "";
    if (g->flash_field)
        snprintf(last, sizeof last, "last own misprediction: tick %u, first field %s (%s)", g->flash_tick,
                 g->flash_field, cl_cause_name(g->flash_cause));
    float th = kp_overlay_text_height(text, NG_TEXT_SCALE) + 14;
    float w = kp_overlay_text_width(text, NG_TEXT_SCALE) + 8;
    if (w < NG_WIDTH)
        w = NG_WIDTH;
    float x = (float)width - w - 10, y = (float)height - th - NG_STRIP_H - 28 - 10 - 14;
    if (x < 0)
        x = 0;
    if (y < 0)
        y = 0;
    // The legend above the strip, each cause in its colour.
    float lx = x;
    for (int k = 0; k < CL_CAUSE_COUNT; k++) {
        float rgba[4];
        color4((cl_cause)k, 1.0f, rgba);
        lx += kp_overlay_text_box(o, lx, y, NG_TEXT_SCALE, cl_cause_name((cl_cause)k), rgba) + 8;
    }
    strip(g, o, x, y + 14, w, now);
    float ty = y + 14 + NG_STRIP_H + 28;
    if (last[0]) {
        float tc[4];
        color4(g->flash_cause, 1.0f, tc);
        kp_overlay_text_box(o, x, ty, NG_TEXT_SCALE, last, tc);
    }
    kp_overlay_text_box(o, x, ty + 14, NG_TEXT_SCALE, text, white);
    rect[0] = x - 6, rect[1] = y - 6, rect[2] = w + 12, rect[3] = (float)height - (y - 6);
}
