// The packs of `autograd grade`: options checked here, the files chosen in assignments/grading/pack.cpp.
#include <iostream>

#include "autograd/format.h"
#include "cli/cli.h"
#include "cli/grade_pack.h"
#include "assignments/grading/pack.h"
#include "data/zip_write.h"

namespace cli {

int write_pack(const PackArgs& a) {
  if (a.grading_asked) throw UsageError("--pack and --student-pack write a pack; give no FILE or --class with them");
  if (!a.student_pack.empty()) {
    if (!a.pack.empty() || !a.out.empty() || !a.exercise.empty()) {
      throw UsageError("--student-pack DIR goes alone: it writes every exercise (no --pack, --out or --exercise)");
    }
    const std::size_t files = grading::write_student_pack(a.student_pack);
    std::cout << "the student pack: " << files << " files in " << ag::printable(a.student_pack)
              << " (no solutions, no lesson answers, no hidden cases)\n";
    return 0;
  }
  if (a.pack != "gradescope") throw UsageError("--pack must be gradescope, got '" + a.pack + "'");
  if (a.exercise.empty()) throw UsageError("--pack gradescope needs --exercise NAME");
  if (a.out.empty()) throw UsageError("--pack gradescope needs --out FILE.zip");
  const std::string exercise = grading::known_exercise(a.exercise);
  const std::vector<ag::ZipEntry> entries = grading::gradescope_pack(exercise);
  ag::write_zip(a.out, entries);
  std::cout << "the Gradescope autograder for '" << exercise << "': " << ag::printable(a.out) << " (" << entries.size()
            << " files; upload it as the assignment's autograder, docs/grading.md \"Packs\")\n";
  return 0;
}

}  // namespace cli
