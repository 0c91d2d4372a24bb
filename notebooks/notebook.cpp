#include "notebooks/notebook.h"

// Armadillo first: it switches on gnuplot-iostream's Armadillo support.
#include <gnuplot-iostream.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "autograd/memory.h"
#include "check/listing.h"
#include "train/plot.h"  // gnuplot_available
#include "train/shell_quote.h"
#include "notebooks/markers.h"

namespace nb {

namespace {

struct Cell {
  int line;
  CellFn fn;
};

std::vector<Cell>& cells() {
  static std::vector<Cell> list;
  return list;
}

std::string& images_dir_storage() {
  static std::string dir;
  return dir;
}

// A marker or a failure is one line of stdout: no line breaks inside.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// --explore: failed checks are counted and reported, not thrown.
struct Exploring {
  bool on = false;
  int failures = 0;
};

Exploring& exploring() {
  static Exploring state;
  return state;
}

// A failed check: "MESSAGE [line N]", thrown, or printed as "check FAILED: ..." under --explore.
void fail(const std::string& message, int line) {
  const std::string where = message + "  [line " + std::to_string(line) + "]";
  if (!exploring().on) throw CheckFailed(where);
  ++exploring().failures;
  std::cout << kCheckFailed << one_line(where) << "\n" << std::flush;
}

// gnuplot's inline data and titles: quote a string for a gnuplot command.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// gnuplot runs inside the images folder and writes NAME.png there: the
// folder's path (the caller's --out) never appears in a gnuplot command, where
// a quote, a backquote or a line break in it could end the string.
std::string gnuplot_command() { return "cd " + ag::shell_quote(images_dir()) + " && exec gnuplot"; }

bool is_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in.gcount() == 8 && std::string(magic, 8) == "\x89PNG\r\n\x1a\n";
}

// Prints the image marker (file, then its alt text) once gnuplot has finished writing a valid PNG.
void report_image(const std::string& name, const std::string& alt) {
  const std::string path = images_dir() + "/" + name + ".png";
  if (!is_png(path)) {
    throw CheckFailed("plot '" + name + "': gnuplot did not write a PNG to " + path +
                      " (see gnuplot's message above)");
  }
  std::cout << std::flush << kImageMarker << name << ".png" << kImageAlt << one_line(alt) << kMarkerEnd << "\n"
            << std::flush;
}

void begin_png(Gnuplot& gp, const std::string& name, int width, int height) {
  std::filesystem::create_directories(images_dir());
  gp << "set terminal pngcairo size " << width << "," << height << " font \"DejaVu Sans,10\"\n";
  gp << "set output " << quoted(name + ".png") << "\n";
}

bool skip_without_gnuplot(const std::string& name) {
  if (ag::gnuplot_available()) return false;
  std::cout << "(plot '" << name << "' skipped: gnuplot is not installed; apt-get install -y gnuplot-nox)\n";
  return true;
}

}  // namespace

bool register_cell(int line, CellFn fn) {
  cells().push_back({line, fn});
  return true;
}

const std::string& images_dir() { return images_dir_storage(); }

// ---- printing ---------------------------------------------------------------

void show(const std::string& label, const arma::mat& m, int digits) {
  std::cout << label << " (" << m.n_rows << "x" << m.n_cols << ") =\n" << ag::format_matrix(m, digits);
}

void show(const std::string& label, double x, int digits) {
  std::cout << label << " = " << std::setprecision(digits) << x << "\n";
}

// ---- checks -------------------------------------------------------------------

void check(bool ok, const std::string& fact, int line) {
  if (!ok) return fail("this should hold but does not: " + fact, line);
  std::cout << "check: " << fact << "  [ok]\n";
}

void check_close(const std::string& what, double actual, double expected, double tol, int line) {
  std::ostringstream os;
  os << std::setprecision(8) << what << " = " << actual << ", expected " << expected << " (tolerance "
     << std::setprecision(2) << tol << ")";
  if (!(std::abs(actual - expected) <= tol)) return fail(os.str(), line);
  std::cout << "check: " << os.str() << "  [ok]\n";
}

void check_close(const std::string& what, const arma::mat& actual, const arma::mat& expected, double tol,
                 int line) {
  if (actual.n_rows != expected.n_rows || actual.n_cols != expected.n_cols) {
    return fail(what + ": shape " + std::to_string(actual.n_rows) + "x" + std::to_string(actual.n_cols) +
                    ", expected " + std::to_string(expected.n_rows) + "x" + std::to_string(expected.n_cols),
                line);
  }
  const double worst = actual.n_elem ? arma::abs(actual - expected).max() : 0.0;
  std::ostringstream os;
  os << what << ": largest difference " << std::setprecision(3) << worst << " (tolerance " << tol << ")";
  if (!(worst <= tol)) return fail(os.str(), line);
  std::cout << "check: " << os.str() << "  [ok]\n";
}

// ---- plots --------------------------------------------------------------------

