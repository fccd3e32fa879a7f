# cmake -DRULES=layers.txt -DROOT=<source dir> -DSTAMP=<file> -P EmurunCheckLayers.cmake
# Fails when a file includes a module it may not use. RULES holds one line per module,
# "name=allowed,allowed,...". Checked:
#   lib/<m>/*            may include <emurun/X.hpp> and "Y/..." only for X, Y in {m} + allowed(m)
#   include/emurun/X.hpp may include <emurun/Y.hpp> only for Y in {module(X)} + allowed(module(X))
#   tools/emurun/*       (the CLI) may include public headers only, never lib/'s private ones
#   <boost/...>          only lib/process (Boost stays private to the process module)
# whichever the delimiter ("emurun/X.hpp" and <Y/...> count too, since both compile). An include
# path is plain: no "..", no "." segment, no "//" (each would reach a header past the check).
# Every file of a module folder and of include/emurun is checked, whatever its extension.
#
# The compiler enforces the graph too: each module compiles against an include tree of its own
# (lib/CMakeLists.txt, build/lib/include-<m>/), holding the private and public headers of the
# module and of what it uses only, so an upward or sideways "Y/..." in a compiled file is "No
# such file" and <emurun/X.hpp> an #error naming the rule (ctest -R layers plants them). This check
# runs before anything compiles and names the rule, and it is the only guard of what the
# compiler cannot see:
#   - paths resolved past the trees: "../" (relative to the including file, it reaches any
#     module folder) and absolute paths;
#   - <boost/...> outside lib/process: Boost is a system header every compile can reach;
#   - files no module compile reads: a header that no source of its module includes (consumers
#     get all of include/emurun), a module sub-folder, a folder under lib/ that is no module;
#   - spellings the check could not read (a macro, a comment before the path).
# A public header belongs to the module of its name, except those cmake/EmurunHeaderOwners.cmake
# lists (the table the per-module include trees of lib/CMakeLists.txt read too).
cmake_policy(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/EmurunHeaderOwners.cmake)

file(STRINGS ${RULES} _lines)
set(_modules "")
foreach(_line IN LISTS _lines)
  string(REGEX MATCH "^([a-z_]+)=(.*)$" _ ${_line})
  set(_mod ${CMAKE_MATCH_1})
  string(REPLACE "," ";" _allowed_${_mod} "${CMAKE_MATCH_2}")
  list(APPEND _modules ${_mod})
endforeach()

set(_errors "")
# check_file(FILE MODULE): MODULE empty = the CLI (public headers only).
function(check_file file mod)
  file(STRINGS ${file} _incs REGEX "^[ \t]*#[ \t]*include")
  file(RELATIVE_PATH _rel ${ROOT} ${file})
  set(_ok ${mod} ${_allowed_${mod}})
  foreach(_inc IN LISTS _incs)
    if(NOT _inc MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"]")
      # A macro, a comment before the name, include_next: the check could not tell the module.
      list(APPEND _errors "${_rel}: ${_inc}: write includes as #include <path> or \"path\"")
      continue()
    endif()
    string(REGEX MATCH "include[ \t]*([<\"])([^>\"]*)" _ "${_inc}")
    set(_quoted "")
    if(CMAKE_MATCH_1 STREQUAL "\"")
      set(_quoted 1)
    endif()
    set(_path "${CMAKE_MATCH_2}")
    if(_path MATCHES "\\.\\./")
      list(APPEND _errors "${_rel}: ${_inc}: includes climb with '..'; include by module path")
    elseif(_path MATCHES "^/")
      list(APPEND _errors "${_rel}: ${_inc}: an absolute path; include by module path")
    elseif(_path MATCHES "(^|/)\\.(/|$)" OR _path MATCHES "//")
      list(APPEND _errors "${_rel}: ${_inc}: not a plain path ('.' or '//'); include by module path")
    elseif(_path MATCHES "^emurun/([a-z_]+)\\.hpp$")
      emurun_header_module(${CMAKE_MATCH_1} _target)
      if(NOT _target IN_LIST _modules)
        list(APPEND _errors "${_rel}: ${_inc}: no module owns this public header")
      elseif(mod AND NOT _target IN_LIST _ok)
        list(APPEND _errors "${_rel}: ${_inc}: module '${mod}' may not use '${_target}' (allowed: ${_ok})")
      endif()
    elseif(_path MATCHES "^emurun/")
      list(APPEND _errors "${_rel}: ${_inc}: not a public header (include/emurun/<module>.hpp)")
    elseif(_path MATCHES "^boost/")
      if(NOT mod STREQUAL "process")
        list(APPEND _errors "${_rel}: ${_inc}: only lib/process includes Boost")
      endif()
    elseif(_path MATCHES "^([a-z_]+)/")
      set(_target ${CMAKE_MATCH_1})
      if(NOT mod AND (_quoted OR _target IN_LIST _modules))
        list(APPEND _errors "${_rel}: ${_inc}: the CLI may include public headers only")
      elseif(mod AND _target IN_LIST _modules AND NOT _target IN_LIST _ok)
        list(APPEND _errors "${_rel}: ${_inc}: module '${mod}' may not use '${_target}' (allowed: ${_ok})")
      endif()
    endif()
  endforeach()
  set(_errors ${_errors} PARENT_SCOPE)
