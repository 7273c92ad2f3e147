// keel tests: display smoothing (cl_smooth.h). A synthetic game (ticks at
// 64 Hz, frames at 60 Hz, on a virtual clock) checks the figures the header
// documents, and a real cl_client on the in-memory network with a lossy link
// checks that real rollbacks give bounded, finite offsets. Every figure is
// computed from the virtual clock and printed. MIT licence, see LICENSE.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <keel/cl_smooth.h>

#include "play.h"
#include "test_support.h"

#define TICK_RATE 64
#define FRAME_RATE 60
/// 5 m/s at 64 Hz: 78.125 mm per tick, exactly 5120 raw units.
#define VX_RAW 5120

static sim_char_state at(uint32_t id, int64_t x_raw, int64_t y_raw, int64_t z_raw, sim_angle yaw)
{
    sim_vec3 p = {(sim_fx)x_raw, (sim_fx)y_raw, (sim_fx)z_raw};
    return sim_char_spawn(id, p, yaw);
}

static int64_t raw(double metres) { return (int64_t)llround(metres * 65536.0); }

static float dist3(const float a[3], const float b[3])
{
    float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static float len3(const float v[3]) { return sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/// A state's feet position in metres, as floats.
static void feet(const sim_char_state *c, float out[3])
{
    out[0] = (float)c->position.x / 65536.0f;
    out[1] = (float)c->position.y / 65536.0f;
    out[2] = (float)c->position.z / 65536.0f;
}

// ---- the synthetic game --------------------------------------------------------------

/// A character walking along +x at 5 m/s whose predicted track is shifted by
/// (sx, sz) metres from frame `correct_frame` on (a rollback that moved it).
typedef struct walk {
    double sx, sz;
    uint32_t correct_frame;
} walk;

static sim_char_state walk_state(const walk *w, uint32_t tick, bool corrected)
{
    return at(1, (int64_t)tick * VX_RAW + (corrected ? raw(w->sx) : 0), 0, corrected ? raw(w->sz) : 0, 0);
}

/// Hands the smoother the states of `tick` and tick - 1 as the game would
/// after predicting it (or after a rollback re-simulated it).
static void walk_update(cl_smooth *sm, const walk *w, uint32_t tick, bool corrected)
{
    sim_char_state cur = walk_state(w, tick, corrected), prev = walk_state(w, tick - 1u, corrected);
    cr_assert(cl_smooth_update(sm, tick, &cur, 1, &prev, 1));
}

typedef struct walk_result {
    float max_step;       ///< largest frame-to-frame move beyond the walk's own motion, metres
    float first_step;     ///< that move in the frame of the correction
    int frames_below_1mm; ///< frames drawn from the correction's on until |offset| < 1 mm
    float end_error;      ///< drawn against the corrected track at the end, metres
    float max_offset;     ///< as drawn (after the frame's decay)
    bool snapped_at_correction, snapped_after;
    cl_smooth_stats stats;
} walk_result;

static void run_walk(const walk *w, uint32_t frames, walk_result *r)
{
    memset(r, 0, sizeof *r);
    r->frames_below_1mm = -1;
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, 8);
    cr_assert_not_null(sm);
    const float dt = 1.0f / FRAME_RATE;
    uint32_t held = 0;
    float last_rel[3] = {0, 0, 0};
    for (uint32_t k = 1; k <= frames; k++) {
        // the clock: tick T is predicted once the time passes T - 1
        double ticks = (double)k * TICK_RATE / FRAME_RATE;
        uint32_t T = (uint32_t)floor(ticks) + 1u;
        float alpha = (float)(ticks - floor(ticks));
        bool corrected = k >= w->correct_frame;
        if (k == w->correct_frame)
            walk_update(sm, w, held, true); // the rollback, before predicting on
        for (uint32_t t = held + 1u; t <= T; t++)
            walk_update(sm, w, t, corrected);
        held = T;
        cl_smooth_frame(sm, dt, alpha);
        cl_pose pose;
        cr_assert(cl_smooth_pose(sm, 1, &pose));
        // the walk's own motion: where the uncorrected track is drawn now
        float base[3] = {(float)(5.0 * ((double)T - 1.0 + alpha) / TICK_RATE), 0, 0};
        float rel[3] = {pose.position[0] - base[0], pose.position[1] - base[1], pose.position[2] - base[2]};
        float step = dist3(rel, last_rel);
        memcpy(last_rel, rel, sizeof rel);
        if (k == w->correct_frame) {
            r->first_step = step;
            r->snapped_at_correction = pose.snapped;
        } else if (k == w->correct_frame + 1u) {
            r->snapped_after = pose.snapped;
        }
        if (k > 1 && step > r->max_step)
            r->max_step = step;
        float off = len3(pose.offset);
        if (off > r->max_offset)
            r->max_offset = off;
        if (k >= w->correct_frame && r->frames_below_1mm < 0 && off < 0.001f)
            r->frames_below_1mm = (int)(k - w->correct_frame) + 1; // frames drawn, the correction's included
        if (k == frames) {
            float target[3] = {base[0] + (float)w->sx, 0, (float)w->sz};
            r->end_error = dist3(pose.position, target);
        }
    }
    cl_smooth_stats_get(sm, &r->stats);
    cl_smooth_destroy(sm);
}

Test(smooth, a_correction_of_0_3_m_moves_the_drawn_position_by_a_bounded_step_and_decays)
{
    cl_smooth_settings st = cl_smooth_default_settings();
    const float dt = 1.0f / FRAME_RATE;
    // the documented figures: a fraction 1 - 2^(-dt/h) of the offset per frame
    float fraction = 1.0f - exp2f(-dt / st.half_life_s);
    float bound = 0.3f * fraction;
    float decay_s = cl_smooth_decay_seconds(&st, 0.3f, 0.001f, dt);
    cr_expect_float_eq(fraction, 0.109f, 0.0005f);
    cr_expect_float_eq(decay_s, 50.0f / 60.0f, 1e-4f, "decay below 1 mm: %.4f s", (double)decay_s);
    const walk cases[2] = {{0.0, 0.3, 30}, {-0.3, 0.0, 30}}; // across the motion, and back along it
    for (int c = 0; c < 2; c++) {
        walk_result r;
        run_walk(&cases[c], 120, &r);
        cr_log_info("smooth: 0.3 m correction %s at 60 Hz frames, 64 Hz ticks, half-life %.2f s: largest step "
                    "beyond the own motion %.1f mm per frame (bound %.1f mm = %.1f%% of the correction), first "
                    "%.1f mm; below 1 mm after %d frames (%.3f s; documented %.3f s); end error %.3f mm\n",
                    c ? "along the motion" : "across the motion", (double)st.half_life_s, r.max_step * 1e3, bound * 1e3,
                    fraction * 100.0, r.first_step * 1e3, r.frames_below_1mm, r.frames_below_1mm / 60.0,
                    (double)decay_s, r.end_error * 1e3);
        printf("smooth: step per frame %.1f mm (bound %.1f mm), below 1 mm after %d frames = %.3f s\n",
               r.max_step * 1e3, bound * 1e3, r.frames_below_1mm, r.frames_below_1mm / 60.0);
        cr_expect_leq(r.max_step, bound + 1e-4f, "step %.5f m above the bound %.5f m", (double)r.max_step,
                      (double)bound);
        cr_expect_geq(r.first_step, bound - 1e-4f, "smoothed, not snapped: first step %.5f m", (double)r.first_step);
        cr_expect(!r.snapped_at_correction && !r.snapped_after);
        cr_expect_geq(r.frames_below_1mm, 1);
        cr_expect_leq(r.frames_below_1mm / 60.0, (double)decay_s + 1e-6, "decayed after %d frames", r.frames_below_1mm);
        cr_expect_lt(r.end_error, 1e-3f);
        cr_expect_float_eq(r.stats.largest_correction, 0.3f, 1e-4f);
        cr_expect_float_eq(r.max_offset, 0.3f * (1.0f - fraction), 1e-4f, "as drawn: decayed once");
        cr_expect_eq(r.stats.corrections, 1);
        cr_expect_eq(r.stats.snaps_correction + r.stats.snaps_teleport, 0);
        cr_expect_eq(r.stats.snaps_spawn, 1); // the first update
    }
}

Test(smooth, a_correction_above_the_snap_distance_snaps)
{
    const walk w = {0.0, 2.5, 30};
    walk_result r;
    run_walk(&w, 60, &r);
    cr_expect_eq(r.stats.snaps_correction, 1);
    cr_expect_eq(r.stats.corrections, 0);
    cr_expect(r.snapped_at_correction, "the frame after the snap shows it");
    cr_expect(!r.snapped_after, "and the next one not");
    cr_expect_eq(r.max_offset, 0.0f);
    cr_expect_lt(r.end_error, 1e-4f);
    cr_expect_float_eq(r.stats.largest_correction, 2.5f, 1e-4f);
}

Test(smooth, equal_scenes_give_zero_offset)
{
    const walk w = {0.0, 0.0, 30}; // the "correction" changes nothing
    walk_result r;
    run_walk(&w, 90, &r);
    cr_expect_eq(r.max_offset, 0.0f);
    cr_expect_eq(r.stats.corrections, 0);
    cr_expect_eq(r.max_step, 0.0f, "drawn exactly on the track: %g", (double)r.max_step);
    // the same states again and again: still exactly zero
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, 4);
    sim_char_state cur[2] = {at(3, raw(1.25), raw(0.5), raw(-7.0), 1234), at(9, raw(-3.0), 0, raw(2.0), 40000)};
    sim_char_state prev[2] = {at(3, raw(1.2), raw(0.5), raw(-7.0), 1200), at(9, raw(-3.0), 0, raw(2.1), 40100)};
    for (int i = 0; i < 5; i++) {
        cr_assert(cl_smooth_update(sm, 100, cur, 2, prev, 2));
        cl_smooth_frame(sm, 1.0f / 60, 0.5f);
    }
    for (uint32_t i = 0; i < cl_smooth_count(sm); i++) {
        cl_pose p;
        cr_assert(cl_smooth_pose_at(sm, i, &p));
        cr_expect(p.offset[0] == 0.0f && p.offset[1] == 0.0f && p.offset[2] == 0.0f);
        cr_expect(p.yaw_offset == 0.0f && p.pitch_offset == 0.0f);
    }
    cl_smooth_destroy(sm);
}

