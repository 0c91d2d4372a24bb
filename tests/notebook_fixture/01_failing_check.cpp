// %% [markdown]
// # A lesson whose checks fail
//
// The fixture of tests/test_notebook_explore.cpp: its second cell's check
// fails, its third cell throws, and the cells after each still run under
// --explore. The test reads the line numbers of the failing calls below.

// %%
#include <iostream>
#include <stdexcept>

#include "notebooks/notebook.h"

// %%
NB_CELL {
  std::cout << "the first cell ran\n";
  nb::check(true, "a fact that holds");
}

// %%
NB_CELL {
  nb::check_close("two plus two", 2.0 + 2.0, 5.0, 0.1);  // FAILS HERE
  std::cout << "the rest of the failing cell ran\n";
  nb::check(true, "a fact after the failure");
}

// %% [markdown]
// A cell that stops with an exception: under --explore the cells after it still run.

// %%
NB_CELL {
  throw std::runtime_error("a lesson's own error");
}

// %%
NB_CELL {
  std::cout << "the last cell ran\n";
}
