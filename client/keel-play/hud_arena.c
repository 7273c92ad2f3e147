// keel-play: keel-arena's HUD (game_hud.h's interface; arena's state read
// through its public header, games/arena/arena.h). MIT licence, see LICENSE.
//
// Invariants:
// - It reads arena_player and arena_state only where the scene's game is
//   keel-arena with these very structs (fits: the name and the schemas'
//   sizes), and its settings from the definition's `user` (arena_settings).
// - Events come from two observed scenes (the last one kept as `seen`
//   lines and a copy of the game-wide state): a rail shot is a rail
//   interval that went up, a hit is the own `hits` that went up (down: a
//   rollback took it back, shown as a cancelled marker), a death and a
//   respawn are `dead` changing, a rocket fired is a slot that went live
//   (or restarted its time), an explosion a live slot that ended.
// - Tracers are drawn where the shot went as the observed scene shows it:
//   a ray (sim_scene_raycast) from the shooter's eye along its view, the
//   shooter aside; they are pictures, never rules.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_angle.h>

#include "arena.h"
#include "game_hud.h"

#define MAX_SEEN 256u
#define TRACERS 32u
#define BLASTS 32u
#define TRACER_S 0.6
#define BLAST_S 0.4
#define MARKER_S 0.35
#define FEED_S 8u // seconds of the match a kill stays in the feed

typedef struct seen {
    uint32_t id;
    arena_player p;
} seen;

typedef struct tracer {
    float a[3], b[3];
    double t;
    uint32_t owner;
} tracer;

typedef struct blast {
    float at[3];
    double t;
} blast;

typedef struct hud {
    const sim_game *game;
    const arena_settings *st;
    sim_move_settings settings;
    uint32_t tick_rate;
    seen seen[MAX_SEEN];
    uint32_t seen_count, seen_tick, own;
    bool have_seen;
    arena_state state; ///< the game-wide state last observed
    arena_player me;   ///< the own character's, when have_me
    bool have_me;
    tracer tracers[TRACERS];
    uint32_t next_tracer;
    blast blasts[BLASTS];
    uint32_t next_blast;
    double marker_t;
    bool marker_cancelled;
    uint64_t hit_markers, markers_cancelled, rail_shots, rockets, explosions, deaths, respawns;
    uint32_t victim;
    int32_t victim_health, victim_damage;
} hud;

static const float white[4] = {0.95f, 0.95f, 0.95f, 1}, red[4] = {1.0f, 0.3f, 0.25f, 1},
                   green[4] = {0.4f, 1.0f, 0.45f, 1}, amber[4] = {1.0f, 0.75f, 0.2f, 1};

static bool fits(const sim_game *game)
{
    const sim_game_def *d = sim_game_definition(game);
    return d->command.size == sizeof(arena_command) && d->character.size == sizeof(arena_player) &&
           d->state.size == sizeof(arena_state) && d->user != NULL;
}

static void reset(void *self)
{
    hud *h = self;
    h->have_seen = false;
    h->seen_count = 0;
}

static void *create(const sim_game *game, const sim_move_settings *settings)
{
    hud *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->game = game;
    h->st = sim_game_definition(game)->user;
    h->settings = *settings;
    h->tick_rate = settings->tick_rate > 0 ? (uint32_t)settings->tick_rate : 64u;
    h->marker_t = -1e9;
    return h;
}

static void destroy(void *self) { free(self); }

static void fx3(sim_vec3 v, float out[3])
{
    out[0] = (float)v.x / 65536.0f;
    out[1] = (float)v.y / 65536.0f;
    out[2] = (float)v.z / 65536.0f;
}

static const seen *find_seen(const hud *h, uint32_t id)
{
    for (uint32_t i = 0; i < h->seen_count; i++)
        if (h->seen[i].id == id)
            return &h->seen[i];
    return NULL;
}

