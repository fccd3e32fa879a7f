# The reference pages generated from their one source: docs/reference/{pipeline,report,doctor}-json.md
# from the JSON Schemas (cmake/SchemaDoc.cmake) and docs/reference/arches.md from the arch table
# (cmake/ArchDoc.cmake). The build writes them into its own tree, <build>/docs/reference/;
# integration.docs.generated fails when the copies committed in docs/ differ (copy them over
# after changing a schema or the table). The man pages are cmake/EmurunManPages.cmake's.
set(_emurun_doc_dir ${PROJECT_BINARY_DIR}/docs/reference)
set(_emurun_docs "")
foreach(_pair "pipeline|Pipeline JSON" "report|Report JSON" "doctor|Doctor JSON")
  string(REPLACE "|" ";" _pair "${_pair}")
  list(GET _pair 0 _name)
  list(GET _pair 1 _title)
  set(_schema ${PROJECT_SOURCE_DIR}/cmake/schema/${_name}.schema.json)
  add_custom_command(
    OUTPUT ${_emurun_doc_dir}/${_name}-json.md
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_emurun_doc_dir}
    COMMAND ${CMAKE_COMMAND} -DSCHEMA=${_schema} -DOUTPUT=${_emurun_doc_dir}/${_name}-json.md
            "-DTITLE=${_title}" -P ${PROJECT_SOURCE_DIR}/cmake/SchemaDoc.cmake
    DEPENDS ${_schema} ${PROJECT_SOURCE_DIR}/cmake/SchemaDoc.cmake
    COMMENT "Generating docs/reference/${_name}-json.md from its schema" VERBATIM)
  list(APPEND _emurun_docs ${_emurun_doc_dir}/${_name}-json.md)
endforeach()
add_custom_command(
  OUTPUT ${_emurun_doc_dir}/arches.md
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_emurun_doc_dir}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${PROJECT_SOURCE_DIR}/binfmt/arches.json
          -DOUTPUT=${_emurun_doc_dir}/arches.md -P ${PROJECT_SOURCE_DIR}/cmake/ArchDoc.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/binfmt/arches.json ${PROJECT_SOURCE_DIR}/cmake/ArchDoc.cmake ${PROJECT_SOURCE_DIR}/cmake/ArchJson.cmake
  COMMENT "Generating docs/reference/arches.md from binfmt/arches.json" VERBATIM)
list(APPEND _emurun_docs ${_emurun_doc_dir}/arches.md)
add_custom_target(emurun_docs ALL DEPENDS ${_emurun_docs})

# The API reference of the public headers (docs/api/Doxyfile; Debian's doxygen): not part of
# the default build. `cmake --build build --target emurun_api_docs` writes
# build/docs/api/html/index.html and fails on any Doxygen warning (integration.api_docs runs
# the same Doxyfile in the packaging tier).
find_program(EMURUN_DOXYGEN doxygen)
if(EMURUN_DOXYGEN)
  set(_emurun_api_dir ${PROJECT_BINARY_DIR}/docs/api)
  add_custom_target(emurun_api_docs
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${_emurun_api_dir}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_emurun_api_dir}
    COMMAND ${CMAKE_COMMAND} -E env EMURUN_API_DOCS_DIR=${_emurun_api_dir}
            ${EMURUN_DOXYGEN} docs/api/Doxyfile
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "API reference (Doxygen, warnings are errors): ${_emurun_api_dir}/html/index.html"
    VERBATIM)
endif()
