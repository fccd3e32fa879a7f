# Cross-compile for ppc64le with Debian's powerpc64le-linux-gnu compilers (apt-get install g++-powerpc64le-linux-gnu);
# programs built with it run under emurun (see emurun-linux-common.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=<this file> [-DEMURUN_SYSROOT=DIR] [-DEMURUN_EXECUTABLE=/path/to/emurun] ...
set(EMURUN_TARGET_ARCH ppc64le)
set(EMURUN_TRIPLET powerpc64le-linux-gnu)
set(EMURUN_QEMU_CPU ppc64le)
set(CMAKE_SYSTEM_PROCESSOR ppc64le)
include(${CMAKE_CURRENT_LIST_DIR}/emurun-linux-common.cmake)
