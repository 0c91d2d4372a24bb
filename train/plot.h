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

// `s` as a gnuplot string expression that means exactly `s`, control
// characters as spaces: nothing in it is substituted or run.
std::string gnuplot_literal(const std::string& s);

// Draws in a private temporary folder beside png_path (gnuplot sees no path of
// the caller's; titles cannot end a gnuplot command), checks the PNG is complete,
// and renames it into place. An existing png_path that is not a regular file is
// left alone and reported.
// How the loss panel reads. The x of each point is its epoch or its step
// (`axis`: Step for a language model evaluated every few hundred steps). A log y axis suits an MLP whose loss falls by decades; a language
// model's loss moves within a factor of two, so it is drawn linear, with the
// bigram baseline as a grey line to beat.
struct PlotStyle {
  TimeAxis axis = TimeAxis::Epoch;
  bool log_loss = true;
  double reference = 0;            // drawn as a horizontal line when > 0
  std::string reference_label;     // its legend entry
};

PlotResult plot_curves(const std::string& png_path, const std::vector<Curve>& curves, const std::string& title,
                       const PlotStyle& style = {});

// A bar per label, longest first as given, drawn across the page so long labels read: the
// mistakes of a class (autograd grade --class), `value` students each. Written as plot_curves
// writes (a private folder, a complete PNG, one rename); a label cannot end a gnuplot command.
struct Bar {
  std::string label;
  double value = 0;
};

PlotResult plot_bars(const std::string& png_path, const std::vector<Bar>& bars, const std::string& title,
                     const std::string& value_label);

}  // namespace ag
