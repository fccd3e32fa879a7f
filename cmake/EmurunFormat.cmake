# `format-check` fails when a tracked C/C++ file differs from .clang-format; `format` rewrites.
find_program(CLANG_FORMAT_EXE NAMES clang-format clang-format-14)
if(CLANG_FORMAT_EXE)
  file(GLOB_RECURSE _emurun_fmt_sources CONFIGURE_DEPENDS
       ${CMAKE_CURRENT_SOURCE_DIR}/lib/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/lib/*.hpp
       ${CMAKE_CURRENT_SOURCE_DIR}/lib/*.c ${CMAKE_CURRENT_SOURCE_DIR}/lib/*.h
       ${CMAKE_CURRENT_SOURCE_DIR}/include/*.hpp
       ${CMAKE_CURRENT_SOURCE_DIR}/tools/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/tools/*.hpp
       ${CMAKE_CURRENT_SOURCE_DIR}/tools/*.c ${CMAKE_CURRENT_SOURCE_DIR}/tools/*.h
       ${CMAKE_CURRENT_SOURCE_DIR}/tests/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/tests/*.hpp
       ${CMAKE_CURRENT_SOURCE_DIR}/tests/*.c)
  add_custom_target(format-check
    COMMAND ${CLANG_FORMAT_EXE} --dry-run --Werror ${_emurun_fmt_sources}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} COMMENT "Checking formatting" VERBATIM)
  add_custom_target(format
    COMMAND ${CLANG_FORMAT_EXE} -i ${_emurun_fmt_sources}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} COMMENT "Formatting" VERBATIM)
endif()
