// autograd grade --pack gradescope --exercise NAME --out FILE.zip, and --student-pack DIR:
// what an instructor uploads to Gradescope and what students get (assignments/grading/pack.h).
#pragma once

#include <string>

namespace cli {

struct PackArgs {
  std::string pack, exercise, out, student_pack;
  bool grading_asked = false;  // FILE or --class was given too
};

// Writes the pack asked for; throws UsageError for options that do not go together.
int write_pack(const PackArgs& a);

}  // namespace cli