endfunction()

foreach(_mod IN LISTS _modules)
  file(GLOB _files LIST_DIRECTORIES true ${ROOT}/lib/${_mod}/*)
  foreach(_f IN LISTS _files)
    if(IS_DIRECTORY ${_f})
      # emurun_module() compiles lib/<m>/*.cpp only: a sub-folder would escape build and check.
      file(RELATIVE_PATH _rel ${ROOT} ${_f})
      list(APPEND _errors "${_rel}/: a module is one flat folder (not compiled, not checked)")
    else()
      check_file(${_f} ${_mod}) # any extension: a .h or .inc included by a .cpp compiles too
    endif()
  endforeach()
endforeach()
file(GLOB _public ${ROOT}/include/emurun/*)
foreach(_f IN LISTS _public)
  get_filename_component(_name ${_f} NAME_WE)
  emurun_header_module(${_name} _mod)
  if(NOT _f MATCHES "\\.hpp$")
    file(RELATIVE_PATH _rel ${ROOT} ${_f})
    list(APPEND _errors "${_rel}: public headers are include/emurun/<module>.hpp (others escape the check)")
  elseif(NOT _mod IN_LIST _modules)
    list(APPEND _errors "include/emurun/${_name}.hpp: no module '${_mod}' in lib/CMakeLists.txt")
  else()
    check_file(${_f} ${_mod})
  endif()
endforeach()
file(GLOB _cli ${ROOT}/tools/emurun/*.cpp ${ROOT}/tools/emurun/*.hpp
     ${ROOT}/tools/emurun-ci/*.cpp ${ROOT}/tools/emurun-ci/*.hpp)
foreach(_f IN LISTS _cli)
  check_file(${_f} "")
endforeach()
# A folder under lib/ that is no module would escape the check.
file(GLOB _dirs LIST_DIRECTORIES true ${ROOT}/lib/*)
foreach(_d IN LISTS _dirs)
  get_filename_component(_name ${_d} NAME)
  if(IS_DIRECTORY ${_d} AND NOT _name IN_LIST _modules)
    list(APPEND _errors "lib/${_name}/: not a module in lib/CMakeLists.txt")
  endif()
endforeach()

if(_errors)
  list(JOIN _errors "\n  " _text)
  message(FATAL_ERROR "emurun: upward or undeclared includes (see ARCHITECTURE.md):\n  ${_text}")
endif()
file(WRITE ${STAMP} "ok\n")
