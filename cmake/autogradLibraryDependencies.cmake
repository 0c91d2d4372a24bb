# What the libraries need, found the same way by this project and by a project
# that uses the installed package (autogradConfig.cmake includes this file):
#   Armadillo::Armadillo            Armadillo (CMake's FindArmadillo sets only variables)
#   ZLIB::ZLIB                      the digits loader's gzip (autograd::data)
#   Boost::iostreams                gnuplot-iostream's pipe to gnuplot (autograd::plot)
#   GnuplotIostream::GnuplotIostream  the training-curve plots (autograd::plot)
# Each failure names the Debian package that provides it.

macro(autograd_require_package found what package)
  if(NOT ${found})
    message(FATAL_ERROR "${what} was not found. Install it with:  apt-get install -y ${package}")
  endif()
endmacro()

find_package(Armadillo QUIET)
autograd_require_package(ARMADILLO_FOUND "Armadillo" "libarmadillo-dev libopenblas-dev")
if(NOT TARGET Armadillo::Armadillo)
  add_library(Armadillo::Armadillo INTERFACE IMPORTED)
  set_target_properties(Armadillo::Armadillo PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ARMADILLO_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${ARMADILLO_LIBRARIES}")
endif()

find_package(ZLIB QUIET)
autograd_require_package(ZLIB_FOUND "zlib" "zlib1g-dev")

set(Boost_NO_WARN_NEW_VERSIONS ON)
find_package(Boost 1.74 QUIET COMPONENTS iostreams filesystem)
if(NOT TARGET Boost::iostreams)
  autograd_require_package(FALSE "Boost.Iostreams" "libboost-iostreams-dev")
endif()
if(NOT TARGET Boost::filesystem)
  autograd_require_package(FALSE "Boost.Filesystem (needed by gnuplot-iostream)" "libboost-filesystem-dev")
endif()

find_package(GnuplotIostream QUIET)
autograd_require_package(GnuplotIostream_FOUND "gnuplot-iostream.h" "libgnuplot-iostream-dev")
