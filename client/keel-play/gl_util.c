// keel-play: OpenGL helpers (see gl_util.h). MIT licence, see LICENSE.
#include "gl_util.h"

#include <stdio.h>

static GLuint compile(const char *what, GLenum type, const char *src)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        fprintf(stderr, "keel-play: the %s %s shader does not compile: %s\n", what,
                type == GL_VERTEX_SHADER ? "vertex" : "fragment", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

GLuint kp_gl_program(const char *what, const char *vs, const char *fs)
{
    GLuint v = compile(what, GL_VERTEX_SHADER, vs), f = compile(what, GL_FRAGMENT_SHADER, fs);
    if (!v || !f) {
        if (v)
            glDeleteShader(v);
        if (f)
            glDeleteShader(f);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetProgramInfoLog(p, sizeof log, NULL, log);
        fprintf(stderr, "keel-play: the %s shaders do not link: %s\n", what, log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}
