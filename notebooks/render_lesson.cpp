// Running a lesson's program and writing its pages: the render of one lesson
// replaces the last one's only once all of it has been written.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "autograd/error.h"
#include "data/atomic_write.h"
#include "notebooks/markers.h"
#include "notebooks/render.h"
#include "train/shell_quote.h"

namespace render {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw ag::DataError("cannot read " + path.string());
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

using ag::shell_quote;

struct LessonRun {
  std::string output;  // its stdout
  int status = 0;      // pclose's status
};

// Runs the lesson's program exploring (every cell runs, failed checks are
// printed); returns its stdout and status. Its stderr goes to ours.
LessonRun run_lesson(const fs::path& program, const fs::path& images) {
  if (!fs::exists(program)) {
    throw ag::DataError(program.string() + " does not exist: build the lessons first (cmake --build BUILD)");
  }
  const std::string command = shell_quote(program.string()) + " --out " + shell_quote(images.string()) + " --explore";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw ag::Error("cannot run " + program.string());
  LessonRun run;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.output.append(buffer, n);
  run.status = pclose(pipe);
  return run;
}

// A program that ran every cell and only its checks failed exits 1 after
// printing them; anything else that is not a success stops the render.
void stop_unless_checks_failed(const fs::path& program, const LessonRun& run, std::size_t failed) {
  if (run.status == 0) return;
  if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 1 && failed > 0) return;
  throw ag::Error(program.filename().string() + " failed (" +
                  (WIFEXITED(run.status) ? "exit status " + std::to_string(WEXITSTATUS(run.status))
                                         : "killed by signal " + std::to_string(WTERMSIG(run.status))) +
                  "); its message is above");
}

// One file (or the plots folder) of a lesson's render: written into the work
// folder, then moved to its place in --out.
struct Output {
  fs::path staged, target;
  bool folder;
};

// A rename replaces a file with a file and a folder with a folder (the old one
// moved aside first); anything else standing at a target (a directory where a
// page goes, a link, a FIFO) is refused by name before anything is moved.
void check_replaceable(const Output& o, const std::string& name) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(o.target, ec);
  if (!fs::exists(st) || (o.folder ? fs::is_directory(st) : fs::is_regular_file(st))) return;
  const char* what = fs::is_directory(st) ? "a directory" : fs::is_symlink(st) ? "a symbolic link"
                     : fs::is_regular_file(st) ? "a file" : "a special file (a FIFO, a device or a socket)";
  throw ag::DataError(o.target.string() + " is " + what + ", where the render puts " +
                      (o.folder ? "its plots folder" : "a page") + ": nothing of " + name +
                      " was replaced (move it away or choose another --out)");
}

// Moves the old outputs aside and the new ones in; a rename that fails undoes
// the ones before it, so the lesson's files in --out are all new or all old.
void swap_in(const std::vector<Output>& outputs, const fs::path& aside, const std::string& name) {
  std::vector<std::pair<fs::path, fs::path>> done;  // (from, to), undone in reverse
  try {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Output& o = outputs[i];
      std::error_code ec;
      if (fs::exists(fs::symlink_status(o.target, ec))) {
        fs::rename(o.target, aside / std::to_string(i));
        done.emplace_back(o.target, aside / std::to_string(i));
      }
      if (fs::exists(o.staged, ec)) {
        fs::rename(o.staged, o.target);
        done.emplace_back(o.staged, o.target);
      }
    }
  } catch (const fs::filesystem_error& e) {
    std::error_code ec;
    for (auto it = done.rbegin(); it != done.rend(); ++it) fs::rename(it->second, it->first, ec);
    throw ag::DataError("cannot move the render of " + name + " into place (" + e.path1().string() + ": " +
                        e.code().message() + "): its old files are as they were");
  }
}

}  // namespace

std::vector<std::string> lesson_names(const fs::path& source_dir) {
  std::vector<std::string> names;
  if (!fs::is_directory(source_dir)) throw ag::DataError("no notebooks folder at " + source_dir.string());
  for (const fs::directory_entry& e : fs::directory_iterator(source_dir)) {
    const std::string file = e.path().filename().string();
    if (e.path().extension() == ".cpp" && file.size() > 3 && std::isdigit((unsigned char)file[0]) &&
        std::isdigit((unsigned char)file[1]) && file[2] == '_') {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

void render_lesson(const std::string& name, const fs::path& source_dir, const fs::path& bin_dir,
                   const fs::path& out_dir, Formats formats) {
  std::string pattern = (out_dir / (".autograd-render-" + name + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw ag::DataError("--out '" + out_dir.string() + "': cannot write there (" + std::strerror(errno) + ")");
  }
  const fs::path work(pattern);
  struct RemoveWork {
    fs::path dir;
    ~RemoveWork() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{work};
  const fs::path images = work / (name + "_files");
  const fs::path program = bin_dir / ("notebook_" + name);
  std::vector<NotebookCell> cells = parse_notebook(read_text(source_dir / (name + ".cpp")));
  const LessonRun run = run_lesson(program, images);
  attach_output(cells, run.output);
  const std::vector<std::string> failed = failed_checks(cells);
  stop_unless_checks_failed(program, run, failed.size());
  const std::string note = "<!-- Rendered from notebooks/" + name +
                           ".cpp by `autograd notebook render`; edit the .cpp, not this file. -->\n\n";
  if (formats.md) ag::write_file_atomic((work / (name + ".md")).string(), note + to_markdown(cells, name + "_files"));
  if (formats.html) ag::write_file_atomic((work / (name + ".html")).string(), to_html(cells, name, images.string()));
  if (formats.json) ag::write_file_atomic((work / (name + ".json")).string(), to_json(cells, name));
  // All or nothing: every target checked before the first rename.
  std::vector<Output> outputs = {{images, out_dir / (name + "_files"), true}};
  for (const char* ext : {".md", ".html", ".json"}) {
    const bool chosen = ext[1] == 'm' ? formats.md : ext[1] == 'h' ? formats.html : formats.json;
    if (chosen) outputs.push_back({work / (name + ext), out_dir / (name + ext), false});
  }
  for (const Output& o : outputs) check_replaceable(o, name);
  fs::create_directory(work / "previous");
  swap_in(outputs, work / "previous", name);
  if (!failed.empty()) {
    throw ag::Error(std::to_string(failed.size()) + (failed.size() == 1 ? " check" : " checks") +
                    " failed (its pages show where), the first: " + failed.front().substr(std::strlen(nb::kCheckFailed)));
  }
}

}  // namespace render
