# Shared by the scripts that read binfmt/arches.json (ArchTable.cmake, ArchDoc.cmake): the
# caller has read it into _json and names it INPUT.

# The aliases of arch I as a CMake list (empty when it has none).
function(_alias_list out i)
  set(_list "")
  string(JSON _n ERROR_VARIABLE _err LENGTH "${_json}" arches ${i} aliases)
  if(NOT _err AND _n GREATER 0)
    math(EXPR _n_last "${_n} - 1")
    foreach(_k RANGE ${_n_last})
      string(JSON _alias GET "${_json}" arches ${i} aliases ${_k})
      if(_alias MATCHES ";")
        message(FATAL_ERROR "${INPUT}: arches[${i}]: an alias holds ';': ${_alias}")
      endif()
      list(APPEND _list "${_alias}")
    endforeach()
  endif()
  set(${out} "${_list}" PARENT_SCOPE)
endfunction()
