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

// Runs the lesson's program; returns its stdout. Its stderr goes to ours.
std::string run_lesson(const fs::path& program, const fs::path& images) {
  if (!fs::exists(program)) {
    throw ag::DataError(program.string() + " does not exist: build the lessons first (cmake --build BUILD)");
  }
  const std::string command = shell_quote(program.string()) + " --out " + shell_quote(images.string());
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw ag::Error("cannot run " + program.string());
  std::string output;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    throw ag::Error(program.filename().string() + " failed (exit status " +
                    std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) + "); its message is above");
  }
  return output;
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
                   const fs::path& out_dir, bool md, bool html) {
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
}

}  // namespace render
