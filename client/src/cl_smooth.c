// keel client: display smoothing (cl_smooth.h has the model and its
// invariants). MIT licence, see LICENSE.
//
// The characters are held in id order in `slots`; an update merges the new
// states into `next` and swaps the two arrays, so nothing is allocated after
// creation. Differences between states are taken on the raw fixed-point
// values (int64) and only then turned into floats: equal states differ by
// exactly zero.
#include <keel/cl_smooth.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SMOOTH_COOKIE 0x736d7468u
#define SMOOTH_MAX_CHARACTERS 65536u
#define NO_TICK 0xFFFFFFFFu
#define PI_F 3.14159265358979f
/// Radians per sim_angle unit (65536 per turn).
#define ANGLE_RAD (6.28318530717959 / 65536.0)
/// Offsets shorter than this (metres or radians) are zero: no denormals.
#define OFFSET_EPSILON 1e-7f

typedef struct smooth_slot {
    sim_char_state cur, prev;
    bool has_prev; // prev is drawn from (present at tick - 1, no teleport)
    float off[3], yaw_off, pitch_off;
    bool snapped_pending; // snapped since the last frame
    bool snapped_shown;   // snapped before the last frame: shown by it
} smooth_slot;

struct cl_smooth {
    cl_smooth_settings settings;
    uint32_t capacity, count;
    uint32_t tick; // of every slot's cur, NO_TICK before the first update
    float alpha;   // the last frame's
    smooth_slot *slots, *next;
    cl_smooth_stats stats;
};

cl_smooth_settings cl_smooth_default_settings(void)
{
    cl_smooth_settings s;
    memset(&s, 0, sizeof s);
    s.half_life_s = 0.1f;
    s.snap_distance = 2.0f;
    s.teleport_distance = 3.0f;
    s.cookie = SMOOTH_COOKIE;
    return s;
}

static bool settings_ok(const cl_smooth_settings *s)
{
    return s && s->cookie == SMOOTH_COOKIE && isfinite(s->half_life_s) && s->half_life_s >= 0.0f &&
           s->half_life_s <= 10.0f && isfinite(s->snap_distance) && s->snap_distance > 0.0f &&
           isfinite(s->teleport_distance) && s->teleport_distance > 0.0f;
}

cl_smooth *cl_smooth_create(const cl_smooth_settings *settings, uint32_t max_characters)
{
    if (!settings_ok(settings) || max_characters < 1 || max_characters > SMOOTH_MAX_CHARACTERS)
        return NULL;
    cl_smooth *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->settings = *settings;
    s->capacity = max_characters;
    s->tick = NO_TICK;
    s->alpha = 1.0f;
    s->slots = calloc(max_characters, sizeof *s->slots);
    s->next = calloc(max_characters, sizeof *s->next);
    if (!s->slots || !s->next) {
        cl_smooth_destroy(s);
        return NULL;
    }
    return s;
}

void cl_smooth_destroy(cl_smooth *s)
{
    if (!s)
        return;
    free(s->slots);
    free(s->next);
    free(s);
}

static bool in_id_order(const sim_char_state *c, uint32_t n)
{
    if (n && !c)
        return false;
    for (uint32_t i = 1; i < n; i++)
        if (c[i].id <= c[i - 1].id)
            return false;
    return true;
}