// A rail shot by c: from its eye along its view to what the ray meets.
static void add_tracer(hud *h, const sim_scene *scene, const sim_char_state *c, double now, bool count)
{
    sim_fx eye = (c->flags & SIM_CHAR_CROUCHED) ? h->st->eye_height_crouched : h->st->eye_height;
    sim_ray_input ray = {sim_v3(c->position.x, c->position.y + eye, c->position.z),
                         sim_v3_scale(sim_angle_dir(c->yaw, c->pitch), h->st->rail_range)};
    sim_ray_result hit;
    uint32_t who = 0;
    sim_vec3 end = sim_v3_add(ray.origin, ray.displacement);
    if (sim_scene_raycast(scene, &ray, c->id, &hit, &who) && hit.hit)
        end = hit.point;
    tracer *t = &h->tracers[h->next_tracer++ % TRACERS];
    fx3(ray.origin, t->a);
    fx3(end, t->b);
    t->t = now;
    t->owner = c->id;
    h->rail_shots += count;
}

static void add_blast(hud *h, sim_vec3 at, double now)
{
    blast *b = &h->blasts[h->next_blast++ % BLASTS];
    fx3(at, b->at);
    b->t = now;
    h->explosions++;
}

// The own character's hits, then every character's changes since the last
// observed scene.
static void events(hud *h, const sim_scene *scene, const arena_state *s, double now)
{
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(scene, &n);
    for (uint32_t i = 0; i < n; i++) {
        const arena_player *p = sim_scene_game_char(scene, cs[i].id);
        const seen *was = find_seen(h, cs[i].id);
        if (!p || !was)
            continue;
        if (cs[i].id == h->own && p->hits != was->p.hits) {
            uint16_t up = (uint16_t)(p->hits - was->p.hits);
            h->marker_t = now;
            h->marker_cancelled = up > 0x8000u; // fewer: a rollback took a hit back
            if (h->marker_cancelled)
                h->markers_cancelled++;
            else
                h->hit_markers += up;
        }
        if (h->own && cs[i].id != h->own && p->last_attacker == h->own && p->health < was->p.health) {
            h->victim = cs[i].id;
            h->victim_health = p->health;
            h->victim_damage += was->p.health - p->health;
        }
        if (p->rail_ticks > was->p.rail_ticks)
            add_tracer(h, scene, &cs[i], now, true);
        if (p->dead && !was->p.dead)
            h->deaths++;
        if (!p->dead && was->p.dead)
            h->respawns++;
    }
    for (uint32_t k = 0; k < ARENA_ROCKETS; k++) {
        const arena_rocket *a = &h->state.rocket[k], *b = &s->rocket[k];
        bool restarted = a->live && b->live && (b->ttl > a->ttl || b->owner != a->owner);
        if (a->live && (!b->live || restarted))
            add_blast(h, sim_v3_add(a->at, sim_v3_scale(a->velocity, SIM_FX_ONE / (int32_t)h->tick_rate)), now);
        if (b->live && (!a->live || restarted))
            h->rockets++;
    }
}

// A first look (or one after a seek): the rail shots of the last
// TRACER_S seconds, from the intervals still to run (as the shooter stands
// now), so that a paused picture shows them too.
static void recent_shots(hud *h, const sim_scene *scene, double now)
{
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(scene, &n);
    for (uint32_t i = 0; i < n; i++) {
        const arena_player *p = sim_scene_game_char(scene, cs[i].id);
        int32_t age = p ? h->st->rail_interval - (int32_t)p->rail_ticks : INT32_MAX; // ticks since the shot
        if (p && p->rail_ticks && !p->dead && age >= 0 && (double)age / h->tick_rate < TRACER_S)
            add_tracer(h, scene, &cs[i], now - (double)age / h->tick_rate, false);
    }
}

