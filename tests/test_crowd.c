// keel tests: crowds never pass through the level. MIT licence, see LICENSE.
//
// A character pushed by a crowd (or by a platform) is
// moved by depenetration, and depenetration may only take it where a sweep
// against the level reaches: never through a wall, a floor or a ceiling.
// Each case runs a crowd on the built-in level (markers in docs/levels.md)
// and checks after every tick that no character's centre path crossed a
// triangle of the level (keel_test_crossings). Before the fix, each of these
// had characters crossing: one stepping through the floor at tick 6 among 24
// at one spawn point, 17 through the 1 cm wall from a pile in front of it,
// one through the corner's wall at tick 1, characters through the floor
// under the platforms from tick 1, and one standing on the roof of a closed
// room it was spawned in. (The hundred pressing into the thin wall did not
// cross it before the fix either; it stays as a stress case.)
//
// Every pair of the three shapes (capsule, box, cylinder) meeting
// head on, pushing, standing on each other's heads and crowding a corner,
// with their overlap measured in double, independently of keel's narrow phase.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keel/sim_scene.h>

#include "ref_geom.h"
#include "test_support.h"

#define M(x) ((sim_fx)llround((x)*65536.0))
#define D(v) ((v) / 65536.0)
#define PI 3.14159265358979323846

static sim_level level;
static sim_world *world;
static sim_move_settings S;

static void setup(void)
{
    world = keel_test_builtin_world(&level);
    S = sim_move_default_settings();
}

static void teardown(void) { keel_test_builtin_free(&level, world); }

TestSuite(crowd, .init = setup, .fini = teardown, .timeout = 600);

static sim_vec3 marker(const char *name)
{
    const sim_marker *m = sim_level_find_marker(&level, name);
    cr_assert_not_null(m, "marker %s", name);
    return m->position;
}

// The yaw whose forward vector, (-sin yaw, 0, -cos yaw), points from `from`
// toward `to` on the horizontal plane.
static sim_angle yaw_toward(sim_vec3 from, sim_vec3 to)
{
    double dx = D(to.x - from.x), dz = D(to.z - from.z);
    double a = atan2(-dx, -dz);
    long v = lround(a / (2 * PI) * 65536.0);
    return (sim_angle)(((v % 65536) + 65536) % 65536);
}

// A crowd run: `count` characters spawned by `spawn`, each steered by
// `target` (NULL: no command at all), stepped `ticks` times with the
// crossing check after every tick.
typedef struct crowd_run {
    sim_scene *scene;
    uint32_t count;
    sim_char_state *before;
    uint64_t crossings;
    char first[200];
    sim_fx lowest_feet; // lowest feet y of any character after any tick
} crowd_run;

static void crowd_begin(crowd_run *r, uint32_t count, const sim_vec3 *feet)
{
    memset(r, 0, sizeof *r);
    r->scene = sim_scene_create(world, &S, count);
    cr_assert_not_null(r->scene);
    r->count = count;
    r->before = calloc(count, sizeof *r->before);
    r->lowest_feet = SIM_FX_INT(1000);
    for (uint32_t i = 0; i < count; i++) {
        sim_char_state c = sim_char_spawn(i + 1, feet[i], 0);
        cr_assert_eq(sim_scene_add_character(r->scene, &c), 0);
    }
}

