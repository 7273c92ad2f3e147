// keel: the built-in test level, generated in code. MIT licence, see LICENSE.
//
// docs/levels.md is the map of this file: every feature, its size and its
// markers. Lengths below are integer millimetres converted once to Q16.16,
// so the level is the same bytes everywhere. Features stand on one floor at
// y = 0 and are kept several metres apart so a character at one never touches
// another.
#include <keel/sim_level.h>

#include <stdio.h>

// Millimetres to Q16.16 metres, rounded to nearest (ties away from zero).
static sim_fx mm(int64_t v) { return (sim_fx)sim_div_round_s64(v * 65536, 1000); }

static sim_vec3 p3(int64_t x_mm, int64_t y_mm, int64_t z_mm) { return sim_v3(mm(x_mm), mm(y_mm), mm(z_mm)); }

// An axis-aligned box between two corners given in millimetres.
static void box_mm(sim_level_builder *b, int64_t x0, int64_t y0, int64_t z0, int64_t x1, int64_t y1, int64_t z1)
{
    sim_level_builder_aabox(b, p3(x0, y0, z0), p3(x1, y1, z1));
}

// A vertical quad from a to b (points on the floor plane, y ignored) between
// heights y0 and y1; its counter-clockwise normal points to the right of a->b
// seen from above, e.g. a->b along +x faces +z.
static void wall(sim_level_builder *b, sim_vec3 a, sim_vec3 c, sim_fx y0, sim_fx y1)
{
    sim_level_builder_quad(b, sim_v3(a.x, y0, a.z), sim_v3(c.x, y0, c.z), sim_v3(c.x, y1, c.z), sim_v3(a.x, y1, a.z));
}

// ---- floor: 0.5 m grid over 64 m x 64 m, with the pit cut out --------------------

#define FLOOR_HALF_MM 32000
#define FLOOR_CELL_MM 500
#define FLOOR_CELLS (2 * FLOOR_HALF_MM / FLOOR_CELL_MM)

#define PIT_X0 (-20000)
#define PIT_X1 (-17000)
#define PIT_Z0 (-24000)
#define PIT_Z1 (-21000)
#define PIT_DEPTH 2000

// A horizontal grid of cells over [x0,x1] x [z0,z1] at height y, facing +Y,
// skipping cells inside the pit (when skip_pit). Vertices are shared so the
// grid has real internal edges, like a mesh from an editor.
static void grid(sim_level_builder *b, int64_t x0, int64_t z0, int64_t x1, int64_t z1, int64_t y, bool skip_pit)
{
    uint32_t nx = (uint32_t)((x1 - x0) / FLOOR_CELL_MM), nz = (uint32_t)((z1 - z0) / FLOOR_CELL_MM);
    uint32_t base = b->level.vertex_count;
    for (uint32_t i = 0; i <= nx; i++)
        for (uint32_t j = 0; j <= nz; j++)
            sim_level_builder_vertex(b, p3(x0 + (int64_t)i * FLOOR_CELL_MM, y, z0 + (int64_t)j * FLOOR_CELL_MM));
    for (uint32_t i = 0; i < nx; i++) {
        for (uint32_t j = 0; j < nz; j++) {
            int64_t cx = x0 + (int64_t)i * FLOOR_CELL_MM, cz = z0 + (int64_t)j * FLOOR_CELL_MM;
            if (skip_pit && cx >= PIT_X0 && cx < PIT_X1 && cz >= PIT_Z0 && cz < PIT_Z1)
                continue;
            uint32_t v00 = base + i * (nz + 1) + j, v01 = v00 + 1;
            uint32_t v10 = v00 + (nz + 1), v11 = v10 + 1;
            sim_level_builder_triangle(b, v00, v01, v11);
            sim_level_builder_triangle(b, v00, v11, v10);
        }
    }
}

