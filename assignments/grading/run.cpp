#include "assignments/grading/run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "autograd/error.h"
#include "assignments/grading/banned.h"
#include "assignments/grading/environment.h"
#include "assignments/grading/text.h"
#include "data/resources.h"

namespace grading {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxSubmissionBytes = 1 << 20;

// BUILD/assignments/grade_toolchain.txt, or PREFIX/share/autograd/assignments/ when installed.
fs::path toolchain_path() {
  const std::string prefix = ag::installed_prefix();
  if (!prefix.empty()) return ag::shipped_file("assignments/grade_toolchain.txt");
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path build = ec ? fs::current_path() : self.parent_path().parent_path();  // BUILD/cli/autograd -> BUILD
  return build / "assignments" / "grade_toolchain.txt";
}

std::vector<std::string> split(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

void read_toolchain(GradeSetup& s) {
  const fs::path path = toolchain_path();
  std::ifstream in(path);
  if (!in) {
    throw ag::DataError("cannot read " + path.string() +
                     ": configure and build the project first (cmake --build BUILD), or install it (cmake --install BUILD)");
  }
  std::map<std::string, std::string> kv;
  for (std::string line; std::getline(in, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  s.compiler = kv["compiler"];
  s.compile_flags = split(kv["compile_flags"]);
  s.libraries = split(kv["libraries"]);
  // The compiler's and the libraries' folders, when they live outside /usr, are made visible.
  std::vector<std::string> paths = s.libraries;
  paths.push_back(s.compiler);
  for (const std::string& f : s.compile_flags) paths.push_back(f.rfind("-I", 0) == 0 ? f.substr(2) : "");
  for (const std::string& p : paths) {
    if (p.empty() || p[0] != '/' || p.rfind("/usr/", 0) == 0) continue;
    s.visible.push_back(fs::is_directory(p) ? p : fs::path(p).parent_path().string());
  }
  // Armadillo precompiled by the build (assignments/CMakeLists.txt), in a folder
  // of its own made visible (read-only) to the compiles. Used only when its .gch
  // is there and was built with these very flags: GCC 12 may crash on a .gch
  // built at another -O level instead of setting it aside.
  const std::string header = kv["precompiled_header"];
  std::error_code ec;
  if (!header.empty() && header[0] == '/' && kv["precompiled_header_flags"] == kv["compile_flags"] &&
      fs::is_regular_file(header + ".gch", ec)) {
    s.compile_flags.insert(s.compile_flags.end(), {"-include", header});
    s.precompiled = fs::path(header).parent_path().string();
  }
}

std::vector<std::string> compile_visible(const GradeSetup& s) {
  std::vector<std::string> v = s.visible;
  if (!s.precompiled.empty()) v.push_back(s.precompiled);
  return v;
}

void copy_into(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// The folder's view of the exercise: its public header where the stub includes it.
void add_public_header(const GradeSetup& s, const fs::path& folder) {
  const kit::ExerciseSpec& spec = s.exercise.spec;
  copy_into(fs::path(spec.folder) / spec.header, folder / "include" / "assignments" / spec.name / spec.header);
}

std::vector<std::string> compile_command(const GradeSetup& s, std::vector<std::string> sources, bool link) {
  std::vector<std::string> cmd = {s.compiler};
  cmd.insert(cmd.end(), s.compile_flags.begin(), s.compile_flags.end());
  cmd.push_back("-Iinclude");
  if (!link) cmd.push_back("-c");
  cmd.insert(cmd.end(), sources.begin(), sources.end());
  if (link) {
    cmd.insert(cmd.end(), s.libraries.begin(), s.libraries.end());
    cmd.insert(cmd.end(), {"-o", "child"});
  }
  return cmd;
}

// A copy of the submission into the folder, or the reason it is refused. The
// file is opened before it is looked at (no race), never followed when it is a
// link (refuse_links), and never waited on (a FIFO is refused, not read).
std::string take_submission(const fs::path& file, const fs::path& to, bool refuse_links) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (refuse_links ? O_NOFOLLOW : 0));
  if (fd < 0) {
    return errno == ELOOP ? "is a symbolic link (submissions must be plain files)"
                          : std::string("cannot be read (") + std::strerror(errno) + ")";
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) why = "cannot be read";
  else if (!S_ISREG(st.st_mode)) why = S_ISDIR(st.st_mode) ? "is a folder, not a file" : "is not a regular file (a FIFO, socket or device)";
  else if (std::uintmax_t(st.st_size) > kMaxSubmissionBytes) why = "is larger than 1 MiB";
  std::string text;
  char buffer[65536];
  for (ssize_t n; why.empty() && (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0) why = std::string("cannot be read (") + std::strerror(errno) + ")";
    else text.append(buffer, std::size_t(n));
    if (text.size() > kMaxSubmissionBytes) why = "is larger than 1 MiB";
  }
  ::close(fd);
  if (!why.empty()) return why;
  std::ofstream out(to, std::ios::binary);
  out << text;
  return out ? "" : "cannot be copied into the grading folder";
}

// The report's texts that carry the child's bytes (what it threw, where its answer broke), made safe to show.
void make_text(kit::GradeReport& report) {
  report.failure = as_text(report.failure, false);
  for (kit::GradeRow& row : report.rows) {
    row.note = as_text(row.note, false);
    row.diagnosis.hint = as_text(row.diagnosis.hint, false);
  }
}

// The exercise's policy on complex numbers and wider floats (banned.h): "" or the refusal.
std::string banned_in(const GradeSetup& s, const fs::path& copy) {
  if (!s.exercise.spec.banned) return "";
  std::ifstream in(copy, std::ios::binary);
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string use = banned_use(source);
  if (use.empty()) return "";
  return "the submission " + use + ": a " + s.exercise.spec.kind + " exercise bans complex numbers, imaginary literals, "
         "token pasting and floats wider than double, because a complex-step derivative is exact and no tolerance "
         "tells it from a derived one (docs/grading.md, \"Banned constructs\")";
}

std::string status_of(const RunResult& r, const kit::ParsedAnswers& p) {
  if (p.complete) return "graded";
  if (r.timed_out) return "timed out";
  if (r.output_overflow || !p.error.empty()) return "malformed answer";
  if (r.signal != 0 || r.exit_status > 128) return "crashed";
  return "exited early";
}

}  // namespace

// Builds the adapter and the protocol's main once per run, in the sandbox like the submissions.
void build_harness(GradeSetup& s, const std::string& exercise);

std::string assignments_folder() { return ag::shipped_file("assignments"); }

std::string exercise_of(const fs::path& file, const std::string& option) {
  std::string name = option;
  if (name.empty()) {
    std::ifstream in(file);
    for (std::string line; name.empty() && std::getline(in, line);) {
      if (line.rfind("// exercise:", 0) == 0) std::istringstream(line.substr(12)) >> name;
    }
  }
  if (name.empty()) name = fs::absolute(file).parent_path().filename().string();
  const std::vector<std::string> names = kit::exercise_names(assignments_folder());
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : "|") + n;
    throw ag::DataError("cannot tell which exercise " + file.string() + " is for ('" + name + "'); pass --exercise " + list);
  }
  return name;
}

