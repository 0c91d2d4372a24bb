# cmake --install BUILD --prefix P puts, under P:
#   include/autograd/<layer>/*.h        the public headers of every layer
#   lib/libautograd_<layer>.a           the libraries
#   lib/cmake/autograd/                 autogradConfig.cmake, its version file, the targets
#   bin/autograd                        the program (when it is built)
#   share/autograd/                     what the program reads at run time: the digits,
#                                       the PyTorch peer script, the exercises' public files
# The package's targets are autograd::engine, ops, check, nn, data, train, plot
# and autograd::autograd (all of them), as fmt and Catch2 export theirs.
include(CMakePackageConfigHelpers)

set(AUTOGRAD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/autograd)
set(AUTOGRAD_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/autograd)

foreach(folder autograd ops check nn data train)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/autograd/${folder}
          FILES_MATCHING PATTERN "*.h")
endforeach()

install(TARGETS autograd_engine autograd_ops autograd_check autograd_nn autograd_data autograd_train
                autograd_plot autograd_all
        EXPORT autogradTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT autogradTargets NAMESPACE autograd:: DESTINATION ${AUTOGRAD_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/autogradConfig.cmake.in
  ${PROJECT_BINARY_DIR}/autogradConfig.cmake INSTALL_DESTINATION ${AUTOGRAD_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/autogradConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/autogradConfig.cmake ${PROJECT_BINARY_DIR}/autogradConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/autogradLibraryDependencies.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindGnuplotIostream.cmake
        DESTINATION ${AUTOGRAD_CMAKE_DIR})

# The shipped files, at the same relative paths as in the source tree.
install(FILES ${PROJECT_SOURCE_DIR}/data/digits/digits.csv.gz ${PROJECT_SOURCE_DIR}/data/digits/README.md DESTINATION ${AUTOGRAD_SHARE_DIR}/data/digits)
install(FILES ${PROJECT_SOURCE_DIR}/bench/peer_torch.py DESTINATION ${AUTOGRAD_SHARE_DIR}/bench)
