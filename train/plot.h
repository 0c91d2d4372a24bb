// Training curves drawn by gnuplot (through gnuplot-iostream) into a PNG:
// loss on the left, accuracy on the right, against epoch; train solid and
// validation dashed, one colour per run, with a legend.
#pragma once

#include <string>
#include <vector>

#include "train/metrics.h"

namespace ag {

struct PlotResult {
  bool written = false;
  std::string message;  // why not, when it was not (gnuplot missing, gnuplot failed)
};

// True when an executable `gnuplot` is on the PATH.
bool gnuplot_available();

// Draws into a temporary file beside png_path, checks it is a PNG, and renames it.
PlotResult plot_curves(const std::string& png_path, const std::vector<Curve>& curves, const std::string& title);

}  // namespace ag
