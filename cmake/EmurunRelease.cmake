# The release tarball: `cpack -G TGZ` (or the build's `release` target) packs everything both
# Debian packages hold, as one tree, into emurun-VERSION-linux-ARCH.tar.gz with that name as its
# top directory. It installs by unpacking into any prefix (tar -xzf … --strip-components=1 -C
# PREFIX) on any Linux of its arch, glibc or musl: bin/emurun (the static launcher),
# libexec/emurun/{emurun-cli,emurun-shim,emurun-supervisor} (static), bin/emurun-sysroot, man
# pages, completions, the CMake package and toolchain files, Meson cross files, schemas, the
# static library and its headers. Nothing in it names its prefix: the launcher finds the CLI
# from its own path, the toolchain files find emurun relative to themselves (emurun-paths.cmake),
# the pkg-config file from ${pcfiledir}, the CMake package from its own dir, and the Meson cross
# files' exe_wrapper is 'emurun' from PATH (cmake/release/relocate.cmake rewrites them: Meson
# has no file-relative path). tests/integration/test_release.sh unpacks it into clean bullseye
# and trixie roots. Included by EmurunPackaging.cmake before CPack.
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" EMURUN_RELEASE_ARCH)
set(EMURUN_RELEASE_NAME "emurun-${PROJECT_VERSION}-linux-${EMURUN_RELEASE_ARCH}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/release/cpack-options.cmake.in
               ${PROJECT_BINARY_DIR}/EmurunCPackOptions.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/EmurunCPackOptions.cmake)
add_custom_target(release
  COMMAND ${CMAKE_CPACK_COMMAND} --config ${PROJECT_BINARY_DIR}/CPackConfig.cmake -G TGZ
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR}
  COMMENT "Packing ${EMURUN_RELEASE_NAME}.tar.gz" VERBATIM)
