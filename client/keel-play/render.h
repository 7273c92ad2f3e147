// keel-play: the 3D view. MIT licence, see LICENSE.
//
// A level is uploaded once (its triangles and boxes, lit by their normals
// with a 1 m world-space grid drawn in the fragment shader). Each frame:
// kp_render_begin with a camera, then the level, the platforms and water of
// a scene, the characters (capsule, box and cylinder meshes made once and
// scaled per character), and kp_render_end. Characters come as draw
// records in floats, so a mode can draw what it likes (a recorded scene, a
// prediction, ghosts of another run); kp_render_records_from_scene fills them
// from a scene. kp_render_project maps a world point to window pixels for
// labels and tests.
#ifndef KEEL_PLAY_RENDER_H
#define KEEL_PLAY_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include <keel/sim_level.h>
#include <keel/sim_scene.h>

/// Camera: eye in metres, yaw/pitch in degrees with the engine's view
/// convention (sim_angle.h: yaw 0 looks along -z, 90 along -x; pitch > 0 up),
/// vertical field of view in degrees.
typedef struct kp_camera {
    float eye[3];
    float yaw, pitch;
    float fov;
    float znear, zfar;
} kp_camera;

/// A camera with the defaults (fov 70, near 0.05, far 500) at eye/yaw/pitch.
kp_camera kp_camera_make(float x, float y, float z, float yaw_deg, float pitch_deg);
/// First person: at a character's eye (feet + 90% of its height), looking
/// along its yaw and pitch.
kp_camera kp_camera_first_person(const float feet[3], float height, float yaw_deg, float pitch_deg);
/// Chase: behind and above `centre` by `distance` m along the view, looking
/// at it with the given yaw and pitch.
kp_camera kp_camera_chase(const float centre[3], float yaw_deg, float pitch_deg, float distance);
/// How far a chase camera can stand behind `centre` (looking along yaw and
/// pitch) without a wall of `world` between them: `distance`, or less when
/// the level is in the way (never under 0.3 m).
float kp_camera_chase_distance(const struct sim_world *world, const float centre[3], float yaw_deg, float pitch_deg,
                               float distance);
/// Whether the segment from `from` to `to` crosses the level of `world`
/// (labels of characters behind walls are not drawn).
bool kp_world_blocks(const struct sim_world *world, const float from[3], const float to[3]);
/// The view direction (unit) of yaw/pitch in degrees.
void kp_camera_forward(float yaw_deg, float pitch_deg, float out[3]);

/// Map a world point to window pixels (top-left origin) for a camera and a
/// window of w x h pixels. False when it lies behind the camera (or outside
/// the depth range); *x and *y may then be anything.
bool kp_camera_project(const kp_camera *cam, int w, int h, const float world[3], float *x, float *y);

typedef enum kp_shape_kind {
    KP_SHAPE_CAPSULE = 0,
    KP_SHAPE_BOX = 1,
    KP_SHAPE_CYLINDER = 2,
} kp_shape_kind;

/// One character to draw.
typedef struct kp_char_draw {
    uint32_t id;
    float feet[3];    ///< bottom centre, metres
    float centre[3];  ///< centre of the shape
    float yaw, pitch; ///< degrees (the view; the body turns with the yaw)
    kp_shape_kind shape;
    float radius;  ///< capsule and cylinder; for a box half.x
    float half[3]; ///< half extents (of the shape in use: crouched or standing)
    bool crouched;
    float color[4]; ///< RGBA 0..1 (kp_character_color by default)
    bool ghost;     ///< translucent (diff's second run)
    float flash[4]; ///< blended over the colour by flash[3] (0: none)
    bool label;     ///< draw the id above it (kp_render_labels)
} kp_char_draw;

/// The palette: a distinct saturated colour per id (12 hues), far from the
/// level's greys. RGB in 0..1.
void kp_character_color(uint32_t id, float rgb[3]);
/// Number of palette entries and entry i (tests use them).
uint32_t kp_palette_size(void);
void kp_palette_entry(uint32_t i, float rgb[3]);

/// Fill records from a scene's characters (at most `capacity`; returns the
/// number written): positions in metres, the shape from the settings
/// (crouched or standing), colour from the palette, label on, no ghost or flash.
uint32_t kp_render_records_from_scene(const sim_scene *scene, const sim_move_settings *settings, kp_char_draw *out,
                                      uint32_t capacity);
/// The same from states (id order or any).
uint32_t kp_render_records_from_states(const sim_char_state *states, uint32_t count, const sim_move_settings *settings,
                                       kp_char_draw *out, uint32_t capacity);

typedef struct kp_render kp_render;

/// Compile the shaders and make the meshes (needs the GL context). NULL with
/// a message on stderr on failure.
kp_render *kp_render_create(void);
void kp_render_destroy(kp_render *r);
/// Upload a level (its triangles and its boxes); replaces the previous one.
bool kp_render_upload_level(kp_render *r, const sim_level *level);

/// A .map level's entities (render_map.c has the colours): brush entities
/// outside the static world (water, movers, jump pads, teleporters, other
/// triggers, decoration) as translucent boxes, spawn points and items as
/// small ones, drawn with the scene objects. Replaces the previous ones;
/// NULL or an empty map clears them. False when out of memory.
bool kp_render_upload_map(kp_render *r, const sim_map *map);
/// Floats per box of kp_map_boxes: centre (3), half extents (3), RGBA (4).
#define KP_MAP_BOX_FLOATS 10
/// The boxes of a map's entities into a new array (*out, free it); how many.
uint32_t kp_map_boxes(const sim_map *map, float **out);

/// Start a frame: the camera and the viewport size in pixels; clears.
void kp_render_begin(kp_render *r, const kp_camera *cam, int width, int height);
void kp_render_level(kp_render *r);
void kp_render_characters(kp_render *r, const kp_char_draw *chars, uint32_t count);
/// The scene's platforms (at the scene's tick) and its water volumes (translucent).
void kp_render_scene_objects(kp_render *r, const sim_scene *scene);
/// Wireframe-free solid boxes in a colour (markers, debugging): centre, half extents.
void kp_render_box(kp_render *r, const float centre[3], const float half[3], const float rgba[4]);
/// Draw each labelled character's id above it with the overlay (call after
/// the 3D pass, between kp_overlay_begin and kp_overlay_end), where
/// kp_labels_place puts them: inside the view, clear of the `keep` regions
/// (x, y, w, h: the HUD, the timeline, the net graph), not through nearer
/// characters, not over each other.
struct kp_overlay;
void kp_render_labels(kp_render *r, struct kp_overlay *o, const kp_char_draw *chars, uint32_t count,
                      const float (*keep)[4], uint32_t keep_count);
void kp_render_end(kp_render *r);

/// GL draw calls issued since the last kp_render_begin (the benchmark prints it).
uint32_t kp_render_draw_calls(const kp_render *r);
/// The camera and size of the current frame (for kp_camera_project).
const kp_camera *kp_render_camera(const kp_render *r);

#endif