static float len3(const float v[3]) { return sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/// a - b in metres, exact before the conversion to float.
static void diff(const sim_char_state *a, const sim_char_state *b, float out[3])
{
    out[0] = (float)((double)((int64_t)a->position.x - b->position.x) / 65536.0);
    out[1] = (float)((double)((int64_t)a->position.y - b->position.y) / 65536.0);
    out[2] = (float)((double)((int64_t)a->position.z - b->position.z) / 65536.0);
}

/// a - b the short way round, radians in [-pi, pi).
static float angle_diff(sim_angle a, sim_angle b) { return (float)((int16_t)(uint16_t)(a - b) * ANGLE_RAD); }

static float wrap_pi(float r)
{
    if (r >= -PI_F && r < PI_F)
        return r;
    r = fmodf(r + PI_F, 2.0f * PI_F);
    if (r < 0.0f)
        r += 2.0f * PI_F;
    r -= PI_F;
    return r >= PI_F ? -PI_F : r;
}

static void snap(smooth_slot *slot, uint64_t *counter)
{
    memset(slot->off, 0, sizeof slot->off);
    slot->yaw_off = slot->pitch_off = 0.0f;
    slot->snapped_pending = true;
    (*counter)++;
}

/// Adds old - new (position d, angles dyaw and dpitch) to a slot's offsets,
/// or snaps when the offset would grow beyond snap_distance.
static void absorb(cl_smooth *s, smooth_slot *slot, const float d[3], float dyaw, float dpitch)
{
    float size = len3(d);
    if (size == 0.0f && dyaw == 0.0f && dpitch == 0.0f)
        return;
    if (size > s->stats.largest_correction)
        s->stats.largest_correction = size;
    float sum[3] = {slot->off[0] + d[0], slot->off[1] + d[1], slot->off[2] + d[2]};
    if (size > s->settings.snap_distance || len3(sum) > s->settings.snap_distance) {
        snap(slot, &s->stats.snaps_correction);
        return;
    }
    memcpy(slot->off, sum, sizeof sum);
    slot->yaw_off = wrap_pi(slot->yaw_off + dyaw);
    slot->pitch_off = wrap_pi(slot->pitch_off + dpitch);
    s->stats.corrections++;
}

/// The difference old - new between two states of one tick.
static void absorb_states(cl_smooth *s, smooth_slot *slot, const sim_char_state *old, const sim_char_state *now)
{
    float d[3];
    diff(old, now, d);
    absorb(s, slot, d, angle_diff(old->yaw, now->yaw), angle_diff(old->pitch, now->pitch));
}

/// The same tick again with both ticks held: the difference as drawn at the
/// last frame's alpha, so that the drawn pose does not move.
static void absorb_both(cl_smooth *s, smooth_slot *slot, const sim_char_state *cur, const sim_char_state *prev)
{
    float dc[3], dp[3];
    diff(&slot->cur, cur, dc);
    diff(&slot->prev, prev, dp);
    float a = s->alpha, d[3];
    for (int k = 0; k < 3; k++)
        d[k] = dp[k] + (dc[k] - dp[k]) * a;
    float yc = angle_diff(slot->cur.yaw, cur->yaw), yp = angle_diff(slot->prev.yaw, prev->yaw);
    float pc = angle_diff(slot->cur.pitch, cur->pitch), pp = angle_diff(slot->prev.pitch, prev->pitch);
    absorb(s, slot, d, yp + (yc - yp) * a, pp + (pc - pp) * a);
}

bool cl_smooth_correct(cl_smooth *s, uint32_t tick, const sim_char_state *states, uint32_t n)
{
    if (s->tick == NO_TICK || tick != s->tick || !in_id_order(states, n))
        return false;
    uint32_t j = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        smooth_slot *slot = &s->slots[i];
        while (j < n && states[j].id < slot->cur.id)
            j++;
        if (j < n && states[j].id == slot->cur.id) {
            absorb_states(s, slot, &slot->cur, &states[j]);
            slot->cur = states[j];
        }
    }
    return true;
}

bool cl_smooth_update(cl_smooth *s, uint32_t tick, const sim_char_state *cur, uint32_t n, const sim_char_state *prev,
                      uint32_t prev_n)
{
    if (!prev)
        prev_n = 0;
    if (!in_id_order(cur, n) || !in_id_order(prev, prev_n))
        return false;
    s->stats.updates++;
    if (n > s->capacity) {
        s->stats.dropped += n - s->capacity;
        n = s->capacity;
    }
    bool same = s->tick == tick, forward = s->tick != NO_TICK && s->tick + 1u == tick,
         back = s->tick != NO_TICK && tick + 1u == s->tick;
    float teleport = s->settings.teleport_distance;
    uint32_t k = 0, j = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = cur[i].id;
        while (k < s->count && s->slots[k].cur.id < id)
            k++;
        while (j < prev_n && prev[j].id < id)
            j++;
        const smooth_slot *old = k < s->count && s->slots[k].cur.id == id ? &s->slots[k] : NULL;
        const sim_char_state *p = j < prev_n && prev[j].id == id ? &prev[j] : NULL;
        smooth_slot *slot = &s->next[i];
        if (old) {
            *slot = *old;
        } else {
            memset(slot, 0, sizeof *slot);
            snap(slot, &s->stats.snaps_spawn);
        }
        if (old) {
            // The states of a tick held before, as they stand now.
            if (same && p && old->has_prev)
                absorb_both(s, slot, &cur[i], p);
            else if (same)
                absorb_states(s, slot, &old->cur, &cur[i]);
            else if (forward && p)
                absorb_states(s, slot, &old->cur, p);
            else if (back && old->has_prev)
                absorb_states(s, slot, &old->prev, &cur[i]);
        }
        slot->cur = cur[i];
        slot->has_prev = p != NULL;
        if (p) {
            slot->prev = *p;
            float m[3];
            diff(&cur[i], p, m);
            if (len3(m) > teleport) {
                slot->has_prev = false;
                snap(slot, &s->stats.snaps_teleport);
            }
        }
    }
    smooth_slot *t = s->slots;
    s->slots = s->next;
    s->next = t;
    s->count = n;
    s->tick = tick;
    return true;
}

