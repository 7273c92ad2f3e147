// keel: Quake .map loader, entities into keel's terms. MIT licence, see LICENSE.
//
// Each classname gets a role (docs/levels.md has the table); the role and
// the face textures give each brush its contents; the solid brushes become
// the static world; spawn entities become spawn markers. Unknown
// classnames are kept with their keys and listed once in sim_map.unknown.
#include <keel/sim_level.h>

#include <stdlib.h>
#include <string.h>

#include <keel/sim_hash.h>

#include "level_map.h"
#include "level_text.h"

typedef struct role_name {
    const char *name;
    bool prefix;
    sim_map_role role;
} role_name;

// Exact names first: func_detail_illusionary must not match func_detail*.
static const role_name ROLES[] = {
    {"worldspawn", false, SIM_MAP_ROLE_WORLD},
    {"func_detail_illusionary", false, SIM_MAP_ROLE_DECORATION},
    {"func_illusionary", false, SIM_MAP_ROLE_DECORATION},
    {"func_detail", true, SIM_MAP_ROLE_SOLID},
    {"func_group", false, SIM_MAP_ROLE_SOLID},
    {"func_wall", false, SIM_MAP_ROLE_SOLID},
    {"info_player_start", false, SIM_MAP_ROLE_SPAWN},
    {"info_player_deathmatch", false, SIM_MAP_ROLE_SPAWN},
    {"info_player_coop", false, SIM_MAP_ROLE_SPAWN},
    {"func_plat", false, SIM_MAP_ROLE_PLATFORM},
    {"func_train", false, SIM_MAP_ROLE_PLATFORM},
    {"func_door", false, SIM_MAP_ROLE_PLATFORM},
    {"path_corner", false, SIM_MAP_ROLE_PATH},
    {"trigger_push", false, SIM_MAP_ROLE_PUSH},
    {"trigger_teleport", false, SIM_MAP_ROLE_TELEPORT},
    {"info_teleport_destination", false, SIM_MAP_ROLE_TELEPORT_TARGET},
    {"trigger_", true, SIM_MAP_ROLE_TRIGGER},
    {"func_water", false, SIM_MAP_ROLE_WATER},
    {"item_", true, SIM_MAP_ROLE_ITEM},
    {"weapon_", true, SIM_MAP_ROLE_ITEM},
    {"ammo_", true, SIM_MAP_ROLE_ITEM},
    {"light", true, SIM_MAP_ROLE_LIGHT},
};

static sim_map_role role_of(const char *classname)
{
    for (size_t i = 0; i < sizeof ROLES / sizeof ROLES[0]; i++) {
        size_t n = strlen(ROLES[i].name);
        if (ROLES[i].prefix ? strncmp(classname, ROLES[i].name, n) == 0 : strcmp(classname, ROLES[i].name) == 0)
            return ROLES[i].role;
    }
    return SIM_MAP_ROLE_OTHER;
}

static sim_map_contents contents_of(sim_map_role role, uint32_t textures)
{
    switch (role) {
    case SIM_MAP_ROLE_WORLD:
    case SIM_MAP_ROLE_SOLID:
        if (textures & MAP_TEX_LIQUID)
            return SIM_MAP_LIQUID;
        if (textures & (MAP_TEX_HINT | MAP_TEX_ORIGIN))
            return SIM_MAP_NONSOLID;
        return SIM_MAP_SOLID;
    case SIM_MAP_ROLE_WATER: return SIM_MAP_LIQUID;
    case SIM_MAP_ROLE_PLATFORM: return SIM_MAP_MOVER;
    default: return SIM_MAP_NONSOLID;
    }
}

bool map_to_engine(const int64_t q[3], uint64_t scale_m, int64_t scale_e, sim_vec3 *out)
{
    // File (x, y, z) Z-up becomes engine (x, z, -y): a rotation.
    const int64_t src[3] = {q[0], q[2], -q[1]};
    sim_fx r[3];
    for (int i = 0; i < 3; i++) {
        // value * 256 * m * 10^e: Q8 to Q16.16 is * 256; |q| < 2^29 and
        // m < 2^20 keep the product below 2^57.
        int64_t v = src[i] * 256 * (int64_t)scale_m;
        if (scale_e >= 0) {
            for (int64_t k = 0; k < scale_e; k++) {
                if (v > SIM_WORLD_LIMIT || v < -SIM_WORLD_LIMIT)
                    return false;
                v *= 10;
            }
        } else if (scale_e < -18) {
            v = 0; // |v| < 10^18: rounds to zero
        } else {
            int64_t p = 1;
            for (int64_t k = 0; k < -scale_e; k++)
                p *= 10;
            v = sim_div_round_s64(v, p);
        }
        if (v > SIM_WORLD_LIMIT || v < -SIM_WORLD_LIMIT)
            return false;
        r[i] = (sim_fx)v;
    }
    *out = sim_v3(r[0], r[1], r[2]);
    return true;
}