Test(smooth, a_respawn_snaps)
{
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, 4);
    sim_char_state a = at(1, 0, 0, 0, 0), b = at(2, raw(10.0), 0, 0, 0);
    sim_char_state both[2] = {a, b};
    cr_assert(cl_smooth_update(sm, 10, both, 2, NULL, 0));
    cl_smooth_frame(sm, 1.0f / 60, 1.0f);
    cl_pose p;
    cr_assert(cl_smooth_pose(sm, 2, &p));
    cr_expect(p.snapped, "first seen: snapped");
    // a correction of 0.5 m for character 2: an offset
    both[1] = at(2, raw(10.5), 0, 0, 0);
    cr_assert(cl_smooth_update(sm, 10, both, 2, NULL, 0));
    cl_smooth_frame(sm, 1.0f / 60, 1.0f);
    cr_assert(cl_smooth_pose(sm, 2, &p));
    cr_expect(!p.snapped);
    cr_expect_float_eq(p.offset[0], -0.5f * exp2f(-1.0f / 60 / st.half_life_s), 1e-5f);
    // it leaves, and comes back 1 m away (under the snap distance): a respawn
    cr_assert(cl_smooth_update(sm, 11, &a, 1, NULL, 0));
    cr_expect(!cl_smooth_pose(sm, 2, &p), "gone when not in the update");
    sim_char_state back[2] = {a, at(2, raw(11.5), 0, 0, 0)};
    cr_assert(cl_smooth_update(sm, 12, back, 2, NULL, 0));
    cl_smooth_frame(sm, 1.0f / 60, 1.0f);
    cr_assert(cl_smooth_pose(sm, 2, &p));
    cr_expect(p.snapped);
    cr_expect(p.offset[0] == 0.0f && p.offset[1] == 0.0f && p.offset[2] == 0.0f);
    cr_expect_float_eq(p.position[0], 11.5f, 1e-6f);
    cl_smooth_stats s;
    cl_smooth_stats_get(sm, &s);
    cr_expect_eq(s.snaps_spawn, 3); // two at first, one on the way back
    cl_smooth_destroy(sm);
}

