#include "assignments/grading/pack.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/error.h"
#include "autograd/format.h"
#include "autograd/text.h"
#include "assignments/grading/run.h"
#include "assignments/kit/exercise.h"
#include "assignments/kit/spec.h"
#include "data/resources.h"

namespace grading {

namespace fs = std::filesystem;

namespace {

// What a build of the `autograd` program reads: CMakeLists.txt adds each of these folders.
const std::vector<std::string> kSourceEntries = {"CMakeLists.txt", "README.md", "assignments", "autograd", "bench",
                                                 "check", "cli", "cmake", "data", "docs", "examples", "nn",
                                                 "notebooks", "ops", "page", "site", "tests", "train"};
// The instructors' alone: never in a pack (the project builds without them, assignments/README.md).
const std::vector<std::string> kInstructorsOnly = {"assignments/solutions", "notebooks/answers"};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw ag::DataError("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool executable(const fs::path& p) {
  std::error_code ec;
  return (fs::status(p, ec).permissions() & fs::perms::owner_exec) != fs::perms::none;
}

// A folder the walk leaves out: hidden ones (.git), node_modules, a build tree (it holds a
// CMakeCache.txt) and the instructors' folders.
bool left_out(const fs::path& dir, const std::string& relative) {
  const std::string name = dir.filename().string();
  std::error_code ec;
  return name.empty() || name[0] == '.' || name == "node_modules" || fs::exists(dir / "CMakeCache.txt", ec) ||
         std::find(kInstructorsOnly.begin(), kInstructorsOnly.end(), relative) != kInstructorsOnly.end();
}

// The source tree's files that a pack carries, as paths relative to the tree, sorted. Links are
// not followed: a pack holds plain files only.
std::vector<std::string> source_files(const fs::path& root) {
  std::vector<std::string> out;
  for (const std::string& top : kSourceEntries) {
    const fs::path start = root / top;
    const fs::file_status st = fs::symlink_status(start);
    if (fs::is_regular_file(st)) out.push_back(top);
    if (!fs::is_directory(st)) continue;
    for (auto it = fs::recursive_directory_iterator(start); it != fs::recursive_directory_iterator(); ++it) {
      const std::string relative = fs::relative(it->path(), root).generic_string();
      const fs::file_status s = it->symlink_status();
      if (fs::is_directory(s) && left_out(it->path(), relative)) it.disable_recursion_pending();
      if (fs::is_regular_file(s) && it->path().filename().string()[0] != '.') out.push_back(relative);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file of the source tree as a pack holds it: an exercise's spec without its hidden cases when
// `visible_only` (the student pack), else as it is.
std::string packed_contents(const fs::path& root, const std::string& relative, bool visible_only) {
  const std::string text = read_all(root / relative);
  const bool spec = relative.rfind("assignments/", 0) == 0 && fs::path(relative).filename() == "exercise.spec";
  return spec && visible_only ? visible_spec(text, relative) : text;
}

std::string key_of(const std::string& line) {
  const std::size_t eq = line.find('=');
  const std::size_t first = line.find_first_not_of(" \t");
  if (eq == std::string::npos || first == std::string::npos || line[first] == '#') return "";
  std::string key = line.substr(first, eq - first);
  key.erase(key.find_last_not_of(" \t") + 1);
  return key;
}

// The K of "hidden = K"; anything else is the spec's error, named as the grader names it.
std::size_t hidden_count(const std::string& value, const std::string& where) {
  std::istringstream in(value);
  long long k = -1;
  std::string rest;
  if (!(in >> k) || k < 0 || (in >> rest)) {
    throw ag::DataError(where + ": expected hidden = a whole number of cases, got '" + value + "'");
  }
  return std::size_t(k);
}

}  // namespace

std::string known_exercise(const std::string& name) {
  const std::string folder = assignments_folder();
  const std::vector<std::string> names = kit::exercise_names(folder);
  if (std::find(names.begin(), names.end(), name) != names.end()) return name;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw ag::DataError("no exercise '" + ag::printable(name) + "' in " + folder + ag::did_you_mean(name, names) +
                      " (the exercises: " + list + ")");
}

std::string visible_spec(const std::string& spec_text, const std::string& where) {
  std::vector<std::string> lines;
  std::istringstream in(spec_text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::size_t hidden = 0, cases = 0;
  for (const std::string& line : lines) {
    if (key_of(line) == "hidden") hidden = hidden_count(line.substr(line.find('=') + 1), where);
    if (key_of(line) == "case") ++cases;
  }
  if (hidden > 0 && hidden >= cases) {
    throw ag::DataError(where + ": every case is hidden (hidden = " + std::to_string(hidden) +
                        "), so a student's self-check would have no case to check; leave one visible");
  }
  std::string out;
  std::size_t seen_cases = 0;
  for (const std::string& line : lines) {
    const std::string key = key_of(line);
    if (key == "hidden") continue;
    if (key == "case" && ++seen_cases > cases - hidden) continue;
    out += line + "\n";
  }
  return out;
}

std::vector<ag::ZipEntry> gradescope_pack(const std::string& exercise) {
  const fs::path root = ag::source_tree();
  const fs::path assignments = assignments_folder();
  const kit::ExerciseSpec spec = kit::load_exercise(assignments.string(), exercise).spec;
  std::vector<ag::ZipEntry> zip;
  for (const char* script : {"setup.sh", "run_autograder"}) {
    zip.push_back({script, read_all(root / "assignments" / "pack" / "gradescope" / script), true});
  }
  zip.push_back({"exercise.txt", exercise + "\n", false});
  // The exercise as this grader knows it ($AUTOGRAD_DATA_DIR's, else the shipped one), and the
  // two files built into every student's program: run_autograder points AUTOGRAD_DATA_DIR here.
  for (const char* kit_file : {"child.h", "child_main.cpp"}) {
    zip.push_back({std::string("course/assignments/kit/") + kit_file, read_all(assignments / "kit" / kit_file), false});
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(spec.folder)) {
    if (fs::is_regular_file(e.symlink_status())) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    zip.push_back({"course/assignments/" + exercise + "/" + f.filename().string(), read_all(f), false});
  }
  for (const std::string& relative : source_files(root)) {
    zip.push_back({"autograd/" + relative, packed_contents(root, relative, false), executable(root / relative)});
  }
  return zip;
}

std::size_t write_student_pack(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec))) {
    throw ag::DataError(dir + " already exists; the student pack goes into a new folder");
  }
  const fs::path root = ag::source_tree();
  const std::vector<std::string> files = source_files(root);
  // Written into a temporary folder beside it, renamed into place when complete: never half a pack.
  const fs::path target = fs::absolute(dir);
  std::string tmpl = (target.parent_path() / (target.filename().string() + ".tmp-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw ag::DataError("cannot create a folder beside " + dir + " (" + std::strerror(errno) + ")");
  const fs::path tmp = tmpl;
  try {
    for (const std::string& relative : files) {
      const fs::path to = tmp / relative;
      fs::create_directories(to.parent_path());
      std::ofstream out(to, std::ios::binary);
      out << packed_contents(root, relative, true);
      if (!out.flush()) throw ag::DataError("cannot write " + to.string());
      if (executable(root / relative)) fs::permissions(to, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
    }
    fs::permissions(tmp, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
    if (::rename(tmp.c_str(), target.c_str()) != 0) throw ag::DataError("cannot rename the pack to " + dir + " (" + std::strerror(errno) + ")");
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return files.size();
}

}  // namespace grading