const char *sim_map_value(const sim_map *map, const sim_map_entity *e, const char *key)
{
    if (!map || !e || !key)
        return NULL;
    for (uint32_t i = 0; i < e->key_count; i++) {
        const sim_map_key *k = &map->keys[e->first_key + i];
        if (strcmp(k->key, key) == 0)
            return k->value;
    }
    return NULL;
}

static uint64_t hash_text(uint64_t h, const char *t)
{
    size_t n = strlen(t);
    return sim_hash_bytes(sim_hash_u32(h, (uint32_t)n), t, n);
}

uint64_t sim_map_digest(const sim_map *map)
{
    uint64_t h = SIM_HASH_SEED;
    uint32_t ec = map ? map->entity_count : 0, bc = map ? map->brush_count : 0;
    h = sim_hash_u32(h, ec);
    for (uint32_t i = 0; i < ec; i++) {
        const sim_map_entity *e = &map->entities[i];
        h = sim_hash_u32(sim_hash_u32(h, (uint32_t)e->role), e->key_count);
        for (uint32_t k = 0; k < e->key_count; k++)
            h = hash_text(hash_text(h, map->keys[e->first_key + k].key), map->keys[e->first_key + k].value);
        h = sim_hash_u32(sim_hash_u32(h, e->first_brush), e->brush_count);
        h = sim_hash_vec3(sim_hash_bool(h, e->has_origin), e->origin);
        h = sim_hash_fx(h, e->yaw);
    }
    h = sim_hash_u32(h, bc);
    for (uint32_t i = 0; i < bc; i++) {
        const sim_map_brush *b = &map->brushes[i];
        h = sim_hash_u32(sim_hash_u32(h, b->entity), (uint32_t)b->contents);
        h = sim_hash_vec3(sim_hash_vec3(h, b->bounds.min), b->bounds.max);
    }
    return h;
}

uint64_t sim_level_entity_digest(const sim_level *level)
{
    const sim_marker *m = level ? sim_level_find_marker(level, SIM_LEVEL_ENTITY_MARKER) : NULL;
    return m ? (uint64_t)(uint32_t)m->position.x | (uint64_t)(uint32_t)m->position.y << 32 : 0;
}

void sim_map_free(sim_map *map)
{
    if (!map)
        return;
    free(map->entities);
    free(map->keys);
    free(map->brushes);
    free(map->unknown);
    free(map->strings);
    memset(map, 0, sizeof *map);
}

/// Up to `max` decimals separated by spaces from `text`; how many, or -1 on
/// a bad number (or more than max).
static int decimals(const char *text, level_decimal *d, int max)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            return n;
        const char *t = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (n == max || !level_decimal_parse(t, (size_t)(p - t), &d[n]))
            return -1;
        n++;
    }
}

/// "origin" and "angle"/"angles" of one entity.
static int entity_place(const char *name, const sim_map *map, sim_map_entity *e, uint64_t scale_m, int64_t scale_e,
                        int64_t q8[3], sim_error *err)
{
    static const level_scale q8_scale = {390625, -8}, one = {1, 0};
    level_decimal d[3];
    char q[32];
    const char *origin = sim_map_value(map, e, "origin");
    if (origin) {
        sim_fx raw[3];
        bool ok = decimals(origin, d, 3) == 3;
        for (int i = 0; ok && i < 3; i++)
            ok = level_decimal_to_raw(&d[i], &q8_scale, &raw[i]) && raw[i] <= MAP_COORD_LIMIT &&
                 raw[i] >= -MAP_COORD_LIMIT;
        for (int i = 0; ok && i < 3; i++)
            q8[i] = raw[i];
        if (!ok || !map_to_engine(q8, scale_m, scale_e, &e->origin)) {
            level_set_error(name, err, e->line, "entity %u (%s): bad origin '%s' (three numbers within %d units)",
                            (unsigned)(e - map->entities), e->classname, level_quote(origin, strlen(origin), q),
                            (int)(MAP_COORD_LIMIT >> 8));
            return -1;
        }
        e->has_origin = true;
    }
    const char *angle = sim_map_value(map, e, "angle");
    const char *angles = sim_map_value(map, e, "angles");
    if (angle || angles) {
        int n = decimals(angle ? angle : angles, d, 3);
        bool ok = angle ? n == 1 : n == 3;
        ok = ok && level_decimal_to_raw(&d[angle ? 0 : 1], &one, &e->yaw);
        if (!ok) {
            const char *v = angle ? angle : angles;
            level_set_error(name, err, e->line, "entity %u (%s): bad %s '%s'", (unsigned)(e - map->entities),
                            e->classname, angle ? "angle" : "angles", level_quote(v, strlen(v), q));
            return -1;
        }
    }
    return 0;
}

static const char *spawn_marker(const char *classname)
{
    if (strcmp(classname, "info_player_start") == 0)
        return "spawn_start";
    if (strcmp(classname, "info_player_deathmatch") == 0)
        return "spawn_dm";
    return "spawn_coop";
}

