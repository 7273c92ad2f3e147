// keel-play live mode: the figures of a run (see live_figures.h for their
// invariants). MIT licence, see LICENSE.
#include "live_figures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void kp_figures_init(kp_figures *f) { memset(f, 0, sizeof *f); }

void kp_figures_frame(kp_figures *f, double frame_ms, double work_ms, uint32_t draw_calls)
{
    uint32_t i = (uint32_t)(f->frames % KP_FIG_FRAMES);
    f->frame_ms[i] = (float)frame_ms;
    f->work_ms[i] = (float)work_ms;
    f->draw_calls[i] = draw_calls;
    f->frames++;
}

void kp_figures_break(kp_figures *f) { f->have_prev = false; }

// The own character's feet at `tick - 1 + alpha` on the prediction as it
// stands now; false when those ticks are not kept (older than the confirmed
// one) or the character is not in them.
static bool base_at(const cl_client *cl, uint32_t id, uint32_t tick, float alpha, double out[3])
{
    if (tick == 0)
        return false;
    sim_vec3 pos[2];
    for (int k = 0; k < 2; k++) {
        uint32_t n = 0;
        const sim_char_state *s = cl_client_predicted_at(cl, tick - 1u + (uint32_t)k, &n);
        uint32_t j = 0;
        while (s && j < n && s[j].id != id)
            j++;
        if (!s || j == n)
            return false;
        pos[k] = s[j].position; // copied at once: the next call may reuse the array
    }
    const sim_fx a[3] = {pos[0].x, pos[0].y, pos[0].z}, b[3] = {pos[1].x, pos[1].y, pos[1].z};
    for (int k = 0; k < 3; k++) {
        double from = (double)a[k] / 65536.0, to = (double)b[k] / 65536.0;
        out[k] = from + (to - from) * alpha;
    }
    return true;
}

static double dist3(const float a[3], const float b[3])
{
    double d = 0;
    for (int k = 0; k < 3; k++)
        d += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
    return sqrt(d);
}

void kp_figures_pop(kp_figures *f, double pop_m, double bound_m)
{
    double ratio = bound_m > 0 ? pop_m / bound_m : 0;
    f->pop_frames++;
    if (pop_m > f->largest_pop_m) {
        f->largest_pop_m = pop_m;
        f->pop_bound_m = bound_m;
    }
    if (ratio > f->largest_pop_ratio) {
        f->largest_pop_ratio = ratio;
        f->ratio_pop_m = pop_m;
        f->ratio_bound_m = bound_m;
    }
}

void kp_figures_pose(kp_figures *f, const cl_client *cl, const cl_smooth *smooth, const cl_pose *pose, float dt_s,
                     float alpha)
{
    alpha = alpha < 0 ? 0 : alpha > 1 ? 1 : alpha;
    if (!f->have_first) {
        f->have_first = true;
        memcpy(f->first_drawn, pose->position, sizeof f->first_drawn);
    }
    memcpy(f->last_drawn, pose->position, sizeof f->last_drawn);
    if (pose->snapped) {
        f->snaps++;
    } else if (f->have_prev) {
        f->distance_m += dist3(pose->position, f->prev_drawn);
        double now[3], before[3];
        if (base_at(cl, pose->id, pose->tick, alpha, now) &&
            base_at(cl, pose->id, f->prev_tick, f->prev_alpha, before)) {
            double pop = 0;
            for (int k = 0; k < 3; k++) {
                double drawn = (double)pose->position[k] - f->prev_drawn[k], own = now[k] - before[k];
                pop += (drawn - own) * (drawn - own);
            }
            pop = sqrt(pop);
            const cl_smooth_settings *s = cl_smooth_get_settings(smooth);
            double bound =
                s->half_life_s > 0 ? s->snap_distance * (1.0 - exp2(-(double)dt_s / s->half_life_s)) : s->snap_distance;
            kp_figures_pop(f, pop, bound);
        } else {
            f->pop_unmeasured++;
        }
    }
    f->have_prev = true;
    f->prev_tick = pose->tick;
    f->prev_alpha = alpha;
    memcpy(f->prev_drawn, pose->position, sizeof f->prev_drawn);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

// The q-quantile (0..1) of the first n values of v, sorted in place.
static double quantile(float *v, uint32_t n, double q)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_float);
    uint32_t i = (uint32_t)ceil(q * n);
    return v[i ? i - 1 : 0];
}

void kp_figures_print(const kp_figures *f, FILE *out)
{
    uint32_t n = f->frames < KP_FIG_FRAMES ? (uint32_t)f->frames : KP_FIG_FRAMES;
    static float tmp[KP_FIG_FRAMES];
    memcpy(tmp, f->frame_ms, n * sizeof *tmp);
    double fm = quantile(tmp, n, 0.5), fp = quantile(tmp, n, 0.99);
    memcpy(tmp, f->work_ms, n * sizeof *tmp);
    double wm = quantile(tmp, n, 0.5), wp = quantile(tmp, n, 0.99);
    for (uint32_t i = 0; i < n; i++)
        tmp[i] = (float)f->draw_calls[i];
    double dm = quantile(tmp, n, 0.5), dx = n ? tmp[n - 1] : 0;
    double disp = f->have_first ? dist3(f->first_drawn, f->last_drawn) : 0;
    fprintf(out,
            ",\"frame_ms\":{\"median\":%.3f,\"p99\":%.3f},\"work_ms\":{\"median\":%.3f,\"p99\":%.3f},"
            "\"draw_calls\":{\"median\":%.0f,\"max\":%.0f},\"distance_m\":%.3f,\"displacement_m\":%.3f,"
            "\"largest_pop_m\":%.5f,\"pop_bound_m\":%.5f,\"largest_pop_ratio\":%.4f,\"ratio_pop_m\":%.5f,"
            "\"ratio_bound_m\":%.5f,\"pop_frames\":%llu,\"pop_unmeasured\":%llu,\"snaps\":%llu",
            fm, fp, wm, wp, dm, dx, f->distance_m, disp, f->largest_pop_m, f->pop_bound_m, f->largest_pop_ratio,
            f->ratio_pop_m, f->ratio_bound_m, (unsigned long long)f->pop_frames, (unsigned long long)f->pop_unmeasured,
            (unsigned long long)f->snaps);
}
