// keel-sim: command-line options. MIT licence, see LICENSE.
//
// Hand-written rather than getopt_long so the program needs nothing beyond
// C11 and accepts both "--flag value" and "--flag=value" the same way.
#include "keel_sim.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <keel/rec.h>

#include "keel_opt.h"

void ks_print_usage(FILE *f)
{
    fputs("usage: keel-sim [options]\n"
          "Runs characters (the keel mover, with seeded random or scripted input) or\n"
          "probes against a level and prints their state every tick, a state hash per\n"
          "tick and the final state hash.\n"
          "\n"
          "  --mode characters|probes  what to simulate (default characters)\n"
          "  --level builtin|generated|PATH  level to load (default builtin; PATH is an OBJ file)\n"
          "  --scale S                OBJ metres per file unit: a positive decimal with at\n"
          "                           most 12 significant digits (default 0.12; OBJ only)\n"
          "  --up y|z                 OBJ up axis (default y; OBJ only)\n"
          "  --generate-triangles N   size of --level generated (default 20000; the level\n"
          "                           is generated from the low 32 bits of --seed)\n"
          "  --ticks N                ticks to run (default 640)\n"
          "  --characters N           number of characters (ids 1..N) or probes (default 8)\n"
          "  --seed S                 random seed, decimal or 0x hex (default 1)\n"
          "  --input FILE             characters: commands from FILE instead of random\n"
          "                           input (one per line: tick character forward right up\n"
          "                           yaw pitch buttons; see docs/formats.md)\n"
          "  --rate N                 ticks per second (default 64; characters 2 to 1000,\n"
          "                           probes 1 to 1000)\n"
          "  --shape capsule|box|cylinder\n"
          "                           capsule r 0.4 h 1.8, box 0.8x1.8x0.8 or cylinder\n"
          "                           r 0.4 h 1.8 (crouched: height 1.0) (default capsule)\n"
          "  --spawn X,Y,Z            spawn feet point in metres, within the character\n"
          "                           range (+-4016 on each axis); repeat\n"
          "                           for more; entity i uses point i mod count (default:\n"
          "                           the level's spawn* markers, else seeded points on\n"
          "                           walkable floor)\n"
          "  --random-spawns          characters: seeded points on walkable floor even\n"
          "                           when the level has spawn markers\n"
          "  --platforms              characters: add an elevator and a shuttle at the\n"
          "                           level's platform_area marker (the built-in level);\n"
          "                           on a .map level its movers and water instead\n"
          "  --edge-guard             characters: turn back where there is no floor at\n"
          "                           all ahead, as tests/test_soak.c does\n"
          "  --set NAME=VALUE         characters: change a movement setting from its default\n"
          "                           (an exact decimal; repeat for more): gravity,\n"
          "                           max_speed, accelerate, air_accelerate, air_max_speed,\n"
          "                           friction, stop_speed, jump_velocity, step_height,\n"
          "                           fly_speed, swim_speed\n"
          "  --record FILE            characters: record every tick into FILE for\n"
          "                           keel-replay (docs/keel-replay.md)\n"
          "  --keyframe-interval N    ticks between the recording's keyframes (default 64;\n"
          "                           0: none)\n"
          "  --record-full            keyframe every tick (debug mode: keel-replay names the\n"
          "                           field that diverged)\n"
          "  --no-compress            do not zstd-compress the recording's tick blocks\n"
          "  --sync-test [K]          characters: every tick, check that a scene restored\n"
          "                           from sim_scene_save equals the run, and that rolling\n"
          "                           back k ticks (1..K, varied; K 1 to 32, default 8) and\n"
          "                           re-simulating gives the run's state (with --game,\n"
          "                           its state too); the first mismatch is named and\n"
          "                           exits 1\n"
          "  --threads N              characters: run the scene's moves on N threads, 1 to\n"
          "                           64 (default 1); the output is the same for every N\n"
          "  --game NAME|PATH         characters: play a game: NAME linked into keel-sim\n"
          "                           (tag, arena) or a PATH to a game library exporting\n"
          "                           keel_game_v1 (docs/game.md); its commands are seeded\n"
          "                           random values in their ranges\n"
          "  --format jsonl|csv       output format (default jsonl)\n"
          "  --quiet                  print only the final_hash line\n"
          "  --help                   print this help and exit\n"
          "Each option may be given once, except --spawn and --set.\n",
          f);
}

