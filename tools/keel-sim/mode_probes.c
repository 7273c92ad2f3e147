// keel-sim: probes, shapes pushed around by random acceleration and gravity.
// MIT licence, see LICENSE.
//
// Probes exercise the collision queries on their own, without the character
// mover (they came first, and stay as --mode probes so the queries can be
// run and hashed apart from movement): every tick each probe's horizontal
// acceleration takes a random step, gravity pulls it down, and a plain
// collide-and-slide moves it. They do not interact with each other. All
// state is sim_fx and every operation is from sim_math.h, so a run is the
// same bytes everywhere.
#include "keel_sim.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_GRAVITY SIM_FX_INT(-20)
/// Largest random change of each horizontal acceleration component per tick.
#define PROBE_JERK SIM_FX_INT(2)
/// Bound of each horizontal acceleration component.
#define PROBE_MAX_ACCEL SIM_FX_INT(10)
/// Horizontal speed limit (walking pace is about 5 m/s).
#define PROBE_MAX_SPEED SIM_FX_INT(6)
#define PROBE_TERMINAL_SPEED SIM_FX_INT(50)
#define PROBE_MAX_SLIDES 4
#define PROBE_GROUND_NY SIM_FX_RATIO(7, 10)
/// Contacts read when pushing a probe out of an overlap; only the deepest is used.
#define PROBE_CONTACTS 8

enum {
    PROBE_GROUNDED = 1u << 0,
    PROBE_START_OVERLAP = 1u << 1,
    PROBE_RESPAWNED = 1u << 2,
    PROBE_TUNNELLED = 1u << 3,
};
#define PROBE_FLAG_COUNT 4
static const char *const probe_flag_names[PROBE_FLAG_COUNT] = {"grounded", "start_overlap", "respawned", "tunnelled"};

typedef struct probe {
    sim_vec3 spawn; ///< centre to respawn at
    sim_vec3 position;
    sim_vec3 velocity;
    sim_fx accel_x, accel_z;
    ks_rng rng;
    uint32_t flags; ///< this tick's PROBE_* flags
} probe;

typedef struct probe_stats {
    uint64_t sweeps, hits, start_overlaps, overlap_ticks, unresolved_overlaps;
    uint64_t grounded_ticks, respawns, slide_limit, tunnelled;
} probe_stats;

typedef struct probes {
    uint32_t count;
    probe_stats stats;
    probe items[];
} probes;

static void *probes_create(const ks_stage *stage, const ks_options *opt, ks_script *script)
{
    (void)script; // options.c allows --input only for characters
    uint32_t count = opt->characters;
    probes *s = calloc(1, sizeof(probes) + sizeof(probe) * count);
    if (!s) {
        fputs("keel-sim: out of memory\n", stderr);
        return NULL;
    }
    s->count = count;
    for (uint32_t i = 0; i < count; i++) {
        probe *p = &s->items[i];
        p->spawn = ks_stage_probe_spawn(stage, i);
        p->position = p->spawn;
        p->rng = ks_rng_for(stage->seed, i, KS_STREAM_MOTION);
    }
    return s;
}

static sim_fx random_fx(ks_rng *r, sim_fx bound) { return (sim_fx)ks_rng_range(r, -bound, bound); }

// Removes the part of v that points into the plane with unit normal n.
static sim_vec3 clip_into(sim_vec3 v, sim_vec3 n)
{
    sim_fx into = sim_v3_dot(v, n);
    return into < 0 ? sim_v3_madd(v, n, -into) : v;
}

// Pushes the probe out along the deepest contact. Returns false when the
// contact query finds nothing deeper than the tolerance although the sweep
// reported an overlap (the two queries disagree).
static bool depenetrate(const ks_stage *stage, sim_vec3 *pos)
{
    sim_overlap_input oi = {stage->shape, *pos, 0};
    sim_contact c[PROBE_CONTACTS];
    int n = sim_world_contacts(stage->world, &oi, c, PROBE_CONTACTS);
    if (n <= 0 || c[0].depth <= SIM_QUERY_TOLERANCE)
        return false;
    *pos = sim_v3_madd(*pos, c[0].normal, sim_fx_add(c[0].depth, KS_SKIN));
    return true;
}

// A free shape's centre is at least its half width from every triangle, so a
// centre path that crosses a triangle means the shape went through geometry.
// Checked on every move so such a bug is flagged where it happens.
static void check_path(probe *p, const ks_stage *stage, sim_vec3 from, sim_vec3 to, probe_stats *st)
{
    if (sim_v3_eq(from, to))
        return;
    sim_ray_input in = {from, sim_v3_sub(to, from)};
    sim_ray_result r;
    if (sim_world_raycast(stage->world, &in, &r) && !(p->flags & PROBE_TUNNELLED)) {
        p->flags |= PROBE_TUNNELLED;
        st->tunnelled++;
    }
}

