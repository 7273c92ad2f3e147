// keel tests: shared helpers (levels folder lookup, reference math). MIT licence.
#ifndef KEEL_TEST_SUPPORT_H
#define KEEL_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <keel/sim_math.h>

/// Folder holding the shared real maps (../shared/levels beside the checkout,
/// or $KEEL_LEVELS_DIR). Returns NULL when absent, after printing a skip note.
const char *keel_test_levels_dir(void);

/// Full path of a shared map ("sauerbraten_zdm2.obj"), or NULL (with a skip
/// note printed) when the folder or the file is absent. Static buffer.
const char *keel_test_level_path(const char *file);

/// Deterministic test random numbers (splitmix64).
typedef struct keel_rng {
    uint64_t state;
} keel_rng;
uint64_t keel_rng_next(keel_rng *r);
/// Uniform integer in [lo, hi].
int64_t keel_rng_range(keel_rng *r, int64_t lo, int64_t hi);
/// Uniform sim_fx in [lo, hi].
sim_fx keel_rng_fx(keel_rng *r, sim_fx lo, sim_fx hi);
/// `ops` random edits of text[0..*len) (capacity `cap`): a byte replaced,
/// inserted or deleted (from `alphabet`, `alphabet_len` bytes, NULs allowed)
/// or a segment repeated. The loaders' fuzzers use it.
void keel_test_mutate(keel_rng *r, char *text, size_t *len, size_t cap, const char *alphabet, size_t alphabet_len,
                      int ops);

struct sim_level;
struct sim_world;
struct sim_move_settings;

/// Loads the built-in level into *level and builds its world, failing the
/// test when either fails; keel_test_builtin_free frees both. The world is
/// built once per test executable and read back from a file by its other
/// processes (world_cache.c; KEEL_TEST_NO_WORLD_CACHE=1 builds it every time).
struct sim_world *keel_test_builtin_world(struct sim_level *level);
void keel_test_builtin_free(struct sim_level *level, struct sim_world *world);
/// The same for sim_level_generate's level of `triangles` triangles from
/// `seed` (freed with keel_test_builtin_free too).
struct sim_world *keel_test_generated_world(struct sim_level *level, uint32_t triangles, uint32_t seed);
/// A closed room (faces facing inward) with its floor at y 0 from (x0, z0) to
/// (x1, z1), `height` high (raw Q16.16 units), plus an axis-aligned solid
/// block from `block_min` to `block_max` when `block_max` is given; its world
/// (freed with keel_test_builtin_free too).
struct sim_world *keel_test_room_world(struct sim_level *level, int32_t x0, int32_t z0, int32_t x1, int32_t z1,
                                       int32_t height, const sim_vec3 *block_min, const sim_vec3 *block_max);

struct sim_char_state;

/// The surface-crossing check of the crowd and soak tests: how many of the
/// `count` characters moved their centre through a triangle of the static
/// world between `before` and `after` (the same characters in the same order,
/// as sim_scene_characters gives them when none was added or removed). A
/// free shape's centre stays at least its half width from geometry, so a
/// centre path that crosses a surface went through it. Noclip flyers (before
/// or after) are left out. When `first` is given, it receives the index of
/// the first crossing (unchanged when there is none).
uint32_t keel_test_crossings(const struct sim_world *world, const struct sim_move_settings *s,
                             const struct sim_char_state *before, const struct sim_char_state *after, uint32_t count,
                             int64_t *first);

// ---- running the real programs (test_programs.c) ----------------------------------

/// A program built beside this test executable (the same build folder, found
/// through /proc/self/exe), or NULL when it is not there. The path is in one
/// of four static buffers that later calls reuse in turn.
const char *keel_test_program_find(const char *name);
/// The same, failing the test when the program is not built.
const char *keel_test_program_path(const char *name);

typedef struct keel_test_run_options {
    int stdin_fd;    ///< the program's standard input; -1 keeps this test's
    int timeout_s;   ///< > 0: killed after that long (a guard against hangs), timed_out set
    long file_limit; ///< > 0: caps the size of the files it writes, its output
                     ///< included (RLIMIT_FSIZE, SIGXFSZ ignored: as a full disk)
} keel_test_run_options;
keel_test_run_options keel_test_run_default_options(void);