void draw(const Plot& plot) {
  if (skip_without_gnuplot(plot.name)) return;
  {
    std::filesystem::create_directories(images_dir());
    Gnuplot gp(gnuplot_command());  // the PNG is complete when this closes
    begin_png(gp, plot.name, 800, 480);
    gp << "set title " << quoted(plot.title) << "\nset xlabel " << quoted(plot.xlabel)
       << "\nset ylabel " << quoted(plot.ylabel) << "\nset grid\nset key outside right top\n";
    if (plot.log_x) gp << "set logscale x\nset format x \"10^{%L}\"\n";
    if (plot.log_y) gp << "set logscale y\nset format y \"10^{%L}\"\n";
    for (const std::string& line : plot.extra) gp << line << "\n";
    gp << "plot ";
    for (std::size_t k = 0; k < plot.series.size(); ++k) {
      const std::string& style = plot.series[k].style;
      gp << (k ? ", " : "") << "'-' with " << style << (style.find("lw") == std::string::npos ? " lw 2" : "")
         << " title " << quoted(plot.series[k].title);
    }
    gp << "\n";
    for (const Series& s : plot.series) {
      gp.send1d(std::make_pair(s.x, s.y));
    }
  }
  std::string alt = "Plot: " + plot.title + " (x: " + plot.xlabel + ", y: " + plot.ylabel;
  for (std::size_t k = 0; k < plot.series.size(); ++k) alt += (k ? ", " : "; lines: ") + plot.series[k].title;
  report_image(plot.name, alt + ")");
}

void heatmap(const std::string& name, const std::string& title, const arma::mat& m,
             const std::string& xlabel, const std::string& ylabel) {
  if (skip_without_gnuplot(name)) return;
  {
    std::filesystem::create_directories(images_dir());
    Gnuplot gp(gnuplot_command());
    begin_png(gp, name, 640, 560);
    const double limit = std::max(1e-12, arma::abs(m).max());
    gp << "set title " << quoted(title) << "\nset xlabel " << quoted(xlabel) << "\nset ylabel "
       << quoted(ylabel) << "\nset yrange [" << m.n_rows - 0.5 << ":-0.5]\nset xrange [-0.5:"
       << m.n_cols - 0.5 << "]\nset size ratio -1\nset palette defined (-1 \"#2166ac\", 0 \"white\", 1 \"#b2182b\")\n"
       << "set cbrange [" << -limit << ":" << limit << "]\n";
    gp << "$M << EOD\n";  // a datablock: gnuplot reads inline matrices reliably this way
    for (arma::uword r = 0; r < m.n_rows; ++r) {
      for (arma::uword c = 0; c < m.n_cols; ++c) gp << (c ? " " : "") << m(r, c);
      gp << "\n";
    }
    gp << "EOD\nplot $M matrix with image notitle, "
       << "$M matrix using 1:2:(sprintf(\"%.2f\", $3)) with labels font \",9\" notitle\n";
  }
  report_image(name, "Heatmap: " + title + " (" + std::to_string(m.n_rows) + " x " + std::to_string(m.n_cols) +
                         ", " + ylabel + " by " + xlabel + ", blue negative, red positive)");
}

void graph(const std::string& name, const std::string& dot_source) {
  if (std::system("command -v dot > /dev/null 2>&1") != 0) {
    std::cout << "(graph '" << name << "' skipped: Graphviz is not installed; apt-get install -y graphviz)\n";
    return;
  }
  std::filesystem::create_directories(images_dir());
  const std::string base = images_dir() + "/" + name;
  std::ofstream(base + ".dot") << dot_source;
  const std::string command = "dot -Tpng " + ag::shell_quote(base + ".dot") + " -o " + ag::shell_quote(base + ".png");
  if (std::system(command.c_str()) != 0) throw CheckFailed("graph '" + name + "': dot failed on " + base + ".dot");
  std::filesystem::remove(base + ".dot");
  if (!is_png(base + ".png")) throw CheckFailed("graph '" + name + "': dot did not write a PNG to " + base + ".png");
  std::size_t edges = 0;
  for (std::size_t at = dot_source.find("->"); at != std::string::npos; at = dot_source.find("->", at + 2)) ++edges;
  std::cout << std::flush << kImageMarker << name << ".png" << kImageAlt << "Graph '" << one_line(name)
            << "' drawn by Graphviz (" << edges << " edges)" << kMarkerEnd
            << "\n" << std::flush;
}

}  // namespace nb

// ---- the program: run every cell in order ------------------------------------------

namespace {

// The usage the lesson programs accept (CTest runs them with --out; the renderer adds --explore).
bool parse_arguments(int argc, char** argv, const std::string& lesson) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--explore") {
      nb::exploring().on = true;
    } else if (arg == "--out" && i + 1 < argc) {
      nb::images_dir_storage() = argv[++i];
    } else {
      std::cerr << lesson << ": unknown argument '" << arg << "' (usage: " << argv[0]
                << " [--out IMAGES_DIR] [--explore])\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ag::use_memory_policy();  // a lesson is a program: it asks for the policy its timings assume (autograd/memory.h)
  const std::string program = std::filesystem::path(argv[0]).filename().string();
  std::string lesson = program.rfind("notebook_", 0) == 0 ? program.substr(9) : program;
  nb::images_dir_storage() = lesson + "_files";
  if (!parse_arguments(argc, argv, lesson)) return 2;
  nb::Exploring& exploring = nb::exploring();
  for (const nb::Cell& cell : nb::cells()) {
    std::cout << std::flush << nb::kCellMarker << cell.line << nb::kMarkerEnd << "\n" << std::flush;
    try {
      cell.fn();
    } catch (const std::exception& e) {
      std::cout << std::flush;
      std::cerr << lesson << ": the cell at line " << cell.line << " failed: " << e.what() << "\n";
      if (!exploring.on) return 1;
      // Exploring: the rest of this cell is lost, the cells after it still run.
      ++exploring.failures;
      std::cout << nb::kCheckFailed << "the cell stopped: " << nb::one_line(e.what()) << "  [line " << cell.line << "]\n";
    }
  }
  std::cout << std::flush;
  if (exploring.failures > 0) {
    std::cerr << lesson << ": " << exploring.failures << (exploring.failures == 1 ? " check" : " checks")
              << " failed (the lines starting 'check FAILED:' above)\n";
    return 1;
  }
  return 0;
}
