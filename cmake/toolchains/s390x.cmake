# Cross-compile for s390x with Debian's s390x-linux-gnu compilers (apt-get install g++-s390x-linux-gnu);
# programs built with it run under emurun (see emurun-linux-common.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=<this file> [-DEMURUN_SYSROOT=DIR] [-DEMURUN_EXECUTABLE=/path/to/emurun] ...
set(EMURUN_TARGET_ARCH s390x)
set(EMURUN_TRIPLET s390x-linux-gnu)
set(EMURUN_QEMU_CPU s390x)
set(CMAKE_SYSTEM_PROCESSOR s390x)
include(${CMAKE_CURRENT_LIST_DIR}/emurun-linux-common.cmake)
