// keel-sim: the scenario runner. MIT licence, see LICENSE.
//
// Loads a level, runs a mode's entities for a number of fixed ticks and prints
// every entity's state after every tick with a hash of the whole state, then
// the final state hash. Two machines that print the same final_hash ran the
// same simulation bit for bit.
#include "keel_sim.h"

#include <inttypes.h>

#include "keel_game.h"

int main(int argc, char **argv)
{
    static ks_options opt; // large (the --spawn array): not on the stack
    switch (ks_parse_options(argc, argv, &opt)) {
    case KS_PARSE_RUN: break;
    case KS_PARSE_HELP: return KS_EXIT_OK;
    case KS_PARSE_ERROR: return KS_EXIT_USAGE;
    }

    // The input file first: it is quick to check, and a bad line should not
    // wait for a large level to load.
    ks_script script = {0};
    if (opt.input_path && ks_script_load(opt.input_path, opt.characters, &script) != KS_EXIT_OK)
        return KS_EXIT_FAILURE;

    // The game next (a missing library is as quick to find).
    keel_game game = {0};
    if (opt.game_spec) {
        int grc = keel_game_load_or_report("keel-sim", opt.game_spec, &game);
        if (grc != 0) {
            ks_script_free(&script);
            return grc;
        }
        opt.game = game.game;
        if (!opt.quiet)
            keel_game_describe("keel-sim", &game);
    }

    ks_stage stage;
    int rc = ks_stage_load(&stage, &opt);
    if (rc != KS_EXIT_OK) {
        ks_script_free(&script);
        keel_game_unload(&game);
        return rc;
    }

    const ks_mode *mode = opt.mode == KS_MODE_PROBES ? &ks_mode_probes : &ks_mode_characters;
    void *state = mode->create(&stage, &opt, &script);
    ks_script_free(&script); // the mode took the commands over (or failed)
    if (!state) {
        ks_stage_free(&stage);
        keel_game_unload(&game);
        return KS_EXIT_FAILURE;
    }

    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    ks_writer w = {stdout, opt.format};
    if (!opt.quiet)
        mode->write_header(state, &w);

    // A step fails only when --sync-test finds a mismatch: the run stops
    // there, without a final hash (it did not finish).
    bool completed = true;
    uint64_t h = mode->hash(state, 0);
    for (uint64_t tick = 1; tick <= opt.ticks && completed; tick++) {
        completed = mode->step(state, &stage) == KS_EXIT_OK;
        h = mode->hash(state, tick);
        if (!opt.quiet && completed)
            mode->write_tick(state, &w, tick, h);
    }
    if (completed)
        ks_write_final(&w, h);

    if (!opt.quiet && completed) {
        // Every triangle of the level (boxes count 12) is kept or dropped as
        // degenerate or as a face buried inside solid (where two solids touch).
        fprintf(stderr,
                "keel-sim: %s: %u triangles (%u degenerate, %u buried faces dropped); %s x %u, "
                "%u ticks: ",
                opt.level_name, (unsigned)stage.stats.triangle_count, (unsigned)stage.stats.degenerate_count,
                (unsigned)stage.stats.buried_count, mode->name, (unsigned)opt.characters, (unsigned)opt.ticks);
        mode->summary(state, stderr);
    }
    int finished = mode->finish ? mode->finish(state, completed) : KS_EXIT_OK;
    mode->destroy(state);
    ks_stage_free(&stage);
    keel_game_unload(&game); // after its scene

    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("keel-sim: error writing the output\n", stderr);
        return KS_EXIT_FAILURE;
    }
    return completed ? finished : KS_EXIT_FAILURE;
}
