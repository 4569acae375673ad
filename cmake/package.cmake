# Debian packages of the install components (cmake/install.cmake), split as Debian ships
# libzstd, liblz4 and xz: `cmake --build build --target package` or `cd build && cpack -G DEB`.
#   libstatezip0     component lib: the shared library libstatezip.so.0*
#   libstatezip-dev  component dev: statezip.h, libstatezip.a, the libstatezip.so link, statezip.pc,
#                    the CMake package
#   statezip         component cli: the statezip program, its man page, the docs, the Python module
# The version is project(VERSION); dpkg-shlibdeps (dpkg-dev) finds the system libraries' packages.
# Inside another project (add_subdirectory, FetchContent) the packaging is that project's.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME statezip)
set(CPACK_PACKAGE_VENDOR "statezip")
# Debian requires a Maintainer field: whoever builds packages for distribution sets their own.
set(STATEZIP_DEB_MAINTAINER "statezip developers <statezip@localhost>" CACHE STRING "Maintainer field of the .deb packages")
set(CPACK_PACKAGE_CONTACT "${STATEZIP_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "lossless compressor for llama.cpp state files")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the program and the shared library, as Debian ships them
set(CPACK_COMPONENTS_ALL lib dev cli)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # name_version_arch.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

# The library package is named after the SONAME, so that a new SONAME is a new package that
# can be installed beside the old one.
set(STATEZIP_DEB_LIB libstatezip${STATEZIP_SOVERSION})
set(STATEZIP_DEB_EXACT "${STATEZIP_DEB_LIB} (= ${PROJECT_VERSION})")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME ${STATEZIP_DEB_LIB})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_DESCRIPTION "lossless compressor for llama.cpp state files (shared library)
 libstatezip compresses llama.cpp session, sequence and slot state files in process through
 a C API; this package holds the shared library.")
# A shlibs file for packages that link it (only the lib component has a shared library). The
# default policy "=": in 0.x a minor version may change the API.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libstatezip-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# statezip.pc names libzstd, liblz4, liblzma and libxxhash (Requires.private), which pkg-config
# must find; the static library also needs libhtscodecs.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "${STATEZIP_DEB_EXACT}, libzstd-dev, liblz4-dev, liblzma-dev, libxxhash-dev, libhtscodecs-dev, pkg-config | pkgconf")
set(CPACK_DEBIAN_DEV_DESCRIPTION "lossless compressor for llama.cpp state files (development files)
 The C header statezip.h, the static library, the libstatezip.so link, statezip.pc and the
 CMake package (find_package(statezip), target statezip::statezip).")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME statezip)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
# The program links the library statically; the Python module it ships loads libstatezip.so.0.
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "${STATEZIP_DEB_EXACT}")
set(CPACK_DEBIAN_CLI_DESCRIPTION "lossless compressor for llama.cpp state files (command-line tool)
 The statezip program (compress, decompress, --patch-from, .stzp sets), its man page, and the
 Python module statezip (ctypes over libstatezip).")

include(CPack)