static void floor_and_pit(sim_level_builder *b)
{
    grid(b, -FLOOR_HALF_MM, -FLOOR_HALF_MM, FLOOR_HALF_MM, FLOOR_HALF_MM, 0, true);
    sim_level_builder_marker(b, "floor_center", p3(0, 0, 0));
    sim_level_builder_marker(b, "floor_lane_start", p3(-10000, 0, 0));
    sim_level_builder_marker(b, "floor_lane_end", p3(10000, 0, 0));
    sim_level_builder_marker(b, "spawn", p3(0, 0, -4000));

    // The pit: its own floor grid 2 m down and four walls facing inwards.
    grid(b, PIT_X0, PIT_Z0, PIT_X1, PIT_Z1, -PIT_DEPTH, false);
    sim_fx y0 = mm(-PIT_DEPTH), y1 = 0;
    wall(b, p3(PIT_X0, 0, PIT_Z0), p3(PIT_X1, 0, PIT_Z0), y0, y1);
    wall(b, p3(PIT_X1, 0, PIT_Z0), p3(PIT_X1, 0, PIT_Z1), y0, y1);
    wall(b, p3(PIT_X1, 0, PIT_Z1), p3(PIT_X0, 0, PIT_Z1), y0, y1);
    wall(b, p3(PIT_X0, 0, PIT_Z1), p3(PIT_X0, 0, PIT_Z0), y0, y1);
    sim_level_builder_marker(b, "pit_edge", p3((PIT_X0 + PIT_X1) / 2, 0, PIT_Z1 + 1000));
    sim_level_builder_marker(b, "pit_bottom", p3((PIT_X0 + PIT_X1) / 2, -PIT_DEPTH, (PIT_Z0 + PIT_Z1) / 2));
}

// ---- stairs: seven flights, 4 steps each, rising along +z ---------------------

static void stairs(sim_level_builder *b)
{
    static const int64_t step_mm[7] = {100, 200, 300, 350, 400, 500, 600};
    const int64_t z_front = 18000, depth = 400, landing = 1600;
    for (int f = 0; f < 7; f++) {
        int64_t h = step_mm[f], cx = -24000 + 8000 * f;
        for (int k = 1; k <= 4; k++) {
            int64_t z0 = z_front + depth * (k - 1);
            int64_t z1 = k < 4 ? z0 + depth : z0 + landing;
            box_mm(b, cx - 1000, 0, z0, cx + 1000, h * k, z1);
        }
        char name[SIM_MARKER_NAME_MAX];
        snprintf(name, sizeof name, "stairs_%d_start", (int)h);
        sim_level_builder_marker(b, name, p3(cx, 0, z_front - 1000));
        snprintf(name, sizeof name, "stairs_%d_top", (int)h);
        sim_level_builder_marker(b, name, p3(cx, 4 * h, z_front + 3 * depth + landing / 2));
    }
}

// ---- ramps: 20, 40, 50 and 60 degrees, rising 2 m along +z --------------------

static void ramps(sim_level_builder *b)
{
    static const int deg[4] = {20, 40, 50, 60};
    // cot(angle) in units of 1e-9, computed offline: the run for a 2 m rise.
    static const int64_t cot_nano[4] = {2747477419, 1191753593, 839099631, 577350269};
    const int64_t z_bottom = 6000, rise = 2000, half_w = 1500;
    for (int r = 0; r < 4; r++) {
        int64_t cx = -24000 + 8000 * r;
        sim_fx run = (sim_fx)sim_div_round_s64(2 * cot_nano[r] * 65536, 1000000000);
        sim_fx xl = mm(cx - half_w), xr = mm(cx + half_w);
        sim_fx z0 = mm(z_bottom), z1 = z0 + run, top = mm(rise);
        // Slope, wound so its normal points up and back towards the approach.
        sim_level_builder_quad(b, sim_v3(xr, 0, z0), sim_v3(xl, 0, z0), sim_v3(xl, top, z1), sim_v3(xr, top, z1));
        // Side faces, so a character walking off the side meets a wall below.
        sim_level_builder_tri(b, sim_v3(xl, 0, z0), sim_v3(xl, 0, z1), sim_v3(xl, top, z1));
        sim_level_builder_tri(b, sim_v3(xr, 0, z0), sim_v3(xr, top, z1), sim_v3(xr, 0, z1));
        // Platform 2 m deep at the top; its front face hides behind the slope.
        sim_level_builder_aabox(b, sim_v3(xl, 0, z1), sim_v3(xr, top, z1 + mm(2000)));
        char name[SIM_MARKER_NAME_MAX];
        snprintf(name, sizeof name, "ramp_%d_start", deg[r]);
        sim_level_builder_marker(b, name, p3(cx, 0, z_bottom - 1000));
        snprintf(name, sizeof name, "ramp_%d_top", deg[r]);
        sim_level_builder_marker(b, name, sim_v3(mm(cx), top, z1 + mm(1000)));
    }
}

// ---- ledge and tunnel, beside the ramps ---------------------------------------