Test(smooth, a_teleport_snaps_and_draws_the_new_place)
{
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, 4);
    sim_char_state prev = at(1, 0, 0, 0, 0), cur = at(1, raw(0.1), 0, 0, 0);
    cr_assert(cl_smooth_update(sm, 1, &cur, 1, &prev, 1));
    cl_smooth_frame(sm, 1.0f / 60, 0.5f);
    prev = cur;
    cur = at(1, raw(40.0), raw(2.0), raw(-3.0), 0); // 40 m in one tick
    cr_assert(cl_smooth_update(sm, 2, &cur, 1, &prev, 1));
    cl_smooth_frame(sm, 1.0f / 60, 0.5f);
    cl_pose p;
    cr_assert(cl_smooth_pose(sm, 1, &p));
    cr_expect(p.snapped);
    float want[3] = {40.0f, 2.0f, -3.0f};
    cr_expect_lt(dist3(p.position, want), 1e-5f, "drawn at the new place, not on the way there");
    cl_smooth_stats s;
    cl_smooth_stats_get(sm, &s);
    cr_expect_eq(s.snaps_teleport, 1);
    cl_smooth_destroy(sm);
}

Test(smooth, angles_go_the_short_way_and_corrections_are_smoothed)
{
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, 4);
    sim_char_state prev = at(1, 0, 0, 0, SIM_ANGLE_DEG(350)), cur = at(1, 0, 0, 0, SIM_ANGLE_DEG(10));
    prev.pitch = SIM_ANGLE_DEG(-10);
    cur.pitch = SIM_ANGLE_DEG(10);
    cr_assert(cl_smooth_update(sm, 5, &cur, 1, &prev, 1));
    cl_smooth_frame(sm, 0, 0.5f);
    cl_pose p;
    cr_assert(cl_smooth_pose(sm, 1, &p));
    cr_expect_float_eq(p.yaw, 0.0f, 1e-4f, "yaw %f", (double)p.yaw);
    cr_expect_float_eq(p.pitch, 0.0f, 1e-4f);
    cl_smooth_frame(sm, 0, 0.25f);
    cr_assert(cl_smooth_pose(sm, 1, &p));
    cr_expect_float_eq(p.yaw, -5.0f * 3.14159265f / 180.0f, 1e-4f, "yaw %f", (double)p.yaw);
    // the same tick with the yaw 20 degrees further: no jump, then a decay
    sim_char_state cur2 = cur, prev2 = prev;
    cur2.yaw = (sim_angle)(cur.yaw + SIM_ANGLE_DEG(20));
    prev2.yaw = (sim_angle)(prev.yaw + SIM_ANGLE_DEG(20));
    float before = p.yaw;
    cr_assert(cl_smooth_update(sm, 5, &cur2, 1, &prev2, 1));
    cl_smooth_frame(sm, 0, 0.25f);
    cr_assert(cl_smooth_pose(sm, 1, &p));
    cr_expect_float_eq(p.yaw, before, 1e-4f, "absorbed: %f against %f", (double)p.yaw, (double)before);
    for (int i = 0; i < 120; i++)
        cl_smooth_frame(sm, 1.0f / 60, 0.25f);
    cr_assert(cl_smooth_pose(sm, 1, &p));
    cr_expect_float_eq(p.yaw, 15.0f * 3.14159265f / 180.0f, 1e-4f, "yaw %f", (double)p.yaw);
    cl_smooth_destroy(sm);
}

