// keel bench: ns per operation, libfixmath against keel's inline versions. MIT licence.
//
// Throughput over arrays of pre-generated operands (no dependency between
// iterations except the checksum), so the numbers are the cost of a call in a
// loop, not its latency. The operands cover several magnitudes and stay clear
// of overflow. fix16_sin keeps a 4096-entry cache; the angle array is large
// enough that it rarely hits, as in real use with varied angles.
// Usage: bench_fx [iterations per measurement, default 2e7]
#define _POSIX_C_SOURCE 199309L // clock_gettime under -std=c11
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <keel/sim_angle.h>

#define N_OPS 65536 // operands per array (a power of two)

static sim_fx op_a[N_OPS], op_b[N_OPS], op_d[N_OPS], op_s[N_OPS], op_rad[N_OPS];
static sim_angle op_ang[N_OPS];

static uint64_t rng_state = 0x6b65656c;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static sim_fx rnd_fx(int max_bits)
{
    int bits = 1 + (int)(rng() % (uint64_t)max_bits);
    sim_fx v = (sim_fx)(rng() >> (64 - bits));
    return (rng() & 1) ? -v : v;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

// Keeps the checksum (and so every call) alive without a memory store per step.
static void consume(uint32_t v) { __asm__ volatile("" : : "r"(v)); }

#define BENCH(label, expr)             \
    static double label(long n)        \
    {                                  \
        uint32_t acc = 0;              \
        double t0 = now_ns();          \
        for (long k = 0; k < n; k++) { \
            long i = k & (N_OPS - 1);  \
            acc += (uint32_t)(expr);   \
        }                              \
        double t1 = now_ns();          \
        consume(acc);                  \
        return (t1 - t0) / (double)n;  \
    }

BENCH(b_loop, op_a[i] ^ op_b[i])
BENCH(b_lib_mul, fix16_mul(op_a[i], op_b[i]))
BENCH(b_sim_mul, sim_fx_mul(op_a[i], op_b[i]))
BENCH(b_lib_div, fix16_div(op_a[i], op_d[i]))
BENCH(b_sim_div, sim_fx_div(op_a[i], op_d[i]))
BENCH(b_lib_sqrt, fix16_sqrt(op_s[i]))
BENCH(b_sim_sqrt, sim_fx_sqrt(op_s[i]))
BENCH(b_lib_sin, fix16_sin(op_rad[i]))
BENCH(b_sim_sin, sim_angle_sin(op_ang[i]))

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000L;
    if (n < N_OPS)
        n = N_OPS;
    for (int i = 0; i < N_OPS; i++) {
        // products and quotients below 32768 in magnitude
        op_a[i] = rnd_fx(28);
        op_b[i] = rnd_fx(18);
        op_d[i] = rnd_fx(31);
        if (op_d[i] < 0x2000 && op_d[i] > -0x2000)
            op_d[i] = 0x2000 + i;
        op_s[i] = (sim_fx)(rng() >> (33 + rng() % 24));
        op_ang[i] = (sim_angle)rng();
        op_rad[i] = (sim_fx)(((int64_t)op_ang[i] * 411775 + 32768) >> 16) - 205887; // [-pi, pi)
    }
    // The operand arrays are checked once so that no result is a sentinel.
    for (int i = 0; i < N_OPS; i++)
        if (fix16_mul(op_a[i], op_b[i]) == SIM_FX_MIN || fix16_div(op_a[i], op_d[i]) == SIM_FX_MIN) {
            fprintf(stderr, "bench_fx: operand %d overflows\n", i);
            return 1;
        }

    struct {
        const char *name;
        double (*lib)(long);
        double (*sim)(long);
        const char *lib_name, *sim_name;
    } rows[] = {
        {"mul", b_lib_mul, b_sim_mul, "fix16_mul", "sim_fx_mul"},
        {"div", b_lib_div, b_sim_div, "fix16_div", "sim_fx_div"},
        {"sqrt", b_lib_sqrt, b_sim_sqrt, "fix16_sqrt", "sim_fx_sqrt"},
        {"sin", b_lib_sin, b_sim_sin, "fix16_sin", "sim_angle_sin"},
    };
    double loop = b_loop(n);
    printf("bench_fx: %ld operations per measurement, best of 3; loop overhead %.2f ns (included)\n", n, loop);
    printf("%-5s %-12s %9s   %-14s %9s %8s\n", "op", "library", "ns/op", "keel", "ns/op", "speedup");
    for (unsigned r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        double lib = 1e30, sim = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double l = rows[r].lib(n), s = rows[r].sim(n);
            lib = l < lib ? l : lib;
            sim = s < sim ? s : sim;
        }
        printf("%-5s %-12s %9.2f   %-14s %9.2f %7.1fx\n", rows[r].name, rows[r].lib_name, lib, rows[r].sim_name, sim,
               lib / sim);
    }
    return 0;
}
