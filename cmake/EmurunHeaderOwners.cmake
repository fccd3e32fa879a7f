# Which module owns each public header include/emurun/<name>.hpp: the module of its name, except
# the ones listed here (ARCHITECTURE.md says the same). One table for both users: the per-module
# include trees of lib/CMakeLists.txt (a module's compiler sees the public headers of its USES
# closure only) and the include check, cmake/EmurunCheckLayers.cmake.
#   emurun_header_module(NAME OUT): OUT = the module owning include/emurun/NAME.hpp
set(_emurun_header_module_error util)
set(_emurun_header_module_export util) # generated (GenerateExportHeader); every module sees it
set(_emurun_header_module_json util)
set(_emurun_header_module_diagnostics util)
set(_emurun_header_module_elf arch)
set(_emurun_header_module_calibrate runner)
set(_emurun_header_module_artifacts runner)
set(_emurun_header_module_binfmt_files binfmt)

function(emurun_header_module header out)
  if(DEFINED _emurun_header_module_${header})
    set(${out} ${_emurun_header_module_${header}} PARENT_SCOPE)
  else()
    set(${out} ${header} PARENT_SCOPE)
  endif()
endfunction()