Test(smooth, corrections_are_found_across_several_ticks_and_one_tick_back)
{
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, 4);
    const walk w = {0.0, 0.25, 0};
    walk_update(sm, &w, 10, false);
    cl_smooth_frame(sm, 0, 1.0f);
    // four ticks predicted at once after a rollback that moved tick 10 too:
    // cl_smooth_correct with the new states of the tick held, then the newest
    sim_char_state t10 = walk_state(&w, 10, true);
    cr_expect(cl_smooth_correct(sm, 10, &t10, 1));
    walk_update(sm, &w, 14, true);
    cl_smooth_frame(sm, 0, 1.0f);
    cl_pose p;
    cr_assert(cl_smooth_pose(sm, 1, &p));
    cr_expect_float_eq(p.offset[2], -0.25f, 1e-6f, "offset %f", (double)p.offset[2]);
    cr_expect_float_eq(p.position[2], 0.0f, 1e-6f, "drawn where it was");
    // one tick back (a client that restarted its prediction from an older
    // confirmed tick), moved by another 0.1 m: old prev against new cur
    sim_char_state t13 = at(1, 13 * VX_RAW, 0, raw(0.35), 0);
    cr_assert(cl_smooth_update(sm, 13, &t13, 1, NULL, 0));
    cl_smooth_frame(sm, 0, 1.0f);
    cr_assert(cl_smooth_pose(sm, 1, &p));
    cr_expect_float_eq(p.offset[2], -0.35f, 1e-4f, "offset %f", (double)p.offset[2]); // (0.35 m is not exact in Q16.16)
    cr_expect_float_eq(p.position[2], 0.0f, 1e-6f);
    cl_smooth_stats s;
    cl_smooth_stats_get(sm, &s);
    cr_expect_eq(s.corrections, 2);
    cl_smooth_destroy(sm);
}