// Collide and slide: sweep, stop a skin short of the impact (measured along
// the motion), drop the motion and velocity into the surface, try again with
// what is left.
static void probe_move(probe *p, const ks_stage *stage, probe_stats *st)
{
    sim_vec3 pos = p->position;
    sim_vec3 vel = p->velocity;
    sim_vec3 rest = sim_v3_scale(vel, stage->dt);
    int slide = 0;
    for (; slide < PROBE_MAX_SLIDES && !sim_v3_is_zero(rest); slide++) {
        sim_sweep_input in = {stage->shape, pos, rest, 0};
        sim_sweep_result r;
        st->sweeps++;
        if (!sim_world_sweep(stage->world, &in, &r)) {
            check_path(p, stage, pos, sim_v3_add(pos, rest), st);
            pos = sim_v3_add(pos, rest);
            rest = sim_v3_zero();
            break;
        }
        st->hits++;
        if (r.start_overlap) {
            st->start_overlaps++;
            p->flags |= PROBE_START_OVERLAP;
            if (!depenetrate(stage, &pos))
                st->unresolved_overlaps++;
        } else {
            sim_vec3 end = sim_v3_add(pos, rest);
            sim_fx travelled = sim_v3_length(sim_v3_sub(r.position, pos));
            sim_fx back = sim_fx_min(KS_SKIN, travelled);
            check_path(p, stage, pos, r.position, st);
            pos = sim_v3_sub(r.position, sim_dir_scale(sim_dir_from_v3(rest), back));
            rest = sim_v3_sub(end, r.position);
        }
        if (r.normal.y >= PROBE_GROUND_NY)
            p->flags |= PROBE_GROUNDED;
        rest = clip_into(rest, r.normal);
        vel = clip_into(vel, r.normal);
    }
    if (slide == PROBE_MAX_SLIDES && !sim_v3_is_zero(rest))
        st->slide_limit++;
    p->position = pos;
    p->velocity = vel;
}

static bool inside(sim_aabb b, sim_vec3 p)
{
    return p.x >= b.min.x && p.x <= b.max.x && p.y >= b.min.y && p.y <= b.max.y && p.z >= b.min.z && p.z <= b.max.z;
}

static void probe_step(probe *p, const ks_stage *stage, probe_stats *st)
{
    p->flags = 0;
    p->accel_x =
        sim_fx_clamp(sim_fx_add(p->accel_x, random_fx(&p->rng, PROBE_JERK)), -PROBE_MAX_ACCEL, PROBE_MAX_ACCEL);
    p->accel_z =
        sim_fx_clamp(sim_fx_add(p->accel_z, random_fx(&p->rng, PROBE_JERK)), -PROBE_MAX_ACCEL, PROBE_MAX_ACCEL);

    sim_vec3 v = p->velocity;
    v = sim_v3_madd(v, sim_v3(p->accel_x, PROBE_GRAVITY, p->accel_z), stage->dt);
    sim_fx hspeed = sim_v3_length(sim_v3(v.x, 0, v.z));
    if (hspeed > PROBE_MAX_SPEED) {
        sim_fx k = sim_fx_div(PROBE_MAX_SPEED, hspeed);
        v.x = sim_fx_mul(v.x, k);
        v.z = sim_fx_mul(v.z, k);
    }
    v.y = sim_fx_max(v.y, -PROBE_TERMINAL_SPEED);
    p->velocity = v;

    probe_move(p, stage, st);

    if (p->flags & PROBE_GROUNDED)
        st->grounded_ticks++;
    if (p->flags & PROBE_START_OVERLAP)
        st->overlap_ticks++;
    if (!inside(stage->keep_bounds, p->position)) {
        // Lost (fell off the level): start over, keeping the random stream.
        p->position = p->spawn;
        p->velocity = sim_v3_zero();
        p->accel_x = p->accel_z = 0;
        p->flags |= PROBE_RESPAWNED;
        st->respawns++;
    }
}

static int probes_step(void *state, const ks_stage *stage)
{
    probes *s = state;
    for (uint32_t i = 0; i < s->count; i++)
        probe_step(&s->items[i], stage, &s->stats);
    return KS_EXIT_OK;
}

static void put_vec_json(FILE *f, const char *key, sim_vec3 v)
{
    char x[24], y[24], z[24];
    ks_format_fx(x, sizeof x, v.x);
    ks_format_fx(y, sizeof y, v.y);
    ks_format_fx(z, sizeof z, v.z);
    fprintf(f, ",\"%s\":[%s,%s,%s]", key, x, y, z);
}

