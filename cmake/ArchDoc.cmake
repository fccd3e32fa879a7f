# cmake -DINPUT=binfmt/arches.json -DOUTPUT=arches.md -P ArchDoc.cmake
# Writes docs/reference/arches.md, the table of architectures, from the one source of the arch
# table (binfmt/arches.json, which cmake/ArchTable.cmake compiles into emurun). The build writes
# it into its tree (cmake/EmurunDocs.cmake); integration.docs.generated fails when the copy in
# docs/ differs.
cmake_minimum_required(VERSION 3.25)
file(READ ${INPUT} _json)
include(${CMAKE_CURRENT_LIST_DIR}/ArchJson.cmake)
string(JSON _n LENGTH "${_json}" arches)
math(EXPR _last "${_n} - 1")
set(_doc "<!-- Generated from binfmt/arches.json by cmake/ArchDoc.cmake: edit the JSON, not this \
page. The build writes it into its tree (docs/reference/); integration.docs.generated fails \
when this copy differs. -->\n# Architectures\n\n")
string(APPEND _doc "emurun knows ${_n} architectures. The table in `binfmt/arches.json` is the \
single source of truth: turned into a C++ table at build time (`cmake/ArchTable.cmake`; nothing \
is read or parsed at run time), into this page, and installed as `share/emurun/arches.json`. \
Magic and mask are upstream QEMU's `qemu-binfmt-conf.sh` verbatim (the file's `source` field \
names the revision). Names are accepted case-insensitively, canonical or alias; `\${arch}`, \
`\${triplet}` and `\${debian_arch}` in a pipeline are the first, fourth and fifth columns.\n\n")
string(APPEND _doc "| arch | aliases | ELF | GNU triplet | Debian | qemu |\n|---|---|---|---|---|---|\n")
foreach(_i RANGE ${_last})
  string(JSON _name GET "${_json}" arches ${_i} name)
  string(JSON _class GET "${_json}" arches ${_i} elf_class)
  string(JSON _data GET "${_json}" arches ${_i} elf_data)
  string(JSON _qemu GET "${_json}" arches ${_i} qemu)
  foreach(_f triplet debian)
    string(JSON _${_f} ERROR_VARIABLE _err GET "${_json}" arches ${_i} ${_f})
    if(_err)
      set(_${_f} "")
    endif()
  endforeach()
  _alias_list(_aliases ${_i})
  list(JOIN _aliases ", " _aliases)
  string(APPEND _doc "| ${_name} | ${_aliases} | ${_class}-bit ${_data} | ${_triplet} | ${_debian} | qemu-${_qemu} |\n")
endforeach()
string(APPEND _doc "\nTested on every CI run: aarch64, ppc64le, s390x (big-endian), riscv64 and arm \
(gnueabihf), static and dynamic programs, under Debian 12's qemu-user 7.2; emurun's own unit \
tests run on aarch64, ppc64le and s390x in the `dogfood` tier. CMake toolchain files and Meson \
cross files exist for aarch64, ppc64le, s390x, riscv64 and arm-gnueabihf.\n")
file(WRITE ${OUTPUT} "${_doc}")