Test(smooth, the_drawn_position_never_lags_more_than_a_tick_plus_the_offset)
{
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, 16);
    keel_rng rng = {77};
    enum { N = 6 };
    int64_t pos[N][3], vel[N][3];
    sim_char_state cur[N], prev[N];
    for (int i = 0; i < N; i++)
        for (int a = 0; a < 3; a++) {
            pos[i][a] = keel_rng_range(&rng, -raw(20.0), raw(20.0));
            vel[i][a] = keel_rng_range(&rng, -raw(0.15), raw(0.15)); // up to 9.6 m/s per axis
        }
    float worst = 0;
    uint64_t checks = 0;
    for (uint32_t tick = 1; tick < 2000; tick++) {
        for (int i = 0; i < N; i++) {
            prev[i] = at((uint32_t)i + 1, pos[i][0], pos[i][1], pos[i][2], (sim_angle)(tick * 37u * (uint32_t)i));
            if (keel_rng_range(&rng, 0, 99) < 5) // a turn
                for (int a = 0; a < 3; a++)
                    vel[i][a] = keel_rng_range(&rng, -raw(0.15), raw(0.15));
            for (int a = 0; a < 3; a++)
                pos[i][a] += vel[i][a];
            cur[i] = at((uint32_t)i + 1, pos[i][0], pos[i][1], pos[i][2], (sim_angle)((tick + 1) * 37u * (uint32_t)i));
        }
        cr_assert(cl_smooth_update(sm, tick, cur, N, prev, N));
        if (keel_rng_range(&rng, 0, 99) < 10) {
            // a rollback: this tick's states move by up to 0.6 m (or, once in
            // a while, by more than the snap distance)
            int64_t reach = keel_rng_range(&rng, 0, 9) == 0 ? raw(3.0) : raw(0.35);
            for (int i = 0; i < N; i++)
                for (int a = 0; a < 3; a++)
                    pos[i][a] += keel_rng_range(&rng, -reach, reach);
            for (int i = 0; i < N; i++)
                cur[i] = at((uint32_t)i + 1, pos[i][0], pos[i][1], pos[i][2], cur[i].yaw);
            cr_assert(cl_smooth_update(sm, tick, cur, N, prev, N));
        }
        for (int f = 0; f < 2; f++) {
            float alpha = (float)keel_rng_range(&rng, 0, 1000) / 1000.0f;
            cl_smooth_frame(sm, 1.0f / 120, alpha);
            for (int i = 0; i < N; i++) {
                cl_pose p;
                cr_assert(cl_smooth_pose(sm, (uint32_t)i + 1, &p));
                float c[3];
                feet(&cur[i], c);
                float q[3];
                feet(&prev[i], q);
                float undrawn[3] = {p.position[0] - p.offset[0], p.position[1] - p.offset[1],
                                    p.position[2] - p.offset[2]};
                float lag = dist3(undrawn, c), tick_motion = dist3(c, q);
                float off = len3(p.offset);
                cr_assert(isfinite(lag) && isfinite(off));
                cr_assert_leq(off, st.snap_distance + 1e-5f, "offset %f", (double)off);
                cr_assert_leq(lag, tick_motion + 1e-4f, "lag %f beyond a tick's motion %f", (double)lag,
                              (double)tick_motion);
                // the drawn position lags the predicted one by at most a tick's motion plus the offset
                cr_assert_leq(dist3(p.position, c), tick_motion + off + 1e-4f);
                if (lag - tick_motion > worst)
                    worst = lag - tick_motion;
                checks++;
            }
        }
    }
    cl_smooth_stats s;
    cl_smooth_stats_get(sm, &s);
    cr_log_info("smooth: %llu poses checked: lag within a tick's motion (worst excess %.2g m); corrections %llu, "
                "snaps %llu (correction) %llu (teleport), largest correction %.3f m\n",
                (unsigned long long)checks, (double)worst, (unsigned long long)s.corrections,
                (unsigned long long)s.snaps_correction, (unsigned long long)s.snaps_teleport,
                (double)s.largest_correction);
    cr_expect_gt(s.corrections, 100);
    cr_expect_gt(s.snaps_correction, 0);
    cl_smooth_destroy(sm);
}

