# Cross-compile for aarch64 with Debian's aarch64-linux-gnu compilers (apt-get install g++-aarch64-linux-gnu);
# programs built with it run under emurun (see emurun-linux-common.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=<this file> [-DEMURUN_SYSROOT=DIR] [-DEMURUN_EXECUTABLE=/path/to/emurun] ...
set(EMURUN_TARGET_ARCH aarch64)
set(EMURUN_TRIPLET aarch64-linux-gnu)
set(EMURUN_QEMU_CPU aarch64)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/emurun-linux-common.cmake)