GradeSetup prepare_grading(const std::string& exercise, const std::string& sandbox, double run_seconds,
                           double compile_seconds) {
  GradeSetup s;
  read_toolchain(s);
  s.assignments = assignments_folder();
  s.exercise = kit::load_exercise(s.assignments, exercise);
  s.isolation = choose_isolation(sandbox);
  set_limits(s, run_seconds, compile_seconds);
  std::string tmpl = (fs::temp_directory_path() / ("autograd-grade-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw GraderError("cannot create a temporary folder in " + fs::temp_directory_path().string() + " (" +
                      std::strerror(errno) + ")");
  }
  s.root = tmpl;
  register_folder(s.root);
  // A submission's own user must pass through to its folder, but not list the others'.
  if (s.isolation == Isolation::User) ::chmod(s.root.c_str(), 0711);
  try {
    check_environment(s);
    probe_sandbox(s);
    build_harness(s, exercise);
  } catch (...) {
    RemoveOnExit remove{s.root};
    throw;
  }
  return s;
}

void build_harness(GradeSetup& s, const std::string& exercise) {
  s.harness = s.root / "harness";
  add_public_header(s, s.harness);
  const fs::path kit = fs::path(s.assignments) / "kit";
  copy_into(kit / "child.h", s.harness / "include" / "assignments" / "kit" / "child.h");
  copy_into(kit / "child_main.cpp", s.harness / "child_main.cpp");
  copy_into(fs::path(s.exercise.spec.folder) / "adapter.cpp", s.harness / "adapter.cpp");
  const RunResult r = run_limited(compile_command(s, {"child_main.cpp", "adapter.cpp"}, false), s.harness,
                                  compile_visible(s), s.compile_limits, s.isolation, "");
  if (!r.exited_ok()) {
    throw GraderError("cannot build the grading harness of '" + exercise + "' (the compiler " +
                      r.describe(s.compile_limits) + "): " + as_text(r.err.substr(0, 2000), false));
  }
}

RemoveOnExit::~RemoveOnExit() {
  std::error_code ec;
  fs::remove_all(folder, ec);
  unregister_folder(folder);
}

Outcome refused_outcome(const GradeSetup& s, unsigned seed, const std::string& reason) {
  Outcome o;
  o.status = "refused";
  o.reason = as_text(reason, false);
  o.report = kit::score(s.exercise, seed, kit::draw_cases(s.exercise, seed), kit::ParsedAnswers{}, o.reason);
  return o;
}

Outcome grade_submission(const GradeSetup& s, const fs::path& file, unsigned seed, std::size_t index,
                         bool refuse_links) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<kit::DrawnCase> cases = kit::draw_cases(s.exercise, seed);
  const fs::path folder = s.root / ("sub-" + std::to_string(index));
  fs::create_directories(folder);
  Limits compile_limits = s.compile_limits, run_limits = s.run_limits;
  // The folder is the submission's own before its copy goes in: no classmate's program may read it meanwhile.
  const std::string not_given = s.isolation == Isolation::User
                                    ? give_folder(folder, compile_limits.run_as = run_limits.run_as = private_uid(index))
                                    : "";
  Outcome o;
  auto fail = [&](const std::string& status, const std::string& reason) {
    o.status = status;
    o.reason = reason;
    o.report = kit::score(s.exercise, seed, cases, kit::ParsedAnswers{}, reason);
    make_text(o.report);
    o.reason = as_text(reason, false);
    std::error_code ec;
    fs::remove_all(folder, ec);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return o;
  };
  if (!not_given.empty()) return fail("refused", "the grader " + not_given + ", so it did not grade the submission");
  if (const std::string refused = take_submission(file, folder / "submission.cpp", refuse_links); !refused.empty()) {
    return fail("refused", "the submission " + refused);
  }
  if (const std::string why = banned_in(s, folder / "submission.cpp"); !why.empty()) return fail("refused", why);
  add_public_header(s, folder);
  for (const char* obj : {"child_main.o", "adapter.o"}) copy_into(s.harness / obj, folder / obj);
  const RunResult build = run_limited(compile_command(s, {"submission.cpp", "child_main.o", "adapter.o"}, true), folder,
                                      compile_visible(s), compile_limits, s.isolation, "");
  o.compiler_output = cut_as_text(build.out + build.err, 20000);
  if (!build.exited_ok()) {
    return fail("does not compile", build.timed_out ? "the compile " + build.describe(compile_limits)
                                                    : "does not compile (the compiler " + build.describe(compile_limits) + ")");
  }
  std::vector<std::vector<arma::mat>> sent;
  for (const kit::DrawnCase& c : cases) sent.push_back(c.sent);
  const RunResult run = run_limited({(folder / "child").string()}, folder, s.visible, run_limits, s.isolation,
                                    kit::encode_cases(sent));
  const kit::ParsedAnswers answers = kit::parse_answers(run.out, cases.size(), s.exercise.spec.inputs.size());
  o.status = status_of(run, answers);
  o.program_output = cut_as_text(run.err, 4000);
  const std::string failure = answers.complete ? "" : "it " + run.describe(s.run_limits) + " before answering every case";
  o.report = kit::score(s.exercise, seed, cases, answers, run.output_overflow ? "it " + run.describe(s.run_limits) : failure);
  make_text(o.report);
  o.reason = o.status == "graded" ? "" : o.report.failure;
  if (!run.limit_hit.empty()) o.limit_hit = "it " + run.limit_hit;
  std::error_code ec;
  fs::remove_all(folder, ec);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

}  // namespace grading
