// keel-replay info: what a recording holds. MIT licence, see LICENSE.
#include <inttypes.h>
#include <string.h>

#include "replay.h"

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20 || *c >= 0x7F)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static const char *level_kind_name(rec_level_kind k)
{
    return k == REC_LEVEL_BUILTIN     ? "builtin"
           : k == REC_LEVEL_GENERATED ? "generated"
           : k == REC_LEVEL_OBJ       ? "obj"
                                      : "?";
}

int replay_info(const char *file, rec_file *f, bool json)
{
    const rec_header *h = rec_file_header(f);
    rec_info in;
    rec_file_info(f, &in);
    int rate = h->settings.tick_rate > 0 ? h->settings.tick_rate : 64;

    // Character-ticks (for bytes per player-hour): one pass over the ticks,
    // which also decodes every block of the readable part.
    uint64_t char_ticks = 0;
    rec_error err = {0};
    bool scan_ok = true;
    if (h->kind == REC_KIND_SCENE) {
        rec_cursor *c = rec_cursor_create(f, in.first_tick, &err);
        rec_tick t;
        if (!c)
            scan_ok = false;
        while (c && rec_cursor_next(c, &t, &err))
            char_ticks += t.char_count;
        if (err.message[0])
            scan_ok = false;
        if (c)
            rec_cursor_destroy(c);
    }
    // bytes / (character-ticks / rate / 3600)
    double per_player_hour = char_ticks > 0 ? (double)in.file_bytes * 3600.0 * rate / (double)char_ticks : 0.0;
    double seconds = (double)in.tick_count / rate;

    if (json) {
        FILE *o = stdout;
        fputs("{\"file\":", o);
        json_str(o, file);
        fprintf(o, ",\"bytes\":%" PRIu64 ",\"complete\":%s", in.file_bytes, in.complete ? "true" : "false");
        if (!in.complete)
            fprintf(o, ",\"truncated_at\":%" PRIu64, in.truncated_at);
        fprintf(o, ",\"kind\":\"%s\",\"format_version\":%u,\"behaviour_version\":%u,\"source\":",
                h->kind == REC_KIND_CLIENT ? "client" : "scene", (unsigned)h->format_version,
                (unsigned)h->behaviour_version);
        json_str(o, h->source);
        fputs(",\"build_id\":", o);
        json_str(o, h->build_id);
        if (h->game_name[0]) {
            fputs(",\"game\":{\"name\":", o);
            json_str(o, h->game_name);
            fprintf(o, ",\"version\":%u,\"digest\":\"%016" PRIx64 "\",\"command_bytes\":%u}", (unsigned)h->game_version,
                    h->game_digest, (unsigned)h->game_command_bytes);
        }
        fprintf(o, ",\"settings_digest\":\"%016" PRIx64 "\",\"tick_rate\":%d", h->settings_digest,
                (int)h->settings.tick_rate);
        fprintf(o, ",\"level\":{\"kind\":\"%s\",\"path\":", level_kind_name(h->level.kind));
        json_str(o, h->level.path);
        fputs(",\"scale\":", o);
        json_str(o, h->level.scale);
        fprintf(o, ",\"up\":\"%c\",\"generate_triangles\":%u,\"generate_seed\":%u,\"digest\":\"%016" PRIx64 "\"}",
                h->level.up_axis ? h->level.up_axis : 'y', (unsigned)h->level.generate_triangles,
                (unsigned)h->level.generate_seed, h->level.digest);
        fprintf(o, ",\"platforms\":%u,\"waters\":%u,\"keyframe_interval\":%u,\"compress\":%s",
                (unsigned)h->platform_count, (unsigned)h->water_count, (unsigned)h->keyframe_interval,
                h->compress ? "true" : "false");
        fprintf(o, ",\"first_tick\":%u,\"ticks\":%u,\"seconds\":%.3f,\"players\":%u,\"max_characters\":%u",
                (unsigned)in.first_tick, (unsigned)in.tick_count, seconds, (unsigned)in.players,
                (unsigned)h->max_characters);
        fprintf(o,
                ",\"max_characters_seen\":%u,\"joins\":%" PRIu64 ",\"leaves\":%" PRIu64 ",\"character_ticks\":%" PRIu64,
                (unsigned)in.max_characters_seen, in.joins, in.leaves, char_ticks);
        if (h->kind == REC_KIND_SCENE)
            fprintf(o, ",\"substitutes_marked\":%s,\"substitutes\":%" PRIu64, h->substitutes_marked ? "true" : "false",
                    in.substitutes);
        fprintf(o, ",\"keyframes\":%u,\"blocks\":%u,\"compressed_blocks\":%u,\"client_records\":%u",
                (unsigned)in.keyframes, (unsigned)in.blocks, (unsigned)in.compressed_blocks,
                (unsigned)in.client_records);
        fprintf(o,
                ",\"section_bytes\":{\"header\":%" PRIu64 ",\"schema\":%" PRIu64 ",\"initial\":%" PRIu64
                ",\"ticks\":%" PRIu64 ",\"keyframes\":%" PRIu64 ",\"client\":%" PRIu64 ",\"end\":%" PRIu64 "}",
                in.bytes_header, in.bytes_schema, in.bytes_initial, in.bytes_ticks, in.bytes_keyframes, in.bytes_client,
                in.bytes_end);
        fprintf(o, ",\"bytes_per_player_hour\":%.0f,\"last_hash\":\"%016" PRIx64 "\"", per_player_hour, in.last_hash);
        if (h->kind == REC_KIND_CLIENT)
            fprintf(o, ",\"last_confirmed_tick\":%u", (unsigned)in.last_confirmed_tick);
        if (!scan_ok) {
            fputs(",\"error\":", o);
            json_str(o, err.message);
        }
        fputs("}\n", o);
    } else {
        FILE *o = stdout;
        fprintf(o, "file:          %s, %" PRIu64 " bytes, ", file, in.file_bytes);
        if (in.complete)
            fprintf(o, "complete\n");
        else
            fprintf(o,
                    "truncated at offset %" PRIu64 " (no end chunk: a crash or a copy cut short; the readable "
                    "prefix is described)\n",
                    in.truncated_at);
        fprintf(o, "kind:          %s recording from %s\n", h->kind == REC_KIND_CLIENT ? "client" : "scene",
                h->source[0] ? h->source : "?");
        fprintf(o, "build:         %s\n", h->build_id[0] ? h->build_id : "?");
        fprintf(o, "versions:      format %u, behaviour %u\n", (unsigned)h->format_version,
                (unsigned)h->behaviour_version);
        if (h->game_name[0])
            fprintf(o, "game:          %s version %u, digest %016" PRIx64 ", %u-byte commands%s\n", h->game_name,
                    (unsigned)h->game_version, h->game_digest, (unsigned)h->game_command_bytes,
                    h->game ? " (the game given matches)" : "");
        fprintf(o, "settings:      digest %016" PRIx64 ", %d ticks per second\n", h->settings_digest,
                (int)h->settings.tick_rate);
        switch (h->level.kind) {
        case REC_LEVEL_BUILTIN: fprintf(o, "level:         built-in"); break;
        case REC_LEVEL_GENERATED:
            fprintf(o, "level:         generated, %u triangles, seed %u", (unsigned)h->level.generate_triangles,
                    (unsigned)h->level.generate_seed);
            break;
        default:
            fprintf(o, "level:         %s (scale %s, up %c)", h->level.path, h->level.scale,
                    h->level.up_axis ? h->level.up_axis : 'y');
            break;
        }
        fprintf(o, ", digest %016" PRIx64 "\n", h->level.digest);
        fprintf(o, "scene:         %u platforms, %u water boxes, room for %u characters\n", (unsigned)h->platform_count,
                (unsigned)h->water_count, (unsigned)h->max_characters);
        if (h->keyframe_interval == 0)
            fprintf(o, "keyframes:     none\n");
        else if (h->keyframe_interval == 1)
            fprintf(o, "keyframes:     every tick (debug mode), %u in the file\n", (unsigned)in.keyframes);
        else
            fprintf(o, "keyframes:     every %u ticks, %u in the file\n", (unsigned)h->keyframe_interval,
                    (unsigned)in.keyframes);
        fprintf(o, "blocks:        %u (%u compressed)\n", (unsigned)in.blocks, (unsigned)in.compressed_blocks);
        if (h->kind == REC_KIND_CLIENT) {
            fprintf(o, "client:        character %u, prediction cap %u, %u records\n", (unsigned)h->client_character,
                    (unsigned)h->client_prediction_cap, (unsigned)in.client_records);
        } else {
            fprintf(o, "length:        %u ticks from tick %u (%.2f s)\n", (unsigned)in.tick_count,
                    (unsigned)in.first_tick, seconds);
            fprintf(o, "players:       %u distinct, at most %u at once; %" PRIu64 " joins, %" PRIu64 " leaves\n",
                    (unsigned)in.players, (unsigned)in.max_characters_seen, in.joins, in.leaves);
            fprintf(o, "character-ticks: %" PRIu64 "\n", char_ticks);
            if (h->substitutes_marked || in.substitutes)
                fprintf(o, "substitutes:   %" PRIu64 " commands ran in place of ones that had not come\n",
                        in.substitutes);
            else
                fprintf(o, "substitutes:   not marked (a recorder from before the marks, or one that keeps none)\n");
        }
        fprintf(o,
                "sizes:         header %" PRIu64 ", schema %" PRIu64 ", initial %" PRIu64 ", ticks %" PRIu64
                ", keyframes %" PRIu64 ", client %" PRIu64 ", end %" PRIu64 " bytes\n",
                in.bytes_header, in.bytes_schema, in.bytes_initial, in.bytes_ticks, in.bytes_keyframes, in.bytes_client,
                in.bytes_end);
        if (char_ticks > 0)
            fprintf(o, "per player-hour: %.0f bytes (%.1f KiB)\n", per_player_hour, per_player_hour / 1024.0);
        if (h->kind == REC_KIND_CLIENT)
            fprintf(o, "last hash:     %016" PRIx64 " (the client's last confirmed state, tick %u)\n", in.last_hash,
                    (unsigned)in.last_confirmed_tick);
        else
            fprintf(o, "last hash:     %016" PRIx64 " (world hash after the last tick)\n", in.last_hash);
    }
    if (!scan_ok) {
        replay_print_error(file, &err);
        return REC_EXIT_BAD_FILE;
    }
    return REC_EXIT_MATCH;
}
