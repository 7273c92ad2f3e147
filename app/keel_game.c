// keel programs: --game NAME|PATH, a game from a shared library or from the
// games linked in (keel_game.h). MIT licence, see LICENSE.
#include "keel_game.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <keel/sim_angle.h>
#include <keel/sim_hash.h>

#include "keel_app.h" // the clock (every program that links this file links keel_app)
#include "arena.h"
#include "tag.h"

// No library loading on Windows and WebAssembly, nor in scripts/cross-check.sh's
// builds (most are static): they link their games in.
#if defined(_WIN32) || defined(__EMSCRIPTEN__) || defined(KEEL_CROSS_BUILD)
#define KEEL_GAME_NO_DLOPEN 1
#else
#include <dlfcn.h>
#endif

// The games linked into every program that links this file.
static const struct {
    const char *name;
    keel_game_entry entry;
} linked[] = {
    {"tag", tag_game},
    {"arena", arena_game},
};
#define LINKED_COUNT (sizeof linked / sizeof linked[0])

const char *keel_game_linked_names(void) { return "tag, arena"; }

// A game library calls keel's functions through the program (-rdynamic). A
// static link only keeps the objects a program uses: this table keeps the
// ones of the game interface and the fixed-point helpers a game calls, so
// that every program that loads libraries exports them.
#ifndef KEEL_GAME_NO_DLOPEN
extern void (*const keel_game_kept[])(void);
void (*const keel_game_kept[])(void) = {
    (void (*)(void))sim_game_create,         (void (*)(void))sim_game_tick_number,
    (void (*)(void))sim_game_raycast,        (void (*)(void))sim_game_shape_cast,
    (void (*)(void))sim_game_teleport,       (void (*)(void))sim_game_move_slide,
    (void (*)(void))sim_game_move_ground,    (void (*)(void))sim_game_pack_command,
    (void (*)(void))sim_angle_forward_right, (void (*)(void))sim_hash_u32,
    (void (*)(void))sim_scene_create_game,   (void (*)(void))sim_char_shape,
    (void (*)(void))sim_angle_dir,           (void (*)(void))sim_v3_normalize_len,
    (void (*)(void))sim_v3_normalize,        (void (*)(void))sim_fx_sqrt,
    (void (*)(void))sim_isqrt_u64,
};
#endif

bool keel_game_is_path(const char *spec)
{
    size_t n = strlen(spec);
    static const char *const ends[] = {".so", ".dylib", ".dll"};
    if (strchr(spec, '/') || strchr(spec, '\\'))
        return true;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        size_t e = strlen(ends[i]);
        if (n >= e && strcmp(spec + n - e, ends[i]) == 0)
            return true;
    }
    return strstr(spec, ".so.") != NULL;
}

static bool fail(keel_game *g, keel_game_fault fault, const char *fmt, const char *a, const char *b)
{
    g->fault = fault;
    snprintf(g->error, sizeof g->error, fmt, a, b);
    return false;
}

// Check the definition and build the game (the library stays open on success).
static bool create(keel_game *g, const sim_game_def *def)
{
    if (!def)
        return fail(g, KEEL_GAME_REFUSED, "%s returned no definition%s", KEEL_GAME_ENTRY, "");
    if (def->abi_version != SIM_GAME_ABI_VERSION) {
        char v[64];
        snprintf(v, sizeof v, "%u, this program takes %u", (unsigned)def->abi_version, (unsigned)SIM_GAME_ABI_VERSION);
        return fail(g, KEEL_GAME_ABI, "the game's ABI version is %s (rebuild it against this keel)%s", v, "");
    }
    sim_game_error err = {"", "", -1};
    g->game = sim_game_create(def, &err);
    if (!g->game) {
        char why[200];
        snprintf(why, sizeof why, "%s%s%s", err.reason, err.field[0] ? ", field " : "", err.field);
        return fail(g, KEEL_GAME_REFUSED, "the game's definition is refused: %s%s", why, "");
    }
    return true;
}

bool keel_game_load(const char *spec, keel_game *g)
{
    memset(g, 0, sizeof *g);
    uint64_t t0 = keel_app_now_us();
    bool ok;
    if (!spec || !spec[0]) {
        ok = fail(g, KEEL_GAME_NOT_FOUND, "an empty game name%s%s", "", "");
    } else if (!keel_game_is_path(spec)) {
        ok = false;
        for (size_t i = 0; i < LINKED_COUNT; i++)
            if (strcmp(spec, linked[i].name) == 0) {
                g->linked = true;
                ok = create(g, linked[i].entry());
                break;
            }
        if (!g->linked)
            ok = fail(g, KEEL_GAME_NOT_FOUND,
                      "no game named \"%s\" is linked into this program (linked: %s; a path "
                      "loads a library)",
                      spec, keel_game_linked_names());
    } else {
#ifdef KEEL_GAME_NO_DLOPEN
        ok = fail(g, KEEL_GAME_UNSUPPORTED,
                  "this build cannot load game libraries; link the game in and name it "
                  "(linked: %s)%s",
                  keel_game_linked_names(), "");
#else
        g->library = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
        if (!g->library) {
            const char *why = dlerror();
            ok = fail(g, KEEL_GAME_NOT_FOUND, "cannot load the game library: %s%s", why ? why : spec, "");
        } else {
            void *sym = dlsym(g->library, KEEL_GAME_ENTRY);
            if (!sym) {
                ok = fail(g, KEEL_GAME_NO_ENTRY, "not a game library (it does not export %s)%s", KEEL_GAME_ENTRY, "");
            } else {
                keel_game_entry entry;
                memcpy(&entry, &sym, sizeof entry); // POSIX: a data pointer holds a function's address
                ok = create(g, entry());
            }
            if (!ok) {
                dlclose(g->library);
                g->library = NULL;
            }
        }
#endif
    }
    g->load_us = keel_app_now_us() - t0;
    return ok;
}

