# keel: cross-compiling for 64-bit Windows with Debian's mingw-w64
# (gcc-mingw-w64-x86-64). MIT licence, see LICENSE.
#
#   scripts/cross-deps.sh win64     # libfixmath's and xxHash's headers, libxxhash.a
#   cmake --preset win64-core       # or, by hand:
#   cmake -S . -B build-win64 --toolchain cmake/toolchains/x86_64-w64-mingw32.cmake \
#         -DCMAKE_FIND_ROOT_PATH=$PWD/build-cross/deps-win64 -DKEEL_BUILD_NET=OFF \
#         -DKEEL_BUILD_TESTS=OFF -DKEEL_BUILD_BENCH=OFF
# Libraries and headers are looked for only under the find roots: mingw's
# own (/usr/x86_64-w64-mingw32) and those given in CMAKE_FIND_ROOT_PATH.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(KEEL_MINGW_PREFIX x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${KEEL_MINGW_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${KEEL_MINGW_PREFIX}-g++)
set(CMAKE_RC_COMPILER ${KEEL_MINGW_PREFIX}-windres)
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${KEEL_MINGW_PREFIX})
list(REMOVE_DUPLICATES CMAKE_FIND_ROOT_PATH)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
