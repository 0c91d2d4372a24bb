# CTest test `libcxx`: configures tests/libcxx (the libraries and a few unit
# tests) in WORK_DIR with clang++ -stdlib=libc++, builds it and runs its tests.
# Says "skipped:" (CTest's SKIP_REGULAR_EXPRESSION) when clang++ or libc++ is not installed.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (status ${rc}):\n${out}")
  endif()
  message(STATUS "${what}: done")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

find_program(CLANGXX NAMES clang++ clang++-14)
if(NOT CLANGXX OR NOT EXISTS /usr/lib/llvm-14/include/c++/v1/vector AND NOT EXISTS /usr/include/c++/v1/vector)
  message(STATUS "skipped: clang++ or libc++ is not installed (apt-get install -y clang libc++-dev libc++abi-dev)")
  return()
endif()

run("configure with ${CLANGXX} -stdlib=libc++" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/libcxx -B ${WORK_DIR}
    -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CLANGXX}
    "-DCMAKE_CXX_FLAGS=-stdlib=libc++" "-DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++"
    -DAUTOGRAD_SOURCE=${SOURCE_DIR} -DAUTOGRAD_LIBCXX_TESTS=${TESTS})  # comma-separated: a ';' would split the argument
run("build" ${CMAKE_COMMAND} --build ${WORK_DIR} -j ${JOBS})
run("run the unit tests" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR} --output-on-failure)
message(STATUS "${last_output}")
