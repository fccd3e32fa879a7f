# Shared part of emurun's toolchain files; the per-arch file sets EMURUN_TARGET_ARCH (emurun's
# arch name), EMURUN_TRIPLET (Debian cross-compiler prefix) and CMAKE_SYSTEM_PROCESSOR first.
#
# Cross-built programs run under emurun: CMAKE_CROSSCOMPILING_EMULATOR makes ctest (tests added
# with add_test(NAME ... COMMAND <target>)), add_custom_command(COMMAND <target>) and
# try_run() run them through `emurun exec --arch A --`. Override the binary with
# -DEMURUN_EXECUTABLE=/path/to/emurun; by default it is the emurun installed next to this file
# (<prefix>/lib/cmake/emurun/toolchains -> <prefix>/bin), else the one in PATH. Without emurun
# the emulator falls back to qemu-<arch> -L /usr/<triplet>.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${EMURUN_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${EMURUN_TRIPLET}-g++)

# Debian's cross packages install the target's headers and libraries under /usr/<triplet>.
# Libraries, headers and packages are looked up only there, never among the host's; programs
# (code generators) only on the host. Add a sysroot with -DCMAKE_FIND_ROOT_PATH=... if needed.
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${EMURUN_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# try_compile() projects re-read this file; pass the chosen emurun on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMURUN_EXECUTABLE)
if(NOT EMURUN_EXECUTABLE)
  find_program(EMURUN_EXECUTABLE emurun
    HINTS ${CMAKE_CURRENT_LIST_DIR}/../../../../bin ${CMAKE_CURRENT_LIST_DIR}/../../../../../bin
    NO_CMAKE_FIND_ROOT_PATH
    DOC "emurun binary that runs cross-built programs (CMAKE_CROSSCOMPILING_EMULATOR)")
endif()
if(EMURUN_EXECUTABLE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EMURUN_EXECUTABLE} exec --arch ${EMURUN_TARGET_ARCH} --)
else()
  find_program(EMURUN_QEMU NAMES qemu-${EMURUN_QEMU_CPU}-static qemu-${EMURUN_QEMU_CPU}
               NO_CMAKE_FIND_ROOT_PATH)
  if(EMURUN_QEMU)
    message(STATUS "emurun not found: cross-built programs run with ${EMURUN_QEMU}")
    set(CMAKE_CROSSCOMPILING_EMULATOR ${EMURUN_QEMU} -L /usr/${EMURUN_TRIPLET})
  else()
    message(WARNING "Neither emurun nor qemu-${EMURUN_QEMU_CPU} found: cross-built programs "
                    "cannot run (set EMURUN_EXECUTABLE, or apt-get install qemu-user)")
  endif()
endif()
