# Installs the built project into a fresh prefix, then configures, builds and runs the consumer
# project (consumer/) against it. Run by ctest (tests/CMakeLists.txt) as
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DBUILD_TYPE=... -DCXX_COMPILER=...
#         "-DCXX_FLAGS=..." "-DLINKER_FLAGS=..." -P check.cmake
# The consumer is compiled by the same compiler with the same flags as the project (in the
# sanitizer build: clang with ASan/UBSan), since it links the project's static libraries.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR BUILD_TYPE CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run("install into ${prefix}" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# The package is the public headers (lib/include/gguftool) alone, and they stand alone: none
# includes a private one (lib/private/gguftool), which are not installed.
file(GLOB_RECURSE installed_headers RELATIVE ${prefix}/include ${prefix}/include/gguftool/*)
file(GLOB_RECURSE public_headers RELATIVE ${SOURCE_DIR}/lib/include ${SOURCE_DIR}/lib/include/*)
if(NOT installed_headers STREQUAL public_headers)
  message(FATAL_ERROR "installed: ${installed_headers}\nlib/include holds: ${public_headers}")
endif()
foreach(header ${installed_headers})
  file(STRINGS ${prefix}/include/${header} includes REGEX "^#include \"gguftool/")
  foreach(line ${includes})
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
    if(NOT EXISTS ${prefix}/include/${included})
      message(FATAL_ERROR "installed ${header} includes ${included}, which is not installed")
    endif()
  endforeach()
endforeach()
list(LENGTH installed_headers count)
message(STATUS "the package's headers: lib/include's ${count}, none including a private one")
run("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer
    -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("run the consumer" ${WORK_DIR}/build/consumer ${SOURCE_DIR}/testdata/sample.gguf)
message(STATUS "${last_output}")