Test(smooth, bad_input_is_refused)
{
    cl_smooth_settings st = cl_smooth_default_settings();
    cr_expect_null(cl_smooth_create(&st, 0));
    cr_expect_null(cl_smooth_create(&st, 65537));
    cl_smooth_settings bad = st;
    bad.half_life_s = -1;
    cr_expect_null(cl_smooth_create(&bad, 4));
    bad = st;
    bad.snap_distance = NAN;
    cr_expect_null(cl_smooth_create(&bad, 4));
    bad = st;
    bad.cookie = 0;
    cr_expect_null(cl_smooth_create(&bad, 4));
    cl_smooth *sm = cl_smooth_create(&st, 2);
    sim_char_state unordered[2] = {at(5, 0, 0, 0, 0), at(4, 0, 0, 0, 0)};
    cr_expect(!cl_smooth_update(sm, 1, unordered, 2, NULL, 0));
    cr_expect_eq(cl_smooth_count(sm), 0);
    sim_char_state three[3] = {at(1, 0, 0, 0, 0), at(2, 0, 0, 0, 0), at(3, 0, 0, 0, 0)};
    cr_expect(cl_smooth_update(sm, 1, three, 3, NULL, 0));
    cl_smooth_stats s;
    cl_smooth_stats_get(sm, &s);
    cr_expect_eq(cl_smooth_count(sm), 2);
    cr_expect_eq(s.dropped, 1);
    cr_expect(!cl_smooth_correct(sm, 7, three, 2), "not the tick held");
    cl_smooth_frame(sm, NAN, NAN);
    cl_pose p;
    cr_expect(cl_smooth_pose(sm, 2, &p));
    cr_expect(isfinite(p.position[0]));
    cr_expect(!cl_smooth_pose(sm, 3, &p));
    cl_smooth_destroy(sm);
    cl_smooth_destroy(NULL);
}

