# cmake -DINPUT=cmake/schema/report.schema.json -DOUTPUT=report_schema_data.cpp -P SchemaKeys.cmake
# The report reader's rules that the schema states, taken from it at build time so that they
# cannot drift: the report's and a step's required keys and the flag rules
# (lib/report/report_schema.hpp declares them).
cmake_minimum_required(VERSION 3.25)
file(READ ${INPUT} _json)
get_filename_component(_name ${INPUT} NAME)

# _list(OUT KEY...): the JSON array at KEY... as C++ string literals joined by ", ".
function(_list out)
  string(JSON _n LENGTH "${_json}" ${ARGN})
  math(EXPR _last "${_n} - 1")
  set(_items "")
  foreach(_i RANGE ${_last})
    string(JSON _v GET "${_json}" ${ARGN} ${_i})
    list(APPEND _items "\"${_v}\"")
  endforeach()
  list(JOIN _items ", " _joined)
  set(${out} "${_joined}" PARENT_SCOPE)
endfunction()

_list(_report required)
_list(_step definitions step required)
_list(_rules definitions flags items properties rule enum)
file(WRITE ${OUTPUT}.tmp "// Generated from cmake/schema/${_name} by cmake/SchemaKeys.cmake: do not edit.
#include \"report/report_schema.hpp\"

namespace emurun::detail {
namespace {
constexpr std::string_view k_report[] = {${_report}};
constexpr std::string_view k_step[] = {${_step}};
constexpr std::string_view k_rules[] = {${_rules}};
} // namespace

std::span<const std::string_view> report_required_keys() { return k_report; }
std::span<const std::string_view> step_required_keys() { return k_step; }
std::span<const std::string_view> flag_rules() { return k_rules; }
} // namespace emurun::detail
")
configure_file(${OUTPUT}.tmp ${OUTPUT} COPYONLY)
file(REMOVE ${OUTPUT}.tmp)
