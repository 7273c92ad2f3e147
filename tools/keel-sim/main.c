// keel-sim: the scenario runner. MIT licence, see LICENSE.
//
// Loads a level, runs a mode's entities for a number of fixed ticks and prints
// every entity's state after every tick with a hash of the whole state, then
// the final state hash. Two machines that print the same final_hash ran the
// same simulation bit for bit.
#include "keel_sim.h"

#include <string.h>

// The hash of the state after `tick` ticks: the mode's name, the tick and the
// entity count frame the mode's own fields, so runs of different lengths or
// modes never compare equal by accident.
static uint64_t state_hash(const ks_mode *mode, const void *state, uint64_t tick)
{
    uint64_t h = sim_hash_bytes(SIM_HASH_SEED, mode->name, strlen(mode->name));
    h = sim_hash_u64(h, tick);
    h = sim_hash_u32(h, mode->count(state));
    return mode->hash(state, h);
}

int main(int argc, char **argv)
{
    static ks_options opt; // large (the --spawn array): not on the stack
    switch (ks_parse_options(argc, argv, &opt)) {
    case KS_PARSE_RUN:
        break;
    case KS_PARSE_HELP:
        return KS_EXIT_OK;
    case KS_PARSE_ERROR:
        return KS_EXIT_USAGE;
    }

    ks_scene scene;
    int rc = ks_scene_load(&scene, &opt);
    if (rc != KS_EXIT_OK)
        return rc;

    // The only mode until the character mover lands; then an option picks one.
    const ks_mode *mode = &ks_mode_probes;
    void *state = mode->create(&scene, opt.characters);
    if (!state) {
        fputs("keel-sim: out of memory\n", stderr);
        ks_scene_free(&scene);
        return KS_EXIT_FAILURE;
    }

    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    ks_writer w = {stdout, opt.format, mode};
    if (!opt.quiet)
        ks_write_header(&w);

    uint64_t h = state_hash(mode, state, 0);
    for (uint64_t tick = 1; tick <= opt.ticks; tick++) {
        mode->step(state, &scene);
        h = state_hash(mode, state, tick);
        if (opt.quiet)
            continue;
        uint32_t n = mode->count(state);
        for (uint32_t i = 0; i < n; i++) {
            ks_row row;
            mode->row(state, i, &row);
            ks_write_row(&w, tick, &row, h);
        }
    }
    ks_write_final(&w, h);

    if (!opt.quiet) {
        fprintf(stderr, "keel-sim: %s: %u triangles (%u degenerate dropped); %s x %u, %u ticks: ",
                opt.level_name, (unsigned)scene.stats.triangle_count,
                (unsigned)scene.stats.degenerate_count, mode->name, (unsigned)opt.characters,
                (unsigned)opt.ticks);
        mode->summary(state, stderr);
    }
    mode->destroy(state);
    ks_scene_free(&scene);

    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("keel-sim: error writing the output\n", stderr);
        return KS_EXIT_FAILURE;
    }
    return KS_EXIT_OK;
}
