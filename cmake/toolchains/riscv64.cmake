# Cross-compile for riscv64 with Debian's riscv64-linux-gnu compilers (apt-get install g++-riscv64-linux-gnu);
# programs built with it run under emurun (see emurun-linux-common.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=<this file> [-DEMURUN_SYSROOT=DIR] [-DEMURUN_EXECUTABLE=/path/to/emurun] ...
set(EMURUN_TARGET_ARCH riscv64)
set(EMURUN_TRIPLET riscv64-linux-gnu)
set(EMURUN_QEMU_CPU riscv64)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/emurun-linux-common.cmake)
