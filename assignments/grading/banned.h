// The policy of backward and JVP exercises: no complex numbers and no floating
// type wider than double in the student's file. A complex-step "derivative",
// Im f(x + ih) / h with h = 1e-20, is exact to rounding, so no tolerance can
// tell it from a derived one; wider floats make finite differences exact enough
// to pass. Both answer without deriving anything (docs/grading.md).
//
// The file is read as the compiler reads it: lines joined at a backslash,
// comments, string and character literals (raw ones too) set aside, then each
// identifier and number looked at. Token pasting (## and %:%:) and #line are
// refused too, since they would build or hide a name this reading cannot see.
#pragma once

#include <string>

namespace grading {

// "" when `source` uses none of them, else what it uses and where: "uses std::complex (line 12)".
std::string banned_use(const std::string& source);

}  // namespace grading
