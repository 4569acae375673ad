# Installs what other programs use, as libzstd does: the shared and static libstatezip, the C
# header (internal headers stay private), statezip.pc, the CMake package (statezip::statezip),
# and the statezip program with its man page and README.
# Each file belongs to a component, which cmake/package.cmake makes a Debian package of: lib (the
# shared library), dev (header, static library, the .so link, statezip.pc, the CMake package), cli
# (the program, man page, docs, Python module). A plain `cmake --install` installs them all.
include(CMakePackageConfigHelpers)

install(TARGETS statezip_shared EXPORT statezipTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT lib
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(TARGETS statezip_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(FILES include/statezip.h ${PROJECT_BINARY_DIR}/include/statezip_version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(TARGETS statezip RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
# The man page's title line gets the release from project(VERSION): docs/statezip.1 names none.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/statezip.1)
file(READ ${PROJECT_SOURCE_DIR}/docs/statezip.1 STATEZIP_MAN)
string(REGEX REPLACE "^\\.TH STATEZIP 1 \"([^\"]*)\" \"statezip\"" ".TH STATEZIP 1 \"\\1\" \"statezip ${PROJECT_VERSION}\""
  STATEZIP_MAN_VERSIONED "${STATEZIP_MAN}")
if(STATEZIP_MAN_VERSIONED STREQUAL STATEZIP_MAN)
  message(FATAL_ERROR "docs/statezip.1 must start with: .TH STATEZIP 1 \"<date>\" \"statezip\" ...")
endif()
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/statezip.1 CONTENT "${STATEZIP_MAN_VERSIONED}" @ONLY)
# Installed gzipped (Debian policy 12.1: /usr/share/man/man1/statezip.1.gz; man reads it anywhere).
# gzip -n leaves out the name and time, so the same page gives the same bytes in every build.
find_program(STATEZIP_GZIP gzip)
if(STATEZIP_GZIP)
  execute_process(COMMAND ${STATEZIP_GZIP} -9 -n -c ${PROJECT_BINARY_DIR}/statezip.1
    OUTPUT_FILE ${PROJECT_BINARY_DIR}/statezip.1.gz RESULT_VARIABLE STATEZIP_GZIP_RC)
  if(NOT STATEZIP_GZIP_RC EQUAL 0)
    message(FATAL_ERROR "gzip of the man page failed: ${STATEZIP_GZIP_RC}")
  endif()
  install(FILES ${PROJECT_BINARY_DIR}/statezip.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
else()
  message(WARNING "no gzip: the man page is installed uncompressed")
  install(FILES ${PROJECT_BINARY_DIR}/statezip.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
endif()
install(FILES README.md docs/API.md docs/FORMAT.md docs/STATE-FORMATS.md LICENSE
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
# Debian's copyright file in each package's doc folder (machine-readable format, the LICENSE).
file(READ ${PROJECT_SOURCE_DIR}/LICENSE STATEZIP_LICENSE)
string(REGEX REPLACE "\n$" "" STATEZIP_LICENSE "${STATEZIP_LICENSE}")
string(REGEX REPLACE "\n\n" "\n.\n" STATEZIP_LICENSE_DEB "${STATEZIP_LICENSE}")
string(REGEX REPLACE "\n" "\n " STATEZIP_LICENSE_DEB "${STATEZIP_LICENSE_DEB}")
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/copyright CONTENT
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: statezip

Files: *
Copyright: 2026 the statezip authors
License: Expat
 ${STATEZIP_LICENSE_DEB}
")
foreach(pair "lib;libstatezip${STATEZIP_SOVERSION}" "dev;libstatezip-dev" "cli;statezip")
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES ${PROJECT_BINARY_DIR}/copyright DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endforeach()

# The Python module (ctypes; it loads libstatezip.so.<major> from the system's library path).
set(STATEZIP_INSTALL_PYTHONDIR "lib/python3/dist-packages" CACHE STRING
  "where the Python module goes, relative to the prefix (Debian's path for the /usr prefix)")
install(DIRECTORY python/statezip DESTINATION ${STATEZIP_INSTALL_PYTHONDIR} COMPONENT cli
  PATTERN "__pycache__" EXCLUDE)

# statezip.pc finds its prefix from its own place (${pcfiledir}), so the tree can be installed
# anywhere (cmake --install build --prefix DIR) and moved.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(STATEZIP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(STATEZIP_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(pc_up "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  string(REGEX REPLACE "[^/]+" ".." pc_up "${pc_up}")
  set(STATEZIP_PC_PREFIX "\${pcfiledir}/${pc_up}")
  set(STATEZIP_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(STATEZIP_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(STATEZIP_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# htscodecs has no .pc file: name its folder unless the linker searches it anyway.
get_filename_component(STATEZIP_HTSCODECS_DIR "${HTSCODECS_LIB}" DIRECTORY)
if(STATEZIP_HTSCODECS_DIR IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
  set(STATEZIP_HTSCODECS_LINK "-lhtscodecs")
else()
  set(STATEZIP_HTSCODECS_LINK "-L${STATEZIP_HTSCODECS_DIR} -lhtscodecs")
endif()
configure_file(cmake/statezip.pc.in ${PROJECT_BINARY_DIR}/statezip.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/statezip.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

set(STATEZIP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/statezip)
install(EXPORT statezipTargets NAMESPACE statezip:: DESTINATION ${STATEZIP_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/statezipConfig.cmake.in ${PROJECT_BINARY_DIR}/statezipConfig.cmake
  INSTALL_DESTINATION ${STATEZIP_CMAKE_DIR})
# 0.x: minor versions may change the API; from 1.0 on, the major version (the SONAME) decides.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/statezipConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/statezipConfig.cmake ${PROJECT_BINARY_DIR}/statezipConfigVersion.cmake
  DESTINATION ${STATEZIP_CMAKE_DIR} COMPONENT dev)
