// doctor's private parts shared between its files.
#pragma once

#include <emurun/doctor.hpp>

namespace emurun::detail {

/// One line per registered entry that handles an arch of emurun's table (by name or magic):
/// conflicts with what emurun would register, missing interpreters, disabled entries, C/O.
void judge_binfmt_entries(const DoctorFacts& facts, std::vector<DoctorCheck>& out);

} // namespace emurun::detail
