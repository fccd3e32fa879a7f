// The core's public headers (arch, elf, qemu, sysroot, launch, process, binfmt, sandbox, shim,
// and util's error and diagnostics) compile without nlohmann/json: a consumer that does not
// use JSON does not need it, and the JSON library's version is no part of the core's ABI. JSON
// crosses the core's API only as text (binfmt_status_json, shim_list_json, inspection_json).
#include <emurun/arch.hpp>
#include <emurun/binfmt.hpp>
#include <emurun/binfmt_files.hpp>
#include <emurun/diagnostics.hpp>
#include <emurun/elf.hpp>
#include <emurun/error.hpp>
#include <emurun/launch.hpp>
#include <emurun/process.hpp>
#include <emurun/qemu.hpp>
#include <emurun/sandbox.hpp>
#include <emurun/shim.hpp>
#include <emurun/sysroot.hpp>

#if defined(INCLUDE_NLOHMANN_JSON_FWD_HPP_) || defined(INCLUDE_NLOHMANN_JSON_HPP_)
#error "a core header of emurun includes nlohmann/json"
#endif
