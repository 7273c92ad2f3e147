// keel-sim: JSON lines and CSV output. MIT licence, see LICENSE.
//
// Numbers are formatted from the fixed-point values with integer arithmetic
// only, and the raw Q16.16 integers are printed beside them, so the text is
// the same on every machine and loses nothing.
#include "keel_sim.h"

#include <inttypes.h>

void ks_format_fx(char *buf, size_t size, sim_fx v)
{
    uint32_t m = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    uint64_t whole = m >> 16;
    // Six digits of the 16-bit fraction, rounded half up on the magnitude.
    uint64_t frac = ((uint64_t)(m & 0xFFFFu) * 1000000u + 32768u) >> 16;
    if (frac >= 1000000u) {
        whole++;
        frac -= 1000000u;
    }
    // A non-zero raw value is at least 0.000015 in magnitude, so a printed
    // "-0.000000" cannot occur.
    snprintf(buf, size, "%s%" PRIu64 ".%06" PRIu64, v < 0 ? "-" : "", whole, frac);
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

void ks_write_header(const ks_writer *w)
{
    if (w->format != KS_FORMAT_CSV)
        return;
    fputs("tick,id,x,y,z,vx,vy,vz,x_raw,y_raw,z_raw,vx_raw,vy_raw,vz_raw", w->f);
    for (int i = 0; i < w->mode->flag_count; i++)
        fprintf(w->f, ",%s", w->mode->flag_names[i]);
    fputs(",hash\n", w->f);
}

void ks_write_row(const ks_writer *w, uint64_t tick, const ks_row *row, uint64_t state_hash)
{
    FILE *f = w->f;
    sim_vec3 p = row->position, v = row->velocity;
    if (w->format == KS_FORMAT_CSV) {
        fprintf(f, "%" PRIu64 ",%" PRIu32, tick, row->id);
        put_vec_csv(f, p);
        put_vec_csv(f, v);
        fprintf(f, ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32,
                p.x, p.y, p.z, v.x, v.y, v.z);
        for (int i = 0; i < w->mode->flag_count; i++)
            fprintf(f, ",%d", (row->flags >> i) & 1u ? 1 : 0);
        fprintf(f, ",%016" PRIx64 "\n", state_hash);
        return;
    }
    fprintf(f, "{\"tick\":%" PRIu64 ",\"id\":%" PRIu32, tick, row->id);
    put_vec_json(f, "pos", p);
    put_vec_json(f, "vel", v);
    fprintf(f,
            ",\"pos_raw\":[%" PRId32 ",%" PRId32 ",%" PRId32 "]"
            ",\"vel_raw\":[%" PRId32 ",%" PRId32 ",%" PRId32 "]",
            p.x, p.y, p.z, v.x, v.y, v.z);
    for (int i = 0; i < w->mode->flag_count; i++)
        fprintf(f, ",\"%s\":%s", w->mode->flag_names[i], (row->flags >> i) & 1u ? "true" : "false");
    fprintf(f, ",\"hash\":\"%016" PRIx64 "\"}\n", state_hash);
}

void ks_write_final(const ks_writer *w, uint64_t state_hash)
{
    fprintf(w->f, "final_hash %016" PRIx64 "\n", state_hash);
}
