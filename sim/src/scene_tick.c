// keel: one tick of the scene, in order. MIT licence, see LICENSE.
//
// Every loop of a tick runs in id order or over a list sorted under a strict
// total order, so nothing depends on the order of adds or on memory layout.
#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>
#include <keel/sim_scene.h>

#include "collide_shape.h"
#include "move_internal.h"
#include "scene_internal.h"
#include "world_near.h"

uint32_t scene_item_count(const sim_scene *sc) { return sc->count / sc->batch + (sc->count % sc->batch != 0); }

void scene_run_items(sim_scene *sc, sim_task_fn fn)
{
    uint32_t items = scene_item_count(sc);
    if (sc->run && items > 1)
        sc->run(sc->run_user, items, fn, sc);
    else
        fn(sc, 0, items);
}

void sim_scene_set_parallel(sim_scene *sc, sim_parallel_for_fn run, void *user, uint32_t batch)
{
    sc->run = run;
    sc->run_user = run ? user : NULL;
    sc->batch = batch ? batch : SIM_SCENE_DEFAULT_BATCH;
}

// The order of a tick. A game's rules (keel/sim_game.h) run at the two
// marked points; without a game nothing else of the tick changes.
void sim_scene_step(sim_scene *sc)
{
    uint32_t t = sc->tick;
    // 1. Platforms to their places at t + 1; riders carried along.
    scene_build_platforms(sc, t, true);
    scene_carry_riders(sc);
    // 2. The game's rules before the movement: per character (in parallel),
    //    then the serial one. They see the commands of this tick.
    if (sc->game)
        scene_game_rules(sc, false);
    // 3. Characters apart. Skipped only when it would change nothing: the
    //    last step's pass left the scene clean and no add, restore, carry or
    //    rule has moved anyone since.
    scene_separate_begin_step(sc);
    if (!sc->sep_clean)
        scene_separate(sc);
    // 4. The snapshot, then every character's move against it (built-in or
    //    game move types), in parallel; then characters apart again.
    scene_build_bodies(sc, true);
    scene_run_items(sc, scene_move_items);
    sc->bodies_ready = true;
    sc->sep_clean = scene_separate(sc);
    sc->bodies_ready = false; // (a pass over fewer than two characters does not look)
    // Ghost marks are for this tick's moves only (nothing outside a step sees
    // them, and adds and removes shift the indices).
    memset(sc->sep_flag, 0, sc->count ? sc->count : 1);
    // 5. The game's rules after the movement: per character, then serial.
    if (sc->game) {
        scene_game_fold_faults(sc);
        scene_game_rules(sc, true);
    }
    // 6. Commands are for one tick; characters below the level respawn.
    memset(sc->has_input, 0, sc->count ? sc->count : 1);
    if (scene_respawn(sc))
        sc->sep_clean = false;
#ifdef KEEL_INJECT_DIVERGENCE
        // A deliberate nondeterminism, compiled only into keel-replay's test
        // programs (keel-sim-diverge, keel-replay-diverge): what a build that
        // differs in one rounding would do. After tick KEEL_DIVERGE_TICK's step,
        // the lowest bit of velocity.x of the character with the smallest id of
        // at least 3 flips (kept within the speed limit, so the state stays valid).
#ifndef KEEL_DIVERGE_TICK
#define KEEL_DIVERGE_TICK 200
#endif
    if (t == (uint32_t)KEEL_DIVERGE_TICK)
        for (uint32_t i = 0; i < sc->count; i++)
            if (sc->chars[i].id >= 3u) {
                sim_char_state *c = &sc->chars[i];
                c->velocity.x ^= 1;
                if (c->velocity.x > SIM_MOVE_MAX_SPEED)
                    c->velocity.x -= 2;
                break;
            }
#endif
    sc->tick = t + 1u;
}
