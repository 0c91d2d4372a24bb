#include "train/plot.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gnuplot-iostream.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <system_error>
#include <utility>

#include "train/shell_quote.h"

namespace ag {

// A string as a single-quoted gnuplot literal: '' stands for one quote, and
// gnuplot substitutes nothing inside single quotes (no backquotes, no @macros,
// no backslash escapes). Only a line break can end the command early, so
// control characters become spaces: a title can never run a command. gnuplot
// 5.4 reads a literal that opens with '' as an empty string, so leading quotes
// are joined on as "'" (a double-quoted quote: nothing in it to substitute).
std::string gnuplot_literal(const std::string& s) {
  std::size_t lead = 0;
  while (lead < s.size() && s[lead] == '\'') ++lead;
  std::string out = "'";
  for (char c : s.substr(lead)) {
    if (c == '\'') out += "''";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += ' ';
    else out += c;
  }
  out += "'";
  if (lead == 0) return out;
  std::string joined = "(";
  for (std::size_t i = 0; i < lead; ++i) joined += "\"'\" . ";
  return joined + out + ")";
}

namespace {

using Points = std::vector<std::pair<double, double>>;


Points column(const std::vector<Metrics>& history, TimeAxis axis, double Metrics::*field, double scale) {
  Points points;
  for (const Metrics& m : history) points.emplace_back(x_of(m, axis), scale * (m.*field));
  return points;
}

// One panel: for every curve a solid train line and a dashed validation line in the same colour.
void plot_panel(Gnuplot& gp, const std::vector<Curve>& curves, TimeAxis axis, double Metrics::*train,
                double Metrics::*val, double scale, const std::string& reference = "") {
  const bool several = curves.size() > 1;
  std::string command = "plot " + reference;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const std::string name = several ? curves[i].label + " " : "";
    const std::string colour = " lc " + std::to_string(i + 1);
    command += std::string(i ? ", " : "") + "'-' with lines lw 2 dt 1" + colour + " title " +
               gnuplot_literal(name + "train") + ", '-' with lines lw 2 dt 2" + colour + " title " +
               gnuplot_literal(name + "validation");
  }
  gp << command << "\n";
  for (const Curve& c : curves) {
    gp.send1d(column(c.history, axis, train, scale));
    gp.send1d(column(c.history, axis, val, scale));
  }
}

// gnuplot runs inside `work` and writes plot.png and gnuplot.log there: no
// path the user chose ever appears in a gnuplot command.
void draw(const std::string& work, const std::vector<Curve>& curves, const std::string& title, const PlotStyle& style) {
  const bool accuracy = !curves.empty() && !curves[0].history.empty() && !std::isnan(curves[0].history[0].val_accuracy);
  const bool points = !curves.empty() && !curves[0].history.empty();
  const long long first = points ? static_cast<long long>(x_of(curves[0].history.front(), style.axis)) : 1;
  const long long last = std::max(points ? static_cast<long long>(x_of(curves[0].history.back(), style.axis)) : 1, first + 1);
  Gnuplot gp("cd " + shell_quote(work) + " && exec gnuplot 2>gnuplot.log");
  gp << "set terminal pngcairo size " << (accuracy ? 1200 : 700) << ",480 enhanced font 'DejaVu Sans,11'\n"
     << "set output 'plot.png'\n"
     << "set multiplot layout 1," << (accuracy ? 2 : 1) << " title " << gnuplot_literal(title) << " font ',14'\n"
     << "set grid\nset xlabel " << gnuplot_literal(axis_name(style.axis)) << "\nset xrange [" << first << ":" << last
     << "]\n"
     << "set title 'Loss'\nset key " << (style.log_loss ? "top" : "center") << " right\n"
     << (style.log_loss ? "set ylabel 'loss (log scale)'\nset logscale y\n" : "set ylabel 'loss'\n");
  // gnuplot prints a finite double exactly enough with 17 digits; the label is a quoted literal.
  char reference[200] = "";
  if (style.reference > 0 && std::isfinite(style.reference)) {
    std::snprintf(reference, sizeof reference, "%.17g with lines lw 2 dt 3 lc rgb 'gray50' title ", style.reference);
  }
  plot_panel(gp, curves, style.axis, &Metrics::train_loss, &Metrics::val_loss, 1.0,
             reference[0] ? std::string(reference) + gnuplot_literal(style.reference_label) + ", " : "");
  if (accuracy) {
    gp << "unset logscale y\nset title 'Accuracy'\nset ylabel 'accuracy (%)'\nset key bottom right\n";
    plot_panel(gp, curves, style.axis, &Metrics::train_accuracy, &Metrics::val_accuracy, 100.0);
  }
  gp << "unset multiplot\nunset output\n";
}  // ~Gnuplot waits for gnuplot to exit: only now is the PNG complete

// A complete PNG: the signature first and the IEND chunk last (a full disk
// or a killed gnuplot leaves the first without the second).
bool is_complete_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  if (!in.read(magic, 8) || std::string(magic, 8) != std::string("\x89PNG\r\n\x1a\n", 8)) return false;
  const std::string iend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
  char tail[12] = {};
  in.seekg(-12, std::ios::end);
  return in.read(tail, 12) && std::string(tail, 12) == iend;
}

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

