// keel programs: what keel-server and keel-client share (level loading, the
// clock). MIT licence, see LICENSE.
#ifndef KEEL_APP_H
#define KEEL_APP_H

#include <stddef.h>
#include <stdint.h>

#include <keel/sim_level.h>

/// The respawn depth (sim_move_settings.respawn_depth) keel-server plays with
/// unless told otherwise (--respawn-depth M), in metres: a character whose feet
/// fall 16 m below the level's lowest point (about 1.3 s of free fall from it)
/// is put back on a spawn spot. keel-client and keel-play assume the same
/// (their --respawn-depth must match the server's: the settings digest of the
/// handshake checks it). 0 turns respawning off.
#define KEEL_APP_RESPAWN_DEPTH_M 16u
/// The most --respawn-depth accepts (sim_move_settings' range).
#define KEEL_APP_RESPAWN_DEPTH_MAX_M 1024u

/// Whether `name` is a Quake .map file (it ends in ".map", any case).
int keel_app_is_map(const char *name);

/// The scale and up axis a recording names for level `name`: a .map's own
/// ("0.025", 'z'), else `scale` and `up` as given.
const char *keel_app_level_scale(const char *name, const char *scale);
char keel_app_level_up(const char *name, char up);

/// Load "builtin", an OBJ file (scale as a decimal string, up 'y' or 'z') or
/// a Quake .map (a name ending in ".map": 2.5 cm per unit and Z-up, its own
/// conversion; scale and up apply to OBJ files only). The one level loader
/// of keel's programs. 0 on success; -1 with a message in err.
int keel_app_load_level(const char *name, const char *scale, char up, sim_level *out, char *err, size_t err_size);

/// The same, and a .map's entities and brushes into *map (may be NULL; left
/// empty for other levels): what its platforms, water and spawn points come
/// from. The caller frees it with sim_map_free.
int keel_app_load_level_map(const char *name, const char *scale, char up, sim_level *out, sim_map *map, char *err,
                            size_t err_size);

/// Load the level as keel_app_load_level_map does and build its world; on
/// failure print "<program>: <reason>" on stderr and return NULL (nothing
/// left to free). `map` may be NULL.
struct sim_world *keel_app_load_world(const char *program, const char *name, const char *scale, char up,
                                      sim_level *level, sim_map *map);

/// Monotonic clock, microseconds.
uint64_t keel_app_now_us(void);
/// CPU time the calling thread has used, microseconds (what a measurement
/// costs without the time the thread waited for a core); 0 on a system
/// without a per-thread CPU clock.
uint64_t keel_app_thread_cpu_us(void);
/// Sleep until the monotonic clock reaches `deadline_us` (returns at once if
/// past; never before the deadline). keel_app.c's opening comment says how on
/// each system. On Windows the first call sets the timer up (slow: about 130 ms
/// under Wine), even with a deadline already past: a fixed-rate loop calls
/// keel_app_sleep_until_us(0) once before it reads its start time.
void keel_app_sleep_until_us(uint64_t deadline_us);
/// The same with relative sleeps in a loop that reads the clock after each:
/// what every system but Linux uses (here so that Linux tests run it too).
void keel_app_sleep_until_us_portable(uint64_t deadline_us);

/// The file name in `path`: what follows its last '/' or '\\' (either
/// system's separator, so a path recorded on Windows works on Linux and the
/// other way round); `path` itself when it has neither.
const char *keel_app_path_base(const char *path);

/// Parse an unsigned decimal in [lo, hi]; false on anything else.
int keel_app_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
/// Parse an unsigned decimal or 0x hex (no sign, no spaces) in [lo, hi];
/// false on anything else, overflow included.
int keel_app_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

#endif
