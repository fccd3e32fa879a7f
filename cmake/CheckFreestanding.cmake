# cmake -DNM=nm -DOBJECTS=a.o;b.o -DSTAMP=file -P CheckFreestanding.cmake
# Fails when an object refers to any symbol it does not define, except glibc's _start: the
# fast exec entry (tools/emurun/fast_exec.c) runs before the binary is relocated, when no
# library function can be called.
foreach(_obj ${OBJECTS})
  execute_process(COMMAND ${NM} -u ${_obj} OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${NM} -u ${_obj} failed")
  endif()
  string(REGEX REPLACE "[ \t]*U _start\n" "" _rest "${_out}")
  string(STRIP "${_rest}" _rest)
  if(NOT _rest STREQUAL "")
    message(FATAL_ERROR "${_obj} calls what it cannot before relocation:\n${_rest}\n"
                        "(tools/emurun/fast_exec.c may use raw system calls only)")
  endif()
endforeach()
file(TOUCH ${STAMP})
