// keel: the version of the headers, and of the library a program runs with. MIT licence, see LICENSE.
//
// The three numbers below are the one place the version is written:
// CMakeLists.txt reads them for project(VERSION), the library's VERSION and
// SOVERSION, the CMake package version file and the pkg-config file.
//
// The macros describe the headers a program was compiled with; sim_version()
// and sim_version_string() describe the library it was linked with. Before
// 1.0 a minor release may change the ABI, so a program should run only with a
// library whose major and minor numbers equal its headers' (examples/walk.c
// shows the check).
#ifndef KEEL_SIM_VERSION_H
#define KEEL_SIM_VERSION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KEEL_VERSION_MAJOR 0
#define KEEL_VERSION_MINOR 9
#define KEEL_VERSION_PATCH 0

/// A version as one number, 0x00MMmmpp: major, minor and patch one byte each,
/// so versions compare as integers.
#define KEEL_VERSION_ENCODE(major, minor, patch) \
    ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor) << 8) | (uint32_t)(patch)))
#define KEEL_VERSION KEEL_VERSION_ENCODE(KEEL_VERSION_MAJOR, KEEL_VERSION_MINOR, KEEL_VERSION_PATCH)

#define KEEL_VERSION_STR_(x) #x
#define KEEL_VERSION_XSTR_(x) KEEL_VERSION_STR_(x)
/// "major.minor.patch", built from the numbers above so the two never disagree.
#define KEEL_VERSION_STRING                \
    KEEL_VERSION_XSTR_(KEEL_VERSION_MAJOR) \
    "." KEEL_VERSION_XSTR_(KEEL_VERSION_MINOR) "." KEEL_VERSION_XSTR_(KEEL_VERSION_PATCH)

/// The library's KEEL_VERSION (as it was when the library was compiled).
uint32_t sim_version(void);
/// The library's KEEL_VERSION_STRING.
const char *sim_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