// ---- a real client -------------------------------------------------------------------

Test(smooth, a_real_client_on_a_lossy_link_keeps_offsets_bounded_and_finite, .timeout = 600)
{
    // 150 ms round trip, 20 ms jitter, 5% loss, 1% duplication each way;
    // random bots change their commands, so remote characters are
    // mispredicted and rolled back
    net_memory_link link = {75, 20, 50, 10};
    play p;
    play_init(&p, 4, CL_BOT_RANDOM, &link, &link, 11);
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = cl_smooth_create(&st, NET_MAX_CHARACTERS);
    cr_assert_not_null(sm);
    const uint64_t tick_us = 1000000u / (uint64_t)p.settings.tick_rate;
    uint32_t frames = 0, last_frame_ms = 0;
    float largest_offset = 0;
    uint64_t poses = 0;
    for (uint32_t ms = 1; ms <= 12000; ms++) {
        play_ms(&p, true);
        cl_client *cl = p.cls[0];
        if (cl_client_status(cl) != CL_STATUS_PLAYING)
            continue;
        cl_smooth_update_client(sm, cl);
        if (ms * FRAME_RATE / 1000u == (ms - 1u) * FRAME_RATE / 1000u || cl_smooth_tick(sm) == 0xFFFFFFFFu)
            continue;
        // a frame at 60 Hz: alpha from the client's own tick clock
        double until_next = (double)(int64_t)(p.next_us[0] - (uint64_t)ms * 1000u);
        float alpha = (float)(1.0 - until_next / (double)tick_us);
        cl_smooth_frame(sm, (float)(ms - last_frame_ms) / 1000.0f, alpha);
        last_frame_ms = ms;
        frames++;
        uint32_t P = cl_client_predicted_tick(cl), n, pn;
        const sim_char_state *cur = cl_client_predicted_at(cl, P, &n);
        const sim_char_state *prev = cl_client_predicted_at(cl, P - 1u, &pn);
        cr_assert_not_null(cur);
        cr_assert_eq(cl_smooth_tick(sm), P);
        cr_assert_eq(cl_smooth_count(sm), n);
        for (uint32_t i = 0; i < n; i++) {
            cl_pose pose;
            cr_assert(cl_smooth_pose(sm, cur[i].id, &pose));
            float off = len3(pose.offset);
            cr_assert(isfinite(off) && isfinite(pose.position[0]) && isfinite(pose.position[1]) &&
                      isfinite(pose.position[2]) && isfinite(pose.yaw) && isfinite(pose.pitch));
            cr_assert_leq(off, st.snap_distance + 1e-5f);
            if (off > largest_offset)
                largest_offset = off;
            float c[3];
            feet(&cur[i], c);
            float motion = 0;
            if (prev) {
                for (uint32_t j = 0; j < pn; j++)
                    if (prev[j].id == cur[i].id) {
                        float q[3];
                        feet(&prev[j], q);
                        motion = dist3(c, q);
                    }
            }
            cr_assert_leq(dist3(pose.position, c), motion + off + 1e-3f, "character %u at tick %u", cur[i].id, P);
            poses++;
        }
    }
    cl_client *cl = p.cls[0];
    uint32_t n;
    uint32_t C = cl_client_confirmed_tick(cl), P = cl_client_predicted_tick(cl);
    cr_expect_null(cl_client_predicted_at(cl, P + 1u, &n));
    cr_expect_eq(n, 0);
    if (C > 0)
        cr_expect_null(cl_client_predicted_at(cl, C - 1u, &n));
    cl_stats cs;
    cl_client_stats(cl, &cs);
    cl_smooth_stats ss;
    cl_smooth_stats_get(sm, &ss);
    cr_log_info("smooth: real client, 4 bots, 150 ms round trip, 5%% loss, 12 s: %u frames, %llu poses; client "
                "rollbacks %llu (%llu ticks re-simulated); %llu corrections absorbed, largest %.3f m; snaps: %llu "
                "spawn, %llu correction, %llu teleport; largest offset drawn %.3f m (snap distance %.1f m)\n",
                frames, (unsigned long long)poses, (unsigned long long)cs.rollbacks,
                (unsigned long long)cs.resimulated_ticks, (unsigned long long)ss.corrections,
                (double)ss.largest_correction, (unsigned long long)ss.snaps_spawn,
                (unsigned long long)ss.snaps_correction, (unsigned long long)ss.snaps_teleport, (double)largest_offset,
                (double)st.snap_distance);
    cr_expect_gt(frames, 600);
    cr_expect_gt(cs.rollbacks, 0);
    cr_expect_gt(ss.corrections, 0, "real rollbacks moved drawn characters");
    cr_expect_gt(largest_offset, 0.0f);
    cr_expect_eq(cs.hash_mismatches, 0);
    cl_smooth_destroy(sm);
    play_free(&p);
}

