// doctor's private parts shared between its files.
#pragma once

#include <emurun/doctor.hpp>

namespace emurun::detail {

/// One line per registered entry that handles an arch of emurun's table (by name or magic):
/// conflicts with what emurun would register, missing interpreters, disabled entries, C/O.
void judge_binfmt_entries(const DoctorFacts& facts, std::vector<DoctorCheck>& out);

/// Where no sandbox can exist (kernel < 6.7, or the probe failed): one line saying which arches
/// emulation "auto" runs through the host's sane handlers, or a WARN naming the fixes when none.
void judge_auto_fallback(const DoctorFacts& facts, std::vector<DoctorCheck>& out);

} // namespace emurun::detail