// Without a goal, `walk` sends everyone straight along -z (yaw 0) at full
// speed; without either, nobody gets a command.
static void crowd_tick(crowd_run *r, const sim_vec3 *goal, bool walk)
{
    uint32_t n;
    const sim_char_state *chars = sim_scene_characters(r->scene, &n);
    cr_assert_eq(n, r->count);
    memcpy(r->before, chars, n * sizeof *chars);
    if (goal || walk) {
        for (uint32_t i = 0; i < n; i++) {
            sim_input in = {0};
            in.tick = sim_scene_tick(r->scene);
            in.forward = 127;
            in.yaw = goal ? yaw_toward(chars[i].position, *goal) : 0;
            sim_scene_set_input(r->scene, chars[i].id, &in);
        }
    }
    sim_scene_step(r->scene);
    chars = sim_scene_characters(r->scene, &n);
    int64_t first = -1;
    uint32_t crossed = keel_test_crossings(world, &S, r->before, chars, n, &first);
    if (crossed && r->crossings == 0) {
        const sim_char_state *a = &r->before[first], *b = &chars[first];
        snprintf(r->first, sizeof r->first,
                 "tick %u: character %u moved its centre from (%.4f, %.4f, %.4f) to (%.4f, %.4f, %.4f) "
                 "through the level",
                 sim_scene_tick(r->scene), b->id, D(a->position.x), D(a->position.y), D(a->position.z),
                 D(b->position.x), D(b->position.y), D(b->position.z));
    }
    r->crossings += crossed;
    for (uint32_t i = 0; i < n; i++)
        if (chars[i].position.y < r->lowest_feet)
            r->lowest_feet = chars[i].position.y;
}

static void crowd_end(crowd_run *r)
{
    sim_scene_destroy(r->scene);
    free(r->before);
}

static uint32_t stuck_count(const crowd_run *r)
{
    uint32_t n, k = 0;
    const sim_char_state *chars = sim_scene_characters(r->scene, &n);
    for (uint32_t i = 0; i < n; i++)
        k += (chars[i].flags & SIM_CHAR_STUCK) != 0;
    return k;
}

Test(crowd, twenty_four_characters_at_one_spawn_point_stay_on_the_floor)
{
    enum { N = 24, TICKS = 128 };
    sim_vec3 feet[N];
    for (int i = 0; i < N; i++)
        feet[i] = marker("spawn");
    crowd_run r;
    crowd_begin(&r, N, feet);
    for (int t = 0; t < TICKS; t++)
        crowd_tick(&r, NULL, false);
    cr_log_info("same spawn: %u characters x %d ticks: %llu crossings, lowest feet %.4f m, %u stuck at "
                "the end\n",
                N, TICKS, (unsigned long long)r.crossings, D(r.lowest_feet), stuck_count(&r));
    cr_expect_eq(r.crossings, 0, "%s", r.first);
    // The floor is at y 0; resting feet are a skin above it.
    cr_expect_geq(r.lowest_feet, -SIM_FX_MM(1), "a character's feet went to %.4f m", D(r.lowest_feet));
    crowd_end(&r);
}

Test(crowd, twenty_four_characters_at_one_point_before_the_thin_wall_never_pass_through_it)
{
    enum { N = 24, TICKS = 256 };
    // Half a metre in front of the 1 cm wall: the nearest free spots of a
    // jammed pile include some just behind the wall.
    sim_vec3 feet[N];
    for (int i = 0; i < N; i++)
        feet[i] = sim_v3(M(-4), 0, M(-9.5));
    crowd_run r;
    crowd_begin(&r, N, feet);
    for (int t = 0; t < TICKS; t++)
        crowd_tick(&r, NULL, false);
    uint32_t n, behind = 0;
    const sim_char_state *chars = sim_scene_characters(r.scene, &n);
    for (uint32_t i = 0; i < n; i++)
        behind += chars[i].position.z < M(-10);
    cr_log_info("pile at the thin wall: %u characters x %d ticks: %llu crossings, %u behind the wall, %u "
                "stuck\n",
                N, TICKS, (unsigned long long)r.crossings, behind, stuck_count(&r));
    // One that is pushed round the wall's end (2 m away) may end up behind
    // it; only a path through it fails.
    cr_expect_eq(r.crossings, 0, "%s", r.first);
    crowd_end(&r);
}

