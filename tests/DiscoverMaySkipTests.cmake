# cmake -DEXE=<unit test binary> -DOUT=<ctest file> -DSUITE=<doctest suite> -DPREFIX=<name prefix>
#       -DENV=<ENVIRONMENT value> -DLABEL=<tier> -P DiscoverMaySkipTests.cmake
# Runs after each build of the unit tests: one ctest per test case of SUITE (the cases that may
# skip, tests/unit/skip.hpp), with SKIP_RETURN_CODE 125, so ctest reports each skip as skipped.
execute_process(COMMAND ${EXE} --list-test-cases --test-suite=${SUITE} --no-version
                OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "listing the test cases of ${EXE} failed (${_rc}):\n${_out}")
endif()
string(REPLACE "\n" ";" _lines "${_out}")
set(_script "")
foreach(_name IN LISTS _lines)
  if(_name STREQUAL "" OR _name MATCHES "^(\\[doctest\\]|====)")
    continue()
  endif()
  # doctest filters: ',' separates patterns, '*' and '?' are wildcards (none in our names).
  string(REPLACE "," "\\," _filter "${_name}")
  string(APPEND _script
    "add_test([==[${PREFIX}${_name}]==] [==[${EXE}]==] [==[--test-case=${_filter}]==] "
    "[==[--test-suite=${SUITE}]==])\n"
    "set_tests_properties([==[${PREFIX}${_name}]==] PROPERTIES SKIP_RETURN_CODE 125 "
    "ENVIRONMENT [==[${ENV}]==] LABELS ${LABEL})\n")
endforeach()
file(WRITE ${OUT} "${_script}")