static void put_vec_csv(FILE *f, sim_vec3 v)
{
    char x[24], y[24], z[24];
    ks_format_fx(x, sizeof x, v.x);
    ks_format_fx(y, sizeof y, v.y);
    ks_format_fx(z, sizeof z, v.z);
    fprintf(f, ",%s,%s,%s", x, y, z);
}

static void probes_write_header(const void *state, const ks_writer *w)
{
    (void)state;
    if (w->format != KS_FORMAT_CSV)
        return;
    fputs("tick,id,x,y,z,vx,vy,vz,x_raw,y_raw,z_raw,vx_raw,vy_raw,vz_raw", w->f);
    for (int i = 0; i < PROBE_FLAG_COUNT; i++)
        fprintf(w->f, ",%s", probe_flag_names[i]);
    fputs(",hash\n", w->f);
}

// One line per probe: the centre, the velocity, both also as raw Q16.16,
// the tick's flags and the state hash.
static void probes_write_tick(const void *state, const ks_writer *w, uint64_t tick, uint64_t state_hash)
{
    const probes *s = state;
    FILE *f = w->f;
    for (uint32_t id = 0; id < s->count; id++) {
        const probe *pr = &s->items[id];
        sim_vec3 p = pr->position, v = pr->velocity;
        if (w->format == KS_FORMAT_CSV) {
            fprintf(f, "%" PRIu64 ",%" PRIu32, tick, id);
            put_vec_csv(f, p);
            put_vec_csv(f, v);
            fprintf(f, ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32, p.x, p.y, p.z, v.x, v.y,
                    v.z);
            for (int i = 0; i < PROBE_FLAG_COUNT; i++)
                fprintf(f, ",%d", (pr->flags >> i) & 1u ? 1 : 0);
            fprintf(f, ",%016" PRIx64 "\n", state_hash);
            continue;
        }
        fprintf(f, "{\"tick\":%" PRIu64 ",\"id\":%" PRIu32, tick, id);
        put_vec_json(f, "pos", p);
        put_vec_json(f, "vel", v);
        fprintf(f,
                ",\"pos_raw\":[%" PRId32 ",%" PRId32 ",%" PRId32 "]"
                ",\"vel_raw\":[%" PRId32 ",%" PRId32 ",%" PRId32 "]",
                p.x, p.y, p.z, v.x, v.y, v.z);
        for (int i = 0; i < PROBE_FLAG_COUNT; i++)
            fprintf(f, ",\"%s\":%s", probe_flag_names[i], (pr->flags >> i) & 1u ? "true" : "false");
        fprintf(f, ",\"hash\":\"%016" PRIx64 "\"}\n", state_hash);
    }
}

// The mode's name, the tick and the probe count frame the probes' own
// fields, so runs of different lengths or modes never compare equal by
// accident.
static uint64_t probes_hash(const void *state, uint64_t tick)
{
    const probes *s = state;
    uint64_t h = sim_hash_bytes(SIM_HASH_SEED, "probes", strlen("probes"));
    h = sim_hash_u64(h, tick);
    h = sim_hash_u32(h, s->count);
    for (uint32_t i = 0; i < s->count; i++) {
        const probe *p = &s->items[i];
        h = sim_hash_u32(h, i);
        h = sim_hash_vec3(h, p->spawn);
        h = sim_hash_vec3(h, p->position);
        h = sim_hash_vec3(h, p->velocity);
        h = sim_hash_fx(h, p->accel_x);
        h = sim_hash_fx(h, p->accel_z);
        h = sim_hash_u64(h, p->rng.state);
        h = sim_hash_u32(h, p->flags);
    }
    return h;
}

static void probes_summary(const void *state, FILE *f)
{
    const probe_stats *st = &((const probes *)state)->stats;
    fprintf(f,
            "sweeps %" PRIu64 ", hits %" PRIu64 ", start_overlap sweeps %" PRIu64 " (in %" PRIu64
            " probe-ticks, %" PRIu64 " not resolved by contacts)"
            ", grounded probe-ticks %" PRIu64 ", slide limit reached %" PRIu64 ", respawns %" PRIu64
            ", tunnelled probe-ticks %" PRIu64 "\n",
            st->sweeps, st->hits, st->start_overlaps, st->overlap_ticks, st->unresolved_overlaps, st->grounded_ticks,
            st->slide_limit, st->respawns, st->tunnelled);
}

static void probes_destroy(void *state) { free(state); }

const ks_mode ks_mode_probes = {
    .name = "probes",
    .create = probes_create,
    .step = probes_step,
    .hash = probes_hash,
    .write_header = probes_write_header,
    .write_tick = probes_write_tick,
    .summary = probes_summary,
    .destroy = probes_destroy,
};