void keel_game_unload(keel_game *g)
{
    if (!g)
        return;
    sim_game_destroy(g->game);
    g->game = NULL;
#ifndef KEEL_GAME_NO_DLOPEN
    if (g->library)
        dlclose(g->library);
#endif
    g->library = NULL;
}

int keel_game_load_or_report(const char *program, const char *spec, keel_game *out)
{
    if (keel_game_load(spec, out))
        return 0;
    fprintf(stderr, "%s: --game %s: %s\n", program, spec ? spec : "", out->error);
    return KEEL_EXIT_GAME;
}

void keel_game_describe(const char *program, const keel_game *g)
{
    if (!g->game)
        return;
    fprintf(stderr, "%s: game %s version %u (digest %016" PRIx64 "), %s in %" PRIu64 " us\n", program,
            sim_game_name(g->game), (unsigned)sim_game_version(g->game), sim_game_digest(g->game),
            g->linked ? "linked" : "loaded", g->load_us);
}

// A field's range as keel checks it: [min, max], or both 0: the whole range
// of its bits.
static void field_range(const sim_game_field *f, int64_t *lo, int64_t *hi)
{
    uint32_t bits = f->bits >= 1 && f->bits <= 32 ? f->bits : 32;
    if (f->kind == SIM_GAME_BOOL) {
        *lo = 0, *hi = 1;
    } else if (f->min != 0 || f->max != 0) {
        *lo = f->min, *hi = f->max;
    } else if (f->kind == SIM_GAME_UINT) {
        *lo = 0, *hi = (int64_t)((UINT64_C(1) << bits) - 1u);
    } else {
        *lo = -(INT64_C(1) << (bits - 1)), *hi = (INT64_C(1) << (bits - 1)) - 1;
    }
}

static void field_put(const sim_game_field *f, uint8_t *at, int64_t v)
{
    uint32_t size = f->kind == SIM_GAME_BOOL    ? 1u
                    : f->kind == SIM_GAME_FX    ? 4u
                    : f->kind == SIM_GAME_ANGLE ? 2u
                                                : f->size;
    if (size == 1) {
        uint8_t b = (uint8_t)(v & 0xFF);
        memcpy(at, &b, 1);
    } else if (size == 2) {
        uint16_t h = (uint16_t)(v & 0xFFFF);
        memcpy(at, &h, 2);
    } else {
        uint32_t w = (uint32_t)(v & 0xFFFFFFFF);
        memcpy(at, &w, 4);
    }
}

bool keel_game_command_fill(const sim_game *game, uint64_t seed, uint32_t tick, uint32_t id, void *command)
{
    const sim_game_def *d = sim_game_definition(game);
    if (!d || d->command.size == 0)
        return false;
    memset(command, 0, d->command.size);
    uint64_t h = sim_hash_u32(sim_hash_u32(sim_hash_u32(seed, (uint32_t)(seed >> 32)), tick), id);
    for (uint32_t i = 0; i < d->command.field_count; i++) {
        const sim_game_field *f = &d->command.fields[i];
        uint32_t count = f->count ? f->count : 1u;
        for (uint32_t k = 0; k < count; k++) {
            h = sim_hash_u32(h, i * 65536u + k);
            uint8_t *at = (uint8_t *)command + f->offset + (size_t)k * (count > 1 ? f->stride : 0u);
            int64_t v;
            if (f->kind == SIM_GAME_BOOL) {
                v = (h & 7u) == 0;
            } else if (f->kind == SIM_GAME_ANGLE) {
                uint32_t bits = f->bits >= 1 && f->bits <= 16 ? f->bits : 16;
                v = (int64_t)((h & 0xFFFFu) >> (16u - bits) << (16u - bits));
            } else {
                int64_t lo, hi;
                field_range(f, &lo, &hi);
                uint64_t span = (uint64_t)(hi - lo) + 1u;
                v = lo + (int64_t)(span ? (h >> 8) % span : 0);
            }
            field_put(f, at, v);
        }
    }
    return true;
}
