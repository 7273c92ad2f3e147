// keel benchmark: what a game's command payload costs on the wire
// (bench_net --game-wire). MIT licence, see LICENSE.
#ifndef KEEL_BENCH_GAME_WIRE_H
#define KEEL_BENCH_GAME_WIRE_H

/// Prints the rows; 0 on success.
int bench_game_wire(void);

#endif