bool gnuplot_available() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && ::access((dir + "/gnuplot").c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

namespace {

// Runs `draw` in a private folder beside png_path (mkdtemp: a fresh, unguessable name, mode
// 0700), checks that it left a complete plot.png there, and renames it into place.
PlotResult draw_png(const std::string& png_path, const std::function<void(const std::string& work)>& draw) {
  namespace fs = std::filesystem;
  if (!gnuplot_available()) {
    return {false, "gnuplot was not found, so " + png_path + " was not drawn (apt-get install gnuplot-nox)"};
  }
  // Only a regular file (or nothing) is replaced: never a symlink, a FIFO or a device.
  struct stat target {};
  if (::lstat(png_path.c_str(), &target) == 0 && !S_ISREG(target.st_mode)) {
    return {false, png_path + " exists and is not a regular file, so it was left alone and the plot not drawn"};
  }
  const fs::path folder = fs::path(png_path).parent_path();
  std::string pattern = ((folder.empty() ? fs::path(".") : folder) / ".autograd-plot-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return {false, "could not create a temporary folder beside " + png_path + " to draw the plot in"};
  }
  const fs::path work(pattern);
  draw(work.string());
  const std::string gnuplot_said = last_line((work / "gnuplot.log").string());
  PlotResult result{true, ""};
  if (!is_complete_png((work / "plot.png").string())) {
    result = {false, "gnuplot did not write " + png_path + (gnuplot_said.empty() ? "" : " (" + gnuplot_said + ")")};
  } else if (std::rename((work / "plot.png").c_str(), png_path.c_str()) != 0) {
    result = {false, "could not move the plot into place at " + png_path};
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  return result;
}

// A label inside gnuplot's inline data: double-quoted, so a quote or a backslash becomes a
// space there too, as a control character does in gnuplot_literal().
std::string data_label(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  return out + "\"";
}

void draw_bars(const std::string& work, const std::vector<Bar>& bars, const std::string& title,
               const std::string& value_label) {
  double top = 1;
  for (const Bar& b : bars) top = std::max(top, b.value);
  const int height = 140 + 36 * int(std::max<std::size_t>(bars.size(), 1));
  Gnuplot gp("cd " + shell_quote(work) + " && exec gnuplot 2>gnuplot.log");
  gp << "set terminal pngcairo size 900," << height << " noenhanced font 'DejaVu Sans,11'\n"
     << "set output 'plot.png'\nset title " << gnuplot_literal(title) << " font ',13'\n"
     << "set xlabel " << gnuplot_literal(value_label) << "\nset xrange [0:" << top * 1.15 << "]\n"
     << (top <= 12 ? "set xtics 1\n" : "set xtics\n")
     << "set yrange [" << double(bars.size()) - 0.4 << ":-0.6]\nset ytics scale 0\n"  // the first bar on top
     << "set grid xtics\nunset key\nset style fill solid 0.8 noborder\n"
     << "plot '-' using ($2/2):0:($2/2):(0.35):ytic(1) with boxxyerror lc rgb '#4a78b5', "
        "'-' using 2:0:(sprintf(' %g', $2)) with labels left offset 0.3,0\n";
  for (int pass = 0; pass < 2; ++pass) {
    for (const Bar& b : bars) gp << data_label(b.label) << " " << b.value << "\n";
    gp << "e\n";
  }
  gp << "unset output\n";
}  // ~Gnuplot waits for gnuplot to exit

}  // namespace

PlotResult plot_curves(const std::string& png_path, const std::vector<Curve>& curves, const std::string& title,
                       const PlotStyle& style) {
  return draw_png(png_path, [&](const std::string& work) { draw(work, curves, title, style); });
}

PlotResult plot_bars(const std::string& png_path, const std::vector<Bar>& bars, const std::string& title,
                     const std::string& value_label) {
  return draw_png(png_path, [&](const std::string& work) { draw_bars(work, bars, title, value_label); });
}

}  // namespace ag