Test(crowd, a_hundred_characters_pressing_into_the_thin_wall_never_pass_through_it)
{
    enum { N = 100, TICKS = 1500 };
    // A 10 x 10 grid 0.9 m apart in front of the 1 cm wall (z -10, x -6 to
    // -2), everyone walking at full speed straight at it (-z) for the first
    // half, then toward the middle of the wall.
    sim_vec3 front = marker("thinwall_front"), goal = sim_v3(M(-4), 0, M(-10));
    sim_vec3 feet[N];
    for (int i = 0; i < N; i++)
        feet[i] = sim_v3(front.x + M(-4.05 + 0.9 * (i % 10)), 0, front.z + M(0.9 * (i / 10)));
    crowd_run r;
    crowd_begin(&r, N, feet);
    for (int t = 0; t < TICKS; t++)
        crowd_tick(&r, t < TICKS / 2 ? NULL : &goal, true);
    // Characters may walk round the wall's ends (and then press on its back
    // face); only a centre path through it would be a failure.
    cr_log_info("thin wall: %u characters x %d ticks: %llu crossings, %u stuck\n", N, TICKS,
                (unsigned long long)r.crossings, stuck_count(&r));
    cr_expect_eq(r.crossings, 0, "%s", r.first);
    crowd_end(&r);
}

Test(crowd, eighty_characters_pressing_into_the_corner_stay_above_the_floor)
{
    enum { N = 80, TICKS = 2000 };
    sim_vec3 start = marker("corner_start"), goal = marker("corner");
    sim_vec3 feet[N];
    for (int i = 0; i < N; i++)
        feet[i] = sim_v3(start.x + M(-1.8 + 0.9 * (i % 8)), 0, start.z + M(-1.8 + 0.9 * (i / 8)));
    crowd_run r;
    crowd_begin(&r, N, feet);
    for (int t = 0; t < TICKS; t++)
        crowd_tick(&r, &goal, false);
    cr_log_info("corner: %u characters x %d ticks: %llu crossings, lowest feet %.4f m, %u stuck\n", N, TICKS,
                (unsigned long long)r.crossings, D(r.lowest_feet), stuck_count(&r));
    cr_expect_eq(r.crossings, 0, "%s", r.first);
    cr_expect_geq(r.lowest_feet, -SIM_FX_MM(1), "a character's feet went to %.4f m", D(r.lowest_feet));
    crowd_end(&r);
}

Test(crowd, two_hundred_characters_under_the_platforms_stay_above_the_floor)
{
    enum { N = 200, TICKS = 600 };
    sim_vec3 a = marker("platform_area");
    // 200 characters packed 0.45 m apart over the platforms' area: they
    // overlap each other and the platforms from the first tick.
    sim_vec3 feet[N];
    for (int i = 0; i < N; i++)
        feet[i] = sim_v3(a.x + M(-3.15 + 0.45 * (i % 15)), 0, a.z + M(-3.15 + 0.45 * (i / 15)));
    crowd_run r;
    crowd_begin(&r, N, feet);
    // keel-sim's --platforms pair: an elevator resting 0.1 m above the floor
    // and rising 3 m, and a shuttle gliding 4 m at the same low height.
    cr_assert_eq(sim_scene_add_area_platforms(r.scene, &level, 100001, 100002), 0);
    for (int t = 0; t < TICKS; t++)
        crowd_tick(&r, NULL, false);
    cr_log_info("platforms: %u characters x %d ticks: %llu crossings, lowest feet %.4f m, %u stuck\n", N, TICKS,
                (unsigned long long)r.crossings, D(r.lowest_feet), stuck_count(&r));
    cr_expect_eq(r.crossings, 0, "%s", r.first);
    cr_expect_geq(r.lowest_feet, -SIM_FX_MM(1), "a character's feet went to %.4f m", D(r.lowest_feet));
    crowd_end(&r);
}

// ---- a closed room lower than the character -----------------------------------------

