// The files the project ships and reads at run time (the digits, the PyTorch
// peer script, the exercises), found where they are: in the source tree this
// build came from, or, for an installed program, in PREFIX/share/autograd.
#pragma once

#include <string>

namespace ag {

// The path of `relative` ("data/digits/digits.csv.gz"): $AUTOGRAD_DATA_DIR/relative
// when that variable is set, else the installed copy next to the running
// program (../share/autograd/relative from its bin folder), else this build's
// source tree. Throws ag::DataError naming every place it looked when none has it.
std::string shipped_file(const std::string& relative);

// The install prefix of the running program (the folder above its bin/), or
// "" when it does not run from an installed tree (no ../share/autograd).
std::string installed_prefix();

// The source tree this program was built from (it holds CMakeLists.txt and
// cmake/run.sh), for the packs that carry it (autograd grade --pack). Throws
// DataError naming the folder when it is gone, as for a grader copied elsewhere.
std::string source_tree();

}  // namespace ag
