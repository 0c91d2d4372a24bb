// autograd notebook render|list: run each lesson and write it as Markdown and HTML,
// every code cell followed by what it printed and the plots it drew.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "notebooks/render.h"
#include "data/atomic_write.h"
#include "train/shell_quote.h"

namespace cli {

using namespace render;  // the lesson renderer (notebooks/render.h)

namespace fs = std::filesystem;

namespace {

// The lessons: notebooks/NN_name.cpp, in order.
std::vector<std::string> lessons(const fs::path& source_dir) {
  std::vector<std::string> names;
  if (!fs::is_directory(source_dir)) throw UsageError("no notebooks folder at " + source_dir.string());
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

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path.string());
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

using ag::shell_quote;

// Runs the lesson's program; returns its stdout. Its stderr goes to ours.
std::string run_lesson(const fs::path& program, const fs::path& images) {
  if (!fs::exists(program)) {
    throw UsageError(program.string() + " does not exist: build the lessons first (cmake --build BUILD)");
  }
  const std::string command = shell_quote(program.string()) + " --out " + shell_quote(images.string());
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + program.string());
  std::string output;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    throw std::runtime_error(program.filename().string() + " failed (exit status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
                             "); its message is above");
  }
  return output;
}

// The folder of the running program (for the default --bin-dir).
fs::path program_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : self.parent_path();
}

// The lesson runs into a private folder beside the outputs; only when it has
// succeeded do its plots, NAME.md and NAME.html replace the earlier render's
// (a failing lesson leaves the last good render as it was).
void render_one(const std::string& name, const fs::path& source_dir, const fs::path& bin_dir,
                const fs::path& out_dir, bool md, bool html) {
  std::string pattern = (out_dir / (".autograd-render-" + name + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw UsageError("--out '" + out_dir.string() + "': cannot write there (" + std::strerror(errno) + ")");
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
  std::vector<NotebookCell> cells = parse_notebook(read_text(source_dir / (name + ".cpp")));
  attach_output(cells, run_lesson(bin_dir / ("notebook_" + name), images));
  const std::string note = "<!-- Rendered from notebooks/" + name +
                           ".cpp by `autograd notebook render`; edit the .cpp, not this file. -->\n\n";
  if (md) ag::write_file_atomic((work / (name + ".md")).string(), note + to_markdown(cells, name + "_files"));
  if (html) ag::write_file_atomic((work / (name + ".html")).string(), to_html(cells, name, images.string()));
  // Move in: the plots folder (the old one out of the way first, no stale plots), then the pages.
  const fs::path old_images = out_dir / (name + "_files");
  std::error_code ec;
  if (fs::exists(old_images, ec)) fs::rename(old_images, work / "previous_files");
  if (fs::exists(images, ec)) fs::rename(images, old_images);
  for (const char* ext : {".md", ".html"}) {
    if (fs::exists(work / (name + ext), ec)) fs::rename(work / (name + ext), out_dir / (name + ext));
  }
  std::cout << "rendered " << name << " -> " << (out_dir / name).string() << (md ? ".md" : "")
            << (md && html ? ", " : "") << (html ? ".html" : "") << "\n";
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
  const std::vector<std::string> all = lessons(source_dir);
  if (action == "list") {
    for (const std::string& name : all) std::cout << name << "\n";
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
  for (const std::string& name : chosen) {
    render_one(name, source_dir, bin_dir, out_dir, format.find("md") != std::string::npos,
               format.find("html") != std::string::npos);
  }
  return 0;
}

}  // namespace cli