Test(crowd, a_character_spawned_in_a_room_lower_than_itself_stays_inside_and_is_stuck)
{
    // A closed room 4 m x 1 m x 4 m (faces facing inward); the standing
    // capsule is 1.8 m tall, so it overlaps floor and ceiling at once.
    sim_fx x0 = M(-2), x1 = M(2), y0 = 0, y1 = M(1), z0 = M(-2), z1 = M(2);
    sim_level L;
    sim_world *room = keel_test_room_world(&L, x0, z0, x1, z1, y1, NULL, NULL);
    sim_collider col = sim_collider_world(room);
    sim_char_state c = sim_char_spawn(1, sim_v3(0, SIM_FX_MM(10), 0), 0);
    for (int t = 0; t < 64; t++) {
        sim_char_state before = c;
        sim_input in = {0};
        in.tick = (uint32_t)t;
        sim_move_step(&col, &S, &c, &in);
        cr_expect_eq(keel_test_crossings(room, &S, &before, &c, 1, NULL), 0,
                     "tick %d: the centre went from y %.4f to %.4f through the room", t,
                     D(sim_char_center(&S, &before).y), D(sim_char_center(&S, &c).y));
        sim_vec3 ctr = sim_char_center(&S, &c);
        cr_expect(ctr.y > y0 && ctr.y < y1 && ctr.x > x0 && ctr.x < x1 && ctr.z > z0 && ctr.z < z1,
                  "tick %d: the centre (%.4f, %.4f, %.4f) left the room", t, D(ctr.x), D(ctr.y), D(ctr.z));
        cr_expect(c.flags & SIM_CHAR_STUCK, "tick %d: not marked stuck", t);
    }
    cr_expect_eq(c.stuck_ticks, 64);
    sim_world_destroy(room);
    sim_level_free(&L);
}

// ---- every pair of shapes ------------------------------------------------------------
//
// A scene's characters share their settings, so two shapes meet in one scene
// as the standing shape and the crouched one. Here the crouched shape is the
// other shape at full size (1.8 m tall, crouching at full speed), so every
// pair of capsule, box and cylinder meets as two whole characters. How deep
// they overlap is measured independently of keel's pair narrow phase, in
// double (ref_shape_pair_gap in tests/support/ref_geom.c).

enum { SHAPE_KINDS = 3 };
static const char *const shape_names[SHAPE_KINDS] = {"capsule", "box", "cylinder"};

static sim_shape full_shape(int type)
{
    if (type == SIM_SHAPE_BOX)
        return sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
    if (type == SIM_SHAPE_CYLINDER)
        return sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
    return sim_shape_capsule(SIM_FX_MM(400), SIM_FX_MM(1800));
}

static sim_move_settings pair_settings(int standing, int crouched)
{
    sim_move_settings s = sim_move_default_settings();
    s.stand_shape = full_shape(standing);
    s.crouch_shape = full_shape(crouched);
    s.crouch_speed_scale = SIM_FX_ONE;
    cr_assert(sim_move_settings_check(&s, NULL));
    return s;
}

static double char_pair_depth(const sim_move_settings *s, const sim_char_state *a, const sim_char_state *b)
{
    return -ref_shape_pair_gap(sim_char_shape(s, a), rv3_from(sim_char_center(s, a)), sim_char_shape(s, b),
                               rv3_from(sim_char_center(s, b)));
}

static sim_input pair_command(const sim_scene *sc, sim_angle yaw, int8_t forward, bool crouch)
{
    sim_input in = {0};
    in.tick = sim_scene_tick(sc);
    in.forward = forward;
    in.yaw = yaw;
    in.buttons = crouch ? SIM_BUTTON_CROUCH : 0;
    return in;
}

static void add_pair_character(sim_scene *sc, uint32_t id, sim_vec3 feet, sim_angle yaw, bool crouched)
{
    sim_char_state c = sim_char_spawn(id, feet, yaw);
    if (crouched)
        c.flags |= SIM_CHAR_CROUCHED;
    cr_assert_eq(sim_scene_add_character(sc, &c), 0);
}