typedef struct keel_test_run_result {
    int exit_code; ///< -1 when the process did not exit normally
    bool timed_out;
    char *out; ///< stdout, NUL-terminated
    size_t out_len;
    char *err; ///< stderr, NUL-terminated
    size_t err_len;
} keel_test_run_result;

/// Runs `program` (a path, see keel_test_program_path) with the NULL-terminated
/// `args` to its end, capturing its stdout and stderr. `options` may be NULL
/// (the defaults). Free the result with keel_test_run_free.
keel_test_run_result keel_test_run(const char *program, const char *const *args, const keel_test_run_options *options);
void keel_test_run_free(keel_test_run_result *r);

// ---- background programs (test_procs.c) ----------------------------------------

/// A program running while the test talks to it, its stdout and stderr in two
/// temporary files.
typedef struct keel_test_proc {
    pid_t pid;
    char out[256], err[256];
    int status; ///< exit code, or 128 + the signal
    bool done;
} keel_test_proc;

/// Starts build/<program> (keel_test_program_path) with the NULL-terminated args.
void keel_test_proc_start(keel_test_proc *p, const char *program, const char *const *args);
/// The same for any program given by its path (not necessarily built here).
void keel_test_proc_start_path(keel_test_proc *p, const char *path, const char *const *args);
/// Waits up to `ms` for the process to end; false when it is still running
/// (a guard against hangs, not a speed check).
bool keel_test_proc_wait(keel_test_proc *p, long ms);
/// Sends `sig` unless it has ended, and waits for it (up to 5 s).
void keel_test_proc_kill(keel_test_proc *p, int sig);
/// Kills it if it still runs and removes its output files.
void keel_test_proc_cleanup(keel_test_proc *p);
void keel_test_sleep_ms(long ms);
/// The port in the first "... listening on 127.0.0.1:PORT" of a file, waiting
/// up to 10 s for it to appear.
unsigned keel_test_wait_port(const char *file);
struct sockaddr_in;
/// *a = 127.0.0.1:port (port in host order).
void keel_test_loopback(struct sockaddr_in *a, uint16_t port);
/// Waits up to `ms` for the file to hold `needle` (a guard against hangs);
/// false when it never did.
bool keel_test_wait_text(const char *file, const char *needle, long ms);
/// The number after the first "key": in a JSON text.
double keel_test_json_num(const char *s, const char *key);

// ---- temporary files and folders (test_files.c) ----------------------------------

/// Creates an empty temporary file $TMPDIR/keel_<what>_XXXXXX (TMPDIR
/// defaulting to /tmp): its name in `name`, its open descriptor returned.
int keel_test_temp_fd(char *name, size_t size, const char *what);
/// Everything in `fd` from its start (a pipe: from where it is) to its end,
/// NUL-terminated (free it); its length in *len when len is given.
char *keel_test_read_fd(int fd, size_t *len);
/// A whole file, NUL-terminated (free it); empty when it cannot be opened.
char *keel_test_read_file(const char *path);
/// Makes the folder /tmp/keel_test_<what>_<pid> for a suite's files (its
/// name in `dir`); keel_test_dir_remove removes it with what it holds.
void keel_test_dir_make(char *dir, size_t size, const char *what);
void keel_test_dir_remove(const char *dir);
/// `dir`/`name`, in one of four static buffers that later calls reuse in turn.
const char *keel_test_dir_file(const char *dir, const char *name);

/// A warning in a test's log (needs <criterion/logging.h>). Criterion 2.4's
/// cr_log_warn makes the test executable exit 1 although every assertion
/// passed, so tests warn through this: a warning never fails a test, a
/// failure always does. The format must be a string literal.
#define keel_test_warn(...) cr_log_info("warning: " __VA_ARGS__)

/// A loop's size: `normal` in the normal tree, `sanitized` in the sanitizer
/// tree (KEEL_SANITIZED_BUILD, set by tests/CMakeLists.txt), where the code
/// runs 5-20x slower. The sanitizers look for memory errors and undefined
/// behaviour along the same paths, so they take fewer seeds, ticks or
/// characters; the promises are judged at full size in the normal tree.
#ifdef KEEL_SANITIZED_BUILD
#define KEEL_TEST_SIZE(normal, sanitized) (sanitized)
#else
#define KEEL_TEST_SIZE(normal, sanitized) (normal)
#endif

static inline double keel_fx_to_d(sim_fx v) { return (double)v / 65536.0; }

#endif
