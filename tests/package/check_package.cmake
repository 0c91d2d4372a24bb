# MODE=install: cmake --install the build tree into WORK_DIR/prefix, build
# examples/ against it with find_package, run the example, and run the
# installed `autograd` (it must find its digits and grade a stub with its
# grader, away from the source tree).
# MODE=subdirectory: build examples/ with the source tree added as a subdirectory.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "${what}:\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (status ${rc})")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(example_build ${WORK_DIR}/example)
if(MODE STREQUAL "install")
  set(prefix ${WORK_DIR}/prefix)
  run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  foreach(f include/autograd/autograd/tape.h include/autograd/ops/ops.h lib/cmake/autograd/autogradConfig.cmake
            lib/cmake/autograd/autogradConfigVersion.cmake bin/autograd share/autograd/data/digits/digits.csv.gz)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "the install lacks ${f}")
    endif()
  endforeach()
  if(EXISTS ${prefix}/share/autograd/assignments/solutions OR EXISTS ${prefix}/include/autograd/assignments)
    message(FATAL_ERROR "the install holds the reference solutions")
  endif()
  run("configure the example with find_package" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${example_build}
      -G ${GENERATOR} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${prefix})
else()
  # As a project of one's own that names no build type (CMake's default: no
  # optimisation flags) and takes the library in with it: the library must not
  # need the Release the top-level build defaults to (and it compiles in about
  # half the time of -O3; the installed package above is the Release tree's).
  run("configure the example with add_subdirectory" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${example_build}
      -G ${GENERATOR} -DCMAKE_BUILD_TYPE= -DAUTOGRAD_SOURCE=${SOURCE_DIR})
  if(EXISTS ${example_build}/autograd/cli OR EXISTS ${example_build}/autograd/tests)
    message(FATAL_ERROR "as a subdirectory the project built its program or tests")
  endif()
endif()
run("build the example" ${CMAKE_COMMAND} --build ${example_build})
run("run the example" ${example_build}/fit_moons)
if(NOT last_output MATCHES "PASS" OR last_output MATCHES "FAIL")
  message(FATAL_ERROR "the example's gradient check did not pass")
endif()

if(MODE STREQUAL "install")
  # The installed program, run from an empty folder with the build tree out of sight.
  set(away ${WORK_DIR}/away)
  file(MAKE_DIRECTORY ${away})
  execute_process(COMMAND ${prefix}/bin/autograd train --dataset digits --epochs 1 --hidden 16 --out ${away}/run
                  WORKING_DIRECTORY ${away} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "installed autograd train on the digits:\n${out}")
  if(NOT rc EQUAL 0 OR NOT EXISTS ${away}/run/metrics.csv)
    message(FATAL_ERROR "the installed program could not train on its digits (status ${rc})")
  endif()
  # --sandbox bwrap: the default also refuses where no control group can be made (not root).
  execute_process(COMMAND ${prefix}/bin/autograd grade --sandbox bwrap ${prefix}/share/autograd/assignments/softmax/softmax.cpp
                  WORKING_DIRECTORY ${away} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "installed autograd grade on the softmax stub:\n${out}")
  if(NOT rc EQUAL 1 OR NOT out MATCHES "score: [0-9]+/[0-9]+ \\([0-9]?[0-9]%\\)")
    message(FATAL_ERROR "the installed grader did not grade the stub (status ${rc})")
  endif()
endif()