// What the pair tests allow (test_scene.c's): at first contact each swept
// against where the other was, so for a tick they may overlap by up to the
// closing distance of a tick (12.5 cm at 8 m/s each way); once they have
// met, no more than the skin (and the double reference's 0.1 mm).
#define PAIR_FIRST_CONTACT 0.125
#define PAIR_SETTLED(s) (D((s)->skin) + 0.0001)

typedef struct pair_figures {
    double head_on, pushing, on_head; ///< deepest overlap of each kind of run, m
    double pushed;                    ///< how far a pushed one moved, m
    double head_slid;                 ///< how far one standing off-centre on a head slid, m
} pair_figures;

// Along `axis` (0: x, 1: the diagonal x = z, where a box's corner leads),
// character 1 (shape `ta`, standing) and character 2 (`tb`, crouching)
// start `gap` metres either side of the platform area's centre; each walks
// toward the other when its `go` says so.
static void pair_run(int ta, int tb, int axis, double gap, bool go1, bool go2, const char *what, pair_figures *f)
{
    const char *na = shape_names[ta], *nb = shape_names[tb];
    sim_move_settings s = pair_settings(ta, tb);
    sim_vec3 c0 = marker("platform_area");
    double ux = axis ? sqrt(0.5) : 1, uz = axis ? sqrt(0.5) : 0;
    sim_vec3 p1 = sim_v3(c0.x - M(gap * ux), c0.y, c0.z - M(gap * uz));
    sim_vec3 p2 = sim_v3(c0.x + M(gap * ux), c0.y, c0.z + M(gap * uz));
    sim_angle to2 = yaw_toward(p1, p2), to1 = yaw_toward(p2, p1);
    sim_scene *sc = sim_scene_create(world, &s, 2);
    add_pair_character(sc, 1, p1, to2, false);
    add_pair_character(sc, 2, p2, to1, true);
    const sim_char_state *a = sim_scene_find(sc, 1), *b = sim_scene_find(sc, 2);
    sim_vec3 still = go1 ? b->position : a->position;
    double *deepest = go1 && go2 ? &f->head_on : &f->pushing;
    int met = -1;
    // Along x they stop each other; on the diagonal they slide round each
    // other and walk on, so that run ends before they reach other features.
    int ticks = axis == 0 ? 192 : 64;
    for (int t = 0; t < ticks; t++) {
        sim_input ia = pair_command(sc, to2, go1 ? 127 : 0, false), ib = pair_command(sc, to1, go2 ? 127 : 0, true);
        sim_scene_set_input(sc, 1, &ia);
        sim_scene_set_input(sc, 2, &ib);
        sim_scene_step(sc);
        double d = char_pair_depth(&s, a, b);
        *deepest = fmax(*deepest, d);
        // Along x, still in order: nobody passed through. On the diagonal a
        // corner meets a side and they may slide round each other (the depth
        // shows any going through).
        double along = D(b->position.x - a->position.x) * ux + D(b->position.z - a->position.z) * uz;
        if (axis == 0)
            cr_assert_gt(along, 0, "%s %s %s, tick %d: passed through", na, what, nb, t);
        cr_assert_lt(d, PAIR_FIRST_CONTACT, "%s %s %s (axis %d), tick %d: %.4f m deep", na, what, nb, axis, t, d);
        if (met < 0 && d > -0.02)
            met = t;
        if (met >= 0 && t > met + 64)
            cr_assert_leq(d, PAIR_SETTLED(&s), "%s %s %s (axis %d), tick %d: still %.4f m deep", na, what, nb, axis, t,
                          d);
        cr_assert(a->flags & b->flags & SIM_CHAR_GROUNDED, "%s %s %s (axis %d), tick %d: knocked off the floor", na,
                  what, nb, axis, t);
    }
    cr_assert_geq(met, 0, "%s %s %s (axis %d): never met", na, what, nb, axis);
    if (!(go1 && go2)) {
        sim_vec3 now = go1 ? b->position : a->position;
        f->pushed = fmax(f->pushed, hypot(D(now.x - still.x), D(now.z - still.z)));
    }
    sim_scene_destroy(sc);
}

