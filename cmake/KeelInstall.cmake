# keel: the install rules (KEEL_INSTALL), included from CMakeLists.txt. MIT licence, see LICENSE.
#
# (docs/architecture.md, section 10.) cmake --install puts under the prefix:
# the libraries, the public headers of sim, net, rec and client, a CMake
# package (find_package(keel [COMPONENTS net rec client]): targets keel::sim,
# keel::net, keel::rec, keel::client, each component pulling in the ones it
# needs) and pkg-config files (keel-sim, keel-net, keel-rec, keel-client).
# Both are relocatable: they find the prefix from where they lie. The server
# library is not installed (keel-server is the server).
include(CMakePackageConfigHelpers)
get_target_property(keel_sim_type keel_sim TYPE)
set(KEEL_SIM_STATIC OFF)
if(keel_sim_type STREQUAL "STATIC_LIBRARY")
  set(KEEL_SIM_STATIC ON)
endif()
set(keel_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/keel)

# sim: its own export set (keelTargets.cmake), as before; each further
# component has one (keel<Name>Targets.cmake) that keelConfig.cmake reads
# only when it is asked for, so a user of keel::sim alone needs neither
# ENet nor zstd. Their libraries are OPTIONAL: a tree where only keel_sim
# was built still installs (keelConfig.cmake then reports the component as
# not built).
set(KEEL_COMPONENTS sim)
install(TARGETS keel_sim EXPORT keelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sim/include/keel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(EXPORT keelTargets NAMESPACE keel:: DESTINATION ${keel_cmake_dir})
foreach(comp net rec client)
  if(TARGET keel_${comp} AND (NOT comp STREQUAL "client" OR TARGET keel_rec))
    list(APPEND KEEL_COMPONENTS ${comp})
    string(SUBSTRING ${comp} 0 1 first)
    string(SUBSTRING ${comp} 1 -1 rest)
    string(TOUPPER ${first} first)
    install(TARGETS keel_${comp} EXPORT keel${first}${rest}Targets OPTIONAL
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
            RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${comp}/include/keel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
            FILES_MATCHING PATTERN "*.h")
    install(EXPORT keel${first}${rest}Targets NAMESPACE keel:: DESTINATION ${keel_cmake_dir})
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

# CMake package; the build-time locations of the dependencies are hints
foreach(dep FIXMATH XXHASH ENET ZSTD SODIUM)
  get_filename_component(KEEL_${dep}_LIBRARY_DIR "${${dep}_LIBRARY}" DIRECTORY)
endforeach()
set(KEEL_STATIC_LIB_PREFIX ${CMAKE_STATIC_LIBRARY_PREFIX})
set(KEEL_STATIC_LIB_SUFFIX ${CMAKE_STATIC_LIBRARY_SUFFIX})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/keelConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/keelConfig.cmake INSTALL_DESTINATION ${keel_cmake_dir}
                              PATH_VARS CMAKE_INSTALL_LIBDIR)
# Before 1.0 only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/keelConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/keelConfig.cmake ${PROJECT_BINARY_DIR}/keelConfigVersion.cmake
        DESTINATION ${keel_cmake_dir})

# pkg-config: the prefix relative to the .pc file (${pcfiledir}) unless a
# directory was given as an absolute path
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(KEEL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(KEEL_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(KEEL_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH keel_pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" keel_pc_up "${keel_pc_up}")
  set(KEEL_PC_PREFIX "\${pcfiledir}/${keel_pc_up}")
  set(KEEL_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(KEEL_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# libfixmath (public, no .pc of its own) goes on Libs; xxHash is needed by
# users' links only when the library is static.
set(KEEL_PC_CFLAGS "")
if(NOT FIXMATH_INCLUDE_DIR IN_LIST CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES)
  string(APPEND KEEL_PC_CFLAGS " -I${FIXMATH_INCLUDE_DIR}")
endif()
set(KEEL_PC_LIBS "")
if(FIXMATH_LIBRARY) # (a cross build may have libfixmath's headers only)
  if(NOT KEEL_FIXMATH_LIBRARY_DIR IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND KEEL_PC_LIBS " -L${KEEL_FIXMATH_LIBRARY_DIR}")
  endif()
  get_filename_component(keel_fixmath_name "${FIXMATH_LIBRARY}" NAME_WE) # liblibfixmath
  string(SUBSTRING "${keel_fixmath_name}" 3 -1 keel_fixmath_name) # (REGEX REPLACE "^lib" would strip both)
  string(APPEND KEEL_PC_LIBS " -l${keel_fixmath_name}")
endif()
if(KEEL_SIM_STATIC)
  set(KEEL_PC_REQUIRES "libxxhash")
  set(KEEL_PC_REQUIRES_PRIVATE "")
else()
  set(KEEL_PC_REQUIRES "")
  set(KEEL_PC_REQUIRES_PRIVATE "libxxhash")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/keel-sim.pc.in ${PROJECT_BINARY_DIR}/keel-sim.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/keel-sim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# keel-net, keel-rec, keel-client (cmake/keel-lib.pc.in): the keel
# packages a library's headers include are public Requires; its own
# dependencies (packages, then plain flags) are needed by users' links only
# when it is static, which these are: then they go on Requires and Libs
# too, else on Requires.private and Libs.private.
function(keel_pc_file comp description keel_requires dep_packages dep_libs)
  set(KEEL_PC_NAME keel-${comp})
  set(KEEL_PC_DESCRIPTION "${description}")
  set(KEEL_PC_LIB keel_${comp})
  get_target_property(type keel_${comp} TYPE)
  string(REPLACE ";" " " keel_requires "${keel_requires}")
  string(REPLACE ";" " " dep_packages "${dep_packages}")
  string(REPLACE ";" " " dep_libs "${dep_libs}")
  set(KEEL_PC_LIB_REQUIRES "${keel_requires}")
  set(KEEL_PC_LIB_REQUIRES_PRIVATE "")
  set(KEEL_PC_LIB_LIBS "")
  set(KEEL_PC_LIB_LIBS_PRIVATE "")
  if(type STREQUAL "STATIC_LIBRARY")
    string(STRIP "${keel_requires} ${dep_packages}" KEEL_PC_LIB_REQUIRES)
    if(dep_libs)
      set(KEEL_PC_LIB_LIBS " ${dep_libs}")
    endif()
  else()
    set(KEEL_PC_LIB_REQUIRES_PRIVATE "${dep_packages}")
    set(KEEL_PC_LIB_LIBS_PRIVATE "${dep_libs}")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/keel-lib.pc.in ${PROJECT_BINARY_DIR}/keel-${comp}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/keel-${comp}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
set(keel_pc_version "= ${PROJECT_VERSION}")
if("net" IN_LIST KEEL_COMPONENTS)
  keel_pc_file(net "keel's protocol and hosts (ENet over UDP, an in-memory network)"
               "keel-sim ${keel_pc_version}" "libenet;libxxhash;libsodium" "")
endif()
if("rec" IN_LIST KEEL_COMPONENTS)
  keel_pc_file(rec "keel's recordings: format, writer, reader, verify"
               "keel-net ${keel_pc_version};keel-sim ${keel_pc_version}" "libzstd;libxxhash" "-pthread")
endif()
if("client" IN_LIST KEEL_COMPONENTS)
  keel_pc_file(client "keel's client: prediction, rollback and display smoothing"
               "keel-rec ${keel_pc_version};keel-net ${keel_pc_version};keel-sim ${keel_pc_version}" "" "-lm")
endif()