static void observe(void *self, const sim_scene *scene, uint32_t own, double now)
{
    hud *h = self;
    const arena_state *s = sim_scene_game_state(scene);
    if (!s)
        return;
    uint32_t tick = sim_scene_tick(scene);
    if (h->have_seen && (own != h->own || tick < h->seen_tick))
        reset(h);
    h->own = own;
    if (h->have_seen) // the same tick too: in live mode a rollback may have changed it
        events(h, scene, s, now);
    else
        recent_shots(h, scene, now);
    memcpy(&h->state, s, sizeof *s);
    uint32_t n;
    const sim_char_state *cs = sim_scene_characters(scene, &n);
    h->seen_count = 0;
    for (uint32_t i = 0; i < n && h->seen_count < MAX_SEEN; i++) {
        const arena_player *p = sim_scene_game_char(scene, cs[i].id);
        if (p)
            h->seen[h->seen_count++] = (seen){cs[i].id, *p};
    }
    const arena_player *me = own ? sim_scene_game_char(scene, own) : NULL;
    h->have_me = me != NULL;
    if (me)
        h->me = *me;
    h->seen_tick = tick;
    h->have_seen = true;
}

static void characters(void *self, const sim_scene *scene, kp_char_draw *d, uint32_t count, double now)
{
    (void)self;
    for (uint32_t i = 0; i < count; i++) {
        const arena_player *p = sim_scene_game_char(scene, d[i].id);
        if (!p)
            continue;
        if (p->dead) { // a grey ghost where it fell
            d[i].color[0] = d[i].color[1] = d[i].color[2] = 0.35f;
            d[i].ghost = true;
            d[i].label = false;
        } else if (p->protect_ticks) { // just respawned: pulsing white
            static const float flash[3] = {1, 1, 1};
            memcpy(d[i].flash, flash, sizeof flash);
            d[i].flash[3] = 0.25f + 0.25f * (float)sin(now * 12.0);
        }
    }
}

static void draw_world(void *self, kp_render *r, double now)
{
    hud *h = self;
    static const float rocket[4] = {1.0f, 0.75f, 0.15f, 1}, smoke[4] = {0.85f, 0.85f, 0.85f, 0.5f};
    for (uint32_t k = 0; k < ARENA_ROCKETS; k++) {
        const arena_rocket *rk = &h->state.rocket[k];
        if (!rk->live)
            continue;
        float at[3], v[3];
        fx3(rk->at, at);
        fx3(rk->velocity, v);
        const float half[3] = {0.16f, 0.16f, 0.16f};
        kp_render_box(r, at, half, rocket);
        for (int j = 1; j <= 6; j++) { // a trail of smoke behind it, thinning out
            float p[3] = {at[0] - v[0] * 0.015f * (float)j, at[1] - v[1] * 0.015f * (float)j,
                          at[2] - v[2] * 0.015f * (float)j};
            float s = 0.12f - 0.012f * (float)j;
            const float puff[3] = {s, s, s};
            kp_render_box(r, p, puff, smoke);
        }
    }
    for (uint32_t i = 0; i < BLASTS; i++) {
        double age = now - h->blasts[i].t;
        if (h->blasts[i].t == 0 || age < 0 || age > BLAST_S)
            continue;
        float f = (float)(age / BLAST_S), s = 0.3f + 0.9f * f;
        const float half[3] = {s, s, s}, fire[4] = {1.0f, 0.5f + 0.4f * f, 0.1f, 0.6f * (1.0f - f)};
        kp_render_box(r, h->blasts[i].at, half, fire);
    }
}

// A world segment onto the window (the part in front of the camera).
static bool project_segment(const kp_camera *cam, int w, int ht, const float a[3], const float b[3], float xy[4])
{
    float f[3], pa[3], pb[3];
    kp_camera_forward(cam->yaw, cam->pitch, f);
    float da = 0, db = 0;
    for (int k = 0; k < 3; k++) {
        da += (a[k] - cam->eye[k]) * f[k];
        db += (b[k] - cam->eye[k]) * f[k];
    }
    float nearz = cam->znear * 2.0f;
    if (da < nearz && db < nearz)
        return false;
    memcpy(pa, a, sizeof pa);
    memcpy(pb, b, sizeof pb);
    if (da < nearz || db < nearz) { // clip at the near plane
        float t = (nearz - da) / (db - da);
        float *p = da < nearz ? pa : pb;
        for (int k = 0; k < 3; k++)
            p[k] = a[k] + (b[k] - a[k]) * t;
    }
    return kp_camera_project(cam, w, ht, pa, &xy[0], &xy[1]) && kp_camera_project(cam, w, ht, pb, &xy[2], &xy[3]);
}

