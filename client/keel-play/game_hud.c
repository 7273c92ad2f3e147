// keel-play: the games keel-play has a HUD for, behind game_hud.h's
// interface (its invariants are there). MIT licence, see LICENSE.
#include "game_hud.h"

#include <stdlib.h>
#include <string.h>

struct kp_game_hud {
    const kp_game_hud_ops *ops;
    void *self;
};

static const kp_game_hud_ops *const huds[] = {&kp_arena_hud_ops};

kp_game_hud *kp_game_hud_create(const sim_game *game, const sim_move_settings *settings)
{
    if (!game)
        return NULL;
    for (size_t i = 0; i < sizeof huds / sizeof huds[0]; i++) {
        const kp_game_hud_ops *ops = huds[i];
        if (strcmp(sim_game_name(game), ops->game) != 0 || !ops->fits(game))
            continue;
        kp_game_hud *h = calloc(1, sizeof *h);
        void *self = h ? ops->create(game, settings) : NULL;
        if (!self) {
            free(h);
            return NULL;
        }
        h->ops = ops;
        h->self = self;
        return h;
    }
    return NULL;
}

void kp_game_hud_destroy(kp_game_hud *h)
{
    if (!h)
        return;
    h->ops->destroy(h->self);
    free(h);
}

void kp_game_hud_reset(kp_game_hud *h)
{
    if (h)
        h->ops->reset(h->self);
}

void kp_game_hud_observe(kp_game_hud *h, const sim_scene *scene, uint32_t own, double now_s)
{
    if (h && scene)
        h->ops->observe(h->self, scene, own, now_s);
}

void kp_game_hud_characters(kp_game_hud *h, const sim_scene *scene, kp_char_draw *draws, uint32_t count, double now_s)
{
    if (h && scene)
        h->ops->characters(h->self, scene, draws, count, now_s);
}

void kp_game_hud_draw_world(kp_game_hud *h, kp_render *r, double now_s)
{
    if (h)
        h->ops->draw_world(h->self, r, now_s);
}

uint32_t kp_game_hud_draw(kp_game_hud *h, kp_overlay *o, const kp_game_hud_frame *f, float (*keep)[4], uint32_t room)
{
    return h ? h->ops->draw(h->self, o, f, keep, room) : 0;
}

void kp_game_hud_summary(const kp_game_hud *h, FILE *out)
{
    if (h)
        h->ops->summary(h->self, out);
}
