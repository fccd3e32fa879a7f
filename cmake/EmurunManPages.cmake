# Man pages, generated from their one source, the reference pages docs/reference/NAME.adoc
# (AsciiDoc, rendered by GitHub as they are): asciidoctor's manpage backend writes
# man/NAME.1 with the version filled in, then gzip -9n (no name or time stamp: reproducible, as
# Debian policy asks) for installation to man1. integration.man_completion checks the pages
# against the CLI and renders them with man --warnings.
find_program(EMURUN_ASCIIDOCTOR asciidoctor)
if(NOT EMURUN_ASCIIDOCTOR)
  message(FATAL_ERROR "asciidoctor not found: the man pages are generated from docs/reference/*.adoc "
                      "(apt-get install asciidoctor, or tools/install-deps --build)")
endif()
find_program(EMURUN_GZIP gzip REQUIRED)
set(_emurun_man_outputs "")
foreach(_name emurun emurun-sysroot)
  set(_src ${PROJECT_SOURCE_DIR}/docs/reference/${_name}.adoc)
  set(_page ${PROJECT_BINARY_DIR}/man/${_name}.1)
  add_custom_command(
    OUTPUT ${_page}
    COMMAND ${EMURUN_ASCIIDOCTOR} --failure-level=WARN -b manpage
            "-a" "mansource=emurun ${PROJECT_VERSION}"
            -a "manmanual=User Commands" -o ${_page} ${_src}
    DEPENDS ${_src}
    COMMENT "Generating man page ${_name}.1 from docs/reference/${_name}.adoc" VERBATIM)
  add_custom_command(
    OUTPUT ${_page}.gz
    COMMAND ${EMURUN_GZIP} -9nkf ${_page}
    DEPENDS ${_page}
    COMMENT "Compressing man page ${_name}.1" VERBATIM)
  list(APPEND _emurun_man_outputs ${_page}.gz)
endforeach()
add_custom_target(emurun_man_pages ALL DEPENDS ${_emurun_man_outputs})
install(FILES ${_emurun_man_outputs} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