// Character `top` dropped 0.3 m onto the other's head, `off` metres off its
// axis along the diagonal.
static void pair_on_head(int ta, int tb, int top, double off, pair_figures *f)
{
    sim_move_settings s = pair_settings(ta, tb);
    sim_vec3 c0 = marker("platform_area");
    sim_scene *sc = sim_scene_create(world, &s, 2);
    sim_vec3 above = sim_v3(c0.x + M(off * sqrt(0.5)), c0.y + M(1.8 + 0.3), c0.z + M(off * sqrt(0.5)));
    add_pair_character(sc, 1, top == 1 ? above : c0, 0, false);
    add_pair_character(sc, 2, top == 2 ? above : c0, 0, true);
    const sim_char_state *up = sim_scene_find(sc, (uint32_t)top), *down = sim_scene_find(sc, (uint32_t)(3 - top));
    const char *nu = shape_names[top == 1 ? ta : tb], *nd = shape_names[top == 1 ? tb : ta];
    for (int t = 0; t < 96; t++) {
        sim_input ia = pair_command(sc, 0, 0, false), ib = pair_command(sc, 0, 0, true);
        sim_scene_set_input(sc, 1, &ia);
        sim_scene_set_input(sc, 2, &ib);
        sim_scene_step(sc);
        double d = char_pair_depth(&s, up, down);
        f->on_head = fmax(f->on_head, d);
        cr_assert_lt(d, PAIR_FIRST_CONTACT, "%s on %s (%.2f m off), tick %d: %.4f m deep", nu, nd, off, t, d);
        if (t > 48)
            cr_assert_leq(d, PAIR_SETTLED(&s), "%s on %s (%.2f m off), tick %d: still %.4f m deep", nu, nd, off, t, d);
    }
    cr_assert(down->flags & SIM_CHAR_GROUNDED, "%s under %s: not standing", nd, nu);
    double slid = hypot(D(up->position.x - above.x), D(up->position.z - above.z));
    if (off == 0) {
        // right on top: stands there, on the head
        double head = D(down->position.y) + 1.8;
        cr_assert(up->flags & SIM_CHAR_GROUNDED, "%s on %s: not standing", nu, nd);
        cr_assert(fabs(D(up->position.y) - head) <= 2 * D(s.skin), "%s on %s: feet %.4f m from the head", nu, nd,
                  D(up->position.y) - head);
        cr_assert_lt(slid, 0.001, "%s on %s: slid %.4f m", nu, nd, slid);
    } else {
        f->head_slid = fmax(f->head_slid, slid);
        cr_log_info("%s dropped on %s's head %.2f m off its axis: slid %.4f m, feet at y %.4f\n", nu, nd, off, slid,
                    D(up->position.y - c0.y));
    }
    sim_scene_destroy(sc);
}

static pair_figures pair_meet(int ta, int tb)
{
    pair_figures f = {-1, -1, -1, 0, 0};
    for (int axis = 0; axis < 2; axis++) {
        double gap = axis == 0 ? 2 : 1.2;
        pair_run(ta, tb, axis, gap, true, true, "into", &f);
        pair_run(ta, tb, axis, gap, true, false, "pushing", &f);
        pair_run(ta, tb, axis, gap, false, true, "pushed by", &f);
    }
    for (int top = 1; top <= 2; top++) {
        pair_on_head(ta, tb, top, 0, &f);
        pair_on_head(ta, tb, top, 0.3, &f);
    }
    return f;
}

Test(crowd, every_pair_of_shapes_meets_head_on_pushes_and_stands_on_the_other)
{
    for (int i = 0; i < SHAPE_KINDS; i++) {
        for (int j = i; j < SHAPE_KINDS; j++) {
            pair_figures f = pair_meet(i, j);
            cr_log_info("%s and %s: deepest %.5f m head on, %.5f m pushing (the one pushed moved %.4f m), "
                        "%.5f m standing on the other's head (off its axis: slid %.4f m)\n",
                        shape_names[i], shape_names[j], f.head_on, f.pushing, f.pushed, f.on_head, f.head_slid);
        }
    }
}

