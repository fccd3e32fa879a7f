# emurun_add_shim(): use a target-architecture tool (protoc, a code generator, ...) during a
# cross build. Installed with emurun and included by find_package(emurun CONFIG).
#
#   emurun_add_shim(<name>
#       TARGET <path> | PROGRAM <path inside the sysroot>   # the foreign program
#       [ARCH <arch>]                  # arm64/aarch64, ppc64el/ppc64le, s390x, riscv64, armhf
#       [SYSROOT <dir>...]             # loader and libraries for it
#       [DEBIAN_PACKAGES <pkg>...]     # fetch these (with Depends) into a sysroot first
#       [ENV <K=V>...]                 # set whenever the shim runs
#       [DIR <shim dir>]               # default ${CMAKE_BINARY_DIR}/emurun-shims
#       [OUTPUT_VARIABLE <var>])       # default EMURUN_SHIM_<name>; the shim's path
#
# The shim is created at configure time with `emurun shim add` and is an ordinary executable:
# use ${var} in add_custom_command(COMMAND ...), or put the shim dir first in PATH. Example:
#   find_package(emurun CONFIG REQUIRED)
#   emurun_add_shim(protoc ARCH arm64 DEBIAN_PACKAGES protobuf-compiler PROGRAM usr/bin/protoc)
#   add_custom_command(OUTPUT a.pb.cc COMMAND ${EMURUN_SHIM_protoc} --cpp_out=. a.proto ...)
include_guard(GLOBAL)

function(emurun_add_shim name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TARGET;PROGRAM;ARCH;DIR;OUTPUT_VARIABLE"
                        "SYSROOT;DEBIAN_PACKAGES;ENV")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "emurun_add_shim(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT EMURUN_EXECUTABLE)
    find_program(EMURUN_EXECUTABLE emurun NO_CMAKE_FIND_ROOT_PATH)
  endif()
  if(NOT EMURUN_EXECUTABLE)
    message(FATAL_ERROR "emurun_add_shim(${name}): the emurun binary was not found "
                        "(set EMURUN_EXECUTABLE or put emurun in PATH)")
  endif()
  if(NOT arg_DIR)
    set(arg_DIR ${CMAKE_BINARY_DIR}/emurun-shims)
  endif()
  if(NOT arg_OUTPUT_VARIABLE)
    set(arg_OUTPUT_VARIABLE EMURUN_SHIM_${name})
  endif()
  set(sysroots ${arg_SYSROOT})
  if(arg_DEBIAN_PACKAGES)
    if(NOT arg_ARCH)
      message(FATAL_ERROR "emurun_add_shim(${name}): DEBIAN_PACKAGES needs ARCH")
    endif()
    _emurun_fetch_sysroot(${arg_ARCH} fetched ${arg_DEBIAN_PACKAGES})
    list(PREPEND sysroots ${fetched})
  endif()
  set(target ${arg_TARGET})
  if(arg_PROGRAM)
    list(GET sysroots 0 first)
    set(target ${first}/${arg_PROGRAM})
  endif()
  if(NOT target)
    message(FATAL_ERROR "emurun_add_shim(${name}): give TARGET or PROGRAM")
  endif()
  set(cmd ${EMURUN_EXECUTABLE} shim add ${name} --target ${target} --dir ${arg_DIR})
  if(arg_ARCH)
    list(APPEND cmd --arch ${arg_ARCH})
  endif()
  foreach(s IN LISTS sysroots)
    list(APPEND cmd --sysroot ${s})
  endforeach()
  foreach(e IN LISTS arg_ENV)
    list(APPEND cmd --env ${e})
  endforeach()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "emurun_add_shim(${name}) failed (exit ${rc}):\n${err}")
  endif()
  message(STATUS "emurun shim: ${out} -> ${target}")
  set(${arg_OUTPUT_VARIABLE} ${out} PARENT_SCOPE)
endfunction()

# Fetch Debian packages for <arch> into ${CMAKE_BINARY_DIR}/emurun-sysroots/<arch> (cached
# under ~/.cache/emurun, so a reconfigure is fast); the directory goes into <out_var>.
function(_emurun_fetch_sysroot arch out_var)
  get_filename_component(bindir ${EMURUN_EXECUTABLE} DIRECTORY)
  find_program(EMURUN_SYSROOT_SCRIPT emurun-sysroot HINTS ${bindir} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../tools
               NO_CMAKE_FIND_ROOT_PATH)
  if(NOT EMURUN_SYSROOT_SCRIPT)
    message(FATAL_ERROR "emurun-sysroot (installed next to emurun) was not found")
  endif()
  set(dir ${CMAKE_BINARY_DIR}/emurun-sysroots/${arch})
  execute_process(COMMAND ${EMURUN_SYSROOT_SCRIPT} fetch --arch ${arch} --dir ${dir} ${ARGN}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "emurun-sysroot fetch --arch ${arch} ${ARGN} failed:\n${err}")
  endif()
  set(${out_var} ${dir} PARENT_SCOPE)
endfunction()
