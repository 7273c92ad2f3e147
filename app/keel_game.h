// keel programs: how a program gets a game (docs/game.md, "Loading a game").
// MIT licence, see LICENSE.
//
// One option, `--game NAME|PATH`, in every program that runs a scene:
//   - a PATH (it contains '/' or '\\', or ends in ".so", ".dylib" or ".dll")
//     is a shared library opened with dlopen; it must export
//         const sim_game_def *keel_game_v1(void);
//     returning a definition that lives as long as the library, with
//     abi_version SIM_GAME_ABI_VERSION. The program exports keel's symbols
//     (linked with -rdynamic), so the library links no keel library itself.
//   - a NAME picks a game linked into the program (keel_game_linked): the
//     example game "tag" is, and so is every game on builds that cannot open
//     libraries (Windows builds of the programs, WebAssembly).
// Every failure is one line of text and a distinct exit code; nothing
// crashes on a missing library, a missing symbol or another ABI version.
#ifndef KEEL_GAME_H
#define KEEL_GAME_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/sim_game.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The symbol a game library exports.
#define KEEL_GAME_ENTRY "keel_game_v1"
typedef const sim_game_def *(*keel_game_entry)(void);

/// Exit codes of a program whose game cannot be had: the library (or the
/// linked name) is missing, it lacks KEEL_GAME_ENTRY, its ABI version is
/// another, or sim_game_create refuses its definition.
#define KEEL_EXIT_GAME 6
/// A recording (or a server) was made with another game than the one given
/// (name, version or digest differ), or with none.
#define KEEL_EXIT_GAME_MISMATCH 7

/// Why a load failed (the first line a program prints).
typedef enum keel_game_fault {
    KEEL_GAME_OK = 0,
    KEEL_GAME_NOT_FOUND = 1,   ///< no such library, or no linked game of that name
    KEEL_GAME_NO_ENTRY = 2,    ///< the library does not export keel_game_v1
    KEEL_GAME_ABI = 3,         ///< the definition's abi_version is not SIM_GAME_ABI_VERSION
    KEEL_GAME_REFUSED = 4,     ///< sim_game_create refused the definition
    KEEL_GAME_UNSUPPORTED = 5, ///< a path on a build that cannot open libraries
} keel_game_fault;

/// A game as a program holds it.
typedef struct keel_game {
    sim_game *game;   ///< NULL until loaded
    void *library;    ///< the dlopen handle (NULL for a linked game)
    bool linked;      ///< picked by name from the games linked into the program
    uint64_t load_us; ///< what loading took: open, entry point, sim_game_create (wall clock)
    keel_game_fault fault;
    char error[320]; ///< "" or one line: what failed, naming the library or the name
} keel_game;

/// Whether `spec` names a library (a path) rather than a linked game.
bool keel_game_is_path(const char *spec);

/// Load the game `spec` names into *out. True on success; false with
/// out->fault and out->error set (nothing to unload then).
bool keel_game_load(const char *spec, keel_game *out);
/// Destroy the game and close its library (the game's scenes must be gone).
void keel_game_unload(keel_game *g);

/// The games linked into this program, as a ", "-separated list ("tag").
const char *keel_game_linked_names(void);

/// A command struct of the game (sim_game_definition's command schema)
/// filled with pseudo-random values, each field within its declared range:
/// a pure function of (seed, tick, id), as keel-sim's random walkers are.
/// A BOOL is 1 one time in eight. `command` holds the schema's size; it is
/// zeroed first (padding included). False (the command all zero) when the
/// game has no command.
bool keel_game_command_fill(const sim_game *game, uint64_t seed, uint32_t tick, uint32_t id, void *command);

/// Load `spec` or print "<program>: --game SPEC: <why>" to stderr. Returns
/// 0, or KEEL_EXIT_GAME.
int keel_game_load_or_report(const char *program, const char *spec, keel_game *out);

/// Print what was loaded and what it cost, one line to stderr:
/// "<program>: game NAME version V (digest D), linked|loaded in N us".
void keel_game_describe(const char *program, const keel_game *g);

#ifdef __cplusplus
}
#endif

#endif