/// The entities, keys and brushes of `m` from the parser's arrays.
static int map_tables(map_source *src, sim_map *m)
{
    m->strings = src->pool;
    src->pool = NULL;
    m->keys = calloc(src->key_count ? src->key_count : 1, sizeof *m->keys);
    m->entities = calloc(src->entity_count, sizeof *m->entities);
    m->brushes = calloc(src->brush_count ? src->brush_count : 1, sizeof *m->brushes);
    m->unknown = calloc(src->entity_count, sizeof *m->unknown);
    if (!m->keys || !m->entities || !m->brushes || !m->unknown)
        return -1;
    m->key_count = src->key_count;
    m->entity_count = src->entity_count;
    m->brush_count = src->brush_count;
    for (uint32_t i = 0; i < src->key_count; i++) {
        m->keys[i].key = m->strings + src->keys[i].key;
        m->keys[i].value = m->strings + src->keys[i].value;
    }
    for (uint32_t i = 0; i < src->entity_count; i++) {
        const map_entity_src *s = &src->entities[i];
        sim_map_entity *e = &m->entities[i];
        e->line = s->line;
        e->first_key = s->first_key;
        e->key_count = s->key_count;
        e->first_brush = s->first_brush;
        e->brush_count = s->brush_count;
        const char *cn = sim_map_value(m, e, "classname");
        e->classname = cn ? cn : "";
        e->role = role_of(e->classname);
        bool seen = false;
        for (uint32_t k = 0; e->role == SIM_MAP_ROLE_OTHER && k < m->unknown_count && !seen; k++)
            seen = strcmp(m->unknown[k], e->classname) == 0;
        if (e->role == SIM_MAP_ROLE_OTHER && !seen)
            m->unknown[m->unknown_count++] = e->classname;
        for (uint32_t b = 0; b < s->brush_count; b++) {
            map_brush_src *bs = &src->brushes[s->first_brush + b];
            bs->contents = contents_of(e->role, bs->textures);
            m->brushes[s->first_brush + b].entity = i;
            m->brushes[s->first_brush + b].line = bs->line;
            m->brushes[s->first_brush + b].face_count = bs->face_count;
            m->brushes[s->first_brush + b].contents = bs->contents;
            m->face_count += bs->face_count;
        }
    }
    return 0;
}

int map_finish(const char *name, map_source *src, uint64_t scale_m, int64_t scale_e, uint32_t work_limit,
               sim_level *out, sim_map *map, sim_error *err)
{
    sim_map m;
    memset(&m, 0, sizeof m);
    sim_level_builder b;
    sim_level_builder_init(&b);
    if (map_tables(src, &m) != 0) {
        level_set_error(name, err, 0, "out of memory");
        sim_map_free(&m);
        return -1;
    }
    int rc =
        map_build_world(name, src->faces, src->brushes, src->brush_count, scale_m, scale_e, work_limit, &b, &m, err);
    for (uint32_t i = 0; rc == 0 && i < m.entity_count; i++) {
        sim_map_entity *e = &m.entities[i];
        int64_t q8[3] = {0, 0, 0};
        rc = entity_place(name, &m, e, scale_m, scale_e, q8, err);
        e->bounds.min = e->bounds.max = e->origin;
        for (uint32_t k = 0; k < e->brush_count; k++) {
            sim_aabb bb = m.brushes[e->first_brush + k].bounds;
            e->bounds = k == 0 ? bb : sim_aabb_union(e->bounds, bb);
        }
        if (rc == 0 && e->role == SIM_MAP_ROLE_SPAWN && e->has_origin) {
            sim_vec3 feet;
            q8[2] -= 24 * 256; // a Quake player's origin is 24 units above its feet
            if (!map_to_engine(q8, scale_m, scale_e, &feet)) {
                level_set_error(name, err, e->line, "entity %u (%s): spawn point beyond 4096 m", (unsigned)i,
                                e->classname);
                rc = -1;
            } else {
                sim_level_builder_marker(&b, spawn_marker(e->classname), feet);
            }
        }
    }
    if (rc == 0) {
        // The entities' digest, for net_level_digest (sim_level_entity_digest).
        uint64_t d = sim_map_digest(&m);
        sim_level_builder_marker(&b, SIM_LEVEL_ENTITY_MARKER,
                                 sim_v3((sim_fx)(uint32_t)d, (sim_fx)(uint32_t)(d >> 32), 0));
    }
    if (rc == 0 && b.level.triangle_count == 0) {
        level_set_error(name, err, 0, "no solid brushes (nothing to collide with)");
        rc = -1;
    }
    if (rc == 0 && sim_level_builder_finish(&b, out) != 0) {
        level_set_error(name, err, 0, "out of memory (or more than 2^24 triangles)");
        rc = -1;
        b.failed = true; // finish freed it
    }
    if (rc != 0) {
        if (!b.failed) {
            b.failed = true;
            sim_level_builder_finish(&b, out);
        }
        memset(out, 0, sizeof *out);
        sim_map_free(&m);
        return -1;
    }
    if (map)
        *map = m;
    else
        sim_map_free(&m);
    return 0;
}
