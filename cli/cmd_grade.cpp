// autograd grade FILE.cpp: build a student's assignment file against its
// exercise's grader and run it, printing the score table with hints.
//
// The compiler and libraries are the ones CMake recorded in
// BUILD/assignments/grade_toolchain.txt, so the student's file is built exactly
// like the CTest graders of the reference solutions.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "data/resources.h"
#include "train/shell_quote.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kExercises = {"softmax", "layernorm", "rmsnorm", "matmul_bias"};

using ag::shell_quote;

// A grade killed before it cleaned up leaves TMP/autograd-grade-PID-XXXXXX; the
// next grade removes the folders of this user whose process no longer runs.
void remove_folders_of_dead_grades() {
  const std::string prefix = "autograd-grade-";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.find_first_not_of("0123456789") != dash) continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) continue;
    const long pid = std::stol(rest.substr(0, dash));
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

// Where CMake recorded the toolchain: PREFIX/share/autograd/assignments/ for an
// installed program (paths written as ${prefix}), else BUILD/assignments/.
fs::path toolchain_path() {
  const std::string prefix = ag::installed_prefix();
  if (!prefix.empty()) return fs::path(ag::shipped_file("assignments")) / "grade_toolchain.txt";
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path build = ec ? fs::current_path() : self.parent_path().parent_path();  // BUILD/cli/autograd -> BUILD
  return build / "assignments" / "grade_toolchain.txt";
}

std::string with_prefix(std::string value, const std::string& prefix) {
  const std::string mark = "${prefix}";
  for (std::size_t at = value.find(mark); at != std::string::npos; at = value.find(mark, at + prefix.size())) {
    value.replace(at, mark.size(), prefix);
  }
  return value;
}

std::map<std::string, std::string> read_toolchain(const fs::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw UsageError("cannot read " + path.string() +
                     ": configure and build the project first (cmake --build BUILD), or install it (cmake --install BUILD)");
  }
  const std::string prefix = ag::installed_prefix();
  std::map<std::string, std::string> kv;
  for (std::string line; std::getline(in, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = with_prefix(line.substr(eq + 1), shell_quote(prefix));
  }
  return kv;
}

// The exercise a file is for: --exercise, else its "// exercise: NAME" line, else its folder.
std::string exercise_of(const fs::path& file, const std::string& option) {
  std::string name = option;
  if (name.empty()) {
    std::ifstream in(file);
    for (std::string line; name.empty() && std::getline(in, line);) {
      if (line.rfind("// exercise:", 0) == 0) {
        std::istringstream words(line.substr(12));
        words >> name;
      }
    }
  }
  if (name.empty()) name = fs::absolute(file).parent_path().filename().string();
  if (std::find(kExercises.begin(), kExercises.end(), name) == kExercises.end()) {
    throw UsageError("cannot tell which exercise " + file.string() + " is for ('" + name +
                     "'); pass --exercise softmax|layernorm|rmsnorm|matmul_bias");
  }
  return name;
}

// Runs a shell command; returns its exit status and (merged) output.
int run(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run: " + command);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

int cmd_grade(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string file, exercise;
  bool keep = false;
  options.add_options()
      ("file", po::value(&file), "the student's .cpp file (e.g. assignments/softmax/softmax.cpp)")
      ("exercise", po::value(&exercise), "softmax, layernorm, rmsnorm or matmul_bias (default: from the file)")
      ("keep", po::bool_switch(&keep), "keep the build folder and print where it is");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  if (!parse_options("grade", "autograd grade FILE.cpp\nBuilds FILE.cpp against its exercise's grader, "
                     "runs it, and prints a score table with a hint for each wrong gradient.\n"
                     "Exit status: 0 full marks, 1 not full marks or the file does not compile.",
                     options, args, vm, &positional)) {
    return 0;
  }
  if (file.empty()) throw UsageError("which file? autograd grade FILE.cpp");
  if (!fs::is_regular_file(file)) throw UsageError("no such file: " + file);
  const std::string name = exercise_of(file, exercise);
  std::map<std::string, std::string> tc = read_toolchain(toolchain_path());

  remove_folders_of_dead_grades();
  std::string tmpl = (fs::temp_directory_path() / ("autograd-grade-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a temporary folder");
  const fs::path work(tmpl);
  const std::string program = (work / ("grade_" + name)).string();
  const std::string build = tc["compiler"] + " " + tc["compile_flags"] + " " + shell_quote(fs::absolute(file).string()) +
                            " " + tc["main_" + name] + " " + tc["libraries"] + " -o " + shell_quote(program);
  std::cout << "building " << file << " for the '" << name << "' exercise ...\n" << std::flush;
  std::string compiler_output;
  if (run(build, compiler_output) != 0) {
    std::cout << compiler_output << "\n" << file << " does not compile (the compiler's messages are above).\n"
              << "score: 0 (it must build to be graded)\n";
    if (!keep) fs::remove_all(work);
    return 1;
  }
  if (!compiler_output.empty()) std::cout << compiler_output;  // warnings
  std::cout << "\n" << std::flush;
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  std::string report;
  const int status = run(shell_quote(program), report);
  std::cout << report;
  if (status > 1) {
    std::cout << "the grading program stopped abnormally (status " << status
              << "): your code crashed or ran forever; score: 0\n";
  }
  if (keep) {
    std::cout << "build folder kept: " << work.string() << "\n";
  } else {
    fs::remove_all(work);
  }
  return status == 0 ? 0 : 1;
}

}  // namespace cli