static void draw_tracers(hud *h, kp_overlay *o, const kp_game_hud_frame *f)
{
    for (uint32_t i = 0; i < TRACERS; i++) {
        const tracer *t = &h->tracers[i];
        double age = f->now_s - t->t;
        float xy[4];
        if (t->t == 0 || age < 0 || age > TRACER_S || !project_segment(f->cam, f->width, f->height, t->a, t->b, xy))
            continue;
        if (t->owner == h->own && f->crosshair) { // one's own from the gun, low and to the right
            float fwd[3], right[3] = {cosf(f->cam->yaw * 0.0174533f), 0, -sinf(f->cam->yaw * 0.0174533f)}, a[3];
            kp_camera_forward(f->cam->yaw, f->cam->pitch, fwd);
            for (int k = 0; k < 3; k++)
                a[k] = f->cam->eye[k] + fwd[k] * 0.5f + right[k] * 0.2f - (k == 1 ? 0.15f : 0.0f);
            if (!project_segment(f->cam, f->width, f->height, a, t->b, xy))
                continue;
        }
        float rgba[4] = {0, 0, 0, (float)(1.0 - age / TRACER_S)};
        kp_character_color(t->owner, rgba);
        for (int k = 0; k < 3; k++)
            rgba[k] = 0.5f + 0.5f * rgba[k];
        kp_overlay_lines(o, xy, 2, 3.0f, rgba);
    }
}

static void draw_marker(hud *h, kp_overlay *o, const kp_game_hud_frame *f)
{
    double age = f->now_s - h->marker_t;
    if (age < 0 || age > MARKER_S)
        return;
    float cx = (float)f->width / 2.0f, cy = (float)f->height / 2.0f, a = 6.0f, b = 14.0f;
    float rgba[4] = {1, 1, 1, (float)(1.0 - age / MARKER_S)};
    if (h->marker_cancelled)
        rgba[1] = rgba[2] = 0.2f;
    for (int q = 0; q < 4; q++) {
        float sx = (q & 1) ? 1.0f : -1.0f, sy = (q & 2) ? 1.0f : -1.0f;
        float xy[4] = {cx + sx * a, cy + sy * a, cx + sx * b, cy + sy * b};
        kp_overlay_lines(o, xy, 2, 3.0f, rgba);
    }
    if (h->marker_cancelled)
        kp_overlay_text(o, cx + 18.0f, cy + 12.0f, 1.5f, "server: miss", rgba);
}

static const char *weapon_name(uint8_t w)
{
    return w == ARENA_WEAPON_RAIL ? "rail" : w == ARENA_WEAPON_ROCKET ? "rocket" : "world";
}

static void who(const hud *h, const kp_game_hud_frame *f, uint32_t id, char *out, size_t size)
{
    if (id && id == h->own && f->player)
        snprintf(out, size, "you");
    else
        snprintf(out, size, "#%u", (unsigned)id);
}

