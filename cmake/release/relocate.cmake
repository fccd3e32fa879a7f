# CPACK_PRE_BUILD_SCRIPTS of the release tarball: what the install wrote for the staging prefix,
# which is nowhere once unpacked, is made relative. The Meson cross files are written again by
# the one writer (EmurunMesonCross.cmake) with 'emurun' as the exe_wrapper, found in PATH; the
# pkg-config file's prefix becomes ${pcfiledir}/EMURUN_PC_PREFIX_REL.
file(GLOB_RECURSE _crossdirs LIST_DIRECTORIES true "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/meson/cross")
list(FILTER _crossdirs INCLUDE REGEX "/share/meson/cross$")
if(NOT _crossdirs)
  message(FATAL_ERROR "relocate: no share/meson/cross in ${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
endif()
file(GLOB _inis "${EMURUN_SOURCE_DIR}/cmake/meson/*.ini")
foreach(OUTPUT_DIR IN LISTS _crossdirs)
  foreach(INPUT IN LISTS _inis)
    set(EMURUN emurun)
    include("${EMURUN_SOURCE_DIR}/cmake/EmurunMesonCross.cmake")
  endforeach()
endforeach()

file(GLOB_RECURSE _pcs "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/pkgconfig/emurun.pc")
if(NOT _pcs)
  message(FATAL_ERROR "relocate: no pkgconfig/emurun.pc in ${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
endif()
foreach(_pc IN LISTS _pcs)
  file(READ "${_pc}" _text)
  string(REGEX REPLACE "\nprefix=[^\n]*" "\nprefix=\${pcfiledir}/${EMURUN_PC_PREFIX_REL}" _text "${_text}")
  file(WRITE "${_pc}" "${_text}")
endforeach()
