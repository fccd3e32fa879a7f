# install() + install(EXPORT): find_package(emurun CONFIG) and pkg-config for consumers.
include(CMakePackageConfigHelpers)
set(EMURUN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/emurun)

# Two components, one per Debian package (cmake/EmurunPackaging.cmake): runtime = emurun (the
# tool and its data), development = libemurun-dev (library, headers, CMake/pkg-config files).
install(TARGETS emurun EXPORT emurunTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/emurun DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT development)
install(FILES ${PROJECT_BINARY_DIR}/include/emurun/export.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/emurun COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/binfmt/arches.json DESTINATION ${CMAKE_INSTALL_DATADIR}/emurun
        COMPONENT runtime)
# bin/emurun is the launcher (tools/emurun-shim/launcher.c); the C++ CLI it hands over to is
# ../libexec/emurun/emurun-cli, and shims are made from ../libexec/emurun/emurun-shim (the same
# launcher under the name the library looks for).
install(TARGETS emurun_launcher RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
if(TARGET emurun_cli)
  install(TARGETS emurun_cli RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/emurun
          COMPONENT runtime)
endif()
install(PROGRAMS ${EMURUN_SHIM_LAUNCHER} DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/emurun
        COMPONENT runtime)
# The step supervisor: found the same way, ../libexec/emurun/emurun-supervisor. The library's
# Supervisor (every 'emurun run' step) needs it, so it goes with the runtime package.
install(TARGETS emurun_supervisor RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/emurun
        COMPONENT runtime)

install(EXPORT emurunTargets NAMESPACE emurun:: DESTINATION ${EMURUN_CMAKE_DIR}
        COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/emurunConfig.cmake.in
  ${PROJECT_BINARY_DIR}/emurunConfig.cmake INSTALL_DESTINATION ${EMURUN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/emurunConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/emurunConfig.cmake ${PROJECT_BINARY_DIR}/emurunConfigVersion.cmake
        DESTINATION ${EMURUN_CMAKE_DIR} COMPONENT development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cmake/toolchains DESTINATION ${EMURUN_CMAKE_DIR}
        OPTIONAL COMPONENT development)
# Shims and sysroots for cross builds: emurun_add_shim(), the sysroot fetcher, Meson cross files.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/EmurunShim.cmake DESTINATION ${EMURUN_CMAKE_DIR}
        COMPONENT development)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/emurun-sysroot DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT runtime)
