# FindGnuplotIostream: the one-header gnuplot-iostream (Debian: libgnuplot-iostream-dev).
# Defines GnuplotIostream_FOUND and the target GnuplotIostream::GnuplotIostream.
find_path(GnuplotIostream_INCLUDE_DIR NAMES gnuplot-iostream.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GnuplotIostream REQUIRED_VARS GnuplotIostream_INCLUDE_DIR)
if(GnuplotIostream_FOUND AND NOT TARGET GnuplotIostream::GnuplotIostream)
  add_library(GnuplotIostream::GnuplotIostream INTERFACE IMPORTED)
  set_target_properties(GnuplotIostream::GnuplotIostream PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${GnuplotIostream_INCLUDE_DIR}")
  target_link_libraries(GnuplotIostream::GnuplotIostream INTERFACE Boost::iostreams Boost::filesystem)
endif()
mark_as_advanced(GnuplotIostream_INCLUDE_DIR)
