# Cross-compile for arm with Debian's arm-linux-gnueabihf compilers (apt-get install g++-arm-linux-gnueabihf);
# programs built with it run under emurun (see emurun-linux-common.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=<this file> [-DEMURUN_SYSROOT=DIR] [-DEMURUN_EXECUTABLE=/path/to/emurun] ...
set(EMURUN_TARGET_ARCH arm)
set(EMURUN_TRIPLET arm-linux-gnueabihf)
set(EMURUN_QEMU_CPU arm)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
include(${CMAKE_CURRENT_LIST_DIR}/emurun-linux-common.cmake)
