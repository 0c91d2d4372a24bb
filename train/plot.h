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

// Draws in a private temporary folder beside png_path (gnuplot sees no path of
// the caller's; titles cannot end a gnuplot command), checks the PNG is complete,
// and renames it into place. An existing png_path that is not a regular file is
// left alone and reported.
PlotResult plot_curves(const std::string& png_path, const std::vector<Curve>& curves, const std::string& title);

}  // namespace ag