# Meson looks up a cross file given by name in $XDG_DATA_DIRS/meson/cross (and
# ~/.local/share/meson/cross), so 'meson setup --cross-file emurun-aarch64' finds these. They
# name emurun by its absolute installed path, written at install time (cmake --install --prefix
# and DESTDIR included); the build tree gets its own copies naming the build's emurun
# (<build>/share/meson/cross). The toolchain files read the installed path from
# emurun-paths.cmake, written beside them at install time.
file(GLOB _emurun_meson_cross CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/meson/*.ini)
set(_emurun_cross_script ${PROJECT_SOURCE_DIR}/cmake/EmurunMesonCross.cmake)
set(_emurun_build_cross "")
foreach(_ini IN LISTS _emurun_meson_cross)
  get_filename_component(_name ${_ini} NAME_WE)
  set(_out ${PROJECT_BINARY_DIR}/share/meson/cross/emurun-${_name})
  add_custom_command(OUTPUT ${_out} ${_out}-sysroot
    COMMAND ${CMAKE_COMMAND} -DINPUT=${_ini} -DOUTPUT_DIR=${PROJECT_BINARY_DIR}/share/meson/cross
            -DEMURUN=$<TARGET_FILE:emurun_launcher> -P ${_emurun_cross_script}
    DEPENDS ${_ini} ${_emurun_cross_script} VERBATIM)
  list(APPEND _emurun_build_cross ${_out} ${_out}-sysroot)
  install(CODE "
    set(_bin \"${CMAKE_INSTALL_BINDIR}\")
    if(NOT IS_ABSOLUTE \"\${_bin}\")
      set(_bin \"\${CMAKE_INSTALL_PREFIX}/\${_bin}\")
    endif()
    set(_dest \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/meson/cross\")
    message(STATUS \"Installing: \${_dest}/emurun-${_name}[-sysroot]\")
    execute_process(COMMAND \"${CMAKE_COMMAND}\" -DINPUT=${_ini} \"-DOUTPUT_DIR=\${_dest}\"
                    \"-DEMURUN=\${_bin}/emurun\" -P ${_emurun_cross_script} COMMAND_ERROR_IS_FATAL ANY)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_dest}/emurun-${_name}\" \"\${_dest}/emurun-${_name}-sysroot\")"
    COMPONENT runtime)
endforeach()
add_custom_target(emurun_cross_files ALL DEPENDS ${_emurun_build_cross})
# emurun-paths.cmake names emurun relative to itself (the path from the toolchain dir to the
# bindir), so an install stays right when its prefix is moved: the release tarball unpacks into
# any prefix (cmake/EmurunRelease.cmake).
install(CODE "
  set(_bin \"${CMAKE_INSTALL_BINDIR}\")
  if(NOT IS_ABSOLUTE \"\${_bin}\")
    set(_bin \"\${CMAKE_INSTALL_PREFIX}/\${_bin}\")
  endif()
  set(_dir \"\${CMAKE_INSTALL_PREFIX}/${EMURUN_CMAKE_DIR}/toolchains\")
  file(RELATIVE_PATH _rel \"\${_dir}\" \"\${_bin}/emurun\")
  set(_file \"\$ENV{DESTDIR}\${_dir}/emurun-paths.cmake\")
  message(STATUS \"Installing: \${_file}\")
  file(WRITE \"\${_file}\" \"# Written by emurun's install: the emurun the toolchain files run, relative to this file.\\nget_filename_component(EMURUN_INSTALLED_EXECUTABLE \\\"\\\${CMAKE_CURRENT_LIST_DIR}/\${_rel}\\\" ABSOLUTE)\\n\")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_file}\")"
  COMPONENT development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cmake/schema/ DESTINATION ${CMAKE_INSTALL_DATADIR}/emurun/schema
        COMPONENT runtime FILES_MATCHING PATTERN "*.json")
install(FILES ${PROJECT_SOURCE_DIR}/tools/completions/emurun.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME emurun
        COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/tools/completions/_emurun
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT runtime)
include(EmurunManPages)

# A static libemurun needs its own dependencies on every link line (Libs); a shared one
# brings them itself (Libs.private, for --static only).
set(_emurun_pc_deps " -pthread")
if(NOT BUILD_SHARED_LIBS)
  set(EMURUN_PC_CFLAGS " -DEMURUN_STATIC_DEFINE")
  set(EMURUN_PC_LIBS "${_emurun_pc_deps}")
else()
  set(EMURUN_PC_LIBS_PRIVATE "${_emurun_pc_deps}")
endif()
# The prefix is written at install time (cmake --install --prefix, DESTDIR): Cflags then say
# -I/usr/include (which pkg-config drops) rather than a path through pkgconfig/../../... The
# release tarball's copy finds its prefix from its own location instead (${pcfiledir}/REL,
# cmake/release/relocate.cmake): it is unpacked anywhere.
file(RELATIVE_PATH EMURUN_PC_PREFIX_REL "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
set(EMURUN_PC_PREFIX "@EMURUN_PC_PREFIX@") # left for the install step
configure_file(${PROJECT_SOURCE_DIR}/cmake/emurun.pc.in ${PROJECT_BINARY_DIR}/emurun.pc.in @ONLY)
install(CODE "
  set(EMURUN_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
  message(STATUS \"Installing: \${_dir}/emurun.pc\")
  configure_file(\"${PROJECT_BINARY_DIR}/emurun.pc.in\" \"\${_dir}/emurun.pc\" @ONLY)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_dir}/emurun.pc\")"
  COMPONENT development)
