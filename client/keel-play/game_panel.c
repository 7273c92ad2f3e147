// keel-play: any game's fields and commands, through its schemas (see
// game_panel.h for its invariants). MIT licence, see LICENSE.
#include "game_panel.h"

#include <string.h>

#include <keel/rec_verify.h> // rec_game_field_value

// The k-th BOOL field of the command schema, or NULL.
static const sim_game_field *bool_field(const sim_game *game, uint32_t k)
{
    const sim_game_def *d = game ? sim_game_definition(game) : NULL;
    if (!d)
        return NULL;
    for (uint32_t i = 0; i < d->command.field_count; i++)
        if (d->command.fields[i].kind == SIM_GAME_BOOL && k-- == 0)
            return &d->command.fields[i];
    return NULL;
}

uint32_t kp_game_command_buttons(const sim_game *game, uint32_t buttons, void *command)
{
    uint32_t n = 0;
    for (const sim_game_field *f; (f = bool_field(game, n)) != NULL; n++)
        if (n < 3 && command) {
            uint8_t v = (uint8_t)((buttons >> n) & 1u);
            memcpy((uint8_t *)command + f->offset, &v, 1);
        }
    return n;
}

const char *kp_game_button_field(const sim_game *game, uint32_t k)
{
    const sim_game_field *f = k < 3 ? bool_field(game, k) : NULL;
    return f ? f->name : NULL;
}

void kp_game_format_value(const sim_game_field *field, const void *data, uint32_t k, char *out, size_t size)
{
    int64_t v = rec_game_field_value(field, data, k);
    if (field->kind == SIM_GAME_FX)
        snprintf(out, size, "%.3f", (double)v / 65536.0);
    else if (field->kind == SIM_GAME_ANGLE)
        snprintf(out, size, "%.1f deg", (double)(int16_t)(uint16_t)v * (360.0 / 65536.0));
    else
        snprintf(out, size, "%lld", (long long)v);
}

bool kp_game_panel_text(const sim_scene *scene, uint32_t id, char *out, size_t size)
{
    if (size)
        out[0] = '\0';
    const sim_game *game = sim_scene_game(scene);
    const void *data = game ? sim_scene_game_char(scene, id) : NULL;
    if (!data || size < 64)
        return false;
    const sim_game_schema *s = &sim_game_definition(game)->character;
    size_t used = (size_t)snprintf(out, size, "game %s v%u  character %u%s\n", sim_game_name(game),
                                   (unsigned)sim_game_version(game), (unsigned)id,
                                   sim_scene_game_out(scene, id) ? " (out of collisions)" : "");
    for (uint32_t i = 0; i < s->field_count && used + 96 < size; i++) {
        const sim_game_field *f = &s->fields[i];
        uint32_t count = f->count ? f->count : 1u;
        used += (size_t)snprintf(out + used, size - used, "%s\t", f->name);
        for (uint32_t k = 0; k < count && k < 4 && used + 48 < size; k++) {
            char v[40];
            kp_game_format_value(f, data, k, v, sizeof v);
            used += (size_t)snprintf(out + used, size - used, "%s%s", k ? ", " : "", v);
        }
        used += (size_t)snprintf(out + used, size - used, "%s\n", count > 4 ? ", ..." : "");
    }
    if (used > 0 && used < size && out[used - 1] == '\n')
        out[used - 1] = '\0';
    return true;
}

float kp_game_panel_top(float y, float w, int width, const float (*keep)[4], uint32_t count)
{
    float x = (float)width - w - 16;
    for (uint32_t i = 0; i < count; i++)
        if (keep[i][0] + keep[i][2] > x && keep[i][1] + keep[i][3] + 8 > y)
            y = keep[i][1] + keep[i][3] + 8;
    return y;
}

void kp_game_fields_json(FILE *f, const sim_scene *scene, uint32_t id)
{
    const sim_game *game = sim_scene_game(scene);
    const void *data = game ? sim_scene_game_char(scene, id) : NULL;
    if (!data)
        return;
    const sim_game_schema *s = &sim_game_definition(game)->character;
    fprintf(f, ",\"game\":\"%s\",\"game_fields\":{", sim_game_name(game)); // names: letters, digits, '_', '-', '.'
    for (uint32_t i = 0; i < s->field_count; i++) {
        const sim_game_field *fd = &s->fields[i];
        char v[40];
        if (fd->kind == SIM_GAME_FX || fd->kind == SIM_GAME_ANGLE)
            snprintf(v, sizeof v, "%lld", (long long)rec_game_field_value(fd, data, 0)); // raw units
        else
            kp_game_format_value(fd, data, 0, v, sizeof v);
        fprintf(f, "%s\"%s%s\":%s", i ? "," : "", fd->name, (fd->count > 1) ? "[0]" : "", v);
    }
    fputc('}', f);
}
