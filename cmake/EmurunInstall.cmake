# install() + install(EXPORT): find_package(emurun CONFIG) and pkg-config for consumers.
include(CMakePackageConfigHelpers)
set(EMURUN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/emurun)

install(TARGETS emurun EXPORT emurunTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/emurun DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/emurun/export.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/emurun)
install(FILES ${PROJECT_SOURCE_DIR}/binfmt/arches.json DESTINATION ${CMAKE_INSTALL_DATADIR}/emurun)
if(TARGET emurun_cli)
  install(TARGETS emurun_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The shim launcher: found from the emurun binary as ../libexec/emurun/emurun-shim.
install(TARGETS emurun_shim_launcher RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/emurun)

install(EXPORT emurunTargets NAMESPACE emurun:: DESTINATION ${EMURUN_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/emurunConfig.cmake.in
  ${PROJECT_BINARY_DIR}/emurunConfig.cmake INSTALL_DESTINATION ${EMURUN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/emurunConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/emurunConfig.cmake ${PROJECT_BINARY_DIR}/emurunConfigVersion.cmake
        DESTINATION ${EMURUN_CMAKE_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cmake/toolchains DESTINATION ${EMURUN_CMAKE_DIR}
        OPTIONAL)
# Shims and sysroots for cross builds: emurun_add_shim(), the sysroot fetcher, Meson cross files.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/EmurunShim.cmake DESTINATION ${EMURUN_CMAKE_DIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/emurun-sysroot DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cmake/meson DESTINATION ${CMAKE_INSTALL_DATADIR}/emurun)

if(NOT BUILD_SHARED_LIBS)
  set(EMURUN_PC_CFLAGS " -DEMURUN_STATIC_DEFINE")
endif()
# Relocatable: the .pc file finds the prefix from its own location (cmake --install --prefix).
file(RELATIVE_PATH EMURUN_PC_PREFIX_REL "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(${PROJECT_SOURCE_DIR}/cmake/emurun.pc.in ${PROJECT_BINARY_DIR}/emurun.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/emurun.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
