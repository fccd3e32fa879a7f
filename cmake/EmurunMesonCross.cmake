# Writes the Meson cross files for one arch from cmake/meson/<arch>.ini (run with cmake -P):
#   emurun-<arch>           Debian's cross compilers, exe_wrapper = emurun exec --arch A --
#   emurun-<arch>-sysroot   the same against a sysroot: the constant emurun_sysroot, set by an
#                           earlier cross file (emurun-sysroot fetch writes DIR/emurun-sysroot.ini),
#                           goes to the compilers (--sysroot), pkg-config (sys_root,
#                           pkg_config_libdir over its multiarch dirs) and the exe_wrapper.
# -DINPUT=<arch>.ini -DOUTPUT_DIR=dir -DEMURUN=/abs/path/to/emurun
get_filename_component(_arch "${INPUT}" NAME_WE)
file(READ "${INPUT}" _text)
string(REPLACE "@EMURUN_EXECUTABLE@" "${EMURUN}" _plain "${_text}")
# Meson before 1.3 knows pkg-config only as 'pkgconfig', later ones as 'pkg-config': give both.
string(REGEX REPLACE "\npkg-config = ('[^']*')" "\npkg-config = \\1\npkgconfig = \\1" _plain "${_plain}")
file(MAKE_DIRECTORY "${OUTPUT_DIR}")
file(WRITE "${OUTPUT_DIR}/emurun-${_arch}" "${_plain}")

string(REGEX MATCH "c = '([^']*)-gcc'" _m "${_text}")
set(_triplet "${CMAKE_MATCH_1}")
string(REGEX MATCH "'--arch', '([^']*)'" _m "${_text}")
set(_emu_arch "${CMAKE_MATCH_1}")
if(NOT _triplet OR NOT _emu_arch)
  message(FATAL_ERROR "${INPUT}: no 'c = <triplet>-gcc' or no exe_wrapper --arch")
endif()
set(_sr "${_plain}")
string(REPLACE "# Meson cross file:" "# Meson cross file (against a sysroot: give DIR/emurun-sysroot.ini first):" _sr "${_sr}")
string(REGEX REPLACE "\npkg-config = '[^']*'\npkgconfig = '[^']*'" "\npkg-config = 'pkg-config'\npkgconfig = 'pkg-config'" _sr "${_sr}")
string(REGEX REPLACE "exe_wrapper = \\[[^]]*\\]"
  "exe_wrapper = ['${EMURUN}', 'exec', '--arch', '${_emu_arch}', '--sysroot', emurun_sysroot, '--']"
  _sr "${_sr}")
string(APPEND _sr "
[properties]
sys_root = emurun_sysroot
pkg_config_libdir = [emurun_sysroot / 'usr/lib/${_triplet}/pkgconfig', emurun_sysroot / 'usr/lib/pkgconfig', emurun_sysroot / 'usr/share/pkgconfig']

[built-in options]
c_args = ['--sysroot=' + emurun_sysroot]
c_link_args = ['--sysroot=' + emurun_sysroot]
cpp_args = ['--sysroot=' + emurun_sysroot]
cpp_link_args = ['--sysroot=' + emurun_sysroot]
")
file(WRITE "${OUTPUT_DIR}/emurun-${_arch}-sysroot" "${_sr}")
