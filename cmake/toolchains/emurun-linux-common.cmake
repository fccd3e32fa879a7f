# Shared part of emurun's toolchain files; the per-arch file sets EMURUN_TARGET_ARCH (emurun's
# arch name), EMURUN_TRIPLET (Debian cross-compiler prefix) and CMAKE_SYSTEM_PROCESSOR first.
#
# Cross-built programs run under emurun: CMAKE_CROSSCOMPILING_EMULATOR makes ctest (tests added
# with add_test(NAME ... COMMAND <target>)), add_custom_command(COMMAND <target>) and
# try_run() run them through `emurun exec --arch A [--sysroot DIR] --`. The emurun used is
# -DEMURUN_EXECUTABLE=/path/to/emurun (or $EMURUN_EXECUTABLE), else the absolute path written
# into emurun-paths.cmake beside this file when emurun was installed; PATH is not searched.
# Without emurun the emulator falls back to qemu-<arch> -L <sysroot>.
#
# -DEMURUN_SYSROOT=DIR (or $EMURUN_SYSROOT): a foreign sysroot, e.g. made by
# `emurun-sysroot fetch --arch A --dir DIR libpng-dev libc6-dev` or `emurun-sysroot build-dep`. It becomes
# CMAKE_SYSROOT (the compilers get --sysroot=DIR), pkg-config's PKG_CONFIG_SYSROOT_DIR and
# PKG_CONFIG_LIBDIR (DIR's multiarch, lib and share pkgconfig dirs), the root of find_*()
# lookups, and the emulator's --sysroot. Without it the target's files come from Debian's cross
# packages under /usr/<triplet>.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${EMURUN_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${EMURUN_TRIPLET}-g++)

# try_compile() projects re-read this file; pass the choices on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMURUN_EXECUTABLE EMURUN_SYSROOT)
foreach(_emurun_var EMURUN_EXECUTABLE EMURUN_SYSROOT)
  if(NOT ${_emurun_var} AND DEFINED ENV{${_emurun_var}})
    set(${_emurun_var} "$ENV{${_emurun_var}}")
  endif()
endforeach()

if(EMURUN_SYSROOT)
  get_filename_component(EMURUN_SYSROOT "${EMURUN_SYSROOT}" ABSOLUTE)
  if(NOT EXISTS "${EMURUN_SYSROOT}/usr/lib/${EMURUN_TRIPLET}/libc.so")
    message(FATAL_ERROR "EMURUN_SYSROOT=${EMURUN_SYSROOT} has no usr/lib/${EMURUN_TRIPLET}/libc.so: "
      "it is not a ${EMURUN_TARGET_ARCH} sysroot a compiler can link against. Make one with: "
      "emurun-sysroot fetch --arch ${EMURUN_TARGET_ARCH} --dir ${EMURUN_SYSROOT} libc6-dev "
      "(add the -dev packages the project needs), or emurun-sysroot build-dep --arch "
      "${EMURUN_TARGET_ARCH} --dir ${EMURUN_SYSROOT} SOURCE-PACKAGE")
  endif()
  set(CMAKE_SYSROOT "${EMURUN_SYSROOT}")
  set(CMAKE_FIND_ROOT_PATH "${EMURUN_SYSROOT}")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${EMURUN_SYSROOT}")
  set(ENV{PKG_CONFIG_LIBDIR}
      "${EMURUN_SYSROOT}/usr/lib/${EMURUN_TRIPLET}/pkgconfig:${EMURUN_SYSROOT}/usr/lib/pkgconfig:${EMURUN_SYSROOT}/usr/share/pkgconfig")
  set(ENV{PKG_CONFIG_PATH} "")
  set(_emurun_target_root "${EMURUN_SYSROOT}")
  set(_emurun_sysroot_args --sysroot "${EMURUN_SYSROOT}")
else()
  # Debian's cross packages install the target's headers and libraries under /usr/<triplet>.
  list(APPEND CMAKE_FIND_ROOT_PATH /usr/${EMURUN_TRIPLET})
  set(_emurun_target_root /usr/${EMURUN_TRIPLET})
  set(_emurun_sysroot_args "")
endif()
# Libraries, headers and packages are looked up only in the target's root, never among the
# host's; programs (code generators) only on the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

if(NOT EMURUN_EXECUTABLE)
  include(${CMAKE_CURRENT_LIST_DIR}/emurun-paths.cmake OPTIONAL)
  if(EMURUN_INSTALLED_EXECUTABLE AND EXISTS "${EMURUN_INSTALLED_EXECUTABLE}")
    set(EMURUN_EXECUTABLE "${EMURUN_INSTALLED_EXECUTABLE}")
  endif()
endif()
if(EMURUN_EXECUTABLE)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      ${EMURUN_EXECUTABLE} exec --arch ${EMURUN_TARGET_ARCH} ${_emurun_sysroot_args} --)
else()
  find_program(EMURUN_QEMU NAMES qemu-${EMURUN_QEMU_CPU}-static qemu-${EMURUN_QEMU_CPU}
               NO_CMAKE_FIND_ROOT_PATH)
  if(EMURUN_QEMU)
    message(STATUS "emurun not found: cross-built programs run with ${EMURUN_QEMU}")
    set(CMAKE_CROSSCOMPILING_EMULATOR ${EMURUN_QEMU} -L ${_emurun_target_root})
  else()
    message(WARNING "Neither emurun nor qemu-${EMURUN_QEMU_CPU} found: cross-built programs "
                    "cannot run (set EMURUN_EXECUTABLE, or apt-get install qemu-user-static)")
  endif()
endif()