// Twenty-four characters, every other one of each shape, pressing into the corner:
// none passes through the level or sinks into the floor, and no two overlap
// by more than the first-contact allowance (nor, in the second half, by more
// than the skin). Their deepest overlap (by the double reference) is logged
// per pair of shapes. (They start clear of the corner's walls: characters
// spawned into a wall are thrown about by the escape from it, which is not
// what this is about.)
Test(crowd, twenty_four_characters_of_two_shapes_pressing_into_the_corner)
{
    enum { N = 24, TICKS = 320 };
    sim_vec3 start = marker("corner_start"), goal = marker("corner");
    sim_vec3 feet[N];
    for (int i = 0; i < N; i++)
        feet[i] = sim_v3(start.x + M(-1.5 + 0.9 * (i % 4)), 0, start.z + M(-1.5 + 0.9 * (i / 4)));
    const sim_move_settings saved = S;
    for (int ta = 0; ta < SHAPE_KINDS; ta++) {
        for (int tb = ta; tb < SHAPE_KINDS; tb++) {
            S = pair_settings(ta, tb); // crowd_begin and crowd_tick use S
            crowd_run r;
            crowd_begin(&r, N, feet);
            double deepest = -1, settled = -1;
            for (int t = 0; t < TICKS; t++) {
                uint32_t n;
                const sim_char_state *chars = sim_scene_characters(r.scene, &n);
                memcpy(r.before, chars, n * sizeof *chars);
                for (uint32_t i = 0; i < n; i++) {
                    sim_input in = {0};
                    in.tick = sim_scene_tick(r.scene);
                    in.forward = 127;
                    in.yaw = yaw_toward(chars[i].position, goal);
                    in.buttons = (chars[i].id & 1) ? SIM_BUTTON_CROUCH : 0; // odd ids: shape tb
                    sim_scene_set_input(r.scene, chars[i].id, &in);
                }
                sim_scene_step(r.scene);
                chars = sim_scene_characters(r.scene, &n);
                r.crossings += keel_test_crossings(world, &S, r.before, chars, n, NULL);
                for (uint32_t i = 0; i < n; i++) {
                    if (chars[i].position.y < r.lowest_feet)
                        r.lowest_feet = chars[i].position.y;
                    for (uint32_t j = i + 1; j < n; j++) {
                        double d = char_pair_depth(&S, &chars[i], &chars[j]);
                        deepest = fmax(deepest, d);
                        if (t >= TICKS / 2)
                            settled = fmax(settled, d);
                    }
                }
            }
            cr_log_info("%s and %s in the corner: %u characters x %d ticks: %llu crossings, lowest feet %.4f m, "
                        "deepest overlap %.5f m (%.5f m in the second half), %u stuck\n",
                        shape_names[ta], shape_names[tb], N, TICKS, (unsigned long long)r.crossings, D(r.lowest_feet),
                        deepest, settled, stuck_count(&r));
            cr_expect_eq(r.crossings, 0, "%s and %s", shape_names[ta], shape_names[tb]);
            cr_expect_geq(r.lowest_feet, -SIM_FX_MM(1), "%s and %s: a character's feet went to %.4f m", shape_names[ta],
                          shape_names[tb], D(r.lowest_feet));
            cr_expect_lt(deepest, PAIR_FIRST_CONTACT, "%s and %s: two overlapped by %.4f m", shape_names[ta],
                         shape_names[tb], deepest);
            cr_expect_leq(settled, PAIR_SETTLED(&S), "%s and %s: two overlapped by %.4f m in the second half",
                          shape_names[ta], shape_names[tb], settled);
            crowd_end(&r);
        }
    }
    S = saved;
}
