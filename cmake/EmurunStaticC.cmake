# emurun's small C helpers - the shim launcher (run for every call of a shimmed tool) and the
# step supervisor (forked for every step of `emurun run`) - are static programs. Linked against
# musl when the toolchain has it (Debian: musl-tools), one starts in ~0.03 ms and 4 page faults
# where static glibc takes ~0.3 ms and 26 (its start-up runs ~40 CPUID instructions, which a VM
# traps), and the supervisor's image is 60 KB instead of 800 KB: `emurun run` is ~5% faster per
# step (tests/bench, docs/benchmarks.md). Without musl, or with another compiler than GCC (the
# sanitizer builds use clang), they are linked statically against glibc as before.
#   EMURUN_MUSL=AUTO (default) | ON (fail without musl) | OFF
set(EMURUN_MUSL AUTO CACHE STRING "Link emurun's C helpers against musl: AUTO, ON or OFF")
set(EMURUN_MUSL_SPECS "" CACHE INTERNAL "")
if(NOT EMURUN_MUSL STREQUAL "OFF" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND NOT CMAKE_CROSSCOMPILING)
  string(REGEX REPLACE "-.*" "" _musl_cpu "${CMAKE_LIBRARY_ARCHITECTURE}")
  find_file(_emurun_musl_specs musl-gcc.specs
            PATHS /usr/lib/${_musl_cpu}-linux-musl /usr/lib/musl/lib /usr/local/musl/lib
            NO_DEFAULT_PATH NO_CACHE)
  if(_emurun_musl_specs)
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS "-specs=${_emurun_musl_specs}") # compile and link lines both
    set(CMAKE_REQUIRED_LINK_OPTIONS "-static")
    check_c_source_compiles([[
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>
int main(void) { return (int)syscall(SYS_getpid) < 0; }]] EMURUN_HAVE_MUSL)
    unset(CMAKE_REQUIRED_FLAGS)
    unset(CMAKE_REQUIRED_LINK_OPTIONS)
    if(EMURUN_HAVE_MUSL)
      set(EMURUN_MUSL_SPECS ${_emurun_musl_specs} CACHE INTERNAL "")
    endif()
  endif()
endif()
if(EMURUN_MUSL STREQUAL "ON" AND NOT EMURUN_MUSL_SPECS)
  message(FATAL_ERROR "EMURUN_MUSL=ON but no working musl-gcc.specs for ${CMAKE_C_COMPILER} "
                      "(apt-get install musl-tools, or -DEMURUN_MUSL=AUTO)")
endif()
if(EMURUN_MUSL_SPECS)
  message(STATUS "emurun's C helpers: static, musl (${EMURUN_MUSL_SPECS})")
else()
  message(STATUS "emurun's C helpers: static, glibc")
endif()

# A static C helper: musl when found above, else static glibc.
function(emurun_static_c_helper target)
  if(EMURUN_MUSL_SPECS)
    target_compile_options(${target} PRIVATE -specs=${EMURUN_MUSL_SPECS})
    target_link_options(${target} PRIVATE -specs=${EMURUN_MUSL_SPECS} -static)
  else()
    target_link_options(${target} PRIVATE -static)
  endif()
endfunction()
