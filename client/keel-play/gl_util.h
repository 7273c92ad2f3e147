// keel-play: small OpenGL helpers the renderer and the overlay share. MIT
// licence, see LICENSE.
#ifndef KEEL_PLAY_GL_UTIL_H
#define KEEL_PLAY_GL_UTIL_H

#include <epoxy/gl.h>

/// Compile and link a vertex and a fragment shader (GLSL 330 core). 0 with
/// the log on stderr on failure; `what` names it in the message.
GLuint kp_gl_program(const char *what, const char *vs, const char *fs);

#endif