// Display smoothing that writes into the simulated state causes endless
// rollbacks in some engines. cl_smooth only reads: the same session on the
// virtual clock, once with a smoother updated every millisecond and drawn
// at 60 Hz and once without, gives the client the same rollbacks, the same
// mispredictions and the same predicted scene, bit for bit.
static void smooth_session(bool with_smoothing, cl_stats *out, uint64_t *pred_hash, uint64_t *corrections)
{
    net_memory_link link = {75, 20, 50, 10};
    play p;
    play_init(&p, 4, CL_BOT_RANDOM, &link, &link, 23);
    cl_smooth_settings st = cl_smooth_default_settings();
    cl_smooth *sm = with_smoothing ? cl_smooth_create(&st, NET_MAX_CHARACTERS) : NULL;
    for (uint32_t ms = 1; ms <= 6000; ms++) {
        play_ms(&p, true);
        if (sm && cl_client_status(p.cls[0]) == CL_STATUS_PLAYING) {
            cl_smooth_update_client(sm, p.cls[0]);
            if (ms % 17u == 0)
                cl_smooth_frame(sm, 0.017f, 0.5f);
        }
    }
    cl_client_stats(p.cls[0], out);
    *pred_hash = sim_scene_hash(cl_client_predicted(p.cls[0]));
    cl_smooth_stats ss = {0};
    if (sm)
        cl_smooth_stats_get(sm, &ss);
    *corrections = ss.corrections;
    cl_smooth_destroy(sm);
    play_free(&p);
}

Test(smooth, smoothing_changes_nothing_the_client_simulates, .timeout = 600)
{
    cl_stats a, b;
    uint64_t ha, hb, ca, cb;
    smooth_session(false, &a, &ha, &ca);
    smooth_session(true, &b, &hb, &cb);
    cr_log_info("smooth: 6 s at a 150 ms round trip with 5%% loss, with and without a smoother (%llu corrections "
                "absorbed): rollbacks %llu / %llu, re-simulated ticks %llu / %llu, predicted hash %016llx / %016llx\n",
                (unsigned long long)cb, (unsigned long long)a.rollbacks, (unsigned long long)b.rollbacks,
                (unsigned long long)a.resimulated_ticks, (unsigned long long)b.resimulated_ticks,
                (unsigned long long)ha, (unsigned long long)hb);
    cr_expect_gt(cb, 0, "the smoother absorbed corrections");
    cr_expect_gt(a.rollbacks, 0);
    cr_expect_eq(a.rollbacks, b.rollbacks);
    cr_expect_eq(a.resimulated_ticks, b.resimulated_ticks);
    cr_expect_eq(a.predicted_ticks, b.predicted_ticks);
    for (int c = 0; c < CL_CAUSE_COUNT; c++) {
        cr_expect_eq(a.own_mispredictions[c], b.own_mispredictions[c]);
        cr_expect_eq(a.remote_mispredictions[c], b.remote_mispredictions[c]);
    }
    cr_expect_eq(ha, hb, "the predicted scene is the same bit for bit");
}