bool cl_smooth_update_client(cl_smooth *s, const cl_client *cl)
{
    if (cl_client_status(cl) != CL_STATUS_PLAYING)
        return false;
    uint32_t p = cl_client_predicted_tick(cl), n = 0, prev_n = 0;
    const sim_char_state *cur = cl_client_predicted_at(cl, p, &n);
    if (!cur) // a rollback put off: the prediction is rebuilt before the next tick
        return false;
    if (s->tick != NO_TICK && s->tick < p - 1u) {
        uint32_t held_n;
        const sim_char_state *held = cl_client_predicted_at(cl, s->tick, &held_n);
        if (held)
            cl_smooth_correct(s, s->tick, held, held_n);
    }
    const sim_char_state *prev = p > 0 ? cl_client_predicted_at(cl, p - 1u, &prev_n) : NULL;
    return cl_smooth_update(s, p, cur, n, prev, prev_n);
}

void cl_smooth_frame(cl_smooth *s, float dt, float alpha)
{
    if (!isfinite(dt) || dt < 0.0f)
        dt = 0.0f;
    if (!isfinite(alpha))
        alpha = 1.0f;
    s->alpha = alpha < 0.0f ? 0.0f : alpha > 1.0f ? 1.0f : alpha;
    float h = s->settings.half_life_s;
    float keep = h > 0.0f ? exp2f(-dt / h) : 0.0f;
    for (uint32_t i = 0; i < s->count; i++) {
        smooth_slot *slot = &s->slots[i];
        for (int k = 0; k < 3; k++) {
            slot->off[k] *= keep;
            if (fabsf(slot->off[k]) < OFFSET_EPSILON)
                slot->off[k] = 0.0f;
        }
        slot->yaw_off *= keep;
        slot->pitch_off *= keep;
        if (fabsf(slot->yaw_off) < OFFSET_EPSILON)
            slot->yaw_off = 0.0f;
        if (fabsf(slot->pitch_off) < OFFSET_EPSILON)
            slot->pitch_off = 0.0f;
        slot->snapped_shown = slot->snapped_pending;
        slot->snapped_pending = false;
    }
}

static void pose_of(const cl_smooth *s, const smooth_slot *slot, cl_pose *out)
{
    memset(out, 0, sizeof *out);
    const sim_char_state *c = &slot->cur;
    const sim_char_state *p = slot->has_prev ? &slot->prev : c;
    double a = s->alpha;
    const sim_fx pc[3] = {c->position.x, c->position.y, c->position.z};
    const sim_fx pp[3] = {p->position.x, p->position.y, p->position.z};
    for (int k = 0; k < 3; k++) {
        double from = (double)pp[k] / 65536.0, to = (double)pc[k] / 65536.0;
        out->position[k] = (float)(from + (to - from) * a + slot->off[k]);
        out->offset[k] = slot->off[k];
    }
    // from prev the short way round to cur, then read as [-pi, pi)
    double yaw = (double)(int16_t)p->yaw + (double)(int16_t)(uint16_t)(c->yaw - p->yaw) * a;
    double pitch = (double)(int16_t)p->pitch + (double)(int16_t)(uint16_t)(c->pitch - p->pitch) * a;
    out->yaw = wrap_pi((float)(yaw * ANGLE_RAD) + slot->yaw_off);
    out->pitch = wrap_pi((float)(pitch * ANGLE_RAD) + slot->pitch_off);
    out->yaw_offset = slot->yaw_off;
    out->pitch_offset = slot->pitch_off;
    out->id = c->id;
    out->tick = s->tick;
    out->flags = c->flags;
    out->move_type = c->move_type;
    out->crouched = (c->flags & SIM_CHAR_CROUCHED) != 0;
    out->snapped = slot->snapped_shown;
}

bool cl_smooth_pose(const cl_smooth *s, uint32_t id, cl_pose *out)
{
    uint32_t lo = 0, hi = s->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->slots[mid].cur.id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= s->count || s->slots[lo].cur.id != id)
        return false;
    pose_of(s, &s->slots[lo], out);
    return true;
}

uint32_t cl_smooth_count(const cl_smooth *s) { return s->count; }

bool cl_smooth_pose_at(const cl_smooth *s, uint32_t i, cl_pose *out)
{
    if (i >= s->count)
        return false;
    pose_of(s, &s->slots[i], out);
    return true;
}

uint32_t cl_smooth_tick(const cl_smooth *s) { return s->tick; }
void cl_smooth_stats_get(const cl_smooth *s, cl_smooth_stats *stats) { *stats = s->stats; }
const cl_smooth_settings *cl_smooth_get_settings(const cl_smooth *s) { return &s->settings; }

float cl_smooth_decay_seconds(const cl_smooth_settings *settings, float from_m, float to_m, float dt)
{
    if (!(from_m > to_m))
        return 0.0f;
    if (!(settings->half_life_s > 0.0f))
        return dt; // the first frame clears it
    if (!(to_m > 0.0f) || !(dt > 0.0f))
        return INFINITY;
    float keep = exp2f(-dt / settings->half_life_s);
    uint32_t frames = 0;
    for (float v = from_m; v >= to_m && frames < 100000000u; v *= keep)
        frames++;
    return (float)frames * dt;
}
