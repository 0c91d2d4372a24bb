#include "assignments/grading/class_mistakes.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "assignments/grading/csv_log.h"
#include "autograd/format.h"

namespace grading {

namespace {

// "partly correct (4/9)" -> "partly correct": how many elements were right differs by student.
std::string without_count(const std::string& result) {
  const std::size_t open = result.rfind(" (");
  if (open == std::string::npos || result.back() != ')') return result;
  const std::string inside = result.substr(open + 2, result.size() - open - 3);
  const bool count = !inside.empty() && inside.find_first_not_of("0123456789/") == std::string::npos;
  return count ? result.substr(0, open) : result;
}

}  // namespace

std::vector<MistakeCount> count_mistakes(const std::vector<Graded>& graded) {
  std::vector<MistakeCount> counts;
  for (const Graded& g : graded) {
    std::vector<std::string> made = mistake_names(g.outcome);
    if (g.outcome.status != "graded") made = {g.outcome.status};
    for (std::string& m : made) m = without_count(m);
    std::sort(made.begin(), made.end());
    made.erase(std::unique(made.begin(), made.end()), made.end());
    for (const std::string& m : made) {
      auto it = std::find_if(counts.begin(), counts.end(), [&](const MistakeCount& c) { return c.mistake == m; });
      if (it == counts.end()) it = counts.insert(counts.end(), {m, {}});
      it->students.push_back(g.file);
    }
  }
  std::sort(counts.begin(), counts.end(), [](const MistakeCount& a, const MistakeCount& b) {
    return a.students.size() != b.students.size() ? a.students.size() > b.students.size() : a.mistake < b.mistake;
  });
  return counts;
}

std::string mistakes_table(const std::string& exercise, const std::vector<MistakeCount>& counts, std::size_t graded,
                           std::size_t full_marks, std::size_t kept) {
  std::ostringstream os;
  os << "mistakes across the class ('" << exercise << "', " << graded << " submissions, " << full_marks
     << " with full marks" << (kept ? ", " + std::to_string(kept) + " kept from an earlier run not counted" : "")
     << "):\n";
  if (counts.empty()) return os.str() + "  none\n";
  std::size_t width = 7;
  for (const MistakeCount& c : counts) width = std::max(width, c.mistake.size() + 2);
  os << "  " << std::left << std::setw(10) << "students" << std::setw(int(width)) << "mistake" << "who\n";
  for (const MistakeCount& c : counts) {
    os << "  " << std::setw(10) << c.students.size() << std::setw(int(width)) << c.mistake;
    for (std::size_t i = 0; i < c.students.size() && i < 3; ++i) os << (i ? ", " : "") << ag::printable(c.students[i]);
    if (c.students.size() > 3) os << " and " << c.students.size() - 3 << " more";
    os << "\n";
  }
  return os.str();
}

}  // namespace grading