static void ledge_and_tunnel(sim_level_builder *b)
{
    // Ledge: 1.5 m, above the ~1.14 m standing jump apex, below a crouch jump.
    box_mm(b, 8000, 0, 6000, 12000, 1500, 9000);
    sim_level_builder_marker(b, "ledge_front", p3(10000, 0, 5000));
    sim_level_builder_marker(b, "ledge_top", p3(10000, 1500, 7500));

    // Tunnel: 2 m wide inside, 1.3 m clear, 4 m long along z.
    box_mm(b, 18700, 0, 6000, 19000, 1300, 10000);
    box_mm(b, 21000, 0, 6000, 21300, 1300, 10000);
    // Ceiling 0.25 m thick (raw 16384, even) so its underside is exactly mm(1300).
    box_mm(b, 18700, 1300, 6000, 21300, 1550, 10000);
    sim_level_builder_marker(b, "tunnel_entry", p3(20000, 0, 4500));
    sim_level_builder_marker(b, "tunnel_inside", p3(20000, 0, 8000));
}

// ---- creases: V corridor and a concave corner ---------------------------------

static void creases(sim_level_builder *b)
{
    // Two 6 m walls from the apex, each 15 degrees off the +z axis.
    const int64_t sin15_nano = 258819045, cos15_nano = 965925826, len_mm = 6000;
    sim_vec3 apex = p3(-24000, 0, -14000);
    sim_fx dx = (sim_fx)sim_div_round_s64(len_mm * sin15_nano * 65536, 1000000000000);
    sim_fx dz = (sim_fx)sim_div_round_s64(len_mm * cos15_nano * 65536, 1000000000000);
    sim_vec3 left = sim_v3(apex.x - dx, 0, apex.z + dz);
    sim_vec3 right = sim_v3(apex.x + dx, 0, apex.z + dz);
    wall(b, left, apex, 0, mm(3000));  // faces into the V
    wall(b, apex, right, 0, mm(3000)); // faces into the V
    sim_level_builder_marker(b, "vcorridor_start", p3(-24000, 0, -9200));
    sim_level_builder_marker(b, "vcorridor_apex", apex);

    // Two perpendicular 4 m walls meeting at (-14, -14), facing +z and +x.
    wall(b, p3(-14000, 0, -14000), p3(-10000, 0, -14000), 0, mm(3000));
    wall(b, p3(-14000, 0, -10000), p3(-14000, 0, -14000), 0, mm(3000));
    sim_level_builder_marker(b, "corner_start", p3(-12000, 0, -12000));
    sim_level_builder_marker(b, "corner", p3(-14000, 0, -14000));
}

// ---- thin wall, box row, oriented crate ---------------------------------------

static void boxes(sim_level_builder *b)
{
    // 1 cm thick (raw 656, the nearest even raw width), 4 m wide, 3 m tall.
    sim_box_def thin;
    thin.center = p3(-4000, 1500, -10000);
    thin.half = sim_v3(mm(2000), mm(1500), SIM_FX_MM(5));
    thin.axis[0] = sim_v3(SIM_FX_ONE, 0, 0);
    thin.axis[1] = sim_v3(0, SIM_FX_ONE, 0);
    thin.axis[2] = sim_v3(0, 0, SIM_FX_ONE);
    sim_level_builder_box(b, thin);
    sim_level_builder_marker(b, "thinwall_front", p3(-4000, 0, -8000));
    sim_level_builder_marker(b, "thinwall_back", p3(-4000, 0, -12000));

    // Ten 1 m x 0.5 m x 1 m boxes along +x, touching, tops at exactly 0.5 m.
    for (int i = 0; i < 10; i++)
        box_mm(b, 4000 + 1000 * i, 0, -10500, 5000 + 1000 * i, 500, -9500);
    sim_level_builder_marker(b, "boxrow_start", p3(4500, 500, -10000));
    sim_level_builder_marker(b, "boxrow_end", p3(13500, 500, -10000));

    // A 1 m crate turned 30 degrees about +Y (raw cos 56756, sin 32768).
    sim_box_def crate;
    crate.center = p3(22000, 500, -10000);
    crate.half = sim_v3(mm(500), mm(500), mm(500));
    crate.axis[0] = sim_v3(56756, 0, -32768);
    crate.axis[1] = sim_v3(0, SIM_FX_ONE, 0);
    crate.axis[2] = sim_v3(32768, 0, 56756);
    sim_level_builder_box(b, crate);
    sim_level_builder_marker(b, "obb_crate", p3(22000, 1000, -10000));
    sim_level_builder_marker(b, "obb_crate_front", p3(22000, 0, -7500));

    // Kept empty for moving platforms.
    sim_level_builder_marker(b, "platform_area", p3(0, 0, -24000));
}

int sim_level_builtin(sim_level *out)
{
    sim_level_builder b;
    sim_level_builder_init(&b);
    floor_and_pit(&b);
    stairs(&b);
    ramps(&b);
    ledge_and_tunnel(&b);
    creases(&b);
    boxes(&b);
    return sim_level_builder_finish(&b, out);
}
