# Man pages (tools/man/*.1, roff written by hand): the version filled in, compressed with
# gzip -9n (no name or time stamp: reproducible, as Debian policy asks), installed to man1.
find_program(EMURUN_GZIP gzip REQUIRED)
file(GLOB _emurun_man_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tools/man/*.1)
set(_emurun_man_outputs "")
foreach(_src IN LISTS _emurun_man_sources)
  get_filename_component(_name ${_src} NAME)
  set(EMURUN_VERSION ${PROJECT_VERSION})
  configure_file(${_src} ${PROJECT_BINARY_DIR}/man/${_name} @ONLY)
  add_custom_command(
    OUTPUT ${PROJECT_BINARY_DIR}/man/${_name}.gz
    COMMAND ${EMURUN_GZIP} -9nkf ${PROJECT_BINARY_DIR}/man/${_name}
    DEPENDS ${PROJECT_BINARY_DIR}/man/${_name}
    COMMENT "Compressing man page ${_name}" VERBATIM)
  list(APPEND _emurun_man_outputs ${PROJECT_BINARY_DIR}/man/${_name}.gz)
endforeach()
add_custom_target(emurun_man_pages ALL DEPENDS ${_emurun_man_outputs})
install(FILES ${_emurun_man_outputs} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
