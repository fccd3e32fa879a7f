# Sanitizer flags as an INTERFACE target, linked PRIVATE by every target we build.
add_library(emurun_sanitizers INTERFACE)
set(_emurun_san "")
if(EMURUN_ASAN)
  list(APPEND _emurun_san address)
endif()
if(EMURUN_UBSAN)
  list(APPEND _emurun_san undefined)
endif()
if(_emurun_san)
  list(JOIN _emurun_san "," _emurun_san_list)
  target_compile_options(emurun_sanitizers INTERFACE -fsanitize=${_emurun_san_list} -fno-omit-frame-pointer
                                                     -fno-sanitize-recover=all)
  target_link_options(emurun_sanitizers INTERFACE -fsanitize=${_emurun_san_list})
endif()

# EMURUN_FUZZ (clang only; tests/fuzz/run.sh configures it with ASan and UBSan): every target we
# build is instrumented for libFuzzer's coverage feedback, and each tests/fuzz/fuzz_<name>.cpp
# also builds as the libFuzzer binary fuzz_<name>_libfuzzer.
option(EMURUN_FUZZ "Build the libFuzzer targets (clang), the library instrumented for them" OFF)
if(EMURUN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "EMURUN_FUZZ needs clang (Debian: clang-15 libfuzzer-15-dev), "
                        "not ${CMAKE_CXX_COMPILER_ID}: configure with CC=clang-15 CXX=clang++-15")
  endif()
  target_compile_options(emurun_sanitizers INTERFACE -fsanitize=fuzzer-no-link)
endif()

# libstdc++ 12 (Debian 12) offers <expected> only when __cpp_concepts >= 202002L, which clang
# before 19 does not advertise although it compiles that header: tell it, in C++23 code only
# (see the header).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 19)
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-include ${CMAKE_CURRENT_LIST_DIR}/clang_expected.hpp>")
endif()
