// autograd notebook render|run|list: run each lesson and write it as Markdown, HTML
// (and JSON for the course site), every code cell followed by what it printed and
// the plots it drew; or run one lesson in the terminal.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "autograd/error.h"
#include "autograd/format.h"
#include "cli/cli.h"
#include "notebooks/render.h"

namespace cli {

using namespace render;  // the lesson renderer (notebooks/render.h)

namespace fs = std::filesystem;

namespace {

// The folder of the running program (for the default --bin-dir).
fs::path program_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : self.parent_path();
}

// The lessons --only names (all of them when it is empty), each checked.
std::vector<std::string> chosen_lessons(const std::vector<std::string>& all, const std::string& only) {
  if (only.empty()) return all;
  std::vector<std::string> chosen;
  std::istringstream in(only);
  for (std::string name; std::getline(in, name, ',');) {
    if (std::find(all.begin(), all.end(), name) == all.end()) {
      throw UsageError("no lesson named '" + name + "' (autograd notebook list shows them)");
    }
    chosen.push_back(name);
  }
  return chosen;
}

// --format: a comma-separated list of md, html and json.
Formats parse_formats(const std::string& format) {
  Formats formats{false, false, false};
  std::istringstream in(format);
  for (std::string f; std::getline(in, f, ',');) {
    if (f == "md") formats.md = true;
    else if (f == "html") formats.html = true;
    else if (f == "json") formats.json = true;
    else throw UsageError("--format takes md, html and json, comma-separated; got '" + format + "'");
  }
  if (!formats.md && !formats.html && !formats.json) throw UsageError("--format names no format");
  return formats;
}

// Renders each lesson; one that fails is named and the others still render.
int render_all(const std::vector<std::string>& chosen, const fs::path& source_dir, const fs::path& bin_dir,
               const fs::path& out_dir, Formats formats) {
  std::vector<std::string> failed;
  for (const std::string& name : chosen) {
    try {
      render_lesson(name, source_dir, bin_dir, out_dir, formats);
      std::cout << "rendered " << ag::printable(name) << " -> " << ag::printable((out_dir / name).string()) << "\n"
                << std::flush;
    } catch (const std::exception& e) {
      std::cerr << "autograd notebook: " << ag::printable(name) << ": " << e.what() << "\n";
      failed.push_back(name);
    }
  }
  if (failed.empty()) return 0;
  std::string names;
  for (const std::string& name : failed) names += (names.empty() ? "" : ", ") + ag::printable(name);
  std::cerr << "autograd notebook: " << failed.size() << " of " << chosen.size() << " lessons failed: " << names
            << "\n";
  return 1;
}

// `autograd notebook run NAME [--explore]`: the lesson's program, its output in the terminal.
int run_one(const fs::path& program, const fs::path& images, bool explore) {
  if (!fs::exists(program)) {
    throw ag::DataError(program.string() + " does not exist: build the lessons first (cmake --build BUILD)");
  }
  std::vector<std::string> words = {program.string(), "--out", images.string()};
  if (explore) words.push_back("--explore");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(program.c_str(), argv.data());
  throw ag::Error("cannot run " + program.string() + ": " + std::strerror(errno));
}

struct NotebookSettings {
  std::string action, name, out, bin, source, only, format;
  bool explore = false;
};

// `run NAME` or `render`, after their arguments are checked.
int run_or_render(const NotebookSettings& n, const std::vector<std::string>& all, const fs::path& source_dir) {
  if (n.action != "render" && n.action != "run") throw UsageError("expected 'render', 'run' or 'list', got '" + n.action + "'");
  if (n.action == "render" && !n.name.empty()) {
    throw UsageError("render takes no lesson name ('" + n.name + "'): --only " + n.name + " renders one");
  }
  const Formats formats = parse_formats(n.format);
  const fs::path bin_dir = n.bin.empty() ? program_dir().parent_path() / "notebooks" : fs::path(n.bin);
  if (!fs::is_directory(bin_dir)) {
    throw UsageError("--bin-dir '" + bin_dir.string() + "' is not a folder of built lessons (build the project first)");
  }
  setenv("OPENBLAS_NUM_THREADS", "1", 0);  // the same sums, and the same output, every run
  if (n.action == "run") {
    if (n.name.empty()) throw UsageError("run: which lesson? (autograd notebook list shows them)");
    chosen_lessons(all, n.name);  // names it when it does not exist
    // Its plots go where a render puts them (BIN/NAME_files by default), not into the current folder.
    const fs::path images = (n.out.empty() ? bin_dir : fs::path(n.out)) / (n.name + "_files");
    return run_one(bin_dir / ("notebook_" + n.name), images, n.explore);
  }
  const fs::path out_dir = n.out.empty() ? bin_dir : fs::path(n.out);
  fs::create_directories(out_dir);
  return render_all(chosen_lessons(all, n.only), source_dir, bin_dir, out_dir, formats);
}

}  // namespace

int cmd_notebook(const std::vector<std::string>& args) {
  po::options_description options("options");
  NotebookSettings n;
  options.add_options()
      ("action", po::value(&n.action), "render (run every lesson and write NAME.md/.html), run NAME, or list")
      ("name", po::value(&n.name), "the lesson `run` runs (e.g. 03_layernorm_by_hand)")
      ("out", po::value(&n.out), "folder for NAME.md, NAME.html, NAME.json and NAME_files/ (default: the --bin-dir)")
      ("only", po::value(&n.only), "render only these lessons, comma-separated (e.g. 01_tape,05_gradcheck)")
      ("format", po::value(&n.format)->default_value("md,html"), "md, html, json, comma-separated")
      ("explore", po::bool_switch(&n.explore), "run: report a failed check and go on (render always does)")
      ("bin-dir", po::value(&n.bin), "where the lesson programs were built (default: BUILD/notebooks)")
      ("source-dir", po::value(&n.source), "where the lesson sources are (default: the repository's notebooks/)");
  po::positional_options_description positional;
  positional.add("action", 1).add("name", 1);
  po::variables_map vm;
  if (!parse_options("notebook", "autograd notebook render [--out DIR] [--only NAMES] [--format md,html,json]\n"
                     "autograd notebook run NAME [--explore]\nautograd notebook list\n"
                     "Runs each lesson and writes it with its output and plots; a lesson whose checks fail\n"
                     "is still written, its failures shown, and the command exits 1 naming it.",
                     options, args, vm, &positional)) {
    return 0;
  }
  const fs::path source_dir = n.source.empty() ? fs::path(AUTOGRAD_SOURCE_DIR) / "notebooks" : fs::path(n.source);
  const std::vector<std::string> all = lesson_names(source_dir);
  if (n.action == "list") {
    for (const std::string& lesson : all) std::cout << ag::printable(lesson) << "\n";  // file names
    return 0;
  }
  return run_or_render(n, all, source_dir);
}

}  // namespace cli