// The kill feed, top right: the newest first, each for FEED_S seconds.
static uint32_t draw_feed(hud *h, kp_overlay *o, const kp_game_hud_frame *f, float (*keep)[4], uint32_t room)
{
    char text[512] = "";
    size_t used = 0;
    const arena_state *s = &h->state;
    for (uint32_t n = 0; n < ARENA_FEED && n < s->kills && used + 80 < sizeof text; n++) {
        uint32_t k = (s->kills - 1u - n) % ARENA_FEED;
        const arena_kill *e = &s->feed[k];
        if (s->clock - e->tick > FEED_S * h->tick_rate)
            break;
        char a[24], b[24];
        who(h, f, e->killer, a, sizeof a);
        who(h, f, e->victim, b, sizeof b);
        if (e->killer == 0 || e->killer == e->victim)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%s [%s] (suicide)", used ? "\n" : "", b,
                                     weapon_name(e->weapon));
        else
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%s [%s] %s", used ? "\n" : "", a,
                                     weapon_name(e->weapon), b);
    }
    if (!used || !room)
        return 0;
    float w = kp_overlay_text_width(text, 2.0f), x = (float)f->width - w - 16.0f;
    kp_overlay_text_box(o, x, 12.0f, 2.0f, text, amber);
    keep[0][0] = x - 6, keep[0][1] = 6, keep[0][2] = w + 12, keep[0][3] = kp_overlay_text_height(text, 2.0f) + 14;
    return 1;
}

// A bar of `frac` (0..1) at (x, y) with a label before it.
static void ready_bar(kp_overlay *o, float x, float y, const char *label, float frac)
{
    static const float back[4] = {0, 0, 0, 0.55f};
    float lw = kp_overlay_text_width(label, 2.0f);
    kp_overlay_text_box(o, x, y, 2.0f, label, white);
    kp_overlay_rect(o, x + lw + 10, y, 120, 14, back);
    kp_overlay_rect(o, x + lw + 12, y + 2, 116 * frac, 10, frac >= 1.0f ? green : amber);
}

static float ready(uint16_t left, int32_t interval)
{
    return interval > 0 ? 1.0f - (float)left / (float)interval : 1.0f;
}

// The own status, bottom left: health, armour, both weapons; a death line.
static uint32_t draw_status(hud *h, kp_overlay *o, const kp_game_hud_frame *f, float (*keep)[4], uint32_t room)
{
    if (!h->have_me || !f->follow || !room)
        return 0;
    const arena_player *p = &h->me;
    const arena_state *s = &h->state;
    char text[128];
    snprintf(text, sizeof text, "%d", p->health);
    float y = (float)f->bottom - 120.0f, x = 16.0f;
    kp_overlay_text_box(o, x, y, 5.0f, text, p->health > 25 ? white : red);
    float hw = kp_overlay_text_width(text, 5.0f);
    int32_t left = h->st->match_ticks > 0 ? h->st->match_ticks - (int32_t)s->clock : 0;
    uint32_t sec = left > 0 ? (uint32_t)left / h->tick_rate : 0;
    snprintf(text, sizeof text, "armour %d\nfrags %d   %s%u:%02u", p->armour, p->frags, s->ended ? "ended " : "",
             (unsigned)(sec / 60), (unsigned)(sec % 60));
    kp_overlay_text_box(o, x + hw + 16, y, 2.0f, text, white);
    ready_bar(o, x, y + 64, "rail  ", ready(p->rail_ticks, h->st->rail_interval));
    ready_bar(o, x, y + 88, "rocket", ready(p->rocket_ticks, h->st->rocket_interval));
    keep[0][0] = 0, keep[0][1] = y - 8, keep[0][2] = 330, keep[0][3] = 118;
    if (p->dead) {
        char a[24];
        who(h, f, p->last_attacker, a, sizeof a);
        snprintf(text, sizeof text, "fragged%s%s - respawn in %.1f s", p->last_attacker ? " by " : "",
                 p->last_attacker ? a : "", (double)p->respawn_ticks / (double)h->tick_rate);
        float w = kp_overlay_text_width(text, 3.0f);
        kp_overlay_text_box(o, ((float)f->width - w) / 2, (float)f->height * 0.3f, 3.0f, text, red);
    } else if (p->protect_ticks) {
        kp_overlay_text_box(o, x, y - 24, 1.5f, "spawn protection", green);
    }
    return 1;
}

