// keel: the library's version, for programs to compare with their headers'. MIT licence, see LICENSE.
#include <keel/sim_version.h>

uint32_t sim_version(void) { return KEEL_VERSION; }

const char *sim_version_string(void) { return KEEL_VERSION_STRING; }
