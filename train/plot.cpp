#include "train/plot.h"

#include <unistd.h>

#include <gnuplot-iostream.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <utility>

namespace ag {

namespace {

using Points = std::vector<std::pair<double, double>>;

// A string as a single-quoted gnuplot literal ('' stands for one quote).
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Points column(const std::vector<EpochMetrics>& history, double EpochMetrics::*field, double scale) {
  Points points;
  for (const EpochMetrics& m : history) points.emplace_back(m.epoch, scale * (m.*field));
  return points;
}

// One panel: for every curve a solid train line and a dashed validation line in the same colour.
void plot_panel(Gnuplot& gp, const std::vector<Curve>& curves, double EpochMetrics::*train,
                double EpochMetrics::*val, double scale) {
  const bool several = curves.size() > 1;
  std::string command = "plot ";
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const std::string name = several ? curves[i].label + " " : "";
    const std::string colour = " lc " + std::to_string(i + 1);
    command += std::string(i ? ", " : "") + "'-' with lines lw 2 dt 1" + colour + " title " + quoted(name + "train") +
               ", '-' with lines lw 2 dt 2" + colour + " title " + quoted(name + "validation");
  }
  gp << command << "\n";
  for (const Curve& c : curves) {
    gp.send1d(column(c.history, train, scale));
    gp.send1d(column(c.history, val, scale));
  }
}

void draw(const std::string& tmp_png, const std::string& log, const std::vector<Curve>& curves,
          const std::string& title) {
  const bool accuracy = !curves.empty() && !curves[0].history.empty() && !std::isnan(curves[0].history[0].val_accuracy);
  const std::size_t epochs = curves.empty() ? 1 : curves[0].history.size();
  Gnuplot gp("gnuplot 2>" + shell_quoted(log));
  gp << "set terminal pngcairo size " << (accuracy ? 1200 : 700) << ",480 enhanced font 'DejaVu Sans,11'\n"
     << "set output " << quoted(tmp_png) << "\n"
     << "set multiplot layout 1," << (accuracy ? 2 : 1) << " title " << quoted(title) << " font ',14'\n"
     << "set grid\nset xlabel 'epoch'\nset xrange [1:" << std::max<std::size_t>(epochs, 2) << "]\n"
     << "set title 'Loss'\nset ylabel 'loss (log scale)'\nset logscale y\nset key top right\n";
  plot_panel(gp, curves, &EpochMetrics::train_loss, &EpochMetrics::val_loss, 1.0);
  if (accuracy) {
    gp << "unset logscale y\nset title 'Accuracy'\nset ylabel 'accuracy (%)'\nset key bottom right\n";
    plot_panel(gp, curves, &EpochMetrics::train_accuracy, &EpochMetrics::val_accuracy, 100.0);
  }
  gp << "unset multiplot\nunset output\n";
}  // ~Gnuplot waits for gnuplot to exit: only now is the PNG complete

bool is_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  return in.read(magic, 8) && std::string(magic, 8) == std::string("\x89PNG\r\n\x1a\n", 8);
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

PlotResult plot_curves(const std::string& png_path, const std::vector<Curve>& curves, const std::string& title) {
  if (!gnuplot_available()) {
    return {false, "gnuplot was not found, so " + png_path + " was not drawn (apt-get install gnuplot-nox)"};
  }
  const std::string tmp_png = png_path + ".tmp-" + std::to_string(::getpid()) + ".png";
  const std::string log = png_path + ".tmp-" + std::to_string(::getpid()) + ".log";
  draw(tmp_png, log, curves, title);
  const std::string gnuplot_said = last_line(log);
  std::remove(log.c_str());
  if (!is_png(tmp_png)) {
    std::remove(tmp_png.c_str());
    return {false, "gnuplot did not write " + png_path + (gnuplot_said.empty() ? "" : " (" + gnuplot_said + ")")};
  }
  if (std::rename(tmp_png.c_str(), png_path.c_str()) != 0) {
    std::remove(tmp_png.c_str());
    return {false, "could not move the plot into place at " + png_path};
  }
  return {true, ""};
}

}  // namespace ag