// Tab: every player by frags (the match's own table once it has ended).
static uint32_t draw_scores(hud *h, kp_overlay *o, const kp_game_hud_frame *f, float (*keep)[4], uint32_t room)
{
    const arena_state *s = &h->state;
    if (!room || !(f->scores || s->ended))
        return 0;
    char text[4096];
    size_t used =
        (size_t)snprintf(text, sizeof text, "%s\nplayer\tfrags\tdeaths\thealth\n", s->ended ? "match over" : "scores");
    seen lines[MAX_SEEN];
    uint32_t n = h->seen_count;
    memcpy(lines, h->seen, n * sizeof *lines);
    for (uint32_t i = 1; i < n; i++) // frags down, then deaths up, then id up (arena's order)
        for (uint32_t j = i; j > 0; j--) {
            const arena_player *a = &lines[j].p, *b = &lines[j - 1].p;
            bool above = a->frags != b->frags     ? a->frags > b->frags
                         : a->deaths != b->deaths ? a->deaths < b->deaths
                                                  : lines[j].id < lines[j - 1].id;
            if (!above)
                break;
            seen t = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = t;
        }
    for (uint32_t i = 0; i < n && i < 16 && used + 64 < sizeof text; i++) {
        char a[24];
        who(h, f, lines[i].id, a, sizeof a);
        used += (size_t)snprintf(text + used, sizeof text - used, "%s\t%d\t%u\t%s\n", a, lines[i].p.frags,
                                 (unsigned)lines[i].p.deaths, lines[i].p.dead ? "dead" : "");
        if (!lines[i].p.dead)
            snprintf(text + used - 1, sizeof text - used + 1, "%d\n", lines[i].p.health), used = strlen(text);
    }
    if (n > 16)
        snprintf(text + used, sizeof text - used, "+%u more", (unsigned)(n - 16));
    else if (used)
        text[used - 1] = '\0';
    float w, ht;
    kp_overlay_table_size(text, 2.0f, &w, &ht);
    float x = ((float)f->width - w) / 2, y = (float)f->height * 0.18f;
    kp_overlay_table(o, x, y, 2.0f, text, white, true);
    keep[0][0] = x - 6, keep[0][1] = y - 4, keep[0][2] = w + 12, keep[0][3] = ht + 8;
    return 1;
}

static uint32_t draw(void *self, kp_overlay *o, const kp_game_hud_frame *f, float (*keep)[4], uint32_t room)
{
    hud *h = self;
    draw_tracers(h, o, f);
    if (f->crosshair)
        draw_marker(h, o, f);
    uint32_t nk = 0;
    nk += draw_feed(h, o, f, keep + nk, room - nk);
    nk += draw_status(h, o, f, keep + nk, room - nk);
    nk += draw_scores(h, o, f, keep + nk, room - nk);
    return nk;
}

static void summary(const void *self, FILE *out)
{
    const hud *h = self;
    fprintf(out,
            ",\"arena\":{\"hit_markers\":%llu,\"hit_markers_cancelled\":%llu,\"rail_shots\":%llu,\"rockets\":%llu,"
            "\"explosions\":%llu,\"deaths\":%llu,\"respawns\":%llu,\"kills\":%u,\"clock\":%u,\"ended\":%s,"
            "\"victim\":%u,\"victim_health\":%d,\"victim_damage\":%d",
            (unsigned long long)h->hit_markers, (unsigned long long)h->markers_cancelled,
            (unsigned long long)h->rail_shots, (unsigned long long)h->rockets, (unsigned long long)h->explosions,
            (unsigned long long)h->deaths, (unsigned long long)h->respawns, (unsigned)h->state.kills,
            (unsigned)h->state.clock, h->state.ended ? "true" : "false", (unsigned)h->victim, (int)h->victim_health,
            (int)h->victim_damage);
    if (h->have_me)
        fprintf(out, ",\"health\":%d,\"armour\":%d,\"frags\":%d,\"hits\":%u,\"dead\":%s", h->me.health, h->me.armour,
                h->me.frags, (unsigned)h->me.hits, h->me.dead ? "true" : "false");
    fputc('}', out);
}

const kp_game_hud_ops kp_arena_hud_ops = {"arena", fits,       create,     destroy, reset,
                                          observe, characters, draw_world, draw,    summary};
