// keel: upright cylinder against a triangle. MIT licence, see LICENSE.
// TEMPORARY: the cylinder is swept as its bounding box until the exact
// primitives land (issue 9, work in progress).
#include "collide.h"

static sim_shape as_box(sim_shape s) { return sim_shape_box(s.half.x, s.half.y, s.half.z); }

bool sim_sweep_cylinder_tri(const sim_sweep_ray *ray, const sim_tri *t, sim_tri_hit *hit)
{
    sim_sweep_ray r = *ray;
    r.shape = as_box(ray->shape);
    return sim_sweep_box_tri(&r, t, hit);
}

bool sim_contact_cylinder_tri(sim_shape shape, sim_vec3 pos, const sim_tri *t, sim_fx margin,
                              sim_tri_hit *hit)
{
    return sim_contact_box_tri(as_box(shape), pos, t, margin, hit);
}