// Strict unsigned decimal (or 0x hex when allow_hex) within [lo, hi]: no sign,
// no spaces, no trailing text.
static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, bool allow_hex, uint64_t *out)
{
    int base = 10;
    const char *digits = s;
    if (allow_hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        digits = s + 2;
    }
    if (!digits[0])
        return false;
    for (const char *c = digits; *c; c++) {
        bool ok = (*c >= '0' && *c <= '9') || (base == 16 && ((*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F')));
        if (!ok)
            return false;
    }
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(digits, &end, base);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = (uint64_t)v;
    return true;
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t v;
    if (!parse_u64(s, lo, hi, false, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

bool ks_parse_fx(const char *s, const char **end, sim_fx *out)
{
    const char *c = s;
    bool neg = false;
    if (*c == '+' || *c == '-')
        neg = *c++ == '-';
    uint64_t ip = 0;
    int int_digits = 0;
    while (*c >= '0' && *c <= '9') {
        ip = ip * 10u + (uint64_t)(*c++ - '0');
        if (ip >= 32768u)
            return false;
        int_digits++;
    }
    // The fraction as the integer `frac` over 10^k, k <= 18 so both fit in
    // 63 bits and the binary expansion below cannot overflow.
    uint64_t frac = 0, pow10 = 1;
    int frac_digits = 0;
    if (*c == '.') {
        c++;
        while (*c >= '0' && *c <= '9') {
            if (++frac_digits > 18)
                return false;
            frac = frac * 10u + (uint64_t)(*c++ - '0');
            pow10 *= 10u;
        }
    }
    if (int_digits + frac_digits == 0)
        return false;
    // 17 binary fraction bits by long division: 16 for Q16.16 and one to round.
    uint64_t bits = 0;
    for (int i = 0; i < 17; i++) {
        frac *= 2u;
        bits <<= 1;
        if (frac >= pow10) {
            frac -= pow10;
            bits |= 1u;
        }
    }
    // Round half away from zero: magnitude rounded up when the 17th bit is set.
    uint64_t mag = (ip << 16) + ((bits + 1u) >> 1);
    if (mag > 0x7FFFFFFFu)
        return false;
    *out = neg ? -(sim_fx)mag : (sim_fx)mag;
    *end = c;
    return true;
}

// X,Y,Z in metres, each a decimal within the character range. On failure
// writes the reason into why, naming the coordinate as typed.
static bool parse_spawn(const char *s, sim_vec3 *out, char *why, size_t why_size)
{
    static const char axis[3] = {'x', 'y', 'z'};
    const int lim_m = (int)(KS_SPAWN_LIMIT / SIM_FX_ONE);
    sim_fx v[3];
    const char *c = s;
    for (int i = 0; i < 3; i++) {
        // The coordinate's text: up to the next comma.
        size_t n = i < 2 ? strcspn(c, ",") : strlen(c);
        int shown = n > 40 ? 40 : (int)n;
        const char *more = n > 40 ? "..." : "";
        if (i < 2 && c[n] != ',') {
            snprintf(why, why_size, "three coordinates X,Y,Z are needed");
            return false;
        }
        // Syntax: [+-] digits [. digits], at least one digit.
        size_t k = (c[0] == '+' || c[0] == '-') ? 1 : 0;
        size_t int_from = k, digits = 0;
        while (k < n && c[k] >= '0' && c[k] <= '9')
            k++, digits++;
        size_t int_to = k, decimals = 0;
        if (k < n && c[k] == '.')
            for (k++; k < n && c[k] >= '0' && c[k] <= '9'; k++)
                digits++, decimals++;
        if (digits == 0 || k != n) {
            snprintf(why, why_size, "%c '%.*s%s' is not a decimal number of metres", axis[i], shown, c, more);
            return false;
        }
        const char *end = NULL;
        bool parsed = ks_parse_fx(c, &end, &v[i]) && end == c + n;
        if (!parsed) {
            // ks_parse_fx refuses 32768 m and more (out of range here too),
            // and more than 18 decimals.
            while (int_from < int_to && c[int_from] == '0')
                int_from++;
            bool huge = int_to - int_from > 5 || (int_to - int_from == 5 && strncmp(c + int_from, "32768", 5) >= 0);
            if (!huge && decimals > 18) {
                snprintf(why, why_size, "%c '%.*s%s' has more than 18 decimals", axis[i], shown, c, more);
                return false;
            }
        }
        if (!parsed || v[i] < -KS_SPAWN_LIMIT || v[i] > KS_SPAWN_LIMIT) {
            snprintf(why, why_size, "%c %.*s%s is outside the character range (-%d to %d m)", axis[i], shown, c, more,
                     lim_m, lim_m);
            return false;
        }
        c += n + (i < 2);
    }
    *out = sim_v3(v[0], v[1], v[2]);
    return true;
}

// What the OBJ loader accepts as unit_scale (docs/formats.md): digits with an
// optional point and exponent ("0.12", "2.54e-2"), not zero, with at most 12
// significant digits (leading and trailing zeros do not count). Checked here
// so that a bad scale is a usage error found before anything is loaded.
#define KS_SCALE_MAX_DIGITS 12
static bool valid_scale(const char *s)
{
    const char *c = s;
    int digits = 0, significant = 0, zeros = 0;
    bool nonzero = false, point = false;
    for (; (*c >= '0' && *c <= '9') || (*c == '.' && !point); c++) {
        if (*c == '.') {
            point = true;
            continue;
        }
        digits++;
        if (*c == '0') {
            zeros += nonzero; // trailing zeros only count once a digit follows
            continue;
        }
        significant += zeros + 1;
        zeros = 0;
        nonzero = true;
    }
    if (digits == 0 || !nonzero || significant > KS_SCALE_MAX_DIGITS)
        return false;
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!(*c >= '0' && *c <= '9'))
            return false;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    return *c == '\0';
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static ks_parse_status
usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("keel-sim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (keel-sim --help lists the options)\n", stderr);
    va_end(ap);
    return KS_PARSE_ERROR;
}

// Every option, switches and options with a value; the order gives the
// OPT_ indices used below.
static const char *const known_options[] = {
    "help",
    "quiet",
    "platforms",
    "edge-guard",
    "random-spawns",
    "mode",
    "input",
    "level",
    "scale",
    "up",
    "generate-triangles",
    "ticks",
    "characters",
    "seed",
    "shape",
    "spawn",
    "format",
    "rate",
    "record",
    "keyframe-interval",
    "record-full",
    "no-compress",
    "set",
    "sync-test",
    "threads",
    "game",
};
enum {
    OPT_SCALE = 8,
    OPT_UP = 9,
    OPT_GENERATE = 10,
    OPT_KEYFRAME = 19,
    OPT_RECORD_FULL = 20,
    OPT_NO_COMPRESS = 21,
    OPT_THREADS = 24
};

// The settings --set knows: Q16.16 fields of sim_move_settings.
#define KS_SETTING(name)                         \
    {                                            \
#name, offsetof(sim_move_settings, name) \
    }
static const struct {
    const char *name;
    size_t offset;
} settable[] = {
    KS_SETTING(gravity),       KS_SETTING(max_speed), KS_SETTING(accelerate), KS_SETTING(air_accelerate),
    KS_SETTING(air_max_speed), KS_SETTING(friction),  KS_SETTING(stop_speed), KS_SETTING(jump_velocity),
    KS_SETTING(step_height),   KS_SETTING(fly_speed), KS_SETTING(swim_speed),
};
#undef KS_SETTING
#define SETTABLE_COUNT (sizeof settable / sizeof settable[0])

sim_move_settings ks_settings_make(const ks_options *opt)
{
    sim_move_settings s = sim_move_default_settings();
    s.tick_rate = (int32_t)opt->rate;
    if (opt->shape_type == SIM_SHAPE_BOX) {
        s.stand_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(900), SIM_FX_MM(400));
        s.crouch_shape = sim_shape_box(SIM_FX_MM(400), SIM_FX_MM(500), SIM_FX_MM(400));
    } else if (opt->shape_type == SIM_SHAPE_CYLINDER) {
        s.stand_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1800));
        s.crouch_shape = sim_shape_cylinder(SIM_FX_MM(400), SIM_FX_MM(1000));
    }
    for (uint32_t i = 0; i < opt->settings_change_count; i++) {
        const ks_setting_change *c = &opt->settings_changes[i];
        memcpy((char *)&s + settable[c->index].offset, &c->value, sizeof c->value);
    }
    return s;
}

ks_parse_status ks_parse_options(int argc, char **argv, ks_options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = KS_MODE_CHARACTERS;
    o->level_kind = KS_LEVEL_BUILTIN;
    o->level_name = "builtin";
    o->scale = "0.12";
    o->up_axis = 'y';
    o->generate_triangles = 20000;
    o->ticks = 640;
    o->characters = 8;
    o->seed = 1;
    o->shape_type = SIM_SHAPE_CAPSULE;
    o->format = KS_FORMAT_JSONL;
    o->rate = 64;
    o->threads = 1;

    o->keyframe_interval = REC_DEFAULT_KEYFRAME_INTERVAL;
    o->record_compress = true;
    bool record_full = false, no_compress = false;

    // Options given so far (every option but --spawn and --set may be given once).
    bool seen[sizeof known_options / sizeof known_options[0]] = {false};
    keel_opt p; // the programs' shared parser (keel_opt.h): --name value, --name=value
    keel_opt_init(&p, "keel-sim", argc, argv, 1);
    const char *arg;
    while ((arg = keel_opt_next(&p))) {
        if (strncmp(arg, "--", 2) != 0)
            return usage_error("unexpected argument '%s'", arg);
        const char *name = arg + 2;
        size_t name_len = strlen(name);
        const char *value = p.inline_value;
        p.inline_used = true; // a switch given a value is refused below, by name

        // Known at all? (Before asking for a value: "--foo" is unknown, not
        // an option that needs one.)
        int known = -1;
        for (size_t k = 0; k < sizeof known_options / sizeof known_options[0]; k++)
            if (name_len == strlen(known_options[k]) && strncmp(name, known_options[k], name_len) == 0)
                known = (int)k;
        if (known < 0)
            return usage_error("unknown option '%s'", arg);
        if (seen[known] && strcmp(known_options[known], "spawn") != 0 && strcmp(known_options[known], "set") != 0)
            return usage_error("option --%s is given more than once (only --spawn and --set repeat)",
                               known_options[known]);
        seen[known] = true;

#define IS(opt) (name_len == strlen(opt) && strncmp(name, opt, name_len) == 0)
        // Switches: no value.
        bool *sw = IS("quiet")           ? &o->quiet
                   : IS("platforms")     ? &o->platforms
                   : IS("edge-guard")    ? &o->edge_guard
                   : IS("random-spawns") ? &o->random_spawns
                   : IS("record-full")   ? &record_full
                   : IS("no-compress")   ? &no_compress
                                         : NULL;
        if (IS("help") || sw) {
            if (value)
                return usage_error("option --%.*s takes no value ('%s')", (int)name_len, name, value);
            if (IS("help")) {
                ks_print_usage(stdout);
                return KS_PARSE_HELP;
            }
            *sw = true;
            continue;
        }
        if (IS("sync-test")) {
            // The depth is optional: "--sync-test", "--sync-test 16" or
            // "--sync-test=16" (keel-sim takes no other bare arguments, so
            // a following word that is not an option is the depth).
            if (!value && p.next < argc && strncmp(argv[p.next], "--", 2) != 0)
                value = argv[p.next++];
            o->sync_depth = KS_SYNC_DEFAULT_DEPTH;
            if (value && !parse_u32(value, 1, KS_SYNC_MAX_DEPTH, &o->sync_depth))
                return usage_error("bad --sync-test '%s' (the deepest rollback: 1 to %d ticks)", value,
                                   KS_SYNC_MAX_DEPTH);
            continue;
        }
        if (!value && !(value = keel_opt_value(&p)))
            return KS_PARSE_ERROR; // "keel-sim: --x: needs a value"

        if (IS("mode")) {
            if (strcmp(value, "characters") == 0)
                o->mode = KS_MODE_CHARACTERS;
            else if (strcmp(value, "probes") == 0)
                o->mode = KS_MODE_PROBES;
            else
                return usage_error("bad --mode '%s' (characters or probes)", value);
        } else if (IS("input")) {
            if (!value[0])
                return usage_error("--input needs a file name");
            o->input_path = value;
        } else if (IS("level")) {
            if (!value[0])
                return usage_error("--level needs builtin, generated or a path");
            o->level_name = value;
            o->level_kind = strcmp(value, "builtin") == 0     ? KS_LEVEL_BUILTIN
                            : strcmp(value, "generated") == 0 ? KS_LEVEL_GENERATED
                                                              : KS_LEVEL_OBJ;
        } else if (IS("scale")) {
            if (!valid_scale(value))
                return usage_error("bad --scale '%s' (a positive decimal with at most %d "
                                   "significant digits, such as 0.12)",
                                   value, KS_SCALE_MAX_DIGITS);
            o->scale = value;
        } else if (IS("up")) {
            if (strcmp(value, "y") != 0 && strcmp(value, "z") != 0)
                return usage_error("bad --up '%s' (y or z)", value);
            o->up_axis = value[0];
        } else if (IS("generate-triangles")) {
            if (!parse_u32(value, 1, 15000000, &o->generate_triangles))
                return usage_error("bad --generate-triangles '%s' (1 to 15000000)", value);
        } else if (IS("ticks")) {
            if (!parse_u32(value, 0, 100000000, &o->ticks))
                return usage_error("bad --ticks '%s' (0 to 100000000)", value);
        } else if (IS("characters")) {
            if (!parse_u32(value, 0, KS_MAX_CHARACTERS, &o->characters))
                return usage_error("bad --characters '%s' (0 to %u)", value, KS_MAX_CHARACTERS);
        } else if (IS("seed")) {
            if (!parse_u64(value, 0, UINT64_MAX, true, &o->seed))
                return usage_error("bad --seed '%s' (decimal or 0x hex, 64 bits)", value);
        } else if (IS("shape")) {
            if (strcmp(value, "capsule") == 0)
                o->shape_type = SIM_SHAPE_CAPSULE;
            else if (strcmp(value, "box") == 0)
                o->shape_type = SIM_SHAPE_BOX;
            else if (strcmp(value, "cylinder") == 0)
                o->shape_type = SIM_SHAPE_CYLINDER;
            else
                return usage_error("bad --shape '%s' (capsule, box or cylinder)", value);
        } else if (IS("spawn")) {
            if (o->spawn_count >= KS_MAX_SPAWNS)
                return usage_error("too many --spawn points (at most %d)", KS_MAX_SPAWNS);
            char why[160];
            if (!parse_spawn(value, &o->spawns[o->spawn_count], why, sizeof why))
                return usage_error("bad --spawn '%s': %s", value, why);
            o->spawn_count++;
        } else if (IS("format")) {
            if (strcmp(value, "jsonl") == 0)
                o->format = KS_FORMAT_JSONL;
            else if (strcmp(value, "csv") == 0)
                o->format = KS_FORMAT_CSV;
            else
                return usage_error("bad --format '%s' (jsonl or csv)", value);
        } else if (IS("record")) {
            if (!value[0])
                return usage_error("--record needs a file name");
            o->record_path = value;
        } else if (IS("keyframe-interval")) {
            if (!parse_u32(value, 0, 1000000, &o->keyframe_interval))
                return usage_error("bad --keyframe-interval '%s' (0 to 1000000 ticks; 0: none)", value);
        } else if (IS("set")) {
            if (o->settings_change_count >= KS_MAX_SETTING_CHANGES)
                return usage_error("too many --set options (at most %d)", KS_MAX_SETTING_CHANGES);
            size_t n = strcspn(value, "=");
            if (value[n] != '=')
                return usage_error("bad --set '%s' (NAME=VALUE, such as jump_velocity=7.0)", value);
            uint32_t k = 0;
            while (k < SETTABLE_COUNT && !(strlen(settable[k].name) == n && strncmp(settable[k].name, value, n) == 0))
                k++;
            if (k == SETTABLE_COUNT)
                return usage_error("--set: unknown setting '%.*s' (see --help for the names)", (int)n, value);
            const char *end = NULL;
            sim_fx v;
            if (!ks_parse_fx(value + n + 1, &end, &v) || *end != '\0')
                return usage_error("bad --set '%s': the value is not a decimal number", value);
            o->settings_changes[o->settings_change_count++] = (ks_setting_change){k, v};
        } else if (IS("game")) {
            if (!value[0])
                return usage_error("bad --game '' (a game's name or a library's path)");
            o->game_spec = value;
        } else if (IS("threads")) {
            if (!parse_u32(value, 1, KS_MAX_THREADS, &o->threads))
                return usage_error("bad --threads '%s' (1 to %u)", value, (unsigned)KS_MAX_THREADS);
        } else if (IS("rate")) {
            // At 1 tick per second a 50 m/s fall still stays within one
            // query's 64 m displacement limit.
            if (!parse_u32(value, 1, 1000, &o->rate))
                return usage_error("bad --rate '%s' (1 to 1000 ticks per second)", value);
        } else {
            return usage_error("unknown option '%s'", arg); // not reached: checked above
        }
#undef IS
    }
    // Options that only mean something for one kind of level would be
    // ignored silently otherwise.
    if (o->level_kind != KS_LEVEL_OBJ && (seen[OPT_SCALE] || seen[OPT_UP]))
        return usage_error("--%s applies to OBJ files only; --level %s has no %s", seen[OPT_SCALE] ? "scale" : "up",
                           o->level_name, seen[OPT_SCALE] ? "scale" : "up axis");
    if (o->level_kind != KS_LEVEL_GENERATED && seen[OPT_GENERATE])
        return usage_error("--generate-triangles applies to --level generated only");
    if (record_full) {
        if (seen[OPT_KEYFRAME] && o->keyframe_interval != 1)
            return usage_error("--record-full is --keyframe-interval 1; both were given");
        o->keyframe_interval = 1;
    }
    o->record_compress = !no_compress;
    if (!o->record_path && (seen[OPT_KEYFRAME] || record_full || no_compress))
        return usage_error("--keyframe-interval, --record-full and --no-compress need --record FILE");
    if (o->mode == KS_MODE_PROBES) {
        if (o->input_path || o->platforms || o->edge_guard || o->random_spawns)
            return usage_error("--input, --platforms, --edge-guard and --random-spawns need "
                               "--mode characters");
        if (o->record_path || o->settings_change_count > 0 || o->sync_depth)
            return usage_error("--record, --set and --sync-test need --mode characters (probes are "
                               "not a sim_scene)");
        if (seen[OPT_THREADS])
            return usage_error("--threads needs --mode characters (probes are not a sim_scene)");
        if (o->game_spec)
            return usage_error("--game needs --mode characters (probes are not a sim_scene)");
    } else if (o->input_path && o->edge_guard) {
        return usage_error("--edge-guard steers random input only; it cannot be used with --input");
    } else if (o->rate < 2) {
        // At 1 Hz a character at the 100 m/s speed limit would move further
        // in one tick than one collision query accepts (64 m).
        return usage_error("bad --rate '%u' (characters: 2 to 1000 ticks per second)", (unsigned)o->rate);
    }
    if (o->record_path && o->characters > REC_MAX_CHARACTERS)
        return usage_error("--record: at most %u characters in a recording (--characters %u)",
                           (unsigned)REC_MAX_CHARACTERS, (unsigned)o->characters);
    if (o->record_path && o->level_kind == KS_LEVEL_OBJ && strlen(o->level_name) >= 256)
        return usage_error("--record: the level path is too long for a recording (255 bytes at most)");
    if (o->settings_change_count > 0) {
        sim_move_settings s = ks_settings_make(o);
        const char *why = NULL;
        if (!sim_move_settings_check(&s, &why))
            return usage_error("--set: the settings are out of range: %s", why ? why : "?");
    }
    return KS_PARSE_RUN;
}
