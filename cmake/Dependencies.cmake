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

find_package(GnuplotIostream QUIET)
autograd_require(GnuplotIostream_FOUND "gnuplot-iostream.h" "libgnuplot-iostream-dev")

# gnuplot itself is needed only at run time, to draw: without it the programs
# still write their CSV files and say which package draws the plots.
find_program(GNUPLOT_EXECUTABLE gnuplot)
if(NOT GNUPLOT_EXECUTABLE)
  message(WARNING "gnuplot was not found: plots will be skipped. Install it with:  apt-get install -y gnuplot-nox")
endif()
