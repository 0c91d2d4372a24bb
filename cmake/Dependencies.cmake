# Every external dependency, found once. Each failure names the Debian package
# that provides it, so configure on a bare machine says exactly what to install.

function(autograd_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "${what} was not found. Install it with:  apt-get install -y ${package}")
  endif()
endfunction()

# Armadillo (Debian's build wraps BLAS/LAPACK, which resolve to OpenBLAS).
find_package(Armadillo QUIET)
autograd_require(ARMADILLO_FOUND "Armadillo" "libarmadillo-dev libopenblas-dev")

# Boost: Test, Program_options, Iostreams and Filesystem (for gnuplot-iostream).
set(Boost_NO_WARN_NEW_VERSIONS ON)
find_package(Boost 1.74 QUIET COMPONENTS unit_test_framework program_options iostreams filesystem)
if(NOT TARGET Boost::unit_test_framework)
  autograd_require(FALSE "Boost.Test" "libboost-test-dev")
endif()
if(NOT TARGET Boost::program_options)
  autograd_require(FALSE "Boost.Program_options" "libboost-program-options-dev")
endif()
if(NOT TARGET Boost::iostreams)
  autograd_require(FALSE "Boost.Iostreams (needed by gnuplot-iostream)" "libboost-iostreams-dev")
endif()
if(NOT TARGET Boost::filesystem)
  autograd_require(FALSE "Boost.Filesystem (needed by gnuplot-iostream)" "libboost-filesystem-dev")
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

find_package(GnuplotIostream QUIET)
autograd_require(GnuplotIostream_FOUND "gnuplot-iostream.h" "libgnuplot-iostream-dev")

# gnuplot itself is needed only at run time, to draw: without it the programs
# still write their CSV files and say which package draws the plots.
find_program(GNUPLOT_EXECUTABLE gnuplot)
if(NOT GNUPLOT_EXECUTABLE)
  message(WARNING "gnuplot was not found: plots will be skipped. Install it with:  apt-get install -y gnuplot-nox")
endif()
