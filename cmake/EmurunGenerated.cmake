# The library's generated sources, declared once for both builds that compile the library: the
# main build (lib/CMakeLists.txt) and the dogfood cross builds (tests/dogfood/CMakeLists.txt).
#   emurun_generated_sources(SOURCE_DIR OUT_DIR)
# sets EMURUN_ARCH_TABLE_CPP (the arch table, from binfmt/arches.json: the library reads no data
# file at run time) and EMURUN_REPORT_SCHEMA_CPP (the report reader's required keys and flag
# rules, from cmake/schema/report.schema.json) and the custom commands that write them to OUT_DIR.
function(emurun_generated_sources source_dir out_dir)
  set(_arch_json ${source_dir}/binfmt/arches.json)
  set(_arch_cpp ${out_dir}/arch_table_data.cpp)
  add_custom_command(
    OUTPUT ${_arch_cpp}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${_arch_json} -DOUTPUT=${_arch_cpp}
            -P ${source_dir}/cmake/ArchTable.cmake
    DEPENDS ${_arch_json} ${source_dir}/cmake/ArchTable.cmake ${source_dir}/cmake/ArchJson.cmake
    COMMENT "Generating the arch table from binfmt/arches.json" VERBATIM)
  set(_schema ${source_dir}/cmake/schema/report.schema.json)
  set(_schema_cpp ${out_dir}/report_schema_data.cpp)
  add_custom_command(
    OUTPUT ${_schema_cpp}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${_schema} -DOUTPUT=${_schema_cpp}
            -P ${source_dir}/cmake/SchemaKeys.cmake
    DEPENDS ${_schema} ${source_dir}/cmake/SchemaKeys.cmake
    COMMENT "Generating the report reader's keys from cmake/schema/report.schema.json" VERBATIM)
  set(EMURUN_ARCH_TABLE_CPP ${_arch_cpp} PARENT_SCOPE)
  set(EMURUN_REPORT_SCHEMA_CPP ${_schema_cpp} PARENT_SCOPE)
endfunction()
