// What a lesson needs to run as a notebook: cells, printed values, checked
// facts and plots.
//
// A lesson is one .cpp file in jupytext's "percent" format. Prose cells are
// `// %% [markdown]` followed by `//` comment lines; code cells start with
// `// %%`. A code cell that runs something holds one NB_CELL { ... } block;
// code cells may also hold includes, helper functions and the variables later
// cells share (file scope, like a notebook's top level).
//
// The program runs the NB_CELL blocks in source order. Before each it prints a
// marker line naming the block's source line; each plot prints a marker
// naming its PNG. `autograd notebook render` splits the output at the markers
// and puts each piece under its cell.
#pragma once

#include <armadillo>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nb {

using CellFn = void (*)();

// Called by NB_CELL before main; cells run in the order they were registered.
bool register_cell(int line, CellFn fn);

#define NB_CONCAT2(a, b) a##b
#define NB_CONCAT(a, b) NB_CONCAT2(a, b)
#define NB_CELL                                                                         \
  static void NB_CONCAT(nb_cell_, __LINE__)();                                          \
  static const bool NB_CONCAT(nb_registered_, __LINE__) =                               \
      nb::register_cell(__LINE__, &NB_CONCAT(nb_cell_, __LINE__));                      \
  static void NB_CONCAT(nb_cell_, __LINE__)()

// ---- printing ---------------------------------------------------------------

// "label =" then the matrix, one row per line, `digits` significant digits.
void show(const std::string& label, const arma::mat& m, int digits = 4);
void show(const std::string& label, double x, int digits = 6);

// ---- facts a lesson asserts -------------------------------------------------
// Each prints one "check: ..." line on success. On failure the program stops
// with a message naming the fact, its numbers and its source line, and the
// notebook's test fails. Run with --explore, the program instead prints
// "check FAILED: ..." (the same message), goes on, and exits 1 at the end: the
// renderer shows every cell, the failed checks among them. `line` is the
// caller's source line (__builtin_LINE, in GCC and Clang alike).

void check(bool ok, const std::string& fact, int line = __builtin_LINE());
void check_close(const std::string& what, double actual, double expected, double tol,
                 int line = __builtin_LINE());
void check_close(const std::string& what, const arma::mat& actual, const arma::mat& expected, double tol,
                 int line = __builtin_LINE());

// Thrown by a failed check outside --explore; main prints it with the cell's line and exits 1.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- plots (gnuplot, PNG) -----------------------------------------------------

struct Series {
  std::string title;
  std::vector<double> x, y;
  std::string style = "lines";  // gnuplot style: "lines", "linespoints", "points"
};

struct Plot {
  std::string name;  // file name without .png, unique within the lesson
  std::string title, xlabel, ylabel;
  bool log_x = false, log_y = false;
  std::vector<Series> series;
  std::vector<std::string> extra;  // further gnuplot commands, e.g. "set key left"

  Plot& add(std::string title, std::vector<double> x, std::vector<double> y,
            std::string style = "lines") {
    series.push_back({std::move(title), std::move(x), std::move(y), std::move(style)});
    return *this;
  }
};

// Draws the plot to <images dir>/<name>.png and prints its marker. Without
// gnuplot it prints how to install it and draws nothing (the lesson still runs).
void draw(const Plot& plot);

// A matrix as a heatmap (row 0 at the top), with a colour bar.
void heatmap(const std::string& name, const std::string& title, const arma::mat& m,
             const std::string& xlabel = "column", const std::string& ylabel = "row");

// A Graphviz graph (DOT source) drawn with `dot` to <images dir>/<name>.png.
// Without Graphviz it prints how to install it and draws nothing.
void graph(const std::string& name, const std::string& dot_source);

// The folder plots go to (set by --out; "<program>_files" by default).
const std::string& images_dir();

}  // namespace nb
