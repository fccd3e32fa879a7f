# Debian packages with CPack's DEB generator: `cpack -G DEB` in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr (and BUILD_SHARED_LIBS=OFF, the default) gives
#   emurun          the tool, emurun-sysroot, arches.json, man pages, bash/zsh completions,
#                   Meson cross files, JSON Schemas (component "runtime")
#   libemurun-dev   libemurun.a, headers, CMake package and pkg-config files ("development")
# each with a DEP-5 copyright file and a gzipped Debian changelog in /usr/share/doc/<package>.
# tests/integration/test_deb.sh builds them, runs lintian and installs them into a fresh root.
set(EMURUN_PACKAGE_MAINTAINER "emurun maintainers <maintainers@emurun.invalid>"
    CACHE STRING "Maintainer field of the Debian packages (Name <address>)")

set(CPACK_PACKAGE_NAME emurun)
set(CPACK_PACKAGE_VENDOR "the emurun authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Debian revision 1: a packaging of upstream version PROJECT_VERSION (not a native package), so
# the changelog is changelog.Debian.gz. cmake/debian/changelog.in carries the same version.
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(EMURUN_DEB_VERSION ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})
set(CPACK_PACKAGE_CONTACT "${EMURUN_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME emurun)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION devel)
# dpkg-shlibdeps computes Depends from the binaries: none, as emurun is a static PIE and its
# helpers are static (tools/emurun/CMakeLists.txt); a sanitizer or shared-library build gets libc6.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "qemu-user-static")
# zstd: emurun run --pack/--unpack of .tar.zst archives (tar and gzip are essential; .tar.xz needs xz-utils).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "qemu-user, apt, dpkg-dev, zstd")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "QEMU user-mode emulation orchestrator for cross builds and tests
emurun makes foreign-architecture Linux programs (aarch64, ppc64le, s390x,
riscv64, arm and more) run on the build host under QEMU user-mode emulation:
one program at a time (emurun exec), as transparent shims for the tools a
cross build runs, or for a whole command in a private binfmt_misc inside a
user namespace (emurun sandbox, no root needed). It also registers QEMU with
the kernel's binfmt_misc safely and runs build and test pipelines under
emulation with per-step timing, slow-step flags and JUnit/Markdown reports.")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libemurun-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
    "emurun (= ${EMURUN_DEB_VERSION}), nlohmann-json3-dev")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "QEMU user-mode emulation orchestrator - development files
emurun makes foreign-architecture Linux programs run on the build host under
QEMU user-mode emulation. This package holds the static C++ library
libemurun.a, its headers, the CMake package (find_package(emurun)), the
pkg-config file and CMake toolchain files for cross builds.")

# /usr/share/doc/<package>/{copyright,changelog.Debian.gz} for both packages.
set(_emurun_deb_doc ${PROJECT_BINARY_DIR}/debian)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${_emurun_deb_doc}/changelog.Debian
               @ONLY)
add_custom_command(
  OUTPUT ${_emurun_deb_doc}/changelog.Debian.gz
  COMMAND ${EMURUN_GZIP} -9nkf ${_emurun_deb_doc}/changelog.Debian
  DEPENDS ${_emurun_deb_doc}/changelog.Debian
  COMMENT "Compressing the Debian changelog" VERBATIM)
add_custom_target(emurun_deb_changelog ALL DEPENDS ${_emurun_deb_doc}/changelog.Debian.gz)
foreach(_component_package IN ITEMS "runtime;emurun" "development;libemurun-dev")
  list(GET _component_package 0 _component)
  list(GET _component_package 1 _package)
  install(FILES ${PROJECT_SOURCE_DIR}/debian/copyright ${_emurun_deb_doc}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${_package} COMPONENT ${_component})
endforeach()

# Lintian overrides: tags that are deliberate, each with its reason in the file.
install(FILES ${PROJECT_SOURCE_DIR}/debian/emurun.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME emurun COMPONENT runtime)

# What dh_strip does to a static library: without debug info, .comment and .note (a
# RelWithDebInfo libemurun.a shrinks from ~110 MB to ~4 MB). Only when stripping was asked for
# (CPACK_STRIP_FILES, cmake --install --strip).
if(NOT BUILD_SHARED_LIBS)
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug --remove-section=.comment
        --remove-section=.note
        \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:emurun>\"
        COMMAND_ERROR_IS_FATAL ANY)
    endif()" COMPONENT development)
endif()

include(EmurunRelease)
include(CPack)
