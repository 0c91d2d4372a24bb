# Every external dependency, found once. Each failure names the Debian package
# that provides it, so configure on a bare machine says exactly what to install.

function(autograd_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "${what} was not found. Install it with:  apt-get install -y ${package}")
  endif()
endfunction()

# What the libraries need (Armadillo, Boost.Iostreams, gnuplot-iostream).
include(autogradLibraryDependencies)

# What the programs and tests need on top: Boost.Test and Program_options.
find_package(Boost 1.74 QUIET COMPONENTS unit_test_framework program_options)
if(NOT TARGET Boost::unit_test_framework)
  autograd_require(FALSE "Boost.Test" "libboost-test-dev")
endif()
if(NOT TARGET Boost::program_options)
  autograd_require(FALSE "Boost.Program_options" "libboost-program-options-dev")
endif()

# cmark-gfm, GitHub's CommonMark parser (with its table extension): the lessons'
# prose to HTML in `autograd notebook render`. Debian ships no CMake config for it.
find_path(CMARK_GFM_INCLUDE_DIR cmark-gfm-core-extensions.h)
find_library(CMARK_GFM_LIBRARY cmark-gfm)
find_library(CMARK_GFM_EXTENSIONS_LIBRARY cmark-gfm-extensions)
if(CMARK_GFM_INCLUDE_DIR AND CMARK_GFM_LIBRARY AND CMARK_GFM_EXTENSIONS_LIBRARY)
  add_library(autograd_cmark_gfm INTERFACE IMPORTED)
  set_target_properties(autograd_cmark_gfm PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CMARK_GFM_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${CMARK_GFM_EXTENSIONS_LIBRARY};${CMARK_GFM_LIBRARY}")
else()
  autograd_require(FALSE "cmark-gfm (Markdown to HTML)" "libcmark-gfm-dev libcmark-gfm-extensions-dev")
endif()

# A program the build can do without, found once: when it is missing, configure
# warns with the package to install and records the name in
# BUILD/missing-tools.txt, so cmake/run.sh configures again once a later mode
# has installed it (a cached NOTFOUND is searched for again on every configure).
set_property(GLOBAL PROPERTY AUTOGRAD_MISSING_TOOLS "")
function(autograd_optional_program var name package why)
  find_program(${var} ${name})
  if(NOT ${var})
    message(WARNING "${name} was not found: ${why}. Install it with:  apt-get install -y ${package}")
    set_property(GLOBAL APPEND PROPERTY AUTOGRAD_MISSING_TOOLS ${name})
  endif()
endfunction()

# Written at the end of the top-level CMakeLists.txt: one missing program a line.
function(autograd_write_missing_tools)
  get_property(missing GLOBAL PROPERTY AUTOGRAD_MISSING_TOOLS)
  list(JOIN missing "\n" lines)
  if(lines)
    string(APPEND lines "\n")
  endif()
  file(WRITE ${CMAKE_BINARY_DIR}/missing-tools.txt "${lines}")
endfunction()

# gnuplot itself is needed only at run time, to draw: without it the programs
# still write their CSV files and say which package draws the plots.
autograd_optional_program(GNUPLOT_EXECUTABLE gnuplot gnuplot-nox "plots will be skipped")
