# cmake -DINPUT=binfmt/arches.json -DOUTPUT=file.cpp -P ArchTable.cmake
# Writes the translation unit of lib/arch/arch_table.hpp: the JSON's bytes (arch_table_json())
# and its "arches" as a table of detail::ArchRow, each field copied verbatim from the JSON, so
# that emurun parses no JSON when it starts (issue 15). arches.json stays the one source.
file(READ ${INPUT} _json)
file(READ ${INPUT} _hex HEX)

# A string field as a C++ raw string literal (the JSON's own escapes, such as the magic's \xHH,
# stay text: detail::binfmt_bytes decodes them when the table compiles).
function(_cxx_string out value)
  if(value MATCHES "\\)~\"")
    message(FATAL_ERROR "${INPUT}: a string holds )~\", which the generated raw literal cannot: ${value}")
  endif()
  set(${out} "R\"~(${value})~\"" PARENT_SCOPE)
endfunction()

# FIELD of arch I, or DEFAULT when the arch has none (REQUIRED: no default, a build error).
function(_field out i field default)
  string(JSON _type ERROR_VARIABLE _err TYPE "${_json}" arches ${i} ${field})
  if(_err)
    if(default STREQUAL "REQUIRED")
      message(FATAL_ERROR "${INPUT}: arches[${i}] has no \"${field}\"")
    endif()
    set(${out} "${default}" PARENT_SCOPE)
    return()
  endif()
  string(JSON _value GET "${_json}" arches ${i} ${field})
  set(${out} "${_value}" PARENT_SCOPE)
  set(${out}_type "${_type}" PARENT_SCOPE)
endfunction()

function(_string_field out i field default)
  _field(_v ${i} ${field} "${default}")
  if(DEFINED _v_type AND NOT _v_type STREQUAL "STRING")
    message(FATAL_ERROR "${INPUT}: arches[${i}].${field} is not a string")
  endif()
  _cxx_string(_lit "${_v}")
  set(${out} "${_lit}" PARENT_SCOPE)
endfunction()

function(_number_field out i field default)
  _field(_v ${i} ${field} "${default}")
  if(NOT _v MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${INPUT}: arches[${i}].${field} is not a non-negative integer: ${_v}")
  endif()
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/ArchJson.cmake)

string(JSON _count LENGTH "${_json}" arches)
math(EXPR _last "${_count} - 1")
set(_alias_arrays "")
set(_rows "")
foreach(_i RANGE ${_last})
  _field(_name ${_i} name REQUIRED)
  _string_field(name ${_i} name REQUIRED)
  set(aliases "{}")
  _alias_list(_alias_names ${_i})
  if(_alias_names)
    set(_items "")
    foreach(_alias IN LISTS _alias_names)
      _cxx_string(_lit "${_alias}")
      string(APPEND _items "${_lit}, ")
    endforeach()
    string(APPEND _alias_arrays "constexpr std::string_view k_aliases_${_i}[] = {${_items}};\n")
    set(aliases "k_aliases_${_i}")
  endif()
  _number_field(elf_class ${_i} elf_class REQUIRED)
  _string_field(elf_data ${_i} elf_data REQUIRED)
  _number_field(e_machine ${_i} e_machine REQUIRED)
  _number_field(e_flags_mask ${_i} e_flags_mask 0)
  _number_field(e_flags_value ${_i} e_flags_value 0)
  _string_field(magic ${_i} magic REQUIRED)
  _string_field(mask ${_i} mask REQUIRED)
  _string_field(qemu ${_i} qemu REQUIRED)
  _string_field(triplet ${_i} triplet "")
  _string_field(debian ${_i} debian "")
  _string_field(family ${_i} family "${_name}")
  _string_field(known_issue ${_i} known_issue "")
  string(APPEND _rows "    {${name}, ${aliases}, ${elf_class}, ${elf_data}, ${e_machine}, "
                      "${e_flags_mask}, ${e_flags_value},\n     binfmt_bytes(${magic}),\n     "
                      "binfmt_bytes(${mask}),\n     "
                      "${qemu}, ${triplet}, ${debian}, ${family},\n     ${known_issue}},\n")
endforeach()

string(LENGTH "${_hex}" _len)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," _bytes "${_hex}")
math(EXPR _n "${_len} / 2")
if(DEFINED OUTPUT)
file(WRITE ${OUTPUT}.tmp
"// Generated from binfmt/arches.json by cmake/ArchTable.cmake. Do not edit.\n"
"#include \"arch/arch_table.hpp\"\n"
"namespace emurun::detail {\n"
"namespace {\n"
"const char k_data[] = {${_bytes} '\\0'};\n"
"${_alias_arrays}"
"// Narrowing is an error in this initialiser: a value too large for its field fails the build.\n"
"constexpr ArchRow k_rows[] = {\n${_rows}};\n"
"static_assert(magic_and_mask_agree(k_rows), \"binfmt/arches.json: an arch's magic and mask differ in length\");\n"
"} // namespace\n"
"const std::string_view k_arch_table_json{k_data, ${_n}};\n"
"const std::span<const ArchRow> k_arch_table{k_rows};\n"
"} // namespace emurun::detail\n")
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
endif()

