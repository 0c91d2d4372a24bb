// autograd notebook render|list: run each lesson and write it as Markdown and HTML,
// every code cell followed by what it printed and the plots it drew.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

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

}  // namespace

int cmd_notebook(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string action, out, bin, source, only, format;
  options.add_options()
      ("action", po::value(&action), "render (run every lesson and write NAME.md/.html) or list")
      ("out", po::value(&out), "folder for NAME.md, NAME.html and NAME_files/ (default: the --bin-dir)")
      ("only", po::value(&only), "render only these lessons, comma-separated (e.g. 01_tape,05_gradcheck)")
      ("format", po::value(&format)->default_value("md,html"), "md, html or md,html")
      ("bin-dir", po::value(&bin), "where the lesson programs were built (default: BUILD/notebooks)")
      ("source-dir", po::value(&source), "where the lesson sources are (default: the repository's notebooks/)");
  po::positional_options_description positional;
  positional.add("action", 1);
  po::variables_map vm;
  if (!parse_options("notebook", "autograd notebook render [--out DIR] [--only NAMES] [--format md,html]\n"
                     "autograd notebook list\nRuns each lesson and writes it with its output and plots.",
                     options, args, vm, &positional)) {
    return 0;
  }
  const fs::path source_dir = source.empty() ? fs::path(AUTOGRAD_SOURCE_DIR) / "notebooks" : fs::path(source);
  const std::vector<std::string> all = lesson_names(source_dir);
  if (action == "list") {
    for (const std::string& name : all) std::cout << ag::printable(name) << "\n";  // file names
    return 0;
  }
  if (action != "render") throw UsageError("expected 'render' or 'list', got '" + action + "'");
  if (format != "md" && format != "html" && format != "md,html" && format != "html,md") {
    throw UsageError("--format must be md, html or md,html; got '" + format + "'");
  }
  const fs::path bin_dir = bin.empty() ? program_dir().parent_path() / "notebooks" : fs::path(bin);
  const fs::path out_dir = out.empty() ? bin_dir : fs::path(out);
  if (!fs::is_directory(bin_dir)) {
    throw UsageError("--bin-dir '" + bin_dir.string() + "' is not a folder of built lessons (build the project first)");
  }
  setenv("OPENBLAS_NUM_THREADS", "1", 0);  // the same sums, and the same output, every run
  const std::vector<std::string> chosen = chosen_lessons(all, only);
  fs::create_directories(out_dir);
  const bool md = format.find("md") != std::string::npos, html = format.find("html") != std::string::npos;
  for (const std::string& name : chosen) {
    render_lesson(name, source_dir, bin_dir, out_dir, md, html);
    std::cout << "rendered " << ag::printable(name) << " -> " << ag::printable((out_dir / name).string()) << (md ? ".md" : "")
              << (md && html ? ", " : "") << (html ? ".html" : "") << "\n";
  }
  return 0;
}

}  // namespace cli
